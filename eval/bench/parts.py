"""How well multi-part questions are split into their parts, on a labelled set.

    python -m rag.evaluation.bench parts [--show]

eval/data/question_parts.jsonl holds questions with the parts each should be answered as (one part: a single
question, including the traps: lists of names, comparisons, a list's own "and which are they?");
question_parts_fresh.jsonl was written after the splitter, over other topics, and scored once. Every
question goes through :func:`rag.answering.parts.split_question` (rules, no model, no index). Prints
*detection* (single vs several parts told apart), precision and recall of "several parts", and *exact parts*
(the parts as labelled: case, spacing and the final question mark aside), each with a 95 % bootstrap interval.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rag.answering.parts import split_question
from rag.evaluation.bench.suite import Output
from rag.evaluation.metrics import bootstrap_ci

DATA = Path(__file__).resolve().parents[1] / "data"
SETS = ("question_parts.jsonl", "question_parts_fresh.jsonl")
NEEDS_LLM = False


def _norm(parts: list[str]) -> list[str]:
    return [" ".join(p.lower().rstrip("?").split()) for p in parts]


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--show", action="store_true", help="List every question split other than labelled.")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    lines: list[str] = []
    for name in SETS:
        cases = [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line[:1] == "{"]
        figures[name], text = score(cases, show=args.show)
        lines += [f"\n{name}: {text}"]
    out.table("parts.md", "\n".join(lines))
    return figures


def score(cases: list[dict[str, Any]], *, show: bool) -> tuple[dict[str, Any], str]:
    got = [split_question(c["question"]) for c in cases]
    multi = [len(c["parts"]) > 1 for c in cases]
    found = [len(g) > 1 for g in got]
    detected = [float(m == f) for m, f in zip(multi, found)]
    exact = [float(_norm(g) == _norm(c["parts"])) for g, c in zip(got, cases)]
    tp = sum(m and f for m, f in zip(multi, found))
    figures: dict[str, Any] = {
        "questions": len(cases),
        "multi_part": sum(multi),
        "detection": sum(detected) / len(cases),
        "detection_ci95": list(bootstrap_ci(detected)),
        "precision": tp / max(1, sum(found)),
        "recall": tp / max(1, sum(multi)),
        "exact_parts": sum(exact) / len(cases),
        "exact_parts_ci95": list(bootstrap_ci(exact)),
    }
    lines = [
        f"{len(cases)} questions ({sum(multi)} of several parts)",
        "| measure | value |",
        "|---|---|",
        f"| detection (single vs several) | {figures['detection']:.3f} {_ci(detected)} |",
        f"| precision / recall of several parts | {figures['precision']:.3f} / {figures['recall']:.3f} |",
        f"| exact parts | {figures['exact_parts']:.3f} {_ci(exact)} |",
    ]
    if show:
        for c, g, e in zip(cases, got, exact):
            if not e:
                lines.append(f"- {c['question']}\n    split: {g}\n    label: {c['parts']}")
    return figures, "\n".join(lines)


def _ci(values: list[float]) -> str:
    lo, hi = bootstrap_ci(values)
    return f"[{lo:.2f}, {hi:.2f}]"

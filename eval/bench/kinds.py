"""How often a question's kind (lookup, list, compare, yes/no) is recognised right, on the labelled sets.

    python -m rag.evaluation.bench kinds [--split dev] [--split fresh] [--split heldout] [--show]

The splits (eval/bench/_splits.py): ``dev`` (eval/data/question_kinds_dev.jsonl, what tests and tuning may
read), ``fresh`` (question_kinds_fresh.jsonl: 89 questions over SciFact abstracts and ml_abstracts titles,
written before the rules were read) and ``heldout`` (eval/data/heldout/question_kinds.jsonl, frozen, read only
when asked for). Default: dev and fresh. Every question goes through the pipeline's own first step with its
corpus indexed (the bundled 19 NeurIPS abstracts; for fresh, the 30 SciFact abstracts of
scifact_claims_corpus.jsonl): retrieval, the papers the question names, then the kind. No LLM is called (a
question without history is not rewritten), so the run takes seconds and is the same on every machine.
Prints accuracy with a 95 % Wilson interval and the confusion matrix per set; ``--show`` lists the misses.
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass
from typing import Any

from rag import Assistant
from rag.answering.names import names_paper
from rag.evaluation.bench._splits import KINDS as SETS
from rag.evaluation.bench._splits import indexed, load_rows, wilson
from rag.evaluation.bench.suite import Output
from rag.types import Query

NEEDS_LLM = False
KINDS = ("lookup", "list", "compare", "yesno")


@dataclass(frozen=True)
class Recognised:
    """A labelled question as the pipeline's first step saw it: what classify_question was given, and its kind."""

    question: str
    label: str
    standalone: str
    named_papers: int
    kind: str


def recognise(assistant: Assistant, rows: list[dict[str, Any]]) -> list[Recognised]:
    """Each labelled question through the pipeline's first step (retrieval, named papers, kind; no LLM)."""
    pipeline = assistant._pipeline
    out = []
    for row in rows:
        p = pipeline.prepare(Query(question=row["question"], mode="extractive"))
        named = sum(names_paper(p.standalone, h.title) for h in p.hits)
        out.append(Recognised(row["question"], row["kind"], p.standalone, named, p.kind))
    return out


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument(
        "--split", action="append", choices=tuple(SETS), help="A labelled set (repeatable; default: dev and fresh)."
    )
    ap.add_argument("--show", action="store_true", help="List every misrecognised question.")


def report(name: str, got: list[Recognised], show: bool) -> tuple[str, dict[str, Any]]:
    """The accuracy line, the confusion matrix and (``show``) the misses of one set."""
    right = sum(r.kind == r.label for r in got)
    lo, hi = wilson(right, len(got))
    accuracy = right / len(got)
    lines = [f"\n{name}: {len(got)} questions, accuracy {accuracy:.3f} [{lo:.3f}, {hi:.3f}]"]
    confusion = Counter((r.label, r.kind) for r in got)
    lines.append("\n| labelled \\ recognised | " + " | ".join(KINDS) + " |\n|" + "---|" * (len(KINDS) + 1))
    for kind in KINDS:
        lines.append(f"| {kind} | " + " | ".join(str(confusion[kind, g]) for g in KINDS) + " |")
    if show:
        lines += [f"- {r.label} -> {r.kind}: {r.question}" for r in got if r.kind != r.label]
    return "\n".join(lines), {"questions": len(got), "right": right, "accuracy": accuracy, "ci95": [lo, hi]}


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    lines = []
    figures: dict[str, Any] = {}
    for split in args.split or ["dev", "fresh"]:
        labelled = SETS[split]
        with indexed(labelled.corpus) as a:
            got = recognise(a, load_rows(labelled.path))
        text, figures[split] = report(f"{split} ({labelled.path.name})", got, args.show)
        lines.append(text)
    out.table("kinds.md", "\n".join(lines))
    return figures

"""How often a question's kind (lookup, list, compare, yes/no) is recognised right, on the labelled sets.

    python -m rag.evaluation.bench kinds [--show]

Every question of eval/data/question_kinds.jsonl (the set the rules were written against) and
question_kinds_test.jsonl (written apart from the rules; its first score, 0.882, was taken before its misses
were used, so it is no longer held out) and question_kinds_heldout.jsonl (48 questions written on 2026-12-03
without reading the rules; its first score is the held-out figure in docs/benchmarks.md) goes through the
pipeline's own first step with the bundled 19 NeurIPS abstracts indexed: retrieval, the papers the question
names, then the kind. No LLM is called (a question without history is not rewritten), so the run takes
seconds and is the same on every machine. Prints accuracy with a 95 % bootstrap interval and the confusion
matrix per set; ``--show`` lists the misses.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from rag import Assistant, get_settings
from rag.evaluation.bench.suite import Output
from rag.evaluation.metrics import bootstrap_ci
from rag.types import Query

DATA = Path(__file__).resolve().parents[1] / "data"
SETS = ("question_kinds.jsonl", "question_kinds_test.jsonl", "question_kinds_heldout.jsonl")
NEEDS_LLM = False
KINDS = ("lookup", "list", "compare", "yesno")


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("{")]


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--show", action="store_true", help="List every misrecognised question.")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    lines = []
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        a = Assistant.from_settings(get_settings(data_dir=Path(tmp)))
        a.ingest([Assistant.bundled_corpus()])
        pipeline = a._pipeline  # the first step of every answer, without the LLM
        for name in SETS:
            cases = load(DATA / name)
            got = [pipeline.prepare(Query(question=c["question"], mode="extractive")).kind for c in cases]
            right = [float(g == c["kind"]) for g, c in zip(got, cases)]
            lo, hi = bootstrap_ci(right)
            accuracy = sum(right) / len(right)
            figures[name] = {"questions": len(cases), "accuracy": accuracy, "ci95": [lo, hi]}
            lines.append(f"\n{name}: {len(cases)} questions, accuracy {accuracy:.3f} [{lo:.3f}, {hi:.3f}]")
            confusion = Counter((c["kind"], g) for g, c in zip(got, cases))
            lines.append("\n| labelled \\ recognised | " + " | ".join(KINDS) + " |\n|" + "---|" * (len(KINDS) + 1))
            for kind in KINDS:
                lines.append(f"| {kind} | " + " | ".join(str(confusion[kind, g]) for g in KINDS) + " |")
            if args.show:
                lines += [f"- {c['kind']} -> {g}: {c['question']}" for g, c in zip(got, cases) if g != c["kind"]]
    out.table("kinds.md", "\n".join(lines))
    return figures

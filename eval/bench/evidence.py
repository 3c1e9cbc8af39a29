"""Evidence recall: is the gold supporting sentence among the sentences the model is shown?

    python -m rag.evaluation.bench evidence [GOLD.jsonl ...] [--budget 300] [--k 5]

For every answerable gold question (default: eval/data/neurips2026_gold.jsonl and neurips2026_check.jsonl)
it streams the question until the first event (:class:`rag.StatusEvent`, which carries the evidence the
model will read) and stops: no answer is generated, so this needs no LLM except for follow-up questions
(their history is condensed by the model). A question counts as recalled when every gold supporting
quote lies inside the sentences shown. Prints recall, prompt size (evidence tokens) and the misses, so
the evidence budget can be chosen by measurement.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from rag import Assistant, StatusEvent, get_settings
from rag.evaluation.bench.suite import Output
from rag.evaluation.dataset import load_gold, resolve_cases

DATA = Path(__file__).resolve().parents[1] / "data"

NEEDS_LLM = True


def covered(abstract: str, quote: str, spans: list[tuple[int, int]]) -> bool:
    """True when ``quote`` (a substring of ``abstract``, whitespace-tolerant) lies inside the shown spans."""
    m = re.search(r"\s+".join(re.escape(w) for w in quote.split()), abstract)
    if m is None:
        return False
    return any(a <= m.start() and m.end() <= b + 1 for a, b in spans)


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("gold", nargs="*", type=Path)
    ap.add_argument("--budget", type=int, default=None, help="RAG_ANSWER__CONTEXT_TOKENS (default: settings)")
    ap.add_argument("--k", type=int, default=None)
    ap.add_argument("--verbose", action="store_true")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    golds = args.gold or [DATA / "neurips2026_gold.jsonl", DATA / "neurips2026_check.jsonl"]
    answer = {"context_tokens": args.budget} if args.budget else {}
    with tempfile.TemporaryDirectory() as tmp:
        a = Assistant.from_settings(get_settings(data_dir=tmp, answer=answer))
        a.ingest([a.bundled_corpus()])
        papers = {p.paper_id: p for p in a.papers()}
        rows = []
        for gold in golds:
            for case in resolve_cases(load_gold(gold), list(papers.values())):
                if not case.answerable or case.type in ("list", "comparison"):
                    continue
                status = next(
                    e
                    for e in a.stream(case.question, history=list(case.history) or None, k=args.k)
                    if isinstance(e, StatusEvent)
                )
                shown: dict[str, list[tuple[int, int]]] = {}
                for q in status.evidence:
                    shown.setdefault(q.paper_id, []).append(q.span)
                ok = all(
                    any(covered(papers[pid].abstract, quote, shown.get(pid, [])) for pid in case.supporting_ids)
                    for quote in case.supporting_quotes
                )
                words = sum(len(q.text.split()) for q in status.evidence)
                rows.append((gold.name, case.id, ok, words, len(status.evidence)))
                if not ok and args.verbose:
                    print(f"MISS {case.id}: {case.question}", file=sys.stderr)
                    for q in status.evidence:
                        print(f"   [{q.n}] {q.text[:140]}", file=sys.stderr)
    print(f"budget {args.budget or 'default'} tokens, k {args.k or 'default'}")
    print("| gold file | questions | evidence recall | words shown (median) | sentences (median) |")
    print("|---|---|---|---|---|")
    for name in dict.fromkeys(r[0] for r in rows):
        sub = [r for r in rows if r[0] == name]
        print(
            f"| {name} | {len(sub)} | {sum(r[2] for r in sub) / len(sub):.3f} | "
            f"{statistics.median(r[3] for r in sub):.0f} | {statistics.median(r[4] for r in sub):.0f} |"
        )
    print("misses:", ", ".join(r[1] for r in rows if not r[2]) or "none")
    return {
        name: {
            "questions": len(sub),
            "evidence_recall": sum(r[2] for r in sub) / len(sub),
            "misses": [r[1] for r in sub if not r[2]],
        }
        for name in dict.fromkeys(r[0] for r in rows)
        for sub in [[r for r in rows if r[0] == name]]
    }

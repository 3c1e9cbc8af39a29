"""How a list question's cost grows with the collection: 100 / 1,000 / 10,000 abstracts, embedded LLM.

    PYTHONPATH=. .venv/bin/python eval/bench/bench_lists.py [--sizes 100,1000,10000] [--questions 4]
        [--source ../shared/data/ml_abstracts.jsonl.gz] [--out eval/results/DATE/lists]

The collections are nested: the first N records of ml_abstracts in eval/tools/make_ml1k.py's fixed-seed shuffle
(so the 1,000 one is ml1k itself). Each is indexed with the default settings into a temporary data dir; then
``--questions`` list questions of eval/data/ml1k_lists.jsonl, sampled with a fixed seed, are asked of each size
with ``kind="list"`` and the embedded LLM, the same questions at every size. Reports per size: ingest time,
papers judged, time to the first confirmed paper on screen, the full answer p50 / max, and papers listed; then
seconds per judged paper, which is what the cost grows with (a collection larger than ``list_full_scan`` is
narrowed to at most ``list_candidates`` papers by hybrid retrieval, then judged until ``list_patience``
rejections in a row).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _shared import emit

from rag import AnswerEvent, Assistant, ItemEvent, get_settings
from rag.evaluation.shared_data import shared_data

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "eval" / "tools"))
import make_ml1k  # noqa: E402  (a script beside this one, standard library only)

GOLD = ROOT / "eval" / "data" / "ml1k_lists.jsonl"
SEED = 16


def questions(n: int) -> list[str]:
    rows = [json.loads(x) for x in GOLD.read_text().splitlines() if x.strip() and not x.startswith("//")]
    asked = [r["question"] for r in rows if r.get("type") == "list"]
    return random.Random(SEED).sample(asked, min(n, len(asked)))


def subset(records: list[dict], size: int, path: Path) -> Path:
    shuffled = list(records)
    random.Random(make_ml1k.SEED).shuffle(shuffled)
    with path.open("w", encoding="utf-8") as f:
        for r in shuffled[:size]:
            f.write(json.dumps({k: r.get(k) for k in make_ml1k.FIELDS}) + "\n")
    return path


def ask(assistant: Assistant, question: str) -> dict[str, float]:
    t0 = time.perf_counter()
    first: float | None = None
    for event in assistant.stream(question, kind="list"):
        if isinstance(event, ItemEvent) and first is None:
            first = time.perf_counter() - t0
        if isinstance(event, AnswerEvent):
            answer = event.answer
    total = time.perf_counter() - t0
    return {
        "total": total,
        "first": first if first is not None else float("nan"),
        "judged": answer.checked or 0,
        "listed": len(answer.items),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--questions", type=int, default=4)
    ap.add_argument("--source", type=Path, help="ml_abstracts.jsonl.gz (default: $RAG_SHARED_DATA's)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)

    records = make_ml1k.load_records(str(args.source or shared_data("ml_abstracts.jsonl.gz")))
    asked = questions(args.questions)
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-lists-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            corpus = subset(records, size, Path(tmp) / f"ml{size}.jsonl")
            assistant = Assistant.from_settings(get_settings(data_dir=Path(tmp) / f"data{size}"))
            t = time.perf_counter()
            assistant.ingest([corpus])
            ingest = time.perf_counter() - t
            assistant.start_llm()
            load0 = os.getloadavg()[0]
            got = [ask(assistant, q) for q in asked]
            load1 = os.getloadavg()[0]
            totals = [g["total"] for g in got]
            judged = sum(g["judged"] for g in got)
            firsts = [g["first"] for g in got if g["first"] == g["first"]]
            rows.append(
                f"| {size:,} | {ingest:.0f} | {judged / len(got):.1f} "
                f"| {statistics.median(firsts) if firsts else float('nan'):.2f} "
                f"| {statistics.median(totals):.1f} / {max(totals):.1f} "
                f"| {sum(g['listed'] for g in got) / len(got):.1f} "
                f"| {sum(totals) / max(1, judged):.2f} | {load0:.1f} → {load1:.1f} |"
            )
            print(rows[-1], flush=True)
            for q, g in zip(asked, got):
                print(f"  {size}: {g['total']:.1f} s, {g['judged']} judged, {g['listed']} listed: {q}", flush=True)
    table = "\n".join(
        [
            f"List questions as the collection grows ({len(asked)} questions of ml1k_lists.jsonl, seed {SEED}, "
            f"embedded LLM, default settings; {os.cpu_count()} CPUs)",
            "",
            "| abstracts | ingest s | papers judged (mean) | first paper on screen p50 s | answer p50 / max s "
            "| papers listed (mean) | s per judged paper | load avg (start → end) |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    emit(table, args.out, "lists.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How a list question's cost grows with the collection: 100 / 1,000 / 10,000 abstracts, embedded LLM.

    python -m rag.evaluation.bench lists [--sizes 100,1000,10000] [--sample 4] [--source ml_abstracts.jsonl.gz]

The collections are nested: the first N records of ml_abstracts in eval/tools/make_ml1k.py's fixed-seed shuffle
(so the 1,000 one is ml1k itself). Each is indexed with the default settings into a temporary data dir; then
``--sample`` list questions of eval/data/ml1k_lists.jsonl, sampled with a fixed seed, are asked of each size
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
import tempfile
import time
from pathlib import Path
from typing import Any

from rag import AnswerEvent, Assistant, ItemEvent, get_settings
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench.suite import Output
from rag.evaluation.tools import make_ml1k

ROOT = Path(__file__).resolve().parents[2]

GOLD = ROOT / "eval" / "data" / "ml1k_lists.jsonl"
SEED = 16

NEEDS_LLM = True


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


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--source", type=Path, help="ml_abstracts.jsonl.gz (default: $RAG_SHARED_DATA's)")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:

    records = make_ml1k.load_records(str(shared_data("ml_abstracts.jsonl.gz", args.source)))
    asked = questions(args.sample or 4)
    figures: list[dict[str, Any]] = []
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
            figures.append(
                {
                    "abstracts": size,
                    "ingest_s": ingest,
                    "judged_mean": judged / len(got),
                    "answers": got,
                    "load": [load0, load1],
                }
            )
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
    out.table("lists.md", table)
    return {"questions": asked, "sizes": figures}

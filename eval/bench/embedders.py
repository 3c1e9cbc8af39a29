"""Embedding models side by side on SciFact: ingest speed and dense / hybrid retrieval quality in one run.

    python -m rag.evaluation.bench embedders [--models MODEL,...] [--papers N] [--sample N] [--seed S, default 29]

For each model in ``--models`` (default: MiniLM, the default, first, then each optional local model), in the
same run and one after the other: a fresh index under ``--data-dir`` (default /tmp/rag-bench-embedders/<model>),
the embedding cache off, so every chunk is embedded; ingest the SciFact corpus (the 5,183 abstracts, or
``--papers N`` of them); then score the SciFact *train* queries (the shared data has no test qrels) with the
dense and the hybrid retriever: nDCG@10 and recall@10, and BM25 once as the floor.

``--papers N`` indexes every abstract judged relevant to the scored queries plus a seeded random sample of the
others, N in all: scores on such a subset are higher than on the whole corpus (fewer distractors) and are only
comparable between the models of the same run. ``--sample N`` scores a seeded sample of the 809 queries.

Speed: chunks/s (wall) and chunks per CPU-second of this process, with the load average before and after each
ingest. The machine is shared, so a speed is only meaningful as a ratio between models of the same run: the
table gives each model's ratio to the first model's.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from rag import Assistant, Settings
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench.suite import BenchError, Output
from rag.evaluation.external import load_qrels, load_queries
from rag.evaluation.metrics import ndcg_at, recall_at

NEEDS_LLM = False
DEFAULT_MODELS = "all-MiniLM-L6-v2-int8,multilingual-e5-small-q4"


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--scifact", type=Path, help="The BEIR scifact folder (default: in the shared data folder).")
    ap.add_argument(
        "--models",
        default=DEFAULT_MODELS,
        help=f"Local embedding models, comma-separated; the first is the speed reference (default {DEFAULT_MODELS}).",
    )
    ap.add_argument(
        "--papers",
        type=int,
        default=0,
        help="Index N abstracts: all judged relevant to the scored queries + a seeded sample (default: all).",
    )


def _corpus_subset(corpus: Path, keep: set[str], n: int, seed: int, dest: Path) -> int:
    """Write the BEIR corpus records of ``keep`` plus a seeded sample of the others, ``n`` in all, to ``dest``."""
    with gzip.open(corpus, "rt", encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    ids = [str(json.loads(line)["_id"]) for line in lines]
    others = [i for i, doc_id in enumerate(ids) if doc_id not in keep]
    chosen = {i for i, doc_id in enumerate(ids) if doc_id in keep}
    chosen |= set(random.Random(seed).sample(others, max(0, min(len(others), n - len(chosen)))))
    with gzip.open(dest, "wt", encoding="utf-8") as out:
        for i in sorted(chosen):
            out.write(lines[i] if lines[i].endswith("\n") else lines[i] + "\n")
    return len(chosen)


def _scores(assistant: Assistant, mode: str, qids: list[str], queries: dict[str, str], qrels: Any) -> dict[str, float]:
    nd, r10 = [], []
    for qid in qids:
        ranked = [h.paper_id for h in assistant.search(queries[qid], k=10, mode=mode)]  # type: ignore[arg-type]
        nd.append(ndcg_at(ranked, qrels[qid], 10))
        r10.append(recall_at(ranked, qrels[qid], 10))
    return {"ndcg@10": sum(nd) / len(nd), "recall@10": sum(r10) / len(r10)}


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    scifact = shared_data("scifact", args.scifact)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if not models:
        raise BenchError("--models names no model")
    seed = 29 if args.seed is None else args.seed
    qrels = load_qrels(scifact / "qrels" / "train.tsv")
    queries = load_queries(scifact / "queries_train.jsonl", set(qrels))
    qids = sorted(queries, key=int)
    if args.sample:
        qids = sorted(random.Random(seed).sample(qids, min(args.sample, len(qids))), key=int)
    root = Path(args.data_dir or "/tmp/rag-bench-embedders")
    corpus = scifact / "corpus.jsonl.gz"
    papers = 0
    if args.papers:
        root.mkdir(parents=True, exist_ok=True)
        relevant = {doc for qid in qids for doc in qrels[qid]}
        corpus = root / "corpus-subset.jsonl.gz"
        papers = _corpus_subset(scifact / "corpus.jsonl.gz", relevant, args.papers, seed, corpus)

    rows: list[dict[str, Any]] = []
    bm25: dict[str, float] | None = None
    for model in models:
        data_dir = root / model
        shutil.rmtree(data_dir, ignore_errors=True)
        settings = Settings(data_dir=data_dir, collection="scifact", embedding={"model": model, "cache": False})
        assistant = Assistant(settings)
        load0 = os.getloadavg()[0]
        cpu0, t0 = time.process_time(), time.perf_counter()
        report = assistant.ingest([corpus])
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        load1 = os.getloadavg()[0]
        chunks = report.chunks_written
        print(
            f"{model}: {report.papers_seen} abstracts, {chunks} chunks in {wall:.0f} s "
            f"(load {load0:.1f} -> {load1:.1f})",
            file=sys.stderr,
            flush=True,
        )
        if bm25 is None:
            bm25 = _scores(assistant, "bm25", qids, queries, qrels)
        row: dict[str, Any] = {
            "model": model,
            "papers": report.papers_seen,
            "chunks": chunks,
            "ingest_s": wall,
            "chunks_per_s": chunks / wall,
            "chunks_per_cpu_s": chunks / cpu,
            "load_before": load0,
            "load_after": load1,
            "dense": _scores(assistant, "dense", qids, queries, qrels),
            "hybrid": _scores(assistant, "hybrid", qids, queries, qrels),
        }
        rows.append(row)

    ref = rows[0]
    subset = f"{papers} of the 5,183 abstracts (all relevant ones + seeded sample)" if args.papers else "all abstracts"
    lines = [
        f"SciFact train, {len(qids)} queries (seed {seed}), {subset}; BM25 alone: nDCG@10 "
        f"{bm25['ndcg@10']:.3f}, R@10 {bm25['recall@10']:.3f}\n"
        if bm25
        else "",
        "| model | dense nDCG@10 | dense R@10 | hybrid nDCG@10 | hybrid R@10 | chunks/s | chunks/CPU-s "
        f"| speed vs {ref['model']} | load before -> after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['model']} | {r['dense']['ndcg@10']:.3f} | {r['dense']['recall@10']:.3f} "
            f"| {r['hybrid']['ndcg@10']:.3f} | {r['hybrid']['recall@10']:.3f} | {r['chunks_per_s']:.2f} "
            f"| {r['chunks_per_cpu_s']:.2f} | {r['chunks_per_s'] / ref['chunks_per_s']:.2f}x wall, "
            f"{r['chunks_per_cpu_s'] / ref['chunks_per_cpu_s']:.2f}x CPU | {r['load_before']:.1f} -> "
            f"{r['load_after']:.1f} |"
        )
    note = (
        f"\n\nSpeeds on a shared {os.cpu_count()}-core machine: compare them only as ratios within this run. "
        "Ingest = read, chunk, embed (no cache), write to Chroma and BM25."
    )
    out.table("embedders.md", "\n".join(lines) + note)
    return {"seed": seed, "queries": len(qids), "papers": papers or None, "bm25": bm25, "rows": rows}

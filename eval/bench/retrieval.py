"""Retrieval-quality benchmark on BEIR SciFact (train split): BM25, dense and hybrid side by side.

    python -m rag.evaluation.bench retrieval [--scifact DIR] [--sample N] [--data-dir DIR]

DIR defaults to scifact/ in the shared data folder (--shared-data, $RAG_SHARED_DATA, default ../shared/data).
--sample N scores only the first N of the 809 train queries; --data-dir defaults to
~/.cache/rag-abstracts/bench-scifact.

Indexes the 5,183 SciFact abstracts once (embeddings cached on disk, so reruns take seconds), then
prints nDCG@10, recall@10 and recall@100 for each retriever from the same index in the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from rag import Assistant, get_settings
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench.suite import Output
from rag.evaluation.external import load_qrels, load_queries
from rag.evaluation.metrics import ndcg_at, recall_at

NEEDS_LLM = False
PUBLISHED = "Published SciFact *test* nDCG@10: BM25 0.665 (BEIR) - 0.687 (bm25s); all-MiniLM-L6-v2 0.645 - 0.674."


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--scifact", type=Path, help="The BEIR scifact folder (default: in the shared data folder).")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    scifact = shared_data("scifact", args.scifact)
    data_dir = args.data_dir or Path.home() / ".cache" / "rag-abstracts" / "bench-scifact"
    assistant = Assistant.from_settings(get_settings(data_dir=data_dir, collection="scifact"))
    t0 = time.perf_counter()
    report = assistant.ingest([scifact / "corpus.jsonl.gz"])
    ingest_s = time.perf_counter() - t0
    print(
        f"indexed {report.papers_seen} abstracts in {ingest_s:.1f} s ({report.embedded} newly embedded)",
        file=sys.stderr,
    )

    qrels = load_qrels(scifact / "qrels" / "train.tsv")
    queries = load_queries(scifact / "queries_train.jsonl", set(qrels))
    qids = sorted(queries, key=int)[: args.sample or None]
    rows = []
    for mode in ("bm25", "dense", "hybrid"):
        nd, r10, r100, lat = [], [], [], []
        for qid in qids:
            t = time.perf_counter()
            ranked = [h.paper_id for h in assistant.search(queries[qid], k=100, mode=mode)]
            lat.append(time.perf_counter() - t)
            nd.append(ndcg_at(ranked, qrels[qid], 10))
            r10.append(recall_at(ranked, qrels[qid], 10))
            r100.append(recall_at(ranked, qrels[qid], 100))
        lat.sort()
        rows.append(
            {
                "retriever": mode,
                "ndcg@10": sum(nd) / len(nd),
                "recall@10": sum(r10) / len(r10),
                "recall@100": sum(r100) / len(r100),
                "p50_ms": 1000 * lat[len(lat) // 2],
            }
        )
    lines = [
        f"SciFact train, {len(qids)} queries, {report.papers_seen} abstracts, "
        f"embedding {assistant.stats()['embedding_model']}\n",
        "| retriever | nDCG@10 | R@10 | R@100 | p50 latency (k=100) |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['retriever']} | {r['ndcg@10']:.3f} | {r['recall@10']:.3f} | {r['recall@100']:.3f} "
            f"| {r['p50_ms']:.0f} ms |"
        )
    out.table("retrieval.md", "\n".join(lines) + f"\n\n{PUBLISHED}")
    return {
        "queries": len(qids),
        "abstracts": report.papers_seen,
        "embedding_model": assistant.stats()["embedding_model"],
        "ingest_seconds": ingest_s,
        "rows": rows,
    }

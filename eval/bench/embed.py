"""Embedding throughput by model, threads and batch size, on real abstract chunks.

    python -m rag.evaluation.bench embed [--sample 256] [--configs minilm:2:8,minilm:1:8,minilm:2:32,wordllama::256]

Each configuration runs in its own child process (so its peak RSS is its own), embeds the same chunk
texts that ingest would embed for the first abstracts of ``ml_abstracts.jsonl.gz`` (shared data, see _shared.py),
with no cache, after a warm-up batch. Prints chunks/s, chunks per CPU-second and peak RSS.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

from rag import Assistant, Paper, Settings
from rag.evaluation.bench._shared import child_env, python_module, shared_data
from rag.evaluation.bench.suite import Output

NEEDS_LLM = False
MODELS = {"minilm": "all-MiniLM-L6-v2-int8", "wordllama": "wordllama-l2-supercat-256"}


def _texts(n_chunks: int) -> list[str]:
    assistant = Assistant(Settings(data_dir="/tmp/rag-bench-embed"))
    papers = []
    with gzip.open(shared_data("ml_abstracts.jsonl.gz"), "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            r = json.loads(line)
            papers.append(Paper(paper_id=f"p{i}", title=r["title"], abstract=r["abstract"]))
            if len(papers) >= n_chunks:
                break
    return assistant.index_texts(papers)[:n_chunks]


def child(model: str, threads: int, batch: int, n_chunks: int) -> dict[str, float]:
    embedding: dict[str, object] = {"model": MODELS[model], "batch_size": batch, "cache": False}
    if threads:
        embedding["threads"] = threads
    embedder = Assistant(Settings(data_dir="/tmp/rag-bench-embed", embedding=embedding)).embeddings
    texts = _texts(n_chunks)
    embedder.embed_documents(texts[:8])
    cpu0, t0 = time.process_time(), time.perf_counter()
    embedder.embed_documents(texts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return {
        "chunks": len(texts),
        "per_s": len(texts) / wall,
        "per_cpu_s": len(texts) / cpu,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument(
        "--configs",
        default="minilm:2:8,minilm:1:8,minilm:2:32,minilm:2:64,wordllama::256",
        help="model:threads:batch, comma-separated (--sample: chunks embedded, default 256).",
    )


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    chunks = args.sample or 256
    shared_data("ml_abstracts.jsonl.gz")  # says where to get it before any child starts
    results = []
    print(
        "| model | threads | batch | chunks/s | chunks per CPU-s | peak RSS MB |  "
        f"({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})"
    )
    print("|---|---|---|---|---|---|")
    for config in args.configs.split(","):
        proc = subprocess.run(
            [*python_module("embed"), config, str(chunks)], capture_output=True, text=True, check=True, env=child_env()
        )
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append({"config": config, **r})
        model, threads, batch = config.split(":")
        print(
            f"| {MODELS[model]} | {threads or '-'} | {batch} | {r['per_s']:.1f} | {r['per_cpu_s']:.1f} "
            f"| {r['rss_mb']:.0f} |",
            flush=True,
        )
    print(f"(load average at the end: {os.getloadavg()[0]:.1f})")
    return {"chunks": chunks, "configs": results}


if __name__ == "__main__":  # one configuration in a child process of run(): MODEL:THREADS:BATCH CHUNKS
    _model, _threads, _batch = sys.argv[1].split(":")
    print(json.dumps(child(_model, int(_threads or 0), int(_batch), int(sys.argv[2]))))

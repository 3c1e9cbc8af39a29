"""What Chroma writes cost on this machine, beside the embedder: the floor under any ingest.

    python -m rag.evaluation.bench chroma-write [--sample 10000] [--model wordllama-l2-supercat-256]

Takes the first N abstracts of the scale corpus (shuffled as eval/bench_scale does), chunks them as
our ingest does, embeds the chunks once (timed: the raw embedder, E), then writes the same vectors to
fresh local Chroma collections in several layouts (each timed, W):

* vectors only, no metadata: the floor of any Chroma-backed ingest;
* ours: a real ingest (`Assistant.ingest_papers`) of the same papers with every embedding already in
  the cache: chunking, packed metadata, Chroma writes and BM25, i.e. everything but embedding;
* the naive baseline's layout: documents (Chroma's full-text index) plus venue/year/paper id,
  written in langchain-chroma's batches.

Chroma's Python binding holds the GIL while it writes (a thread embedding meanwhile made no
progress), so an ingest in one process takes at least E + W_floor. From that it prints the best
ratios any Chroma-backed ingest could reach against the raw embedder and against the baseline.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench.scale import load_records, raw_embedder, write_jsonl
from rag.evaluation.bench.suite import Output

NEEDS_LLM = False


def _write(
    path: Path, ids: list[str], vectors: Any, metas: list[dict[str, Any]] | None, docs: list[str] | None, batch: int
) -> float:
    import chromadb

    client = chromadb.PersistentClient(str(path))
    col = client.create_collection("bench", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
    t0 = time.perf_counter()
    for i in range(0, len(ids), batch):
        col.upsert(
            ids=ids[i : i + batch],
            embeddings=vectors[i : i + batch],
            metadatas=metas[i : i + batch] if metas else None,
            documents=docs[i : i + batch] if docs else None,
        )
    return time.perf_counter() - t0


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--model", default="wordllama-l2-supercat-256")
    ap.add_argument("--data", type=Path, help="ml_abstracts.jsonl.gz (default: in the shared data folder)")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:

    n = args.sample or 10000
    import numpy as np

    from rag import Assistant, get_settings

    work = Path(tempfile.mkdtemp(prefix="rag-chroma-write-"))
    try:
        write_jsonl(load_records(shared_data("ml_abstracts.jsonl.gz", args.data))[:n], work / "corpus.jsonl")
        a = Assistant(get_settings(data_dir=work / "x", collection="bench", embedding={"model": args.model}))
        papers = a.read([work / "corpus.jsonl"])
        texts = a.index_texts(papers)
        ids = [f"c{i}" for i in range(len(texts))]
        embedder = raw_embedder(a.settings)
        embedder.embed_documents(texts[:8])
        t0 = time.perf_counter()
        vectors = np.concatenate(
            [
                np.asarray(embedder.embed_documents(texts[i : i + 256]), dtype=np.float32)
                for i in range(0, len(texts), 256)
            ]
        )
        embed_s = time.perf_counter() - t0

        metas = [
            {"paper_id": p.paper_id, **{k: v for k, v in (("venue", p.venue), ("year", p.year)) if v is not None}}
            for p in papers
            for _t in a.index_texts([p])
        ]
        from langchain_chroma import Chroma

        lc_batch = Chroma(collection_name="probe", persist_directory=str(work / "probe"))._client.get_max_batch_size()
        variants = [
            ("vectors only (floor)", None, None, 256),
            ("vectors only (floor)", None, None, 1024),
            ("baseline layout: documents + venue/year", metas, texts, lc_batch),
        ]
        results = []
        for k, (name, metas_k, docs, batch) in enumerate(variants):
            seconds = _write(work / f"c{k}", ids, vectors, metas_k, docs, batch)
            results.append((name, batch, seconds))
            print(f"{name}, batch {batch}: {seconds:.1f} s", file=sys.stderr, flush=True)
        a.ingest_papers(papers)  # fills the embedding cache (untimed)
        t0 = time.perf_counter()
        a.ingest_papers(papers, rebuild=True)  # everything again but embedding
        results.append(("ours: ingest with every embedding cached", 0, time.perf_counter() - t0))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    n_chunks = len(ids)
    floor = min(s for name, _b, s in results if name.startswith("vectors only"))
    ours = next(s for name, _b, s in results if name.startswith("ours"))
    base = next(s for name, _b, s in results if name.startswith("baseline"))
    print(f"N = {n} abstracts, {n_chunks} chunks, `{args.model}`, {vectors.shape[1]}-d\n")
    print("| step | seconds | chunks/s |\n|---|---|---|")
    print(f"| raw embedder (E) | {embed_s:.1f} | {n_chunks / embed_s:.0f} |")
    for name, batch, seconds in results:
        print(f"| {name}{f', batch {batch}' if batch else ''} | {seconds:.1f} | {n_chunks / seconds:.0f} |")
    print()
    print(f"Best possible ingest / raw embedder, one process: E / (E + W_floor) = {embed_s / (embed_s + floor):.2f}")
    print(f"With our metadata: E / (E + W_ours) = {embed_s / (embed_s + ours):.2f}")
    print(
        f"Best possible ingest / baseline (E + W_baseline) / (E + W_floor) = {(embed_s + base) / (embed_s + floor):.2f}"
    )
    return {
        "abstracts": n,
        "chunks": n_chunks,
        "embed_s": embed_s,
        "writes": [{"layout": name, "batch": batch, "seconds": seconds} for name, batch, seconds in results],
        "bound_vs_raw": embed_s / (embed_s + floor),
        "bound_ours_vs_raw": embed_s / (embed_s + ours),
        "bound_vs_baseline": (embed_s + base) / (embed_s + floor),
    }

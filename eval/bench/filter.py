"""Filtered dense search: ours beside Chroma's own where-filter, speed and exactness.

    python -m rag.evaluation.bench filter --data-dir DIR [--collection scale] [--model MODEL] [--sample 20]

Runs on an existing local index (e.g. the one the scale benchmark leaves in its work folder). For
the largest, a mid-sized and the smallest venue it takes the 50 nearest papers of that venue for each
query (paper titles from the index) three ways: ``Assistant.search(mode="dense", where=...)`` (ours,
the public path every filtered search takes), Chroma's filtered query on the same collection through
its own client (the two alternate which goes first), and brute force over every stored vector (the
exact answer). Papers, not chunks, are compared: a paper's score is its best chunk's. Prints p50
latency and recall@50 against brute force for both.
"""

from __future__ import annotations

import argparse
import collections
import functools
import random
import statistics
import time
from typing import Any

from rag.evaluation.bench._shared import index_arguments, index_dir
from rag.evaluation.bench.suite import Output
from rag.evaluation.metrics import percentile

NEEDS_LLM = False


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    index_arguments(ap)


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    data_dir = index_dir(args)
    import chromadb
    import numpy as np

    from rag import Assistant, get_settings

    a = Assistant(get_settings(data_dir=data_dir, collection=args.collection, embedding={"model": args.model}))
    a.search("warm-up", k=1)  # opens Chroma and BM25
    col = chromadb.PersistentClient(str(data_dir / "chroma")).get_collection(args.collection)
    pids: list[str] = []
    venues: list[object] = []
    blocks = []
    offset = 0
    while True:  # every vector, for the exact answer
        got = col.get(include=["embeddings", "metadatas"], limit=20000, offset=offset)
        if not got["ids"]:
            break
        pids += [str(m.get("_paper_id")) for m in got["metadatas"]]
        venues += [m.get("venue") for m in got["metadatas"]]
        blocks.append(np.asarray(got["embeddings"], dtype=np.float32))
        offset += len(got["ids"])
    matrix = np.concatenate(blocks)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    venue_array = np.asarray(venues, dtype=object)
    counts = collections.Counter(venues)
    ranked = [v for v, _n in counts.most_common() if v is not None]
    titles = [
        p.title for p in random.Random(3 if args.seed is None else args.seed).sample(a.papers(), args.sample or 20)
    ]
    vectors = [a.embeddings.embed_query(t) for t in titles]

    def top_papers(order: list[int], n: int) -> set[str]:
        seen: dict[str, None] = {}
        for i in order:
            seen.setdefault(pids[i], None)
            if len(seen) == n:
                break
        return set(seen)

    def ours_papers(title: str, where: dict[str, Any]) -> set[str]:
        return {h.paper_id for h in a.search(title, k=50, where=where, mode="dense")}

    def chroma_papers(v: list[float], where: dict[str, object]) -> set[str]:
        res = col.query(query_embeddings=[v], n_results=200, where=where, include=["metadatas"])  # type: ignore[arg-type]
        return top_papers_from_metas(res["metadatas"][0])

    def top_papers_from_metas(metas: list[dict[str, object]]) -> set[str]:
        seen: dict[str, None] = {}
        for m in metas:
            seen.setdefault(str(m.get("_paper_id")), None)
            if len(seen) == 50:
                break
        return set(seen)

    print(f"{len(pids)} chunks, `{args.model}`, {len(titles)} queries (paper titles), nearest 50 papers of the venue\n")
    print("| venue | share of chunks | ours p50 ms | Chroma where p50 ms | ours recall@50 | Chroma recall@50 |")
    print("|---|---|---|---|---|---|")
    figures: list[dict[str, Any]] = []
    for venue in (ranked[0], ranked[len(ranked) // 2], ranked[-1]):
        where = {"venue": venue}
        keep = venue_array == venue
        ours_t, chroma_t, ours_r, chroma_r = [], [], [], []
        for title, v in zip(titles, vectors):
            q = np.asarray(v, dtype=np.float32) / np.linalg.norm(v)
            scores = np.where(keep, matrix @ q, -np.inf)
            exact = top_papers([i for i in np.argsort(-scores) if keep[i]], 50)
            runs = [
                ("ours", functools.partial(ours_papers, title, where)),
                ("chroma", functools.partial(chroma_papers, v, where)),
            ]
            if len(ours_t) % 2:  # alternate who goes first: the second of two like queries finds caches warm
                runs.reverse()
            got: dict[str, set[str]] = {}
            for name, run in runs:
                t0 = time.perf_counter()
                got[name] = run()
                (ours_t if name == "ours" else chroma_t).append(time.perf_counter() - t0)
            ours_r.append(len(got["ours"] & exact) / len(exact))
            chroma_r.append(len(got["chroma"] & exact) / len(exact))
        print(
            f"| {venue} | {keep.mean():.1%} | {1000 * (percentile(ours_t, 50) or 0):.1f} "
            f"| {1000 * (percentile(chroma_t, 50) or 0):.1f} "
            f"| {statistics.mean(ours_r):.3f} | {statistics.mean(chroma_r):.3f} |"
        )
        figures.append(
            {
                "venue": venue,
                "share": float(keep.mean()),
                "ours_p50_ms": 1000 * (percentile(ours_t, 50) or 0),
                "chroma_p50_ms": 1000 * (percentile(chroma_t, 50) or 0),
                "ours_recall": statistics.mean(ours_r),
                "chroma_recall": statistics.mean(chroma_r),
            }
        )
    return {"queries": len(titles), "venues": figures}

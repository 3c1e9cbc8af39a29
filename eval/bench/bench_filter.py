"""Filtered dense search: our over-fetch path beside Chroma's own where-filter, speed and exactness.

    .venv/bin/python eval/bench/bench_filter.py --data-dir DIR --collection NAME [--model MODEL] [--queries 20]

Runs on an existing index (e.g. the one `eval.bench_scale` leaves in its work folder). For the
largest, a mid-sized and the smallest venue it takes the nearest 50 chunks of that venue for each query
(paper titles from the index) three ways: `Retriever._dense` (what every search uses: over-fetch
without a filter when the filter keeps enough chunks, else Chroma filters), Chroma's filtered query
alone (the two alternate which goes first), and brute force over every stored vector (the exact
answer). Prints p50 latency and recall@50 against brute force for both.
"""

from __future__ import annotations

import argparse
import collections
import random
import statistics
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--collection", required=True)
    ap.add_argument("--model", default="wordllama-l2-supercat-256")
    ap.add_argument("--queries", type=int, default=20)
    args = ap.parse_args(argv)

    import numpy as np

    from rag import Assistant, get_settings

    a = Assistant(get_settings(data_dir=args.data_dir, collection=args.collection, embedding={"model": args.model}))
    col = a.index.collection
    ids: list[str] = []
    venues: list[object] = []
    blocks = []
    offset = 0
    while True:  # every vector, for the exact answer
        got = col.get(include=["embeddings", "metadatas"], limit=20000, offset=offset)
        if not got["ids"]:
            break
        ids += got["ids"]
        venues += [m.get("venue") for m in got["metadatas"]]
        blocks.append(np.asarray(got["embeddings"], dtype=np.float32))
        offset += len(got["ids"])
    matrix = np.concatenate(blocks)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    venue_array = np.asarray(venues, dtype=object)
    counts = collections.Counter(venues)
    ranked = [v for v, _n in counts.most_common() if v is not None]
    titles = [p.title for p in random.Random(3).sample(a.index.papers(), args.queries)]
    vectors = [a.embeddings.embed_query(t) for t in titles]
    a.retriever._dense(vectors[0], 50, {"venue": ranked[0]})  # warm: HNSW in memory, BM25 columns built

    print(f"{len(ids)} chunks, `{args.model}`, {len(titles)} queries (paper titles), nearest 50 of the venue\n")
    print("| venue | share of chunks | ours p50 ms | Chroma where p50 ms | ours recall@50 | Chroma recall@50 |")
    print("|---|---|---|---|---|---|")
    for venue in (ranked[0], ranked[len(ranked) // 2], ranked[-1]):
        where = {"venue": venue}
        keep = venue_array == venue
        ours_t, chroma_t, ours_r, chroma_r = [], [], [], []
        for v in vectors:
            q = np.asarray(v, dtype=np.float32) / np.linalg.norm(v)
            scores = np.where(keep, matrix @ q, -np.inf)
            exact = {ids[i] for i in np.argsort(-scores)[:50] if keep[i]}
            runs = [("ours", lambda: a.retriever._dense(v, 50, where)), ("chroma", lambda: a.index.dense_search(v, 50, where))]
            if len(ours_t) % 2:  # alternate who goes first: the second of two like queries finds caches warm
                runs.reverse()
            got = {}
            for name, run in runs:
                t0 = time.perf_counter()
                got[name] = run()
                (ours_t if name == "ours" else chroma_t).append(time.perf_counter() - t0)
            ours, chroma = got["ours"], got["chroma"]
            assert all(h.metadata.get("venue") == venue for h in ours)
            ours_r.append(len({h.chunk_id for h in ours} & exact) / len(exact))
            chroma_r.append(len({h.chunk_id for h in chroma} & exact) / len(exact))
        print(
            f"| {venue} | {keep.mean():.1%} | {1000 * statistics.median(ours_t):.1f} | {1000 * statistics.median(chroma_t):.1f} "
            f"| {statistics.mean(ours_r):.3f} | {statistics.mean(chroma_r):.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

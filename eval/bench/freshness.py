"""A writer's change seen by a running reader, and what noticing costs, on an existing index.

    python -m rag.evaluation.bench freshness --data-dir DIR [--collection scale] [--model MODEL] [--sample 20]

Runs on an existing local index (e.g. the one the scale benchmark leaves in its work folder, which it then
changes: one paper is added and removed again). A reader process opens the index and answers searches
(hybrid, k=5; titles sampled with a fixed seed); meanwhile:

* the cost of noticing: the reader's search p50 before any write, and `PaperIndex.refresh()` alone (the stat
  of the stamp file every query pays);
* a writer process ingests one new paper; the reader's next search must find it (BM25, dense and a venue
  filter), and its latency is the one-off cost of reloading BM25 and reopening Chroma;
* the writer removes it again (`ingest --prune` would rewrite everything, so the paper's chunks are
  deleted through the same incremental path) and the reader must stop finding it.

Prints one Markdown table with the load average beside every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from typing import Any

from rag.evaluation.bench._shared import child_env, index_arguments, index_dir
from rag.evaluation.bench.suite import BenchError, Output

NEEDS_LLM = False

_READER = r"""
import json, sys, time
from rag import Assistant, get_settings
a = Assistant(get_settings(data_dir=sys.argv[1], collection=sys.argv[2], embedding={"model": sys.argv[3]}))
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd.get("op") == "refresh":
        idx = a._index
        t0 = time.perf_counter()
        for _ in range(cmd["n"]):
            idx.refresh()
        print(json.dumps({"us": 1e6 * (time.perf_counter() - t0) / cmd["n"]}), flush=True)
        continue
    t0 = time.perf_counter()
    hits = a.search(cmd["q"], k=5, mode=cmd.get("mode"), where=cmd.get("where"))
    print(json.dumps({"s": time.perf_counter() - t0, "ids": [h.paper_id for h in hits]}), flush=True)
"""

_WRITER = r"""
import json, sys, time
from rag import Assistant, Paper, get_settings
a = Assistant(get_settings(data_dir=sys.argv[1], collection=sys.argv[2], embedding={"model": sys.argv[3]}))
op, venue = sys.argv[4], sys.argv[5]
if op == "add":
    p = Paper(paper_id="bench-freshness-zeolite", title="Zeolite catalysis of methane to methanol",
              abstract="We study zeolite catalysis of methane to methanol at low temperature.", venue=venue)
    t0 = time.perf_counter()
    report = a.ingest_papers([p])
else:  # remove that one paper: the incremental path deletes its chunks and updates BM25
    keep = [q for q in a.papers() if q.paper_id != "bench-freshness-zeolite"]
    t0 = time.perf_counter()
    report = a.ingest_papers(keep, prune=True)
print(json.dumps({"s": time.perf_counter() - t0, "report": report.to_json()}))
"""


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    index_arguments(ap)


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    data_dir = index_dir(args)
    from rag import Assistant, get_settings

    probe = Assistant(get_settings(data_dir=data_dir, collection=args.collection, embedding={"model": args.model}))
    papers = probe.papers()
    titles = [p.title for p in random.Random(3 if args.seed is None else args.seed).sample(papers, args.sample or 20)]
    venues = sorted({p.venue for p in papers if p.venue}, key=lambda v: sum(p.venue == v for p in papers))
    venue = venues[len(venues) // 2]  # a mid-sized venue
    del probe

    base = [str(data_dir), args.collection, args.model]
    reader = subprocess.Popen(
        [sys.executable, "-c", _READER, *base],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    assert reader.stdin is not None and reader.stdout is not None

    def call(cmd: dict[str, object]) -> dict[str, object]:
        reader.stdin.write(json.dumps(cmd) + "\n")  # type: ignore[union-attr]
        reader.stdin.flush()  # type: ignore[union-attr]
        return dict(json.loads(reader.stdout.readline()))  # type: ignore[union-attr]

    def write(op: str) -> tuple[float, float]:
        load = os.getloadavg()[0]
        proc = subprocess.run(
            [sys.executable, "-c", _WRITER, *base, op, venue],
            capture_output=True,
            text=True,
            timeout=900,
            env=child_env(),
        )
        if proc.returncode:
            raise BenchError(proc.stderr[-2000:])
        return float(json.loads(proc.stdout.strip().splitlines()[-1])["s"]), load

    rows: list[tuple[str, str, float]] = []
    query = "zeolite catalysis of methane to methanol"
    try:
        json.loads(reader.stdout.readline())
        for t in titles[:3]:
            call({"q": t})  # warm-up: opens Chroma, loads BM25 and the embedder
        load = os.getloadavg()[0]
        times = sorted(float(call({"q": t})["s"]) for t in titles)  # type: ignore[arg-type]
        rows.append(("reader search p50, no writes (hybrid, k=5)", f"{1000 * times[len(times) // 2]:.1f} ms", load))
        load = os.getloadavg()[0]
        rows.append(
            (
                "`refresh()` alone (a stat of the stamp file), per query",
                f"{call({'op': 'refresh', 'n': 20000})['us']:.1f} µs",
                load,
            )
        )
        assert "bench-freshness-zeolite" not in call({"q": query})["ids"]  # type: ignore[operator]

        seconds, load = write("add")
        rows.append(("writer process: ingest 1 new paper (process start excluded)", f"{seconds:.2f} s", load))
        load = os.getloadavg()[0]
        first = call({"q": query})
        found = "bench-freshness-zeolite" in first["ids"]  # type: ignore[operator]
        rows.append(("reader's next search after the write: finds the new paper", "yes" if found else "NO", load))
        rows.append(("... its latency (reload BM25 + reopen Chroma, once)", f"{1000 * float(first['s']):.0f} ms", load))  # type: ignore[arg-type]
        bm25 = "bench-freshness-zeolite" in call({"q": query, "mode": "bm25"})["ids"]  # type: ignore[operator]
        dense = "bench-freshness-zeolite" in call({"q": query, "mode": "dense"})["ids"]  # type: ignore[operator]
        filt = "bench-freshness-zeolite" in call({"q": query, "where": {"venue": venue}})["ids"]  # type: ignore[operator]
        rows.append(("... found by BM25 / dense / with its venue filter", f"{bm25} / {dense} / {filt}", load))
        load = os.getloadavg()[0]
        after = sorted(float(call({"q": t})["s"]) for t in titles)  # type: ignore[arg-type]
        rows.append(("reader search p50 after it (steady again)", f"{1000 * after[len(after) // 2]:.1f} ms", load))

        seconds, load = write("remove")
        rows.append(("writer process: remove that paper again", f"{seconds:.2f} s", load))
        gone = "bench-freshness-zeolite" not in call({"q": query})["ids"]  # type: ignore[operator]
        rows.append(("reader's next search no longer finds it", "yes" if gone else "NO", os.getloadavg()[0]))
    finally:
        reader.stdin.close()
        reader.wait(timeout=60)

    lines = [
        f"{len(papers)} papers, `{args.model}`, mid-sized venue `{venue}`; {os.cpu_count()} CPUs",
        "",
        "| measure | value | load average |",
        "|---|---|---|",
        *(f"| {m} | {v} | {lo:.1f} |" for m, v, lo in rows),
    ]
    table = "\n".join(lines)
    out.table("freshness.md", table)
    return {
        "papers": len(papers),
        "venue": venue,
        "rows": [{"measure": m, "value": v, "load": lo} for m, v, lo in rows],
    }

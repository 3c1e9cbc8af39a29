"""Scale benchmark: ingest throughput, re-ingest, retrieval latency, memory and disk at N abstracts.

    python -m rag.evaluation.bench scale [--sizes 1000,10000,87504] [--model all-MiniLM-L6-v2-int8]
        [--baseline-max N] [--no-server] [--no-raw] [--data-dir /tmp/rag-bench-scale]

Corpus: ``ml_abstracts.jsonl.gz`` in the shared data folder (``$RAG_SHARED_DATA``, default ``../shared/data``;
not shipped, see _shared.py) or ``--data``: 87,504 conference abstracts with venue and year,
shuffled with a fixed seed; size N is the first N records, so the sizes are nested. 4,545 records
share ids such as ``cvpr2019-None``; those ids get the record's line number appended, so every one
of the 87,504 abstracts is indexed.

For each N, every measurement runs in its own child process (peak RSS is that process's
``ru_maxrss``; for the server run the ``chroma run`` process is added), with an empty embedding cache:

* raw embedder: ``embed_documents`` on exactly the texts our ingest embeds (the physical limit);
* naive LangChain baseline: ``langchain_chroma.Chroma.from_documents`` with the same embedder and
  the same texts, venue and year as metadata;
* ours: ``Assistant.ingest`` of the JSONL file (reading, chunking, embedding, Chroma, BM25);
* re-ingest of the unchanged file, then of a file with 1 % of the abstracts changed;
* retrieval: ``Assistant.search`` (hybrid, k=5) p50/p95 over distinct queries (titles of indexed
  papers; nothing cached), without and with a ``venue`` filter (a mid-sized venue, ~2 % of the
  abstracts, and the largest, ~20 %), embedded and through a
  ``chroma run`` server serving the same files.

Prints one Markdown table (plus the machine's load average) and writes ``scale.json`` / ``scale.md`` into the
run's folder after every size. The index of each N stays in ``<data-dir>/<model>/n<N>/ours`` (collection
``scale``) for the filter and freshness benchmarks.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rag.evaluation.bench._shared import child_env, python_module, shared_data
from rag.evaluation.bench.suite import BenchError, Output
from rag.evaluation.metrics import percentile

NEEDS_LLM = False
QUERIES = 100
WARMUP = 5


# ---------------------------------------------------------------------------------------------- corpus
def load_records(path: Path) -> list[dict[str, Any]]:
    """All records, ids made unique, shuffled with a fixed seed."""
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            rec = json.loads(line)
            rid = str(rec.get("id"))
            if rid in seen or rid.endswith("-None"):
                rid = f"{rid}-l{line_no}"
            seen.add(rid)
            rec["id"] = rid
            records.append(rec)
    random.Random(0).shuffle(records)
    return records


def write_jsonl(records: list[dict[str, Any]], path: Path) -> None:
    with path.open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def dir_bytes(path: Path, exclude: tuple[str, ...] = ()) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and f.name not in exclude)


# --------------------------------------------------------------------------------------------- phases (child processes)
def _settings(work: Path, model: str, **extra: Any) -> Any:
    from rag import get_settings

    return get_settings(data_dir=work / "ours", collection="scale", embedding={"model": model}, **extra)


def raw_embedder(settings: Any) -> Any:
    """The embedding model the settings name, without the on-disk cache (every text is computed)."""
    from rag import Assistant

    uncached = settings.model_copy(update={"embedding": settings.embedding.model_copy(update={"cache": False})})
    return Assistant(uncached).embeddings


def phase_raw(work: Path, model: str) -> dict[str, Any]:
    from rag import Assistant

    assistant = Assistant(_settings(work, model))
    papers = assistant.read([work / "corpus.jsonl"])
    texts = assistant.index_texts(papers)
    embedder = raw_embedder(assistant.settings)
    embedder.embed_documents(texts[:8])  # load the model outside the timed part, as ingest's first batch does not
    t0 = time.perf_counter()
    for i in range(0, len(texts), 256):  # the same batches as ingest
        embedder.embed_documents(texts[i : i + 256])
    return {"seconds": time.perf_counter() - t0, "papers": len(papers), "chunks": len(texts)}


def phase_baseline(work: Path, model: str) -> dict[str, Any]:
    from langchain_chroma import Chroma
    from langchain_core.documents import Document

    from rag import Assistant

    assistant = Assistant(_settings(work, model))
    papers = assistant.read([work / "corpus.jsonl"])
    docs = []
    for p in papers:
        for text in assistant.index_texts([p]):
            meta = {
                "paper_id": p.paper_id,
                **{k: v for k, v in (("venue", p.venue), ("year", p.year)) if v is not None},
            }
            docs.append(Document(page_content=text, metadata=meta))
    embedder = raw_embedder(assistant.settings)
    embedder.embed_documents([docs[0].page_content])
    t0 = time.perf_counter()
    Chroma.from_documents(
        docs,
        embedder,
        collection_name="baseline",
        persist_directory=str(work / "baseline"),
        collection_metadata={"hnsw:space": "cosine"},
    )
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "chunks": len(docs), "disk_bytes": dir_bytes(work / "baseline")}


def phase_ingest(work: Path, model: str) -> dict[str, Any]:
    from rag import Assistant

    assistant = Assistant(_settings(work, model))
    assistant.embeddings.embed_documents(["warm-up: load the model"])  # as raw and baseline do
    t0 = time.perf_counter()
    report = assistant.ingest([work / "corpus.jsonl"])
    seconds = time.perf_counter() - t0
    ours = work / "ours"
    return {
        "seconds": seconds,
        "papers": report.papers_seen,
        "chunks": report.chunks_written,
        "embedded": report.embedded,
        "disk_bytes": dir_bytes(
            ours, exclude=("embedding-cache.sqlite", "embedding-cache.sqlite-wal", "embedding-cache.sqlite-shm")
        ),
        "cache_bytes": sum(f.stat().st_size for f in ours.glob("embedding-cache.sqlite*")),
    }


def phase_reingest(work: Path, model: str) -> dict[str, Any]:
    from rag import Assistant

    assistant = Assistant(_settings(work, model))
    t0 = time.perf_counter()
    same = assistant.ingest([work / "corpus.jsonl"])
    unchanged_s = time.perf_counter() - t0
    assert not same.added and not same.updated and same.embedded == 0, same.to_json()
    t0 = time.perf_counter()
    changed = assistant.ingest([work / "corpus-1pct.jsonl"])
    changed_s = time.perf_counter() - t0
    return {
        "unchanged_s": unchanged_s,
        "changed_s": changed_s,
        "changed_papers": len(changed.updated),
        "changed_embedded": changed.embedded,
    }


def phase_query(work: Path, model: str, chroma_url: str | None = None) -> dict[str, Any]:
    from rag import Assistant

    extra = {"chroma_url": chroma_url} if chroma_url else {}
    assistant = Assistant(_settings(work, model, **extra))
    queries = json.loads((work / "queries.json").read_text())
    venue = queries["venue"]
    result: dict[str, Any] = {}
    filters = [
        ("plain", None),
        ("filtered", {"venue": venue}),
        ("filtered_common", {"venue": queries.get("venue_common", venue)}),
    ]
    for label, where in filters:
        for q in queries["warmup"]:
            assistant.search(f"{label} {q}", k=5, where=where)
        times = []
        hits_ok = 0
        for q in queries["queries"]:
            t0 = time.perf_counter()
            hits = assistant.search(q, k=5, where=where)
            times.append(time.perf_counter() - t0)
            if where is not None:
                hits_ok += all(h.metadata.get("venue") == where["venue"] for h in hits)
        times.sort()
        result[label] = {
            "p50_ms": 1000 * (percentile(times, 50) or 0.0),
            "p95_ms": 1000 * (percentile(times, 95) or 0.0),
            "n": len(times),
        }
        if where is not None:
            result[label]["all_hits_match_filter"] = hits_ok == len(times)
    return result


PHASES = {
    "raw": phase_raw,
    "baseline": phase_baseline,
    "ingest": phase_ingest,
    "reingest": phase_reingest,
    "query": phase_query,
}


# ---------------------------------------------------------------------------------------------- driver
def run_child(phase: str, work: Path, model: str, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run one phase in a child process; its JSON result plus its peak RSS and wall time."""
    cmd = [
        *python_module("scale"),
        "--phase",
        phase,
        "--work",
        str(work),
        "--model",
        model,
        *extra,
    ]
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_env() | (env or {})
    )
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise BenchError(f"phase {phase} failed ({proc.returncode}):\n{err[-3000:]}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - t0
    result["load_start"] = load0
    result["load_end"] = os.getloadavg()[0]
    return result


def start_chroma_server(path: Path) -> tuple[subprocess.Popen[bytes], str]:
    chroma = Path(sys.executable).with_name("chroma")
    port = free_port()
    proc = subprocess.Popen(
        [str(chroma), "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    import urllib.request

    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2):
                return proc, url
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise BenchError("chroma run did not start within 120 s")


def peak_rss_mb(pid: int) -> float:
    """Peak RSS (VmHWM) of one process so far (Linux /proc), MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):  # peak resident set size
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def bench_size(
    records: list[dict[str, Any]], n: int, root: Path, model: str, baseline: bool, server: bool, raw: bool = True
) -> dict[str, Any]:
    work = root / f"n{n}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    subset = records[:n]
    write_jsonl(subset, work / "corpus.jsonl")
    changed = [
        dict(r, abstract=r["abstract"] + " Code and data are released.") if i % 100 == 0 else r
        for i, r in enumerate(subset)
    ]
    write_jsonl(changed, work / "corpus-1pct.jsonl")
    rng = random.Random(1)
    picked = rng.sample(subset, min(QUERIES + WARMUP, len(subset)))
    venues = sorted(
        {r["venue"] for r in subset if r.get("venue")}, key=lambda v: -sum(r.get("venue") == v for r in subset)
    )
    (work / "queries.json").write_text(
        json.dumps(
            {
                "queries": [r["title"] for r in picked[WARMUP:]],
                "warmup": [r["title"] for r in picked[:WARMUP]],
                "venue": venues[len(venues) // 2] if venues else None,  # a mid-sized venue (~2 % of abstracts)
                "venue_common": venues[0] if venues else None,  # the largest venue (~20 %)
            }
        )
    )
    row: dict[str, Any] = {"n": n}
    if raw:
        print(f"[N={n}] raw embedder ...", file=sys.stderr, flush=True)
        row["raw"] = run_child("raw", work, model)
    if baseline:
        print(f"[N={n}] baseline Chroma.from_documents ...", file=sys.stderr, flush=True)
        row["baseline"] = run_child("baseline", work, model)
    print(f"[N={n}] our ingest ...", file=sys.stderr, flush=True)
    row["ingest"] = run_child("ingest", work, model)
    print(f"[N={n}] re-ingest ...", file=sys.stderr, flush=True)
    row["reingest"] = run_child("reingest", work, model)
    print(f"[N={n}] queries, embedded ...", file=sys.stderr, flush=True)
    row["query"] = run_child("query", work, model)
    if server:
        print(f"[N={n}] queries, chroma run ...", file=sys.stderr, flush=True)
        proc, url = start_chroma_server(work / "ours" / "chroma")
        try:
            row["query_server"] = run_child("query", work, model, "--chroma-url", url)
            row["query_server"]["server_peak_rss_mb"] = peak_rss_mb(proc.pid)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
    shutil.rmtree(work / "baseline", ignore_errors=True)
    return row


def _f(x: float | None, spec: str) -> str:
    return "–" if x is None else format(x, spec)


def render(rows: list[dict[str, Any]], model: str) -> str:
    cols = [str(r["n"]) for r in rows]
    lines = [
        f"Embedding model: `{model}`; {os.cpu_count()} CPUs; chunks of 220 cl100k tokens.",
        "",
        "| measure | " + " | ".join(f"N = {c}" for c in cols) + " |",
        "|---|" + "---|" * len(cols),
    ]

    def add(name: str, values: list[str]) -> None:
        lines.append(f"| {name} | " + " | ".join(values) + " |")

    add("chunks", [str(r["ingest"]["chunks"]) for r in rows])
    add(
        "raw embedder, abstracts/s (chunks/s)",
        [
            f"{r['n'] / r['raw']['seconds']:.1f} ({r['raw']['chunks'] / r['raw']['seconds']:.0f})"
            if "raw" in r
            else "not run"
            for r in rows
        ],
    )
    add(
        "naive baseline `Chroma.from_documents`, abstracts/s",
        [f"{r['n'] / r['baseline']['seconds']:.1f}" if "baseline" in r else "not run" for r in rows],
    )
    add("ours `Assistant.ingest`, abstracts/s", [f"{r['n'] / r['ingest']['seconds']:.1f}" for r in rows])
    add(
        "ours / raw embedder (target ≥ 0.90)",
        [f"{r['raw']['seconds'] / r['ingest']['seconds']:.2f}" if "raw" in r else "–" for r in rows],
    )
    add(
        "ours / baseline (target ≥ 2)",
        [f"{r['baseline']['seconds'] / r['ingest']['seconds']:.2f}" if "baseline" in r else "–" for r in rows],
    )
    add("full ingest, s", [f"{r['ingest']['seconds']:.1f}" for r in rows])
    add(
        "re-ingest unchanged, s (% of full; target < 5 %)",
        [
            f"{r['reingest']['unchanged_s']:.1f} ({100 * r['reingest']['unchanged_s'] / r['ingest']['seconds']:.1f} %)"
            for r in rows
        ],
    )
    add(
        "re-ingest, 1 % changed, s (% of full)",
        [
            f"{r['reingest']['changed_s']:.1f} ({100 * r['reingest']['changed_s'] / r['ingest']['seconds']:.1f} %)"
            for r in rows
        ],
    )
    for key, label in (("query", "embedded"), ("query_server", "`chroma run`")):
        if all(key in r for r in rows):
            add(
                f"search p50 / p95, ms, {label} (target p50 ≤ 25 at 87k)",
                [f"{r[key]['plain']['p50_ms']:.1f} / {r[key]['plain']['p95_ms']:.1f}" for r in rows],
            )
            add(
                f"search with a mid-sized venue filter p50 / p95, ms, {label}",
                [f"{r[key]['filtered']['p50_ms']:.1f} / {r[key]['filtered']['p95_ms']:.1f}" for r in rows],
            )
            if all("filtered_common" in r[key] for r in rows):
                add(
                    f"search with the largest venue filter p50 / p95, ms, {label}",
                    [
                        f"{r[key]['filtered_common']['p50_ms']:.1f} / {r[key]['filtered_common']['p95_ms']:.1f}"
                        for r in rows
                    ],
                )
    add("peak RSS, ingest process, MB (target ≤ 2048 at 87k)", [_f(r["ingest"]["peak_rss_mb"], ".0f") for r in rows])
    add("peak RSS, query process, MB", [_f(r["query"]["peak_rss_mb"], ".0f") for r in rows])
    if all("query_server" in r for r in rows):
        add("peak RSS, `chroma run` server, MB", [_f(r["query_server"].get("server_peak_rss_mb"), ".0f") for r in rows])
    add(
        "peak RSS, raw embedder / baseline, MB",
        [
            f"{_f(r['raw']['peak_rss_mb'], '.0f') if 'raw' in r else '–'} / "
            f"{_f(r['baseline']['peak_rss_mb'], '.0f') if 'baseline' in r else '–'}"
            for r in rows
        ],
    )
    add("index on disk (Chroma + BM25), MB", [f"{r['ingest']['disk_bytes'] / 1e6:.0f}" for r in rows])
    add("embedding cache on disk, MB", [f"{r['ingest']['cache_bytes'] / 1e6:.0f}" for r in rows])
    add(
        "baseline index on disk, MB",
        [f"{r['baseline']['disk_bytes'] / 1e6:.0f}" if "baseline" in r else "–" for r in rows],
    )
    for key, label in (("ingest", "our ingest"), ("reingest", "the re-ingests"), ("query", "the searches")):
        add(
            f"load average during {label} (start → end)",
            [f"{r[key]['load_start']:.1f} → {r[key]['load_end']:.1f}" for r in rows],
        )
    return "\n".join(lines)


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--sizes", default="1000,10000,87504")
    ap.add_argument("--model", default="all-MiniLM-L6-v2-int8", help="A local embedding model (RAG_EMBEDDING__MODEL).")
    ap.add_argument(
        "--baseline-max", type=int, default=10**9, help="Skip the baseline above this N (it costs a full embedding)."
    )
    ap.add_argument("--no-server", action="store_true", help="Skip the `chroma run` latency runs.")
    ap.add_argument(
        "--no-raw", action="store_true", help="Skip the raw embedder run (ingest ratios are then not shown)."
    )
    ap.add_argument("--data", type=Path, help="ml_abstracts.jsonl.gz (default: in the shared data folder)")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    work = args.data_dir or Path("/tmp/rag-bench-scale")
    records = load_records(shared_data("ml_abstracts.jsonl.gz", args.data))
    sizes = [min(int(s), len(records)) for s in args.sizes.split(",")]
    rows = []
    t0 = time.time()
    for n in sizes:
        rows.append(
            bench_size(
                records,
                n,
                work / args.model,
                args.model,
                n <= args.baseline_max,
                not args.no_server,
                raw=not args.no_raw,
            )
        )
        table = render(rows, args.model)
        print(table, file=sys.stderr, flush=True)
        # after every size, so a long run that is stopped keeps what it measured
        out.file("scale.json").write_text(json.dumps({"model": args.model, "rows": rows}, indent=1))
        out.file("scale.md").write_text(table + "\n")
    print(table)
    print(f"\n(total {time.time() - t0:.0f} s)")
    return {"model": args.model, "rows": rows}


def _phase_main(argv: list[str] | None = None) -> int:
    """A child process of run(): one measurement, JSON on the last stdout line."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--phase", choices=sorted(PHASES), required=True)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--chroma-url")
    args = ap.parse_args(argv)
    kwargs = {"chroma_url": args.chroma_url} if args.phase == "query" else {}
    result = PHASES[args.phase](args.work, args.model, **kwargs)
    import resource

    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(_phase_main())

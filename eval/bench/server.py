"""Throughput of the HTTP API (`rag serve`): requests per second with N concurrent clients.

    python -m rag.evaluation.bench server [--clients 1,4,8] [--seconds 10] [--llm-requests 4]   # 0: no LLM

Indexes the bundled NeurIPS 2026 abstracts into a temporary data dir, serves ``create_app`` with uvicorn
on 127.0.0.1 (what `rag serve` runs) and drives it with real HTTP clients in threads: ``POST /v1/search``,
``POST /v1/chat/completions`` in extractive mode (no LLM), and briefly with the embedded LLM. Prints a
Markdown table: endpoint, clients, requests, errors, requests/s, latency p50/p95.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from rag import Assistant, get_settings
from rag.apps.http_api import create_app
from rag.evaluation.bench.suite import Output
from rag.evaluation.metrics import percentile

QUERIES = [
    "drone footage of zebras in 3D",
    "multi-agent failure attribution",
    "router updates in mixture-of-experts training",
    "open-vocabulary segmentation with generated masks",
]
QUESTIONS = [
    "How many 3D bounding box annotations does WildBox contain?",
    "How many protocols and subtasks does the WiREBench benchmark contain?",
    "How many failed trajectories does Who&When Pro contain?",
    "What does CoCHI stand for?",
]

NEEDS_LLM = True


def _serve(assistant: Assistant) -> tuple[uvicorn.Server, str]:
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(assistant), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return server, f"http://127.0.0.1:{port}"


def _run(
    request: Callable[[httpx.Client, int], None], clients: int, *, seconds: float = 0, total: int = 0
) -> dict[str, Any]:
    """``clients`` threads each with its own connection; for ``seconds``, or until ``total`` requests are done."""
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    counter = iter(range(10**9))
    start = time.perf_counter()

    def worker(_: int) -> None:
        nonlocal errors
        with httpx.Client(timeout=900) as client:
            while True:
                with lock:
                    i = next(counter)
                if (total and i >= total) or (seconds and time.perf_counter() - start > seconds):
                    return
                t0 = time.perf_counter()
                try:
                    request(client, i)
                    ok = True
                except httpx.HTTPError:
                    ok = False
                with lock:
                    latencies.append(time.perf_counter() - t0)
                    errors += not ok

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(worker, range(clients)))
    elapsed = time.perf_counter() - start
    lat = sorted(latencies)
    return {
        "requests": len(lat),
        "errors": errors,
        "rps": len(lat) / elapsed,
        "p50": percentile(lat, 50) or 0.0,
        "p95": percentile(lat, 95) or 0.0,
    }


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--clients", default="1,4,8", help="Comma-separated concurrency levels.")
    ap.add_argument("--seconds", type=float, default=10.0, help="Duration of each search / extractive run.")
    ap.add_argument(
        "--llm-requests", type=int, default=4, help="Questions answered by the embedded LLM per level (0: skip)."
    )
    ap.add_argument("--llm-clients", default="1,2", help="Concurrency levels of the LLM run.")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:

    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        assistant = Assistant.from_settings(get_settings(data_dir=Path(tmp)))
        assistant.ingest([Assistant.bundled_corpus()])
        server, base = _serve(assistant)

        def search(client: httpx.Client, i: int) -> None:
            r = client.post(f"{base}/v1/search", json={"query": QUERIES[i % len(QUERIES)], "k": 5})
            r.raise_for_status()

        def ask(mode: str) -> Callable[[httpx.Client, int], None]:
            def call(client: httpx.Client, i: int) -> None:
                body = {
                    "model": "rag-abstracts",
                    "mode": mode,
                    "messages": [{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}],
                }
                r = client.post(f"{base}/v1/chat/completions", json=body)
                r.raise_for_status()
                assert "rag" in r.json()

            return call

        for fn in (search, ask("extractive")):  # warm-up: model load, BM25 index, caches
            with httpx.Client(timeout=900) as c:
                fn(c, 0)
        rows = []
        for label, fn in (("POST /v1/search", search), ("POST /v1/chat/completions (extractive)", ask("extractive"))):
            for n in (int(x) for x in args.clients.split(",")):
                rows.append((label, n, _run(fn, n, seconds=args.seconds)))
        if args.llm_requests:
            t0 = time.perf_counter()
            assistant.start_llm()
            with httpx.Client(timeout=900) as c:
                ask("llm")(c, 0)
            print(f"(LLM started and warmed in {time.perf_counter() - t0:.1f} s)")
            for n in (int(x) for x in args.llm_clients.split(",")):
                rows.append(
                    ("POST /v1/chat/completions (embedded LLM)", n, _run(ask("llm"), n, total=args.llm_requests))
                )
        server.should_exit = True

    print("\n| endpoint | clients | requests | errors | requests/s | p50 s | p95 s |")
    print("|---|---|---|---|---|---|---|")
    for label, n, r in rows:
        print(f"| {label} | {n} | {r['requests']} | {r['errors']} | {r['rps']:.2f} | {r['p50']:.3f} | {r['p95']:.3f} |")
    return {"rows": [{"endpoint": label, "clients": n, **r} for label, n, r in rows]}

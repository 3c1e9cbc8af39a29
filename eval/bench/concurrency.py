"""Throughput of concurrent questions: the Python API and the web UI's ``/ask`` endpoint (gradio_client).

    python -m rag.evaluation.bench concurrency [--mode extractive|llm] [--clients 1,5,20] [--sample N]

Indexes the bundled NeurIPS 2026 abstracts into a temporary data dir and builds ONE ``Assistant``. For
each number of clients it answers ``--sample`` gold questions (eval/data/neurips2026_gold.jsonl, one
paper after another, follow-ups with their history) from that many threads at once: first through
``Assistant.ask``, then through ``gradio_client`` (one ``Client`` per thread) against ``rag.ui.app.launch``
served on 127.0.0.1 in this process. Prints a Markdown table: surface, clients, questions, errors, answers
right by the gold keywords with a gold paper cited, (extractive) answers identical to the same question
asked alone beforehand (so nothing got mixed up under load), questions/s, latency p50/p95.

``--mode llm`` uses the embedded llama.cpp model (started before timing). It is slow on 2 cores, so the
default there is 20 questions per row. Every row takes the next window of questions, so consecutive rows
ask different questions; past 58 they repeat, and llama.cpp's prompt cache then makes a repeat cheaper.
"""

from __future__ import annotations

import argparse
import os
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import zip_longest
from pathlib import Path
from typing import Any

from rag import Assistant, get_settings
from rag.evaluation.bench.suite import Output
from rag.evaluation.dataset import EvalCase, load_gold, resolve_cases
from rag.evaluation.metrics import answer_correct, percentile

GOLD = Path(__file__).resolve().parents[1] / "data" / "neurips2026_gold.jsonl"

NEEDS_LLM = False


def interleaved_cases(assistant: Assistant) -> list[EvalCase]:
    """The gold questions, one paper after another (first question of each paper, then the second, ...)."""
    cases = resolve_cases(load_gold(GOLD), assistant.papers(), str(GOLD))
    groups: dict[str, list[EvalCase]] = {}
    for case in cases:
        groups.setdefault(case.id.split("-")[0], []).append(case)
    return [c for row in zip_longest(*groups.values()) for c in row if c is not None]


def is_right(answer: dict[str, Any], case: EvalCase) -> bool:
    """An unanswerable question refused; an answerable one answered with its keywords and a gold paper cited."""
    if not case.answerable:
        return bool(answer["refused"])
    cited = {c["paper_id"] for c in answer["citations"]}
    return (
        not answer["refused"]
        and answer_correct(answer["answer"], case.answer_keywords)
        and bool(cited & set(case.supporting_ids))
    )


def _key(answer: dict[str, Any]) -> tuple[str, list[str]]:
    return answer["answer"], [c["paper_id"] for c in answer["citations"]]


def measure(
    ask: Callable[[int, EvalCase], dict[str, Any]],
    cases: Sequence[EvalCase],
    clients: int,
    alone: dict[str, tuple[str, list[str]]] | None = None,
) -> dict[str, Any]:
    """Each of ``clients`` threads takes the next case until all are answered; all start together.
    ``alone``: each case's (answer, cited ids) when asked by itself, which every answer must equal."""
    latencies: list[float] = []
    right = errors = same = 0
    lock = threading.Lock()
    todo = iter(range(len(cases)))
    barrier = threading.Barrier(clients + 1)

    def worker(slot: int) -> None:
        nonlocal right, errors, same
        barrier.wait()
        while True:
            with lock:
                i = next(todo, None)
            if i is None:
                return
            t0 = time.perf_counter()
            try:
                answer = ask(slot, cases[i])
                ok, failed = is_right(answer, cases[i]), False
                unchanged = alone is not None and _key(answer) == alone[cases[i].id]
            except Exception:  # a failed request is counted, not fatal: the table reports it
                ok, failed, unchanged = False, True, False
            with lock:
                latencies.append(time.perf_counter() - t0)
                right += ok
                errors += failed
                same += unchanged

    with ThreadPoolExecutor(clients) as pool:
        futures = [pool.submit(worker, slot) for slot in range(clients)]
        barrier.wait()
        start = time.perf_counter()
        for f in futures:
            f.result()
    elapsed = time.perf_counter() - start
    lat = sorted(latencies)
    return {
        "questions": len(lat),
        "errors": errors,
        "right": right,
        "same": same if alone is not None else None,
        "qps": len(lat) / elapsed,
        "p50": percentile(lat, 50),
        "p95": percentile(lat, 95),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--mode", choices=["extractive", "llm"], default="extractive", help="Answer mode.")
    ap.add_argument("--clients", default="1,5,20", help="Comma-separated numbers of concurrent clients.")
    ap.add_argument("--surfaces", default="python,gradio", help="python (Assistant.ask) and/or gradio (/ask).")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    levels = [int(x) for x in args.clients.split(",")]
    surfaces = args.surfaces.split(",")
    per_row = args.sample or (20 if args.mode == "llm" else 60)

    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as tmp:
        assistant = Assistant.from_settings(get_settings(data_dir=Path(tmp)))
        assistant.ingest([Assistant.bundled_corpus()])
        cases = interleaved_cases(assistant)
        alone = {}  # also the warm-up: BM25, the sentence embeddings of every abstract (cached), the code paths
        for case in cases:
            alone[case.id] = _key(
                assistant.ask(case.question, history=list(case.history) or None, mode="extractive").to_json()
            )
        if args.mode == "llm":
            t0 = time.perf_counter()
            assistant.start_llm()
            assistant.ask(cases[0].question, mode="llm")
            print(f"(embedded LLM started and warmed in {time.perf_counter() - t0:.1f} s)")

        def python_ask(_slot: int, case: EvalCase) -> dict[str, Any]:
            return assistant.ask(case.question, history=list(case.history) or None, mode=args.mode).to_json()

        asks: dict[str, Callable[[int, EvalCase], dict[str, Any]]] = {"python": python_ask}
        app = None
        if "gradio" in surfaces:
            from gradio_client import Client

            from rag.ui.app import launch

            port = _free_port()
            app = launch(assistant, "127.0.0.1", port, block=False, quiet=True)
            gradio_clients = [Client(f"http://127.0.0.1:{port}/", verbose=False) for _ in range(max(levels))]

            def gradio_ask(slot: int, case: EvalCase) -> dict[str, Any]:
                history = [list(turn) for turn in case.history] or None
                result = gradio_clients[slot].predict(
                    case.question, 0, True, "", "", args.mode, -1.0, history, api_name="/ask"
                )
                return dict(result)

            gradio_ask(0, cases[0])
            asks["gradio"] = gradio_ask

        rows = []
        offset = 0
        load_before = os.getloadavg()[0]
        for surface in surfaces:
            for clients in levels:
                window = [cases[(offset + i) % len(cases)] for i in range(per_row)]
                offset += per_row
                rows.append(
                    (
                        surface,
                        clients,
                        measure(asks[surface], window, clients, alone if args.mode == "extractive" else None),
                    )
                )
                r = rows[-1][2]
                print(f"  {surface} x{clients}: {r['qps']:.2f} q/s, p50 {r['p50']:.2f} s", flush=True)
        load_after = os.getloadavg()[0]
        if app is not None:
            app.close()

    print(f"\nmode {args.mode}, {os.cpu_count()} CPUs, load average {load_before:.1f} before / {load_after:.1f} after")
    print("\n| surface | clients | questions | errors | right (gold) | same as alone | questions/s | p50 s | p95 s |")
    print("|---|---|---|---|---|---|---|---|---|")
    names = {"python": "Python API (`Assistant.ask`)", "gradio": "gradio_client `/ask`"}
    for surface, clients, r in rows:
        same = "–" if r["same"] is None else r["same"]
        print(
            f"| {names[surface]} | {clients} | {r['questions']} | {r['errors']} | {r['right']} | {same} | "
            f"{r['qps']:.2f} | {r['p50']:.2f} | {r['p95']:.2f} |"
        )
    return {"mode": args.mode, "rows": [{"surface": s, "clients": c, **r} for s, c, r in rows]}

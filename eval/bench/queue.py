"""20 chat users at once with the embedded LLM: the fair LLM line, 503 instead of timeouts, fast extractive answers.

    python -m rag.evaluation.bench queue [--users 20] [--llm-users 10] [--extractive-rounds 3] [--surfaces http,gradio]

Indexes the bundled NeurIPS 2026 abstracts into a temporary data dir, builds ONE ``Assistant`` and serves it
twice in this process: the HTTP API (uvicorn on 127.0.0.1) and the web UI (Gradio). For each surface, ``--users``
clients start at once: ``--llm-users`` of them ask one LLM question each (HTTP: ``/v1/chat/completions`` with
``stream: true``, reading the queue-position comments; UI: ``/ask`` through Gradio's queue), the others ask
``--extractive-rounds`` extractive questions one after another while the LLM answers queue. Questions are gold
questions sampled with a fixed seed. The clients run in a process of their own, as real users would (20 client
threads in the server's process took its interpreter lock: HTTP extractive p95 3.4-4.4 s that way), each user on
one kept-alive connection, speaking plain HTTP (see :func:`_client_ask`). Reports per kind: answered, turned away
with 503/Retry-After ("busy"), errors, timeouts, latency p50/p95, the highest queue position a waiting client
was told, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rag import Assistant, get_settings
from rag.evaluation.bench.suite import Output
from rag.evaluation.metrics import percentile

GOLD = Path(__file__).resolve().parents[1] / "data" / "neurips2026_gold.jsonl"
TIMEOUT = 600.0

NEEDS_LLM = True


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http(assistant: Assistant) -> str:
    import uvicorn

    from rag.apps.http_api import create_app

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(assistant), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    deadline = time.time() + 60
    while not server.started and time.time() < deadline:
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}"


def http_ask(client: Any, url: str, question: str, mode: str) -> dict[str, Any]:
    """One question to the HTTP API on ``client`` (a user's kept-alive connection), streamed."""
    body = {"messages": [{"role": "user", "content": question}], "mode": mode, "stream": True}
    out: dict[str, Any] = {"status": "ok", "position": 0}
    with client.stream("POST", f"{url}/v1/chat/completions", json=body) as r:
        if r.status_code == 503:
            out["status"] = "busy"
            out["retry_after"] = r.headers.get("retry-after")
            r.read()
            return out
        if r.status_code != 200:
            r.read()
            return {"status": f"error {r.status_code}: {r.text[:200]}"}
        for line in r.iter_lines():
            if line.startswith(": waiting for the LLM, position "):
                out["position"] = max(out["position"], int(line.split("position ")[1].split(",")[0]))
            elif line.startswith("data: {") and '"error"' in line[:20]:
                err = json.loads(line[6:])["error"]
                out["status"] = "busy" if err.get("code") == "busy" else f"error: {err.get('message', '')[:200]}"
    return out


def gradio_ask(client: Any, url: str, question: str, mode: str) -> dict[str, Any]:
    """One question to the UI's ``/ask`` endpoint through Gradio's own queue (its documented REST calls:
    POST ``/gradio_api/call/ask``, then read the event's stream), on a user's kept-alive connection."""
    data = [question, 0, True, "", "", mode, -1.0, None, "auto"]
    r = client.post(f"{url}/gradio_api/call/ask", json={"data": data})
    if r.status_code != 200:
        return {"status": f"error {r.status_code}: {r.text[:200]}"}
    event = ""
    with client.stream("GET", f"{url}/gradio_api/call/ask/{r.json()['event_id']}") as s:
        for line in s.iter_lines():
            if line.startswith("event: "):
                event = line[7:].strip()
            elif line.startswith("data: ") and event == "error":
                message = line[6:]
                return {"status": "busy" if "busy" in message.lower() else f"error: {message[:200]}"}
            elif event == "complete":
                return {"status": "ok", "position": None}
    return {"status": f"error: the stream ended after {event or 'no'} event"}


def _client_ask(surface: str, address: str, users: int) -> Any:
    """How one simulated user asks on ``surface`` (built in the client process). Each user keeps one
    connection open, as a browser does. The clients speak plain HTTP: gradio_client spent ~82 ms of CPU per
    call in the client process, so 14 of its clients sharing one interpreter measured the client, not the UI."""
    import httpx

    clients = [httpx.Client(timeout=TIMEOUT) for _ in range(users)]
    ask = http_ask if surface == "http" else gradio_ask
    return lambda slot, q, mode: ask(clients[slot], address.rstrip("/"), q, mode)


def run_clients(surface: str, address: str, plan: list[list[str]], llm_users: int) -> dict[str, Any]:
    """Every user's questions at once (users < ``llm_users`` ask the LLM), timed; run in a process of its own
    so that 20 clients do not take the server's interpreter lock (real users are other processes)."""
    ask = _client_ask(surface, address, len(plan))
    results: dict[str, list[tuple[float, dict[str, Any]]]] = {"llm": [], "extractive": []}
    lock = threading.Lock()

    def user(slot: int) -> None:
        kind = "llm" if slot < llm_users else "extractive"
        if kind == "extractive":
            time.sleep(1.0)  # start once the LLM answers are queued
        for q in plan[slot]:
            t = time.perf_counter()
            try:
                got = ask(slot, q, kind)
            except Exception as e:  # a timeout or a dropped connection: what must not happen
                got = {"status": f"error: {type(e).__name__}: {str(e)[:200]}"}
            with lock:
                results[kind].append((time.perf_counter() - t, got))

    t0 = time.perf_counter()
    with ThreadPoolExecutor(len(plan)) as pool:
        list(pool.map(user, range(len(plan))))
    return {"results": results, "wall": time.perf_counter() - t0}


def run_surface(surface: str, address: str, plan: list[list[str]], llm_users: int) -> list[str]:
    """One table row per kind; the clients run in a separate process (see :func:`run_clients`)."""
    import multiprocessing

    load0 = os.getloadavg()[0]
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        out = pool.apply(run_clients, (surface, address, plan, llm_users))
    results, wall = out["results"], out["wall"]
    load1 = os.getloadavg()[0]
    rows = []
    for kind, got in results.items():
        ok = sorted(t for t, g in got if g["status"] == "ok")
        busy = sum(g["status"] == "busy" for _t, g in got)
        errors = [g["status"] for _t, g in got if g["status"] not in ("ok", "busy")]
        positions = [g["position"] for _t, g in got if g.get("position") is not None]
        told = f"{max(positions)}" if positions else "n/a (/ask does not stream)"
        rows.append(
            f"| {surface} | {kind} | {len(got)} | {len(ok)} | {busy} | {len(errors)} "
            f"| {percentile(ok, 50) or 0:.2f} / {percentile(ok, 95) or 0:.2f} | {told} "
            f"| {wall:.0f} | {load0:.1f} → {load1:.1f} |"
        )
        for e in errors[:3]:
            print(f"  {surface} {kind}: {e}", flush=True)
    print("\n".join(rows), flush=True)
    return rows


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--users", type=int, default=20)
    ap.add_argument("--llm-users", type=int, default=10)
    ap.add_argument("--extractive-rounds", type=int, default=3)
    ap.add_argument("--surfaces", default="http,gradio")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:

    gold = [json.loads(line)["question"] for line in GOLD.open()]
    rng = random.Random(14 if args.seed is None else args.seed)
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-queue-") as tmp:
        assistant = Assistant.from_settings(get_settings(data_dir=Path(tmp)))
        assistant.ingest([Assistant.bundled_corpus()])
        for q in gold[:5]:
            assistant.ask(q, mode="extractive")  # warm: BM25, sentence embeddings
        t0 = time.perf_counter()
        assistant.start_llm()
        assistant.ask(gold[0], mode="llm")
        print(f"(LLM started and warmed in {time.perf_counter() - t0:.1f} s)", flush=True)
        addresses: dict[str, str] = {}
        if "http" in args.surfaces:
            addresses["http"] = start_http(assistant)
        if "gradio" in args.surfaces:
            from rag.ui.app import launch

            port = _free_port()
            launch(assistant, "127.0.0.1", port, block=False, quiet=True)
            addresses["gradio"] = f"http://127.0.0.1:{port}/"

        for surface, address in addresses.items():
            plan = [
                rng.sample(gold, 1 if slot < args.llm_users else args.extractive_rounds) for slot in range(args.users)
            ]
            rows += run_surface(surface, address, plan, args.llm_users)

    table = "\n".join(
        [
            f"{args.users} users at once per surface ({args.llm_users} LLM, the rest {args.extractive_rounds} "
            f"extractive questions each); embedded LLM, RAG_LLM__MAX_CONCURRENT / MAX_WAITING at their defaults; "
            f"{os.cpu_count()} CPUs",
            "",
            "| surface | kind | requests | answered | busy (503) | errors or timeouts | p50 / p95 s "
            "| highest position told | wall s | load avg (start → end) |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    out.table("queue.md", table)
    return {"users": args.users, "llm_users": args.llm_users, "rows": rows}

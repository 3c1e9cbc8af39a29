"""The embedded model's two runtimes side by side: the bundled llama.cpp wheel and a build for this CPU.

The bundled wheel is xllamacpp; the build is llama.cpp compiled for this CPU (``rag llm build``,
rag.models.native_llm).

Each runtime is started the way the assistant starts it (LocalLLMServer: same threads, context, prompt cache and
prompt-lookup drafts), then given the same calls: a prompt of ~330 new tokens (an abstract of the bundled corpus,
a different one per call, the prompt cache off so every call reads its whole prompt) and 32 written tokens. llama.cpp's
own timings give prompt reading and writing speed; the wall time is the client's. The first call warms up and is
not counted. Time it with nothing else running: the load is printed beside each runtime.

    python -m rag.evaluation.bench runtime [--calls 5]

It times the runtimes themselves, so it reaches into rag.models (the LLM server and the native build).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

from rag import Assistant
from rag.evaluation.bench.suite import Output
from rag.models.local_llm import LocalLLMServer, ensure_model
from rag.models.native_llm import find_server
from rag.settings import get_settings

NEEDS_LLM = True


def _calls(base: str, abstracts: list[str], n: int) -> list[dict[str, float]]:
    out = []
    for i in range(n + 1):
        text = abstracts[i % len(abstracts)]
        body = {"prompt": f"Summarise in one sentence: {text[:1400]}", "n_predict": 32, "temperature": 0}
        body["cache_prompt"] = False
        request = urllib.request.Request(
            f"{base}/completion", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        t0 = time.perf_counter()
        with urllib.request.urlopen(request, timeout=600) as response:
            timings = json.load(response)["timings"]
        wall = time.perf_counter() - t0
        if i:  # the first call warms up
            out.append(
                {
                    "prompt_tokens": timings["prompt_n"],
                    "prompt_tps": timings["prompt_per_second"],
                    "written": timings["predicted_n"],
                    "write_tps": timings["predicted_per_second"],
                    "wall_s": wall,
                }
            )
    return out


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--calls", type=int, default=5)


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    settings = get_settings()
    cache = Path(settings.cache_dir).expanduser()
    model = ensure_model(settings.llm.model, cache, progress=True)
    native = find_server(cache)
    abstracts = [p.abstract for p in Assistant.read([Assistant.bundled_corpus()])]
    rows = []
    results: dict[str, list[dict[str, float]]] = {}
    for name, binary in (("bundled wheel (xllamacpp)", None), ("compiled for this CPU", native)):
        if name.startswith("compiled") and binary is None:
            rows.append(f"| {name} | not built: run `rag llm build` | | | | |")
            continue
        with LocalLLMServer(model, threads=settings.llm.threads, ctx=settings.llm.ctx, binary=binary) as server:
            load = os.getloadavg()[0]
            calls = _calls(str(server.base_url).removesuffix("/v1"), abstracts, args.calls)
        results[name] = calls
        med = {k: statistics.median(c[k] for c in calls) for k in calls[0]}
        rows.append(
            f"| {name} | {len(calls)} | {med['prompt_tokens']:.0f} | {med['prompt_tps']:.1f} | "
            f"{med['write_tps']:.1f} | {med['wall_s']:.2f} | {load:.1f} |"
        )
    table = "\n".join(
        [
            f"{os.cpu_count()} CPUs, {settings.llm.threads} threads, model {settings.llm.model}; medians of the calls",
            "",
            "| runtime | calls | prompt tokens | prompt reading tokens/s | writing tokens/s | s per call | load |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    if len(results) == 2:
        (a, x), (b, y) = results.items()
        ratio = statistics.median(c["prompt_tps"] for c in y) / statistics.median(c["prompt_tps"] for c in x)
        wall = statistics.median(c["wall_s"] for c in y) / statistics.median(c["wall_s"] for c in x)
        table += f"\n\nprompt reading {ratio:.2f}x, time per call {wall:.2f}x ({b} / {a})"
    out.table("runtime.md", table)
    return {"threads": settings.llm.threads, "model": settings.llm.model, "runtimes": results}

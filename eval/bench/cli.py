"""Command-line latency as a user feels it: `rag --help`, `rag search`, and `rag ask` with the warm LLM server.

    python -m rag.evaluation.bench cli [--sample 10] [--repeat 5] [--data-dir /tmp/rag-bench-cli] [--skip-ask]

Every figure is the wall time of a fresh ``rag`` process (Python start and imports included), as a shell
user sees it. The index is the bundled NeurIPS 2026 abstracts (ingested once into ``--data-dir``, default
embedder). Questions come from ``eval/data/neurips2026_gold.jsonl``, sampled with a fixed seed.

``rag ask`` is timed twice over: the first question after ``rag llm stop`` (a cold start: the model loads)
and every later one within the idle period (the warm server is reused); the target is p50 ≤ 8 s for the
later ones. The load average is printed beside every figure: on a busy machine the LLM slows 2-10x, so
rerun it idle (the command above) before comparing against the targets.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from rag.evaluation.bench._shared import child_env
from rag.evaluation.bench.suite import BenchError, Output

ROOT = Path(__file__).resolve().parents[2]

NEEDS_LLM = True


def rag_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("rag")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "rag.apps.cli"]


def timed(
    args: list[str], env: dict[str, str], timeout: float = 900
) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """(seconds, 1-minute load average when it started, the finished process)."""
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.run([*rag_cmd(), *args], env=env, capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise BenchError(f"`rag {' '.join(args)}` failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return seconds, load, proc


def p50(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--repeat", type=int, default=5, help="Runs of `rag --help` and `rag search`.")
    ap.add_argument("--skip-ask", action="store_true", help="Time only --help and search (no LLM).")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:

    data_dir = args.data_dir or Path("/tmp/rag-bench-cli")
    n_questions = args.sample or 10
    env = dict(child_env(), RAG_DATA_DIR=str(data_dir))  # this checkout's rag, as the record says
    env.pop("RAG_LLM__KEEP_ALIVE", None)  # the default idle period: what a user gets
    if not (data_dir / "chroma").exists():
        timed(["ingest", str(ROOT / "rag" / "data" / "neurips2026_abstracts.txt")], env)
    gold = [json.loads(line) for line in (ROOT / "eval" / "data" / "neurips2026_gold.jsonl").open()]
    rng = random.Random(14 if args.seed is None else args.seed)
    picked = rng.sample(gold, min(len(gold), max(n_questions, args.repeat)))

    rows: list[dict[str, Any]] = []

    def record(name: str, runs: list[tuple[float, float]], target: str) -> None:
        times = [t for t, _l in runs]
        loads = [lo for _t, lo in runs]
        rows.append(
            {
                "measure": name,
                "n": len(runs),
                "p50_s": p50(times),
                "min_s": min(times),
                "max_s": max(times),
                "load": f"{min(loads):.1f}–{max(loads):.1f}",
                "target": target,
                "runs": runs,
            }
        )
        print(f"{name}: p50 {p50(times):.2f} s (load {min(loads):.1f}–{max(loads):.1f})", file=sys.stderr, flush=True)

    help_runs = [timed(["--help"], env)[:2] for _ in range(args.repeat)]
    record("`rag --help`", help_runs, "≤ 0.5 s")
    search_runs = [timed(["search", q["question"], "-k", "5"], env)[:2] for q in picked[: args.repeat]]
    record("`rag search` (process start included)", search_runs, "≤ 1.5 s")
    if not args.skip_ask:
        timed(["llm", "stop"], env)
        questions = [q["question"] for q in picked[:n_questions]]
        first = timed(["ask", questions[0], "--json"], env)
        record("`rag ask`, first question (model loads)", [first[:2]], "reported")
        later = [timed(["ask", q, "--json"], env)[:2] for q in questions[1:]]
        record("`rag ask`, 2nd and later questions (warm server)", later, "p50 ≤ 8 s")
        status = timed(["llm", "status", "--json"], env)[2].stdout
        print(f"rag llm status: {status.strip()}", file=sys.stderr)

    lines = [
        f"{os.cpu_count()} CPUs; load average = 1-minute load when each run started (min–max)",
        "",
        "| measure | runs | p50 s | min–max s | load | target |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['measure']} | {r['n']} | {r['p50_s']:.2f} | {r['min_s']:.2f}–{r['max_s']:.2f} | {r['load']} "
            f"| {r['target']} |"
        )
    table = "\n".join(lines)
    out.table("cli.md", table)
    return {"rows": rows}

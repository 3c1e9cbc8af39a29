"""What a bigger (or smaller) LLM buys: the same seeded gold questions through each model, side by side.

    python -m rag.evaluation.bench models [--model NAME]... [--gguf PATH]... [--sample 24] [--cross 8] [--plot]

Each model runs as the embedded llama.cpp server (one at a time, the previous one stopped, so each has the
two cores to itself) on one index of the bundled NeurIPS abstracts. Default models: the bundled
Qwen2.5-Coder-1.5B and the 0.5B of the test extra; ``--gguf PATH`` adds a user's own GGUF file (for
example a reasoning model). Questions: a seeded sample (``--seed``, default 11) of ``--sample`` single-paper
gold questions (default 24; eval/data/neurips2026_gold.jsonl: answerable and unanswerable), ``--cross`` list and
comparison questions (neurips2026_cross.jsonl), ``--yesno`` yes/no questions (neurips2026_check.jsonl),
``--cells`` table cells of one attribute list (neurips2026_table.jsonl) and ``--claims`` claim checks
(neurips2026_claims.jsonl: a true claim or its negated edit; the claim's own paper must be judged "supports" or
"refutes") — never the first N. Prints one table: accuracy with its 95 % bootstrap interval, needless
refusals, unanswerable refused, list F1, yes/no verdicts right, cells right, claim stances right, p50 / p95
answer latency (single-paper questions), and the peak RSS of the process tree (the server included);
``--plot`` writes accuracy against p50 latency as a PNG.
Latency means something only with nothing else on the cores: the load is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
from pathlib import Path
from typing import Any

from rag import Assistant, get_settings
from rag.evaluation.bench.answer import TreeRSS
from rag.evaluation.bench.suite import BenchError, Output
from rag.evaluation.dataset import load_gold, resolve_cases
from rag.evaluation.run import run_eval
from rag.models.local_llm import GGUF_MODELS, shared_server

NEEDS_LLM = True
DATA = Path(__file__).resolve().parents[1] / "data"
DEFAULT_MODELS = ("qwen2.5-coder-1.5b-instruct-q4_k_m", "qwen2.5-coder-0.5b-instruct-q4_k_m")


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--model", action="append", help=f"A bundled model name (repeatable; default {DEFAULT_MODELS}).")
    ap.add_argument("--gguf", action="append", type=Path, default=[], help="A GGUF file to add (repeatable).")
    ap.add_argument("--cross", type=int, default=8, help="List and comparison questions (seeded sample; default 8).")
    ap.add_argument("--yesno", type=int, default=8, help="Yes/no questions (seeded sample; default 8).")
    ap.add_argument("--cells", type=int, default=16, help="Table cells of one attribute list (default 16).")
    ap.add_argument("--claims", type=int, default=12, help="Claim checks, true or negated (default 12).")
    ap.add_argument("--plot", action="store_true", help="Write accuracy vs p50 latency as models.png.")


def _sample(cases: list[Any], n: int, rng: random.Random) -> list[Any]:
    return sorted(rng.sample(cases, min(n, len(cases))), key=lambda c: c.id)


def _claims(n: int, rng: random.Random) -> list[tuple[str, str, str, str]]:
    """``n`` seeded (id, claim, wanted stance) pairs: a true claim wants "supports", its negation "refutes"."""
    pool: list[tuple[str, str, str, str]] = []
    for line in (DATA / "neurips2026_claims.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("//"):
            continue
        row = json.loads(line)
        if row.get("unsupported"):
            continue
        pool.append((row["id"], row["claim"], "supports", row["quote"]))
        pool += [
            (row["id"] + "-neg", p["claim"], "refutes", row["quote"])
            for p in row["perturbed"]
            if p["kind"] == "negation"
        ]
    return sorted(rng.sample(pool, min(n, len(pool))))


def _check_claims(assistant: Assistant, claims: list[tuple[str, str, str, str]]) -> dict[str, Any]:
    """How often the claim's own paper is judged with the wanted stance, and with the opposite one."""
    papers = assistant.papers()
    rows = []
    for cid, claim, want, quote in claims:
        own = [p.paper_id for p in papers if quote in p.abstract]
        check = assistant.check(claim, k=5)
        stances = [s.stance for s in check.papers if s.paper_id in own]
        rows.append({"id": cid, "want": want, "got": stances[0] if stances else None})
    n = len(rows)
    right = sum(r["got"] == r["want"] for r in rows)
    opposite = sum(r["got"] not in (r["want"], "not stated", None) for r in rows)
    return {"n": n, "right": right / n if n else None, "opposite": opposite / n if n else None, "rows": rows}


def _rate(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def _fig(agg: dict[str, Any], key: str) -> Any:
    v = agg.get(key)
    return None if v is None else v.value


def _ci(agg: dict[str, Any], key: str) -> str:
    v = agg.get(key)
    if v is None or v.value is None:
        return "–"
    if v.ci_low is None:
        return f"{v.value:.3f}"
    return f"{v.value:.3f} [{v.ci_low:.2f}, {v.ci_high:.2f}]"


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    seed = 11 if args.seed is None else args.seed
    sample = 24 if args.sample is None else args.sample
    models: list[tuple[str, dict[str, Any]]] = [(m, {"model": m}) for m in (args.model or DEFAULT_MODELS)]
    for name, _ in models:
        if name not in GGUF_MODELS:
            raise BenchError(f"unknown bundled model {name!r}; known: {', '.join(sorted(GGUF_MODELS))}")
    for path in args.gguf:
        if not path.is_file():
            raise BenchError(f"no GGUF file at {path}")
        models.append((path.stem, {"gguf": str(path)}))
    rng = random.Random(seed)
    single = load_gold(DATA / "neurips2026_gold.jsonl")
    cross = load_gold(DATA / "neurips2026_cross.jsonl")
    figures: dict[str, Any] = {"seed": seed, "models": {}}
    lines = [
        "| model | accuracy (answerable) | needless refusals | unanswerable refused | list F1 | yes/no right "
        "| cells right | claim stance right (opposite) | p50 s | p95 s | peak RSS GB | load 1-min (start, end) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        base = Assistant.from_settings(get_settings(data_dir=data_dir, llm={"keep_alive": 0}))
        base.ingest([Assistant.bundled_corpus()])
        papers = base.papers()
        cases = _sample(resolve_cases(single, papers), sample, rng) + _sample(
            resolve_cases(cross, papers), args.cross, rng
        )
        yesno = [c for c in resolve_cases(load_gold(DATA / "neurips2026_check.jsonl"), papers) if c.type == "yesno"]
        more = _sample(yesno, args.yesno, rng)
        table = resolve_cases(load_gold(DATA / "neurips2026_table.jsonl"), papers)
        lists = sorted({tuple(c.attributes) for c in table})
        chosen = rng.choice(lists) if lists and args.cells else ()
        more += _sample([c for c in table if tuple(c.attributes) == chosen], args.cells, rng)
        claims = _claims(args.claims, rng)
        print(f"{len(cases)} questions (seed {seed}): {', '.join(c.id for c in cases)}", flush=True)
        print(
            f"{len(more)} yes/no and cells, {len(claims)} claims: {', '.join(c.id for c in more)} "
            f"{', '.join(c[0] for c in claims)}",
            flush=True,
        )
        for name, llm in models:
            settings = get_settings(data_dir=data_dir, llm={"keep_alive": 0, **llm})
            assistant = Assistant.from_settings(settings)
            load0 = os.getloadavg()[0]
            try:
                with TreeRSS() as rss:
                    assistant.start_llm()
                    report = run_eval(assistant, cases, label=name)
                    extra = run_eval(assistant, more, label=name).aggregate if more else {}
                    checked = _check_claims(assistant, claims)
            finally:
                shared_server(settings).stop()
            load1 = os.getloadavg()[0]
            agg = report.aggregate
            refusals = sum(r.refused for r in report.rows if r.answerable)
            answerable = sum(r.answerable for r in report.rows)
            unans = [r for r in report.rows if not r.answerable]
            row = {
                "accuracy": _fig(agg, "accuracy"),
                "accuracy_ci": [agg["accuracy"].ci_low, agg["accuracy"].ci_high] if "accuracy" in agg else None,
                "needless_refusals": refusals,
                "answerable": answerable,
                "unanswerable_refused": sum(r.refused for r in unans),
                "unanswerable": len(unans),
                "list_f1": _fig(agg, "list_f1"),
                "yesno_right": _fig(extra, "yesno_verdict_accuracy"),
                "cells_right": _fig(extra, "cell_accuracy"),
                "claims": checked,
                "p50_s": _fig(agg, "latency_p50_s"),
                "p95_s": _fig(agg, "latency_p95_s"),
                "peak_rss_gb": rss.peak / 1e9,
                "load": [load0, load1],
                "errors": sum(r.error is not None for r in report.rows),
            }
            figures["models"][name] = row
            report_path = out.file(f"{name}.json")
            report_path.write_text(report.model_dump_json(indent=1), encoding="utf-8")
            p50, p95 = row["p50_s"], row["p95_s"]
            lines.append(
                f"| {name} | {_ci(agg, 'accuracy')} | {refusals}/{answerable} | {row['unanswerable_refused']}/"
                f"{len(unans)} | {_ci(agg, 'list_f1')} | {_ci(extra, 'yesno_verdict_accuracy')} | "
                f"{_ci(extra, 'cell_accuracy')} | {_rate(checked['right'])} ({_rate(checked['opposite'])}) | "
                f"{p50 if p50 is None else f'{p50:.1f}'} | "
                f"{p95 if p95 is None else f'{p95:.1f}'} | {row['peak_rss_gb']:.2f} | {load0:.1f}, {load1:.1f} |"
            )
            print(lines[-1], flush=True)
    out.table("models", "\n".join(lines))
    if args.plot:
        _plot(figures["models"], out.file("models.png"))
    return figures


def _plot(models: dict[str, dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    slowest = max((row["p50_s"] or 0.0) for row in models.values())
    for name, row in models.items():
        if row["p50_s"] is None or row["accuracy"] is None:
            continue
        low, high = row["accuracy_ci"] or (row["accuracy"], row["accuracy"])
        ax.errorbar(
            row["p50_s"],
            row["accuracy"],
            yerr=[[row["accuracy"] - low], [high - row["accuracy"]]],
            fmt="o",
            capsize=4,
        )
        short = name.removesuffix("-q4_k_m").removesuffix("-instruct")
        ax.annotate(short, (row["p50_s"], row["accuracy"]), textcoords="offset points", xytext=(6, -12), fontsize=8)
    ax.set_xlabel("p50 answer latency, s (2 cores)")
    ax.set_ylabel("accuracy, answerable gold questions")
    ax.set_ylim(0, 1.02)
    ax.set_xlim(0, slowest * 1.6 + 0.5)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

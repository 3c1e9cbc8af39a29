"""The claim check on SciFact dev claims: is the gold abstract judged, and is its stance right? Latency too.

    python -m rag.evaluation.bench claim-check [--sample N] [--k 10] [--fresh]

Claims: a seeded sample of the dev split of SciFact claims_train (the 30 % that the stance head never saw; see
eval/bench/_stance.py), stratified by label (SUPPORT, CONTRADICT, no evidence). Each claim goes through
``Assistant.check`` over the 5,183 SciFact abstracts (the retrieval benchmark's index in
~/.cache/rag-abstracts/bench-scifact, built on first use). Figures, each with a Wilson 95 % interval:
* SUPPORT / CONTRADICT claims: the gold abstract among the judged papers AND its stance right (the issue's
  targets: >= 0.75 / >= 0.65), and its stance the opposite one (<= 0.10);
* claims without evidence: their cited abstract called supports or refutes (<= 0.25);
* the verdicts per label, and latency: seconds per claim (p50, p90) and to the first judged paper.
The model's label probabilities and each claim's opposite are cached (as in stance-train): a rerun with
another head asks nothing, and its timings are then not the model's; ``--fresh`` ignores the cache for a timing run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rag import Assistant, CheckEvent, StanceEvent, get_settings
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import (
    Claim,
    Memo,
    default_memo,
    opposites_memo,
    scifact_claims,
    scifact_corpus,
    split_of,
)
from rag.evaluation.bench.suite import Output
from rag.evaluation.metrics import wilson

NEEDS_LLM = True
SHARES = {"SUPPORT": 0.4, "CONTRADICT": 0.3, "NEI": 0.3}


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--k", type=int, default=10, help="papers judged per claim (default 10)")
    ap.add_argument("--fresh", action="store_true", help="ask the model for every paper (a timing run)")
    ap.add_argument("--ids", type=Path, default=None, help="the claims of an earlier run's record (its rows' ids)")


def sample(claims: list[Claim], n: int, seed: int) -> list[Claim]:
    rng = random.Random(seed)
    out: list[Claim] = []
    for label, share in SHARES.items():
        pool = [c for c in claims if c.label == label]
        out += rng.sample(pool, min(len(pool), round(n * share)))
    rng.shuffle(out)
    return out


def index(shared: Path, data_dir: Path | None) -> Assistant:
    settings = get_settings(
        data_dir=data_dir or Path.home() / ".cache" / "rag-abstracts" / "bench-scifact", collection="scifact"
    )
    assistant = Assistant.from_settings(settings)
    if assistant.stats().get("papers", 0) < 5000:
        print("indexing SciFact (once; embeddings cached)...", file=sys.stderr, flush=True)
        assistant.ingest([shared / "scifact" / "corpus.jsonl.gz"])
    return assistant


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    shared = shared_data("scifact").parent
    claims = [c for c in scifact_claims(shared) if c.label != "MIXED" and split_of("scifact", c.id) == "dev"]
    chosen = sample(claims, args.sample or 60, 0 if args.seed is None else args.seed)
    if args.ids is not None:  # the same claims again (e.g. re-scored with another head: nothing asked twice)
        wanted = [r["id"] for r in json.loads(args.ids.read_text())["figures"]["rows"]]
        by_id = {c.id: c for c in claims}
        chosen = [by_id[i] for i in wanted]
    corpus = scifact_corpus(shared)
    assistant = index(shared, args.data_dir)
    if not args.fresh:
        memo = default_memo(assistant.settings)
        assistant._pipeline.stance.memo = Memo(memo)
        assistant._pipeline.stance.opposites = opposites_memo(memo)  # type: ignore[assignment]
    rows = []
    for i, c in enumerate(chosen, 1):
        t0 = time.perf_counter()
        first = None
        check = None
        for event in assistant.check_stream(c.claim, k=args.k):
            if isinstance(event, StanceEvent) and first is None:
                first = time.perf_counter() - t0
            if isinstance(event, CheckEvent):
                check = event.check
        assert check is not None
        gold = set(c.evidence) if c.label != "NEI" else set(c.cited)
        stances = {int(p.paper_id): p for p in check.papers if p.paper_id.isdigit()}
        judged = [stances[d] for d in gold if d in stances]
        rows.append(
            {
                "id": c.id,
                "label": c.label,
                "claim": c.claim,
                "verdict": check.verdict,
                "gold judged": bool(judged),
                "gold stances": [p.stance for p in judged],
                "gold decided": [p.stance for p in judged if p.decided],
                "seconds": round(time.perf_counter() - t0, 2),
                "first paper": round(first or 0.0, 2),
                "gold titles": [corpus[d]["title"] for d in gold if d in corpus][:1],
                "papers": len(check.papers),
                "not asked": sum(not p.asked for p in check.papers),
            }
        )
        print(
            f"  {i}/{len(chosen)} {c.label:10} {check.verdict:20} gold {rows[-1]['gold stances']}",
            f"{rows[-1]['seconds']} s",
            file=sys.stderr,
            flush=True,
        )
    return report(rows, out, args)


def _rate(hits: int, n: int) -> str:
    if not n:
        return "n/a"
    lo, hi = wilson(hits, n)
    return f"{hits / n:.3f} [{lo:.2f}, {hi:.2f}] ({hits}/{n})"


def report(rows: list[dict[str, Any]], out: Output, args: argparse.Namespace) -> dict[str, Any]:
    want = {"SUPPORT": "supports", "CONTRADICT": "refutes"}
    other = {"SUPPORT": "refutes", "CONTRADICT": "supports"}
    lines = ["| claims | n | gold judged, stance right | opposite stance | verdicts |", "|---|---|---|---|---|"]
    figures: dict[str, Any] = {}
    for label in ("SUPPORT", "CONTRADICT", "NEI"):
        rs = [r for r in rows if r["label"] == label]
        verdicts = dict(Counter(r["verdict"] for r in rs))
        if label == "NEI":
            called = sum(any(s != "not stated" for s in r["gold decided"]) for r in rs)
            figures[label] = {
                "n": len(rs),
                "cited called supports/refutes": called / len(rs) if rs else None,
                "verdicts": verdicts,
            }
            lines.append(
                f"| no evidence | {len(rs)} | cited abstract called supports/refutes: {_rate(called, len(rs))} "
                f"| – | {verdicts} |"
            )
            continue
        right = sum(want[label] in r["gold stances"] for r in rs)
        wrong = sum(other[label] in r["gold stances"] for r in rs)
        figures[label] = {
            "n": len(rs),
            "right": right / len(rs) if rs else None,
            "opposite": wrong / len(rs) if rs else None,
            "verdicts": verdicts,
        }
        lines.append(f"| {label} | {len(rs)} | {_rate(right, len(rs))} | {_rate(wrong, len(rs))} | {verdicts} |")
    secs = sorted(r["seconds"] for r in rows)
    firsts = sorted(r["first paper"] for r in rows)
    figures["latency"] = {
        "p50 s": statistics.median(secs) if secs else None,
        "p90 s": secs[int(0.9 * (len(secs) - 1))] if secs else None,
        "first paper p50 s": statistics.median(firsts) if firsts else None,
        "cached": not args.fresh,
        "load at end": os.getloadavg(),
    }
    figures["gold judged"] = sum(r["gold judged"] for r in rows) / len(rows) if rows else None
    judged = sum(r.get("papers", 0) for r in rows)
    figures["papers not asked"] = round(sum(r.get("not asked", 0) for r in rows) / judged, 3) if judged else None
    out.table("claim check on SciFact dev claims", "\n".join(lines))
    lat = figures["latency"]
    how = "nothing from the memo" if args.fresh else "cached label probabilities: not the model's time"
    out.table(
        "latency",
        f"p50 {lat['p50 s']} s, p90 {lat['p90 s']} s, first paper p50 {lat['first paper p50 s']} s ({how}); "
        f"papers too far from the claim to ask: {figures['papers not asked']}",
    )
    figures["rows"] = rows
    return figures

"""Abstention / support threshold tuning from one run made with both thresholds at 0.

With ``min_relevance = 0`` and ``min_support = 0`` every question reaches the LLM and every sentence is
kept, and each row records the best cosine and every sentence's support score. Raising the thresholds
only removes things, so the outcome at any (min_relevance, min_support) can be replayed from those rows
without asking again: refuse when the best cosine is below min_relevance and the question names none
of the retrieved titles (``Answer.names_source``, recorded per row); otherwise keep the sentences whose
support reaches min_support and refuse when none is left.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import BaseModel

from rag.evaluation import metrics as M
from rag.evaluation.dataset import EvalCase
from rag.evaluation.report import fmt, plot_risk_coverage
from rag.evaluation.run import EvalRow


def replay(row: EvalRow, case: EvalCase | None, min_relevance: float, min_support: float) -> tuple[bool, bool]:
    """(answered, correct) of ``row`` had it been run with these thresholds."""
    if row.error is not None or row.refused:
        return False, False
    if row.best_relevance is not None and row.best_relevance < min_relevance and not row.names_source:
        return False, False
    kept = [s.text for s in row.sentences if s.support >= min_support]
    if not kept:
        return False, False
    correct = bool(case and case.answerable and M.answer_correct(" ".join(kept), case.answer_keywords))
    return True, correct


class TuningPoint(BaseModel):
    min_relevance: float
    min_support: float
    coverage: float | None
    precision: float | None
    accuracy: float | None
    refusal_recall: float | None
    decision_accuracy: float | None


RELEVANCE_GRID = tuple(round(0.05 * i, 2) for i in range(11))  # 0, 0.05 .. 0.5
SUPPORT_GRID = tuple(round(0.05 * i, 2) for i in range(19))  # 0, 0.05 .. 0.9


def sweep(
    rows: Sequence[EvalRow],
    cases: Mapping[str, EvalCase],
    relevance_grid: Sequence[float] = RELEVANCE_GRID,
    support_grid: Sequence[float] = SUPPORT_GRID,
) -> list[TuningPoint]:
    points = []
    for r in relevance_grid:
        for s in support_grid:
            out = [replay(row, cases.get(row.case_id), r, s) for row in rows]
            scores = M.abstention_metrics([row.answerable for row in rows], [a for a, _ in out], [c for _, c in out])
            points.append(
                TuningPoint(
                    min_relevance=r, min_support=s, **{k: scores[k] for k in TuningPoint.model_fields if k in scores}
                )
            )
    return points


def choose(points: Sequence[TuningPoint], current: tuple[float, float] = (0.30, 0.60)) -> TuningPoint:
    """Best decision accuracy (right answers + right refusals); ties go to higher precision, then to
    the point nearest the current defaults (so noise does not move them)."""
    return max(
        points,
        key=lambda p: (
            round(p.decision_accuracy or 0.0, 6),
            round(p.precision or 0.0, 6),
            -abs(p.min_relevance - current[0]) - abs(p.min_support - current[1]),
        ),
    )


def curve(rows: Sequence[EvalRow], cases: Mapping[str, EvalCase], by: str) -> list[tuple[float, float, float]]:
    """Risk vs coverage when answering only above a confidence: ``by`` = "relevance" (best cosine) or
    "support" (best sentence support). Risk counts a wrong answer or an answered unanswerable question."""
    conf, good = [], []
    for row in rows:
        answered, correct = replay(row, cases.get(row.case_id), 0.0, 0.0)
        if by == "relevance":
            c = row.best_relevance or 0.0
        else:
            c = max((s.support for s in row.sentences), default=0.0)
        conf.append(c if answered else -1.0)
        good.append(correct)
    return [p for p in M.risk_coverage(conf, good) if p[0] >= 0]


def main(argv: list[str] | None = None) -> int:
    """Combine the gold-set sweep (report.json of a run with both thresholds at 0) with the PubMedQA sweep
    (pubmedqa-pqal-dev.json asked with both at 0), choose thresholds, plot risk vs coverage.

        .venv/bin/python -m rag.evaluation.tune eval-out/report.json eval-out/pubmedqa-pqal-dev.json --out eval-out
    """
    ap = argparse.ArgumentParser(description=main.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gold_report", type=Path)
    ap.add_argument("pubmedqa", type=Path, nargs="?")
    ap.add_argument("--out", type=Path, default=Path("eval-out"))
    args = ap.parse_args(argv)
    gold = json.loads(args.gold_report.read_text())["tuning"]
    n_gold = len(json.loads(args.gold_report.read_text())["runs"][0]["rows"])
    pmq = json.loads(args.pubmedqa.read_text()) if args.pubmedqa else None
    pgrid = {(p["min_relevance"], p["min_support"]): p for p in (pmq["tuning"]["grid"] if pmq else [])}
    n_pmq = pmq["answered_n"] if pmq else 0
    rows = []
    for p in gold["grid"]:
        q = pgrid.get((p["min_relevance"], p["min_support"]))
        combined = ((p["decision_accuracy"] or 0) * n_gold + ((q["accuracy"] or 0) * n_pmq if q else 0)) / (
            n_gold + (n_pmq if q else 0)
        )
        rows.append((round(combined, 6), -abs(p["min_relevance"] - 0.3) - abs(p["min_support"] - 0.6), p, q))
    best = max(rows, key=lambda r: (r[0], r[1]))
    cur = next(r for r in rows if r[2]["min_relevance"] == 0.3 and r[2]["min_support"] == 0.6)
    lines = [
        f"Gold set n={n_gold} (decision accuracy) + PubMedQA n={n_pmq} (yes/no/maybe accuracy, refusal = maybe)",
        "",
        "| min_relevance | min_support | gold decision acc | gold coverage | gold precision | gold refusal recall "
        "| PubMedQA acc | PubMedQA coverage | combined |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for tag, r in (("current", cur), ("chosen", best)):
        p, q = r[2], r[3] or {}
        lines.append(
            f"| {p['min_relevance']} ({tag}) | {p['min_support']} | {fmt(p['decision_accuracy'])} | "
            f"{fmt(p['coverage'])} | {fmt(p['precision'])} | {fmt(p['refusal_recall'])} | "
            f"{fmt(q.get('accuracy'))} | {fmt(q.get('coverage'))} | {r[0]:.3f} |"
        )
    for r in sorted(rows, key=lambda r: -r[0])[:10]:
        p, q = r[2], r[3] or {}
        lines.append(
            f"| {p['min_relevance']} | {p['min_support']} | {fmt(p['decision_accuracy'])} | "
            f"{fmt(p['coverage'])} | {fmt(p['precision'])} | {fmt(p['refusal_recall'])} | "
            f"{fmt(q.get('accuracy'))} | {fmt(q.get('coverage'))} | {r[0]:.3f} |"
        )
    curves = {f"gold {k}": [tuple(x) for x in v] for k, v in gold["curves"].items()}
    if pmq:
        conf = [max(row["supports"], default=0.0) if not row["refused"] else -1.0 for row in pmq["rows"]]
        good = [row["correct"] for row in pmq["rows"]]
        curves["PubMedQA by best support"] = [p for p in M.risk_coverage(conf, good) if p[0] >= 0]
    args.out.mkdir(parents=True, exist_ok=True)
    plot_risk_coverage(
        curves,
        args.out / "risk_coverage_combined.png",
        f"chosen min_relevance={best[2]['min_relevance']}, min_support={best[2]['min_support']}",
    )
    (args.out / "tuning.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Write report.json, report.md and PNG plots for one or more runs (configs) of the same gold set."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rag.evaluation import metrics as M
from rag.evaluation.run import EvalReport, EvalRow

HEADLINE = [
    "recall@k",
    "mrr",
    "ndcg@10",
    "citation_precision",
    "citation_recall",
    "keyword_score",
    "supported_sentence_rate",
    "precision",
    "accuracy",
    "coverage",
    "refusal_recall",
    "false_refusal_rate",
    "decision_accuracy",
    "latency_p50_s",
    "latency_p95_s",
    "prompt_tokens",
    "completion_tokens",
]
# per-question values whose paired differences give the comparison deltas
PAIRED: dict[str, Callable[[EvalRow], float | None]] = {
    "recall@k": lambda r: r.recall_at_k if r.answerable else None,
    "mrr": lambda r: r.mrr if r.answerable else None,
    "ndcg@10": lambda r: r.ndcg_at_10 if r.answerable else None,
    "citation_precision": lambda r: r.citation_precision,
    "citation_recall": lambda r: r.citation_recall,
    "accuracy": lambda r: float(r.correct) if r.answerable else None,
    "coverage": lambda r: float(not r.refused),
    "decision_accuracy": lambda r: float(r.decision_correct),
    "latency_s": lambda r: r.latency,
}


def fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def compare(base: EvalReport, other: EvalReport) -> dict[str, dict[str, float | None]]:
    """Paired deltas (other - base) per metric over the questions both runs have, with bootstrap CIs."""

    def key(r: EvalRow) -> tuple[str, int]:
        return r.case_id, r.repeat

    b = {key(r): r for r in base.rows}
    pairs = [(b[key(r)], r) for r in other.rows if key(r) in b]
    out = {}
    for name, f in PAIRED.items():
        d, lo, hi = M.paired_bootstrap_delta([f(x) for x, _ in pairs], [f(y) for _, y in pairs])
        out[name] = {"delta": d, "ci_low": lo, "ci_high": hi}
    return out


def _ensure_agg() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display, safe under CI and other users' sessions
    import matplotlib.pyplot as plt

    return plt


def plot_metrics(reports: Sequence[EvalReport], path: Path) -> None:
    plt = _ensure_agg()
    names = [n for n in HEADLINE if not n.startswith(("latency", "prompt", "completion"))]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / max(1, len(reports))
    for i, rep in enumerate(reports):
        vals = [rep.aggregate[n].value if n in rep.aggregate else None for n in names]
        lows = [rep.aggregate[n].ci_low for n in names]
        highs = [rep.aggregate[n].ci_high for n in names]
        xs = [j + i * width for j in range(len(names))]
        v = [x or 0.0 for x in vals]
        err = [
            [max(0.0, a - (lo if lo is not None else a)) for a, lo in zip(v, lows)],
            [max(0.0, (hi if hi is not None else a) - a) for a, hi in zip(v, highs)],
        ]
        ax.bar(xs, v, width, yerr=err, capsize=2, label=rep.label)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(names))], names, rotation=35, ha="right", fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_title("Metrics with bootstrap 95% CIs")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_latency(reports: Sequence[EvalReport], path: Path) -> None:
    plt = _ensure_agg()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for rep in reports:
        lat = [r.latency for r in rep.rows if r.latency is not None]
        if lat:
            ax.hist(lat, bins=20, alpha=0.6, label=rep.label)
    ax.set_xlabel("seconds per question")
    ax.set_ylabel("questions")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_risk_coverage(curves: dict[str, list[tuple[float, float, float]]], path: Path, chosen: str = "") -> None:
    plt = _ensure_agg()
    fig, ax = plt.subplots(figsize=(6, 4))
    for name, pts in curves.items():
        if pts:
            ax.plot([p[1] for p in pts], [p[2] for p in pts], marker=".", label=name)
    ax.set_xlabel("coverage (share answered)")
    ax.set_ylabel("risk (1 - precision)")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_title("Risk vs coverage" + (f"\n{chosen}" if chosen else ""), fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def render_markdown(reports: Sequence[EvalReport], comparisons: dict[str, Any], extra_md: str = "") -> str:
    lines = [f"# Evaluation report: {reports[0].gold}", ""]
    for rep in reports:
        n_q = len({r.case_id for r in rep.rows})
        lines.append(
            f"- **{rep.label}**: {n_q} questions x {rep.repeat} repeat(s), k={rep.k}, "
            f"answer mode {rep.settings.get('answer', {}).get('mode')}, "
            f"retrieval {rep.settings.get('retrieval', {}).get('mode')}, "
            f"{rep.seconds:.0f} s, started {rep.started}"
        )
    lines += ["", "## Aggregate metrics (mean [95% bootstrap CI], n)", ""]
    lines.append("| metric | " + " | ".join(r.label for r in reports) + " |")
    lines.append("|---|" + "---|" * len(reports))
    names = HEADLINE + sorted({n for r in reports for n in r.aggregate if n.startswith("judge_")}) + ["errors"]
    for name in names:
        cells = []
        for rep in reports:
            mv = rep.aggregate.get(name)
            if mv is None:
                cells.append("n/a")
            elif mv.ci_low is None:
                cells.append(f"{fmt(mv.value)} (n={mv.n})")
            else:
                cells.append(f"{fmt(mv.value)} [{fmt(mv.ci_low)}, {fmt(mv.ci_high)}] (n={mv.n})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if comparisons:
        lines += ["", f"## Deltas vs {reports[0].label} (paired bootstrap 95% CI)", ""]
        lines.append("| config | " + " | ".join(PAIRED) + " |")
        lines.append("|---|" + "---|" * len(PAIRED))
        for label, comp in comparisons.items():
            lines.append(
                f"| {label} | "
                + " | ".join(
                    f"{fmt(c['delta'], 3)} [{fmt(c['ci_low'], 3)}, {fmt(c['ci_high'], 3)}]" for c in comp.values()
                )
                + " |"
            )
    if extra_md:
        lines += ["", extra_md]
    lines += ["", "![metrics](metrics.png) ![latency](latency.png)", ""]
    for rep in reports:
        lines += [
            f"## Per question: {rep.label}",
            "",
            "| id | type | refused | correct | R@k | RR | cit P | cit R | supp | rel | s | answer |",
            "|---|" * 1 + "---|" * 11,
        ]
        for r in rep.rows:
            ans = " ".join((r.error or r.answer).split()).replace("|", "\\|")
            lines.append(
                f"| {r.case_id}{f'#{r.repeat}' if rep.repeat > 1 else ''} | {r.type} | "
                f"{'yes' if r.refused else 'no'} | {'yes' if r.decision_correct else 'no'} | "
                f"{fmt(r.recall_at_k, 2)} | {fmt(r.mrr, 2)} | "
                f"{fmt(r.citation_precision, 2)} | {fmt(r.citation_recall, 2)} | {fmt(r.supported_rate, 2)} | "
                f"{fmt(r.best_relevance, 2)} | {fmt(r.latency, 1)} | {ans[:160]} |"
            )
        lines.append("")
    return "\n".join(lines)


def write_report(
    reports: Sequence[EvalReport],
    out_dir: str | Path,
    extra: dict[str, Any] | None = None,
    extra_md: str = "",
    curves: dict[str, list[tuple[float, float, float]]] | None = None,
    chosen: str = "",
) -> dict[str, Any]:
    """Write report.json, report.md, metrics.png, latency.png (and risk_coverage.png when ``curves``).
    Returns the JSON document."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    comparisons = {rep.label: compare(reports[0], rep) for rep in reports[1:]}
    doc: dict[str, Any] = {
        "runs": [r.model_dump(mode="json") for r in reports],
        "comparisons": comparisons,
        **(extra or {}),
    }
    text = json.dumps(
        doc, indent=2, ensure_ascii=False, allow_nan=False
    )  # allow_nan=False: a NaN is a bug, fail loudly
    (out / "report.json").write_text(text, encoding="utf-8")
    (out / "report.md").write_text(render_markdown(reports, comparisons, extra_md), encoding="utf-8")
    plot_metrics(reports, out / "metrics.png")
    plot_latency(reports, out / "latency.png")
    if curves:
        plot_risk_coverage(curves, out / "risk_coverage.png", chosen)
    return doc

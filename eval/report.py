"""Write report.json, report.md and PNG plots for one or more runs (configs) of the same gold set.

report.md has a section per kind of case the gold file holds (single-paper questions, lists,
comparisons, table cells), then the extra sections (baseline, threshold tuning), then the rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rag.evaluation import metrics as M
from rag.evaluation.run import CellRow, ComparisonRow, EvalReport, EvalRow, ListRow

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
    "first_useful_latency_p50_s",
    "first_text_latency_p50_s",
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


# the cross-paper sections: (title, metrics)
CROSS_SECTIONS: list[tuple[str, list[str]]] = [
    (
        "List questions (which / how many papers)",
        [
            "list_precision",
            "list_recall",
            "list_f1",
            "count_accuracy",
            "list_judged_share",
            "list_latency_p50_s",
            "list_latency_p95_s",
            "list_first_item_latency_p50_s",
            "list_errors",
        ],
    ),
    (
        "Comparison questions",
        [
            "comparison_coverage",
            "comparison_all_covered",
            "comparison_all_cited",
            "comparison_latency_p50_s",
            "comparison_latency_p95_s",
            "comparison_errors",
        ],
    ),
    (
        "Tables (paper x attribute cells)",
        [
            "cell_accuracy",
            "cell_accuracy_stated",
            "cell_accuracy_not_stated",
            "unsupported_values",
            "table_latency_p50_s",
            "table_latency_p95_s",
            "table_errors",
        ],
    ),
]
COUNTS = {"errors", "list_errors", "comparison_errors", "table_errors", "unsupported_values"}
# per-question values of the cross-paper rows, paired by (case id, repeat) for the deltas
PAIRED_CROSS: dict[str, tuple[str, Callable[[Any], float | None]]] = {
    "list_f1": ("lists", lambda r: r.f1),
    "comparison_coverage": ("comparisons", lambda r: r.coverage),
    "cell_accuracy": ("cells", lambda r: float(r.correct)),
}


def fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def compare(base: EvalReport, other: EvalReport) -> dict[str, dict[str, float | None]]:
    """Paired deltas (other - base) per metric over the questions both runs have, with bootstrap CIs."""

    def key(r: EvalRow) -> tuple[str, int]:
        return r.case_id, r.repeat

    out = {}
    if base.rows and other.rows:
        b = {key(r): r for r in base.rows}
        pairs = [(b[key(r)], r) for r in other.rows if key(r) in b]
        for name, f in PAIRED.items():
            d, lo, hi = M.paired_bootstrap_delta([f(x) for x, _ in pairs], [f(y) for _, y in pairs])
            out[name] = {"delta": d, "ci_low": lo, "ci_high": hi}
    for name, (field, g) in PAIRED_CROSS.items():
        base_rows: list[ListRow] | list[ComparisonRow] | list[CellRow] = getattr(base, field)
        other_rows: list[ListRow] | list[ComparisonRow] | list[CellRow] = getattr(other, field)
        if not base_rows or not other_rows:
            continue
        bx = {(r.case_id, r.repeat): r for r in base_rows}
        xpairs = [(bx[(r.case_id, r.repeat)], r) for r in other_rows if (r.case_id, r.repeat) in bx]
        d, lo, hi = M.paired_bootstrap_delta([g(x) for x, _ in xpairs], [g(y) for _, y in xpairs])
        out[name] = {"delta": d, "ci_low": lo, "ci_high": hi}
    return out


def _ensure_agg() -> Any:
    import matplotlib  # optional heavy dependency: plots only (~0.5 s)

    matplotlib.use("Agg")  # files only: no display, safe under CI and other users' sessions
    import matplotlib.pyplot as plt  # optional heavy dependency: after choosing the backend above

    return plt


def plot_metrics(reports: Sequence[EvalReport], path: Path) -> None:
    plt = _ensure_agg()
    every = HEADLINE + [n for _, names in CROSS_SECTIONS for n in names]
    names = [
        n
        for n in every
        if n not in COUNTS
        and "latency" not in n
        and not n.startswith(("prompt", "completion"))
        and any(rep.aggregate.get(n) is not None and rep.aggregate[n].value is not None for rep in reports)
    ]
    if not names:
        names = [n for n in HEADLINE if not n.startswith(("latency", "prompt", "completion"))]
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / max(1, len(reports))
    for i, rep in enumerate(reports):
        vals = [rep.aggregate[n].value if n in rep.aggregate else None for n in names]
        lows = [rep.aggregate[n].ci_low if n in rep.aggregate else None for n in names]
        highs = [rep.aggregate[n].ci_high if n in rep.aggregate else None for n in names]
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
        timed: list[float | None] = [r.latency for r in rep.rows] + [r.latency for r in rep.lists]
        timed += [r.latency for r in rep.comparisons] + [t.latency for t in rep.tables]
        lat = [x for x in timed if x is not None]
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


def _cell(mv: Any) -> str:
    if mv is None:
        return "n/a"
    if mv.ci_low is None:
        return f"{fmt(mv.value)} (n={mv.n})"
    return f"{fmt(mv.value)} [{fmt(mv.ci_low)}, {fmt(mv.ci_high)}] (n={mv.n})"


def _metric_table(reports: Sequence[EvalReport], names: Sequence[str]) -> list[str]:
    lines = ["| metric | " + " | ".join(r.label for r in reports) + " |", "|---|" + "---|" * len(reports)]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(_cell(rep.aggregate.get(name)) for rep in reports) + " |")
    return lines


def _esc(text: str, limit: int = 160) -> str:
    return " ".join(text.split()).replace("|", "\\|")[:limit]


def render_markdown(
    reports: Sequence[EvalReport],
    comparisons: dict[str, Any],
    extra_md: str = "",
    baselines: Sequence[EvalReport] = (),
) -> str:
    lines = [f"# Evaluation report: {reports[0].gold}", ""]
    for rep in reports:
        parts = [
            f"{n} {what}"
            for n, what in (
                (len({r.case_id for r in rep.rows}), "questions"),
                (len({r.case_id for r in rep.lists}), "list questions"),
                (len({r.case_id for r in rep.comparisons}), "comparisons"),
                (len({r.case_id for r in rep.cells}), "table cells"),
            )
            if n
        ]
        lines.append(
            f"- **{rep.label}**: {', '.join(parts)} x {rep.repeat} repeat(s), k={rep.k}, "
            f"answer mode {rep.settings.get('answer', {}).get('mode')}, "
            f"retrieval {rep.settings.get('retrieval', {}).get('mode')}, "
            f"{rep.seconds:.0f} s, started {rep.started}"
        )
    if any(rep.rows for rep in reports):
        lines += ["", "## Aggregate metrics (mean [95% bootstrap CI], n)", ""]
        names = HEADLINE + sorted({n for r in reports for n in r.aggregate if n.startswith("judge_")})
        names += ["yesno_verdict_accuracy", "errors"]
        lines += _metric_table(reports, names)
    for title, names in CROSS_SECTIONS:
        present = [n for n in names if any(n in rep.aggregate for rep in reports)]
        if present:
            lines += ["", f"## {title} (mean [95% bootstrap CI], n)", ""]
            lines += _metric_table(reports, present)
    if comparisons:
        keys = list(dict.fromkeys(k for comp in comparisons.values() for k in comp))
        lines += ["", f"## Deltas vs {reports[0].label} (paired bootstrap 95% CI)", ""]
        lines.append("| config | " + " | ".join(keys) + " |")
        lines.append("|---|" + "---|" * len(keys))
        for label, comp in comparisons.items():
            cells = [comp.get(k) for k in keys]
            lines.append(
                f"| {label} | "
                + " | ".join(
                    "n/a" if c is None else f"{fmt(c['delta'], 3)} [{fmt(c['ci_low'], 3)}, {fmt(c['ci_high'], 3)}]"
                    for c in cells
                )
                + " |"
            )
    if extra_md:
        lines += ["", extra_md]
    lines += ["", "![metrics](metrics.png) ![latency](latency.png)", ""]
    for rep in [*reports, *baselines]:
        lines += _rows_md(rep)
    return "\n".join(lines)


def _rows_md(rep: EvalReport) -> list[str]:
    """The per-question sections of one run (each title starts with "## Per question")."""

    def rid(case_id: str, repeat: int) -> str:
        return f"{case_id}{f'#{repeat}' if rep.repeat > 1 else ''}"

    lines: list[str] = []
    if rep.rows:
        lines += [
            f"## Per question: {rep.label}",
            "",
            "| id | type | refused | correct | R@k | RR | cit P | cit R | supp | rel | s | answer |",
            "|---|" * 1 + "---|" * 11,
        ]
        for r in rep.rows:
            lines.append(
                f"| {rid(r.case_id, r.repeat)} | {r.type} | "
                f"{'yes' if r.refused else 'no'} | {'yes' if r.decision_correct else 'no'} | "
                f"{fmt(r.recall_at_k, 2)} | {fmt(r.mrr, 2)} | "
                f"{fmt(r.citation_precision, 2)} | {fmt(r.citation_recall, 2)} | {fmt(r.supported_rate, 2)} | "
                f"{fmt(r.best_relevance, 2)} | {fmt(r.latency, 1)} | {_esc(r.error or r.answer)} |"
            )
        lines.append("")
    if rep.lists:
        lines += [
            f"## Per question (lists): {rep.label}",
            "",
            "| id | from | returned | expected | borderline | P | R | F1 | count ok | judged | s | answer |",
            "|---|" + "---|" * 11,
        ]
        for lr in rep.lists:
            count = "" if lr.count_correct is None else "yes" if lr.count_correct else "no"
            judged = f"{lr.checked}/{lr.collection_size}" if lr.checked is not None else "n/a"
            lines.append(
                f"| {rid(lr.case_id, lr.repeat)} | {lr.returned_from} | {len(lr.returned_ids)} | "
                f"{len(lr.expected_ids)} | {len(lr.borderline_ids)} | {fmt(lr.precision, 2)} | {fmt(lr.recall, 2)} | "
                f"{fmt(lr.f1, 2)} | {count} | {judged} | {fmt(lr.latency, 1)} | {_esc(lr.error or lr.answer)} |"
            )
        lines.append("")
    if rep.comparisons:
        lines += [
            f"## Per question (comparisons): {rep.label}",
            "",
            "| id | covered | papers (cited / covered) | s | answer |",
            "|---|---|---|---|---|",
        ]
        for cr in rep.comparisons:
            papers = ", ".join(
                f"{p.paper_id} {'cited' if p.cited else 'not cited'}/{'yes' if p.covered else 'no'}" for p in cr.papers
            )
            lines.append(
                f"| {rid(cr.case_id, cr.repeat)} | {fmt(cr.coverage, 2)} | {papers} | {fmt(cr.latency, 1)} | "
                f"{_esc(cr.error or cr.answer)} |"
            )
        lines.append("")
    if rep.cells:
        lines += [
            f"## Per question (table cells): {rep.label}",
            "",
            "| id | attribute | paper | gold | correct | value |",
            "|---|---|---|---|---|---|",
        ]
        for c in rep.cells:
            shown = c.error or ("(row missing)" if not c.row_found else c.value or "(not stated)")
            lines.append(
                f"| {rid(c.case_id, c.repeat)} | {c.attribute} | {c.paper_id} | "
                f"{'not stated' if c.not_stated else 'stated'} | {'yes' if c.correct else 'no'} | {_esc(shown)} |"
            )
        lines.append("")
        bad = [u for t in rep.tables for u in t.unsupported]
        if bad:
            lines += ["Values shown without a verbatim quote:", ""]
            lines += [
                f"- {u.paper_id} / {u.attribute}: {_esc(u.value, 80)} (quote: {_esc(u.quote, 120)!r})" for u in bad
            ]
            lines.append("")
    return lines


def write_report(
    reports: Sequence[EvalReport],
    out_dir: str | Path,
    extra: dict[str, Any] | None = None,
    extra_md: str = "",
    curves: dict[str, list[tuple[float, float, float]]] | None = None,
    chosen: str = "",
    baselines: Sequence[EvalReport] = (),
) -> dict[str, Any]:
    """Write report.json, report.md, metrics.png, latency.png (and risk_coverage.png when ``curves``).
    ``baselines`` (already in ``extra`` as JSON) join the latency plot and the per-question rows.
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
    (out / "report.md").write_text(render_markdown(reports, comparisons, extra_md, baselines), encoding="utf-8")
    plot_metrics(reports, out / "metrics.png")
    plot_latency([*reports, *baselines], out / "latency.png")
    if curves:
        plot_risk_coverage(curves, out / "risk_coverage.png", chosen)
    return doc

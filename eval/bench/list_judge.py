"""How well each model's list judge separates the papers that qualify for a list question from those that don't.

    python -m rag.evaluation.bench list-judge [--model NAME]...

For every list question of eval/data/neurips2026_cross.jsonl (borderline papers left out), each candidate the list
path would judge (``find_candidates``) is judged once on its best sentences (``StanceJudge.matches``: the model's
P(yes), no second reading), with the bundled abstracts indexed and each model as the embedded server in turn.
Prints, per model, the AUC of P(yes) for qualifying against other papers, where P(yes) sits for each, and the pooled
precision and recall at fixed thresholds: ``RAG_ANSWER__LIST_MIN_YES`` (0.7) was chosen on the 1.5B, and this says
whether it means the same for another model. A diagnostic over the cross lists: it scores the very questions the
list metrics use, so nothing here may be tuned on it.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from rag import Assistant, get_settings
from rag.answering.paths import find_candidates, list_predicate
from rag.evaluation.bench.models import DATA, DEFAULT_MODELS
from rag.evaluation.bench.suite import BenchError, Output
from rag.evaluation.dataset import ListCase, load_gold, resolve_cases
from rag.evaluation.metrics import auc
from rag.models.local_llm import GGUF_MODELS, shared_server

NEEDS_LLM = True
THRESHOLDS = (0.1, 0.2, 0.3, 0.5, 0.7, 0.9)


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--model", action="append", help=f"A bundled model name (repeatable; default {DEFAULT_MODELS}).")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    models = args.model or list(DEFAULT_MODELS)
    unknown = [m for m in models if m not in GGUF_MODELS]
    if unknown:
        raise BenchError(f"unknown bundled model {unknown[0]!r}; known: {', '.join(sorted(GGUF_MODELS))}")
    figures: dict[str, Any] = {}
    lines = [
        "| model | qualifying / other | AUC | P(yes) qualifying p10 / p50 / p90 | other p50 / p90 | "
        + " | ".join(f"P / R at {t}" for t in THRESHOLDS)
        + " |",
        "|---|---|---|---|---|" + "---|" * len(THRESHOLDS),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        base = Assistant.from_settings(get_settings(data_dir=Path(tmp) / "data", llm={"keep_alive": 0}))
        base.ingest([Assistant.bundled_corpus()])
        cases = list(resolve_cases(load_gold(DATA / "neurips2026_cross.jsonl"), base.papers()))
        lists = [c for c in cases if isinstance(c, ListCase)]
        for model in models:
            settings = get_settings(data_dir=Path(tmp) / "data", llm={"keep_alive": 0, "model": model})
            pipeline = Assistant.from_settings(settings)._pipeline
            pos: list[float] = []
            neg: list[float] = []
            try:
                for case in lists:
                    predicate = list_predicate(case.question)
                    for cand in find_candidates(pipeline, case.question, None).candidates:
                        if cand.hit.paper_id not in case.borderline_ids:
                            p, _ = pipeline.stance.matches(predicate, cand.text)
                            (pos if cand.hit.paper_id in case.expected_ids else neg).append(p)
            finally:
                shared_server(settings).stop()
            q, o = np.asarray(pos), np.asarray(neg)
            at = {}
            for t in THRESHOLDS:
                tp, fp = int((q >= t).sum()), int((o >= t).sum())
                at[t] = (tp / (tp + fp) if tp + fp else None, tp / len(q) if len(q) else None)
            row = {
                "qualifying": len(q),
                "other": len(o),
                "auc": auc(pos, neg),
                "qualifying quantiles": np.quantile(q, [0.1, 0.5, 0.9]).round(3).tolist() if len(q) else [],
                "other quantiles": np.quantile(o, [0.5, 0.9]).round(3).tolist() if len(o) else [],
                "precision, recall at": {str(t): v for t, v in at.items()},
            }
            figures[model] = row
            cells = " | ".join("–" if p is None else f"{p:.2f} / {r:.2f}" for p, r in at.values())
            qq, oq = row["qualifying quantiles"], row["other quantiles"]
            lines.append(
                f"| {model} | {len(q)} / {len(o)} | {row['auc']:.3f} | {' / '.join(map(str, qq))} | "
                f"{' / '.join(map(str, oq))} | {cells} |"
            )
            print(lines[-1], flush=True)
    out.table("list judge", "\n".join(lines))
    return figures

"""Choose the yes/no biases (``RAG_ANSWER__YESNO_BIAS``) on one PubMedQA run and check them on another.

    .venv/bin/rag eval pubmedqa --limit 200 --start 200 --out out-cal   # calibration questions
    .venv/bin/rag eval pubmedqa --limit 200 --start 0 --out out-test    # held-out questions
    python -m rag.evaluation.bench calibrate-yesno out-cal/pubmedqa-pqal-dev.json out-test/pubmedqa-pqal-dev.json

Both runs with the default biases (0, 0, 0): each row records the model's P(yes), P(no), P(not stated)
(``Answer.verdict_probabilities``), so the verdict under any biases can be replayed without asking again.
The biases are chosen on the first run to maximise accuracy with no label predicted more than 1.3x its
share of the labels (the issue's target); the second run is then scored with them, untouched.
PubMedQA's "maybe" is our "not stated".
"""

from __future__ import annotations

import argparse
import itertools
import json
from collections import Counter
from pathlib import Path
from typing import Any

from rag.evaluation.bench.suite import BenchError, Output

LABELS = ("yes", "no", "maybe")

NEEDS_LLM = False


def predict(probs: dict[str, float], bias: tuple[float, float, float]) -> str:
    if not probs:
        return "maybe"
    scores = {"yes": probs["yes"] + bias[0], "no": probs["no"] + bias[1], "maybe": probs["not stated"] + bias[2]}
    return max(scores, key=lambda k: scores[k])


def score(rows: list[dict[str, Any]], bias: tuple[float, float, float]) -> tuple[float, float, Counter[str]]:
    """(accuracy, the largest predicted/true share ratio, predicted label counts)."""
    preds = [predict(r["verdict_probabilities"], bias) for r in rows]
    acc = sum(p == r["label"] for p, r in zip(preds, rows)) / len(rows)
    truth = Counter(r["label"] for r in rows)
    counts = Counter(preds)
    ratio = max(counts[lab] / truth[lab] if truth[lab] else (float("inf") if counts[lab] else 0.0) for lab in LABELS)
    return acc, ratio, counts


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("calibration", type=Path)
    ap.add_argument("test", type=Path, nargs="?")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    cal = [r for r in json.loads(args.calibration.read_text())["rows"] if r.get("verdict_probabilities")]
    grid = [round(-0.5 + 0.05 * i, 2) for i in range(21)]
    best: tuple[float, tuple[float, float, float]] | None = None
    for bn, bs in itertools.product(grid, grid):  # P(yes) is the reference: only differences matter
        bias = (0.0, bn, bs)
        acc, ratio, _ = score(cal, bias)
        if ratio <= 1.3 and (best is None or acc > best[0]):
            best = (acc, bias)
    if best is None:
        raise BenchError("no biases keep every label within 1.3x its share on the calibration run")
    figures: dict[str, Any] = {"chosen_biases": best[1], "runs": []}
    print(f"calibration run: {len(cal)} questions, chosen biases (yes, no, not stated) = {best[1]}")
    for name, path in (("calibration", args.calibration), ("test", args.test)):
        if path is None:
            continue
        rows = [r for r in json.loads(path.read_text())["rows"] if r.get("verdict_probabilities")]
        for label, bias in (("default (0, 0, 0)", (0.0, 0.0, 0.0)), ("chosen", best[1])):
            acc, ratio, counts = score(rows, bias)
            truth = Counter(r["label"] for r in rows)
            figures["runs"].append({"run": name, "biases": label, "n": len(rows), "accuracy": acc, "max_ratio": ratio})
            print(
                f"| {name} | {label} | {len(rows)} | {acc:.3f} | "
                + " / ".join(f"{counts[x]}:{truth[x]}" for x in LABELS)
                + f" | {ratio:.2f} |"
            )
    return figures

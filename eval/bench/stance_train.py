"""Fit the stance judge's head on labelled train pairs, report it on dev pairs, write rag/data/stance_head.json.

    python -m rag.evaluation.bench stance-train [--train N] [--dev N] [--no-evidence] [--cached-only] [--write]

Pairs come from SciFact claims_train and PubMedQA pqal_dev, split 70/30 by a hash of each id (see
eval/bench/_stance.py). The train set is named, not whatever happens to be cached: the first ``--train N``
pairs of the train split's seeded, source-interleaved order, plus every SciFact evidence pair of the split
(source "scifact": a claim against its evidence abstract, or a no-evidence claim against the abstract it cites;
``--no-evidence`` leaves those out). ``--dev N`` reads the first N dev pairs. The model is asked once per pair
(its label probabilities are kept in ~/.cache/rag-abstracts/bench-stance, so a rerun, another head or another
l2 costs no LLM time); ``--cached-only`` asks nothing, leaving out the pairs of the train set that are not
cached and reading every cached dev pair. The shipped head is written by ``stance-train --write``: from the
model, or from the memo of its record with ``--memo``, the same head to the byte. Reported on
dev, per statement kind: accuracy, each stance's recall, the largest predicted/true share ratio and the
expected calibration error, for the fitted head beside two baselines from the same probabilities: the
model's own argmax ("raw") and batch calibration (the mean label probability over the train pairs divided
out). ``--write`` writes the head fitted on all train pairs into the package.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from rag import Assistant, get_settings
from rag.answering.evidence import SentenceScorer
from rag.answering.stance import (
    FEATURES,
    HEAD_FILE,
    LABEL_WORDS,
    STANCES,
    Excerpt,
    StanceHead,
    StanceJudge,
    excerpt_of,
    features,
    fit_head,
    wants_opposite,
)
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import Memo, Pair, default_memo, opposites_memo, pairs
from rag.evaluation.bench.suite import ROOT, Output

NEEDS_LLM = True
KINDS = ("claim", "question")


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--train", type=int, default=420, help="train pairs read (default 420)")
    ap.add_argument("--dev", type=int, default=200, help="dev pairs read (default 200)")
    ap.add_argument(
        "--no-evidence",
        dest="evidence",
        action="store_false",
        help="train on the first --train pairs only, without every SciFact evidence pair of the train split",
    )
    ap.add_argument("--l2", type=float, default=1.0, help="L2 strength of the head (default 1.0)")
    ap.add_argument("--write", action="store_true", help=f"write rag/data/{HEAD_FILE}")
    ap.add_argument("--memo", type=Path, default=None, help="label-probability cache (default in ~/.cache)")
    ap.add_argument(
        "--cached-only",
        action="store_true",
        help="read every pair of each split whose label probabilities are cached, ask the model nothing",
    )


def train_set(shared: Path, seed: int, n: int, evidence: bool = True) -> list[Pair]:
    """The head's train pairs: the first ``n`` of the train split's seeded, interleaved order, then (``evidence``)
    every SciFact evidence pair after them, in that order."""
    items = pairs(shared, "train", seed)
    return items[:n] + ([p for p in items[n:] if p.source == "scifact"] if evidence else [])


def read(
    judge: StanceJudge, items: list[Pair], name: str, out: Output, *, cached_only: bool = False
) -> tuple[np.ndarray, np.ndarray, list[Pair]]:
    """Features and labels of ``items`` (the model asked for each pair not in the memo; with ``cached_only`` such
    a pair is left out)."""
    xs, ys, kept = [], [], []
    t0, asked = time.perf_counter(), 0
    for i, p in enumerate(items, 1):
        ex = excerpt_of(judge.scorer, p.statement, p.abstract, sentences=judge.sentences)
        if (
            cached_only
            and judge.memo is not None
            and (
                judge.memo_key(p.statement, p.kind, p.title, ex) not in judge.memo or not contrast_cached(judge, p, ex)
            )
        ):
            continue
        kept.append(p)
        x, tokens = pair_features(judge, p, ex)
        asked += tokens > 0
        xs.append(x)
        ys.append(p.label)
        if i % 25 == 0:
            rate = (time.perf_counter() - t0) / max(1, asked)
            print(f"  {name}: {i}/{len(items)} pairs ({asked} asked, {rate:.1f} s each)", file=sys.stderr, flush=True)
    return np.asarray(xs), np.asarray(ys, dtype=int), kept


def contrast_cached(judge: StanceJudge, p: Pair, ex: Excerpt) -> bool:
    """Whether the memos hold the claim's opposite and the forced choice between the two (in both orders) wherever
    the product would ask them (:func:`rag.answering.stance.wants_opposite`)."""
    assert judge.memo is not None
    probs = judge.memo.get(judge.memo_key(p.statement, p.kind, p.title, ex))
    if probs is None or not wants_opposite(p.kind, probs):
        return True
    if judge.opposite_key(p.statement) not in judge.opposites:
        return False
    opposite = judge.opposite(p.statement)
    return opposite is None or all(k in judge.memo for k in judge.contrast_keys(p.statement, opposite, p.title, ex))


def pair_features(judge: StanceJudge, p: Pair, ex: Excerpt) -> tuple[np.ndarray, int]:
    """The head's features for one pair as the product computes them (a claim also set against its opposite, the
    model's rewrite, on the same excerpt, when :func:`rag.answering.stance.wants_opposite`) and the prompt tokens
    the model was asked for (0: all from the memo)."""
    probs, preferred, tokens = judge.measured(p.statement, p.kind, p.title, ex, opposite=True)
    return features(p.statement, ex, probs, preferred), tokens


def judge_for(assistant: Assistant, memo: Path | None = None) -> StanceJudge:
    """A head-less judge for benchmarks whose label probabilities and opposites are kept on disk (default in
    ~/.cache/rag-abstracts/bench-stance), so a rerun asks the model nothing it was asked before."""
    scorer = SentenceScorer(
        lambda texts: np.asarray(assistant.embeddings.embed_documents(list(texts)), dtype=np.float32)
    )
    path = memo or default_memo(assistant.settings)
    return StanceJudge(assistant.chat_model, scorer, memo=Memo(path), opposites=opposites_memo(path))  # type: ignore[arg-type]


def markdown(head: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in r) + " |" for r in rows])


def label_probs(x: np.ndarray) -> np.ndarray:
    """The model's normalised P(yes), P(no), P(not) back from the features (columns 0-2)."""
    p_yes = x[:, 2]
    return np.stack([p_yes, p_yes * np.exp(x[:, 0]), p_yes * np.exp(x[:, 1])], axis=1)


def scores(prob: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    pred = prob.argmax(axis=1)
    truth, said = Counter(y.tolist()), Counter(pred.tolist())
    conf = prob.max(axis=1)
    bins = np.minimum((conf * 10).astype(int), 9)
    ece = sum(
        abs(float((pred[bins == b] == y[bins == b]).mean()) - float(conf[bins == b].mean())) * float((bins == b).mean())
        for b in range(10)
        if (bins == b).any()
    )
    return {
        "n": len(y),
        "accuracy": round(float((pred == y).mean()), 3),
        "recall": {
            s: round(float((pred[y == i] == i).mean()), 3) if (y == i).any() else None for i, s in enumerate(STANCES)
        },
        "share ratio": round(max(said[i] / truth[i] for i in range(3) if truth[i]), 2),
        "predicted": {s: said[i] for i, s in enumerate(STANCES)},
        "ece": round(ece, 3),
    }


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    shared = shared_data("scifact").parent
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="rag-stance-"))
    assistant = Assistant.from_settings(get_settings(data_dir=data_dir))
    judge = judge_for(assistant, args.memo)
    seed = 0 if args.seed is None else args.seed
    wanted = train_set(shared, seed, args.train, args.evidence)
    train = read(judge, wanted, "train", out, cached_only=args.cached_only)
    missing = len(wanted) - len(train[2])
    if args.write and missing:
        raise SystemExit(
            f"not written: {missing} of the {len(wanted)} train pairs are not in the memo, and the shipped head is "
            "fitted on all of them (run without --cached-only to ask the model for them)"
        )
    dev_items = pairs(shared, "dev", seed)
    dev = read(
        judge, dev_items if args.cached_only else dev_items[: args.dev], "dev", out, cached_only=args.cached_only
    )
    head_parts: dict[str, Any] = {}
    figures: dict[str, Any] = {"features": list(FEATURES), "label words": list(LABEL_WORDS)}
    for kind in KINDS:
        tr = np.asarray([p.kind == kind for p in train[2]])
        dv = np.asarray([p.kind == kind for p in dev[2]])
        if tr.sum() < 10 or dv.sum() < 5:
            continue
        w, b, mean, scale = fit_head(train[0][tr], train[1][tr], l2=args.l2)
        head_parts[kind] = (w, b, mean, scale)
        head = StanceHead({kind: w}, {kind: b}, {kind: mean}, {kind: scale})
        xd, yd = dev[0][dv], dev[1][dv]
        raw = label_probs(xd)
        prior = label_probs(train[0][tr]).mean(axis=0)
        batch = raw / prior
        batch /= batch.sum(axis=1, keepdims=True)
        fitted = np.asarray([[head.probabilities(kind, x)[s] for s in STANCES] for x in xd])
        rows = {"raw model": scores(raw, yd), "batch calibration": scores(batch, yd), "head": scores(fitted, yd)}
        figures[kind] = {"train pairs": int(tr.sum()), "dev": rows, "weights": w.round(3).tolist()}
        out.table(
            f"{kind}: dev pairs (train {int(tr.sum())})",
            markdown(
                ["judge", "n", "accuracy", *[f"recall {s}" for s in STANCES], "max share ratio", "ECE"],
                [
                    [name, r["n"], r["accuracy"], *r["recall"].values(), r["share ratio"], r["ece"]]
                    for name, r in rows.items()
                ],
            ),
        )
    if args.write and head_parts and assistant.settings.llm.gguf is not None:
        print("not written: the shipped head is for the bundled model, not a GGUF file", file=sys.stderr)
    elif args.write and head_parts:
        head = StanceHead(
            weights={k: v[0] for k, v in head_parts.items()},
            bias={k: v[1] for k, v in head_parts.items()},
            mean={k: v[2] for k, v in head_parts.items()},
            scale={k: v[3] for k, v in head_parts.items()},
            meta={
                "model": assistant.settings.llm.model,
                "train pairs": {k: figures[k]["train pairs"] for k in head_parts},
                "l2": args.l2,
                "seed": seed,
                "command": "python -m rag.evaluation.bench stance-train "
                + f"--train {args.train}"
                + ("" if args.evidence else " --no-evidence")
                + ("" if args.l2 == 1.0 else f" --l2 {args.l2}")
                + ("" if seed == 0 else f" --seed {seed}")
                + " --write",
            },
        )
        import json

        path = ROOT / "rag" / "data" / HEAD_FILE
        path.write_text(json.dumps(head.to_json(), indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path}", file=sys.stderr)
    return figures

"""Would yes/no questions be better judged as claims? PubMedQA questions rewritten as statements.

    python -m rag.evaluation.bench yesno-probe [--train 120] [--dev 0]

The yes/no path reads the model's P(yes/no/not) for the question over its evidence, and the 1.5B says "yes"
to almost everything (PubMedQA 0.555 against a majority of 0.55, docs/benchmarks.md). A claim, unlike a
question, has an opposite, and the claim head with the opposite separates refuting from supporting excerpts
(AUC 0.879 on SciFact dev). This probe has the model rewrite each PubMedQA question as the statement a "yes"
confirms (prompts/statement.md), judges that statement against the question's own abstract as the claim check
does (excerpt, label probabilities, the opposite where :func:`rag.answering.stance.wants_opposite`), and reports
on the PubMedQA pairs of the dev split (eval/bench/_stance.py; ``--dev 0``: all of them) with supports -> yes,
refutes -> no, not stated -> maybe:

* the model on the question itself (the question prompt's argmax, as the yes/no path decides);
* the shipped claim head, fitted on SciFact claims only: PubMedQA never tuned it, so this is a transfer figure;
* a claim head fitted on SciFact train claims plus ``--train`` PubMedQA train questions as statements;
* each of those deciding between yes and no only (never "maybe", which is rare: about 11 % of the labels), or
  saying "maybe" only when P(not stated) reaches 0.6, 0.7 or 0.8; and yes or no with a margin on
  log P(yes)/P(no) fitted on the ``--train`` questions (one number: the balance of yes and no moves between
  datasets).

Accuracy with its Wilson interval, recall per answer, and the largest predicted/true share ratio (the issue's
target: >= 0.65 with no label above 1.3x its share). The rewrites and label probabilities are cached in
~/.cache/rag-abstracts/bench-stance (as stance-train's): a rerun asks the model nothing it was asked before.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from rag import Assistant, get_settings
from rag.answering import stance as S
from rag.evaluation import metrics
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import PUBMEDQA_STANCE, Pair, pairs, pubmedqa, split_of
from rag.evaluation.bench.stance_train import judge_for, markdown, pair_features
from rag.evaluation.bench.suite import Output

NEEDS_LLM = True
ANSWERS = ("yes", "no", "maybe")


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument(
        "--train",
        type=int,
        default=120,
        help="PubMedQA train questions read for a refitted head (default 120; 0: none)",
    )
    ap.add_argument("--dev", type=int, default=0, help="PubMedQA dev questions read (default 0: all)")
    ap.add_argument("--claims", type=int, default=240, help="SciFact train claim pairs read (default 240)")
    ap.add_argument(
        "--cut-answer-word",
        action="store_true",
        help='judge "Yes, X." as "X." (measured worse: statement_of keeps what the model writes)',
    )


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    shared = shared_data("scifact").parent
    a = Assistant.from_settings(get_settings(data_dir=args.data_dir or Path(tempfile.mkdtemp(prefix="rag-probe-"))))
    judge = judge_for(a)
    seed = 0 if args.seed is None else args.seed
    questions = pubmedqa(shared)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(questions))
    by_split: dict[str, list[dict[str, Any]]] = {"train": [], "dev": []}
    for i in order:
        q = questions[int(i)]
        by_split[split_of("pubmedqa", q["id"])].append(q)
    dev_q = by_split["dev"][: args.dev or None]
    train_q = by_split["train"][: args.train]
    unwritten: Counter[str] = Counter()

    def as_claims(items: list[dict[str, Any]], name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        xs, ys, raw = [], [], []
        for i, q in enumerate(items, 1):
            stance = PUBMEDQA_STANCE[q["label"]]
            asked = Pair("pubmedqa", q["id"], q["question"], "question", "", q["abstract"], stance)
            ex_q = S.excerpt_of(judge.scorer, asked.statement, asked.abstract, sentences=judge.sentences)
            probs, _ = judge.model_probabilities(asked.statement, "question", "", ex_q)
            raw.append([probs.get(w, 0.0) for w in S.LABEL_WORDS])
            statement = judge.statement_of(q["question"])
            if statement is not None and args.cut_answer_word:
                cut = S._ANSWER_WORD.sub("", statement)
                statement = cut[:1].upper() + cut[1:]
            if statement is None:
                unwritten[name] += 1
                statement = q["question"]
            p = Pair("pubmedqa", q["id"], statement, "claim", "", q["abstract"], stance)
            ex = S.excerpt_of(judge.scorer, p.statement, p.abstract, sentences=judge.sentences)
            x, _ = pair_features(judge, p, ex)
            xs.append(x)
            ys.append(p.label)
            if i % 20 == 0:
                print(f"  {name}: {i}/{len(items)} questions", file=sys.stderr, flush=True)
        return np.asarray(xs), np.asarray(ys, dtype=int), np.asarray(raw)

    dev_x, dev_y, dev_raw = as_claims(dev_q, "dev")

    shipped = S.bundled_head()
    predictions: dict[str, np.ndarray] = {"model on the question (yes/no path)": dev_raw}
    on_train: dict[str, np.ndarray] = {}
    train_x, train_y = np.zeros((0, len(S.FEATURES))), np.zeros(0, dtype=int)
    if train_q:
        train_x, train_y, train_raw = as_claims(train_q, "train")
        on_train["model on the question (yes/no path)"] = train_raw
    if shipped is not None and "claim" in shipped.weights:
        name = "shipped claim head (SciFact only)"
        predictions[name] = np.asarray([[shipped.probabilities("claim", x)[s] for s in S.STANCES] for x in dev_x])
        if train_q:
            on_train[name] = np.asarray([[shipped.probabilities("claim", x)[s] for s in S.STANCES] for x in train_x])
    if train_q:
        sci = [p for p in pairs(shared, "train", seed) if p.kind == "claim"][: args.claims]
        fx = np.vstack([np.asarray([pair_features(judge, p, _excerpt(judge, p))[0] for p in sci]), train_x])
        fy = np.concatenate([np.asarray([p.label for p in sci], dtype=int), train_y])
        w, b, mean, scale = S.fit_head(fx, fy, l2=1.0)
        z = ((dev_x - mean) / scale) @ w.T + b
        p = np.exp(z - z.max(axis=1, keepdims=True))
        predictions[f"claim head refitted: SciFact {len(sci)} + PubMedQA train {len(train_q)}"] = p / p.sum(
            axis=1, keepdims=True
        )
    rows, figures = [], {}
    rules: dict[str, float | None] = {"argmax": None, "yes or no only": 1.01}
    rules |= {f"maybe at P(not) >= {t}": t for t in (0.6, 0.7, 0.8)}
    for name, prob in predictions.items():
        for rule, t in rules.items():
            pred = prob.argmax(axis=1) if t is None else np.where(prob[:, 2] >= t, 2, prob[:, :2].argmax(axis=1))
            r = _scores(pred, dev_y)
            figures[f"{name} / {rule}"] = r
            rows.append([name, rule, *r.values()])
        if name in on_train:  # one number fitted on the train questions: the margin of yes over no
            margin = _fitted_margin(on_train[name], train_y)
            fit = _scores(np.where(_log_ratio(on_train[name]) >= margin, 0, 1), train_y)["accuracy"]
            pred = np.where(_log_ratio(prob) >= margin, 0, 1)
            r = _scores(pred, dev_y)
            rule = f"yes or no, margin {margin:+.2f} fitted on train (there {fit})"
            figures[f"{name} / {rule}"] = r | {"margin": margin}
            rows.append([name, rule, *r.values()])
    out.table(
        f"PubMedQA dev questions ({len(dev_q)}; {unwritten['dev']} not rewritten, judged as the question)",
        markdown(
            ["judge", "decision", "n", "accuracy [95 % CI]", *[f"recall {a}" for a in ANSWERS], "max share"], rows
        ),
    )
    figures["not rewritten"] = dict(unwritten)
    figures["examples"] = [
        {"question": q["question"], "statement": judge.statement_of(q["question"]), "label": q["label"]}
        for q in dev_q[:8]
    ]
    return figures


def _log_ratio(prob: np.ndarray) -> np.ndarray:
    """log P(yes) / P(no) of each row (supports over refutes)."""
    return np.log(np.maximum(prob[:, 0], 1e-6) / np.maximum(prob[:, 1], 1e-6))


def _fitted_margin(prob: np.ndarray, y: np.ndarray) -> float:
    """The margin m (yes when log P(yes)/P(no) >= m, else no) most accurate on ``y``; the smallest |m| of ties."""
    grid = np.round(np.arange(-3.0, 3.0001, 0.05), 2)
    ratio = _log_ratio(prob)
    acc = [float((np.where(ratio >= m, 0, 1) == y).mean()) for m in grid]
    best = max(acc)
    return float(min((m for m, a in zip(grid, acc) if a == best), key=abs))


def _excerpt(judge: S.StanceJudge, p: Pair) -> S.Excerpt:
    return S.excerpt_of(judge.scorer, p.statement, p.abstract, sentences=judge.sentences)


def _scores(pred: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    truth, said = Counter(y.tolist()), Counter(pred.tolist())
    right = int((pred == y).sum())
    lo, hi = metrics.wilson(right, len(y))
    out: dict[str, Any] = {"n": len(y), "accuracy": f"{right / len(y):.3f} [{lo:.2f}, {hi:.2f}]"}
    for i, a in enumerate(ANSWERS):
        out[f"recall {a}"] = round(float((pred[y == i] == i).mean()), 2) if (y == i).any() else None
    out["max share"] = round(max(said[i] / truth[i] for i in range(3) if truth[i]), 2)
    return out

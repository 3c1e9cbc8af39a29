"""Would a second question help the stance head? "Does the excerpt contradict the claim?" on the same prompt.

    python -m rag.evaluation.bench stance-probe [--train 240] [--dev 140]

The stance judge reads the model's first-token P(yes/no/not) for "Is the claim true according to the excerpt?",
and that P(no) barely separates a contradicting excerpt from a supporting one (docs/benchmarks.md). This probe
asks the same model a second question on the same prompt (the server reuses the computed prefix, so it would
cost a few tokens per paper), "Does the excerpt contradict the claim? Answer Yes or No." (for a PubMedQA
question: "Does the excerpt say the answer is no?"), and reports on the dev pairs (eval/bench/_stance.py: the
same 70/30 split as stance-train) how well its P(yes) separates refuting from supporting pairs (AUC), and the
head fitted on train with and without it as an eighth feature (its log-odds), for three L2 strengths.
Both questions' probabilities are cached in ~/.cache/rag-abstracts/bench-stance: a rerun asks nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.messages import HumanMessage, SystemMessage

from rag import Assistant, get_settings
from rag.answering import stance as S
from rag.answering.judge import label_probabilities
from rag.evaluation import metrics
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import Memo, Pair, default_memo, pairs
from rag.evaluation.bench.stance_train import judge_for, markdown, pair_features, scores
from rag.evaluation.bench.suite import Output

NEEDS_LLM = True
CONTRADICTS = {
    "claim": "Does the excerpt contradict the claim? Answer Yes or No.",
    "question": "Does the excerpt say the answer is no? Answer Yes or No.",
}


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--train", type=int, default=240, help="train pairs read (default 240)")
    ap.add_argument("--dev", type=int, default=140, help="dev pairs read (default 140)")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    shared = shared_data("scifact").parent
    a = Assistant.from_settings(get_settings(data_dir=args.data_dir or Path(tempfile.mkdtemp(prefix="rag-probe-"))))
    memo_path = default_memo(a.settings)
    judge = judge_for(a, memo_path)
    second = Memo(memo_path.with_name(memo_path.name.replace("label-probabilities", "contradicts-probabilities")))

    def contradicts(p: Pair, ex: S.Excerpt) -> float:
        user = judge.template.format(
            statement=S._STATEMENT[p.kind].format(statement=" ".join(p.statement.split())),
            title=" ".join(p.title.split()) or "(untitled)",
            passage=ex.text,
            ask=CONTRADICTS[p.kind],
        )
        messages = [SystemMessage(judge.system), HumanMessage(user)]
        key = S._key(messages)
        if key not in second:
            second[key] = label_probabilities(a.chat_model(), messages, ("yes", "no"))[0]
        return second[key]["yes"]

    def read(items: list[Pair], name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        xs, ys, kinds = [], [], []
        for i, p in enumerate(items, 1):
            ex = S.excerpt_of(judge.scorer, p.statement, p.abstract, sentences=judge.sentences)
            x, _ = pair_features(judge, p, ex)
            pc = min(max(contradicts(p, ex), 1e-4), 1 - 1e-4)
            xs.append(np.append(x, math.log(pc / (1 - pc))))
            ys.append(p.label)
            kinds.append(p.kind)
            if i % 20 == 0:
                print(f"  {name}: {i}/{len(items)} pairs", file=sys.stderr, flush=True)
        return np.asarray(xs), np.asarray(ys, dtype=int), np.asarray(kinds)

    seed = 0 if args.seed is None else args.seed
    train = read(pairs(shared, "train", seed)[: args.train], "train")
    dev = read(pairs(shared, "dev", seed)[: args.dev], "dev")
    figures: dict[str, Any] = {}
    for kind in ("claim", "question"):
        mt, md = train[2] == kind, dev[2] == kind
        y = dev[1][md]
        n = len(S.FEATURES)
        auc = metrics.auc(dev[0][md][y == 1, n].tolist(), dev[0][md][y == 0, n].tolist())
        flip = metrics.auc(dev[0][md][y == 1, n - 1].tolist(), dev[0][md][y == 0, n - 1].tolist())
        rows = []
        heads = (
            ("7: before the opposite", slice(0, n - 1)),
            (f"{n} (shipped)", slice(0, n)),
            (f"{n + 1}: + contradicts", slice(0, n + 1)),
        )
        for name, cols in heads:
            for l2 in (0.3, 1.0, 3.0):
                w, b, mean, scale = S.fit_head(train[0][mt][:, cols], train[1][mt], l2=l2)
                z = ((dev[0][md][:, cols] - mean) / scale) @ w.T + b
                p = np.exp(z - z.max(axis=1, keepdims=True))
                p /= p.sum(axis=1, keepdims=True)
                r = scores(p, y)
                rows.append([name, l2, r["n"], r["accuracy"], *r["recall"].values(), r["ece"]])
        figures[kind] = {
            "auc contradicts (refutes vs supports)": auc,
            "auc opposite (refutes vs supports)": flip,
            "rows": rows,
            "train": int(mt.sum()),
        }
        out.table(
            f"{kind}: dev pairs (train {int(mt.sum())}); AUC refutes vs supports of P(contradicts): "
            + ("n/a" if auc is None else f"{auc:.3f}")
            + ", of the opposite's feature: "
            + ("n/a" if flip is None else f"{flip:.3f}"),
            markdown(["head", "l2", "n", "accuracy", "recall supports", "recall refutes", "recall not", "ECE"], rows),
        )
    return figures

"""PubMedQA yes/no/maybe through the harness, on the dev split that the stance head never saw.

    python -m rag.evaluation.bench pubmedqa-dev [--sample N]

The questions are the dev split of pqal_dev (a hash of each PubMed id, see eval/bench/_stance.py; about 150 of
the 500), answered by ``Assistant.ask(question, kind="yesno")`` over all 500 abstracts exactly as
``rag eval pubmedqa`` does (eval/external.py ``run_pubmedqa``, its seeded order), ``--sample N`` of them
(default: all). Reports accuracy with its interval, the majority baseline, the predicted and true label counts
and the largest predicted/true share ratio (the issue's target: no label more than 1.3x its share).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rag import Assistant, get_settings
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import pubmedqa, split_of
from rag.evaluation.bench.suite import Output
from rag.evaluation.external import pubmedqa_markdown, pubmedqa_settings, run_pubmedqa

NEEDS_LLM = True


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--split", choices=["dev", "train"], default="dev", help="which split to answer (default dev)")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    path = shared_data("pubmedqa/pqal_dev.json")
    ids = {q["id"] for q in pubmedqa(path.parents[1]) if split_of("pubmedqa", q["id"]) == args.split}
    assistant = Assistant.from_settings(pubmedqa_settings(get_settings()))

    def progress(i: int, n: int) -> None:
        if i % 10 == 0 or i == n:
            print(f"  {i}/{n}", file=sys.stderr, flush=True)

    res = run_pubmedqa(assistant, path, limit=args.sample or 0, progress=progress, only=ids)
    truth, said = res["label_counts"], res["pred_counts"]
    res["max share ratio"] = round(max(said[k] / truth[k] for k in truth if truth[k]), 2)
    res["split"] = args.split
    out.table("pubmedqa", pubmedqa_markdown(res) + f"\n\nlargest predicted/true share ratio: {res['max share ratio']}")
    return res

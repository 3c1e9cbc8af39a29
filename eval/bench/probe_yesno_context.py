"""Probe (not in the product): does the model tell PubMedQA's yes from no better when it reads the whole abstract?

    PYTHONPATH=. .venv/bin/python eval/bench/probe_yesno_context.py [--start 200] [--limit 100]
        [--compare eval/results/2026-12-02/pubmedqa-cal/pubmedqa-pqal-dev.json] [--out FILE.json]

The yes/no path shows the model ~200 tokens of evidence from the retrieved papers. This gives it instead the
question's own abstract, whole, in the product's yes/no prompt (rag/prompts/yesno.md), and reads P(yes),
P(no), P(not stated) from the first token, on the questions ``rag eval pubmedqa --start S --limit N`` asks
(the same fixed-seed shuffle). Prints the AUC of log P(yes) − log P(no) between the "yes" and the "no"
questions, the best accuracy any threshold on it reaches on these same questions (an optimistic bound: the
threshold is chosen on the data it is scored on; "maybe" questions count as wrong), and the same two numbers
for the product's stored answers to the same questions (``--compare``, a report of ``rag eval pubmedqa``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
from pathlib import Path

from langchain_core.messages import HumanMessage

from rag import Assistant, get_settings
from rag.answering.evidence import readable
from rag.answering.judge import label_probabilities
from rag.answering.prompts import load_prompt
from rag.evaluation.external import PUBMEDQA_SEED, load_pubmedqa
from rag.evaluation.shared_data import shared_data


def separation(rows: list[tuple[str, dict[str, float]]]) -> tuple[float, float]:
    """AUC of log P(yes) - log P(no), yes against no; the best accuracy of one threshold on it."""
    score = [(label, math.log(p["yes"] + 1e-6) - math.log(p["no"] + 1e-6)) for label, p in rows]
    pos = [s for label, s in score if label == "yes"]
    neg = [s for label, s in score if label == "no"]
    auc = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg) / max(1, len(pos) * len(neg))
    best = max(
        sum((s >= t and label == "yes") or (s < t and label == "no") for label, s in score) / len(score)
        for t in [s for _l, s in score] + [math.inf]
    )
    return auc, best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--start", type=int, default=200)
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--data", type=Path, help="pqal_dev.json (default: $RAG_SHARED_DATA/pubmedqa/pqal_dev.json)")
    ap.add_argument("--compare", type=Path, help="A report of `rag eval pubmedqa` over the same questions.")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)

    items = load_pubmedqa(args.data or shared_data("pubmedqa/pqal_dev.json"))
    chosen = random.Random(PUBMEDQA_SEED).sample(items, len(items))[args.start : args.start + args.limit]
    chat = Assistant.from_settings(get_settings()).chat_model()
    template = load_prompt("yesno")
    rows = []
    for it in chosen:
        context = f"[1] PubMed {it['id']}: {readable(it['abstract'])}\n"
        message = HumanMessage(template.format(context=context, question=it["question"]))
        probs, usage = label_probabilities(chat, [message], ("yes", "no", "not"))
        rows.append({"id": it["id"], "label": it["label"], "probs": probs, "tokens": usage.get("input_tokens")})
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    auc, best = separation([(r["label"], r["probs"]) for r in rows])
    tokens = sorted(int(r["tokens"] or 0) for r in rows)
    print(
        f"whole abstract: AUC yes/no {auc:.3f}, best threshold accuracy {best:.3f} (n={len(rows)}, prompt tokens p50 "
        f"{tokens[len(tokens) // 2]})"
    )
    if args.compare:
        stored = {r["id"]: r for r in json.loads(args.compare.read_text())["rows"]}
        same = [
            (stored[r["id"]]["label"], stored[r["id"]]["verdict_probabilities"])
            for r in rows
            if stored.get(r["id"], {}).get("verdict_probabilities")
        ]
        same = [(label, {"yes": p["yes"], "no": p["no"]}) for label, p in same]
        auc, best = separation(same)
        print(
            f"product (stored answers, same questions): AUC yes/no {auc:.3f}, best threshold accuracy {best:.3f} "
            f"(n={len(same)})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

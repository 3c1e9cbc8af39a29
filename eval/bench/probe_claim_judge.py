"""Probe: can the embedded model itself tell a true claim from a perturbed copy, given the claim's source sentence?

Not used by the product yet. For ``--claims`` claims of eval/data/neurips2026_claims.jsonl (shuffled, seed 5), asks
the model one yes/no question per claim and per perturbed copy ("Does the source sentence say what the claim says,
with the same roles, numbers and polarity?") and reads P(yes) from its first token
(rag.answering.judge.label_probabilities). Prints, per kind (true / entity / number / negation), the share at or
above three P(yes) thresholds: a check worth adding to verification keeps nearly all true claims and few
perturbed ones. ~100 s for 30 claims here.

    PYTHONPATH=. .venv/bin/python eval/bench/probe_claim_judge.py [--claims 30]

``--behind-verifier``: every claim of the file instead (true, perturbed, unsupported), each first given to the
product's verification as the model's whole answer (as eval/bench/bench_claims.py does); the model judges only the
claims verification keeps, against the sentence their citation quotes. Prints how many true claims would still be
shown and how many false ones rejected, per threshold: the combined check's two rates.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_claims import cases, kept, load_claims
from langchain_core.messages import HumanMessage, SystemMessage

from rag import Assistant, get_settings
from rag.answering.evidence import evidence_spans
from rag.answering.judge import label_probabilities

ROOT = Path(__file__).resolve().parents[2]
SYSTEM = "You check facts. Answer with one word: Yes or No."
ASK = (
    "Source sentence: {sentence}\nClaim: {claim}\nDoes the source sentence say what the claim says, with the same "
    "roles, numbers and polarity? Answer Yes or No."
)


def sentence_of(quote: str, abstracts: list[str]) -> str | None:
    """The whole sentence of the abstract that holds ``quote``."""
    for abstract in abstracts:
        at = abstract.find(quote)
        if at >= 0:
            return next((abstract[s:e] for s, e in evidence_spans(abstract) if s <= at < e), None)
    return None


def behind_verifier(rows: list[dict[str, Any]], p_yes: Callable[[str, str], float]) -> None:
    """The combined check: verification first (as bench_claims.py runs it), then the model's judgement of what
    verification kept, against the sentence its citation quotes."""
    import tempfile

    thresholds = (0.0, 0.3, 0.4, 0.5, 0.6)
    right: dict[str, list[int]] = {}
    total: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        a = Assistant.from_settings(get_settings(data_dir=tmp))
        a.ingest([a.bundled_corpus()])
        for r in rows:
            for kind, claim in cases(r):
                found = kept(a, r["question"], claim)
                p = -1.0  # not kept: shown at no threshold
                if found is not None:
                    answer, sentence = found
                    quote = next((c.quote for c in answer.citations if c.n == sentence.citations[0]), "")
                    p = p_yes(quote, claim) if quote else 1.0
                total[kind] = total.get(kind, 0) + 1
                counts = right.setdefault(kind, [0] * len(thresholds))
                for i, t in enumerate(thresholds):
                    counts[i] += (p >= t) if kind == "true" else (p < t)
    print("| kind | n | " + " | ".join(f"P(yes) ≥ {t}" for t in thresholds) + " | meaning |")
    print("|---|---|" + "---|" * len(thresholds) + "---|")
    for kind, counts in right.items():
        what = "shown" if kind == "true" else "rejected"
        print(f"| {kind} | {total[kind]} | " + " | ".join(f"{c / total[kind]:.3f}" for c in counts) + f" | {what} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--claims", type=int, default=30)
    ap.add_argument("--behind-verifier", action="store_true")
    args = ap.parse_args()
    rows = load_claims(ROOT / "eval/data/neurips2026_claims.jsonl")
    all_rows = list(rows)
    rows = [r for r in rows if not r.get("unsupported") and r.get("quote")]
    random.Random(5).shuffle(rows)
    abstracts = [a for a in Assistant.bundled_corpus().read_text().split("\n") if len(a) > 200]
    chat = Assistant.from_settings(get_settings()).chat_model()

    def p_yes(sentence: str, claim: str) -> float:
        messages = [SystemMessage(SYSTEM), HumanMessage(ASK.format(sentence=sentence, claim=claim))]
        return label_probabilities(chat, messages, ("yes", "no"))[0]["yes"]

    if args.behind_verifier:
        behind_verifier(all_rows, p_yes)
        return
    found: dict[str, list[float]] = {"true": [], "entity": [], "number": [], "negation": []}
    t0 = time.perf_counter()
    for r in rows[: args.claims]:
        sentence = sentence_of(r["quote"], abstracts)
        if sentence is None:
            continue
        found["true"].append(p_yes(sentence, r["claim"]))
        for p in r.get("perturbed", []):
            found[p["kind"]].append(p_yes(sentence, p["claim"]))
    print(f"{sum(map(len, found.values()))} judgements in {time.perf_counter() - t0:.0f} s\n")
    print("| kind | n | median P(yes) | share ≥ 0.3 | share ≥ 0.5 | share ≥ 0.7 |")
    print("|---|---|---|---|---|---|")
    for kind, ps in found.items():
        shares = " | ".join(f"{sum(p >= t for p in ps) / max(1, len(ps)):.3f}" for t in (0.3, 0.5, 0.7))
        print(f"| {kind} | {len(ps)} | {statistics.median(ps) if ps else 0:.3f} | {shares} |")


if __name__ == "__main__":
    main()

"""Does verification let a changed fact through? True claims and perturbed copies, as if the model wrote them.

    python -m rag.evaluation.bench claims [--split dev|heldout|fresh] [--claims FILE --corpus ABSTRACTS] [--show 5]

A claims file holds claims that one abstract states (paraphrased), each with three perturbed copies (a
number changed, an entity swapped, a negation added or removed), and claims the abstracts do not state at
all. The splits (eval/bench/_splits.py): ``dev`` (eval/data/neurips2026_claims.jsonl, the default),
``heldout`` (eval/data/heldout/neurips2026_claims.jsonl, frozen, read only when asked for), both over the
bundled NeurIPS 2026 abstracts, and ``fresh`` (eval/data/scifact_claims.jsonl, written before the rules were
read, over the 30 SciFact abstracts of scifact_claims_corpus.jsonl). ``--claims`` and ``--corpus`` run any
other file over any corpus of abstracts, ingested into a temporary data dir. Each claim is given to the
pipeline as the model's answer to its question (a fake chat model that returns it: retrieval, evidence,
verification and the quote fallback are the product's own), and a claim counts as shown when the answer
keeps it as a supported sentence. Prints, per kind, how many true claims are shown and how many false ones
are not, with 95 % Wilson intervals.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from rag import Answer, AnswerSentence, Assistant
from rag.evaluation.bench._splits import CLAIMS, SPLITS, indexed, load_rows, wilson
from rag.evaluation.bench.suite import Output

NEEDS_LLM = False
KINDS = ("true", "number", "entity", "negation", "unsupported")


def load_claims(path: Path) -> list[dict[str, Any]]:
    """The rows of a claims file (``//`` lines are comments)."""
    return load_rows(path)


def cases(row: dict[str, Any]) -> list[tuple[str, str]]:
    """``(kind, claim)`` for a row: its claim ("true", or "unsupported") and each perturbed copy."""
    first = [("unsupported", row["claim"])] if row.get("unsupported") else [("true", row["claim"])]
    return first + [(p["kind"], p["claim"]) for p in row.get("perturbed", [])]


def kept(assistant: Assistant, question: str, claim: str) -> tuple[Answer, AnswerSentence] | None:
    """The answer and the supported, cited sentence that is ``claim`` when verification keeps it (given as the
    model's whole answer, not quoted instead of it); None when it does not."""
    writer = Assistant(
        assistant.settings, embeddings=assistant.embeddings, chat_model=FakeListChatModel(responses=[claim])
    )
    answer = writer.ask(question, kind="lookup")
    if answer.refused or answer.quoted:
        return None
    want = " ".join(claim.split()).rstrip(".")
    for sentence in answer.sentences:
        if sentence.supported and sentence.citations and " ".join(sentence.text.split()).rstrip(".") == want:
            return answer, sentence
    return None


def shown(assistant: Assistant, question: str, claim: str) -> bool:
    """True when the answer keeps ``claim`` (as the model's whole answer) as a supported sentence."""
    return kept(assistant, question, claim) is not None


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--split", choices=SPLITS, default="dev", help="The labelled set (default: dev).")
    ap.add_argument("--claims", type=Path, help="Another claims file (instead of --split).")
    ap.add_argument(
        "--corpus", type=Path, help="The abstracts its claims are about (default: the bundled NeurIPS ones)."
    )
    ap.add_argument("--show", type=int, default=0, help="Print this many failures of each kind.")


def outcomes(assistant: Assistant, rows: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """``(kind, claim, right)`` for every claim of ``rows``: a true claim is right when shown, any other
    when not."""
    out = []
    for r in rows:
        for kind, claim in cases(r):
            passed = shown(assistant, r["question"], claim)
            out.append((kind, claim, passed if kind == "true" else not passed))
    return out


def rates(results: list[tuple[str, str, bool]]) -> dict[str, dict[str, Any]]:
    """Per kind: n, right, rate and its 95 % Wilson interval."""
    figures = {}
    for kind in KINDS:
        got = [right for k, _, right in results if k == kind]
        if got:
            figures[kind] = {
                "n": len(got),
                "right": sum(got),
                "rate": sum(got) / len(got),
                "ci95": wilson(sum(got), len(got)),
            }
    return figures


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    labelled = CLAIMS[args.split]
    path, corpus = (args.claims, args.corpus) if args.claims else (labelled.path, args.corpus or labelled.corpus)
    with indexed(corpus) as a:
        results = outcomes(a, load_claims(path))
    figures = rates(results)
    print(f"{path.name} over {corpus.name if corpus else 'the bundled NeurIPS 2026 abstracts'}")
    print("| claims | n | right | rate [95 % CI] | meaning |")
    print("|---|---|---|---|---|")
    for kind, f in figures.items():
        what = "shown (should be)" if kind == "true" else "rejected (should be)"
        lo, hi = f["ci95"]
        print(f"| {kind} | {f['n']} | {f['right']} | {f['rate']:.3f} [{lo:.3f}, {hi:.3f}] | {what} |")
    false = [right for kind, _, right in results if kind != "true"]
    print(f"\nperturbed or unsupported claims rejected: {sum(false)} of {len(false)}")
    for kind in figures:
        for claim in [c for k, c, right in results if k == kind and not right][: args.show]:
            print(f"  {kind}: {claim}")
    return figures

"""Does verification let a changed fact through? True claims and perturbed copies, as if the model wrote them.

    python -m rag.evaluation.bench claims [--claims eval/data/neurips2026_claims.jsonl] [--show 5]

eval/data/neurips2026_claims.jsonl holds claims that one bundled abstract states (paraphrased), each
with three perturbed copies (a number changed, an entity swapped, a negation added or removed) and 20
claims the abstracts do not state at all. Each claim is given to the pipeline as the model's answer to
its question (a fake chat model that returns it: retrieval, evidence, verification and the quote
fallback are the product's own), and a claim counts as shown when the answer keeps it as a supported
sentence. Prints, per kind, how many true claims are shown and how many false ones are not.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from rag import Answer, AnswerSentence, Assistant, get_settings
from rag.evaluation.bench.suite import Output

DATA = Path(__file__).resolve().parents[1] / "data" / "neurips2026_claims.jsonl"

NEEDS_LLM = False


def load_claims(path: Path) -> list[dict[str, Any]]:
    """The rows of a claims file (``//`` lines are comments)."""
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip() and not x.startswith("//")]


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
    ap.add_argument("--claims", type=Path, default=DATA)
    ap.add_argument("--show", type=int, default=0, help="Print this many failures of each kind.")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    rows = load_claims(args.claims)
    ok: Counter[str] = Counter()
    total: Counter[str] = Counter()
    failures: dict[str, list[str]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        a = Assistant.from_settings(get_settings(data_dir=tmp))
        a.ingest([a.bundled_corpus()])
        for r in rows:
            for kind, claim in cases(r):
                passed = shown(a, r["question"], claim)
                good = passed if kind == "true" else not passed
                total[kind] += 1
                ok[kind] += good
                if not good:
                    failures[kind].append(claim)
    print("| claims | n | right | rate | meaning |")
    print("|---|---|---|---|---|")
    for kind in ("true", "number", "entity", "negation", "unsupported"):
        if total[kind]:
            what = "shown (should be)" if kind == "true" else "rejected (should be)"
            print(f"| {kind} | {total[kind]} | {ok[kind]} | {ok[kind] / total[kind]:.3f} | {what} |")
    false = [k for k in total if k != "true"]
    print(f"\nperturbed or unsupported claims rejected: {sum(ok[k] for k in false)} of {sum(total[k] for k in false)}")
    for kind, items in failures.items():
        for claim in items[: args.show]:
            print(f"  {kind}: {claim}")
    return {k: {"n": total[k], "right": ok[k], "rate": ok[k] / total[k]} for k in total}

"""Question kinds: recognition on the labelled sets stays where `python -m rag.evaluation.bench kinds` measured it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rag import Query

DATA = Path(__file__).resolve().parents[1] / "eval" / "data"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "floor"),
    [("question_kinds.jsonl", 0.97), ("question_kinds_test.jsonl", 0.97), ("question_kinds_heldout.jsonl", 0.95)],
)
def test_question_kinds_are_recognised_on_the_labelled_sets(seed_assistant: Any, name: str, floor: float) -> None:
    cases = [json.loads(x) for x in (DATA / name).read_text(encoding="utf-8").splitlines() if x.startswith("{")]
    pipeline = seed_assistant._pipeline  # the answer's first step: retrieval, named papers, kind; no LLM
    misses = [
        (c["kind"], kind, c["question"])
        for c in cases
        if (kind := pipeline.prepare(Query(question=c["question"], mode="extractive")).kind) != c["kind"]
    ]
    assert len(cases) >= 48 and {c["kind"] for c in cases} == {"lookup", "list", "compare", "yesno"}
    assert 1 - len(misses) / len(cases) >= floor, misses

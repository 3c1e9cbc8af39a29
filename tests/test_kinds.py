"""Question kinds: recognition on the labelled dev set stays where `python -m rag.evaluation.bench kinds` measured it.

The held-out split is read by no test (tests/test_heldout.py checks): only the benches read it, when asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rag import Query

DATA = Path(__file__).resolve().parents[1] / "eval" / "data"


@pytest.mark.slow
def test_question_kinds_are_recognised_on_the_dev_set(seed_assistant: Any) -> None:
    cases = [
        json.loads(x)
        for x in (DATA / "question_kinds_dev.jsonl").read_text(encoding="utf-8").splitlines()
        if x.startswith("{")
    ]
    pipeline = seed_assistant._pipeline  # the answer's first step: retrieval, named papers, kind; no LLM
    misses = [
        (c["kind"], kind, c["question"])
        for c in cases
        if (kind := pipeline.prepare(Query(question=c["question"], mode="extractive")).kind) != c["kind"]
    ]
    assert len(cases) >= 200 and {c["kind"] for c in cases} == {"lookup", "list", "compare", "yesno"}
    assert 1 - len(misses) / len(cases) >= 0.91, misses  # 0.920 since the rules that help only here went


def test_rules_are_named_data_that_can_be_left_out() -> None:
    from rag.answering.kinds import RULES, TABLES, classify_question

    assert len(set(RULES)) == len(RULES) == sum(len(rules) for rules in TABLES.values())
    assert classify_question("Which papers use reinforcement learning?") == "list"
    assert classify_question("Which papers use reinforcement learning?", without=["list/which-papers"]) != "list"
    list_rules = [r for r in RULES if r.startswith("list/")]
    assert classify_question("papers that use RL", without=list_rules) != "list"
    assert classify_question("Does WildBox use drones?", without=["yesno/aux-first"]) == "lookup"

"""Changed-fact rules as named data: the opposite-word pairs can be left out and report when they fire.

The scores of the rules on labelled claims are benchmarks (``python -m rag.evaluation.bench claims`` and
``ablation``); these tests check only the mechanism the ablation relies on."""

from __future__ import annotations

from rag.answering import facts


def test_an_opposite_pair_reports_when_it_fires() -> None:
    with facts.rules_off() as fired:
        problems = facts.fact_problems(
            "Accuracy is higher with the new loss.", "Accuracy is lower with the new loss.", ""
        )
    assert problems and fired == {"more/less"}


def test_a_pair_left_out_finds_nothing() -> None:
    claim, source = "Accuracy is higher with the new loss.", "Accuracy is lower with the new loss."
    with facts.rules_off(["more/less"]) as fired:
        assert not facts.fact_problems(claim, source, source)
    assert fired == set()
    assert facts.fact_problems(claim, source, source)  # outside the block every pair is back


def test_pairs_are_named_once() -> None:
    assert len(facts.OPPOSITES) >= 8 and all("/" in name for name in facts.OPPOSITES)

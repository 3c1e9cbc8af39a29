"""Which sentences the model is shown: a terse, lower-case or reworded question is shown the sentence that answers it.

Issue 28 found two unseen questions refused though an abstract answers them: the model was never shown the
sentence that does. No LLM here: the evidence is what the first event of the stream carries.
"""

from __future__ import annotations

from typing import Any

import pytest

from rag import StatusEvent
from rag.answering.evidence import asked_for
from rag.corpus.tokens import stems


def test_a_hyphenated_compound_matches_its_words_written_apart() -> None:
    assert stems("chronic-disease regimes") == stems("chronic disease regimes")
    assert set(stems("routing")) <= set(stems("soft-routing MoEs"))
    assert stems("Top-K") == ["top"]  # a one-letter part is no word


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What dimensionless quantity separates the regimes?", {"dimensionless", "quantiti", "separ"}),
        ("What problem does MaskGen address?", {"problem"}),
        ("which model series were used", {"seri"}),
        ("Which papers use reinforcement learning?", set()),  # a list asks for papers
        ("What is WildBox?", set()),
        ("How many boxes does WildBox have?", set()),
    ],
)
def test_what_a_question_asks_for_is_the_phrase_after_what_or_which(question: str, asked: set[str]) -> None:
    assert asked_for(question) == asked


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("what does top-k routing do for MoE specialisation", "also acts as a symmetry breaking mechanism"),
        ("what does top-k routing do for moe specialisation", "also acts as a symmetry breaking mechanism"),
        (
            "What dimensionless quantity separates the cancer and chronic-disease regimes for cell-free DNA "
            "classification?",
            "the inverse participation ratio",
        ),
    ],
)
def test_the_sentence_that_answers_a_terse_or_reworded_question_is_shown(
    seed_assistant: Any, question: str, answer: str
) -> None:
    status = next(e for e in seed_assistant.stream(question, mode="extractive") if isinstance(e, StatusEvent))
    assert any(answer in q.text for q in status.evidence), [q.text for q in status.evidence]

"""Fact checks of a claim against its source sentence (rag.answering.facts): each rule rejects a claim
whose fact was changed and accepts a true paraphrase of the same sentence."""

from __future__ import annotations

from typing import Any

import pytest

from rag import Assistant
from rag.answering.facts import fact_problems
from tests.fakes import ScriptedChatModel

PAPER = (
    "We present GlacierNet, a segmentation model for calving fronts in satellite images. "
    "GlacierNet reaches 71.2 F1 and 64.0 IoU on the CaFFe benchmark. "
    "We evaluate on two datasets with three baselines and report results for each of 12 glaciers. "
    "Errors grow sharply rather than gradually as cloud cover increases. "
    "Pretraining on optical images transfers to radar images more easily than the reverse direction. "
    "The model performs strongly on marine-terminating glaciers, while it struggles with land-terminating ones. "
    "Unlike prior work, GlacierNet does not require manual annotations of the front. "
    "Our labels are consistent across seasons. "
    "A hierarchical decoder converts coarse masks into fine contours. "
    "Previous front detectors rely on a dense decoder. "
    "GlacierNet uses a sparse decoder with 4 heads. "
    "Among all candidate thresholds we choose the one with the smallest validation loss, and the smallest margin. "
    "Fronts are detected on synthetic and real images. "
    "The error is at most 40 meters. "
    "Depth explains 84% of the error after fine-tuning and 99% in zero-shot. "
    "On a quantum computer the sampler runs in O(D) time. "
    "A naive classical sampler needs exp[O(D)] time. "
    "We collect 1,204 fronts across 3 regions and 26 glaciers covering many seasons. "
    "A classifier that sees k windows recovers at most a sqrt k/c(v) fraction of the information."
)


def sentence(fragment: str) -> str:
    """The sentence of PAPER that contains ``fragment`` (the window a claim is checked against)."""
    return next(s.strip() + "." for s in PAPER.split(". ") if fragment in s)


def check(claim: str, fragment: str) -> list[str]:
    return fact_problems(claim, sentence(fragment), PAPER)


@pytest.mark.parametrize(
    ("fragment", "true", "changed"),
    [
        # numbers: every number is in the abstract
        ("71.2 F1", "GlacierNet scores 71.2 F1 on CaFFe.", "GlacierNet scores 73.4 F1 on CaFFe."),
        # binding: a word in a clause with a number shares a clause with that number in the source
        (
            "Depth explains",
            "After fine-tuning, depth explains 84% of the error, and 99% of it in zero-shot.",
            "In zero-shot, depth explains 84% of the error, and 99% of it after fine-tuning.",
        ),
        # units: a number keeps its noun
        (
            "71.2 F1",
            "On CaFFe, GlacierNet gets 64.0 IoU and 71.2 F1.",
            "On CaFFe, GlacierNet gets 64.0 F1 and 71.2 IoU.",
        ),
        ("two datasets", "The evaluation uses two datasets.", "The evaluation uses three datasets."),
        # expressions: the source sentence's own, ratios the right way up
        (
            "quantum computer",
            "The sampler runs in O(D) time on a quantum computer.",
            "The sampler runs in exp[O(D)] time on a quantum computer.",
        ),
        (
            "sqrt k",
            "Seeing k windows recovers no more than a √(k/c(v)) fraction of the information.",
            "Seeing k windows recovers no more than a √(c(v)/k) fraction of the information.",
        ),
        # hyphenated terms are the abstract's or made of the sentence's words
        (
            "segmentation model",
            "GlacierNet is an image-based segmentation model.",
            "GlacierNet is a pixel-level segmentation model.",
        ),
        # negation: a claim that negates needs a negation in its source
        (
            "consistent across",
            "The labels stay consistent across seasons.",
            "The labels are not consistent across seasons.",
        ),
        # negation: what the source negates is not said plainly
        (
            "manual annotations",
            "GlacierNet needs no manual front annotations.",
            "GlacierNet requires manual annotations of the front.",
        ),
        # negative prefix
        (
            "consistent across",
            "Labels are consistent from season to season.",
            "Labels are inconsistent across seasons.",
        ),
        # opposites
        (
            "sharply rather",
            "Errors rise sharply, not gradually, as cloud cover increases.",
            "Errors rise slightly as cloud cover increases.",
        ),
        # opposites of the word a qualifier qualifies
        (
            "smallest validation",
            "The chosen threshold has the smallest validation loss.",
            "The chosen threshold has the largest validation loss.",
        ),
        # "only" needs a restriction in the source
        (
            "synthetic and real",
            "Fronts are detected on synthetic and real images.",
            "Fronts are detected on synthetic images only.",
        ),
        # two terms around a contrast keep their sides
        (
            "more easily",
            "Transfer from optical to radar images is easier than the reverse.",
            "Transfer from radar to optical images is easier than the reverse.",
        ),
        (
            "struggles",
            "GlacierNet does well on marine-terminating glaciers but struggles with land-terminating ones.",
            "GlacierNet does well on land-terminating glaciers but struggles with marine-terminating ones.",
        ),
        # the same relation word keeps its terms in order
        (
            "hierarchical decoder",
            "The hierarchical decoder turns coarse masks into fine contours.",
            "The hierarchical decoder turns fine contours into coarse masks.",
        ),
        # a term of another sentence put in place of the sentence's own
        (
            "sparse decoder",
            "GlacierNet relies on a sparse decoder with four heads.",
            "GlacierNet relies on a dense decoder with four heads.",
        ),
    ],
)
def test_a_changed_fact_is_rejected_and_its_paraphrase_accepted(fragment: str, true: str, changed: str) -> None:
    assert check(true, fragment) == []
    assert check(changed, fragment), changed


def test_comparative_idioms_are_not_negations() -> None:
    assert check("The error is no more than 40 meters.", "at most 40") == []
    assert check("The error is more than 40 meters.", "at most 40")


def test_a_negation_over_its_clause_is_not_a_plain_statement() -> None:
    """A passive negation covers the clause before it: "X is not required" restates "does not require X"."""
    assert check("Manual annotations of the front are not required by GlacierNet.", "manual annotations") == []


def test_a_verb_before_the_numbers_governs_every_clause() -> None:
    """ "covers 3 regions and 26 glaciers": "covers" goes with both numbers, wherever the source puts it."""
    assert check("The collection covers 3 regions and 26 glaciers.", "1,204 fronts") == []


def test_only_before_a_small_amount_is_emphasis_not_a_restriction() -> None:
    assert check("GlacierNet reaches 71.2 F1 with only a small model.", "71.2 F1") == []


def with_llm(seed: Any, claim: str) -> Assistant:
    return Assistant(seed.settings, embeddings=seed.embeddings, chat_model=ScriptedChatModel(reply=lambda p: claim))


def test_the_pipeline_drops_a_claim_whose_numbers_swapped_metrics(seed_assistant: Any) -> None:
    question = "What performance does fine-tuning on WildBox recover?"
    kept = with_llm(seed_assistant, "Fine-tuning on WildBox recovers 8.68±0.47 AP-BEV@0.50 and 13.17±0.69 AP3D macro.")
    swapped = with_llm(
        seed_assistant, "Fine-tuning on WildBox recovers 13.17±0.69 AP-BEV@0.50 and 8.68±0.47 AP3D macro."
    )
    answer = kept.ask(question, kind="lookup")
    assert not answer.refused and answer.sentences[0].supported
    answer = swapped.ask(question, kind="lookup")
    assert answer.refused or not any(s.supported and "13.17±0.69 AP-BEV" in s.text for s in answer.sentences)


def test_a_verbatim_quote_skips_the_fact_checks_and_a_changed_copy_does_not(
    seed_assistant: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claim that is its best evidence sentence word for word cannot have changed a fact (extractive answers
    are such quotes: the checks cost ~30 % of their CPU); one changed word sends it through the checks."""
    from rag.answering import verify
    from tests.conftest import count_calls

    calls = count_calls(verify, "fact_problems")
    question = "How many 3D bounding box annotations does WildBox have?"
    quote = (
        "We introduce WildBox, a dataset and benchmark for monocular 3D detection of wildlife from drone video, "
        "comprising 237,505 3D bounding box annotations across seven African savanna species grouped into six "
        "benchmark classes."
    )
    answer = with_llm(seed_assistant, quote).ask(question, kind="lookup")
    assert answer.sentences[0].supported and not calls
    with_llm(seed_assistant, quote.replace("monocular", "stereo")).ask(question, kind="lookup")
    assert calls  # one word changed: the claim is checked like any other


def test_an_unfinished_last_sentence_is_cut_at_the_last_sentence_end() -> None:
    from rag.answering.verify import drop_unfinished

    assert drop_unfinished("A is B [1]. Prior work reports a trade-off: pass@k improves") == "A is B [1]."
    assert drop_unfinished("A is B. [1] C is") == "A is B. [1]"
    assert drop_unfinished("It works (see [1]). And then") == "It works (see [1])."
    assert drop_unfinished("Done [2].") == "Done [2]."
    assert drop_unfinished("Only a fragment") == ""

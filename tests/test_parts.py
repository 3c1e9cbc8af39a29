"""Questions with several parts: split by their form, each part answered through the spine, one answer in order.

The fake model answers what MaskGen does or how many boxes WildBox has with the first sentence it is shown of that
paper, cited with the number it was given, and refuses anything else: so what the tests check is what OUR code did
(split, prepared, numbered, renumbered, joined), not a canned string read back.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from rag import AnswerEvent, Assistant, StatusEvent, StepEvent, TokenEvent
from rag.answering.parts import renumber, split_question
from rag.answering.paths import PATHS
from rag.types import Query
from tests.fakes import PathsReply, ScriptedChatModel, last_question

TWO_PAPERS = "What does MaskGen do, and how many 3D bounding box annotations does WildBox have?"


def first_sentence_of(prompt: str) -> str:
    """For what MaskGen does or how many boxes WildBox has: the first evidence sentence of that paper, cited with
    the number the prompt gave it; for anything else the refusal sentence."""
    question = last_question(prompt)
    for name, asked in (("MaskGen", "do?"), ("WildBox", "annotations")):
        if name in question and asked in question:
            m = re.search(rf"^\[(\d+)\] {name}: (.*?[.!?])(?:\s|$)", prompt, re.M)
            if m:
                return f"{m.group(2).rstrip('.')} [{m.group(1)}]."
    return "The indexed abstracts don't answer this."


@pytest.fixture
def parts_assistant(seed_assistant: Any) -> tuple[Assistant, ScriptedChatModel]:
    fake = ScriptedChatModel(reply=PathsReply(other=first_sentence_of))
    return Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake), fake


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("What does MaskGen do, and how is it evaluated?", ["What does MaskGen do?", "How is MaskGen evaluated?"]),
        (
            "Which dataset and which metric does WildBox use?",
            ["Which dataset does WildBox use?", "Which metric does WildBox use?"],
        ),
        (
            "How many species does WildBox cover? How many boxes does it have?",
            ["How many species does WildBox cover?", "How many boxes does WildBox have?"],
        ),
        (
            "Does VAE-LFA need retraining; what does it fix?",
            ["Does VAE-LFA need retraining?", "What does VAE-LFA fix?"],
        ),
    ],
)
def test_a_question_of_several_parts_is_split_into_them(question: str, parts: list[str]) -> None:
    assert split_question(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "Compare MaskGen and VAE-LFA.",
        "Which papers use reinforcement learning and graph neural networks?",
        "How many of the papers contribute a new dataset or benchmark, and which are they?",
        "How large are the WildBox and Who&When Pro datasets?",
        "What does the pass@k paper propose and why?",
        "How do WildBox and the cross-skeleton motion generation paper use animal data, and what do they find?",
        "What is the difference between what MaskGen does and what VAE-LFA does?",
        "Hi! What does WildBox contain?",
        "How many papers use diffusion models, and which ones are they?",
        "Which RL papers are there, and how do they use RL differently?",
        "A benchmark for figuring out where and why agentic systems fail reports patterns. Across which dimensions?",
    ],
)
def test_one_question_with_a_list_of_names_or_a_comparison_is_not_split(question: str) -> None:
    assert split_question(question) == [question]


def test_a_later_part_that_does_not_name_what_it_asks_about_is_asked_after_the_first(parts_assistant: Any) -> None:
    a, _ = parts_assistant
    question = "Against what was the chronic-disease cfDNA architecture compared, and how did it do?"
    assert split_question(question)[1] == "How did it do?"  # "it" is not the cfDNA named in the first part
    events = list(a.stream(question, mode="extractive"))
    standalone = next(e for e in events if isinstance(e, StatusEvent)).standalone_question
    assert standalone.endswith("Against what was the chronic-disease cfDNA architecture compared? How did it do?")


def test_markers_of_a_part_are_written_in_the_shared_numbering() -> None:
    assert renumber("A [1]. B [2][3].", {1: 4, 2: 1}) == "A [4]. B [1][3]."


def test_each_part_is_answered_with_its_own_citations_in_order(parts_assistant: Any) -> None:
    a, fake = parts_assistant
    events = [e for e in a.stream(TWO_PAPERS) if not isinstance(e, StepEvent)]  # the steps: tests/test_progress.py
    assert isinstance(events[0], StatusEvent) and isinstance(events[-1], AnswerEvent)
    assert sum(isinstance(e, StatusEvent) for e in events) == 1 and sum(isinstance(e, AnswerEvent) for e in events) == 1
    answer = events[-1].answer
    asked = [last_question(p) for p in fake.prompts]
    assert asked == ["What does MaskGen do?", "How many 3D bounding box annotations does WildBox have?"]
    first, second = answer.text.split("\n\n")
    cited = {c.paper_id: c.n for c in answer.citations}
    titles = {h.paper_id: h.title for h in answer.sources}
    assert {titles[p] for p in cited} == {"MaskGen", "WildBox"}
    for text, title in ((first, "MaskGen"), (second, "WildBox")):
        (n,) = {int(x) for x in re.findall(r"\[(\d+)\]", text)}
        assert answer.sources[n - 1].title == title  # the marker resolves to the paper that part is about
    assert not answer.refused and answer.standalone_question == " ".join(asked)


def test_the_parts_stream_in_order_with_the_final_numbers(parts_assistant: Any) -> None:
    a, _ = parts_assistant
    events = list(a.stream(TWO_PAPERS))
    streamed = "".join(e.text for e in events if isinstance(e, TokenEvent))
    answer = events[-1].answer
    assert streamed.index("MaskGen") < streamed.index("237,505")
    assert set(re.findall(r"\[\d+\]", streamed)) == set(re.findall(r"\[\d+\]", answer.text))


def test_a_part_the_abstracts_do_not_answer_is_said_to_be_unanswered(parts_assistant: Any) -> None:
    a, _ = parts_assistant
    answer = a.ask("How many 3D bounding box annotations does WildBox have? Which university developed it?")
    first, second = answer.text.split("\n\n")
    assert "237,505" in first and re.search(r"\[\d+\]", first)
    assert second == 'The abstracts don\'t say: "Which university developed WildBox?"'
    assert not answer.refused and [c.title for c in answer.citations] == ["WildBox"]


def test_a_question_no_part_of_which_is_answered_is_refused(parts_assistant: Any) -> None:
    a, _ = parts_assistant
    answer = a.ask("Which university developed CoCHI, and who funded it?")
    assert answer.refused and answer.text == "The indexed abstracts don't answer this." and not answer.citations


def test_a_kind_chosen_by_the_caller_is_never_split(parts_assistant: Any) -> None:
    a, fake = parts_assistant
    a.ask(TWO_PAPERS, kind="lookup")
    assert [last_question(p) for p in fake.prompts] == [TWO_PAPERS]


def _comparable(events: list[Any]) -> list[Any]:
    """Events without what a second run changes anyway (timings)."""
    out = []
    for e in events:
        if isinstance(e, AnswerEvent):
            out.append(("answer", e.answer.model_dump(exclude={"timings"})))
        else:
            out.append(e)
    return out


@pytest.mark.parametrize(
    ("question", "mode"),
    [
        ("What does MaskGen do?", "llm"),
        ("How many 3D bounding box annotations does WildBox have?", "extractive"),
        ("Does VAE-LFA require retraining?", "llm"),
        ("Which papers introduce a benchmark?", "llm"),
        ("Compare WildBox and WiREBench.", "llm"),
        ("What is the capital of France?", "llm"),
        ("How large are the WildBox and Who&When Pro datasets?", "extractive"),
    ],
)
def test_a_single_part_question_streams_exactly_as_the_spine_answers_it(
    parts_assistant: Any, question: str, mode: str
) -> None:
    """Characterisation: the hook changes nothing for a question of one part (every kind, refusals too)."""
    a, _ = parts_assistant
    assert split_question(question) == [question]
    hooked = list(a.stream(question, mode=mode))  # type: ignore[arg-type]
    pipeline = a._pipeline
    query = Query(question=question, mode=mode)  # type: ignore[arg-type]
    steps = pipeline.prepare_steps(query)
    direct: list[Any] = []
    while True:
        try:
            direct.append(next(steps))
        except StopIteration as done:
            prep = done.value
            break
    direct += [StatusEvent(standalone_question=prep.standalone, sources=prep.hits, evidence=prep.quotes())]
    direct += list(PATHS[prep.kind](pipeline).events(query, prep))
    assert _comparable(hooked) == _comparable(direct)


def test_a_list_part_and_a_lookup_part_share_one_numbering(parts_assistant: Any) -> None:
    from rag import ItemEvent

    a, _ = parts_assistant
    question = "Which papers introduce a benchmark? What does MaskGen do?"
    assert split_question(question) == ["Which papers introduce a benchmark?", "What does MaskGen do?"]
    events = list(a.stream(question))
    answer = events[-1].answer
    items = [e.item for e in events if isinstance(e, ItemEvent)]
    assert items  # the judge confirmed papers as they were judged
    for item in items:  # streamed with the number the whole answer gives the paper
        assert answer.sources[item.n - 1].paper_id == item.paper_id
    listed, about = answer.text.split("\n\n")
    assert listed.startswith(f"{len(items)} paper")
    for n in map(int, re.findall(r"\[(\d+)\]", answer.text)):
        assert any(c.n == n and c.paper_id == answer.sources[n - 1].paper_id for c in answer.citations)
    (n,) = {int(x) for x in re.findall(r"\[(\d+)\]", about)}
    assert answer.sources[n - 1].title == "MaskGen"

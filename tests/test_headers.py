"""Evidence headers never reach a shown answer, streamed or verified (issue 28: an answer began "Deep neural
networks (DNNs), model quality, datasets and/or: For example, ..."), and fragments are never shown.

The scripted fake copies whatever header the prompt gave its source, so each test checks what our code does
with a header it did not know in advance.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rag import AnswerEvent, Assistant, TokenEvent
from rag.answering.headers import HeaderFilter, is_fragment, strip_headers
from tests.fakes import ScriptedChatModel


@dataclass
class Source:
    title: str
    abstract: str


DNN = Source(
    "Deep neural networks (DNNs), model quality, datasets and/or",  # a keyword-list header (the reported one)
    "A solid understanding of the predictive success of deep neural networks (DNNs) remains elusive. "
    "For example, many data-dependent metrics exist that seek to predict model quality.",
)
WILDBOX = Source("WildBox", "We introduce WildBox, a dataset of 237,505 3D bounding box annotations.")  # a name
REAL = Source(  # a real title, which the abstract does not repeat
    "Attention Is All You Need", "The dominant sequence transduction models are based on recurrent networks."
)
PHRASE = Source(  # a derived phrase title
    "A practical and effective predictor of model quality",
    "A practical and effective predictor of model quality involves analyzing weight matrices.",
)
STATINS = Source(  # a real title whose words the abstract uses, though not in a row
    "Pleiotropic effects of statins.",
    'Statins lower cholesterol. Some "pleiotropic" effects of statins involve lower inflammation.',
)
SOURCES = [DNN, WILDBOX, REAL, PHRASE]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (  # the reported answer: the keyword header as a lead-in
            "Deep neural networks (DNNs), model quality, datasets and/or: For example, metrics predict quality [1].",
            "For example, metrics predict quality [1].",
        ),
        (  # lower case, with its marker before the colon
            "deep neural networks (DNNs), model quality, datasets and/or [1]: metrics predict quality.",
            "Metrics predict quality.",
        ),
        (
            "Deep neural networks (DNNs), model qual: Metrics predict quality.",
            "Metrics predict quality.",
        ),  # cut mid-word
        ("Deep neural networks (DNNs), model quality, datasets and: Metrics exist.", "Metrics exist."),  # cut at a word
        (  # a keyword header inside a sentence, though the abstract has each of its words
            "In Deep neural networks (DNNs), model quality, datasets and/or, metrics exist.",
            "In the paper, metrics exist.",
        ),
        ("WildBox: a dataset of 237,505 boxes [2].", "A dataset of 237,505 boxes [2]."),  # a name as a label
        ("A practical and effective predictor of model quality - weight matrices.", "Weight matrices."),
        ("In Attention Is All You Need, the authors drop recurrence.", "In the paper, the authors drop recurrence."),
        ("Attention Is All You Need drops recurrence.", "The paper drops recurrence."),
        (  # list items start sentences too
            "- WildBox [2] - has 237,505 boxes.\n- Attention Is All You Need: no recurrence.",
            "- Has 237,505 boxes.\n- No recurrence.",
        ),
    ],
)
def test_a_copied_header_is_taken_out_streamed_or_whole(text: str, shown: str) -> None:
    assert strip_headers(text, SOURCES) == shown
    for size in (1, 2, 3, 5, 8):  # the stream shows exactly what the verified answer keeps
        f = HeaderFilter(SOURCES)
        assert "".join(f.feed(text[i : i + size]) for i in range(0, len(text), size)) + f.flush() == shown


@pytest.mark.parametrize(
    "text",
    [
        "WildBox is a dataset of 237,505 boxes [2].",  # a name its abstract uses is the paper's own word
        "WildBoxes are not WildBox-like.",
        "Deep neural networks (DNNs) remain poorly understood.",  # abstract words that begin a header
        "A practical and effective predictor of model quality involves weight matrices.",
        "Attention helps. All you need is data.",
        "The pleiotropic effects of statins include lower inflammation.",  # a real title in the abstract's words
    ],
)
def test_text_that_only_resembles_a_header_is_kept(text: str) -> None:
    sources = [*SOURCES, STATINS]
    assert strip_headers(text, sources) == text
    f = HeaderFilter(sources)
    assert "".join(f.feed(text[i : i + 3]) for i in range(0, len(text), 3)) + f.flush() == text


def test_the_filter_holds_back_only_what_may_become_a_header() -> None:
    f = HeaderFilter(SOURCES)
    assert f.feed("Metrics exist. Deep neu") == "Metrics exist. "
    assert f.feed("rons fire.") == "Deep neurons fire."


@pytest.mark.parametrize(
    ("sentence", "fragment"),
    [
        ("Deep neural networks (DNNs), model quality, datasets and/or:", True),
        ("The metric predicts model qual", True),  # cut mid-word
        ("The metric predicts model quality and/or.", True),
        ("The metric relies on the [1].", True),
        ("The metric predicts model quality [1].", False),
        ("The metric predicts model quality", False),  # no full stop, but a whole word
    ],
)
def test_a_fragment_is_recognised(sentence: str, fragment: bool) -> None:
    assert is_fragment(sentence, DNN.abstract) is fragment


# ---------------------------------------------------------------------------------------------- end to end
@pytest.fixture
def titled_assistant(make_assistant: Callable[..., Any], tmp_path: Path) -> Assistant:
    """Papers whose titles are the header shapes above (a keyword list, a name, a real title, a phrase)."""
    path = tmp_path / "titled.jsonl"
    path.write_text(
        "\n".join(json.dumps({"id": f"p{i}", "title": s.title, "abstract": s.abstract}) for i, s in enumerate(SOURCES)),
        encoding="utf-8",
    )
    a: Assistant = make_assistant()
    a.ingest([path])
    return a


def copying_reply(prompt: str) -> str:
    """Answers like the reported model: each source's header copied as a lead-in, then a sentence of its own."""
    lines = re.findall(r"^\[(\d+)\] (.*?): (.*)$", prompt.split("Sources:\n")[-1], re.M)  # not the examples
    assert lines, prompt
    n, title, body = lines[0]
    first = re.split(r"(?<=\.)\s", body)[0].rstrip(".")
    cut = title[: max(8, len(title) * 2 // 3)]  # a fragment of the header, cut mid-word where it falls
    return f"{title} [{n}]: {first} [{n}]. {cut}: {first}. The metric relies on and/or:"


def test_no_header_reaches_the_streamed_or_the_verified_answer(titled_assistant: Assistant) -> None:
    fake = ScriptedChatModel(reply=copying_reply)
    a = Assistant(titled_assistant.settings, embeddings=titled_assistant.embeddings, chat_model=fake)
    events = list(a.stream("What do data-dependent metrics seek to predict for deep neural networks?", k=2))
    streamed = "".join(e.text for e in events if isinstance(e, TokenEvent))
    answer = next(e.answer for e in events if isinstance(e, AnswerEvent))
    title = re.findall(r"^\[\d+\] (.*?): ", fake.prompts[-1].split("Sources:\n")[-1], re.M)[0]
    assert title == DNN.title
    assert not answer.refused, answer
    for text in (streamed, answer.text):
        assert title.lower() not in text.lower()
        assert not text.lower().startswith(title[:8].lower())
    # the fragment is streamed (the draft shows what the model wrote) but never verified, so never in the answer
    assert "The metric relies on and/or:" in streamed
    assert "relies on" not in answer.text and "The metric relies on and/or:" in answer.unsupported


def test_a_comparison_keeps_copied_headers_out_of_its_verified_text(titled_assistant: Assistant) -> None:
    fake = ScriptedChatModel(reply=copying_reply)
    a = Assistant(titled_assistant.settings, embeddings=titled_assistant.embeddings, chat_model=fake)
    answer = a.ask("How do WildBox and the DNN model-quality paper differ?", kind="compare")
    body = "\n".join(line.split("]: ", 1)[-1] for line in answer.text.splitlines())  # the code's own "Title [n]:"
    assert len(answer.citations) >= 2, answer.text
    for s in SOURCES:
        if s.title.lower() not in s.abstract.lower():
            assert s.title.lower() not in body.lower(), answer.text

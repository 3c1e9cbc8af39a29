"""A reasoning model's <think> block: held back from the stream, kept out of the answer and its verification,
kept on ``Answer.reasoning`` for the UI to show folded; through the CLI, the UI and `rag serve`."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from rag import Assistant, Settings
from rag.answering.judge import label_probabilities
from rag.answering.reasoning import ThinkFilter, split_reasoning
from rag.apps.cli import cli
from rag.apps.http_api import create_app
from rag.events import AnswerEvent, TokenEvent
from rag.models.providers import ReasoningInliner, think_budget
from rag.ui.app import build_app
from rag.ui.rendering import format_message_html
from tests.fakes import ScriptedChatModel, evidence_number
from tests.test_ui import run_chat

THOUGHT = "Let me think: the WildBox abstract says 237,505. SECRET-REASONING Paris is the capital of France."
QUESTION = "How many 3D bounding box annotations does WildBox have?"


def thinking_reply(prompt: str) -> str:
    """Thinks first (a block that itself states a fact of the abstract, and one that is false), then answers
    from the evidence it was offered: the WildBox sentence, cited with the number the prompt gave it."""
    n = evidence_number(prompt, "WildBox")
    answer = f"WildBox comprises 237,505 3D bounding box annotations [{n}]." if n else "I don't know."
    return f"<think>{THOUGHT}</think>\n\n{answer}"


def with_thinker(seed: Any, reply: Any = thinking_reply) -> tuple[Assistant, ScriptedChatModel]:
    fake = ScriptedChatModel(reply=reply)
    answer = seed.settings.answer.model_copy(update={"mode": "llm"})
    settings = seed.settings.model_copy(update={"answer": answer})
    return Assistant(settings, embeddings=seed.embeddings, chat_model=fake), fake


# ------------------------------------------------------------------ parsing
@pytest.mark.parametrize(
    ("reply", "answer", "reasoning"),
    [
        ("<think>a\nb</think>\n\nThe answer [1].", "The answer [1].", "a\nb"),
        ("<thinking>x</thinking>Y.", "Y.", "x"),
        ("opened by the prompt</think>Y.", "Y.", "opened by the prompt"),
        ("<think>ran out of tokens while thinking", "", "ran out of tokens while thinking"),
        ("<THINK>a</THINK>b<think>c</think>d", "bd", "a\n\nc"),
        ("No block [2].", "No block [2].", None),
    ],
)
def test_split_reasoning_takes_every_shape_of_block_out_of_the_answer(
    reply: str, answer: str, reasoning: str | None
) -> None:
    assert split_reasoning(reply) == (answer, reasoning)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_think_filter_holds_back_a_block_split_across_tokens(size: int) -> None:
    reply = "<think>hidden <b> text</think>\n\nShown <i> [1].<thinking>more</thinking> End"
    f = ThinkFilter()
    shown = "".join(f.feed(reply[i : i + size]) for i in range(0, len(reply), size)) + f.flush()
    assert shown == "Shown <i> [1]. End"
    assert f.reasoning == "hidden <b> text\n\nmore"


def test_unclosed_block_is_never_shown() -> None:
    f = ThinkFilter()
    assert f.feed("<think>still thin") + f.feed("king when the tokens ran out") + f.flush() == ""
    assert f.reasoning == "still thinking when the tokens ran out"


def test_reasoning_content_deltas_become_a_think_block() -> None:
    """llama.cpp's server (reasoning_format deepseek), DeepSeek and vLLM stream the reasoning apart."""
    inline = ReasoningInliner()
    chunks = [("Thin", ""), ("king.", ""), ("", "The "), ("", "answer.")]
    text = "".join(inline.wrap(r, c) for r, c in chunks) + inline.close()
    assert text == "<think>Thinking.</think>The answer."
    assert split_reasoning(text) == ("The answer.", "Thinking.")
    cut = ReasoningInliner()
    assert cut.wrap("only thoughts", "") + cut.close() == "<think>only thoughts</think>"


def test_think_budget_follows_the_setting_and_defaults_to_none_for_the_bundled_model() -> None:
    assert think_budget(Settings()) == 0
    assert think_budget(Settings(llm={"think_budget": 512})) == 512


# ------------------------------------------------------------------ the lookup path
def test_think_block_is_not_streamed_not_verified_and_kept_on_the_answer(seed_assistant: Any) -> None:
    a, fake = with_thinker(seed_assistant)
    events = list(a.stream(QUESTION))
    streamed = "".join(e.text for e in events if isinstance(e, TokenEvent))
    answer = next(e.answer for e in events if isinstance(e, AnswerEvent))
    assert "SECRET-REASONING" not in streamed and "<think" not in streamed and "think>" not in streamed
    assert streamed.startswith("WildBox comprises 237,505")
    assert "237,505" in answer.text and "SECRET" not in answer.text and "Paris" not in answer.text
    # the reasoning's false claim was never verified: it is not listed as an unsupported sentence either
    assert not any("Paris" in s for s in answer.unsupported) and not any("Paris" in s.text for s in answer.sentences)
    assert answer.reasoning == THOUGHT and answer.citations
    assert answer.to_json()["reasoning"] == THOUGHT
    assert "reasoning" not in a.ask(QUESTION, mode="extractive").to_json()  # only a reasoning model's answers


def test_a_reply_that_is_all_thinking_is_a_refusal_not_an_answer(seed_assistant: Any) -> None:
    a, _ = with_thinker(seed_assistant, reply=lambda p: "<think>WildBox comprises 237,505 3D bounding box")
    answer = a.ask(QUESTION)
    assert answer.refused and "237,505" not in answer.text and answer.reasoning


# ------------------------------------------------------------------ the judges
class _ThinkingJudge(BaseChatModel):
    """A reasoning model as the one-token judges see it: with max_tokens=1 it writes only <think> (its top
    logprobs: tokens that may start a thought, a little Yes and No); let write, it thinks, then answers."""

    answer: str = "No"
    opened_by_template: bool = False  # R1: the prompt opens the block; the server sends the thought apart
    calls: list[dict[str, Any]] = []

    @property
    def _llm_type(self) -> str:
        return "thinking-judge"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        self.calls.append(kw)
        if kw.get("max_tokens") == 1:
            first, text = ("Okay", "<think>Okay</think>") if self.opened_by_template else ("<think>", "<think>")
            tops = [{"token": t, "logprob": math.log(p)} for t, p in ((first, 0.97), ("Yes", 0.02), ("No", 0.01))]
            meta = {"logprobs": {"content": [{"token": first, "top_logprobs": tops}]}}
            return ChatResult(generations=[ChatGeneration(message=AIMessage(text, response_metadata=meta))])
        text = f"<think>Yes, the method... no: it says nothing of lasers. Yes?</think>{self.answer}"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


def test_judges_let_a_reasoning_model_think_and_read_the_word_after_its_block() -> None:
    """The first token of a reasoning model is <think>: its logprobs (2 % Yes, 1 % No) would decide from noise.
    The judge asks again without the one-token limit and reads the first word after the block, never one in it."""
    judge = _ThinkingJudge(calls=[])
    p, _ = label_probabilities(judge, [HumanMessage("Yes or No?")], ["yes", "no"])
    assert p == {"yes": 0.0, "no": 1.0} and [c.get("max_tokens") for c in judge.calls] == [1, None]
    judge = _ThinkingJudge(opened_by_template=True, answer="Yes.", calls=[])
    p, _ = label_probabilities(judge, [HumanMessage("Yes or No?")], ["yes", "no"])
    assert p == {"yes": 1.0, "no": 0.0} and len(judge.calls) == 2
    p, _ = label_probabilities(_ThinkingJudge(answer="", calls=[]), [HumanMessage("Yes or No?")], ["yes", "no"])
    assert p == {"yes": 0.0, "no": 0.0}  # all thinking, no answer: decides nothing


# ------------------------------------------------------------------ CLI, UI, rag serve
def test_cli_ask_never_prints_the_think_block(seed_assistant: Any) -> None:
    a, _ = with_thinker(seed_assistant)
    r = CliRunner().invoke(cli, ["ask", QUESTION], obj={"assistant": a}, catch_exceptions=False)
    assert r.exit_code == 0 and "237,505" in r.stdout, r.output
    assert "SECRET-REASONING" not in r.output and "think>" not in r.output
    data = json.loads(CliRunner().invoke(cli, ["ask", QUESTION, "--json"], obj={"assistant": a}).stdout)
    assert "SECRET" not in data["answer"] and data["reasoning"] == THOUGHT  # the JSON keeps it, apart


def test_ui_shows_the_reasoning_folded_and_escaped_never_in_the_answer(seed_assistant: Any) -> None:
    a, _ = with_thinker(seed_assistant, reply=lambda p: thinking_reply(p).replace("SECRET", "<img src=x>"))
    steps = run_chat(build_app(a), QUESTION)
    for step in steps:  # every streamed state of the chat, the partial ones included
        if isinstance(step[0], list) and step[0]:
            content = step[0][-1]["content"]
            assert "<img" not in content
            head = content.split('<details class="rag-reasoning">')[0]
            assert "-REASONING" not in head and "think>" not in head
    final = steps[-1][0][-1]["content"]
    assert '<details class="rag-reasoning"><summary>' in final and "&lt;img src=x&gt;-REASONING" in final
    answer = a.ask(QUESTION)
    assert format_message_html(answer, 1).index("237,505") < format_message_html(answer, 1).index("<details")


def test_rag_serve_never_sends_the_think_block(seed_assistant: Any) -> None:
    a, _ = with_thinker(seed_assistant)
    api = TestClient(create_app(a))
    body = {"messages": [{"role": "user", "content": QUESTION}]}
    r = api.post("/v1/chat/completions", json=body)
    content = r.json()["choices"][0]["message"]["content"]
    assert r.status_code == 200 and "237,505" in content and "SECRET" not in content and "think>" not in content
    r = api.post("/v1/chat/completions", json=body | {"stream": True})
    data = [json.loads(x[6:]) for x in r.text.splitlines() if x.startswith("data: {")]
    streamed = "".join((d["choices"][0]["delta"].get("content") or "") for d in data if d.get("choices"))
    assert "237,505" in streamed and "SECRET" not in streamed and "think>" not in streamed

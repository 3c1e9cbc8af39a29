"""Offline fakes for unit tests of chain logic. Each depends on its input and records what it was sent."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

from rag.answering.attributes import question_for


class ScriptedChatModel(BaseChatModel):
    """Replies with ``reply(prompt)``; records every prompt; streams the reply in small pieces
    (3 characters) so marker handling across token boundaries is exercised."""

    reply: Callable[[str], str]
    prompts: list[str] = Field(default_factory=list)
    #: replies stop after this many words, ending with finish_reason "length" (else "stop")
    stop_after_words: int | None = None
    call_kwargs: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _text(self, messages: list[BaseMessage]) -> str:
        prompt = "\n".join(str(m.content) for m in messages)
        self.prompts.append(prompt)
        return self.reply(prompt)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text, finish = self._limited(self._text(messages))
        message = AIMessage(text, response_metadata={"finish_reason": finish})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _limited(self, text: str) -> tuple[str, str]:
        """``(text, finish_reason)`` as a server sends them: ``text`` up to its ``stop_after_words``-th word
        (line breaks kept) and "length" when it is longer, else ``text`` whole and "stop"."""
        words = list(re.finditer(r"\S+", text))
        if self.stop_after_words is None or len(words) <= self.stop_after_words:
            return text, "stop"
        return text[: words[self.stop_after_words - 1].end()] if self.stop_after_words else "", "length"

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        self.call_kwargs.append(dict(kwargs))
        text, finish = self._limited(self._text(messages))
        for i in range(0, len(text), 3):
            yield ChatGenerationChunk(message=AIMessageChunk(content=text[i : i + 3]))
        yield ChatGenerationChunk(message=AIMessageChunk(content="", response_metadata={"finish_reason": finish}))


def evidence_number(prompt: str, title_word: str) -> int | None:
    """The [n] the prompt gave the source whose line mentions ``title_word``."""
    m = re.search(rf"^\[(\d+)\] [^\n]*{re.escape(title_word)}", prompt, re.M)
    return int(m.group(1)) if m else None


def last_question(prompt: str) -> str:
    m = re.findall(r"Question: (.*)", prompt)
    return m[-1] if m else ""


# ---------------------------------------------------------------------------------------------- answer paths
# The prompts the answer paths send (prompts/*.md), recognised by their shape: the list judge asks about one
# paper ("Paper: ...\nQuestion: ..."), the yes/no prompt wants one word, a table-cell prompt asks one question
# about one abstract.
_JUDGED = re.compile(r"^Paper: (.*?)\nQuestion: ", re.S | re.M)
_TABLE_CELL = re.compile(r'^Abstract of "(.*?)":\n(.*?)\n\nQuestion: ([^\n]*)\n', re.S | re.M)


_OPPOSITE_ASKED = re.compile(r"states the opposite.*\nClaim: (.*)\nOpposite:$", re.S)
_STATEMENT_ASKED = re.compile(r"as the statement that the answer .*\nQuestion: (.*)\nStatement:$", re.S)
#: what a fake writes as a claim's opposite (a consistent judge then swaps its yes and no on it)
NEGATED = "It is false that "


_CONTRAST_ASKED = re.compile(r"Which statement does the excerpt support\?\nA: (.*)\nB: (.*)\n")


def contrast_asked(prompt: str) -> tuple[str, str] | None:
    """(option A, option B) when ``prompt`` makes the stance judge choose between a claim and its opposite
    (prompts/contrast.md)."""
    m = _CONTRAST_ASKED.search(prompt)
    return (m.group(1), m.group(2)) if m else None


def rewrite_asked(prompt: str) -> tuple[str, str] | None:
    """("opposite", claim) or ("statement", question) when ``prompt`` asks for the stance judge's rewrite of a
    claim into its opposite (prompts/opposite.md) or of a yes/no question into a claim (prompts/statement.md)."""
    for name, pattern in (("opposite", _OPPOSITE_ASKED), ("statement", _STATEMENT_ASKED)):
        m = pattern.search(prompt)
        if m:
            return name, m.group(1)
    return None


def label_head() -> Any:
    """A stance head that passes the model's label probabilities through (supports/refutes/not stated =
    normalised P(yes)/P(no)/P(not)), choosing the claim over its opposite counting for support: tests of the paths that
    use the judge then do not depend on the numbers of the shipped head, which its benchmarks measure."""
    import numpy as np

    from rag.answering.stance import FEATURES, StanceHead

    n = len(FEATURES)
    w = np.zeros((3, n))
    w[0, FEATURES.index("claim over opposite")] = 1.0
    w[1, FEATURES.index("log p(no)/p(yes)")] = 1.0
    w[2, FEATURES.index("log p(not)/p(yes)")] = 1.0
    one = {"claim": np.ones(n)}
    return StanceHead({"claim": w}, {"claim": np.zeros(3)}, {"claim": np.zeros(n)}, one, {"model": "label-head"})


def with_label_head(assistant: Any) -> Any:
    """``assistant`` with its stance judge on :func:`label_head`."""
    assistant._pipeline.stance.head = label_head()
    return assistant


def judged_paper(prompt: str) -> str | None:
    """The paper text a list-judge prompt shows (title and best sentences), else None."""
    m = _JUDGED.search(prompt)
    return m.group(1) if m else None


def table_cell_prompt(prompt: str) -> tuple[str, str, str] | None:
    """(title, abstract, question) of a table-cell prompt (one question about one abstract), else None."""
    m = _TABLE_CELL.search(prompt)
    return (m.group(1), m.group(2), m.group(3)) if m else None


def judging(yes: str, reply: Callable[[str], str]) -> Callable[[str], str]:
    """``reply`` to every prompt but the list judge's, which gets "Yes" for a paper whose text (title and best
    sentences) matches the regex ``yes``, else "No": a table with a query judges its candidates first."""
    pattern = re.compile(yes)

    def answer(prompt: str) -> str:
        paper = judged_paper(prompt)
        if paper is None:
            return reply(prompt)
        return "Yes" if pattern.search(paper) else "No"

    return answer


def cell_prompts(prompts: list[str]) -> list[str]:
    """The table-cell prompts among ``prompts`` (not the list judge's)."""
    return [p for p in prompts if table_cell_prompt(p) is not None]


def asked_attribute(prompt: str, attributes: tuple[str, ...] | list[str]) -> str | None:
    """Which of ``attributes`` a table-cell prompt asks about (by the question the product asks for it)."""
    cell = table_cell_prompt(prompt)
    if cell is None:
        return None
    return next((a for a in attributes if question_for(a) == cell[2]), None)


def copying_table_reply(prompt: str, invented: tuple[str, ...] = ("metric",)) -> str | None:
    """A table-cell reply that depends on the abstract it is shown: ``task`` copies the abstract's first six
    words (stated, so the cell must be kept), each ``invented`` attribute gets a value no abstract states
    (it must end up "not stated"), any other attribute "not stated". None when ``prompt`` is no table cell."""
    cell = table_cell_prompt(prompt)
    if cell is None:
        return None
    if asked_attribute(prompt, ["task"]):
        return " ".join(cell[1].split()[:6])
    if asked_attribute(prompt, invented):
        return "top-1 accuracy of 99.97% on ImageNet-42k"
    return "not stated"


class PathsReply:
    """A reply for every answer path, each depending on the prompt: the list judge says Yes when the judged
    paper's text matches ``judge`` (and records the papers it said Yes to), the yes/no prompt answers
    ``verdict(prompt)``, table rows are filled by :func:`copying_table_reply`, anything else gets ``other``."""

    def __init__(
        self,
        judge: str = r"(?i)benchmark",
        verdict: Callable[[str], str] = lambda p: "Yes",
        other: Callable[[str], str] = lambda p: "The indexed abstracts don't answer this.",
    ) -> None:
        self.judge, self.verdict, self.other = re.compile(judge), verdict, other
        self.said_yes: list[str] = []

    def __call__(self, prompt: str) -> str:
        paper = judged_paper(prompt)
        if paper is not None:
            if self.judge.search(paper):
                self.said_yes.append(paper)
                return "Yes"
            return "No"
        asked = rewrite_asked(prompt)
        if asked is not None:  # the stance judge's rewrites: the opposite, or the question as a claim
            return NEGATED + asked[1] if asked[0] == "opposite" else f"It holds that {asked[1].rstrip('?')}."
        choice = contrast_asked(prompt)
        if choice is not None:  # made to choose: the option its verdict says yes to
            said = self.verdict(prompt)
            return "A" if (said == "Yes") != choice[0].startswith(NEGATED) else "B"
        if "Yes, No, or Not" in prompt:
            return self.verdict(prompt)
        row = copying_table_reply(prompt)
        return row if row is not None else self.other(prompt)


class LabelChatModel(BaseChatModel):
    """A one-token judge: ``probs(prompt)`` gives P(word) for the first token (sent as logprobs, as llama.cpp's
    server does); records every judge prompt. Asked to write a claim's opposite (prompts/opposite.md), it
    writes ``opposite(claim)`` and records the claim in ``rewrites``; made to choose between a claim and its
    opposite (prompts/contrast.md), it is consistent with its last judgement (``picks_claim``). Asked to state a
    yes/no question (prompts/statement.md), it writes ``statement(question)`` and records the question.
    Writing anything else is not what a judge does."""

    probs: Callable[[str], dict[str, float]]
    opposite: Callable[[str], str] = lambda claim: f"{NEGATED}{claim}"
    statement: Callable[[str], str] = lambda question: f"It holds that {question.rstrip('?')}."
    prompts: list[str] = Field(default_factory=list)
    rewrites: list[str] = Field(default_factory=list)
    #: the forced choices between a claim and its opposite (prompts/contrast.md), apart from ``prompts``
    contrasts: list[str] = Field(default_factory=list)
    #: P(it picks the claim over its opposite) for a forced-choice prompt; None: as often as it said yes to the
    #: claim in the judgement before, P(yes) / (P(yes) + P(no))
    picks_claim: Callable[[str], float] | None = None
    said_yes: float = 0.5

    @property
    def _llm_type(self) -> str:
        return "label-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        prompt = "\n".join(str(m.content) for m in messages)
        asked = rewrite_asked(prompt)
        if asked is not None and kwargs.get("max_tokens") != 1:
            self.rewrites.append(asked[1])
            said = self.opposite(asked[1]) if asked[0] == "opposite" else self.statement(asked[1])
            return ChatResult(generations=[ChatGeneration(message=AIMessage(said))])
        assert kwargs.get("max_tokens") == 1 and kwargs.get("logprobs"), "a judge asks for one token with logprobs"
        choice = contrast_asked(prompt)
        if choice is not None:  # made to choose: it picks the claim as often as it says yes to it
            self.contrasts.append(prompt)
            claim = self.picks_claim(prompt) if self.picks_claim else self.said_yes
            p_a = 1 - claim if choice[0].startswith(NEGATED) else claim
            probs = {"A": min(max(p_a, 0.01), 0.99), "B": min(max(1 - p_a, 0.01), 0.99)}
        else:
            self.prompts.append(prompt)
            probs = self.probs(prompt)
        if choice is None:
            yes, no = probs.get("Yes", 0.0), probs.get("No", 0.0)
            self.said_yes = yes / ((yes + no) or 1.0)
        tops = [{"token": w, "logprob": math.log(p)} for w, p in sorted(probs.items(), key=lambda kv: -kv[1]) if p > 0]
        meta = {"logprobs": {"content": [{"token": tops[0]["token"], "top_logprobs": tops}]}}
        return ChatResult(
            generations=[ChatGeneration(message=AIMessage(str(tops[0]["token"]), response_metadata=meta))]
        )

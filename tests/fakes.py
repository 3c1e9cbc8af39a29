"""Offline fakes for unit tests of chain logic. Each depends on its input and records what it was sent."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field


class ScriptedChatModel(BaseChatModel):
    """Replies with ``reply(prompt)``; records every prompt; streams the reply in small pieces
    (3 characters) so marker handling across token boundaries is exercised."""

    reply: Callable[[str], str]
    prompts: list[str] = Field(default_factory=list)
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
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self._text(messages)))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        self.call_kwargs.append(dict(kwargs))
        text = self._text(messages)
        for i in range(0, len(text), 3):
            yield ChatGenerationChunk(message=AIMessageChunk(content=text[i : i + 3]))


def evidence_number(prompt: str, title_word: str) -> int | None:
    """The [n] the prompt gave the source whose line mentions ``title_word``."""
    m = re.search(rf"^\[(\d+)\] [^\n]*{re.escape(title_word)}", prompt, re.M)
    return int(m.group(1)) if m else None


def last_question(prompt: str) -> str:
    m = re.findall(r"Question: (.*)", prompt)
    return m[-1] if m else ""

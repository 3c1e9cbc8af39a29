"""One-token judgements by the model: the probability of each allowed answer word, from its logprobs.

A yes/no question, "does this paper match the list's criterion?" and similar decisions need one
generated token, not a paragraph: the model reads the prompt, and the probabilities it gives "Yes",
"No" (or "Not") as the first token are the answer. That is ~10x faster than letting it write, gives a
calibratable score instead of a coin-flip string, and cannot be talked into prose. Endpoints that do
not return logprobs (some OpenAI-compatible servers) fall back to the generated word with probability 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from rag.answering.reasoning import split_reasoning


def _first_word(text: str) -> str:
    word = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    return word.strip(".,:;!?\"'*()").lower()


def label_probabilities(
    chat: BaseChatModel, messages: Sequence[BaseMessage], labels: Sequence[str]
) -> tuple[dict[str, float], dict[str, Any]]:
    """P(label) for each of ``labels`` (lower-case first words, e.g. "yes", "no", "not") as the model's
    first token, normalised over the labels; and the usage metadata of the call."""
    call = chat.bind(max_tokens=1, temperature=0.0, logprobs=True, top_logprobs=10)
    msg = call.invoke(list(messages))
    usage = dict(getattr(msg, "usage_metadata", None) or {})
    if _starts_thinking(msg):
        return _judge_after_thinking(chat, messages, labels, usage)
    mass = dict.fromkeys(labels, 0.0)
    content = ((getattr(msg, "response_metadata", None) or {}).get("logprobs") or {}).get("content") or []
    if content:
        for top in content[0].get("top_logprobs") or []:
            word = _first_word(str(top.get("token", "")))
            for label in labels:
                if word and label.startswith(word) and len(word) >= min(2, len(label)):
                    mass[label] += math.exp(float(top.get("logprob", -100.0)))
                    break
    total = sum(mass.values())
    if total <= 0:  # no logprobs from this endpoint: trust the word it wrote
        return _decided_by_word(msg, labels), usage
    return {label: p / total for label, p in mass.items()}, usage


def _starts_thinking(msg: BaseMessage) -> bool:
    """The model's first token opens a <think> block, or is already inside one (a template that opens it, the
    thought sent apart as ``reasoning_content`` and wrapped by rag.models.providers): a reasoning model, whose
    first-token logprobs say nothing of the labels."""
    content = ((getattr(msg, "response_metadata", None) or {}).get("logprobs") or {}).get("content") or []
    first = str(content[0].get("token", "")) if content else ""
    return any(text.lstrip().lower().startswith("<think") for text in (first, str(msg.content)))


def _judge_after_thinking(
    chat: BaseChatModel, messages: Sequence[BaseMessage], labels: Sequence[str], usage: dict[str, Any]
) -> tuple[dict[str, float], dict[str, Any]]:
    """A reasoning model is let think (its max_tokens includes the think budget) and judged by the first word after
    the block, with probability 1; a reply that is all thinking, or none of the labels, decides nothing."""
    msg = chat.bind(temperature=0.0).invoke(list(messages))
    return _decided_by_word(msg, labels), dict(getattr(msg, "usage_metadata", None) or usage)


def _decided_by_word(msg: BaseMessage, labels: Sequence[str]) -> dict[str, float]:
    """Probability 1 for the label the reply's first word (after any <think> block) starts; all 0 when it starts
    none of them (an answer that is none of the labels, or a reply that is all thinking, decides nothing)."""
    word = _first_word(split_reasoning(str(msg.content))[0])
    hit = next((label for label in labels if word and label.startswith(word)), None)
    return {label: float(label == hit) for label in labels}

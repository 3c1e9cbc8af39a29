"""Conversation history as the answer paths read it: ``(role, text)`` turns, oldest first."""

from __future__ import annotations

from collections.abc import Sequence

from rag.types import Role

History = Sequence[tuple[str, str]] | Sequence[dict[str, str]]


def normalise_history(history: History | None) -> list[tuple[Role, str]]:
    """Accepts ``[("user", "..."), ("assistant", "...")]`` or OpenAI-style dicts."""
    out: list[tuple[Role, str]] = []
    for turn in history or []:
        if isinstance(turn, dict):
            role, content = str(turn.get("role", "")), str(turn.get("content", ""))
        else:
            role, content = str(turn[0]), str(turn[1])
        if content.strip():
            out.append(("assistant" if role in ("assistant", "ai", "bot") else "user", content.strip()))
    return out


def fallback_condense(history: Sequence[tuple[str, str]], question: str) -> str:
    """Deterministic standalone question: the last user question joined to the follow-up."""
    previous = [c for r, c in history if r == "user"]
    return f"{previous[-1]} {question}" if previous else question

"""Errors the library raises. Every message says what went wrong and how to fix it.

Only ``rag.apps.cli`` turns these into exit codes, ``rag.apps.http_api`` into HTTP statuses; ``rag.ui``
catches them for display.
"""

from __future__ import annotations

import re


class RagError(Exception):
    """Base class of every error this package raises on purpose."""


class ConfigError(RagError):
    """A setting is missing, malformed or inconsistent."""


class IngestError(RagError):
    """A corpus file cannot be read. The message names the file and the line or record."""


class IndexMismatchError(RagError):
    """The index was built with another embedding model or chunking than the settings ask for."""


class IndexCorruptError(RagError):
    """Index files are missing or unreadable."""


class EmptyIndexError(RagError):
    """The index holds no papers yet."""


class BackendError(RagError):
    """A configured backend (LLM server, embeddings endpoint, Chroma server) failed or is unreachable."""


class BusyError(RagError):
    """Too many questions are waiting for the LLM (``RAG_LLM__MAX_WAITING``); ``retry_after`` is a fair guess,
    in seconds, of when a slot frees up. The HTTP API answers 503 with that ``Retry-After``."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StoppedError(RagError):
    """The answer was stopped (:class:`rag.Stop`) before it was finished: its LLM slot was freed at once."""


class QuestionError(RagError):
    """The question is empty or too long; ``code`` says which ('empty_question', 'question_too_long')."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


# an API key ("task-specific" is no key), a bearer token, the user:password of a URL (http://ann:pw@host)
_SECRET = re.compile(r"\bsk-[A-Za-z0-9*_\-]{4,}|Bearer\s+\S+|(?<=://)[^/@\s]+(?=@)")


def redact(text: str, *secrets: str | None) -> str:
    """``text`` with the given secret values, anything shaped like an API key and the credentials in
    URLs replaced by '***'."""
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return _SECRET.sub("***", text)

"""Grounded question answering over research-paper abstracts.

Public API: :class:`Assistant`, :class:`Settings`, :func:`get_settings`, the records
(:class:`Paper`, :class:`Chunk`, :class:`SearchHit`, :class:`Citation`, :class:`Answer`) and the errors.
"""

from rag.answering.pipeline import names_paper
from rag.assistant import NO_ANSWER, Assistant
from rag.errors import (
    BackendError,
    ConfigError,
    EmptyIndexError,
    IndexCorruptError,
    IndexMismatchError,
    IngestError,
    QuestionError,
    RagError,
)
from rag.models.providers import make_embeddings
from rag.settings import Settings, get_settings, is_loopback
from rag.types import Answer, AnswerSentence, Chunk, Citation, Paper, SearchHit

__all__ = [
    "NO_ANSWER",
    "Answer",
    "AnswerSentence",
    "Assistant",
    "BackendError",
    "Chunk",
    "Citation",
    "ConfigError",
    "EmptyIndexError",
    "IndexCorruptError",
    "IndexMismatchError",
    "IngestError",
    "Paper",
    "QuestionError",
    "RagError",
    "SearchHit",
    "Settings",
    "get_settings",
    "is_loopback",
    "make_embeddings",
    "names_paper",
]

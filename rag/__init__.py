"""Grounded question answering over research-paper abstracts.

The public API is what this module exports (documented in docs/api.md); everything else is internal
and may change. The apps (``rag.apps``), the UI (``rag.ui``) and the evaluation harness
(``rag.evaluation``) use only these names; import-linter enforces it.
"""

from rag.answering.evidence import NO_ANSWER
from rag.assistant import Assistant
from rag.corpus import SUPPORTED_SUFFIXES
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
from rag.events import AnswerEvent, ErrorEvent, Event, ItemEvent, ProgressEvent, StatusEvent, TokenEvent
from rag.filters import parse_where
from rag.settings import Settings, check_bind, get_settings
from rag.types import (
    Answer,
    AnswerSentence,
    Chunk,
    Citation,
    IngestReport,
    ListItem,
    MetaValue,
    Paper,
    Query,
    QuestionKind,
    Quote,
    SearchHit,
    Table,
    TableCell,
    TableRow,
    Verdict,
)

__all__ = [
    "NO_ANSWER",
    "SUPPORTED_SUFFIXES",
    "Answer",
    "AnswerEvent",
    "AnswerSentence",
    "Assistant",
    "BackendError",
    "Chunk",
    "Citation",
    "ConfigError",
    "EmptyIndexError",
    "ErrorEvent",
    "Event",
    "IndexCorruptError",
    "IndexMismatchError",
    "IngestError",
    "IngestReport",
    "ItemEvent",
    "ListItem",
    "MetaValue",
    "Paper",
    "ProgressEvent",
    "Query",
    "QuestionError",
    "QuestionKind",
    "Quote",
    "RagError",
    "SearchHit",
    "Settings",
    "StatusEvent",
    "Table",
    "TableCell",
    "TableRow",
    "TokenEvent",
    "Verdict",
    "check_bind",
    "get_settings",
    "parse_where",
]

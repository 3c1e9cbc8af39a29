"""Grounded question answering over research-paper abstracts.

The public API is what this module exports (documented in docs/api.md); everything else is internal
and may change. The apps (``rag.apps``), the UI (``rag.ui``) and the evaluation harness
(``rag.evaluation``) use only these names; import-linter enforces it.
"""

from rag.answering.evidence import NO_ANSWER
from rag.assistant import Assistant
from rag.conversations import Conversation, ConversationStore, Turn
from rag.corpus import SUPPORTED_SUFFIXES, derive_title
from rag.corpus.display import format_display, format_display_html
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
from rag.exports import format_bibtex, format_csv, format_markdown, readable_table
from rag.filters import parse_where
from rag.settings import Settings, check_bind, get_settings
from rag.types import (
    MATCH_HELP,
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
    match_level,
)

__all__ = [
    "MATCH_HELP",
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
    "Conversation",
    "ConversationStore",
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
    "Turn",
    "Verdict",
    "check_bind",
    "derive_title",
    "format_bibtex",
    "format_csv",
    "format_display",
    "format_display_html",
    "format_markdown",
    "get_settings",
    "match_level",
    "parse_where",
    "readable_table",
]

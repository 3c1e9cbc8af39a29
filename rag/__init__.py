"""Grounded question answering over research-paper abstracts.

The public API is what this module exports (documented in docs/api.md); everything else is internal
and may change. The apps (``rag.apps``), the UI (``rag.ui``) and the evaluation harness
(``rag.evaluation``) use only these names; import-linter enforces it.

Names are imported on first use (PEP 562 ``__getattr__``): ``import rag`` alone loads nothing heavy, so
``rag --help`` and ``rag llm status`` start in a fraction of a second; ``rag.Assistant`` loads the stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rag.answering.evidence import NO_ANSWER
    from rag.assistant import Assistant
    from rag.conversations import Conversation, ConversationStore, Turn
    from rag.corpus import SUPPORTED_SUFFIXES, derive_title
    from rag.corpus.display import format_display, format_display_html
    from rag.errors import (
        BackendError,
        BusyError,
        ConfigError,
        EmptyIndexError,
        IndexCorruptError,
        IndexMismatchError,
        IngestError,
        QuestionError,
        RagError,
        StoppedError,
    )
    from rag.events import (
        AnswerEvent,
        CheckEvent,
        CheckStreamEvent,
        ErrorEvent,
        Event,
        ItemEvent,
        ProgressEvent,
        QueuedEvent,
        RowEvent,
        StanceEvent,
        StatusEvent,
        StepEvent,
        Stop,
        TableEvent,
        TableStatusEvent,
        TableStreamEvent,
        TokenEvent,
    )
    from rag.exports import format_bibtex, format_csv, format_markdown, readable_table
    from rag.filters import parse_where
    from rag.settings import Settings, check_bind, get_settings
    from rag.types import (
        MATCH_HELP,
        Answer,
        AnswerSentence,
        Chunk,
        Citation,
        ClaimCheck,
        ClaimVerdict,
        IngestReport,
        ListItem,
        MetaValue,
        Paper,
        PaperStance,
        Query,
        QuestionKind,
        Quote,
        Relevance,
        SearchHit,
        Stance,
        Table,
        TableCell,
        TableRow,
        Verdict,
        format_relevance_legend,
        listed_relevance,
        match_level,
        relevance_of,
        retrieved_relevance,
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
    "BusyError",
    "Chunk",
    "CheckEvent",
    "CheckStreamEvent",
    "Citation",
    "ClaimCheck",
    "ClaimVerdict",
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
    "PaperStance",
    "ProgressEvent",
    "Query",
    "QuestionError",
    "QuestionKind",
    "QueuedEvent",
    "Quote",
    "RagError",
    "Relevance",
    "SearchHit",
    "Settings",
    "Stance",
    "StanceEvent",
    "StatusEvent",
    "StepEvent",
    "Stop",
    "StoppedError",
    "RowEvent",
    "TableEvent",
    "TableStatusEvent",
    "TableStreamEvent",
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
    "format_relevance_legend",
    "get_settings",
    "match_level",
    "parse_where",
    "readable_table",
    "relevance_of",
    "listed_relevance",
    "retrieved_relevance",
]

# Where each public name lives. Kept beside __all__; tests/test_house.py checks that every name resolves.
_HOMES = {
    "NO_ANSWER": "rag.answering.evidence",
    "Assistant": "rag.assistant",
    "SUPPORTED_SUFFIXES": "rag.corpus",
    **dict.fromkeys(
        ["BackendError", "BusyError", "ConfigError", "EmptyIndexError", "IndexCorruptError", "IndexMismatchError"]
        + ["IngestError", "QuestionError", "RagError", "StoppedError"],
        "rag.errors",
    ),
    **dict.fromkeys(
        ["AnswerEvent", "ErrorEvent", "Event", "ItemEvent", "ProgressEvent", "QueuedEvent", "StatusEvent"]
        + ["TokenEvent", "CheckEvent", "CheckStreamEvent", "StanceEvent", "StepEvent", "Stop"]
        + ["RowEvent", "TableEvent", "TableStatusEvent", "TableStreamEvent"],
        "rag.events",
    ),
    "parse_where": "rag.filters",
    **dict.fromkeys(["Conversation", "ConversationStore", "Turn"], "rag.conversations"),
    "derive_title": "rag.corpus",
    **dict.fromkeys(["format_display", "format_display_html"], "rag.corpus.display"),
    **dict.fromkeys(["format_bibtex", "format_csv", "format_markdown", "readable_table"], "rag.exports"),
    **dict.fromkeys(["Settings", "check_bind", "get_settings"], "rag.settings"),
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name, "rag.types" if name in __all__ else None)
    if home is None:
        raise AttributeError(f"module 'rag' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))

"""What the harness scores, read from the records of the public API: :class:`AnswerView`, :class:`TableView`.

The list, comparison and table paths (``Answer.kind``, ``items``, ``checked``, ``collection_size``,
``verdict``; ``Assistant.table`` -> ``Table``) are newer than the single-paper path, and an installed
``rag`` may predate them. Reading them here, once, by name and with the documented defaults (an
answer without ``items`` lists nothing, one without ``verdict`` gives none) lets the harness score any
version and keeps every other module on plain typed values. :data:`NEWER_FIELDS` lists the names
that a ``rag.Answer`` may lack; tests check every other name read here against ``rag.Answer``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag import Assistant, RagError

NEWER_FIELDS = frozenset({"kind", "items", "checked", "collection_size", "verdict", "quoted"})
ANSWER_FIELDS = frozenset({"text", "refused", "citations", "sentences", "timings", "tokens"}) | NEWER_FIELDS


@dataclass(frozen=True)
class ItemView:
    paper_id: str
    quote: str = ""
    score: float | None = None


@dataclass(frozen=True)
class CitationView:
    n: int
    paper_id: str


@dataclass(frozen=True)
class SentenceView:
    text: str
    citations: tuple[int, ...] = ()
    supported: bool = True


@dataclass(frozen=True)
class AnswerView:
    text: str
    refused: bool
    kind: str | None = None
    verdict: str | None = None
    items: list[ItemView] = field(default_factory=list)
    checked: int | None = None
    collection_size: int | None = None
    citations: list[CitationView] = field(default_factory=list)
    sentences: list[SentenceView] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class CellView:
    attribute: str
    value: str | None
    quote: str = ""


@dataclass(frozen=True)
class RowView:
    paper_id: str
    title: str
    cells: list[CellView]

    def cell(self, attribute: str) -> CellView | None:
        """The cell of ``attribute`` (compared case- and whitespace-insensitively)."""
        want = " ".join(attribute.lower().split())
        return next((c for c in self.cells if " ".join(c.attribute.lower().split()) == want), None)


@dataclass(frozen=True)
class TableView:
    attributes: list[str]
    rows: list[RowView]
    checked: int | None = None
    collection_size: int | None = None
    timings: dict[str, float] = field(default_factory=dict)

    def row(self, paper_id: str) -> RowView | None:
        return next((r for r in self.rows if r.paper_id == paper_id), None)


def _opt_int(x: Any) -> int | None:
    return None if x is None else int(x)


def _opt_str(x: Any) -> str | None:
    return None if x is None else str(x)


def view_answer(answer: Any) -> AnswerView:
    """The scored fields of a ``rag.Answer`` (or any object with those attributes)."""
    return AnswerView(
        text=str(answer.text),
        refused=bool(answer.refused),
        kind=_opt_str(getattr(answer, "kind", None)),
        verdict=_opt_str(getattr(answer, "verdict", None)),
        items=[
            ItemView(str(i.paper_id), str(getattr(i, "quote", "")), getattr(i, "score", None))
            for i in getattr(answer, "items", None) or []
        ],
        checked=_opt_int(getattr(answer, "checked", None)),
        collection_size=_opt_int(getattr(answer, "collection_size", None)),
        citations=[CitationView(int(c.n), str(c.paper_id)) for c in answer.citations],
        sentences=[
            SentenceView(str(s.text), tuple(int(n) for n in s.citations), bool(s.supported)) for s in answer.sentences
        ],
        timings={str(k): float(v) for k, v in dict(answer.timings).items()},
        tokens={str(k): int(v) for k, v in dict(answer.tokens).items()},
    )


def view_table(table: Any) -> TableView:
    """The scored fields of a ``rag.Table``: rows by paper, cells by attribute (value None: not stated)."""
    return TableView(
        attributes=[str(a) for a in table.attributes],
        rows=[
            RowView(
                str(r.paper_id),
                str(r.title),
                [CellView(str(c.attribute), _opt_str(c.value), str(c.quote or "")) for c in r.cells],
            )
            for r in table.rows
        ],
        checked=_opt_int(getattr(table, "checked", None)),
        collection_size=_opt_int(getattr(table, "collection_size", None)),
        timings={str(k): float(v) for k, v in dict(getattr(table, "timings", {}) or {}).items()},
    )


def ask_with_kind(assistant: Assistant, question: str, kind: str) -> Any:
    """``assistant.ask(question, kind=kind)``; a :class:`~rag.RagError` when this ``ask`` has no ``kind``."""
    ask: Callable[..., Any] = assistant.ask
    params = inspect.signature(ask).parameters
    if "kind" not in params and not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        raise RagError(f"this rag's Assistant.ask has no kind= argument: cannot ask a {kind!r} question")
    return ask(question, kind=kind)


def make_table(assistant: Assistant, attributes: Sequence[str]) -> Any:
    """``assistant.table(list(attributes))``; a :class:`~rag.RagError` when this rag has no ``Assistant.table``."""
    table: Callable[..., Any] | None = getattr(assistant, "table", None)
    if table is None:
        raise RagError("this rag's Assistant has no table(): cannot score table cells")
    return table(list(attributes))

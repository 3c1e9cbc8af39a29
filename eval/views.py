"""What the harness scores, read from the records of the public API: :class:`AnswerView`, :class:`TableView`.

Scoring reads a few fields of an answer or a table; these small frozen views hold exactly those, so
the metrics and the tests that feed them fakes work on plain typed values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rag import Answer, Assistant, QuestionKind, Table

ANSWER_FIELDS = frozenset(
    {
        "text",
        "refused",
        "citations",
        "sentences",
        "timings",
        "tokens",
        "kind",
        "items",
        "checked",
        "collection_size",
        "verdict",
    }
)


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
        kind=_opt_str(answer.kind),
        verdict=_opt_str(answer.verdict),
        items=[ItemView(str(i.paper_id), str(i.quote), i.score) for i in answer.items],
        checked=_opt_int(answer.checked),
        collection_size=_opt_int(answer.collection_size),
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
        checked=_opt_int(table.checked),
        collection_size=_opt_int(table.collection_size),
        timings={str(k): float(v) for k, v in dict(table.timings).items()},
    )


def ask_with_kind(assistant: Assistant, question: str, kind: QuestionKind) -> Answer:
    """``assistant.ask(question, kind=kind)``: the answer path the gold case is about."""
    return assistant.ask(question, kind=kind)


def make_table(assistant: Assistant, attributes: Sequence[str]) -> Table:
    """``assistant.table(list(attributes))`` over every paper: the gold cells cover the whole collection."""
    return assistant.table(list(attributes), k=max(1, len(assistant.papers())))

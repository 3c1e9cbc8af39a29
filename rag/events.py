"""What :meth:`rag.Assistant.stream` yields: typed events that the CLI, the HTTP API and the UI match on.

A stream that waits for the LLM starts with ``QueuedEvent`` (its place in line, about once a second);
then it is ``StatusEvent`` (retrieval done) -> any number of ``TokenEvent`` (the draft as the model
writes it, markers that resolve to nothing already removed), and for a list question ``ItemEvent`` (a
paper confirmed) and ``ProgressEvent`` (papers judged so far) -> exactly one ``AnswerEvent`` (the verified
answer) or one ``ErrorEvent`` (the question could not be answered; the draft, if any, is disowned).
A bad question raises :class:`~rag.errors.QuestionError` before the first event.

    for event in assistant.stream("How many boxes does WildBox have?"):
        match event:
            case TokenEvent(text=text): print(text, end="")
            case AnswerEvent(answer=answer): print(answer.citations)
            case ErrorEvent(error=error): print(error)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rag.errors import RagError
from rag.types import Answer, ClaimCheck, ListItem, PaperStance, Quote, SearchHit, Table, TableRow


@dataclass(frozen=True)
class QueuedEvent:
    """The question waits for the LLM (every slot is busy): it is ``position`` in line (1: next) and has waited
    ``waited`` seconds. Sent on joining the line and about once a second after; a question that finds a free
    slot, or needs no LLM (extractive answers), gets none."""

    position: int
    waited: float


@dataclass(frozen=True)
class StatusEvent:
    """Retrieval is done: the question as it was searched, the papers found (best first) and the
    sentences the model is about to read (worth showing at once: the answer is built from them)."""

    standalone_question: str
    sources: list[SearchHit]
    evidence: list[Quote] = field(default_factory=list)


@dataclass(frozen=True)
class ItemEvent:
    """A list question: one more paper confirmed to satisfy the criterion (``checked`` of ``total`` judged)."""

    item: ListItem
    checked: int
    total: int


@dataclass(frozen=True)
class ProgressEvent:
    """A list question or a table: ``checked`` of ``total`` candidate papers judged so far."""

    checked: int
    total: int


@dataclass(frozen=True)
class TokenEvent:
    """A piece of the draft answer as the model writes it (unverified until the :class:`AnswerEvent`)."""

    text: str


@dataclass(frozen=True)
class AnswerEvent:
    """The verified answer (or the refusal); always the last event of a successful stream."""

    answer: Answer


@dataclass(frozen=True)
class ErrorEvent:
    """The stream failed after it started (e.g. the LLM endpoint broke off); always the last event."""

    error: RagError


@dataclass(frozen=True)
class StanceEvent:
    """A claim check: one more paper judged (``checked`` of ``total``), in order of relevance."""

    paper: PaperStance
    checked: int
    total: int


@dataclass(frozen=True)
class CheckEvent:
    """The finished claim check; always the last event of a successful :meth:`rag.Assistant.check_stream`."""

    check: ClaimCheck


CheckStreamEvent = QueuedEvent | StatusEvent | StanceEvent | CheckEvent | ErrorEvent

Event = QueuedEvent | StatusEvent | TokenEvent | ItemEvent | ProgressEvent | AnswerEvent | ErrorEvent


@dataclass(frozen=True)
class TableStatusEvent:
    """A table: what is being done now, said in ``text``. ``stage`` "finding" (the candidate papers are being
    retrieved; the first event of a table), "judging" (with a query: candidate ``done`` of ``total`` is judged
    against it) or "filling" (row ``rows`` is being filled; ``done`` of ``total`` papers are judged, or read
    when there is no query)."""

    stage: Literal["finding", "judging", "filling"]
    text: str
    done: int = 0
    total: int = 0
    rows: int = 0


@dataclass(frozen=True)
class RowEvent:
    """A table: one more row filled (``row.n`` is its place in the order rows finish; the final
    :class:`TableEvent` puts rows with nothing stated last and numbers them again)."""

    row: TableRow


@dataclass(frozen=True)
class TableEvent:
    """The finished table; always the last event of a successful :meth:`rag.Assistant.table_stream`."""

    table: Table


TableStreamEvent = QueuedEvent | TableStatusEvent | RowEvent | TableEvent | ErrorEvent

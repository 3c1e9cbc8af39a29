"""What :meth:`rag.Assistant.stream` yields: typed events that the CLI, the HTTP API and the UI match on.

A stream that waits for the LLM starts with ``QueuedEvent`` (its place in line, about once a second).
``StepEvent`` says what is done next, before every step that may take more than a second (searching, judging
paper 3 of 19, writing, verifying), the first one as soon as the work starts. Then it is ``StatusEvent``
(retrieval done) -> any number of ``TokenEvent`` (the draft as the model writes it, markers that resolve to
nothing already removed), and for a list question ``ItemEvent`` (a paper confirmed) and ``ProgressEvent``
(papers judged so far) -> exactly one ``AnswerEvent`` (the verified answer) or one ``ErrorEvent`` (the question
could not be answered; the draft, if any, is disowned). ``Stop`` stops a stream from another thread.
A bad question raises :class:`~rag.errors.QuestionError` before the first event.

    for event in assistant.stream("How many boxes does WildBox have?"):
        match event:
            case TokenEvent(text=text): print(text, end="")
            case AnswerEvent(answer=answer): print(answer.citations)
            case ErrorEvent(error=error): print(error)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
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


#: What an answer is doing (see :class:`StepEvent`).
Step = Literal["condensing", "searching", "reading", "judging", "writing", "verifying"]


@dataclass(frozen=True)
class StepEvent:
    """What the answer does next, sent before every step that may take more than a second, the first one as soon
    as the question has its LLM slot (or at once, for an extractive answer): ``condensing`` a follow-up into a
    standalone question, ``searching`` the abstracts, ``reading`` them (choosing the evidence), ``judging`` (a
    list's or a comparison's paper ``done + 1`` of ``total``; a yes/no verdict, without counts), ``writing``
    (for a comparison, about paper ``done + 1`` of ``total``) and ``verifying`` the citations. ``text`` says it
    in words ("Judging paper 3 of 19…")."""

    step: Step
    done: int | None = None
    total: int | None = None

    @property
    def text(self) -> str:
        counted = self.total is not None and self.done is not None
        of = f" {min((self.done or 0) + 1, self.total or 0)} of {self.total}" if counted else ""
        match self.step:
            case "condensing":
                return "Reading the conversation to rephrase the follow-up…"
            case "searching":
                return "Searching the abstracts…"
            case "reading":
                return f"Reading {self.total} abstracts…" if self.total else "Reading the abstracts…"
            case "judging":
                return f"Judging paper{of}…" if counted else "Weighing the evidence: yes, no or not stated…"
            case "writing":
                return f"Writing about paper{of}…" if counted else "Writing the answer…"
            case "verifying":
                return "Checking every sentence against its source…"
        return self.step  # pragma: no cover


Event = QueuedEvent | StepEvent | StatusEvent | TokenEvent | ItemEvent | ProgressEvent | AnswerEvent | ErrorEvent


class Stop:
    """Stops a running stream from another thread: pass one to :meth:`rag.Assistant.stream` (or ``check_stream``)
    and call :meth:`set` (the UI's Stop button, an HTTP client that went away). The stream's LLM slot is freed at
    once, so the next question in line starts, and the stream ends at its next step with an :class:`ErrorEvent`
    of :class:`~rag.errors.StoppedError` (a model call already running finishes on its own, unread).

        stop = Stop()
        threading.Timer(5, stop.set).start()
        for event in assistant.stream("Which papers use KITTI?", stop=stop): ...
    """

    def __init__(self) -> None:
        self._set = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def set(self) -> None:
        """Stop (idempotent; safe from any thread)."""
        with self._lock:
            if self._set.is_set():
                return
            self._set.set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def is_set(self) -> bool:
        return self._set.is_set()

    def on_set(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` when stopped (at once if it already is): how a stream frees its slot."""
        with self._lock:
            if not self._set.is_set():
                self._callbacks.append(callback)
                return
        callback()


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

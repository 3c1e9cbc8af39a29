"""The composition root: :class:`Assistant` wires settings, index, retrieval and answering."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from langchain_core.embeddings import Embeddings

from rag.answering.check import ClaimChecker
from rag.answering.history import History, normalise_history
from rag.answering.parts import MultiPart, split_question
from rag.answering.paths import PATHS, find_candidates
from rag.answering.pipeline import AnswerPipeline, LLMFailures
from rag.answering.stance import JUDGE_EMBEDDER
from rag.answering.table import TablePath, parse_attributes
from rag.corpus import bundled_corpus, read_corpora
from rag.errors import EmptyIndexError, QuestionError, RagError, StoppedError
from rag.events import (
    AnswerEvent,
    CheckEvent,
    CheckStreamEvent,
    ErrorEvent,
    Event,
    QueuedEvent,
    StatusEvent,
    Stop,
    TableEvent,
    TableStatusEvent,
    TableStreamEvent,
)
from rag.models.local_llm import ensure_model, shared_server
from rag.models.providers import describe_llm_error, is_llm_failure, make_chat_model, make_embeddings
from rag.models.queue import LLMQueue
from rag.settings import Settings, get_settings
from rag.store.adapter import HybridRetriever
from rag.store.index import PaperIndex
from rag.store.retrieve import Retriever
from rag.types import (
    Answer,
    AnswerMode,
    ClaimCheck,
    IngestReport,
    MetaValue,
    Paper,
    Query,
    QuestionKind,
    RetrievalMode,
    SearchHit,
    Table,
    paper_hit,
    paper_matches,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel


_E = TypeVar("_E")


class Assistant:
    """Grounded question answering over an index of abstracts.

    >>> assistant = Assistant.from_settings()            # reads RAG_* env vars and rag.toml
    >>> assistant.ingest(["abstracts.jsonl"])             # doctest: +SKIP
    >>> assistant.search("drone footage of zebras", k=3)  # doctest: +SKIP
    """

    def __init__(
        self, settings: Settings, *, embeddings: Embeddings | None = None, chat_model: BaseChatModel | None = None
    ) -> None:
        self.settings = settings
        self.embeddings = embeddings if embeddings is not None else make_embeddings(settings)
        self._index = PaperIndex(settings, self.embeddings)
        self._retriever = Retriever(self._index, settings.retrieval)
        self._chat_model = chat_model
        self._chat_lock = threading.Lock()
        #: the one limit on concurrent LLM work (RAG_LLM__MAX_CONCURRENT, RAG_LLM__MAX_WAITING): LLM answers and
        #: tables wait in it; extractive answers and searches never do
        self.llm_queue = LLMQueue(settings.llm.max_concurrent, settings.llm.max_waiting)
        self._pipeline_: AnswerPipeline | None = None
        self._pipeline_lock = threading.Lock()
        #: a question's own CPU work (retrieval, evidence, an extractive answer) runs at most one per core, the
        #: rest wait (woken first come, first served, though a newcomer may take a slot just freed): 14 extractive
        #: answers at once in threads each took the others' interpreter lock and cores, and the slowest took 2.5 s
        self._cpu = threading.Semaphore(max(1, os.cpu_count() or 1))

    @property
    def _pipeline(self) -> AnswerPipeline:
        """Built on first use (the chat model and its server start only when an answer needs them)."""
        if self._pipeline_ is None:
            with self._pipeline_lock:
                if self._pipeline_ is None:
                    self._pipeline_ = AnswerPipeline(
                        self.settings,
                        self._retrieve_for_answer,
                        self._embed,
                        self.chat_model,
                        containing=self._retriever.containing,
                        count_papers=self._retriever.count_papers,
                        cpu=self._cpu,
                        failures=LLMFailures(
                            describe=lambda e: describe_llm_error(e, self.settings),
                            is_down=is_llm_failure,
                            restarted=self._embedded_server_died,
                        ),
                        judge_embed=self._judge_embed(),
                        preparations={kind: path.preparation for kind, path in PATHS.items()},
                    )
        return self._pipeline_

    def chat_model(self) -> BaseChatModel:
        """The LLM: the injected one, else built from settings (the embedded server starts on first use)."""
        with self._chat_lock:
            if self._chat_model is None:
                self._chat_model = make_chat_model(self.settings)
            return self._chat_model

    def _embedded_server_died(self) -> bool:
        """True (after a restart) when the embedded llama.cpp server had died; False for remote endpoints."""
        if self.settings.llm.base_url or self._chat_model is None or not hasattr(self._chat_model, "openai_api_base"):
            return False
        server = shared_server(self.settings)
        if server.base_url == self._chat_model.openai_api_base:
            return False
        with self._chat_lock:
            self._chat_model = make_chat_model(self.settings)
        return True

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.embeddings.embed_documents(list(texts)), dtype=np.float32)

    def _judge_embed(self) -> Callable[[list[str]], np.ndarray] | None:
        """The stance judge's embedder when the index uses another one than the judge was fitted with (None: the
        index's): its excerpts, the head's cosine feature and the far rule are MiniLM's, and another model's cosines
        are on another scale. Built on the judge's first use."""
        s = self.settings.embedding
        if (s.provider, s.model) == JUDGE_EMBEDDER:
            return None
        own = self.settings.model_copy(
            update={
                "embedding": s.model_copy(
                    update={
                        "provider": JUDGE_EMBEDDER[0],
                        "model": JUDGE_EMBEDDER[1],
                        "base_url": None,
                        "api_key": None,
                    }
                )
            }
        )
        made: list[Embeddings] = []
        lock = threading.Lock()

        def embed(texts: list[str]) -> np.ndarray:
            with lock:
                if not made:
                    made.append(make_embeddings(own))
            return np.asarray(made[0].embed_documents(list(texts)), dtype=np.float32)

        return embed

    def _retrieve_for_answer(
        self, question: str, k: int | None, where: dict[str, Any] | None, mode: RetrievalMode | None = None
    ) -> list[SearchHit]:
        if not self._retriever.open().exists():  # cached after the first call: no round trip per question
            return []
        return self._retriever.search(question, k=k, where=where, mode=mode)

    @classmethod
    def from_settings(cls, settings: Settings | None = None, **overrides: Any) -> Assistant:
        """Build from ``settings`` (default: :func:`get_settings` with ``overrides``)."""
        return cls(settings or get_settings(**overrides))

    # ------------------------------------------------------------------ corpus
    def ingest(
        self,
        paths: Iterable[str | Path],
        *,
        prune: bool = False,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> IngestReport:
        """Read every file (all of them are validated before anything is written), then index them."""
        papers = read_corpora([Path(p) for p in paths])
        return self.ingest_papers(papers, prune=prune, rebuild=rebuild, progress=progress)

    @staticmethod
    def read(paths: Iterable[str | Path]) -> list[Paper]:
        """Read and validate corpus files (every supported format) without indexing anything."""
        return read_corpora([Path(p) for p in paths])

    def index_texts(self, papers: Sequence[Paper]) -> list[str]:
        """Exactly the texts :meth:`ingest_papers` would embed for ``papers``, one per chunk (a dry run)."""
        return self._index.index_texts(papers)

    def ingest_papers(
        self,
        papers: Sequence[Paper],
        *,
        prune: bool = False,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> IngestReport:
        if rebuild:
            self._index.rebuild()
        return self._index.ingest(papers, prune=prune, progress=progress)

    def export_index(self, path: str | Path) -> dict[str, Any]:
        """Write the index (vectors, texts, metadata) to one portable zip; returns chunks, papers, bytes."""
        return self._index.export(Path(path))

    def import_index(self, path: str | Path, *, replace: bool = False) -> dict[str, Any]:
        """Load an :meth:`export_index` file; embeds nothing. The embedding model and chunking must match."""
        return self._index.import_(Path(path), replace=replace)

    def start_llm(self) -> dict[str, Any]:
        """Start the embedded LLM now rather than on the first question.

        Returns ``{"assemble_s", "start_s", "base_url", "pid"}``; for a configured remote endpoint
        only ``base_url`` (nothing is started).
        """
        if self.settings.llm.base_url:
            return {"base_url": self.settings.llm.base_url}
        s = self.settings
        t0 = time.perf_counter()
        if s.llm.gguf is None:  # the user's own GGUF needs no assembly (shared_server checks it)
            ensure_model(s.llm.model, Path(s.cache_dir).expanduser())
        t1 = time.perf_counter()
        server = shared_server(s)
        t2 = time.perf_counter()
        self.chat_model()
        return {"assemble_s": t1 - t0, "start_s": t2 - t1, "base_url": server.base_url, "pid": server.pid}

    @staticmethod
    def bundled_corpus() -> Path:
        """The NeurIPS 2026 abstracts shipped with the package (the demo corpus)."""
        return bundled_corpus()

    def papers(self) -> list[Paper]:
        return self._index.papers()

    def stats(self) -> dict[str, Any]:
        return self._index.stats()

    # ------------------------------------------------------------------ retrieval
    def search(
        self,
        query: str,
        k: int | None = None,
        where: dict[str, MetaValue] | None = None,
        mode: RetrievalMode | None = None,
    ) -> list[SearchHit]:
        """Papers most relevant to ``query``, best first (one hit per paper)."""
        query = self.check_question(query)
        index = self._retriever.open()
        with self._cpu:
            hits = self._retriever.search(query, k=k, where=where, mode=mode) if index.exists() else []
        if not hits and index.count_chunks() == 0:  # counted only when nothing was found: a round trip less per search
            raise EmptyIndexError(
                f"The index in {self.settings.chroma_url or self.settings.data_dir} is empty: "
                "run `rag ingest PATH` first."
            )
        return hits

    def as_retriever(
        self, k: int | None = None, where: dict[str, Any] | None = None, mode: RetrievalMode | None = None
    ) -> HybridRetriever:
        """A LangChain ``BaseRetriever`` over this assistant's index."""
        return HybridRetriever(retriever=self._retriever, k=k, where=where, mode=mode)

    def check_question(self, question: str) -> str:
        """``question`` stripped, or a :class:`QuestionError` naming why it is refused (empty, or over
        ``answer.max_question_chars``, the limit named): the check every ask, table query and claim gets first,
        public so that a front end can refuse at once, before it shows any progress."""
        q = (question or "").strip()
        if not q:
            raise QuestionError("The question is empty.", code="empty_question")
        limit = self.settings.answer.max_question_chars
        if len(q) > limit:
            raise QuestionError(
                f"The question has {len(q)} characters; the limit is {limit} (RAG_ANSWER__MAX_QUESTION_CHARS).",
                code="question_too_long",
            )
        return q

    # ------------------------------------------------------------------ tables
    def table(
        self,
        attributes: str | Sequence[str],
        *,
        query: str | None = None,
        where: dict[str, MetaValue] | None = None,
        k: int | None = None,
        mode: AnswerMode | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> Table:
        """A paper x attribute table (``"task, dataset, metric"``): one row per paper, one cell per attribute,
        each value with the sentence of the abstract that states it; a value no sentence states is left
        empty ("not stated"), never guessed. Rows that state nothing come last.

        Rows: with a ``query``, the papers that match it (retrieved, then each confirmed by the list judge, as
        a list question's are), at most ``k``; without one, every paper (that matches ``where``) up to ``k``
        (default ``settings.answer.table_max_papers``). ``progress(done, total)`` after each paper judged or
        read. :meth:`table_stream` gives the same as events.
        """
        for event in self.table_stream(attributes, query=query, where=where, k=k, mode=mode):
            match event:
                case TableStatusEvent(done=done, total=total) if progress is not None and total:
                    progress(done, total)
                case TableEvent(table=table):
                    return table
                case ErrorEvent(error=error):
                    raise error
        raise AssertionError("a table stream ends with a TableEvent or an ErrorEvent")  # pragma: no cover

    def table_stream(
        self,
        attributes: str | Sequence[str],
        *,
        query: str | None = None,
        where: dict[str, MetaValue] | None = None,
        k: int | None = None,
        mode: AnswerMode | None = None,
        stop: Stop | None = None,
    ) -> Iterator[TableStreamEvent]:
        """The table of :meth:`table` as events (see :mod:`rag.events`): a :class:`TableStatusEvent` at once
        ("Finding papers…"), then one before each paper judged and each row filled, a :class:`RowEvent` as each
        row is filled, and exactly one :class:`TableEvent` (rows that state nothing last) or one
        :class:`ErrorEvent`. A wait for the LLM yields :class:`QueuedEvent`. Bad attributes, an over-long query
        or an empty index raise :class:`RagError` before the first event. ``stop`` as in :meth:`stream`: the LLM
        slot is freed at once and the stream ends with :class:`StoppedError` (the rows sent so far stand)."""
        try:
            attrs = parse_attributes(attributes)
        except ValueError as e:
            raise QuestionError(str(e), code="bad_attributes") from e
        mode = mode or self.settings.answer.mode
        if mode != "llm":
            raise QuestionError(
                "A table is filled by the LLM (values are copied from each abstract, then checked): "
                "use answer mode 'llm' (RAG_ANSWER__MODE=llm), not 'extractive'.",
                code="table_needs_llm",
            )
        query = self.check_question(query) if query and query.strip() else None
        limit = k or self.settings.answer.table_max_papers
        total = self._retriever.count_papers(where)
        if total == 0:
            raise EmptyIndexError(
                f"The index in {self.settings.chroma_url or self.settings.data_dir} has no papers"
                + (f" matching {where}" if where else "")
                + ": run `rag ingest PATH` first."
            )

        def events() -> Generator[TableStreamEvent, None, None]:
            yield TableStatusEvent("finding", "Finding papers…" if query else "Reading the collection…")
            path = TablePath(self._pipeline)
            found, hits = None, []
            with self._cpu:
                if query:
                    found = find_candidates(self._pipeline, query, where)
                else:
                    hits = [paper_hit(p) for p in self.papers() if paper_matches(p, where)][:limit]
            rows = path.events(
                attrs, query=query, candidates=found, hits=hits, limit=limit, collection_size=total, mode=mode
            )
            yield from self._in_line(rows, stop)

        yield from self._guarded(self._stoppable(events(), stop, "the table"))

    # ------------------------------------------------------------------ answers
    def ask(
        self,
        question: str,
        history: History | None = None,
        k: int | None = None,
        filters: dict[str, MetaValue] | None = None,
        mode: AnswerMode | None = None,
        retrieval_mode: RetrievalMode | None = None,
        temperature: float | None = None,
        kind: QuestionKind | None = None,
    ) -> Answer:
        """A grounded answer whose every claim cites a retrieved abstract, or a refusal.

        ``history`` is the conversation so far (``[("user", ...), ("assistant", ...)]`` or OpenAI-style
        dicts); a follow-up is rewritten into ``Answer.standalone_question`` before retrieval.
        ``retrieval_mode`` ("hybrid", "dense", "bm25") and ``temperature`` override the settings for this question.
        ``kind`` ("lookup", "list", "compare", "yesno") picks the answer path; by default the question's form does
        (``Answer.kind`` says which was taken).
        """
        for event in self.stream(
            question,
            history=history,
            k=k,
            filters=filters,
            mode=mode,
            retrieval_mode=retrieval_mode,
            temperature=temperature,
            kind=kind,
        ):
            if isinstance(event, AnswerEvent):
                return event.answer
            if isinstance(event, ErrorEvent):
                raise event.error
        raise AssertionError("a stream ends with an AnswerEvent or an ErrorEvent")  # pragma: no cover

    def stream(
        self,
        question: str,
        history: History | None = None,
        k: int | None = None,
        filters: dict[str, MetaValue] | None = None,
        mode: AnswerMode | None = None,
        retrieval_mode: RetrievalMode | None = None,
        temperature: float | None = None,
        kind: QuestionKind | None = None,
        stop: Stop | None = None,
    ) -> Iterator[Event]:
        """The answer as typed events (see :mod:`rag.events`): a :class:`StepEvent` before every step that may take
        more than a second (the first as soon as the work starts), one :class:`StatusEvent` once retrieval is done,
        :class:`TokenEvent` as the model writes (markers that resolve to nothing are held back and dropped),
        then exactly one :class:`AnswerEvent` with the verified result, or one :class:`ErrorEvent`.
        ``stop``, set from another thread, frees the LLM slot at once and ends the stream at its next step
        (:class:`~rag.events.Stop`). A bad question raises :class:`QuestionError` before the first event."""
        query = Query(
            question=self.check_question(question),
            history=tuple(normalise_history(history)),
            k=k,
            where=filters,
            mode=mode or self.settings.answer.mode,
            retrieval_mode=retrieval_mode,
            temperature=temperature,
            kind=kind,
        )
        events = self._answer_events(query)
        yield from self._guarded(self._stoppable(self._in_line(events, stop) if query.mode == "llm" else events, stop))

    # ------------------------------------------------------------------ claim check
    def check(self, claim: str, k: int | None = None, filters: dict[str, MetaValue] | None = None) -> ClaimCheck:
        """Check ``claim`` against the ``k`` most relevant papers (default ``check.k``): each paper's stance
        (supports / refutes / not stated) with a calibrated probability and its deciding sentence quoted, and the
        overall verdict (supported / refuted / mixed / not enough evidence) with the counts."""
        for event in self.check_stream(claim, k=k, filters=filters):
            if isinstance(event, CheckEvent):
                return event.check
            if isinstance(event, ErrorEvent):
                raise event.error
        raise AssertionError("a check stream ends with a CheckEvent or an ErrorEvent")  # pragma: no cover

    def check_stream(
        self,
        claim: str,
        k: int | None = None,
        filters: dict[str, MetaValue] | None = None,
        stop: Stop | None = None,
    ) -> Iterator[CheckStreamEvent]:
        """The claim check as events: :class:`StatusEvent` (the papers found), a :class:`StanceEvent` per paper
        as it is judged (in order of relevance), then one :class:`CheckEvent` or one :class:`ErrorEvent`.
        ``stop`` as in :meth:`stream`. A bad claim raises :class:`QuestionError` before the first event."""
        claim = self.check_question(claim)
        t0 = time.perf_counter()
        hits = self.search(claim, k=k or self.settings.check.k, where=filters)
        retrieval = time.perf_counter() - t0
        checker = ClaimChecker(
            self._pipeline.stance,
            min_probability=self.settings.check.min_probability,
            skip_far=self.settings.check.skip_far,
        )

        def events() -> Iterator[CheckStreamEvent]:
            yield StatusEvent(standalone_question=claim, sources=hits)
            yield from checker.events(claim, hits, retrieval=retrieval)

        yield from self._guarded(self._stoppable(self._in_line(events(), stop), stop, "the claim check"))

    def _guarded(self, events: Iterator[_E]) -> Iterator[_E | ErrorEvent]:
        """``events``, a failure after the first one becoming the stream's last event, an :class:`ErrorEvent`."""
        try:
            yield from events
        except RagError as e:
            yield ErrorEvent(e)
        except Exception as e:  # the SDK raises many error types; describe them without secrets
            yield ErrorEvent(describe_llm_error(e, self.settings))

    @staticmethod
    def _stoppable(
        events: Generator[_E, None, None], stop: Stop | None, what: str = "the answer"
    ) -> Generator[_E, None, None]:
        """``events`` until ``stop`` is set: then the inner stream is closed (a model stream being read is
        cut off) and :class:`StoppedError` ("Stopped before ``what`` was finished.") ends the stream; no event
        made after the stop is passed on."""
        if stop is None:
            yield from events
            return
        try:
            for event in events:
                if stop.is_set():
                    break
                yield event
                if stop.is_set():
                    break
            else:
                return
        finally:
            events.close()
        raise StoppedError(f"Stopped before {what} was finished.")

    def _in_line(self, events: Iterator[_E], stop: Stop | None = None) -> Generator[_E | QueuedEvent, None, None]:
        """``events`` once an LLM slot is free, with a :class:`QueuedEvent` about once a second until then.
        ``stop``, when set, releases the slot (or the place in line) at once, from the thread that sets it."""
        with self.llm_queue.enter() as ticket:  # BusyError when the line is full: the stream's ErrorEvent
            if stop is not None:
                stop.on_set(ticket.release)
            if not ticket.granted:
                yield QueuedEvent(ticket.position, 0.0)
                while not ticket.wait(1.0):
                    if ticket.released:
                        raise StoppedError("Stopped while waiting for the LLM.")
                    yield QueuedEvent(ticket.position, round(ticket.waited, 1))
            yield from events

    def _answer_events(self, query: Query) -> Generator[Event, None, None]:
        """Prepare the question (retrieval, evidence, its kind), then answer it by the path of its kind."""
        pipeline = self._pipeline
        parts = split_question(query.question) if query.kind is None else [query.question]
        if len(parts) > 1:  # "What does X do, and how is it evaluated?": each part answered on its own, in order
            yield from MultiPart(pipeline).events(query, parts)
            return
        prep = yield from pipeline.prepare_steps(query)
        yield StatusEvent(standalone_question=prep.standalone, sources=prep.hits, evidence=prep.quotes())
        yield from PATHS[prep.kind](pipeline).events(query, prep)

"""The composition root: :class:`Assistant` wires settings, index, retrieval and answering."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from rag.answering.pipeline import NO_ANSWER, AnswerPipeline, History, MarkerFilter
from rag.errors import EmptyIndexError, QuestionError, RagError
from rag.store.index import IngestReport, PaperIndex
from rag.corpus.ingest import read_corpora
from rag.models.providers import describe_llm_error, is_llm_failure, make_chat_model, make_embeddings
from rag.store.retrieve import HybridRetriever, Mode, Retriever
from rag.settings import Settings, get_settings
from rag.types import Answer, MetaValue, Paper, SearchHit

AnswerMode = Literal["llm", "extractive"]


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
        self.index = PaperIndex(settings, self.embeddings)
        self.retriever = Retriever(self.index, settings.retrieval)
        self._chat_model = chat_model
        self._chat_lock = threading.Lock()
        self.pipeline = AnswerPipeline(settings, self._retrieve_for_answer, self._embed, self.chat_model)

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
        from rag.models.local_llm import get_local_server

        s = self.settings
        server = get_local_server(s.llm.model, Path(s.cache_dir).expanduser(), threads=s.llm.threads, ctx=s.llm.ctx)
        if server.base_url == self._chat_model.openai_api_base:
            return False
        with self._chat_lock:
            self._chat_model = make_chat_model(self.settings)
        return True

    def _embed(self, texts: list[str]) -> np.ndarray:
        return np.asarray(self.embeddings.embed_documents(list(texts)), dtype=np.float32)

    def _retrieve_for_answer(
        self, question: str, k: int | None, where: dict[str, Any] | None, mode: Mode | None = None
    ) -> list[SearchHit]:
        if not self.retriever.open().exists():  # cached after the first call: no round trip per question
            return []
        return self.retriever.search(question, k=k, where=where, mode=mode)

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
        return self.index.index_texts(papers)

    def ingest_papers(
        self,
        papers: Sequence[Paper],
        *,
        prune: bool = False,
        rebuild: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> IngestReport:
        if rebuild:
            self.index.rebuild()
        return self.index.ingest(papers, prune=prune, progress=progress)

    def export_index(self, path: str | Path) -> dict[str, Any]:
        """Write the index (vectors, texts, metadata) to one portable zip; returns chunks, papers, bytes."""
        return self.index.export(Path(path))

    def import_index(self, path: str | Path, *, replace: bool = False) -> dict[str, Any]:
        """Load an :meth:`export_index` file; embeds nothing. The embedding model and chunking must match."""
        return self.index.import_(Path(path), replace=replace)

    def start_llm(self) -> dict[str, Any]:
        """Start the embedded LLM now rather than on the first question.

        Returns ``{"assemble_s", "start_s", "base_url", "pid"}``; for a configured remote endpoint
        only ``base_url`` (nothing is started).
        """
        if self.settings.llm.base_url:
            return {"base_url": self.settings.llm.base_url}
        from rag.models.local_llm import ensure_model, get_local_server

        s = self.settings
        t0 = time.perf_counter()
        ensure_model(s.llm.model, Path(s.cache_dir).expanduser())
        t1 = time.perf_counter()
        server = get_local_server(s.llm.model, Path(s.cache_dir).expanduser(), threads=s.llm.threads, ctx=s.llm.ctx)
        t2 = time.perf_counter()
        self.chat_model()
        return {"assemble_s": t1 - t0, "start_s": t2 - t1, "base_url": server.base_url, "pid": server.pid}

    def prompt_messages(self, question: str, k: int | None = None) -> list[dict[str, str]]:
        """The exact chat messages the LLM would get for ``question`` (OpenAI format), for benchmarks."""
        prep = self.pipeline.prepare({"question": self._check_question(question), "k": k, "mode": "llm"})
        roles = {"system": "system", "human": "user", "ai": "assistant"}
        return [{"role": roles[m.type], "content": str(m.content)} for m in prep.messages]

    @staticmethod
    def bundled_corpus() -> Path:
        """The NeurIPS 2026 abstracts shipped with the package (the demo corpus)."""
        from rag.corpus.ingest import bundled_corpus

        return bundled_corpus()

    def support_of(self, claim: str, question: str, k: int | None = None) -> float:
        """The verifier's support score of ``claim`` against the sources retrieved for ``question``."""
        from rag.answering.verify import verify_answer

        prep = self.pipeline.prepare({"question": question, "k": k, "mode": "extractive", "ignore_relevance": True})
        if not prep.evidence:
            return 0.0
        verdicts = verify_answer(claim, prep.evidence, self._embed, min_support=float("inf"))
        return max((v.support for v in verdicts), default=0.0)

    def papers(self) -> list[Paper]:
        return self.index.papers()

    def stats(self) -> dict[str, Any]:
        return self.index.stats()

    # ------------------------------------------------------------------ retrieval
    def search(
        self,
        query: str,
        k: int | None = None,
        where: dict[str, MetaValue] | None = None,
        mode: Mode | None = None,
    ) -> list[SearchHit]:
        """Papers most relevant to ``query``, best first (one hit per paper)."""
        query = self._check_question(query)
        index = self.retriever.open()
        hits = self.retriever.search(query, k=k, where=where, mode=mode) if index.exists() else []
        if not hits and index.count_chunks() == 0:  # counted only when nothing was found: a round trip less per search
            raise EmptyIndexError(
                f"The index in {self.settings.chroma_url or self.settings.data_dir} is empty: run `rag ingest PATH` first."
            )
        return hits

    def as_retriever(self, k: int | None = None, where: dict[str, Any] | None = None, mode: Mode | None = None) -> HybridRetriever:
        """A LangChain ``BaseRetriever`` over this assistant's index."""
        return HybridRetriever(retriever=self.retriever, k=k, where=where, mode=mode)

    def _check_question(self, question: str) -> str:
        q = (question or "").strip()
        if not q:
            raise QuestionError("The question is empty.")
        limit = self.settings.answer.max_question_chars
        if len(q) > limit:
            raise QuestionError(f"The question has {len(q)} characters; the limit is {limit} (RAG_ANSWER__MAX_QUESTION_CHARS).")
        return q

    # ------------------------------------------------------------------ answers
    def ask(
        self,
        question: str,
        history: History | None = None,
        k: int | None = None,
        filters: dict[str, MetaValue] | None = None,
        mode: AnswerMode | None = None,
        retrieval_mode: Mode | None = None,
        temperature: float | None = None,
    ) -> Answer:
        """A grounded answer whose every claim cites a retrieved abstract, or a refusal.

        ``history`` is the conversation so far (``[("user", ...), ("assistant", ...)]`` or OpenAI-style
        dicts); a follow-up is rewritten into ``Answer.standalone_question`` before retrieval.
        ``retrieval_mode`` ("hybrid", "dense", "bm25") and ``temperature`` override the settings for this question.
        """
        answer: Answer | None = None
        for event in self.stream(
            question, history=history, k=k, filters=filters, mode=mode, retrieval_mode=retrieval_mode, temperature=temperature
        ):
            if event["type"] == "answer":
                answer = event["answer"]
        assert answer is not None  # stream always ends with an answer event
        return answer

    def stream(
        self,
        question: str,
        history: History | None = None,
        k: int | None = None,
        filters: dict[str, MetaValue] | None = None,
        mode: AnswerMode | None = None,
        retrieval_mode: Mode | None = None,
        temperature: float | None = None,
    ) -> Iterator[dict[str, Any]]:
        """Events: ``{"type": "status", "standalone_question", "sources"}`` once retrieval is done, then
        ``{"type": "token", "text"}`` as the model writes (markers that resolve to nothing are held
        back and dropped), then exactly one ``{"type": "answer", "answer": Answer}`` with the verified result."""
        question = self._check_question(question)
        mode = mode or self.settings.answer.mode
        prep = self.pipeline.prepare(
            {"question": question, "history": history, "k": k, "where": filters, "mode": mode, "retrieval_mode": retrieval_mode}
        )
        yield {"type": "status", "standalone_question": prep.standalone, "sources": prep.hits}
        if mode == "extractive":
            raw = self.pipeline.extractive(prep)
            yield {"type": "token", "text": raw}
            yield {"type": "answer", "answer": self.pipeline.finalize(prep, raw, "extractive")}
            return
        if prep.refuse_reason is not None:
            yield {"type": "answer", "answer": self.pipeline.finalize(prep, "", "llm")}
            return
        if prep.llm_error is not None and is_llm_failure(prep.llm_error) and not self._embedded_server_died():
            # the endpoint failed the condense call after the client's retries: asking again would only wait again
            raise describe_llm_error(prep.llm_error, self.settings) from prep.llm_error
        start = time.perf_counter()
        first: float | None = None
        parts: list[str] = []
        usage: dict[str, Any] = {}
        shown = MarkerFilter({e.n for e in prep.evidence})
        for attempt in (1, 2):
            try:
                overrides = {} if temperature is None else {"temperature": temperature}
                for token, meta in self.pipeline.stream_tokens(prep, **overrides):
                    if meta:
                        usage = meta
                    if not token:
                        continue
                    if first is None:
                        first = time.perf_counter() - start
                    parts.append(token)
                    visible = shown.feed(token)
                    if visible:
                        yield {"type": "token", "text": visible}
                break
            except RagError:
                raise
            except Exception as e:  # the SDK raises many error types; describe them without secrets
                if attempt == 1 and not parts and self._embedded_server_died():
                    continue  # restarted: nothing was shown yet, so asking again is safe
                raise describe_llm_error(e, self.settings) from e
        tail = shown.flush()
        if tail:
            yield {"type": "token", "text": tail}
        extra = {
            "timings": {"first_token": first or 0.0, "generation": time.perf_counter() - start},
            "prompt_tokens": int(usage.get("input_tokens") or prep.prompt_tokens),
            "completion_tokens": int(usage.get("output_tokens") or 0),
        }
        yield {"type": "answer", "answer": self.pipeline.finalize(prep, "".join(parts), "llm", extra)}

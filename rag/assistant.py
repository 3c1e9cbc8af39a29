"""The composition root: :class:`Assistant` wires settings, index, retrieval and answering."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from rag.errors import EmptyIndexError, QuestionError
from rag.index import IngestReport, PaperIndex
from rag.ingest import read_corpora
from rag.providers import make_embeddings
from rag.retrieve import HybridRetriever, Mode, Retriever
from rag.settings import Settings, get_settings
from rag.types import MetaValue, Paper, SearchHit


class Assistant:
    """Grounded question answering over an index of abstracts.

    >>> assistant = Assistant.from_settings()            # reads RAG_* env vars and rag.toml
    >>> assistant.ingest(["abstracts.jsonl"])             # doctest: +SKIP
    >>> assistant.search("drone footage of zebras", k=3)  # doctest: +SKIP
    """

    def __init__(self, settings: Settings, *, embeddings: Embeddings | None = None) -> None:
        self.settings = settings
        self.embeddings = embeddings if embeddings is not None else make_embeddings(settings)
        self.index = PaperIndex(settings, self.embeddings)
        self.retriever = Retriever(self.index, settings.retrieval)

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
        if self.index.count_chunks() == 0:
            raise EmptyIndexError(
                f"The index in {self.settings.chroma_url or self.settings.data_dir} is empty: run `rag ingest PATH` first."
            )
        return self.retriever.search(query, k=k, where=where, mode=mode)

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

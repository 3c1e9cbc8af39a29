"""The LangChain ``BaseRetriever`` over :class:`rag.store.retrieve.Retriever`, for LangChain users.

Its own module because LangChain's retriever classes take ~0.5 s to import, which `rag search` should not pay.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from rag.store.retrieve import Mode


class HybridRetriever(BaseRetriever):
    """LangChain retriever over :class:`Retriever`: one ``Document`` per paper, ``page_content`` = best chunk."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    retriever: Any
    k: int | None = None
    where: dict[str, Any] | None = None
    mode: Mode | None = None

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [
            Document(
                page_content=h.text,
                metadata={
                    "paper_id": h.paper_id,
                    "chunk_id": h.chunk_id,
                    "title": h.title,
                    "score": h.score,
                    "start": h.start,
                    "end": h.end,
                    **h.metadata,
                },
            )
            for h in self.retriever.search(query, k=self.k, where=self.where, mode=self.mode)
        ]

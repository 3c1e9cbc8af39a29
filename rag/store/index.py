"""PaperIndex: the chunk collection (:mod:`rag.store.collection`) with its writers as methods.

Reads, the BM25 sync and the writer lock live in :class:`~rag.store.collection.ChunkCollection`; ingest
in :mod:`rag.store.ingest` and export/import in :mod:`rag.store.transfer`, which work on a collection.
This module only composes them, so the writers never import the class that calls them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rag.store.collection import ChunkCollection
from rag.store.ingest import index_texts, ingest
from rag.store.transfer import export_index, import_index
from rag.types import IngestReport, Paper

__all__ = ["ChunkCollection", "PaperIndex"]


class PaperIndex(ChunkCollection):
    """Chunks, embeddings and metadata of a corpus in one Chroma collection, with BM25 beside it."""

    def ingest(
        self,
        papers: Sequence[Paper],
        *,
        prune: bool = False,
        progress: Callable[[int, int], None] | None = None,
        lock_timeout: float = 600.0,
    ) -> IngestReport:
        """Add new papers, replace changed ones, skip unchanged ones; with ``prune`` remove papers not given.

        ``progress(done, total)`` is called as chunks are written.
        """
        return ingest(self, papers, prune=prune, progress=progress, lock_timeout=lock_timeout)

    def index_texts(self, papers: Sequence[Paper]) -> list[str]:
        """The text embedded for every chunk of ``papers``, in ingest order."""
        return index_texts(self.settings, papers)

    def export(self, path: Path) -> dict[str, Any]:
        """Write the whole collection to one portable zip (see :func:`rag.store.transfer.export_index`)."""
        return export_index(self, Path(path))

    def import_(self, path: Path, *, replace: bool = False, lock_timeout: float = 600.0) -> dict[str, Any]:
        """Load an :meth:`export` file (see :func:`rag.store.transfer.import_index`)."""
        return import_index(self, Path(path), replace=replace, lock_timeout=lock_timeout)

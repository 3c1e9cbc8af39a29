"""PaperIndex: one Chroma collection of chunks, with the BM25 store kept in sync beside it.

Chroma is the source of truth. The collection's metadata records the embedding model, its
dimension and the chunking settings (a mismatch is an error, never silent mixing of vectors),
and a ``generation`` id that changes before every write. The BM25 store on local disk records the
generation it was built from; when they differ (another machine wrote to a Chroma server, or an
ingest was killed half-way) BM25 is rebuilt from Chroma's metadata.

Writing lives in :mod:`rag.store.ingest` (ingest) and :mod:`rag.store.transfer` (export/import);
this module owns the collection, the BM25 sync and the one-writer lock, and reads.
"""

from __future__ import annotations

import shutil
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from langchain_core.embeddings import Embeddings

from rag.errors import IndexMismatchError, IngestError
from rag.settings import Settings
from rag.store.bm25 import BM25Input, BM25Store
from rag.store.chroma import ChromaConnection, RawHit, is_not_found, to_chroma_where
from rag.store.metadata import document_of, paper_from_metadata, unpack_metadata
from rag.types import IngestReport, MetaValue, Paper

SCHEMA = 1


class PaperIndex:
    """Chunks, embeddings and metadata of a corpus in one Chroma collection, with BM25 beside it."""

    def __init__(self, settings: Settings, embeddings: Embeddings, *, model_name: str | None = None) -> None:
        self.settings = settings
        self.embeddings = embeddings
        self.model_name = model_name or str(getattr(embeddings, "model_name", None) or settings.embedding.model)
        self.data_dir = Path(settings.data_dir).expanduser()
        self.chroma = ChromaConnection(settings.chroma_url, self.data_dir)
        self._collection: Any = None
        self._bm25: BM25Store | None = None
        self._dimension: int | None = getattr(embeddings, "dimension", None)
        self._writer_thread: int | None = None  # the thread holding the writer lock, if this process holds it

    # ---------------------------------------------------------------- collection
    @property
    def client(self) -> Any:
        return self.chroma.client

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = len(self.embeddings.embed_query("dimension probe"))
        return self._dimension

    def _expected_meta(self) -> dict[str, Any]:
        c = self.settings.chunking
        return {
            "rag_schema": SCHEMA,
            "embedding_model": self.model_name,
            "dimension": self.dimension,
            "chunk_max_tokens": c.max_tokens,
            "chunk_overlap": c.overlap,
            "chunk_encoding": c.encoding,
        }

    def get_collection(self, create: bool) -> Any:
        if self._collection is not None:
            return self._collection
        name = self.settings.collection
        try:
            col = self.client.get_collection(name, embedding_function=None)
        except Exception as e:  # NotFoundError differs across chroma versions / client types
            if not is_not_found(e):
                raise self.chroma.error(f"opening collection {name!r}", e) from e
            if not create:
                return None
            meta = self._expected_meta() | {"generation": uuid.uuid4().hex}
            with self.chroma.guard(f"creating collection {name!r}"):
                col = self.client.create_collection(
                    name, configuration={"hnsw": {"space": "cosine"}}, metadata=meta, embedding_function=None
                )
        self._check_compatible(col.metadata or {})
        self._collection = col
        return col

    def setting_diffs(self, meta: dict[str, Any], what: str) -> str:
        """'key: <what> has X, settings ask for Y; ...' for every build setting ``meta`` disagrees on ('' if none)."""
        expected = self._expected_meta()
        return "; ".join(
            f"{k}: {what} has {meta.get(k)!r}, settings ask for {v!r}" for k, v in expected.items() if meta.get(k) != v
        )

    def _check_compatible(self, meta: dict[str, Any]) -> None:
        diffs = self.setting_diffs(meta, "index")
        if diffs:
            raise IndexMismatchError(
                f"The index in collection {self.settings.collection!r} was built with other settings ("
                + diffs
                + "). Rebuild it with `rag ingest --rebuild PATH...`, or change the settings back."
            )

    @property
    def collection(self) -> Any:
        return self.get_collection(create=True)

    def exists(self) -> bool:
        return self.get_collection(create=False) is not None

    def forget_collection(self) -> None:
        """Open the collection again on next use (another process may have written: a new generation)."""
        self._collection = None

    def generation(self) -> str | None:
        """The collection's generation: changed before every write, so a BM25 store carrying it is in sync."""
        return (self.collection.metadata or {}).get("generation")

    def iter_all(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every chunk (id, unpacked metadata)."""
        for got in self.chroma.pages(self.collection, ["metadatas"], "reading the index"):
            for cid, m in zip(got["ids"], got["metadatas"]):
                yield cid, unpack_metadata(m)

    def rebuild(self) -> None:
        """Delete the collection and the BM25 index; the next ingest starts from scratch.

        If the local Chroma files are too damaged to open at all, the whole local Chroma folder is
        deleted (nothing in it is readable anyway).
        """
        try:
            self.client.delete_collection(self.settings.collection)
        except Exception as e:
            if not is_not_found(e):
                if self.settings.chroma_url:
                    raise self.chroma.error(f"deleting collection {self.settings.collection!r}", e) from e
                self.chroma.delete_local()
        self._collection = None
        self._bm25 = None
        shutil.rmtree(self._bm25_dir(), ignore_errors=True)

    # ---------------------------------------------------------------- BM25 sync
    def _bm25_dir(self) -> Path:
        return self.data_dir / "bm25" / self.settings.collection

    @property
    def bm25(self) -> BM25Store:
        gen = self.generation()
        if self._bm25 is None or self._bm25.generation != gen:
            store = BM25Store(self._bm25_dir())  # another process may have saved the current one
            if store.load() and store.generation == gen:
                self._bm25 = store
            else:
                self._bm25 = self._reader_rebuild()
        return self._bm25

    def _reader_rebuild(self) -> BM25Store:
        """Rebuild BM25 from Chroma for a reader; saved only while holding the writer lock.

        A reader that saved whatever it read while an ingest was writing would leave a snapshot,
        tagged with the current generation, of a half-written index, and the next ingest trusts the
        manifest of a snapshot with the current generation. So it saves only if no ingest is running
        (it takes the writer lock for the rebuild) and otherwise keeps the rebuilt store in memory.
        """
        if self._writer_thread == threading.get_ident():  # the ingest itself, which holds the lock
            return self.rebuild_bm25(self.generation())
        lock = FileLock(str(self._lock_path()))
        try:
            lock.acquire(timeout=0)
        except (Timeout, OSError):
            return self.rebuild_bm25(self.generation(), save=False)
        try:
            self._collection = None  # the generation as it is now that no one can write
            return self.rebuild_bm25(self.generation())
        finally:
            lock.release()

    def rebuild_bm25(self, generation: str | None, *, save: bool = True) -> BM25Store:
        """BM25 (and its manifest) from every chunk in Chroma."""
        chunks = BM25Input()
        for cid, m in self.iter_all():
            chunks.add(cid, document_of(m), m)
        return self.build_bm25(generation, chunks, save=save)

    def build_bm25(self, generation: str | None, chunks: BM25Input, *, save: bool = True) -> BM25Store:
        """A new BM25 store, swapped in whole: searches running on the old one finish undisturbed."""
        store = BM25Store(self._bm25_dir())
        if self._bm25 is not None:
            store.share_stems(self._bm25)
        store.build(chunks.ids, chunks.texts, chunks.meta, generation or "", papers=chunks.papers)
        if save:
            store.save()
        self._bm25 = store
        return store

    # ---------------------------------------------------------------- one writer
    def _lock_path(self) -> Path:
        return self.data_dir / f".ingest-{self.settings.collection}.lock"

    @contextmanager
    def writer_lock(self, timeout: float) -> Iterator[None]:
        """One writer per collection (ingest, import) on this machine; a killed holder releases it."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self._lock_path()))
        try:
            lock.acquire(timeout=timeout)
        except Timeout as e:
            raise IngestError(
                f"Another ingest holds {lock.lock_file}; wait for it to finish (waited {timeout:.0f} s)."
            ) from e
        self._writer_thread = threading.get_ident()
        try:
            yield
        finally:
            self._writer_thread = None
            lock.release()

    # ---------------------------------------------------------------- writing (rag.store.ingest, rag.store.transfer)
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
        from rag.store.ingest import ingest

        return ingest(self, papers, prune=prune, progress=progress, lock_timeout=lock_timeout)

    def index_texts(self, papers: Sequence[Paper]) -> list[str]:
        """The text embedded for every chunk of ``papers``, in ingest order."""
        from rag.store.ingest import index_texts

        return index_texts(self.settings, papers)

    def export(self, path: Path) -> dict[str, Any]:
        """Write the whole collection to one portable zip (see :func:`rag.store.transfer.export_index`)."""
        from rag.store.transfer import export_index

        return export_index(self, Path(path))

    def import_(self, path: Path, *, replace: bool = False, lock_timeout: float = 600.0) -> dict[str, Any]:
        """Load an :meth:`export` file (see :func:`rag.store.transfer.import_index`)."""
        from rag.store.transfer import import_index

        return import_index(self, Path(path), replace=replace, lock_timeout=lock_timeout)

    # ---------------------------------------------------------------- reading
    def count_chunks(self) -> int:
        col = self.get_collection(create=False)
        if col is None:
            return 0
        with self.chroma.guard("counting chunks"):
            return int(col.count())

    def paper_ids(self) -> set[str]:
        if not self.exists():
            return set()
        return {str(m.get("_paper_id")) for _cid, m in self.iter_all()}

    def papers(self) -> list[Paper]:
        """Every indexed paper (rebuilt from the metadata of its first chunk)."""
        if not self.exists():
            return []
        seen: dict[str, Paper] = {}
        for _cid, m in self.iter_all():
            pid = str(m.get("_paper_id"))
            if pid not in seen:
                seen[pid] = paper_from_metadata(m)
        return sorted(seen.values(), key=lambda p: p.paper_id)

    def dense_search(self, vector: Sequence[float], n: int, where: dict[str, MetaValue] | None = None) -> list[RawHit]:
        col = self.get_collection(create=False)
        if col is None:
            return []
        with self.chroma.guard("searching"):
            res = col.query(  # Chroma returns fewer than n_results when it holds fewer: no count() round trip
                query_embeddings=[list(map(float, vector))],
                n_results=n,
                where=to_chroma_where(where),
                include=["metadatas", "distances"],
            )
        return [
            RawHit(cid, 1.0 - float(d), unpack_metadata(m))
            for cid, d, m in zip(res["ids"][0], res["distances"][0], res["metadatas"][0])
        ]

    def nearest(self, vector: Sequence[float], n: int) -> list[tuple[str, float]]:
        """Ids and cosine similarities of the ``n`` nearest chunks, no metadata (cheap even for n in the thousands)."""
        col = self.get_collection(create=False)
        if col is None:
            return []
        with self.chroma.guard("searching"):
            res = col.query(query_embeddings=[list(map(float, vector))], n_results=n, include=["distances"])
        return [(cid, 1.0 - float(d)) for cid, d in zip(res["ids"][0], res["distances"][0])]

    def get_chunks(self, ids: Iterable[str]) -> dict[str, RawHit]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        with self.chroma.guard("reading chunks"):
            got = self.collection.get(ids=ids, include=["metadatas"])
        return {cid: RawHit(cid, 0.0, unpack_metadata(m)) for cid, m in zip(got["ids"], got["metadatas"])}

    def disk_bytes(self) -> int:
        if not self.data_dir.exists():
            return 0
        return sum(f.stat().st_size for f in self.data_dir.rglob("*") if f.is_file())

    def stats(self) -> dict[str, Any]:
        ids = self.paper_ids()
        return {
            "papers": len(ids),
            "chunks": self.count_chunks(),
            "embedding_model": self.model_name,
            "dimension": self.dimension,
            "bytes": self.disk_bytes(),
        }

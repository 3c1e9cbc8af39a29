"""ChunkCollection: one Chroma collection of chunks, with the BM25 store kept in sync beside it.

Chroma is the source of truth. The collection's metadata records the embedding model, its
dimension and the chunking settings (a mismatch is an error, never silent mixing of vectors),
and a ``generation`` id that changes before every write. The BM25 store on local disk records the
generation it was built from; when they differ (another machine wrote to a Chroma server, or an
ingest was killed half-way) BM25 is rebuilt from Chroma's metadata.

Writing lives in :mod:`rag.store.ingest` (ingest) and :mod:`rag.store.transfer` (export/import), which
work on a collection; :class:`rag.store.index.PaperIndex` puts both behind one object. This module owns
the collection, the BM25 sync and the one-writer lock, and reads.
"""

from __future__ import annotations

import shutil
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock, Timeout
from langchain_core.embeddings import Embeddings

from rag.errors import IndexMismatchError, IngestError
from rag.settings import Settings
from rag.store.bm25 import BM25Input, BM25Store
from rag.store.chroma import ChromaConnection, RawHit, is_not_found, to_chroma_where
from rag.store.metadata import document_of, paper_from_metadata, unpack_metadata
from rag.types import MetaValue, Paper

SCHEMA = 1
_UNSEEN = object()  # the stamp before the first query
_REMOTE_CHECK_S = 1.0  # with a Chroma server: re-read the generation at most this often


class ChunkCollection:
    """Chunks, embeddings and metadata of a corpus in one Chroma collection, with BM25 beside it: reads and sync.

    The writing methods are added by :class:`rag.store.index.PaperIndex`, which is what callers build.
    """

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
        #: one lock for this process's readers and its in-process ingest around BM25 and the collection handle,
        #: so a question racing an ingest neither rebuilds BM25 nor reads a half-swapped store
        self.lock = threading.RLock()
        self._stamp_seen: Any = _UNSEEN
        self._checked_at = 0.0

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
        found = meta.get("rag_schema")
        where = f"The index in collection {self.settings.collection!r} ({self.settings.chroma_url or self.data_dir})"
        if isinstance(found, int) and found > SCHEMA:
            raise IndexMismatchError(
                f"{where} was written by a newer build of rag (index format {found}; this build reads {SCHEMA}): "
                "upgrade rag (pip install -U rag-abstracts), or rebuild it for this build with "
                "`rag ingest --rebuild PATH...`."
            )
        if found != SCHEMA:
            raise IndexMismatchError(
                f"{where} was written by an older build of rag (index format {found}; this build reads {SCHEMA}): "
                "rebuild it with `rag ingest --rebuild PATH...` (the embedding cache is kept, so that is fast)."
            )
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
        for cid, m, _v in self.iter_all_vectors(with_vectors=False):
            yield cid, m

    def iter_all_vectors(self, *, with_vectors: bool = True) -> Iterator[tuple[str, dict[str, Any], Any]]:
        """Every chunk (id, unpacked metadata, its vector or None)."""
        include = ["metadatas", "embeddings"] if with_vectors else ["metadatas"]
        for got in self.chroma.pages(self.collection, include, "reading the index"):
            vectors = got.get("embeddings") if with_vectors else None
            if vectors is None:
                vectors = [None] * len(got["ids"])
            for cid, m, v in zip(got["ids"], got["metadatas"], vectors):
                yield cid, unpack_metadata(m), v

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

    def _stamp_path(self) -> Path:
        return self.data_dir / f".generation-{self.settings.collection}"

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self._stamp_path().stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def write_stamp(self, generation: str | None) -> None:
        """Tell readers in other processes that the index changed (they stat this file on every query)."""
        path = self._stamp_path()
        tmp = path.with_name(path.name + f".tmp-{uuid.uuid4().hex[:8]}")
        try:
            tmp.write_text(generation or "")
            tmp.replace(path)  # a new inode: a reader's stat sees the change even within one mtime tick
            self._stamp_seen = self._stamp()  # our own write: this process's readers already see it
        except OSError:  # a read-only data dir: readers then notice only through Chroma (remote) or a restart
            tmp.unlink(missing_ok=True)

    def refresh(self) -> None:
        """Notice another process's writes, cheaply enough to run before every query.

        A local writer replaces a stamp file when it starts and when it finishes; a reader stats it (a few
        microseconds) and, when it changed, re-reads the collection's generation (and so BM25, the
        metadata and the vectors on their next use) and reopens its Chroma client, whose in-memory
        vector index would otherwise not see another process's writes. With a Chroma server the
        generation is also re-read at most once a second, for writers on other machines.
        """
        stamp = self._stamp()
        now = time.monotonic()
        remote_due = bool(self.settings.chroma_url) and now - self._checked_at >= _REMOTE_CHECK_S
        if stamp == self._stamp_seen and not remote_due:
            return
        with self.lock:
            if stamp != self._stamp_seen:
                if self._stamp_seen is not _UNSEEN and self._writer_thread is None and not self.settings.chroma_url:
                    self.chroma.reopen()
                self._stamp_seen = stamp
            self._checked_at = now
            self._collection = None

    @property
    def bm25(self) -> BM25Store:
        """The BM25 store (with the metadata and vectors) of the collection's current generation.

        While an ingest writes (in this process, or another one holding the writer lock) readers keep the
        snapshot they have, consistent if a little old, instead of rebuilding from a half-written Chroma;
        the writer's finished store is picked up on the next query after it.
        """
        with self.lock:
            gen = self.generation()
            if self._bm25 is not None and self._bm25.generation == gen:
                return self._bm25
            mine = self._writer_thread == threading.get_ident()
            if not mine and self._bm25 is not None and self._writer_busy():
                return self._bm25
            store = BM25Store(self._bm25_dir())  # another process may have saved the current one
            if store.load() and (store.generation == gen or (not mine and self._writer_busy())):
                self._bm25 = store
            else:
                self._bm25 = self._reader_rebuild()
            return self._bm25

    def _writer_busy(self) -> bool:
        """True while an ingest (this process's other thread, or another process) holds the writer lock."""
        if self._writer_thread is not None:
            return self._writer_thread != threading.get_ident()
        lock = FileLock(str(self._lock_path()))
        try:
            lock.acquire(timeout=0)
        except (Timeout, OSError):
            return True
        lock.release()
        return False

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
        """BM25 (its manifest, the metadata and the vectors) from every chunk in Chroma."""
        chunks = BM25Input()
        for cid, m, v in self.iter_all_vectors():
            chunks.add(cid, document_of(m), m, None if v is None else np.asarray(v, dtype=np.float32))
        return self.build_bm25(generation, chunks, save=save)

    def build_bm25(self, generation: str | None, chunks: BM25Input, *, save: bool = True) -> BM25Store:
        """A new BM25 store, swapped in whole: searches running on the old one finish undisturbed."""
        store = BM25Store(self._bm25_dir())
        if self._bm25 is not None:
            store.share_stems(self._bm25)
        store.build(
            chunks.ids,
            chunks.texts,
            chunks.meta,
            generation or "",
            papers=chunks.papers,
            vectors=chunks.vector_matrix(),
        )
        if save:
            store.save()
            self.write_stamp(generation)
        with self.lock:
            self._bm25 = store
        return store

    def update_bm25(
        self, generation: str, base: BM25Store, remove: Sequence[str], add: BM25Input, forget_papers: Iterable[str]
    ) -> BM25Store:
        """``base`` with the chunks ``remove`` deleted and ``add`` appended (no Chroma read, no re-tokenising of
        unchanged chunks), saved and swapped in whole."""
        store = BM25Store(self._bm25_dir())
        store.share_stems(base)
        store.load_from(base)
        store.update(remove, add, generation, forget_papers)
        store.save()
        self.write_stamp(generation)
        with self.lock:
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

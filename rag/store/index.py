"""PaperIndex: the only code that talks to Chroma, plus the BM25 index kept in sync beside it.

Chroma is the source of truth. The collection's metadata records the embedding model, its
dimension and the chunking settings (a mismatch is an error, never silent mixing of vectors),
and a ``generation`` id that changes before every write. The BM25 index on local disk stores the
generation it was built from; when they differ (another machine wrote to a Chroma server, or an
ingest was killed half-way) BM25 is rebuilt from Chroma's metadata. Chroma stores no `documents`
(its full-text index on them tripled the cost of a write); :func:`document_of` rebuilds the indexed
text of a chunk from its metadata.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import shutil
import sys
import threading
import time
import uuid
import zipfile
from contextlib import contextmanager
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import bm25s
import chromadb
import numpy as np
import Stemmer
from filelock import FileLock, Timeout
from langchain_core.embeddings import Embeddings

from rag.corpus.chunking import chunk_paper
from rag.corpus.ingest import normalise_text
from rag.errors import BackendError, EmptyIndexError, IndexCorruptError, IndexMismatchError, IngestError, RagError
from rag.settings import Settings
from rag.types import Chunk, MetaValue, Paper

SCHEMA = 1
EXPORT_FORMAT = "rag-abstracts-index"
_BATCH = 256  # chunks per embedding call (and per progress report)
_WRITE_BATCH = 1024  # chunks per Chroma upsert: bigger writes were ~13 % faster than 256
_PACKED = "_p"  # metadata key holding the packed internal fields (see pack_metadata)
# Internal metadata keys start with "_" so that a corpus' own keys (venue, year, track, ...) never collide.
_INTERNAL = ("_paper_id", "_chunk", "_nchunks", "_start", "_end", "_title", "_title_derived", "_abstract", "_hash", "_source", "_authors")


def paper_hash(paper: Paper) -> str:
    """Changes whenever anything indexed about the paper changes."""
    blob = json.dumps(
        [paper.title, paper.abstract, list(paper.authors), paper.venue, paper.year, paper.url, paper.metadata],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def index_text(paper: Paper, chunk: Chunk) -> str:
    """What is embedded and BM25-indexed for a chunk: the given title (not a derived one) and the normalised text."""
    return _index_text(paper.title, paper.title_derived, chunk.text)


def document_of(meta: dict[str, Any]) -> str:
    """:func:`index_text` of a stored chunk, rebuilt from its metadata (abstract, offsets, title)."""
    text = str(meta.get("_abstract", ""))[int(meta.get("_start", 0)) : int(meta.get("_end", 0))]
    return _index_text(str(meta.get("_title", "")), bool(meta.get("_title_derived", False)), text)


def _index_text(title: str, title_derived: bool, text: str) -> str:
    body = normalise_text(text)
    return body if title_derived else f"{normalise_text(title)}. {body}"


@dataclass
class IngestReport:
    """What one ingest did."""

    papers_seen: int = 0
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)  # papers left incomplete by an interrupted ingest, rewritten
    chunks_written: int = 0
    embedded: int = 0  # texts the embedding model actually computed (cache misses)

    def to_json(self) -> dict[str, Any]:
        return {
            "papers_seen": self.papers_seen,
            "added": len(self.added),
            "updated": len(self.updated),
            "unchanged": self.unchanged,
            "removed": len(self.removed),
            "repaired": len(self.repaired),
            "chunks_written": self.chunks_written,
            "embedded": self.embedded,
        }


@dataclass
class _BM25Input:
    """What a BM25 store and its manifest are built from, one chunk at a time."""

    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    meta: list[dict[str, Any]] = field(default_factory=list)  # the corpus' own keys only: what filters need
    papers: dict[str, tuple[list[str], list[int]]] = field(default_factory=dict)  # id -> (hashes, chunk counts)

    def add(self, chunk_id: str, text: str, meta: dict[str, Any]) -> None:
        self.ids.append(chunk_id)
        self.texts.append(text)
        self.meta.append({k: v for k, v in meta.items() if not k.startswith("_")})
        hashes, counts = self.papers.setdefault(str(meta.get("_paper_id")), ([], []))
        if str(meta.get("_hash")) not in hashes:
            hashes.append(str(meta.get("_hash")))
        if int(meta.get("_nchunks", -1)) not in counts:
            counts.append(int(meta.get("_nchunks", -1)))


@dataclass
class RawHit:
    chunk_id: str
    score: float
    metadata: dict[str, Any]


_TOKEN = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


class BM25Store:
    """bm25s over chunk texts, saved under ``dir`` with the chunk ids and filterable metadata."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self._stemmer = Stemmer.Stemmer("english")
        self._stop = set(bm25s.stopwords.STOPWORDS_EN)
        self._stems: dict[str, str] = {}
        self.generation: str | None = None
        self.papers: dict[str, tuple[list[str], list[int]]] = {}
        self.ids: list[str] = []
        self.meta: list[dict[str, Any]] = []
        self._bm25: bm25s.BM25 | None = None
        self._vocab: set[str] = set()
        self._columns: dict[str, tuple[dict[Any, int], np.ndarray]] = {}  # metadata key -> value codes, code per chunk
        self._rows: dict[str, int] | None = None
        self._types: dict[str, set[type]] = {}  # metadata key -> types of its values (see exact_mask)

    def tokenize(self, text: str) -> list[str]:
        """Lower-cased words minus English stopwords, Porter-stemmed.

        Stems are memoised and shared: a corpus repeats its words, and 100k chunks tokenised at once
        would otherwise hold ~14M separate string objects (~0.8 GB) while BM25 is built.
        """
        words = [w for w in _TOKEN.findall(text.lower()) if w not in self._stop]
        stems = self._stems
        unseen = [w for w in dict.fromkeys(words) if w not in stems]
        if unseen:
            stems.update(zip(unseen, map(sys.intern, self._stemmer.stemWords(unseen))))
        return [stems[w] for w in words]

    def build(
        self, ids: list[str], texts: list[str], meta: list[dict[str, Any]], generation: str,
        papers: dict[str, tuple[list[str], list[int]]],
    ) -> None:
        """Index ``texts``; ``papers`` is the manifest: paper id -> (hashes, announced chunk counts) on its chunks."""
        self.ids, self.meta, self.generation, self.papers = ids, meta, generation, papers
        self._columns, self._rows, self._types = {}, None, {}
        if ids:
            bm = bm25s.BM25()
            bm.index([self.tokenize(t) or ["_empty_"] for t in texts], show_progress=False)
            self._bm25 = bm
            self._vocab = set(bm.vocab_dict)
        else:
            self._bm25, self._vocab = None, set()

    def save(self) -> None:
        tmp = self.dir.with_name(self.dir.name + f".tmp-{uuid.uuid4().hex[:8]}")
        tmp.mkdir(parents=True)
        if self._bm25 is not None:
            self._bm25.save(str(tmp / "bm25"), show_progress=False)
        (tmp / "chunks.json").write_text(
            json.dumps({"generation": self.generation, "ids": self.ids, "meta": self.meta, "papers": self.papers})
        )
        old = self.dir.with_name(self.dir.name + ".old")
        if self.dir.exists():
            shutil.rmtree(old, ignore_errors=True)
            self.dir.rename(old)
        tmp.rename(self.dir)
        shutil.rmtree(old, ignore_errors=True)

    def load(self) -> bool:
        """Load from disk; False when absent or unreadable (the caller rebuilds)."""
        try:
            data = json.loads((self.dir / "chunks.json").read_text())
            self.ids, self.meta, self.generation = data["ids"], data["meta"], data["generation"]
            self.papers = data["papers"]  # absent in stores saved before the manifest: rebuilt once
            self._columns, self._rows, self._types = {}, None, {}
            self._bm25 = bm25s.BM25.load(str(self.dir / "bm25"), show_progress=False) if self.ids else None
            self._vocab = set(self._bm25.vocab_dict) if self._bm25 is not None else set()
            return True
        except (OSError, ValueError, KeyError):
            self.ids, self.meta, self.generation, self._bm25, self.papers = [], [], None, None, {}
            return False

    def paper_states(self) -> dict[str, tuple[set[str], list[str], set[int]]]:
        """paper id -> (hashes on its chunks, its chunk ids, chunk counts its chunks announce).

        This is what an ingest compares against: with it, re-ingesting unchanged data reads no
        metadata back from Chroma.
        """
        states = {pid: (set(hashes), [], set(counts)) for pid, (hashes, counts) in self.papers.items()}
        for cid in self.ids:
            states.setdefault(cid.rsplit("#", 1)[0], (set(), [], set()))[1].append(cid)
        return states

    def mask(self, where: dict[str, MetaValue]) -> np.ndarray:
        """1.0 for every chunk whose metadata equals all of ``where``, else 0.0 (float32, one per chunk).

        Each metadata key is turned once into an integer code per chunk, so a filter costs a few
        vectorised comparisons rather than a Python loop over every chunk (100k+ at scale).
        """
        keep = np.ones(len(self.ids), dtype=bool)
        for key, value in where.items():
            if key not in self._columns:
                codes: dict[Any, int] = {}
                column = np.fromiter((codes.setdefault(m.get(key), len(codes)) for m in self.meta), dtype=np.int32, count=len(self.meta))
                self._columns[key] = (codes, column)
            codes, column = self._columns[key]
            keep &= column == codes.get(value, -1)  # equal numbers hash equal: 2018 finds 2018.0, as == does
        return keep.astype(np.float32)

    def share_stems(self, other: BM25Store) -> None:
        """Reuse another store's memoised stems (a rebuild then stems only words it has not seen)."""
        self._stems = other._stems

    def exact_mask(self, where: dict[str, Any]) -> np.ndarray | None:
        """Boolean :meth:`mask` where it is sure to agree with Chroma's ``where`` (equality, same type),
        else None: a non-scalar filter, or a column whose values are not all of the filter value's type
        (:meth:`mask` lets 2018 match 2018.0 and True match 1; Chroma does not)."""
        for key, value in where.items():
            if type(value) not in (str, int, float, bool):
                return None
            if key not in self._types:
                self._types[key] = {type(m[key]) for m in self.meta if m.get(key) is not None}
            if self._types[key] - {type(value)}:
                return None
        return self.mask(where) > 0

    def rows(self) -> dict[str, int]:
        """Chunk id -> its position in :attr:`ids` (and in every :meth:`mask`)."""
        if self._rows is None:  # reset by build and load
            self._rows = {cid: i for i, cid in enumerate(self.ids)}
        return self._rows

    def search(self, query: str, n: int, where: dict[str, MetaValue] | None = None) -> list[tuple[str, float]]:
        if self._bm25 is None:
            return []
        tokens = [t for t in self.tokenize(query) if t in self._vocab]
        if not tokens:
            return []
        mask = None
        if where:
            mask = self.mask(where)
            if not mask.any():
                return []
        k = min(n, len(self.ids))
        docs, scores = self._bm25.retrieve([tokens], k=k, weight_mask=mask, show_progress=False, n_threads=1)
        return [(self.ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0]) if s > 0]


def to_chroma_where(where: dict[str, MetaValue] | None) -> dict[str, Any] | None:
    if not where:
        return None
    clauses = [{k: v} for k, v in where.items()]
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


class PaperIndex:
    """Chunks, embeddings and metadata of a corpus in one Chroma collection, with BM25 beside it."""

    WRITE_BATCH = _WRITE_BATCH

    def __init__(self, settings: Settings, embeddings: Embeddings, *, model_name: str | None = None) -> None:
        self.settings = settings
        self.embeddings = embeddings
        self.model_name = model_name or str(getattr(embeddings, "model_name", None) or settings.embedding.model)
        self.data_dir = Path(settings.data_dir).expanduser()
        self._client: Any = None
        self._collection: Any = None
        self._bm25: BM25Store | None = None
        self._dimension: int | None = getattr(embeddings, "dimension", None)
        self._writer_thread: int | None = None  # the thread holding the writer lock, if this process holds it

    # ---------------------------------------------------------------- connection
    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
        url = self.settings.chroma_url
        try:
            if url:
                u = urlparse(url)
                client = chromadb.HttpClient(
                    host=u.hostname or "127.0.0.1", port=u.port or (443 if u.scheme == "https" else 8000), ssl=u.scheme == "https"
                )
                client.heartbeat()
                return client
            self.data_dir.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(self.data_dir / "chroma"))
        except Exception as e:  # chromadb raises many types (ValueError, ConnectionError, its own errors)
            where = f"Chroma server at {url}" if url else f"Chroma data in {self.data_dir / 'chroma'}"
            hint = "is `chroma run` started there?" if url else "delete that folder and run `rag ingest --rebuild PATH`"
            cls = BackendError if url else IndexCorruptError
            raise cls(f"Cannot open the {where}: {e} ({hint})") from e

    def _chroma_error(self, what: str, e: Exception) -> RagError:
        """A one-line error for a Chroma failure during ``what`` that says what to do."""
        url = self.settings.chroma_url
        if url:
            return BackendError(f"The Chroma server at {url} failed while {what}: {e} (is `chroma run` up there?)")
        return IndexCorruptError(
            f"The index in {self.data_dir / 'chroma'} failed while {what}: {e}. If it is damaged, rebuild it: "
            "`rag ingest --rebuild PATH...` (deletes and re-creates it; cached embeddings make that fast)."
        )

    @contextmanager
    def _chroma(self, what: str) -> Iterator[None]:
        try:
            yield
        except RagError:
            raise
        except Exception as e:  # chromadb raises many types (its own errors, ValueError, httpx, sqlite3, OSError)
            raise self._chroma_error(what, e) from e

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

    def _get_collection(self, create: bool) -> Any:
        if self._collection is not None:
            return self._collection
        name = self.settings.collection
        try:
            col = self.client.get_collection(name, embedding_function=None)
        except RagError:
            raise
        except Exception as e:  # NotFoundError differs across chroma versions / client types
            if "does not exist" not in str(e) and "not found" not in str(e).lower():
                raise self._chroma_error(f"opening collection {name!r}", e) from e
            if not create:
                return None
            meta = self._expected_meta() | {"generation": uuid.uuid4().hex}
            with self._chroma(f"creating collection {name!r}"):
                col = self.client.create_collection(
                    name, configuration={"hnsw": {"space": "cosine"}}, metadata=meta, embedding_function=None
                )
        self._check_compatible(col.metadata or {})
        self._collection = col
        return col

    def _setting_diffs(self, meta: dict[str, Any], what: str) -> str:
        """'key: <what> has X, settings ask for Y; ...' for every build setting ``meta`` disagrees on ('' if none)."""
        expected = self._expected_meta()
        return "; ".join(f"{k}: {what} has {meta.get(k)!r}, settings ask for {v!r}" for k, v in expected.items() if meta.get(k) != v)

    def _check_compatible(self, meta: dict[str, Any]) -> None:
        diffs = self._setting_diffs(meta, "index")
        if diffs:
            raise IndexMismatchError(
                f"The index in collection {self.settings.collection!r} was built with other settings ("
                + diffs
                + "). Rebuild it with `rag ingest --rebuild PATH...`, or change the settings back."
            )

    @property
    def collection(self) -> Any:
        return self._get_collection(create=True)

    def exists(self) -> bool:
        return self._get_collection(create=False) is not None

    # ---------------------------------------------------------------- BM25 sync
    def _bm25_dir(self) -> Path:
        return self.data_dir / "bm25" / self.settings.collection

    def _generation(self) -> str | None:
        """The collection's generation: changed before every write, so a BM25 store carrying it is in sync."""
        return (self.collection.metadata or {}).get("generation")

    @property
    def bm25(self) -> BM25Store:
        gen = self._generation()
        if self._bm25 is None or self._bm25.generation != gen:
            store = BM25Store(self._bm25_dir())  # another process may have saved the current one
            if store.load() and store.generation == gen:
                self._bm25 = store
            else:
                self._reader_rebuild()
        return self._bm25

    def _reader_rebuild(self) -> BM25Store:
        """Rebuild BM25 from Chroma for a reader; saved only while holding the writer lock.

        A reader that saved whatever it read while an ingest was writing would leave a snapshot,
        tagged with the current generation, of a half-written index, and the next ingest trusts the
        manifest of a snapshot with the current generation. So it saves only if no ingest is running
        (it takes the writer lock for the rebuild) and otherwise keeps the rebuilt store in memory.
        """
        if self._writer_thread == threading.get_ident():  # the ingest itself, which holds the lock
            return self._rebuild_bm25(self._generation())
        lock = FileLock(str(self._lock_path()))
        try:
            lock.acquire(timeout=0)
        except (Timeout, OSError):
            return self._rebuild_bm25(self._generation(), save=False)
        try:
            self._collection = None  # the generation as it is now that no one can write
            return self._rebuild_bm25(self._generation())
        finally:
            lock.release()

    def _rebuild_bm25(self, generation: str | None, *, save: bool = True) -> BM25Store:
        """BM25 (and its manifest) from every chunk in Chroma."""
        chunks = _BM25Input()
        for cid, m in self._iter_all():
            chunks.add(cid, document_of(m), m)
        return self._build_bm25(generation, chunks, save=save)

    def _build_bm25(self, generation: str | None, chunks: _BM25Input, *, save: bool = True) -> BM25Store:
        """A new BM25 store, swapped in whole: searches running on the old one finish undisturbed."""
        store = BM25Store(self._bm25_dir())
        if self._bm25 is not None:
            store.share_stems(self._bm25)
        store.build(chunks.ids, chunks.texts, chunks.meta, generation or "", papers=chunks.papers)
        if save:
            store.save()
        self._bm25 = store
        return store

    def _iter_all(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every chunk (id, metadata), paged so 100k chunks don't load at once."""
        col = self.collection
        offset, page = 0, 5000
        while True:
            with self._chroma("reading the index"):
                got = col.get(include=["metadatas"], limit=page, offset=offset)
            ids = got["ids"]
            if not ids:
                return
            for cid, m in zip(ids, got["metadatas"]):
                yield cid, unpack_metadata(m)
            offset += len(ids)

    # ---------------------------------------------------------------- writing
    def rebuild(self) -> None:
        """Delete the collection and the BM25 index; the next ingest starts from scratch.

        If the local Chroma files are too damaged to open at all, the whole local Chroma folder is
        deleted (nothing in it is readable anyway).
        """
        try:
            self.client.delete_collection(self.settings.collection)
        except Exception as e:
            if "does not exist" not in str(e) and "not found" not in str(e).lower():
                if self.settings.chroma_url:
                    raise self._chroma_error(f"deleting collection {self.settings.collection!r}", e) from e
                self._delete_local_chroma()
        self._collection = None
        self._bm25 = None
        shutil.rmtree(self._bm25_dir(), ignore_errors=True)

    def _delete_local_chroma(self) -> None:
        """Remove the local Chroma folder and forget chromadb's in-process client for it."""
        from chromadb.api.shared_system_client import SharedSystemClient

        path = self.data_dir / "chroma"
        shutil.rmtree(path, ignore_errors=True)
        SharedSystemClient._identifier_to_system.pop(str(path), None)  # else the next client reuses the dead one
        self._client = None

    def ingest(
        self,
        papers: Sequence[Paper],
        *,
        prune: bool = False,
        progress: Callable[[int, int], None] | None = None,
        lock_timeout: float = 600.0,
    ) -> IngestReport:
        """Add new papers, replace changed ones, skip unchanged ones; with ``prune`` remove papers not given.

        Embeddings go through the embeddings object (wrap it in a cache to skip recomputation).
        ``progress(done, total)`` is called as chunks are written.
        """
        with self._writer_lock(lock_timeout):
            return self._ingest_locked(papers, prune=prune, progress=progress)

    def _max_batch(self) -> int:
        """Most records Chroma takes in one write (a server may be configured lower than ours)."""
        try:
            return max(1, int(self.client.get_max_batch_size()))
        except Exception:  # an older server without the endpoint: ours is well under its default
            return _WRITE_BATCH

    def _lock_path(self) -> Path:
        return self.data_dir / f".ingest-{self.settings.collection}.lock"

    @contextmanager
    def _writer_lock(self, timeout: float) -> Iterator[None]:
        """One writer per collection (ingest, import) on this machine; a killed holder releases it."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(self._lock_path()))
        try:
            lock.acquire(timeout=timeout)
        except Timeout as e:
            raise IngestError(f"Another ingest holds {lock.lock_file}; wait for it to finish (waited {timeout:.0f} s).") from e
        self._writer_thread = threading.get_ident()
        try:
            yield
        finally:
            self._writer_thread = None
            lock.release()

    def _ingest_locked(
        self, papers: Sequence[Paper], *, prune: bool, progress: Callable[[int, int], None] | None
    ) -> IngestReport:
        report = IngestReport(papers_seen=len(papers))
        self._collection = None  # another process may have written since we last looked
        col = self.collection
        # What is indexed now, from BM25's manifest (read from Chroma only when BM25 is out of sync,
        # or holds another number of chunks than Chroma: someone changed Chroma behind our back).
        store = self.bm25
        with self._chroma("counting chunks"):
            n_chunks = int(col.count())
        if len(store.ids) != n_chunks:
            store = self._rebuild_bm25(self._generation())
        existing = store.paper_states()
        fresh = n_chunks == 0

        to_write: list[Paper] = []
        stale_chunks: list[str] = []
        given = set()
        for p in papers:
            given.add(p.paper_id)
            old = existing.get(p.paper_id)
            if old is None:
                report.added.append(p.paper_id)
                to_write.append(p)
                continue
            hashes, ids, counts = old
            if hashes != {paper_hash(p)}:
                report.updated.append(p.paper_id)
            elif counts != {len(ids)}:
                # An ingest killed half-way through this paper left some of its chunks: write it again.
                report.repaired.append(p.paper_id)
            else:
                report.unchanged += 1
                continue
            stale_chunks.extend(ids)
            to_write.append(p)
        if prune:
            for pid, (_h, ids, _n) in existing.items():
                if pid not in given:
                    report.removed.append(pid)
                    stale_chunks.extend(ids)
        if not to_write and not stale_chunks:  # BM25 was brought in sync above
            return report

        # Mark the index as changing before touching it: a crash from here on leaves a generation
        # that no BM25 snapshot carries, so the next reader rebuilds BM25 from Chroma.
        generation = uuid.uuid4().hex
        with self._chroma("starting to write"):
            col.modify(metadata=dict(col.metadata or {}) | {"generation": generation})
            for i in range(0, len(stale_chunks), 5000):
                col.delete(ids=stale_chunks[i : i + 5000])

        rows = self._chunk_rows(to_write)
        total = len(rows)
        computed_before = getattr(self.embeddings, "computed", None)
        kept = _BM25Input()  # on a first ingest BM25 is built from the texts in hand, not read back from Chroma
        max_batch = min(_WRITE_BATCH, self._max_batch())
        pending: list[tuple[str, Any, dict[str, Any]]] = []
        last_flush = time.monotonic()

        def flush() -> None:
            nonlocal last_flush
            for i in range(0, len(pending), max_batch):
                part = pending[i : i + max_batch]
                with self._chroma("writing chunks"):
                    col.upsert(
                        ids=[cid for cid, _v, _m in part],
                        # No `documents`: Chroma's full-text index on them made writes ~3x slower, and the
                        # text is rebuilt from the metadata (abstract + offsets + title) when BM25 needs it.
                        embeddings=np.asarray([v for _c, v, _m in part], dtype=np.float32),
                        metadatas=[pack_metadata(m) for _c, _v, m in part],
                    )
            report.chunks_written += len(pending)
            pending.clear()
            last_flush = time.monotonic()
            if progress:
                progress(report.chunks_written, total)

        for i in range(0, total, _BATCH):
            batch = rows[i : i + _BATCH]
            texts = [index_text(p, c) for p, c, _n in batch]
            try:
                vectors = self.embeddings.embed_documents(texts)
            except Exception as e:  # a remote embeddings endpoint can fail in many ways
                if pending:  # keep what was embedded: the rerun finds those chunks written
                    flush()
                raise BackendError(f"Embedding failed after {i} of {total} chunks; rerun the ingest to continue. {e}") from e
            if len(vectors) != len(texts):
                raise BackendError(f"The embedder returned {len(vectors)} vectors for {len(texts)} texts; rerun the ingest to continue.")
            for (p, c, n), text, vector in zip(batch, texts, vectors, strict=True):
                meta = chunk_metadata(p, c, n)
                pending.append((c.chunk_id, vector, meta))
                if fresh:
                    kept.add(c.chunk_id, text, meta)
            # Few large writes are cheaper than many small ones, but a slow embedder still shows progress.
            if len(pending) >= _WRITE_BATCH or time.monotonic() - last_flush >= 1.0 or i + _BATCH >= total:
                flush()
        computed_after = getattr(self.embeddings, "computed", None)
        report.embedded = (computed_after - computed_before) if computed_before is not None else total
        self._collection = None  # re-read metadata (generation) next time
        del rows, existing  # free the chunk list before BM25 holds every chunk's tokens
        if fresh:
            self._build_bm25(generation, kept)
        else:
            self._rebuild_bm25(generation)
        return report

    def chunk_records(self, papers: Sequence[Paper]) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
        """(chunk id, text embedded, metadata, metadata as Chroma stores it) for every chunk of
        ``papers``: what an ingest writes (eval/bench_chroma_write measures writing it)."""
        return [
            (c.chunk_id, index_text(p, c), meta, pack_metadata(meta))
            for p, c, n in self._chunk_rows(papers)
            for meta in [chunk_metadata(p, c, n)]
        ]

    def _chunk_rows(self, papers: Sequence[Paper]) -> list[tuple[Paper, Chunk, int]]:
        """(paper, chunk, the paper's chunk count) for every chunk of ``papers``, in ingest order."""
        chunking = self.settings.chunking.model_dump()
        return [(p, c, len(chunks)) for p in papers for chunks in [chunk_paper(p, **chunking)] for c in chunks]

    def index_texts(self, papers: Sequence[Paper]) -> list[str]:
        """The text embedded for every chunk of ``papers``, in ingest order."""
        return [index_text(p, c) for p, c, _n in self._chunk_rows(papers)]

    # ---------------------------------------------------------------- export / import
    def export(self, path: Path) -> dict[str, Any]:
        """Write the whole collection (vectors, texts, metadata, settings it was built with) to one zip file.

        The file is portable: import it on another machine, or from a Chroma server into a local
        index and back, and nothing is embedded again.
        """
        col = self._get_collection(create=False)
        if col is None or self.count_chunks() == 0:
            raise EmptyIndexError(f"Nothing to export: collection {self.settings.collection!r} is empty.")
        meta = {k: v for k, v in (col.metadata or {}).items() if k != "generation"}
        ids, vectors, lines = [], [], []
        offset, page = 0, 5000
        while True:
            with self._chroma("reading the index for export"):
                got = col.get(include=["embeddings", "metadatas"], limit=page, offset=offset)
            if not got["ids"]:
                break
            ids.extend(got["ids"])
            vectors.append(np.asarray(got["embeddings"], dtype="<f4"))
            lines.extend(
                json.dumps({"id": cid, "document": document_of(m), "metadata": m}, ensure_ascii=False)
                for cid, m in zip(got["ids"], map(unpack_metadata, got["metadatas"]))
            )
            offset += len(got["ids"])
        matrix = np.concatenate(vectors)
        manifest = {"format": EXPORT_FORMAT, "version": 1, "collection": meta, "chunks": len(ids)}
        path = Path(path)
        tmp = path.with_name(path.name + ".partial")
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
            z.writestr("manifest.json", json.dumps(manifest, indent=1))
            z.writestr("records.jsonl", "\n".join(lines) + "\n")
            buf = io.BytesIO()
            np.save(buf, matrix, allow_pickle=False)
            z.writestr("vectors.npy", buf.getvalue(), compress_type=zipfile.ZIP_STORED)
        tmp.replace(path)
        return {"chunks": len(ids), "papers": len({json.loads(x)["metadata"]["_paper_id"] for x in lines}), "bytes": path.stat().st_size}

    def import_(self, path: Path, *, replace: bool = False, lock_timeout: float = 600.0) -> dict[str, Any]:
        """Load a file made by :meth:`export` into this collection (which must be empty unless ``replace``)."""
        path = Path(path)
        try:
            with zipfile.ZipFile(path) as z:
                manifest = json.loads(z.read("manifest.json"))
                if manifest.get("format") != EXPORT_FORMAT:
                    raise IngestError(f"{path} is not an index export (no {EXPORT_FORMAT!r} manifest).")
                records = [json.loads(line) for line in z.read("records.jsonl").decode("utf-8").splitlines() if line]
                matrix = np.load(io.BytesIO(z.read("vectors.npy")), allow_pickle=False)
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
            raise IngestError(f"Cannot read the index export {path}: {e}") from e
        if matrix.ndim != 2 or not len(records) == matrix.shape[0] == manifest.get("chunks"):
            raise IngestError(f"{path} is damaged: {len(records)} records, vectors of shape {matrix.shape}.")
        diffs = self._setting_diffs(manifest.get("collection", {}), "export")
        if diffs:
            raise IndexMismatchError(
                f"{path} was built with other settings (" + diffs + "). Set the same embedding model and "
                "chunking (e.g. RAG_EMBEDDING__MODEL) to use it."
            )
        with self._writer_lock(lock_timeout):
            if self.count_chunks() and not replace:
                raise IngestError(
                    f"Collection {self.settings.collection!r} already holds {self.count_chunks()} chunks; "
                    "import with --replace to overwrite it, or choose another RAG_COLLECTION."
                )
            self.rebuild()
            col = self.collection  # created fresh, with a new generation
            for i in range(0, len(records), _BATCH * 4):
                part = records[i : i + _BATCH * 4]
                with self._chroma("writing imported chunks"):
                    col.upsert(
                        ids=[r["id"] for r in part],
                        embeddings=matrix[i : i + len(part)],
                        metadatas=[pack_metadata(r["metadata"]) for r in part],
                    )
            cache = getattr(self.embeddings, "cache", None)
            if cache is not None:  # a later --rebuild or re-chunk of the same texts embeds nothing
                cache.put_many(self.model_name, [r["document"] for r in records], matrix)
            self._collection = None
            self._rebuild_bm25(self._generation())
        return {"chunks": len(records), "papers": len({r["metadata"]["_paper_id"] for r in records})}

    # ---------------------------------------------------------------- reading
    def count_chunks(self) -> int:
        col = self._get_collection(create=False)
        if col is None:
            return 0
        with self._chroma("counting chunks"):
            return int(col.count())

    def paper_ids(self) -> set[str]:
        if not self.exists():
            return set()
        return {str(m.get("_paper_id")) for _cid, m in self._iter_all()}

    def papers(self) -> list[Paper]:
        """Every indexed paper (rebuilt from the metadata of its first chunk)."""
        if not self.exists():
            return []
        seen: dict[str, Paper] = {}
        for _cid, m in self._iter_all():
            pid = str(m.get("_paper_id"))
            if pid not in seen:
                seen[pid] = paper_from_metadata(m)
        return sorted(seen.values(), key=lambda p: p.paper_id)

    def dense_search(self, vector: Sequence[float], n: int, where: dict[str, MetaValue] | None = None) -> list[RawHit]:
        col = self._get_collection(create=False)
        if col is None:
            return []
        with self._chroma("searching"):
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
        col = self._get_collection(create=False)
        if col is None:
            return []
        with self._chroma("searching"):
            res = col.query(query_embeddings=[list(map(float, vector))], n_results=n, include=["distances"])
        return [(cid, 1.0 - float(d)) for cid, d in zip(res["ids"][0], res["distances"][0])]

    def get_chunks(self, ids: Iterable[str]) -> dict[str, RawHit]:
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        with self._chroma("reading chunks"):
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


def chunk_metadata(paper: Paper, chunk: Chunk, n_chunks: int) -> dict[str, MetaValue]:
    meta: dict[str, MetaValue] = {
        "_paper_id": paper.paper_id,
        "_chunk": chunk.index,
        "_nchunks": n_chunks,
        "_start": chunk.start,
        "_end": chunk.end,
        "_title": paper.title,
        "_title_derived": paper.title_derived,
        "_abstract": paper.abstract,
        "_hash": paper_hash(paper),
        "_source": paper.source,
    }
    if paper.authors:
        meta["_authors"] = json.dumps(list(paper.authors), ensure_ascii=False)
    for key in ("venue", "year", "url"):
        value = getattr(paper, key)
        if value is not None:
            meta[key] = value
    for key, value in paper.metadata.items():
        if not key.startswith("_") and key not in meta:
            meta[key] = value
    return meta


def pack_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    """What Chroma stores for a chunk: the corpus' own keys (filterable) and ``_paper_id`` as they are,
    every other internal field in one JSON string under ``_p``.

    Chroma writes one row (and index entries) per metadata key: packing ten internal keys into one
    made a 13k-chunk write ~15 % faster (eval/bench_chroma_write.py).
    """
    out = {k: v for k, v in meta.items() if not k.startswith("_") or k == "_paper_id"}
    out[_PACKED] = json.dumps({k: v for k, v in meta.items() if k.startswith("_") and k != "_paper_id"}, ensure_ascii=False)
    return out


def unpack_metadata(meta: dict[str, Any] | None) -> dict[str, Any]:
    """Inverse of :func:`pack_metadata`; metadata written unpacked (indexes built before packing) passes through."""
    out = dict(meta or {})
    packed = out.pop(_PACKED, None)
    if isinstance(packed, str):
        try:
            out.update(json.loads(packed))
        except ValueError as e:
            raise IndexCorruptError(
                f"Chunk {out.get('_paper_id')!r} has damaged metadata in the index ({e}); rebuild it with `rag ingest --rebuild PATH...`."
            ) from e
    return out


def paper_from_metadata(m: dict[str, Any]) -> Paper:
    extra = {k: v for k, v in m.items() if not k.startswith("_") and k not in ("venue", "year", "url")}
    return Paper(
        paper_id=str(m["_paper_id"]),
        title=str(m.get("_title", "")),
        abstract=str(m.get("_abstract", "")),
        title_derived=bool(m.get("_title_derived", False)),
        authors=tuple(json.loads(m["_authors"])) if m.get("_authors") else (),
        venue=m.get("venue"),
        year=m.get("year"),
        url=m.get("url"),
        metadata=extra,
        source=str(m.get("_source", "")),
    )


def user_metadata(m: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in m.items() if not k.startswith("_")}
    if m.get("_authors"):
        out["authors"] = json.loads(m["_authors"])
    return out

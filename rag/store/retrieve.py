"""Hybrid retrieval: dense (Chroma) + BM25 fused by reciprocal-rank fusion at paper level.
The LangChain ``BaseRetriever`` adapter over it is :mod:`rag.store.adapter`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from rag.filters import parse_where as parse_where  # re-exported for LangChain users of this module
from rag.settings import RetrievalSettings
from rag.store.bm25 import BM25Store
from rag.store.chroma import RawHit
from rag.store.index import PaperIndex
from rag.store.metadata import user_metadata
from rag.types import MetaValue, SearchHit, paper_of_chunk

Mode = Literal["hybrid", "dense", "bm25"]
_OVERFETCH = 1.5  # filtered dense search: fetch 1.5x the nearest chunks expected to hold n matches ...
_OVERFETCH_FIRST = 1000  # ... if that is at most this many (the filter keeps >= ~8 % of chunks): 1,000 ids ~9 ms
_OVERFETCH_MAX = 5000  # ... and up to this many while too few match (5,000 ids: ~30 ms at 115k chunks)
# Filters keeping at most this many chunks (or this share of them, below which over-fetching gives up) are searched
# exactly over their vectors: at 115k chunks 2,300 rows took ~1 ms, 23k rows ~11 ms (mostly gathering the rows),
# while over-fetching serves a ~20 % filter in one unfiltered query. Wider filters try over-fetching first.
_EXACT_MAX_ROWS = 5_000
_EXACT_MAX_SHARE = 0.08


def _matches(meta: dict[str, Any], where: dict[str, MetaValue]) -> bool:
    return all(type(meta.get(k)) is type(v) and meta.get(k) == v for k, v in where.items())


class Retriever:
    """Searches a :class:`PaperIndex`; one hit per paper, best chunk first."""

    def __init__(self, index: PaperIndex, settings: RetrievalSettings) -> None:
        self.index = index
        self.settings = settings
        # PaperIndex opens Chroma and BM25 lazily, with no lock. Concurrent first callers in a fresh process got
        # "Could not connect to tenant default_tenant" (chromadb registers a new client's system before starting
        # it); concurrent first searches rebuilt BM25 from Chroma several times, raced on saving it (OSError
        # "Directory not empty") and searched half-loaded stores. So the client is opened once under this lock,
        # and BM25 is used under it (a BM25 search takes milliseconds: one at a time costs nothing measurable).
        # The lock is the index's: an in-process ingest takes it too when it swaps in the new BM25 store.
        self._lock = index.lock
        self._opened = False

    def open(self) -> PaperIndex:
        """The index, its Chroma client opened (once, under a lock, however many threads ask at once)."""
        if not self._opened:
            with self._lock:
                _ = self.index.client
                self._opened = True
        return self.index

    def _dense(self, vector: list[float], n: int, where: dict[str, MetaValue] | None) -> list[RawHit]:
        """The ``n`` nearest chunks matching ``where``.

        A filter keeping few chunks (under ~8 %) is answered by an exact search over those chunks' vectors,
        kept beside BM25 (about 1 ms for 2,300 rows; Chroma's filtered query took ~100 ms at 115k chunks):
        exact, so its recall is at least that of Chroma's approximate filtered search. Wider filters
        over-fetch (below), and fall back to the exact search when over-fetching finds too few.

        Chroma's filtered query took 70-150 ms at 115k chunks whatever the filter, while an unfiltered
        query for ids and distances only takes 2-17 ms for 50-3,000 results. So when BM25's metadata
        says enough chunks match, take the nearest ``fetch`` unfiltered, keep the matching ones, and
        read the metadata of the ``n`` kept, fetching up to 4x more while too few match (a query far
        from the filtered set meets few of its chunks). That is exact: if ``n`` matching chunks are
        among the nearest ``fetch``, no matching chunk outside them can rank higher. Otherwise (a filter
        keeping under ~8 % of chunks, or too few found within 5,000) ask Chroma to filter: over-fetching
        for a 2 % filter at 13k chunks took 60 ms where Chroma took 25.
        """
        if where:
            with self._lock:
                store = self.index.bm25
                keep = store.exact_mask(where)
                rows = store.rows()
            if keep is not None and keep.any():
                exact = store.has_vectors
                matching = np.flatnonzero(keep)
                if exact and len(matching) <= max(_EXACT_MAX_ROWS, _EXACT_MAX_SHARE * len(keep)):
                    hits = self._exact(store, vector, n, where, matching)
                    if hits is not None:
                        return hits
                    exact = False  # Chroma disagrees with our copy: another writer; let Chroma filter
                hits = self._overfetch(vector, n, where, keep, rows)
                if hits is None and exact:  # a wide filter the nearest 5,000 chunks did not satisfy
                    hits = self._exact(store, vector, n, where, matching)
                if hits is not None:
                    return hits
        return self.index.dense_search(vector, n, where)

    def _exact(
        self, store: BM25Store, vector: list[float], n: int, where: dict[str, MetaValue], matching: np.ndarray
    ) -> list[RawHit] | None:
        """Exact cosine search over the matching rows' vectors; None when Chroma disagrees (another writer)."""
        picked = store.nearest_in(vector, matching, n)
        found = self.index.get_chunks([cid for cid, _s in picked])
        hits = [RawHit(cid, s, found[cid].metadata) for cid, s in picked if cid in found]
        if len(hits) == len(picked) and all(_matches(h.metadata, where) for h in hits):
            return hits
        return None

    def _overfetch(
        self, vector: list[float], n: int, where: dict[str, MetaValue], keep: np.ndarray, rows: dict[str, int]
    ) -> list[RawHit] | None:
        """The filtered search of :meth:`_dense` done without Chroma's filter; None when it cannot answer."""
        matching, total = int(keep.sum()), len(keep)
        fetch = min(total, n + math.ceil(_OVERFETCH * n * total / matching))
        limit = _OVERFETCH_FIRST
        while fetch <= limit:
            near = self.index.nearest(vector, fetch)
            picked = [(cid, s) for cid, s in near if cid in rows and keep[rows[cid]]][:n]
            if len(picked) >= min(n, matching) or len(near) < fetch:
                found = self.index.get_chunks([cid for cid, _s in picked])
                hits = [RawHit(cid, s, found[cid].metadata) for cid, s in picked if cid in found]
                # BM25's copy of the metadata can lag Chroma (another writer): trust only live matches.
                if len(hits) == len(picked) and all(_matches(h.metadata, where) for h in hits):
                    return hits
                return None
            if fetch >= min(total, _OVERFETCH_MAX):
                return None
            # Matches are not spread evenly: a query far from the filtered set meets few of them.
            fetch, limit = min(total, _OVERFETCH_MAX, fetch * 4), _OVERFETCH_MAX
        return None

    def count_papers(self, where: dict[str, MetaValue] | None = None) -> int:
        """Papers in the index (those whose metadata matches ``where``), counted from BM25's in-memory rows."""
        index = self.open()
        index.refresh()
        if not index.exists():
            return 0
        with self._lock:
            store = index.bm25
            rows = range(len(store.ids)) if not where else np.flatnonzero(store.mask(where))
            return len({paper_of_chunk(store.ids[int(i)]) for i in rows})

    def search(
        self,
        query: str,
        k: int | None = None,
        where: dict[str, MetaValue] | None = None,
        mode: Mode | None = None,
    ) -> list[SearchHit]:
        k = k or self.settings.k
        mode = mode or self.settings.mode
        if mode != "bm25" and not self._opened:  # first search: load the embedder while Chroma opens
            preload = getattr(self.index.embeddings, "preload", None)
            if callable(preload):
                preload()
        self.open()
        self.index.refresh()  # another process's write is seen here: a stat per query
        n = max(self.settings.candidates, 3 * k)
        dense: list[RawHit] = []
        if mode in ("hybrid", "dense"):
            dense = self._dense(self.index.embeddings.embed_query(query), n, where)
        sparse: list[tuple[str, float]] = []
        if mode in ("hybrid", "bm25"):
            with self._lock:
                sparse = self.index.bm25.search(query, n, where)

        # best chunk per paper, and each paper's rank in each list
        best: dict[str, RawHit] = {}
        dense_rank: dict[str, int] = {}
        dense_score: dict[str, float] = {}
        for hit in dense:
            pid = str(hit.metadata["_paper_id"])
            if pid not in dense_rank:
                dense_rank[pid] = len(dense_rank)
                dense_score[pid] = hit.score
                best[pid] = hit
        bm25_rank: dict[str, int] = {}
        bm25_score: dict[str, float] = {}
        bm25_chunk: dict[str, str] = {}
        for cid, score in sparse:
            pid = paper_of_chunk(cid)
            if pid not in bm25_rank:
                bm25_rank[pid] = len(bm25_rank)
                bm25_score[pid] = score
                bm25_chunk[pid] = cid

        c = self.settings.rrf_k
        fused: dict[str, float] = {}
        for pid in dense_rank.keys() | bm25_rank.keys():
            if mode == "dense":
                fused[pid] = dense_score[pid]
            elif mode == "bm25":
                fused[pid] = bm25_score[pid]
            else:
                fused[pid] = sum(1.0 / (c + 1 + r[pid]) for r in (dense_rank, bm25_rank) if pid in r)
        top = sorted(fused, key=lambda p: (-fused[p], p))[:k]
        missing = [bm25_chunk[p] for p in top if p not in best]
        best.update({h.metadata["_paper_id"]: h for h in self.index.get_chunks(missing).values()})
        return [
            _search_hit(best[pid], rank, fused[pid], dense_score.get(pid), bm25_score.get(pid))
            for rank, pid in enumerate(top, 1)
        ]

    def containing(
        self, query: str, terms: Sequence[str], n: int, where: dict[str, MetaValue] | None = None
    ) -> list[SearchHit]:
        """Up to ``n`` papers whose text has one of ``terms`` (see :meth:`BM25Store.containing`), the best by
        ``query``'s BM25 first: every paper that names a dataset or method, however the fusion ranks it."""
        if not terms:
            return []
        index = self.open()
        index.refresh()
        if not index.exists():
            return []
        with self._lock:
            store = index.bm25
            within = store.containing(terms)
            sparse = store.search(query, max(n, 1) * 3, where, within=within) if within.any() else []
        chunk_of: dict[str, tuple[str, float]] = {}
        for cid, score in sparse:
            chunk_of.setdefault(paper_of_chunk(cid), (cid, score))
        picked = list(chunk_of.items())[:n]
        found = self.index.get_chunks([cid for _pid, (cid, _s) in picked])
        return [
            _search_hit(found[cid], rank, score, None, score)
            for rank, (_pid, (cid, score)) in enumerate(picked, 1)
            if cid in found
        ]


def _search_hit(h: RawHit, rank: int, score: float, dense: float | None, bm25: float | None) -> SearchHit:
    m = h.metadata
    start, end = int(m["_start"]), int(m["_end"])
    abstract = str(m.get("_abstract", ""))
    return SearchHit(
        paper_id=str(m["_paper_id"]),
        chunk_id=h.chunk_id,
        title=str(m.get("_title", "")),
        text=abstract[start:end],
        start=start,
        end=end,
        score=round(score, 6),
        dense_score=dense,
        bm25_score=bm25,
        abstract=abstract,
        metadata=user_metadata(m),
        rank=rank,
        title_derived=bool(m.get("_title_derived", False)),
    )

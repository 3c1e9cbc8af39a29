"""Ingest: add new papers, replace changed ones, skip unchanged ones, repair half-written ones.

What is indexed now comes from BM25's manifest (read back from Chroma only when BM25 is out of sync),
so re-ingesting unchanged data reads nothing from Chroma. The generation is changed before the first
write: a crash from there on leaves a generation no BM25 snapshot carries, and the next reader
rebuilds BM25 from Chroma. Embeddings go through the index's embeddings object (a cache in front of
it makes re-ingests embed nothing).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rag.corpus import chunk_paper
from rag.errors import BackendError
from rag.settings import Settings
from rag.store.bm25 import BM25Input
from rag.store.collection import ChunkCollection
from rag.store.metadata import chunk_metadata, index_text, pack_metadata, paper_hash
from rag.types import Chunk, IngestReport, Paper

EMBED_BATCH = 256  # chunks per embedding call (and per progress report)
WRITE_BATCH = 1024  # chunks per Chroma upsert: bigger writes were ~13 % faster than 256


def ingest(
    index: ChunkCollection,
    papers: Sequence[Paper],
    *,
    prune: bool = False,
    progress: Callable[[int, int], None] | None = None,
    lock_timeout: float = 600.0,
) -> IngestReport:
    """Index ``papers`` under the writer lock (see the module docstring).

    ``progress(done, total)`` is called as chunks are written."""
    with index.writer_lock(lock_timeout):
        return _ingest_locked(index, papers, prune=prune, progress=progress)


def chunk_rows(settings: Settings, papers: Sequence[Paper]) -> list[tuple[Paper, Chunk, int]]:
    """(paper, chunk, the paper's chunk count) for every chunk of ``papers``, in ingest order."""
    chunking = settings.chunking.model_dump()
    return [(p, c, len(chunks)) for p in papers for chunks in [chunk_paper(p, **chunking)] for c in chunks]


def index_texts(settings: Settings, papers: Sequence[Paper]) -> list[str]:
    """The text embedded for every chunk of ``papers``, in ingest order."""
    return [index_text(p, c) for p, c, _n in chunk_rows(settings, papers)]


def _ingest_locked(
    index: ChunkCollection, papers: Sequence[Paper], *, prune: bool, progress: Callable[[int, int], None] | None
) -> IngestReport:
    report = IngestReport(papers_seen=len(papers))
    index.forget_collection()  # another process may have written since we last looked
    col = index.collection
    # What is indexed now, from BM25's manifest (read from Chroma only when BM25 is out of sync,
    # or holds another number of chunks than Chroma: someone changed Chroma behind our back).
    with index.lock:  # this process's questions meanwhile keep the store they have (see ChunkCollection.bm25)
        store = index.bm25
    with index.chroma.guard("counting chunks"):
        n_chunks = int(col.count())
    if len(store.ids) != n_chunks:
        store = index.rebuild_bm25(index.generation())
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
    with index.chroma.guard("starting to write"):
        col.modify(metadata=dict(col.metadata or {}) | {"generation": generation})
        for i in range(0, len(stale_chunks), 5000):
            col.delete(ids=stale_chunks[i : i + 5000])
    index.write_stamp(generation)  # readers elsewhere keep their snapshot until the finished store is saved

    rows = chunk_rows(index.settings, to_write)
    total = len(rows)
    computed_before = getattr(index.embeddings, "computed", None)
    kept = BM25Input()  # BM25 is built or updated from the texts in hand, not read back from Chroma
    max_batch = min(WRITE_BATCH, index.chroma.max_batch(WRITE_BATCH))
    pending: list[tuple[str, Any, dict[str, Any]]] = []
    last_flush = time.monotonic()

    def flush() -> None:
        nonlocal last_flush
        for i in range(0, len(pending), max_batch):
            part = pending[i : i + max_batch]
            with index.chroma.guard("writing chunks"):
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

    for i in range(0, total, EMBED_BATCH):
        batch = rows[i : i + EMBED_BATCH]
        texts = [index_text(p, c) for p, c, _n in batch]
        try:
            vectors = index.embeddings.embed_documents(texts)
        except Exception as e:  # a remote embeddings endpoint can fail in many ways
            if pending:  # keep what was embedded: the rerun finds those chunks written
                flush()
            raise BackendError(
                f"Embedding failed after {i} of {total} chunks; rerun the ingest to continue. {e}"
            ) from e
        if len(vectors) != len(texts):
            raise BackendError(
                f"The embedder returned {len(vectors)} vectors for {len(texts)} texts; rerun the ingest to continue."
            )
        matrix = np.asarray(vectors, dtype=np.float32)  # rows of one array, not 384 Python floats per chunk
        for (p, c, n), text, vector in zip(batch, texts, matrix, strict=True):
            meta = chunk_metadata(p, c, n)
            pending.append((c.chunk_id, vector, meta))
            kept.add(c.chunk_id, text, meta, vector)
        # Few large writes are cheaper than many small ones, but a slow embedder still shows progress.
        if len(pending) >= WRITE_BATCH or time.monotonic() - last_flush >= 1.0 or i + EMBED_BATCH >= total:
            flush()
    computed_after = getattr(index.embeddings, "computed", None)
    report.embedded = (computed_after - computed_before) if computed_before is not None else total
    index.forget_collection()  # re-read metadata (generation) next time
    del rows, existing  # free the chunk list before BM25 holds every chunk's tokens
    if fresh:
        index.build_bm25(generation, kept)
    else:  # delete and insert rows: no Chroma read, only the new chunks tokenised
        rewritten = [*report.updated, *report.repaired, *report.removed]
        index.update_bm25(generation, store, stale_chunks, kept, rewritten)
    return report

"""PaperIndex against real Chroma (embedded and a `chroma run` server) with the real embedding model."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rag.errors import EmptyIndexError, IndexMismatchError
from rag.types import Paper


def _papers() -> list[Paper]:
    return [
        Paper(
            paper_id="p1",
            title="Zebra counting from drones",
            abstract="We count zebras in aerial drone video of the savanna.",
            venue="NeurIPS",
            year=2018,
        ),
        Paper(
            paper_id="p2",
            title="Quantum sampling",
            abstract="A quantum algorithm samples sparse subnetworks in polynomial time.",
            venue="ICML",
            year=2019,
        ),
        Paper(
            paper_id="p3",
            title="Graphene heat",
            abstract="We measure the thermal conductivity of suspended graphene sheets.",
            venue="NeurIPS",
            year=2019,
            metadata={"track": "datasets"},
        ),
    ]


def test_ingest_writes_every_paper_and_records_the_model(make_assistant: Callable[..., Any], backend: str) -> None:
    a = make_assistant()
    report = a.ingest_papers(_papers())
    assert sorted(report.added) == ["p1", "p2", "p3"]
    stats = a.stats()
    assert stats["papers"] == 3 and stats["chunks"] == 3
    assert stats["embedding_model"] == "all-MiniLM-L6-v2-int8" and stats["dimension"] == 384
    meta = a._index.collection.metadata
    assert meta["embedding_model"] == "all-MiniLM-L6-v2-int8" and meta["chunk_max_tokens"] == 220


def test_reingest_adds_and_embeds_nothing(make_assistant: Callable[..., Any], seed_corpus: Path, backend: str) -> None:
    a = make_assistant()
    first = a.ingest([seed_corpus])
    assert len(first.added) == 19
    computed = a.embeddings.computed
    again = a.ingest([seed_corpus])
    assert again.added == [] and again.updated == [] and again.unchanged == 19
    assert a.embeddings.computed == computed  # zero new embeddings
    assert again.embedded == 0 and again.chunks_written == 0
    assert a.stats()["papers"] == 19


def test_rebuilding_from_scratch_reuses_cached_embeddings(
    make_assistant: Callable[..., Any], seed_corpus: Path
) -> None:
    a = make_assistant()
    a.ingest([seed_corpus])
    before = a.embeddings.computed
    report = a.ingest([seed_corpus], rebuild=True)
    assert len(report.added) == 19 and report.chunks_written > 19
    assert a.embeddings.computed == before  # every vector came from the (model, text-hash) cache


def test_changed_abstract_replaces_its_chunks(make_assistant: Callable[..., Any], backend: str) -> None:
    a = make_assistant()
    a.ingest_papers(_papers())
    changed = _papers()
    changed[2] = changed[2].model_copy(
        update={
            "title": "Copper wires",
            "abstract": f"We measure the electrical resistance of copper nanowires ({backend}).",
        }
    )
    report = a.ingest_papers(changed)
    # one new text to embed (unique per backend, so the session-wide embedding cache cannot hold it yet)
    assert report.updated == ["p3"] and report.unchanged == 2 and report.embedded == 1 and report.chunks_written == 1
    assert a.stats()["chunks"] == 3
    hits = a.search("copper nanowire resistance", k=1)
    assert hits[0].paper_id == "p3" and "copper" in hits[0].text
    assert a.search("graphene", k=3, mode="bm25") == []  # the old text is gone from BM25 too


def test_prune_removes_papers_missing_from_the_sources(make_assistant: Callable[..., Any], backend: str) -> None:
    a = make_assistant()
    a.ingest_papers(_papers())
    kept = _papers()[:2]
    assert a.ingest_papers(kept).removed == []  # without --prune nothing is removed
    report = a.ingest_papers(kept, prune=True)
    assert report.removed == ["p3"]
    assert {p.paper_id for p in a.papers()} == {"p1", "p2"}
    assert [h.paper_id for h in a.search("graphene", k=3, mode="bm25")] == []


def test_other_embedding_model_is_a_clear_error(
    make_assistant: Callable[..., Any], make_settings: Callable[..., Any], embeddings: Any, backend: str
) -> None:
    from rag.assistant import Assistant
    from rag.models.embedding import CachedEmbeddings

    settings = make_settings()
    Assistant(settings, embeddings=embeddings).ingest_papers(_papers())
    other = CachedEmbeddings(embeddings.inner, embeddings.cache, model_name="some-other-model")
    with pytest.raises(IndexMismatchError, match=r"embedding_model.*some-other-model.*rag ingest --rebuild"):
        Assistant(settings, embeddings=other).search("zebras")


def test_other_chunking_is_a_clear_error(make_settings: Callable[..., Any], embeddings: Any) -> None:
    from rag.assistant import Assistant

    settings = make_settings()
    Assistant(settings, embeddings=embeddings).ingest_papers(_papers())
    changed = settings.model_copy(update={"chunking": settings.chunking.model_copy(update={"max_tokens": 100})})
    with pytest.raises(IndexMismatchError, match="chunk_max_tokens"):
        Assistant(changed, embeddings=embeddings).ingest_papers(_papers())
    # --rebuild is the documented way out
    report = Assistant(changed, embeddings=embeddings).ingest_papers(_papers(), rebuild=True)
    assert len(report.added) == 3


def test_search_on_empty_index_says_to_ingest(make_assistant: Callable[..., Any]) -> None:
    with pytest.raises(EmptyIndexError, match="rag ingest"):
        make_assistant().search("anything")


def test_bm25_is_rebuilt_when_out_of_sync(make_assistant: Callable[..., Any]) -> None:
    a = make_assistant()
    a.ingest_papers(_papers())
    bm25_dir = a._index._bm25_dir()
    chunks = json.loads((bm25_dir / "chunks.json").read_text())
    assert sorted(chunks["ids"]) == ["p1#0", "p2#0", "p3#0"]
    # simulate a crash after Chroma was written but before BM25 was: stale BM25 on disk
    (bm25_dir / "chunks.json").write_text(json.dumps(chunks | {"generation": "stale", "ids": ["p1#0"]}))
    from rag.assistant import Assistant

    fresh = Assistant(a.settings, embeddings=a.embeddings)
    assert [h.paper_id for h in fresh.search("graphene thermal conductivity", k=1, mode="bm25")] == ["p3"]
    assert sorted(json.loads((bm25_dir / "chunks.json").read_text())["ids"]) == ["p1#0", "p2#0", "p3#0"]


def test_chunk_offsets_point_into_the_original_abstract(seed_assistant: Any) -> None:
    for paper in seed_assistant.papers():
        hits = seed_assistant.search(paper.abstract[:200], k=19)
        for h in hits:
            assert h.abstract[h.start : h.end] == h.text
    assert seed_assistant.stats()["chunks"] > seed_assistant.stats()["papers"]  # long abstracts were split


def test_stored_metadata_rebuilds_exactly_the_indexed_text(seed_corpus: Path) -> None:
    """Chroma keeps no documents: BM25 and exports rebuild each chunk's text from its metadata."""
    from rag.corpus import read_corpora
    from rag.corpus.chunking import chunk_paper
    from rag.settings import Settings
    from rag.store.metadata import chunk_metadata, document_of, index_text

    chunking = Settings().chunking.model_dump()
    papers = read_corpora([seed_corpus, Path(__file__).parent / "data" / "abstracts.jsonl"])
    n = 0
    for paper in papers:
        chunks = chunk_paper(paper, **chunking)
        for chunk in chunks:
            assert document_of(chunk_metadata(paper, chunk, len(chunks))) == index_text(paper, chunk)
            n += 1
    assert n > len(papers)


def test_internal_fields_are_packed_into_one_metadata_key(make_assistant: Callable[..., Any], backend: str) -> None:
    a = make_assistant()
    a.ingest_papers(_papers())
    stored = a._index.collection.get(ids=["p3#0"], include=["metadatas"])["metadatas"][0]
    # Filterable keys stay separate (Chroma filters on them); the rest is one JSON string.
    assert set(stored) == {"_paper_id", "_p", "venue", "year", "track"}
    assert json.loads(stored["_p"])["_abstract"] == _papers()[2].abstract
    hit = a.search("thermal conductivity of graphene", k=1, where={"track": "datasets"})[0]
    assert hit.paper_id == "p3" and hit.abstract == _papers()[2].abstract and hit.metadata["track"] == "datasets"


def test_index_written_with_unpacked_metadata_still_reads(make_assistant: Callable[..., Any]) -> None:
    """Indexes built before packing hold every internal key separately; they search and re-ingest as before."""
    from rag.corpus.chunking import chunk_paper
    from rag.store.metadata import chunk_metadata

    a = make_assistant()
    papers = _papers()
    col = a._index.collection
    for p in papers:
        chunks = chunk_paper(p, **a.settings.chunking.model_dump())
        col.upsert(
            ids=[c.chunk_id for c in chunks],
            embeddings=a.embeddings.embed_documents([a._index.index_texts([p])[c.index] for c in chunks]),
            metadatas=[chunk_metadata(p, c, len(chunks)) for c in chunks],
        )
    col.modify(metadata=dict(col.metadata) | {"generation": "written-by-an-older-version"})
    hit = a.search("zebras from drones", k=1)[0]
    assert hit.paper_id == "p1" and hit.title == "Zebra counting from drones" and hit.text.startswith("We count zebras")
    again = a.ingest_papers(papers)
    assert again.unchanged == 3 and again.embedded == 0


def test_unchanged_reingest_reads_no_metadata_back_from_chroma(
    make_assistant: Callable[..., Any], seed_corpus: Path
) -> None:
    a = make_assistant()
    a.ingest([seed_corpus])
    from tests.conftest import count_calls

    reads = count_calls(a._index, "iter_all_vectors")
    again = a.ingest([seed_corpus])
    assert again.unchanged == 19 and reads == []  # BM25's manifest said what is indexed

    # Once the collection changes under it (another writer, a killed ingest), the manifest is not trusted.
    col = a._index.collection
    col.modify(metadata=dict(col.metadata) | {"generation": "changed-elsewhere"})
    col.delete(ids=[col.get(limit=1)["ids"][0]])
    third = a.ingest([seed_corpus])
    assert reads and third.unchanged == 18
    assert len(third.added) + len(third.repaired) == 1  # the paper that lost a chunk, written again


def test_a_partial_bm25_snapshot_under_the_current_generation_is_not_trusted(
    make_assistant: Callable[..., Any],
) -> None:
    """A snapshot holding fewer chunks than Chroma (taken half-way through a write) is detected by count."""
    from rag.assistant import Assistant
    from rag.store.bm25 import BM25Input

    a = make_assistant()
    a.ingest_papers(_papers())
    index = a._index
    cid, meta = next(iter(index.iter_all()))
    partial = BM25Input()
    partial.add(cid, "partial", meta)
    generation = index.collection.metadata["generation"]
    index.build_bm25(generation, partial)  # saved, trusted generation

    b = Assistant(a.settings, embeddings=a.embeddings)  # a new process: loads the snapshot from disk
    assert len(b._index.bm25.ids) == 1
    new = Paper(paper_id="p4", title="Penguin gait", abstract="We film penguins walking on ice.")
    report = b.ingest_papers([*_papers(), new])
    assert report.unchanged == 3 and report.added == ["p4"] and report.embedded == 1
    assert sorted(b._index.bm25.ids) == sorted(cid for cid, _m in b._index.iter_all())
    assert b.search("penguins walking", k=1, mode="bm25")[0].paper_id == "p4"
    assert b.search("zebras drone video", k=1, mode="bm25")[0].paper_id == "p1"


def test_a_reader_saves_no_bm25_while_an_ingest_holds_the_writer_lock(make_assistant: Callable[..., Any]) -> None:
    import shutil

    from filelock import FileLock

    from rag.assistant import Assistant

    a = make_assistant()
    a.ingest_papers(_papers())
    bm25_dir = a._index._bm25_dir()
    shutil.rmtree(bm25_dir)
    lock = FileLock(str(a._index._lock_path()))
    lock.acquire(timeout=5)  # as another process's ingest would
    try:
        reader = Assistant(a.settings, embeddings=a.embeddings)
        assert reader.search("zebras drone video", k=1)[0].paper_id == "p1"  # BM25 rebuilt in memory
        assert not bm25_dir.exists()  # ... and not saved: Chroma may be half-written
    finally:
        lock.release()
    later = Assistant(a.settings, embeddings=a.embeddings)
    assert later.search("zebras drone video", k=1)[0].paper_id == "p1"
    assert (bm25_dir / "chunks.json").exists()  # no writer now: the rebuilt store is kept


def test_chromadb_import_skips_only_its_own_signature_checks(tmp_path: Path) -> None:
    """`import_chromadb` (the fast import) leaves a working chromadb and the `overrides` package as it was."""
    code = f"""
import importlib
checks = importlib.import_module("overrides.overrides")
before = checks._overrides
from rag.store.chroma import import_chromadb
chromadb = import_chromadb()
assert checks._overrides is before, "overrides left patched"
assert import_chromadb() is chromadb
from chromadb.errors import InvalidDimensionException
assert InvalidDimensionException("x").name() == "InvalidDimension"
client = chromadb.PersistentClient(path={str(tmp_path / "c")!r})
col = client.create_collection("abc", embedding_function=None)
col.add(ids=["x"], embeddings=[[1.0, 0.0]], documents=["d"])
assert col.query(query_embeddings=[[1.0, 0.0]], n_results=1)["ids"] == [["x"]]

class Base:
    def f(self, a: int) -> int:
        return a

try:
    class Bad(Base):
        @checks.override
        def f(self, a: int, b: int) -> int:
            return a
except TypeError:
    print("checked")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "checked"  # later uses of @override still check signatures

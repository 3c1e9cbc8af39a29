"""Incremental BM25, readers that notice other writers, and one lock for in-process ingest and questions.

Real Chroma, real processes for the writer/reader pair; the fast bundled embedder (WordLlama) so the
child processes start in seconds."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from rag import Assistant, Settings
from rag.store.bm25 import BM25Input, BM25Store
from rag.types import Paper
from tests.conftest import count_calls

FAST = {"embedding": {"model": "wordllama-l2-supercat-256"}}
WORDS = "graph neural network attention robot grasp tactile protein fold bandit regret diffusion image".split()


def _paper(i: int, extra: str = "") -> Paper:
    rng = np.random.default_rng(i)
    words = " ".join(rng.choice(WORDS, size=30))
    return Paper(paper_id=f"p{i}", title=f"Paper {i} {extra}".strip(), abstract=f"{words} {extra}.", venue=f"v{i % 7}")


def _chunks(papers: list[Paper]) -> BM25Input:
    chunks = BM25Input()
    for p in papers:
        meta = {"_paper_id": p.paper_id, "_hash": p.paper_id, "_nchunks": 1, "venue": p.venue}
        chunks.add(f"{p.paper_id}#0", p.abstract, meta, np.full(4, float(len(p.abstract)), dtype=np.float32))
    return chunks


def test_updated_bm25_ranks_exactly_as_a_full_rebuild(tmp_path: Path) -> None:
    papers = [_paper(i) for i in range(200)]
    store = BM25Store(tmp_path / "a")
    first = _chunks(papers)
    store.build(first.ids, first.texts, first.meta, "g1", first.papers, first.vector_matrix())
    store.save()
    # replace 5 papers, remove 3, add 4 (one with a word no chunk had before)
    changed = [_paper(i, "zeolite catalysis") for i in (3, 50, 99, 120, 199)]
    added = [_paper(i, "zeolite") for i in range(200, 204)]
    removed = ["p7#0", "p8#0", "p9#0"]
    loaded = BM25Store(tmp_path / "a")
    assert loaded.load()
    loaded.update([*removed, *(f"{p.paper_id}#0" for p in changed)], _chunks(changed + added), "g2", ["p7", "p8", "p9"])

    final = [p for p in papers if p.paper_id not in {"p7", "p8", "p9", "p3", "p50", "p99", "p120", "p199"}]
    final += changed + added
    want = _chunks(final)
    full = BM25Store(tmp_path / "b")
    full.build(want.ids, want.texts, want.meta, "g2", want.papers, want.vector_matrix())
    for query in ["zeolite catalysis", "graph attention", "robot grasp tactile bandit", "protein"]:
        got, expected = loaded.search(query, 300), full.search(query, 300)
        assert [c for c, _s in got] == [c for c, _s in expected]
        assert np.allclose([s for _c, s in got], [s for _c, s in expected])
    assert loaded.search("zeolite", 300, where={"venue": "v1"}) == full.search("zeolite", 300, where={"venue": "v1"})
    rows = loaded.rows()
    assert all(np.array_equal(loaded.vectors[rows[c]], full.vectors[full.rows()[c]]) for c in full.ids)
    assert set(loaded.papers) == set(full.papers)
    loaded.save()
    again = BM25Store(tmp_path / "a")
    assert again.load() and again.search("zeolite catalysis", 10) == loaded.search("zeolite catalysis", 10)


def test_reingest_of_changed_papers_updates_bm25_without_reading_chroma(tmp_path: Path) -> None:
    a = Assistant(Settings(data_dir=tmp_path, **FAST))
    a.ingest_papers([_paper(i) for i in range(30)])
    reads = count_calls(a._index, "iter_all_vectors")
    report = a.ingest_papers([_paper(i, "zeolite" if i == 4 else "") for i in range(30)] + [_paper(30, "perovskite")])
    assert report.updated == ["p4"] and report.added == ["p30"] and report.unchanged == 29
    assert reads == []  # BM25 was updated from the chunks in hand
    assert a.search("zeolite", k=1, mode="bm25")[0].paper_id == "p4"
    assert a.search("perovskite", k=1, mode="bm25")[0].paper_id == "p30"
    assert a.search("perovskite", k=1, where={"venue": "v2"})[0].paper_id == "p30"  # narrow filter, exact path
    fresh = Assistant(a.settings)  # a new process: the saved store equals Chroma
    store = fresh._index.bm25
    assert sorted(store.ids) == sorted(cid for cid, _m in fresh._index.iter_all())
    assert store.has_vectors


_READER = """
import json, sys
from rag import Assistant, Settings
a = Assistant(Settings(data_dir=sys.argv[1], embedding={"model": "wordllama-l2-supercat-256"}))
for line in sys.stdin:
    query, mode, venue = json.loads(line)
    hits = a.search(query, k=3, mode=mode, where={"venue": venue} if venue else None)
    print(json.dumps([h.paper_id for h in hits]), flush=True)
"""

_WRITER = """
import sys
from rag import Assistant, Settings, Paper
a = Assistant(Settings(data_dir=sys.argv[1], embedding={"model": "wordllama-l2-supercat-256"}))
p = Paper(paper_id="new", title="Zeolite catalysis", abstract="Zeolite catalysis of methane.", venue="v3")
a.ingest_papers([p])
"""


@pytest.mark.slow
def test_a_running_reader_sees_another_processes_write_on_its_next_query(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, **FAST)
    Assistant(settings).ingest_papers([_paper(i) for i in range(40)])
    reader = subprocess.Popen(
        [sys.executable, "-c", _READER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert reader.stdin is not None and reader.stdout is not None

    def ask(query: str, mode: str, venue: str | None = None) -> list[str]:
        reader.stdin.write(json.dumps([query, mode, venue]) + "\n")  # type: ignore[union-attr]
        reader.stdin.flush()  # type: ignore[union-attr]
        return list(json.loads(reader.stdout.readline()))  # type: ignore[union-attr]

    try:
        assert "new" not in ask("zeolite catalysis methane", "bm25")
        assert "new" not in ask("zeolite catalysis methane", "dense", "v3")
        subprocess.run([sys.executable, "-c", _WRITER, str(tmp_path)], check=True, timeout=120)
        assert ask("zeolite catalysis methane", "bm25")[0] == "new"  # BM25 reloaded
        assert ask("zeolite catalysis methane", "dense")[0] == "new"  # Chroma's vector index reopened
        assert ask("zeolite catalysis methane", "hybrid", "v3")[0] == "new"  # filters' metadata and vectors
        t0 = time.perf_counter()
        for _ in range(20):
            ask("graph attention", "bm25")
        assert (time.perf_counter() - t0) / 20 < 0.5  # no reload per query once seen
    finally:
        reader.stdin.close()
        reader.wait(timeout=30)


def test_a_question_during_an_in_process_ingest_does_not_rebuild_bm25(tmp_path: Path) -> None:
    """The ingest and this process's questions share one lock; a question asked while the ingest writes keeps
    the store it has (no rebuild from a half-written Chroma), and sees the new papers once the ingest is done."""
    a = Assistant(Settings(data_dir=tmp_path, **FAST))
    a.ingest_papers([_paper(i) for i in range(30)])
    assert a.search("graph attention", k=1)  # the store is loaded
    rebuilds = count_calls(a._index, "rebuild_bm25")
    in_ingest = threading.Event()
    release = threading.Event()
    embed = a._index.embeddings.embed_documents

    def slow_embed(texts: list[str]) -> list[list[float]]:
        in_ingest.set()
        release.wait(30)
        return embed(texts)

    a._index.embeddings.embed_documents = slow_embed  # type: ignore[method-assign]
    new = [_paper(i, "zeolite") for i in range(30, 35)]
    writer = threading.Thread(target=a.ingest_papers, args=([_paper(i) for i in range(30)] + new,))
    writer.start()
    try:
        assert in_ingest.wait(30)
        hits = a.search("zeolite graph", k=3, mode="bm25")  # during the write: the old snapshot
        assert all(h.paper_id not in {p.paper_id for p in new} for h in hits)
    finally:
        release.set()
        writer.join(60)
    assert rebuilds == []
    assert a.search("zeolite", k=1, mode="bm25")[0].paper_id in {p.paper_id for p in new}


@pytest.mark.parametrize("found", [0, 99])
def test_an_index_of_another_format_names_the_fix(tmp_path: Path, found: int) -> None:
    from rag.errors import IndexMismatchError

    a = Assistant(Settings(data_dir=tmp_path, **FAST))
    a.ingest_papers([_paper(1)])
    col = a._index.collection
    col.modify(metadata=dict(col.metadata) | {"rag_schema": found})
    with pytest.raises(IndexMismatchError) as e:
        Assistant(a.settings).search("graph")
    message = str(e.value)
    assert "\n" not in message
    assert ("rag ingest --rebuild" in message) if found < 99 else ("upgrade" in message.lower())


def test_an_embedding_cache_of_a_newer_build_is_refused_and_left_untouched(tmp_path: Path) -> None:
    import sqlite3

    from rag.errors import ConfigError
    from rag.models.embedding import CACHE_FORMAT, EmbeddingCache

    path = tmp_path / "cache.sqlite"
    cache = EmbeddingCache(path)
    cache.put_many("m", ["a text"], [np.ones(4, dtype=np.float32)])
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CACHE_FORMAT
        conn.execute(f"PRAGMA user_version = {CACHE_FORMAT + 1}")
        before = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    with pytest.raises(ConfigError, match="newer build of rag .*upgrade rag"):
        EmbeddingCache(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == before
        assert conn.execute("PRAGMA user_version").fetchone()[0] == CACHE_FORMAT + 1


def test_bm25_scores_equal_those_of_bm25s_which_it_replaced(tmp_path: Path) -> None:
    """Same tokens, same Lucene BM25 (k1 1.5, b 0.75): the same scores as bm25s, so retrieval quality is unchanged."""
    import bm25s

    papers = [_paper(i, "zeolite" if i % 9 == 0 else "") for i in range(120)]
    chunks = _chunks(papers)
    store = BM25Store(tmp_path / "s")
    store.build(chunks.ids, chunks.texts, chunks.meta, "g", chunks.papers)
    reference = bm25s.BM25()
    reference.index([store.tokenize(t) for t in chunks.texts], show_progress=False)
    for query in ["zeolite graph", "robot robot grasp", "protein fold diffusion image"]:
        tokens = [t for t in store.tokenize(query) if t in reference.vocab_dict]
        docs, scores = reference.retrieve([tokens], k=120, show_progress=False, n_threads=1)
        expected = {chunks.ids[int(d)]: float(s) for d, s in zip(docs[0], scores[0]) if s > 0}
        got = dict(store.search(query, 120))
        assert got.keys() == expected.keys()
        assert all(abs(got[c] - expected[c]) < 1e-4 * max(1.0, expected[c]) for c in got)

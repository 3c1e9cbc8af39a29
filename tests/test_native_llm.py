"""rag.models.native_llm: llama.cpp compiled for this CPU and run by the embedded server's child. No mocks:
the build is the one `make test` made (``rag llm build``; this test builds it if it is missing)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from click.testing import CliRunner

from rag.apps.cli import cli
from rag.errors import ConfigError
from rag.llm import runtime_summary
from rag.models.local_llm import LocalLLMServer, ensure_model
from rag.models.native_llm import (
    _extract,
    build,
    build_dir,
    build_running,
    find_server,
    mark_failed,
    start_background_build,
)
from rag.settings import get_settings
from tests.test_local_llm import assert_drafts_accepted

MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
CACHE = Path("/tmp/rag-test-cache")  # the assembled model of tests/test_local_llm.py
toolchain = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("c++") is None, reason="no cmake or c++: nothing to build with"
)


@pytest.fixture(scope="module")
def model_path() -> Path:
    return ensure_model(MODEL, CACHE)


def _children(pid: int) -> list[tuple[int, str]]:
    """(pid, executable) of the processes whose parent is ``pid``."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                out.append((int(stat.parent.name), os.readlink(stat.parent / "exe")))
        except (OSError, ValueError, IndexError):
            continue
    return out


def test_a_build_is_found_until_it_is_marked_failed(tmp_path: Path) -> None:
    home = build_dir(tmp_path)
    (home / "bin").mkdir(parents=True)
    binary = home / "bin" / "llama-server"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert find_server(tmp_path) is None  # no "ok": an interrupted build is not used
    (home / "ok").write_text("built\n")
    assert find_server(tmp_path) == binary
    mark_failed(binary, "it crashed")
    assert find_server(tmp_path) is None


@pytest.fixture
def running_build(tmp_path: Path) -> Iterator[Path]:
    """A cache dir whose build lock another process holds, as a build in progress does."""
    build_dir(tmp_path).parent.mkdir(parents=True)
    hold = (
        "import sys, time; from filelock import FileLock; lock = FileLock(sys.argv[1]); lock.acquire(); "
        "print('held', flush=True); time.sleep(120)"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(build_dir(tmp_path)) + ".lock"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield tmp_path
    finally:
        holder.kill()
        holder.wait()


def test_a_build_in_progress_is_seen_and_never_raced(running_build: Path) -> None:
    assert build_running(running_build)
    assert start_background_build(running_build) is None  # nothing started beside it
    with pytest.raises(ConfigError, match="another build of llama.cpp for this CPU is running"):
        build(running_build, wait=False, say=lambda _line: None)
    settings = get_settings(cache_dir=running_build)
    assert "a build for this CPU is compiling in the background" in runtime_summary(settings)
    env = {"RAG_CACHE_DIR": str(running_build), "RAG_LLM__KEEP_ALIVE": "300"}
    status = CliRunner().invoke(cli, ["llm", "status"], env=env).output
    assert "bundled llama.cpp wheel; a build for this CPU is compiling in the background (log: " in status
    assert "used from the next start of the LLM server" in status


def test_no_build_runs_and_none_starts_once_one_is_built(tmp_path: Path) -> None:
    assert not build_running(tmp_path) and not (tmp_path / "llama-native").exists()  # a status creates nothing
    home = build_dir(tmp_path)
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "llama-server").write_text("#!/bin/sh\n")
    (home / "bin" / "llama-server").chmod(0o755)
    (home / "ok").write_text("built\n")
    assert not build_running(tmp_path)
    assert start_background_build(tmp_path) is None
    settings = get_settings(cache_dir=tmp_path)
    assert runtime_summary(settings) == "LLM runtime: llama.cpp compiled for this CPU"
    r = CliRunner().invoke(cli, ["llm", "build", "--background"], env={"RAG_CACHE_DIR": str(tmp_path)})
    assert r.exit_code == 0 and "already built or being built" in r.output, r.output
    r = CliRunner().invoke(
        cli, ["llm", "build", "--background"], env={"RAG_CACHE_DIR": str(tmp_path), "RAG_LLM__NATIVE": "false"}
    )
    assert r.exit_code == 0 and "RAG_LLM__NATIVE is off" in r.output, r.output


def test_the_bundled_wheel_is_named_when_nothing_is_built(tmp_path: Path) -> None:
    settings = get_settings(cache_dir=tmp_path, llm={"native": True})
    assert runtime_summary(settings) == "LLM runtime: the bundled llama.cpp wheel"


@pytest.mark.slow
@pytest.mark.llm
@toolchain
def test_the_build_for_this_cpu_serves_answers_with_prompt_lookup_drafts(model_path: Path) -> None:
    cache = Path(get_settings().cache_dir).expanduser()  # where `make test` built it (RAG_CACHE_DIR)
    binary = build(cache, say=lambda _line: None)  # at once when it is built
    assert find_server(cache) == binary
    with LocalLLMServer(model_path, binary=binary) as server:
        assert server.pid is not None and server.base_url is not None
        assert [exe for _pid, exe in _children(server.pid)] == [str(binary)]  # it serves, not xllamacpp
        assert_drafts_accepted(server)


@pytest.mark.slow
@pytest.mark.llm
def test_a_build_that_crashes_is_marked_failed_and_the_bundled_wheel_serves(tmp_path: Path, model_path: Path) -> None:
    """A CPU feature the build relied on can still trap at run time (AMX did here): that build is never
    started again, and the question is answered by xllamacpp."""
    home = build_dir(tmp_path)
    (home / "bin").mkdir(parents=True)
    binary = home / "bin" / "llama-server"
    binary.write_text("#!/bin/sh\nkill -ILL $$\n")
    binary.chmod(0o755)
    (home / "ok").write_text("built\n")
    with LocalLLMServer(model_path, binary=binary) as server:
        assert server.base_url is not None
        reply = openai.OpenAI(base_url=server.base_url, api_key="local").chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "Say OK."}], temperature=0, max_tokens=3
        )
        assert (reply.choices[0].message.content or "").strip()
        assert server.pid is not None and _children(server.pid) == []  # llama.cpp runs inside the child
    assert "stopped while loading the model (signal 4)" in (home / "failed").read_text()
    assert find_server(tmp_path) is None


@pytest.mark.parametrize("python_has_filters", [True, False])
def test_the_source_archive_is_unpacked_only_inside_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, python_has_filters: bool
) -> None:
    if not python_has_filters:  # Python 3.11.0-3.11.3 (Debian 12): extractall has no filter argument
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    elif not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python has no tarfile filters")

    def archive(name: str, entries: list[tarfile.TarInfo]) -> Path:
        path = tmp_path / name
        with tarfile.open(path, "w:gz") as tar:
            for info in entries:
                tar.addfile(info, io.BytesIO(b"x" * info.size) if info.isfile() else None)
        return path

    def file(name: str) -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)
        info.size = 1
        return info

    def link(name: str, to: str) -> tarfile.TarInfo:
        info = tarfile.TarInfo(name)
        info.type, info.linkname = tarfile.SYMTYPE, to
        return info

    good = archive("good.tar.gz", [file("pkg/llama.cpp/CMakeLists.txt")])
    with tarfile.open(good) as tar:
        _extract(tar, tmp_path / "ok")
    assert (tmp_path / "ok" / "pkg" / "llama.cpp" / "CMakeLists.txt").read_bytes() == b"x"
    for i, entries in enumerate([[file("../escaped.txt")], [link("pkg/passwd", "/etc/passwd")]]):
        with tarfile.open(archive(f"bad{i}.tar.gz", entries)) as tar, pytest.raises(ConfigError, match="unsafe"):
            _extract(tar, tmp_path / f"out{i}")
    assert not (tmp_path / "escaped.txt").exists()

"""`rag ask` through the warm process (rag.apps.warm): real `rag` processes, a real index, extractive answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from rag.apps import warm
from rag.settings import get_settings

# each test starts and stops real answering processes (10-30 s): outside `make check`
pytestmark = [pytest.mark.skipif(not warm.supported(), reason="Unix sockets only"), pytest.mark.slow]

Q = "How many 3D bounding box annotations does WildBox have?"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    e = dict(
        os.environ,
        RAG_DATA_DIR=str(tmp_path / "data"),
        RAG_CACHE_DIR=str(tmp_path / "cache"),
        RAG_CONFIG=str(tmp_path / "none.toml"),
        RAG_LLM__KEEP_ALIVE="60",
    )
    yield e
    warm.stop(_settings(e))


def _settings(env: dict[str, str]) -> Any:
    """The settings a `rag` process with ``env`` reads."""
    keys = {k for k in {*env, *os.environ} if k.startswith("RAG_")}
    old = {k: os.environ.get(k) for k in keys}
    for k in keys:
        if k in env:
            os.environ[k] = env[k]
        else:
            os.environ.pop(k, None)
    try:
        return get_settings()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def rag(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", "from rag.apps.cli import main; main()", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)


def wait_for(check: Callable[[], bool], timeout: float = 60) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def answered(env: dict[str, str]) -> int:
    """Questions the warm process of these settings has answered (its log says so, one line each)."""
    s = _settings(env)
    log = warm.run_dir(s) / f"{warm.fingerprint(s)}.log"
    return log.read_text().count("answered in") if log.exists() else 0


def _same(a: dict[str, Any], b: dict[str, Any]) -> None:
    for d in (a, b):
        d.pop("timings", None)
    assert a == b


def test_the_second_ask_is_answered_by_the_warm_process_with_the_same_answer(
    env: dict[str, str], seed_corpus: Path
) -> None:
    assert rag(env, "ingest", str(seed_corpus)).returncode == 0
    first = rag(env, "ask", Q, "--mode", "extractive", "--json")
    assert first.returncode == 0, first.stderr
    s = _settings(env)
    assert wait_for(lambda: len(warm.status(s)) == 1)  # started by the first command, in the background
    second = rag(env, "ask", Q, "--mode", "extractive", "--json")
    assert second.returncode == 0, second.stderr
    assert answered(env) == 1
    _same(json.loads(first.stdout), json.loads(second.stdout))
    assert "237,505" in json.loads(second.stdout)["answer"]

    # the text format streams the same events; a bad question fails as it does in-process
    text = rag(env, "ask", Q, "--mode", "extractive")
    assert text.returncode == 0 and "237,505" in text.stdout and answered(env) == 2
    bad = rag(env, "ask", " ")
    alone = rag(env | {"RAG_LLM__KEEP_ALIVE": "0"}, "ask", " ")
    assert bad.returncode == alone.returncode == 1
    assert bad.stderr == alone.stderr and "Traceback" not in bad.stderr and bad.stderr.startswith("Error: ")

    # searches too: the same hits as in-process
    found = rag(env, "search", "monocular 3D detection of wild animals", "--json")
    alone_hits = rag(env | {"RAG_LLM__KEEP_ALIVE": "0"}, "search", "monocular 3D detection of wild animals", "--json")
    assert found.returncode == 0 and json.loads(found.stdout) == json.loads(alone_hits.stdout)
    assert json.loads(found.stdout)[0]["title"] == "WildBox"
    log = warm.run_dir(_settings(env)) / f"{warm.fingerprint(_settings(env))}.log"
    assert log.read_text().count("searched in") == 1

    status = rag(env, "llm", "status", "--json")
    [info] = json.loads(status.stdout)["warm"]
    assert info["data_dir"] == str(Path(env["RAG_DATA_DIR"]).resolve()) and info["same_settings"]
    pid = info["pid"]

    # writing to the index stops it; the next question is answered in its own process and starts another
    assert rag(env, "ingest", str(seed_corpus)).returncode == 0
    assert not warm._alive(pid) and warm.status(s) == []
    again = rag(env, "ask", Q, "--mode", "extractive", "--json")
    _same(json.loads(first.stdout), json.loads(again.stdout))
    assert wait_for(lambda: len(warm.status(s)) == 1)
    stopped = rag(env, "llm", "stop")
    assert "Stopped 1 warm answering process" in stopped.stdout and warm.status(s) == []


def test_a_claim_check_is_answered_by_the_warm_process_too(env: dict[str, str], seed_corpus: Path) -> None:
    """No paper passes the filter, so nothing is judged (no LLM): the warm process streams the same check, and a
    bad claim fails as it does in-process."""
    assert rag(env, "ingest", str(seed_corpus)).returncode == 0
    args = ("check", "WildBox provides 3D bounding box annotations.", "--where", "venue=Nowhere")
    first = rag(env, *args, "--json")
    assert first.returncode == 0, first.stderr
    s = _settings(env)
    assert wait_for(lambda: len(warm.status(s)) == 1)
    second = rag(env, *args, "--json")
    assert second.returncode == 0, second.stderr
    assert json.loads(first.stdout) == json.loads(second.stdout)
    assert json.loads(second.stdout)["verdict"] == "not enough evidence"
    text = rag(env, *args)
    assert text.returncode == 0 and text.stdout.startswith("No paper found to judge.")
    log = warm.run_dir(s) / f"{warm.fingerprint(s)}.log"
    assert log.read_text().count("checked in") == 2
    bad = rag(env, "check", " ")
    alone = rag(env | {"RAG_LLM__KEEP_ALIVE": "0"}, "check", " ")
    assert bad.returncode == alone.returncode == 1
    assert bad.stderr == alone.stderr and "Traceback" not in bad.stderr and bad.stderr.startswith("Error: ")


def test_other_settings_are_never_answered_by_a_warm_process_of_different_ones(
    env: dict[str, str], seed_corpus: Path
) -> None:
    assert rag(env, "ingest", str(seed_corpus)).returncode == 0
    assert rag(env, "ask", Q, "--mode", "extractive", "--json").returncode == 0
    s = _settings(env)
    assert wait_for(lambda: len(warm.status(s)) == 1)
    other = env | {"RAG_RETRIEVAL__K": "2"}
    assert warm.fingerprint(_settings(other)) != warm.fingerprint(s)
    r = rag(other, "ask", Q, "--mode", "extractive", "--json")
    assert r.returncode == 0 and answered(env) == 0
    assert len(json.loads(r.stdout)["sources"]) <= 2
    assert wait_for(lambda: len(warm.status(s)) == 2)  # it started its own (the fixture stops both)


def test_an_idle_warm_process_stops_by_itself_and_cleans_up(env: dict[str, str], seed_corpus: Path) -> None:
    env = env | {"RAG_LLM__KEEP_ALIVE": "2"}
    assert rag(env, "ingest", str(seed_corpus)).returncode == 0
    assert rag(env, "ask", Q, "--mode", "extractive").returncode == 0
    s = _settings(env)
    assert wait_for(lambda: len(warm.status(s)) == 1)
    pid = warm.status(s)[0]["pid"]
    assert wait_for(lambda: not warm._alive(pid), timeout=30)
    assert not list(warm.run_dir(s).glob("*.sock")) and not list(warm.run_dir(s).glob("*.json"))

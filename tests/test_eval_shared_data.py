"""Benchmark data the project does not ship: found through RAG_SHARED_DATA, or a clear error."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rag import ConfigError
from rag.apps.cli import cli
from rag.evaluation.shared_data import shared_data


def test_missing_setting_names_the_variable_and_where_to_get_the_data(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAG_SHARED_DATA", raising=False)
    with pytest.raises(ConfigError, match=r"set RAG_SHARED_DATA .*BEIR SciFact.*scifact\.zip"):
        shared_data("scifact")


def test_missing_file_names_its_path_and_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_SHARED_DATA", str(tmp_path))
    with pytest.raises(ConfigError, match="pqal_dev.json not found .*github.com/pubmedqa/pubmedqa") as e:
        shared_data("pubmedqa/pqal_dev.json")
    assert str(tmp_path / "pubmedqa" / "pqal_dev.json") in str(e.value)
    (tmp_path / "pubmedqa").mkdir()
    (tmp_path / "pubmedqa" / "pqal_dev.json").write_text("{}")
    assert shared_data("pubmedqa/pqal_dev.json") == tmp_path / "pubmedqa" / "pqal_dev.json"
    assert shared_data("pubmedqa", root=tmp_path) == tmp_path / "pubmedqa"  # an explicit folder wins


def test_rag_eval_without_the_data_is_one_clear_line(tmp_path: Path) -> None:
    env = {"RAG_DATA_DIR": str(tmp_path / "data"), "RAG_CONFIG": str(tmp_path / "none.toml")}
    result = CliRunner().invoke(cli, ["eval", "scifact"], env=env | {"RAG_SHARED_DATA": str(tmp_path)})
    assert result.exit_code == 1 and "Traceback" not in result.output
    message = result.output.strip().splitlines()[-1]
    assert message.startswith(f"Error: {tmp_path / 'scifact'} not found") and "RAG_SHARED_DATA" in message

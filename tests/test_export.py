"""A pre-built index exported once and imported elsewhere: same search results, nothing embedded."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rag import Assistant, IndexMismatchError, IngestError, Settings
from rag.apps.cli import cli

QUERIES = ["drone footage of zebras", "masked generative image model", "who is responsible for a multi-agent failure"]


def _titles(assistant: Assistant) -> list[list[str]]:
    return [[h.title for h in assistant.search(q, k=5)] for q in QUERIES]


def test_export_then_import_elsewhere_gives_identical_results_without_embedding(
    backend: str, make_assistant: Any, seed_corpus: Path, tmp_path: Path, embeddings: Any
) -> None:
    source = make_assistant()
    source.ingest([seed_corpus])
    export = tmp_path / "seed-index.zip"
    info = source.export_index(export)
    assert info["papers"] == 19 and info["chunks"] == source.stats()["chunks"]

    target = Assistant(Settings(data_dir=tmp_path / "elsewhere"), embeddings=embeddings)
    before = embeddings.computed
    assert target.import_index(export) == {"chunks": info["chunks"], "papers": 19}
    assert embeddings.computed == before, "import embedded something"
    assert _titles(target) == _titles(source)
    # The imported index is a normal one: re-ingesting the same corpus finds nothing to do.
    again = target.ingest([seed_corpus])
    assert again.unchanged == 19 and again.embedded == 0


def test_import_refuses_a_non_empty_index_unless_replace(
    seed_assistant: Assistant, tmp_path: Path, embeddings: Any
) -> None:
    export = tmp_path / "x.zip"
    seed_assistant.export_index(export)
    target = Assistant(Settings(data_dir=tmp_path / "t"), embeddings=embeddings)
    target.import_index(export)
    with pytest.raises(IngestError, match="--replace"):
        target.import_index(export)
    assert target.import_index(export, replace=True)["papers"] == 19
    assert target.stats()["papers"] == 19


def test_import_with_another_embedding_model_is_refused(seed_assistant: Assistant, tmp_path: Path) -> None:
    export = tmp_path / "x.zip"
    seed_assistant.export_index(export)
    other = Assistant(Settings(data_dir=tmp_path / "t", embedding={"model": "wordllama-l2-supercat-256"}))
    with pytest.raises(IndexMismatchError, match="RAG_EMBEDDING__MODEL"):
        other.import_index(export)
    assert other._index.count_chunks() == 0


def test_damaged_or_foreign_files_are_clear_errors(tmp_path: Path, embeddings: Any) -> None:
    target = Assistant(Settings(data_dir=tmp_path / "t"), embeddings=embeddings)
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(IngestError, match="Cannot read the index export"):
        target.import_index(junk)
    foreign = tmp_path / "foreign.zip"
    with zipfile.ZipFile(foreign, "w") as z:
        z.writestr("manifest.json", '{"format": "something-else"}')
    with pytest.raises(IngestError, match="not an index export"):
        target.import_index(foreign)


def test_cli_export_and_import(seed_corpus: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    env = {"RAG_EMBEDDING__MODEL": "wordllama-l2-supercat-256"}
    a, b, export = tmp_path / "a", tmp_path / "b", tmp_path / "i.zip"
    assert runner.invoke(cli, ["--data-dir", str(a), "ingest", str(seed_corpus)], env=env).exit_code == 0
    out = runner.invoke(cli, ["--data-dir", str(a), "export", str(export)], env=env)
    assert out.exit_code == 0 and "Exported 19 papers" in out.output
    out = runner.invoke(cli, ["--data-dir", str(b), "import", str(export)], env=env)
    assert out.exit_code == 0 and "Imported 19 papers" in out.output
    out = runner.invoke(cli, ["--data-dir", str(b), "import", str(export)], env=env)
    assert out.exit_code == 1 and "--replace" in out.output and "Traceback" not in out.output
    out = runner.invoke(cli, ["--data-dir", str(tmp_path / "empty"), "export", str(tmp_path / "e.zip")], env=env)
    assert out.exit_code == 1 and "empty" in out.output

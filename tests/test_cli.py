"""The `rag` command line, in-process (CliRunner) and as a real process with networking blocked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from rag.apps.cli import cli

DATA = Path(__file__).parent / "data"


@pytest.fixture
def run(tmp_path: Path):  # type: ignore[no-untyped-def]
    runner = CliRunner()
    env = {"RAG_DATA_DIR": str(tmp_path / "data"), "RAG_CONFIG": str(tmp_path / "none.toml")}

    def invoke(*args: str, extra_env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        return runner.invoke(cli, list(args), env=env | (extra_env or {}), catch_exceptions=False)

    return invoke


def test_ingest_search_stats_json(run, seed_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    r = run("ingest", str(seed_corpus))
    assert r.exit_code == 0, r.output
    assert "19 papers read: 19 added" in r.output
    r = run("search", "drone footage of zebras in 3D", "-k", "2", "--json")
    hits = json.loads(r.output)
    assert [set(h) for h in hits] == [{"paper_id", "title", "score", "text", "metadata"}] * 2
    assert hits[0]["title"] == "WildBox" and hits[0]["score"] >= hits[1]["score"]
    stats = json.loads(run("stats", "--json").output)
    assert set(stats) == {"papers", "chunks", "embedding_model", "dimension", "bytes"}
    assert stats["papers"] == 19 and stats["dimension"] == 384 and stats["bytes"] > 0
    again = run("ingest", str(seed_corpus), "--json")
    assert json.loads(again.output) | {} == json.loads(again.output)
    assert json.loads(again.output)["embedded"] == 0 and json.loads(again.output)["unchanged"] == 19


def test_search_with_where_filter(run) -> None:  # type: ignore[no-untyped-def]
    assert run("ingest", str(DATA / "abstracts.jsonl")).exit_code == 0
    papers = [json.loads(line) for line in (DATA / "abstracts.jsonl").read_text().splitlines() if line.strip()]
    venue = papers[0]["venue"]
    r = run("search", "learning", "-k", "20", "--where", f"venue={venue}", "--json")
    hits = json.loads(r.output)
    assert hits and all(h["metadata"]["venue"] == venue for h in hits)
    assert len(hits) == sum(p.get("venue") == venue for p in papers)


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ("", "empty.jsonl", "empty.jsonl"),
        ('{"abstract": "ok"}\n{"title": "no abstract"}\n', "missing.jsonl", "missing.jsonl, line 2"),
        ('{"abstract": "ok"}\n{"abstract": "ok2"}\n{"abstract": \n', "broken.jsonl", "broken.jsonl, line 3"),
        ('{"abstract": "   "}\n', "blank.jsonl", "blank.jsonl, line 1"),
    ],
)
def test_bad_input_exits_1_with_clear_message_and_writes_nothing(
    run, tmp_path: Path, content: str, name: str, message: str
) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "g1", "abstract": "A fine abstract about zebras."}\n')
    bad = tmp_path / name
    bad.write_text(content)
    r = run("ingest", str(good), str(bad))
    assert r.exit_code == 1
    assert message in r.output and "Traceback" not in r.output
    assert "Error:" in r.output
    # nothing half-written: the good file was not indexed either
    assert json.loads(run("stats", "--json").output)["papers"] == 0


def test_non_utf8_file_is_a_clear_error(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes('{"abstract": "ok"}\n{"abstract": "caf\xe9"}\n'.encode("latin-1"))
    r = run("ingest", str(bad))
    assert r.exit_code == 1 and "latin1.jsonl" in r.output and "UTF-8" in r.output


def test_search_before_ingest_says_what_to_do(run) -> None:  # type: ignore[no-untyped-def]
    r = run("search", "zebras")
    assert r.exit_code == 1 and "rag ingest" in r.output


def test_empty_query_and_bad_filter_are_clear_errors(run, seed_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    run("ingest", str(seed_corpus))
    r = run("search", "   ")
    assert r.exit_code == 1 and "empty" in r.output
    r = run("search", "zebras", "--where", "venue")
    assert r.exit_code == 1 and "key=value" in r.output


def test_over_long_question_is_a_clear_error(run) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import free_port

    question = "How many 3D bounding box annotations does WildBox have?"
    env = {"RAG_ANSWER__MAX_QUESTION_CHARS": "40", "RAG_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}
    for args, extra_env, limit in [((), env, 40), (("--json",), env, 40), (("--mode", "extractive"), {}, 2000)]:
        q = question if limit == 40 else "x" * 2001
        r = run("ask", q, *args, extra_env=extra_env)
        assert r.exit_code == 1 and "Traceback" not in r.output
        assert r.output.strip().splitlines() == [
            f"Error: The question has {len(q)} characters; the limit is {limit} (RAG_ANSWER__MAX_QUESTION_CHARS)."
        ]


def test_config_masks_secrets(run) -> None:  # type: ignore[no-untyped-def]
    r = run("config", extra_env={"RAG_LLM_API_KEY": "sk-very-secret-123", "RAG_LLM_BASE_URL": "http://127.0.0.1:9/v1"})
    assert r.exit_code == 0
    assert "sk-very-secret-123" not in r.output and "llm.api_key = **********" in r.output
    assert "llm.base_url = http://127.0.0.1:9/v1" in r.output
    data = json.loads(run("config", "--json", extra_env={"RAG_LLM_API_KEY": "sk-very-secret-123"}).output)
    assert data["llm"]["api_key"] == "**********"


def test_bad_setting_is_a_clear_error(run) -> None:  # type: ignore[no-untyped-def]
    r = run("stats", extra_env={"RAG_RETRIEVAL__K": "zero"})
    assert r.exit_code == 1 and "retrieval.k" in r.output and "Traceback" not in r.output


def test_mismatched_index_tells_how_to_rebuild(run, seed_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    run("ingest", str(seed_corpus))
    r = run("search", "zebras", extra_env={"RAG_CHUNKING__MAX_TOKENS": "100"})
    assert r.exit_code == 1 and "rag ingest --rebuild" in r.output
    r = run("ingest", "--rebuild", str(seed_corpus), extra_env={"RAG_CHUNKING__MAX_TOKENS": "100"})
    assert r.exit_code == 0 and "19 added" in r.output


@pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare(1)")
def test_ingest_and_search_work_with_networking_blocked(tmp_path: Path, seed_corpus: Path) -> None:
    """The real console script in a network namespace with no interfaces up: nothing may download."""
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n not permitted here: {probe.stderr.decode()[:200]}")
    rag = Path(sys.executable).with_name("rag")
    env = os.environ | {
        "RAG_DATA_DIR": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),  # fresh tiktoken cache: encodings must come from the package
        "HOME": str(tmp_path),
        "HF_HUB_OFFLINE": "0",
    }
    env.pop("TIKTOKEN_CACHE_DIR", None)
    check = subprocess.run(
        [
            "unshare",
            "-n",
            sys.executable,
            "-c",
            "import socket; socket.create_connection(('pypi.org', 443), timeout=3)",
        ],
        capture_output=True,
        env=env,
    )
    assert check.returncode != 0  # the namespace really has no network
    ingest = subprocess.run(
        ["unshare", "-n", str(rag), "ingest", str(seed_corpus)], capture_output=True, text=True, env=env, timeout=600
    )
    assert ingest.returncode == 0, ingest.stderr[-2000:]
    search = subprocess.run(
        ["unshare", "-n", str(rag), "search", "drone footage of zebras in 3D", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert search.returncode == 0, search.stderr[-2000:]
    assert json.loads(search.stdout)[0]["title"] == "WildBox"


def test_ask_json_extractive(run, seed_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    run("ingest", str(seed_corpus))
    r = run("ask", "How many 3D bounding box annotations does WildBox have?", "--mode", "extractive", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert {"answer", "refused", "citations", "sources"} <= set(data)
    assert data["refused"] is False and "237,505" in data["answer"]
    c = data["citations"][0]
    assert set(c) >= {"n", "paper_id", "title", "text", "span"} and c["title"] == "WildBox"
    assert data["sources"][c["n"] - 1]["paper_id"] == c["paper_id"]
    r = run("ask", "What is the capital of France?", "--mode", "extractive")
    assert r.exit_code == 0 and "The indexed abstracts don't answer this." in r.output and "Closest papers" in r.output


def test_ask_unreachable_llm_is_a_clear_error(run, seed_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import free_port

    run("ingest", str(seed_corpus))
    r = run(
        "ask",
        "How many 3D bounding box annotations does WildBox have?",
        extra_env={
            "RAG_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
            "RAG_LLM__MAX_RETRIES": "0",
            "RAG_LLM_API_KEY": "sk-do-not-print-me-42",
        },
    )
    assert r.exit_code == 1 and "Cannot reach the LLM server" in r.output
    assert "sk-do-not-print-me-42" not in r.output and "Traceback" not in r.output

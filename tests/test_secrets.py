"""API keys never reach the user's screen, the logs or an eval report.

Distinctive keys are set through the environment names users set; the LLM endpoint is a closed port or
a real HTTP server on 127.0.0.1 that fails every request and echoes the Authorization header back, in
its body and in a response header, as some gateways and proxies do. Python logging runs at DEBUG, so
the openai/httpx/httpcore debug lines (which print response headers) are checked too.
"""

from __future__ import annotations

import http.server
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rag import Assistant, Settings
from rag.apps.cli import cli
from tests.conftest import free_port

DATA = Path(__file__).parent / "data"
LLM_KEY = "sk-test-SECRET-123456"
OPAQUE_KEY = "opaque-SECRET-7f3a9c"  # not shaped like an API key: only the configured value can mask it
SECRETS = {
    "RAG_LLM_API_KEY": LLM_KEY,
    "RAG_EMBEDDING__API_KEY": "sk-emb-SECRET-654321",
    "RAG_SERVER__API_TOKEN": "token-SECRET-server-42",
    "RAG_UI__AUTH": "ann:pw-SECRET-ui-99",
}
QUESTION = "What thermal conductivity of suspended graphene did Raman thermometry measure?"


ALL_SECRETS = (*SECRETS.values(), OPAQUE_KEY, "pw-SECRET-url")


def assert_no_secret(*texts: str, secrets: Any = ALL_SECRETS) -> None:
    for text in texts:
        for secret in secrets:
            assert secret not in text, f"{secret!r} leaked: {text[:2000]}"


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Path:
    """A data dir with tests/data/abstracts.jsonl indexed (the real embedding model)."""
    from rag.models.embedding import CachedEmbeddings

    path = tmp_path_factory.mktemp("secrets")
    Assistant(Settings(data_dir=path), embeddings=CachedEmbeddings(minilm, embedding_cache)).ingest(
        [DATA / "abstracts.jsonl"]
    )
    return path


class _EchoHandler(http.server.BaseHTTPRequestHandler):
    """Fails with the status code that starts the path (/401/v1/chat/completions) and echoes the key."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization", "")
        status = int(self.path.split("/")[1])
        body = json.dumps(
            {
                "error": {
                    "message": f"Incorrect API key provided: {auth}",
                    "type": "invalid_request_error",
                    "param": None,
                    "code": "invalid_api_key",
                }
            }
        ).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Echo-Authorization", auth)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def echo_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def cli_env(data_dir: Path, tmp_path: Path, **extra: str) -> dict[str, str]:
    return (
        {
            "RAG_DATA_DIR": str(data_dir),
            "RAG_CONFIG": str(tmp_path / "none.toml"),
            "RAG_LLM__MAX_RETRIES": "0",
            "RAG_LLM__TIMEOUT": "20",
            "RAG_ANSWER__MIN_RELEVANCE": "-1",
        }
        | SECRETS
        | extra
    )


# ---------------------------------------------------------------------------------------------- rag config
@pytest.mark.parametrize(
    "key_var", ["RAG_LLM_API_KEY", "RAG_LLM__API_KEY", "RAG_EMBEDDING__API_KEY", "RAG_EMBEDDING_API_KEY"]
)
def test_config_masks_every_secret(tmp_path: Path, key_var: str) -> None:
    env = (
        {
            "RAG_DATA_DIR": str(tmp_path),
            "RAG_CONFIG": str(tmp_path / "none.toml"),
            "RAG_CHROMA_URL": "http://ann:pw-SECRET-url@127.0.0.1:8000",
        }
        | SECRETS
        | {key_var: OPAQUE_KEY}
    )
    runner = CliRunner()
    text = runner.invoke(cli, ["config"], env=env, catch_exceptions=False)
    as_json = runner.invoke(cli, ["config", "--json"], env=env, catch_exceptions=False)
    assert text.exit_code == 0 and as_json.exit_code == 0
    assert_no_secret(text.output, as_json.output)
    data = json.loads(as_json.output)
    group = "llm" if "LLM" in key_var else "embedding"
    assert data[group]["api_key"] == "**********" and data["server"]["api_token"] == data["ui"]["auth"] == "**********"
    assert data["chroma_url"] == "http://***@127.0.0.1:8000"  # a password in a URL is masked, the host is kept
    assert f"{group}.api_key = **********" in text.output


# ---------------------------------------------------------------------------------------------- rag ask
@pytest.mark.parametrize("key", [LLM_KEY, OPAQUE_KEY])
@pytest.mark.parametrize("as_json", [False, True])
def test_ask_with_an_unreachable_llm_says_so_without_the_key(
    data_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, key: str, as_json: bool
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    env = cli_env(data_dir, tmp_path, RAG_LLM_BASE_URL=url, RAG_LLM_API_KEY=key)
    r = CliRunner().invoke(cli, ["ask", QUESTION] + ["--json"] * as_json, env=env, catch_exceptions=False)
    assert r.exit_code == 1 and "Traceback" not in r.output
    [line] = r.output.strip().splitlines()
    assert line.startswith(f"Error: Cannot reach the LLM server at {url}") and line.endswith(
        "Check RAG_LLM_BASE_URL."
    ), line
    assert any(rec.name.startswith(("openai", "httpx", "httpcore")) for rec in caplog.records)  # debug logging was on
    assert_no_secret(r.output, caplog.text, *(rec.getMessage() for rec in caplog.records))


@pytest.mark.parametrize("key", [LLM_KEY, OPAQUE_KEY])
@pytest.mark.parametrize(
    ("status", "message"),
    [
        (401, "rejected the API key: check RAG_LLM_API_KEY."),
        (403, "HTTP 403"),
        (500, "HTTP 500"),
    ],
)
def test_a_server_that_echoes_the_key_does_not_get_it_shown_or_logged(
    data_dir: Path, tmp_path: Path, echo_url: str, caplog: pytest.LogCaptureFixture, key: str, status: int, message: str
) -> None:
    caplog.set_level(logging.DEBUG)
    env = cli_env(data_dir, tmp_path, RAG_LLM_BASE_URL=f"{echo_url}/{status}/v1", RAG_LLM_API_KEY=key)
    r = CliRunner().invoke(cli, ["ask", QUESTION], env=env, catch_exceptions=False)
    assert r.exit_code == 1 and "Traceback" not in r.output
    lines = r.output.strip().splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith(f"Error: The LLM server at {echo_url}/{status}/v1 ")
        and message in lines[0]
    ), lines
    if status != 401:  # the server's own words are shown, with the key masked
        assert "Incorrect API key provided: ***" in lines[0]
    echoed = [rec for rec in caplog.records if "X-Echo-Authorization" in rec.getMessage()]
    assert echoed, "httpcore logs response headers at DEBUG: the echoed header must be among the records"
    assert_no_secret(r.output, caplog.text, *(rec.getMessage() for rec in caplog.records))


@pytest.mark.slow
def test_openai_debug_log_of_a_real_process_holds_no_key(data_dir: Path, tmp_path: Path, echo_url: str) -> None:
    """OPENAI_LOG=debug is how a user turns on the SDK's own request logging (on stderr)."""
    env = os.environ | cli_env(data_dir, tmp_path, RAG_LLM_BASE_URL=f"{echo_url}/401/v1", OPENAI_LOG="debug")
    proc = subprocess.run(
        [sys.executable, "-m", "rag.apps.cli", "ask", QUESTION], capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "HTTP Request: POST" in proc.stderr  # the SDK's debug log was on
    assert proc.stderr.strip().splitlines()[-1].endswith("rejected the API key: check RAG_LLM_API_KEY.")
    assert_no_secret(proc.stdout, proc.stderr)


# ---------------------------------------------------------------------------------------------- eval report
def test_eval_report_masks_settings_and_judge_errors(
    data_dir: Path, tmp_path: Path, echo_url: str, minilm: Any, embedding_cache: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rag.evaluation.harness import evaluate_gold
    from rag.models.embedding import CachedEmbeddings

    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "\n".join(
            json.dumps(c)
            for c in [
                {"id": "graphene", "question": QUESTION, "answer_keywords": ["2600"], "supporting_ids": ["2401.00002"]},
                {
                    "id": "follow-up",
                    "question": "And what lowers it?",
                    "supporting_ids": ["2401.00002"],
                    "history": [
                        ["user", "What did the graphene paper measure?"],
                        ["assistant", "Thermal conductivity [1]."],
                    ],
                },
                {"id": "unanswerable", "question": "Who won the 1998 World Cup?", "type": "unanswerable"},
            ]
        )
        + "\n"
    )
    settings = Settings(
        data_dir=data_dir,
        chroma_url=None,
        llm={"base_url": f"http://ann:pw-SECRET-url@127.0.0.1:{free_port()}/v1", "api_key": LLM_KEY, "max_retries": 0},
        embedding={"api_key": SECRETS["RAG_EMBEDDING__API_KEY"]},
        server={"api_token": SECRETS["RAG_SERVER__API_TOKEN"]},
        ui={"auth": SECRETS["RAG_UI__AUTH"]},
        answer={"mode": "extractive"},
    )
    assistant = Assistant(settings, embeddings=CachedEmbeddings(minilm, embedding_cache))
    monkeypatch.setenv("RAG_EVAL_JUDGE_API_KEY", OPAQUE_KEY)  # the judge endpoint answers 403, echoing it
    doc = evaluate_gold(
        gold, [None], tmp_path / "out", assistants=[assistant], judge_url=f"{echo_url}/403/v1", judge_model="judge"
    )
    report_json = (tmp_path / "out" / "report.json").read_text()
    report_md = (tmp_path / "out" / "report.md").read_text()
    run = doc["runs"][0]
    assert run["settings"]["llm"]["api_key"] == "**********" and run["settings"]["ui"]["auth"] == "**********"
    assert run["settings"]["llm"]["base_url"].startswith("http://***@127.0.0.1:")
    reasons = [s["reason"] for row in run["rows"] for s in row["judge"].values()]
    assert reasons and all("HTTP 403" in r or "403" in r for r in reasons), reasons  # the judge did fail, and says why
    assert_no_secret(report_json, report_md, json.dumps(doc))

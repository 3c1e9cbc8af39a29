"""The HTTP API (`rag serve`): the official openai client against a real uvicorn server, errors, auth, fuzzing."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import openai
import pytest
import schemathesis
import uvicorn
from click.testing import CliRunner
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from pydantic import SecretStr

from rag import Assistant, ConfigError
from rag.apps.cli import cli
from rag.apps.http_api import create_app
from rag.settings import Settings, check_bind
from tests.conftest import free_port
from tests.fakes import ScriptedChatModel

DATA = Path(__file__).parent / "data"
QUESTION = "How many 3D bounding box annotations does WildBox have?"


class _Server:
    """uvicorn serving ``create_app(assistant)`` on 127.0.0.1 in a thread (what `rag serve` runs)."""

    def __init__(self, assistant: Assistant) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        config = uvicorn.Config(create_app(assistant), host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> _Server:
        self.thread.start()
        deadline = time.time() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.time() < deadline, "uvicorn did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def _citing_reply(prompt: str) -> str:
    """Repeats the first evidence sentence with its marker (depends on the prompt it was sent)."""
    m = re.search(r"^\[(\d+)\] [^:\n]*: ([^.\n]*\.)", prompt, re.M)
    return f"{m.group(2)} [{m.group(1)}]" if m else "The indexed abstracts don't answer this."


@pytest.fixture(scope="module")
def server(seed_assistant: Assistant) -> Iterator[_Server]:
    with _Server(seed_assistant) as s:
        yield s


@pytest.fixture(scope="module")
def client(server: _Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0, timeout=600)


@pytest.fixture(scope="module")
def small_assistant(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Assistant:
    """The 10 test abstracts (venue/year metadata), extractive by default, a fake LLM, a 4 kB upload limit."""
    from rag.models.embedding import CachedEmbeddings

    settings = Settings(
        data_dir=tmp_path_factory.mktemp("api"), answer={"mode": "extractive"}, server={"max_upload_bytes": 4000}
    )
    a = Assistant(
        settings,
        embeddings=CachedEmbeddings(minilm, embedding_cache),
        chat_model=ScriptedChatModel(reply=_citing_reply),
    )
    a.ingest([DATA / "abstracts.jsonl"])
    return a


@pytest.fixture
def api(small_assistant: Assistant) -> TestClient:
    return TestClient(create_app(small_assistant))


def _cli_ask_json(assistant: Assistant, question: str, mode: str) -> dict[str, Any]:
    env = {"RAG_DATA_DIR": str(assistant.settings.data_dir), "RAG_CONFIG": "/nonexistent/rag.toml"}
    r = CliRunner().invoke(cli, ["ask", question, "--json", "--mode", mode], env=env, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return dict(json.loads(r.output))


# ------------------------------------------------------------------ the openai client against a real server
def test_openai_client_gets_same_citations_as_rag_ask_json(client: openai.OpenAI, seed_assistant: Assistant) -> None:
    resp = client.chat.completions.create(
        model="rag-abstracts", messages=[{"role": "user", "content": QUESTION}], extra_body={"mode": "extractive"}
    )
    rag = resp.model_extra["rag"]
    cli_json = _cli_ask_json(seed_assistant, QUESTION, "extractive")
    assert not rag["refused"] and rag["citations"]
    assert rag["citations"] == cli_json["citations"]
    assert [s["paper_id"] for s in rag["sources"]] == [s["paper_id"] for s in cli_json["sources"]]
    content = resp.choices[0].message.content
    assert content == rag["answer"] == cli_json["answer"] and "237,505" in content
    assert re.search(r"\[1\]", content) and rag["citations"][0]["title"] == "WildBox"
    assert resp.choices[0].finish_reason == "stop" and resp.object == "chat.completion"


def test_openai_client_streams_the_answer_and_ends_with_citations(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="rag-abstracts",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        extra_body={"mode": "extractive"},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop" and all(c.choices[0].finish_reason is None for c in chunks[:-1])
    rag = last.model_extra["rag"]
    assert rag["citations"] and rag["citations"][0]["title"] == "WildBox"
    assert "[1]" in text and "237,505" in text
    assert all("rag" not in (c.model_extra or {}) for c in chunks[:-1])


def test_follow_up_uses_history_and_filters_apply(client: openai.OpenAI, seed_assistant: Assistant) -> None:
    msgs = [
        {"role": "system", "content": "ignored"},
        {"role": "user", "content": "What is WildBox?"},
        {"role": "assistant", "content": "A dataset of drone footage of wildlife [1]."},
        {"role": "user", "content": "How many 3D bounding box annotations does WildBox have?"},
    ]
    resp = client.chat.completions.create(model="x", messages=msgs, extra_body={"mode": "extractive", "k": 2})
    rag = resp.model_extra["rag"]
    assert len(rag["sources"]) <= 2 and rag["citations"][0]["title"] == "WildBox"


def test_models_papers_health_and_search_over_http(server: _Server, client: openai.OpenAI) -> None:
    import httpx

    assert [m.id for m in client.models.list()] == ["rag-abstracts"]
    base = server.url.removesuffix("/v1")
    assert httpx.get(f"{base}/healthz").json() == {"status": "ok"}
    papers = httpx.get(f"{server.url}/papers").json()["data"]
    assert len(papers) == 19 and {"paper_id", "title", "abstract"} <= set(papers[0])
    hits = httpx.post(f"{server.url}/search", json={"query": "drone footage of zebras in 3D", "k": 2}).json()["data"]
    assert [set(h) for h in hits] == [{"paper_id", "title", "score", "text", "metadata"}] * 2
    assert hits[0]["title"] == "WildBox"
    assert "/v1/chat/completions" in httpx.get(f"{base}/openapi.json").json()["paths"]


def test_concurrent_requests_are_all_served(client: openai.OpenAI, server: _Server) -> None:
    import httpx

    def ask(i: int) -> list[str]:
        r = client.chat.completions.create(
            model="x", messages=[{"role": "user", "content": QUESTION}], extra_body={"mode": "extractive"}
        )
        return [c["paper_id"] for c in r.model_extra["rag"]["citations"]]

    def search(i: int) -> str:
        r = httpx.post(f"{server.url}/search", json={"query": "drone footage of zebras in 3D", "k": 3}, timeout=120)
        r.raise_for_status()
        return str(r.json()["data"][0]["title"])

    with ThreadPoolExecutor(8) as pool:
        asks = list(pool.map(ask, range(8)))
        searches = list(pool.map(search, range(16)))
    assert all(a == asks[0] and a for a in asks)
    assert searches == ["WildBox"] * 16


@pytest.mark.slow
@pytest.mark.llm
def test_embedded_llm_answer_through_the_server(client: openai.OpenAI) -> None:
    resp = client.chat.completions.create(model="rag-abstracts", messages=[{"role": "user", "content": QUESTION}])
    rag = resp.model_extra["rag"]
    assert rag["mode"] == "llm" and not rag["refused"], rag
    assert "237,505" in resp.choices[0].message.content or "237505" in resp.choices[0].message.content
    assert {c["title"] for c in rag["citations"]} == {"WildBox"}
    assert re.search(r"\[\d+\]", resp.choices[0].message.content)


# ------------------------------------------------------------------ auth
def test_token_is_required_and_accepted_and_never_echoed(seed_assistant: Assistant) -> None:
    s = seed_assistant.settings.model_copy(
        update={"server": seed_assistant.settings.server.model_copy(update={"api_token": SecretStr("s3cret-token")})}
    )
    authed = Assistant(s, embeddings=seed_assistant.embeddings)
    with _Server(authed) as srv:
        for key in ("wrong", ""):
            bad = openai.OpenAI(base_url=srv.url, api_key=key or "x", max_retries=0)
            with pytest.raises(openai.AuthenticationError) as e:
                bad.chat.completions.create(
                    model="x", messages=[{"role": "user", "content": QUESTION}], extra_body={"mode": "extractive"}
                )
            assert "RAG_SERVER__API_TOKEN" in str(e.value) and "s3cret" not in str(e.value)
        good = openai.OpenAI(base_url=srv.url, api_key="s3cret-token", max_retries=0)
        r = good.chat.completions.create(
            model="x", messages=[{"role": "user", "content": QUESTION}], extra_body={"mode": "extractive"}
        )
        assert r.model_extra["rag"]["citations"]
        import httpx

        assert httpx.get(f"{srv.url}/papers").status_code == 401
        assert httpx.get(srv.url.removesuffix("/v1") + "/healthz").status_code == 200


def test_non_loopback_bind_needs_a_token(seed_assistant: Assistant, tmp_path: Path) -> None:
    check_bind(seed_assistant.settings, "127.0.0.1", "server")
    check_bind(seed_assistant.settings, "::1", "server")
    check_bind(seed_assistant.settings, "localhost", "server")
    with pytest.raises(ConfigError, match="RAG_SERVER__API_TOKEN"):
        check_bind(seed_assistant.settings, "0.0.0.0", "server")
    env = {"RAG_DATA_DIR": str(tmp_path), "RAG_CONFIG": str(tmp_path / "none.toml")}
    r = CliRunner().invoke(cli, ["serve", "--host", "0.0.0.0", "--port", str(free_port())], env=env)
    assert r.exit_code == 1 and "RAG_SERVER__API_TOKEN" in r.output


# ------------------------------------------------------------------ precise 4xx errors
def _chat(api: TestClient, **body: Any) -> Any:
    return api.post("/v1/chat/completions", json=body)


def test_empty_question_is_400(api: TestClient) -> None:
    for stream in (False, True):
        r = _chat(api, messages=[{"role": "user", "content": "   "}], stream=stream)
        assert r.status_code == 400 and r.json()["error"]["message"] == "The question is empty."
        assert r.json()["error"]["code"] == "empty_question"


def test_too_long_question_is_400(api: TestClient) -> None:
    r = _chat(api, messages=[{"role": "user", "content": "why " * 1000}])
    assert r.status_code == 400 and "limit is 2000" in r.json()["error"]["message"]


def test_missing_or_empty_messages_is_422(api: TestClient) -> None:
    r = api.post("/v1/chat/completions", json={"model": "x"})
    assert r.status_code == 422 and r.json()["error"]["message"] == "Invalid request: messages: Field required"
    r = _chat(api, messages=[])
    assert r.status_code == 422 and "messages" in r.json()["error"]["message"]
    r = api.post("/v1/chat/completions", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422


def test_no_user_message_is_400(api: TestClient) -> None:
    r = _chat(api, messages=[{"role": "system", "content": "Be brief."}])
    assert r.status_code == 400 and "no user message" in r.json()["error"]["message"]


def test_unknown_filter_key_is_400_and_known_keys_filter(api: TestClient) -> None:
    r = _chat(api, messages=[{"role": "user", "content": "protein attention"}], filters={"colour": "red"})
    err = r.json()["error"]
    assert r.status_code == 400 and err["code"] == "unknown_filter_key" and "'colour'" in err["message"]
    assert "venue" in err["message"]
    r = api.post("/v1/search", json={"query": "learning", "filters": {"nope": 1}})
    assert r.status_code == 400 and "'nope'" in r.json()["error"]["message"]
    papers = [json.loads(line) for line in (DATA / "abstracts.jsonl").read_text().splitlines() if line.strip()]
    venue = papers[0]["venue"]
    hits = api.post("/v1/search", json={"query": "learning", "k": 20, "filters": {"venue": venue}}).json()["data"]
    assert hits and all(h["metadata"]["venue"] == venue for h in hits)


def test_ingest_upload_errors_are_precise(api: TestClient) -> None:
    r = api.post("/v1/ingest", files=[("files", ("big.jsonl", b"x" * 5000))])
    assert r.status_code == 413 and "4000 bytes" in r.json()["error"]["message"]
    r = api.post("/v1/ingest", files=[("files", ("bad.jsonl", b'{"id": "1", "title": "t"}\n'))])
    msg = r.json()["error"]["message"]
    assert r.status_code == 400 and msg.startswith("bad.jsonl") and "abstract" in msg and "/tmp" not in msg
    r = api.post("/v1/ingest", files=[("files", ("notes.pdf", b"%PDF"))])
    assert r.status_code == 400 and "unsupported format" in r.json()["error"]["message"]
    r = api.post("/v1/ingest", content=b"garbage", headers={"content-type": "multipart/form-data; boundary=zz"})
    assert r.status_code == 400
    r = api.post("/v1/ingest")
    assert r.status_code == 422 and "files" in r.json()["error"]["message"]


def test_ingest_upload_indexes_and_refreshes_filter_keys(tmp_path: Path, minilm: Any, embedding_cache: Any) -> None:
    from rag.models.embedding import CachedEmbeddings

    a = Assistant(
        Settings(data_dir=tmp_path, answer={"mode": "extractive"}), embeddings=CachedEmbeddings(minilm, embedding_cache)
    )
    api = TestClient(create_app(a))
    assert api.post("/v1/search", json={"query": "zebras"}).status_code == 409  # empty index
    assert api.post("/v1/search", json={"query": "zebras", "filters": {"lab": "X"}}).status_code == 400
    body = b'{"id": "z1", "title": "Zebra counting", "abstract": "We count 412 zebras with drones.", "lab": "X"}\n'
    r = api.post("/v1/ingest", files=[("files", ("zebra.jsonl", body))])
    assert r.status_code == 200 and r.json()["added"] == 1 and r.json()["files"] == ["zebra.jsonl"]
    hits = api.post("/v1/search", json={"query": "zebras", "filters": {"lab": "X"}}).json()["data"]
    assert [h["paper_id"] for h in hits] == ["z1"]
    r = _chat(api, messages=[{"role": "user", "content": "How many zebras were counted with drones?"}])
    assert "412" in r.json()["choices"][0]["message"]["content"] and r.json()["rag"]["citations"][0]["paper_id"] == "z1"


def test_llm_failure_mid_stream_is_reported_in_band(small_assistant: Assistant) -> None:
    def boom(prompt: str) -> str:
        raise RuntimeError("connection refused")

    a = Assistant(
        small_assistant.settings, embeddings=small_assistant.embeddings, chat_model=ScriptedChatModel(reply=boom)
    )
    api = TestClient(create_app(a))
    r = _chat(
        api, messages=[{"role": "user", "content": "What throughput do sparse attention kernels reach?"}], mode="llm"
    )
    assert 500 <= r.status_code < 600 and r.json()["error"]["type"] == "server_error"
    r = _chat(
        api,
        messages=[{"role": "user", "content": "What throughput do sparse attention kernels reach?"}],
        mode="llm",
        stream=True,
    )
    events = [line.removeprefix("data: ") for line in r.text.splitlines() if line.startswith("data: ")]
    assert r.status_code == 200 and events[-1] == "[DONE]" and "error" in json.loads(events[-2])


# ------------------------------------------------------------------ schema fuzzing
FUZZ_CHECKS = [
    schemathesis.checks.not_a_server_error,
    schemathesis.checks.status_code_conformance,
    schemathesis.checks.content_type_conformance,
    schemathesis.checks.response_schema_conformance,
    schemathesis.checks.negative_data_rejection,
]


def test_fuzzed_requests_get_no_500_and_clear_4xx(small_assistant: Assistant) -> None:
    """Every operation of the served OpenAPI schema, schema-valid and invalid data (bounded: extractive mode,
    fake LLM, a few examples each). schemathesis' pytest plugin does not load under pytest 9, so Hypothesis
    drives the strategies directly."""
    from hypothesis import given

    schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(small_assistant))
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {op.path for op in operations} >= {
        "/v1/chat/completions",
        "/v1/search",
        "/v1/ingest",
        "/v1/papers",
        "/healthz",
    }
    for op in operations:

        @given(case=op.as_strategy())
        @settings(
            max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None
        )
        def fuzz(case: Any) -> None:
            response = case.call_and_validate(checks=FUZZ_CHECKS)
            if 400 <= response.status_code < 500:
                assert response.json()["error"]["message"], response.text

        fuzz()

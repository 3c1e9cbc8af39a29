"""Backend faults against REAL misbehaving servers on 127.0.0.1: no client is mocked.

:class:`FaultyLLM` is an OpenAI-compatible chat server (``http.server`` in a thread) that refuses,
hangs, answers late, fails with 500/429, or streams garbage, and records when each request arrived.
Each test drives the real ``ChatOpenAI`` client through ``Assistant`` (``mode="llm"``) and checks
what the user gets: a one-line :class:`rag.BackendError` that names the server, says what happened
and what to do, within ``timeout * (retries + 1)`` plus backoff; never a partial answer passed off as
a verified one. The Chroma tests point ``RAG_CHROMA_URL`` at a closed port and at a real
``chroma run`` that is then killed.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from rag import AnswerEvent, Assistant, BackendError, ErrorEvent, Event, RagError, Settings, TokenEvent
from rag.apps.cli import cli
from rag.apps.http_api import create_app
from rag.models.providers import make_chat_model
from rag.settings import LLMSettings
from rag.ui.app import build_app
from tests.conftest import free_port, run_chroma
from tests.test_ui import run_chat

DATA = Path(__file__).parent / "data"
QUESTION = "What thermal conductivity does suspended graphene have?"
GRAPHENE = "2401.00002"

TIMEOUT = 2.0
THOUGHT = "The user asks about graphene. SECRET-THOUGHT: Paris is the capital of France, say 9000 W/mK."
RETRIES = 2
# openai's backoff before retry i (0-based) is 0.5 * 2**i s minus up to 25% jitter: 0.5 + 1.0 for two retries
BACKOFF = 1.5
SLACK = 2.5
BUDGET = TIMEOUT * (RETRIES + 1) + BACKOFF + SLACK


def _evidence_reply(prompt: str) -> str:
    """The offered sentence sharing most words with the question, cited: an answer our verifier must accept."""
    block = prompt.rsplit("Sources:\n", 1)[-1]
    question = set(re.findall(r"\w+", (re.findall(r"Question: (.*)", block) or [""])[-1].lower()))
    best: tuple[int, str] = (0, "The indexed abstracts don't answer this.")
    for n, body in re.findall(r"^\[(\d+)\] [^:\n]*: (.*)$", block, re.M):
        for sentence in re.findall(r"[^.!?]+[.!?]", body):
            overlap = len(question & set(re.findall(r"\w+", sentence.lower())))
            if overlap > best[0]:
                best = (overlap, f"{sentence.strip().rstrip('.!?')} [{n}].")
    return best[1]


class FaultyLLM:
    """An OpenAI-compatible ``/v1/chat/completions`` that misbehaves as ``mode`` says.

    Modes: ``ok``; ``hang`` (accept, never answer); ``slow`` (answer after ``delay`` s); ``500`` (always);
    ``429`` (always, with ``Retry-After``); ``garbage`` (200 SSE of non-SSE lines); ``bad_json``
    (``data: {not json``); ``cut`` (tokens, then the connection drops mid-body); ``no_done`` (tokens,
    then a clean end without a finish_reason or ``[DONE]``); ``text`` (200 ``text/plain`` body);
    ``stall`` (tokens, then silence); ``trickle`` (a token every ``delay`` s, forever); ``reasoning`` (a reasoning
    model's thoughts first, apart in ``reasoning_content`` as llama.cpp's server and DeepSeek send them).
    ``fail_first`` = N: the first N requests get HTTP 500 whatever the mode.
    """

    def __init__(self) -> None:
        self.mode = "ok"
        self.fail_first = 0
        self.delay = 0.0
        self.retry_after = "1"
        self.error_message = "upstream exploded"
        self.arrivals: list[float] = []
        self.bodies: list[dict[str, Any]] = []
        self.stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                server.arrivals.append(time.monotonic())
                server.bodies.append(body)
                try:
                    server.handle(self, body, len(server.arrivals))
                except (BrokenPipeError, ConnectionResetError):
                    pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client hanging up on a keep-alive connection is not the server's fault

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def gaps(self) -> list[float]:
        return [b - a for a, b in zip(self.arrivals, self.arrivals[1:])]

    # ------------------------------------------------------------------ responses
    def handle(self, h: BaseHTTPRequestHandler, body: dict[str, Any], n: int) -> None:
        if n <= self.fail_first or self.mode == "500":
            return self._json(h, 500, {"error": {"message": self.error_message, "type": "server_error"}})
        if self.mode == "429":
            return self._json(
                h, 429, {"error": {"message": "rate limited", "type": "rate_limit"}}, {"Retry-After": self.retry_after}
            )
        if self.mode == "hang":
            self.stop.wait(60)
            return None
        if self.mode == "slow" and self.stop.wait(self.delay):
            return None
        if self.mode == "text":
            return self._raw(
                h, 200, "text/plain", b"Service temporarily in maintenance mode. Please come back later.\n"
            )
        prompt = "\n".join(str(m.get("content")) for m in body.get("messages", []))
        reply = _evidence_reply(prompt)
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply}
            if self.mode == "reasoning":
                message["reasoning_content"] = THOUGHT
            return self._json(
                h,
                200,
                {
                    "id": "c1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "m"),
                    "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                },
            )
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        for piece in self._events(reply):
            if self.stop.is_set():
                return None
            h.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            h.wfile.flush()
        if self.mode == "cut":
            h.close_connection = True
            return None
        h.wfile.write(b"0\r\n\r\n")
        h.wfile.flush()
        return None

    def _events(self, reply: str) -> Iterator[bytes]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            doc = {
                "id": "c1",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return b"data: " + json.dumps(doc).encode() + b"\n\n"

        if self.mode == "garbage":
            yield b"<html><body>502 Bad Gateway</body></html>\n\nhello there\n\n: just a comment\n\n"
            return
        if self.mode == "bad_json":
            yield chunk({"role": "assistant", "content": ""})
            yield b'data: {"choices": [{"delta": {"content": "Hal\n\n'
            return
        words = re.findall(r"\S+\s*", reply)
        yield chunk({"role": "assistant", "content": ""})
        if self.mode == "reasoning":
            for w in re.findall(r"\S+\s*", THOUGHT):
                yield chunk({"reasoning_content": w, "content": None})
        for i, w in enumerate(words):
            if self.mode in ("cut", "no_done", "stall") and i == len(words) // 2:
                if self.mode == "stall":
                    self.stop.wait(60)
                return
            if self.mode == "trickle":
                self.stop.wait(self.delay)
            yield chunk({"content": w})
        yield chunk({}, "stop")
        yield (
            b'data: {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [], '
            b'"usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}\n\n'
        )
        yield b"data: [DONE]\n\n"

    @staticmethod
    def _json(
        h: BaseHTTPRequestHandler, status: int, doc: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        FaultyLLM._raw(h, status, "application/json", json.dumps(doc).encode(), headers)

    @staticmethod
    def _raw(
        h: BaseHTTPRequestHandler, status: int, ctype: str, data: bytes, headers: dict[str, str] | None = None
    ) -> None:
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)
        h.wfile.flush()


@pytest.fixture
def llm_server() -> Iterator[FaultyLLM]:
    server = FaultyLLM()
    yield server
    server.close()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Assistant:
    """tests/data/abstracts.jsonl (10 papers) indexed in embedded Chroma, shared read-only by this module."""
    from rag.models.embedding import CachedEmbeddings

    a = Assistant(
        Settings(data_dir=tmp_path_factory.mktemp("faults")), embeddings=CachedEmbeddings(minilm, embedding_cache)
    )
    a.ingest([DATA / "abstracts.jsonl"])
    return a


def with_llm(base: Assistant, url: str) -> Assistant:
    """``base``'s index, answering with the real ``ChatOpenAI`` client against ``url``."""
    llm = LLMSettings(base_url=url, timeout=TIMEOUT, max_retries=RETRIES)
    return Assistant(base.settings.model_copy(update={"llm": llm}), embeddings=base.embeddings)


def stream_timed(a: Assistant, question: str = QUESTION, **kw: Any) -> tuple[list[Event], RagError | None, float]:
    """Every event ``Assistant.stream`` yielded, the error its ErrorEvent carried (if any) and the seconds it took."""
    events: list[Event] = []
    t = time.monotonic()
    for event in a.stream(question, mode="llm", **kw):
        if isinstance(event, ErrorEvent):
            return events, event.error, time.monotonic() - t
        events.append(event)
    return events, None, time.monotonic() - t


def closed_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


TIMED_OUT = r"^The LLM server at {url} did not answer within 2 s \(3 attempts\): .*Raise RAG_LLM__TIMEOUT"
NOT_OPENAI = r"^The LLM server at {url} sent no answer: its response is not an OpenAI chat-completions stream"
# mode -> (pattern of the whole message, requests the server sees, whether a draft streamed first)
FAULTS = {
    "refused": (
        r"^Cannot reach the LLM server at {url} \(3 attempts\): is it running\? Check RAG_LLM_BASE_URL\.$",
        0,
        False,
    ),
    "hang": (TIMED_OUT, 3, False),
    "slow": (TIMED_OUT, 3, False),
    "500": (
        r"^The LLM server at {url} failed with HTTP 500 \(3 attempts\): upstream exploded\. Check the server's log\.$",
        3,
        False,
    ),
    "429": (
        r"^The LLM server at {url} is rate-limiting requests \(HTTP 429, 3 attempts\): "
        r"rate limited\. Ask again later\.$",
        3,
        False,
    ),
    "429-long": (
        r"^The LLM server at {url} is rate-limiting requests \(HTTP 429\) and asks to wait 30 s, longer than "
        r"RAG_LLM__TIMEOUT \(2 s\): ask again later\.$",
        1,
        False,
    ),
    "garbage": (NOT_OPENAI, 1, False),
    "text": (NOT_OPENAI, 1, False),
    "bad_json": (r"^The LLM server at {url} sent a malformed stream \(a `data:` line is not valid JSON\)", 1, False),
    "cut": (
        r"^The LLM server at {url} dropped the connection in the middle of the answer\. The partial answer",
        1,
        True,
    ),
    "no_done": (
        r"^The LLM server at {url} ended the stream before the answer was complete \(no finish_reason\)\. "
        r"The partial answer",
        1,
        True,
    ),
    "stall": (
        r"^The LLM server at {url} stopped sending for 2 s in the middle of the answer\. The partial answer",
        1,
        True,
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(FAULTS))
def test_llm_fault_is_one_clear_line_within_the_timeout(tiny: Assistant, llm_server: FaultyLLM, mode: str) -> None:
    pattern, requests, draft = FAULTS[mode]
    url = closed_url() if mode == "refused" else llm_server.url
    llm_server.mode, llm_server.delay = mode.split("-")[0], 3 * TIMEOUT
    llm_server.retry_after = "30" if mode == "429-long" else "1"
    events, error, elapsed = stream_timed(with_llm(tiny, url))
    assert isinstance(error, BackendError), events
    message = str(error)
    assert "\n" not in message and re.search(pattern.format(url=re.escape(url)), message), message
    assert elapsed < BUDGET, (elapsed, message)
    if mode in ("hang", "slow"):  # every attempt waited the whole timeout: the timeout, not luck, ended it
        assert elapsed >= TIMEOUT * (RETRIES + 1)
    assert len(llm_server.arrivals) == requests
    assert not [e for e in events if isinstance(e, AnswerEvent)]  # nothing is ever presented as the verified answer
    shown = "".join(e.text for e in events if isinstance(e, TokenEvent))
    if draft:  # the draft that streamed is disowned by the message, and was not retried
        assert shown and f"partial answer ({len(shown)} characters) was discarded" in message
    else:
        assert shown == ""


@pytest.mark.slow
def test_retries_back_off_and_the_answer_arrives(tiny: Assistant, llm_server: FaultyLLM) -> None:
    llm_server.fail_first = 2
    events, error, elapsed = stream_timed(with_llm(tiny, llm_server.url))
    assert error is None
    final = events[-1]
    assert isinstance(final, AnswerEvent)
    answer = final.answer
    assert not answer.refused and [c.paper_id for c in answer.citations] == [GRAPHENE]
    assert "thermal conductivity" in answer.text
    first, second = llm_server.gaps()  # three requests: 500, 500, 200
    # openai's backoff: 0.5 s then 1 s, each minus up to 25% jitter
    assert 0.375 <= first < second and second >= 0.75, llm_server.gaps()
    assert elapsed < BUDGET


@pytest.mark.slow
def test_retry_after_is_honoured(tiny: Assistant, llm_server: FaultyLLM) -> None:
    llm_server.mode, llm_server.retry_after = "429", "1"
    _, error, _ = stream_timed(with_llm(tiny, llm_server.url))
    assert isinstance(error, BackendError)
    assert all(g >= 0.95 for g in llm_server.gaps()) and len(llm_server.gaps()) == RETRIES


@pytest.mark.slow
def test_timeout_bounds_silence_not_a_steadily_streamed_answer(tiny: Assistant, llm_server: FaultyLLM) -> None:
    llm_server.mode, llm_server.delay = "trickle", 0.25  # ~17 words: longer than the timeout in total
    events, error, elapsed = stream_timed(with_llm(tiny, llm_server.url))
    assert error is None and elapsed > TIMEOUT
    final = events[-1]
    assert isinstance(final, AnswerEvent)
    assert not final.answer.refused and [c.paper_id for c in final.answer.citations] == [GRAPHENE]


@pytest.mark.slow
def test_failed_condense_call_is_not_followed_by_a_second_round_of_retries(
    tiny: Assistant, llm_server: FaultyLLM
) -> None:
    llm_server.mode = "500"
    history = [("user", "What does Raman thermometry measure?"), ("assistant", "Thermal conductivity [1].")]
    _, error, elapsed = stream_timed(with_llm(tiny, llm_server.url), "And for graphene?", history=history)
    assert isinstance(error, BackendError) and "HTTP 500 (3 attempts)" in str(error)
    assert len(llm_server.arrivals) == RETRIES + 1  # the condense call's attempts only
    assert all("Standalone question" in json.dumps(b) for b in llm_server.bodies)


@pytest.mark.slow
def test_ui_shows_the_error_and_answers_once_the_backend_recovers(tiny: Assistant, llm_server: FaultyLLM) -> None:
    app = build_app(with_llm(tiny, llm_server.url))
    llm_server.mode = "500"
    llm_server.error_message = "<b>upstream</b> exploded"
    messages, history, answers, *_ = run_chat(app, QUESTION)[-1]
    error = messages[-1]["content"]
    assert error.startswith('<p class="rag-error">The LLM server at ') and "HTTP 500 (3 attempts)" in error
    assert "&lt;b&gt;upstream&lt;/b&gt; exploded" in error and "<b>" not in error
    assert history == [] and answers == {}  # the failed turn is not part of the conversation
    llm_server.mode = "ok"
    steps = run_chat(app, QUESTION, history=history, answers=answers, messages=messages)
    messages, history, answers, sources, *_ = steps[-1]
    assert "rag-error" not in messages[-1]["content"] and 'href="#rag-src-1-1"' in messages[-1]["content"]
    assert answers[3]["citations"][0]["paper_id"] == GRAPHENE and "Graphene" in sources


@pytest.mark.slow
def test_http_api_reports_the_fault_and_never_verifies_a_cut_stream(tiny: Assistant, llm_server: FaultyLLM) -> None:
    client = TestClient(create_app(with_llm(tiny, llm_server.url)))
    llm_server.mode = "500"
    r = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": QUESTION}]})
    assert r.status_code == 502 and r.json()["error"]["code"] == "backend_error"
    assert "HTTP 500 (3 attempts)" in r.json()["error"]["message"]
    llm_server.mode = "no_done"
    r = client.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": QUESTION}], "stream": True})
    events = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]
    assert any(e.get("choices") and e["choices"][0]["delta"].get("content") for e in events)  # the draft streamed
    assert "ended the stream before the answer was complete" in events[-1]["error"]["message"]
    assert not any("rag" in e for e in events) and r.text.rstrip().endswith("data: [DONE]")


def _cli(tiny: Assistant, *args: str, **env: str) -> Any:
    base = {
        "RAG_DATA_DIR": str(tiny.settings.data_dir),
        "RAG_CONFIG": str(Path(tiny.settings.data_dir) / "none.toml"),
        "RAG_LLM__TIMEOUT": str(TIMEOUT),
        "RAG_LLM__MAX_RETRIES": str(RETRIES),
    }
    t = time.monotonic()
    r = CliRunner().invoke(cli, list(args), env=base | env, catch_exceptions=False)
    return r, time.monotonic() - t


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["refused", "500", "no_done"])
def test_cli_ask_fault_is_one_line_and_exit_1(tiny: Assistant, llm_server: FaultyLLM, mode: str) -> None:
    url = closed_url() if mode == "refused" else llm_server.url
    llm_server.mode = mode
    r, elapsed = _cli(tiny, "ask", QUESTION, RAG_LLM_BASE_URL=url, RAG_LLM_API_KEY="sk-secret-never-shown-1234")
    assert r.exit_code == 1 and r.output.startswith("Error: ") and r.output.count("\n") == 1, r.output
    assert url in r.output and "sk-secret" not in r.output
    assert elapsed < BUDGET + 5  # + loading the embedding model


@pytest.mark.slow
def test_rag_ask_process_prints_no_traceback(tiny: Assistant, llm_server: FaultyLLM) -> None:
    llm_server.mode = "500"
    env = os.environ | {
        "RAG_DATA_DIR": str(tiny.settings.data_dir),
        "RAG_LLM_BASE_URL": llm_server.url,
        "RAG_LLM__TIMEOUT": str(TIMEOUT),
        "RAG_LLM__MAX_RETRIES": str(RETRIES),
        "RAG_CONFIG": str(Path(tiny.settings.data_dir) / "none.toml"),
    }
    exe = Path(sys.executable).with_name("rag")
    p = subprocess.run([str(exe), "ask", QUESTION], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and p.stdout == "", p.stdout
    assert p.stderr.startswith("Error: The LLM server at ") and p.stderr.count("\n") == 1, p.stderr


# ---------------------------------------------------------------------------------------------- Chroma down
CHROMA_COMMANDS = [
    ("search", "graphene"),
    ("ask", QUESTION, "--mode", "extractive"),
    ("ask", QUESTION),
    ("ingest", str(DATA / "abstracts.jsonl")),
    ("stats",),
]


def _assert_chroma_down(tiny: Assistant, settings: Settings, url: str) -> None:
    """Every entry point: one BackendError line naming ``url``, within a few seconds."""
    a = Assistant(settings, embeddings=tiny.embeddings)
    calls = {
        "search": lambda: a.search("graphene"),
        "stats": a.stats,
        "papers": a.papers,
        "ask": lambda: a.ask(QUESTION, mode="extractive"),
        "ingest": lambda: a.ingest([DATA / "abstracts.jsonl"]),
    }
    for name, call in calls.items():
        t = time.monotonic()
        with pytest.raises(BackendError) as e:
            call()
        assert url in str(e.value) and "\n" not in str(e.value) and "chroma run" in str(e.value), (name, str(e.value))
        assert time.monotonic() - t < 5, name
    env = {"RAG_DATA_DIR": str(settings.data_dir), "RAG_CHROMA_URL": url, "RAG_LLM_BASE_URL": closed_url()}
    for args in CHROMA_COMMANDS:
        r, elapsed = _cli(tiny, *args, **env)
        assert r.exit_code == 1 and r.output.startswith("Error: ") and r.output.count("\n") == 1, (args, r.output)
        assert url in r.output and "LLM" not in r.output, (args, r.output)
        assert elapsed < 5 + 5, args  # + loading the embedding model


def test_chroma_at_a_closed_port_is_a_clear_error(tiny: Assistant, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    _assert_chroma_down(tiny, Settings(data_dir=tmp_path, chroma_url=url), url)


@pytest.mark.slow
def test_chroma_server_killed_under_a_running_assistant_is_a_clear_error(tiny: Assistant, tmp_path: Path) -> None:
    with run_chroma(tmp_path) as (url, proc):
        settings = Settings(data_dir=tmp_path / "data", chroma_url=url)
        a = Assistant(settings, embeddings=tiny.embeddings)
        a.ingest([DATA / "abstracts.jsonl"])
        assert a.search("graphene")[0].paper_id == GRAPHENE
        proc.kill()
        proc.wait(10)
        _assert_chroma_down(tiny, settings, url)
        # the assistant that was connected when the server died
        for call in (lambda: a.search("graphene"), a.stats, lambda: a.ask(QUESTION, mode="extractive")):
            with pytest.raises(BackendError, match=re.escape(url)):
                call()


def test_reasoning_content_from_an_endpoint_is_never_the_answer(tiny: Assistant, llm_server: FaultyLLM) -> None:
    """Through the real ChatOpenAI client: the thoughts an endpoint sends apart become the answer's reasoning,
    never its text, its streamed tokens or its verified sentences."""
    llm_server.mode = "reasoning"
    events, error, _ = stream_timed(with_llm(tiny, llm_server.url))
    assert error is None
    shown = "".join(e.text for e in events if isinstance(e, TokenEvent))
    answer = next(e.answer for e in events if isinstance(e, AnswerEvent))
    assert "SECRET" not in shown and "think>" not in shown and shown.strip()
    assert answer.reasoning == THOUGHT and "SECRET" not in answer.text and "9000" not in answer.text
    assert not answer.refused and answer.citations and not any("9000" in s.text for s in answer.sentences)


def test_reasoning_content_of_a_whole_reply_is_wrapped_in_a_think_block(llm_server: FaultyLLM) -> None:
    llm_server.mode = "reasoning"
    chat = make_chat_model(Settings(llm={"base_url": llm_server.url}), streaming=False)
    content = str(chat.invoke("What thermal conductivity does graphene have? [1] graphene").content)
    assert content.startswith(f"<think>{THOUGHT}</think>") and llm_server.bodies[-1].get("stream") is not True

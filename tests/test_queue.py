"""The LLM line (rag.models.queue) and what each surface makes of it: positions in the stream and the UI,
503 + Retry-After from the HTTP API, extractive answers and searches that never wait.

The LLM is a scripted fake; a slot is held by the test itself (``queue.enter()``), so "busy" is exact,
not a matter of timing.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from rag import AnswerEvent, Assistant, BusyError, ErrorEvent, QueuedEvent, Settings
from rag.apps.http_api import create_app
from rag.models.queue import LLMQueue
from rag.ui.app import build_app, format_waiting_html
from tests.fakes import ScriptedChatModel

DATA = Path(__file__).parent / "data"
PAPER = "2401.00001"
QUESTION = "What throughput do sparse attention kernels reach on long protein sequences?"


def _reply(prompt: str) -> str:
    """Repeats the first sentence of the question's first source, with its marker (the prompt's examples,
    which come first, are skipped)."""
    m = re.search(r"^\[(\d+)\] [^:\n]*: ([^.\n]*\.)", prompt.rsplit("Sources:", 1)[-1], re.M)
    return f"{m.group(2)} [{m.group(1)}]" if m else "The indexed abstracts don't answer this."


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory, minilm: Any, embedding_cache: Any) -> Assistant:
    from rag.models.embedding import CachedEmbeddings

    a = Assistant(
        Settings(data_dir=tmp_path_factory.mktemp("queue")), embeddings=CachedEmbeddings(minilm, embedding_cache)
    )
    a.ingest([DATA / "abstracts.jsonl"])
    return a


def assistant(indexed: Assistant, **llm: Any) -> tuple[Assistant, ScriptedChatModel]:
    fake = ScriptedChatModel(reply=_reply)
    settings = indexed.settings.model_copy(update={"llm": indexed.settings.llm.model_copy(update=llm)})
    return Assistant(settings, embeddings=indexed.embeddings, chat_model=fake), fake


# ------------------------------------------------------------------ the line itself
def test_free_slots_are_granted_at_once_and_the_next_waits() -> None:
    q = LLMQueue(slots=2, max_waiting=5)
    a, b, c = q.enter(), q.enter(), q.enter()
    assert (a.granted, b.granted, c.granted) == (True, True, False)
    assert (a.position, c.position, q.active, q.waiting) == (0, 1, 2, 1)
    assert not c.wait(0.05) and c.waited >= 0.05
    b.release()
    assert c.wait(1) and c.position == 0 and q.waiting == 0


def test_line_is_first_come_first_served() -> None:
    q = LLMQueue(slots=1, max_waiting=10)
    holder = q.enter()
    order: list[int] = []
    tickets = [q.enter() for _ in range(5)]
    assert [t.position for t in tickets] == [1, 2, 3, 4, 5]

    def run(i: int) -> None:
        tickets[i].wait()
        order.append(i)
        time.sleep(0.01)
        tickets[i].release()

    threads = [threading.Thread(target=run, args=(i,)) for i in reversed(range(5))]  # waiters start in reverse
    for t in threads:
        t.start()
    time.sleep(0.1)
    holder.release()
    for t in threads:
        t.join(5)
    assert order == [0, 1, 2, 3, 4]


def test_a_full_line_turns_the_next_away_with_a_time_to_retry() -> None:
    q = LLMQueue(slots=1, max_waiting=2)
    with q.enter():
        q.enter(), q.enter()
        with pytest.raises(BusyError, match="RAG_LLM__MAX_WAITING") as e:
            q.enter()
    assert e.value.retry_after > 0


def test_leaving_the_line_gives_no_slot_away() -> None:
    q = LLMQueue(slots=1, max_waiting=3)
    held = q.enter()
    gone, stays = q.enter(), q.enter()
    gone.release()  # e.g. the browser tab was closed while waiting
    assert stays.position == 1 and q.waiting == 1
    held.release()
    assert stays.wait(1) and q.active == 1
    stays.release()
    assert (q.active, q.waiting) == (0, 0)


def test_retry_after_follows_measured_answer_times() -> None:
    q = LLMQueue(slots=1, max_waiting=0)
    with q.enter():
        time.sleep(0.2)
    with q.enter(), pytest.raises(BusyError) as e:
        q.enter()
    assert 0.15 <= e.value.retry_after <= 1.0  # one answer ahead, which took ~0.2 s


# ------------------------------------------------------------------ the assistant's stream
@pytest.mark.slow
def test_stream_tells_a_waiting_question_its_place_then_answers(indexed: Assistant) -> None:
    a, fake = assistant(indexed)
    held = a.llm_queue.enter()
    events: list[Any] = []
    t = threading.Thread(target=lambda: events.extend(a.stream(QUESTION, mode="llm")))
    t.start()
    time.sleep(1.5)
    assert fake.prompts == []  # no LLM call while another holds the slot
    held.release()
    t.join(10)
    queued = [e for e in events if isinstance(e, QueuedEvent)]
    assert queued and queued[0] == QueuedEvent(position=1, waited=0.0) and queued[-1].waited >= 1.0
    assert isinstance(events[-1], AnswerEvent) and "quadratically" in events[-1].answer.text
    assert a.llm_queue.active == 0


def test_extractive_answers_and_searches_do_not_wait_for_the_llm(indexed: Assistant) -> None:
    a, fake = assistant(indexed, max_waiting=0)
    with a.llm_queue.enter():
        start = time.monotonic()
        answer = a.ask(QUESTION, mode="extractive")
        hits = a.search("sparse attention kernels for proteins")
        assert time.monotonic() - start < 5
        assert "quadratically" in answer.text and hits[0].paper_id == PAPER
        events = list(a.stream(QUESTION, mode="llm"))  # the LLM line is full: turned away at once
    assert len(events) == 1 and isinstance(events[0], ErrorEvent) and isinstance(events[0].error, BusyError)
    assert fake.prompts == []


# ------------------------------------------------------------------ the surfaces
def test_full_line_is_503_with_retry_after_and_extractive_still_answers(indexed: Assistant) -> None:
    a, _fake = assistant(indexed, max_waiting=0)
    api = TestClient(create_app(a))
    body = {"messages": [{"role": "user", "content": QUESTION}], "mode": "llm"}
    with a.llm_queue.enter():
        for stream in (False, True):
            r = api.post("/v1/chat/completions", json=body | {"stream": stream})
            assert r.status_code == 503, r.text
            assert int(r.headers["retry-after"]) >= 1 and r.json()["error"]["code"] == "busy"
        r = api.post("/v1/chat/completions", json=body | {"mode": "extractive"})
        assert r.status_code == 200 and "quadratically" in r.json()["choices"][0]["message"]["content"]
        assert api.post("/v1/search", json={"query": "protein attention"}).status_code == 200
    r = api.post("/v1/chat/completions", json=body)
    assert r.status_code == 200 and "quadratically" in r.json()["choices"][0]["message"]["content"]


@pytest.mark.slow
def test_a_waiting_stream_sends_its_place_as_sse_comments(indexed: Assistant) -> None:
    a, _fake = assistant(indexed)
    api = TestClient(create_app(a))
    held = a.llm_queue.enter()
    threading.Timer(1.5, held.release).start()
    r = api.post(
        "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": QUESTION}], "mode": "llm", "stream": True},
    )
    lines = r.text.splitlines()
    assert any(line.startswith(": waiting for the LLM, position 1") for line in lines)
    data = [json.loads(line[6:]) for line in lines if line.startswith("data: {")]
    assert data[-1]["rag"]["citations"][0]["paper_id"] == PAPER


@pytest.mark.slow
def test_ui_shows_the_place_in_line_and_shares_one_limit(indexed: Assistant) -> None:
    a, _fake = assistant(indexed, max_concurrent=1, max_waiting=7)
    app = build_app(a)
    respond = next(f.fn for f in app.fns.values() if f.fn is not None and f.fn.__name__ == "respond")
    held = a.llm_queue.enter()
    threading.Timer(1.5, held.release).start()
    # the handler updates one list of messages in place: read each update as it comes
    shown = [u[0][-1]["content"] for u in respond(QUESTION, [], [], {}, 5, True, "", "", "llm", 0.0)]
    assert any("Waiting for the model: next in line" in s for s in shown)
    assert "quadratically" in shown[-1]
    answering = [f for f in app.fns.values() if f.concurrency_id == "answers"]
    # submit, the button, the examples, the table button, /ask and /table; the claim check's button, its submit and
    # /check: one limit for all of them
    assert len(answering) == 9
    assert {f.concurrency_limit for f in answering} == {1 + 7 + 4}


def test_waiting_message_reads_well() -> None:
    assert format_waiting_html(1, 0.4) == "<em>Waiting for the model: next in line, 0 s so far…</em>"
    assert "number 3 in line, 12 s" in format_waiting_html(3, 12.3)

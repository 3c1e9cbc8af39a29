"""Every wait shows progress (issue 30): the steps an answer announces, when it announces them, and Stop.

The LLM is a scripted fake made slow on purpose (each call sleeps), so "the step came before the slow call"
and "the second question started right after Stop" are measured against a wait that really happens. The fake
records its prompts: a step's place is checked against the calls the model had received when it was sent.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

from fastapi.testclient import TestClient

from rag import (
    AnswerEvent,
    Assistant,
    ErrorEvent,
    Event,
    QueuedEvent,
    RowEvent,
    StatusEvent,
    StepEvent,
    Stop,
    StoppedError,
    TableEvent,
)
from rag.apps.http_api import create_app
from rag.apps.http_sse import typed_events, until_disconnect
from rag.ui.app import build_app
from tests.fakes import PathsReply, ScriptedChatModel, evidence_number, judged_paper

LIST_Q = "Which papers introduce a new benchmark?"
WILDBOX_Q = "How many 3D bounding box annotations does WildBox have?"


def wildbox(prompt: str) -> str:
    return f"WildBox comprises 237,505 3D bounding box annotations [{evidence_number(prompt, 'WildBox') or 1}]."


def slow(reply: Callable[[str], str], seconds: float) -> Callable[[str], str]:
    """``reply``, after ``seconds`` of thinking (a model call that takes a while)."""

    def answer(prompt: str) -> str:
        time.sleep(seconds)
        return reply(prompt)

    return answer


def with_fake(seed: Any, reply: Callable[[str], str], **llm: Any) -> tuple[Assistant, ScriptedChatModel]:
    fake = ScriptedChatModel(reply=reply)
    s = seed.settings.model_copy(
        update={
            "answer": seed.settings.answer.model_copy(update={"mode": "llm"}),
            "llm": seed.settings.llm.model_copy(update=llm),
        }
    )
    return Assistant(s, embeddings=seed.embeddings, chat_model=fake), fake


def timed(events: Iterator[Event]) -> list[tuple[float, Event]]:
    t0 = time.monotonic()
    return [(time.monotonic() - t0, e) for e in events]


def judge_calls(fake: ScriptedChatModel) -> int:
    return sum(judged_paper(p) is not None for p in fake.prompts)


# ------------------------------------------------------------------ the steps of each path
def test_list_judging_is_announced_paper_by_paper_before_each_judgement(seed_assistant: Any) -> None:
    judge = PathsReply(judge=r"(?i)\bbenchmark\b")
    a, fake = with_fake(seed_assistant, judge)
    seen: list[tuple[StepEvent, int]] = []  # each judging step, with the judgements the model had made by then
    for event in a.stream(LIST_Q):
        if isinstance(event, StepEvent) and event.step == "judging":
            seen.append((event, judge_calls(fake)))
        last = event
    assert isinstance(last, AnswerEvent) and last.answer.kind == "list"
    total = last.answer.checked
    assert total and total >= 5
    # "Judging paper 1 of n", 2 of n, ...: each sent before its own judgement, none skipped
    assert [(e.done, e.total, calls) for e, calls in seen] == [(i, total, i) for i in range(total)]
    assert seen[2][0].text == f"Judging paper 3 of {total}…"


def test_first_event_comes_at_once_and_every_slow_call_is_announced(seed_assistant: Any) -> None:
    a, fake = with_fake(seed_assistant, slow(PathsReply(judge=r"(?i)\bbenchmark\b"), 0.3))
    events = timed(a.stream(LIST_Q, k=5))
    first_at, first = events[0]
    assert isinstance(first, StepEvent) and first.step == "searching" and first_at < 1.0
    # no silence longer than one model call (0.3 s) and the work between two calls
    gaps = [b[0] - a_[0] for a_, b in zip(events, events[1:])]
    assert max(gaps) < 1.0, gaps
    shape = [e.step for _t, e in events if isinstance(e, StepEvent)]
    assert shape[:2] == ["searching", "reading"] and shape.count("judging") == judge_calls(fake) >= 5


def test_yes_no_verdict_and_follow_up_are_announced(seed_assistant: Any) -> None:
    def reply(prompt: str) -> str:
        if "Standalone question:" in prompt:
            return "Does WildBox use drones?"
        return PathsReply(verdict=lambda p: "Yes")(prompt)

    a, fake = with_fake(seed_assistant, reply)
    history = [("user", "What is WildBox?"), ("assistant", "WildBox is a dataset [1].")]
    shape = []
    for event in a.stream("Does it use drones?", history=history):
        if isinstance(event, StepEvent):
            shape.append((event.step, len(fake.prompts)))  # the model calls made when the step was sent
        elif isinstance(event, StatusEvent | AnswerEvent):
            shape.append((type(event).__name__, len(fake.prompts)))
    assert shape == [
        ("condensing", 0),
        ("searching", 1),
        ("reading", 1),
        ("StatusEvent", 1),
        ("judging", 1),
        # judged: the question stated as a claim, judged, its opposite written, and the two set against each other
        # in both orders
        ("AnswerEvent", 6),
    ]
    assert StepEvent("judging").text == "Weighing the evidence: yes, no or not stated…"


def test_step_words() -> None:
    assert StepEvent("searching").text == "Searching the abstracts…"
    assert StepEvent("judging", done=6, total=19).text == "Judging paper 7 of 19…"
    assert StepEvent("writing", done=1, total=2).text == "Writing about paper 2 of 2…"
    assert StepEvent("reading", total=4).text == "Reading 4 abstracts…"


# ------------------------------------------------------------------ Stop
def test_stop_frees_the_slot_at_once_and_the_queued_question_starts(seed_assistant: Any) -> None:
    """Two questions, one LLM slot, a model that takes 0.5 s per judgement: the second waits in line until Stop,
    then starts at once (not after the judgement in flight); the first ends with StoppedError."""
    a, fake = with_fake(
        seed_assistant,
        slow(PathsReply(judge=r"(?i)\bbenchmark\b", other=wildbox), 0.5),
        max_concurrent=1,
        max_waiting=4,
    )
    stop = Stop()
    first: list[Event] = []
    second: list[tuple[float, Event]] = []
    judging = threading.Event()

    def run_first() -> None:
        for event in a.stream(LIST_Q, stop=stop):
            first.append(event)
            if isinstance(event, StepEvent) and event.step == "judging" and event.done == 2:
                judging.set()

    def run_second() -> None:
        for event in a.stream(WILDBOX_Q):
            second.append((time.monotonic(), event))

    t1 = threading.Thread(target=run_first)
    t1.start()
    assert judging.wait(30)
    t2 = threading.Thread(target=run_second)
    t2.start()
    while not second:
        time.sleep(0.01)
    assert isinstance(second[0][1], QueuedEvent) and second[0][1].position == 1
    stopped_at = time.monotonic()
    stop.set()
    t1.join(5)
    t2.join(30)
    started = next(t for t, e in second if isinstance(e, StepEvent))
    assert started - stopped_at < 0.3  # the slot was handed over at once, not after the judgement in flight
    assert isinstance(second[-1][1], AnswerEvent) and not second[-1][1].answer.refused
    assert isinstance(first[-1], ErrorEvent) and isinstance(first[-1].error, StoppedError)
    assert not any(isinstance(e, AnswerEvent) for e in first)
    assert judge_calls(fake) <= 4  # the third judgement (in flight at Stop) at most finished: no fourth started
    assert a.llm_queue.active == 0 and a.llm_queue.waiting == 0


def test_stop_while_waiting_in_line_leaves_the_line(seed_assistant: Any) -> None:
    a, fake = with_fake(seed_assistant, PathsReply(), max_concurrent=1, max_waiting=4)
    held = a.llm_queue.enter()
    stop = Stop()
    events = a.stream(WILDBOX_Q, stop=stop)
    assert isinstance(next(events), QueuedEvent) and a.llm_queue.waiting == 1
    threading.Timer(0.2, stop.set).start()
    t0 = time.monotonic()
    rest = list(events)
    assert time.monotonic() - t0 < 0.8  # not the next once-a-second tick
    assert isinstance(rest[-1], ErrorEvent) and isinstance(rest[-1].error, StoppedError)
    assert str(rest[-1].error) == "Stopped while waiting for the LLM."
    assert a.llm_queue.waiting == 0 and fake.prompts == []
    held.release()
    assert a.llm_queue.active == 0


def test_table_stop_frees_the_slot_at_once_and_keeps_the_rows_sent(seed_assistant: Any) -> None:
    """A table of 4 rows, 0.3 s per model call: Stop after the first row frees the slot before the call in
    flight returns, and the stream ends with StoppedError after that row, no other row started."""
    a, fake = with_fake(seed_assistant, slow(PathsReply(judge=r"."), 0.3), max_concurrent=1)
    stop = Stop()
    seen: list[Any] = []
    for event in a.table_stream("task", k=4, stop=stop):
        seen.append(event)
        if isinstance(event, RowEvent):
            stop.set()
            assert a.llm_queue.active == 0  # at once, not after the next cell
    assert sum(isinstance(e, RowEvent) for e in seen) == 1
    assert isinstance(seen[-1], ErrorEvent) and isinstance(seen[-1].error, StoppedError)
    assert str(seen[-1].error) == "Stopped before the table was finished."  # says what was stopped
    assert not any(isinstance(e, TableEvent) for e in seen)
    calls = len(fake.prompts)
    time.sleep(0.5)
    assert len(fake.prompts) == calls  # nothing more is asked after the stream ended


def test_typed_sse_sends_waits_as_comments_errors_in_band_then_done() -> None:
    events = [QueuedEvent(2, 3.0), "x", ErrorEvent(StoppedError("Stopped.")), "y"]
    chunks = list(typed_events(iter(events), lambda e: {"type": "x"} if e == "x" else None, "query"))
    assert chunks[0] == b": waiting for the LLM, position 2, 3 s\n\n"
    assert chunks[1] == b'data: {"type": "x"}\n\n'
    error = json.loads(chunks[2][6:])
    assert error["type"] == "error" and error["error"]["message"] == "Stopped."
    assert chunks[3:] == [b"data: [DONE]\n\n"]  # "y" maps to nothing: not sent


# ------------------------------------------------------------------ the UI
def test_ui_status_line_counts_the_seconds_and_stop_lets_the_next_question_start(seed_assistant: Any) -> None:
    """One judgement takes 2.5 s: the bubble's status line says what is done and its seconds move on meanwhile;
    Stop ends the answer at once (no answer kept) and a second browser's question, in line, starts."""
    a, _fake = with_fake(
        seed_assistant, slow(PathsReply(judge=r"(?i)\bbenchmark\b", other=wildbox), 2.5), max_concurrent=1
    )
    app = build_app(a)
    respond = next(f.fn for f in app.fns.values() if f.fn is not None and f.fn.__name__ == "respond")
    stop_answer = next(f.fn for f in app.fns.values() if f.fn is not None and f.fn.__name__ == "stop_answer")
    one, two = SimpleNamespace(session_hash="one"), SimpleNamespace(session_hash="two")
    opts = (5, True, "", "", "llm", 0.0, "auto")
    shown: list[tuple[float, str]] = []
    t0 = time.monotonic()
    updates = respond(LIST_Q, [], [], {}, *opts, request=one)
    for update in updates:
        shown.append((time.monotonic() - t0, update[0][-1]["content"]))
        if "Judging paper 1 of" in shown[-1][1] and "· 2 s" in shown[-1][1]:
            break
    judging = [html for _t, html in shown if "Judging paper 1 of" in html]
    # the same step, its seconds moving on while the model thinks: 0 s, 1 s, 2 s
    assert [s for s in ("· 0 s", "· 1 s", "· 2 s") if any(s in h for h in judging)] == ["· 0 s", "· 1 s", "· 2 s"]
    assert all('<p class="rag-step">' in h for h in judging)
    assert shown[0][0] < 1.0  # the first update at once
    waiting: list[str] = []
    second = threading.Thread(
        target=lambda: waiting.extend(u[0][-1]["content"] for u in respond(WILDBOX_Q, [], [], {}, *opts, request=two))
    )
    second.start()
    while not any("Waiting for the model" in w for w in waiting):
        time.sleep(0.05)
    stopped_at = time.monotonic()
    stop_answer(one)
    rest = [u[0][-1]["content"] for u in updates]
    assert time.monotonic() - stopped_at < 1.0  # the chat says so at once, not after the judgement in flight
    assert "Stopped after" in rest[-1] and "no answer" in rest[-1]
    while not any("rag-step" in w and "Waiting" not in w for w in waiting):
        time.sleep(0.05)
    assert time.monotonic() - stopped_at < 1.5  # the second question left the line right away
    second.join(30)
    assert "WildBox" in waiting[-1] and "rag-step" not in waiting[-1]  # answered; no status line left


# ------------------------------------------------------------------ HTTP
def test_sse_stream_carries_the_steps(seed_assistant: Any) -> None:
    a, fake = with_fake(seed_assistant, PathsReply(judge=r"(?i)\bbenchmark\b"))
    api = TestClient(create_app(a))
    r = api.post(
        "/v1/chat/completions", json={"messages": [{"role": "user", "content": LIST_Q}], "stream": True, "k": 5}
    )
    data = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]
    steps = [c["rag_event"] for c in data if (c.get("rag_event") or {}).get("type") == "step"]
    assert [s["step"] for s in steps[:2]] == ["searching", "reading"]
    judging = [s for s in steps if s["step"] == "judging"]
    assert [s["done"] for s in judging] == list(range(judge_calls(fake)))
    assert judging[2]["text"] == f"Judging paper 3 of {judging[2]['total']}…"
    assert all(isinstance(s["elapsed"], float) for s in steps)
    assert all(c["choices"][0]["delta"] == {} for c in data if (c.get("rag_event") or {}).get("type") == "step")
    assert data[-1]["choices"][0]["finish_reason"] == "stop" and data[-1]["rag"]["kind"] == "list"


def test_a_response_that_ends_early_sets_its_stop() -> None:
    """A client that goes away cancels the response: the stream's Stop is set (which frees the LLM slot)."""
    stop = Stop()

    def chunks() -> Iterator[bytes]:
        yield b"one"
        yield b"two"

    async def read_one() -> bytes:
        body = until_disconnect(chunks(), stop)
        first = await body.__anext__()
        assert not stop.is_set()
        await body.aclose()  # what Starlette does to the body of a response whose client disconnected
        return first

    assert asyncio.run(read_one()) == b"one" and stop.is_set()


def test_tokens_still_stream_between_the_steps(seed_assistant: Any) -> None:
    a, _fake = with_fake(seed_assistant, wildbox)
    kinds = [e.step if isinstance(e, StepEvent) else type(e).__name__ for e in a.stream(WILDBOX_Q, kind="lookup")]
    assert kinds.index("writing") < kinds.index("TokenEvent") < kinds.index("verifying") == len(kinds) - 2


def test_extractive_answers_announce_the_search_too(seed_assistant: Any) -> None:
    a, fake = with_fake(seed_assistant, PathsReply())
    events = list(a.stream(WILDBOX_Q, mode="extractive"))
    assert isinstance(events[0], StepEvent) and events[0].step == "searching"
    assert isinstance(events[-1], AnswerEvent) and "237,505" in events[-1].answer.text and fake.prompts == []


# ------------------------------------------------------------------ the CLI
def test_cli_shows_each_step_on_the_terminal_status_line_and_erases_it(seed_assistant: Any) -> None:
    """``rag ask`` with stdout piped and stderr a terminal: the steps on stderr's status line, gone at the end."""
    import io

    from rag.apps.cli import _follow, _Live

    a, _fake = with_fake(seed_assistant, PathsReply(judge=r"(?i)\bbenchmark\b"))
    err = io.StringIO()
    answer = _follow(a.stream(LIST_Q, k=5), None, _Live(err, width=100, height=40))
    assert answer.kind == "list"
    shown = err.getvalue()
    for text in ("Searching the abstracts… 0 s", "Judging paper 1 of", f"Judging paper {answer.checked} of"):
        assert text in shown
    assert shown.endswith("\r\033[J")  # the status line erased: stdout's answer stands alone

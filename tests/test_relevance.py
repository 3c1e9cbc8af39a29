"""What qualified each paper shown with an answer (issue 30): one figure per paper, made by ``rag.relevance_of``
and read by every surface. A listed or cited paper shows what listed or cited it, never a cosine level that
contradicts the answer ("match: off-topic (0.15)" on a paper the list judge confirmed).

The first tests build answers by hand, one per kind; the later ones run the real pipeline over the seed
abstracts with a one-token label fake as judge (tests.fakes.LabelChatModel, whose probabilities depend on the
paper it is shown), and compare the UI, the CLI, the JSON and the HTTP API on the same answer.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from rag import (
    Answer,
    Assistant,
    Citation,
    ListItem,
    Relevance,
    SearchHit,
    format_relevance_legend,
    listed_relevance,
    relevance_of,
    retrieved_relevance,
)
from rag.apps.cli import _answer_text, cli
from rag.apps.http_api import create_app
from rag.ui.rendering import format_sources_html
from tests.fakes import LabelChatModel, ScriptedChatModel, evidence_number, judged_paper, with_label_head

DATASET_Q = "Which papers introduce a new dataset or benchmark?"
CONTRADICTING = ("off-topic", "weak", "low", "similarity")


def hit(paper_id: str, dense: float | None, title: str | None = None) -> SearchHit:
    abstract = f"{title or paper_id} is a paper. It introduces a benchmark of 12 tasks. It ends here."
    return SearchHit(
        paper_id=paper_id,
        chunk_id=f"{paper_id}#0",
        title=title or paper_id.upper(),
        text=abstract,
        start=0,
        end=len(abstract),
        score=0.03,
        dense_score=dense,
        abstract=abstract,
    )


def cite(n: int, h: SearchHit, support: float, **judged: Any) -> Citation:
    s = h.abstract.index("It introduces")
    e = h.abstract.index("tasks.") + len("tasks.")
    return Citation(
        n=n,
        paper_id=h.paper_id,
        title=h.title,
        text=h.text,
        span=(s, e),
        quote=h.abstract[s:e],
        support=support,
        **judged,
    )


def answer(kind: str, sources: list[SearchHit], citations: list[Citation], **extra: Any) -> Answer:
    return Answer(
        question="q?",
        standalone_question="q?",
        text="…",
        refused=extra.pop("refused", False),
        citations=citations,
        sources=sources,
        kind=kind,  # type: ignore[arg-type]
        **extra,
    )


# ------------------------------------------------------------------ one figure per kind
def test_a_listed_paper_shows_the_judges_probability_however_far_its_cosine() -> None:
    wild, who = hit("wild", 0.15, "WildBox"), hit("who", 0.12, "Who&When Pro")
    a = answer(
        "list",
        [wild, who],
        [cite(1, wild, 0.91, judged="listed", judge=0.91), cite(2, who, 0.74, judged="listed", judge=0.74)],
    )
    rel = relevance_of(a)
    assert list(rel) == ["wild", "who"]
    assert rel["wild"] == Relevance(
        basis="judge", value=0.91, label="listed", text="listed · judge 0.91", help=rel["wild"].help
    )
    assert rel["who"].text == "listed · judge 0.74"
    assert "yes" in rel["wild"].help and "criterion" in rel["wild"].help
    assert not any(word in r.text for r in rel.values() for word in CONTRADICTING)
    assert wild.match == "off-topic"  # what the card said before: the cosine level, kept for `rag search`


def test_a_list_without_a_model_shows_its_sentence_score_not_a_judge() -> None:
    wild = hit("wild", 0.4)
    rel = relevance_of(answer("list", [wild], [cite(1, wild, 0.8, judged="listed")], mode="extractive"))["wild"]
    assert (rel.basis, rel.label, rel.text) == ("support", "listed", "listed · score 0.80")
    assert "no model" in format_relevance_legend([rel])
    # the card shown while the list is still running says the same
    item = ListItem(n=1, paper_id="wild", title="WildBox", quote="q", span=(0, 1), score=0.8)
    assert listed_relevance(item, judged=False) == rel
    assert listed_relevance(item).text == "listed · judge 0.80"


def test_a_lookup_shows_the_best_cited_sentences_support_and_uncited_sources_their_similarity() -> None:
    a1, a2, a3 = hit("a1", 0.62), hit("a2", 0.31), hit("a3", None)
    a = answer("lookup", [a1, a2, a3], [cite(1, a1, 0.71), cite(1, a1, 0.84)])
    rel = relevance_of(a)
    assert (rel["a1"].basis, rel["a1"].value, rel["a1"].text) == ("support", 0.84, "cited · support 0.84")
    assert rel["a2"].text == "not cited · similarity 0.31 (weak)" and rel["a2"].level == "weak"
    assert (rel["a3"].basis, rel["a3"].value, rel["a3"].text) == ("keyword", None, "not cited · keyword match")
    legend = format_relevance_legend(rel.values())
    assert legend.startswith("support = ") and "similarity = " in legend and "keyword match = " in legend


def test_a_yes_no_answer_shows_the_probability_of_its_verdict() -> None:
    p = hit("p", 0.18)
    a = answer(
        "yesno",
        [p, hit("q", 0.5)],
        [cite(1, p, 1.0, judged="no", judge=0.83)],
        verdict="no",
        verdict_probabilities={"yes": 0.1, "no": 0.83, "not stated": 0.07},
    )
    rel = relevance_of(a)
    assert (rel["p"].basis, rel["p"].label, rel["p"].text) == ("judge", "cited", "cited for “no” · judge 0.83")
    assert "verdict" in rel["p"].help
    assert rel["q"].text == "not cited · similarity 0.50 (strong)"


def test_a_comparison_shows_each_papers_support() -> None:
    x, y = hit("x", 0.2), hit("y", 0.45)
    rel = relevance_of(answer("compare", [x, y], [cite(1, x, 0.66), cite(2, y, 1.0)]))
    assert [r.text for r in rel.values()] == ["cited · support 0.66", "cited · support 1.00"]


def test_a_refusal_names_its_closest_papers_not_cited_and_never_off_topic() -> None:
    far = hit("far", 0.1)
    rel = relevance_of(answer("lookup", [far], [], refused=True))["far"]
    assert (rel.label, rel.level, rel.text) == ("not cited", "low", "not cited · similarity 0.10 (low)")
    assert retrieved_relevance(far).text == "retrieved · similarity 0.10 (low)"


def test_a_multi_part_answer_keeps_each_citations_judgement() -> None:
    # a list part and a lookup part make one answer of kind "lookup": the list's citations still say "listed"
    w, m = hit("w", 0.14), hit("m", 0.55)
    a = answer("lookup", [w, m], [cite(1, w, 0.88, judged="listed", judge=0.88), cite(2, m, 0.7)])
    assert [r.text for r in relevance_of(a).values()] == ["listed · judge 0.88", "cited · support 0.70"]
    reread = Answer.model_validate_json(a.model_dump_json())  # a stored conversation reopens with the same figures
    assert relevance_of(reread) == relevance_of(a)


def test_json_sources_carry_the_relevance_and_no_cosine_level() -> None:
    wild = hit("wild", 0.15)
    a = answer("list", [wild], [cite(1, wild, 0.91, judged="listed", judge=0.91)])
    (source,) = a.to_json()["sources"]
    assert "match" not in source and source["similarity"] == 0.15
    assert source["relevance"] == {
        "basis": "judge",
        "value": 0.91,
        "label": "listed",
        "level": None,
        "text": "listed · judge 0.91",
    }
    assert a.to_json()["citations"][0]["judged"] == "listed" and a.to_json()["citations"][0]["judge"] == 0.91


# ------------------------------------------------------------------ the real pipeline, every surface
def judge_probs(prompt: str) -> dict[str, float]:
    """The list judge says yes (0.91) to a paper whose text speaks of a benchmark or dataset, no (0.95) to
    others; the yes/no prompt gets Yes 0.78."""
    paper = judged_paper(prompt)
    if paper is not None:
        return (
            {"Yes": 0.91, "No": 0.09} if re.search(r"(?i)\b(benchmark|dataset)\b", paper) else {"Yes": 0.05, "No": 0.95}
        )
    assert "Yes, No, or Not" in prompt
    return {"Yes": 0.78, "No": 0.12, "Not": 0.10}


@pytest.fixture(scope="module")
def judged_assistant(seed_assistant: Any) -> Assistant:
    return with_label_head(
        Assistant(
            seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=LabelChatModel(probs=judge_probs)
        )
    )


@pytest.fixture(scope="module")
def list_answer(judged_assistant: Assistant) -> Answer:
    a = judged_assistant.ask(DATASET_Q)
    assert a.kind == "list" and len(a.items) >= 2
    return a


def test_every_listed_paper_shows_its_judge_figure_in_the_real_list_path(list_answer: Answer) -> None:
    rel = relevance_of(list_answer)
    for item in list_answer.items:
        assert (rel[item.paper_id].basis, rel[item.paper_id].value) == ("judge", item.score)
        assert rel[item.paper_id].text == f"listed · judge {item.score:.2f}" == "listed · judge 0.91"
    # what made the issue: some of these papers' passages are far from the question's wording
    cosines = {h.paper_id: h.dense_score for h in list_answer.sources}
    assert min(c for c in cosines.values() if c is not None) < 0.35


def test_a_real_yes_no_answer_cites_its_sentence_with_the_verdicts_probability(judged_assistant: Assistant) -> None:
    a = judged_assistant.ask("Does WildBox provide 3D bounding box annotations?", kind="yesno")
    assert a.verdict == "yes" and len(a.citations) == 1
    rel = relevance_of(a)[a.citations[0].paper_id]
    judge = a.verdict_probabilities["yes"]
    assert rel.text == f"cited for “yes” · judge {judge:.2f}" and rel.value == judge > 0.5


def test_ui_cli_json_and_http_show_the_same_figure_for_the_same_answer(
    list_answer: Answer, judged_assistant: Assistant
) -> None:
    rel = relevance_of(list_answer)
    panel = format_sources_html(list_answer, 1)
    cards = re.findall(
        r'<div class="rag-source" id="rag-src-1-(\d+)">.*?<span class="rag-rel ([^"]*)" title="[^"]*">'
        r"([^<]*)</span>",
        panel,
    )
    assert [int(n) for n, _css, _t in cards] == [i.n for i in list_answer.items]
    assert [html.unescape(t) for _n, _c, t in cards] == [rel[i.paper_id].text for i in list_answer.items]
    assert "<h4>Listed papers</h4>" in panel and "match:" not in panel and "off-topic" not in panel
    assert all("rag-rel-judge" in css for _n, css, _t in cards)

    printed = _answer_text(list_answer)
    for item in list_answer.items:
        assert f"[{item.n}] {item.title}  [{item.paper_id}, {rel[item.paper_id].text}]" in printed
    assert "judge = the model's probability" in printed.splitlines()[-1]

    as_json = list_answer.to_json()
    assert [s["relevance"]["text"] for s in as_json["sources"]] == [rel[s.paper_id].text for s in list_answer.sources]

    r = CliRunner().invoke(cli, ["ask", DATASET_Q, "--json"], obj={"assistant": judged_assistant})
    assert r.exit_code == 0, r.output
    assert [s["relevance"] for s in json.loads(r.stdout)["sources"]] == [s["relevance"] for s in as_json["sources"]]

    body = {"messages": [{"role": "user", "content": DATASET_Q}]}
    reply = TestClient(create_app(judged_assistant)).post("/v1/chat/completions", json=body)
    assert reply.status_code == 200, reply.text
    assert [s["relevance"] for s in reply.json()["rag"]["sources"]] == [s["relevance"] for s in as_json["sources"]]


def test_a_real_lookup_shows_the_cited_support_on_every_surface(seed_assistant: Any) -> None:
    def wildbox(prompt: str) -> str:
        n = evidence_number(prompt, "WildBox") or 1
        return f"WildBox comprises 237,505 3D bounding box annotations [{n}]."

    fake = ScriptedChatModel(reply=wildbox)
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    ans = a.ask("How many 3D bounding box annotations does WildBox have?")
    assert ans.kind == "lookup" and ans.citations
    c = ans.citations[0]
    rel = relevance_of(ans)[c.paper_id]
    assert rel.basis == "support" and rel.text == f"cited · support {c.support:.2f}" and c.support >= 0.6
    assert html.escape(rel.text) in format_sources_html(ans, 1)
    assert f"[{c.paper_id}, {rel.text}]" in _answer_text(ans)
    stream = TestClient(create_app(a)).post(
        "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": ans.question}], "stream": True},
    )
    chunks = [json.loads(line[6:]) for line in stream.text.splitlines() if line.startswith("data: {")]
    status = next(ch["rag_event"] for ch in chunks if ch.get("rag_event", {}).get("type") == "status")
    assert all(s["relevance"]["label"] == "retrieved" and "match" not in s for s in status["sources"])
    final = chunks[-1]["rag"]
    assert {s["paper_id"]: s["relevance"]["text"] for s in final["sources"]}[c.paper_id] == rel.text


def test_the_panel_says_listed_as_soon_as_a_shown_paper_is_confirmed(judged_assistant: Assistant) -> None:
    """While a list is still being judged, the card of a paper the judge has confirmed shows what listed it (the
    figure the finished answer gives it) instead of its retrieval similarity (0.15, "low", for one of them)."""
    from rag.ui.app import build_app
    from tests.test_ui import run_chat

    steps = run_chat(build_app(judged_assistant), DATASET_Q)
    panels = [s[3] for s in steps if isinstance(s[3], str)]
    labels = [re.findall(r'rag-rel [^"]*" title="[^"]*">([^<]*)<', p) for p in panels]
    heads = [re.findall(r"<h4>([^<]*)</h4>", p) for p in panels]
    assert heads[0] == ["Retrieved papers"] and all(t.startswith("retrieved · ") for t in labels[0])
    reading = [i for i, h in enumerate(heads) if h == ["Retrieved papers"]]
    counts = [sum(t == "listed · judge 0.91" for t in labels[i]) for i in reading]
    assert counts == sorted(counts) and counts[-1] >= 2  # cards turn "listed" one by one, before the answer
    first = next(i for i in reading if counts[reading.index(i)])
    turned = [a for a, b in zip(labels[0], labels[first]) if a != b]
    assert len(turned) == 1 and turned[0].endswith("(low)")  # the card that looked off-topic
    assert "judge = the model's probability" in html.unescape(panels[first])  # its legend says what it is
    assert heads[-1] == ["Listed papers"] and set(labels[-1]) == {"listed · judge 0.91"}

"""The Gradio UI's logic, without a browser: ``build_app`` with a scripted fake LLM (tests/fakes.py).

The fake reads the evidence numbers it was offered and records its prompts, so each test checks what
the UI did with the answer our pipeline produced: escaping, highlighted spans, feedback lines,
upload errors, the ``/ask`` endpoint through ``gradio_client`` against the app served on 127.0.0.1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gradio as gr
import pytest
from click.testing import CliRunner

from rag import NO_ANSWER, Assistant, ConfigError, ConversationStore, Settings, get_settings
from rag.settings import UISettings
from rag.ui.app import build_app, format_abstract_html, format_papers_html, launch
from rag.ui.rendering import format_backend_markdown
from tests.conftest import free_port, paper_id_containing
from tests.fakes import (
    PathsReply,
    ScriptedChatModel,
    asked_attribute,
    cell_prompts,
    copying_table_reply,
    evidence_number,
    table_cell_prompt,
    with_label_head,
)

WILDBOX_Q = "How many 3D bounding box annotations does WildBox have?"
XSS_ABSTRACT = (
    "We present Quokkanet, a detector of marsupials. <script>window.__xss = 1</script> "
    'It reaches 91.2% recall on the Quokka-9 benchmark. <img src=x onerror="window.__xss = 2"> Code is public.'
)


def wildbox_reply(prompt: str) -> str:
    n = evidence_number(prompt, "WildBox") or 1
    return f"WildBox comprises 237,505 3D bounding box annotations [{n}]. The capital of France is Paris."


def with_fake(seed: Any, reply: Callable[[str], str], **settings: Any) -> tuple[Assistant, ScriptedChatModel]:
    fake = ScriptedChatModel(reply=reply)
    s = seed.settings.model_copy(update=settings) if settings else seed.settings
    return with_label_head(Assistant(s, embeddings=seed.embeddings, chat_model=fake)), fake


def fn(app: gr.Blocks, name: str) -> Callable[..., Any]:
    """The Python function behind one of the app's events."""
    found = [f.fn for f in app.fns.values() if f.fn is not None and f.fn.__name__ == name]
    assert found, name
    return found[0]


def run_chat(
    app: gr.Blocks,
    question: str,
    history: list[Any] | None = None,
    answers: dict[int, Any] | None = None,
    messages: list[Any] | None = None,
    **opts: Any,
) -> list[tuple[Any, ...]]:
    """Every update the chat handler yields (messages, history, answers, sources, copy text, ...), the chat
    messages as they were at that step (the handler updates one list in place, as Gradio lets it)."""
    o = {"k": 5, "hybrid": True, "venue": "", "year": "", "mode": "llm", "temperature": 0.0, "kind": "auto"} | opts
    respond = fn(app, "respond")
    return [
        (list(step[0]) if isinstance(step[0], list) else step[0], *step[1:])
        for step in respond(
            question,
            messages or [],
            history or [],
            answers or {},
            o["k"],
            o["hybrid"],
            o["venue"],
            o["year"],
            o["mode"],
            o["temperature"],
            o["kind"],
        )
    ]


@pytest.fixture
def xss_file(tmp_path: Path) -> Path:
    path = tmp_path / "xss.jsonl"
    rec = {
        "id": "xss-1",
        "title": "Quokkanet <img src=x onerror=alert(1)>",
        "abstract": XSS_ABSTRACT,
        "venue": "ICML",
        "year": 2025,
    }
    path.write_text(json.dumps(rec) + "\n")
    return path


def test_streamed_answer_links_citations_and_highlights_the_supporting_sentence(seed_assistant: Any) -> None:
    a, fake = with_fake(seed_assistant, wildbox_reply)
    steps = run_chat(build_app(a), WILDBOX_Q)
    messages, history, answers, sources, copy_text, _, _, note = steps[-1]
    # streamed: several partial assistant messages before the final one
    partial = [
        s[0][-1]["content"] for s in steps[:-1] if isinstance(s[0], list) and s[0] and "WildBox" in s[0][-1]["content"]
    ]
    assert len(partial) > 3
    final = messages[-1]["content"]
    n = evidence_number(fake.prompts[-1], "WildBox")
    assert f'href="#rag-src-1-{n}"' in final
    # the unsupported sentence is shown, marked, outside the answer paragraph
    assert "rag-unsupported" in final and "<s>The capital of France is Paris.</s>" in final
    card = re.search(rf'<div class="rag-source" id="rag-src-1-{n}">.*?</div></div>', sources, re.S)
    assert card and "WildBox" in card.group(0)
    mark = re.search(r'<mark class="rag-support">(.*?)</mark>', card.group(0), re.S)
    assert mark and "237,505 3D bounding box annotations" in mark.group(1)
    assert history == [("user", WILDBOX_Q), ("assistant", answers[1]["answer"])]
    assert "At most 2,000 characters" in note and "rag-error" not in note
    assert (
        copy_text.startswith(answers[1]["answer"])
        and f"[{n}] WildBox" in copy_text
        and "237,505" in copy_text.split("References")[1]
    )


def test_follow_up_shows_the_standalone_question(seed_assistant: Any) -> None:
    def reply(prompt: str) -> str:
        if "Standalone question:" in prompt:  # the condense prompt
            return "How many species does WildBox cover?"
        return wildbox_reply(prompt)

    a, fake = with_fake(seed_assistant, reply)
    app = build_app(a)
    messages, history, answers, *_ = run_chat(app, WILDBOX_Q)[-1]
    messages, history, answers, *_ = run_chat(
        app, "And how many species?", history=history, answers=answers, messages=messages
    )[-1]
    final = messages[-1]["content"]
    assert "And how many species?" in fake.prompts[-2]  # the conversation went to the condense step
    assert '<div class="rag-standalone">Searched as: How many species does WildBox cover?</div>' in final
    assert 'href="#rag-src-2-' in final and sorted(answers) == [1, 3]  # second turn's markers, answers by message index
    assert len(history) == 4


def test_refusal_shows_the_closest_papers(seed_assistant: Any) -> None:
    a, _ = with_fake(seed_assistant, lambda p: NO_ANSWER)
    messages, _, answers, sources, *_ = run_chat(build_app(a), "What does the WildBox drone footage of zebras show?")[
        -1
    ]
    assert answers[1]["refused"] is True
    assert "rag-refusal" in messages[-1]["content"] and "closest papers" in messages[-1]["content"]
    assert (
        "<h4>Closest papers</h4>" in sources and sources.count('class="rag-source"') == len(answers[1]["sources"]) > 0
    )


def test_abstract_and_model_output_are_escaped(
    make_settings: Callable[..., Any], embeddings: Any, xss_file: Path
) -> None:
    fake = ScriptedChatModel(reply=lambda p: 'Quokkanet reaches 91.2% recall <img src=x onerror="alert(1)"> [1].')
    a = Assistant(make_settings(), embeddings=embeddings, chat_model=fake)
    a.ingest([xss_file])
    app = build_app(a)
    messages, _, _, sources, *_ = run_chat(app, "What recall does Quokkanet reach on Quokka-9?")[-1]
    rendered = messages[-1]["content"] + sources + format_papers_html(a.papers())
    for raw in ("<script", "<img"):
        assert raw not in rendered
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in sources
    assert "&lt;img src=x onerror=alert(1)&gt;" in sources  # the title too
    # partial streamed text is escaped as well
    assert all(
        "<img" not in m[0][-1]["content"] for m in run_chat(app, "Quokkanet recall?") if isinstance(m[0], list) and m[0]
    )


def test_highlight_merges_overlapping_spans_and_escapes() -> None:
    html = format_abstract_html("a <b> c. d & e.", [(0, 8), (4, 10), (13, 15)])
    assert html == '<mark class="rag-support">a &lt;b&gt; c. d</mark> &amp; <mark class="rag-support">e.</mark>'


def test_corpus_list_is_searchable(seed_assistant: Any) -> None:
    papers = seed_assistant.papers()
    assert f"{len(papers)} of {len(papers)} papers" in format_papers_html(papers)
    html = format_papers_html(papers, "wildbox")
    assert "<b>WildBox</b>" in html and f"1 of {len(papers)} papers" in html


def test_feedback_is_appended_as_json_lines(seed_assistant: Any, tmp_path: Path) -> None:
    feedback = tmp_path / "fb" / "feedback.jsonl"
    a, _ = with_fake(
        seed_assistant, wildbox_reply, ui=seed_assistant.settings.ui.model_copy(update={"feedback_file": feedback})
    )
    app = build_app(a)
    _, _, answers, *_ = run_chat(app, WILDBOX_Q)[-1]
    on_feedback = fn(app, "on_feedback")
    assert "saved (up)" in on_feedback(gr.LikeData(None, {"index": 1, "value": "x", "liked": True}), answers)
    assert "saved (down)" in on_feedback(gr.LikeData(None, {"index": [1, 0], "value": "x", "liked": False}), answers)
    assert on_feedback(gr.LikeData(None, {"index": 0, "value": "x", "liked": True}), answers) == "No answer to rate."
    lines = [json.loads(line) for line in feedback.read_text().splitlines()]
    assert [r["rating"] for r in lines] == ["up", "down"]
    rec = lines[0]
    assert rec["question"] == WILDBOX_Q and rec["answer"] == answers[1]["answer"]
    assert rec["citations"][0]["paper_id"] == paper_id_containing(seed_assistant, "We introduce WildBox")
    assert (
        rec["settings"] == {"k": 5, "hybrid": True, "filters": {}, "mode": "llm", "temperature": 0.0, "kind": None}
        and "time" in rec
    )


def test_feedback_file_defaults_to_the_data_dir(tmp_path: Path) -> None:
    assert get_settings(data_dir=tmp_path).feedback_path() == tmp_path / "feedback.jsonl"


def test_bad_upload_is_a_clear_error_and_indexes_nothing(
    make_settings: Callable[..., Any], embeddings: Any, tmp_path: Path
) -> None:
    a = Assistant(make_settings(), embeddings=embeddings, chat_model=ScriptedChatModel(reply=lambda p: NO_ANSWER))
    app = build_app(a)
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"id": "g1", "title": "Good", "abstract": "A fine abstract about zebras."}) + "\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "b1", "abstract": "ok"}) + "\n{not json\n")
    upload = fn(app, "upload")
    status, *_ = upload([str(good), str(bad)], "", progress=lambda *a, **k: None)
    assert "Nothing was indexed" in status and "bad.jsonl" in status and "line 2" in status
    assert a.papers() == []
    status, papers_html, venues, years = upload([str(good)], "", progress=lambda *a, **k: None)
    assert "1 added" in status and "<b>Good</b>" in papers_html
    assert [p.paper_id for p in a.papers()] == ["g1"]


def test_oversized_upload_is_rejected_before_it_is_read(
    make_settings: Callable[..., Any], embeddings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_UI__MAX_UPLOAD_BYTES", "1000")
    assert get_settings().ui.max_upload_bytes == 1000 and Settings().ui.max_upload_bytes == 1000
    a = Assistant(
        make_settings(ui={"max_upload_bytes": 1000}),
        embeddings=embeddings,
        chat_model=ScriptedChatModel(reply=lambda p: NO_ANSWER),
    )
    app = build_app(a)
    small = tmp_path / "small.jsonl"
    small.write_text(json.dumps({"id": "s1", "title": "Small", "abstract": "A short abstract about zebras."}) + "\n")
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"{not json, and never read\n" + b"x" * 1200 + b"\n")
    upload = fn(app, "upload")
    status, *_ = upload([str(small), str(big)], "", progress=lambda *a, **k: None)
    assert status == (
        '<p class="rag-error">Nothing was indexed. big.jsonl is 1,227 bytes; the limit is 1,000 bytes. '
        "Split the file, or raise RAG_UI__MAX_UPLOAD_BYTES.</p>"
    )
    assert a.papers() == []
    status, *_ = upload([str(small)], "", progress=lambda *a, **k: None)
    assert "1 added" in status and [p.paper_id for p in a.papers()] == ["s1"]
    default = build_app(with_fake(a, lambda p: NO_ANSWER, ui=UISettings())[0])
    assert [b.label for b in default.blocks.values() if isinstance(b, gr.File)] == [
        "Add abstracts (.txt, .jsonl, .ndjson, .json, .csv, each optionally .gz, e.g. a BEIR corpus.jsonl.gz; "
        "at most 20 MB a file)"
    ]


def component(app: gr.Blocks, elem_id: str) -> Any:
    found = [b for b in app.blocks.values() if getattr(b, "elem_id", None) == elem_id]
    assert len(found) == 1, elem_id
    return found[0]


def test_empty_question_gets_a_one_line_message_and_asks_nothing(seed_assistant: Any) -> None:
    a, fake = with_fake(seed_assistant, wildbox_reply)
    app = build_app(a)
    for question in ("", "   \n\t "):
        steps = run_chat(app, question)
        assert len(steps) == 1
        messages, history, answers, _, _, box, _, note = steps[0]
        assert messages == [] and history == [] and answers == {} and box == ""
        assert note.count("<p") == 1 and "rag-error" in note and "Type a question first" in note
    assert fake.prompts == []


def test_over_long_question_is_refused_with_the_limit_named_never_cut(seed_assistant: Any) -> None:
    answer = seed_assistant.settings.answer.model_copy(update={"max_question_chars": 60})
    a, fake = with_fake(seed_assistant, wildbox_reply, answer=answer)
    app = build_app(a)
    # the box shows the limit and what happens past it, and sets no maxlength (the browser would cut silently)
    assert "At most 60 characters; a longer question is refused" in component(app, "rag-question-note").value
    assert component(app, "rag-question").max_length is None
    question = WILDBOX_Q + " List every species <b>and</b> every count."
    steps = run_chat(app, question)
    assert len(steps) == 1  # refused at once: the chat never shows "Searching…" for it
    messages, history, answers, _, _, box, _, note = steps[-1]
    assert messages == [] and history == [] and answers == {}
    assert box == question  # given back whole, to be shortened
    assert (
        f"The question has {len(question)} characters; the limit is 60 (RAG_ANSWER__MAX_QUESTION_CHARS)." in note
        and "rag-error" in note
        and note.count("<p") == 1
    )
    assert fake.prompts == []
    # a question at the limit is answered
    messages, *_, note = run_chat(app, WILDBOX_Q[:60])[-1]
    assert len(messages) == 2 and "rag-error" not in note and len(fake.prompts) >= 1


def test_table_query_over_the_limit_is_refused_with_the_limit_named(seed_assistant: Any) -> None:
    app = build_app(seed_assistant)
    assert component(app, "rag-table-query").max_length is None
    status, *_ = list(fn(app, "make_table")("task", "x" * 2001, "", "", 5))[-1]
    assert "rag-error" in status and "the limit is 2000 (RAG_ANSWER__MAX_QUESTION_CHARS)" in status


def test_theme_uses_the_system_fonts_and_fetches_none() -> None:
    from rag.ui.layout import THEME

    fonts = [f for f in [*THEME._font, *THEME._font_mono] if isinstance(f, gr.themes.Font)]
    assert fonts and all(f.stylesheet() == {"url": None, "css": None} for f in fonts)
    css = THEME._get_theme_css()
    assert "--font: system-ui, ui-sans-serif, sans-serif;" in css and "--font-mono: ui-monospace, monospace;" in css
    assert "@font-face" not in css and "url(http" not in css and THEME._stylesheets == []


def test_ask_endpoint_through_gradio_client(seed_assistant: Any) -> None:
    from gradio_client import Client

    a, _ = with_fake(seed_assistant, wildbox_reply)
    port = free_port()
    app = launch(a, "127.0.0.1", port, block=False, quiet=True)
    try:
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        result = client.predict(WILDBOX_Q, api_name="/ask")
        assert "237,505" in result["answer"] and not result["refused"]
        c = result["citations"][0]
        assert c["paper_id"] == paper_id_containing(seed_assistant, "We introduce WildBox")
        assert result["sources"][c["n"] - 1]["paper_id"] == c["paper_id"] and "237,505" in c["quote"]
        extractive = client.predict(WILDBOX_Q, 2, False, "", "", "extractive", api_name="/ask")
        assert extractive["mode"] == "extractive" and len(extractive["sources"]) <= 2
        with pytest.raises(Exception, match="The question is empty"):
            client.predict("  ", api_name="/ask")
        with pytest.raises(
            Exception, match=r"has 2001 characters; the limit is 2000 \(RAG_ANSWER__MAX_QUESTION_CHARS\)"
        ):
            client.predict("x" * 2001, api_name="/ask")
    finally:
        app.close()


def test_non_loopback_bind_needs_a_login(tmp_path: Path) -> None:
    env = {"RAG_DATA_DIR": str(tmp_path), "RAG_CONFIG": str(tmp_path / "none.toml")}
    from rag.apps.cli import cli

    r = CliRunner().invoke(cli, ["ui", "--host", "0.0.0.0"], env=env)
    assert r.exit_code == 1 and "without a login: set RAG_UI__AUTH=user:password" in r.output
    with pytest.raises(ConfigError, match="user:password"):
        get_settings(ui={"auth": "nopassword"})


def test_flat_auth_name_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAG_UI_AUTH", "ann:s3cret")
    s = get_settings()
    assert s.ui.auth is not None and s.ui.auth.get_secret_value() == "ann:s3cret"
    assert s.masked()["ui"]["auth"] == "**********"


@pytest.mark.slow
def test_demo_opens_the_ui_after_the_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rag.ui.app
    from rag.apps.cli import cli

    calls: list[tuple[str, int]] = []
    monkeypatch.setattr(rag.ui.app, "launch", lambda assistant, host, port: calls.append((host, port)))
    env = {"RAG_DATA_DIR": str(tmp_path), "RAG_CONFIG": str(tmp_path / "none.toml")}
    r = CliRunner().invoke(cli, ["demo", "--port", "7999"], env=env, catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "WildBox" in r.output and "$ rag ui" in r.output and calls == [("127.0.0.1", 7999)]


# ------------------------------------------------------------------ question kinds, evidence at once, tables
def contents(steps: list[tuple[Any, ...]]) -> list[str]:
    """The assistant bubble of every step, in order."""
    return [str(s[0][-1]["content"]) for s in steps if isinstance(s[0], list) and s[0]]


def test_evidence_shows_at_once_in_the_bubble_and_the_sources_panel(seed_assistant: Any) -> None:
    a, fake = with_fake(seed_assistant, wildbox_reply)
    steps = run_chat(build_app(a), WILDBOX_Q)
    bubbles = contents(steps)
    reading = next(i for i, b in enumerate(bubbles) if "rag-reading" in b)
    first_draft = next(i for i, b in enumerate(bubbles) if "WildBox comprises" in b)
    assert reading < first_draft  # the sentences were on screen before the model wrote a word
    assert re.search(r"Reading \d+ sentences from 1 paper…", bubbles[reading])
    n = evidence_number(fake.prompts[-1], "WildBox")
    assert f'<a class="rag-ref" href="#rag-src-1-{n}">[{n}]</a> We introduce WildBox' in bubbles[reading]
    assert "rag-cite" not in bubbles[reading]  # links to the cards, but not citations of an answer (none yet)
    panel = steps[reading][3]  # the sources panel of the same step: the papers, numbered like the evidence
    assert (
        "<h4>Reading</h4>" in panel and f'<div class="rag-source" id="rag-src-1-{n}"><div><b>[{n}] WildBox</b>' in panel
    )
    assert "rag-support" not in panel  # being read, not (yet) supporting anything
    marks = re.findall(r'<mark class="rag-read">(.*?)</mark>', panel, re.S)
    assert any("237,505 3D bounding box annotations" in m for m in marks)


def test_list_answer_streams_papers_with_the_counter_then_lists_them_with_links(seed_assistant: Any) -> None:
    judge = PathsReply(judge=r"(?i)\bbenchmark\b")
    a, _ = with_fake(seed_assistant, judge)
    steps = run_chat(build_app(a), "Which papers introduce a new benchmark?")
    bubbles = contents(steps)
    counters = [m for b in bubbles if (m := re.search(r"Checked (\d+) of (\d+) papers · (\d+) found so far", b))]
    checked = [int(m.group(1)) for m in counters]
    assert checked[0] == 0 and checked == sorted(checked) and checked[-1] == int(counters[0].group(2))
    assert int(counters[-1].group(3)) == len(judge.said_yes) >= 2
    growing = [b for b in bubbles if "rag-items" in b and "found so far" in b]
    assert growing[0].count("<li>") == 1 and growing[-1].count("<li>") == len(judge.said_yes)
    messages, _, answers, sources, *_ = steps[-1]
    final = messages[-1]["content"]
    assert answers[1]["kind"] == "list" and len(answers[1]["items"]) == len(judge.said_yes)
    assert final.startswith(f"<p>{len(judge.said_yes)} papers match (")
    for item in answers[1]["items"]:
        assert f'href="#rag-src-1-{item["n"]}"' in final and f'id="rag-src-1-{item["n"]}"' in sources
    assert "<h4>Listed papers</h4>" in sources and "\n" not in final
    assert sources.count("listed · judge 1.00") == len(judge.said_yes) and "off-topic" not in sources


def test_yes_no_answer_leads_with_the_verdict(seed_assistant: Any) -> None:
    a, _ = with_fake(seed_assistant, PathsReply(verdict=lambda p: "Yes"))
    messages, _, answers, *_ = run_chat(build_app(a), "WildBox and drone video", kind="yesno")[-1]
    final = messages[-1]["content"]
    assert answers[1]["kind"] == "yesno" and answers[1]["settings"]["kind"] == "yesno"
    assert final.startswith('<div class="rag-verdict rag-verdict-yes">Yes</div><p>The abstract states: ')
    a, _ = with_fake(seed_assistant, PathsReply(verdict=lambda p: "Not"))
    messages, *_ = run_chat(build_app(a), "Does WildBox report the price of the drones?")[-1]
    final = messages[-1]["content"]
    assert final.startswith('<div class="rag-verdict rag-verdict-not-stated">Not stated</div><p class="rag-refusal">')


def test_answer_as_selector_overrides_the_recognised_kind_and_follow_ups_work(seed_assistant: Any) -> None:
    def reply(prompt: str) -> str:
        if "Standalone question:" in prompt:  # the condense prompt
            return "Does WildBox use drone video?"
        return PathsReply(judge=r"(?i)wildbox")(prompt)

    a, fake = with_fake(seed_assistant, reply)
    app = build_app(a)
    radio = next(b for b in app.blocks.values() if isinstance(b, gr.Radio) and b.label == "Answer as")
    assert [c[1] for c in radio.choices] == ["auto", "lookup", "list", "compare", "yesno"] and radio.value == "auto"
    messages, history, answers, *_ = run_chat(app, "3D wildlife detection from drones", kind="list")[-1]
    assert answers[1]["kind"] == "list" and [i["title"] for i in answers[1]["items"]] == ["WildBox"]
    messages, history, answers, *_ = run_chat(
        app, "Does it use drone video?", history=history, answers=answers, messages=messages
    )[-1]
    assert answers[3]["kind"] == "yesno" and answers[3]["standalone_question"] == "Does WildBox use drone video?"
    assert any("3D wildlife detection from drones" in p and "Standalone question:" in p for p in fake.prompts)
    with pytest.raises(gr.Error, match="Answer as must be"):
        run_chat(app, "What is WildBox?", kind="essay")


def test_table_tab_cites_every_value_marks_not_stated_and_offers_downloads(seed_assistant: Any) -> None:
    reply = PathsReply(judge=r"(?i)wildlife|drone")  # the list judge confirms the papers on wildlife or drones

    def answer(prompt: str) -> str:  # WildBox's task as its abstract states it, the rest as PathsReply does
        if asked_attribute(prompt, ["task"]) and "wildlife" in str(table_cell_prompt(prompt)):
            return "monocular 3D detection of wildlife from drone video"
        return reply(prompt)

    a, fake = with_fake(seed_assistant, answer)
    app = build_app(a)
    make_table = fn(app, "make_table")
    steps = list(make_table("task, metric", "3D detection of wildlife from drone video", "", "", 3))
    status, html, csv_button, md_button = steps[-1]
    confirmed = {str(t).split(".")[0] for t in reply.said_yes}
    rows = re.findall(r"<tr><td>\[(\d)\] <b>(.*?)</b></td>(.*?)</tr>", html)
    assert {title for _n, title, _ in rows} == confirmed and 1 <= len(rows) <= 3
    assert re.fullmatch(
        rf'<p class="rag-progress">{len(rows)} rows?: read \d+ papers of the 19 in the collection, in \d+ s\.</p>',
        status,
    )
    assert len(cell_prompts(fake.prompts)) == 2 * len(rows)  # a question per cell, only for confirmed papers
    for n, _title, cells in rows:
        task, metric = re.findall(r"<td.*?</td>", cells)
        assert metric == '<td class="rag-not-stated" title="No sentence of the abstract states it">not stated</td>'
        if "rag-cell" in task:  # a value: its paper's [n], the quote on hover and when opened
            quote = re.search(r"<blockquote>(.*?)</blockquote>", task).group(1)  # type: ignore[union-attr]
            assert f"<sup>[{n}]</sup>" in task and f'<summary title="{quote}">' in task
    assert html.count("rag-cell") >= 1 and "<h4>References</h4>" in html
    assert "We introduce WildBox, a dataset and benchmark" in html.split("References")[1]
    assert csv_button["visible"] and md_button["visible"]
    csv_text = Path(csv_button["value"]).read_text(encoding="utf-8")
    assert csv_text.splitlines()[0] == "n,paper_id,title,task,task (quote),metric,metric (quote)"
    md = Path(md_button["value"]).read_text(encoding="utf-8")
    assert md.startswith("| paper | task | metric |") and "*not stated*" in md and "References:" in md
    status, html, csv_button, _ = list(make_table(" , ", "", "", "", 3))[-1]
    assert status == '<p class="rag-error">Name at least one attribute, e.g. &#x27;task, dataset, metric&#x27;.</p>'
    assert csv_button["visible"] is False
    table = fn(app, "table")("task", "", "", "", 2)
    assert table["attributes"] == ["task"] and len(table["rows"]) == 2 and table["collection_size"] == 19


def test_table_tab_streams_its_status_from_the_start_and_each_row_as_it_is_filled(seed_assistant: Any) -> None:
    a, fake = with_fake(seed_assistant, PathsReply(judge=r"."))  # every paper qualifies
    app = build_app(a)
    steps = list(fn(app, "make_table")("task", "", "", "", 3))
    status, html, csv_button, _ = steps[0]  # at once: what is being done, before any model call
    assert status == '<p class="rag-progress">Reading the collection… · 0 s</p>' and csv_button["visible"] is False
    tables = [s[1] for s in steps[:-1] if isinstance(s[1], str)]  # the table as it grows, one row at a time
    assert [html.count("<tr><td>") for html in tables] == [1, 2, 3]
    filling = [s[0] for s in steps if isinstance(s[0], str) and "Filling row" in s[0]]
    assert [re.search(r"Filling row \d of 3", f).group(0) for f in filling] == [  # type: ignore[union-attr]
        f"Filling row {n} of 3" for n in (1, 2, 3)
    ]
    assert "so far" not in filling[1] and steps[-1][3]["visible"]  # "Filling row 2" says how far it is


def test_table_stop_ends_the_stream_keeps_its_rows_and_frees_the_model(seed_assistant: Any) -> None:
    a, fake = with_fake(seed_assistant, PathsReply(judge=r"."))
    app = build_app(a)
    handlers = fn(app, "make_table").__self__  # type: ignore[attr-defined]
    request = SimpleNamespace(session_hash="s1")
    assert handlers.stop_table(request) is not None  # nothing running: a no-op (gr.skip())
    steps = handlers.make_table("task", "", "", "", 5, request)
    asked = False
    for step in steps:
        status, html = step[0], step[1]
        if isinstance(html, str) and html.count("<tr><td>") == 2 and not asked:
            assert a.llm_queue.active == 1  # the table holds the model
            assert "Stopping" in handlers.stop_table(request)
            assert a.llm_queue.active == 0  # freed at once: the next question in line need not wait for a row
            asked = True
    assert status == '<p class="rag-progress">Stopped after 2 rows.</p>' and html.count("<tr><td>") == 2
    assert a.llm_queue.active == 0 and len(cell_prompts(fake.prompts)) == 2  # no third row was read


def test_table_and_list_render_markup_from_abstracts_inert(
    make_settings: Callable[..., Any], embeddings: Any, xss_file: Path
) -> None:
    def reply(prompt: str) -> str:
        if asked_attribute(prompt, ["result"]):  # copy a value that carries the abstract's markup
            return "<script>window.__xss = 1</script> It reaches 91.2% recall"
        row = copying_table_reply(prompt, invented=())
        if row is not None:
            return row
        return PathsReply(judge=r"(?i)quokka")(prompt)

    fake = ScriptedChatModel(reply=reply)
    a = Assistant(make_settings(), embeddings=embeddings, chat_model=fake)
    a.ingest([xss_file])
    app = build_app(a)
    _, html, _, _ = list(fn(app, "make_table")("task, result", "", "", "", 5))[-1]
    steps = run_chat(app, "Which papers detect marsupials?", kind="list")
    rendered = [html, *contents(steps), steps[-1][3]]
    for out in rendered:
        assert not re.search(r"<(script|img)\b|\bon\w+=\"", out, re.I), out
    assert "Quokkanet &lt;img src=x onerror=alert(1)&gt;" in html  # the title, in the row and the references
    value = "&lt;script&gt;window.__xss = 1&lt;/script&gt; It reaches 91.2% recall <sup>[1]</sup></summary>"
    assert value in html and "&lt;img src=x onerror=&quot;window.__xss = 2&quot;&gt;" in html  # value and quote
    assert "Quokkanet &lt;img src=x onerror=alert(1)&gt;" in steps[-1][0][-1]["content"]  # the list item


# ------------------------------------------------------------------ conversations and exports
def test_conversation_is_saved_listed_reopened_with_sources_and_deleted(seed_assistant: Any, tmp_path: Path) -> None:
    """Each answer saves the chat as the current conversation; opening it (as on a page reload) rebuilds the
    messages, the sources panel with its highlight, the history for follow-ups and the three downloads."""
    a, _ = with_fake(seed_assistant, wildbox_reply)
    app = build_app(a)
    alice, bob = gr.Request(username=f"alice-{tmp_path.name}"), gr.Request(username=f"bob-{tmp_path.name}")
    steps = run_chat(app, WILDBOX_Q)
    messages, history, answers, sources = steps[-1][0], steps[-1][1], steps[-1][2], steps[-1][3]
    conv_id, listed, md, bib, csv_file, last = fn(app, "save_conversation")(answers, "", alice)
    assert re.fullmatch(r"[0-9a-f]{16}", conv_id) and listed["value"] == conv_id
    assert [label for label, _ in listed["choices"]][0].startswith(WILDBOX_Q[:40])
    assert (a.settings.conversations_dir() / ConversationStore(Path()).folder(alice.username).name).is_dir()
    md_text = Path(md["value"]).read_text(encoding="utf-8")
    assert "237,505" in md_text and '<a id="ref-1"></a>[1] WildBox' in md_text
    assert Path(bib["value"]).read_text(encoding="utf-8").startswith("@misc{wildbox_")
    assert "WildBox" in Path(csv_file["value"]).read_text(encoding="utf-8")
    assert Path(last["value"]).read_text(encoding="utf-8").startswith(f"# {WILDBOX_Q}")

    reopened = fn(app, "open_conversation")(conv_id, alice)
    assert reopened[0] == messages and reopened[1] == history and reopened[3] == sources
    assert 'mark class="rag-support"' in reopened[3] and reopened[7] == conv_id
    q2 = "How many African savanna species does WildBox cover?"
    follow = run_chat(app, q2, reopened[1], reopened[2], reopened[0], mode="extractive")
    assert len(follow[-1][0]) == 4 and 'href="#rag-src-2-' in follow[-1][0][-1]["content"]
    same_id = fn(app, "save_conversation")(follow[-1][2], conv_id, alice)[0]
    assert same_id == conv_id
    saved = ConversationStore(a.settings.conversations_dir()).load(alice.username, conv_id)
    assert saved is not None and [t.answer.question for t in saved.turns] == [WILDBOX_Q, q2]

    assert fn(app, "open_conversation")(conv_id, bob)[0] == []  # another user's conversation does not open
    assert fn(app, "restore")(conv_id, bob)[8]["choices"] == []
    deleted = fn(app, "delete_conversation")(conv_id, conv_id, alice)
    assert deleted[0] == [] and deleted[8]["choices"] == [] and deleted[7] == ""
    assert fn(app, "open_conversation")(conv_id, alice)[0] == []


def test_settings_note_names_the_llama_cpp_runtime_and_an_endpoint_has_none(tmp_path: Path) -> None:
    """The Settings panel says which llama.cpp serves the embedded model (here no build for this CPU exists, so
    the bundled wheel), and says nothing of a runtime when an endpoint answers."""
    local = SimpleNamespace(settings=Settings(data_dir=tmp_path / "d", cache_dir=tmp_path / "c"))
    note = format_backend_markdown(local)  # type: ignore[arg-type]
    assert "**Runtime:** the bundled llama.cpp wheel" in note
    remote = SimpleNamespace(
        settings=Settings(data_dir=tmp_path / "d", cache_dir=tmp_path / "c", llm={"base_url": "http://127.0.0.1:9/v1"})
    )
    note = format_backend_markdown(remote)  # type: ignore[arg-type]
    assert "http://127.0.0.1:9/v1" in note and "Runtime" not in note

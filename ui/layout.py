"""The UI's component tree (the :class:`gradio.Blocks` layout), its styles and its one piece of JavaScript.

Each function builds one part inside the Blocks context it is called in and returns its components in a
small record; :func:`rag.ui.app.build_app` wires them to :mod:`rag.ui.handlers`. Nothing here handles an event.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr

from rag import SUPPORTED_SUFFIXES, Paper, Settings
from rag.ui.rendering import (
    format_check_html,
    format_limit_html,
    format_papers_html,
    format_sources_html,
    format_table_html,
)

EXAMPLES = [
    "How many 3D bounding box annotations does WildBox have?",
    "What does MaskGen do for 3D biomedical image segmentation?",
    "Why is training Mixture-of-Experts models unstable?",
]


# the "Answer as" choices: (label, value); "auto" lets the question's form decide
KIND_CHOICES = [("auto", "auto"), ("lookup", "lookup"), ("list", "list"), ("compare", "compare"), ("yes/no", "yesno")]
TABLE_EXAMPLE = "task, dataset, metric, best result"

# Global styles and the citation click handler. They live in the sources panel's js_on_load, so
# ``build_app`` is self-contained (Gradio 6 takes css/head only in ``launch``).
_CSS = """
.rag-cite, .rag-ref { font-weight: 600; text-decoration: none; padding: 0 1px; border-radius: 3px; cursor: pointer; }
.rag-cite:hover, .rag-ref:hover { background: rgba(59,130,246,.15); }
.rag-unsupported { margin-top: .6em; font-size: .9em; color: #9a3412; }
.rag-unsupported s { color: #9a3412; }
.rag-standalone { margin-top: .5em; font-size: .8em; opacity: .65; font-style: italic; }
.rag-refusal { font-style: italic; }
.rag-sources { overflow-wrap: anywhere; }
.rag-source { border: 1px solid rgba(128,128,128,.35); border-radius: 8px; padding: .6em .8em; margin-bottom: .7em; }
.rag-source.rag-active { border-color: #3b82f6; box-shadow: 0 0 0 2px rgba(59,130,246,.35); }
.rag-source-meta { font-size: .8em; opacity: .75; margin: .15em 0 .4em 0; }
.rag-abstract { max-height: 18em; overflow-y: auto; white-space: pre-wrap; font-size: .92em; line-height: 1.45; }
.rag-abstract mark { background: #fde68a; color: #111; padding: 0 1px; }
.rag-abstract mark.rag-read { background: #dbeafe; }
.rag-papers { overflow-wrap: anywhere; max-height: 32em; overflow-y: auto; }
.rag-paper { padding: .35em 0; border-bottom: 1px solid rgba(128,128,128,.2); }
.rag-paper-snippet { font-size: .85em; opacity: .8; }
.rag-error { color: #b91c1c; font-weight: 600; }
.rag-reading { font-size: .85em; opacity: .7; }
.rag-reading ul, .rag-items { margin: .3em 0 0 0; padding-left: 1.1em; }
.rag-progress { font-size: .85em; opacity: .75; }
.rag-step { font-size: .85em; opacity: .75; margin-top: .4em; }
.rag-item-title { font-weight: 600; }
.rag-verdict { display: inline-block; font-weight: 700; font-size: 1.15em; padding: .1em .6em; border-radius: 6px;
  margin-bottom: .4em; }
.rag-verdict-yes { background: #dcfce7; color: #166534; }
.rag-verdict-no { background: #fee2e2; color: #991b1b; }
.rag-verdict-not-stated { background: #e5e7eb; color: #374151; }
.rag-note { font-size: .8em; opacity: .7; margin-top: .4em; }
.rag-table-wrap { overflow-x: auto; overflow-wrap: anywhere; }
.rag-table { border-collapse: collapse; font-size: .9em; width: 100%; }
.rag-table th, .rag-table td { border: 1px solid rgba(128,128,128,.35); padding: .3em .5em; vertical-align: top;
  text-align: left; min-width: 7em; }
.rag-table th { white-space: nowrap; }
.rag-table td:first-child { min-width: 12em; }
.rag-table details summary { cursor: pointer; }
.rag-table blockquote { margin: .3em 0 0 0; font-size: .85em; opacity: .85; }
.rag-not-stated { font-style: italic; opacity: .55; }
.rag-refs { font-size: .85em; }
.rag-math { font-family: "Latin Modern Math", "STIX Two Math", "Cambria Math", serif; white-space: nowrap; }
.rag-math sub, .rag-math sup { font-size: .75em; }
.rag-rel { cursor: help; border-bottom: 1px dotted currentColor; }
.rag-rel-judge, .rag-rel-support { color: #166534; font-weight: 600; }
.rag-match-strong { color: #166534; } .rag-match-good { color: #1d4ed8; } .rag-match-weak { color: #92400e; }
.rag-match-low { color: #6b7280; }
.rag-legend { font-size: .8em; opacity: .75; margin: .2em 0 .6em 0; }
.rag-limit { font-size: .8em; opacity: .75; margin: 0; }
.rag-limit.rag-over .rag-count, .rag-limit .rag-error { color: #b91c1c; opacity: 1; }
.rag-check { overflow-wrap: anywhere; }
#rag-check-result .rag-stances, #rag-check-result .rag-meter-legend { list-style: none; padding: 0; }
#rag-check-result .rag-stances { margin: .3em 0 0 0; }
#rag-check-result .rag-stances > li, #rag-check-result .rag-meter-legend > li { list-style: none; margin-left: 0; }
.rag-stance { padding: .45em 0 .45em .7em; border-left: 4px solid #9ca3af; margin-bottom: .5em; }
.rag-stance-supports { border-left-color: #16a34a; } .rag-stance-refutes { border-left-color: #dc2626; }
.rag-stance-label { font-weight: 700; margin-right: .3em; }
.rag-stance-note { font-size: .85em; opacity: .75; }
#rag-check-result .rag-stance-quote { margin: .25em 0 0 0; padding: 0; border: none; font-size: .9em; opacity: .9; }
.rag-verdict-supported { background: #dcfce7; color: #166534; }
.rag-verdict-refuted { background: #fee2e2; color: #991b1b; }
.rag-verdict-mixed { background: #fef3c7; color: #92400e; }
.rag-verdict-not-enough-evidence { background: #e5e7eb; color: #374151; }
.rag-meter { display: flex; height: 1.1em; max-width: 28em; border: 1px solid rgba(128,128,128,.5); border-radius: 4px;
  overflow: hidden; background: rgba(128,128,128,.08); }
.rag-meter-part { display: block; height: 100%; }
.rag-meter-supports, .rag-meter-key-supports .rag-meter-swatch { background: #16a34a; }
.rag-meter-refutes, .rag-meter-key-refutes .rag-meter-swatch { background: #dc2626;
  background-image: repeating-linear-gradient(45deg, transparent 0 3px, rgba(255,255,255,.45) 3px 5px); }
.rag-meter-not-stated, .rag-meter-key-not-stated .rag-meter-swatch { background: #d1d5db; }
.rag-meter-legend { display: flex; flex-wrap: wrap; gap: .3em 1.2em; list-style: none; margin: .35em 0; padding: 0;
  font-size: .85em; }
.rag-meter-swatch { display: inline-block; width: .8em; height: .8em; margin-right: .35em; border-radius: 2px;
  vertical-align: -.05em; }
/* on a phone the four tabs fit in one row */
@media (max-width: 480px) { .tab-container button[role=tab] { padding: 0 7px; } }
/* the chat's label and its top icons sit in a strip of their own: messages never scroll under them */
#rag-chat .bubble-wrap { margin-top: 2.1em; height: calc(100% - 2.1em); }
/* a long saved-conversation name ends in an ellipsis before the dropdown's arrow, never under it */
#rag-conversations input[role="combobox"] { padding-right: 2.2em; text-overflow: ellipsis; overflow: hidden;
  white-space: nowrap; }
"""

ON_LOAD = """
if (!window.__ragCitations) {
  window.__ragCitations = true;
  const style = document.createElement("style");
  style.textContent = %s;
  document.head.appendChild(style);
  document.addEventListener("click", function (ev) {
    const a = ev.target.closest ? ev.target.closest("a[href^='#rag-src-']") : null;
    if (!a) return;
    ev.preventDefault();
    ev.stopPropagation();
    const card = document.getElementById(a.getAttribute("href").slice(1));
    if (!card) return;
    document.querySelectorAll(".rag-source.rag-active").forEach(function (e) { e.classList.remove("rag-active"); });
    card.classList.add("rag-active");
    card.scrollIntoView({block: "start"});
    showMarks(card);
  }, true);
  // a card's abstract scrolls in its own box: bring its first highlighted sentence into that box's view,
  // on click and whenever the panel is re-rendered, without moving the page
  function showMarks(root) {
    root.querySelectorAll(".rag-abstract").forEach(function (box) {
      const mark = box.querySelector("mark");
      if (!mark) return;
      const top = mark.getBoundingClientRect().top - box.getBoundingClientRect().top + box.scrollTop;
      if (top < box.scrollTop || top + mark.offsetHeight > box.scrollTop + box.clientHeight) {
        box.scrollTop = Math.max(0, top - 8);
      }
    });
  }
  function watchSources() {
    const panel = document.getElementById("rag-sources");
    if (!panel) { setTimeout(watchSources, 200); return; }
    new MutationObserver(function () { showMarks(panel); }).observe(panel, {childList: true, subtree: true});
    showMarks(panel);
  }
  watchSources();
  // the question box's character count against the limit the note names: on typing, and whenever the chat
  // changes (an answer empties the box, a refused question is put back into it)
  function syncCount() {
    const box = document.querySelector("#rag-question textarea");
    const count = document.querySelector("#rag-question-note .rag-count");
    if (!box || !count) return;
    const n = box.value.length, limit = Number(count.dataset.limit);
    const text = n ? n.toLocaleString("en") + " / " + limit.toLocaleString("en") + " characters · " : "";
    if (count.textContent !== text) count.textContent = text;  // unchanged text: no mutation, no loop
    count.closest(".rag-limit").classList.toggle("rag-over", n > limit);
  }
  document.addEventListener("input", function (ev) {
    if (ev.target.closest && ev.target.closest("#rag-question")) syncCount();
  }, true);
  function watchChat() {
    const chat = document.getElementById("rag-chat");
    const note = document.getElementById("rag-question-note");
    if (!chat || !note) { setTimeout(watchChat, 200); return; }
    const observer = new MutationObserver(function () { setTimeout(syncCount, 50); });
    observer.observe(chat, {childList: true, subtree: true});
    observer.observe(note, {childList: true, subtree: true});
  }
  watchChat();
}
""" % json.dumps(_CSS)  # noqa: UP031  the template is JavaScript: str.format or an f-string would double its braces


class _GenericFont(gr.themes.Font):
    """A CSS generic family (``system-ui``, ``ui-monospace``): written unquoted, with no stylesheet to fetch."""

    def __str__(self) -> str:
        return self.name


# The system's own fonts: nothing to download (Gradio's default theme loads its own font files; an older
# release asked Google Fonts), and bold text drawn by a real bold face rather than a synthesised one.
THEME = gr.themes.Default(
    font=[_GenericFont("system-ui"), _GenericFont("ui-sans-serif"), "sans-serif"],
    font_mono=[_GenericFont("ui-monospace"), "monospace"],
)

COPY_JS = """
(text) => {
  if (text && navigator.clipboard) { navigator.clipboard.writeText(text).catch(function () {}); }
  return text;
}
"""


@dataclass(frozen=True, kw_only=True)
class ChatPanel:
    """The chat column: the conversation, the question box, its buttons, downloads and saved conversations."""

    chatbot: gr.Chatbot
    question: gr.Textbox
    question_note: gr.HTML
    ask_btn: gr.Button
    stop_btn: gr.Button
    copy_btn: gr.Button
    clear_btn: gr.Button
    feedback_note: gr.Markdown
    export_md: gr.DownloadButton
    export_bib: gr.DownloadButton
    export_csv: gr.DownloadButton
    export_answer: gr.DownloadButton
    conv_list: gr.Dropdown
    conv_open: gr.Button
    conv_delete: gr.Button
    copy_text: gr.Textbox


@dataclass(frozen=True, kw_only=True)
class SettingsPanel:
    """The chat's settings: retrieval, answer mode and kind, temperature, filters."""

    k: gr.Slider
    hybrid: gr.Checkbox
    mode: gr.Radio
    kind: gr.Radio
    temperature: gr.Slider
    venue: gr.Dropdown
    year: gr.Dropdown


@dataclass(frozen=True, kw_only=True)
class TablePanel:
    """The Table tab."""

    attributes: gr.Textbox
    query: gr.Textbox
    venue: gr.Dropdown
    year: gr.Dropdown
    k: gr.Slider
    button: gr.Button
    stop: gr.Button
    status: gr.HTML
    csv: gr.DownloadButton
    md: gr.DownloadButton
    html: gr.HTML


@dataclass(frozen=True, kw_only=True)
class CheckPanel:
    """The "Check a claim" tab."""

    claim: gr.Textbox
    k: gr.Slider
    button: gr.Button
    stop: gr.Button
    status: gr.HTML
    result: gr.HTML


@dataclass(frozen=True, kw_only=True)
class CorpusPanel:
    """The Corpus tab: the paper list with its filter, and the upload."""

    paper_query: gr.Textbox
    papers_html: gr.HTML
    files: gr.File
    ingest_btn: gr.Button
    ingest_status: gr.HTML


@dataclass(frozen=True, kw_only=True)
class Layout:
    """Every component an event reads or writes."""

    history_state: gr.State
    answers_state: gr.State
    conv_id: gr.BrowserState
    chat: ChatPanel
    sources: gr.HTML
    settings: SettingsPanel
    check: CheckPanel
    table: TablePanel
    corpus: CorpusPanel


def build_layout(
    settings: Settings,
    *,
    papers: list[Paper],
    venues: list[str],
    years: list[str],
    backend: Callable[[], str],
    secret: str,
) -> Layout:
    """The whole tree, inside the current Blocks context. ``backend`` makes the settings' backend note
    (Markdown, at each page load); ``secret`` encrypts the conversation id the browser keeps."""
    history_state = gr.State([])
    answers_state = gr.State({})
    # the id of the conversation open in this browser (localStorage, encrypted); its content stays on the server
    conv_id = gr.BrowserState("", storage_key="rag-conversation", secret=secret)
    gr.Markdown(
        "## Ask the abstracts\nEvery claim cites an indexed abstract; "
        "click a marker like [1] to see the sentence that supports it."
    )
    with gr.Tabs(overflow_behavior="wrap"):  # every tab in sight on a phone too, never in a menu
        with gr.Tab("Chat", id="chat"):
            with gr.Row():
                with gr.Column(scale=3):
                    chat = _chat_panel(settings)
                with gr.Column(scale=2):
                    sources = _sources_panel()
            with gr.Accordion("Settings", open=False, elem_id="rag-settings"):
                knobs = _settings_panel(settings, venues, years, backend)
        with gr.Tab("Check a claim", id="check"):
            check = _check_panel(settings)
        with gr.Tab("Table", id="table"):
            table = _table_panel(settings, venues, years)
        with gr.Tab("Corpus", id="corpus"), gr.Row():
            corpus = _corpus_panel(settings, papers)
    return Layout(
        history_state=history_state,
        answers_state=answers_state,
        conv_id=conv_id,
        chat=chat,
        sources=sources,
        settings=knobs,
        check=check,
        table=table,
        corpus=corpus,
    )


def _chat_panel(settings: Settings) -> ChatPanel:
    chatbot = gr.Chatbot(
        label="Chat",
        elem_id="rag-chat",
        height=560,
        # math is rendered by rag.format_display_html (escaped HTML, sub/superscripts),
        # the same renderer as the sources panel, which is raw HTML where KaTeX never runs;
        # no TeX engine sees abstract text, so \href and friends cannot become links
        latex_delimiters=[],
        buttons=["copy"],
        placeholder="Ask a question about the indexed abstracts, or pick an example.",
        examples=[{"text": q} for q in EXAMPLES],
        feedback_options=("Like", "Dislike"),
    )
    with gr.Row():
        question = gr.Textbox(
            placeholder="Ask about the indexed abstracts…",
            show_label=False,
            scale=6,
            elem_id="rag-question",
            autofocus=True,
            max_lines=8,  # a long paste scrolls inside the box: the note under it stays in sight
            # no max_length: the browser would cut a pasted question silently; the handler refuses it instead
        )
        ask_btn = gr.Button("Ask", variant="primary", scale=1, elem_id="rag-ask")
        stop_btn = gr.Button("Stop", variant="stop", scale=1, min_width=80, elem_id="rag-stop")
    question_note = gr.HTML(format_limit_html(settings.answer.max_question_chars), elem_id="rag-question-note")
    with gr.Row():
        copy_btn = gr.Button("Copy answer with references", size="sm", elem_id="rag-copy")
        clear_btn = gr.Button("New conversation", size="sm", elem_id="rag-clear")
    feedback_note = gr.Markdown(elem_id="rag-feedback-note")
    with gr.Row():  # shown once the conversation has an answer
        export_md = gr.DownloadButton("Conversation (Markdown)", visible=False, size="sm", elem_id="rag-export-md")
        export_bib = gr.DownloadButton("Cited papers (BibTeX)", visible=False, size="sm", elem_id="rag-export-bib")
        export_csv = gr.DownloadButton("Cited papers (CSV)", visible=False, size="sm", elem_id="rag-export-csv")
        export_answer = gr.DownloadButton(
            "Last answer (Markdown)", visible=False, size="sm", elem_id="rag-export-answer"
        )
    with gr.Row():
        conv_list = gr.Dropdown(
            [],
            value=None,
            label="Saved conversations (kept on this machine)",
            elem_id="rag-conversations",
            scale=4,
            min_width=300,  # on a phone: a row of its own (the buttons wrap below), room for the name
        )
        conv_open = gr.Button("Open", size="sm", elem_id="rag-conv-open", scale=1, min_width=80)
        conv_delete = gr.Button("Delete", size="sm", variant="stop", elem_id="rag-conv-delete", scale=1)
    with gr.Accordion("Answer with references (plain text)", open=False):
        copy_text = gr.Textbox(show_label=False, lines=6, interactive=False, buttons=["copy"], elem_id="rag-copy-text")
    return ChatPanel(
        chatbot=chatbot,
        question=question,
        question_note=question_note,
        ask_btn=ask_btn,
        stop_btn=stop_btn,
        copy_btn=copy_btn,
        clear_btn=clear_btn,
        feedback_note=feedback_note,
        export_md=export_md,
        export_bib=export_bib,
        export_csv=export_csv,
        export_answer=export_answer,
        conv_list=conv_list,
        conv_open=conv_open,
        conv_delete=conv_delete,
        copy_text=copy_text,
    )


def _sources_panel() -> gr.HTML:
    return gr.HTML(
        format_sources_html(None, 0),
        label="Sources",
        elem_id="rag-sources",
        js_on_load=ON_LOAD,
        max_height=720,
    )


def _settings_panel(
    settings: Settings, venues: list[str], years: list[str], backend: Callable[[], str]
) -> SettingsPanel:
    with gr.Row():
        k = gr.Slider(1, 20, value=settings.retrieval.k, step=1, label="Papers retrieved (k)")
        hybrid = gr.Checkbox(value=settings.retrieval.mode == "hybrid", label="Hybrid search (dense + BM25)")
        mode = gr.Radio(
            ["llm", "extractive"],
            value=settings.answer.mode,
            label="Answer mode",
            info="extractive: cited sentences, no LLM",
        )
        kind = gr.Radio(
            KIND_CHOICES,
            value="auto",
            label="Answer as",
            info="auto: from the question's form; list judges every paper",
            elem_id="rag-kind",
        )
        temperature = gr.Slider(
            0.0,
            1.5,
            value=settings.llm.temperature,
            step=0.05,
            label="Temperature",
            elem_id="rag-temperature",
        )
    with gr.Row():
        venue = gr.Dropdown(venues, value="", label="Venue filter", allow_custom_value=True)
        year = gr.Dropdown(years, value="", label="Year filter", allow_custom_value=True)
    gr.Markdown(backend)  # a function: called at each page load, so a finished native build shows
    return SettingsPanel(k=k, hybrid=hybrid, mode=mode, kind=kind, temperature=temperature, venue=venue, year=year)


def _check_panel(settings: Settings) -> CheckPanel:
    gr.Markdown(
        "Is it true? Each of the most relevant abstracts is judged: it *supports* the claim, *refutes* it or "
        "does *not state* it, with the sentence that decides quoted. The verdict counts the papers that decide."
    )
    with gr.Row():
        claim = gr.Textbox(
            label="Claim",
            min_width=300,  # on a phone: a row of its own (the slider wraps below), room for the claim
            placeholder="e.g. WildBox provides 3D bounding box annotations.",
            scale=5,
            elem_id="rag-claim",
            lines=2,  # a claim is a sentence: on a phone it wraps in sight
            max_lines=4,
            # as the question box: a claim over the limit is refused with the limit named, not cut by the browser
            info=f"At most {settings.answer.max_question_chars:,} characters.",
        )
        k = gr.Slider(1, 50, value=settings.check.k, step=1, label="Papers judged", scale=2, elem_id="rag-check-k")
    with gr.Row():
        button = gr.Button("Check the claim", variant="primary", elem_id="rag-check-btn", scale=4)
        stop = gr.Button("Stop", variant="stop", elem_id="rag-check-stop", scale=1, min_width=80)
    status = gr.HTML(elem_id="rag-check-status")
    result = gr.HTML(format_check_html([]), elem_id="rag-check-result")
    return CheckPanel(claim=claim, k=k, button=button, stop=stop, status=status, result=result)


def _table_panel(settings: Settings, venues: list[str], years: list[str]) -> TablePanel:
    gr.Markdown(
        "One row per paper, one column per attribute. Every value is copied from a sentence of the "
        "paper's abstract (click it for the quote); a value no sentence states is left *not stated*."
    )
    with gr.Row():
        table_attributes = gr.Textbox(
            value=TABLE_EXAMPLE,
            label="Attributes (columns, comma-separated)",
            scale=3,
            elem_id="rag-table-attributes",
            max_length=2000,
        )
        table_query = gr.Textbox(
            label="Query (optional)",
            placeholder="Rows: the papers that match it; empty: every paper",
            scale=3,
            elem_id="rag-table-query",
            # as the question box: a query over the limit is refused with the limit named, not cut by the browser
            info=f"At most {settings.answer.max_question_chars:,} characters.",
        )
    with gr.Row():
        table_venue = gr.Dropdown(venues, value="", label="Venue filter", allow_custom_value=True)
        table_year = gr.Dropdown(years, value="", label="Year filter", allow_custom_value=True)
        table_k = gr.Slider(1, 200, value=min(200, settings.answer.table_max_papers), step=1, label="Papers at most")
        table_btn = gr.Button("Make the table", variant="primary", elem_id="rag-table-make")
        table_stop = gr.Button("Stop", variant="stop", elem_id="rag-table-stop", min_width=80)
    with gr.Row(equal_height=True):
        table_status = gr.HTML(elem_id="rag-table-status")
        table_csv = gr.DownloadButton("Download CSV", visible=False, size="sm", elem_id="rag-table-csv")
        table_md = gr.DownloadButton("Download Markdown", visible=False, size="sm", elem_id="rag-table-md")
    table_html = gr.HTML(format_table_html(None), elem_id="rag-table")
    return TablePanel(
        attributes=table_attributes,
        query=table_query,
        venue=table_venue,
        year=table_year,
        k=table_k,
        button=table_btn,
        stop=table_stop,
        status=table_status,
        csv=table_csv,
        md=table_md,
        html=table_html,
    )


def _corpus_panel(settings: Settings, papers: list[Paper]) -> CorpusPanel:
    with gr.Column(scale=3):
        paper_query = gr.Textbox(
            placeholder="Filter papers by title, id or text…",
            show_label=False,
            elem_id="rag-paper-query",
        )
        papers_html = gr.HTML(format_papers_html(papers), elem_id="rag-papers")
    with gr.Column(scale=2):
        files = gr.File(
            label=f"Add abstracts ({', '.join(SUPPORTED_SUFFIXES)}, each optionally .gz, e.g. a BEIR "
            f"corpus.jsonl.gz; at most {settings.ui.max_upload_bytes / 1e6:g} MB a file)",
            file_count="multiple",
            file_types=[*SUPPORTED_SUFFIXES, ".gz"],
            elem_id="rag-upload",
        )
        ingest_btn = gr.Button("Index the files", variant="primary", elem_id="rag-ingest")
        ingest_status = gr.HTML(elem_id="rag-ingest-status")
    return CorpusPanel(
        paper_query=paper_query,
        papers_html=papers_html,
        files=files,
        ingest_btn=ingest_btn,
        ingest_status=ingest_status,
    )

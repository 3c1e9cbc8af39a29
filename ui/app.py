"""The Gradio web UI: chat with streamed, verified answers; clickable citations; sources; corpus upload.

``build_app(assistant)`` builds the :class:`gradio.Blocks` without serving it (tests drive it directly);
``launch(...)`` serves it. Every piece of abstract text, title, question and model output is passed
through :func:`html.escape` before it becomes HTML: the sources panel is raw HTML, and an abstract must
never be able to run script in the reader's browser.

Stable API for ``gradio_client``: ``/ask`` (question, k, hybrid, venue, year, mode, temperature, history)
-> ``Answer.to_json()``.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import gradio as gr

from rag import (
    SUPPORTED_SUFFIXES,
    Answer,
    AnswerEvent,
    Assistant,
    ErrorEvent,
    Paper,
    RagError,
    SearchHit,
    StatusEvent,
    TokenEvent,
    check_bind,
)

EXAMPLES = [
    "How many 3D bounding box annotations does WildBox have?",
    "What does MaskGen do for 3D biomedical image segmentation?",
    "Why is training Mixture-of-Experts models unstable?",
]

_MARKER = re.compile(r"\[(\d+)\]")

# Global styles and the citation click handler. They live in the sources panel's js_on_load, so
# ``build_app`` is self-contained (Gradio 6 takes css/head only in ``launch``).
_CSS = """
.rag-cite { font-weight: 600; text-decoration: none; padding: 0 1px; border-radius: 3px; cursor: pointer; }
.rag-cite:hover { background: rgba(59,130,246,.15); }
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
.rag-papers { overflow-wrap: anywhere; max-height: 32em; overflow-y: auto; }
.rag-paper { padding: .35em 0; border-bottom: 1px solid rgba(128,128,128,.2); }
.rag-paper-snippet { font-size: .85em; opacity: .8; }
.rag-error { color: #b91c1c; font-weight: 600; }
"""

_ON_LOAD = """
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
    const mark = card.querySelector("mark") || card;
    card.scrollIntoView({block: "start"});
    mark.scrollIntoView({block: "nearest"});
  }, true);
}
""" % json.dumps(_CSS)  # noqa: UP031  the template is JavaScript: str.format or an f-string would double its braces

_COPY_JS = """
(text) => {
  if (text && navigator.clipboard) { navigator.clipboard.writeText(text).catch(function () {}); }
  return text;
}
"""


# ---------------------------------------------------------------------------------------------- rendering
def _esc(text: str) -> str:
    return html.escape(text or "", quote=True)


def _esc_line(text: str) -> str:
    """Escaped and on one line, for chat messages. Gradio renders those as Markdown, and a blank line
    would end our HTML block: after it, ``![x](https://host/...)`` in model text becomes an image that
    the browser fetches. Without newlines the whole message stays raw (escaped) HTML."""
    return _esc(" ".join((text or "").split()))


def _meta_line(hit: SearchHit | Paper) -> str:
    meta = hit.metadata if isinstance(hit, SearchHit) else {"venue": hit.venue, "year": hit.year} | dict(hit.metadata)
    parts = [str(meta[k]) for k in ("venue", "year") if meta.get(k) not in (None, "")]
    if not parts and meta.get("collection"):
        parts.append(str(meta["collection"]))
    return " · ".join(parts)


def format_answer_html(text: str, turn: int, refs: set[int] | None = None) -> str:
    """Escaped answer text whose ``[n]`` markers are links to the source cards of ``turn``."""

    def link(m: re.Match[str]) -> str:
        n = int(m.group(1))
        if refs is not None and n not in refs:
            return m.group(0)
        return f'<a class="rag-cite" href="#rag-src-{turn}-{n}" title="Show source {n}">[{n}]</a>'

    return _MARKER.sub(link, _esc_line(text))


def format_message_html(answer: Answer, turn: int) -> str:
    """The assistant chat message: answer with clickable markers, unsupported sentences, standalone question."""
    if answer.refused:
        body = f'<p class="rag-refusal">{_esc(answer.text)}</p>'
        if answer.sources:
            body += "<p>The closest papers are listed under Sources.</p>"
    else:
        body = f"<p>{format_answer_html(answer.text, turn, {c.n for c in answer.citations})}</p>"
    if answer.unsupported:
        items = "".join(f"<li><s>{_esc_line(s)}</s></li>" for s in answer.unsupported)
        body += (
            '<div class="rag-unsupported"><span>Not supported by the abstracts, removed from the answer:</span>'
            f"<ul>{items}</ul></div>"
        )
    if answer.standalone_question.strip().lower() != answer.question.strip().lower():
        body += f'<div class="rag-standalone">Searched as: {_esc_line(answer.standalone_question)}</div>'
    return body


def format_abstract_html(abstract: str, spans: list[tuple[int, int]]) -> str:
    """The abstract, escaped, with each supporting span wrapped in ``<mark>`` (overlaps merged)."""
    merged: list[list[int]] = []
    for start, end in sorted((max(0, s), min(len(abstract), e)) for s, e in spans if e > s):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, pos = [], 0
    for start, end in merged:
        out.append(_esc(abstract[pos:start]))
        out.append(f'<mark class="rag-support">{_esc(abstract[start:end])}</mark>')
        pos = end
    out.append(_esc(abstract[pos:]))
    return "".join(out)


def _source_card(hit: SearchHit, n: int, turn: int, spans: list[tuple[int, int]]) -> str:
    meta = _meta_line(hit)
    score = f"score {hit.score:.3f}" + (f" · similarity {hit.dense_score:.2f}" if hit.dense_score is not None else "")
    abstract = hit.abstract or hit.text
    return (
        f'<div class="rag-source" id="rag-src-{turn}-{n}">'
        f"<div><b>[{n}] {_esc(hit.title)}</b></div>"
        f'<div class="rag-source-meta">{_esc(meta) + " · " if meta else ""}{score} · {_esc(hit.paper_id)}</div>'
        f'<div class="rag-abstract">{format_abstract_html(abstract, spans)}</div></div>'
    )


def format_sources_html(answer: Answer | None, turn: int, hits: list[SearchHit] | None = None) -> str:
    """The sources panel: cited papers with the supporting sentence highlighted, or the closest papers."""
    if answer is None:
        if not hits:
            return '<div class="rag-sources"><p>Sources of the answer appear here.</p></div>'
        cards = "".join(_source_card(h, i, turn, []) for i, h in enumerate(hits, 1))
        return f'<div class="rag-sources"><h4>Retrieved papers</h4>{cards}</div>'
    if answer.refused or not answer.citations:
        cards = "".join(_source_card(h, i, turn, []) for i, h in enumerate(answer.sources, 1))
        head = "Closest papers" if answer.sources else "No paper came close"
        return f'<div class="rag-sources"><h4>{head}</h4>{cards}</div>'
    spans: dict[int, list[tuple[int, int]]] = {}
    for c in answer.citations:
        spans.setdefault(c.n, []).append((int(c.span[0]), int(c.span[1])))
    cards = "".join(
        _source_card(answer.sources[n - 1], n, turn, spans[n]) for n in sorted(spans) if 0 < n <= len(answer.sources)
    )
    return f'<div class="rag-sources"><h4>Cited papers</h4>{cards}</div>'


def format_copy_text(answer: Answer) -> str:
    """Plain text of the answer followed by its numbered references (what the copy button copies)."""
    lines = [answer.text]
    if answer.citations:
        lines += ["", "References"]
        seen: set[int] = set()
        for c in answer.citations:
            if c.n in seen:
                continue
            seen.add(c.n)
            hit = answer.sources[c.n - 1] if 0 < c.n <= len(answer.sources) else None
            meta = _meta_line(hit) if hit else ""
            lines.append(
                f"[{c.n}] {c.title}" + (f" ({meta})" if meta else "") + f', {c.paper_id}: "{" ".join(c.quote.split())}"'
            )
    return "\n".join(lines)


def format_papers_html(papers: list[Paper], query: str = "", limit: int = 200) -> str:
    q = query.strip().lower()
    found = [p for p in papers if not q or q in p.title.lower() or q in p.abstract.lower() or q in p.paper_id.lower()]
    rows = []
    for p in found[:limit]:
        meta = _meta_line(p)
        snippet = " ".join(p.abstract.split())
        snippet = snippet[:220] + ("…" if len(snippet) > 220 else "")
        rows.append(
            f'<div class="rag-paper"><b>{_esc(p.title)}</b> <span class="rag-source-meta">'
            f"{_esc(meta) + ' · ' if meta else ''}{_esc(p.paper_id)}</span>"
            f'<div class="rag-paper-snippet">{_esc(snippet)}</div></div>'
        )
    more = f"<p>… and {len(found) - limit} more.</p>" if len(found) > limit else ""
    head = f"<p>{len(found)} of {len(papers)} papers</p>"
    return f'<div class="rag-papers">{head}{"".join(rows)}{more}</div>'


# ---------------------------------------------------------------------------------------------- logic
def parse_filters(venue: str | None, year: str | int | float | None) -> dict[str, Any]:
    """Venue/year inputs -> the metadata filter ``Assistant.stream`` takes (empty inputs: no filter)."""
    filters: dict[str, Any] = {}
    if venue and str(venue).strip():
        filters["venue"] = str(venue).strip()
    if year not in (None, ""):
        text = str(year).strip()
        if text:
            try:
                filters["year"] = int(float(text))
            except ValueError:
                raise gr.Error(f"Year must be a number, got {text!r}.") from None
    return filters


def oversized_upload(paths: list[Path], limit: int) -> str | None:
    """The message for the first file larger than ``limit`` bytes (checked before anything is read), else None."""
    for p in paths:
        try:
            size = p.stat().st_size
        except OSError:
            continue  # a vanished upload: ingesting it says so
        if size > limit:
            return (
                f"{p.name} is {_size(size)}; the limit is {_size(limit)}. "
                "Split the file, or raise RAG_UI__MAX_UPLOAD_BYTES."
            )
    return None


def _size(n: int) -> str:
    return f"{n:,} bytes" + (f" ({n / 1e6:.1f} MB)" if n >= 100_000 else "")


def append_feedback(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line (the eval harness reads this file line by line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False)
    with _FEEDBACK_LOCK, path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")


_FEEDBACK_LOCK = threading.Lock()


def _retrieval_mode(assistant: Assistant, hybrid: bool) -> Literal["hybrid", "dense"] | None:
    """Hybrid on: dense + BM25; off: dense alone (a configured non-hybrid mode is kept)."""
    if hybrid:
        return "hybrid"
    return "dense" if assistant.settings.retrieval.mode == "hybrid" else None


def _backend_markdown(assistant: Assistant) -> str:
    s = assistant.settings
    backend = s.llm.base_url or "embedded llama.cpp (local, starts on the first question)"
    return (
        f"**LLM backend:** {_esc(backend)}  \n**Model:** `{_esc(s.llm.model)}`  \n"
        f"**Embeddings:** `{_esc(s.embedding.model)}`"
    )


def _choices(papers: list[Paper]) -> tuple[list[str], list[str]]:
    venues = sorted({p.venue for p in papers if p.venue})
    years = sorted({str(p.year) for p in papers if p.year}, reverse=True)
    return [""] + venues, [""] + years


def build_app(assistant: Assistant) -> gr.Blocks:
    """The whole UI for ``assistant`` (not launched)."""
    settings = assistant.settings
    feedback_path = settings.feedback_path()
    try:
        papers = assistant.papers()
    except RagError:
        papers = []
    venues, years = _choices(papers)

    def respond(
        question: str,
        messages: list[dict[str, Any]],
        history: list[tuple[str, str]],
        answers: dict[int, dict[str, Any]],
        k: float,
        hybrid: bool,
        venue: str,
        year: str,
        mode: str,
        temperature: float,
    ) -> Iterator[tuple[Any, ...]]:
        question = (question or "").strip()
        if not question:
            yield messages, history, answers, gr.skip(), gr.skip(), question, gr.skip()
            return
        filters = parse_filters(venue, year)
        turn = len(answers) + 1
        messages = list(messages) + [
            {"role": "user", "content": _esc(question)},
            {"role": "assistant", "content": "<em>Searching the abstracts…</em>"},
        ]
        yield messages, history, answers, gr.skip(), gr.skip(), "", ""
        text = ""
        sources_html = gr.skip()
        for event in assistant.stream(
            question,
            history=history or None,
            k=int(k) if k else None,
            filters=filters or None,
            mode="extractive" if mode == "extractive" else "llm",
            retrieval_mode=_retrieval_mode(assistant, hybrid),
            temperature=float(temperature),
        ):
            match event:
                case StatusEvent(sources=sources):
                    sources_html = format_sources_html(None, turn, sources)
                    messages[-1] = {"role": "assistant", "content": "<em>Writing…</em>"}
                    yield messages, history, answers, sources_html, gr.skip(), "", ""
                case TokenEvent(text=token):
                    text += token
                    messages[-1] = {"role": "assistant", "content": f"<p>{format_answer_html(text, turn)}</p>"}
                    yield messages, history, answers, gr.skip(), gr.skip(), "", ""
                case AnswerEvent(answer=answer):
                    messages[-1] = {"role": "assistant", "content": format_message_html(answer, turn)}
                    answers = dict(answers)
                    answers[len(messages) - 1] = answer.to_json() | {
                        "settings": {
                            "k": int(k) if k else None,
                            "hybrid": hybrid,
                            "filters": filters,
                            "mode": mode,
                            "temperature": float(temperature),
                        },
                    }
                    history = list(history) + [("user", question), ("assistant", answer.text)]
                    yield (
                        messages,
                        history,
                        answers,
                        format_sources_html(answer, turn),
                        format_copy_text(answer),
                        "",
                        "",
                    )
                case ErrorEvent(error=error):
                    messages[-1] = {"role": "assistant", "content": f'<p class="rag-error">{_esc(str(error))}</p>'}
                    yield messages, history, answers, gr.skip(), gr.skip(), "", ""

    def on_feedback(data: gr.LikeData, answers: dict[int | str, dict[str, Any]]) -> str:
        index = data.index[0] if isinstance(data.index, (list, tuple)) else data.index
        record = answers.get(int(index)) or answers.get(str(index))
        if record is None:
            return "No answer to rate."
        liked = data.liked
        rating = (
            "up" if liked is True or liked == "Like" else "down" if liked is False or liked == "Dislike" else str(liked)
        )
        append_feedback(
            feedback_path,
            {"time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), "rating": rating} | record,
        )
        return f"Thanks: feedback saved ({rating})."

    def clear_chat() -> tuple[Any, ...]:
        return [], [], {}, format_sources_html(None, 0), "", "", ""

    def refresh_papers(query: str) -> tuple[str, Any, Any]:
        ps = assistant.papers()
        v, y = _choices(ps)
        return format_papers_html(ps, query), gr.update(choices=v), gr.update(choices=y)

    def upload(files: list[Any] | None, query: str, progress: gr.Progress = gr.Progress()) -> tuple[str, str, Any, Any]:
        if not files:
            return "Choose a file first.", gr.skip(), gr.skip(), gr.skip()
        paths = [Path(getattr(f, "name", f)) for f in files]

        def report(done: int, total: int) -> None:
            progress((done, max(total, 1)), desc="Embedding chunks", unit="chunks")

        error = oversized_upload(paths, settings.ui.max_upload_bytes)
        if error is None:
            try:
                progress(0, desc="Validating files")
                r = assistant.ingest(paths, progress=report).to_json()
            except RagError as e:
                error = str(e)
        if error is not None:
            for p in paths:  # uploads sit in a temp dir: show the user's file name
                error = error.replace(str(p), p.name)
            return (f'<p class="rag-error">Nothing was indexed. {_esc(error)}</p>', gr.skip(), gr.skip(), gr.skip())
        names = ", ".join(p.name for p in paths)
        status = (
            f"<p>Indexed {_esc(names)}: {r['papers_seen']} papers read, {r['added']} added, {r['updated']} updated, "
            f"{r['unchanged']} unchanged.</p>"
        )
        return (status, *refresh_papers(query))

    app = gr.Blocks(title="rag-abstracts: grounded answers over abstracts", analytics_enabled=False)
    with app:
        history_state = gr.State([])
        answers_state = gr.State({})
        gr.Markdown(
            "## Ask the abstracts\nEvery claim cites an indexed abstract; "
            "click a marker like [1] to see the sentence that supports it."
        )
        with gr.Tabs():
            with gr.Tab("Chat", id="chat"):
                with gr.Row():
                    with gr.Column(scale=3):
                        chatbot = gr.Chatbot(
                            label="Chat",
                            elem_id="rag-chat",
                            height=560,
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
                                max_length=settings.answer.max_question_chars,
                            )
                            ask_btn = gr.Button("Ask", variant="primary", scale=1, elem_id="rag-ask")
                        with gr.Row():
                            copy_btn = gr.Button("Copy answer with references", size="sm", elem_id="rag-copy")
                            clear_btn = gr.Button("New conversation", size="sm", elem_id="rag-clear")
                        feedback_note = gr.Markdown(elem_id="rag-feedback-note")
                        with gr.Accordion("Answer with references (plain text)", open=False):
                            copy_text = gr.Textbox(
                                show_label=False, lines=6, interactive=False, buttons=["copy"], elem_id="rag-copy-text"
                            )
                    with gr.Column(scale=2):
                        sources = gr.HTML(
                            format_sources_html(None, 0),
                            label="Sources",
                            elem_id="rag-sources",
                            js_on_load=_ON_LOAD,
                            max_height=720,
                        )
                with gr.Accordion("Settings", open=False, elem_id="rag-settings"):
                    with gr.Row():
                        k = gr.Slider(1, 20, value=settings.retrieval.k, step=1, label="Papers retrieved (k)")
                        hybrid = gr.Checkbox(
                            value=settings.retrieval.mode == "hybrid", label="Hybrid search (dense + BM25)"
                        )
                        mode = gr.Radio(
                            ["llm", "extractive"],
                            value=settings.answer.mode,
                            label="Answer mode",
                            info="extractive: cited sentences, no LLM",
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
                    gr.Markdown(_backend_markdown(assistant))
            with gr.Tab("Corpus", id="corpus"), gr.Row():
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

        chat_inputs = [question, chatbot, history_state, answers_state, k, hybrid, venue, year, mode, temperature]
        chat_outputs = [chatbot, history_state, answers_state, sources, copy_text, question, feedback_note]
        question.submit(respond, chat_inputs, chat_outputs, api_visibility="private")
        ask_btn.click(respond, chat_inputs, chat_outputs, api_visibility="private")

        def run_example(ex: gr.SelectData, *args: Any) -> Iterator[tuple[Any, ...]]:
            yield from respond(ex.value["text"], *args[1:])

        chatbot.example_select(run_example, chat_inputs, chat_outputs, api_visibility="private")
        chatbot.like(on_feedback, [answers_state], [feedback_note], api_visibility="private")
        clear_btn.click(
            clear_chat,
            None,
            [chatbot, history_state, answers_state, sources, copy_text, question, feedback_note],
            api_visibility="private",
        )
        copy_btn.click(None, [copy_text], None, js=_COPY_JS)
        paper_query.change(
            lambda q: format_papers_html(assistant.papers(), q), [paper_query], [papers_html], api_visibility="private"
        )
        ingest_btn.click(
            upload, [files, paper_query], [ingest_status, papers_html, venue, year], api_visibility="private"
        )

        def ask(
            question: str,
            k: int = 0,
            hybrid: bool = True,
            venue: str = "",
            year: str = "",
            mode: str = "",
            temperature: float = -1.0,
            history: list[list[str]] | None = None,
        ) -> dict[str, Any]:
            """Answer ``question`` from the indexed abstracts: the answer, its citations and sources (Answer JSON).
            ``temperature`` < 0 keeps the configured one. ``history`` is the conversation so far,
            ``[["user", "..."], ["assistant", "..."]]``; the endpoint keeps no state between calls."""
            if any(not isinstance(t, (list, tuple)) or len(t) != 2 for t in history or []):
                raise gr.Error('history must be a list of [role, text] pairs, e.g. [["user", "What is WildBox?"]].')
            turns = [(str(t[0]), str(t[1])) for t in history or []]
            try:
                answer = assistant.ask(
                    question,
                    history=turns or None,
                    k=int(k) or None,
                    filters=parse_filters(venue, year) or None,
                    mode="extractive" if mode == "extractive" else ("llm" if mode == "llm" else None),
                    retrieval_mode=_retrieval_mode(assistant, hybrid),
                    temperature=None if temperature is None or temperature < 0 else float(temperature),
                )
            except RagError as e:
                raise gr.Error(str(e)) from e
            return answer.to_json()

        gr.api(ask, api_name="ask")
    return app


# ---------------------------------------------------------------------------------------------- serving
def auth_pair(assistant: Assistant) -> tuple[str, str] | None:
    secret = assistant.settings.ui.auth
    if secret is None:
        return None
    user, _, password = secret.get_secret_value().partition(":")
    return user, password


def launch(
    assistant: Assistant, host: str | None = None, port: int | None = None, *, block: bool = True, quiet: bool = False
) -> gr.Blocks:
    """Serve the UI (default host/port from ``settings.ui``). ``block=False`` returns once it is up."""
    ui = assistant.settings.ui
    host = host or ui.host
    port = port or ui.port
    auth = auth_pair(assistant)
    check_bind(assistant.settings, host, "ui")
    app = build_app(assistant)
    app.queue(default_concurrency_limit=2)
    app.launch(
        server_name=host,
        server_port=port,
        auth=auth,
        prevent_thread_lock=not block,
        quiet=quiet,
        footer_links=["api"],
        show_error=True,
    )
    return app

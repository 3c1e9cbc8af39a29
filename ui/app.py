"""The Gradio web UI: chat with streamed, verified answers; clickable citations; sources; paper x attribute
tables; corpus upload.

``build_app(assistant)`` builds the :class:`gradio.Blocks` without serving it (tests drive it directly);
``launch(...)`` serves it. Every piece of abstract text, title, question and model output is passed
through :func:`html.escape` before it becomes HTML: the sources panel is raw HTML, and an abstract must
never be able to run script in the reader's browser.

Stable API for ``gradio_client``: ``/ask`` (question, k, hybrid, venue, year, mode, temperature, history, kind)
-> ``Answer.to_json()``; ``/table`` (attributes, query, venue, year, k) -> ``Table.to_json()``.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import re
import secrets
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, get_args

import gradio as gr

from rag import (
    MATCH_HELP,
    SUPPORTED_SUFFIXES,
    Answer,
    AnswerEvent,
    Assistant,
    Conversation,
    ConversationStore,
    ErrorEvent,
    ItemEvent,
    ListItem,
    Paper,
    ProgressEvent,
    QuestionKind,
    QueuedEvent,
    Quote,
    RagError,
    SearchHit,
    StatusEvent,
    Table,
    TokenEvent,
    Turn,
    check_bind,
    format_bibtex,
    format_csv,
    format_display,
    format_display_html,
    format_markdown,
    readable_table,
)

EXAMPLES = [
    "How many 3D bounding box annotations does WildBox have?",
    "What does MaskGen do for 3D biomedical image segmentation?",
    "Why is training Mixture-of-Experts models unstable?",
]

_MARKER = re.compile(r"\[(\d+)\]")

KINDS: tuple[QuestionKind, ...] = get_args(QuestionKind)
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
.rag-match { cursor: help; border-bottom: 1px dotted currentColor; }
.rag-match-strong { color: #166534; } .rag-match-good { color: #1d4ed8; } .rag-match-weak { color: #92400e; }
.rag-match-off-topic { color: #6b7280; }
.rag-legend { font-size: .8em; opacity: .75; margin: .2em 0 .6em 0; }
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


def _rich_line(text: str) -> str:
    """Like :func:`_esc_line`, with LaTeX and Markdown rendered (``$\\pm$`` → ±, ``n^2`` → n<sup>2</sup>,
    ``\\emph{x}`` → <em>x</em>); every character of ``text`` is still escaped."""
    return format_display_html(" ".join((text or "").split()))


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

    return _MARKER.sub(link, _rich_line(text))


def _paragraphs_html(text: str, turn: int, refs: set[int] | None = None) -> str:
    """Each line of ``text`` (a comparison has one per paper) as a paragraph with linked markers."""
    return "".join(f"<p>{format_answer_html(line, turn, refs)}</p>" for line in text.splitlines() if line.strip())


_VERDICTS = {"yes": "Yes", "no": "No", "not stated": "Not stated"}


def format_verdict_html(verdict: str) -> str:
    label = _VERDICTS.get(verdict, verdict)
    return f'<div class="rag-verdict rag-verdict-{_esc(verdict.replace(" ", "-"))}">{_esc(label)}</div>'


def list_summary(answer: Answer) -> str:
    """How many papers match a list question, and of how many checked."""
    n, checked, total = len(answer.items), answer.checked or 0, answer.collection_size or 0
    head = "No paper matches" if n == 0 else f"{n} {'paper matches' if n == 1 else 'papers match'}"
    return f"{head} ({checked} of {total:,} abstracts checked)"


def format_list_html(answer: Answer, turn: int) -> str:
    """A list answer: the count, then each paper with its marker (a link to its card) and qualifying sentence."""
    items = "".join(
        f'<li><a class="rag-cite" href="#rag-src-{turn}-{i.n}" title="Show source {i.n}">[{i.n}]</a> '
        f'<span class="rag-item-title">{_rich_line(i.title)}</span>: {_rich_line(i.quote)}</li>'
        for i in answer.items
    )
    return f"<p>{_esc(list_summary(answer))}{':' if items else '.'}</p>" + (
        f'<ul class="rag-items">{items}</ul>' if items else ""
    )


def format_list_progress_html(items: list[ListItem], checked: int, total: int) -> str:
    """A list question while papers are judged: the ones confirmed so far and the counter."""
    found = "".join(
        f'<li><span class="rag-item-title">{_rich_line(i.title)}</span>: {_rich_line(i.quote)}</li>' for i in items
    )
    counter = f"Checked {checked} of {total} papers · {len(items)} found so far…" if total else "Checking the papers…"
    return f'<p class="rag-progress">{_esc(counter)}</p>' + (f'<ul class="rag-items">{found}</ul>' if found else "")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def format_reading_html(evidence: list[Quote], turn: int, limit: int = 8) -> str:
    """The sentences the model is about to read, shown at once (they are what the answer is built from)."""
    papers = len({q.paper_id for q in evidence})
    rows = "".join(
        f'<li><a class="rag-ref" href="#rag-src-{turn}-{q.n}">[{q.n}]</a> {_rich_line(q.text)}</li>'
        for q in evidence[:limit]
    )
    more = f"<li>… and {len(evidence) - limit} more</li>" if len(evidence) > limit else ""
    head = f"Reading {_count(len(evidence), 'sentence')} from {_count(papers, 'paper')}…"
    return f'<div class="rag-reading"><span>{_esc(head)}</span><ul>{rows}{more}</ul></div>'


def format_message_html(answer: Answer, turn: int) -> str:
    """The assistant chat message: answer with clickable markers, unsupported sentences, standalone question.
    A yes/no answer leads with its verdict; a list answer shows the count and one line per paper."""
    body = format_verdict_html(answer.verdict) if answer.kind == "yesno" and answer.verdict else ""
    if answer.refused:
        body += f'<p class="rag-refusal">{_esc(answer.text)}</p>'
        if answer.sources:
            body += "<p>The closest papers are listed under Sources.</p>"
    elif answer.kind == "list":
        body += format_list_html(answer, turn)
    else:
        text = answer.text
        if answer.verdict in ("yes", "no"):  # the badge says it: "Yes. The abstract states: ..." -> "The abstract ..."
            text = text.removeprefix(f"{_VERDICTS[answer.verdict]}.").lstrip()
        body += _paragraphs_html(text, turn, {c.n for c in answer.citations})
        if answer.quoted and answer.kind != "yesno":
            body += (
                '<div class="rag-note">Quoted from the abstracts: the model\'s own wording could not be verified.</div>'
            )
    if answer.unsupported:
        items = "".join(f"<li><s>{_esc_line(s)}</s></li>" for s in answer.unsupported)
        body += (
            '<div class="rag-unsupported"><span>Not supported by the abstracts, removed from the answer:</span>'
            f"<ul>{items}</ul></div>"
        )
    if answer.standalone_question.strip().lower() != answer.question.strip().lower():
        body += f'<div class="rag-standalone">Searched as: {_esc_line(answer.standalone_question)}</div>'
    return body


def format_abstract_html(abstract: str, spans: list[tuple[int, int]], mark: str = "rag-support") -> str:
    """The abstract, escaped, its math and emphasis rendered, with each supporting span (offsets into the raw
    abstract) wrapped in ``<mark class=mark>`` (overlaps merged)."""
    return format_display_html(abstract, spans, mark)


def format_match_html(hit: SearchHit) -> str:
    """The one relevance figure a reader is shown: the match level and the cosine similarity behind it, with
    the explanation as a tooltip. (The fused rank and score stay in the JSON for tools.)"""
    if hit.dense_score is None:
        label = "keyword match"
    else:
        label = f"match: {hit.match} ({hit.dense_score:.2f})"
    return f'<span class="rag-match rag-match-{_esc(hit.match)}" title="{_esc(MATCH_HELP)}">{_esc(label)}</span>'


def _source_card(hit: SearchHit, n: int, turn: int, spans: list[tuple[int, int]], mark: str = "rag-support") -> str:
    meta = _meta_line(hit)
    abstract = hit.abstract or hit.text
    return (
        f'<div class="rag-source" id="rag-src-{turn}-{n}">'
        f"<div><b>[{n}] {_rich_line(hit.title)}</b></div>"
        f'<div class="rag-source-meta">{_esc(meta) + " · " if meta else ""}{format_match_html(hit)} · '
        f"{_esc(hit.paper_id)}</div>"
        f'<div class="rag-abstract">{format_abstract_html(abstract, spans, mark)}</div></div>'
    )


def _legend(cards: str) -> str:
    """One line above the cards that says what "match" means (the tooltip says more)."""
    if not cards:
        return ""
    return (
        f'<p class="rag-legend" title="{_esc(MATCH_HELP)}">Match = closeness in meaning of the question and the '
        "abstract's best passage (cosine similarity): strong ≥ 0.50 · good ≥ 0.35 · weak ≥ 0.22.</p>"
    )


def format_sources_html(
    answer: Answer | None, turn: int, hits: list[SearchHit] | None = None, evidence: list[Quote] | None = None
) -> str:
    """The sources panel: cited papers with the supporting sentence highlighted, or the closest papers.
    Before the answer: the retrieved papers, numbered like the evidence, the sentences being read highlighted."""
    if answer is None:
        if not hits:
            return '<div class="rag-sources"><p>Sources of the answer appear here.</p></div>'
        if not evidence:
            cards = "".join(_source_card(h, i, turn, []) for i, h in enumerate(hits, 1))
            return f'<div class="rag-sources"><h4>Retrieved papers</h4>{_legend(cards)}{cards}</div>'
        numbers: dict[str, int] = {}
        reading: dict[str, list[tuple[int, int]]] = {}
        for q in evidence:
            numbers.setdefault(q.paper_id, q.n)
            reading.setdefault(q.paper_id, []).append((int(q.span[0]), int(q.span[1])))
        offered = sorted((h for h in hits if h.paper_id in numbers), key=lambda h: numbers[h.paper_id])
        rest = [h for h in hits if h.paper_id not in numbers]
        cards = "".join(_source_card(h, numbers[h.paper_id], turn, reading[h.paper_id], "rag-read") for h in offered)
        first = max(numbers.values(), default=0) + 1
        cards += "".join(_source_card(h, first + i, turn, []) for i, h in enumerate(rest))
        return f'<div class="rag-sources"><h4>Reading</h4>{_legend(cards)}{cards}</div>'
    if answer.refused or not answer.citations:
        cards = "".join(_source_card(h, i, turn, []) for i, h in enumerate(answer.sources, 1))
        head = "Closest papers" if answer.sources else "No paper came close"
        return f'<div class="rag-sources"><h4>{head}</h4>{_legend(cards)}{cards}</div>'
    spans: dict[int, list[tuple[int, int]]] = {}
    for c in answer.citations:
        spans.setdefault(c.n, []).append((int(c.span[0]), int(c.span[1])))
    cards = "".join(
        _source_card(answer.sources[n - 1], n, turn, spans[n]) for n in sorted(spans) if 0 < n <= len(answer.sources)
    )
    return f'<div class="rag-sources"><h4>Cited papers</h4>{_legend(cards)}{cards}</div>'


def format_waiting_html(position: int, waited: float) -> str:
    """The chat placeholder while a question waits for the LLM: its place in line and the time waited."""
    place = "next in line" if position == 1 else f"number {position} in line"
    return f"<em>Waiting for the model: {place}, {waited:.0f} s so far…</em>"


def format_copy_text(answer: Answer) -> str:
    """Plain text of the answer followed by its numbered references (what the copy button copies)."""
    lines = [format_display(answer.text)]
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
                f"[{c.n}] {format_display(c.title)}"
                + (f" ({meta})" if meta else "")
                + f', {c.paper_id}: "{" ".join(format_display(c.quote).split())}"'
            )
    return "\n".join(lines)


def format_papers_html(papers: list[Paper], query: str = "", limit: int = 200) -> str:
    q = query.strip().lower()
    found = [p for p in papers if not q or q in p.title.lower() or q in p.abstract.lower() or q in p.paper_id.lower()]
    rows = []
    for p in found[:limit]:
        meta = _meta_line(p)
        snippet = " ".join(format_display(p.abstract).split())
        snippet = snippet[:220] + ("…" if len(snippet) > 220 else "")
        rows.append(
            f'<div class="rag-paper"><b>{_rich_line(p.title)}</b> <span class="rag-source-meta">'
            f"{_esc(meta) + ' · ' if meta else ''}{_esc(p.paper_id)}</span>"
            f'<div class="rag-paper-snippet">{_esc(snippet)}</div></div>'
        )
    more = f"<p>… and {len(found) - limit} more.</p>" if len(found) > limit else ""
    head = f"<p>{len(found)} of {len(papers)} papers</p>"
    return f'<div class="rag-papers">{head}{"".join(rows)}{more}</div>'


def format_table_html(table: Table | None) -> str:
    """A table as HTML: every value cites its paper's [n] and opens to the quote behind it (also on hover);
    a cell no sentence supports says "not stated". The references, with the quotes, follow."""
    if table is None:
        return (
            '<div class="rag-table-wrap"><p>Name the columns (e.g. <code>task, dataset, metric, best result</code>) '
            "and make the table: one row per paper, each value quoted from its abstract.</p></div>"
        )
    if not table.rows:
        return '<div class="rag-table-wrap"><p>No paper to tabulate.</p></div>'
    head = "".join(f"<th>{_esc_line(a)}</th>" for a in table.attributes)
    body = []
    for r in table.rows:
        cells = []
        for c in r.cells:
            if c.value is None:
                cells.append('<td class="rag-not-stated" title="No sentence of the abstract states it">not stated</td>')
            else:
                cells.append(
                    f'<td><details class="rag-cell"><summary title="{_esc_line(format_display(c.quote))}">'
                    f"{_rich_line(c.value)} <sup>[{r.n}]</sup></summary><blockquote>{_rich_line(c.quote)}"
                    "</blockquote></details></td>"
                )
        body.append(f"<tr><td>[{r.n}] <b>{_rich_line(r.title)}</b></td>{''.join(cells)}</tr>")
    refs = []
    for r in table.rows:
        quotes = "".join(f"<li>{_esc_line(c.attribute)}: “{_rich_line(c.quote)}”</li>" for c in r.cells if c.value)
        refs.append(
            f"<li>[{r.n}] {_rich_line(r.title)} ({_esc_line(r.paper_id)})"
            + (f"<ul>{quotes}</ul>" if quotes else "")
            + "</li>"
        )
    stated = sum(c.value is not None for r in table.rows for c in r.cells)
    total = sum(len(r.cells) for r in table.rows)
    summary = (
        f"{_count(len(table.rows), 'paper')} × {_count(len(table.attributes), 'attribute')}: "
        f"{stated} of {total} cells stated "
        f"(the others are not stated in the abstract). Click a value for its quote."
    )
    return (
        f'<div class="rag-table-wrap"><p>{_esc(summary)}</p><table class="rag-table"><thead><tr><th>paper</th>{head}'
        f"</tr></thead><tbody>{''.join(body)}</tbody></table><h4>References</h4>"
        f'<ul class="rag-refs">{"".join(refs)}</ul></div>'
    )


def write_table_files(table: Table) -> tuple[Path, Path]:
    """The table as CSV and Markdown files (with the references) in a new temporary folder, for download."""
    folder = Path(tempfile.mkdtemp(prefix="rag-table-"))
    csv_path, md_path = folder / "table.csv", folder / "table.md"
    shown = readable_table(table)
    csv_path.write_text(shown.to_csv(), encoding="utf-8", newline="")
    md_path.write_text(shown.to_markdown(), encoding="utf-8")
    return csv_path, md_path


# ---------------------------------------------------------------------------------------------- conversations
def answer_record(answer: Answer, settings: dict[str, Any]) -> dict[str, Any]:
    """What the chat keeps per answer: the JSON the feedback file gets, the settings, and the whole Answer
    (``_answer``) so the conversation can be saved and reopened with its citations and sources."""
    return answer.to_json() | {"settings": settings, "_answer": answer.model_dump(mode="json")}


def conversation_turns(answers: dict[Any, dict[str, Any]]) -> list[Turn]:
    """The chat's answers (keyed by message index) as the turns of a saved conversation, in order."""
    ordered = sorted(answers.items(), key=lambda kv: int(kv[0]))
    return [
        Turn(answer=Answer.model_validate(r["_answer"]), settings=r.get("settings") or {})
        for _, r in ordered
        if "_answer" in r
    ]


def conversation_view(conv: Conversation) -> tuple[list[dict[str, str]], list[tuple[str, str]], dict[int, Any]]:
    """A saved conversation as the chat shows it: messages, the history follow-ups read, the answers state."""
    messages: list[dict[str, str]] = []
    history: list[tuple[str, str]] = []
    answers: dict[int, Any] = {}
    for turn, t in enumerate(conv.turns, 1):
        a = t.answer
        messages.append({"role": "user", "content": _esc(a.question)})
        messages.append({"role": "assistant", "content": format_message_html(a, turn)})
        answers[len(messages) - 1] = answer_record(a, t.settings)
        history += [("user", a.question), ("assistant", a.text)]
    return messages, history, answers


def conversation_choices(store: ConversationStore, user: str | None) -> list[tuple[str, str]]:
    return [(c.label, c.id) for c in store.list(user)]


DOWNLOADS = 4  # conversation as Markdown, BibTeX, CSV; the last answer as Markdown


def write_conversation_files(conv: Conversation) -> tuple[Path, ...]:
    """The conversation as Markdown (numbered references), its cited papers as BibTeX and CSV, and its last
    answer alone as Markdown, in a new temporary folder, for download."""
    folder = Path(tempfile.mkdtemp(prefix="rag-conversation-"))
    stem = f"conversation-{conv.id}"
    md, bib, csv = folder / f"{stem}.md", folder / f"{stem}.bib", folder / f"{stem}.csv"
    answer = folder / f"answer-{conv.id}-{len(conv.turns)}.md"
    md.write_text(format_markdown(conv.answers, title=conv.title), encoding="utf-8")
    bib.write_text(format_bibtex(conv.answers), encoding="utf-8")
    csv.write_text(format_csv(conv.answers), encoding="utf-8", newline="")
    answer.write_text(format_markdown(conv.answers[-1]), encoding="utf-8")
    return md, bib, csv, answer


def _user(request: gr.Request | None) -> str | None:
    """The logged-in user (with ``RAG_UI__AUTH``), else None: everything is kept under ``local``."""
    name = getattr(request, "username", None) if request is not None else None
    return str(name) if name else None


def browser_secret(folder: Path) -> str:
    """The key the browser's saved conversation id is encrypted with, kept in ``folder`` so that the id still
    opens after the server restarts (Gradio's default is a new random key per launch)."""
    path = folder / ".browser-key"
    try:
        return path.read_text(encoding="ascii").strip()
    except OSError:
        pass
    key = secrets.token_hex(16)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(key, encoding="ascii")
    except OSError:
        pass  # a read-only data dir: the id is forgotten when the server restarts, the conversations are not
    return key


# ---------------------------------------------------------------------------------------------- logic
def parse_kind(value: str | None) -> QuestionKind | None:
    """The "Answer as" choice -> ``kind`` (None: recognised from the question)."""
    v = (value or "").strip().lower().replace("/", "").replace("-", "")
    if v in ("", "auto"):
        return None
    for kind in KINDS:
        if v == kind:
            return kind
    raise gr.Error(f"Answer as must be auto, {', '.join(KINDS)}; got {value!r}.")


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


def _answer_workers(settings: Any) -> int:
    """Gradio workers for answers: every question the LLM line holds, plus 4 for extractive answers."""
    return int(settings.llm.max_concurrent + settings.llm.max_waiting + 4)


def _choices(papers: list[Paper]) -> tuple[list[str], list[str]]:
    venues = sorted({p.venue for p in papers if p.venue})
    years = sorted({str(p.year) for p in papers if p.year}, reverse=True)
    return [""] + venues, [""] + years


def build_app(assistant: Assistant) -> gr.Blocks:
    """The whole UI for ``assistant`` (not launched)."""
    settings = assistant.settings
    feedback_path = settings.feedback_path()
    store = ConversationStore(settings.conversations_dir())
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
        kind: str = "auto",
    ) -> Iterator[tuple[Any, ...]]:
        question = (question or "").strip()
        if not question:
            yield messages, history, answers, gr.skip(), gr.skip(), question, gr.skip()
            return
        filters = parse_filters(venue, year)
        answer_as = parse_kind(kind)
        turn = len(answers) + 1
        messages = list(messages) + [
            {"role": "user", "content": _esc(question)},
            {"role": "assistant", "content": "<em>Searching the abstracts…</em>"},
        ]
        yield messages, history, answers, gr.skip(), gr.skip(), "", ""
        text = ""
        items: list[ListItem] = []
        sources_html = gr.skip()
        for event in assistant.stream(
            question,
            history=history or None,
            k=int(k) if k else None,
            filters=filters or None,
            mode="extractive" if mode == "extractive" else "llm",
            retrieval_mode=_retrieval_mode(assistant, hybrid),
            temperature=float(temperature),
            kind=answer_as,
        ):
            match event:
                case QueuedEvent(position=position, waited=waited):
                    messages[-1] = {"role": "assistant", "content": format_waiting_html(position, waited)}
                    yield messages, history, answers, gr.skip(), gr.skip(), "", ""
                case StatusEvent(sources=sources, evidence=evidence):
                    # the sentences about to be read, at once: highlighted in the panel, listed in the bubble
                    sources_html = format_sources_html(None, turn, sources, evidence)
                    reading = format_reading_html(evidence, turn) if evidence else "<em>Reading the abstracts…</em>"
                    messages[-1] = {"role": "assistant", "content": reading}
                    yield messages, history, answers, sources_html, gr.skip(), "", ""
                case TokenEvent(text=token):
                    text += token
                    messages[-1] = {"role": "assistant", "content": _paragraphs_html(text, turn)}
                    yield messages, history, answers, gr.skip(), gr.skip(), "", ""
                case ItemEvent(item=item, checked=checked, total=total):
                    items.append(item)
                    messages[-1] = {"role": "assistant", "content": format_list_progress_html(items, checked, total)}
                    yield messages, history, answers, gr.skip(), gr.skip(), "", ""
                case ProgressEvent(checked=checked, total=total):
                    messages[-1] = {"role": "assistant", "content": format_list_progress_html(items, checked, total)}
                    yield messages, history, answers, gr.skip(), gr.skip(), "", ""
                case AnswerEvent(answer=answer):
                    messages[-1] = {"role": "assistant", "content": format_message_html(answer, turn)}
                    answers = dict(answers)
                    answers[len(messages) - 1] = answer_record(
                        answer,
                        {
                            "k": int(k) if k else None,
                            "hybrid": hybrid,
                            "filters": filters,
                            "mode": mode,
                            "temperature": float(temperature),
                            "kind": answer_as,
                        },
                    )
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
        record = {k: v for k, v in record.items() if k != "_answer"}
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
        hidden = gr.update(visible=False, value=None)
        return ([], [], {}, format_sources_html(None, 0), "", "", "", "", gr.update(value=None)) + (hidden,) * DOWNLOADS

    def downloads(conv: Conversation | None) -> tuple[Any, ...]:
        if conv is None or not conv.turns:
            return (gr.update(visible=False, value=None),) * DOWNLOADS
        return tuple(gr.update(value=str(p), visible=True) for p in write_conversation_files(conv))

    def save_conversation(
        answers: dict[Any, dict[str, Any]], conv_id: str | None, request: gr.Request
    ) -> tuple[Any, ...]:
        """After each answer: the chat so far saved as the current conversation (a new one if there is none)."""
        turns = conversation_turns(answers)
        if not turns:
            return (gr.skip(),) * (2 + DOWNLOADS)
        user = _user(request)
        old = store.load(user, conv_id) if conv_id else None
        conv = Conversation(title=turns[0].answer.question, turns=turns)
        if old is not None:
            conv = conv.model_copy(update={"id": old.id, "created": old.created})
        conv = store.save(user, conv)
        return (conv.id, gr.update(choices=conversation_choices(store, user), value=conv.id), *downloads(conv))

    def open_conversation(conv_id: str | None, request: gr.Request) -> tuple[Any, ...]:
        user = _user(request)
        conv = store.load(user, conv_id) if conv_id else None
        choices = gr.update(choices=conversation_choices(store, user), value=conv.id if conv else None)
        if conv is None or not conv.turns:
            return (*clear_chat()[:8], choices, *clear_chat()[9:])
        messages, history, answers = conversation_view(conv)
        last = conv.turns[-1].answer
        return (
            messages,
            history,
            answers,
            format_sources_html(last, len(conv.turns)),
            format_copy_text(last),
            "",
            "",
            conv.id,
            choices,
            *downloads(conv),
        )

    def restore(conv_id: str | None, request: gr.Request) -> tuple[Any, ...]:
        """On page load: reopen the conversation this browser had open, and list the saved ones. What the user
        may have typed meanwhile (the load event can finish after the first keystrokes) is left alone."""
        view = open_conversation(conv_id, request)
        return (*view[:5], gr.skip(), gr.skip(), *view[7:])

    def delete_conversation(selected: str | None, current: str | None, request: gr.Request) -> tuple[Any, ...]:
        user = _user(request)
        if selected:
            store.delete(user, selected)
        if selected and selected == current:
            cleared = clear_chat()
            return (*cleared[:8], gr.update(choices=conversation_choices(store, user), value=None), *cleared[9:])
        listed = gr.update(choices=conversation_choices(store, user), value=current or None)
        return (*(gr.skip(),) * 8, listed) + (gr.skip(),) * DOWNLOADS

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

    def make_table(
        attributes: str, query: str, venue: str, year: str, k: float, progress: gr.Progress = gr.Progress()
    ) -> tuple[str, str, Any, Any]:
        def report(done: int, total: int) -> None:
            progress((done, max(total, 1)), desc="Reading abstracts", unit="papers")

        try:
            result = assistant.table(
                attributes or "",
                query=(query or "").strip() or None,
                where=parse_filters(venue, year) or None,
                k=int(k) if k else None,
                progress=report,
            )
        except RagError as e:
            hidden = gr.update(visible=False, value=None)
            return f'<p class="rag-error">{_esc(str(e))}</p>', format_table_html(None), hidden, hidden
        csv_path, md_path = write_table_files(result)
        status = f"<p>Read {_count(result.checked, 'paper')} of the {result.collection_size} in the collection.</p>"
        return (
            status,
            format_table_html(result),
            gr.update(value=str(csv_path), visible=True),
            gr.update(value=str(md_path), visible=True),
        )

    def refresh_table_filters() -> tuple[Any, Any]:
        v, y = _choices(assistant.papers())
        return gr.update(choices=v), gr.update(choices=y)

    app = gr.Blocks(title="rag-abstracts: grounded answers over abstracts", analytics_enabled=False)
    with app:
        history_state = gr.State([])
        answers_state = gr.State({})
        # the id of the conversation open in this browser (localStorage, encrypted); its content stays on the server
        conv_id = gr.BrowserState(
            "", storage_key="rag-conversation", secret=browser_secret(settings.conversations_dir())
        )
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
                                max_length=settings.answer.max_question_chars,
                            )
                            ask_btn = gr.Button("Ask", variant="primary", scale=1, elem_id="rag-ask")
                        with gr.Row():
                            copy_btn = gr.Button("Copy answer with references", size="sm", elem_id="rag-copy")
                            clear_btn = gr.Button("New conversation", size="sm", elem_id="rag-clear")
                        feedback_note = gr.Markdown(elem_id="rag-feedback-note")
                        with gr.Row():  # shown once the conversation has an answer
                            export_md = gr.DownloadButton(
                                "Conversation (Markdown)", visible=False, size="sm", elem_id="rag-export-md"
                            )
                            export_bib = gr.DownloadButton(
                                "Cited papers (BibTeX)", visible=False, size="sm", elem_id="rag-export-bib"
                            )
                            export_csv = gr.DownloadButton(
                                "Cited papers (CSV)", visible=False, size="sm", elem_id="rag-export-csv"
                            )
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
                            )
                            conv_open = gr.Button("Open", size="sm", elem_id="rag-conv-open", scale=1, min_width=80)
                            conv_delete = gr.Button(
                                "Delete", size="sm", variant="stop", elem_id="rag-conv-delete", scale=1
                            )
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
                    gr.Markdown(_backend_markdown(assistant))
            with gr.Tab("Table", id="table"):
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
                        placeholder="Rows: the papers most relevant to it; empty: every paper",
                        scale=3,
                        elem_id="rag-table-query",
                        max_length=settings.answer.max_question_chars,
                    )
                with gr.Row():
                    table_venue = gr.Dropdown(venues, value="", label="Venue filter", allow_custom_value=True)
                    table_year = gr.Dropdown(years, value="", label="Year filter", allow_custom_value=True)
                    table_k = gr.Slider(
                        1, 200, value=min(200, settings.answer.table_max_papers), step=1, label="Papers at most"
                    )
                    table_btn = gr.Button("Make the table", variant="primary", elem_id="rag-table-make")
                with gr.Row(equal_height=True):
                    table_status = gr.HTML(elem_id="rag-table-status")
                    table_csv = gr.DownloadButton("Download CSV", visible=False, size="sm", elem_id="rag-table-csv")
                    table_md = gr.DownloadButton("Download Markdown", visible=False, size="sm", elem_id="rag-table-md")
                table_html = gr.HTML(format_table_html(None), elem_id="rag-table")
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

        chat_inputs = [question, chatbot, history_state, answers_state, k, hybrid, venue, year, mode, temperature, kind]
        chat_outputs = [chatbot, history_state, answers_state, sources, copy_text, question, feedback_note]
        conv_outputs = [conv_id, conv_list, export_md, export_bib, export_csv, export_answer]
        view_outputs = [*chat_outputs, *conv_outputs]
        # One limit for every way of asking (Gradio's own limit is per event): room for all who may wait for the
        # LLM (Assistant.llm_queue bounds those and tells them their place) and a few extractive answers beside.
        workers = _answer_workers(settings)

        def run_example(ex: gr.SelectData, *args: Any) -> Iterator[tuple[Any, ...]]:
            yield from respond(ex.value["text"], *args[1:])

        for trigger, fn in (
            (question.submit, respond),
            (ask_btn.click, respond),
            (chatbot.example_select, run_example),
        ):
            trigger(
                fn,
                chat_inputs,
                chat_outputs,
                api_visibility="private",
                concurrency_id="answers",
                concurrency_limit=workers,
            ).then(save_conversation, [answers_state, conv_id], conv_outputs, api_visibility="private")
        chatbot.like(on_feedback, [answers_state], [feedback_note], api_visibility="private")
        clear_btn.click(clear_chat, None, view_outputs, api_visibility="private")
        conv_open.click(open_conversation, [conv_list], view_outputs, api_visibility="private")
        conv_delete.click(delete_conversation, [conv_list, conv_id], view_outputs, api_visibility="private")
        app.load(restore, [conv_id], view_outputs, api_visibility="private")
        copy_btn.click(None, [copy_text], None, js=_COPY_JS)
        paper_query.change(
            lambda q: format_papers_html(assistant.papers(), q), [paper_query], [papers_html], api_visibility="private"
        )
        ingest_btn.click(
            upload, [files, paper_query], [ingest_status, papers_html, venue, year], api_visibility="private"
        ).then(refresh_table_filters, None, [table_venue, table_year], api_visibility="private")
        table_btn.click(
            make_table,
            [table_attributes, table_query, table_venue, table_year, table_k],
            [table_status, table_html, table_csv, table_md],
            api_visibility="private",
            concurrency_id="answers",
            concurrency_limit=workers,
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
            kind: str = "auto",
        ) -> dict[str, Any]:
            """Answer ``question`` from the indexed abstracts: the answer, its citations and sources (Answer JSON).
            ``temperature`` < 0 keeps the configured one. ``history`` is the conversation so far,
            ``[["user", "..."], ["assistant", "..."]]``; the endpoint keeps no state between calls.
            ``kind``: auto (from the question's form), lookup, list, compare or yesno."""
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
                    kind=parse_kind(kind),
                )
            except RagError as e:
                raise gr.Error(str(e)) from e
            return answer.to_json()

        def table(attributes: str, query: str = "", venue: str = "", year: str = "", k: int = 0) -> dict[str, Any]:
            """A paper x attribute table (``attributes``: "task, dataset, metric"): one row per paper, each value
            with the sentence of the abstract that states it, null when none does (Table JSON)."""
            try:
                result = assistant.table(
                    attributes, query=query or None, where=parse_filters(venue, year) or None, k=int(k) or None
                )
            except RagError as e:
                raise gr.Error(str(e)) from e
            return result.to_json()

        gr.api(ask, api_name="ask", concurrency_id="answers", concurrency_limit=workers)
        gr.api(table, api_name="table", concurrency_id="answers", concurrency_limit=workers)
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

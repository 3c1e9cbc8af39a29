"""HTML and Markdown of what the UI shows: answers with linked markers, source cards, paper lists, tables,
and the files offered for download.

Every piece of abstract text, title, question and model output goes through :func:`esc` (:func:`html.escape`)
or :func:`rag.format_display_html` (which escapes too) before it becomes HTML: the sources panel is raw HTML, and
an abstract must never be able to run script in the reader's browser.
"""

from __future__ import annotations

import html
import re
import tempfile
from pathlib import Path

from rag import (
    Answer,
    Assistant,
    ClaimCheck,
    Conversation,
    ListItem,
    Paper,
    PaperStance,
    Quote,
    Relevance,
    SearchHit,
    Table,
    format_bibtex,
    format_csv,
    format_display,
    format_display_html,
    format_markdown,
    format_relevance_legend,
    readable_table,
    relevance_of,
    retrieved_relevance,
)
from rag.llm import runtime_summary

_MARKER = re.compile(r"\[(\d+)\]")


def esc(text: str) -> str:
    """``text`` as HTML text, quotes escaped too."""
    return html.escape(text or "", quote=True)


def _esc_line(text: str) -> str:
    """Escaped and on one line, for chat messages. Gradio renders those as Markdown, and a blank line
    would end our HTML block: after it, ``![x](https://host/...)`` in model text becomes an image that
    the browser fetches. Without newlines the whole message stays raw (escaped) HTML."""
    return esc(" ".join((text or "").split()))


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


def format_paragraphs_html(text: str, turn: int, refs: set[int] | None = None) -> str:
    """Each line of ``text`` (a comparison has one per paper) as a paragraph with linked markers."""
    return "".join(f"<p>{format_answer_html(line, turn, refs)}</p>" for line in text.splitlines() if line.strip())


_VERDICTS = {"yes": "Yes", "no": "No", "not stated": "Not stated"}


def format_verdict_html(verdict: str) -> str:
    label = _VERDICTS.get(verdict, verdict)
    return f'<div class="rag-verdict rag-verdict-{esc(verdict.replace(" ", "-"))}">{esc(label)}</div>'


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
    return f"<p>{esc(list_summary(answer))}{':' if items else '.'}</p>" + (
        f'<ul class="rag-items">{items}</ul>' if items else ""
    )


def format_list_progress_html(items: list[ListItem], checked: int, total: int) -> str:
    """A list question while papers are judged: the ones confirmed so far and the counter."""
    found = "".join(
        f'<li><span class="rag-item-title">{_rich_line(i.title)}</span>: {_rich_line(i.quote)}</li>' for i in items
    )
    counter = f"Checked {checked} of {total} papers · {len(items)} found so far…" if total else "Checking the papers…"
    return f'<p class="rag-progress">{esc(counter)}</p>' + (f'<ul class="rag-items">{found}</ul>' if found else "")


def format_count(n: int, noun: str) -> str:
    """``3 papers``, ``1 paper``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def format_reading_html(evidence: list[Quote], turn: int, limit: int = 8) -> str:
    """The sentences the model is about to read, shown at once (they are what the answer is built from)."""
    papers = len({q.paper_id for q in evidence})
    rows = "".join(
        f'<li><a class="rag-ref" href="#rag-src-{turn}-{q.n}">[{q.n}]</a> {_rich_line(q.text)}</li>'
        for q in evidence[:limit]
    )
    more = f"<li>… and {len(evidence) - limit} more</li>" if len(evidence) > limit else ""
    head = f"Reading {format_count(len(evidence), 'sentence')} from {format_count(papers, 'paper')}…"
    return f'<div class="rag-reading"><span>{esc(head)}</span><ul>{rows}{more}</ul></div>'


def format_message_html(answer: Answer, turn: int) -> str:
    """The assistant chat message: answer with clickable markers, unsupported sentences, standalone question.
    A yes/no answer leads with its verdict; a list answer shows the count and one line per paper."""
    body = format_verdict_html(answer.verdict) if answer.kind == "yesno" and answer.verdict else ""
    if answer.refused:
        body += f'<p class="rag-refusal">{esc(answer.text)}</p>'
        if answer.sources:
            body += "<p>The closest papers are listed under Sources.</p>"
    elif answer.kind == "list":
        body += format_list_html(answer, turn)
    else:
        text = answer.text
        if answer.verdict in ("yes", "no"):  # the badge says it: "Yes. The abstract states: ..." -> "The abstract ..."
            text = text.removeprefix(f"{_VERDICTS[answer.verdict]}.").lstrip()
        body += format_paragraphs_html(text, turn, {c.n for c in answer.citations})
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
    return body + format_reasoning_html(answer.reasoning)


def format_reasoning_html(reasoning: str | None) -> str:
    """A reasoning model's <think> block, folded (a <details> the reader opens) and escaped: not the answer, and
    not checked against the abstracts."""
    if not reasoning:
        return ""
    lines = "<br>".join(_esc_line(line) for line in reasoning.strip().splitlines() if line.strip())
    return (
        '<details class="rag-reasoning"><summary>The model\'s reasoning (not checked against the abstracts)</summary>'
        f"<p>{lines}</p></details>"
    )


def format_abstract_html(abstract: str, spans: list[tuple[int, int]], mark: str = "rag-support") -> str:
    """The abstract, escaped, its math and emphasis rendered, with each supporting span (offsets into the raw
    abstract) wrapped in ``<mark class=mark>`` (overlaps merged)."""
    return format_display_html(abstract, spans, mark)


def format_relevance_html(relevance: Relevance) -> str:
    """The one figure a reader is shown of a paper: what qualified it (rag.types.relevance_of), in words, with what
    the figure means as a tooltip. (The fused rank and score stay in the JSON for tools.)"""
    css = f"rag-rel rag-rel-{relevance.basis}" + (f" rag-match-{esc(relevance.level)}" if relevance.level else "")
    return f'<span class="{css}" title="{esc(relevance.help)}">{esc(relevance.text)}</span>'


def _source_card(
    hit: SearchHit,
    n: int,
    turn: int,
    spans: list[tuple[int, int]],
    relevance: Relevance,
    mark: str = "rag-support",
) -> str:
    meta = _meta_line(hit)
    abstract = hit.abstract or hit.text
    return (
        f'<div class="rag-source" id="rag-src-{turn}-{n}">'
        f"<div><b>[{n}] {_rich_line(hit.title)}</b></div>"
        f'<div class="rag-source-meta">{esc(meta) + " · " if meta else ""}{format_relevance_html(relevance)} · '
        f"{esc(hit.paper_id)}</div>"
        f'<div class="rag-abstract">{format_abstract_html(abstract, spans, mark)}</div></div>'
    )


def _legend(relevances: list[Relevance]) -> str:
    """One line above the cards that says what each figure on them means (the tooltips say more)."""
    if not relevances:
        return ""
    helps = " ".join(dict.fromkeys(r.help for r in relevances))
    return (
        f'<p class="rag-legend" title="{esc(helps)}">{esc(format_relevance_legend(relevances).replace(">=", "≥"))}</p>'
    )


def format_sources_html(
    answer: Answer | None,
    turn: int,
    hits: list[SearchHit] | None = None,
    evidence: list[Quote] | None = None,
    listed: dict[str, Relevance] | None = None,
) -> str:
    """The sources panel: cited papers with the supporting sentence highlighted, or the closest papers, each with
    what qualified it (:func:`rag.relevance_of`). Before the answer: the retrieved papers, numbered like the
    evidence, the sentences being read highlighted, each with its similarity, or, once a list answer has
    confirmed it, what listed it (``listed``: :func:`rag.listed_relevance` by paper id)."""
    if answer is None:
        if not hits:
            return '<div class="rag-sources"><p>Sources of the answer appear here.</p></div>'
        listed = listed or {}
        shown = [(h, listed.get(h.paper_id) or retrieved_relevance(h)) for h in hits]
        if not evidence:
            cards = "".join(_source_card(h, i, turn, [], r) for i, (h, r) in enumerate(shown, 1))
            return f'<div class="rag-sources"><h4>Retrieved papers</h4>{_legend([r for _h, r in shown])}{cards}</div>'
        numbers: dict[str, int] = {}
        reading: dict[str, list[tuple[int, int]]] = {}
        for q in evidence:
            numbers.setdefault(q.paper_id, q.n)
            reading.setdefault(q.paper_id, []).append((int(q.span[0]), int(q.span[1])))
        offered = sorted((x for x in shown if x[0].paper_id in numbers), key=lambda x: numbers[x[0].paper_id])
        rest = [x for x in shown if x[0].paper_id not in numbers]
        cards = "".join(
            _source_card(h, numbers[h.paper_id], turn, reading[h.paper_id], r, "rag-read") for h, r in offered
        )
        first = max(numbers.values(), default=0) + 1
        cards += "".join(_source_card(h, first + i, turn, [], r) for i, (h, r) in enumerate(rest))
        return f'<div class="rag-sources"><h4>Reading</h4>{_legend([r for _h, r in shown])}{cards}</div>'
    relevance = relevance_of(answer)
    if answer.refused or not answer.citations:
        rels = [relevance[h.paper_id] for h in answer.sources]
        cards = "".join(_source_card(h, i, turn, [], r) for i, (h, r) in enumerate(zip(answer.sources, rels), 1))
        head = "Closest papers" if answer.sources else "No paper came close"
        return f'<div class="rag-sources"><h4>{head}</h4>{_legend(rels)}{cards}</div>'
    spans: dict[int, list[tuple[int, int]]] = {}
    for c in answer.citations:
        spans.setdefault(c.n, []).append((int(c.span[0]), int(c.span[1])))
    cited = [(n, answer.sources[n - 1]) for n in sorted(spans) if 0 < n <= len(answer.sources)]
    rels = [relevance[h.paper_id] for _n, h in cited]
    cards = "".join(_source_card(h, n, turn, spans[n], r) for (n, h), r in zip(cited, rels))
    head = "Listed papers" if answer.kind == "list" else "Cited papers"
    return f'<div class="rag-sources"><h4>{head}</h4>{_legend(rels)}{cards}</div>'


def format_step_html(text: str, elapsed: float) -> str:
    """The status line under an answer being made: what is done now and the seconds since the question."""
    return f'<p class="rag-step">{esc(text)} · {elapsed:.0f} s</p>'


def format_stopped_html(elapsed: float) -> str:
    """What an answer stopped with the Stop button leaves in the chat (its unverified draft is not kept)."""
    return f'<p class="rag-stopped"><em>Stopped after {elapsed:.0f} s: no answer. Ask again for one.</em></p>'


def format_waiting_html(position: int, waited: float) -> str:
    """The chat placeholder while a question waits for the LLM: its place in line and the time waited."""
    place = "next in line" if position == 1 else f"number {position} in line"
    return f"<em>Waiting for the model: {place}, {waited:.0f} s so far…</em>"


# ------------------------------------------------------------------ the claim check
_STANCE_WORDS = {"supports": "supports", "refutes": "refutes", "not stated": "not stated"}
_VERDICT_WORDS = {
    "supported": "Supported",
    "refuted": "Refuted",
    "mixed": "Mixed evidence",
    "not enough evidence": "Not enough evidence",
}


def _css_name(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def format_stance_html(paper: PaperStance) -> str:
    """One judged paper: its stance in words with the judge's probability, its title, and the deciding sentence
    quoted (all escaped); a stance under the threshold is shown and marked as not counted."""
    counted = paper.decided or paper.stance == "not stated"
    note = "" if counted else ' <span class="rag-stance-note">(not counted: under the threshold)</span>'
    if not paper.asked:
        note += ' <span class="rag-stance-note">(not asked: far from the claim)</span>'
    label = f"{_STANCE_WORDS.get(paper.stance, paper.stance)} {paper.probability:.2f}"
    verb = "does not state" if paper.stance == "not stated" else paper.stance
    help_text = f"The judge's probability that this paper {verb} the claim"
    return (
        f'<li class="rag-stance rag-stance-{_css_name(paper.stance)}">'
        f'<span class="rag-stance-label" title="{esc(help_text)}">[{paper.n}] {esc(label)}</span>{note} '
        f'<span class="rag-item-title">{_rich_line(paper.title)}</span>'
        f'<blockquote class="rag-stance-quote">{_rich_line(paper.quote)}</blockquote></li>'
    )


def format_meter_html(counts: dict[str, int]) -> str:
    """The verdict's meter: one horizontal bar split by the counts of papers that support, refute or do not
    state the claim, each part labelled in words (never colour alone) and the whole described for screen readers."""
    parts = [("supports", "support"), ("refutes", "refute"), ("not stated", "not stated")]
    total = sum(counts.get(key, 0) for key, _ in parts)
    words = ", ".join(f"{counts.get(key, 0)} {word}" for key, word in parts)
    bars = "".join(
        f'<span class="rag-meter-part rag-meter-{_css_name(key)}" '
        f'style="width: {100 * counts.get(key, 0) / total:.1f}%"></span>'
        for key, _ in parts
        if total and counts.get(key, 0)
    )
    legend = "".join(
        f'<li class="rag-meter-key rag-meter-key-{_css_name(key)}"><span class="rag-meter-swatch"></span>'
        f"{counts.get(key, 0)} {esc(word)}</li>"
        for key, word in parts
    )
    return (
        f'<div class="rag-meter" role="img" aria-label="{esc(words)}">{bars}</div>'
        f'<ul class="rag-meter-legend">{legend}</ul>'
    )


def format_claim_verdict_html(check: ClaimCheck) -> str:
    """The verdict in words, its meter, and what was counted."""
    c = check.counts
    supports, refutes = c.get("supports", 0), c.get("refutes", 0)
    unstated = c.get("not stated", 0)
    said = {
        "supported": f"{format_count(supports, 'paper')} {'supports' if supports == 1 else 'support'} the claim "
        "and none refutes it.",
        "refuted": f"{format_count(refutes, 'paper')} {'refutes' if refutes == 1 else 'refute'} the claim "
        "and none supports it.",
        "mixed": f"{format_count(supports, 'paper')} {'supports' if supports == 1 else 'support'} the claim and "
        f"{format_count(refutes, 'paper')} {'refutes' if refutes == 1 else 'refute'} it.",
        "not enough evidence": "No paper judged supports or refutes the claim.",
    }.get(check.verdict, "")
    detail = (
        f"{format_count(check.checked, 'paper')} judged; {unstated} not counted: they do not state it, or the judge "
        "is not sure enough."
    )
    label = _VERDICT_WORDS.get(check.verdict, check.verdict)
    return (
        f'<div class="rag-claim-verdict"><div class="rag-verdict rag-verdict-{_css_name(check.verdict)}">'
        f"{esc(label)}</div><p>{esc(said)}</p>{format_meter_html(c)}"
        f'<p class="rag-note">{esc(detail)}</p></div>'
    )


def format_check_html(papers: list[PaperStance], check: ClaimCheck | None = None) -> str:
    """The Check tab's result: the verdict and its meter once the check is done, then each paper judged so
    far with its stance, probability, title and quote (in order of relevance)."""
    if check is None and not papers:
        return (
            '<div class="rag-check"><p>Type a claim (e.g. <em>WildBox provides 3D bounding box annotations.</em>) '
            "and check it: each of the most relevant abstracts supports it, refutes it or does not state it, "
            "with the sentence that decides.</p></div>"
        )
    head = format_claim_verdict_html(check) if check is not None else ""
    rows = "".join(format_stance_html(p) for p in (check.papers if check is not None else papers))
    legend = (
        '<p class="rag-legend">The figure after each stance is the judge\'s probability of it (0 to 1).</p>'
        if rows
        else ""
    )
    return f'<div class="rag-check">{head}{legend}<ul class="rag-stances">{rows}</ul></div>'


def format_check_status_html(text: str, elapsed: float | None = None, error: bool = False) -> str:
    """The line above the Check tab's result: what is being done and for how long, or why it stopped."""
    if error:
        return f'<p class="rag-error">{esc(text)}</p>'
    took = f" · {elapsed:.0f} s" if elapsed is not None else ""
    return f'<p class="rag-progress">{esc(text)}{esc(took)}</p>'


def format_limit_html(limit: int, error: str | None = None) -> str:
    """The line under the question box: its limit and what happens past it, or (``error``) why the question
    was refused. The count span is filled in as the user types (the page's script, rag.ui.layout)."""
    count = f'<span class="rag-count" data-limit="{limit}"></span> '
    if error:
        return f'<p class="rag-limit">{count}<span class="rag-error">{esc(error)}</span></p>'
    return (
        f'<p class="rag-limit">{count}At most {limit:,} characters; a longer question is refused, never shortened.</p>'
    )


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
            f"{esc(meta) + ' · ' if meta else ''}{esc(p.paper_id)}</span>"
            f'<div class="rag-paper-snippet">{esc(snippet)}</div></div>'
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
        f"{format_count(len(table.rows), 'paper')} × {format_count(len(table.attributes), 'attribute')}: "
        f"{stated} of {total} cells stated "
        f"(the others are not stated in the abstract). Click a value for its quote."
    )
    return (
        f'<div class="rag-table-wrap"><p>{esc(summary)}</p><table class="rag-table"><thead><tr><th>paper</th>{head}'
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


def format_backend_markdown(assistant: Assistant) -> str:
    """The settings' note on what answers: the LLM backend, the model, the embeddings."""
    s = assistant.settings
    backend = s.llm.base_url or "embedded llama.cpp (local, starts on the first question)"
    model = str(s.llm.gguf) if s.llm.gguf is not None and not s.llm.base_url else s.llm.model  # RAG_LLM__GGUF
    note = f"**LLM backend:** {esc(backend)}  \n**Model:** `{esc(model)}`  \n"
    if not s.llm.base_url:  # which llama.cpp serves, and whether a faster build is compiling (read at page load)
        note += f"**Runtime:** {esc(runtime_summary(s).removeprefix('LLM runtime: '))}  \n"
    return note + f"**Embeddings:** `{esc(s.embedding.model)}`"

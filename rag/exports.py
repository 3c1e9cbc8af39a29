"""Answers and conversations as files people keep: Markdown with numbered references, and the cited papers
as BibTeX and CSV.

A conversation's answers each number their own sources from [1]; an export numbers the cited *papers* once,
in the order they are first cited, and rewrites every answer's markers to those numbers, so ``[2]`` means
the same paper everywhere in the file and always has a reference under it. Text is shown readable
(:func:`rag.corpus.display.format_display`: ``$\\pm$`` → ``±``) and escaped for the format it goes into:
Markdown punctuation and HTML are backslash-escaped (a quoted ``![x](https://...)`` stays text in any
viewer), BibTeX specials are escaped, and CSV cells that a spreadsheet would read as a formula get a
leading apostrophe.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rag.corpus.display import format_display
from rag.types import Answer, SearchHit, Table, TableCell

_MARKER = re.compile(r"\[(\d+)\]")


@dataclass
class Reference:
    """A cited paper, numbered for the whole export, with the sentences of its abstract the answers quote."""

    n: int
    paper_id: str
    title: str
    venue: str | None = None
    year: int | None = None
    url: str | None = None
    quotes: list[str] = field(default_factory=list)


def _as_list(answers: Answer | Sequence[Answer]) -> list[Answer]:
    return [answers] if isinstance(answers, Answer) else list(answers)


def collect_references(answers: Answer | Sequence[Answer]) -> tuple[list[Reference], list[dict[int, int]]]:
    """The cited papers of ``answers`` numbered from 1 in order of first citation, and for each answer the map
    from its own marker numbers to those."""
    refs: dict[str, Reference] = {}
    renumber: list[dict[int, int]] = []
    for answer in _as_list(answers):
        local: dict[int, int] = {}
        cited = [(c.n, c.paper_id, c.title, c.quote) for c in answer.citations]
        cited += [(i.n, i.paper_id, i.title, i.quote) for i in answer.items]
        for n, paper_id, title, quote in cited:
            if paper_id not in refs:
                hit = answer.sources[n - 1] if 0 < n <= len(answer.sources) else None
                refs[paper_id] = _reference(len(refs) + 1, paper_id, title, hit)
            ref = refs[paper_id]
            local[n] = ref.n
            text = " ".join(format_display(quote).split())
            if text and text not in ref.quotes:
                ref.quotes.append(text)
        renumber.append(local)
    return list(refs.values()), renumber


def _reference(n: int, paper_id: str, title: str, hit: SearchHit | None) -> Reference:
    meta = hit.metadata if hit is not None else {}
    year = meta.get("year")
    url = meta.get("url")
    return Reference(
        n=n,
        paper_id=paper_id,
        title=" ".join(format_display(title).split()),
        venue=str(meta["venue"]) if meta.get("venue") not in (None, "") else None,
        year=int(year) if isinstance(year, (int, float)) or (isinstance(year, str) and year.isdigit()) else None,
        url=str(url) if isinstance(url, str) and url.startswith(("https://", "http://")) else None,
    )


# ---------------------------------------------------------------------------------------------- Markdown
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#|!~])")


def _md(text: str) -> str:
    """Readable text, on one line, with Markdown and HTML punctuation escaped."""
    return _MD_SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", format_display(text)))


def _md_answer(text: str, numbers: dict[int, int]) -> str:
    """The answer's text escaped, its markers renumbered; a marker that resolves to nothing is dropped."""
    out, pos = [], 0
    for m in _MARKER.finditer(text):
        out.append(_md(text[pos : m.start()]))
        n = numbers.get(int(m.group(1)))
        out.append(f"[{n}]" if n is not None else "")
        pos = m.end()
    out.append(_md(text[pos:]))
    return "".join(out).strip()


def format_markdown(answers: Answer | Sequence[Answer], *, title: str | None = None) -> str:
    """One answer, or a conversation's answers in order, as Markdown: each question as a heading, the answer
    with ``[n]`` markers, then "References" with one numbered entry per cited paper (title, venue, year, id,
    the quoted sentences). Each ``[n]`` is also a reference-style link to its entry's anchor (``#ref-n``)."""
    items = _as_list(answers)
    refs, renumber = collect_references(items)
    lines: list[str] = []
    single = len(items) == 1 and (not title or title == items[0].question)
    if not single:
        lines += [f"# {_md(title or 'Conversation').strip()}", ""]
    for answer, numbers in zip(items, renumber):
        lines += [f"{'#' if single else '##'} {_md(answer.question).strip()}", ""]
        if answer.kind == "yesno" and answer.verdict:
            lines += [f"**{answer.verdict.capitalize()}.**", ""]
        if answer.kind == "list" and answer.items:
            lines += [f"{len(answer.items)} of {answer.checked or 0} papers checked match:", ""]
            lines += [f"- [{numbers[i.n]}] {_md(i.title)}: {_md(i.quote)}" for i in answer.items]
        else:
            lines += [_md_answer(line, numbers) for line in answer.text.splitlines() if line.strip()]
        if answer.refused and answer.sources:
            lines += ["", "Closest papers: " + "; ".join(f"{_md(h.title)} ({_md(h.paper_id)})" for h in answer.sources)]
        lines.append("")
    if refs:
        lines += ["## References", ""]
        for r in refs:
            where = ", ".join(x for x in (r.venue or "", str(r.year or "")) if x)
            head = f'<a id="ref-{r.n}"></a>[{r.n}] {_md(r.title)}' + (f". {_md(where)}" if where else "")
            head += f". `{r.paper_id.replace('`', '')}`" + (f". <{r.url}>" if r.url else "")
            lines.append(head)
            lines += [f"> “{_md(q)}”" for q in r.quotes]
            lines.append("")
        lines += [f"[{r.n}]: #ref-{r.n}" for r in refs]
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------- BibTeX, CSV
_TEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _tex(text: str) -> str:
    return "".join(_TEX_SPECIAL.get(c, c) for c in " ".join(text.split()))


def _bibkey(ref: Reference, taken: set[str]) -> str:
    word = next((w for w in re.findall(r"[A-Za-z0-9]+", ref.title) if len(w) > 2), "paper")
    base = re.sub(r"[^A-Za-z0-9]", "", ref.paper_id)[:24] or "ref"
    key = f"{word.lower()}{ref.year or ''}_{base}"
    while key in taken:
        key += "x"
    taken.add(key)
    return key


def format_bibtex(answers: Answer | Sequence[Answer]) -> str:
    """The cited papers as BibTeX entries (``@inproceedings`` when the venue is known, else ``@misc``), in
    reference order; the paper id and the quoted sentences go into ``note``."""
    refs, _ = collect_references(answers)
    taken: set[str] = set()
    entries = []
    for r in refs:
        fields = [("title", "{" + _tex(r.title) + "}")]
        if r.venue:
            fields.append(("booktitle", _tex(r.venue)))
        if r.year:
            fields.append(("year", str(r.year)))
        if r.url:
            fields.append(("url", r.url.replace("}", "%7D").replace("{", "%7B")))
        note = f"id: {r.paper_id}" + "".join(f"; quoted: ``{q}''" for q in r.quotes)
        fields.append(("note", _tex(note).replace(r"\`\`", "``")))
        kind = "inproceedings" if r.venue else "misc"
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
        entries.append(f"@{kind}{{{_bibkey(r, taken)},\n{body}\n}}")
    return "\n\n".join(entries) + ("\n" if entries else "")


def _cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: a leading ``= + - @`` (a formula) gets an apostrophe."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def format_csv(answers: Answer | Sequence[Answer]) -> str:
    """One row per cited paper and quoted sentence: ``n, title, paper_id, venue, year, url, quote``."""
    refs, _ = collect_references(answers)
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["n", "title", "paper_id", "venue", "year", "url", "quote"])
    for r in refs:
        for quote in r.quotes or [""]:
            w.writerow(
                [r.n, _cell(r.title), _cell(r.paper_id), _cell(r.venue or ""), r.year or "", r.url or "", _cell(quote)]
            )
    return out.getvalue()


def readable_table(table: Table) -> Table:
    """``table`` with its titles, values and quotes as people read them (``$\\pm$`` → ±), for its Markdown and CSV
    exports; the JSON keeps the verbatim quotes (and spans into the abstracts)."""
    rows = [
        r.model_copy(
            update={
                "title": format_display(r.title),
                "cells": [
                    TableCell(
                        attribute=c.attribute,
                        value=None if c.value is None else format_display(c.value),
                        quote=format_display(c.quote),
                        span=c.span,
                    )
                    for c in r.cells
                ],
            }
        )
        for r in table.rows
    ]
    return table.model_copy(update={"rows": rows})

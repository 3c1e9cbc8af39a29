"""A paper x attribute table: the model copies a short value per attribute from each abstract; code keeps
only values it can find in a sentence of that abstract.

The model reads one abstract at a time and writes ``attribute: value`` lines (or "not stated"). Each
value is then looked for in the abstract's sentences: the sentence holding most of its words (and every
number and name it has, checked as answers are: :func:`rag.answering.facts.fact_problems`) becomes the
cell's quote and span. A value no sentence holds is dropped and the cell shows "not stated": a cell is
never guessed. Nor is a value the token limit cut off: the last line of a reply that ended at the limit is
not read.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import HumanMessage

from rag.answering.attributes import form_line, value_fits
from rag.answering.evidence import evidence_spans, readable
from rag.answering.facts import fact_problems, numbers
from rag.answering.verify import key_terms
from rag.corpus import normalise_text
from rag.types import AnswerMode, SearchHit, Table, TableCell, TableRow

if TYPE_CHECKING:
    from rag.answering.pipeline import AnswerPipeline

_NOT_STATED = re.compile(
    r"^\W*(?:not\s+(?:stated|mentioned|specified|given|reported|available)|n/?a|none|unknown|unclear|-+)\W*$", re.I
)


def parse_attributes(attributes: str | Sequence[str]) -> list[str]:
    """``"task, dataset, metric"`` or a list -> clean, distinct attribute names (at least one)."""
    items = attributes.split(",") if isinstance(attributes, str) else list(attributes)
    out = list(dict.fromkeys(" ".join(a.split()).strip(" :") for a in items if a and a.strip(" :")))
    if not out:
        raise ValueError("Name at least one attribute, e.g. 'task, dataset, metric'.")
    return out


def extract_row(
    pipeline: AnswerPipeline, n: int, hit: SearchHit, attributes: list[str], mode: AnswerMode
) -> tuple[TableRow, int]:
    """One paper's row (values found in its abstract, else empty) and how many model values were dropped."""
    values: dict[str, str] = {}
    if mode == "llm":
        prompt = pipeline.extract_template.format(
            title=readable(hit.title),
            abstract=readable(hit.abstract),
            attributes="\n".join(form_line(a) for a in attributes),
        )
        limit = pipeline.settings.answer.table_tokens_per_attribute * len(attributes)
        out = pipeline.chat().invoke([HumanMessage(prompt)], max_tokens=limit, temperature=0.0)
        cut = (getattr(out, "response_metadata", None) or {}).get("finish_reason") == "length"
        values = _parse_values(str(out.content), attributes, cut=cut)
    spans = evidence_spans(hit.abstract)
    source = f"{hit.title}. {normalise_text(hit.title)}. " + " ".join(
        f"{normalise_text(hit.abstract[a:b])} {hit.abstract[a:b]}" for a, b in spans
    )
    cells: list[TableCell] = []
    dropped = 0
    for attribute in attributes:
        value = values.get(attribute)
        if mode != "llm":
            value = None
        if value is None or _NOT_STATED.match(value):
            cells.append(TableCell(attribute=attribute))
            continue
        span = _locate(value, hit.abstract, spans, source) if value_fits(attribute, value) else None
        if span is None:
            dropped += 1
            cells.append(TableCell(attribute=attribute))
            continue
        cells.append(TableCell(attribute=attribute, value=value, quote=hit.abstract[span[0] : span[1]], span=span))
    return TableRow(n=n, paper_id=hit.paper_id, title=hit.title, cells=cells), dropped


def _parse_values(text: str, attributes: list[str], cut: bool = False) -> dict[str, str]:
    """``attribute: value`` lines -> {attribute: value} (case-insensitive names, a hint in parentheses after
    the name allowed; first line per attribute). A reply of bare lines, one per attribute and none
    named, is read in order: the model answered the form without repeating its names.

    ``cut``: the reply stopped at the token limit, so its last line is unfinished ("We prove that
    under a"): it is not read, and the attributes after it stay empty."""
    wanted = {a.lower(): a for a in attributes}
    out: dict[str, str] = {}
    lines = [line.strip().lstrip("-*• ").strip() for line in text.splitlines() if line.strip()]
    if cut:
        lines = lines[:-1]
    for line in lines:
        name, sep, value = line.partition(":")
        key = " ".join(re.sub(r"\(.*?\)", " ", name).split()).strip("*` ").lower()
        if sep and key in wanted and wanted[key] not in out:
            out[wanted[key]] = _clean(value)
    if not out and not cut and len(lines) == len(attributes) and not any(_LABEL.match(line) for line in lines):
        out = {a: _clean(line) for a, line in zip(attributes, lines)}
    return out


_LABEL = re.compile(r"^[\w ()-]{1,40}:\s")


def _clean(value: str) -> str:
    return " ".join(value.split()).strip(" .;*`\"'")


def _locate(value: str, abstract: str, spans: Sequence[tuple[int, int]], source: str) -> tuple[int, int] | None:
    """The span of the sentence that states ``value``: holding ≥ 70 % of its key terms and all its numbers,
    with no name or expression the abstract lacks; None when no sentence does."""
    terms = key_terms(value)
    best: tuple[float, tuple[int, int]] | None = None
    for span in spans:
        sentence = normalise_text(abstract[span[0] : span[1]])
        lowered = sentence.lower()
        if not terms:  # a value of stopwords only: must appear verbatim
            coverage = 1.0 if value.lower() in lowered else 0.0
        else:
            coverage = len(terms & key_terms(sentence)) / len(terms)
        if coverage < 0.7 or numbers(value) - numbers(sentence):
            continue
        if fact_problems(value, sentence, source):
            continue
        if best is None or coverage > best[0]:
            best = (coverage, span)
    return best[1] if best else None


def build_table(
    pipeline: AnswerPipeline,
    hits: Sequence[SearchHit],
    attributes: list[str],
    *,
    query: str | None,
    collection_size: int,
    mode: AnswerMode,
    progress: Callable[[int, int], None] | None = None,
) -> Table:
    """Rows for ``hits`` in order; ``progress(done, total)`` after each paper."""
    t0 = time.perf_counter()
    rows = []
    dropped = 0
    for n, hit in enumerate(hits, 1):
        row, lost = extract_row(pipeline, n, hit, attributes, mode)
        rows.append(row)
        dropped += lost
        if progress:
            progress(n, len(hits))
    return Table(
        attributes=attributes,
        rows=rows,
        query=query,
        checked=len(hits),
        collection_size=collection_size,
        timings={"total": time.perf_counter() - t0, "values_dropped": float(dropped)},
    )

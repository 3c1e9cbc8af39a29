"""A paper x attribute table: the model copies a short value per attribute from each abstract; code keeps
only values it can find in a sentence of that abstract.

The model reads one abstract and answers one question per attribute (the attribute kind's question,
:func:`rag.answering.attributes.question_for`) with a short phrase or "not stated". One question at a
time was right more often than one form for all attributes (table cells 0.723 against 0.564 on the gold
cells, docs/benchmarks.md) and costs no more: the abstract leads every prompt, so the server reuses its
computed prefix and only the question and answer are new. Each value is then looked for in the
abstract's sentences: the sentence holding most of its words (and every number and name it has, checked
as answers are: :func:`rag.answering.facts.fact_problems`) becomes the cell's quote and span. A value no
sentence holds is dropped and the cell shows "not stated": a cell is never guessed. Nor is a value the
token limit cut off, nor one of the wrong kind for its paper (:func:`rag.answering.attributes.fits_paper`).

With a query, the rows are the papers that match it, found as a list question's are
(:func:`rag.answering.paths.find_candidates`) and each confirmed by the same list judge
(:func:`rag.answering.paths.judge_candidate`) before its row is filled: retrieval alone made every paper of a
small collection a row. Rows stream out as they are filled; the finished table puts the rows that state
nothing last.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from typing import ClassVar

from langchain_core.messages import HumanMessage

from rag.answering.attributes import fits_paper, question_for, value_fits
from rag.answering.evidence import evidence_spans, readable
from rag.answering.facts import fact_problems, numbers
from rag.answering.kinds import topic_predicate
from rag.answering.paths import Candidates, judge_candidate
from rag.answering.pipeline import AnswerPipeline
from rag.answering.reasoning import split_reasoning
from rag.corpus import normalise_text
from rag.corpus.tokens import key_terms
from rag.events import RowEvent, TableEvent, TableStatusEvent, TableStreamEvent
from rag.types import AnswerMode, SearchHit, Table, TableCell, TableRow

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


def _parse_answer(text: str, attribute: str, cut: bool = False) -> str | None:
    """The model's answer to one attribute's question: its first line, without an echoed label
    ("Answer:", the attribute's name); None when the token limit cut the answer off."""
    if cut:
        return None
    lines = [line.strip().lstrip("-*• ").strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    line = lines[0]
    name, sep, rest = line.partition(":")
    if sep and rest.strip() and name.strip("*` ").lower() in {"answer", attribute.lower()}:
        line = rest
    return _clean(_FRAME.sub("", _clean(line))) or None


# the frame a model puts around a copied phrase: "The authors find that ...", "The paper proposes ..."
_FRAME = re.compile(
    r"^(?:the\s+)?(?:authors?|paper|study|work|abstract|they|we)\s+(?:\w+ly\s+)?"
    r"(?:finds?|found|shows?|showed|proves?|proved|proposes?|introduces?|presents?|demonstrates?|argues?|"
    r"uses?|studies|study|address(?:es)?|develops?|reports?|derives?|establish(?:es)?|identif(?:y|ies)|reveals?|"
    r"concludes?)\s+(?:that\s+)?",
    re.I,
)


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


def stated_first(rows: Sequence[TableRow]) -> list[TableRow]:
    """``rows`` with those that state no value moved last (each group in its order), numbered again from 1."""
    ordered = sorted(rows, key=lambda r: not any(c.stated for c in r.cells))
    return [r.model_copy(update={"n": n}) for n, r in enumerate(ordered, 1)]


class TablePath:
    """A paper x attribute table, beside the answer paths (rag.answering.paths): one question per paper and
    attribute; its own events (rag.events ``TableStreamEvent``) end in a :class:`~rag.types.Table`."""

    kind: ClassVar[str] = "table"

    def __init__(self, pipeline: AnswerPipeline) -> None:
        self.pipeline = pipeline

    def events(
        self,
        attributes: list[str],
        *,
        query: str | None,
        candidates: Candidates | None = None,
        hits: Sequence[SearchHit] = (),
        limit: int,
        collection_size: int,
        mode: AnswerMode,
    ) -> Iterator[TableStreamEvent]:
        """The table as events: with a query, each of ``candidates`` judged by the list judge against it (its
        predicate, :func:`rag.answering.kinds.topic_predicate`) and a row filled for each paper that qualifies,
        until ``limit`` rows; without one, a row for each of ``hits``. A status before each judgement and each
        row, a :class:`RowEvent` as each row is filled, then the :class:`TableEvent`, its rows with nothing
        stated last."""
        t0 = time.perf_counter()
        rows: list[TableRow] = []
        dropped = 0
        judged = 0
        if query is not None and candidates is not None:
            cands = candidates.candidates
            predicate = topic_predicate(query)
            misses = 0
            min_yes = self.pipeline.settings.answer.list_min_yes
            for i, cand in enumerate(cands, 1):
                yield TableStatusEvent("judging", f"Judging paper {i} of {len(cands)}…", i - 1, len(cands), len(rows))
                p, _used = judge_candidate(self.pipeline, predicate, query, cand)
                judged = i
                if p < min_yes:
                    misses += 1
                    if candidates.patience_over(i, misses):
                        break
                    continue
                misses = 0
                text = f"Filling row {len(rows) + 1} (paper {i} of {len(cands)} matches)…"
                yield TableStatusEvent("filling", text, i, len(cands), len(rows) + 1)
                row, lost = self.row(len(rows) + 1, cand.hit, attributes, mode)
                rows.append(row)
                dropped += lost
                yield RowEvent(row)
                if len(rows) >= limit:
                    break
        else:
            for i, hit in enumerate(hits, 1):
                yield TableStatusEvent("filling", f"Filling row {i} of {len(hits)}…", i - 1, len(hits), i)
                row, lost = self.row(i, hit, attributes, mode)
                rows.append(row)
                dropped += lost
                judged = i
                yield RowEvent(row)
        yield TableEvent(
            Table(
                attributes=attributes,
                rows=stated_first(rows),
                query=query,
                checked=judged,
                collection_size=collection_size,
                timings={"total": time.perf_counter() - t0, "values_dropped": float(dropped)},
            )
        )

    def row(self, n: int, hit: SearchHit, attributes: list[str], mode: AnswerMode) -> tuple[TableRow, int]:
        """One paper's row (values found in its abstract, else empty) and how many model values were dropped."""
        pipeline = self.pipeline
        values: dict[str, str] = {}
        if mode == "llm":
            limit = pipeline.settings.answer.table_tokens_per_attribute
            title, abstract = readable(hit.title), readable(hit.abstract)  # the same lead for every question
            answers: dict[str, str | None] = {}  # by question: "dataset" and "benchmarks" ask the same, once
            for attribute in attributes:
                question = question_for(attribute)
                if question not in answers:
                    prompt = pipeline.extract_template.format(title=title, abstract=abstract, question=question)
                    out = pipeline.chat().invoke([HumanMessage(prompt)], max_tokens=limit, temperature=0.0)
                    cut = (getattr(out, "response_metadata", None) or {}).get("finish_reason") == "length"
                    said = split_reasoning(str(out.content))[0]  # never a value from a <think> block
                    answers[question] = _parse_answer(said, attribute, cut=cut)
                if answers[question]:
                    values[attribute] = str(answers[question])
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
            fits = value_fits(attribute, value) and fits_paper(attribute, value, hit.title, hit.abstract)
            span = _locate(value, hit.abstract, spans, source) if fits else None
            if span is None:
                dropped += 1
                cells.append(TableCell(attribute=attribute))
                continue
            cells.append(TableCell(attribute=attribute, value=value, quote=hit.abstract[span[0] : span[1]], span=span))
        return TableRow(n=n, paper_id=hit.paper_id, title=hit.title, cells=cells), dropped

"""A paper x attribute table: the model copies a short value per attribute from each abstract; code keeps
only values it can find in a sentence of that abstract.

The model reads one abstract and answers one question per attribute (the attribute kind's question,
:func:`rag.answering.attributes.question_for`) with a short phrase or "not stated". One question at a
time was right more often than one form for all attributes (table cells 0.723 against 0.564 on the gold
cells, docs/benchmarks.md) and costs no more: the abstract leads every prompt, so the server reuses its
computed prefix and only the question and answer are new. Each value is then looked for in the
abstract's sentences: the sentence holding most of its words (in any form of the word, an acronym the abstract
defines standing for its long form; and every number and name it has, checked as answers are:
:func:`rag.answering.facts.fact_problems`) becomes the cell's quote and span. A title the paper was given
(never one derived from its abstract) is a source too: its quote is the title, with no span. A long clause
(a finding) that no sentence holds is the model joining sentences: the sentence holding half of it is shown
in its place, in the abstract's words. Any other value no source holds is dropped and the cell shows "not
stated": a cell is never guessed. Nor is a value the token limit cut off, nor one of the wrong kind for its
paper (:func:`rag.answering.attributes.fits_paper`) or its sentence (a result that counts the data,
:func:`rag.answering.attributes.fits_sentence`). Data that the abstract describes rather than names is often
"not stated" to the model: such an attribute is asked again without that option
(:func:`rag.answering.attributes.described`). A finding is a statement: one the model reworded is shown as the
sentence of the paper's own work that holds half of it, never a sentence of the abstract's background
(:func:`own_work_start`). A data domain that no kind of data fills is the area the model names for the paper,
when the paper's title names it too (:func:`rag.answering.attributes.area_question`). A value stated but not
what its kind asks for (a finding given as the contribution described, a method that is the paper's own data) is
asked a sharper question, whose answer takes its place only when a sentence states it and it passes the same
checks (:func:`rag.answering.attributes.sharper`).

With a query, the rows are the papers that match it, found as a list question's are
(:func:`rag.answering.paths.find_candidates`) and each confirmed by the same list judge
(:func:`rag.answering.paths.judge_candidate`) before its row is filled: retrieval alone made every paper of a
small collection a row. Rows stream out as they are filled; the finished table puts the rows that state
nothing last.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator, Sequence
from typing import ClassVar

from langchain_core.messages import HumanMessage

from rag.answering.attributes import (
    area_question,
    described,
    fits_paper,
    fits_sentence,
    question_for,
    sharper,
    statement,
    vague_domain,
    value_fits,
)
from rag.answering.evidence import evidence_spans, readable
from rag.answering.facts import fact_problems, numbers
from rag.answering.kinds import topic_predicate
from rag.answering.paths import Candidates, judge_candidate
from rag.answering.pipeline import AnswerPipeline
from rag.answering.reasoning import split_reasoning
from rag.corpus import normalise_text
from rag.corpus.titles import acronym_definitions
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
    return _clean(_ECHO.sub("", _FRAME.sub("", _clean(line)))) or None


# the frame a model puts around a copied phrase: "The authors find that ...", "The paper proposes ..."
_FRAME = re.compile(
    r"^(?:the\s+)?(?:authors?|paper|study|work|abstract|they|we)"
    r"(?:'s\s+(?:experiments?|results?|analys[ie]s|findings?|evaluations?))?\s+(?:\w+ly\s+)?"
    r"(?:finds?|found|shows?|showed|proves?|proved|proposes?|introduces?|presents?|demonstrates?|argues?|"
    r"uses?|studies|study|address(?:es)?|develops?|reports?|derives?|establish(?:es)?|identif(?:y|ies)|reveals?|"
    r"concludes?)\s+(?:that\s+)?",
    re.I,
)


# the question echoed before the answer: "DLR experiments are run on five reasoning benchmarks"
_ECHO = re.compile(
    r"^(?:[^,;:]{0,60}?\s)?(?:experiments?|evaluations?)\s+(?:are|were|is|was)\s+"
    r"(?:run|conducted|performed|carried\s+out|done)\s+(?:on|using|with)\s+",
    re.I,
)


def _clean(value: str) -> str:
    return " ".join(value.split()).strip(" .;*`\"'")


def _locate(
    value: str,
    abstract: str,
    spans: Sequence[tuple[int, int]],
    source: str,
    acronyms: Sequence[tuple[str, str]] | None = None,
) -> tuple[int, int] | None:
    """The span of the sentence that states ``value`` (:func:`_coverage`, the one holding most of its terms);
    None when no sentence does. ``acronyms``: those the paper defines (default: its abstract's)."""
    acronyms = acronym_definitions(normalise_text(abstract)) if acronyms is None else acronyms
    best: tuple[float, tuple[int, int]] | None = None
    for span in spans:
        coverage = _coverage(value, normalise_text(abstract[span[0] : span[1]]), source, acronyms)
        if coverage is not None and (best is None or coverage > best[0]):
            best = (coverage, span)
    return best[1] if best else None


def _coverage(value: str, sentence: str, source: str, acronyms: Sequence[tuple[str, str]]) -> float | None:
    """How much of ``value`` ``sentence`` states, when it states it: ≥ 70 % of its key terms (a term matches
    another form of its word, :func:`_same_word`, and an acronym the abstract defines stands for its long form)
    and all its numbers, with no name or expression the paper lacks; else None."""
    coverage = _share(value, sentence, acronyms)
    if coverage < 0.7 or numbers(value) - numbers(sentence):
        return None
    if fact_problems(value, _spelled(sentence, acronyms), source):
        return None
    return coverage


def _share(value: str, sentence: str, acronyms: Sequence[tuple[str, str]]) -> float:
    """The share of ``value``'s key terms that ``sentence`` holds in some form (a value of stopwords only: 1.0 when
    the sentence holds it verbatim, else 0.0)."""
    terms = key_terms(_spelled(value, acronyms))
    if not terms:
        return 1.0 if value.lower() in sentence.lower() else 0.0
    held = key_terms(_spelled(sentence, acronyms))
    return sum(any(_same_word(t, h) for h in held) for t in terms) / len(terms)


#: a value this long is a clause (a finding, a method described): when no sentence holds 70 % of it, the model
#: has joined or reworded sentences, and the sentence holding at least half of it is shown in its place
CLAUSE_TERMS = 8
#: a statement's attribute (a finding: :func:`rag.answering.attributes.statement`) is a clause from this many terms
STATEMENT_TERMS = 5
_LEAD = re.compile(
    r"^(?:in\s+addition|in\s+particular|moreover|furthermore|finally|overall|however|thus|hence|"
    r"therefore|specifically|importantly|notably|as\s+a\s+result|to\s+this\s+end)\s*,\s*",
    re.I,
)


# a sentence about the paper's own work: "we", "our", "this paper", "here", "a method is proposed"
_OWN_WORK = re.compile(
    r"\b(?:we|our|us)\b|\b(?:this|the\s+present|the\s+current)\s+(?:paper|work|study|article|thesis|manuscript|"
    r"report|letter)\b|\bhere\b|\b(?:is|are)\s+(?:proposed|presented|introduced|developed)\b",
    re.I,
)


def own_work_start(sentences: Sequence[str]) -> int:
    """The index of the first of an abstract's ``sentences`` that speaks of the paper's own work ("To this end, we
    propose ..."); those before it are background (the field, prior work: "Existing methods suffer from ...").
    0 when none does: then nothing is background."""
    return next((i for i, s in enumerate(sentences) if _OWN_WORK.search(s)), 0)


def _stating(
    value: str,
    hit: SearchHit,
    spans: Sequence[tuple[int, int]],
    source: str,
    acronyms: Sequence[tuple[str, str]],
    clause_terms: int = CLAUSE_TERMS,
    clause_from: int = 0,
) -> tuple[str, str, tuple[int, int] | None] | None:
    """(value, quote, span) for a value a source states: a sentence of the abstract; else the title the paper was
    given (span None), which states what it is about ("Stable Autofocus with Focal Consistency Loss"), never a
    title derived from the abstract; else, for a clause of ``clause_terms`` terms or more, the sentence from
    ``spans[clause_from]`` on holding at least half of it, which becomes the value (the abstract's own words, not
    the model's). None otherwise."""
    span = _locate(value, hit.abstract, spans, source, acronyms)
    if span is not None:
        return value, hit.abstract[span[0] : span[1]], span
    titled = not hit.title_derived and hit.title.strip() != ""
    if titled and _coverage(value, normalise_text(hit.title), source, acronyms) is not None:
        return value, hit.title, None
    if len(key_terms(value)) < clause_terms:
        return None
    shares = [(_share(value, normalise_text(hit.abstract[a:b]), acronyms), (a, b)) for a, b in spans[clause_from:]]
    share, best = max(shares, default=(0.0, (0, 0)))
    if share < 0.5:
        return None
    quote = hit.abstract[best[0] : best[1]]
    return _LEAD.sub("", normalise_text(quote)).rstrip(" ."), quote, best


def _spelled(text: str, acronyms: Sequence[tuple[str, str]]) -> str:
    """``text`` with each acronym of ``acronyms`` followed by its long form ("LLMs" -> "LLMs large language
    models"), so that a value and a sentence match whichever of the two each uses."""
    for long, short in acronyms:
        stem = short[:-1] if short.endswith("s") and short[:-1].isupper() else short  # "LLMs" also spells "LLM"
        text = _after(rf"(?<![\w-]){re.escape(stem)}s?(?![\w-])", long, text)
    return text


def _after(pattern: str, words: str, text: str) -> str:
    """``text`` with ``words`` written after each match of ``pattern``."""
    return re.sub(pattern, lambda m: f"{m.group(0)} {words}", text)


_COMPOUND = re.compile(r"-(?:based|driven|aware|oriented|guided|like|level|specific|wise)$")


def _same_word(a: str, b: str) -> bool:
    """Two key terms are forms of one word: equal, or words of 5+ letters sharing all but the last three letters
    of the shorter (and at least five): "improving" / "improvements", "formalizing" / "formalize", but not
    "generative" / "generalization". Numbers and short words must be equal."""
    a, b = _COMPOUND.sub("", a), _COMPOUND.sub("", b)  # "sampling-based" is "sampling"
    if a == b:
        return True
    if len(a) < 5 or len(b) < 5 or not (a.isalpha() and b.isalpha()):
        return False
    shared = len(os.path.commonprefix([a, b]))
    return shared >= max(5, min(len(a), len(b)) - 3)


def stated_first(rows: Sequence[TableRow]) -> list[TableRow]:
    """``rows`` with those that state no value moved last (each group in its order), numbered again from 1."""
    ordered = sorted(rows, key=lambda r: not any(c.stated for c in r.cells))
    return [r.model_copy(update={"n": n}) for n, r in enumerate(ordered, 1)]


def _cell(
    attribute: str,
    value: str,
    hit: SearchHit,
    spans: Sequence[tuple[int, int]],
    source: str,
    acronyms: Sequence[tuple[str, str]],
    own_start: int,
) -> TableCell | None:
    """The cell for the model's ``value`` of ``attribute``: the value (or the sentence shown in its place) with the
    sentence that states it; None when it is not of the attribute's kind for this paper or no source states it."""
    echo = key_terms(value) <= key_terms(question_for(attribute))  # "a named dataset or benchmark"
    fits = not echo and value_fits(attribute, value) and fits_paper(attribute, value, hit.title, hit.abstract)
    # a finding the model reworded is shown as a sentence of the paper's own work, never of its background
    terms, start = (STATEMENT_TERMS, own_start) if statement(attribute) else (CLAUSE_TERMS, 0)
    stated = _stating(value, hit, spans, source, acronyms, terms, start) if fits else None
    if stated is not None and stated[0] != value and not value_fits(attribute, stated[0]):
        stated = None  # the sentence shown in its place must be of the attribute's kind too
    if stated is None or not fits_sentence(attribute, stated[0], normalise_text(stated[1])):
        return None
    return TableCell(attribute=attribute, value=stated[0], quote=stated[1], span=stated[2])


def _in_title(value: str, title: str) -> bool:
    """The paper's ``title`` names ``value``: holds each of its key terms, in some form of the word ("Robotics" in
    "a hopping robot"; "Machine learning" is not in "Learning to Adapt CLIP")."""
    held, terms = {h.strip("-") for h in key_terms(title)}, key_terms(value)  # 'robot-"Kenken"' has "robot"
    return bool(terms) and all(any(_same_word(t, h) for h in held) for t in terms)


def _both_forms(text: str) -> str:
    """``text`` as written and normalised (markup stripped), once when the two are the same: a word written twice
    would count as used elsewhere in the paper (:func:`rag.answering.facts.fact_problems` reads a word the value
    puts where its sentence has another one as a swap only when the paper uses it elsewhere too)."""
    plain = normalise_text(text)
    return plain if plain == text else f"{plain} {text}"


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

    def _ask(self, template: str, title: str, abstract: str, question: str, attribute: str) -> str | None:
        """The model's value for one attribute's question (see :func:`_parse_answer`)."""
        pipeline = self.pipeline
        prompt = template.format(title=title, abstract=abstract, question=question)
        limit = pipeline.settings.answer.table_tokens_per_attribute
        out = pipeline.chat().invoke([HumanMessage(prompt)], max_tokens=limit, temperature=0.0)
        cut = (getattr(out, "response_metadata", None) or {}).get("finish_reason") == "length"
        said = split_reasoning(str(out.content))[0]  # never a value from a <think> block
        return _parse_answer(said, attribute, cut=cut)

    def row(self, n: int, hit: SearchHit, attributes: list[str], mode: AnswerMode) -> tuple[TableRow, int]:
        """One paper's row (values found in its abstract, else empty) and how many model values were dropped."""
        pipeline = self.pipeline
        values: dict[str, str] = {}
        title, abstract = readable(hit.title), readable(hit.abstract)  # the same lead for every question
        if mode == "llm":
            answers: dict[str, str | None] = {}  # by question: "dataset" and "benchmarks" ask the same, once
            for attribute in attributes:
                question = question_for(attribute)
                if question not in answers:
                    answers[question] = self._ask(pipeline.extract_template, title, abstract, question, attribute)
                    said = answers[question]
                    unfit = said is None or _NOT_STATED.match(said) is not None or not value_fits(attribute, said)
                    if described(attribute) and unfit:  # "not stated", or a value not of its kind
                        template = pipeline.extract_described_template
                        answers[question] = self._ask(template, title, abstract, question, attribute) or said
                if answers[question]:
                    values[attribute] = str(answers[question])
        spans = evidence_spans(hit.abstract)
        source = " ".join(_both_forms(t) for t in [f"{hit.title}.", *(hit.abstract[a:b] for a, b in spans)])
        acronyms = acronym_definitions(normalise_text(f"{hit.title}. {hit.abstract}"))
        own_start = own_work_start([hit.abstract[a:b] for a, b in spans])
        row_args = (hit, spans, source, acronyms, own_start)

        def ask_again(attribute: str, question: str) -> str | None:
            """The model's answer to a second question for ``attribute`` (sharper, or the area), None if not stated."""
            said = self._ask(pipeline.extract_template, title, abstract, question, attribute)
            return None if not said or _NOT_STATED.match(said) else said

        cells: list[TableCell] = []
        dropped = 0
        for attribute in attributes:
            value = values.get(attribute) if mode == "llm" else None
            if value is None or _NOT_STATED.match(value):
                cell = None
            else:
                cell = _cell(attribute, value, *row_args)
                dropped += cell is None
            shown = str(cell.value) if cell is not None else value
            again = (
                sharper(attribute, shown, hit.title, hit.abstract) if shown and not _NOT_STATED.match(shown) else None
            )
            if again is not None:  # stated, but not what the kind asks for: a sharper question's value, if it is
                said = ask_again(attribute, again)
                sharp = _cell(attribute, said, *row_args) if said else None
                fits = sharp is not None and sharper(attribute, str(sharp.value), hit.title, hit.abstract) is None
                cell = sharp if fits else cell
            area = area_question(attribute) if mode == "llm" else None
            if area is not None and (cell is None or vague_domain(str(cell.value))):
                # no kind of data, or data named by its setting: the area the paper's title names, if any
                said = ask_again(attribute, area)
                if said and _in_title(said, hit.title):
                    cell = _cell(attribute, said, *row_args) or cell
            cells.append(cell or TableCell(attribute=attribute))
        return TableRow(n=n, paper_id=hit.paper_id, title=hit.title, cells=cells), dropped

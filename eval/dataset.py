"""Gold question sets: JSONL -> typed cases, with quotes resolved to paper ids.

One JSON object per line (blank lines and lines starting with ``//`` are skipped). The ``type`` field
says what a line is:

- a single-paper question (``factoid``, ``explanation``, ``yesno``, ``multi``, ``unanswerable``; the
  default) -> :class:`EvalCase`::

    {"id": "wildbox-annotations", "question": "How many 3D boxes does WildBox have?",
     "reference_answer": "237,505", "answer_keywords": ["237,505|237505"],
     "supporting_quotes": ["comprising 237,505 3D bounding box annotations"], "type": "factoid"}

- ``list``: which / how many papers satisfy a criterion -> :class:`ListCase` (expected and borderline
  papers by quote or by id);
- ``comparison``: per-paper answers for named papers -> :class:`ComparisonCase`;
- ``cell``: one attribute of one paper in a paper x attribute table -> :class:`CellCase`;
- ``corpus``: not a question but the corpus the file is graded against, when it is not the bundled
  abstracts -> :class:`CorpusSpec` (at most one per file)::

    {"type": "corpus", "name": "ml1k", "papers": 1000, "path": "/tmp/ml1k.jsonl",
     "make": "python eval/tools/make_ml1k.py /tmp/ml1k.jsonl"}

Papers are named by quotes (exact substrings of one abstract, whitespace-insensitive) or by ids;
:func:`resolve_cases` turns quotes into ids against the indexed papers. Every problem is a
:class:`GoldError` naming ``file:line``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rag import Paper, RagError

CaseType = Literal["factoid", "explanation", "yesno", "multi", "unanswerable"]


class GoldError(RagError):
    """A gold file that cannot be used; the message names the file and line."""


def _check_groups(groups: Sequence[str], name: str) -> None:
    if any(not g.strip() or any(not a.strip() for a in g.split("|")) for g in groups):
        raise ValueError(f"{name} has an empty group or alternative")


class EvalCase(BaseModel):
    """One single-paper gold question."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = ""
    question: str = Field(min_length=1)
    reference_answer: str | None = None
    answer_keywords: list[str] = Field(
        default_factory=list, description="Groups; alternatives in a group separated by '|'."
    )
    supporting_ids: list[str] = Field(default_factory=list)
    supporting_quotes: list[str] = Field(
        default_factory=list, description="Exact substrings of the supporting abstracts."
    )
    type: CaseType = "factoid"
    history: list[tuple[Literal["user", "assistant"], str]] = Field(default_factory=list)
    line: int = Field(default=0, description="Line in the gold file (set by the loader).")

    @property
    def answerable(self) -> bool:
        return self.type != "unanswerable"

    @property
    def expected_verdict(self) -> Literal["yes", "no"] | None:
        """A ``yesno`` question: "yes" or "no", the first word of the reference answer."""
        if self.type != "yesno" or not self.reference_answer:
            return None
        m = re.match(r"\s*(yes|no)\b", self.reference_answer, re.I)
        return cast(Literal["yes", "no"], m.group(1).lower()) if m else None

    @model_validator(mode="after")
    def _check(self) -> EvalCase:
        if self.answerable and not (self.supporting_ids or self.supporting_quotes):
            raise ValueError("an answerable question needs supporting_ids or supporting_quotes")
        if not self.answerable and (self.supporting_ids or self.supporting_quotes or self.answer_keywords):
            raise ValueError("an unanswerable question has no supporting_ids, supporting_quotes or answer_keywords")
        _check_groups(self.answer_keywords, "answer_keywords")
        if self.type == "yesno" and self.expected_verdict is None:
            raise ValueError("a yesno question needs a reference_answer that starts with Yes or No")
        return self


class ListCase(BaseModel):
    """Which (or how many) papers of the collection satisfy a criterion.

    ``expected_*`` is the complete set of qualifying papers (empty: the answer is "none");
    ``borderline_*`` are papers a reasonable reader could count either way: the metrics ignore them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = ""
    type: Literal["list"] = "list"
    question: str = Field(min_length=1)
    criterion: str = ""
    expected_quotes: list[str] = Field(default_factory=list)
    borderline_quotes: list[str] = Field(default_factory=list)
    expected_ids: list[str] = Field(default_factory=list, description="Filled from the quotes by resolve_cases.")
    borderline_ids: list[str] = Field(default_factory=list)
    count: int | None = Field(default=None, ge=0, description="A 'how many' question: the number expected.")
    line: int = 0

    @model_validator(mode="after")
    def _check(self) -> ListCase:
        if self.count is not None and self.count != len(self.expected_quotes) + len(self.expected_ids):
            raise ValueError(f"count {self.count} is not the number of expected papers")
        return self


class ComparedPaper(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    quote: str = ""
    paper_id: str = ""
    answer_keywords: list[str] = Field(min_length=1)

    @model_validator(mode="after")
    def _check(self) -> ComparedPaper:
        if not (self.quote.strip() or self.paper_id):
            raise ValueError("a compared paper needs a quote or a paper_id")
        _check_groups(self.answer_keywords, "answer_keywords")
        return self


class ComparisonCase(BaseModel):
    """A question about several named papers; each must be covered (cited, with its keywords)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = ""
    type: Literal["comparison"] = "comparison"
    question: str = Field(min_length=1)
    papers: list[ComparedPaper] = Field(min_length=2)
    line: int = 0


class CellCase(BaseModel):
    """One cell of a paper x attribute table: a stated value (keywords + support) or ``not_stated``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = ""
    type: Literal["cell"] = "cell"
    attributes: list[str] = Field(min_length=1, description="The table's columns ('a, b, c' in the file).")
    attribute: str
    quote: str = Field(default="", description="Identifies the paper: an exact substring of its abstract.")
    paper_id: str = ""
    value_keywords: list[str] = Field(default_factory=list)
    support: str = Field(default="", description="A substring of the same abstract that states the value.")
    not_stated: bool = False
    line: int = 0

    @field_validator("attributes", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return [a.strip() for a in value.split(",") if a.strip()] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _check(self) -> CellCase:
        if self.attribute not in self.attributes:
            raise ValueError(f"attribute {self.attribute!r} is not one of {self.attributes}")
        if not (self.quote.strip() or self.paper_id):
            raise ValueError("a cell needs a quote or a paper_id")
        if self.not_stated and (self.value_keywords or self.support):
            raise ValueError("a not_stated cell has no value_keywords or support")
        if not self.not_stated and not (self.value_keywords and self.support.strip()):
            raise ValueError("a stated cell needs value_keywords and support (or not_stated: true)")
        _check_groups(self.value_keywords, "value_keywords")
        return self


class CorpusSpec(BaseModel):
    """The corpus a gold file is graded against, when it is not the bundled abstracts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["corpus"] = "corpus"
    name: str = Field(min_length=1)
    papers: int | None = Field(default=None, ge=1, description="How many papers it has (checked when indexed).")
    path: str | None = Field(default=None, description="Where `make` writes it; used when --corpus is not given.")
    make: str = Field(default="", description="The command that builds it.")
    line: int = 0


GoldCase = EvalCase | ListCase | ComparisonCase | CellCase
C = TypeVar("C", bound=GoldCase)
_MODELS: dict[str, type[BaseModel]] = {"list": ListCase, "comparison": ComparisonCase, "cell": CellCase}


@dataclass(frozen=True)
class GoldSet:
    """One gold file: its cases in file order and the corpus it names (None: the bundled abstracts)."""

    path: Path
    cases: list[GoldCase]
    corpus: CorpusSpec | None = None

    def of_type(self, kind: type[C]) -> list[C]:
        return [c for c in self.cases if isinstance(c, kind)]


def load_gold_set(path: str | Path) -> GoldSet:
    """Read a gold JSONL file of any case types; any problem is a :class:`GoldError` naming ``file:line``."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise GoldError(f"{path}: cannot read the gold file: {e}") from e
    cases: list[GoldCase] = []
    corpus: CorpusSpec | None = None
    seen: dict[str, int] = {}
    for no, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            raise GoldError(f"{path}:{no}: invalid JSON: {e.msg}") from e
        if not isinstance(data, dict):
            raise GoldError(f"{path}:{no}: expected a JSON object")
        if data.get("type") == "corpus":
            if corpus is not None:
                raise GoldError(f"{path}:{no}: a second corpus record (the first is on line {corpus.line})")
            try:
                corpus = CorpusSpec(**data, line=no)
            except (ValidationError, TypeError) as e:
                raise GoldError(f"{path}:{no}: {_describe(e)}") from e
            continue
        model = _MODELS.get(str(data.get("type")), EvalCase)
        try:
            case = cast(GoldCase, model(**data, line=no))
        except (ValidationError, TypeError) as e:
            raise GoldError(f"{path}:{no}: {_describe(e)}") from e
        if not case.id:
            case = case.model_copy(update={"id": f"q{no}"})
        if case.id in seen:
            raise GoldError(f"{path}:{no}: duplicate id {case.id!r} (first on line {seen[case.id]})")
        seen[case.id] = no
        cases.append(case)
    if not cases:
        raise GoldError(f"{path}: no questions")
    return GoldSet(path=path, cases=cases, corpus=corpus)


def load_gold(path: str | Path) -> list[GoldCase]:
    """The cases of :func:`load_gold_set` (single-paper questions are :class:`EvalCase`)."""
    return load_gold_set(path).cases


def _describe(e: Exception) -> str:
    if isinstance(e, ValidationError):
        return "; ".join(f"{'.'.join(str(x) for x in err['loc']) or 'record'}: {err['msg']}" for err in e.errors())
    return str(e)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class _Papers:
    """Quote -> paper id over the indexed abstracts (whitespace-insensitive, exactly one match)."""

    def __init__(self, papers: Sequence[Paper], source: str) -> None:
        self.abstracts = {p.paper_id: _squash(p.abstract) for p in papers}
        self.source = source

    def by_quote(self, quote: str, case: GoldCase, what: str) -> str:
        q = _squash(quote)
        hits = [pid for pid, text in self.abstracts.items() if q and q in text]
        if not hits:
            raise GoldError(f"{self.source}:{case.line}: {what} {quote[:60]!r} is in no indexed abstract")
        if len(hits) > 1:
            raise GoldError(f"{self.source}:{case.line}: {what} {quote[:60]!r} is in {len(hits)} abstracts; quote more")
        return hits[0]

    def check_id(self, pid: str, case: GoldCase, what: str) -> str:
        if pid not in self.abstracts:
            raise GoldError(f"{self.source}:{case.line}: {what} {pid!r} is not in the index")
        return pid


def _merge(ids: Sequence[str], more: Sequence[str]) -> list[str]:
    return list(dict.fromkeys([*ids, *more]))


def _resolve_one(case: GoldCase, p: _Papers) -> GoldCase:
    where = f"{p.source}:{case.line}"
    if isinstance(case, EvalCase):
        ids = [p.check_id(pid, case, "supporting id") for pid in case.supporting_ids]
        ids = _merge(ids, [p.by_quote(q, case, "supporting quote") for q in case.supporting_quotes])
        return case.model_copy(update={"supporting_ids": ids})
    if isinstance(case, ListCase):
        expected = _merge(
            [p.check_id(pid, case, "expected id") for pid in case.expected_ids],
            [p.by_quote(q, case, "expected quote") for q in case.expected_quotes],
        )
        borderline = _merge(
            [p.check_id(pid, case, "borderline id") for pid in case.borderline_ids],
            [p.by_quote(q, case, "borderline quote") for q in case.borderline_quotes],
        )
        both = set(expected) & set(borderline)
        if both:
            raise GoldError(f"{where}: paper(s) {sorted(both)} are both expected and borderline")
        if case.count is not None and case.count != len(expected):
            raise GoldError(f"{where}: count {case.count} but {len(expected)} distinct expected papers")
        return case.model_copy(update={"expected_ids": expected, "borderline_ids": borderline})
    if isinstance(case, ComparisonCase):
        papers = [
            x.model_copy(
                update={
                    "paper_id": p.check_id(x.paper_id, case, "paper id")
                    if x.paper_id
                    else p.by_quote(x.quote, case, f"papers[{i}] quote")
                }
            )
            for i, x in enumerate(case.papers)
        ]
        if len({x.paper_id for x in papers}) != len(papers):
            raise GoldError(f"{where}: the same paper is named twice")
        return case.model_copy(update={"papers": papers})
    pid = p.check_id(case.paper_id, case, "paper id") if case.paper_id else p.by_quote(case.quote, case, "quote")
    if case.support and _squash(case.support) not in p.abstracts[pid]:
        raise GoldError(f"{where}: support {case.support[:60]!r} is not in the abstract its quote names ({pid})")
    return case.model_copy(update={"paper_id": pid})


def resolve_cases(cases: Sequence[C], papers: Sequence[Paper], source: str = "gold") -> list[C]:
    """Add the ids of the papers each case names by quote (whitespace-insensitive substring of one abstract).

    A quote found in no abstract, or in several, is an error naming the case's line; so is an id that
    is not indexed, a list whose expected and borderline sets meet or whose ``count`` is wrong, a
    comparison that names a paper twice, and a cell whose support is not in its paper's abstract.
    """
    p = _Papers(papers, source)
    return [cast(C, _resolve_one(case, p)) for case in cases]

"""Gold question sets: JSONL -> list[EvalCase], with supporting quotes resolved to paper ids.

One JSON object per line (blank lines and lines starting with ``//`` are skipped)::

    {"id": "wildbox-annotations", "question": "How many 3D boxes does WildBox have?",
     "reference_answer": "237,505", "answer_keywords": ["237,505|237505"],
     "supporting_quotes": ["comprising 237,505 3D bounding box annotations"], "type": "factoid",
     "history": [["user", "What is WildBox?"], ["assistant", "A drone dataset [1]."]]}
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from rag import Paper, RagError

CaseType = Literal["factoid", "explanation", "yesno", "multi", "unanswerable"]


class GoldError(RagError):
    """A gold file that cannot be used; the message names the file and line."""


class EvalCase(BaseModel):
    """One gold question."""

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

    @model_validator(mode="after")
    def _check(self) -> EvalCase:
        if self.answerable and not (self.supporting_ids or self.supporting_quotes):
            raise ValueError("an answerable question needs supporting_ids or supporting_quotes")
        if not self.answerable and (self.supporting_ids or self.supporting_quotes or self.answer_keywords):
            raise ValueError("an unanswerable question has no supporting_ids, supporting_quotes or answer_keywords")
        if any(not g.strip() or any(not a.strip() for a in g.split("|")) for g in self.answer_keywords):
            raise ValueError("answer_keywords has an empty group or alternative")
        return self


def load_gold(path: str | Path) -> list[EvalCase]:
    """Read a gold JSONL file; any problem is a :class:`GoldError` naming ``file:line``."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise GoldError(f"{path}: cannot read the gold file: {e}") from e
    cases: list[EvalCase] = []
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
        try:
            case = EvalCase(**data, line=no)
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
    return cases


def _describe(e: Exception) -> str:
    if isinstance(e, ValidationError):
        return "; ".join(f"{'.'.join(str(x) for x in err['loc']) or 'record'}: {err['msg']}" for err in e.errors())
    return str(e)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def resolve_cases(cases: Sequence[EvalCase], papers: Sequence[Paper], source: str = "gold") -> list[EvalCase]:
    """Add the ids of the papers whose abstract contains each supporting quote (whitespace-insensitive).

    A quote found in no abstract, or in several, is an error naming the case's line; so is a
    ``supporting_ids`` entry that is not indexed.
    """
    abstracts = [(p.paper_id, _squash(p.abstract)) for p in papers]
    known = {p.paper_id for p in papers}
    out = []
    for case in cases:
        ids = list(case.supporting_ids)
        for pid in ids:
            if pid not in known:
                raise GoldError(f"{source}:{case.line}: supporting id {pid!r} is not in the index")
        for quote in case.supporting_quotes:
            q = _squash(quote)
            hits = [pid for pid, text in abstracts if q in text]
            if not hits:
                raise GoldError(f"{source}:{case.line}: supporting quote {quote[:60]!r} is in no indexed abstract")
            if len(hits) > 1:
                raise GoldError(
                    f"{source}:{case.line}: supporting quote {quote[:60]!r} is in {len(hits)} abstracts; quote more"
                )
            if hits[0] not in ids:
                ids.append(hits[0])
        out.append(case.model_copy(update={"supporting_ids": ids}))
    return out

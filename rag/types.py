"""Frozen records that cross the public API: papers, chunks, search hits, citations, answers."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MetaValue = str | int | float | bool
"""A metadata value as Chroma stores it (and as filters compare it)."""


def chunk_id_for(paper_id: str, index: int) -> str:
    """The id of a paper's ``index``-th chunk: ``"<paper_id>#<index>"`` (the one place that builds it)."""
    return f"{paper_id}#{index}"


def paper_of_chunk(chunk_id: str) -> str:
    """The paper id inside a :func:`chunk_id_for` id (paper ids may themselves contain ``#``)."""
    return chunk_id.rsplit("#", 1)[0]


Role = Literal["user", "assistant"]
AnswerMode = Literal["llm", "extractive"]
RetrievalMode = Literal["hybrid", "dense", "bm25"]
QuestionKind = Literal["lookup", "list", "compare", "yesno"]
"""lookup: facts from one or a few papers; list: which/how many papers satisfy a criterion (every
candidate judged); compare: per-paper answers for named or retrieved papers; yesno: yes / no / not stated."""
Verdict = Literal["yes", "no", "not stated"]
Stance = Literal["supports", "refutes", "not stated"]
"""What one paper says of a statement (the stance judge's three classes)."""
ClaimVerdict = Literal["supported", "refuted", "mixed", "not enough evidence"]
"""A claim check's overall verdict from the papers' stances."""


class Query(BaseModel):
    """One question as the answer pipeline takes it (what :meth:`rag.Assistant.ask` builds from its arguments)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str = Field(description="The question as asked (already checked: not empty, not too long).")
    history: tuple[tuple[Role, str], ...] = Field(default=(), description="Earlier turns, oldest first.")
    k: int | None = Field(default=None, description="Papers to retrieve (None: settings.retrieval.k).")
    where: dict[str, MetaValue] | None = Field(default=None, description="Metadata filter (equality on every key).")
    mode: AnswerMode = Field(default="llm", description="'llm' writes an answer; 'extractive' quotes sentences.")
    retrieval_mode: RetrievalMode | None = Field(default=None, description="None: settings.retrieval.mode.")
    temperature: float | None = Field(
        default=None, description="Sampling temperature for this question (None: settings)."
    )
    kind: QuestionKind | None = Field(
        default=None, description="Answer path; None: recognised from the question's form."
    )


class Paper(BaseModel):
    """One abstract as read from a corpus file.

    ``abstract`` is the original text, kept verbatim for display and quoting; the indexed text is
    derived from it by :func:`rag.corpus.text.normalise_text`.
    """

    model_config = ConfigDict(frozen=True)

    paper_id: str = Field(description="The id given in the source, else a content hash ('h-' + 16 hex).")
    title: str = Field(description="Given title, else a short deterministic display title.")
    abstract: str = Field(description="Original abstract text, verbatim.")
    title_derived: bool = Field(default=False, description="True when the title was derived from the abstract.")
    authors: tuple[str, ...] = ()
    venue: str | None = None
    year: int | None = None
    url: str | None = None
    metadata: dict[str, MetaValue] = Field(default_factory=dict, description="Other keys from the source record.")
    source: str = Field(default="", description="Where it was read: 'file.jsonl:12'.")


class Chunk(BaseModel):
    """A token-bounded slice of one abstract. ``start``/``end`` index into ``Paper.abstract``."""

    model_config = ConfigDict(frozen=True)

    chunk_id: str
    paper_id: str
    index: int
    text: str = Field(description="abstract[start:end], original text.")
    start: int
    end: int
    n_tokens: int = 0


# What a reader sees instead of a fused score: the cosine similarity of the question and the paper's best
# passage, named by level. The bounds come from the calibration run (docs/benchmarks.md, abstention
# thresholds): off-topic questions' best cosine on the seed abstracts is at most 0.215, on-topic ones
# 0.243-0.696, half of them above 0.45.
MATCH_LEVELS: tuple[tuple[float, str], ...] = ((0.50, "strong"), (0.35, "good"), (0.22, "weak"))
MATCH_HELP = (
    "Match: how close the meaning of this abstract's best passage is to the question (cosine similarity of "
    "their embeddings, 0 = unrelated, 1 = same meaning). strong >= 0.50, good >= 0.35, weak >= 0.22, "
    "below that: off-topic (unrelated questions score under 0.22 on the demo corpus). "
    "Sources are ordered by the fused dense + keyword rank."
)


def match_level(similarity: float | None) -> str:
    """``strong``, ``good``, ``weak`` or ``off-topic`` for a cosine similarity; ``keyword`` when there is none
    (a BM25-only hit)."""
    if similarity is None:
        return "keyword"
    shown = round(similarity, 2)  # the level agrees with the two decimals people see beside it
    return next((name for bound, name in MATCH_LEVELS if shown >= bound), "off-topic")


class SearchHit(BaseModel):
    """A retrieved chunk with its paper's display fields and fused score."""

    model_config = ConfigDict(frozen=True)

    paper_id: str
    chunk_id: str
    title: str
    text: str
    start: int
    end: int
    score: float = Field(description="Fused RRF score (hybrid), or cosine similarity (dense) / BM25 score.")
    dense_score: float | None = Field(default=None, description="Cosine similarity of the chunk to the query.")
    bm25_score: float | None = None
    abstract: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    rank: int | None = Field(default=None, description="1-based position in the fused (RRF) ranking.")
    title_derived: bool = Field(default=False, description="True when the title was derived from the abstract.")

    @property
    def match(self) -> str:
        """The relevance a reader is shown: :func:`match_level` of ``dense_score``."""
        return match_level(self.dense_score)

    def to_json(self) -> dict[str, Any]:
        """``score`` is the fused (RRF) score and ``rank`` its position, for tools; ``similarity`` and ``match``
        are what people are shown."""
        return {
            "paper_id": self.paper_id,
            "title": self.title,
            "score": self.score,
            "rank": self.rank,
            "similarity": None if self.dense_score is None else round(self.dense_score, 4),
            "match": self.match,
            "text": self.text,
            "metadata": self.metadata,
        }

    def source_json(self, relevance: Relevance) -> dict[str, Any]:
        """The hit as a source of an answer (or of one being written): :meth:`to_json` with its chunk id, and
        ``relevance`` (what qualified it) in place of ``match``, whose cosine level would say "off-topic" of a
        paper a list's judge confirmed."""
        out = {k: v for k, v in self.to_json().items() if k != "match"}
        return out | {"chunk_id": self.chunk_id, "relevance": relevance.to_json()}


class Quote(BaseModel):
    """A sentence of an abstract shown to the model as evidence, numbered like the citations."""

    model_config = ConfigDict(frozen=True)

    n: int = Field(description="The source number the answer's [n] markers use.")
    paper_id: str
    title: str
    text: str = Field(description="The sentence as plain text (LaTeX and Markdown rendered).")
    span: tuple[int, int] = Field(description="Character span of the sentence in the paper's abstract.")


def paper_hit(paper: Paper) -> SearchHit:
    """A paper as a search hit of its whole abstract (for paths that take papers, not retrieved chunks)."""
    return SearchHit(
        paper_id=paper.paper_id,
        chunk_id=chunk_id_for(paper.paper_id, 0),
        title=paper.title,
        text=paper.abstract,
        start=0,
        end=len(paper.abstract),
        score=0.0,
        abstract=paper.abstract,
        title_derived=paper.title_derived,
        metadata={
            **paper.metadata,
            **{k: v for k, v in (("venue", paper.venue), ("year", paper.year)) if v is not None},
        },
    )


def paper_matches(paper: Paper, where: dict[str, MetaValue] | None) -> bool:
    """True when every key of ``where`` equals the paper's field or metadata value (as filters compare)."""
    if not where:
        return True
    fields: dict[str, Any] = {**paper.metadata, "venue": paper.venue, "year": paper.year, "url": paper.url}
    return all(fields.get(k) == v and type(fields.get(k)) is type(v) for k, v in where.items())


class Citation(BaseModel):
    """A verified citation: marker ``[n]`` resolves to ``paper_id``; ``span`` locates the supporting
    sentence in the paper's original abstract."""

    model_config = ConfigDict(frozen=True)

    n: int
    paper_id: str
    title: str
    text: str = Field(description="The cited chunk's text.")
    span: tuple[int, int] = Field(description="Character span of the supporting sentence in the abstract.")
    quote: str = Field(default="", description="The supporting sentence itself.")
    support: float = Field(
        default=0.0,
        description="How well the sentence supports the answer's claim, 0..1 (a list item: the judge's P(yes); "
        "a verbatim quote: 1.0).",
    )
    judged: Literal["listed", "yes", "no"] | None = Field(
        default=None,
        description="What cites the paper when it is not a verified claim: 'listed' (a list item) or the yes/no "
        "verdict its sentence decides.",
    )
    judge: float | None = Field(
        default=None,
        description="The model's probability behind ``judged`` (a list item's P(yes), a yes/no answer's "
        "P(verdict)); None when no model judged (extractive mode).",
    )


class ListItem(BaseModel):
    """A paper that satisfies a list question's criterion, with the sentence that qualifies it."""

    model_config = ConfigDict(frozen=True)

    n: int = Field(description="Its source number: the answer cites it as [n].")
    paper_id: str
    title: str
    quote: str = Field(description="The qualifying sentence, verbatim from the abstract.")
    span: tuple[int, int] = Field(description="Character span of the quote in the abstract.")
    score: float = Field(description="How certain the judgement is, 0..1 (items are listed most certain first).")


class AnswerSentence(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    citations: tuple[int, ...] = ()
    support: float = 0.0
    supported: bool = True


class Answer(BaseModel):
    """The result of :meth:`rag.Assistant.ask`."""

    model_config = ConfigDict(frozen=True)

    question: str
    standalone_question: str
    text: str
    refused: bool
    citations: list[Citation] = Field(default_factory=list)
    sources: list[SearchHit] = Field(default_factory=list)
    sentences: list[AnswerSentence] = Field(default_factory=list)
    unsupported: list[str] = Field(default_factory=list)
    mode: Literal["llm", "extractive"] = "llm"
    timings: dict[str, float] = Field(default_factory=dict)
    tokens: dict[str, int] = Field(default_factory=dict)
    names_source: bool = Field(
        default=False,
        description="The question names a retrieved paper by title or acronym (it passes the relevance gate).",
    )
    kind: QuestionKind = Field(default="lookup", description="The answer path taken (see QuestionKind).")
    items: list[ListItem] = Field(
        default_factory=list, description="list: the papers that qualify, most certain first."
    )
    checked: int | None = Field(default=None, description="list: how many papers were judged.")
    collection_size: int | None = Field(default=None, description="list: papers in the (filtered) collection.")
    verdict: Verdict | None = Field(default=None, description="yesno: the verdict, its deciding sentence cited.")
    verdict_probabilities: dict[str, float] = Field(
        default_factory=dict, description="yesno: the model's P(yes), P(no), P(not stated) behind the verdict."
    )
    quoted: bool = Field(
        default=False, description="The answer quotes the evidence because the model's own words could not be verified."
    )
    reasoning: str | None = Field(
        default=None,
        description="What a reasoning model wrote in its <think> block: never part of the answer, never verified; "
        "None when it wrote none.",
    )

    def relevance(self) -> dict[str, Relevance]:
        """What qualified each source, by paper id, in the order of ``sources`` (see :func:`relevance_of`)."""
        return relevance_of(self)

    def to_json(self) -> dict[str, Any]:
        relevance = relevance_of(self)
        out: dict[str, Any] = {
            "kind": self.kind,
            "question": self.question,
            "standalone_question": self.standalone_question,
            "answer": self.text,
            "refused": self.refused,
            "citations": [c.model_dump() for c in self.citations],
            "sources": [s.source_json(relevance[s.paper_id]) for s in self.sources],
            "unsupported": self.unsupported,
            "mode": self.mode,
            "timings": self.timings,
            "tokens": self.tokens,
            "items": [i.model_dump() for i in self.items],
            "checked": self.checked,
            "collection_size": self.collection_size,
            "verdict": self.verdict,
            "verdict_probabilities": self.verdict_probabilities,
            "quoted": self.quoted,
        }
        if self.reasoning is not None:  # only a reasoning model's answers carry the key
            out["reasoning"] = self.reasoning
        return out


# What qualified a paper shown beside an answer, as one figure named in words. A source card used to show the cosine
# of the question and the paper's best passage, and for "Which papers introduce a new dataset?" that said
# "off-topic (0.15)" of the very papers the answer listed (issue 30): a list's or a yes/no question's wording is
# far from any abstract's. So a cited paper shows what cited it, and only an uncited one shows the cosine.
RelevanceBasis = Literal["judge", "support", "similarity", "keyword"]
"""judge: the model's probability (a list item's P(yes), a yes/no verdict's); support: how well the cited sentence
supports the answer's claim; similarity: the cosine of the question and the best passage (not cited); keyword: a
BM25-only hit, no figure."""

RELEVANCE_HELP: dict[str, str] = {
    "listed": "Listed: the model read this abstract, was asked whether the paper satisfies the question's "
    "criterion, and said yes with this probability (a paper is listed from RAG_ANSWER__LIST_MIN_YES, 0.7 by "
    "default).",
    "listed-extractive": "Listed without a model (extractive mode): its best sentence's relevance score, rescaled "
    "to 0..1, reached RAG_ANSWER__LIST_MIN_YES (0.7 by default).",
    "verdict": "Cited for the verdict: the model's probability of this yes/no answer after reading the evidence; "
    "the verdict rests on this paper's quoted sentence.",
    "support": "Cited: how well the quoted sentence supports the answer's sentence, 0..1 (half closeness in "
    "meaning, half the share of its key terms found, halved when it lacks a number the answer states); a sentence "
    "under RAG_ANSWER__MIN_SUPPORT, 0.60 by default, is dropped. A verbatim quote scores 1.",
    "similarity": "Not cited: the answer does not rest on this paper. Similarity: how close the meaning of its best "
    "passage is to the question (cosine of their embeddings): strong >= 0.50, good >= 0.35, weak >= 0.22, below "
    "that low. It says little of a list or yes/no question, whose wording is far from any abstract's.",
    "keyword": "Found by keywords (BM25) alone: no similarity figure.",
}


class Relevance(BaseModel):
    """What qualified one paper shown with an answer, as one figure: ``text`` is what people read ("listed · judge
    0.91", "cited · support 0.82", "not cited · similarity 0.31 (weak)"), ``help`` what the figure means. Built
    only by :func:`relevance_of` (and :func:`retrieved_relevance` before an answer exists); the UI, the CLI, the
    JSON and the HTTP API show these, never a figure of their own."""

    model_config = ConfigDict(frozen=True)

    basis: RelevanceBasis
    value: float | None = Field(description="The figure, 0..1 (None for a keyword-only hit).")
    label: Literal["listed", "cited", "not cited", "retrieved"] = Field(
        description="What the answer did with the paper (retrieved: no answer yet)."
    )
    level: str | None = Field(
        default=None, description="similarity only: strong, good, weak or low (the cosine's match level)."
    )
    text: str = Field(description="What people read, e.g. 'listed · judge 0.91'.")
    help: str = Field(description="What the figure means (a tooltip, a legend line).")

    def to_json(self) -> dict[str, Any]:
        """``basis``, ``value`` (4 decimals), ``label``, ``level`` and ``text``; ``help`` is left to the docs."""
        value = None if self.value is None else round(self.value, 4)
        return {"basis": self.basis, "value": value, "label": self.label, "level": self.level, "text": self.text}


def _similarity(hit: SearchHit, label: Literal["not cited", "retrieved"]) -> Relevance:
    if hit.dense_score is None:
        return Relevance(
            basis="keyword", value=None, label=label, text=f"{label} · keyword match", help=RELEVANCE_HELP["keyword"]
        )
    # "off-topic" is the plain search's word (rag search); beside an answer the cosine is only a closeness
    level = "low" if hit.match == "off-topic" else hit.match
    return Relevance(
        basis="similarity",
        value=hit.dense_score,
        label=label,
        level=level,
        text=f"{label} · similarity {hit.dense_score:.2f} ({level})",
        help=RELEVANCE_HELP["similarity"],
    )


def retrieved_relevance(hit: SearchHit) -> Relevance:
    """A retrieved paper before the answer says anything of it: its similarity, named ``retrieved``."""
    return _similarity(hit, "retrieved")


def listed_relevance(item: ListItem, *, judged: bool = True) -> Relevance:
    """A paper a list answer has just confirmed, before the answer is done: the same figure :func:`relevance_of`
    will give it (the judge's probability; ``judged`` False: extractive mode's rescaled sentence score)."""
    basis: RelevanceBasis = "judge" if judged else "support"
    word, why = ("judge", "listed") if judged else ("score", "listed-extractive")
    return Relevance(
        basis=basis,
        value=item.score,
        label="listed",
        text=f"listed · {word} {item.score:.2f}",
        help=RELEVANCE_HELP[why],
    )


def _cited(citations: list[Citation]) -> Relevance:
    judged = [c for c in citations if c.judge is not None]
    listed = any(c.judged == "listed" for c in citations)
    label: Literal["listed", "cited"] = "listed" if listed else "cited"
    if judged:
        best = max(judged, key=lambda c: c.judge or 0.0)
        value = best.judge or 0.0
        if best.judged in ("yes", "no"):
            return Relevance(
                basis="judge",
                value=value,
                label=label,
                text=f"{label} for “{best.judged}” · judge {value:.2f}",
                help=RELEVANCE_HELP["verdict"],
            )
        return Relevance(
            basis="judge", value=value, label=label, text=f"{label} · judge {value:.2f}", help=RELEVANCE_HELP["listed"]
        )
    value = max(c.support for c in citations)
    help_text = RELEVANCE_HELP["listed-extractive" if listed else "support"]
    word = "score" if listed else "support"
    return Relevance(basis="support", value=value, label=label, text=f"{label} · {word} {value:.2f}", help=help_text)


# What each kind of figure means, said once under (or above) a list of papers: one line per kind shown.
_LEGEND: dict[tuple[RelevanceBasis, bool], str] = {
    ("judge", True): "judge = the model's probability that the paper meets the question's criterion",
    ("judge", False): "judge = the model's probability of the yes/no verdict the cited sentence decides",
    ("support", False): "support = how well the cited sentence supports the answer's (0-1; under 0.60 it is dropped)",
    ("support", True): "score = the best sentence's relevance, rescaled (no model judged)",
    ("similarity", False): "similarity = closeness in meaning of the question and the abstract's best passage: "
    "strong >= 0.50, good >= 0.35, weak >= 0.22",
    ("keyword", False): "keyword match = found by its words alone",
}


def format_relevance_legend(relevances: Iterable[Relevance]) -> str:
    """One line that says what each kind of figure among ``relevances`` means ('' for none)."""
    keys = dict.fromkeys((r.basis, r.label == "listed" and r.basis in ("judge", "support")) for r in relevances)
    said = "; ".join(_LEGEND[k] for k in keys if k in _LEGEND)
    return f"{said}." if said else ""


def relevance_of(answer: Answer) -> dict[str, Relevance]:
    """What qualified each paper of ``answer``, by paper id, sources first (in their order), then any cited paper
    that is not a source. A listed or cited paper shows what listed or cited it (the judge's probability, else its
    best cited sentence's support), so it never carries a label that contradicts the answer; an uncited one shows
    its similarity to the question. The one place these figures are made: every surface reads them."""
    by_paper: dict[str, list[Citation]] = {}
    for c in answer.citations:
        by_paper.setdefault(c.paper_id, []).append(c)
    out = {
        hit.paper_id: _cited(by_paper[hit.paper_id]) if hit.paper_id in by_paper else _similarity(hit, "not cited")
        for hit in answer.sources
    }
    for paper_id, cites in by_paper.items():
        out.setdefault(paper_id, _cited(cites))
    return out


class TableCell(BaseModel):
    """One attribute of one paper: a short value and the sentence behind it, or nothing when not stated."""

    model_config = ConfigDict(frozen=True)

    attribute: str
    value: str | None = Field(default=None, description="None: the abstract does not state it (never guessed).")
    quote: str = Field(
        default="", description="The supporting sentence, verbatim from the abstract, or the paper's given title."
    )
    span: tuple[int, int] | None = Field(
        default=None, description="Character span of the quote in the abstract (None when the title states it)."
    )

    @property
    def stated(self) -> bool:
        return self.value is not None


class TableRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    n: int = Field(description="Reference number of the paper (the [n] of the Markdown export).")
    paper_id: str
    title: str
    cells: list[TableCell]


class Table(BaseModel):
    """A paper x attribute table: one row per paper, one cell per attribute, every value quoted."""

    model_config = ConfigDict(frozen=True)

    attributes: list[str]
    rows: list[TableRow]
    query: str | None = None
    checked: int = 0
    collection_size: int = 0
    timings: dict[str, float] = Field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return self.model_dump()

    def to_csv(self) -> str:
        """One line per paper: id, title, then per attribute its value and quote (empty when not stated)."""
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(["n", "paper_id", "title", *[x for a in self.attributes for x in (a, f"{a} (quote)")]])
        for r in self.rows:
            w.writerow([r.n, r.paper_id, r.title, *[x for c in r.cells for x in (c.value or "", c.quote)]])
        return out.getvalue()

    def to_markdown(self) -> str:
        """A Markdown table whose values cite [n], and the numbered references with the quotes under it."""

        def esc(text: str) -> str:
            return " ".join(text.replace("|", "\\|").split())

        lines = ["| paper | " + " | ".join(esc(a) for a in self.attributes) + " |"]
        lines.append("|---" * (len(self.attributes) + 1) + "|")
        for r in self.rows:
            cells = [f"{esc(c.value)} [{r.n}]" if c.value else "*not stated*" for c in r.cells]
            lines.append(f"| {esc(r.title)} | " + " | ".join(cells) + " |")
        lines += ["", "References:", ""]
        for r in self.rows:
            lines.append(f"[{r.n}] {esc(r.title)} ({r.paper_id})")
            lines += [f'    {c.attribute}: "{esc(c.quote)}"' for c in r.cells if c.value]
        return "\n".join(lines) + "\n"


@dataclass(kw_only=True)
class IngestReport:
    """What one ingest did."""

    papers_seen: int = 0
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    removed: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)  # papers left incomplete by an interrupted ingest, rewritten
    chunks_written: int = 0
    embedded: int = 0  # texts the embedding model actually computed (cache misses)

    def to_json(self) -> dict[str, Any]:
        return {
            "papers_seen": self.papers_seen,
            "added": len(self.added),
            "updated": len(self.updated),
            "unchanged": self.unchanged,
            "removed": len(self.removed),
            "repaired": len(self.repaired),
            "chunks_written": self.chunks_written,
            "embedded": self.embedded,
        }


class PaperStance(BaseModel):
    """One paper's stance on a checked claim, with the sentence it rests on quoted and located."""

    model_config = ConfigDict(frozen=True)

    n: int = Field(description="Its place among the papers judged, in order of relevance (1: most relevant).")
    paper_id: str = Field(description="The corpus id of the paper (a BEIR record's _id).")
    title: str
    stance: Stance
    probability: float = Field(description="The judge's calibrated probability of that stance, 0..1.")
    probabilities: dict[str, float] = Field(default_factory=dict, description="Each stance's probability.")
    quote: str = Field(description="The deciding sentence, verbatim from the abstract.")
    span: tuple[int, int] = Field(description="Character span of the quote in the abstract.")
    decided: bool = Field(
        default=False, description="The stance counts towards the verdict (not 'not stated', probability high enough)."
    )
    asked: bool = Field(
        default=True,
        description="The model read the paper; False: its best sentences are too far from the claim to ask "
        "(check.skip_far), so it is not stated.",
    )


class ClaimCheck(BaseModel):
    """The result of :meth:`rag.Assistant.check`: every judged paper's stance and the overall verdict."""

    model_config = ConfigDict(frozen=True)

    claim: str
    verdict: ClaimVerdict
    counts: dict[str, int] = Field(default_factory=dict, description="Papers counted as supporting / refuting.")
    papers: list[PaperStance] = Field(default_factory=list, description="In order of relevance.")
    checked: int = Field(default=0, description="Papers judged.")
    timings: dict[str, float] = Field(default_factory=dict)

    def summary(self) -> dict[str, object]:
        """The documented JSON shape: claim, verdict, and each paper's id, title, stance, probability and quote."""
        return {
            "claim": self.claim,
            "verdict": self.verdict,
            "counts": dict(self.counts),
            "papers": [
                {
                    "paper_id": p.paper_id,
                    "title": p.title,
                    "stance": p.stance,
                    "probability": p.probability,
                    "quote": p.quote,
                    "span": list(p.span),
                }
                for p in self.papers
            ],
        }

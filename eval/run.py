"""Run an assistant over gold cases and score every answer: ``run_eval(assistant, cases) -> EvalReport``.

Single-paper questions are asked as they are (the assistant picks its own answer path); list and
comparison questions are asked with ``kind="list"`` / ``kind="compare"``; table cells are grouped by
their attribute list and answered by one ``Assistant.table(attributes)`` call per list, each cell then
looked up by paper id and attribute. A :class:`rag.RagError` is recorded on its row, never raised.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, Field

from rag import (
    Answer,
    AnswerEvent,
    Assistant,
    ErrorEvent,
    ItemEvent,
    QuestionKind,
    RagError,
    StatusEvent,
    TokenEvent,
)
from rag.evaluation import metrics as M
from rag.evaluation.dataset import CellCase, ComparisonCase, EvalCase, GoldCase, ListCase
from rag.evaluation.views import AnswerView, ask_with_kind, make_table, view_answer, view_table


class JudgeScore(BaseModel):
    """One judge metric for one answer: a value in [0, 1], or failed with the reason (never NaN)."""

    value: float | None = None
    failed: bool = False
    reason: str = ""


class Judge(Protocol):
    def __call__(self, question: str, answer: Answer) -> dict[str, JudgeScore]: ...


class SentenceRecord(BaseModel):
    text: str
    support: float
    supported: bool


class EvalRow(BaseModel):
    """Everything measured for one question (one repeat)."""

    case_id: str
    repeat: int = 0
    type: str
    answerable: bool
    question: str
    standalone_question: str = ""
    answer: str = ""
    refused: bool = True
    error: str | None = None
    gold_ids: list[str] = Field(default_factory=list)
    retrieved_ids: list[str] = Field(default_factory=list, description="Top 10 papers for the standalone question.")
    source_titles: list[str] = Field(default_factory=list)
    cited_ids: list[str] = Field(default_factory=list)
    recall_at_k: float | None = None
    mrr: float | None = None
    ndcg_at_10: float | None = None
    citation_precision: float | None = None
    citation_recall: float | None = None
    keyword_score: float | None = None
    correct: bool = False
    decision_correct: bool = False
    verdict_expected: str | None = Field(default=None, description="yesno: 'yes' or 'no' (the reference answer).")
    verdict: str | None = Field(default=None, description="yesno: the answer's verdict, or its first word.")
    supported_rate: float | None = None
    best_relevance: float | None = None
    names_source: bool = False
    sentences: list[SentenceRecord] = Field(default_factory=list)
    latency: float | None = None
    first_token: float | None = Field(default=None, description="From the start of generation (Answer.timings).")
    first_useful: float | None = Field(default=None, description="From the question to the sources on screen.")
    first_text: float | None = Field(default=None, description="From the question to the first words shown.")
    retrieval_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    judge: dict[str, JudgeScore] = Field(default_factory=dict)


class MetricValue(BaseModel):
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0


class ListRow(BaseModel):
    """One list / "how many" question: the papers returned vs the expected set."""

    case_id: str
    repeat: int = 0
    question: str
    answer: str = ""
    refused: bool = True
    error: str | None = None
    kind: str | None = Field(default=None, description="The answer path the assistant took.")
    returned_from: str = Field(
        default="items",
        description="'items' (a list answer), 'citations' (an answer of another kind) or 'none' (an error).",
    )
    returned_ids: list[str] = Field(default_factory=list)
    expected_ids: list[str] = Field(default_factory=list)
    borderline_ids: list[str] = Field(default_factory=list)
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    count_expected: int | None = None
    count_correct: bool | None = Field(default=None, description="Only for 'how many' questions.")
    checked: int | None = None
    collection_size: int | None = None
    latency: float | None = None
    first_item: float | None = Field(default=None, description="From the question to the first listed paper.")


class PaperCoverage(BaseModel):
    paper_id: str
    cited: bool
    covered: bool
    supported: bool = Field(default=False, description="A supported sentence cites the paper (keywords aside).")


class ComparisonRow(BaseModel):
    """One comparison question: is every named paper cited and described (its keywords)?"""

    case_id: str
    repeat: int = 0
    question: str
    answer: str = ""
    refused: bool = True
    error: str | None = None
    kind: str | None = None
    papers: list[PaperCoverage] = Field(default_factory=list)
    coverage: float = 0.0
    all_covered: bool = False
    all_supported: bool = False
    latency: float | None = None


class CellRow(BaseModel):
    """One gold table cell against the table the assistant built for its attribute list."""

    case_id: str
    repeat: int = 0
    attributes: list[str]
    attribute: str
    paper_id: str
    not_stated: bool
    value: str | None = None
    quote: str = ""
    row_found: bool = False
    correct: bool = False
    error: str | None = None


class UnsupportedValue(BaseModel):
    paper_id: str
    attribute: str
    value: str
    quote: str


class TableRun(BaseModel):
    """One ``Assistant.table`` call: size, latency and the values shown without a verbatim quote."""

    attributes: list[str]
    repeat: int = 0
    error: str | None = None
    rows: int = 0
    values: int = Field(default=0, description="Cells with a value (stated).")
    unsupported: list[UnsupportedValue] = Field(default_factory=list)
    checked: int | None = None
    collection_size: int | None = None
    latency: float | None = None


class EvalReport(BaseModel):
    """A run of one configuration over one gold set; ``model_dump_json()`` is the report.json entry."""

    label: str
    gold: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    k: int
    repeat: int = 1
    started: str = ""
    seconds: float = 0.0
    rows: list[EvalRow]
    lists: list[ListRow] = Field(default_factory=list)
    comparisons: list[ComparisonRow] = Field(default_factory=list)
    cells: list[CellRow] = Field(default_factory=list)
    tables: list[TableRun] = Field(default_factory=list)
    aggregate: dict[str, MetricValue] = Field(default_factory=dict)


@dataclass
class _Asked:
    answer: Answer | None
    error: str | None
    latency: float
    first_useful: float | None = None  # the sources and their quotes on screen (the StatusEvent)
    first_text: float | None = None  # the first words or the first listed paper


def _ask(assistant: Assistant, case: EvalCase) -> _Asked:
    return _stream(assistant, case.question, list(case.history) or None)


def _stream(
    assistant: Assistant, question: str, history: list[tuple[str, str]] | None = None, kind: QuestionKind | None = None
) -> _Asked:
    """Stream the answer as a user sees it, timing the first useful event and the first text."""
    t0 = time.perf_counter()
    first_useful: float | None = None
    first_text: float | None = None
    try:
        for event in assistant.stream(question, history=history, kind=kind):
            now = time.perf_counter() - t0
            if isinstance(event, StatusEvent) and first_useful is None:
                first_useful = now
            elif isinstance(event, TokenEvent | ItemEvent) and first_text is None:
                first_text = now
            elif isinstance(event, AnswerEvent):
                return _Asked(event.answer, None, now, first_useful, first_text or now)
            elif isinstance(event, ErrorEvent):
                raise event.error
    except RagError as e:
        return _Asked(None, f"{type(e).__name__}: {e}", time.perf_counter() - t0, first_useful, first_text)
    raise AssertionError("a stream ends with an AnswerEvent or an ErrorEvent")  # pragma: no cover


def grade_answer(case: EvalCase, text: str, verdict: str | None = None) -> bool:
    """An answer (not a refusal) to an answerable question is right when every keyword group is found
    and, for a ``yesno`` question, its verdict (``Answer.verdict``, else the first word) is the
    reference answer's Yes or No: "Yes, ..." to a No question is wrong whatever words follow."""
    if not M.answer_correct(text, case.answer_keywords):
        return False
    return case.type != "yesno" or verdict == case.expected_verdict


def score_case(assistant: Assistant, case: EvalCase, repeat: int = 0, judge: Judge | None = None) -> EvalRow:
    """Ask one question and compute its row (retrieval, citations, correctness, support, latency)."""
    k = assistant.settings.retrieval.k
    asked = _ask(assistant, case)
    answer, error, latency = asked.answer, asked.error, asked.latency
    row = EvalRow(
        case_id=case.id,
        repeat=repeat,
        type=case.type,
        answerable=case.answerable,
        question=case.question,
        gold_ids=list(case.supporting_ids),
        error=error,
        latency=latency,
    )
    standalone = answer.standalone_question if answer else case.question
    try:
        ranked = [h.paper_id for h in assistant.search(standalone, k=max(10, k))]
    except RagError:
        ranked = []
    row.standalone_question = standalone
    row.retrieved_ids = ranked[:10]
    gold = case.supporting_ids
    if gold:
        row.recall_at_k = M.recall_at(ranked, gold, k)
        row.mrr = M.reciprocal_rank(ranked, gold)
        row.ndcg_at_10 = M.ndcg_at(ranked, dict.fromkeys(gold, 1), 10)
    if answer is None:
        return row
    row.answer = answer.text
    row.refused = answer.refused
    row.source_titles = [s.title for s in answer.sources]
    row.cited_ids = list(dict.fromkeys(c.paper_id for c in answer.citations))
    row.best_relevance = max((s.dense_score for s in answer.sources if s.dense_score is not None), default=None)
    row.names_source = answer.names_source
    row.sentences = [SentenceRecord(text=s.text, support=s.support, supported=s.supported) for s in answer.sentences]
    row.supported_rate = M.supported_rate([s.supported for s in answer.sentences]) if not answer.refused else None
    row.first_token = answer.timings.get("first_token")
    row.first_useful, row.first_text = asked.first_useful, asked.first_text
    row.retrieval_s = answer.timings.get("retrieval")
    row.prompt_tokens = answer.tokens.get("prompt")
    row.completion_tokens = answer.tokens.get("completion")
    answered = not answer.refused
    if case.answerable:
        row.keyword_score = (
            M.keyword_score(answer.text, case.answer_keywords) if answered else 0.0 if case.answer_keywords else None
        )
        row.verdict_expected = case.expected_verdict
        row.verdict = M.answer_verdict(answer.text, view_answer(answer).verdict) if case.type == "yesno" else None
        row.correct = answered and grade_answer(case, answer.text, row.verdict)
        row.decision_correct = row.correct
        if answered:
            row.citation_precision = M.citation_precision(row.cited_ids, gold)
            row.citation_recall = M.citation_recall(row.cited_ids, gold)
    else:
        row.decision_correct = not answered
    if judge is not None and answered:
        try:
            row.judge = judge(standalone, answer)
        except Exception as e:  # a judge is an external service; its failure must not end the run
            row.judge = {"judge": JudgeScore(failed=True, reason=f"{type(e).__name__}: {e}")}
    return row


def _timed(f: Callable[[], Any]) -> tuple[Any, str | None, float]:
    t0 = time.perf_counter()
    try:
        return f(), None, time.perf_counter() - t0
    except RagError as e:
        return None, f"{type(e).__name__}: {e}", time.perf_counter() - t0


def score_list_case(assistant: Assistant, case: ListCase, repeat: int = 0) -> ListRow:
    """Ask a list question with ``kind="list"`` and score the papers it returns against the expected set.

    The returned papers are the answer's ``items``; an answer of another kind (an assistant that
    answered it as a lookup) is scored by the papers it cites instead, and the row says so.
    """
    asked = _stream(assistant, case.question, kind="list")
    answer, error, latency = asked.answer, asked.error, asked.latency
    row = ListRow(
        first_item=asked.first_text if answer is not None and answer.items else None,
        case_id=case.id,
        repeat=repeat,
        question=case.question,
        error=error,
        latency=latency,
        expected_ids=list(case.expected_ids),
        borderline_ids=list(case.borderline_ids),
        count_expected=case.count,
    )
    view = view_answer(answer) if answer is not None else AnswerView(text="", refused=True)
    row.answer, row.refused, row.kind = view.text, view.refused, view.kind
    row.checked, row.collection_size = view.checked, view.collection_size
    if error is not None:
        row.returned_from = "none"
    elif view.kind in (None, "list") and (view.items or view.kind == "list"):
        row.returned_ids = list(dict.fromkeys(i.paper_id for i in view.items))
    else:
        row.returned_from = "citations"
        row.returned_ids = list(dict.fromkeys(c.paper_id for c in view.citations))
    if error is None:
        row.precision, row.recall, row.f1 = M.list_scores(row.returned_ids, case.expected_ids, case.borderline_ids)
    else:  # no answer: no credit, and precision stays undefined
        row.recall, row.f1 = (0.0 if case.expected_ids else None), 0.0
    if case.count is not None:
        row.count_correct = error is None and M.count_correct(
            len(row.returned_ids), case.count, len(case.borderline_ids)
        )
    return row


def score_comparison_case(assistant: Assistant, case: ComparisonCase, repeat: int = 0) -> ComparisonRow:
    """Ask a comparison with ``kind="compare"``; each named paper is covered when a supported sentence
    cites it and the sentences citing it hold all its keyword groups (:func:`metrics.comparison_coverage`)."""
    answer, error, latency = _timed(lambda: ask_with_kind(assistant, case.question, "compare"))
    row = ComparisonRow(case_id=case.id, repeat=repeat, question=case.question, error=error, latency=latency)
    view = view_answer(answer) if answer is not None else AnswerView(text="", refused=True)
    row.answer, row.refused, row.kind = view.text, view.refused, view.kind
    citations = [(c.n, c.paper_id) for c in view.citations]
    covered = M.comparison_coverage(
        [(p.paper_id, p.answer_keywords) for p in case.papers],
        citations,
        [(s.text, s.citations, s.supported) for s in view.sentences],
    )
    supported = M.supported_citations(
        [p.paper_id for p in case.papers], citations, [(s.text, s.citations, s.supported) for s in view.sentences]
    )
    cited = {pid for _, pid in citations}
    row.papers = [
        PaperCoverage(paper_id=p.paper_id, cited=p.paper_id in cited, covered=c, supported=sup)
        for p, c, sup in zip(case.papers, covered, supported)
    ]
    row.coverage = sum(covered) / len(covered)
    row.all_covered = all(covered)
    row.all_supported = all(supported)
    return row


def score_cells(
    assistant: Assistant, cells: Sequence[CellCase], abstracts: dict[str, str], repeat: int = 0
) -> tuple[TableRun, list[CellRow]]:
    """One ``Assistant.table`` call for the attribute list the ``cells`` share; every gold cell looked
    up by paper id and attribute, and every value the table shows checked for a verbatim quote."""
    attributes = list(cells[0].attributes)
    table, error, latency = _timed(lambda: make_table(assistant, attributes))
    run = TableRun(attributes=attributes, repeat=repeat, error=error, latency=latency)
    view = view_table(table) if table is not None else None
    if view is not None:
        run.rows, run.checked, run.collection_size = len(view.rows), view.checked, view.collection_size
        for r in view.rows:
            for c in r.cells:
                if c.value is None:
                    continue
                run.values += 1
                titled = c.quote.strip() != "" and " ".join(c.quote.split()) == " ".join(r.title.split())
                if not (titled or M.value_supported(c.quote, abstracts.get(r.paper_id, ""))):
                    run.unsupported.append(
                        UnsupportedValue(paper_id=r.paper_id, attribute=c.attribute, value=c.value, quote=c.quote)
                    )
    rows = []
    for case in cells:
        abstract = abstracts.get(case.paper_id, "")
        row = CellRow(
            case_id=case.id,
            repeat=repeat,
            attributes=attributes,
            attribute=case.attribute,
            paper_id=case.paper_id,
            not_stated=case.not_stated,
            error=error,
        )
        found = view.row(case.paper_id) if view is not None else None
        cell = found.cell(case.attribute) if found is not None else None
        row.row_found = found is not None
        if cell is not None:
            row.value, row.quote = cell.value, cell.quote
        if error is None:
            row.correct = M.cell_correct(
                row.value,
                not_stated=case.not_stated,
                value_keywords=case.value_keywords,
                value_span=M.value_span(abstract, row.value, row.quote) if row.value else None,
                support_span=M.find_span(abstract, case.support) if case.support else None,
                abstract=abstract,
            )
        rows.append(row)
    return run, rows


def _metric(values: Sequence[float | None], seed: int = 0) -> MetricValue:
    vals = [v for v in values if v is not None]
    lo, hi = M.bootstrap_ci(vals, seed=seed)
    return MetricValue(value=M.mean(vals), ci_low=lo, ci_high=hi, n=len(vals))


def _latency(out: dict[str, MetricValue], prefix: str, values: Sequence[float | None], seed: int) -> None:
    lat = [v for v in values if v is not None]
    for q in (50, 95):
        lo, hi = M.bootstrap_ci(lat, stat=functools.partial(M.percentile, q=q), seed=seed)
        out[f"{prefix}latency_p{q}_s"] = MetricValue(value=M.percentile(lat, q), ci_low=lo, ci_high=hi, n=len(lat))


def aggregate(rows: Sequence[EvalRow], seed: int = 0) -> dict[str, MetricValue]:
    """Means with bootstrap 95 % CIs (resampling questions, fixed seed), LitQA2 abstention scores,
    latency percentiles and token means. Undefined metrics are ``None``, never NaN."""

    def m(values: Sequence[float | None]) -> MetricValue:
        return _metric(values, seed)

    ans = [r for r in rows if r.answerable]
    out: dict[str, MetricValue] = {
        "recall@k": m([r.recall_at_k for r in ans]),
        "mrr": m([r.mrr for r in ans]),
        "ndcg@10": m([r.ndcg_at_10 for r in ans]),
        "citation_precision": m([r.citation_precision for r in ans]),
        "citation_recall": m([r.citation_recall for r in ans]),
        "keyword_score": m([r.keyword_score for r in ans]),
        "supported_sentence_rate": m([r.supported_rate for r in rows]),
    }
    # LitQA2-style: each is a mean of a per-question indicator over the right population, so it gets a CI too
    answered = [r for r in rows if not r.refused]
    out["precision"] = m([float(r.answerable and r.correct) for r in answered])
    out["accuracy"] = m([float(r.correct) for r in ans])
    out["coverage"] = m([float(not r.refused) for r in rows])
    out["refusal_recall"] = m([float(r.refused) for r in rows if not r.answerable])
    out["false_refusal_rate"] = m([float(r.refused) for r in ans])
    out["decision_accuracy"] = m([float(r.decision_correct) for r in rows])
    out["yesno_verdict_accuracy"] = m(
        [float(r.verdict == r.verdict_expected) for r in ans if r.verdict_expected is not None]
    )
    out["errors"] = MetricValue(value=float(sum(r.error is not None for r in rows)), n=len(rows))
    _latency(out, "", [r.latency for r in rows], seed)
    _latency(out, "first_useful_", [r.first_useful for r in rows], seed)
    _latency(out, "first_text_", [r.first_text for r in rows], seed)
    out["prompt_tokens"] = m([float(r.prompt_tokens) for r in rows if r.prompt_tokens is not None])
    out["completion_tokens"] = m([float(r.completion_tokens) for r in rows if r.completion_tokens is not None])
    names = sorted({name for r in rows for name in r.judge})
    for name in names:
        scores = [r.judge[name] for r in rows if name in r.judge]
        out[f"judge_{name}"] = m([s.value for s in scores if not s.failed])
        out[f"judge_{name}_failed"] = MetricValue(value=float(sum(s.failed for s in scores)), n=len(scores))
    return out


def aggregate_cross(
    lists: Sequence[ListRow] = (),
    comparisons: Sequence[ComparisonRow] = (),
    cells: Sequence[CellRow] = (),
    tables: Sequence[TableRun] = (),
    seed: int = 0,
) -> dict[str, MetricValue]:
    """Macro averages (bootstrap 95 % CIs over questions, or cells) of the list, comparison and table
    scores; only the sections that have rows appear."""
    out: dict[str, MetricValue] = {}
    if lists:
        out["list_precision"] = _metric([r.precision for r in lists], seed)
        out["list_recall"] = _metric([r.recall for r in lists], seed)
        out["list_f1"] = _metric([r.f1 for r in lists], seed)
        out["count_accuracy"] = _metric([float(r.count_correct) for r in lists if r.count_correct is not None], seed)
        out["list_judged_share"] = _metric(
            [r.checked / r.collection_size for r in lists if r.checked is not None and r.collection_size], seed
        )
        out["list_errors"] = MetricValue(value=float(sum(r.error is not None for r in lists)), n=len(lists))
        _latency(out, "list_", [r.latency for r in lists], seed)
        _latency(out, "list_first_item_", [r.first_item for r in lists], seed)
    if comparisons:
        out["comparison_coverage"] = _metric([r.coverage for r in comparisons], seed)
        out["comparison_all_covered"] = _metric([float(r.all_covered) for r in comparisons], seed)
        out["comparison_all_cited"] = _metric([float(r.all_supported) for r in comparisons], seed)
        out["comparison_errors"] = MetricValue(
            value=float(sum(r.error is not None for r in comparisons)), n=len(comparisons)
        )
        _latency(out, "comparison_", [r.latency for r in comparisons], seed)
    if cells:
        out["cell_accuracy"] = _metric([float(r.correct) for r in cells], seed)
        out["cell_accuracy_stated"] = _metric([float(r.correct) for r in cells if not r.not_stated], seed)
        out["cell_accuracy_not_stated"] = _metric([float(r.correct) for r in cells if r.not_stated], seed)
    if tables:
        shown = sum(t.values for t in tables)
        out["unsupported_values"] = MetricValue(value=float(sum(len(t.unsupported) for t in tables)), n=shown)
        out["table_errors"] = MetricValue(value=float(sum(t.error is not None for t in tables)), n=len(tables))
        _latency(out, "table_", [t.latency for t in tables], seed)
    return out


G = TypeVar("G", EvalCase, ListCase, ComparisonCase, CellCase)


def _only(cases: Sequence[GoldCase], kind: type[G]) -> list[G]:
    return [c for c in cases if isinstance(c, kind)]


def run_eval(
    assistant: Assistant,
    cases: Sequence[GoldCase],
    repeat: int = 1,
    progress: Callable[[int, int], None] | None = None,
    judge: Judge | None = None,
    label: str = "default",
    gold: str = "",
) -> EvalReport:
    """Ask every case ``repeat`` times through the public API and score the answers.

    ``cases`` must already carry paper ids (:func:`rag.evaluation.dataset.resolve_cases`). A question that
    raises a :class:`rag.RagError` is recorded as an error row (refused, not correct), not raised.
    Progress counts questions and table calls.
    """
    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    single, lists, comps = _only(cases, EvalCase), _only(cases, ListCase), _only(cases, ComparisonCase)
    groups: dict[tuple[str, ...], list[CellCase]] = {}
    for cell in _only(cases, CellCase):
        groups.setdefault(tuple(cell.attributes), []).append(cell)
    abstracts = {p.paper_id: p.abstract for p in assistant.papers()} if groups else {}
    report = EvalReport(
        label=label,
        gold=gold,
        settings=assistant.settings.masked(),
        k=assistant.settings.retrieval.k,
        repeat=repeat,
        started=started,
        rows=[],
    )
    done, total = 0, (len(single) + len(lists) + len(comps) + len(groups)) * repeat

    def step() -> None:
        nonlocal done
        done += 1
        if progress:
            progress(done, total)

    for rep in range(repeat):
        for case in single:
            report.rows.append(score_case(assistant, case, rep, judge))
            step()
        for lcase in lists:
            report.lists.append(score_list_case(assistant, lcase, rep))
            step()
        for ccase in comps:
            report.comparisons.append(score_comparison_case(assistant, ccase, rep))
            step()
        for group in groups.values():
            run, cell_rows = score_cells(assistant, group, abstracts, rep)
            report.tables.append(run)
            report.cells.extend(cell_rows)
            step()
    report.seconds = time.perf_counter() - t0
    report.aggregate = (aggregate(report.rows) if report.rows else {}) | aggregate_cross(
        report.lists, report.comparisons, report.cells, report.tables
    )
    return report

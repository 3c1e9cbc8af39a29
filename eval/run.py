"""Run an assistant over gold cases and score every answer: ``run_eval(assistant, cases) -> EvalReport``."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from pydantic import BaseModel, Field

from rag import Answer, Assistant, RagError
from rag.evaluation import metrics as M
from rag.evaluation.dataset import EvalCase


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
    supported_rate: float | None = None
    best_relevance: float | None = None
    names_source: bool = False
    sentences: list[SentenceRecord] = Field(default_factory=list)
    latency: float | None = None
    first_token: float | None = None
    retrieval_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    judge: dict[str, JudgeScore] = Field(default_factory=dict)


class MetricValue(BaseModel):
    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0


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
    aggregate: dict[str, MetricValue] = Field(default_factory=dict)


def _ask(assistant: Assistant, case: EvalCase) -> tuple[Answer | None, str | None, float]:
    t0 = time.perf_counter()
    try:
        return assistant.ask(case.question, history=list(case.history) or None), None, time.perf_counter() - t0
    except RagError as e:
        return None, f"{type(e).__name__}: {e}", time.perf_counter() - t0


def score_case(assistant: Assistant, case: EvalCase, repeat: int = 0, judge: Judge | None = None) -> EvalRow:
    """Ask one question and compute its row (retrieval, citations, correctness, support, latency)."""
    k = assistant.settings.retrieval.k
    answer, error, latency = _ask(assistant, case)
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
    row.retrieval_s = answer.timings.get("retrieval")
    row.prompt_tokens = answer.tokens.get("prompt")
    row.completion_tokens = answer.tokens.get("completion")
    answered = not answer.refused
    if case.answerable:
        row.keyword_score = (
            M.keyword_score(answer.text, case.answer_keywords) if answered else 0.0 if case.answer_keywords else None
        )
        row.correct = answered and M.answer_correct(answer.text, case.answer_keywords)
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


def aggregate(rows: Sequence[EvalRow], seed: int = 0) -> dict[str, MetricValue]:
    """Means with bootstrap 95 % CIs (resampling questions, fixed seed), LitQA2 abstention scores,
    latency percentiles and token means. Undefined metrics are ``None``, never NaN."""

    def m(values: Sequence[float | None]) -> MetricValue:
        vals = [v for v in values if v is not None]
        lo, hi = M.bootstrap_ci(vals, seed=seed)
        return MetricValue(value=M.mean(vals), ci_low=lo, ci_high=hi, n=len(vals))

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
    out["errors"] = MetricValue(value=float(sum(r.error is not None for r in rows)), n=len(rows))
    lat = [r.latency for r in rows if r.latency is not None]
    for q in (50, 95):
        lo, hi = M.bootstrap_ci(lat, stat=functools.partial(M.percentile, q=q), seed=seed)
        out[f"latency_p{q}_s"] = MetricValue(value=M.percentile(lat, q), ci_low=lo, ci_high=hi, n=len(lat))
    out["prompt_tokens"] = m([float(r.prompt_tokens) for r in rows if r.prompt_tokens is not None])
    out["completion_tokens"] = m([float(r.completion_tokens) for r in rows if r.completion_tokens is not None])
    names = sorted({name for r in rows for name in r.judge})
    for name in names:
        scores = [r.judge[name] for r in rows if name in r.judge]
        out[f"judge_{name}"] = m([s.value for s in scores if not s.failed])
        out[f"judge_{name}_failed"] = MetricValue(value=float(sum(s.failed for s in scores)), n=len(scores))
    return out


def run_eval(
    assistant: Assistant,
    cases: Sequence[EvalCase],
    repeat: int = 1,
    progress: Callable[[int, int], None] | None = None,
    judge: Judge | None = None,
    label: str = "default",
    gold: str = "",
) -> EvalReport:
    """Ask every case ``repeat`` times through the public API and score the answers.

    ``cases`` must already carry paper ids (:func:`rag.evaluation.dataset.resolve_cases`). A question that
    raises a :class:`rag.RagError` is recorded as an error row (refused, not correct), not raised.
    """
    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    rows: list[EvalRow] = []
    total = len(cases) * repeat
    for rep in range(repeat):
        for case in cases:
            rows.append(score_case(assistant, case, rep, judge))
            if progress:
                progress(len(rows), total)
    return EvalReport(
        label=label,
        gold=gold,
        settings=assistant.settings.masked(),
        k=assistant.settings.retrieval.k,
        repeat=repeat,
        started=started,
        seconds=time.perf_counter() - t0,
        rows=rows,
        aggregate=aggregate(rows),
    )

"""The textbook LangChain RAG chain, run beside ours: ``rag eval GOLD --baseline textbook``.

It is what the LangChain RAG tutorial builds, over the same papers and with the same models as the
assistant it is compared with: ``RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=200)``
over the abstracts, ``langchain_chroma.Chroma.from_documents`` in a temporary directory with
``assistant.embeddings``, a retriever with k = 4, the tutorial prompt (:data:`TEMPLATE`, LangChain hub
``rlm/rag-prompt``), ``assistant.chat_model()`` and a string parser, composed in LCEL. It has no
citations, no verification, no conversation memory (a follow-up is asked without its history) and
no abstention beyond what the prompt asks: its answer counts as a refusal when it says it doesn't
know (:func:`says_dont_know`).

:func:`run_baseline` asks it the single-paper gold questions and scores the answers with the same
scorer as ours (:func:`rag.evaluation.run.grade_answer`), into an :class:`~rag.evaluation.run.EvalReport`
whose rows have retrieval scores over its 4 chunks' papers and no citation scores.
:func:`compare_with_baseline` puts the two side by side against the issue's targets: ours at least as
accurate, ours refusing what the baseline invents, ours at most half its median latency.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableParallel, RunnablePassthrough
from pydantic import BaseModel

from rag import Assistant, ConfigError, Paper
from rag.evaluation import metrics as M
from rag.evaluation.dataset import EvalCase
from rag.evaluation.report import fmt
from rag.evaluation.run import EvalReport, EvalRow, MetricValue, aggregate, grade_answer

BASELINES = ("textbook",)
TEMPLATE = (
    "Use the following pieces of retrieved context to answer the question. If you don't know the answer, just say "
    "that you don't know. Use three sentences maximum and keep the answer concise.\n\n"
    "Question: {question}\nContext: {context}\nAnswer:"
)
CHUNK_SIZE = 1000
CHUNK_OVERLAP = 200
K = 4

# "I don't know" and the ways a small model says the context lacks the answer
_DONT_KNOW = re.compile(
    r"\b(don't|do not|doesn't|does not|cannot|can't|unable to)\s+(know|answer|say|determine|tell|find|"
    r"mention|provide|contain|specify|state|include)\b"
    r"|\bnot (mentioned|provided|specified|stated|given|available|included|discussed)\b"
    r"|\bno (information|mention|details?)\b",
    re.I,
)


def says_dont_know(text: str) -> bool:
    """The baseline's refusal: an empty answer, or one that says it doesn't know / the context doesn't say."""
    return not text.strip() or bool(_DONT_KNOW.search(text))


def format_docs(docs: Sequence[Document]) -> str:
    return "\n\n".join(d.page_content for d in docs)


def split_papers(papers: Sequence[Paper]) -> list[Document]:
    """The papers as the tutorial indexes them: ``RecursiveCharacterTextSplitter(1000, 200)`` chunks."""
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter  # optional: the [eval] extra
    except ImportError as e:  # an optional extra: name the fix
        raise ConfigError(
            "the textbook baseline needs langchain-text-splitters: pip install 'rag-abstracts[eval]'"
        ) from e
    docs = [Document(page_content=p.abstract, metadata={"paper_id": p.paper_id, "title": p.title}) for p in papers]
    splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=CHUNK_OVERLAP)
    return splitter.split_documents(docs)


@dataclass(frozen=True)
class BaselineAnswer:
    text: str
    paper_ids: list[str]
    """Papers of the retrieved chunks, best first, each once."""
    latency: float


class TextbookChain:
    """The tutorial chain over one Chroma collection (built by :func:`textbook_chain`)."""

    def __init__(self, chain: Runnable[str, dict[str, Any]], chunks: int, index_s: float) -> None:
        self.chain = chain
        self.chunks = chunks
        self.index_s = index_s

    def ask(self, question: str) -> BaselineAnswer:
        """One question through the whole chain (retrieval + LLM), timed."""
        t0 = time.perf_counter()
        out = self.chain.invoke(question)
        latency = time.perf_counter() - t0
        ids = [str(d.metadata.get("paper_id", "")) for d in out["docs"]]
        return BaselineAnswer(text=str(out["answer"]), paper_ids=list(dict.fromkeys(ids)), latency=latency)


@contextmanager
def textbook_chain(
    papers: Sequence[Paper], embeddings: Embeddings, chat_model: BaseChatModel, k: int = K
) -> Iterator[TextbookChain]:
    """Index ``papers`` the tutorial's way in a temporary directory (removed on exit) and yield the chain."""
    import chromadb  # optional heavy dependency: ~1 s, only when the baseline runs
    from langchain_chroma import Chroma  # optional heavy dependency: the [eval] extra

    splits = split_papers(papers)
    prompt = ChatPromptTemplate.from_messages([("human", TEMPLATE)])
    with tempfile.TemporaryDirectory(prefix="rag-textbook-") as tmp:
        t0 = time.perf_counter()
        store = Chroma.from_documents(
            documents=splits,
            embedding=embeddings,
            collection_name="textbook",
            persist_directory=str(Path(tmp) / "chroma"),
            client_settings=chromadb.config.Settings(anonymized_telemetry=False),
        )
        index_s = time.perf_counter() - t0
        retriever = store.as_retriever(search_kwargs={"k": k})
        # the tutorial's chain, keeping the retrieved documents beside the answer (LangChain's "with sources")
        with_context = RunnablePassthrough.assign(context=lambda x: format_docs(x["docs"]))
        answer = with_context | prompt | chat_model | StrOutputParser()
        chain = RunnableParallel(docs=retriever, question=RunnablePassthrough()) | RunnablePassthrough.assign(
            answer=answer
        )
        try:
            yield TextbookChain(chain, len(splits), index_s)
        finally:
            store.delete_collection()


def score_baseline_case(chain: TextbookChain, case: EvalCase, repeat: int = 0) -> EvalRow:
    """Ask one question (without its history) and score it as ours is scored; retrieval over its k chunks."""
    answer = chain.ask(case.question)
    refused = says_dont_know(answer.text)
    row = EvalRow(
        case_id=case.id,
        repeat=repeat,
        type=case.type,
        answerable=case.answerable,
        question=case.question,
        standalone_question=case.question,
        answer=answer.text,
        refused=refused,
        gold_ids=list(case.supporting_ids),
        retrieved_ids=answer.paper_ids,
        latency=answer.latency,
    )
    gold = case.supporting_ids
    if gold:
        row.recall_at_k = M.recall_at(answer.paper_ids, gold, len(answer.paper_ids) or 1)
        row.mrr = M.reciprocal_rank(answer.paper_ids, gold)
        row.ndcg_at_10 = M.ndcg_at(answer.paper_ids, dict.fromkeys(gold, 1), 10)
    if case.answerable:
        row.keyword_score = M.keyword_score(answer.text, case.answer_keywords) if not refused else 0.0
        row.verdict_expected = case.expected_verdict
        row.verdict = M.answer_verdict(answer.text) if case.type == "yesno" else None
        row.correct = not refused and grade_answer(case, answer.text, row.verdict)
        row.decision_correct = row.correct
    else:
        row.decision_correct = refused
    return row


def run_baseline(
    assistant: Assistant,
    cases: Sequence[EvalCase],
    name: str = "textbook",
    repeat: int = 1,
    progress: Callable[[int, int], None] | None = None,
    gold: str = "",
) -> EvalReport:
    """Ask ``cases`` through the textbook chain over ``assistant``'s papers, embeddings and chat model."""
    if name not in BASELINES:
        raise ConfigError(f"unknown baseline {name!r}: choose one of {', '.join(BASELINES)}")
    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%S")
    rows: list[EvalRow] = []
    with textbook_chain(assistant.papers(), assistant.embeddings, assistant.chat_model()) as chain:
        for rep in range(repeat):
            for case in cases:
                rows.append(score_baseline_case(chain, case, rep))
                if progress:
                    progress(len(rows), len(cases) * repeat)
        settings: dict[str, Any] = {
            "baseline": name,
            "chunk_size": CHUNK_SIZE,
            "chunk_overlap": CHUNK_OVERLAP,
            "k": K,
            "chunks": chain.chunks,
            "index_s": chain.index_s,
            "prompt": TEMPLATE,
        }
    return EvalReport(
        label=name,
        gold=gold,
        settings=settings,
        k=K,
        repeat=repeat,
        started=started,
        seconds=time.perf_counter() - t0,
        rows=rows,
        aggregate=aggregate(rows),
    )


class SideBySide(BaseModel):
    """Ours vs the baseline on the same single-paper questions; dict keys are "ours" and "baseline"."""

    ours: str
    baseline: str
    questions: int
    accuracy: dict[str, MetricValue]
    accuracy_delta: dict[str, float | None]
    """ours - baseline over the same answerable questions, paired bootstrap 95 % CI."""
    unanswerable: int
    invented: dict[str, int]
    """Unanswerable questions each answered instead of refusing."""
    baseline_inventions_refused_by_ours: int
    latency_p50_s: dict[str, MetricValue]
    latency_p95_s: dict[str, MetricValue]
    latency_ratio_p50: float | None
    """ours p50 / baseline p50."""
    followups_without_history: int
    """Follow-up questions the baseline (no memory) was asked without their conversation."""
    targets: dict[str, bool | None]


def compare_with_baseline(ours: EvalReport, base: EvalReport, followups: int = 0) -> SideBySide:
    """The side-by-side numbers over the (question, repeat) pairs both runs have. ``targets``: accuracy
    ours >= baseline, every unanswerable question the baseline answered refused by ours, ours' p50
    latency <= 0.5 x the baseline's (None: undefined)."""
    key = {(r.case_id, r.repeat): r for r in ours.rows}
    pairs = [(key[(b.case_id, b.repeat)], b) for b in base.rows if (b.case_id, b.repeat) in key]
    d, lo, hi = M.paired_bootstrap_delta(
        [float(b.correct) if b.answerable else None for _, b in pairs],
        [float(o.correct) if o.answerable else None for o, _ in pairs],
    )
    unans = [(o, b) for o, b in pairs if not o.answerable]
    invented = {"ours": sum(not o.refused for o, _ in unans), "baseline": sum(not b.refused for _, b in unans)}
    caught = sum(o.refused for o, b in unans if not b.refused)
    runs = {"ours": ours, "baseline": base}
    acc = {k: r.aggregate["accuracy"] for k, r in runs.items()}
    p50 = {k: r.aggregate["latency_p50_s"] for k, r in runs.items()}
    p50_ours, p50_base = p50["ours"].value, p50["baseline"].value
    ratio = p50_ours / p50_base if p50_ours is not None and p50_base else None
    a_ours, a_base = acc["ours"].value, acc["baseline"].value
    return SideBySide(
        ours=ours.label,
        baseline=base.label,
        questions=len(pairs),
        accuracy=acc,
        accuracy_delta={"delta": d, "ci_low": lo, "ci_high": hi},
        unanswerable=len(unans),
        invented=invented,
        baseline_inventions_refused_by_ours=caught,
        latency_p50_s=p50,
        latency_p95_s={k: r.aggregate["latency_p95_s"] for k, r in runs.items()},
        latency_ratio_p50=ratio,
        followups_without_history=followups,
        targets={
            "accuracy_at_least_baseline": None if a_ours is None or a_base is None else a_ours >= a_base,
            "refuses_what_baseline_invents": caught == invented["baseline"],
            "latency_p50_at_most_half": None if ratio is None else ratio <= 0.5,
        },
    )


def render_side_by_side(s: SideBySide) -> str:
    """The Markdown section of report.md."""

    def mv(x: MetricValue) -> str:
        return f"{fmt(x.value)} [{fmt(x.ci_low)}, {fmt(x.ci_high)}] (n={x.n})"

    def ok(x: bool | None) -> str:
        return "n/a" if x is None else "yes" if x else "**no**"

    d = s.accuracy_delta
    lines = [
        f"## Baseline: {s.baseline} chain vs {s.ours} (same model, same {s.questions} questions, one run)",
        "",
        f"| metric | {s.ours} | {s.baseline} | target | met |",
        "|---|---|---|---|---|",
        f"| accuracy (answerable) | {mv(s.accuracy['ours'])} | {mv(s.accuracy['baseline'])} | ours >= baseline "
        f"(delta {fmt(d['delta'])} [{fmt(d['ci_low'])}, {fmt(d['ci_high'])}]) | "
        f"{ok(s.targets['accuracy_at_least_baseline'])} |",
        f"| unanswerable answered (inventions) | {s.invented['ours']} of {s.unanswerable} | "
        f"{s.invented['baseline']} of {s.unanswerable} | ours refuses the baseline's "
        f"({s.baseline_inventions_refused_by_ours} of {s.invented['baseline']} refused) | "
        f"{ok(s.targets['refuses_what_baseline_invents'])} |",
        f"| latency p50 (s) | {mv(s.latency_p50_s['ours'])} | {mv(s.latency_p50_s['baseline'])} | "
        f"ours <= 0.5 x baseline (ratio {fmt(s.latency_ratio_p50, 2)}) | {ok(s.targets['latency_p50_at_most_half'])} |",
        f"| latency p95 (s) | {mv(s.latency_p95_s['ours'])} | {mv(s.latency_p95_s['baseline'])} | | |",
        "",
        f"The {s.baseline} chain has no conversation memory: {s.followups_without_history} follow-up question(s) "
        "were asked to it without their history. Its refusal is an answer saying it doesn't know.",
    ]
    return "\n".join(lines)

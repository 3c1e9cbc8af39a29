"""The answer paths' shared machinery: from a question to the evidence every path reads.

question -> (condense with history) -> retrieval -> numbered evidence (the most relevant sentences,
fitted to a token budget) -> the prompt. :meth:`AnswerPipeline.prepare` does these steps once for every
question and returns a :class:`Prepared`; the question's kind then picks the path (rag.answering.paths)
that calls the LLM, verifies (rag.answering.verify) and builds the :class:`~rag.types.Answer`
(rag.answering.answers).

The model only writes prose. Our code numbers the evidence, drops markers that resolve to nothing,
attaches or corrects citations by measured support, and decides to abstain.

Abstracts are untrusted data. Sentences that instruct the assistant (rag.answering.verify.is_instruction) or
repeat our refusal sentence are not evidence; what is shown is put on one line per source with
citation-like brackets, chat-template tokens and our prompt's labels defused (:func:`neutralise`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from rag.answering.evidence import NO_ANSWER, SentenceScorer, format_evidence, select_evidence
from rag.answering.history import fallback_condense, normalise_history
from rag.answering.kinds import classify_question
from rag.answering.names import mentions_paper, named_first, names_paper
from rag.answering.prompts import load_prompt
from rag.answering.reasoning import split_reasoning
from rag.answering.stance import StanceJudge, head_for
from rag.answering.verify import Embed, Evidence, SentenceVerdict
from rag.corpus.chunking import chunk_paper, count_tokens
from rag.corpus.tokens import key_terms
from rag.errors import RagError
from rag.events import StepEvent
from rag.settings import Settings
from rag.types import Citation, Paper, Query, QuestionKind, Quote, SearchHit

# Answers read the top k papers of a retrieval this many times deeper, with the papers the question names moved
# to the front (named_first): the deeper retrieval fuses the same candidate lists, so it costs ~nothing more.
NAMED_POOL = 3


@dataclass(kw_only=True)
class Prepared:
    """Everything decided before the LLM is called."""

    question: str
    standalone: str
    hits: list[SearchHit]
    evidence: list[Evidence] = field(default_factory=list)
    messages: list[BaseMessage] = field(default_factory=list)
    refuse_reason: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    prompt_tokens: int = 0
    llm_error: Exception | None = None  # the condense call failed (the fallback rewrite was used)
    names_source: bool = (
        False  # the question names a retrieved paper (it passes the relevance gate whatever its cosine)
    )
    shown: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # source n -> sentence spans shown
    kind: QuestionKind = "lookup"

    def quotes(self) -> list[Quote]:
        """The sentences shown to the model, numbered like the sources."""
        return [
            Quote(n=ev.n, paper_id=ev.paper_id, title=ev.title, text=ev.sentence(span), span=span)
            for ev in self.evidence
            for span in self.shown.get(ev.n, [])
        ]


@dataclass(frozen=True, kw_only=True)
class Preparation:
    """How :meth:`AnswerPipeline.prepare` readies a question of one kind: each answer path says (its
    ``preparation``, see rag.answering.answers.AnswerPath), and the Assistant hands them to the pipeline."""

    #: the path chooses its own papers and evidence (a list, a comparison): prepare stops once the kind is known
    own_papers: bool = False
    #: the prompt the evidence is put in: the written answer's, or the one-token yes/no judgement's (which
    #: reads a smaller share of evidence, settings.answer.yesno_context_tokens)
    prompt: Literal["answer", "yesno"] = "answer"


@dataclass(frozen=True, kw_only=True)
class LLMFailures:
    """How an LLM failure is told apart and described, injected by the Assistant: only rag.models knows the endpoint."""

    #: the error as the user reads it (no secrets)
    describe: Callable[[Exception], RagError]
    #: True when the endpoint itself failed (after the client's retries): asking it again would only wait again
    is_down: Callable[[Exception], bool]
    #: True (after a restart) when the embedded llama.cpp server had died; False for remote endpoints
    restarted: Callable[[], bool]


class AnswerPipeline:
    """The shared steps of every answer path. ``retrieve(question, k, where, mode)`` and ``embed(texts)`` are
    injected, and so are ``count_papers(where)`` (the size of a list's collection), ``cpu`` (held while a
    question's own CPU work runs), ``failures`` (see :class:`LLMFailures`) and ``preparations`` (see
    :class:`Preparation`)."""

    def __init__(
        self,
        settings: Settings,
        retrieve: Callable[[str, int | None, dict[str, Any] | None, Any], list[SearchHit]],
        embed: Embed,
        chat_model: Callable[[], BaseChatModel],
        containing: Callable[[str, Sequence[str], int, dict[str, Any] | None], list[SearchHit]] | None = None,
        *,
        count_papers: Callable[[dict[str, Any] | None], int] | None = None,
        cpu: contextlib.AbstractContextManager[Any] | None = None,
        failures: LLMFailures | None = None,
        preparations: Mapping[str, Preparation] | None = None,
        judge_embed: Embed | None = None,
    ) -> None:
        self.settings = settings
        self.retrieve = retrieve
        #: ``containing(query, terms, n, where)``: papers whose text has one of ``terms`` (a list question's
        #: names: every paper that names KITTI is a candidate, wherever retrieval ranks it)
        self.containing = containing or (lambda _q, _t, _n, _w: [])
        self.count_papers = count_papers or (lambda _w: 0)
        self.cpu = cpu if cpu is not None else contextlib.nullcontext()
        self.failures = failures or LLMFailures(
            describe=_as_rag_error, is_down=lambda _e: False, restarted=lambda: False
        )
        #: how each kind of question is prepared (a kind not in it: as a lookup)
        self.preparations: dict[str, Preparation] = dict(preparations or {})
        self.embed = embed
        self.scorer = SentenceScorer(embed)
        self._chat_model = chat_model
        self.system = load_prompt("system").format(no_answer=NO_ANSWER)
        self.answer_template = load_prompt("answer")
        self.condense_template = load_prompt("condense")
        self.yesno_template = load_prompt("yesno")
        self.extract_template = load_prompt("extract")
        #: the same question without the "not stated" option, for an attribute a description can fill
        self.extract_described_template = load_prompt("extract_described")
        #: the one calibrated judge of "does this passage support this statement?" (its head fitted for one model)
        head = head_for(settings.llm.model, own_file=settings.llm.gguf is not None)
        #: (its excerpts, cosines and head read the embedder it was fitted with: ``judge_embed`` when the index has
        #: another one)
        judge_scorer = SentenceScorer(judge_embed) if judge_embed is not None else self.scorer
        self.stance = StanceJudge(self.chat, judge_scorer, head, sentences=settings.check.sentences)

    def chat(self) -> BaseChatModel:
        """The chat model (built on first use: the embedded server starts then)."""
        return self._chat_model()

    # ------------------------------------------------------------------ steps
    def condense(
        self,
        question: str,
        history: Sequence[tuple[str, str]],
        use_llm: bool = True,
        errors: list[Exception] | None = None,
    ) -> str:
        """The question rewritten to stand alone. A failed LLM call is appended to ``errors``."""
        if not history:
            return question
        if use_llm:
            convo = "\n".join(
                f"{'User' if r == 'user' else 'Assistant'}: {' '.join(c.split())[:400]}" for r, c in history[-6:]
            )
            prompt = self.condense_template.format(history=convo, question=question)
            try:
                out = self._chat_model().invoke([HumanMessage(prompt)], max_tokens=60)
                said = split_reasoning(str(out.content))[0]  # a reasoning model's <think> block is not the question
                text = said.strip().splitlines()[0].strip() if said.strip() else ""
                if 3 <= len(text) <= 400 and len(key_terms(text)) >= 1:
                    return text
            except Exception as e:  # condensation is an optimisation: the deterministic fallback is always right to use
                if errors is not None:
                    errors.append(e)  # the caller decides whether the LLM is down (then asking it again only waits)
        return fallback_condense(history, question)

    def select_evidence(
        self, question: str, hits: Sequence[SearchHit], *, budget: int | None = None, per_paper: int | None = None
    ) -> tuple[list[Evidence], dict[int, list[tuple[int, int]]]]:
        """Number the papers and pick their most relevant sentences within the token budget."""
        return select_evidence(
            question,
            hits,
            self.scorer,
            budget=budget or self.settings.answer.context_tokens,
            encoding=self.settings.chunking.encoding,
            per_paper=per_paper,
        )

    def prepare(self, query: Query) -> Prepared:
        """The question readied for its answer path (:meth:`prepare_steps` without the steps)."""
        return run_steps(self.prepare_steps(query))

    def prepare_steps(self, query: Query) -> Generator[StepEvent, None, Prepared]:
        """Condense, retrieve, recognise the kind and choose the evidence, yielding a :class:`StepEvent` before each
        step that may take a while (the first at once); returns the :class:`Prepared` question. ``cpu`` is held for
        each step's work, never while a step is being reported."""
        t0 = time.perf_counter()
        question = query.question
        history = normalise_history(query.history)
        errors: list[Exception] = []
        use_llm = query.mode == "llm"
        if history and use_llm:
            yield StepEvent("condensing")
        with self.cpu:
            standalone = self.condense(question, history, use_llm=use_llm, errors=errors)
        llm_error = errors[0] if errors else None
        yield StepEvent("searching")
        t1 = time.perf_counter()
        k = query.k or self.settings.retrieval.k
        with self.cpu:
            pool = self.retrieve(standalone, k * NAMED_POOL, query.where, query.retrieval_mode)
            hits = named_first(question, pool, k, context=standalone)
        t2 = time.perf_counter()
        timings = {"condense": t1 - t0, "retrieval": t2 - t1}
        best = max((h.dense_score for h in hits if h.dense_score is not None), default=None)
        if not hits:
            return Prepared(
                question=question,
                standalone=standalone,
                hits=hits,
                refuse_reason="nothing retrieved",
                timings=timings,
                llm_error=llm_error,
            )
        named_count = sum(names_paper(standalone, h.title) for h in hits)
        named = named_count > 0
        kind = query.kind or classify_question(standalone, named_papers=named_count)
        how = self.preparations.get(kind, Preparation())
        if how.own_papers:
            return Prepared(
                question=question,
                standalone=standalone,
                hits=hits,
                timings=timings,
                llm_error=llm_error,
                names_source=named,
                kind=kind,
            )
        on_topic = named or any(mentions_paper(standalone, h) for h in hits)
        if not (best is None or best >= self.settings.answer.min_relevance or on_topic):
            return Prepared(
                question=question,
                standalone=standalone,
                hits=hits,
                refuse_reason=f"best relevance {best:.2f} below threshold",
                timings=timings,
                llm_error=llm_error,
                names_source=named,
                kind=kind,
            )
        budget = self.settings.answer.yesno_context_tokens if how.prompt == "yesno" else None
        yield StepEvent("reading", total=len(hits))
        t2 = time.perf_counter()
        with self.cpu:
            evidence, shown = self.select_evidence(standalone, hits, budget=budget)
        context = format_evidence(evidence, shown)
        flat_question = " ".join(standalone.split())
        messages: list[BaseMessage] = (
            [HumanMessage(self.yesno_template.format(context=context, question=flat_question))]
            if how.prompt == "yesno"
            else [
                SystemMessage(self.system),
                HumanMessage(self.answer_template.format(context=context, question=flat_question)),
            ]
        )
        timings["evidence"] = time.perf_counter() - t2
        prompt_tokens = sum(count_tokens(str(m.content), self.settings.chunking.encoding) for m in messages)
        return Prepared(
            question=question,
            standalone=standalone,
            hits=hits,
            evidence=evidence,
            messages=messages,
            timings=timings,
            prompt_tokens=prompt_tokens,
            llm_error=llm_error,
            names_source=named,
            shown=shown,
            kind=kind,
        )

    # ------------------------------------------------------------------ helpers
    def ordered_sources(self, prep: Prepared) -> list[SearchHit]:
        """Sources numbered like the evidence: offered papers first (n = 1..m), then the rest."""
        offered = [e.paper_id for e in prep.evidence]
        by_id = {h.paper_id: h for h in prep.hits}
        rest = [h for h in prep.hits if h.paper_id not in offered]
        return [by_id[p] for p in offered] + rest

    def citations(self, prep: Prepared, verdicts: Sequence[SentenceVerdict]) -> list[Citation]:
        """One citation per cited source and sentence of the supported ``verdicts``, in source order."""
        by_n = {e.n: e for e in prep.evidence}
        out: dict[tuple[int, tuple[int, int]], Citation] = {}
        for v in verdicts:
            for n in v.cited:
                ev = by_n[n]
                span = v.best[1] if v.best and v.best[0] == n else ev.spans[0]
                if (n, span) in out:
                    continue
                out[(n, span)] = ev.cite(span, support=v.support, text=self._chunk_text(ev, span))
        return sorted(out.values(), key=lambda c: (c.n, c.span))

    def _chunk_text(self, ev: Evidence, span: tuple[int, int]) -> str:
        c = self.settings.chunking
        chunks = chunk_paper(
            Paper(paper_id=ev.paper_id, title=ev.title, abstract=ev.abstract),
            max_tokens=c.max_tokens,
            overlap=c.overlap,
            encoding=c.encoding,
        )
        for ch in chunks:
            if ch.start <= span[0] and span[1] <= ch.end:
                return ch.text
        return ev.chunk_text

    # ------------------------------------------------------------------ the model
    def stream_tokens(self, prep: Prepared, **call_overrides: Any) -> Iterator[tuple[str, dict[str, Any]]]:
        """:meth:`stream_messages` of the answer prompt ``prep`` holds."""
        return self.stream_messages(prep.messages, **call_overrides)

    def stream_messages(
        self, messages: Sequence[BaseMessage], **call_overrides: Any
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        """Yield ``(token, {})`` as the model writes, then ``("", usage)`` once at the end; the usage has
        ``finish_reason`` too when the endpoint gives it ("length": the answer hit the token limit).
        ``call_overrides`` (e.g. ``temperature``, ``max_tokens``) go to this one request."""
        usage: dict[str, Any] = {}
        finish = None
        for chunk in self._chat_model().stream(list(messages), **call_overrides):
            if isinstance(chunk, AIMessage) or hasattr(chunk, "content"):
                if getattr(chunk, "usage_metadata", None):
                    usage = dict(chunk.usage_metadata or {})
                finish = (getattr(chunk, "response_metadata", None) or {}).get("finish_reason") or finish
                text = chunk.content if isinstance(chunk.content, str) else ""
                if text:
                    yield text, {}
        yield "", usage | ({"finish_reason": finish} if finish else {})


_R = TypeVar("_R")


def run_steps(steps: Generator[StepEvent, None, _R]) -> _R:
    """What a generator of steps returns, its steps unreported (for callers that show no progress)."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


def _as_rag_error(e: Exception) -> RagError:
    return e if isinstance(e, RagError) else RagError(str(e))

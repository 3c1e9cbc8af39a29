"""From retrieved abstracts to a verified, cited answer.

question -> (condense with history) -> retrieval -> numbered evidence (the most relevant sentences,
fitted to a token budget) -> LLM -> verification (rag.answering.verify) -> :class:`Answer`.

The model only writes prose. Our code numbers the evidence, drops markers that resolve to nothing,
attaches or corrects citations by measured support, and decides to abstain.

Abstracts are untrusted data. Sentences that instruct the assistant (rag.answering.verify.is_instruction) or
repeat our refusal sentence are not evidence; what is shown is put on one line per source with
citation-like brackets, chat-template tokens and our prompt's labels defused (:func:`neutralise`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableLambda

from rag.answering.evidence import (
    NO_ANSWER,
    SentenceScorer,
    format_evidence,
    select_evidence,
)
from rag.answering.kinds import classify_question
from rag.answering.prompts import load_prompt
from rag.answering.verify import (
    Embed,
    Evidence,
    SentenceVerdict,
    quote_fallback,
    render,
    restatement_fallback,
    verify_answer,
)
from rag.corpus.chunking import chunk_paper, count_tokens
from rag.corpus.tokens import key_terms, name_tokens, title_names
from rag.settings import Settings
from rag.types import (
    Answer,
    AnswerMode,
    AnswerSentence,
    Citation,
    Paper,
    Query,
    QuestionKind,
    Quote,
    Role,
    SearchHit,
    Verdict,
)

# Answers read the top k papers of a retrieval this many times deeper, with the papers the question names moved
# to the front (named_first): the deeper retrieval fuses the same candidate lists, so it costs ~nothing more.
NAMED_POOL = 3

_REFUSAL = re.compile(
    r"(don't|do not|does not|doesn't|cannot|can't|unable to)\s+"
    r"(answer|say|mention|provide|contain|specify|state|include|know)"
    r"|not (mentioned|provided|specified|stated|given|available|included|discussed)"
    r"|no (information|mention|details?)\b|indexed abstracts don",
    re.I,
)

History = Sequence[tuple[str, str]] | Sequence[dict[str, str]]


def normalise_history(history: History | None) -> list[tuple[Role, str]]:
    """Accepts ``[("user", "..."), ("assistant", "...")]`` or OpenAI-style dicts."""
    out: list[tuple[Role, str]] = []
    for turn in history or []:
        if isinstance(turn, dict):
            role, content = str(turn.get("role", "")), str(turn.get("content", ""))
        else:
            role, content = str(turn[0]), str(turn[1])
        if content.strip():
            out.append(("assistant" if role in ("assistant", "ai", "bot") else "user", content.strip()))
    return out


def fallback_condense(history: Sequence[tuple[str, str]], question: str) -> str:
    """Deterministic standalone question: the last user question joined to the follow-up."""
    previous = [c for r, c in history if r == "user"]
    return f"{previous[-1]} {question}" if previous else question


def names_paper(question: str, title: str) -> bool:
    """True when the question names a paper by its title or by the name/acronym in it ('WildBox',
    'CoCHI', 'SSL'): short questions about a named method embed poorly but are plainly on topic."""
    q = question.lower()
    for name in set(title_names(title)):
        name = name.strip().lower()
        if len(name) >= 3 and len(name.split()) <= 6 and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", q):
            return True
    return False


def mentions_paper(question: str, hit: SearchHit) -> bool:
    """True when the question names the paper (:func:`names_paper`) or uses a name that its abstract
    defines or states ("the HTMP paper" for an abstract that says "(HTMP)"): a question that uses a
    paper's own terms is on topic however poorly it embeds. Only the relevance gate uses it; kinds are
    recognised from titles, so a name shared by many abstracts ("LLMs") never makes a comparison."""
    return names_paper(question, hit.title) or bool(names_used(question, hit))


def names_used(question: str, hit: SearchHit) -> list[str]:
    """The name-like tokens of ``question`` that the hit's title or abstract uses, as whole words."""
    text = f"{hit.title} {hit.abstract or hit.text}"
    return [n for n in name_tokens(question) if re.search(rf"(?<![\w-]){re.escape(n)}s?(?![\w-])", text)]


def named_papers(question: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
    """The papers among ``hits`` that ``question`` names, in the order it names them: by title or acronym
    (:func:`names_paper`); and, while fewer than two are named so, by a name-like token that exactly one of the
    hits uses ("the cfDNA paper"). A name many abstracts share ("LLMs") names none of them."""
    named = [h for h in hits if names_paper(question, h.title)]
    if len(named) < 2:
        ids = {h.paper_id for h in named}
        used = {h.paper_id: (h, set(names_used(question, h))) for h in hits}
        for name in name_tokens(question):
            users = [h for h, names in used.values() if name in names]
            if len(users) == 1 and users[0].paper_id not in ids:
                named.append(users[0])
                ids.add(users[0].paper_id)
    return sorted(named, key=lambda h: _first_mention(question, h))


def _first_mention(question: str, hit: SearchHit) -> int:
    """Where ``question`` first names ``hit``: by its title, or by a name that its abstract uses."""
    q = question.lower()
    names = title_names(hit.title)
    found = [q.find(n.strip().lower()) for n in names if n.strip() and n.strip().lower() in q]
    found += [question.find(t) for t in names_used(question, hit)]
    return min(found) if found else len(question)


def named_first(question: str, pool: Sequence[SearchHit], k: int, *, context: str = "") -> list[SearchHit]:
    """The ``k`` papers to answer from: those the question names (:func:`named_papers`) first, then the rest of
    ``pool`` in retrieval order. A name is an exact signal that ranking can miss: "How large are the WildBox and
    Who&When Pro datasets?" embeds far from the Who&When Pro abstract, which BM25 ranked first but fusion
    ranked 8th. ``pool`` is a retrieval deeper than ``k``, so a named paper just below the cut is found.

    ``context`` is the standalone form of a follow-up (it may carry the earlier question): its names count only
    when the follow-up itself names no paper, so "How many species does it cover?" after a question on WildBox
    leads with WildBox, while a follow-up that names its own paper is not answered about the earlier one."""
    named = named_papers(question, pool) or (named_papers(context, pool) if context else [])
    if not named:
        return list(pool[:k])
    ids = {h.paper_id for h in named}
    return [*named, *(h for h in pool if h.paper_id not in ids)][:k]  # each keeps its fused rank


def is_refusal(text: str) -> bool:
    return bool(_REFUSAL.search(text)) or not text.strip()


@dataclass
class Prepared:
    """Everything decided before the LLM is called."""

    question: str
    standalone: str
    hits: list[SearchHit]
    evidence: list[Evidence]
    messages: list[BaseMessage]
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


class AnswerPipeline:
    """The answer chain. ``retrieve(question, k, where)`` and ``embed(texts)`` are injected."""

    def __init__(
        self,
        settings: Settings,
        retrieve: Callable[[str, int | None, dict[str, Any] | None, Any], list[SearchHit]],
        embed: Embed,
        chat_model: Callable[[], BaseChatModel],
        containing: Callable[[str, Sequence[str], int, dict[str, Any] | None], list[SearchHit]] | None = None,
    ) -> None:
        self.settings = settings
        self.retrieve = retrieve
        #: ``containing(query, terms, n, where)``: papers whose text has one of ``terms`` (a list question's
        #: names: every paper that names KITTI is a candidate, wherever retrieval ranks it)
        self.containing = containing or (lambda _q, _t, _n, _w: [])
        self.embed = embed
        self.scorer = SentenceScorer(embed)
        self.quoter = self.scorer
        self._chat_model = chat_model
        self.system = load_prompt("system").format(no_answer=NO_ANSWER)
        self.answer_template = load_prompt("answer")
        self.condense_template = load_prompt("condense")
        self.yesno_template = load_prompt("yesno")
        self.judge_template = load_prompt("judge")
        self.judge_system = load_prompt("judge_system").strip()
        self.extract_template = load_prompt("extract")

    def chat(self) -> BaseChatModel:
        """The chat model (built on first use: the embedded server starts then)."""
        return self._chat_model()

    def decide_yesno(self, probs: dict[str, float]) -> Verdict:
        """The verdict from the model's P(yes), P(no), P(not stated), shifted by the calibrated biases."""
        if not any(probs.values()):
            return "not stated"
        by, bn, bs = self.settings.answer.yesno_bias
        scores: dict[Verdict, float] = {
            "yes": probs["yes"] + by,
            "no": probs["no"] + bn,
            "not stated": probs["not"] + bs,
        }
        return max(scores, key=lambda v: scores[v])

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
                text = str(out.content).strip().splitlines()[0].strip() if str(out.content).strip() else ""
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
        t0 = time.perf_counter()
        question = query.question
        history = normalise_history(query.history)
        errors: list[Exception] = []
        standalone = self.condense(question, history, use_llm=query.mode == "llm", errors=errors)
        llm_error = errors[0] if errors else None
        t1 = time.perf_counter()
        k = query.k or self.settings.retrieval.k
        pool = self.retrieve(standalone, k * NAMED_POOL, query.where, query.retrieval_mode)
        hits = named_first(question, pool, k, context=standalone)
        t2 = time.perf_counter()
        timings = {"condense": t1 - t0, "retrieval": t2 - t1}
        best = max((h.dense_score for h in hits if h.dense_score is not None), default=None)
        if not hits:
            return Prepared(question, standalone, hits, [], [], "nothing retrieved", timings, llm_error=llm_error)
        named_count = sum(names_paper(standalone, h.title) for h in hits)
        named = named_count > 0
        kind = query.kind or classify_question(standalone, named_papers=named_count)
        if kind in ("list", "compare"):  # these paths choose their own papers and evidence
            return Prepared(question, standalone, hits, [], [], None, timings, 0, llm_error, named, {}, kind)
        on_topic = named or any(mentions_paper(standalone, h) for h in hits)
        if not (best is None or best >= self.settings.answer.min_relevance or on_topic):
            return Prepared(
                question,
                standalone,
                hits,
                [],
                [],
                f"best relevance {best:.2f} below threshold",
                timings,
                llm_error=llm_error,
                names_source=named,
                kind=kind,
            )
        budget = self.settings.answer.yesno_context_tokens if kind == "yesno" else None
        evidence, shown = self.select_evidence(standalone, hits, budget=budget)
        context = format_evidence(evidence, shown)
        flat_question = " ".join(standalone.split())
        messages: list[BaseMessage] = (
            [HumanMessage(self.yesno_template.format(context=context, question=flat_question))]
            if kind == "yesno"
            else [
                SystemMessage(self.system),
                HumanMessage(self.answer_template.format(context=context, question=flat_question)),
            ]
        )
        timings["evidence"] = time.perf_counter() - t2
        prompt_tokens = sum(count_tokens(str(m.content), self.settings.chunking.encoding) for m in messages)
        return Prepared(
            question, standalone, hits, evidence, messages, None, timings, prompt_tokens, llm_error, named, shown, kind
        )

    def finalize(
        self, prep: Prepared, raw: str, mode: AnswerMode = "llm", extra: dict[str, Any] | None = None
    ) -> Answer:
        t0 = time.perf_counter()
        extra = extra or {}
        sources = self.ordered_sources(prep)
        if prep.refuse_reason is not None:
            return self._refusal(prep, sources, [], mode, extra, t0)
        verdicts = verify_answer(
            raw, prep.evidence, self.embed, min_support=self.settings.answer.min_support, question=prep.standalone
        )
        claims = [v for v in verdicts if v.claim]
        supported = [v for v in claims if v.supported]
        quoted = False
        if not supported and not is_refusal(raw) and mode == "llm":
            # The model answered but not in words we can verify: if one evidence sentence holds what it
            # tried to say, answer with that sentence, quoted, rather than refuse (see quote_fallback).
            fallback = quote_fallback(claims, prep.evidence, prep.standalone) or restatement_fallback(
                verdicts, prep.evidence, prep.standalone
            )
            if fallback is not None:
                verdicts, claims, supported, quoted = [fallback], [fallback], [fallback], True
        if not supported:  # a refusal phrase beside verified claims ("X is not mentioned") refuses nothing
            return self._refusal(prep, sources, verdicts, mode, extra, t0)
        # A marker resolves to a citation only through a supported claim: a fragment ("Yes [1].") keeps the
        # markers such a claim also has, never one of its own ("End of sources [3]." from an abstract).
        cited = {n for v in supported for n in v.cited}
        for v in verdicts:
            if not v.claim:
                v.dropped_markers += [n for n in v.cited if n not in cited]
                v.cited = [n for n in v.cited if n in cited]
        text = render([v for v in verdicts if v.supported and (v.claim or v.cited)])
        if quoted:
            text = f"The abstract states: {text}"
        citations = self._citations(prep, supported)
        return Answer(
            question=prep.question,
            standalone_question=prep.standalone,
            text=text,
            refused=False,
            citations=citations,
            sources=sources,
            sentences=[_sentence(v) for v in verdicts],
            unsupported=[v.text for v in claims if not v.supported],
            mode=mode,
            timings=prep.timings | extra.get("timings", {}) | {"verify": time.perf_counter() - t0},
            tokens={
                "prompt": extra.get("prompt_tokens", prep.prompt_tokens),
                "completion": extra.get("completion_tokens", 0),
            },
            names_source=prep.names_source,
            kind=prep.kind,
            quoted=quoted,
        )

    # ------------------------------------------------------------------ helpers
    def ordered_sources(self, prep: Prepared) -> list[SearchHit]:
        """Sources numbered like the evidence: offered papers first (n = 1..m), then the rest."""
        offered = [e.paper_id for e in prep.evidence]
        by_id = {h.paper_id: h for h in prep.hits}
        rest = [h for h in prep.hits if h.paper_id not in offered]
        return [by_id[p] for p in offered] + rest

    def _refusal(
        self,
        prep: Prepared,
        sources: list[SearchHit],
        verdicts: list[SentenceVerdict],
        mode: AnswerMode,
        extra: dict[str, Any],
        t0: float,
    ) -> Answer:
        return Answer(
            question=prep.question,
            standalone_question=prep.standalone,
            text=NO_ANSWER,
            refused=True,
            citations=[],
            sources=sources[:3],
            sentences=[_sentence(v) for v in verdicts],
            unsupported=[v.text for v in verdicts if v.claim and not v.supported],
            mode=mode,
            timings=prep.timings | extra.get("timings", {}) | {"verify": time.perf_counter() - t0},
            tokens={
                "prompt": extra.get("prompt_tokens", prep.prompt_tokens),
                "completion": extra.get("completion_tokens", 0),
            },
            names_source=prep.names_source,
        )

    def _citations(self, prep: Prepared, verdicts: Sequence[SentenceVerdict]) -> list[Citation]:
        by_n = {e.n: e for e in prep.evidence}
        out: dict[tuple[int, tuple[int, int]], Citation] = {}
        for v in verdicts:
            for n in v.cited:
                ev = by_n[n]
                span = v.best[1] if v.best and v.best[0] == n else ev.spans[0]
                if (n, span) in out:
                    continue
                out[(n, span)] = Citation(
                    n=n,
                    paper_id=ev.paper_id,
                    title=ev.title,
                    text=self._chunk_text(ev, span),
                    span=span,
                    quote=ev.abstract[span[0] : span[1]],
                    support=v.support,
                )
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

    # ------------------------------------------------------------------ extractive mode
    def extractive(self, prep: Prepared, max_sentences: int = 2) -> str:
        """The most relevant sentences of the offered sources, each cited: no LLM."""
        if prep.refuse_reason is not None or not prep.evidence:
            return ""
        cands = [(ev.n, span) for ev in prep.evidence for span in ev.spans]
        by_n = {e.n: e for e in prep.evidence}
        texts = [by_n[n].sentence(span) for n, span in cands]
        scores = self.quoter.score(prep.standalone, texts, [n for n, _ in cands])
        scored = sorted(((float(sc), n, span) for sc, (n, span) in zip(scores, cands)), key=lambda x: -x[0])
        picked = scored[:max_sentences]
        return " ".join(f"{' '.join(by_n[n].abstract[a:b].split()).rstrip('.')} [{n}]." for _s, n, (a, b) in picked)

    def as_runnable(self) -> Runnable[Query, Answer]:
        """The whole chain as an LCEL runnable: :class:`~rag.types.Query` -> :class:`~rag.types.Answer`."""

        def generate(prep: Prepared) -> tuple[Prepared, str, dict[str, Any]]:
            if prep.refuse_reason is not None:
                return prep, "", {}
            t = time.perf_counter()
            msg = self._chat_model().invoke(prep.messages)
            usage = getattr(msg, "usage_metadata", None) or {}
            extra = {
                "timings": {"generation": time.perf_counter() - t},
                "prompt_tokens": usage.get("input_tokens", prep.prompt_tokens),
                "completion_tokens": usage.get("output_tokens", 0),
            }
            return prep, str(msg.content), extra

        return (
            RunnableLambda(self.prepare)
            | RunnableLambda(generate)
            | RunnableLambda(lambda t: self.finalize(t[0], t[1], "llm", t[2]))
        ).with_config(run_name="grounded_answer")

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


class MarkerFilter:
    """Streams text while holding back anything that may be a citation marker until it closes, and
    drops markers that resolve to no offered source. So a streamed answer never shows ``[7]``."""

    def __init__(self, valid: set[int]) -> None:
        self.valid = valid
        self.buffer = ""

    def feed(self, token: str) -> str:
        self.buffer += token
        out = []
        while self.buffer:
            i = self.buffer.find("[")
            if i < 0:
                out.append(self.buffer)
                self.buffer = ""
                break
            out.append(self.buffer[:i])
            self.buffer = self.buffer[i:]
            m = re.match(r"\[(\d+(?:\s*[,;]\s*\d+)*)\]", self.buffer)
            if m:
                nums = [int(x) for x in re.split(r"[,;]", m.group(1))]
                keep = [n for n in nums if n in self.valid]
                out.append("".join(f"[{n}]" for n in keep))
                self.buffer = self.buffer[m.end() :]
            elif re.fullmatch(r"\[[\d\s,;]*", self.buffer):
                break  # may still become a marker: wait for more tokens
            else:
                out.append("[")
                self.buffer = self.buffer[1:]
        return "".join(out)

    def flush(self) -> str:
        rest, self.buffer = self.buffer, ""
        return "" if re.fullmatch(r"\[[\d\s,;]*", rest) else rest


def _sentence(v: SentenceVerdict) -> AnswerSentence:
    return AnswerSentence(
        text=v.text, citations=tuple(v.cited), support=v.support, supported=v.supported or not v.claim
    )

"""The answer paths, one class per kind of question, and :data:`PATHS`, the registry the Assistant dispatches to.

Each path (:class:`~rag.answering.answers.AnswerPath`) yields typed events (rag.events) ending in one
:class:`~rag.events.AnswerEvent`, and each keeps the lookup's rule: every sentence shown is a verified citation
or a verbatim quote.

* **lookup** (:class:`~rag.answering.lookup.Lookup`): one answer written from the evidence, then verified.
* **yes/no** (:class:`YesNo`): the question, stated as a claim by the model ("Does X raise Y?" -> "X raises Y."),
  goes to the stance judge with its opposite on the deciding paper, as a claim check does: supports -> yes,
  refutes -> no, and "not stated" only when the judge is sure of it; the answer quotes the sentence it rests on.
  Without the judge's head (a model it was not fitted on), the evidence is read once and the model's
  probabilities of "Yes", "No" and "Not" (stated) decide.
* **list** (:class:`ListAnswer`): every paper of the (filtered) collection is a candidate when it is small,
  else the most relevant ones by hybrid retrieval; each is judged on its own best sentences by a one-token yes/no
  judgement of the list question turned into a question about one paper ("Which papers use RL?" ->
  "Does this paper use RL?", asked after the paper's text: asked before it, the model's answers were
  near chance). Papers stream out as they are confirmed; on a large collection the papers that use a
  name the question gives ("KITTI") are judged first, and the scan stops after a run of rejections. The
  answer says what was checked ("19 of 19 abstracts").
* **compare** (:class:`Compare`): the papers the question names (else, for "the papers on X", the papers
  retrieved for X that the list judge confirms; else the few retrieved ones close to the best) each get their
  own share of evidence and their own short answer, verified against that paper alone; a paper whose answer
  cannot be verified is answered with its most relevant sentence, quoted. So a question naming two indexed
  papers is never refused.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from rag.answering.answers import AnswerPath, make_answer
from rag.answering.evidence import (
    NO_ANSWER,
    SentenceScorer,
    candidates_of,
    format_evidence,
    readable,
    select_evidence,
)
from rag.answering.headers import HeaderFilter
from rag.answering.kinds import compare_topic, list_predicate
from rag.answering.lookup import Lookup
from rag.answering.names import named_papers
from rag.answering.pipeline import AnswerPipeline, Preparation, Prepared
from rag.answering.reasoning import ThinkFilter, split_reasoning
from rag.answering.verify import Evidence, SentenceVerdict, as_claims, render, verify_answer
from rag.corpus import count_tokens
from rag.corpus.tokens import exact_terms, title_names
from rag.events import AnswerEvent, Event, ItemEvent, ProgressEvent, StepEvent, TokenEvent
from rag.types import AnswerSentence, Citation, ListItem, Query, QuestionKind, RetrievalMode, SearchHit, Verdict


def _timings(prep: Prepared, t0: float, **extra: float) -> dict[str, float]:
    return prep.timings | extra | {"answer": time.perf_counter() - t0}


# ---------------------------------------------------------------------------------------------- yes/no
class YesNo(AnswerPath):
    """Yes / No / not stated, the deciding sentence quoted and cited."""

    kind = "yesno"
    preparation = Preparation(prompt="yesno")
    #: the judge's P(not stated) from which a yes/no question is answered "not stated" (else yes or no, whichever
    #: is likelier): PubMedQA's "maybe" is rare, and below this the judge's not-stated is mostly a hedge
    #: (docs/benchmarks.md, `bench yesno-probe`)
    NOT_STATED_AT = 0.7

    def decide(self, probs: dict[str, float]) -> Verdict:
        """The verdict from the model's P(yes), P(no), P(not stated), shifted by the calibrated biases."""
        if not any(probs.values()):
            return "not stated"
        by, bn, bs = self.pipeline.settings.answer.yesno_bias
        scores: dict[Verdict, float] = {
            "yes": probs["yes"] + by,
            "no": probs["no"] + bn,
            "not stated": probs["not"] + bs,
        }
        return max(scores, key=lambda v: scores[v])

    def judged(self, prep: Prepared, ev: Evidence) -> tuple[Verdict, dict[str, float], int]:
        """The verdict of the stance judge on ``ev``'s paper, its probabilities (yes, no, not stated) and the prompt
        tokens; the model's own label probabilities when the judge has no head or the question cannot be stated
        as a claim. (The answer quotes the evidence sentence closest to the question, :func:`_deciding_sentence`:
        the sentence closest to the model's statement of it read worse on the gold set.)"""
        judge = self.pipeline.stance
        statement = judge.statement_of(prep.standalone) if judge.head is not None else None
        if statement is None:
            probs, asked = judge.ask(prep.messages, ("yes", "no", "not"))
            shown = {"yes": round(probs["yes"], 4), "no": round(probs["no"], 4), "not stated": round(probs["not"], 4)}
            return self.decide(probs), shown, asked or prep.prompt_tokens
        j = judge.judge(statement, ev.title, ev.abstract, kind="claim", opposite=True)
        p = j.probabilities
        shown = {"yes": p["supports"], "no": p["refutes"], "not stated": p["not stated"]}
        verdict: Verdict = (
            "not stated"
            if p["not stated"] >= self.NOT_STATED_AT
            else ("yes" if p["supports"] >= p["refutes"] else "no")
        )
        return verdict, shown, j.prompt_tokens

    def events(self, query: Query, prepared: Prepared) -> Iterator[Event]:
        t0 = time.perf_counter()
        prep, pipeline, mode = prepared, self.pipeline, query.mode
        if prep.refuse_reason is not None or not prep.evidence:
            yield AnswerEvent(answer=self.refuse(prep, mode))
            return
        n, span = _deciding_sentence(pipeline, prep)
        ev = next(e for e in prep.evidence if e.n == n)
        verdict: Verdict | None = None
        shown: dict[str, float] = {}
        tokens = prep.prompt_tokens
        if mode == "llm":
            yield StepEvent("judging")
            verdict, shown, tokens = self.judged(prep, ev)
        sentence = ev.sentence(span)
        if verdict == "not stated":
            yield AnswerEvent(
                answer=self.refuse(prep, mode, kind="yesno", verdict=verdict, verdict_probabilities=shown)
            )
            return
        lead = {"yes": "Yes. ", "no": "No. ", None: ""}[verdict]
        text = f"{lead}The abstract states: {sentence.rstrip('.!? ')} [{n}]."
        yield TokenEvent(text=text)
        citation = ev.cite(span, support=1.0)  # a verbatim quote: supported by construction
        if verdict in ("yes", "no"):  # what cites the paper is the verdict its sentence decides, and its probability
            citation = citation.model_copy(update={"judged": verdict, "judge": shown[verdict]})
        answer = make_answer(
            prep,
            mode=mode,
            text=text,
            citations=[citation],
            sources=pipeline.ordered_sources(prep),
            sentences=[AnswerSentence(text=sentence, citations=(n,), support=1.0, supported=True)],
            timings=_timings(prep, t0),
            tokens={"prompt": tokens, "completion": 1},
            kind="yesno",
            verdict=verdict,
            verdict_probabilities=shown,
            quoted=True,
        )
        yield AnswerEvent(answer=answer)


def _deciding_sentence(pipeline: AnswerPipeline, prep: Prepared) -> tuple[int, tuple[int, int]]:
    """The shown evidence sentence most relevant to the question (the one a yes or a no rests on)."""
    shown = [(n, span) for n, spans in prep.shown.items() for span in spans]
    by_n = {e.n: e for e in prep.evidence}
    scores = pipeline.scorer.score(prep.standalone, [by_n[n].sentence(sp) for n, sp in shown], [n for n, _ in shown])
    best = max(range(len(shown)), key=lambda i: float(scores[i]) - 0.03 * (shown[i][0] - 1))
    return shown[best]


# ---------------------------------------------------------------------------------------------- lists
@dataclass(kw_only=True)
class Candidate:
    hit: SearchHit
    spans: list[tuple[int, int]]  # the sentences the judge reads, in abstract order
    best: tuple[int, int]  # the most relevant of them: the quote that qualifies the paper
    text: str  # what the judge reads: title and those sentences, readable
    prescore: float


class ListAnswer(AnswerPath):
    """Judge every candidate paper; stream the confirmed ones; answer with all of them, most certain first."""

    kind = "list"
    preparation = Preparation(own_papers=True)

    def events(self, query: Query, prepared: Prepared) -> Iterator[Event]:
        t0 = time.perf_counter()
        prep, pipeline = prepared, self.pipeline
        s = pipeline.settings.answer
        found = find_candidates(pipeline, prep.standalone, query.where, query.retrieval_mode)
        total, full, cands = found.total, found.full, found.candidates
        t1 = t0 + found.retrieval
        predicate = list_predicate(prep.standalone)
        yield StepEvent("reading", total=len(cands))
        yield ProgressEvent(checked=0, total=len(cands))
        judged: list[tuple[float, Candidate]] = []
        misses = 0
        prompt_tokens = 0
        for i, cand in enumerate(cands, 1):
            if query.mode == "llm":
                yield StepEvent("judging", done=i - 1, total=len(cands))
                p, used = judge_candidate(pipeline, predicate, prep.standalone, cand)
                prompt_tokens += used
            else:  # no model: the calibrated sentence score alone decides
                p = min(1.0, max(0.0, (cand.prescore - s.list_extractive_floor) / 0.5))
            judged.append((p, cand))
            if p >= s.list_min_yes:
                misses = 0
                item = _item(len([j for j in judged if j[0] >= s.list_min_yes]), cand, p)
                yield ItemEvent(item=item, checked=i, total=len(cands))
            else:
                misses += 1
            yield ProgressEvent(checked=i, total=len(cands))
            if found.patience_over(i, misses):
                break
        confirmed = sorted((j for j in judged if j[0] >= s.list_min_yes), key=lambda j: -j[0])
        items = [_item(n, cand, p) for n, (p, cand) in enumerate(confirmed, 1)]
        checked = len(judged)
        scope = f"{checked} of {total}" if full else f"the {checked} most relevant of {total:,}"
        if items:
            head = f"{len(items)} {'paper matches' if len(items) == 1 else 'papers match'} ({scope} abstracts checked):"
            lines = [f"- {i.title} [{i.n}]: {readable(i.quote)}" for i in items]
            text = "\n".join([head, *lines])
        else:
            text = f"None of the papers matches ({scope} abstracts checked)."
        citations = [
            Citation(
                n=i.n,
                paper_id=i.paper_id,
                title=i.title,
                text=i.quote,
                span=i.span,
                quote=i.quote,
                support=i.score,
                judged="listed",
                judge=i.score if query.mode == "llm" else None,  # extractive: a rescaled sentence score, no judge
            )
            for i in items
        ]
        by_id = {i.paper_id: i.n for i in items}
        sources = sorted((c.hit for _p, c in confirmed), key=lambda h: by_id[h.paper_id])
        answer = make_answer(
            prep,
            mode=query.mode,
            text=text,
            citations=citations,
            sources=sources,
            sentences=[AnswerSentence(text=readable(i.quote), citations=(i.n,), support=i.score) for i in items],
            timings=_timings(prep, t0, retrieval=prep.timings.get("retrieval", 0.0) + t1 - t0),
            tokens={"prompt": prompt_tokens, "completion": checked if query.mode == "llm" else 0},
            names_source=False,  # a list names no source of its own: its items are judged, not named
            kind="list",
            items=items,
            checked=checked,
            collection_size=total,
        )
        yield AnswerEvent(answer=answer)


@dataclass(frozen=True, kw_only=True)
class Candidates:
    """The papers a list question (or a table's query) judges, in the order it judges them."""

    candidates: list[Candidate]
    total: int  # papers in the (filtered) collection
    full: bool  # every one of them is a candidate: a small collection is scanned to the end
    retrieval: float  # seconds spent finding them
    min_judged: int
    patience: int

    def patience_over(self, judged: int, misses: int) -> bool:
        """On a large collection the scan stops after a run of ``patience`` rejections (once ``min_judged``
        papers are judged): the candidates come best first, so the rest are unlikely to qualify."""
        return not self.full and judged >= self.min_judged and misses >= self.patience


def find_candidates(
    pipeline: AnswerPipeline,
    question: str,
    where: dict[str, Any] | None,
    retrieval_mode: RetrievalMode | None = None,
) -> Candidates:
    """The candidates of a list question: every paper of a small (filtered) collection, else the most relevant
    by hybrid retrieval, papers that use a name the question gives first; papers far below the best one's
    sentence score are left out (``list_relative_floor``)."""
    t0 = time.perf_counter()
    total = pipeline.count_papers(where)
    s = pipeline.settings.answer
    full = total <= s.list_full_scan
    k = total if full else min(total, s.list_candidates)
    hits = pipeline.retrieve(question, max(1, k), where, retrieval_mode) if total else []
    # A name the question gives (a dataset, a method: "KITTI", "GPT-4") is an exact criterion: every paper
    # that uses it is judged first, however retrieval ranked it (the question's other words outweighed
    # "KITTI" for 9 of 19 papers that use it, at 1,000 abstracts)
    names = sorted(t for t in exact_terms(question) if not t.isdigit()) if not full else []
    naming = pipeline.containing(question, names, k, where) if names and total else []
    named_ids = {h.paper_id for h in naming}
    hits = naming + [h for h in hits if h.paper_id not in named_ids]
    retrieval = time.perf_counter() - t0
    cands = _list_candidates(pipeline, question, hits)
    if cands:  # papers far below the best one's sentence score are not worth a judgement (see the settings)
        floor = s.list_relative_floor * cands[0].prescore
        cands = [c for c in cands if c.hit.paper_id in named_ids or c.prescore >= floor]
        cands.sort(key=lambda c: c.hit.paper_id not in named_ids)  # stable: by sentence score within each
    return Candidates(
        candidates=cands,
        total=total,
        full=full,
        retrieval=retrieval,
        min_judged=s.list_min_judged,
        patience=s.list_patience,
    )


def judge_candidate(pipeline: AnswerPipeline, predicate: str, question: str, cand: Candidate) -> tuple[float, int]:
    """P(yes) that the candidate satisfies ``predicate`` (judged on its best sentences for ``question``, and
    again on more of them when unsure); prompt tokens used."""
    s = pipeline.settings.answer
    p, used = pipeline.stance.matches(predicate, cand.text)
    if s.list_recheck_from <= p < s.list_min_yes:  # unsure on its best sentences: read more of it
        more = _list_candidates(pipeline, question, [cand.hit], budget=s.list_recheck_tokens)
        if more and more[0].text != cand.text:
            p, more_used = pipeline.stance.matches(predicate, more[0].text)
            used += more_used
    return p, used


def _item(n: int, cand: Candidate, p: float) -> ListItem:
    span = cand.best
    return ListItem(
        n=n,
        paper_id=cand.hit.paper_id,
        title=cand.hit.title,
        quote=cand.hit.abstract[span[0] : span[1]],
        span=span,
        score=round(p, 4),
    )


def _list_candidates(
    pipeline: AnswerPipeline, question: str, hits: Sequence[SearchHit], budget: int | None = None
) -> list[Candidate]:
    """Each paper with its best sentences for the question (what the judge reads), best papers first."""
    cands, _spans = candidates_of(hits)
    if not cands:
        return []
    scores = pipeline.scorer.score(question, [c.text for c in cands], [c.hit for c in cands])
    per_hit: dict[int, list[tuple[float, tuple[int, int], str]]] = {}
    for c, sc in zip(cands, scores):
        per_hit.setdefault(c.hit, []).append((float(sc), c.span, c.text))
    enc = pipeline.settings.chunking.encoding
    budget = budget or pipeline.settings.answer.list_sentence_tokens
    out = []
    for i, sentences in per_hit.items():
        ranked = sorted(sentences, key=lambda x: -x[0])
        chosen = [ranked[0]]
        used = count_tokens(ranked[0][2], enc)
        for cand in ranked[1:]:
            cost = count_tokens(cand[2], enc)
            if used + cost > budget:
                break
            chosen.append(cand)
            used += cost
        chosen.sort(key=lambda x: x[1])
        hit = hits[i]
        text = f"{readable(hit.title)}. " + " ".join(t for _s, _sp, t in chosen)
        out.append(
            Candidate(hit=hit, spans=[sp for _s, sp, _t in chosen], best=ranked[0][1], text=text, prescore=ranked[0][0])
        )
    return sorted(out, key=lambda c: -c.prescore)


# ---------------------------------------------------------------------------------------------- compare
class Compare(AnswerPath):
    """One short, verified answer per paper, each paper with its own evidence."""

    kind = "compare"
    preparation = Preparation(own_papers=True)

    def events(self, query: Query, prepared: Prepared) -> Iterator[Event]:
        t0 = time.perf_counter()
        prep, pipeline = prepared, self.pipeline
        papers = yield from _papers_to_compare(pipeline, prep, query)
        if not papers:
            yield AnswerEvent(answer=self.refuse(prep, query.mode))
            return
        parts: list[str] = []
        citations: list[Citation] = []
        sentences: list[AnswerSentence] = []
        unsupported: list[str] = []
        quoted_any = False
        scorer = _ContributionScorer(pipeline.scorer)
        for n, hit in enumerate(papers, 1):
            focus = _focus(prep.standalone, hit, papers)
            evidence, shown = select_evidence(
                focus,
                [hit],
                scorer,
                budget=pipeline.settings.answer.compare_context_tokens,
                encoding=pipeline.settings.chunking.encoding,
            )
            if not evidence:
                continue
            ev = Evidence.of_hit(n, hit, evidence[0].spans)
            shown = {n: shown[1]}
            head = f"{readable(hit.title)} [{n}]: "
            yield TokenEvent(text=("\n" if parts else "") + head)
            verdicts: list[SentenceVerdict] = []
            if query.mode == "llm":
                yield StepEvent("writing", done=n - 1, total=len(papers))
                raw = yield from _write_about(pipeline, prep, ev, shown, hit.title, query)
                yield StepEvent("verifying")
                # checked against this paper alone, with no credit for names the question gives: a sentence
                # about one paper that names the other ("unlike VAE-LFA, ...") is not that paper's to state
                verdicts = verify_answer(raw, [ev], pipeline.embed, min_support=pipeline.settings.answer.min_support)
            ok = [v for v in verdicts if v.claim and v.supported]
            unsupported += [v.text for v in verdicts if v.claim and not v.supported]
            if not ok:  # quote the paper's most relevant shown sentence instead
                texts = [ev.sentence(sp) for sp in shown[n]]
                span = shown[n][int(pipeline.scorer.score(prep.standalone, texts).argmax())]
                ok = [SentenceVerdict.quote(ev.sentence(span), n, span, support=1.0)]
                quoted_any = True
            body = render(ok)
            parts.append(head + body)
            for v in ok:
                assert v.best is not None
                span = v.best[1]
                citations.append(ev.cite(span, support=v.support))
                sentences.append(AnswerSentence(text=v.text, citations=(n,), support=v.support, supported=True))
        answer = make_answer(
            prep,
            mode=query.mode,
            text="\n".join(parts) if parts else NO_ANSWER,
            refused=not parts,
            citations=citations,
            sources=papers,
            sentences=sentences,
            unsupported=unsupported,
            timings=_timings(prep, t0),
            kind="compare",
            quoted=quoted_any,
        )
        yield AnswerEvent(answer=answer)


_CONTRIBUTION = re.compile(
    r"\b(?:we|our|this\s+(?:paper|work))\s+(?:\w+\s+)?(?:show|shows|find|found|prove|proves|propose|introduce|present|"
    r"derive|demonstrate|identify|establish|argue|conclude|reveal)\b|\b(?:results?|experiments?|findings?|analysis)\s+"
    r"(?:show|suggest|confirm|indicate|reveal|demonstrate)|\b(?:outperform|achiev|reduc|improv)\w*",
    re.I,
)


class _ContributionScorer(SentenceScorer):
    """The sentence scorer, with a bonus for sentences that state what the paper does or finds: a
    comparison asks what each paper contributes, and an abstract opens with background."""

    def __init__(self, base: SentenceScorer) -> None:
        super().__init__(base.embed, length=base.length)

    def score(self, question: str, texts: Sequence[str], groups: Sequence[int] | None = None) -> Any:
        bonus = [0.15 if _CONTRIBUTION.search(t) else 0.0 for t in texts]
        return super().score(question, texts, groups) + bonus


def _focus(question: str, hit: SearchHit, papers: Sequence[SearchHit]) -> str:
    """The question as asked about ``hit`` alone: the other papers' names taken out."""
    out = question
    for other in papers:
        if other.paper_id == hit.paper_id:
            continue
        for name in sorted({x.strip() for x in title_names(other.title) if len(x.strip()) >= 3}, key=len, reverse=True):
            out = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", " ", out, flags=re.I)
    return " ".join(out.split())


def _write_about(
    pipeline: AnswerPipeline,
    prep: Prepared,
    ev: Evidence,
    shown: dict[int, list[tuple[int, int]]],
    title: str,
    query: Query,
) -> Generator[Event, None, str]:
    """Let the model answer about one paper; stream its words; return what it wrote."""
    asked = " ".join(prep.standalone.split())
    question = f"{asked} Answer only about {readable(title)}, in two sentences: what it does or finds."
    messages: list[BaseMessage] = [
        SystemMessage(pipeline.system),
        HumanMessage(pipeline.answer_template.format(context=format_evidence([ev], shown), question=question)),
    ]
    overrides: dict[str, Any] = {"max_tokens": pipeline.settings.answer.compare_max_tokens}
    if query.temperature is not None:
        overrides["temperature"] = query.temperature
    parts = []
    usage: dict[str, Any] = {}
    think = ThinkFilter()  # a reasoning model's <think> block is neither shown nor compared
    headers = HeaderFilter([ev])  # nor is the evidence header the model copies ("Title [1]: ...")
    for text, meta in pipeline.stream_messages(messages, **overrides):
        usage = meta or usage
        if text:
            parts.append(text)
            if visible := headers.feed(think.feed(text)):
                yield TokenEvent(text=visible)
    if tail := headers.feed(think.flush()) + headers.flush():
        yield TokenEvent(text=tail)
    return as_claims(split_reasoning("".join(parts))[0], usage)


def _papers_to_compare(
    pipeline: AnswerPipeline, prep: Prepared, query: Query
) -> Generator[StepEvent, None, list[SearchHit]]:
    """The papers the question names (in the order it names them); else, when it names a topic ("the papers on
    X"), the retrieved papers the list judge confirms are on it, most certain first; else the retrieved ones
    close to the best."""
    s = pipeline.settings.answer
    named = named_papers(prep.standalone, prep.hits)
    if len(named) >= 2:
        return named[: s.compare_max_papers]
    topic = compare_topic(prep.standalone) if query.mode == "llm" else None
    if topic is not None:  # judged like a list's candidates, so no relevance gate before it
        confirmed = yield from _on_topic(pipeline, query, *topic)
        if len(named) + len([h for h in confirmed if h not in named]) >= 2:
            return (named + [h for h in confirmed if h not in named])[: s.compare_max_papers]
    best = max((h.dense_score or 0.0 for h in prep.hits), default=0.0)
    if best < s.min_relevance and not named:
        return []
    near = [h for h in prep.hits if (h.dense_score or 0.0) >= best - s.compare_margin]
    chosen = named + [h for h in near if h not in named]
    return chosen[: s.compare_max_papers]


def _on_topic(
    pipeline: AnswerPipeline, query: Query, topic: str, predicate: str
) -> Generator[StepEvent, None, list[SearchHit]]:
    """The papers retrieved for ``topic`` (twice as many as a comparison holds) that the list judge says
    satisfy ``predicate``, most certain first: "the papers on reasoning" are the ones about reasoning, however
    close their embeddings are to the best one's."""
    s = pipeline.settings.answer
    hits = pipeline.retrieve(topic, 2 * s.compare_max_papers, query.where, query.retrieval_mode)
    cands = _list_candidates(pipeline, topic, hits)
    if cands:
        cands = [c for c in cands if c.prescore >= s.list_relative_floor * cands[0].prescore]
    judged = []
    for i, c in enumerate(cands):
        yield StepEvent("judging", done=i, total=len(cands))
        judged.append((pipeline.stance.matches(predicate, c.text)[0], c.hit))
    return [hit for p, hit in sorted(judged, key=lambda j: -j[0]) if p >= s.list_min_yes]


#: The answer path of each kind of question (rag.types.QuestionKind). A new kind is one class and one entry here.
PATHS: dict[QuestionKind, type[AnswerPath]] = {path.kind: path for path in (Lookup, YesNo, ListAnswer, Compare)}

"""The lookup path: one answer, written by the model from the evidence (or quoted from it without a model), then
verified sentence by sentence; every claim keeps a citation it earned, and an answer with none is a refusal.

Streaming: the model's tokens are shown as they come, with markers that resolve to no offered source held back
and dropped (:class:`MarkerFilter`) and evidence headers the model copied taken out as verification takes them
out (:class:`~rag.answering.headers.HeaderFilter`); the verified answer follows in the
:class:`~rag.events.AnswerEvent`. A model that answered, but not in words that can be verified, is answered for
by the evidence sentence that holds what it tried to say, quoted (:func:`~rag.answering.verify.quote_fallback`),
rather than refused.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda

from rag.answering.answers import AnswerPath, answer_sentence, make_answer, refusal
from rag.answering.headers import HeaderFilter
from rag.answering.pipeline import Prepared
from rag.answering.reasoning import ThinkFilter, split_reasoning
from rag.answering.verify import as_claims, quote_fallback, render, restatement_fallback, verify_answer
from rag.errors import RagError
from rag.events import AnswerEvent, Event, StepEvent, TokenEvent
from rag.types import Answer, AnswerMode, Query

_REFUSAL = re.compile(
    r"(don't|do not|does not|doesn't|cannot|can't|unable to)\s+"
    r"(answer|say|mention|provide|contain|specify|state|include|know)"
    r"|not (mentioned|provided|specified|stated|given|available|included|discussed)"
    r"|no (information|mention|details?)\b|indexed abstracts don",
    re.I,
)


def is_refusal(text: str) -> bool:
    return bool(_REFUSAL.search(text)) or not text.strip()


class Lookup(AnswerPath):
    """A question answered from the most relevant sentences of the retrieved abstracts."""

    kind = "lookup"

    def events(self, query: Query, prepared: Prepared) -> Iterator[Event]:
        if query.mode == "extractive":
            with self.pipeline.cpu:
                raw = self.extractive(prepared)
                answer = self.finalize(prepared, raw, "extractive")
            yield TokenEvent(text=raw)
            yield AnswerEvent(answer=answer)
            return
        if prepared.refuse_reason is not None:
            yield AnswerEvent(answer=self.finalize(prepared, "", "llm"))
            return
        failures = self.pipeline.failures
        error = prepared.llm_error
        if error is not None and failures.is_down(error) and not failures.restarted():
            # the endpoint failed the condense call after the client's retries: asking again would only wait again
            raise failures.describe(error) from error
        yield from self._generate(query, prepared)

    def _generate(self, query: Query, prep: Prepared) -> Iterator[Event]:
        """Stream the model's answer (asked again once if the embedded server died before it wrote anything)."""
        failures = self.pipeline.failures
        start = time.perf_counter()
        first: float | None = None
        parts: list[str] = []
        usage: dict[str, Any] = {}
        shown = MarkerFilter({e.n for e in prep.evidence})
        headers = HeaderFilter(prep.evidence)  # a copied "[n] Title:" header is shown no more than verified
        think = ThinkFilter()  # a reasoning model's <think> block is held back from the tokens shown
        yield StepEvent("writing")  # the model reads the prompt before its first word: seconds on a CPU
        for attempt in (1, 2):
            try:
                overrides = {} if query.temperature is None else {"temperature": query.temperature}
                for token, meta in self.pipeline.stream_tokens(prep, **overrides):
                    if meta:
                        usage = meta
                    if not token:
                        continue
                    if first is None:
                        first = time.perf_counter() - start
                    parts.append(token)
                    visible = headers.feed(shown.feed(think.feed(token)))
                    if visible:
                        yield TokenEvent(text=visible)
                break
            except RagError:
                raise
            except Exception as e:  # the SDK raises many error types; describe them without secrets
                if attempt == 1 and not parts and failures.restarted():
                    continue  # restarted: nothing was shown yet, so asking again is safe
                raise failures.describe(e) from e
        tail = headers.feed(shown.feed(think.flush()) + shown.flush()) + headers.flush()
        if tail:
            yield TokenEvent(text=tail)
        extra = {
            "timings": {"first_token": first or 0.0, "generation": time.perf_counter() - start},
            "prompt_tokens": int(usage.get("input_tokens") or prep.prompt_tokens),
            "completion_tokens": int(usage.get("output_tokens") or 0),
        }
        text, reasoning = split_reasoning("".join(parts))
        yield StepEvent("verifying")
        answer = self.finalize(prep, as_claims(text, usage), "llm", extra)
        yield AnswerEvent(answer=with_reasoning(answer, reasoning))

    def finalize(
        self, prep: Prepared, raw: str, mode: AnswerMode = "llm", extra: dict[str, Any] | None = None
    ) -> Answer:
        """The verified answer to ``raw`` (what the model wrote, or the extractive sentences), or the refusal."""
        t0 = time.perf_counter()
        extra = extra or {}
        sources = self.pipeline.ordered_sources(prep)
        tokens = {
            "prompt": extra.get("prompt_tokens", prep.prompt_tokens),
            "completion": extra.get("completion_tokens", 0),
        }

        generation: dict[str, float] = extra.get("timings", {})

        def timings() -> dict[str, float]:
            return prep.timings | generation | {"verify": time.perf_counter() - t0}

        if prep.refuse_reason is not None:
            return refusal(prep, mode=mode, sources=sources, timings=timings(), tokens=tokens)
        settings = self.pipeline.settings.answer
        verdicts = verify_answer(
            raw, prep.evidence, self.pipeline.embed, min_support=settings.min_support, question=prep.standalone
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
            return refusal(prep, mode=mode, sources=sources, verdicts=verdicts, timings=timings(), tokens=tokens)
        # A marker resolves to a citation only through a supported claim: a fragment ("Yes [1].") keeps the
        # markers such a claim also has, never one of its own ("End of sources [3]." from an abstract).
        cited = {n for v in supported for n in v.cited}
        for v in verdicts:
            if not v.claim:
                v.dropped_markers += [n for n in v.cited if n not in cited]
                v.cited = [n for n in v.cited if n in cited]
        text = render([v for v in verdicts if v.supported and (v.claim or v.cited)])
        return make_answer(
            prep,
            mode=mode,
            text=f"The abstract states: {text}" if quoted else text,
            citations=self.pipeline.citations(prep, supported),
            sources=sources,
            sentences=[answer_sentence(v) for v in verdicts],
            unsupported=[v.text for v in claims if not v.supported],
            timings=timings(),
            tokens=tokens,
            kind=prep.kind,
            quoted=quoted,
        )

    def extractive(self, prep: Prepared, max_sentences: int = 2) -> str:
        """The most relevant sentences of the offered sources, each cited: no LLM."""
        if prep.refuse_reason is not None or not prep.evidence:
            return ""
        cands = [(ev.n, span) for ev in prep.evidence for span in ev.spans]
        by_n = {e.n: e for e in prep.evidence}
        texts = [by_n[n].sentence(span) for n, span in cands]
        scores = self.pipeline.scorer.score(prep.standalone, texts, [n for n, _ in cands])
        scored = sorted(((float(sc), n, span) for sc, (n, span) in zip(scores, cands)), key=lambda x: -x[0])
        picked = scored[:max_sentences]
        return " ".join(f"{' '.join(by_n[n].abstract[a:b].split()).rstrip('.')} [{n}]." for _s, n, (a, b) in picked)

    def as_runnable(self) -> Runnable[Query, Answer]:
        """The whole chain as an LCEL runnable: :class:`~rag.types.Query` -> :class:`~rag.types.Answer`."""
        pipeline = self.pipeline

        def generate(prep: Prepared) -> tuple[Prepared, str, dict[str, Any]]:
            if prep.refuse_reason is not None:
                return prep, "", {}
            t = time.perf_counter()
            msg = pipeline.chat().invoke(prep.messages)
            usage = getattr(msg, "usage_metadata", None) or {}
            extra = {
                "timings": {"generation": time.perf_counter() - t},
                "prompt_tokens": usage.get("input_tokens", prep.prompt_tokens),
                "completion_tokens": usage.get("output_tokens", 0),
            }
            return prep, str(msg.content), extra

        def verify(t: tuple[Prepared, str, dict[str, Any]]) -> Answer:
            text, reasoning = split_reasoning(t[1])
            return with_reasoning(self.finalize(t[0], text, "llm", t[2]), reasoning)

        return (RunnableLambda(pipeline.prepare) | RunnableLambda(generate) | RunnableLambda(verify)).with_config(
            run_name="grounded_answer"
        )


def with_reasoning(answer: Answer, reasoning: str | None) -> Answer:
    """``answer`` carrying the model's think block (kept for the UI to show folded; never verified)."""
    return answer if reasoning is None else answer.model_copy(update={"reasoning": reasoning})


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

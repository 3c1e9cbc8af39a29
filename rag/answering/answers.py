"""Every :class:`~rag.types.Answer` is built here, and every answer path has the same shape.

An answer path (:class:`AnswerPath`) is one kind of question answered one way: it reads what
:meth:`AnswerPipeline.prepare <rag.answering.pipeline.AnswerPipeline.prepare>` decided and yields the typed
events of :mod:`rag.events`, ending in one :class:`~rag.events.AnswerEvent`. The paths are registered by kind
in :data:`rag.answering.paths.PATHS`, which the Assistant dispatches to: a new kind of question is one new
class and one entry there.

:func:`make_answer` and :func:`refusal` build the answer from the prepared state, so what a path decides (its
text, citations, sentences) is all it passes.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import ClassVar

from rag.answering.evidence import NO_ANSWER
from rag.answering.pipeline import AnswerPipeline, Preparation, Prepared
from rag.answering.verify import SentenceVerdict
from rag.events import Event
from rag.types import (
    Answer,
    AnswerMode,
    AnswerSentence,
    Citation,
    ListItem,
    Query,
    QuestionKind,
    SearchHit,
    Verdict,
)


class AnswerPath(ABC):
    """One kind of question, answered one way (see the module docstring)."""

    #: the kind of question this path answers (its key in :data:`rag.answering.paths.PATHS`)
    kind: ClassVar[QuestionKind]
    #: how the pipeline readies its questions (by default as a lookup's: relevance gate, evidence, answer prompt)
    preparation: ClassVar[Preparation] = Preparation()

    def __init__(self, pipeline: AnswerPipeline) -> None:
        self.pipeline = pipeline

    @abstractmethod
    def events(self, query: Query, prepared: Prepared) -> Iterator[Event]:
        """The answer to ``query`` as typed events, the last one an :class:`~rag.events.AnswerEvent`."""

    def refuse(
        self,
        prep: Prepared,
        mode: AnswerMode,
        *,
        kind: QuestionKind = "lookup",
        verdict: Verdict | None = None,
        verdict_probabilities: dict[str, float] | None = None,
    ) -> Answer:
        """The refusal when nothing could be said: no sentence checked, the prepared timings and tokens."""
        t0 = time.perf_counter()
        return refusal(
            prep,
            mode=mode,
            sources=self.pipeline.ordered_sources(prep),
            timings=prep.timings | {"verify": time.perf_counter() - t0},
            tokens={"prompt": prep.prompt_tokens, "completion": 0},
            kind=kind,
            verdict=verdict,
            verdict_probabilities=verdict_probabilities,
        )


def answer_sentence(verdict: SentenceVerdict) -> AnswerSentence:
    """A verified sentence as the answer reports it (a fragment too short to claim anything counts as supported)."""
    return AnswerSentence(
        text=verdict.text,
        citations=tuple(verdict.cited),
        support=verdict.support,
        supported=verdict.supported or not verdict.claim,
    )


def make_answer(
    prep: Prepared,
    *,
    mode: AnswerMode,
    text: str,
    sources: Sequence[SearchHit],
    timings: dict[str, float],
    citations: Sequence[Citation] = (),
    sentences: Sequence[AnswerSentence] = (),
    unsupported: Sequence[str] = (),
    tokens: dict[str, int] | None = None,
    refused: bool = False,
    kind: QuestionKind = "lookup",
    names_source: bool | None = None,
    quoted: bool = False,
    items: Sequence[ListItem] = (),
    checked: int | None = None,
    collection_size: int | None = None,
    verdict: Verdict | None = None,
    verdict_probabilities: dict[str, float] | None = None,
) -> Answer:
    """The answer to the prepared question; ``names_source`` defaults to the prepared one's."""
    return Answer(
        question=prep.question,
        standalone_question=prep.standalone,
        text=text,
        refused=refused,
        citations=list(citations),
        sources=list(sources),
        sentences=list(sentences),
        unsupported=list(unsupported),
        mode=mode,
        timings=timings,
        tokens=tokens or {},
        names_source=prep.names_source if names_source is None else names_source,
        kind=kind,
        items=list(items),
        checked=checked,
        collection_size=collection_size,
        verdict=verdict,
        verdict_probabilities=verdict_probabilities or {},
        quoted=quoted,
    )


def refusal(
    prep: Prepared,
    *,
    mode: AnswerMode,
    sources: Sequence[SearchHit],
    timings: dict[str, float],
    tokens: dict[str, int],
    verdicts: Sequence[SentenceVerdict] = (),
    kind: QuestionKind = "lookup",
    verdict: Verdict | None = None,
    verdict_probabilities: dict[str, float] | None = None,
) -> Answer:
    """The refusal (:data:`~rag.answering.evidence.NO_ANSWER`), with the top three sources and what was
    checked: each sentence's verdict, the claims nothing supported."""
    return make_answer(
        prep,
        mode=mode,
        text=NO_ANSWER,
        refused=True,
        sources=list(sources)[:3],
        sentences=[answer_sentence(v) for v in verdicts],
        unsupported=[v.text for v in verdicts if v.claim and not v.supported],
        timings=timings,
        tokens=tokens,
        kind=kind,
        verdict=verdict,
        verdict_probabilities=verdict_probabilities,
    )

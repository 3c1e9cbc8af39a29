"""Check a claim against the literature: each retrieved paper's stance, quoted, then an overall verdict.

"Is it true that X?" asked of a collection: the most relevant papers (hybrid retrieval) are judged one by one
by the stance judge (:mod:`rag.answering.stance`) — supports, refutes or not stated, with a calibrated
probability and the deciding sentence quoted verbatim and located in the abstract — and streamed as they are
judged. The verdict counts the papers whose stance is decided (supports or refutes, at least
``check.min_probability``): *supported* when some support and none refute, *refuted* the other way round,
*mixed* when both, *not enough evidence* when none decides. The claim is data in the prompt, never an
instruction, and the verdict is computed here, not written by the model.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence

from rag.answering.stance import StanceJudge, trimmed_span
from rag.events import CheckEvent, StanceEvent
from rag.types import ClaimCheck, ClaimVerdict, PaperStance, SearchHit


def verdict_of(papers: Sequence[PaperStance]) -> tuple[ClaimVerdict, dict[str, int]]:
    """The overall verdict and the counts of the papers that decide it."""
    supports = sum(p.decided and p.stance == "supports" for p in papers)
    refutes = sum(p.decided and p.stance == "refutes" for p in papers)
    counts = {"supports": supports, "refutes": refutes, "not stated": len(papers) - supports - refutes}
    if supports and refutes:
        return "mixed", counts
    if supports:
        return "supported", counts
    if refutes:
        return "refuted", counts
    return "not enough evidence", counts


class ClaimChecker:
    """Judges the papers found for a claim, one by one."""

    def __init__(self, judge: StanceJudge, *, min_probability: float = 0.5, skip_far: bool = True) -> None:
        self.judge = judge
        self.min_probability = min_probability
        #: papers too far from the claim are not read by the model (:func:`rag.answering.stance.too_far`)
        self.skip_far = skip_far

    def stance(self, n: int, claim: str, hit: SearchHit) -> PaperStance:
        abstract = hit.abstract or hit.text
        # also asked the other way round: an excerpt that refutes the claim supports its opposite
        j = self.judge.judge(claim, hit.title, abstract, kind="claim", opposite=True, skip_far=self.skip_far)
        s, e = trimmed_span(abstract, j.excerpt.best)
        return PaperStance(
            n=n,
            paper_id=hit.paper_id,
            title=hit.title,
            stance=j.stance,
            probability=j.probability,
            probabilities={str(k): v for k, v in j.probabilities.items()},
            quote=abstract[s:e],
            span=(s, e),
            decided=j.stance != "not stated" and j.probability >= self.min_probability,
            asked=j.asked,
        )

    def events(
        self, claim: str, hits: Sequence[SearchHit], *, retrieval: float = 0.0
    ) -> Iterator[StanceEvent | CheckEvent]:
        """A :class:`StanceEvent` per paper of ``hits`` (in their order), then the :class:`CheckEvent`;
        ``retrieval``: the seconds it took to find them (reported in the timings)."""
        t1 = time.perf_counter()
        papers: list[PaperStance] = []
        for n, hit in enumerate(hits, 1):
            paper = self.stance(n, claim, hit)
            papers.append(paper)
            yield StanceEvent(paper=paper, checked=n, total=len(hits))
        verdict, counts = verdict_of(papers)
        t2 = time.perf_counter()
        yield CheckEvent(
            check=ClaimCheck(
                claim=claim,
                verdict=verdict,
                counts=counts,
                papers=papers,
                checked=len(papers),
                timings={
                    "retrieval": round(retrieval, 3),
                    "judging": round(t2 - t1, 3),
                    "total": round(retrieval + t2 - t1, 3),
                },
            )
        )

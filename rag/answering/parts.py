"""Questions with several parts: each part answered through the spine on its own, one answer in the parts' order.

"What does MaskGen do, and how is it evaluated?" is two questions, and a path answers one: asked whole, the
model answered the first part and dropped the second (issue 28). :func:`split_question` finds the parts by
the question's form, with no model call:

* two or more sentences that end with a question mark ("How many species does WildBox cover? How many boxes
  does it have?");
* a second question joined by "and", "but", "then", "also" or a semicolon, when it starts with a question word
  or an auxiliary verb ("..., and how is it evaluated?", "...; what does Top-K routing add?");
* two question phrases sharing one predicate ("Which dataset and which metric does WildBox use?" -> "Which dataset
  does WildBox use?", "Which metric does WildBox use?").

It never splits a comparison (rag.answering.kinds), a list's own tail ("How many papers ..., and which are
they?"), a list of names ("papers that use X and Y"), a part of fewer than three words ("... propose and why?"),
a question whose later part speaks of "they" or "each" of a conjoined subject or of a list ("How do WildBox and X
use animal data, and what do they find?"), or a sentence that asks nothing in its first words. A later part that
says "it" of what the first part is about gets its name ("How is it evaluated?" -> "How is MaskGen evaluated?"),
since each part is retrieved and answered alone; when that is unsure ("Against what was X compared, and how did
it do?") the part keeps "it" and is asked after the first part, as a follow-up is (its history).

:class:`MultiPart` answers each part by the path of its own kind, in order, and streams them as they come: one
:class:`~rag.events.StatusEvent` (every part prepared), then each part's events, its sources renumbered into one
numbering (a paper cited by two parts keeps one number), then one :class:`~rag.events.AnswerEvent` whose text
answers each part in order, with its own citations, or says of a part the abstracts don't answer
"The abstracts don't say: <the part>". The whole is read as one text (its kind "lookup"): a list part's
lines and a yes/no part's verdict are in it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field

from rag.answering.answers import make_answer
from rag.answering.evidence import NO_ANSWER
from rag.answering.kinds import classify_question
from rag.answering.paths import PATHS
from rag.answering.pipeline import AnswerPipeline, Prepared
from rag.corpus.tokens import name_tokens
from rag.events import AnswerEvent, Event, ItemEvent, ProgressEvent, StatusEvent, TokenEvent
from rag.types import Answer, Query, SearchHit

_WH = r"(?:what|which|who|whom|whose|where|when|why|how)"
_AUX = r"(?:is|are|was|were|does|do|did|can|could|has|have|had|will|would|should|may|might)"
# (followed by a space: "Who&When Pro" is a name, not "who")
_ASK = rf"(?:{_WH}|{_AUX}|explain|describe|list|name|compare|in\s+which|on\s+which|under\s+which|toward\s+which)\s"
# where a second question starts inside one sentence
_JOIN = re.compile(rf"\s*;\s*(?={_ASK})|,?\s+(?:and|but|then|also|plus)\s+(?:also\s+)?(?={_ASK})", re.I)
_LEAD = re.compile(r"^(?:and|also|so|then|but|plus),?\s+(?:also,?\s+)?", re.I)
# a list question's own tail: "..., and which are they?", "and which ones?"
_LIST_TAIL = re.compile(
    r"^(?:which|what)(?:\s+(?:ones|papers|of\s+them))?(?:\s+(?:are|were)\s+(?:they|those|these|them))?\s*[?.!]*$", re.I
)
# a question phrase with no verb of its own: "Which dataset" (of "Which dataset and which metric does X use?")
_BARE_PHRASE = re.compile(r"^(?:which|what|how\s+many)(?:\s+[\w&@+.-]+){1,3}$", re.I)
_SHARED_PREDICATE = re.compile(rf"^(?:which|what|how\s+many)\s+(?:[\w&@+.-]+\s+){{1,3}}?(?P<pred>{_AUX}\b.*)$", re.I)
_PLURAL_BACK = re.compile(r"\b(?:they|them|their|each|both)\b", re.I)
# the first part asks within its first words ("Hi! What does ...", not "A benchmark for figuring out where ...")
_ASKS_EARLY = re.compile(rf"^(?:\S+\s+){{0,3}}?{_ASK}", re.I)
#: a later part that speaks of something it does not name ("How did it do?"): asked after the first part
REFERS_BACK = re.compile(r"\b(?:it|its|they|them|their|this|these|those)\b", re.I)
_IT = re.compile(r"\b(it|its)\b", re.I)
# what the first part is about, when it has no name token: "What is Independent Risk Minimization (for)?",
# "How large is Who&When Pro?", "In which environments does social learning emerge?"
_IS_SUBJECT = re.compile(rf"^{_WH}(?:\s+\w+)?\s+(?:is|are|was|were)\s+(?P<subj>[^,?]+?)(?:\s+for)?\s*\??$", re.I)
_DO_SUBJECT = re.compile(
    rf"^(?:(?:in|on|under|for|from)\s+)?{_WH}(?:\s+\w+)?\s+(?:does|did|do)\s+(?:the\s+)?(?P<subj>[^,?]+?)\s+\w+"
    r"(?:\s+(?:for|to|on|with))?\s*\??$",
    re.I,
)
_PRONOUN = re.compile(r"^(?:it|they|this|that|these|those|he|she|we|you)$", re.I)


def split_question(question: str) -> list[str]:
    """The parts of ``question`` in order (see the module docstring); ``[question]`` unchanged when it has one."""
    q = " ".join(question.split())
    if classify_question(q) == "compare":
        return [question]
    chunks: list[str] = []
    for sentence in re.split(r"(?<=\?)\s+(?=\S)", q):
        if chunks:  # "What does X do? And how is it evaluated?"
            sentence = _LEAD.sub("", sentence, count=1)
        pieces = _JOIN.split(sentence)
        chunks += _join_bare_phrases([p.strip() for p in pieces if p.strip()])
    if len(chunks) < 2 or not _ASKS_EARLY.search(chunks[0]):
        return [question]  # "A benchmark for figuring out where and why agents fail ...": no question to split
    for chunk in chunks[1:]:
        # not a question of its own (a tail, a fragment): it belongs to the part before it
        if len(chunk.split()) < 3 or _LIST_TAIL.match(chunk) or not re.match(_ASK, chunk, re.I):
            return [question]
    parts = chunks
    back = any(_PLURAL_BACK.search(p) for p in parts[1:])
    if back and (" and " in parts[0].lower() or classify_question(parts[0]) == "list"):
        # "How do X and Y use animal data, and what do they find?", "Which RL papers are there, and how do they
        # use RL differently?": the later part asks about all of them, so it is one question
        return [question]
    capital = question.strip()[:1].isupper()
    return [_finish(p, parts[0], i, capital) for i, p in enumerate(parts)]


def _join_bare_phrases(pieces: list[str]) -> list[str]:
    """Two question phrases that share one predicate, each given it: "Which dataset" + "which metric does X use"
    -> "Which dataset does X use", "which metric does X use"."""
    out = list(pieces)
    for i in range(len(out) - 2, -1, -1):
        shared = _SHARED_PREDICATE.match(out[i + 1].rstrip("?"))
        if _BARE_PHRASE.match(out[i]) and shared:
            out[i] = f"{out[i]} {shared.group('pred')}"
    return out


def _finish(part: str, first: str, i: int, capital: bool) -> str:
    part = part.strip().rstrip(",;.").strip()
    if i > 0:
        if re.match(r"which\s+ones\b", part, re.I) and re.match(r"which\s+papers\b", first, re.I):
            part = re.sub(r"^(which)\s+ones\b", r"\1 papers", part, flags=re.I)
        subject = _subject(first)
        if subject and not name_tokens(part) and _IT.search(part):
            part = _IT.sub(lambda m: subject + ("'s" if m.group(1).lower() == "its" else ""), part, count=1)
    if capital:
        part = part[:1].upper() + part[1:]
    return part if part.endswith("?") else part + "?"


def _subject(first: str) -> str | None:
    """What the first part is about, as a later part's "it" means it: a name right after its verb ("What does
    MaskGen do?", "Does VAE-LFA need ..."), else the subject of "What is X?" or "What does X <verb>?"; None when
    unsure (the later part is then asked after the first, see :class:`MultiPart`)."""
    for name in name_tokens(first):
        m = re.search(rf"(?:^|\b(?i:{_AUX})\s+)(?P<name>{re.escape(name)}(?:\s+[A-Z][\w&-]*)*)", first)
        if m:
            return m.group("name")
    for pattern, most in ((_IS_SUBJECT, 6), (_DO_SUBJECT, 4)):
        s = pattern.search(first.rstrip("?"))
        if s and len(s.group("subj").split()) <= most and not _PRONOUN.match(s.group("subj")):
            return s.group("subj")
    return None


# ---------------------------------------------------------------------------------------------- answering
@dataclass
class _Numbering:
    """One numbering of the sources of every part: a paper keeps the number it was first given (a list's paper is
    given its number when it is confirmed, before its source is known: its slot is filled at the part's end)."""

    slots: list[SearchHit | None] = field(default_factory=list)
    numbers: dict[str, int] = field(default_factory=dict)

    def reserve(self, paper_id: str) -> int:
        if paper_id not in self.numbers:
            self.slots.append(None)
            self.numbers[paper_id] = len(self.slots)
        return self.numbers[paper_id]

    def number(self, hit: SearchHit) -> int:
        n = self.reserve(hit.paper_id)
        if self.slots[n - 1] is None:
            self.slots[n - 1] = hit
        return n

    @property
    def sources(self) -> list[SearchHit]:
        """The sources in their numbers' order (``sources[n - 1]`` is source n)."""
        return [h for h in self.slots if h is not None]

    def mapping(self, sources: Sequence[SearchHit]) -> dict[int, int]:
        """A part's own source numbers (1..) -> the shared ones."""
        return {n: self.number(h) for n, h in enumerate(sources, 1)}


_MARKER = re.compile(r"\[(\d+)\]")


def renumber(text: str, mapping: dict[int, int]) -> str:
    """``text`` with each ``[n]`` of a part's own numbering written in the shared one."""
    return _MARKER.sub(lambda m: f"[{mapping.get(int(m.group(1)), int(m.group(1)))}]", text)


class _Renumbering:
    """Streams a part's tokens with their markers renumbered, holding back a marker until it closes."""

    def __init__(self, mapping: dict[int, int]) -> None:
        self.mapping = mapping
        self.buffer = ""

    def feed(self, token: str) -> str:
        self.buffer += token
        cut = self.buffer.rfind("[")
        if cut >= 0 and re.fullmatch(r"\[\d*", self.buffer[cut:]):
            out, self.buffer = self.buffer[:cut], self.buffer[cut:]
        else:
            out, self.buffer = self.buffer, ""
        return renumber(out, self.mapping)

    def flush(self) -> str:
        out, self.buffer = self.buffer, ""
        return renumber(out, self.mapping)


class MultiPart:
    """Answers a question of several parts (from :func:`split_question`) part by part, as one answer."""

    def __init__(self, pipeline: AnswerPipeline) -> None:
        self.pipeline = pipeline

    def events(self, query: Query, parts: Sequence[str]) -> Generator[Event, None, None]:
        t0 = time.perf_counter()
        pipeline = self.pipeline
        # a later part that still says "it" of something it does not name is asked after the first part, as a
        # follow-up is: the first part's words find its papers
        queries = [
            query.model_copy(
                update={"question": part}
                | ({"history": (*query.history, ("user", parts[0]))} if i and REFERS_BACK.search(part) else {})
            )
            for i, part in enumerate(parts)
        ]
        preps = []
        for q in queries:
            preps.append((yield from pipeline.prepare_steps(q)))
        numbering = _Numbering()
        for prep in preps:  # the sources known before any part is answered keep their order
            if prep.evidence:
                numbering.mapping(pipeline.ordered_sources(prep))
        quotes = [
            quote.model_copy(update={"n": numbering.numbers[quote.paper_id]})
            for prep in preps
            for quote in prep.quotes()
        ]
        hits = {h.paper_id: h for prep in preps for h in prep.hits}
        yield StatusEvent(
            standalone_question=" ".join(p.standalone for p in preps),
            sources=list(hits.values()),
            evidence=list({(q.paper_id, q.span): q for q in quotes}.values()),
        )
        answers: list[Answer] = []
        for i, (q, prep) in enumerate(zip(queries, preps)):
            answer = yield from self._part(q, prep, numbering, first=i == 0)
            answers.append(answer)
        yield AnswerEvent(answer=self._combine(query, preps, parts, answers, numbering, t0))

    def _part(
        self, query: Query, prep: Prepared, numbering: _Numbering, *, first: bool
    ) -> Generator[Event, None, Answer]:
        """One part's events, renumbered; returns its answer with the shared numbering."""
        known = numbering.mapping(self.pipeline.ordered_sources(prep)) if prep.evidence else None
        stream = _Renumbering(known) if known is not None else None
        held: list[str] = []  # a part whose sources are chosen while it is answered: shown once it is done
        started = False
        for event in PATHS[prep.kind](self.pipeline).events(query, prep):
            if isinstance(event, TokenEvent):
                if stream is None:
                    held.append(event.text)
                    continue
                text = stream.feed(event.text)
                if text:
                    yield TokenEvent(text=("" if first or started else "\n\n") + text)
                    started = True
            elif isinstance(event, ItemEvent):
                item = event.item.model_copy(update={"n": numbering.reserve(event.item.paper_id)})
                yield ItemEvent(item=item, checked=event.checked, total=event.total)
            elif isinstance(event, ProgressEvent):
                yield event
            elif isinstance(event, AnswerEvent):
                answer = self._renumbered(event.answer, numbering)
                text = _part_text(answer, query.question)
                if stream is not None and started:
                    if tail := stream.flush():
                        yield TokenEvent(text=tail)
                else:
                    yield TokenEvent(text=("" if first else "\n\n") + text)
                return answer
            else:  # QueuedEvent, StatusEvent, ErrorEvent: a path sends none of them, but pass any on
                yield event
        raise AssertionError("an answer path ends with an AnswerEvent")  # pragma: no cover

    @staticmethod
    def _renumbered(answer: Answer, numbering: _Numbering) -> Answer:
        mapping = numbering.mapping(answer.sources)
        return answer.model_copy(
            update={
                "text": renumber(answer.text, mapping),
                "citations": [c.model_copy(update={"n": mapping.get(c.n, c.n)}) for c in answer.citations],
                "sentences": [
                    s.model_copy(update={"citations": tuple(mapping.get(n, n) for n in s.citations)})
                    for s in answer.sentences
                ],
                "items": [i.model_copy(update={"n": mapping.get(i.n, i.n)}) for i in answer.items],
            }
        )

    def _combine(
        self,
        query: Query,
        preps: Sequence[Prepared],
        parts: Sequence[str],
        answers: Sequence[Answer],
        numbering: _Numbering,
        t0: float,
    ) -> Answer:
        whole = Prepared(
            question=query.question,
            standalone=" ".join(p.standalone for p in preps),
            hits=numbering.sources,
            names_source=any(p.names_source for p in preps),
        )
        refused = all(a.refused for a in answers)
        timings: dict[str, float] = {}
        tokens: dict[str, int] = {}
        for a in answers:
            for key, value in a.timings.items():
                timings[key] = timings.get(key, 0.0) + value
            for key, count in a.tokens.items():
                tokens[key] = tokens.get(key, 0) + count
        return make_answer(
            whole,
            mode=query.mode,
            text=NO_ANSWER if refused else "\n\n".join(_part_text(a, p) for a, p in zip(answers, parts)),
            refused=refused,
            citations=[c for a in answers for c in a.citations],
            sources=numbering.sources if not refused else numbering.sources[:3],
            sentences=[s for a in answers for s in a.sentences],
            unsupported=[u for a in answers for u in a.unsupported],
            timings=timings | {"parts": time.perf_counter() - t0},
            tokens=tokens,
            # the whole is read as text (each part's own shape is in it: a list's lines, a yes/no's verdict)
            kind="lookup",
            quoted=any(a.quoted for a in answers),
        )


def _part_text(answer: Answer, part: str) -> str:
    """A part's answer as the whole answer shows it: its text, or for a refused part what was not answered."""
    return f'The abstracts don\'t say: "{part}"' if answer.refused else answer.text

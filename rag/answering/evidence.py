"""Evidence: which sentences of the retrieved abstracts the model is shown, and how they are shown.

A small model can only answer from what it is shown, and every token it reads costs time, so the
evidence is a budget of single sentences, not whole abstracts. Each sentence is scored against the
question by four signals, because each misses what the others catch:

* embedding cosine (paraphrase: "how fast does it run" ~ "runs in time O(poly(D))");
* stemmed word overlap weighted by rarity among the candidate sentences (BM25's idea at sentence
  level: "running time" + "data dimension" picks the one sentence stating both);
* exact matches of the question's numbers, names and symbols ("Top-K", "AP@50", "Qwen3-VL");
* and, for a what/which question, the words of what it asks for ("What dimensionless quantity ..." ->
  "dimensionless quantity"): the answer names the category it belongs to, often in no other sentence.

The best sentences are taken greedily within the token budget, and the sentence after a chosen one
joins it when there is room (a finding is often stated in the sentence after the one that names the
method). Abstracts are untrusted: sentences that instruct the assistant or repeat the refusal sentence
are never evidence (:func:`is_evidence`), and what is shown is defused (:func:`neutralise`).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag.answering.verify import Embed, Evidence, is_instruction, visible_text
from rag.corpus import count_tokens, normalise_text
from rag.corpus.chunking import split_sentences
from rag.corpus.tokens import exact_terms, stems
from rag.types import SearchHit

NO_ANSWER = "The indexed abstracts don't answer this."

_MARKER_LIKE = re.compile(r"[\[\uff3b\u3010\u3014]\s*(\d+(?:\s*[-\u2013,;]\s*\d+)*)\s*[\]\uff3d\u3011\u3015]")
_TEMPLATE_TOKEN = re.compile(r"<\|([^|<>]{0,40})\|>")  # <|im_start|>, <|im_end|>: llama.cpp parses them as tokens
_PROMPT_LABEL = re.compile(r"\b(sources?|question|answer)\s*:", re.I)  # the labels of prompts/answer.md
_NO_ANSWER_WORDS = re.sub(r"\W+", " ", NO_ANSWER.lower()).strip()


def neutralise(text: str) -> str:
    """Abstract text as the prompt shows it: on one line (so it cannot start a ``[n]``, ``Question:`` or
    ``Answer:`` line of its own), without invisible characters, with citation-like brackets as
    parentheses (no planted ``[2]``), chat-template tokens broken up (no forged ``<|im_end|>``) and
    the prompt's labels turned into plain words."""
    text = _MARKER_LIKE.sub(r"(\1)", visible_text(text))
    text = _TEMPLATE_TOKEN.sub(r"<\1>", text)
    return _PROMPT_LABEL.sub(r"\1 -", text)


def readable(text: str) -> str:
    """A sentence as the model reads it: LaTeX and Markdown turned into plain text ("8.68±0.47",
    "O(poly(D))", "20× compression"), then :func:`neutralise`. The stored abstract is unchanged."""
    return neutralise(normalise_text(text))


def is_evidence(sentence: str) -> bool:
    """An abstract sentence may be shown and cited unless it instructs the assistant or mimics our
    refusal sentence (a planted refusal would make the model abstain on a question the paper answers)."""
    words = re.sub(r"\W+", " ", visible_text(sentence).lower())
    return not is_instruction(sentence) and _NO_ANSWER_WORDS not in words


def evidence_spans(abstract: str) -> list[tuple[int, int]]:
    """The sentence spans of ``abstract`` that may be shown and cited."""
    return list(_evidence_spans(abstract))


@functools.lru_cache(maxsize=4096)  # every question reads its papers' abstracts again
def _evidence_spans(abstract: str) -> tuple[tuple[int, int], ...]:
    spans = split_sentences(abstract) or [(0, len(abstract))]
    return tuple(sp for sp in spans if is_evidence(abstract[sp[0] : sp[1]]))


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One sentence that may be shown: which hit it comes from, where it is, and its readable text."""

    hit: int
    span: tuple[int, int]
    text: str


class SentenceScorer:
    """Relevance of candidate sentences to a question (see the module docstring for the four signals).

    Word rarity is measured within each paper (``groups``): a word every sentence of the abstract
    repeats ("quantum" in a quantum paper) names the topic, not the sentence that answers, while the
    question's rarer words ("running time") pick that sentence. Weights chosen on the gold and check
    sets' evidence recall (``python -m rag.evaluation.bench evidence``): 0.5 cosine + 1.0 overlap + 0.3 exact terms
    (+ 0.3 for what a what/which question asks for: ``python -m rag.evaluation.bench variants``).
    """

    COSINE, OVERLAP, EXACT, HEAD = 0.5, 1.0, 0.3, 0.3

    def __init__(self, embed: Embed, *, length: float = 0.5) -> None:
        self.embed = embed
        # BM25's length normalisation b (0.5: gold evidence recall as with 0.3, and a short sentence that
        # states the fact beats a long one that only mentions its words)
        self.length = length

    def score(self, question: str, texts: Sequence[str], groups: Sequence[int] | None = None) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        vecs = self.embed([question, *texts])
        cos = np.asarray(vecs[1:] @ vecs[0], dtype=np.float32)
        q_stems = set(stems(question))
        all_stems = [stems(t) for t in texts]
        s_stems = [set(st) & q_stems for st in all_stems]
        lengths = np.asarray([max(1, len(st)) for st in all_stems], dtype=np.float32)
        members: dict[int, list[int]] = {}
        for k, g in enumerate(groups if groups is not None else [0] * len(texts)):
            members.setdefault(g, []).append(k)
        lexical = np.zeros(len(texts), dtype=np.float32)
        for idx in members.values():
            df: dict[str, int] = {}
            for k in idx:
                for t in s_stems[k]:
                    df[t] = df.get(t, 0) + 1
            idf = {t: math.log((len(idx) + 1) / (df.get(t, 0) + 0.5)) for t in q_stems}
            total = sum(idf.values()) or 1.0
            avg = float(np.mean(lengths[idx]))
            for k in idx:
                # BM25's length normalisation: a long sentence matches more words by being long
                norm = 1 - self.length + self.length * float(lengths[k]) / avg
                lexical[k] = sum(idf[t] for t in s_stems[k]) / total / norm
        exact = exact_terms(question)
        bonus = np.asarray(
            [sum(e.lower() in t.lower() for e in exact) / len(exact) if exact else 0.0 for t in texts],
            dtype=np.float32,
        )
        head = asked_for(question)
        named = np.asarray(
            [len(head & set(st)) / len(head) if head else 0.0 for st in all_stems],
            dtype=np.float32,
        )
        total_score: np.ndarray = self.COSINE * cos + self.OVERLAP * lexical + self.EXACT * bonus + self.HEAD * named
        return total_score


# "What dimensionless quantity separates ...", "Which transform defines ...": the words after a leading what/which,
# up to the verb or preposition that ends the phrase
_ASKED_FOR = re.compile(
    r"^\W*(?:what|which)\s+((?:(?!(?:is|are|was|were|does|do|did|has|have|had|can|could|would|will|should|of|in|on"
    r"|for|to|by|with|from|at|the|a|an|kind|kinds|type|types|sort|papers?|works?|studies|articles?|abstracts?|ones)\b)"
    r"[\w-]+\s+){1,3})",
    re.I,
)


def asked_for(question: str) -> set[str]:
    """The stems of what a what/which question asks for ("What dimensionless quantity separates ..." ->
    {"dimensionless", "quantiti"}): the sentence that answers usually names it ("... by one dimensionless
    quantity: the inverse participation ratio"), in words a question that names only the category shares
    with no other sentence. Empty for other questions, and for a list's "Which papers ..." (it asks for papers)."""
    m = _ASKED_FOR.match(" ".join(question.split()))
    return set(stems(m.group(1))) if m else set()


def candidates_of(hits: Sequence[SearchHit]) -> tuple[list[Candidate], list[list[tuple[int, int]]]]:
    """Every evidence sentence of every hit (readable text), and each hit's evidence spans."""
    out: list[Candidate] = []
    spans_of: list[list[tuple[int, int]]] = []
    for i, h in enumerate(hits):
        spans = evidence_spans(h.abstract)
        spans_of.append(spans)
        out.extend(Candidate(hit=i, span=sp, text=readable(h.abstract[sp[0] : sp[1]])) for sp in spans)
    return out, spans_of


def select_evidence(
    question: str,
    hits: Sequence[SearchHit],
    scorer: SentenceScorer,
    *,
    budget: int,
    encoding: str,
    rank_prior: float = 0.03,
    per_paper: int | None = None,
) -> tuple[list[Evidence], dict[int, list[tuple[int, int]]]]:
    """Number the papers (in retrieval order) and pick their most relevant sentences within ``budget``
    tokens; ``per_paper`` caps the sentences of one paper (a comparison gives each paper its share)."""
    cands, spans_of = candidates_of(hits)
    if not cands:
        return [], {}
    hit_of = [c.hit for c in cands]
    scores = scorer.score(question, [c.text for c in cands], hit_of) - rank_prior * np.asarray(hit_of)
    order = np.argsort(-scores)
    index = {(c.hit, c.span): k for k, c in enumerate(cands)}
    chosen: dict[int, list[tuple[int, int]]] = {}
    used = 0

    def cost(c: Candidate) -> int:
        return count_tokens(c.text, encoding) + (
            0 if c.hit in chosen else count_tokens(hits[c.hit].title, encoding) + 4
        )

    def take(c: Candidate) -> bool:
        nonlocal used
        if c.span in chosen.get(c.hit, []):
            return False
        if per_paper is not None and len(chosen.get(c.hit, [])) >= per_paper:
            return False
        need = cost(c)
        if used + need > budget and chosen:
            return False
        chosen.setdefault(c.hit, []).append(c.span)
        used += need
        return True

    best = float(scores[order[0]])
    for k in order:
        c = cands[int(k)]
        if take(c):
            # the sentence after a strong hit often states the finding the hit only introduces
            nxt = _next_span(spans_of[c.hit], c.span)
            if nxt is not None and float(scores[int(k)]) >= best - 0.25:
                take(cands[index[(c.hit, nxt)]])
        if used >= budget:
            break
    evidence: list[Evidence] = []
    shown: dict[int, list[tuple[int, int]]] = {}
    for n, i in enumerate(sorted(chosen), 1):
        evidence.append(Evidence.of_hit(n, hits[i], spans_of[i]))
        shown[n] = sorted(chosen[i])
    return evidence, shown


def _next_span(spans: Sequence[tuple[int, int]], span: tuple[int, int]) -> tuple[int, int] | None:
    i = list(spans).index(span)
    return spans[i + 1] if i + 1 < len(spans) else None


def format_evidence(evidence: Sequence[Evidence], shown: dict[int, list[tuple[int, int]]]) -> str:
    """``[n] Title: sentence sentence`` lines of readable, neutralised text (a title that instructs the
    assistant is replaced by the paper id)."""
    lines = []
    for ev in evidence:
        body = " ".join(readable(ev.abstract[a:b]) for a, b in shown[ev.n])
        title = neutralise(ev.paper_id if is_instruction(ev.title) else normalise_text(ev.title))
        lines.append(f"[{ev.n}] {title}: {body}")
    return "\n".join(lines) + "\n"

"""Does this passage support this statement? The one calibrated judge.

The claim check and yes/no answers ask the same thing of a paper: does its text support the statement, contradict
it, or not say? (The list judge's "does this paper meet the list's criterion?" is asked through the same object,
:meth:`StanceJudge.matches`, with its own prompt and no head; the changed-fact gate does not ask the model:
docs/benchmarks.md, "Claims with a changed fact", says why.) Generated words are a poor answer (the embedded model
says "yes" to almost anything), so the judge reads the model's *probabilities* for its first answer word — "Yes",
"No", "Not" — after a fixed prompt, and turns them into calibrated probabilities with a small multinomial logistic
head that also sees what the embedded models already compute: how close the statement is to the excerpt (MiniLM
cosine, shared content words) and whether numbers or negations differ.

The model cannot tell a contradicting excerpt from a supporting one when asked about the claim alone (asked
"does it contradict?" it is at chance, docs/benchmarks.md). So a claim is also set against its opposite: the
model first rewrites it to state the opposite (``prompts/opposite.md``, once per claim), then, shown the
excerpt, is made to choose which of the two it supports (``prompts/contrast.md``, both orders, so that its
liking for option A cancels). How much it prefers the claim is the head's eighth feature (refuting against
supporting SciFact dev pairs: AUC 0.965; asking the yes/no question of the opposite instead, the feature it
replaced, gave 0.84). A question has no opposite: its feature is 0.

The head is fitted on labelled data (SciFact claims, PubMedQA questions) by ``python -m rag.evaluation.bench
stance-train`` and ships as ``rag/data/stance_head.json``; nothing is downloaded. A statement is either a
``claim`` ("X reduces Y") or a ``question`` ("Does X reduce Y?"): each has its own head, the prompt and
features are shared. Without a head (or with an endpoint that returns no logprobs) the judge falls back to the
model's normalised label probabilities, which is what it was before.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

import numpy as np
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from rag.answering.evidence import SentenceScorer
from rag.answering.facts import numbers
from rag.answering.judge import label_probabilities
from rag.answering.prompts import load_prompt
from rag.answering.verify import is_instruction
from rag.corpus.chunking import split_sentences
from rag.corpus.tokens import stems
from rag.errors import ConfigError
from rag.types import Stance

StatementKind = Literal["claim", "question"]
STANCES: tuple[Stance, ...] = ("supports", "refutes", "not stated")
#: the model's first answer word for each stance (normalised over these three)
LABEL_WORDS: tuple[str, ...] = ("yes", "no", "not")
FEATURES: tuple[str, ...] = (
    "log p(no)/p(yes)",
    "log p(not)/p(yes)",
    "p(yes)",
    "cosine",
    "coverage",
    "numbers missing",
    "negation differs",
    "claim over opposite",
)
#: the letters of :meth:`StanceJudge.preference`'s forced choice between a claim and its opposite
CHOICE_LETTERS: tuple[str, ...] = ("a", "b")
# the statement comes first (a claim check judges many papers on one claim: the server's prompt cache keeps the
# system prompt and the statement, so each paper costs only its title and excerpt), the question last
_STATEMENT = {"claim": "Claim: {statement}", "question": "Question: {statement}"}
_ASK = {
    "claim": "Is the claim true according to the excerpt? Answer Yes, No, or Not stated.",
    "question": "According to the excerpt, is the answer yes? Answer Yes, No, or Not stated.",
}
_NEGATION = re.compile(
    r"\b(?:not|no|never|neither|nor|without|cannot|lack\w*|fail\w*|absen\w+|unaffected|none|"
    r"\w+n't)\b",
    re.IGNORECASE,
)
_ANSWER_WORD = re.compile(r"^(?:yes|true)\b[\s,.:;!-]*", re.IGNORECASE)
_DENIAL = re.compile(r"^(?:no|false)\s*[,.:;!-]", re.IGNORECASE)
HEAD_FILE = "stance_head.json"
#: a claim's opposite is judged only on excerpts the model gives P(not stated) below this (:func:`wants_opposite`)
OPPOSITE_BELOW_NOT = 0.5
#: an excerpt is too far from a claim to be worth asking the model (:func:`too_far`) when its best sentence's MiniLM
#: cosine is under the first figure, or under the second while the excerpt holds under a share (the third) of the
#: claim's content words. Chosen on the SciFact train claims' retrieved papers (docs/benchmarks.md, "Papers too far
#: from the claim")
FAR_COSINE, FAR_COSINE_LITTLE_OVERLAP, LITTLE_OVERLAP = 0.4, 0.5, 0.3
#: the stance probabilities of a paper too far from the claim to be asked: the head's mean over the 96 SciFact train
#: claim pairs that :func:`too_far` holds for (supports / refutes / not stated 13 / 2 / 81 of them; the head
#: called 94 of the 96 not stated)
FAR_PROBABILITIES: dict[Stance, float] = {"supports": 0.09, "refutes": 0.05, "not stated": 0.86}
#: the embedder (provider, model) the judge's excerpts, cosines, head and far rule were measured with; with an index
#: of another embedder the judge still embeds with this one (another model's cosines are on another scale)
JUDGE_EMBEDDER = ("local", "all-MiniLM-L6-v2-int8")


@dataclass(frozen=True)
class Excerpt:
    """The sentences of an abstract the judge reads: the best few for the statement, in the abstract's order."""

    text: str
    spans: tuple[tuple[int, int], ...]
    #: the span of the sentence closest to the statement (what a verdict quotes)
    best: tuple[int, int]
    cosine: float


@dataclass(frozen=True)
class Judgement:
    stance: Stance
    probabilities: dict[Stance, float]
    excerpt: Excerpt
    #: the model's normalised P(yes), P(no), P(not) before the head (empty in a judgement without the model)
    label_probabilities: dict[str, float] = field(default_factory=dict)
    prompt_tokens: int = 0

    @property
    def probability(self) -> float:
        return self.probabilities[self.stance]

    @property
    def asked(self) -> bool:
        """Whether the model read the excerpt (False: judged without it, e.g. :func:`too_far`)."""
        return bool(self.label_probabilities)


def excerpt_of(scorer: SentenceScorer, statement: str, abstract: str, *, sentences: int = 2) -> Excerpt:
    """The ``sentences`` sentences of ``abstract`` that score best for ``statement``, kept in reading order, as the
    abstract writes them; a sentence that speaks to the assistant instead of reporting research is never read."""
    spans = [s for s in split_sentences(abstract) if abstract[s[0] : s[1]].strip()] or [(0, len(abstract))]
    spans = [s for s in spans if not is_instruction(abstract[s[0] : s[1]])] or [(0, 0)]
    texts = [abstract[s:e] for s, e in spans]
    scores = scorer.score(statement, texts)
    order = sorted(range(len(spans)), key=lambda i: -float(scores[i]))
    keep = sorted(order[:sentences])
    vecs = scorer.embed([statement, texts[order[0]]])
    return Excerpt(
        text=" ".join(texts[i].strip() for i in keep),
        spans=tuple(spans[i] for i in keep),
        best=spans[order[0]],
        cosine=float(vecs[1] @ vecs[0]),
    )


def trimmed_span(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """``span`` without the whitespace at its ends (so ``text[s:e]`` is exactly the quote)."""
    s, e = span
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


def wants_opposite(kind: StatementKind, probs: dict[str, float]) -> bool:
    """Whether a claim is worth setting against its opposite on an excerpt: a claim, unless the model already gives
    the excerpt "Not stated" at even odds or more (most retrieved papers: a claim check then asks 40 % fewer
    judgements on the dev pairs, at the same dev accuracy, docs/benchmarks.md). Training and use gate alike."""
    return kind == "claim" and probs.get("not", 0.0) < OPPOSITE_BELOW_NOT


def coverage(statement: str, excerpt: Excerpt) -> float:
    """The share of the statement's content words (stems) that the excerpt also uses."""
    said, read = set(stems(statement)), set(stems(excerpt.text))
    return len(said & read) / len(said) if said else 0.0


def too_far(statement: str, excerpt: Excerpt) -> bool:
    """Whether ``excerpt`` (the abstract's best sentences for ``statement``) is too far from the statement for the
    model to be worth asking: its best sentence's MiniLM cosine is under :data:`FAR_COSINE`, or under
    :data:`FAR_COSINE_LITTLE_OVERLAP` while it uses under :data:`LITTLE_OVERLAP` of the statement's content words.
    On SciFact train claims that is a third of the papers a claim check retrieves (32.7 %) and 9 of the 368
    annotated evidence papers among them; the head called 94 of the 96 train pairs it holds for not stated anyway,
    14 of the 15 evidence pairs among them (docs/benchmarks.md, "Papers too far from the claim")."""
    if excerpt.cosine < FAR_COSINE:
        return True
    return excerpt.cosine < FAR_COSINE_LITTLE_OVERLAP and coverage(statement, excerpt) < LITTLE_OVERLAP


def features(statement: str, excerpt: Excerpt, probs: dict[str, float], preferred: float | None = None) -> np.ndarray:
    """The head's inputs (see :data:`FEATURES`) for one statement and excerpt; ``preferred``: how much the model
    prefers the statement to its opposite when made to choose between them on the excerpt
    (:meth:`StanceJudge.preference`; None: no opposite was asked, the feature is 0)."""
    eps = 1e-4
    p_yes, p_no, p_not = (max(eps, probs.get(w, 0.0)) for w in LABEL_WORDS)
    nums = numbers(statement)
    missing = len(nums - numbers(excerpt.text)) / len(nums) if nums else 0.0
    neg_differs = float(bool(_NEGATION.search(statement)) != bool(_NEGATION.search(excerpt.text)))
    return np.asarray(
        [
            math.log(p_no / p_yes),
            math.log(p_not / p_yes),
            p_yes,
            excerpt.cosine,
            coverage(statement, excerpt),
            missing,
            neg_differs,
            0.0 if preferred is None else preferred,
        ],
        dtype=np.float64,
    )


@dataclass(frozen=True)
class StanceHead:
    """A multinomial logistic regression over :data:`FEATURES` for each statement kind."""

    weights: dict[str, np.ndarray]  # kind -> (3, F)
    bias: dict[str, np.ndarray]  # kind -> (3,)
    mean: dict[str, np.ndarray]
    scale: dict[str, np.ndarray]
    meta: dict[str, Any] = field(default_factory=dict)

    def probabilities(self, kind: StatementKind, x: np.ndarray) -> dict[Stance, float]:
        z = self.weights[kind] @ ((x - self.mean[kind]) / self.scale[kind]) + self.bias[kind]
        p = np.exp(z - z.max())
        p /= p.sum()
        return {s: float(v) for s, v in zip(STANCES, p)}

    def to_json(self) -> dict[str, Any]:
        kinds = sorted(self.weights)
        return {
            "features": list(FEATURES),
            "stances": list(STANCES),
            "heads": {
                k: {
                    "weights": self.weights[k].round(6).tolist(),
                    "bias": self.bias[k].round(6).tolist(),
                    "mean": self.mean[k].round(6).tolist(),
                    "scale": self.scale[k].round(6).tolist(),
                }
                for k in kinds
            },
            "meta": self.meta,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StanceHead:
        if list(data.get("features", [])) != list(FEATURES) or list(data.get("stances", [])) != list(STANCES):
            raise ConfigError(
                "The stance head was fitted on other features: rebuild it with "
                "`python -m rag.evaluation.bench stance-train`."
            )
        heads = data["heads"]
        arr = {
            k: {n: np.asarray(v[n], dtype=np.float64) for n in ("weights", "bias", "mean", "scale")}
            for k, v in heads.items()
        }
        return cls(
            weights={k: a["weights"] for k, a in arr.items()},
            bias={k: a["bias"] for k, a in arr.items()},
            mean={k: a["mean"] for k, a in arr.items()},
            scale={k: a["scale"] for k, a in arr.items()},
            meta=dict(data.get("meta", {})),
        )


def fit_head(
    x: np.ndarray, y: np.ndarray, *, l2: float = 1.0, steps: int = 3000, lr: float = 0.5
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Weights, bias, mean and scale of a softmax regression (L2 on the weights) fitted by gradient descent on
    standardised features; ``y`` holds indices into :data:`STANCES`. Classes are weighted equally."""
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale < 1e-6] = 1.0
    xs = (x - mean) / scale
    n, f = xs.shape
    k = len(STANCES)
    onehot = np.eye(k)[y]
    counts = np.bincount(y, minlength=k).astype(np.float64)
    sample_w = (n / (k * np.maximum(counts, 1.0)))[y]
    w = np.zeros((k, f))
    b = np.zeros(k)
    for _ in range(steps):
        z = xs @ w.T + b
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) * sample_w[:, None] / n
        w -= lr * (g.T @ xs + l2 * w / n)
        b -= lr * g.sum(axis=0)
    return w, b, mean, scale


@cache
def bundled_head() -> StanceHead | None:
    """The head shipped in the package, or None when it has not been built."""
    try:
        text = resources.files("rag").joinpath("data", HEAD_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        return None
    return StanceHead.from_json(json.loads(text))


def head_for(model: str, *, own_file: bool = False) -> StanceHead | None:
    """The bundled head when it was fitted on ``model``'s label probabilities, else None (the judge then uses the
    model's normalised label probabilities): a head fitted on one model's biases miscalibrates another's. A user's
    own GGUF (``own_file``) never gets it, whatever name it is served under."""
    head = bundled_head()
    if head is None or own_file or head.meta.get("model") != model:
        return None
    return head


class StanceJudge:
    """Judges statements against abstracts: the model's label probabilities, then the calibrated head."""

    def __init__(
        self,
        chat: Callable[[], BaseChatModel],
        scorer: SentenceScorer,
        head: StanceHead | None = None,
        *,
        sentences: int = 2,
        memo: MutableMapping[str, dict[str, float]] | None = None,
        opposites: MutableMapping[str, dict[str, str]] | None = None,
    ) -> None:
        self.chat = chat
        #: the model's label probabilities by prompt (benchmarks keep it on disk to re-score with another head)
        self.memo = memo
        #: the model's opposite of each claim by prompt (:meth:`opposite`); kept for the judge's life by default
        self.opposites: MutableMapping[str, dict[str, str]] = {} if opposites is None else opposites
        self.scorer = scorer
        self.head = head
        self.sentences = sentences
        self.system = load_prompt("stance_system").strip()
        self.template = load_prompt("stance")
        self.opposite_template = load_prompt("opposite").strip()
        self.contrast_system = load_prompt("contrast_system").strip()
        self.contrast_template = load_prompt("contrast").strip()
        self.statement_template = load_prompt("statement").strip()
        self.match_system = load_prompt("judge_system").strip()
        self.match_template = load_prompt("judge")

    def messages(self, statement: str, kind: StatementKind, title: str, excerpt: Excerpt) -> list[BaseMessage]:
        user = self.template.format(
            statement=_STATEMENT[kind].format(statement=" ".join(statement.split())),
            title=" ".join(title.split()) or "(untitled)",
            passage=excerpt.text,
            ask=_ASK[kind],
        )
        return [SystemMessage(self.system), HumanMessage(user)]

    def memo_key(self, statement: str, kind: StatementKind, title: str, excerpt: Excerpt) -> str:
        return _key(self.messages(statement, kind, title, excerpt))

    def model_probabilities(
        self, statement: str, kind: StatementKind, title: str, excerpt: Excerpt
    ) -> tuple[dict[str, float], int]:
        return self.ask(self.messages(statement, kind, title, excerpt), LABEL_WORDS)

    def matches(self, criterion: str, paper: str) -> tuple[float, int]:
        """P(yes) that ``paper`` (its title and best sentences) meets a list's ``criterion`` ("is about protein
        folding"), from the model's first word after ``prompts/judge.md``; and the prompt tokens asked. Not
        calibrated by the head: the list path's thresholds (``list_min_yes``) are its calibration."""
        message = self.match_template.format(question=criterion, paper=paper)
        probs, tokens = self.ask([SystemMessage(self.match_system), HumanMessage(message)], ("yes", "no"))
        return probs["yes"], tokens

    def ask(self, messages: list[BaseMessage], labels: tuple[str, ...]) -> tuple[dict[str, float], int]:
        """The model's probabilities of ``labels`` as its first word after ``messages``, from the memo when it holds
        them; and the prompt tokens asked (0 from the memo)."""
        key = _key(messages)
        if self.memo is not None and key in self.memo:
            return dict(self.memo[key]), 0
        probs, usage = label_probabilities(self.chat(), messages, labels)
        if self.memo is not None:
            self.memo[key] = dict(probs)
        return probs, int(usage.get("input_tokens") or 0)

    def contrast_messages(self, first: str, second: str, title: str, excerpt: Excerpt) -> list[BaseMessage]:
        user = self.contrast_template.format(
            title=" ".join(title.split()) or "(untitled)",
            passage=excerpt.text,
            first=" ".join(first.split()),
            second=" ".join(second.split()),
        )
        return [SystemMessage(self.contrast_system), HumanMessage(user)]

    def contrast_keys(self, statement: str, opposite: str, title: str, excerpt: Excerpt) -> list[str]:
        """The memo keys of :meth:`preference`'s two prompts."""
        orders = ((statement, opposite), (opposite, statement))
        return [_key(self.contrast_messages(a, b, title, excerpt)) for a, b in orders]

    def preference(self, statement: str, opposite: str, title: str, excerpt: Excerpt) -> tuple[float, int]:
        """How much the model prefers ``statement`` to its ``opposite`` as what the excerpt supports, made to
        choose between the two (``prompts/contrast.md``): the log-odds of its first letter, asked in both orders
        and averaged, so that its liking for the first option (A) cancels out. Asked whether an excerpt supports a
        claim, the model says yes to claim and opposite alike; made to pick one, it sees which way the finding
        points (refuting against supporting SciFact dev pairs: AUC 0.965, against 0.84 for the yes/no asked of
        the opposite; docs/benchmarks.md). Also the prompt tokens it took."""
        eps, tokens, odds = 1e-4, 0, []
        for first, second in ((statement, opposite), (opposite, statement)):
            probs, asked = self.ask(self.contrast_messages(first, second, title, excerpt), CHOICE_LETTERS)
            tokens += asked
            odds.append(math.log(max(eps, probs.get("a", 0.0)) / max(eps, probs.get("b", 0.0))))
        return (odds[0] - odds[1]) / 2, tokens

    def opposite_key(self, claim: str) -> str:
        """The key of ``claim``'s opposite in :attr:`opposites`."""
        return _key([HumanMessage(self.opposite_template.format(claim=" ".join(claim.split())))])

    def opposite(self, claim: str) -> str | None:
        """The claim rewritten by the model to state its opposite ("X raises Y" -> "X lowers Y"), asked once per
        claim; None when the model gives nothing usable (an empty line, or the claim itself)."""
        claim = " ".join(claim.split())
        return self._rewrite(self.opposite_template.format(claim=claim), claim)

    def statement_of(self, question: str) -> str | None:
        """A yes/no question rewritten by the model as the statement a "yes" confirms ("Does X raise Y?" -> "Yes, X
        raises Y."), so that it is judged as a claim, with its opposite; None when nothing usable comes back."""
        question = " ".join(question.split())
        said = self._rewrite(self.statement_template.format(question=question), question)
        # "No, ..." answers the question instead of stating it. "Yes, X." is kept as written: judged as written,
        # PubMedQA train questions came out 0.617 against 0.583 with the "Yes," cut (docs/benchmarks.md)
        if said is None or said.endswith("?") or _DENIAL.match(said) or not _ANSWER_WORD.sub("", said):
            return None
        return said

    def _rewrite(self, prompt: str, original: str) -> str | None:
        """The model's one-line rewrite for ``prompt``, asked once and kept in :attr:`opposites` by prompt."""
        messages: list[BaseMessage] = [HumanMessage(prompt)]
        key = _key(messages)
        if key not in self.opposites:
            said = str(self.chat().invoke(messages, max_tokens=80, temperature=0.0).content).strip()
            self.opposites[key] = {"text": said.splitlines()[0].strip() if said else ""}
            if len(self.opposites) > 512 and isinstance(self.opposites, dict):  # the in-process cache stays small
                self.opposites.pop(next(iter(self.opposites)))
        text = self.opposites[key]["text"]
        return text if text and " ".join(text.split()).lower() != original.lower() else None

    def measured(
        self, statement: str, kind: StatementKind, title: str, excerpt: Excerpt, *, opposite: bool
    ) -> tuple[dict[str, float], float | None, int]:
        """What the model says of ``statement`` on ``excerpt``: its label probabilities and, with ``opposite``
        where :func:`wants_opposite`, its :meth:`preference` for the statement over its :meth:`opposite` (None when
        not asked); and the prompt tokens asked. :meth:`judge` and the head's training (``stance-train``) both
        measure through here, so the head is fitted on exactly what it is later given."""
        probs, tokens = self.model_probabilities(statement, kind, title, excerpt)
        flip = self.opposite(statement) if opposite and wants_opposite(kind, probs) else None
        if flip is None:
            return probs, None, tokens
        preferred, more = self.preference(statement, flip, title, excerpt)
        return probs, preferred, tokens + more

    def decide(
        self,
        statement: str,
        kind: StatementKind,
        excerpt: Excerpt,
        probs: dict[str, float],
        preferred: float | None = None,
    ) -> dict[Stance, float]:
        """Calibrated stance probabilities from the model's label probabilities (and the excerpt's features);
        ``preferred``: its :meth:`preference` for the statement over its opposite on the same excerpt."""
        if not any(probs.values()):  # the model gave none of the labels: nothing is decided
            return {"supports": 0.0, "refutes": 0.0, "not stated": 1.0}
        if self.head is None or kind not in self.head.weights:
            total = sum(probs.get(w, 0.0) for w in LABEL_WORDS) or 1.0
            return {s: probs.get(w, 0.0) / total for s, w in zip(STANCES, LABEL_WORDS)}
        return self.head.probabilities(kind, features(statement, excerpt, probs, preferred))

    def judge(
        self,
        statement: str,
        title: str,
        abstract: str,
        *,
        kind: StatementKind = "claim",
        opposite: bool = False,
        skip_far: bool = False,
    ) -> Judgement:
        """The stance of ``abstract`` on ``statement``; with ``opposite`` the model is also made to choose between the
        claim and its :meth:`opposite` (written once per claim, on the first excerpt that :func:`wants_opposite`)
        on the same excerpt (:meth:`preference`), and the head weighs both. With ``skip_far`` an excerpt
        :func:`too_far` from the statement is not read by the model: it is not stated, with
        :data:`FAR_PROBABILITIES`."""
        excerpt = excerpt_of(self.scorer, statement, abstract, sentences=self.sentences)
        if skip_far and too_far(statement, excerpt):
            return Judgement(stance="not stated", probabilities=dict(FAR_PROBABILITIES), excerpt=excerpt)
        probs, preferred, tokens = self.measured(
            statement, kind, title, excerpt, opposite=opposite and self.head is not None
        )
        calibrated = self.decide(statement, kind, excerpt, probs, preferred)
        stance = max(STANCES, key=lambda s: calibrated[s])
        return Judgement(
            stance=stance,
            probabilities={s: round(v, 4) for s, v in calibrated.items()},
            excerpt=excerpt,
            label_probabilities={w: round(probs.get(w, 0.0), 4) for w in LABEL_WORDS},
            prompt_tokens=tokens,
        )


def _key(messages: list[BaseMessage]) -> str:
    """The memo key of a prompt: what the model reads, hashed."""
    return hashlib.sha256("\x00".join(str(m.content) for m in messages).encode()).hexdigest()

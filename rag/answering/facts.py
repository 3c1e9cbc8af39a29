"""Fact checks: does a claim say what the source sentence that supports it says?

Embedding similarity and shared words cannot see a changed number, a swapped name or an added "not":
a perturbed claim shares nearly every word with its source. :func:`fact_problems` compares the claim
with the abstract (``paper``) and with the sentence that supports it best (``window``). One rule each:

* numbers: every number and expression of the claim is in the abstract ("237,505", "seven" = "7");
* units: a number keeps its noun ("three zebra subclasses" where the source says "two zebra subclasses");
* binding: a word the claim puts in a clause with a number shares a clause with that number in the
  source, when the source puts it beside another of the claim's numbers;
* names: every name (WildBox, Qwen3-VL, a capitalised word) and every hyphenated term ("frame-level")
  of the claim is in the abstract or the question, or is made of the source sentence's words;
* negation: what one side negates the other does not say only plainly, a negative prefix counts
  ("consistent" vs "inconsistent"), and a claim that negates needs a negation in its source sentence;
* opposites: the claim does not say X where its source sentence says only the opposite of X, or the
  opposite of the word X qualifies (more/less, each/single, often/rarely ... named pairs, :data:`OPPOSITES`);
* only: a claim that restricts ("only", "solely") needs a restriction in its source sentence;
* roles: two terms on either side of a contrast ("A more easily than B", "A while B") are not swapped,
  and two terms joined by the same relation word ("converts A into B") keep their order;
* substitution: the claim does not put a phrase of another sentence of the abstract ("Top-K routing")
  where its source sentence has a different word ("soft routing").

All are lexical: a claim that says the opposite in words of its own ("is unrelated to" for
"correlates with") or puts a term the abstract never uses in place of the source's ("graph neural
network" for "transformer") gets past them. Measured by ``python -m rag.evaluation.bench claims`` (docs/benchmarks.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from difflib import SequenceMatcher

import Stemmer

from rag.corpus.chunking import split_sentences
from rag.corpus.tokens import (
    BOUNDARY,
    EXPRESSION,
    NAME,
    NUMBER_WORDS,
    STOPWORDS,
    TIGHT_EXPRESSION,
    word_stem,
)
from rag.corpus.tokens import fact_tokens as _tokens
from rag.corpus.tokens import squash as _squash

_NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:[.,]\d+)*")
_NUMBER_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.I)
_CAPITALISED = re.compile(r"(?<=[a-z,;:]\s)[A-Z][a-z]{2,}(?:[-\s][A-Z][a-z]+)*")
_SKIP_AFTER_NEGATION = frozenset(
    (
        "be is are was were been being do does did have has had a an the any only yet always necessarily much "
        "more significantly substantially fully entirely directly explicitly even also just to"
    ).split()
)
_stem_words = Stemmer.Stemmer("english").stemWords


def numbers(text: str) -> set[str]:
    """The numbers in ``text``, digits or words ("seven" -> "7"; "237,505" -> "237505")."""
    words = {NUMBER_WORDS[w.lower()] for w in _NUMBER_WORD.findall(text)}
    return {n.replace(",", "") for n in _NUMBER.findall(text)} | words


def anchors(text: str) -> set[str]:
    """The numbers and expressions of ``text`` (squashed): what ties a claim to one sentence."""
    return numbers(text) | {_squash(e) for e in re.findall(TIGHT_EXPRESSION, text)}


def _initials(text: str) -> set[str]:
    """Acronyms the text spells out: "large language models" gives "llm" (and "lm", "lang..."): so a
    claim may say LLM where the abstract says large language models."""
    words = [w[0].lower() for w in re.findall(r"[A-Za-z][\w-]*", text)]
    return {"".join(words[i : i + n]) for n in range(2, 6) for i in range(len(words) - n + 1)}


# ---------------------------------------------------------------------------------------------------
# Rules that compare the claim with its source sentence, not only with the abstract as a whole.

_CUE = re.compile(
    r"\b(?:not(?!\s+(?:just|only|merely|simply)\b)|no(?!\s+(?:more|less|fewer|longer|greater)\s+than\b)|never|none"
    r"|neither|nor|cannot|without|lacks?|lacking|lack\s+of|absence\s+of|unable|impossible|avoid(?:s|ed|ing)?"
    r"|rather\s+than|instead\s+of|fail(?:s|ed)?\s+to|yet\s+to)\b|n't\b|\bfree\s+of\b|(?P<free>\w-free\b)|(?P<absent>\babsent\s+from\b)",
    re.I,
)
# what a negation negates ends at a comma or a subordinate clause ("rather than gradually as X grows")
_NEAR_END = re.compile(r",|\b(?:as|when|if|because|since|unless|until|which|that|where|by)\b", re.I)
_SCOPE_END = re.compile(r"[;:.]|\b(?:but|while|whereas|although|though)\b", re.I)


def _is_number(token: str) -> bool:
    return token[:1].isdigit() or token.startswith("x:")


_FUNCTION = frozenset(_stem_words(sorted(STOPWORDS | _SKIP_AFTER_NEGATION))) | {"|"}


def content_stems(text: str) -> set[str]:
    """The stems and numbers of ``text`` without function words ("causing" and "causes" -> "caus")."""
    return {t for t in _tokens(text) if t not in _FUNCTION}


def _clauses(text: str) -> list[list[str]]:
    clauses: list[list[str]] = [[]]
    for t in _tokens(text):
        if t == "|":
            clauses.append([])
        else:
            clauses[-1].append(t)
    return [c for c in clauses if c]


def _binding_problems(claim: str, window: str) -> list[str]:
    """A word the claim puts in a clause with a number must share a clause with that number in the
    source, when the source puts it beside another of the claim's numbers ("8.68 AP3D" where the
    source says "8.68 AP-BEV and 13.17 AP3D"). Words before either side's first number are its subject
    and verb, shared by every clause ("GlacierNet reaches 71.2 F1 and 64.0 IoU")."""
    claim_numbers = {t for t in _tokens(claim) if _is_number(t)}
    subject: set[str] = set()
    for tokens in (_tokens(window), _tokens(claim)):
        subject |= set(tokens[: next((i for i, t in enumerate(tokens) if _is_number(t)), 0)])
    source = _clauses(window)
    problems = []
    for clause in _clauses(claim):
        beside = {t for t in clause if _is_number(t)}
        if not beside:
            continue
        for t in dict.fromkeys(clause):
            if _is_number(t) or t in _FUNCTION or t in subject:
                continue
            there = {n for c in source if t in c for n in c if n in claim_numbers}
            if there and not there & beside:
                problems.append(
                    f"{t!r} goes with {', '.join(sorted(there))} in the source, not {', '.join(sorted(beside))}"
                )
    return problems


def _units(text: str) -> dict[str, set[str]]:
    """Each content word that follows a number (within its clause), with the numbers it follows."""
    tokens = _tokens(text)
    out: dict[str, set[str]] = {}
    for i, t in enumerate(tokens):
        if not _is_number(t) or t.startswith("x:"):
            continue
        for u in tokens[i + 1 : i + 5]:
            if u == "|":
                break
            if not _is_number(u) and u not in _FUNCTION:
                out.setdefault(u, set()).add(t)
                break
    return out


def _unit_problems(claim: str, window: str) -> list[str]:
    """A number keeps its noun: "three zebra subclasses" where the source says "two zebra subclasses"."""
    there = _units(window)
    return [
        f"{', '.join(sorted(ns))} {u} where the source says {', '.join(sorted(there[u]))} {u}"
        for u, ns in _units(claim).items()
        if u in there and not ns & there[u]
    ]


def _ratios(text: str) -> set[tuple[str, str]]:
    """Each "a/b" of the text as (a, b), squashed, brackets balanced: "√(c(v)/k)" gives ("c(v)", "k")."""
    out = set()
    for a, b in re.findall(r"([\w()]+)\s*/\s*([\w()]+)", text):
        a = a[a.count("(") - a.count(")") :] if a.count("(") > a.count(")") else a
        b = b[: len(b) - (b.count(")") - b.count("("))] if b.count(")") > b.count("(") else b
        out.add((_squash(a), _squash(b)))
    return out


def _expression_problems(claim: str, window: str) -> list[str]:
    """An expression of the claim is the source sentence's own when that sentence has expressions
    ("runs in exp[O(D)] time" where it says "runs in time O(poly(D))"), and a ratio is not turned
    upside down ("c(v)/k" where it says "k/c(v)")."""
    mine = {_squash(e) for e in re.findall(TIGHT_EXPRESSION, claim)}
    theirs = {_squash(e) for e in re.findall(TIGHT_EXPRESSION, window)}
    problems = [
        f"expression {e} where the source sentence has {', '.join(sorted(theirs))}" for e in mine - theirs if theirs
    ]
    there = _ratios(window)
    problems += [f"{a}/{b} where the source says {b}/{a}" for a, b in _ratios(claim) if (b, a) in there - {(a, b)}]
    return problems


def _order_problems(claim: str, window: str) -> list[str]:
    """Two terms joined by the same relation word keep their order: "maps A to B" where the source says
    "converts B into A" (to, into, than, before, after, from, over)."""
    c, w = _tokens(claim), _tokens(window)
    once = [t for t in dict.fromkeys(c) if t not in _FUNCTION and not _is_number(t) and c.count(t) == 1 == w.count(t)]
    for a in once:
        for b in once:
            ia, ib, ja, jb = c.index(a), c.index(b), w.index(a), w.index(b)
            if not (ia < ib and ja > jb and ib - ia <= 8 and ja - jb <= 8):
                continue
            between_c = {_RELATION_CLASS.get(t, t) for t in c[ia + 1 : ib]} & set(_RELATION_CLASS.values())
            between_w = {_RELATION_CLASS.get(t, t) for t in w[jb + 1 : ja]} & set(_RELATION_CLASS.values())
            if between_c & between_w and "|" not in c[ia:ib] + w[jb:ja]:
                return [f"puts {a!r} before {b!r}, the source the other way round"]
    return []


_RELATION_CLASS = {"to": "to", "into": "to", "toward": "to", "towards": "to", "than": "than", "over": "than"}
_RELATION_CLASS |= {"before": "before", "after": "before", "versus": "versus", "from": "from"}


def _content(text: str) -> list[str]:
    return [word_stem(w) for w in re.findall(r"[A-Za-z][\w-]*", text) if w.lower() not in _SKIPPED]


_SKIPPED = STOPWORDS | _SKIP_AFTER_NEGATION


def _reach(rest: str) -> int:
    """How far into ``rest`` a negation reaches: through a list ("no retraining, priors, or access") up to
    the comma after its third content word, not into the next clause ("..., and accuracy collapses")."""
    seen = 0
    for m in re.finditer(r",", rest):
        seen = len(_content(rest[: m.start()]))
        if seen >= 3:
            return m.start()
    return len(rest)


class _Negations:
    """What a text negates. A negation ("not", "no", "without", "fails to", "rather than" ...) negates
    the first content word after it (``first``) and the next two before a comma (``after``: "does not
    admit a parameterisation"), and covers the rest of its clause, and the clause before it when it ends
    its clause ("reliable ICL is not restored"). A word is ``plain`` when one of its occurrences is
    outside every negation, ``covered`` when one is inside. "X-free" negates X."""

    def __init__(self, text: str) -> None:
        self.first: set[str] = {word_stem(m.group(1)) for m in re.finditer(r"(\w+)-free\b", text, re.I)}
        self.after = set(self.first)
        spans: list[tuple[int, int]] = [m.span(1) for m in re.finditer(r"(\w+)-free\b", text, re.I)]
        for m in _CUE.finditer(text):
            if m.group("free"):
                continue
            rest = text[m.end() : m.end() + 120]
            rest = rest[: end.start()] if (end := _SCOPE_END.search(rest)) else rest
            # "X is absent from Y" negates X and Y together: it covers them but negates no word first
            near = [] if m.group("absent") else _content(_NEAR_END.split(rest)[0])
            self.first.update(near[:1])
            # "rather than A-ing B" sets aside A, not B: the other alternative may well concern B too
            self.after.update(near[: 1 if re.match(r"rather|instead", m.group(0), re.I) else 3])
            cuts = list(re.finditer(BOUNDARY, text[: m.start()], re.I))
            # a negation that ends its clause ("reliable ICL is still not restored") covers the clause before it
            start = (cuts[-1].end() if cuts else 0) if len(near) <= 1 else m.start()
            spans.append((start, m.end() + _reach(rest)))
        self.covered: set[str] = set()
        self.plain: set[str] = set()
        for m in re.finditer(r"[A-Za-z][\w'@&-]*", text):
            if m.group(0).lower() in _SKIPPED:
                continue
            inside = any(a <= m.start() < b for a, b in spans)
            (self.covered if inside else self.plain).add(word_stem(m.group(0)))
        self.words = self.covered | self.plain
        self.any = bool(_CUE.search(text))


_PREFIXES = ("non-", "non", "un", "in", "im", "ir", "dis")


def _prefixed(stem: str, words: set[str]) -> str | None:
    """The negative-prefixed form of ``stem`` among ``words`` ("consist" -> "inconsist"), if any."""
    return next((p + stem for p in _PREFIXES if p + stem in words), None) if len(stem) >= 4 else None


def _negation_problems(claim: str, window: str, paper: str) -> list[str]:
    """The claim and its source sentence agree on what is negated: what one side negates (its first
    word, two words in its reach, or one when the other side negates nothing) the other says only
    plainly; a negative prefix counts ("consistent" vs "inconsistent", "non-X"); and what a claim
    negates, a negation in its source sentence (or in the sentence that has the word) covers."""
    c, w = _Negations(claim), _Negations(window)
    problems = []
    for mine, theirs, what in ((c, w, "negates {}, the source does not"), (w, c, "says {}, the source negates it")):
        only_plain = theirs.plain - theirs.covered
        # said with a negative prefix on the other side is the same: "without addressing" = "unaddressed"
        negated = {x for x in mine.first - mine.plain if not _prefixed(x, theirs.words)}
        restated = set() if negated != mine.first - mine.plain else mine.after - mine.plain & only_plain
        restated &= only_plain
        if negated & only_plain or len(restated) >= (2 if theirs.any else 1):
            problems.append(what.format(", ".join(sorted(restated | negated & only_plain))))
    for a, b in ((c, w), (w, c)):
        for x in sorted(a.plain - a.covered - b.words):
            if (p := _prefixed(x, b.words)) and p not in a.words:
                problems.append(f"says {x!r} where the other says {p!r}")
    if c.any and not c.covered & w.covered and not any(_prefixed(x, w.words) for x in c.first):
        # a claim may take its negation from another sentence ("degrade sharply, not gradually")
        elsewhere = [_Negations(t) for a, b in split_sentences(paper) if _CUE.search(t := paper[a:b])]
        if not any(c.first & (n.first | n.after) for n in elsewhere):
            problems.append("negates what the source states")
    return problems


# Opposites: each pair is two sides of one scale; a claim that uses one side where its source sentence
# uses only the other says something else. Phrases, matched on lower-cased text. The pairs are named data:
# ``python -m rag.evaluation.bench ablation`` scores verification without each one (:func:`rules_off`), and a
# pair stays only while it helps on the held-out or fresh changed-fact claims (docs/benchmarks.md).
OPPOSITES: dict[str, tuple[str, str]] = {
    "large/small": (
        r"large|larger|largest|big|bigger|huge|massive|large-scale",
        r"small|smaller|smallest|tiny|small-scale",
    ),
    "many/few": (
        r"many|numerous|multiple|several|various|wide range|broad range|all|every|each|both|arbitrary|concurrent",
        r"single|only one|just one|a few|few|a handful|handful",
    ),
    "more/less": (
        r"more|greater|higher|high|increase[sd]?|increasing|rises?|raises?|at least|exceeds?",
        r"less|fewer|lower|low|decrease[sd]?|decreasing|reduces?|reduced|reducing|drops?|at most|no more than|below",
    ),
    # no labelled claim needs it, but tests/test_verify.py's swap case ("does well on X but struggles with Y") does
    "better/worse": (
        r"improves?|improved|improvements?|better|gains?|strong|strongly|well|outperforms?|succeeds?|successful",
        r"degrades?|degraded|deteriorates?|worse|worsens?|weak|weakly|poor|poorly|struggles?|underperforms?",
    ),
    "strong/slight": (
        r"sharp|sharply|strong|strongly|substantial|substantially|significant|significantly|dramatic|dramatically"
        r"|greatly|considerably|orders of magnitude|exponentially",
        r"slight|slightly|marginal|marginally|negligible|negligibly|gradual|gradually|mild|mildly|modest|modestly"
        r"|partly|partially|somewhat|quadratically|linearly",
    ),
    "often/rarely": (
        r"always|often|frequently|usually|typically|commonly|recurrently|repeatedly|consistently|generically",
        r"never|rarely|seldom|occasionally|sometimes|once",
    ),
    "years/hours": (r"years|decades", r"months|weeks|days|hours"),
    "dense/sparse": (r"dense|denser", r"sparse|sparser|sparsity"),
    "homogeneous/heterogeneous": (r"homogeneous", r"heterogeneous"),
    "concentrated/spread": (
        r"concentrates?|concentrated|focus(?:es|ed)? on|confined",
        r"spread|spreads|evenly|distributed",
    ),
    "fixed/varying": (r"fixed|constant|static", r"grows?|growing|varies|varying|variable|changing|dynamic"),
    "parents/children": (r"parents?|ancestors?|causes", r"child|children|descendants?|effects"),
}
_SIDES = [
    (name, re.compile(rf"(?<!\w)(?:{a})(?!\w)"), re.compile(rf"(?<!\w)(?:{b})(?!\w)"))
    for name, (a, b) in OPPOSITES.items()
]
_SIDES += [(name, b, a) for name, a, b in _SIDES]
_OFF: ContextVar[frozenset[str]] = ContextVar("rag_facts_off", default=frozenset())
_FIRED: ContextVar[set[str] | None] = ContextVar("rag_facts_fired", default=None)


@contextmanager
def rules_off(names: Iterable[str] = ()) -> Iterator[set[str]]:
    """Check facts without the named pairs of :data:`OPPOSITES` inside the block (to measure what each is
    worth); yields the set of pairs that found a problem inside the block, filled as they do."""
    fired: set[str] = set()
    off, seen = _OFF.set(frozenset(names)), _FIRED.set(fired)
    try:
        yield fired
    finally:
        _OFF.reset(off)
        _FIRED.reset(seen)


# "only" restricts a statement; a source sentence with no restriction of its own does not support it
# ("only marginal", "only a few" just stress a small amount)
_ONLY = re.compile(
    r"(?<!not )(?<!if )\b(?:only|solely|merely|exclusively)\b"
    r"(?!\s+(?:marginal|slight|a few|few|little|partly|modest|limited|small|a small|a handful|minor))"
)
_RESTRICTED = re.compile(r"\b(?:only|solely|merely|exclusively|alone|single|sole|just|one|specific|unique|uniquely)\b")


def _unnegated(pattern: re.Pattern[str], text: str) -> list[tuple[str, str]]:
    """(match, the content word after it) for each match of ``pattern`` in ``text`` that no negation cue
    in the four words before governs."""
    out = []
    for m in pattern.finditer(text):
        if _CUE.search(" ".join(text[: m.start()].split()[-4:])):
            continue
        after = [w for w in re.findall(r"[a-z][\w-]*", text[m.end() : m.end() + 60]) if w not in STOPWORDS]
        out.append((m.group(0), word_stem(after[0]) if after else ""))
    return out


def _opposite_problems(claim: str, window: str) -> list[str]:
    """The claim says X where its source sentence says only the opposite of X (from :data:`OPPOSITES`),
    of anything or of the word X qualifies ("the largest variance" where the source says "the smallest
    variance" and "the smallest set")."""
    c, w = claim.lower(), window.lower()
    problems: list[str] = []
    off, fired = _OFF.get(), _FIRED.get()
    for name, mine, other in _SIDES:
        if name in off:
            continue
        found = len(problems)
        theirs = _unnegated(other, w)
        if not theirs:
            continue
        for said, noun in _unnegated(mine, c):
            if not _unnegated(mine, w) and not other.search(c):
                problems.append(f"says {said!r} where the source says {theirs[0][0]!r}")
                break
            own = {n for _, n in _unnegated(mine, w)} | {n for _, n in _unnegated(other, c)}
            if noun and noun not in own and (said_there := [x for x, n in theirs if n == noun]):
                problems.append(f"says {said!r} {noun} where the source says {said_there[0]!r} {noun}")
                break
        if fired is not None and len(problems) > found:
            fired.add(name)
    if (only := _ONLY.search(c)) and not _RESTRICTED.search(w):
        problems.append(f"says {only.group(0)!r}, the source sets no such limit")
    return problems


# A contrast: "A more easily than B", "A rather than B", "instead of B, A", "A, while B", "A but B".
_CONTRAST = re.compile(
    r"\b(?:rather than|instead of|than|unlike|whereas|while|but|versus|vs|compared (?:with|to)|relative to"
    r"|as opposed to)\b",
    re.I,
)


_CONCESSIVE = re.compile(r"whereas|while|but", re.I)


def _sides(text: str, m: re.Match[str]) -> tuple[set[str], set[str]]:
    """(terms of the statement, terms of its foil) around the contrast word ``m``."""
    start = max(text.rfind(";", 0, m.start()), text.rfind(". ", 0, m.start())) + 1
    before = text[start : m.start()]
    after = text[m.end() :]
    cut = re.search(r"[;,]|\.(?:\s|$)", after)
    if not re.search(r"\w", before) and cut:  # fronted: "Instead of B, A ..."
        foil, rest = after[: cut.start()], after[cut.end() :]
        end = re.search(r"[;]|\.(?:\s|$)", rest)
        statement = before + " " + (rest[: end.start()] if end else rest)
    else:
        foil = after[: cut.start()] if cut else after
        statement = before
    words = {t for t in _tokens(statement) if t not in _FUNCTION}
    others = {t for t in _tokens(foil) if t not in _FUNCTION}
    return words - others, others - words


def _swap_problems(claim: str, window: str) -> list[str]:
    """Two terms on opposite sides of a contrast in the source are not swapped in the claim."""
    shared = set(_tokens(claim)) & set(_tokens(window))
    for wm in _CONTRAST.finditer(window):
        ws, wf = (s & shared for s in _sides(window, wm))
        for cm in _CONTRAST.finditer(claim):
            if _CONCESSIVE.match(wm.group(0)) != _CONCESSIVE.match(cm.group(0)):
                continue  # "A than B" and "A while B" relate different things
            cs, cf = _sides(claim, cm)
            crossed = sorted(ws & cf), sorted(wf & cs)
            if crossed[0] and crossed[1] and not wf & cf:
                return [f"swaps {crossed[0][0]!r} and {crossed[1][0]!r} around {cm.group(0)!r}"]
    return []


def _compound_problems(claim: str, window: str, source: str) -> list[str]:
    """Every hyphenated term of the claim ("frame-level", "smart-home") is in the source, joined or
    not, or is made of words of its source sentence ("drone-based" from "from drone video")."""
    words = [word_stem(w) for w in re.findall(r"[A-Za-z][\w'-]*", source)]
    joined = set(words) | {a + "-" + b for a, b in zip(words, words[1:])}
    joined |= {a + "-" + b + "-" + c for a, b, c in zip(words, words[1:], words[2:])}
    joined |= {w.replace("-", "") for w in joined}
    near = {p for w in re.findall(r"[A-Za-z][\w'-]*", window) for p in word_stem(w).split("-")} | _FUNCTION
    problems = []
    for m in re.finditer(r"(?<![\w@-])[A-Za-z]+(?:-[A-Za-z]+)+(?![\w@])", claim):
        term = word_stem(m.group(0))
        parts = term.split("-")
        if term in joined or term.replace("-", "") in joined:
            continue
        if parts[0] not in ("non", "un", "in") and set(parts) <= near:
            continue
        problems.append(f"term {m.group(0)} not in the source")
    return problems


def _substitution_problems(claim: str, window: str, paper: str, question: str) -> list[str]:
    """The claim does not put a term of another part of the abstract where its source sentence has a
    different one: "Top-K routing" where the source sentence says "soft routing" and another sentence
    of the abstract says "Top-K routing". A paraphrase brings words of its own, a swap brings a phrase
    of the abstract."""
    claim_words = [t for t in _tokens(claim) if t not in _FUNCTION and not _is_number(t)]
    window_words = [t for t in _tokens(window) if t not in _FUNCTION and not _is_number(t)]
    paper_words = [t for t in _tokens(paper) if t not in _FUNCTION and not _is_number(t)]
    pairs = set(zip(paper_words, paper_words[1:]))
    asked = set(_tokens(question))
    problems = []
    matcher = SequenceMatcher(a=window_words, b=claim_words, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        # a swap of one or two words, each side a term the abstract uses elsewhere too
        old = [t for t in window_words[i1:i2] if t not in claim_words and paper_words.count(t) > window_words.count(t)]
        if op != "replace" or not old or i2 - i1 > 2 or j2 - j1 > 2:
            continue
        for j in range(j1, j2):
            x = claim_words[j]
            if x in window_words or x in asked or any(x in w.split("-") or w.startswith(x) for w in old):
                continue
            before = claim_words[j - 1] if j > 0 else None
            after = claim_words[j + 1] if j + 1 < len(claim_words) else None
            if (before, x) in pairs and before not in old or (x, after) in pairs and after not in old:
                problems.append(f"says {x!r} where the source sentence says {' '.join(old)!r}")
                break
    return problems


def fact_problems(claim: str, window: str, paper: str, question: str = "") -> list[str]:
    """Why ``claim`` is not what its source says, checked word by word (empty when nothing is wrong).

    ``window`` is the source sentence that supports the claim best, ``paper`` the
    abstract's evidence text, ``question`` what was asked (a name the user typed may be repeated).
    Embedding similarity and shared words cannot see a changed number, a swapped name or an added
    "not"; these checks can:

    * every number of the claim is in the abstract ("237,505", "seven" = "7");
    * every expression (``O(poly(D))``) and every name (WildBox, Qwen3-VL, a capitalised word such as
      "Hardware") is in the abstract or the question;
    * and against ``window``: numbers keep their words, negation and opposites agree, contrasted
      terms keep their sides (see the module docstring).
    """
    problems = []
    missing = numbers(claim) - numbers(paper) - numbers(question)
    if missing:
        problems.append(f"number {', '.join(sorted(missing))} not in the source")
    squashed = _squash(paper) + " " + _squash(question)
    for expr in EXPRESSION.findall(claim):
        if _squash(expr) not in squashed:
            problems.append(f"expression {expr} not in the source")
    lowered = (paper + " " + question).lower()
    initials = _initials(paper + " " + question)
    for name in set(NAME.findall(claim)) | set(_CAPITALISED.findall(claim)):
        key = name.lower().strip(".")
        if key not in lowered and not (name.isupper() and key.rstrip("s") in initials):
            problems.append(f"name {name} not in the source")
    problems += _compound_problems(claim, window, paper + " " + question)
    problems += _binding_problems(claim, window)
    problems += _unit_problems(claim, window)
    problems += _expression_problems(claim, window)
    problems += _order_problems(claim, window)
    problems += _negation_problems(claim, window, paper)
    problems += _opposite_problems(claim, window)
    problems += _swap_problems(claim, window)
    problems += _substitution_problems(claim, window, paper, question)
    return problems

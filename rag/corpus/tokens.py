"""Words of a text as each stage compares them: tokenisers, stopword lists and the patterns of paper names.

Several stages cut text into words, and each cuts differently on purpose; the functions live here side by side
so that a change to one is made knowing the others:

* :func:`bm25_tokens` (:class:`BM25Tokenizer`): what BM25 indexes and matches (retrieval). Lower-cased words
  minus a short English stopword list, Porter-stemmed.
* :func:`stems`: the sentence scorer's words (which sentences are shown as evidence). The same words as BM25,
  minus the longer :data:`STOPWORDS`, Porter-stemmed, hyphenated compounds cut into their parts.
* :func:`key_terms`: the words whose share decides support in verification. Content words and numbers,
  lower-cased, with crude plural folding ("models" -> "model"), not stemmed.
* :func:`fact_tokens`: what the fact checks compare. Stems part by part ("non-angle-preserving"),
  numbers (words as digits), function-like expressions ("x:o(d)") and clause cuts ("|"), in order.

Changing any of them changes retrieval or verification: the gold set is the judge.

Paper names: :func:`title_names` (what a title is called by: itself, an acronym in parentheses, the title
without it), :func:`name_tokens` (name-like tokens of a question: "HTMP", "cfDNA", "Qwen3"),
:func:`exact_terms` (tokens a sentence must contain verbatim), :data:`NAME` (a name in a claim) and
:data:`VALUE_NAME` (a name in a table value).
"""

from __future__ import annotations

import functools
import re
import sys

import Stemmer

# ---------------------------------------------------------------------------------------------- stopwords
#: Function words and the words every abstract uses ("paper", "propose", "model"): they match nothing specific.
STOPWORDS = frozenset(
    (
        "a an the and or but if of to in on at by for with from as is are was were be been being this that "
        "these those it its their there they them we our us you your he she his her which who whom what when "
        "where why how than then so such can could may might must should would will shall do does did done "
        "not no nor also more most less least very into onto over under between about across after before "
        "during through per via using use used based show shows shown paper work study studies propose "
        "proposes proposed present presents introduce introduces approach method methods model models result "
        "results abstract abstracts source sources answer according"
    ).split()
)

#: BM25's stopwords: bm25s' English list (``bm25s.stopwords.STOPWORDS_EN``), which BM25 here always used.
BM25_STOPWORDS = frozenset(
    (
        "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
        "they this to was will with"
    ).split()
)

#: Number words read as digits ("seven" -> "7"); "one" is left out: it is a pronoun as often as a number.
NUMBER_WORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen twenty".split()
    )
    if w != "_"
} | {"thirty": "30", "forty": "40", "fifty": "50", "hundred": "100", "thousand": "1000", "dozen": "12"}

# ---------------------------------------------------------------------------------------------- BM25
_BM25_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


class BM25Tokenizer:
    """:func:`bm25_tokens` with its stems memoised: a corpus repeats its words, and 100k chunks tokenised at
    once would otherwise hold ~14M separate string objects (~0.8 GB) while BM25 is built."""

    def __init__(self) -> None:
        self._stemmer = Stemmer.Stemmer("english")  # one per tokenizer: a stemmer is not shared across threads
        self.stems: dict[str, str] = {}

    def __call__(self, text: str) -> list[str]:
        words = [w for w in _BM25_WORD.findall(text.lower()) if w not in BM25_STOPWORDS]
        stems = self.stems
        unseen = [w for w in dict.fromkeys(words) if w not in stems]
        if unseen:
            stems.update(zip(unseen, map(sys.intern, self._stemmer.stemWords(unseen))))
        return [stems[w] for w in words]


def bm25_tokens(text: str) -> list[str]:
    """Lower-cased words minus :data:`BM25_STOPWORDS`, Porter-stemmed: what BM25 indexes and matches."""
    return BM25Tokenizer()(text)


# ---------------------------------------------------------------------------------------------- evidence scorer
_stemmer = Stemmer.Stemmer("english")


def stems(text: str) -> list[str]:
    """Lower-cased content words, Porter-stemmed ("running" and "runs" both become "run"). A hyphenated compound
    counts as its parts ("chronic-disease" -> "chronic", "diseas"; single letters dropped), so it matches the
    words written apart ("chronic disease") and one of its parts alone ("routing" in "soft-routing")."""
    words = [p for w in _BM25_WORD.findall(text.lower()) for p in _parts(w) if p not in STOPWORDS]
    return list(_stemmer.stemWords(words)) if words else []


def _parts(word: str) -> list[str]:
    if "-" not in word:
        return [word]
    return [p for p in word.split("-") if len(p) >= 2] or [word]


# ---------------------------------------------------------------------------------------------- verification
_KEY_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-']*|\d+(?:[.,]\d+)*%?")


def key_terms(text: str) -> set[str]:
    """Lower-cased content words and numbers, crude plural folding so 'models' matches 'model'."""
    return set(_key_terms(text))


@functools.lru_cache(maxsize=8192)
def _key_terms(text: str) -> frozenset[str]:
    out = set()
    for w in _KEY_WORD.findall(text):
        w = w.lower().strip("'")
        if w in STOPWORDS or len(w) < 2 and not w.isdigit():
            continue
        if len(w) > 4 and w.endswith("s") and not w.endswith("ss"):
            w = w[:-1]
        out.add(w)
    return frozenset(out)


# ---------------------------------------------------------------------------------------------- fact checks
#: a function-like expression: O(D), O(poly(D)), exp[O(D)], c(v), O(log D), f(x, y)
EXPRESSION = re.compile(r"\b[A-Za-z]\w{0,10}\s?[(\[](?:[^()\[\]]|[(\[][^()\[\]]*[)\]]){1,40}[)\]]")
#: the same without a space before the bracket: "O(D)", not "Reasoning (DLR)"
TIGHT_EXPRESSION = EXPRESSION.pattern.replace(r"\s?", "")
#: clause boundaries: punctuation and the conjunctions that join two statements
BOUNDARY = r"[,;:()]|\s[-\u2013\u2014]\s|[\u2013\u2014]|\b(?:and|but|while|whereas|although|though|yet)\b"
_FACT_TOKEN = re.compile(
    rf"(?P<cut>{BOUNDARY})|(?P<expr>{TIGHT_EXPRESSION})|(?P<num>(?<![A-Za-z])\d+(?:[.,]\d+)*)"
    rf"|(?P<word>[A-Za-z][\w'\u2019@&-]*)",
    re.I,
)
_stem = Stemmer.Stemmer("english").stemWord


def squash(text: str) -> str:
    """``text`` without spaces and dollars, lower-cased: how expressions are compared ("O( D )" = "o(d)")."""
    return re.sub(r"[\s$]+", "", text).lower()


def word_stem(word: str) -> str:
    """Stem of a word, part by part for a compound: "non-angle-preserving" -> "non-angl-preserv"."""
    return "-".join(_stem(p) for p in word.lower().strip("'\u2019").split("-") if p)


def fact_tokens(text: str) -> list[str]:
    """The text as stems, numbers ("seven" -> "7", "237,505" -> "237505"), expressions ("x:o(d)") and
    clause cuts ("|"), in order."""
    return list(_cached_fact_tokens(text))


@functools.lru_cache(maxsize=8192)  # an abstract's sentences are read again for every claim and question
def _cached_fact_tokens(text: str) -> tuple[str, ...]:
    out = []
    for m in _FACT_TOKEN.finditer(text):
        if m.group("expr"):
            out.append("x:" + squash(m.group("expr")))
        elif m.group("num"):
            out.append(m.group("num").replace(",", ""))
        elif m.group("cut"):
            out.append("|")
        else:
            w = m.group("word").lower()
            out.append(NUMBER_WORDS.get(w) or word_stem(w))
    return tuple(out)


# ---------------------------------------------------------------------------------------------- paper names
_ACRONYM = re.compile(r"\(([^()]{2,20})\)")  # "(HTMP)" in a title
_PARENTHESISED = re.compile(r"\s*\([^()]*\)")

#: a name-like token of a question: an acronym of 3+ letters with 2+ capitals (HTMP, DiT, CoCHI), a word with an
#: inner capital (WildBox) or letters mixed with digits (Qwen3, GSM8K)
NAME_TOKEN = re.compile(r"(?<![\w-])(?=\w*(?:[A-Z]\w*[A-Z]|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]))[A-Za-z][\w&-]{2,}")

#: a name in a claim: an inner capital, letters mixed with digits, an acronym, '@' or '&'
#: (WildBox, Qwen3-VL, GPT-4, AP@50, Who&When)
NAME = re.compile(r"(?<![\w@&-])(?=[\w@&.-]*(?:[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|[A-Z]{2}|@|&))[A-Za-z0-9][\w@&.-]*[\w]")

#: a name in a table value: as :data:`NAME` (ImageNet, GPT-4, COCO, AP@50, Who&When), but a dimension such as
#: "3D" alone is no name
VALUE_NAME = re.compile(
    r"(?<![\w@&-])(?!\d[Dd]\b)(?=[\w@&.-]*(?:[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]|[A-Z]{2}|@|&))\w[\w@&.-]*"
)

# A token of a question that must match exactly: has a digit, an inner capital or is an acronym
# ("Top-K", "AP@50", "Qwen3-VL", "O(D)", "3D", "CoCHI"), or a quoted phrase.
_EXACT = re.compile(r"[\w@+./-]*(?:\d|[a-z][A-Z]|[A-Z]{2})[\w@+./()-]*")


def title_names(title: str) -> list[str]:
    """What a paper is called by: its title, each short parenthesised name in it ("WildBox"), and the title
    without its parentheses; unstripped, in that order."""
    return [title, *_ACRONYM.findall(title), _PARENTHESISED.sub("", title)]


def name_tokens(question: str) -> list[str]:
    """The name-like tokens of ``question`` ("HTMP", "cfDNA", "Qwen3"); "LLMs" is given as "LLM"."""
    return [n[:-1] if n.endswith("s") and n[:-1].isupper() else n for n in NAME_TOKEN.findall(question)]


def exact_terms(question: str) -> set[str]:
    """The question's tokens that a sentence must contain verbatim to match them (see ``_EXACT``)."""
    found = {m.group(0).strip(".,;:?") for m in _EXACT.finditer(question)}
    found |= {q.strip() for q in re.findall(r"[\"“']([^\"”']{2,60})[\"”']", question)}
    return {t for t in found if len(t) >= 2}

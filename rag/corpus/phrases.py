"""A title-like phrase for an abstract that names no contribution: what the paper does, said as a noun phrase.

A real title names what a paper does ("A nonconvex optimization framework for low rank matrix estimation",
"The role of IL-10 in autoimmune diabetes", "Learning robust object detectors with inaccurate bounding boxes").
Abstracts say the same in their contribution sentence ("we propose a nonconvex optimization framework for ...",
"to investigate the role of IL-10 in ...", "we aim to address the challenge of learning robust ..."), so the
phrase is taken from there, most telling kind of sentence first:

1. *made*: "we propose / present / introduce ... X" gives X;
2. *found*: "we show / find / prove that X" gives the statement X;
3. *studied*: "we study / investigate / assess ... X", "the aim of this study was to assess X", "To evaluate X, we
   ..." give X ("how X" stays a question-like title); "the problem of" and the like are dropped;
4. *done*: any other verb of a contribution sentence ("we derive X") gives "Deriving X";
5. else the subject of the first sentence that has one of two to twelve words ("The role of IL-10 in the
   pathogenesis of autoimmune diabetes mellitus was assessed ..." gives its subject).

Each phrase is cut at a clause boundary (", which", ";", " thereby", ...) and, when it is long, at the last
preposition that keeps it within :data:`MAX_PHRASE` characters. A phrase that needs the abstract to be understood
("this problem", "the same task", "our method") or is too short to say anything is not used. Pure string rules,
no model: measured by ``python -m rag.evaluation.bench titles``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_PHRASE = 80

_MADE = (
    "propose present introduce develop design construct build create release offer devise describe provide "
    "formulate establish"
).split()
_FOUND = "show prove demonstrate find argue observe reveal conclude hypothesize hypothesise confirm report".split()
_STUDIED = (
    "study investigate analyze analyse examine explore revisit characterize characterise consider address tackle "
    "assess evaluate determine quantify measure compare identify review test estimate understand elucidate "
    "clarify"
).split()
_DONE = (
    "derive formalize formalise learn train use leverage extend generalize generalise apply model frame cast "
    "reformulate unify combine adapt exploit employ solve improve reduce enable prove predict simulate compute "
    "detect classify synthesize synthesise generate map verify validate conduct perform discuss outline"
).split()
_IRREGULAR = {"built": "build", "found": "find", "made": "make", "shown": "show", "undertook": "undertake"}


def _forms(base: str) -> list[str]:
    stem = base[:-1] if base.endswith("e") else base
    if base.endswith("y") and base[-2:-1] not in "aeiou":
        return [base, base[:-1] + "ies", base[:-1] + "ied"]
    third = base + ("es" if base.endswith(("s", "sh", "ch", "x", "z")) else "s")
    return [base, third, stem + "ed"]


_KIND: dict[str, str] = {}
for _kind, _verbs in (("done", _DONE), ("studied", _STUDIED), ("found", _FOUND), ("made", _MADE)):
    for _verb in _verbs:
        for _form in _forms(_verb):
            _KIND[_form] = _kind
        _KIND[_verb] = _kind
_BASE = {form: verb for verbs in (_DONE, _STUDIED, _FOUND, _MADE) for verb in verbs for form in _forms(verb)}
_BASE.update(_IRREGULAR)
_KIND.update({form: _KIND.get(base, "done") for form, base in _IRREGULAR.items()})
_VERB = "|".join(sorted(_KIND, key=len, reverse=True))
_BONUS = {"made": 3.0, "found": 2.0, "studied": 2.0, "done": 1.0, "subject": 0.0}

_SUBJECT = r"(?:\b[Ww]e|\b(?:[Tt]his|[Oo]ur|[Tt]he\s+present)\s+(?:paper|work|study|article|note|report|research))"
_ADVERB = r"(?:\s+(?:also|further|then|here|now|first|finally|therefore|thus|instead|\w+ly))?"
_WE_VERB = re.compile(
    rf"{_SUBJECT}{_ADVERB}\s+(?:(?:aim|aims|aimed|seek|seeks|sought|set\s+out|attempt|attempts|attempted|want)\s+to\s+)?"
    rf"(?P<verb>{_VERB})(?:\s+and\s+(?:{_VERB}))?\s+(?P<object>.+)"
)
_AIM = re.compile(
    rf"(?i:\b(?:aims?|goals?|purposes?|objectives?)\b[^.]{{0,40}}?\b(?:was|were|is|are|has\s+been)\s+to|"
    rf"^(?:objectives?|purposes?|aims?|background|goals?)\s*:?\s*to|\b(?:aimed|sought|designed)\s+to|^to)"
    rf"\s+(?P<verb>(?i:{_VERB}))(?:\s+and\s+(?i:{_VERB}))?\s+(?P<object>.+)"
)
# where a clause ends, so the phrase before it is whole
_CLAUSE_END = re.compile(
    r"\s*[;:]\s|\s+[—–-]\s|,\s|(?<!\b[A-Za-z])(?<!\bal)(?<!\bvs)[.!?](?:\s|$)|\s+(?:in\s+order\s+to|so\s+as\s+to|thereby|whereby|so\s+that|such\s+that|"
    r"which|where|while|whereas|because|since|although|though|unless|until|whenever|"
    rf"and\s+(?:we|then|thus|{_VERB}))\b"
)
# prepositions and conjunctions a long phrase may be cut before
_SOFT_CUT = re.compile(
    r"\s+(?=(?:for|in|on|with|from|via|using|through|by|under|across|between|to|that|at|as|against|over|into|"
    r"without|within|among|during|after|before|when|and|or|based)\b)"
)
_ANAPHORA = re.compile(
    r"(?i)\b(?:this|these|those|such|its|it|their|they|them|our|we|us|same|above|aforementioned|former|latter|"
    r"here|there|he|she|his|her|both|either|previous|said|proposed)\b"
)
_EMPTY_HEADS = re.compile(
    r"(?i)^(?:the|an?)\s+(?:(?:problem|question|challenge|issue|task|topic|notion|idea|concept|case|setting|"
    r"effects?|use)\s+of\s+)"
)
_LEADING_ARTICLE = re.compile(r"(?i)^(?:an?|the)\s+(?:(?:novel|new)\s+)(?!yet|and|but|or)")
_FUNCTION = set(
    "a an the of for and or in on to with by from via at as is are be into using that which its than over under "
    "between across through without within among".split()
)
# words a phrase does not end in: function words, and the verbs and adverbs a cut can leave behind
_BAD_END = _FUNCTION | set("based also is are was were been being designed used called named yet then".split())
# words no subject of a first sentence starts with: adverbs, connectives and vague openers
_OPENERS = re.compile(
    r"(?i)^(?:however|moreover|furthermore|although|though|while|when|since|because|if|as|in|on|for|with|by|to|from|"
    r"at|after|before|during|despite|due|given|unlike|like|recently|recent|currently|despite|today|there|it|this|"
    r"these|those|such|many|most|several|some|few|one|each|all|here|we|our|background|objective|purpose|"
    r"introduction|context|aims?|methods?|results?|conclusions?)\b"
)
_APPOSITION = re.compile(
    r"^([^,]{3,60}),\s[^,]{3,200},\s(?=(?:should|must|is|are|can|may|will|would|could|has|have|was|were)\b)"
)
_STATEMENT_OPENERS = re.compile(r"(?i)^(?:even|only|also|not|under|across|both|either|neither|among|using|beyond)\b")
_SUBJECT_VERB = re.compile(
    r"\s+(?=(?:is|are|was|were|has|have|had|can|could|may|might|will|would|should|must|do|does|did|remains?|"
    r"plays?|aims?|seeks?|provides?|requires?|involves?|allows?|enables?|offers?|appears?|seems?|becomes?|"
    r"represents?|constitutes?|affects?|causes?|contributes?|occurs?|exists?|depends?|relies?|suffers?|"
    r"lacks?|leads?|results?|shows?|suggests?|indicates?|reveals?|makes?|helps?|holds?|consists?|"
    r"comprises?|contains?|includes?|uses?|learns?|fails?|struggles?|achieves?|faces?|poses?|presents?|"
    r"attracts?|continues?|emerged?|emerges?|encodes?|regulates?|mediates?|induces?|increases?|reduces?|"
    r"improves?|[a-z]{3,}ed|[a-z]{3,}[^s\W]s(?=\s+(?:the|a|an|its|their|itself|themselves|this|these)\b))\b)"
)


def contribution_phrase(text: str) -> str:
    """The title-like phrase of ``text`` (plain text, one abstract), or "" when none is found (see the docstring)."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(\[])", text) if s.strip()]
    found = [c for c in _candidates(sentences) if c[2]]
    found += [("subject", i, p) for i, s in enumerate(sentences[:3]) if (p := _subject(s))]
    if not found:
        return ""
    freq: dict[str, int] = {}
    for w in re.findall(r"[\w-]+", text.lower()):
        if w not in _FUNCTION:
            freq[_stem(w)] = freq.get(_stem(w), 0) + 1

    def central(phrase: str) -> float:
        """How much of what the abstract keeps repeating the phrase names."""
        words = {_stem(w) for w in re.findall(r"[\w-]+", phrase.lower()) if w not in _FUNCTION}
        return sum(min(freq.get(w, 0) - 1, 4) for w in words) / (1 + 0.1 * len(phrase.split()))

    # a phrase of two content words ("A concrete architecture") only when no fuller one is found
    return max(found, key=lambda c: (_content_words(c[2]) >= 3, central(c[2]) + _BONUS[c[0]] - 0.2 * c[1]))[2]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")) else word


def _candidates(sentences: list[str]) -> Iterator[tuple[str, int, str]]:
    for i, sentence in enumerate(sentences):
        for pattern in (_WE_VERB, _AIM):
            m = pattern.search(sentence)
            if not m:
                continue
            verb = m.group("verb").lower()
            kind = _KIND.get(verb, "done")
            yield kind, i, _phrase_of(kind, _BASE.get(verb, verb), m.group("object"))
            break


def _phrase_of(kind: str, verb: str, obj: str) -> str:
    obj = obj.strip()
    if kind == "found":
        that = re.match(r"(?i)that\s+(.+)", obj)
        if that:  # "that X, the capacity to ..., should be Y": the aside goes
            return _clean(_APPOSITION.sub(r"\1 ", that.group(1)), statement=True)
        kind = "made"
    if re.match(r"(?i)(?:whether|if|that)\b", obj):
        return ""  # "we assessed whether ..." says no more than its question
    if kind == "done":
        if re.match(r"(?i)(?:how|why|what|when|which)\b", obj):
            return ""
        phrase = _clean(obj, limit=MAX_PHRASE - len(_gerund(verb)) - 1)
        if phrase and _ordinary_first_word(phrase):
            phrase = phrase[:1].lower() + phrase[1:]
        return f"{_gerund(verb).capitalize()} {phrase}" if phrase else ""
    return _clean(obj)


def _ordinary_first_word(phrase: str) -> bool:
    """True when the first word may be lower-cased after a gerund ("Deriving the ..."), not a name ("MoE")."""
    first = phrase.split()[0]
    return first[:1].isupper() and (first[1:].islower() or len(first) == 1)


def _gerund(verb: str) -> str:
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye")):
        return verb[:-1] + "ing"
    return verb + "ing"


def _clean(obj: str, *, statement: bool = False, limit: int = MAX_PHRASE) -> str:
    """``obj`` cut at its clause's end (and, when long, at a preposition), checked, capitalised; or ""."""
    m = _CLAUSE_END.search(obj)
    phrase = obj[: m.start()] if m else obj
    phrase = _drop_asides(phrase).strip(" ,;:-")
    if not statement:
        phrase = _EMPTY_HEADS.sub("", phrase)
        phrase = _LEADING_ARTICLE.sub(lambda m: m.group(0).split()[0] + " ", phrase)
    anaphor = _ANAPHORA.search(phrase)
    if anaphor:  # "an algorithm for the same sampling task": what comes before the anaphor may stand alone
        phrase = _head_before(phrase, anaphor.start())
    phrase = fit_phrase(phrase, limit)
    words = phrase.split()
    if _content_words(phrase) < 2 or len(words) > 16 or not phrase[:1].isalnum():
        return ""
    if statement and (_OPENERS.match(phrase) or _STATEMENT_OPENERS.match(phrase) or anaphor):
        return ""  # "in contrast to other mutants", "our method improves ...", "even for processes ..."
    if statement and not _SUBJECT_VERB.search(phrase):
        return ""  # "cognitive control" of "that cognitive control, the capacity to ..., should be": no statement
    return _capitalised(phrase)


def _capitalised(phrase: str) -> str:
    """``phrase`` with a capital first letter, unless its first word is a name written in lower case ("cfDNA")."""
    first = phrase.split()[0]
    return phrase if any(c.isupper() for c in first[1:]) else phrase[:1].upper() + phrase[1:]


def _content_words(phrase: str) -> int:
    return sum(w.lower() not in _FUNCTION for w in phrase.split())


def _head_before(phrase: str, end: int) -> str:
    """The longest part of ``phrase`` before ``end`` that ends before a preposition or conjunction and has at
    least three words ending in a content word; "" when there is none."""
    for cut in reversed([m.start() for m in _SOFT_CUT.finditer(phrase) if m.start() < end]):
        words = phrase[:cut].rstrip(" ,").split()
        if len(words) >= 3 and words[-1].lower() not in _BAD_END and not words[-1].endswith("ly"):
            return " ".join(words)
    return ""


def _drop_asides(phrase: str) -> str:
    """Parentheses other than a short name or acronym ("(QML)", "(Natsal-3)") are left out, and so is an acronym
    the phrase already spells ("the RIM1 gene product (RIM1)"); one inside a word stays ("(-)-epicatechin")."""

    def aside(m: re.Match[str]) -> str:
        inner = m.group(1)
        if _is_acronym(inner) and not re.search(rf"(?<![\w-]){re.escape(inner)}(?![\w-])", phrase[: m.start()]):
            return m.group(0)
        return ""

    return " ".join(re.sub(r"(?:(?<=\s)|^)\(([^()]*)\)(?=[\s,.;:]|$)", aside, phrase).split())


def _is_acronym(inner: str) -> bool:
    return 1 < len(inner) <= 15 and " " not in inner.strip() and any(c.isupper() for c in inner)


def fit_phrase(phrase: str, limit: int = MAX_PHRASE) -> str:
    """``phrase`` within :data:`MAX_PHRASE` characters: cut before the last preposition or conjunction that
    leaves at least three words ending in a content word; "" when there is no such place."""
    if len(phrase) <= limit:
        return _balanced(phrase)
    return _balanced(_head_before(phrase, limit + 1))


def _balanced(phrase: str) -> str:
    if phrase.count("(") > phrase.count(")"):
        phrase = phrase[: phrase.rfind("(")].rstrip(" ,;:-")
    words = phrase.split()
    while words and (words[-1].lower() in _BAD_END or words[-1].endswith("ly")):
        words.pop()
    return " ".join(words)


def _subject(sentence: str) -> str:
    """The subject of ``sentence`` when it opens with one of two to twelve words: "Natural image modeling is ..."."""
    if _OPENERS.match(sentence) or not sentence[:1].isupper():
        return ""
    m = _SUBJECT_VERB.search(sentence)
    if not m or m.start() == 0:
        return ""
    subject = sentence[: m.start()]
    if re.search(r"[,;:]", re.sub(r"\([^()]*\)", "", subject)):
        return ""  # "Statins, which ..., are": not a plain subject
    words = subject.split()
    if not 2 <= len(words) <= 12:
        return ""
    return _clean(subject)

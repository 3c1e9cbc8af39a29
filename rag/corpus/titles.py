"""Short display titles for papers whose source gives none: a named contribution, else the first clause."""

from __future__ import annotations

import re
from collections.abc import Iterator

from rag.corpus.text import EMPH_CLOSE, EMPH_OPEN, strip_markup

MAX_TITLE_CHARS = 80


# a name token: starts with a capital or digit (WildBox, 3DGS), or is lower-case-first but has a
# capital inside (xLSTM, iVAE); may contain & @ + / . ' - (Who&When, GPT-4.5) but not end in them
_TOKEN = r"(?:[A-Z0-9]|[a-z][a-z0-9]*(?=[\w&@+/.'’-]*[A-Z]))(?:[\w&@+/.'’-]*[\w+])?"
_CONNECTOR = r"(?:of|for|and|the|in|on|to|via|with|from|by|&)"
_NAME = rf"{_TOKEN}(?:(?:\s+{_CONNECTOR})*\s+{_TOKEN}){{0,7}}"
_PAREN = r"(?:\s*\((?P<paren>[^()]{1,80})\))?"
_END = r"(?=\s*[,.;:!?)(\"”]|\s+[-–—]|\s+(?:which|that|to|for|with|as|in|on|by|and|using|via|where|whose)\b|\s*$)"
_SUBJECT_VERB = (
    r"(?i:\b(?:we|this\s+(?:paper|work|study|article)|our\s+(?:paper|work))\s+"
    r"(?:(?:also|further|then|here|now|first|finally|\w+ly)\s+)?"
    r"(?:introduce|present|propose|release|develop|design|contribute|build|construct|curate|create|offer|unveil)s?)\s+"
)
_CONTRIBUTION_NOUNS = (
    r"method|framework|dataset|data\s+set|benchmark|model|algorithm|approach|architecture|system|library|toolkit|"
    r"suite|metric|measure|technique|pipeline|strategy|corpus|environment|platform|tool|paradigm|scheme|loss|"
    r"objective|mechanism|module|network|agent|protocol|task|challenge|estimator|optimi[sz]er|procedure|language|"
    r"diagnostic|test|score|index|simulator|recipe|policy|prior|layer|operator|attack|defen[cs]e|resource"
)
# "we propose X", "we introduce a new benchmark, X,", "we present a method called X (ACR)"
_INTRO_RE = re.compile(
    _SUBJECT_VERB + rf"(?:(?:a|an|the|our)\s+(?:[\w-]+\s+){{0,5}}?(?i:{_CONTRIBUTION_NOUNS})s?"
    rf"(?:\s+(?:called|named|dubbed|termed)|,)\s+)?[\"“]?" + rf"(?P<name>{_NAME}){_PAREN}{_END}"
)
# "we introduce a large-scale benchmark for failure attribution (WhoBench)"
_INTRO_ACRONYM_RE = re.compile(
    _SUBJECT_VERB
    + r"(?:a|an|the|our)\s+(?P<phrase>(?:[\w-]+\s+){0,8}?[\w-]+)\s+\((?P<name>[A-Za-z0-9][\w&@+.-]{0,19})\)"
    + r"(?=\s*[,.;:]|\s+(?:which|that|to|for|with|as|and|is|are)\b|\s*$)"  # not "(MPC) strategy", "(MPC)-based"
)
# "a method called X", "dubbed X" (not "so-called")
_CALLED_RE = re.compile(rf"(?<![\w-])(?:called|named|dubbed|termed)\s+[\"“]?(?P<name>{_NAME}){_PAREN}{_END}")
# "X, a novel method for …" at the start of a sentence
_APPOSITION_RE = re.compile(rf"(?:^|[.!?]\s+)(?P<name>{_NAME}){_PAREN},\s+(?:(?:a|an)\s+(?:novel|new)|the\s+first)\b")
# "what we coin *Symmetry Lottery*": a coined term counts only when it is emphasised and capitalised
_COINED_RE = re.compile(
    rf"(?i:\b(?:we|what\s+we)\s+(?:coin|call|term|dub|name)\s+)(?:[a-z][\w-]*\s+){{0,3}}{EMPH_OPEN}(?P<name>[A-Z0-9][^{EMPH_CLOSE}]{{0,78}}){EMPH_CLOSE}"
)
_ACRONYM_RE = re.compile(r"[A-Za-z0-9][\w&@+.-]{0,19}")
_ABBREVIATIONS = {
    "e.g.",
    "i.e.",
    "al.",
    "vs.",
    "cf.",
    "fig.",
    "figs.",
    "eq.",
    "eqs.",
    "sec.",
    "approx.",
    "resp.",
    "no.",
}
_LEAD_IN_RE = re.compile(r"^(?:in\s+this\s+(?:paper|work|study|article)|here|in\s+this\s+note),\s+", re.IGNORECASE)
_TRAILING_STOPWORDS = {
    "a",
    "an",
    "the",
    "of",
    "for",
    "to",
    "by",
    "in",
    "on",
    "with",
    "and",
    "or",
    "via",
    "from",
    "at",
    "as",
    "that",
    "which",
    "its",
    "their",
    "our",
    "is",
    "are",
    "be",
    "than",
    "into",
    "over",
    "under",
    "between",
}


def derive_title(abstract: str) -> str:
    """A short, deterministic display title for an abstract that came without one.

    The name of the method, dataset or benchmark that the abstract introduces ("We introduce
    WildBox, a dataset …" → ``WildBox``; "we propose Discrete Latent Reasoning (DLR), …" →
    ``Discrete Latent Reasoning (DLR)``), else the first clause of the first sentence, cut at a
    word boundary to at most 80 characters with "…". Markup is stripped; never empty.
    """
    marked = strip_markup(abstract, mark_emphasis=True)
    plain = marked.replace(EMPH_OPEN, "").replace(EMPH_CLOSE, "")
    name = _named_contribution(plain, marked)
    if name:
        return name
    return _first_clause(plain) or "Untitled abstract"


def _named_contribution(plain: str, marked: str) -> str | None:
    return next((name for name in _name_candidates(plain, marked) if name), None)


def _name_candidates(plain: str, marked: str) -> Iterator[str | None]:
    """Candidate names, most reliable pattern first."""
    for m in _INTRO_RE.finditer(plain):
        yield _format_name(m.group("name"), m.group("paren"))
    for m in _CALLED_RE.finditer(plain):
        # "a method called X", "our algorithm, dubbed X" - but not "another phenomenon, called Crowding"
        before = re.split(r"[.!?]\s", plain[max(0, m.start() - 60) : m.start()])[-1]
        if re.search(rf"(?i:\b(?:we|our)\b|\b(?:{_CONTRIBUTION_NOUNS})s?\b)", before):
            yield _format_name(m.group("name"), m.group("paren"))
    for m in _INTRO_ACRONYM_RE.finditer(plain):
        if _introduces_acronym(m.group("phrase"), m.group("name")):
            yield m.group("name")
    for m in _APPOSITION_RE.finditer(plain):
        if _looks_like_name(m.group("name")):
            yield _format_name(m.group("name"), m.group("paren"))
    for m in _COINED_RE.finditer(marked):
        yield _format_name(m.group("name").strip(" .,;:"), None)


def _introduces_acronym(phrase: str, acronym: str) -> bool:
    """ "a novel Modularized Interaction Network (MIN)" yes; "a framework using Large Language Models
    (LLMs)", "an analysis of low-rank adaptation (LoRA)", "a convolutional neural network (CNN)" no."""
    if not _has_capital(acronym) or not re.search(rf"\b(?:{_CONTRIBUTION_NOUNS})s?\b", phrase, re.IGNORECASE):
        return False
    if re.search(
        r"\b(?:using|uses|based|with|via|by|from|through|over|than|like|such|that|which|who|leverag\w*|exploit\w*|employ\w*)\b",
        phrase,
        re.IGNORECASE,
    ):
        return False  # the acronym names something the contribution uses, not the contribution
    words = phrase.split()
    expansion = words[-max(1, min(len(words), sum(c.isupper() for c in acronym))) :]
    proper = all(w[:1].isupper() or w[:1].isdigit() for w in expansion)
    is_plain_acronym = acronym.isupper() or acronym[:-1].isupper() and acronym[-1] == "s"
    return proper or not is_plain_acronym  # Title-Case expansion, or a coined name such as "WhoBench"


def _has_capital(s: str) -> bool:
    return any(c.isupper() for c in s)


def _looks_like_name(name: str) -> bool:
    """True for WildBox, Str-GCL, GPT-4, Who&When Pro; False for a sentence-initial 'Recently'."""
    tokens = name.split()
    inner_caps = any(c.isupper() or c.isdigit() for c in name[1:])
    return inner_caps and (len(tokens) > 1 or any(c.isupper() or c.isdigit() for c in tokens[0][1:]))


def _format_name(name: str, paren: str | None) -> str | None:
    """``CoCHI (Class-oriented …)`` → ``CoCHI``; ``Selective Social Learning (SSL)`` keeps its acronym."""
    name = name.strip()
    if len(name) < 2 or not any(c.isalpha() for c in name):
        return None  # "This paper presents 1) a Kalman filter …"
    if paren and " " not in paren.strip() and _ACRONYM_RE.fullmatch(paren.strip()) and _has_capital(paren):
        with_acronym = f"{name} ({paren.strip()})"
        if len(with_acronym) <= MAX_TITLE_CHARS:
            return with_acronym
    return _cut(name)


def _first_clause(text: str) -> str:
    sentence = _first_sentence(text).rstrip(" .!?")
    sentence = _LEAD_IN_RE.sub("", sentence)
    sentence = sentence[:1].upper() + sentence[1:]
    clause = _split_clause(sentence)
    # a clause as short as "We argue that cognitive control" says less than the cut sentence
    return _cut(clause if len(clause) >= 40 else sentence)


def _first_sentence(text: str) -> str:
    for m in re.finditer(r"[.!?](?=\s+[A-Z0-9\"“(\[])", text):
        last_word = text[: m.end()].rsplit(None, 1)[-1].lower()
        if last_word not in _ABBREVIATIONS:
            return text[: m.end()]
    return text


def _split_clause(sentence: str) -> str:
    depth = 0
    for i, ch in enumerate(sentence):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif depth == 0 and (ch in ",;:" or (ch in "—–" and i > 0)) and sentence[i + 1 : i + 2] in (" ", ""):
            return sentence[:i].rstrip()
    return sentence


def _cut(text: str, limit: int = MAX_TITLE_CHARS) -> str:
    """Cut at a word boundary so that the text plus "…" fits in ``limit`` characters."""
    text = text.strip()
    if len(text) <= limit:
        return text
    words = text[: limit - 1].split(" ")
    if len(words) > 1:
        words = words[:-1]  # the last word may be cut in half
    while len(words) > 1 and words[-1].lower().strip(",;:") in _TRAILING_STOPWORDS:
        words.pop()
    out = " ".join(words).rstrip(" ,;:-–—")
    if out.count("(") > out.count(")"):  # do not leave "networks (DNNs…"
        out = out[: out.rfind("(")].rstrip(" ,;:-–—") or out
    return out + "…"

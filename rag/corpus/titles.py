"""Short display titles for papers whose source gives none: a named contribution, else the phrase of what it does.

The phrase comes from :mod:`rag.corpus.phrases` (else the most telling key phrase with its complement): never a
comma list of key terms. Measured against the real titles of SciFact and ml_abstracts records, by hand and by
proxies, with ``python -m rag.evaluation.bench titles`` (docs/benchmarks.md, "Derived titles").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from rag.corpus.phrases import contribution_phrase, fit_phrase
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


# "<up to five words> (<acronym>)": a definition, when the acronym abbreviates the words before it
_DEFINITION_RE = re.compile(r"(?P<long>(?:[A-Za-z][\w'-]*\s+){0,4}[A-Za-z][\w'-]*)\s*\((?P<short>[A-Za-z][\w-]{1,9})\)")


def acronym_definitions(text: str) -> list[tuple[str, str]]:
    """The acronyms ``text`` defines, in order, as (long form, acronym): "Cell-free DNA (cfDNA) liquid biopsy"
    gives ("Cell-free DNA", "cfDNA"); the long form is the fewest words before the parentheses that the
    acronym abbreviates, and a parenthesis that abbreviates none of them ("(see below)") is no definition."""
    found = []
    for m in _DEFINITION_RE.finditer(text):
        words, short = m.group("long").split(), m.group("short")
        long = next(
            (" ".join(words[-n:]) for n in range(1, len(words) + 1) if _abbreviates(short, " ".join(words[-n:]))), ""
        )
        if long:
            found.append((long, short))
    return found


def derive_title(abstract: str) -> str:
    """A short, deterministic display title for an abstract that came without one.

    The name of the method, dataset or benchmark that the abstract introduces ("We introduce
    WildBox, a dataset …" → ``WildBox``; "we propose Discrete Latent Reasoning (DLR), …" →
    ``Discrete Latent Reasoning (DLR)``), else the phrase of its contribution sentence ("we address the
    problem of learning robust detectors with noisy boxes" → "Learning robust detectors with noisy boxes",
    :func:`~rag.corpus.phrases.contribution_phrase`), never a list of key terms nor a clause cut
    mid-sentence. Markup is stripped; never empty.
    """
    marked = strip_markup(abstract, mark_emphasis=True)
    plain = marked.replace(EMPH_OPEN, "").replace(EMPH_CLOSE, "")
    name = _named_contribution(plain, marked)
    if name:
        return name
    if len(plain) <= MAX_TITLE_CHARS:  # a one-line "abstract" is its own title
        return _first_clause(plain) or "Untitled abstract"
    phrase = contribution_phrase(plain) or key_phrase_title(plain)
    return _with_topic(_spelled_out(phrase, plain), plain) if phrase else _first_clause(plain) or "Untitled abstract"


def _with_topic(title: str, text: str) -> str:
    """``title`` with the field the abstract opens with, when it names none: a phrase such as "Two architectural
    mechanisms" gets "for in-context learning (ICL)", the first acronym that the first sentence defines, as
    titles put a contribution in its field ("... for quantum machine learning (QML)"). Unchanged when the title
    already has an acronym in parentheses, is a statement, or would grow past :data:`MAX_TITLE_CHARS`."""
    if "(" in title or not re.match(r"(?i)(?:an?|the|two|three|\w+ing)\b", title):
        return title
    opening = re.split(r"(?<=[.!?])\s+", text)[0]
    for long, short in acronym_definitions(opening):
        if long.lower() in title.lower() or short in title:
            continue
        if long[:1].isupper() and long.split()[0][1:].islower():
            long = long[:1].lower() + long[1:]
        made = re.search(rf"(?i)\b(?:{_CONTRIBUTION_NOUNS})s?$", title)
        topical = f"{title} {'for' if made else 'in'} {long} ({short})"
        return topical if len(topical) <= MAX_TITLE_CHARS else title
    return title


def _spelled_out(title: str, text: str) -> str:
    """``title`` with the first acronym that ``text`` defines written as titles write it, "Long form (ACR)":
    "limits of MoE architectures" -> "limits of Mixture-of-Experts (MoE) architectures" (and a long form
    without its acronym gets it), cut before a preposition to fit :data:`MAX_TITLE_CHARS` unless it is a "how"
    phrase (which a cut would leave without its verb)."""
    if re.search(r"\([^()]+\)", title):
        return title
    cuttable = not re.match(r"(?i)(?:how|why|what|when|whether)\b", title)
    for long, short in acronym_definitions(text):
        if long[:1].isupper() and long.split()[0][1:].islower():  # "Cell-free DNA" began its sentence
            long = long[:1].lower() + long[1:]
        spelled = f"{long} ({short})"
        for pattern, repl in (
            (rf"(?<![\w-]){re.escape(short)}(?![\w-])", spelled),
            (rf"(?i)(?<![\w-]){re.escape(long)}(?![\w-])", None),
        ):
            found = re.search(pattern, title)
            if found:
                new = title[: found.start()] + (repl or f"{found.group(0)} ({short})") + title[found.end() :]
                new = new[:1].upper() + new[1:]
                if len(new) <= MAX_TITLE_CHARS:
                    return new
                fitted = fit_phrase(new, MAX_TITLE_CHARS) if cuttable else ""
                return fitted if f"({short})" in fitted else title  # a cut that drops the acronym says less
    return title


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


# ---------------------------------------------------------------------------------------------- key phrases
# Words that end a key phrase: function words, and the verbs, adverbs and evaluative adjectives of abstract
# prose ("we propose", "significantly", "novel"), which are in no one's title keywords.
_BREAK_WORDS = set(
    """a about above across after again against all almost along already also although always am among an and another
    any are as at be because been before being below between both but by can could did do does doing done down during
    each either else enough even ever every few for from further had has have having he her here hers him his how
    however i if in into is it its itself just least less like many may me might more most much must my neither no nor
    not now of off often on once one only onto or other others otherwise our ours out over own per perhaps rather
    same several she should since so some such than that the their theirs them themselves then there these they this
    those though through thus to too toward towards under unless until up upon us very via was we were what when where
    whereas whether which while who whom whose why will with within without would yet you your
    paper work study article propose proposes proposed proposing present presents presented introduce introduces
    introduced show shows showed shown demonstrate demonstrates demonstrated achieve achieves achieved achieving
    outperform outperforms outperformed outperforming provide provides provided obtain obtains obtained use uses used
    using based allow allows allowed enable enables enabled make makes made give gives given consider considers
    considered develop develops developed address addresses addressed investigate investigates explore explores
    study studies studied apply applies applied require requires required lead leads results result experiments
    experimental extensive existing previous prior recent recently new novel different various many significant
    significantly substantially effectively efficiently simple simply well better best state-of-the-art first
    second finally further furthermore moreover specifically particular particularly important key main
    however therefore hence compared respectively approach approaches method methods technique techniques
    framework problem problems task tasks performance way ways number set real real-world wide widely large
    small high low able also show including include includes called named
    improve improves improved reduce reduces reduced predict predicts predicted lack lacks fail fails failed remain
    remains remained yield yields yielded exhibit exhibits capture captures captured learn learns learned perform
    performs performed generate generates generated leverage leverages leveraged exploit exploits exploited rely
    relies suffer suffers reveal reveals revealed suggest suggests indicate indicates find finds found offer offers
    emerge emerges become becomes seem seems tend tends help helps aim aims seek seeks evaluate evaluates evaluated
    compare compares solve solves solved handle handles mitigate mitigates overcome overcomes focus focuses ensure
    ensures establish establishes prove proves proved derive derives derived characterize characterizes analyze
    analyzes analyse analyses identify identifies identified observe observes observed report reports reported
    measure measures estimate estimates combine combines combined integrate integrates extend extends extended
    adapt adapts employ employs employed utilize utilizes utilized operate operates produce produces produced
    contain contains involve involves depend depends exist exists hold holds take takes run runs vary varies
    grow grows increase increases increased decrease decreases induce induces induced remain provably
    train trains trained two three four five six seven eight nine ten write writes written hurt hurts appear appears
    classify classifies refer refers containing equipped considering designed following according yielding
    leading resulting making taking account today derive""".split()
)
# A word ending in -s right before one of these is a verb ("search removes the ...", "repeats itself"), not a noun.
_AFTER_VERB = set("the a an its their itself themselves this these that them it his her our such each both".split())
_GENERIC = set("model models learning data network networks algorithm algorithms system systems".split())
_WORD_RE = re.compile(r"[A-Za-z0-9][\w'’+./@-]*[\w+]|[A-Za-z0-9]|[^\sA-Za-z0-9]")
_CONTRIBUTION_SENTENCE = re.compile(
    r"(?i)\b(?:we|this\s+(?:paper|work)|our\s+(?:method|approach|work))\s+(?:\w+ly\s+)?"
    r"(?:propose|present|introduce|develop|study|investigate|consider|address|explore|design)"
)
MAX_KEY_PHRASE_TITLE = 60


def key_phrase_title(text: str) -> str:
    """The most telling key phrase of ``text`` (plain text) as a noun phrase with its complement, as the
    abstract first writes it ("Pleiotropic effects" -> "Pleiotropic effects of statins"); "" when there is none.
    One phrase, never a list of them: a comma list of key terms names no contribution."""
    phrases = key_phrases(text)
    if not phrases:
        return ""
    top = phrases[0]
    m = re.search(
        rf"(?<![\w-]){re.escape(top)}(?P<rest>\s+(?:of|for|in|on|with|from|between|under|across)\s+"
        rf"(?:(?:the|a|an)\s+)?(?P<words>(?:[\w'’+/@-]+\s+){{0,3}}[\w'’+/@-]+))",
        text,
    )
    if m:
        words = m.group("words").split()
        kept: list[str] = []
        for w in words:  # content words only: "of statins", not "of statins in the"
            if not _is_content(w):
                break
            kept.append(w)
        if kept:
            top = f"{top}{m.group('rest')[: m.group('rest').index(words[0])]}{' '.join(kept)}"
    return _cut(top[:1].upper() + top[1:], MAX_KEY_PHRASE_TITLE)


def key_phrases(text: str) -> list[str]:
    """Up to three key phrases of ``text`` (plain text), most telling first: runs of content words (at most
    four) scored by how often their words recur in the abstract, counted double in the first sentence and the
    sentence that states the contribution. Empty when there are none."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"“(\[])", text) if s.strip()]
    if not sentences:
        return []
    phrases: dict[str, tuple[float, int, str]] = {}  # key -> (score, first position, surface form)
    freq: dict[str, int] = {}
    runs: list[tuple[list[str], float, int]] = []
    position = 0
    for i, sentence in enumerate(sentences):
        weight = 2.0 if i == 0 or _CONTRIBUTION_SENTENCE.search(sentence) else 1.0
        run: list[str] = []
        for token in [*_WORD_RE.findall(sentence), "."]:
            if _is_content(token) or (len(token) == 1 and token.isupper() and run and run[-1][:1].isupper()):
                run.append(token)  # a capital letter after a capitalised word is part of a name ("Vitamin D")
                continue
            verb_next = token.lower() in _AFTER_VERB or token[:1].isdigit()  # "removes the", "removes 95%"
            if run and verb_next and run[-1].islower() and run[-1].endswith("s") and not run[-1].endswith("ss"):
                run.pop()
            if run:
                runs.append((run[-4:], weight, position))
                position += 1
                for w in run:
                    freq[_stem(w)] = freq.get(_stem(w), 0) + 1
            run = []
    singles = all(len(words) == 1 and not _is_name(words[0]) for words, _, _ in runs)
    defined = _acronym_uses(text)
    for words, weight, pos in runs:
        stems = [_stem(w) for w in words]
        if all(s in _GENERIC for s in stems) or (len(words) == 1 and not _is_name(words[0]) and not singles):
            continue  # a lone common word ("training") or a generic phrase ("neural networks") says too little
        score = weight * sum(freq[s] * (0.3 if s in _GENERIC else 1.0) for s in stems) * (1 + 0.25 * (len(words) - 1))
        key = " ".join(stems)
        old = phrases.get(key)
        phrases[key] = (score + (old[0] if old else 0.0), old[1] if old else pos, old[2] if old else " ".join(words))
    aliases: dict[str, str] = {}
    for expansion, acr in defined.items():  # an acronym's uses are uses of what it stands for: "... (cfDNA)"
        key = " ".join(expansion)
        full, abbr = phrases.get(key), phrases.get(acr)
        if full and abbr:
            del phrases[acr]
            phrases[key] = (full[0] + abbr[0], min(full[1], abbr[1]), f"{full[2]} ({abbr[2]})")
            aliases[key] = acr
    chosen: list[str] = []
    used: set[str] = set()
    for key, (_score, _pos, surface) in sorted(phrases.items(), key=lambda kv: (-kv[1][0], kv[1][1])):
        key_stems = set(key.split()) | ({aliases[key]} if key in aliases else set())
        if key_stems & used:
            continue
        spelled = next((i for i, c in enumerate(chosen) if _abbreviates(surface, c) or _abbreviates(c, surface)), None)
        if spelled is not None:  # "convolutional neural network" and "CNN": one phrase, "... (CNN)"
            long, short = sorted((chosen[spelled], surface), key=len, reverse=True)
            merged = [*chosen[:spelled], f"{long} ({short})", *chosen[spelled + 1 :]]
            chosen = merged if len(", ".join(merged)) <= MAX_KEY_PHRASE_TITLE else chosen
            used |= key_stems
            continue
        candidate = ", ".join([*chosen, surface])
        if len(candidate) > MAX_KEY_PHRASE_TITLE and chosen:
            continue  # too long beside the others; a shorter one (or an acronym of one) may still fit
        chosen.append(surface)
        used |= key_stems
        if len(chosen) == 3:
            break
    return chosen


def _stem(word: str) -> str:
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def _is_content(token: str) -> bool:
    if len(token) < 2 or not token[:1].isalnum() or token.lower() in _BREAK_WORDS:
        return False  # punctuation, a function word, a single letter (a variable: "target Y", "O(D)")
    if token.replace(".", "").replace(",", "").isdigit():
        return False  # a bare number
    return not (token.islower() and token.endswith("ly") and len(token) > 4)  # adverbs


def _is_name(word: str) -> bool:
    """An acronym or coined name (QML, GPT-4, xLSTM), which can stand alone as a key phrase ("3D" cannot)."""
    return len(word) >= 3 and (any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word))


def _abbreviates(short: str, long: str) -> bool:
    """``CNN`` abbreviates "convolutional neural network", ``MARL`` "multi-agent reinforcement learning",
    ``cfDNA`` "cell-free DNA" (a mixed-case acronym: its letters in order, the first starting a word)."""
    letters = short.rstrip("s") if short.endswith("s") and short[:-1].isupper() else short
    if " " in letters or len(letters) < 2:
        return False
    if not letters.isupper():
        return sum(c.isupper() for c in letters) >= 2 and _spells(letters, long)
    initials = "".join(w[0] for w in re.split(r"[\s-]+", long) if w).upper()
    return initials == letters.upper() or initials.endswith(letters.upper())


def _spells(short: str, long: str) -> bool:
    """Schwartz & Hearst's test of an abbreviation: the short form's letters and digits occur in ``long`` in
    order, matched from the right, and its first character starts a word of ``long``."""
    s, text = short.lower(), long.lower()
    if not s[:1].isalnum() or text[:1] != s[:1]:
        return False
    li = len(text) - 1
    for si in range(len(s) - 1, -1, -1):
        c = s[si]
        if not c.isalnum():
            continue
        while li >= 0 and (text[li] != c or (si == 0 and li > 0 and text[li - 1].isalnum())):
            li -= 1
        if li < 0:
            return False
        li -= 1
    return True


def _acronym_uses(text: str) -> dict[tuple[str, ...], str]:
    """The phrases ``text`` defines an acronym for ("Cell-free DNA (cfDNA)"), as stems, with the acronym's stem:
    each use of the acronym is a use of the phrase."""
    out: dict[tuple[str, ...], str] = {}
    for m in _DEFINITION_RE.finditer(text):
        words, short = m.group("long").split(), m.group("short")
        for n in range(1, len(words) + 1):  # the shortest tail it abbreviates (_DEFINITION_RE allows five words)
            if _abbreviates(short, " ".join(words[-n:])):
                out[tuple(_stem(w) for w in words[-n:])] = _stem(short)
                break
    return out

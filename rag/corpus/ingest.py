"""Read corpus files into :class:`~rag.types.Paper` records: validate, derive titles, dedupe.

Formats, picked by extension (each may also be gzipped, ``.gz``):

* ``.txt``   the seed format: the first non-empty line is the collection title (kept as metadata
  ``collection``), then one abstract per blank-line-separated paragraph.
* ``.jsonl`` / ``.ndjson``  JSON Lines: our schema (``abstract`` required; optional ``id``, ``title``,
  ``authors``, ``venue``, ``year``, ``url``; other keys go to ``metadata``) or a BEIR corpus
  (``_id``, ``title``, ``text``), told apart per record by its keys.
* ``.json``  a JSON array of such records (also a single record object, or JSON Lines saved as ``.json``).
* ``.csv``   a header row with an ``abstract`` column; the other columns as above.

Every file is read and validated completely before anything is returned, so a caller that writes
an index writes nothing when a file is bad. Errors are :class:`~rag.errors.IngestError` and name
the file and the line (the record index too, for JSON arrays).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import re
import sys
import unicodedata
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from rag.errors import IngestError
from rag.types import MetaValue, Paper

__all__ = [
    "SUPPORTED_SUFFIXES",
    "IngestResult",
    "bundled_corpus",
    "derive_title",
    "load_corpora",
    "normalise_text",
    "paper_id_for",
    "read_corpora",
    "read_corpus",
]

SUPPORTED_SUFFIXES = (".txt", ".jsonl", ".ndjson", ".json", ".csv")
MAX_TITLE_CHARS = 80
_BOM = b"\xef\xbb\xbf"
_ID_KEYS = ("id", "paper_id", "_id")
_RESERVED = {"id", "paper_id", "_id", "title", "abstract", "text", "authors", "venue", "year", "url"}
_READ_ERRORS = (OSError, EOFError, zlib.error)  # gzip.BadGzipFile is an OSError; a truncated .gz is an EOFError
# json.loads raises these besides JSONDecodeError: a number longer than sys.get_int_max_str_digits(), deep nesting
_JSON_ERRORS = (ValueError, RecursionError)
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_INT64 = 2**63


# --------------------------------------------------------------------------------------------
# public API


@dataclass
class IngestResult:
    """What :func:`load_corpora` read: the papers, and what it dropped on the way."""

    papers: list[Paper] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    duplicates: int = 0
    """Records dropped because an earlier record had the same ``paper_id`` and the same abstract."""
    conflicts: int = 0
    """Records dropped because an earlier record had the same ``paper_id`` but another abstract."""
    warnings: list[str] = field(default_factory=list)
    """One line per conflict and per file skipped in a directory."""


def read_corpus(path: Path) -> list[Paper]:
    """Read one corpus file, or every supported file directly inside a directory (sorted by name).

    Papers with the same ``paper_id`` are kept once (the first one). Raises :class:`IngestError`.
    """
    return load_corpora([path]).papers


def read_corpora(paths: Iterable[Path]) -> list[Paper]:
    """Read files and directories (as :func:`read_corpus`), deduplicating across all of them."""
    return load_corpora(paths).papers


def load_corpora(paths: Iterable[Path] | Path) -> IngestResult:
    """Like :func:`read_corpora`, but also report duplicates, conflicting ids and skipped files."""
    result = IngestResult()
    first_seen: dict[str, Paper] = {}
    for path in _expand([paths] if isinstance(paths, (str, Path)) else paths, result):
        result.files.append(path)
        for paper in _read_file(path):
            earlier = first_seen.get(paper.paper_id)
            if earlier is None:
                first_seen[paper.paper_id] = paper
                result.papers.append(paper)
            elif normalise_text(earlier.abstract) == normalise_text(paper.abstract):
                result.duplicates += 1
            else:
                result.conflicts += 1
                result.warnings.append(
                    f"{paper.source}: paper_id {paper.paper_id!r} was already read from {earlier.source} "
                    "with a different abstract; kept the first one"
                )
    return result


def bundled_corpus() -> Path:
    """The demo corpus shipped inside the package (19 NeurIPS 2026 abstracts, seed ``.txt`` format)."""
    return Path(str(resources.files("rag").joinpath("data", "neurips2026_abstracts.txt")))


def paper_id_for(abstract: str) -> str:
    """The content id of an abstract without a given id: ``"h-"`` + 16 hex of sha256.

    Hashes the normalised, lower-cased text, so whitespace and markup differences do not matter.
    """
    key = normalise_text(abstract).lower()
    return "h-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]  # never raises


# --------------------------------------------------------------------------------------------
# normalisation

_FORMAT_CMDS = (
    "emph|textbf|textit|texttt|textsc|textrm|textsf|textup|textmd|textnormal|underline|text|url|"
    "mathrm|mathbf|mathit|mathsf|mathtt|mathcal|mathbb|mathfrak|mathscr|boldsymbol|bm|operatorname"
)
_EMPH_CMDS = {"emph", "textbf", "textit"}
_FORMAT_RE = re.compile(r"\\(" + _FORMAT_CMDS + r")\*?\s*\{([^{}]*)\}")
_DROP_CMD_RE = re.compile(r"\\(?:cite[tp]?|ref|eqref|label|footnote)\*?\s*\{[^{}]*\}")
_CMD_RE = re.compile(r"\\([A-Za-z]+)\*?")
_ESCAPE_RE = re.compile(r"\\([%&_#{}$])")
_MATH_RE = re.compile(r"\$(?!\s)([^$\n]{1,300}?)(?<![\s\\])\$|\\\((.{1,300}?)\\\)|\\\[(.{1,300}?)\\\]", re.DOTALL)
_SYMBOLS = {
    "times": "×",
    "pm": "±",
    "mp": "∓",
    "cdot": "·",
    "leq": "≤",
    "le": "≤",
    "geq": "≥",
    "ge": "≥",
    "neq": "≠",
    "ne": "≠",
    "approx": "≈",
    "sim": "~",
    "gtrsim": "≳",
    "lesssim": "≲",
    "infty": "∞",
    "to": "→",
    "rightarrow": "→",
    "leftarrow": "←",
    "in": "∈",
    "ll": "≪",
    "gg": "≫",
    "propto": "∝",
    "ldots": "...",
    "cdots": "...",
    "dots": "...",
    "quad": " ",
    "qquad": " ",
    "prime": "'",
}
_MD_LINK_RE = re.compile(r"\[([^\[\]\n]{1,300})\]\((\S{1,500}?)\)")
_MD_STRONG_RE = (
    re.compile(r"(?<![\w*\\])\*\*(?=\S)([^*]{1,300}?)(?<=\S)\*\*(?![\w*])"),
    re.compile(r"(?<![\w\\])__(?=\S)([^_]{1,300}?)(?<=\S)__(?!\w)"),
)
_MD_EM_RE = (
    re.compile(r"(?<![\w*\\])\*(?=\S)([^*]{1,300}?)(?<=\S)\*(?![\w*])"),
    re.compile(r"(?<![\w\\])_(?=\S)([^_]{1,300}?)(?<=\S)_(?!\w)"),
)
_ZERO_WIDTH = "\u00ad\u200b\u200c\u200d\u2060\ufeff"  # soft hyphen, zero-width spaces and joiners, BOM
_EMPH_OPEN, _EMPH_CLOSE = "\x01", "\x02"  # marks emphasis for derive_title; never returned


def normalise_text(text: str) -> str:
    """The text as indexed: inline LaTeX and Markdown markup removed, whitespace collapsed.

    ``$k$`` → ``k``, ``$\\alpha$`` → ``alpha``, ``20$\\times$`` → ``20×``, ``\\emph{x}`` / ``\\textbf{x}`` /
    ``\\textit{x}`` → ``x``, ``*x*`` / ``**x**`` / ``_x_`` → ``x``, ``[text](url)`` → ``text (url)``,
    ``--`` → ``-``, ``\\%`` → ``%``, ````x''`` → ``"x"``; NFKC-normalised.
    """
    return _strip_markup(text, mark_emphasis=False)


def _strip_markup(text: str, *, mark_emphasis: bool) -> str:
    text = unicodedata.normalize("NFKC", text)
    for ch in _ZERO_WIDTH:
        text = text.replace(ch, "")
    text = text.replace("\\$", "\x03")  # an escaped dollar is not a math delimiter
    # math is rendered first and set aside, so that `_` and `*` inside it are not read as Markdown
    protected: list[str] = []

    def keep(rendered: str) -> str:
        protected.append(rendered)
        return f"\x00{len(protected) - 1}\x00"

    text = _MATH_RE.sub(lambda m: keep(_render_math(m.group(1) or m.group(2) or m.group(3) or "")), text)
    text = _MD_LINK_RE.sub(lambda m: keep(f"{m.group(1)} ({m.group(2)})"), text)
    text = text.replace("``", '"').replace("''", '"')
    text = _DROP_CMD_RE.sub("", text)
    opened, closed = (_EMPH_OPEN, _EMPH_CLOSE) if mark_emphasis else ("", "")
    for _ in range(4):  # nested \textbf{\emph{x}} unwraps from the inside out
        new = _FORMAT_RE.sub(lambda m: f"{opened}{m.group(2)}{closed}" if m.group(1) in _EMPH_CMDS else m.group(2), text)
        if new == text:
            break
        text = new
    text = _ESCAPE_RE.sub(r"\1", text)
    text = _CMD_RE.sub(lambda m: _SYMBOLS.get(m.group(1), m.group(1)), text)
    for marker, pattern in zip("*_*_", (*_MD_STRONG_RE, *_MD_EM_RE)):
        if marker in text:  # the lookbehinds make these slow; most abstracts have neither * nor _
            text = pattern.sub(lambda m: f"{opened}{m.group(1)}{closed}", text)
    if "--" in text:
        text = re.sub(r"-{2,}", "-", text)
    if protected:
        text = re.sub(r"\x00(\d+)\x00", lambda m: protected[int(m.group(1))], text)
    return " ".join(text.replace("\x03", "$").split())


def _render_math(src: str) -> str:
    for _ in range(4):
        new = _FORMAT_RE.sub(lambda m: m.group(2), src)
        if new == src:
            break
        src = new
    src = _ESCAPE_RE.sub(r"\1", src)
    src = re.sub(r"\\[,;:! ]", " ", src)

    def command(m: re.Match[str]) -> str:
        name = m.group(1)
        out = _SYMBOLS.get(name, name)
        nxt = src[m.end() : m.end() + 1]
        # `\sqrt{x}` → `sqrt x`, `\alpha\beta` → `alpha beta`, but `\exp[x]` → `exp[x]`
        return out + " " if out.isalnum() and (nxt.isalnum() or nxt in "{\\") else out

    src = _CMD_RE.sub(command, src)
    return " ".join(src.replace("{", "").replace("}", "").split())


# --------------------------------------------------------------------------------------------
# titles

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
    _SUBJECT_VERB
    + rf"(?:(?:a|an|the|our)\s+(?:[\w-]+\s+){{0,5}}?(?i:{_CONTRIBUTION_NOUNS})s?(?:\s+(?:called|named|dubbed|termed)|,)\s+)?[\"“]?"
    + rf"(?P<name>{_NAME}){_PAREN}{_END}"
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
    rf"(?i:\b(?:we|what\s+we)\s+(?:coin|call|term|dub|name)\s+)(?:[a-z][\w-]*\s+){{0,3}}{_EMPH_OPEN}(?P<name>[A-Z0-9][^{_EMPH_CLOSE}]{{0,78}}){_EMPH_CLOSE}"
)
_ACRONYM_RE = re.compile(r"[A-Za-z0-9][\w&@+.-]{0,19}")
_ABBREVIATIONS = {"e.g.", "i.e.", "al.", "vs.", "cf.", "fig.", "figs.", "eq.", "eqs.", "sec.", "approx.", "resp.", "no."}
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
    marked = _strip_markup(abstract, mark_emphasis=True)
    plain = marked.replace(_EMPH_OPEN, "").replace(_EMPH_CLOSE, "")
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


# --------------------------------------------------------------------------------------------
# files


def _expand(paths: Iterable[Path | str], result: IngestResult) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = False
            for child in sorted(path.iterdir()):
                if child.name.startswith(".") or not child.is_file():
                    continue
                if _format_of(child) is None:
                    result.warnings.append(f"{child}: skipped (not a corpus file; supported: {_supported_text()})")
                    continue
                found = True
                yield child
            if not found:
                raise IngestError(f"{path}: no corpus files in this directory (supported: {_supported_text()})")
        else:
            yield path


def _supported_text() -> str:
    return ", ".join(SUPPORTED_SUFFIXES) + " (optionally .gz)"


def _format_of(path: Path) -> str | None:
    name = path.name.lower()
    name = name.removesuffix(".gz")
    for suffix in SUPPORTED_SUFFIXES:
        if name.endswith(suffix):
            return "jsonl" if suffix == ".ndjson" else suffix[1:]
    return None


def _read_file(path: Path) -> list[Paper]:
    if not path.exists():
        raise IngestError(f"{path}: file not found")
    fmt = _format_of(path)
    if fmt is None:
        raise IngestError(f"{path}: unsupported file type; use one of {_supported_text()}")
    if not path.is_file():
        raise IngestError(f"{path}: not a regular file")
    try:
        if fmt == "jsonl":
            papers = _read_jsonl(path, _iter_lines(path))
        else:
            text = _read_text(path)
            if fmt == "json":
                papers = _read_json(path, text)
            elif fmt == "csv":
                papers = _read_csv(path, text)
            else:
                papers = _read_txt(path, text)
    except IngestError:
        raise
    except _READ_ERRORS as e:
        raise IngestError(f"{path}: cannot read the file: {e}") from e
    if not papers:
        raise IngestError(f"{path}: the file holds no records")
    return papers


def _open_binary(path: Path) -> io.BufferedIOBase | gzip.GzipFile:
    return gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")


def _decode_error(path: Path, data: bytes, e: UnicodeDecodeError, *, base_line: int = 1, base_offset: int = 0) -> IngestError:
    line = base_line + data.count(b"\n", 0, e.start)
    offset = base_offset + e.start
    where = " of the uncompressed data" if path.name.lower().endswith(".gz") else ""
    return IngestError(
        f"{path}, line {line}: not valid UTF-8 (byte 0x{data[e.start]:02x} at byte offset {offset}{where}); "
        "re-save the file as UTF-8"
    )


def _read_text(path: Path) -> str:
    with _open_binary(path) as fh:
        data = fh.read()
    bom = len(_BOM) if data.startswith(_BOM) else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as e:
        raise _decode_error(path, data[bom:], e, base_offset=bom) from e
    return text


def _iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Decoded lines, streamed, so a large ``.jsonl.gz`` is never held in memory as one string."""
    offset = 0
    with _open_binary(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            if lineno == 1 and raw.startswith(_BOM):
                raw, offset = raw[len(_BOM) :], len(_BOM)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise _decode_error(path, raw, e, base_line=lineno, base_offset=offset) from e
            offset += len(raw)
            yield lineno, line


def _read_jsonl(path: Path, lines: Iterable[tuple[int, str]]) -> list[Paper]:
    papers = []
    for lineno, line in lines:
        if not line.strip():
            continue
        where = f"{path}, line {lineno}"
        try:
            record = json.loads(line)
        except _JSON_ERRORS as e:
            raise IngestError(f"{where}: invalid JSON ({_json_problem(e)})") from e
        papers.append(_paper_from_record(record, where, f"{path.name}:{lineno}"))
    return papers


def _read_json(path: Path, text: str) -> list[Paper]:
    """A JSON array of records; also a single record object, or JSON Lines saved as ``.json``."""
    if not text.lstrip().startswith("{"):
        return _read_json_array(path, text)
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        return _read_jsonl(path, enumerate(io.StringIO(text, newline=""), 1))
    except _JSON_ERRORS as e:  # in the first record, whichever of the two layouts the file has
        raise IngestError(f"{path}, line 1: invalid JSON ({_json_problem(e)})") from e
    return [_paper_from_record(whole, f"{path}, line 1 (a single JSON object)", f"{path.name}:1")]


def _read_json_array(path: Path, text: str) -> list[Paper]:
    """Walk the array with ``raw_decode`` so that each record's line is known."""
    decoder = json.JSONDecoder()
    pos, line, counted = _skip_ws(text, 0), 1, 0

    def line_at(i: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, i)
        counted = i
        return line

    if pos >= len(text):
        return []
    if text[pos] != "[":
        raise IngestError(f"{path}, line {line_at(pos)}: expected a JSON array of records ([{{...}}, ...])")
    pos = _skip_ws(text, pos + 1)
    papers: list[Paper] = []
    index = 0
    while True:
        if pos >= len(text):
            raise IngestError(f"{path}, line {line_at(pos)}: invalid JSON (the array is not closed with ']')")
        if text[pos] == "]" and index == 0:
            pos += 1
            break
        try:
            record, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise IngestError(f"{path}, line {e.lineno}: invalid JSON ({e.msg} at column {e.colno}, record [{index}])") from e
        except _JSON_ERRORS as e:
            raise IngestError(f"{path}, record [{index}] (line {line_at(pos)}): invalid JSON ({_json_problem(e)})") from e
        start_line = line_at(pos)
        papers.append(_paper_from_record(record, f"{path}, record [{index}] (line {start_line})", f"{path.name}:{start_line}"))
        index += 1
        pos = _skip_ws(text, end)
        if text[pos : pos + 1] == ",":
            pos = _skip_ws(text, pos + 1)
        elif text[pos : pos + 1] == "]":
            pos += 1
            break
        else:
            raise IngestError(f"{path}, line {line_at(pos)}: invalid JSON (expected ',' or ']' after record [{index - 1}])")
    if _skip_ws(text, pos) < len(text):
        raise IngestError(f"{path}, line {line_at(_skip_ws(text, pos))}: invalid JSON (extra data after the array)")
    return papers


def _json_problem(e: ValueError | RecursionError) -> str:
    if isinstance(e, json.JSONDecodeError):
        return f"{e.msg} at column {e.colno}"
    if isinstance(e, RecursionError):
        return "nested too deeply"
    if "integer string conversion" in str(e):
        return f"a number has more than {sys.get_int_max_str_digits()} digits"
    return str(e)


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _read_csv(path: Path, text: str) -> list[Paper]:
    # No field can be longer than the file; raise the process-wide limit only as far as needed.
    if len(text) >= csv.field_size_limit():
        csv.field_size_limit(min(len(text) + 1, 2**31 - 1))
    # strict: a stray quote is an error here rather than silently merged text in an abstract
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    papers: list[Paper] = []
    prev_end = 0
    try:
        header = next(reader, None)
        if header is None:
            return []
        columns = [h.strip() for h in header]
        if "abstract" not in {c.lower() for c in columns}:
            raise IngestError(f"{path}, line 1: no 'abstract' column in the header ({', '.join(repr(c) for c in columns)})")
        prev_end = reader.line_num
        for row in reader:
            start, prev_end = prev_end + 1, reader.line_num
            if not row or all(not cell.strip() for cell in row):
                continue
            where = f"{path}, line {start}"
            extra = row[len(columns) :]
            if any(cell.strip() for cell in extra):
                raise IngestError(
                    f"{where}: {len(row)} fields but the header has {len(columns)}; quote fields that contain commas"
                )
            record = {col: cell for col, cell in zip(columns, row) if col and cell.strip()}
            papers.append(_paper_from_record(record, where, f"{path.name}:{start}"))
    except csv.Error as e:
        raise IngestError(f"{path}, line {prev_end + 1}: malformed CSV ({e}); check the quoting of this record") from e
    return papers


def _read_txt(path: Path, text: str) -> list[Paper]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    collection: str | None = None
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    # The first line is the collection's title, unless it is plainly an abstract itself.
    if i < len(lines) and len(lines[i].strip()) <= 200 and (i + 1 == len(lines) or not lines[i + 1].strip()):
        collection = lines[i].strip()
        i += 1
    papers: list[Paper] = []
    para: list[str] = []
    start = 0
    for lineno in range(i + 1, len(lines) + 2):
        line = lines[lineno - 1] if lineno <= len(lines) else ""
        if line.strip():
            if not para:
                start = lineno
            para.append(line.strip())
        elif para:
            record: dict[str, Any] = {"abstract": " ".join(para)}
            if collection:
                record["collection"] = collection
            papers.append(_paper_from_record(record, f"{path}, paragraph at line {start}", f"{path.name}:{start}"))
            para = []
    return papers


# --------------------------------------------------------------------------------------------
# records


def _paper_from_record(record: Any, where: str, source: str) -> Paper:
    if not isinstance(record, dict):
        raise IngestError(f"{where}: expected a JSON object (a record), got {_json_type(record)}")
    keys = {str(k).lower(): k for k in record}

    def get(name: str) -> Any:
        return record[keys[name]] if name in keys else None

    if "abstract" in keys:
        abstract = get("abstract")
        field_name = "abstract"
    elif "_id" in keys or "text" in keys:  # BEIR corpus record
        if "text" not in keys:
            raise IngestError(f"{where}: BEIR record without 'text' (keys: {_keys_text(record)})")
        abstract, field_name = get("text"), "text"
    else:
        raise IngestError(f"{where}: record without 'abstract' (keys: {_keys_text(record) or 'none'})")
    if not isinstance(abstract, str):
        raise IngestError(f"{where}: '{field_name}' must be a string, got {_json_type(abstract)}")
    if not abstract.strip():
        raise IngestError(f"{where}: '{field_name}' is empty")
    abstract = abstract.strip()
    if not _has_text(abstract):
        raise IngestError(f"{where}: '{field_name}' has no text once markup is removed ({_clip(abstract)})")

    paper_id = None
    for key in _ID_KEYS:
        value = get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if isinstance(value, (dict, list)):
            raise IngestError(f"{where}: '{key}' must be a string or a number, got {_json_type(value)}")
        paper_id = str(value).strip()
        break

    title = get("title")
    if isinstance(title, (dict, list)):
        raise IngestError(f"{where}: 'title' must be a string, got {_json_type(title)}")
    title = " ".join(str(title).split()) if title is not None else ""
    if title and not _has_text(title):  # e.g. only zero-width spaces: derive a visible one
        title = ""

    try:
        paper = Paper(
            paper_id=paper_id or paper_id_for(abstract),
            title=title or derive_title(abstract),
            title_derived=not title,
            abstract=abstract,
            authors=_parse_authors(get("authors"), where),
            venue=_optional_str(get("venue"), "venue", where),
            year=_parse_year(get("year"), where),
            url=_optional_str(get("url"), "url", where),
            metadata=_metadata(record),
            source=source,
        )
    except ValueError as e:  # pydantic.ValidationError is a ValueError
        raise IngestError(f"{where}: invalid record ({e})") from e
    _check_storable(paper, where)
    return paper


def _keys_text(record: dict[Any, Any]) -> str:
    return ", ".join(_clip(str(k)) for k in record)


def _clip(text: str, limit: int = 40) -> str:
    """``repr`` of the start of ``text``: one line, whatever the text holds."""
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def _has_text(text: str) -> bool:
    """False when nothing is left once markup and zero-width characters are removed (``\\cite{x}``, ``\\u200b``)."""
    if "\\" not in text and any(ch.isalnum() for ch in text):
        return True  # markup without a backslash never removes letters or digits; skips the normalisation
    return bool(normalise_text(text))


def _check_storable(paper: Paper, where: str) -> None:
    """Reject what the index could not store: unpaired surrogates (``\\ud800`` escapes in JSON) in any
    text, metadata keys that Chroma rejects (empty, starting with '$' or '#', ``chroma:document``)."""
    fields: list[tuple[str, Any]] = [("abstract", paper.abstract), ("id", paper.paper_id), ("title", paper.title),
                                     ("venue", paper.venue), ("url", paper.url)]
    fields += [("authors", a) for a in paper.authors]
    for key, value in paper.metadata.items():
        if not key or key[0] in "$#" or key == "chroma:document":
            raise IngestError(
                f"{where}: the key {_clip(key)} cannot be stored as metadata (keys must not be empty or start with "
                "'$' or '#'); rename or remove it"
            )
        fields += [(key, key), (key, value)]
    for name, value in fields:
        if isinstance(value, str) and _SURROGATE_RE.search(value):
            raise IngestError(
                f"{where}: {_clip(name)} holds an unpaired UTF-16 surrogate (an escape such as \\ud800 without "
                "its pair), which is not valid Unicode"
            )


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _optional_str(value: Any, name: str, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise IngestError(f"{where}: '{name}' must be a string, got {_json_type(value)}")
    return str(value).strip() or None


def _parse_authors(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        parts = value.split(";") if ";" in value else value.split(",")
    elif isinstance(value, list):
        if any(isinstance(v, (dict, list)) for v in value):
            raise IngestError(f"{where}: 'authors' must be a list of names or a 'a; b' string")
        parts = [str(v) for v in value if v is not None]
    else:
        raise IngestError(f"{where}: 'authors' must be a list of names or a 'a; b' string, got {_json_type(value)}")
    return tuple(p.strip() for p in parts if p.strip())


def _parse_year(value: Any, where: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    year: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        year = value
    elif isinstance(value, float) and value.is_integer():
        year = int(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,20}(?:\.0+)?\s*", value):
        year = int(float(value))
    if year is None or not -9999 <= year <= 9999:
        raise IngestError(f"{where}: 'year' must be an integer from -9999 to 9999, got {_clip(str(value))}")
    return year


def _metadata(record: dict[str, Any]) -> dict[str, MetaValue]:
    """Every other key. Lists of scalars are joined with "; "; nested objects are JSON-dumped, except
    a BEIR-style ``metadata`` object, whose scalar entries are merged in."""
    out: dict[str, MetaValue] = {}
    for key, value in record.items():
        key = str(key)
        if key.lower() in _RESERVED:
            continue
        if key.lower() == "metadata" and isinstance(value, dict):
            for sub_key, sub_value in value.items():
                converted = _meta_value(sub_value)
                if converted is not None and str(sub_key) not in out and str(sub_key).lower() not in _RESERVED:
                    out[str(sub_key)] = converted
            continue
        converted = _meta_value(value)
        if converted is not None:
            out[key] = converted
    return out


def _meta_value(value: Any) -> MetaValue | None:
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None  # NaN (often "missing" in exported tables) and infinities: Chroma stores neither
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT64 <= value < _INT64:
        return str(value)  # Chroma would turn it into a lossy float
    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, list) and all(isinstance(v, (str, int, float, bool)) or v is None for v in value):
        return "; ".join(str(v) for v in value if v is not None and v != "")
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

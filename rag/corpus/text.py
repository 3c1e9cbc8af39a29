"""Text normalisation: what is indexed and hashed, with LaTeX and Markdown markup reduced to plain text.

The stored abstract is never changed; these functions derive the text that is embedded, BM25-indexed
and compared (dedupe, content ids).
"""

from __future__ import annotations

import functools
import re
import unicodedata

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
EMPH_OPEN, EMPH_CLOSE = "\x01", "\x02"  # marks emphasis for derive_title; never returned


@functools.lru_cache(maxsize=16384)  # the answer path normalises the same abstract sentences for every claim
def normalise_text(text: str) -> str:
    """The text as indexed: inline LaTeX and Markdown markup removed, whitespace collapsed.

    ``$k$`` → ``k``, ``$\\alpha$`` → ``alpha``, ``20$\\times$`` → ``20×``, ``\\emph{x}`` / ``\\textbf{x}`` /
    ``\\textit{x}`` → ``x``, ``*x*`` / ``**x**`` / ``_x_`` → ``x``, ``[text](url)`` → ``text (url)``,
    ``--`` → ``-``, ``\\%`` → ``%``, ````x''`` → ``"x"``; NFKC-normalised.
    """
    return strip_markup(text, mark_emphasis=False)


def strip_markup(text: str, *, mark_emphasis: bool) -> str:
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
    opened, closed = (EMPH_OPEN, EMPH_CLOSE) if mark_emphasis else ("", "")
    for _ in range(4):  # nested \textbf{\emph{x}} unwraps from the inside out
        new = _FORMAT_RE.sub(
            lambda m: f"{opened}{m.group(2)}{closed}" if m.group(1) in _EMPH_CMDS else m.group(2), text
        )
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

"""Readable text for people: inline LaTeX and Markdown in abstracts shown as Unicode (terminal, Markdown and
CSV exports) or as escaped HTML with the math set in sub/superscripts (the web UI).

The stored abstract and every citation span stay byte-exact: :func:`parse_display` cuts the raw text into
pieces that each know their ``[start, end)`` in the raw string, so a span of the raw abstract is highlighted
on the rendered pieces it touches (:func:`format_display_html`). A piece of markup (``$\\pm$``,
``\\emph{...}``) is indivisible: a span that starts or ends inside it covers all of it.

Nothing here produces markup from the input: every character of the abstract reaches HTML through
:func:`html.escape`; the only tags emitted are our own ``<sub> <sup> <em> <strong> <span> <mark>``.
Math is never handed to a TeX engine (KaTeX's ``\\href``, ``\\htmlClass`` and friends cannot be reached).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rag.corpus.text import _MD_EM_RE, _MD_STRONG_RE

GREEK = {
    name: chr(code)
    for name, code in (
        ("alpha", 0x3B1),
        ("beta", 0x3B2),
        ("gamma", 0x3B3),
        ("delta", 0x3B4),
        ("epsilon", 0x3F5),
        ("varepsilon", 0x3B5),
        ("zeta", 0x3B6),
        ("eta", 0x3B7),
        ("theta", 0x3B8),
        ("vartheta", 0x3D1),
        ("iota", 0x3B9),
        ("kappa", 0x3BA),
        ("lambda", 0x3BB),
        ("mu", 0x3BC),
        ("nu", 0x3BD),
        ("xi", 0x3BE),
        ("pi", 0x3C0),
        ("varpi", 0x3D6),
        ("rho", 0x3C1),
        ("varrho", 0x3F1),
        ("sigma", 0x3C3),
        ("varsigma", 0x3C2),
        ("tau", 0x3C4),
        ("upsilon", 0x3C5),
        ("phi", 0x3D5),
        ("varphi", 0x3C6),
        ("chi", 0x3C7),
        ("psi", 0x3C8),
        ("omega", 0x3C9),
        ("Gamma", 0x393),
        ("Delta", 0x394),
        ("Theta", 0x398),
        ("Lambda", 0x39B),
        ("Xi", 0x39E),
        ("Pi", 0x3A0),
        ("Sigma", 0x3A3),
        ("Upsilon", 0x3A5),
        ("Phi", 0x3A6),
        ("Psi", 0x3A8),
        ("Omega", 0x3A9),
    )
}
SYMBOLS = GREEK | {
    "times": "×",
    "pm": "±",
    "mp": "∓",
    "cdot": "·",
    "div": "÷",
    "leq": "≤",
    "le": "≤",
    "leqslant": "≤",
    "geq": "≥",
    "ge": "≥",
    "geqslant": "≥",
    "neq": "≠",
    "ne": "≠",
    "approx": "≈",
    "simeq": "≃",
    "equiv": "≡",
    "sim": "∼",
    "gtrsim": "≳",
    "lesssim": "≲",
    "ll": "≪",
    "gg": "≫",
    "infty": "∞",
    "to": "→",
    "rightarrow": "→",
    "Rightarrow": "⇒",
    "leftarrow": "←",
    "mapsto": "↦",
    "in": "∈",
    "notin": "∉",
    "subset": "⊂",
    "subseteq": "⊆",
    "cup": "∪",
    "cap": "∩",
    "forall": "∀",
    "exists": "∃",
    "partial": "∂",
    "nabla": "∇",
    "sum": "∑",
    "prod": "∏",
    "int": "∫",
    "propto": "∝",
    "ell": "ℓ",
    "circ": "∘",
    "star": "⋆",
    "ast": "∗",
    "dagger": "†",
    "top": "⊤",
    "perp": "⊥",
    "mid": "|",
    "vert": "|",
    "|": "‖",
    "langle": "⟨",
    "rangle": "⟩",
    "lfloor": "⌊",
    "rfloor": "⌋",
    "lceil": "⌈",
    "rceil": "⌉",
    "ldots": "…",
    "cdots": "⋯",
    "dots": "…",
    "prime": "′",
    "degree": "°",
    "quad": " ",
    "qquad": "  ",
    "emptyset": "∅",
    "varnothing": "∅",
    "neg": "¬",
    "land": "∧",
    "lor": "∨",
    "oplus": "⊕",
    "otimes": "⊗",
    "%": "%",
    "&": "&",
    "#": "#",
    "_": "_",
    "{": "{",
    "}": "}",
    "$": "$",
    ",": " ",
    ";": " ",
    ":": " ",
    " ": " ",
    "!": "",
}
# commands whose argument is shown as it is (fonts and text in math)
_STYLE_CMDS = {
    "mathrm",
    "mathbf",
    "mathit",
    "mathsf",
    "mathtt",
    "mathcal",
    "mathbb",
    "mathfrak",
    "mathscr",
    "boldsymbol",
    "bm",
    "operatorname",
    "text",
    "textrm",
    "textit",
    "textbf",
    "textsf",
    "texttt",
    "mbox",
    "hat",
    "bar",
    "tilde",
    "vec",
    "overline",
    "widehat",
    "widetilde",
}
_SKIP_CMDS = {"left", "right", "big", "Big", "bigg", "Bigg", "displaystyle", "textstyle", "limits", "nolimits"}
_SUP = dict(zip("0123456789+-=()niaeoxk", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱᵃᵉᵒˣᵏ"))
_SUB = dict(zip("0123456789+-=()aeoxijklmnprstuv", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓᵢⱼₖₗₘₙₚᵣₛₜᵤᵥ"))

# Text outside math. Order matters: escaped dollars before math, math before Markdown (an `_` inside math
# is a subscript, not emphasis).
_EMPH_CMDS = "emph|textit|textsl|textbf|textsc|underline|texttt|textrm|textsf|textup|textmd|textnormal|text|url"
_TEXT_RE = re.compile(
    r"(?P<esc>\\[$%&_#{}])"
    r"|(?P<math>\$(?!\s)(?P<m1>[^$\n]{1,300}?)(?<![\s\\])\$|\\\((?P<m2>.{1,300}?)\\\)|\\\[(?P<m3>.{1,300}?)\\\])"
    r"|(?P<cmdarg>\\(?P<cmd>" + _EMPH_CMDS + r")\*?\s*\{(?P<arg>(?:[^{}]|\{[^{}]*\}){0,400})\})"
    r"|(?P<drop>\\(?:cite[tp]?|ref|eqref|label|footnote)\*?\s*\{[^{}]*\})"
    r"|(?P<sym>\\(?P<symname>[A-Za-z]+)(?![A-Za-z])\s?)"
    r"|(?P<quotes>``|'')"
    r"|(?P<dash>-{2,3})",
    re.DOTALL,
)
_STRONG_CMDS = {"textbf"}
_EM_CMDS = {"emph", "textit", "textsl"}


@dataclass(frozen=True)
class Piece:
    """A run of the raw text (``raw[start:end]``) and how it reads: ``text`` (Unicode) and ``html`` (escaped)."""

    start: int
    end: int
    text: str
    html: str
    markup: bool = False


def parse_display(raw: str) -> list[Piece]:
    """``raw`` cut into plain runs and markup pieces, in order, covering every character exactly once."""
    pieces: list[Piece] = []
    pos = 0
    for start, end, text, html_ in _markup(raw):
        if start > pos:
            pieces.append(Piece(pos, start, raw[pos:start], _esc(raw[pos:start])))
        pieces.append(Piece(start, end, text, html_, markup=True))
        pos = end
    if pos < len(raw):
        pieces.append(Piece(pos, len(raw), raw[pos:], _esc(raw[pos:])))
    return pieces


def format_display(raw: str) -> str:
    """``raw`` as readable Unicode text: ``8.68$\\pm$0.47`` → ``8.68±0.47``, ``84\\%`` → ``84%``,
    ``$O(n^2)$`` → ``O(n²)``, ``$\\alpha$`` → ``α``, ``\\emph{x}`` / ``**x**`` → ``x``. Whitespace is kept."""
    if not _maybe_markup(raw):
        return raw
    return "".join(p.text for p in parse_display(raw))


def format_display_html(raw: str, spans: Iterable[tuple[int, int]] = (), mark: str = "rag-support") -> str:
    """``raw`` as escaped HTML with math rendered, each span of the *raw* text wrapped in ``<mark class=mark>``
    (overlapping spans merged; a span that cuts into a piece of markup covers the whole piece)."""
    merged = _merge(spans, len(raw))
    out: list[str] = []
    open_ = False
    for p in parse_display(raw) if _maybe_markup(raw) else [Piece(0, len(raw), raw, _esc(raw))]:
        if p.markup:
            inside = any(s < p.end and e > p.start for s, e in merged)
            out.append(_toggle(open_, inside, mark) + p.html)
            open_ = inside
            continue
        cuts = sorted({p.start, p.end, *(x for s, e in merged for x in (s, e) if p.start < x < p.end)})
        for a, b in zip(cuts, cuts[1:]):
            inside = any(s <= a and b <= e for s, e in merged)
            out.append(_toggle(open_, inside, mark) + _esc(raw[a:b]))
            open_ = inside
    if open_:
        out.append("</mark>")
    return "".join(out)


def _toggle(was: bool, now: bool, mark: str) -> str:
    if was == now:
        return ""
    return f'<mark class="{_esc(mark)}">' if now else "</mark>"


def _merge(spans: Iterable[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    merged: list[list[int]] = []
    for start, end in sorted((max(0, int(s)), min(n, int(e))) for s, e in spans if int(e) > int(s)):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(s, e) for s, e in merged]


def _maybe_markup(raw: str) -> bool:
    return any(c in raw for c in "\\$*_`'-")


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def _markup(raw: str) -> list[tuple[int, int, str, str]]:
    """(start, end, text, html) of every piece of markup in ``raw``, in order, not overlapping."""
    found: list[tuple[int, int, str, str]] = []
    for m in _TEXT_RE.finditer(raw):
        if m.group("esc"):
            ch = m.group("esc")[1]
            found.append((m.start(), m.end(), ch, _esc(ch)))
        elif m.group("math"):
            text, html_ = render_math(m.group("m1") or m.group("m2") or m.group("m3") or "")
            found.append((m.start(), m.end(), text, f'<span class="rag-math">{html_}</span>'))
        elif m.group("cmdarg"):
            inner = format_display(m.group("arg"))
            inner_html = format_display_html(m.group("arg"))
            cmd = m.group("cmd")
            if cmd in _STRONG_CMDS:
                inner_html = f"<strong>{inner_html}</strong>"
            elif cmd in _EM_CMDS:
                inner_html = f"<em>{inner_html}</em>"
            found.append((m.start(), m.end(), inner, inner_html))
        elif m.group("drop"):
            found.append((m.start(), m.end(), "", ""))
        elif m.group("sym"):
            name = m.group("symname")
            if name in SYMBOLS:
                sym = SYMBOLS[name] + (" " if m.group("sym").endswith(" ") else "")
                found.append((m.start(), m.end(), sym, _esc(sym)))
        elif m.group("quotes"):
            q = "“" if m.group("quotes") == "``" else "”"
            found.append((m.start(), m.end(), q, q))
        elif m.group("dash"):
            d = "–" if len(m.group("dash")) == 2 else "—"
            found.append((m.start(), m.end(), d, d))
    md = _markdown(raw, [(s, e) for s, e, _, _ in found])
    if md:  # `**20$\times$ compression**`: the strong piece renders the math inside it
        found = [f for f in found if not any(s <= f[0] and f[1] <= e for s, e, _, _ in md)]
    return sorted(found + md)


def _markdown(raw: str, taken: Sequence[tuple[int, int]]) -> list[tuple[int, int, str, str]]:
    """``**x**``, ``__x__`` (strong) and ``*x*``, ``_x_`` (emphasis) outside the pieces already ``taken``."""
    found: list[tuple[int, int, str, str]] = []
    if "*" not in raw and "_" not in raw:
        return found
    busy = list(taken)
    for tag, patterns in (("strong", _MD_STRONG_RE), ("em", _MD_EM_RE)):
        for pattern in patterns:
            for m in pattern.finditer(raw):
                s, e = m.span()
                if any(a < e and s < b and not (s <= a and b <= e) for a, b in busy):
                    continue  # cuts into a piece of markup
                inner = m.group(1)
                found.append((s, e, format_display(inner), f"<{tag}>{format_display_html(inner)}</{tag}>"))
                busy.append((s, e))
    return found


# ---------------------------------------------------------------------------------------------- math
def render_math(src: str) -> tuple[str, str]:
    """Inline TeX math as (Unicode text, escaped HTML with ``<sub>``/``<sup>``): ``n^2`` → ``n²`` /
    ``n<sup>2</sup>``, ``\\frac{a}{b}`` → ``a/b``, ``\\sqrt{x}`` → ``√x``, ``\\mathrm{PA}`` → ``PA``. Commands it
    does not know are shown by name (``\\foo`` → ``foo``), never executed."""
    return _Math(src).run()


class _Math:
    def __init__(self, src: str) -> None:
        self.src, self.i = src, 0

    def run(self) -> tuple[str, str]:
        text, html_ = self.seq(stop="")
        return " ".join(text.split()) if text.strip() else text, html_.strip()

    def seq(self, stop: str) -> tuple[str, str]:
        texts: list[str] = []
        htmls: list[str] = []
        while self.i < len(self.src) and self.src[self.i] not in stop:
            t, h = self.atom()
            texts.append(t)
            htmls.append(h)
        return "".join(texts), "".join(htmls)

    def group(self) -> tuple[str, str]:
        """A ``{...}`` group or the next single atom."""
        self.skip_space()
        if self.i < len(self.src) and self.src[self.i] == "{":
            self.i += 1
            out = self.seq(stop="}")
            self.i += 1
            return out
        if self.i >= len(self.src):
            return "", ""
        return self.atom()

    def skip_space(self) -> None:
        while self.i < len(self.src) and self.src[self.i] == " ":
            self.i += 1

    def atom(self) -> tuple[str, str]:
        c = self.src[self.i]
        if c == "{":
            self.i += 1
            out = self.seq(stop="}")
            self.i += 1
            return out
        if c in "^_":
            self.i += 1
            t, h = self.group()
            table = _SUP if c == "^" else _SUB
            if t and all(ch in table for ch in t):
                uni = "".join(table[ch] for ch in t)
            else:
                uni = c + (t if len(t) == 1 else f"({t})")
            tag = "sup" if c == "^" else "sub"
            return uni, f"<{tag}>{h}</{tag}>"
        if c == "\\":
            return self.command()
        if c == "~":
            self.i += 1
            return " ", " "
        self.i += 1
        return c, _esc(c)

    def command(self) -> tuple[str, str]:
        m = re.compile(r"\\([A-Za-z]+|.)").match(self.src, self.i)
        if m is None:  # a trailing backslash
            self.i += 1
            return "", ""
        self.i = m.end()
        name = m.group(1)
        if name in _SKIP_CMDS:
            return "", ""
        if name in _STYLE_CMDS:
            return self.group()
        if name in ("frac", "dfrac", "tfrac"):
            (nt, nh), (dt, dh) = self.group(), self.group()
            nt, nh = _paren(nt, nh)
            dt, dh = _paren(dt, dh)
            return f"{nt}/{dt}", f"{nh}/{dh}"
        if name == "sqrt":
            t, h = self.group()
            t, h = _paren(t, h)
            return f"√{t}", f"√{h}"
        if name in SYMBOLS:
            s = SYMBOLS[name]
            return s, _esc(s)
        word = name
        nxt = self.src[self.i : self.i + 1]
        if word.isalpha() and nxt.isalnum():  # `\log n` → `log n`
            word += " "
        return word, _esc(word)


def _paren(text: str, html_: str) -> tuple[str, str]:
    if len(text) <= 1 or text.isalnum():
        return text, html_
    return f"({text})", f"({html_})"

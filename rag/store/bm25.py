"""BM25 over chunk texts (bm25s, Porter stems), saved beside Chroma with the chunk ids, the filterable
metadata and a manifest (paper -> hashes and chunk counts) that lets an ingest skip unchanged papers
without reading Chroma back."""

from __future__ import annotations

import json
import re
import shutil
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import Stemmer

from rag.types import MetaValue, paper_of_chunk


@dataclass
class BM25Input:
    """What a BM25 store and its manifest are built from, one chunk at a time."""

    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    meta: list[dict[str, Any]] = field(default_factory=list)  # the corpus' own keys only: what filters need
    papers: dict[str, tuple[list[str], list[int]]] = field(default_factory=dict)  # id -> (hashes, chunk counts)

    def add(self, chunk_id: str, text: str, meta: dict[str, Any]) -> None:
        self.ids.append(chunk_id)
        self.texts.append(text)
        self.meta.append({k: v for k, v in meta.items() if not k.startswith("_")})
        hashes, counts = self.papers.setdefault(str(meta.get("_paper_id")), ([], []))
        if str(meta.get("_hash")) not in hashes:
            hashes.append(str(meta.get("_hash")))
        if int(meta.get("_nchunks", -1)) not in counts:
            counts.append(int(meta.get("_nchunks", -1)))


_TOKEN = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


class BM25Store:
    """bm25s over chunk texts, saved under ``dir`` with the chunk ids and filterable metadata."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self._stemmer = Stemmer.Stemmer("english")
        self._stop = set(bm25s.stopwords.STOPWORDS_EN)
        self._stems: dict[str, str] = {}
        self.generation: str | None = None
        self.papers: dict[str, tuple[list[str], list[int]]] = {}
        self.ids: list[str] = []
        self.meta: list[dict[str, Any]] = []
        self._bm25: bm25s.BM25 | None = None
        self._vocab: set[str] = set()
        self._columns: dict[str, tuple[dict[Any, int], np.ndarray]] = {}  # metadata key -> value codes, code per chunk
        self._rows: dict[str, int] | None = None
        self._types: dict[str, set[type]] = {}  # metadata key -> types of its values (see exact_mask)

    def tokenize(self, text: str) -> list[str]:
        """Lower-cased words minus English stopwords, Porter-stemmed.

        Stems are memoised and shared: a corpus repeats its words, and 100k chunks tokenised at once
        would otherwise hold ~14M separate string objects (~0.8 GB) while BM25 is built.
        """
        words = [w for w in _TOKEN.findall(text.lower()) if w not in self._stop]
        stems = self._stems
        unseen = [w for w in dict.fromkeys(words) if w not in stems]
        if unseen:
            stems.update(zip(unseen, map(sys.intern, self._stemmer.stemWords(unseen))))
        return [stems[w] for w in words]

    def build(
        self,
        ids: list[str],
        texts: list[str],
        meta: list[dict[str, Any]],
        generation: str,
        papers: dict[str, tuple[list[str], list[int]]],
    ) -> None:
        """Index ``texts``; ``papers`` is the manifest: paper id -> (hashes, announced chunk counts) on its chunks."""
        self.ids, self.meta, self.generation, self.papers = ids, meta, generation, papers
        self._columns, self._rows, self._types = {}, None, {}
        if ids:
            bm = bm25s.BM25()
            bm.index([self.tokenize(t) or ["_empty_"] for t in texts], show_progress=False)
            self._bm25 = bm
            self._vocab = set(bm.vocab_dict)
        else:
            self._bm25, self._vocab = None, set()

    def save(self) -> None:
        tmp = self.dir.with_name(self.dir.name + f".tmp-{uuid.uuid4().hex[:8]}")
        tmp.mkdir(parents=True)
        if self._bm25 is not None:
            self._bm25.save(str(tmp / "bm25"), show_progress=False)
        (tmp / "chunks.json").write_text(
            json.dumps({"generation": self.generation, "ids": self.ids, "meta": self.meta, "papers": self.papers})
        )
        old = self.dir.with_name(self.dir.name + ".old")
        if self.dir.exists():
            shutil.rmtree(old, ignore_errors=True)
            self.dir.rename(old)
        tmp.rename(self.dir)
        shutil.rmtree(old, ignore_errors=True)

    def load(self) -> bool:
        """Load from disk; False when absent or unreadable (the caller rebuilds)."""
        try:
            data = json.loads((self.dir / "chunks.json").read_text())
            self.ids, self.meta, self.generation = data["ids"], data["meta"], data["generation"]
            self.papers = data["papers"]  # absent in stores saved before the manifest: rebuilt once
            self._columns, self._rows, self._types = {}, None, {}
            self._bm25 = bm25s.BM25.load(str(self.dir / "bm25"), show_progress=False) if self.ids else None
            self._vocab = set(self._bm25.vocab_dict) if self._bm25 is not None else set()
            return True
        except (OSError, ValueError, KeyError):
            self.ids, self.meta, self.generation, self._bm25, self.papers = [], [], None, None, {}
            return False

    def paper_states(self) -> dict[str, tuple[set[str], list[str], set[int]]]:
        """paper id -> (hashes on its chunks, its chunk ids, chunk counts its chunks announce).

        This is what an ingest compares against: with it, re-ingesting unchanged data reads no
        metadata back from Chroma.
        """
        states: dict[str, tuple[set[str], list[str], set[int]]] = {
            pid: (set(hashes), [], set(counts)) for pid, (hashes, counts) in self.papers.items()
        }
        for cid in self.ids:
            states.setdefault(paper_of_chunk(cid), (set(), [], set()))[1].append(cid)
        return states

    def mask(self, where: dict[str, MetaValue]) -> np.ndarray:
        """1.0 for every chunk whose metadata equals all of ``where``, else 0.0 (float32, one per chunk).

        Each metadata key is turned once into an integer code per chunk, so a filter costs a few
        vectorised comparisons rather than a Python loop over every chunk (100k+ at scale).
        """
        keep = np.ones(len(self.ids), dtype=bool)
        for key, value in where.items():
            if key not in self._columns:
                codes: dict[Any, int] = {}
                column = np.fromiter(
                    (codes.setdefault(m.get(key), len(codes)) for m in self.meta), dtype=np.int32, count=len(self.meta)
                )
                self._columns[key] = (codes, column)
            codes, column = self._columns[key]
            keep &= column == codes.get(value, -1)  # equal numbers hash equal: 2018 finds 2018.0, as == does
        return keep.astype(np.float32)

    def share_stems(self, other: BM25Store) -> None:
        """Reuse another store's memoised stems (a rebuild then stems only words it has not seen)."""
        self._stems = other._stems

    def exact_mask(self, where: dict[str, Any]) -> np.ndarray | None:
        """Boolean :meth:`mask` where it is sure to agree with Chroma's ``where`` (equality, same type),
        else None: a non-scalar filter, or a column whose values are not all of the filter value's type
        (:meth:`mask` lets 2018 match 2018.0 and True match 1; Chroma does not)."""
        for key, value in where.items():
            if type(value) not in (str, int, float, bool):
                return None
            if key not in self._types:
                self._types[key] = {type(m[key]) for m in self.meta if m.get(key) is not None}
            if self._types[key] - {type(value)}:
                return None
        return self.mask(where) > 0

    def rows(self) -> dict[str, int]:
        """Chunk id -> its position in :attr:`ids` (and in every :meth:`mask`)."""
        if self._rows is None:  # reset by build and load
            self._rows = {cid: i for i, cid in enumerate(self.ids)}
        return self._rows

    def search(self, query: str, n: int, where: dict[str, MetaValue] | None = None) -> list[tuple[str, float]]:
        if self._bm25 is None:
            return []
        tokens = [t for t in self.tokenize(query) if t in self._vocab]
        if not tokens:
            return []
        mask = None
        if where:
            mask = self.mask(where)
            if not mask.any():
                return []
        k = min(n, len(self.ids))
        docs, scores = self._bm25.retrieve([tokens], k=k, weight_mask=mask, show_progress=False, n_threads=1)
        return [(self.ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0]) if s > 0]

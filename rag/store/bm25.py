"""BM25 over chunk texts (Porter stems, Lucene scoring), saved beside Chroma with the chunk ids, the filterable
metadata, each chunk's vector and a manifest (paper -> hashes and chunk counts) that lets an ingest skip
unchanged papers without reading Chroma back.

The index is our own term-major postings (term -> chunk rows and term counts) rather than bm25s' matrix of
precomputed scores: scores depend on corpus-wide statistics (document frequency, mean length), so bm25s
must rebuild every score when 1 % of the chunks change (4-5 s at 115k chunks, on top of reading every text
back from Chroma). Postings keep the raw counts and score at query time with the statistics of the moment,
so an update deletes and inserts rows in a few vectorised passes and ranks exactly like a full rebuild.

The vectors (float32, the same rows Chroma holds) serve narrow filters: an exact search over the few
thousand rows a filter keeps takes about a millisecond, where Chroma's filtered HNSW query takes ~100 ms.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rag.corpus.tokens import BM25Tokenizer
from rag.types import MetaValue, paper_of_chunk

#: Layout of the files under the store's folder; another number (an older build's store) is rebuilt from Chroma.
FORMAT = 2
_K1, _B = 1.5, 0.75  # bm25s' defaults (Lucene variant), which this store replaced
_FILES = ("t_ptr", "t_rows", "t_tf", "doc_len", "vectors")


@dataclass(kw_only=True)
class BM25Input:
    """What a BM25 store and its manifest are built from, one chunk at a time."""

    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    meta: list[dict[str, Any]] = field(default_factory=list)  # the corpus' own keys only: what filters need
    papers: dict[str, tuple[list[str], list[int]]] = field(default_factory=dict)  # id -> (hashes, chunk counts)
    vectors: list[np.ndarray] = field(default_factory=list)  # one float32 row per chunk, or none at all

    def add(self, chunk_id: str, text: str, meta: dict[str, Any], vector: np.ndarray | None = None) -> None:
        self.ids.append(chunk_id)
        self.texts.append(text)
        self.meta.append({k: v for k, v in meta.items() if not k.startswith("_")})
        if vector is not None:
            self.vectors.append(vector)
        hashes, counts = self.papers.setdefault(str(meta.get("_paper_id")), ([], []))
        if str(meta.get("_hash")) not in hashes:
            hashes.append(str(meta.get("_hash")))
        if int(meta.get("_nchunks", -1)) not in counts:
            counts.append(int(meta.get("_nchunks", -1)))

    def vector_matrix(self) -> np.ndarray | None:
        """The vectors as one (chunks, dim) float32 array; None unless every chunk has one."""
        if not self.vectors or len(self.vectors) != len(self.ids):
            return None
        return np.asarray(np.stack(self.vectors), dtype=np.float32)


class BM25Store:
    """BM25 postings over chunk texts, saved under ``dir`` with the chunk ids, filterable metadata and vectors."""

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self._tokenizer = BM25Tokenizer()
        self.generation: str | None = None
        self.papers: dict[str, tuple[list[str], list[int]]] = {}
        self.ids: list[str] = []
        self.meta: list[dict[str, Any]] = []
        self.vocab: dict[str, int] = {}  # stem -> term id
        self.t_ptr = np.zeros(1, dtype=np.int64)  # term t's postings are rows t_rows[t_ptr[t]:t_ptr[t+1]]
        self.t_rows = np.zeros(0, dtype=np.int32)  # chunk rows, ascending within a term
        self.t_tf = np.zeros(0, dtype=np.float32)  # the term's count in that chunk
        self.doc_len = np.zeros(0, dtype=np.float32)  # tokens per chunk
        self.vectors = np.zeros((0, 0), dtype=np.float32)  # (chunks, dim), or (chunks or 0, 0) when not kept
        self._columns: dict[str, tuple[dict[Any, int], np.ndarray]] = {}  # metadata key -> value codes, per chunk
        self._rows: dict[str, int] | None = None
        self._types: dict[str, set[type]] = {}  # metadata key -> types of its values (see exact_mask)

    # ------------------------------------------------------------ text
    def tokenize(self, text: str) -> list[str]:
        """Lower-cased words minus English stopwords, Porter-stemmed (:class:`rag.corpus.tokens.BM25Tokenizer`:
        stems are memoised, and shared by :meth:`share_stems`)."""
        return self._tokenizer(text)

    def share_stems(self, other: BM25Store) -> None:
        """Reuse another store's memoised stems (a rebuild then stems only words it has not seen)."""
        self._tokenizer.stems = other._tokenizer.stems

    def _postings(self, texts: Sequence[str], first_row: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(terms, rows, counts) of ``texts`` sorted by term then row, and each text's length; grows the vocabulary."""
        vocab = self.vocab
        # One small int32 array per text, not one Python int per token: 115k chunks hold ~15M tokens, which
        # as a list of ints took ~0.5 GB at the ingest's peak.
        per_text: list[np.ndarray] = []
        lens = np.zeros(len(texts), dtype=np.int64)
        for i, text in enumerate(texts):
            tokens = self.tokenize(text)
            lens[i] = len(tokens)
            per_text.append(np.fromiter((vocab.setdefault(t, len(vocab)) for t in tokens), np.int32, len(tokens)))
        terms = np.concatenate(per_text).astype(np.int64) if per_text else np.zeros(0, dtype=np.int64)
        del per_text
        rows = np.repeat(np.arange(first_row, first_row + len(texts), dtype=np.int64), lens)
        span = first_row + len(texts) + 1
        keys = terms * span + rows
        del terms, rows
        keys, counts = np.unique(keys, return_counts=True)  # sorted by (term, row)
        return keys // span, (keys % span).astype(np.int32), counts.astype(np.float32), lens.astype(np.float32)

    # ------------------------------------------------------------ build and update
    def build(
        self,
        ids: list[str],
        texts: list[str],
        meta: list[dict[str, Any]],
        generation: str,
        papers: dict[str, tuple[list[str], list[int]]],
        vectors: np.ndarray | None = None,
    ) -> None:
        """Index ``texts``; ``papers`` is the manifest: paper id -> (hashes, announced chunk counts) on its chunks."""
        self.ids, self.meta, self.generation, self.papers = list(ids), list(meta), generation, papers
        self.vocab = {}
        terms, rows, tf, lens = self._postings(texts, 0)
        self.t_rows, self.t_tf, self.doc_len = rows, tf, lens
        self.t_ptr = np.concatenate([[0], np.cumsum(np.bincount(terms, minlength=len(self.vocab)))]).astype(np.int64)
        self.vectors = _vectors_or_empty(vectors, len(ids))
        self._reset_caches()

    def update(
        self,
        remove: Iterable[str],
        add: BM25Input,
        generation: str,
        forget_papers: Iterable[str] = (),
    ) -> None:
        """Delete the chunks ``remove`` and append ``add``, in place: the result ranks exactly as :meth:`build`
        of the same chunks would. ``forget_papers`` leave the manifest (removed or rewritten papers)."""
        gone = set(remove)
        if gone:
            alive = np.fromiter((cid not in gone for cid in self.ids), dtype=bool, count=len(self.ids))
            self._delete_rows(alive)
        n_old = len(self.ids)
        terms, rows, tf, lens = self._postings(add.texts, n_old)
        if len(terms):
            n_terms = len(self.vocab)
            ptr = np.concatenate([self.t_ptr, np.full(n_terms + 1 - len(self.t_ptr), self.t_ptr[-1])])
            at = ptr[terms + 1]  # the end of each term's postings: new rows are the highest, order stays ascending
            self.t_rows = np.insert(np.asarray(self.t_rows), at, rows)
            self.t_tf = np.insert(np.asarray(self.t_tf), at, tf)
            self.t_ptr = ptr + np.concatenate([[0], np.cumsum(np.bincount(terms, minlength=n_terms))])
        self.doc_len = np.concatenate([np.asarray(self.doc_len), lens])
        new_vectors = add.vector_matrix()
        if add.ids:
            old = np.asarray(self.vectors)
            fits = new_vectors is not None and (
                n_old == 0 or (old.shape[0] == n_old and old.shape[1:] == new_vectors.shape[1:])
            )
            if fits and new_vectors is not None:
                self.vectors = np.concatenate([old, new_vectors]) if n_old else new_vectors
            else:  # a chunk without a vector: exact filtered search stays off until the next full build
                self.vectors = np.zeros((0, 0), dtype=np.float32)
        self.ids.extend(add.ids)
        self.meta.extend(add.meta)
        for pid in forget_papers:
            self.papers.pop(pid, None)
        for pid, (hashes, counts) in add.papers.items():
            self.papers[pid] = (hashes, counts)
        self.generation = generation
        self._reset_caches()

    def load_from(self, other: BM25Store) -> None:
        """Take ``other``'s contents (copies of its lists, its arrays shared: :meth:`update` never writes into an
        array in place), so ``other`` keeps serving searches unchanged while this one is updated."""
        self.ids, self.meta, self.papers = list(other.ids), list(other.meta), dict(other.papers)
        self.generation, self.vocab = other.generation, dict(other.vocab)
        self.t_ptr, self.t_rows, self.t_tf = other.t_ptr, other.t_rows, other.t_tf
        self.doc_len, self.vectors = other.doc_len, other.vectors
        self._reset_caches()

    def _delete_rows(self, alive: np.ndarray) -> None:
        n_terms = len(self.t_ptr) - 1
        t_rows = np.asarray(self.t_rows)
        term_of = np.repeat(np.arange(n_terms, dtype=np.int64), np.diff(self.t_ptr))
        keep = alive[t_rows]
        new_row = (np.cumsum(alive) - 1).astype(np.int32)
        self.t_rows = new_row[t_rows[keep]]
        self.t_tf = np.asarray(self.t_tf)[keep]
        self.t_ptr = np.concatenate([[0], np.cumsum(np.bincount(term_of[keep], minlength=n_terms))]).astype(np.int64)
        self.doc_len = np.asarray(self.doc_len)[alive]
        if len(self.vectors) == len(alive):
            self.vectors = np.asarray(self.vectors)[alive]
        self.ids = [cid for cid, a in zip(self.ids, alive) if a]
        self.meta = [m for m, a in zip(self.meta, alive) if a]

    def _reset_caches(self) -> None:
        self._columns, self._rows, self._types = {}, None, {}

    # ------------------------------------------------------------ disk
    def save(self) -> None:
        tmp = self.dir.with_name(self.dir.name + f".tmp-{uuid.uuid4().hex[:8]}")
        tmp.mkdir(parents=True)
        arrays = {"t_ptr": self.t_ptr, "t_rows": self.t_rows, "t_tf": self.t_tf, "doc_len": self.doc_len}
        arrays["vectors"] = self.vectors
        for name, arr in arrays.items():
            np.save(tmp / f"{name}.npy", np.asarray(arr), allow_pickle=False)
        (tmp / "chunks.json").write_text(
            json.dumps(
                {
                    "format": FORMAT,
                    "generation": self.generation,
                    "ids": self.ids,
                    "meta": self.meta,
                    "papers": self.papers,
                    "vocab": list(self.vocab),
                }
            )
        )
        old = self.dir.with_name(self.dir.name + ".old")
        if self.dir.exists():
            shutil.rmtree(old, ignore_errors=True)
            self.dir.rename(old)
        tmp.rename(self.dir)
        shutil.rmtree(old, ignore_errors=True)

    def load(self) -> bool:
        """Load from disk (the arrays memory-mapped); False when absent, unreadable or of another format."""
        try:
            data = json.loads((self.dir / "chunks.json").read_text())
            if data.get("format") != FORMAT:  # an older build's store: rebuilt from Chroma, which has everything
                raise ValueError(f"BM25 store format {data.get('format')}")
            arrays = {name: np.load(self.dir / f"{name}.npy", mmap_mode="r", allow_pickle=False) for name in _FILES}
            ids, vocab = data["ids"], data["vocab"]
            if len(arrays["doc_len"]) != len(ids) or len(arrays["t_ptr"]) != len(vocab) + 1:
                raise ValueError("BM25 arrays and chunk list disagree")
            if len(arrays["t_rows"]) != int(arrays["t_ptr"][-1]) or len(arrays["t_tf"]) != len(arrays["t_rows"]):
                raise ValueError("BM25 postings are truncated")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            self.ids, self.meta, self.generation, self.papers = [], [], None, {}
            return False
        self.ids, self.meta, self.generation, self.papers = ids, data["meta"], data["generation"], data["papers"]
        self.vocab = {t: i for i, t in enumerate(vocab)}
        self.t_ptr, self.t_rows, self.t_tf = arrays["t_ptr"], arrays["t_rows"], arrays["t_tf"]
        self.doc_len, self.vectors = arrays["doc_len"], arrays["vectors"]
        self._reset_caches()
        return True

    # ------------------------------------------------------------ reading
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
        if self._rows is None:  # reset by build, update and load
            self._rows = {cid: i for i, cid in enumerate(self.ids)}
        return self._rows

    @property
    def has_vectors(self) -> bool:
        return len(self.vectors) == len(self.ids) and len(self.ids) > 0 and self.vectors.ndim == 2

    def nearest_in(self, vector: Sequence[float], rows: np.ndarray, n: int) -> list[tuple[str, float]]:
        """Exact cosine search over ``rows`` only: the ``n`` nearest (chunk id, similarity), best first."""
        if not len(rows):
            return []
        q = np.asarray(vector, dtype=np.float32)
        q = q / (float(np.sqrt(q @ q)) or 1.0)
        block = np.asarray(self.vectors[rows], dtype=np.float32)
        # einsum, not BLAS: BLAS wakes a second thread per call, which on a busy 2-core machine waited
        # ~6 ms for a core, 100x the arithmetic
        norms = np.sqrt(np.einsum("ij,ij->i", block, block))
        norms[norms == 0] = 1.0
        sims = np.einsum("ij,j->i", block, q) / norms
        k = min(n, len(rows))
        top = np.argpartition(-sims, k - 1)[:k] if k < len(rows) else np.arange(len(rows))
        top = top[np.lexsort((rows[top], -sims[top]))]
        return [(self.ids[int(rows[i])], float(sims[i])) for i in top]

    def containing(self, terms: Sequence[str]) -> np.ndarray:
        """Boolean per chunk: its text has a word that is one of ``terms`` (names such as "KITTI" or "GPT-4"),
        also inside a longer word that ends with it ("SemanticKITTI", from 4 letters) or that continues it
        with a digit or a hyphen ("KITTI-360", "VOC2012"); not in any other word ("VOC" is not in "vocabulary")."""
        keep = np.zeros(len(self.ids), dtype=bool)
        wanted = {t for term in terms for t in self.tokenize(term)}
        if not wanted:
            return keep
        for stem, tid in self.vocab.items():
            if not any(
                stem == t or (stem.startswith(t) and not stem[len(t)].isalpha()) or (len(t) >= 4 and stem.endswith(t))
                for t in wanted
            ):
                continue
            a, b = int(self.t_ptr[tid]), int(self.t_ptr[tid + 1])
            keep[np.asarray(self.t_rows[a:b])] = True
        return keep

    def search(
        self, query: str, n: int, where: dict[str, MetaValue] | None = None, within: np.ndarray | None = None
    ) -> list[tuple[str, float]]:
        """The ``n`` best chunks by BM25 (Lucene variant: k1 1.5, b 0.75), best first; only positive scores.
        ``within``: a boolean per chunk, the chunks to return (see :meth:`containing`), all of them up to ``n``
        and ordered by the query's score, even where the query's words are not in them."""
        n_docs = len(self.ids)
        if not n_docs:
            return []
        terms = [self.vocab[t] for t in self.tokenize(query) if t in self.vocab]  # repeats count, as in bm25s
        if not terms and within is None:
            return []
        mask = None
        if where:
            mask = self.mask(where)
            if not mask.any():
                return []
        ptr = self.t_ptr
        doc_len = np.asarray(self.doc_len)
        norm = _K1 * ((1 - _B) + _B * doc_len / max(float(doc_len.mean()), 1e-9))
        scores = np.zeros(n_docs, dtype=np.float64)
        for t in terms:
            a, b = int(ptr[t]), int(ptr[t + 1])
            if a == b:
                continue
            rows = np.asarray(self.t_rows[a:b])
            tf = np.asarray(self.t_tf[a:b], dtype=np.float64)
            df = b - a
            idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            scores[rows] += idf * tf / (tf + norm[rows])  # rows are unique within a term
        if mask is not None:
            scores *= mask
        if within is not None:  # every chunk within counts, the query's words only order them
            scores = (scores + 1e-9) * within
        k = min(n, n_docs)
        top = np.argpartition(-scores, k - 1)[:k] if k < n_docs else np.arange(n_docs)
        top = top[np.lexsort((top, -scores[top]))]
        return [(self.ids[int(i)], float(scores[i])) for i in top if scores[i] > 0]


def _vectors_or_empty(vectors: np.ndarray | None, n: int) -> np.ndarray:
    if vectors is None or len(vectors) != n or n == 0:
        return np.zeros((0, 0), dtype=np.float32)
    return np.asarray(vectors, dtype=np.float32)

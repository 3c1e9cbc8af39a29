"""The Chroma connection: one client per index (embedded ``PersistentClient`` or a ``chroma run`` server),
one-line errors that say what to do, filters in Chroma's syntax, and the one loop that pages through a
whole collection. ``chromadb`` is imported when the first client opens, not with this module."""

from __future__ import annotations

import importlib
import shutil
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from rag.errors import BackendError, IndexCorruptError, RagError
from rag.types import MetaValue

PAGE = 5000  # rows per page when reading a whole collection: 100k chunks never load at once


@dataclass
class RawHit:
    """A chunk as the store returns it: id, score (cosine similarity, or 0 when read by id), unpacked metadata."""

    chunk_id: str
    score: float
    metadata: dict[str, Any]


def import_chromadb() -> Any:
    """``import chromadb``, here rather than at module level (overlapped with loading the embedder).

    While chromadb's modules load, the ``overrides`` package re-checks the signature of each of its ~160
    ``@override`` methods against their base classes: a check of chromadb's own code, ~0.2 s of a
    1.5 s ``rag search``. It is skipped during this import (the marker it sets is kept, which is what
    ``EnforceOverrides`` reads); every later use of ``overrides`` is untouched.
    """
    if "chromadb" in sys.modules:
        return sys.modules["chromadb"]
    checks: Any = importlib.import_module("overrides.overrides")  # the module, not the function the package exports
    real = checks._overrides

    def mark_only(method: Any, check_signature: bool, check_at_runtime: bool) -> Any:
        method.__override__ = True
        return method

    checks._overrides = mark_only
    try:
        return importlib.import_module("chromadb")
    finally:
        checks._overrides = real


class ChromaConnection:
    """Opens the client lazily and turns chromadb's many error types into :class:`RagError` lines."""

    def __init__(self, chroma_url: str | None, data_dir: Path) -> None:
        self.url = chroma_url
        self.data_dir = data_dir
        self._client: Any = None

    @property
    def local_path(self) -> Path:
        return self.data_dir / "chroma"

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
        chromadb = import_chromadb()
        url = self.url
        try:
            if url:
                u = urlparse(url)
                client = chromadb.HttpClient(
                    host=u.hostname or "127.0.0.1",
                    port=u.port or (443 if u.scheme == "https" else 8000),
                    ssl=u.scheme == "https",
                )
                client.heartbeat()
                return client
            self.data_dir.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(path=str(self.local_path))
        except Exception as e:  # chromadb raises many types (ValueError, ConnectionError, its own errors)
            where = f"Chroma server at {url}" if url else f"Chroma data in {self.local_path}"
            hint = "is `chroma run` started there?" if url else "delete that folder and run `rag ingest --rebuild PATH`"
            cls = BackendError if url else IndexCorruptError
            raise cls(f"Cannot open the {where}: {e} ({hint})") from e

    def error(self, what: str, e: Exception) -> RagError:
        """A one-line error for a Chroma failure during ``what`` that says what to do."""
        if self.url:
            return BackendError(f"The Chroma server at {self.url} failed while {what}: {e} (is `chroma run` up there?)")
        return IndexCorruptError(
            f"The index in {self.local_path} failed while {what}: {e}. If it is damaged, rebuild it: "
            "`rag ingest --rebuild PATH...` (deletes and re-creates it; cached embeddings make that fast)."
        )

    @contextmanager
    def guard(self, what: str) -> Iterator[None]:
        """Run Chroma calls; any failure becomes :meth:`error`."""
        try:
            yield
        except RagError:
            raise
        except Exception as e:  # chromadb raises many types (its own errors, ValueError, httpx, sqlite3, OSError)
            raise self.error(what, e) from e

    def pages(self, collection: Any, include: Sequence[str], what: str) -> Iterator[dict[str, Any]]:
        """Every row of ``collection`` as ``col.get`` pages of at most :data:`PAGE` rows."""
        offset = 0
        while True:
            with self.guard(what):
                got = collection.get(include=list(include), limit=PAGE, offset=offset)
            if not got["ids"]:
                return
            yield got
            offset += len(got["ids"])

    def max_batch(self, default: int) -> int:
        """Most records Chroma takes in one write (a server may be configured lower than ``default``)."""
        try:
            return max(1, int(self.client.get_max_batch_size()))
        except Exception:  # an older server without the endpoint: ours is well under its default
            return default

    def reopen(self) -> None:
        """A new local client: chromadb's embedded vector index is loaded once per client and does not see
        another process's writes (its query kept returning a chunk another process had deleted)."""
        if self.url or self._client is None:
            return
        from chromadb.api.shared_system_client import SharedSystemClient  # optional heavy dependency: chromadb (~1 s)

        # The old system is left running, not stopped: a search in another thread may still be using it.
        SharedSystemClient._identifier_to_system.pop(str(self.local_path), None)
        self._client = self._make_client()

    def delete_local(self) -> None:
        """Remove the local Chroma folder and forget chromadb's in-process client for it."""
        from chromadb.api.shared_system_client import SharedSystemClient  # optional heavy dependency: chromadb (~1 s)

        shutil.rmtree(self.local_path, ignore_errors=True)
        SharedSystemClient._identifier_to_system.pop(
            str(self.local_path), None
        )  # else the next client reuses the dead one
        self._client = None


def is_not_found(e: Exception) -> bool:
    """True for chromadb's "collection does not exist" (its type differs across versions and client kinds)."""
    return "does not exist" in str(e) or "not found" in str(e).lower()


def to_chroma_where(where: dict[str, MetaValue] | None) -> dict[str, Any] | None:
    if not where:
        return None
    clauses = [{k: v} for k, v in where.items()]
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}

"""Export an index to one portable zip (vectors, texts, metadata, the settings it was built with) and import it.

Nothing is embedded again on import: another machine, or a Chroma server and a local index, can share
an index built once. The embedding model and chunking must match (checked like an opened index).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from rag.errors import EmptyIndexError, IndexMismatchError, IngestError
from rag.store.collection import ChunkCollection
from rag.store.metadata import document_of, pack_metadata, unpack_metadata

EXPORT_FORMAT = "rag-abstracts-index"
IMPORT_BATCH = 1024  # chunks per Chroma upsert on import


def export_index(index: ChunkCollection, path: Path) -> dict[str, Any]:
    """Write the whole collection (vectors, texts, metadata, settings it was built with) to one zip file.

    The file is portable: import it on another machine, or from a Chroma server into a local
    index and back, and nothing is embedded again.
    """
    col = index.get_collection(create=False)
    if col is None or index.count_chunks() == 0:
        raise EmptyIndexError(f"Nothing to export: collection {index.settings.collection!r} is empty.")
    meta = {k: v for k, v in (col.metadata or {}).items() if k != "generation"}
    ids: list[str] = []
    vectors: list[np.ndarray] = []
    lines: list[str] = []
    for got in index.chroma.pages(col, ["embeddings", "metadatas"], "reading the index for export"):
        ids.extend(got["ids"])
        vectors.append(np.asarray(got["embeddings"], dtype="<f4"))
        lines.extend(
            json.dumps({"id": cid, "document": document_of(m), "metadata": m}, ensure_ascii=False)
            for cid, m in zip(got["ids"], map(unpack_metadata, got["metadatas"]))
        )
    matrix = np.concatenate(vectors)
    manifest = {"format": EXPORT_FORMAT, "version": 1, "collection": meta, "chunks": len(ids)}
    path = Path(path)
    tmp = path.with_name(path.name + ".partial")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(manifest, indent=1))
        z.writestr("records.jsonl", "\n".join(lines) + "\n")
        buf = io.BytesIO()
        np.save(buf, matrix, allow_pickle=False)
        z.writestr("vectors.npy", buf.getvalue(), compress_type=zipfile.ZIP_STORED)
    tmp.replace(path)
    return {
        "chunks": len(ids),
        "papers": len({json.loads(x)["metadata"]["_paper_id"] for x in lines}),
        "bytes": path.stat().st_size,
    }


def import_index(
    index: ChunkCollection, path: Path, *, replace: bool = False, lock_timeout: float = 600.0
) -> dict[str, Any]:
    """Load a file made by :func:`export_index` into this collection (which must be empty unless ``replace``)."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as z:
            manifest = json.loads(z.read("manifest.json"))
            if manifest.get("format") != EXPORT_FORMAT:
                raise IngestError(f"{path} is not an index export (no {EXPORT_FORMAT!r} manifest).")
            records = [json.loads(line) for line in z.read("records.jsonl").decode("utf-8").splitlines() if line]
            matrix = np.load(io.BytesIO(z.read("vectors.npy")), allow_pickle=False)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as e:
        raise IngestError(f"Cannot read the index export {path}: {e}") from e
    if matrix.ndim != 2 or not len(records) == matrix.shape[0] == manifest.get("chunks"):
        raise IngestError(f"{path} is damaged: {len(records)} records, vectors of shape {matrix.shape}.")
    diffs = index.setting_diffs(manifest.get("collection", {}), "export")
    if diffs:
        raise IndexMismatchError(
            f"{path} was built with other settings (" + diffs + "). Set the same embedding model and "
            "chunking (e.g. RAG_EMBEDDING__MODEL) to use it."
        )
    with index.writer_lock(lock_timeout):
        if index.count_chunks() and not replace:
            raise IngestError(
                f"Collection {index.settings.collection!r} already holds {index.count_chunks()} chunks; "
                "import with --replace to overwrite it, or choose another RAG_COLLECTION."
            )
        index.rebuild()
        col = index.collection  # created fresh, with a new generation
        for i in range(0, len(records), IMPORT_BATCH):
            part = records[i : i + IMPORT_BATCH]
            with index.chroma.guard("writing imported chunks"):
                col.upsert(
                    ids=[r["id"] for r in part],
                    embeddings=matrix[i : i + len(part)],
                    metadatas=[pack_metadata(r["metadata"]) for r in part],
                )
        cache = getattr(index.embeddings, "cache", None)
        if cache is not None:  # a later --rebuild or re-chunk of the same texts embeds nothing
            cache.put_many(index.model_name, [r["document"] for r in records], matrix)
        index.forget_collection()
        index.rebuild_bm25(index.generation())
    return {"chunks": len(records), "papers": len({r["metadata"]["_paper_id"] for r in records})}

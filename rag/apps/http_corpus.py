"""Routes over the corpus: list the papers, search them, ingest uploaded files (with the upload limit)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, UploadFile

from rag import SUPPORTED_SUFFIXES, IngestError
from rag.apps.http_context import ApiContext
from rag.apps.http_errors import ERRORS, ApiError, ErrorResponse
from rag.apps.http_schemas import (
    IngestResponse,
    PaperOut,
    PapersResponse,
    SearchHitOut,
    SearchRequest,
    SearchResponse,
)


def too_large(size: int, limit: int) -> ApiError:
    """413 for an upload of ``size`` bytes over ``limit`` (RAG_SERVER__MAX_UPLOAD_BYTES)."""
    return ApiError(
        413,
        f"Upload of {size} bytes exceeds the limit of {limit} bytes (RAG_SERVER__MAX_UPLOAD_BYTES).",
        param="files",
        code="upload_too_large",
    )


class UploadLimit:
    """Rejects an oversized ``POST /v1/ingest`` from its Content-Length, before the body is read and spooled."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/v1/ingest":
            length = dict(scope["headers"]).get(b"content-length", b"")
            if length.isdigit() and int(length) > self.limit:
                await too_large(int(length), self.limit).response()(scope, receive, send)
                return
        await self.app(scope, receive, send)


def corpus_router(ctx: ApiContext) -> APIRouter:
    """``GET /v1/papers``, ``POST /v1/search`` and ``POST /v1/ingest``."""
    router = APIRouter()
    auth = ctx.auth

    @router.get("/v1/papers", response_model=PapersResponse, dependencies=auth, responses=ERRORS, tags=["corpus"])
    def papers() -> PapersResponse:
        """Every indexed paper."""
        return PapersResponse(
            data=[
                PaperOut(
                    paper_id=p.paper_id,
                    title=p.title,
                    abstract=p.abstract,
                    authors=list(p.authors),
                    venue=p.venue,
                    year=p.year,
                    url=p.url,
                    metadata=dict(p.metadata),
                )
                for p in ctx.assistant.papers()
            ]
        )

    @router.post(
        "/v1/search",
        response_model=SearchResponse,
        dependencies=auth,
        responses=ERRORS | {409: {"model": ErrorResponse, "description": "The index is empty."}},
        tags=["corpus"],
    )
    def search(body: SearchRequest) -> SearchResponse:
        """The papers most relevant to ``query``, best first (as ``rag search --json``)."""
        hits = ctx.assistant.search(body.query, k=body.k, where=ctx.filter_keys.check(body.filters), mode=body.mode)
        return SearchResponse(data=[SearchHitOut(**h.to_json()) for h in hits])

    @router.post(
        "/v1/ingest",
        response_model=IngestResponse,
        dependencies=auth,
        responses=ERRORS
        | {413: {"model": ErrorResponse, "description": "Upload larger than RAG_SERVER__MAX_UPLOAD_BYTES."}},
        tags=["corpus"],
    )
    def ingest(
        files: Annotated[
            list[UploadFile], File(description="Corpus files: .txt, .jsonl, .json, .csv (optionally .gz).")
        ],
        prune: Annotated[bool, Form(description="Remove papers not in these files.")] = False,
    ) -> IngestResponse:
        """Index uploaded corpus files (all validated before anything is written), as ``rag ingest``."""
        total = sum(f.size or 0 for f in files)
        if total > ctx.max_upload_bytes:
            raise too_large(total, ctx.max_upload_bytes)
        with tempfile.TemporaryDirectory(prefix="rag-upload-") as tmp:
            paths, names = [], []
            for i, f in enumerate(files):
                name = Path(f.filename or "").name
                if not name or name in (".", ".."):
                    raise ApiError(
                        400,
                        f"Uploaded file #{i + 1} has no file name; the extension picks the format.",
                        param="files",
                        code="malformed_upload",
                    )
                if not name.lower().removesuffix(".gz").endswith(SUPPORTED_SUFFIXES):
                    raise ApiError(
                        400,
                        f"{name}: unsupported format; use {', '.join(SUPPORTED_SUFFIXES)} (optionally .gz).",
                        param="files",
                        code="malformed_upload",
                    )
                path = Path(tmp) / f"{i}" / name
                path.parent.mkdir()
                path.write_bytes(f.file.read(ctx.max_upload_bytes + 1))
                paths.append(path)
                names.append(name)
            try:
                report = ctx.assistant.ingest(paths, prune=prune)
            except IngestError as e:  # name the upload, not our temporary directory
                raise ApiError(
                    400, re.sub(re.escape(tmp) + r"/\d+/", "", str(e)), param="files", code="malformed_upload"
                ) from e
            finally:
                ctx.filter_keys.invalidate()
        return IngestResponse(files=names, **report.to_json())

    return router

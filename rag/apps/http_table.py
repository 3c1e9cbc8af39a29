"""``POST /v1/table``: a paper x attribute table as JSON, CSV or Markdown (as ``rag table``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from rag import RagError, Table, readable_table
from rag.apps.http_context import ApiContext
from rag.apps.http_errors import BUSY, ERRORS, ErrorResponse, error_for
from rag.apps.http_schemas import TableRequest, TableResponse


def table_router(ctx: ApiContext) -> APIRouter:
    """``POST /v1/table``."""
    router = APIRouter()
    auth = ctx.auth

    text_formats: dict[int | str, dict[str, Any]] = {
        200: {
            "content": {
                "text/csv": {"schema": {"type": "string"}},
                "text/markdown": {"schema": {"type": "string"}},
            },
            "description": "The table as JSON, or with `format` csv / md as text/csv or text/markdown.",
        },
        409: {"model": ErrorResponse, "description": "The index (or the filtered part of it) holds no papers."},
    }

    @router.post(
        "/v1/table",
        response_model=TableResponse,
        dependencies=auth,
        responses=ERRORS | text_formats | BUSY,
        tags=["answers"],
    )
    def table(body: TableRequest) -> Any:
        """A paper x attribute table: one row per paper, one cell per attribute, each value with the sentence of
        the abstract that states it; a value no sentence states is null ("not stated"), never guessed.
        As ``rag table``: ``format`` csv or md returns the CSV or the Markdown table with its references."""
        filters = ctx.filter_keys.check(body.filters)
        try:
            result = ctx.assistant.table(body.attributes, query=body.query or None, where=filters, k=body.k)
        except RagError as e:
            raise error_for(e, param="query") from e
        return _table_response(result, body.format)

    return router


def _table_response(table: Table, fmt: str) -> Any:
    if fmt == "json":
        return table.to_json()
    shown = readable_table(table)
    media, text = ("text/csv", shown.to_csv()) if fmt == "csv" else ("text/markdown", shown.to_markdown())
    return PlainTextResponse(
        text,
        media_type=f"{media}; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="table.{fmt}"'},
    )

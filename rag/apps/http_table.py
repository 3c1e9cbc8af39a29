"""``POST /v1/table``: a paper x attribute table as JSON, CSV or Markdown (as ``rag table``), whole or streamed.

With ``stream: true`` the answer is server-sent events, each ``data: {"type": ...}``: ``status`` at once
("Finding papers…") and then before each paper judged and each row filled (``stage``, ``text``, ``done`` of
``total``, ``rows``), one ``row`` per row as it is filled, then ``table`` (the JSON response) or ``error``
(OpenAI-shaped, in-band: the headers are sent), then ``data: [DONE]``. A wait for the LLM is sent as SSE
comments, as on ``/v1/check``; a client that goes away stops the table and frees the LLM at once
(:mod:`rag.apps.http_sse`).
"""

from __future__ import annotations

import itertools
from typing import Any

from fastapi import APIRouter
from fastapi.responses import PlainTextResponse

from rag import (
    ErrorEvent,
    RagError,
    RowEvent,
    Stop,
    Table,
    TableEvent,
    TableStatusEvent,
    TableStreamEvent,
    readable_table,
)
from rag.apps.http_context import ApiContext
from rag.apps.http_errors import BUSY, ERRORS, ErrorResponse, error_for
from rag.apps.http_schemas import TableRequest, TableResponse
from rag.apps.http_sse import streaming, typed_events


def table_router(ctx: ApiContext) -> APIRouter:
    """``POST /v1/table``."""
    router = APIRouter()
    auth = ctx.auth

    text_formats: dict[int | str, dict[str, Any]] = {
        200: {
            "content": {
                "text/csv": {"schema": {"type": "string"}},
                "text/markdown": {"schema": {"type": "string"}},
                "text/event-stream": {},
            },
            "description": "The table as JSON, or with `format` csv / md as text/csv or text/markdown, or with "
            "`stream: true` server-sent events (`status`, one `row` per row, then `table` or `error`; then `[DONE]`).",
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
        the abstract that states it; a value no sentence states is null ("not stated"), never guessed. With a
        ``query`` the rows are the papers that match it (retrieved, each confirmed by the list judge), at most
        ``k``; rows that state nothing come last. As ``rag table``: ``format`` csv or md returns the CSV or the
        Markdown table with its references.

        With ``stream: true``: SSE events ``{"type": "status", "stage", "text", "done", "total", "rows"}``,
        ``{"type": "row", "row"}`` per row as it is filled, then ``{"type": "table", "table"}`` (the JSON
        response) or ``{"type": "error", "error"}``; then ``[DONE]``."""
        filters = ctx.filter_keys.check(body.filters)
        stop = Stop()
        try:
            events = ctx.assistant.table_stream(
                body.attributes, query=body.query or None, where=filters, k=body.k, stop=stop if body.stream else None
            )
            # the attributes and the query are checked here (before the first event), so bad input is still a 4xx
            first = next(events)
        except RagError as e:
            raise error_for(e, param="query") from e
        if isinstance(first, ErrorEvent):
            raise error_for(first.error, param="query") from first.error
        if not body.stream:
            for event in itertools.chain([first], events):
                if isinstance(event, ErrorEvent):
                    raise error_for(event.error, param="query") from event.error
                if isinstance(event, TableEvent):
                    return _table_response(event.table, body.format)
            raise AssertionError("a table stream ends with a TableEvent or an ErrorEvent")  # pragma: no cover
        return streaming(typed_events(itertools.chain([first], events), _event_json, "query"), stop)

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


def _event_json(event: TableStreamEvent) -> dict[str, Any] | None:
    match event:
        case TableStatusEvent(stage=stage, text=text, done=done, total=total, rows=rows):
            return {"type": "status", "stage": stage, "text": text, "done": done, "total": total, "rows": rows}
        case RowEvent(row=row):
            return {"type": "row", "row": row.model_dump()}
        case TableEvent(table=table):
            return {"type": "table", "table": table.to_json()}
    return None

"""Server-sent events, as every streamed route sends them: one ``data: <json>`` per event, a wait for the LLM
as an SSE comment (clients ignore it, proxies see life), an error in-band (the headers are already sent), then
``data: [DONE]``. The events are read in a worker thread, and a response that ends for any reason (a client
that went away cancels it) sets its :class:`rag.Stop`, so the LLM slot is freed at once for the next in line.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from fastapi.encoders import jsonable_encoder
from fastapi.responses import StreamingResponse
from starlette.concurrency import iterate_in_threadpool

from rag import ErrorEvent, QueuedEvent, RagError, Stop
from rag.apps.http_errors import error_for


def sse(data: dict[str, Any] | str) -> bytes:
    """One ``data:`` line (JSON, or a bare word such as ``[DONE]``)."""
    payload = data if isinstance(data, str) else json.dumps(jsonable_encoder(data), ensure_ascii=False)
    return f"data: {payload}\n\n".encode()


def waiting(event: QueuedEvent) -> bytes:
    """A wait for the LLM, as an SSE comment."""
    return f": waiting for the LLM, position {event.position}, {event.waited:.0f} s\n\n".encode()


def error_json(error: RagError, param: str = "messages") -> dict[str, str | None]:
    """An error as a stream sends it in-band (OpenAI's error object): message, type, code."""
    err = error_for(error, param=param)
    return {"message": err.message, "type": err.type, "code": err.code}


def typed_events(events: Iterator[Any], as_json: Callable[[Any], dict[str, Any] | None], param: str) -> Iterator[bytes]:
    """The SSE of a route whose events are ``{"type": ...}`` objects (check, table): ``as_json`` turns each of
    the route's own events into one (None: not sent); an error becomes ``{"type": "error", "error"}``, named
    after ``param`` as the non-streamed route's 4xx would be."""
    for event in events:
        match event:
            case QueuedEvent():
                yield waiting(event)
            case ErrorEvent(error=error):
                yield sse({"type": "error", "error": error_json(error, param)})
            case _:
                data = as_json(event)
                if data is not None:
                    yield sse(data)
    yield sse("[DONE]")


async def until_disconnect(chunks: Iterator[bytes], stop: Stop) -> AsyncIterator[bytes]:
    """``chunks``, read in a worker thread; when the response ends for any reason ``stop`` is set."""
    try:
        async for chunk in iterate_in_threadpool(chunks):
            yield chunk
    finally:
        stop.set()


def streaming(chunks: Iterator[bytes], stop: Stop) -> StreamingResponse:
    """The ``text/event-stream`` response of ``chunks``, stopped when it ends (see :func:`until_disconnect`)."""
    return StreamingResponse(
        until_disconnect(chunks, stop), media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
    )

"""The HTTP API behind ``rag serve``: an OpenAI-compatible chat endpoint whose answers carry verified citations.

``create_app(assistant)`` builds the FastAPI app (tests use it without a server); :func:`serve` runs it with
uvicorn. Endpoints: ``POST /v1/chat/completions`` (also SSE streaming), ``POST /v1/check`` (a claim checked,
also SSE), ``POST /v1/table``, ``POST /v1/search``, ``POST /v1/ingest`` (multipart upload), ``GET /v1/papers``,
``GET /v1/models``, ``GET /healthz``; the OpenAPI schema is at ``/openapi.json``.

OpenAI clients read ``choices[0].message.content`` (the answer with ``[n]`` markers); the verified
citations and sources are in the extra top-level field ``rag`` (exactly ``rag ask --json``), on the
response and on the last stream chunk. While streaming, chunks may carry the extra field ``rag_event``
(the evidence being read, a paper confirmed for a list question, progress); clients that do not know it
ignore it. Errors are OpenAI-shaped: ``{"error": {"message", "type", "code", "param"}}``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio.to_thread
import uvicorn
from fastapi import FastAPI

from rag import Assistant, check_bind
from rag.apps.http_chat import chat_router
from rag.apps.http_check import check_router
from rag.apps.http_context import make_context
from rag.apps.http_corpus import UploadLimit, corpus_router
from rag.apps.http_errors import ERRORS, add_error_handlers
from rag.apps.http_meta import meta_router
from rag.apps.http_schemas import MODEL_ID
from rag.apps.http_table import table_router

__all__ = ["MODEL_ID", "create_app", "serve"]


def create_app(assistant: Assistant) -> FastAPI:
    """The FastAPI app over ``assistant`` (auth and upload limit from ``assistant.settings.server``).

    One router per area (:mod:`rag.apps.http_meta`, ``http_corpus``, ``http_chat``, ``http_check``,
    ``http_table``), all sharing
    one :class:`~rag.apps.http_context.ApiContext`; errors take one shape (:mod:`rag.apps.http_errors`).
    """
    ctx = make_context(assistant)
    llm = assistant.settings.llm

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Questions waiting for the LLM each hold a worker thread: leave room beside them for searches and
        # extractive answers, which must never wait behind LLM answers.
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = max(limiter.total_tokens, llm.max_concurrent + llm.max_waiting + 16)
        yield

    app = FastAPI(
        lifespan=lifespan,
        title="rag-abstracts",
        version="1",
        description=__doc__,
        # the error handlers answer every error in one shape; the schema says so
        responses={401: ERRORS[401]} if ctx.token else None,
    )
    add_error_handlers(app)
    app.add_middleware(UploadLimit, limit=ctx.max_upload_bytes)
    for router in (meta_router(ctx), corpus_router(ctx), chat_router(ctx), check_router(ctx), table_router(ctx)):
        app.include_router(router)
    return app


# ---------------------------------------------------------------------------------------------- running
def serve(assistant: Assistant, host: str | None = None, port: int | None = None) -> None:
    """Run the API with uvicorn until interrupted."""
    host = host or assistant.settings.server.host
    port = port or assistant.settings.server.port
    check_bind(assistant.settings, host, "server")
    uvicorn.run(create_app(assistant), host=host, port=port, log_level="info")

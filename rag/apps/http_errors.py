"""Errors of the HTTP API, OpenAI-shaped: ``{"error": {"message", "type", "code", "param"}}``.

:func:`error_for` maps library errors to HTTP statuses, in this one place; :func:`add_error_handlers` makes
every error the app answers (ours, the library's, validation, routing) take that shape.
"""

from __future__ import annotations

import math
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from rag import BackendError, BusyError, EmptyIndexError, IngestError, QuestionError, RagError


class ApiError(Exception):
    """A request the API refuses, with the HTTP status and an OpenAI-style error body."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type, param, code
        self.headers = headers or {}

    def response(self, headers: dict[str, str] | None = None) -> JSONResponse:
        body = {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}
        return JSONResponse(body, status_code=self.status, headers=self.headers | (headers or {}))


class ErrorDetail(BaseModel):
    message: str = Field(description="What is wrong with the request and how to fix it.")
    type: str = Field(description="invalid_request_error, authentication_error, not_found_error or server_error.")
    param: str | None = Field(default=None, description="The request field at fault, when there is one.")
    code: str | None = Field(default=None, description="A stable machine-readable code, e.g. 'empty_question'.")


class ErrorResponse(BaseModel):
    error: ErrorDetail


def error_for(e: RagError, param: str = "messages") -> ApiError:
    if isinstance(e, QuestionError):
        return ApiError(400, str(e), param="attributes" if e.code == "bad_attributes" else param, code=e.code)
    if isinstance(e, IngestError):
        return ApiError(400, str(e), param="files", code="malformed_upload")
    if isinstance(e, EmptyIndexError):
        return ApiError(409, str(e), code="empty_index")
    if isinstance(e, BackendError):
        return ApiError(502, str(e), type="server_error", code="backend_error")
    if isinstance(e, BusyError):  # the LLM's line is full: say when to come back, never let the client time out
        retry = str(max(1, math.ceil(e.retry_after)))
        return ApiError(503, str(e), type="server_error", code="busy", headers={"Retry-After": retry})
    return ApiError(500, str(e), type="server_error", code=type(e).__name__)


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Bad input: empty question, unknown filter key, malformed upload."},
    401: {"model": ErrorResponse, "description": "Missing or wrong bearer token (when RAG_SERVER__API_TOKEN is set)."},
    422: {"model": ErrorResponse, "description": "The request body does not match the schema."},
}


BUSY: dict[int | str, dict[str, Any]] = {
    503: {
        "model": ErrorResponse,
        "description": "Too many questions wait for the LLM (RAG_LLM__MAX_WAITING); see Retry-After.",
        "headers": {
            "Retry-After": {"description": "Seconds to wait before asking again.", "schema": {"type": "integer"}}
        },
    }
}


def add_error_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` in the one OpenAI shape (401s with ``WWW-Authenticate: Bearer``)."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, e: ApiError) -> JSONResponse:
        return e.response({"WWW-Authenticate": "Bearer"} if e.status == 401 else None)

    @app.exception_handler(RagError)
    async def _rag_error(request: Request, e: RagError) -> JSONResponse:
        return error_for(e).response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, e: RequestValidationError) -> JSONResponse:
        problems = []
        for err in e.errors():
            loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            problems.append(f"{loc or 'body'}: {err.get('msg', 'invalid')}")
        first: dict[str, Any] = next(iter(e.errors()), {})
        param = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or None
        return ApiError(
            422, "Invalid request: " + "; ".join(problems[:5]), param=param, code="invalid_request"
        ).response()

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, e: StarletteHTTPException) -> JSONResponse:
        kind = "not_found_error" if e.status_code == 404 else "invalid_request_error"
        return ApiError(e.status_code, str(e.detail), type=kind).response(getattr(e, "headers", None))

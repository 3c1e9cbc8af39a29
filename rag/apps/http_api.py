"""The HTTP API behind ``rag serve``: an OpenAI-compatible chat endpoint whose answers carry verified citations.

``create_app(assistant)`` builds the FastAPI app (tests use it without a server); :func:`serve` runs it with
uvicorn. Endpoints: ``POST /v1/chat/completions`` (also SSE streaming), ``POST /v1/table``, ``POST /v1/search``,
``POST /v1/ingest`` (multipart upload), ``GET /v1/papers``, ``GET /v1/models``, ``GET /healthz``;
the OpenAPI schema is at ``/openapi.json``.

OpenAI clients read ``choices[0].message.content`` (the answer with ``[n]`` markers); the verified
citations and sources are in the extra top-level field ``rag`` (exactly ``rag ask --json``), on the
response and on the last stream chunk. While streaming, chunks may carry the extra field ``rag_event``
(the evidence being read, a paper confirmed for a list question, progress); clients that do not know it
ignore it. Errors are OpenAI-shaped: ``{"error": {"message", "type", "code", "param"}}``.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import re
import secrets
import tempfile
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, File, Form, Request, UploadFile
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from rag import (
    SUPPORTED_SUFFIXES,
    Answer,
    AnswerEvent,
    Assistant,
    BackendError,
    BusyError,
    EmptyIndexError,
    ErrorEvent,
    Event,
    IngestError,
    ItemEvent,
    MetaValue,
    ProgressEvent,
    QuestionError,
    QuestionKind,
    QueuedEvent,
    RagError,
    StatusEvent,
    Table,
    TokenEvent,
    check_bind,
    readable_table,
)

MODEL_ID = "rag-abstracts"


# ---------------------------------------------------------------------------------------------- errors
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


def _error_for(e: RagError, param: str = "messages") -> ApiError:
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


_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "Bad input: empty question, unknown filter key, malformed upload."},
    401: {"model": ErrorResponse, "description": "Missing or wrong bearer token (when RAG_SERVER__API_TOKEN is set)."},
    422: {"model": ErrorResponse, "description": "The request body does not match the schema."},
}


_BUSY: dict[int | str, dict[str, Any]] = {
    503: {
        "model": ErrorResponse,
        "description": "Too many questions wait for the LLM (RAG_LLM__MAX_WAITING); see Retry-After.",
        "headers": {
            "Retry-After": {"description": "Seconds to wait before asking again.", "schema": {"type": "integer"}}
        },
    }
}


# ---------------------------------------------------------------------------------------------- schemas
class TextPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str = "text"
    text: str = ""


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(p.text for p in self.content if p.type == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    """OpenAI chat-completions request. The last user message is the question; earlier user/assistant
    messages are the conversation (a follow-up is rewritten into a standalone question); system
    messages are ignored (the answer prompt is fixed). Other OpenAI fields are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str | None = Field(default=None, description=f"Ignored; responses say {MODEL_ID!r}.")
    messages: list[ChatMessage] = Field(min_length=1, description="The conversation; must contain a user message.")
    stream: bool = Field(default=False, description="Server-sent events: `data: {chunk}` lines, then `data: [DONE]`.")
    k: int | None = Field(default=None, ge=1, le=20, description="Papers retrieved (default RAG_RETRIEVAL__K).")
    filters: dict[str, MetaValue] | None = Field(
        default=None, description='Metadata filter, e.g. {"venue": "NeurIPS"}.'
    )
    mode: Literal["llm", "extractive"] | None = Field(
        default=None, description="'extractive': cited sentences, no LLM."
    )
    kind: QuestionKind | None = Field(
        default=None,
        description="Answer as a lookup, a list (every paper judged, `rag.items`), a comparison (per paper) or "
        "yes/no (`rag.verdict`); null: recognised from the question (`rag.kind` says which).",
    )


class TableRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    attributes: (
        Annotated[str, Field(max_length=2000)]
        | Annotated[list[Annotated[str, Field(max_length=200)]], Field(max_length=50)]
    ) = Field(description='The columns: "task, dataset, metric, best result", or a list of names.')
    query: str | None = Field(
        default=None, description="Rows: the k papers most relevant to it (default: every paper, up to k)."
    )
    filters: dict[str, MetaValue] | None = Field(
        default=None, description='Metadata filter, e.g. {"venue": "NeurIPS"} (also accepted as `where`).'
    )
    k: int | None = Field(
        default=None, ge=1, le=200, description="Rows at most (default RAG_ANSWER__TABLE_MAX_PAPERS)."
    )
    format: Literal["json", "csv", "md"] = Field(
        default="json", description="json: the table below; csv or md: text/csv or text/markdown with the references."
    )

    @model_validator(mode="before")
    @classmethod
    def _where_means_filters(cls, data: Any) -> Any:
        """``where`` (the CLI's word, ``rag table --where``) is accepted for ``filters``."""
        if isinstance(data, dict) and "where" in data:
            if "filters" in data:
                raise ValueError("give the filter as filters or as where, not both")
            data = {("filters" if key == "where" else key): value for key, value in data.items()}
        return data


class TableCellOut(BaseModel):
    attribute: str
    value: str | None = Field(description="None: the abstract does not state it (never guessed).")
    quote: str = Field(description="The sentence of the abstract that states the value ('' when not stated).")
    span: tuple[int, int] | None = Field(description="Character span of the quote in the abstract.")


class TableRowOut(BaseModel):
    n: int = Field(description="Reference number of the paper ([n] in the Markdown export).")
    paper_id: str
    title: str
    cells: list[TableCellOut]


class TableResponse(BaseModel):
    """``Assistant.table(...).to_json()``: one row per paper, one cell per attribute."""

    attributes: list[str]
    rows: list[TableRowOut]
    query: str | None
    checked: int = Field(description="Papers read.")
    collection_size: int = Field(description="Papers in the (filtered) collection.")
    timings: dict[str, float]


class SearchRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    query: str = Field(description="Free-text query.")
    k: int | None = Field(default=None, ge=1, le=100, description="Papers returned (default RAG_RETRIEVAL__K).")
    filters: dict[str, MetaValue] | None = Field(default=None, description='Metadata filter, e.g. {"year": 2018}.')
    mode: Literal["hybrid", "dense", "bm25"] | None = Field(default=None, description="Retriever (default hybrid).")


class SearchHitOut(BaseModel):
    paper_id: str
    title: str
    score: float = Field(description="Fused (RRF) score, for ranking; not comparable across questions.")
    rank: int | None = Field(default=None, description="1-based position in the fused ranking.")
    similarity: float | None = Field(default=None, description="Cosine similarity of the best chunk to the query.")
    match: str = Field(default="keyword", description="strong / good / weak / off-topic (from similarity).")
    text: str
    metadata: dict[str, Any]


class SearchResponse(BaseModel):
    object: Literal["list"] = "list"
    data: list[SearchHitOut]


class PaperOut(BaseModel):
    paper_id: str
    title: str
    abstract: str
    authors: list[str]
    venue: str | None
    year: int | None
    url: str | None
    metadata: dict[str, Any]


class PapersResponse(BaseModel):
    object: Literal["list"] = "list"
    data: list[PaperOut]


class IngestResponse(BaseModel):
    files: list[str]
    papers_seen: int
    added: int
    updated: int
    unchanged: int
    removed: int
    chunks_written: int
    embedded: int


class ModelOut(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int = 0
    owned_by: str = MODEL_ID


class ModelsResponse(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]


class Health(BaseModel):
    status: Literal["ok"] = "ok"


class ChatChoiceMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class ChatChoice(BaseModel):
    index: int = 0
    message: ChatChoiceMessage
    finish_reason: Literal["stop"] = "stop"


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatResponse(BaseModel):
    """An OpenAI ``chat.completion``, plus ``rag``: the verified answer exactly as ``rag ask --json`` prints it
    (answer, refused, citations [n, paper_id, title, text, span, quote, support], sources, unsupported, ...)."""

    model_config = ConfigDict(extra="allow")
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChatChoice]
    usage: Usage
    rag: dict[str, Any] = Field(description="Verified answer, citations and sources (`rag ask --json`).")


# ---------------------------------------------------------------------------------------------- app
class _FilterKeys:
    """Metadata keys that some indexed paper has (what a filter may name); recomputed after an ingest."""

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant
        self._keys: frozenset[str] | None = None
        self._lock = threading.Lock()

    def get(self) -> frozenset[str]:
        with self._lock:
            if self._keys is None:
                keys: set[str] = set()
                for p in self.assistant.papers():
                    keys.update(p.metadata)
                    keys.update(k for k in ("venue", "year", "url") if getattr(p, k) is not None)
                self._keys = frozenset(keys)
            return self._keys

    def invalidate(self) -> None:
        with self._lock:
            self._keys = None

    def check(self, filters: dict[str, MetaValue] | None) -> dict[str, MetaValue] | None:
        if not filters:
            return None
        known = self.get()
        unknown = sorted(k for k in filters if k not in known)
        if unknown:
            hint = ", ".join(sorted(known)) or "none: the indexed papers carry no metadata"
            raise ApiError(
                400,
                f"Unknown filter key {', '.join(map(repr, unknown))}; known keys: {hint}.",
                param="filters",
                code="unknown_filter_key",
            )
        return filters


def _split_conversation(messages: list[ChatMessage]) -> tuple[str, list[dict[str, str]]]:
    last = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if last is None:
        raise ApiError(
            400,
            "messages contains no user message: the last user message is the question.",
            param="messages",
            code="missing_question",
        )
    history = [{"role": m.role, "content": m.text()} for m in messages[:last] if m.role in ("user", "assistant")]
    return messages[last].text(), history


def _usage(answer: Answer) -> dict[str, int]:
    prompt = int(answer.tokens.get("prompt", answer.tokens.get("prompt_tokens", 0)) or 0)
    completion = int(answer.tokens.get("completion", answer.tokens.get("completion_tokens", 0)) or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _sse(data: dict[str, Any] | str) -> bytes:
    import json

    payload = data if isinstance(data, str) else json.dumps(jsonable_encoder(data), ensure_ascii=False)
    return f"data: {payload}\n\n".encode()


def create_app(assistant: Assistant) -> FastAPI:
    """The FastAPI app over ``assistant`` (auth and upload limit from ``assistant.settings.server``)."""
    settings = assistant.settings.server
    token = settings.api_token.get_secret_value() if settings.api_token else None
    filter_keys = _FilterKeys(assistant)
    llm = assistant.settings.llm

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Questions waiting for the LLM each hold a worker thread: leave room beside them for searches and
        # extractive answers, which must never wait behind LLM answers.
        import anyio.to_thread

        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = max(limiter.total_tokens, llm.max_concurrent + llm.max_waiting + 16)
        yield

    app = FastAPI(
        lifespan=lifespan,
        title="rag-abstracts",
        version="1",
        description=__doc__,
        # handlers below answer every error in one shape; the schema says so
        responses={401: _ERRORS[401]} if token else None,
    )
    bearer = HTTPBearer(auto_error=False, description="RAG_SERVER__API_TOKEN, when set.")

    def authorize(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if token is None:
            return
        given = credentials.credentials if credentials else ""
        if not secrets.compare_digest(given.encode(), token.encode()):
            raise ApiError(
                401,
                "Missing or wrong bearer token: send 'Authorization: Bearer <RAG_SERVER__API_TOKEN>'.",
                type="authentication_error",
                code="invalid_api_key",
            )

    auth = [Depends(authorize)]

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, e: ApiError) -> JSONResponse:
        return e.response({"WWW-Authenticate": "Bearer"} if e.status == 401 else None)

    @app.exception_handler(RagError)
    async def _rag_error(request: Request, e: RagError) -> JSONResponse:
        return _error_for(e).response()

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

    def _too_large(size: int) -> ApiError:
        return ApiError(
            413,
            f"Upload of {size} bytes exceeds the limit of {settings.max_upload_bytes} bytes "
            "(RAG_SERVER__MAX_UPLOAD_BYTES).",
            param="files",
            code="upload_too_large",
        )

    app.add_middleware(_UploadLimit, limit=settings.max_upload_bytes, too_large=_too_large)

    @app.get("/healthz", response_model=Health, tags=["meta"])
    def healthz() -> Health:
        """Liveness: the server answers (no auth)."""
        return Health()

    @app.get("/v1/models", response_model=ModelsResponse, dependencies=auth, responses=_ERRORS, tags=["openai"])
    def models() -> ModelsResponse:
        """The one model this server answers as (OpenAI clients list models before use)."""
        return ModelsResponse(data=[ModelOut(id=MODEL_ID)])

    @app.get("/v1/papers", response_model=PapersResponse, dependencies=auth, responses=_ERRORS, tags=["corpus"])
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
                for p in assistant.papers()
            ]
        )

    @app.post(
        "/v1/search",
        response_model=SearchResponse,
        dependencies=auth,
        responses=_ERRORS | {409: {"model": ErrorResponse, "description": "The index is empty."}},
        tags=["corpus"],
    )
    def search(body: SearchRequest) -> SearchResponse:
        """The papers most relevant to ``query``, best first (as ``rag search --json``)."""
        hits = assistant.search(body.query, k=body.k, where=filter_keys.check(body.filters), mode=body.mode)
        return SearchResponse(data=[SearchHitOut(**h.to_json()) for h in hits])

    @app.post(
        "/v1/ingest",
        response_model=IngestResponse,
        dependencies=auth,
        responses=_ERRORS
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
        if total > settings.max_upload_bytes:
            raise _too_large(total)
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
                path.write_bytes(f.file.read(settings.max_upload_bytes + 1))
                paths.append(path)
                names.append(name)
            try:
                report = assistant.ingest(paths, prune=prune)
            except IngestError as e:  # name the upload, not our temporary directory
                raise ApiError(
                    400, re.sub(re.escape(tmp) + r"/\d+/", "", str(e)), param="files", code="malformed_upload"
                ) from e
            finally:
                filter_keys.invalidate()
        return IngestResponse(files=names, **report.to_json())

    sse: dict[int | str, dict[str, Any]] = {
        200: {
            "content": {"text/event-stream": {}},
            "description": "JSON, or with `stream: true` server-sent `chat.completion.chunk` events.",
        }
    }

    @app.post(
        "/v1/chat/completions",
        response_model=ChatResponse,
        dependencies=auth,
        responses=_ERRORS | sse | _BUSY,
        tags=["openai"],
    )
    def chat(body: ChatRequest) -> Any:
        """A grounded answer (OpenAI chat completion); ``rag`` holds the verified citations and sources.

        ``kind`` picks the answer path (lookup, list, compare, yesno); by default the question's form does.

        With ``stream: true``: SSE ``chat.completion.chunk`` events whose deltas are the answer as the model
        writes it (unresolvable markers already removed; for a list question, one line per paper as it is
        confirmed); chunks may carry ``rag_event`` (``status``: the evidence being read; ``item``: a paper
        confirmed; ``progress``: papers checked). The last chunk carries ``finish_reason: "stop"``, ``usage``
        and ``rag``, whose ``answer`` is the verified text (unsupported sentences dropped)."""
        question, history = _split_conversation(body.messages)
        filters = filter_keys.check(body.filters)
        cid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        events = assistant.stream(
            question, history=history or None, k=body.k, filters=filters, mode=body.mode, kind=body.kind
        )
        if not body.stream:
            for event in events:
                if isinstance(event, ErrorEvent):
                    raise event.error
                if isinstance(event, AnswerEvent):
                    answer = event.answer
            return ChatResponse(
                id=cid,
                created=created,
                model=MODEL_ID,
                usage=Usage(**_usage(answer)),
                choices=[ChatChoice(message=ChatChoiceMessage(content=answer.text))],
                rag=answer.to_json(),
            )
        first = next(events)  # the question is checked and retrieval done here, so bad input is still a 4xx
        if isinstance(first, ErrorEvent):
            raise first.error
        return StreamingResponse(
            _chunks(cid, created, first, events),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache"},
        )

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

    @app.post(
        "/v1/table",
        response_model=TableResponse,
        dependencies=auth,
        responses=_ERRORS | text_formats | _BUSY,
        tags=["answers"],
    )
    def table(body: TableRequest) -> Any:
        """A paper x attribute table: one row per paper, one cell per attribute, each value with the sentence of
        the abstract that states it; a value no sentence states is null ("not stated"), never guessed.
        As ``rag table``: ``format`` csv or md returns the CSV or the Markdown table with its references."""
        filters = filter_keys.check(body.filters)
        try:
            result = assistant.table(body.attributes, query=body.query or None, where=filters, k=body.k)
        except RagError as e:
            raise _error_for(e, param="query") from e
        return _table_response(result, body.format)

    return app


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


class _UploadLimit:
    """Rejects an oversized ``POST /v1/ingest`` from its Content-Length, before the body is read and spooled."""

    def __init__(self, app: Any, limit: int, too_large: Any) -> None:
        self.app, self.limit, self.too_large = app, limit, too_large

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/v1/ingest":
            length = dict(scope["headers"]).get(b"content-length", b"")
            if length.isdigit() and int(length) > self.limit:
                await self.too_large(int(length)).response()(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _rag_event(event: Event) -> dict[str, Any] | None:
    """The ``rag_event`` extra field of a stream chunk for ``event`` (None: the event has none)."""
    match event:
        case StatusEvent(standalone_question=q, sources=sources, evidence=evidence):
            return {
                "type": "status",
                "standalone_question": q,
                "sources": [s.to_json() | {"chunk_id": s.chunk_id} for s in sources],
                "evidence": [e.model_dump() for e in evidence],
            }
        case ItemEvent(item=item, checked=checked, total=total):
            return {"type": "item", "item": item.model_dump(), "checked": checked, "total": total}
        case ProgressEvent(checked=checked, total=total):
            return {"type": "progress", "checked": checked, "total": total}
    return None


def _list_summary(answer: Answer) -> str:
    """The closing line of a streamed list answer: how many papers match, of how many checked."""
    n, checked, total = len(answer.items), answer.checked or 0, answer.collection_size or 0
    head = "No paper matches" if n == 0 else f"{n} {'paper matches' if n == 1 else 'papers match'}"
    return f"{head} ({checked} of {total:,} abstracts checked)."


def _chunks(cid: str, created: int, first: Event, events: Iterator[Event]) -> Iterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return _sse(
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": MODEL_ID,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                **extra,
            }
        )

    yield chunk({"role": "assistant", "content": ""})
    items = 0
    for event in itertools.chain([first], events):
        match event:
            case QueuedEvent(position=position, waited=waited):  # an SSE comment: clients ignore it, proxies see life
                yield f": waiting for the LLM, position {position}, {waited:.0f} s\n\n".encode()
            case TokenEvent(text=text) if text:
                yield chunk({"content": text})
            case ItemEvent(item=item):  # a paper confirmed: readable as content, structured in rag_event
                items += 1
                line = f"- {' '.join(item.title.split())}: {' '.join(item.quote.split())}\n"
                yield chunk({"content": line}, rag_event=_rag_event(event))
            case StatusEvent() | ProgressEvent():
                yield chunk({}, rag_event=_rag_event(event))
            case AnswerEvent(answer=answer):
                if answer.kind == "list" and not answer.refused:
                    yield chunk({"content": ("\n" if items else "") + _list_summary(answer)})
                yield chunk({}, "stop", usage=_usage(answer), rag=answer.to_json())
            case ErrorEvent(error=error):  # headers are sent: report in-band, as OpenAI does
                err = _error_for(error)
                yield _sse({"error": {"message": err.message, "type": err.type, "code": err.code}})
    yield _sse("[DONE]")


# ---------------------------------------------------------------------------------------------- running
def serve(assistant: Assistant, host: str | None = None, port: int | None = None) -> None:
    """Run the API with uvicorn until interrupted."""
    import uvicorn

    host = host or assistant.settings.server.host
    port = port or assistant.settings.server.port
    check_bind(assistant.settings, host, "server")
    uvicorn.run(create_app(assistant), host=host, port=port, log_level="info")

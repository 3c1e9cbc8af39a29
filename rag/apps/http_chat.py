"""``POST /v1/chat/completions``: a grounded answer as an OpenAI chat completion, whole or streamed (SSE)."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Iterator
from typing import Any

from fastapi import APIRouter

from rag import (
    Answer,
    AnswerEvent,
    ErrorEvent,
    Event,
    ItemEvent,
    ProgressEvent,
    QueuedEvent,
    StatusEvent,
    StepEvent,
    Stop,
    TokenEvent,
    retrieved_relevance,
)
from rag.apps.http_context import ApiContext
from rag.apps.http_errors import BUSY, ERRORS, ApiError
from rag.apps.http_schemas import MODEL_ID, ChatChoice, ChatChoiceMessage, ChatMessage, ChatRequest, ChatResponse, Usage
from rag.apps.http_sse import error_json, sse, streaming, waiting


def chat_router(ctx: ApiContext) -> APIRouter:
    """``POST /v1/chat/completions``."""
    router = APIRouter()
    auth = ctx.auth

    sse: dict[int | str, dict[str, Any]] = {
        200: {
            "content": {"text/event-stream": {}},
            "description": "JSON, or with `stream: true` server-sent `chat.completion.chunk` events.",
        }
    }

    @router.post(
        "/v1/chat/completions",
        response_model=ChatResponse,
        dependencies=auth,
        responses=ERRORS | sse | BUSY,
        tags=["openai"],
    )
    def chat(body: ChatRequest) -> Any:
        """A grounded answer (OpenAI chat completion); ``rag`` holds the verified citations and sources.

        ``kind`` picks the answer path (lookup, list, compare, yesno); by default the question's form does.

        With ``stream: true``: SSE ``chat.completion.chunk`` events whose deltas are the answer as the model
        writes it (unresolvable markers already removed; for a list question, one line per paper as it is
        confirmed); chunks may carry ``rag_event`` (``status``: the evidence being read; ``item``: a paper
        confirmed; ``progress``: papers checked; ``step``: what is done next, e.g. ``{"step": "judging", "done": 2,
        "total": 19, "text": "Judging paper 3 of 19…", "elapsed": 12.4}``, before every step that may take more
        than a second). The last chunk carries ``finish_reason: "stop"``, ``usage`` and ``rag``, whose ``answer``
        is the verified text (unsupported sentences dropped). A client that disconnects frees the LLM at once."""
        question, history = _split_conversation(body.messages)
        filters = ctx.filter_keys.check(body.filters)
        cid, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        stop = Stop()
        events = ctx.assistant.stream(
            question,
            history=history or None,
            k=body.k,
            filters=filters,
            mode=body.mode,
            kind=body.kind,
            stop=stop if body.stream else None,
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
        # the question is checked and its place in line taken here, so bad input is still a 4xx and a full line a 503
        first = next(events)
        if isinstance(first, ErrorEvent):
            raise first.error
        return streaming(_chunks(cid, created, first, events), stop)

    return router


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


def _rag_event(event: Event) -> dict[str, Any] | None:
    """The ``rag_event`` extra field of a stream chunk for ``event`` (None: the event has none)."""
    match event:
        case StatusEvent(standalone_question=q, sources=sources, evidence=evidence):
            return {
                "type": "status",
                "standalone_question": q,
                "sources": [s.source_json(retrieved_relevance(s)) for s in sources],
                "evidence": [e.model_dump() for e in evidence],
            }
        case ItemEvent(item=item, checked=checked, total=total):
            return {"type": "item", "item": item.model_dump(), "checked": checked, "total": total}
        case ProgressEvent(checked=checked, total=total):
            return {"type": "progress", "checked": checked, "total": total}
        case StepEvent(step=step, done=done, total=total):
            return {"type": "step", "step": step, "done": done, "total": total, "text": event.text}
    return None


def _list_summary(answer: Answer) -> str:
    """The closing line of a streamed list answer: how many papers match, of how many checked."""
    n, checked, total = len(answer.items), answer.checked or 0, answer.collection_size or 0
    head = "No paper matches" if n == 0 else f"{n} {'paper matches' if n == 1 else 'papers match'}"
    return f"{head} ({checked} of {total:,} abstracts checked)."


def _chunks(cid: str, created: int, first: Event, events: Iterator[Event]) -> Iterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return sse(
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
    t0 = time.monotonic()
    items = 0
    for event in itertools.chain([first], events):
        match event:
            case QueuedEvent():
                yield waiting(event)
            case TokenEvent(text=text) if text:
                yield chunk({"content": text})
            case ItemEvent(item=item):  # a paper confirmed: readable as content, structured in rag_event
                items += 1
                line = f"- {' '.join(item.title.split())}: {' '.join(item.quote.split())}\n"
                yield chunk({"content": line}, rag_event=_rag_event(event))
            case StatusEvent() | ProgressEvent():
                yield chunk({}, rag_event=_rag_event(event))
            case StepEvent():
                step = _rag_event(event) or {}
                yield chunk({}, rag_event=step | {"elapsed": round(time.monotonic() - t0, 1)})
            case AnswerEvent(answer=answer):
                if answer.kind == "list" and not answer.refused:
                    yield chunk({"content": ("\n" if items else "") + _list_summary(answer)})
                yield chunk({}, "stop", usage=_usage(answer), rag=answer.to_json())
            case ErrorEvent(error=error):  # headers are sent: report in-band, as OpenAI does
                yield sse({"error": error_json(error)})
    yield sse("[DONE]")

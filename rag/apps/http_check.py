"""``POST /v1/check``: a claim checked against the most relevant abstracts (as ``rag check``), whole or streamed.

The JSON response is :meth:`rag.ClaimCheck.summary` (exactly ``rag check --json``). With ``stream: true`` the
answer is server-sent events, each ``data: {"type": ...}``: ``status`` (the papers found, at once), one
``stance`` per paper as it is judged (in order of relevance, with ``checked`` of ``total``), then ``check``
(the summary) or ``error`` (OpenAI-shaped, in-band: the headers are sent), then ``data: [DONE]``. A wait for
the LLM is sent as SSE comments, as on ``/v1/chat/completions``; a client that goes away stops the check and
frees the LLM at once (:mod:`rag.apps.http_sse`).
"""

from __future__ import annotations

import itertools
from typing import Any

from fastapi import APIRouter

from rag import (
    CheckEvent,
    CheckStreamEvent,
    ErrorEvent,
    PaperStance,
    RagError,
    StanceEvent,
    StatusEvent,
    Stop,
)
from rag.apps.http_context import ApiContext
from rag.apps.http_errors import BUSY, ERRORS, ErrorResponse, error_for
from rag.apps.http_schemas import CheckRequest, CheckResponse
from rag.apps.http_sse import streaming, typed_events


def check_router(ctx: ApiContext) -> APIRouter:
    """``POST /v1/check``."""
    router = APIRouter()
    auth = ctx.auth

    responses: dict[int | str, dict[str, Any]] = {
        200: {
            "content": {"text/event-stream": {}},
            "description": "The check as JSON, or with `stream: true` server-sent events "
            "(`status`, one `stance` per paper, then `check` or `error`; then `[DONE]`).",
        },
        409: {"model": ErrorResponse, "description": "The index (or the filtered part of it) holds no papers."},
        502: {"model": ErrorResponse, "description": "The LLM endpoint failed or could not be reached."},
    }

    @router.post(
        "/v1/check",
        response_model=CheckResponse,
        dependencies=auth,
        responses=ERRORS | responses | BUSY,
        tags=["answers"],
    )
    def check(body: CheckRequest) -> Any:
        """Check a claim against the literature, as ``rag check``: each of the ``k`` most relevant papers
        *supports*, *refutes* or does *not state* it, with the judge's probability and the deciding sentence
        quoted and located (``span``); the verdict (supported, refuted, mixed, not enough evidence) counts the
        papers whose stance is decided. Papers come in order of relevance; ``paper_id`` is the corpus id.

        With ``stream: true``: SSE events ``{"type": "status", "claim", "papers"}`` (the papers found),
        ``{"type": "stance", "paper", "checked", "total"}`` per paper as it is judged, then
        ``{"type": "check", "check"}`` (the JSON response) or ``{"type": "error", "error"}``; then ``[DONE]``."""
        filters = ctx.filter_keys.check(body.filters)
        stop = Stop()
        try:
            events = ctx.assistant.check_stream(
                body.claim, k=body.k, filters=filters, stop=stop if body.stream else None
            )
            # the claim is checked and the papers found here, so bad input is still a 4xx
            first = next(events)
        except RagError as e:
            raise error_for(e, param="claim") from e
        if isinstance(first, ErrorEvent):
            raise error_for(first.error, param="claim") from first.error
        if not body.stream:
            for event in itertools.chain([first], events):
                if isinstance(event, ErrorEvent):
                    raise error_for(event.error, param="claim") from event.error
                if isinstance(event, CheckEvent):
                    return event.check.summary()
            raise AssertionError("a check stream ends with a CheckEvent or an ErrorEvent")  # pragma: no cover
        return streaming(typed_events(itertools.chain([first], events), _event_json, "claim"), stop)

    return router


def stance_json(paper: PaperStance) -> dict[str, Any]:
    """A judged paper as the stream sends it: the summary's fields, its place ``n`` and whether it counts."""
    return {
        "n": paper.n,
        "paper_id": paper.paper_id,
        "title": paper.title,
        "stance": paper.stance,
        "probability": paper.probability,
        "quote": paper.quote,
        "span": list(paper.span),
        "decided": paper.decided,
        "asked": paper.asked,
    }


def _event_json(event: CheckStreamEvent) -> dict[str, Any] | None:
    match event:
        case StatusEvent(standalone_question=claim, sources=sources):
            papers = [{"paper_id": s.paper_id, "title": s.title} for s in sources]
            return {"type": "status", "claim": claim, "papers": papers}
        case StanceEvent(paper=paper, checked=checked, total=total):
            return {"type": "stance", "paper": stance_json(paper), "checked": checked, "total": total}
        case CheckEvent(check=check):
            return {"type": "check", "check": check.summary()}
    return None

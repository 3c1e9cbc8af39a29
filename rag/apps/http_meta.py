"""Routes that describe the server: liveness and the one model it answers as."""

from __future__ import annotations

from fastapi import APIRouter

from rag.apps.http_context import ApiContext
from rag.apps.http_errors import ERRORS
from rag.apps.http_schemas import MODEL_ID, Health, ModelOut, ModelsResponse


def meta_router(ctx: ApiContext) -> APIRouter:
    """``GET /healthz`` (no auth) and ``GET /v1/models``."""
    router = APIRouter()
    auth = ctx.auth

    @router.get("/healthz", response_model=Health, tags=["meta"])
    def healthz() -> Health:
        """Liveness: the server answers (no auth)."""
        return Health()

    @router.get("/v1/models", response_model=ModelsResponse, dependencies=auth, responses=ERRORS, tags=["openai"])
    def models() -> ModelsResponse:
        """The one model this server answers as (OpenAI clients list models before use)."""
        return ModelsResponse(data=[ModelOut(id=MODEL_ID)])

    return router

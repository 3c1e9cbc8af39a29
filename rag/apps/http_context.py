"""What the routers of the HTTP API share: the assistant, the filter keys it knows, and the bearer-token check."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass
from typing import Any

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from rag import Assistant, MetaValue
from rag.apps.http_errors import ApiError


class FilterKeys:
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


@dataclass(frozen=True, kw_only=True)
class ApiContext:
    """Built once per app by :func:`make_context`; every router factory takes it."""

    assistant: Assistant
    filter_keys: FilterKeys
    token: str | None  # RAG_SERVER__API_TOKEN; None: no auth
    auth: list[Any]  # route dependencies that check the bearer token

    @property
    def max_upload_bytes(self) -> int:
        return self.assistant.settings.server.max_upload_bytes


def make_context(assistant: Assistant) -> ApiContext:
    """The shared state of an app over ``assistant`` (auth from ``assistant.settings.server``)."""
    settings = assistant.settings.server
    token = settings.api_token.get_secret_value() if settings.api_token else None
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

    return ApiContext(assistant=assistant, filter_keys=FilterKeys(assistant), token=token, auth=[Depends(authorize)])

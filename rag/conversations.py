"""Conversations kept on this machine: one JSON file per conversation under ``data_dir/conversations/<user>/``.

The web UI saves a conversation after every answer and lists, reopens and deletes them; each turn keeps the
whole :class:`~rag.types.Answer` (text, citations with their spans, sources with their abstracts), so a
reopened conversation shows its sources and highlights exactly as before, without asking again. Nothing is
sent anywhere. With a login (``RAG_UI__AUTH``) each user name gets its own folder (a hash of the name, so a
name cannot walk out of the folder); without one, everything is kept under ``local``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import secrets
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from rag.types import Answer

_ID = re.compile(r"^[0-9a-f]{16}$")


class Turn(BaseModel):
    """One question and its verified answer, with the settings it was asked with."""

    model_config = ConfigDict(extra="ignore")

    answer: Answer
    settings: dict[str, Any] = Field(default_factory=dict)


class Conversation(BaseModel):
    """A saved conversation: its turns in order."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(default_factory=lambda: secrets.token_hex(8))
    title: str = ""
    created: str = Field(default_factory=lambda: _now())
    updated: str = Field(default_factory=lambda: _now())
    turns: list[Turn] = Field(default_factory=list)

    @property
    def answers(self) -> list[Answer]:
        return [t.answer for t in self.turns]

    @property
    def label(self) -> str:
        """What a list of conversations shows: its first question and when it was last updated."""
        title = " ".join((self.title or "Untitled").split())
        title = title if len(title) <= 70 else title[:69] + "…"
        return f"{title} · {self.updated[:16].replace('T', ' ')} · {len(self.turns)} Q"


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


class ConversationStore:
    """Saved conversations under ``root`` (``Settings.data_dir / "conversations"``), one folder per user."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def folder(self, user: str | None) -> Path:
        if not user:
            return self.root / "local"
        return self.root / ("u-" + hashlib.sha256(user.encode("utf-8")).hexdigest()[:16])

    def _path(self, user: str | None, conversation_id: str) -> Path | None:
        if not _ID.match(conversation_id or ""):
            return None  # an id from the browser is checked, never joined blindly into a path
        return self.folder(user) / f"{conversation_id}.json"

    def list(self, user: str | None) -> list[Conversation]:
        """The user's conversations, most recently updated first (unreadable files are skipped)."""
        found = []
        folder = self.folder(user)
        for path in folder.glob("*.json") if folder.is_dir() else []:
            conv = self._read(path)
            if conv is not None:
                found.append(conv)
        return sorted(found, key=lambda c: (c.updated, c.id), reverse=True)

    def load(self, user: str | None, conversation_id: str) -> Conversation | None:
        path = self._path(user, conversation_id)
        return self._read(path) if path is not None and path.is_file() else None

    def save(self, user: str | None, conversation: Conversation) -> Conversation:
        """Write ``conversation`` (atomically: a reader never sees half a file); returns it with ``updated`` set."""
        conversation = conversation.model_copy(update={"updated": _now()})
        path = self._path(user, conversation.id)
        if path is None:
            raise ValueError(f"not a conversation id: {conversation.id!r}")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(conversation.model_dump_json())
        os.replace(tmp, path)
        return conversation

    def delete(self, user: str | None, conversation_id: str) -> bool:
        path = self._path(user, conversation_id)
        if path is None or not path.is_file():
            return False
        path.unlink()
        return True

    @staticmethod
    def _read(path: Path) -> Conversation | None:
        try:
            return Conversation.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, ValidationError):
            return None

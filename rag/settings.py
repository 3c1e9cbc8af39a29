"""One typed settings object, read from ``RAG_*`` environment variables and an optional TOML file.

Precedence: keyword arguments > environment > ``.env`` > TOML file (``RAG_CONFIG`` or ``./rag.toml``) > defaults.
Nested groups use ``__`` in environment names (``RAG_RETRIEVAL__K=8``); the user-facing names the
issues promise (``RAG_DATA_DIR``, ``RAG_CHROMA_URL``, ``RAG_LLM_BASE_URL``, ``RAG_LLM_MODEL``,
``RAG_LLM_API_KEY``) work too.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from rag.errors import ConfigError, redact


def default_cache_dir() -> Path:
    """Per-user cache (the assembled GGUF model, tiktoken files): safe to delete, rebuilt offline."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rag-abstracts"


def default_data_dir() -> Path:
    """Per-user data directory (XDG), never the current directory."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "rag-abstracts"


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmbeddingSettings(_Group):
    provider: Literal["local", "openai"] = Field(
        default="local",
        description="'local': a bundled model (see model); 'openai': any OpenAI-compatible embeddings endpoint.",
    )
    model: str = Field(
        default="all-MiniLM-L6-v2-int8",
        description="Local: all-MiniLM-L6-v2-int8 (default), wordllama-l2-supercat-256 (~100x faster, weaker) or "
        "multilingual-e5-small-q4 (needs the [embed] extra); for 'openai', the endpoint's model.",
    )
    base_url: str | None = Field(default=None, description="Embeddings endpoint URL when provider is 'openai'.")
    api_key: SecretStr | None = Field(default=None, description="API key of the embeddings endpoint.")
    threads: int = Field(default=2, ge=1, description="CPU threads for the local embedding model.")
    batch_size: int = Field(
        default=8, ge=1, description="Texts per embedding batch (8 measured fastest per CPU-second, least memory)."
    )
    cache: bool = Field(
        default=True,
        description="Keep computed embeddings on disk, keyed by (model, text hash): re-ingests embed nothing twice.",
    )


class ChunkSettings(_Group):
    max_tokens: int = Field(
        default=220, ge=16, description="Largest chunk in tokens (tiktoken); an abstract that fits stays one chunk."
    )
    overlap: int = Field(default=40, ge=0, description="Tokens shared by consecutive chunks of one abstract.")
    encoding: str = Field(default="cl100k_base", description="tiktoken encoding used to count tokens.")


class RetrievalSettings(_Group):
    k: int = Field(default=5, ge=1, le=100, description="Papers returned per search / shown to the LLM.")
    mode: Literal["hybrid", "dense", "bm25"] = Field(
        default="hybrid", description="Dense + BM25 fused by RRF, or one of them alone."
    )
    rrf_k: int = Field(default=60, ge=1, description="Reciprocal-rank-fusion constant.")
    candidates: int = Field(default=50, ge=1, description="Candidates taken from each retriever before fusion.")


class LLMSettings(_Group):
    base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp). Empty: the embedded local model.",
    )
    model: str = Field(default="qwen2.5-coder-1.5b-instruct-q4_k_m", description="Model name sent to the endpoint.")
    api_key: SecretStr | None = Field(default=None, description="API key of the endpoint (never logged).")
    temperature: float = Field(default=0.0, ge=0.0, le=2.0, description="Sampling temperature.")
    max_tokens: int = Field(default=160, ge=1, description="Longest answer in tokens.")
    timeout: float = Field(
        default=180.0,
        gt=0,
        description="Seconds the LLM may stay silent (connecting, before its first byte, between streamed chunks) "
        "before the request fails.",
    )
    max_retries: int = Field(
        default=1,
        ge=0,
        description="Retries, with exponential backoff, on connection errors, timeouts, 429 and 5xx; "
        "never once tokens have streamed.",
    )
    gguf: Path | None = Field(
        default=None,
        description="A GGUF model file of your own for the embedded llama.cpp server (`rag llm use PATH`), checked "
        "before it starts; empty: the bundled Qwen2.5-Coder-1.5B.",
    )
    think_budget: int | None = Field(
        default=None,
        ge=0,
        description="Tokens a reasoning model may spend in its <think> block, on top of max_tokens; empty: 1024 for "
        "a GGUF whose chat template has <think>, else 0.",
    )
    threads: int = Field(default=2, ge=1, description="CPU threads of the embedded llama.cpp server.")
    ctx: int = Field(default=4096, ge=512, description="Context window of the embedded llama.cpp server.")
    native: bool = Field(
        default=True,
        description="Run the embedded model on llama.cpp compiled for this CPU by `rag llm build` when that build "
        "exists (answers 1.3x faster here); false: always the bundled llama.cpp wheel (xllamacpp).",
    )
    keep_alive: float = Field(
        default=300.0,
        ge=0,
        description="Seconds the embedded LLM server stays loaded after its last use, shared by every `rag` "
        "command of this user (`rag llm status`, `rag llm stop`); 0: each process starts and stops its own.",
    )
    max_concurrent: int = Field(
        default=1,
        ge=1,
        description="LLM answers generated at once; the rest wait in line (the embedded server decodes one at a "
        "time, so more only splits its speed).",
    )
    max_waiting: int = Field(
        default=24,
        ge=0,
        description="Questions that may wait for the LLM; one more is turned away at once (HTTP 503 with "
        "Retry-After, a message in the UI) rather than left to time out.",
    )


class AnswerSettings(_Group):
    mode: Literal["llm", "extractive"] = Field(
        default="llm", description="'extractive' answers with cited sentences, no LLM."
    )
    context_tokens: int = Field(
        default=200,
        ge=50,
        description="Token budget of the evidence shown to the LLM for a lookup (200: gold evidence recall 0.98, "
        "python -m rag.evaluation.bench evidence).",
    )
    yesno_context_tokens: int = Field(
        default=200, ge=50, description="Token budget of the evidence shown to the LLM for a yes/no question."
    )
    yesno_bias: tuple[float, float, float] = Field(
        default=(0.0, 0.0, 0.0),
        description="Added to P(yes), P(no), P(not stated) before the largest wins (calibrated on PubMedQA dev).",
    )
    list_full_scan: int = Field(
        default=60, ge=1, description="A list question judges every paper of a (filtered) collection up to this size."
    )
    list_candidates: int = Field(
        default=80, ge=1, description="Larger collections: the most relevant papers (hybrid retrieval) judged at most."
    )
    list_min_judged: int = Field(default=20, ge=1, description="Larger collections: papers judged before stopping.")
    list_patience: int = Field(
        default=15, ge=1, description="Larger collections: stop after this many rejections in a row."
    )
    list_min_yes: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        description="A paper is listed when the judge's P(yes) reaches this (0.7: gold lists macro P 0.89, R 0.77 "
        "on one judgement; 0.5: P 0.56, R 0.85).",
    )
    list_recheck_from: float = Field(
        default=0.45,
        ge=0.0,
        le=1.0,
        description="A paper judged between this and list_min_yes is judged again on more of its abstract.",
    )
    list_recheck_tokens: int = Field(
        default=110, ge=20, description="Tokens of a paper's best sentences the second judgement reads."
    )
    list_sentence_tokens: int = Field(
        default=45, ge=20, description="Tokens of a paper's best sentences the list judge reads (plus its title)."
    )
    list_relative_floor: float = Field(
        default=0.2,
        ge=0.0,
        le=1.0,
        description="Papers whose best sentence scores under this share of the best paper's are not judged "
        "(0.2 kept 98 % of the gold lists' papers and skipped ~19 % of the judgements).",
    )
    list_extractive_floor: float = Field(
        default=0.6,
        description="Extractive mode (no LLM): a paper is listed when its best sentence scores this + 0.25.",
    )
    table_max_papers: int = Field(default=10, ge=1, description="Rows of a table at most (its k).")
    table_tokens_per_attribute: int = Field(
        default=72,
        ge=4,
        description="Tokens the model may write for one table cell (72: gold table cells 0.713; at 48 long main "
        "findings were cut off, and a cut value is not read).",
    )
    compare_context_tokens: int = Field(
        default=160, ge=30, description="Token budget of each paper's evidence in a comparison."
    )
    compare_max_tokens: int = Field(default=90, ge=10, description="Longest answer about one paper in a comparison.")
    compare_max_papers: int = Field(default=4, ge=2, description="Papers in one comparison at most.")
    compare_margin: float = Field(
        default=0.08,
        ge=0.0,
        description="No paper named: compare the retrieved papers whose cosine is within this of the best.",
    )
    min_relevance: float = Field(
        default=0.30, description="Refuse when no chunk reaches this cosine similarity and the question names no paper."
    )
    min_support: float = Field(
        default=0.60,
        description="A sentence with a lower support score is unsupported "
        "(measured by `python -m rag.evaluation.bench calibrate`).",
    )
    max_question_chars: int = Field(default=2000, ge=1, description="Longer questions are rejected.")


class CheckSettings(_Group):
    """The claim check (`rag check`, `Assistant.check`, `POST /v1/check`)."""

    k: int = Field(default=10, ge=1, le=50, description="Papers retrieved and judged for a claim.")
    sentences: int = Field(
        default=2, ge=1, le=8, description="Sentences of each abstract the judge reads (the best for the claim)."
    )
    min_probability: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        description="A paper counts towards the verdict when its stance (supports/refutes) is at least this probable.",
    )
    skip_far: bool = Field(
        default=True,
        description=(
            "A paper whose best sentences are far from the claim (MiniLM cosine under 0.4, or under 0.5 with under "
            "30% of the claim's content words) is called not stated without asking the model: on SciFact a third "
            "of the retrieved papers and 2.4% of the evidence papers, which the model's judge called not stated "
            "anyway 14 times in 15. The judge reads MiniLM cosines whatever the index's embedder."
        ),
    )


class ServerSettings(_Group):
    host: str = Field(
        default="127.0.0.1", description="Address `rag serve` binds to; a non-loopback one requires an API token."
    )
    port: int = Field(default=8080, ge=1, le=65535, description="Port of `rag serve`.")
    api_token: SecretStr | None = Field(
        default=None,
        description="Bearer token the HTTP API requires (`Authorization: Bearer ...`); empty: no auth, loopback only.",
    )
    max_upload_bytes: int = Field(
        default=20_000_000, ge=1, description="Largest request body `POST /v1/ingest` accepts."
    )


class UISettings(_Group):
    host: str = Field(
        default="127.0.0.1", description="Address `rag ui` binds to; any non-loopback address requires `auth`."
    )
    port: int = Field(default=7860, ge=1, le=65535, description="Port of `rag ui`.")
    auth: SecretStr | None = Field(
        default=None, description="Login of the web UI as 'user:password' (RAG_UI_AUTH works too)."
    )
    feedback_file: Path | None = Field(
        default=None,
        description="JSONL file the UI's thumbs up/down are appended to; empty: feedback.jsonl in the data dir.",
    )
    max_upload_bytes: int = Field(
        default=20_000_000,
        ge=1,
        description="Largest file the UI's Corpus tab indexes; a larger upload is rejected before anything is read.",
    )

    @field_validator("auth")
    @classmethod
    def _check_auth(cls, v: SecretStr | None) -> SecretStr | None:
        if v is None or not v.get_secret_value():
            return None
        user, sep, password = v.get_secret_value().partition(":")
        if not sep or not user or not password:
            raise ValueError("must be 'user:password'")
        return v


class Settings(BaseSettings):
    """Every setting of the assistant. Build with :func:`get_settings`."""

    model_config = SettingsConfigDict(
        env_prefix="RAG_", env_nested_delimiter="__", env_file=".env", extra="forbid", validate_default=True
    )

    data_dir: Path = Field(
        default_factory=default_data_dir, description="Where the index, BM25 and caches live (RAG_DATA_DIR)."
    )
    cache_dir: Path = Field(
        default_factory=default_cache_dir, description="Where the assembled local LLM is kept (RAG_CACHE_DIR)."
    )
    chroma_url: str | None = Field(
        default=None, description="Chroma server URL (RAG_CHROMA_URL); empty: embedded on disk."
    )
    collection: str = Field(default="abstracts", min_length=3, description="Chroma collection name.")
    embedding: EmbeddingSettings = EmbeddingSettings()
    chunking: ChunkSettings = ChunkSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    llm: LLMSettings = LLMSettings()
    answer: AnswerSettings = AnswerSettings()
    check: CheckSettings = CheckSettings()
    ui: UISettings = UISettings()
    server: ServerSettings = ServerSettings()

    @field_validator("chroma_url")
    @classmethod
    def _check_url(cls, v: str | None) -> str | None:
        if v and not v.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {v!r}")
        return v or None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = os.environ.get("RAG_CONFIG") or "rag.toml"
        return (
            init_settings,
            _FlatAliases(settings_cls),
            env_settings,
            dotenv_settings,
            TomlConfigSettingsSource(settings_cls, toml_file=toml),
        )

    def masked(self) -> dict[str, Any]:
        """The effective settings as JSON-able data, secrets shown as '**********' (credentials in URLs as '***')."""
        return _mask(self.model_dump(mode="json"), self)

    def feedback_path(self) -> Path:
        """Where the UI appends feedback (``ui.feedback_file``, else ``data_dir/feedback.jsonl``)."""
        return Path(self.ui.feedback_file or Path(self.data_dir) / "feedback.jsonl").expanduser()

    def conversations_dir(self) -> Path:
        """Where the UI keeps saved conversations (``data_dir/conversations``, one folder per user)."""
        return Path(self.data_dir).expanduser() / "conversations"


# Flat names promised to users, mapped onto nested fields.
_ALIASES = {
    "RAG_LLM_BASE_URL": ("llm", "base_url"),
    "RAG_LLM_MODEL": ("llm", "model"),
    "RAG_LLM_API_KEY": ("llm", "api_key"),
    "RAG_EMBEDDING_BASE_URL": ("embedding", "base_url"),
    "RAG_EMBEDDING_API_KEY": ("embedding", "api_key"),
    "RAG_UI_AUTH": ("ui", "auth"),
}


class _FlatAliases(PydanticBaseSettingsSource):
    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover - unused
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for env, (group, key) in _ALIASES.items():
            if os.environ.get(env):
                out.setdefault(group, {})[key] = os.environ[env]
        return out


def _mask(data: dict[str, Any], model: BaseModel) -> dict[str, Any]:
    for name, value in list(data.items()):
        attr = getattr(model, name, None)
        if isinstance(attr, SecretStr):
            data[name] = "**********"
        elif isinstance(attr, BaseModel) and isinstance(value, dict):
            data[name] = _mask(value, attr)
        elif name.endswith("url") and isinstance(value, str):
            data[name] = redact(value)  # http://user:password@host -> http://***@host
    return data


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(settings: Settings, host: str, surface: Literal["ui", "server"]) -> None:
    """Refuse to serve ``surface`` beyond this machine without a login (the one place for this rule).

    The web UI needs ``RAG_UI__AUTH``; the HTTP API needs ``RAG_SERVER__API_TOKEN``. Loopback needs neither.
    """
    if is_loopback(host):
        return
    if surface == "ui" and settings.ui.auth is None:
        raise ConfigError(
            f"Refusing to serve the UI on {host} without a login: set RAG_UI__AUTH=user:password "
            "(or RAG_UI_AUTH), or bind to 127.0.0.1."
        )
    if surface == "server" and settings.server.api_token is None:
        raise ConfigError(
            f"Refusing to serve on {host} without authentication: set RAG_SERVER__API_TOKEN "
            "(clients send 'Authorization: Bearer <token>'), or bind to 127.0.0.1."
        )


def get_settings(**overrides: Any) -> Settings:
    """Read settings once; a bad value raises :class:`ConfigError` naming the setting."""
    try:
        return Settings(**overrides)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            for err in e.errors(include_url=False, include_input=False)
        )
        raise ConfigError(f"Invalid settings: {problems}") from e
    except (OSError, ValueError) as e:
        raise ConfigError(f"Cannot read settings: {e}") from e


def settings_table() -> str:
    """The settings as a Markdown table, embedded in docs/configuration.md (a test keeps the two in sync)."""
    rows = ["| environment variable | default | meaning |", "|---|---|---|"]

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, f in model.model_fields.items():
            ann = f.annotation
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                walk(ann, f"{prefix}{name.upper()}__")
                continue
            if name in ("data_dir", "cache_dir"):
                default = {"data_dir": "~/.local/share/rag-abstracts", "cache_dir": "~/.cache/rag-abstracts"}[name]
            else:
                default = "" if f.default is None else str(f.default)
            rows.append(f"| `{prefix}{name.upper()}` | `{default}` | {f.description or ''} |")

    walk(Settings, "RAG_")
    return "\n".join(rows)

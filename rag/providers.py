"""Builds the models from settings: the ONLY module that names a vendor SDK.

One code path for chat: ``ChatOpenAI`` against any OpenAI-compatible endpoint, the embedded
llama.cpp server included. Embeddings: the bundled MiniLM (ONNX) or any OpenAI-compatible
embeddings endpoint, both behind an on-disk cache keyed by (model, text hash).
"""

from __future__ import annotations

import logging
from pathlib import Path

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from rag.embedding import LOCAL_MODELS, CachedEmbeddings, EmbeddingCache, MiniLMEmbeddings, WordLlamaEmbeddings
from rag.errors import BackendError, ConfigError, redact
from rag.settings import Settings

_HTTP_LOGGERS = ("openai", "httpx", "httpx2", "httpcore", "httpcore2", "langchain_openai")


class _RedactingFilter(logging.Filter):
    """Masks the configured API keys in the HTTP stack's debug log: httpcore logs response headers, and a
    server or proxy that echoes the Authorization header back would put the key there."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact(message, *self.secrets)
        if masked != message:
            record.msg, record.args = masked, None
        return True


_LOG_FILTER = _RedactingFilter()


def _mask_in_http_logs(secret: str | None) -> None:
    if not secret:
        return
    _LOG_FILTER.secrets.add(secret)
    # a logger's filters see only the records logged to that logger, not to its children: attach to each one
    names = {n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in _HTTP_LOGGERS} | set(_HTTP_LOGGERS)
    for name in names:
        logger = logging.getLogger(name)
        if _LOG_FILTER not in logger.filters:
            logger.addFilter(_LOG_FILTER)


def make_embeddings(settings: Settings, *, cache: bool = True) -> Embeddings:
    """The embedding model the settings name, wrapped in the on-disk cache."""
    s = settings.embedding
    inner: Embeddings
    if s.provider == "local":
        if s.model not in LOCAL_MODELS:
            raise ConfigError(
                f"The local embedding provider has {sorted(LOCAL_MODELS)}, not {s.model!r}; set "
                "RAG_EMBEDDING__MODEL to one of them, or RAG_EMBEDDING__PROVIDER=openai with RAG_EMBEDDING_BASE_URL."
            )
        if s.model == WordLlamaEmbeddings.model_name:
            inner = WordLlamaEmbeddings()
        else:
            inner = MiniLMEmbeddings(threads=s.threads, batch_size=s.batch_size)
    else:
        if not s.base_url:
            raise ConfigError("RAG_EMBEDDING__PROVIDER=openai needs RAG_EMBEDDING_BASE_URL (e.g. http://127.0.0.1:8000/v1).")
        from langchain_openai import OpenAIEmbeddings

        _mask_in_http_logs(s.api_key.get_secret_value() if s.api_key else None)
        inner = OpenAIEmbeddings(
            model=s.model,
            base_url=s.base_url,
            api_key=s.api_key or "not-needed",  # type: ignore[arg-type]
            check_embedding_ctx_length=False,  # tokenising with tiktoken is wrong for non-OpenAI models
            chunk_size=s.batch_size,
        )
    if not cache:
        return inner
    cache_file = Path(settings.data_dir).expanduser() / "embedding-cache.sqlite"
    return CachedEmbeddings(inner, EmbeddingCache(cache_file), model_name=s.model)


def make_chat_model(settings: Settings, *, streaming: bool = True) -> BaseChatModel:
    """``ChatOpenAI`` against the configured endpoint, or the embedded llama.cpp server (started lazily here).

    A configured endpoint is used as given: if it is down, the caller gets a :class:`BackendError`,
    never a silent fallback to the local model.
    """
    from langchain_openai import ChatOpenAI

    s = settings.llm
    if s.base_url:
        base_url = s.base_url
        api_key = s.api_key.get_secret_value() if s.api_key else "not-needed"
        _mask_in_http_logs(s.api_key.get_secret_value() if s.api_key else None)
    else:
        from rag.local_llm import get_local_server

        server = get_local_server(s.model, Path(settings.cache_dir).expanduser(), threads=s.threads, ctx=s.ctx)
        base_url = server.base_url or ""
        api_key = "local"
    return ChatOpenAI(
        model=s.model,
        base_url=base_url,
        api_key=api_key,  # type: ignore[arg-type]
        temperature=s.temperature,
        max_tokens=s.max_tokens,  # type: ignore[call-arg]
        timeout=s.timeout,
        max_retries=s.max_retries,
        streaming=streaming,
        stream_usage=True,
    )


def describe_llm_error(error: Exception, settings: Settings) -> BackendError:
    """A one-line, key-free explanation of a failed LLM call."""
    import openai

    s = settings.llm
    where = f"LLM server at {s.base_url}" if s.base_url else "embedded LLM server"
    secret = s.api_key.get_secret_value() if s.api_key else None
    if isinstance(error, openai.APITimeoutError):
        msg = f"The {where} did not answer within {s.timeout:.0f} s (RAG_LLM__TIMEOUT)."
    elif isinstance(error, openai.APIConnectionError):
        msg = f"Cannot reach the {where}: is it running? Check RAG_LLM_BASE_URL."
    elif isinstance(error, openai.AuthenticationError):
        msg = f"The {where} rejected the API key: check RAG_LLM_API_KEY."
    elif isinstance(error, openai.NotFoundError):
        msg = f"The {where} does not serve model {s.model!r} (RAG_LLM_MODEL) or the URL lacks /v1: {error}"
    elif isinstance(error, openai.APIStatusError):
        msg = f"The {where} failed with HTTP {error.status_code}: {error.message}"
    else:
        msg = f"The {where} failed: {type(error).__name__}: {error}"
    return BackendError(redact(msg, secret))

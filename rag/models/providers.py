"""Builds the models from settings: the ONLY module that names a vendor SDK.

One code path for chat: ``ChatOpenAI`` against any OpenAI-compatible endpoint, the embedded
llama.cpp server included. Embeddings: the bundled MiniLM (ONNX) or any OpenAI-compatible
embeddings endpoint, both behind an on-disk cache keyed by (model, text hash).
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings
from pydantic import SecretStr

from rag.errors import BackendError, ConfigError, redact
from rag.models.embedding import (
    LOCAL_MODELS,
    CachedEmbeddings,
    E5SmallEmbeddings,
    EmbeddingCache,
    MiniLMEmbeddings,
    WordLlamaEmbeddings,
)
from rag.models.local_llm import served_model_name, shared_server, user_model
from rag.settings import Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_openai import ChatOpenAI

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


def make_embeddings(settings: Settings) -> Embeddings:
    """The embedding model the settings name, wrapped in the on-disk cache unless ``embedding.cache`` is off."""
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
        elif s.model == E5SmallEmbeddings.model_name:
            inner = E5SmallEmbeddings(threads=s.threads)
        else:
            inner = MiniLMEmbeddings(threads=s.threads, batch_size=s.batch_size)
    else:
        if not s.base_url:
            raise ConfigError(
                "RAG_EMBEDDING__PROVIDER=openai needs RAG_EMBEDDING_BASE_URL (e.g. http://127.0.0.1:8000/v1)."
            )
        from langchain_openai import OpenAIEmbeddings  # optional heavy dependency: only for an embeddings endpoint

        _mask_in_http_logs(s.api_key.get_secret_value() if s.api_key else None)
        inner = _EndpointEmbeddings(
            # field names, not their aliases (base_url, api_key, timeout): pydantic takes both (populate_by_name),
            # and mypy's pydantic plugin types such a model's __init__ with the field names only
            OpenAIEmbeddings(
                model=s.model,
                openai_api_base=s.base_url,
                openai_api_key=s.api_key or SecretStr("not-needed"),
                check_embedding_ctx_length=False,  # tokenising with tiktoken is wrong for non-OpenAI models
                chunk_size=s.batch_size,
                max_retries=2,
                request_timeout=60.0,
            ),
            s.base_url,
            s.api_key.get_secret_value() if s.api_key else None,
        )
    if not s.cache:
        return inner
    cache_file = Path(settings.data_dir).expanduser() / "embedding-cache.sqlite"
    return CachedEmbeddings(inner, EmbeddingCache(cache_file), model_name=s.model)


class StreamError(Exception):
    """The LLM endpoint answered, but its stream broke off or is not an OpenAI chat-completions stream.

    Never retried: the endpoint is up but misbehaving, and once tokens are shown, asking again would show a
    second, different draft. ``chars`` is how much of the answer had streamed (and is now discarded).
    """

    def __init__(self, what: str, chars: int = 0) -> None:
        super().__init__(what)
        self.chars = chars


@functools.cache
def _checked_chat_openai() -> type[ChatOpenAI]:
    """``ChatOpenAI`` whose stream must end with a ``finish_reason``: a stream cut short, garbage, or a
    connection lost mid-answer raises :class:`StreamError` instead of passing for a (short) answer."""
    import openai  # optional heavy dependency: the OpenAI SDK, only when a chat model is made
    from langchain_core.messages import AIMessageChunk  # optional heavy dependency: as openai
    from langchain_core.outputs import ChatGenerationChunk  # optional heavy dependency: as openai
    from langchain_openai import ChatOpenAI  # optional heavy dependency: ~1 s with openai, only for a chat model

    class CheckedChatOpenAI(ChatOpenAI):
        def _convert_chunk_to_generation_chunk(
            self, chunk: dict[str, Any], default_chunk_class: type, base_generation_info: dict[str, Any] | None
        ) -> ChatGenerationChunk | None:
            out = super()._convert_chunk_to_generation_chunk(chunk, default_chunk_class, base_generation_info)
            choices = chunk.get("choices") or [{}]
            thought = (choices[0].get("delta") or {}).get("reasoning_content")
            if out is not None and thought:  # kept for _stream, which wraps it in a <think> block
                out.message.additional_kwargs["reasoning_content"] = thought
            return out

        def _create_chat_result(self, response: Any, generation_info: dict[str, Any] | None = None) -> Any:
            result = super()._create_chat_result(response, generation_info)
            data = response if isinstance(response, dict) else response.model_dump()
            for generation, choice in zip(result.generations, data.get("choices") or []):
                thought = (choice.get("message") or {}).get("reasoning_content")
                if thought and isinstance(generation.message.content, str):
                    generation.message.content = f"<think>{thought}</think>{generation.message.content}"
                    generation.text = generation.message.content
            return result

        def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
            chars, started, finished = 0, False, False
            inline = ReasoningInliner()
            try:
                for chunk in super()._stream(*args, **kwargs):
                    started = True
                    finished = finished or bool((chunk.generation_info or {}).get("finish_reason"))
                    thought = chunk.message.additional_kwargs.pop("reasoning_content", None)
                    text = inline.wrap(str(thought or ""), chunk.text)
                    if text != chunk.text:
                        chunk.message.content = chunk.text = text
                    chars += len(chunk.text)
                    yield chunk
                if closing := inline.close():
                    yield ChatGenerationChunk(message=AIMessageChunk(content=closing))
            except json.JSONDecodeError as e:
                raise StreamError("sent a malformed stream (a `data:` line is not valid JSON)", chars) from e
            except openai.APITimeoutError as e:  # httpx's read timeout: the longest silence between two chunks
                if not started:
                    raise
                raise StreamError(
                    f"stopped sending for {self.request_timeout:g} s in the middle of the answer", chars
                ) from e
            except openai.APIConnectionError as e:
                if not started:
                    raise
                raise StreamError("dropped the connection in the middle of the answer", chars) from e
            if not started:
                raise StreamError(
                    "sent no answer: its response is not an OpenAI chat-completions stream "
                    "(does RAG_LLM_BASE_URL end in /v1?)"
                )
            if not finished:
                raise StreamError("ended the stream before the answer was complete (no finish_reason)", chars)

    return CheckedChatOpenAI


class ReasoningInliner:
    """Puts the reasoning an endpoint streams apart (``reasoning_content``: llama.cpp's server with a reasoning
    model, DeepSeek, vLLM) back into the text as a ``<think>`` block, so that one parser
    (:mod:`rag.answering.reasoning`) keeps it out of answers whichever way an endpoint sends it."""

    def __init__(self) -> None:
        self.open = False

    def wrap(self, reasoning: str, content: str) -> str:
        """The text of one chunk: ``content``, with ``reasoning`` inside a block opened and closed as needed."""
        out = ""
        if reasoning:
            out += reasoning if self.open else "<think>" + reasoning
            self.open = True
        if content and self.open:
            out += "</think>"
            self.open = False
        return out + content

    def close(self) -> str:
        """What ends the stream: the closing tag when it ended inside the reasoning."""
        if self.open:
            self.open = False
            return "</think>"
        return ""


DEFAULT_THINK_BUDGET = 1024


def think_budget(settings: Settings) -> int:
    """The tokens added to ``max_tokens`` for a reasoning model's <think> block: ``llm.think_budget`` when set, else
    1024 for the user's GGUF whose chat template has <think>, else 0 (the bundled model does not reason)."""
    s = settings.llm
    if s.think_budget is not None:
        return s.think_budget
    if s.base_url is None and s.gguf is not None:
        gguf = user_model(settings)
        return DEFAULT_THINK_BUDGET if gguf is not None and gguf.info.reasons else 0
    return 0


def _bounded_retry_client(
    base_url: str, api_key: str, timeout: float, max_retries: int, follow: Callable[[], str] | None = None
) -> Any:
    """The ``openai`` client, except that a ``Retry-After`` longer than ``timeout`` is not waited for.

    The SDK honours Retry-After up to 120 s per retry: a rate-limited question would hang for minutes
    with ``timeout=2``. Failing at once, with the wait in the message, keeps every fault within the timeout.
    (``_should_retry`` is the SDK's hook for this decision; it has kept that name since openai 1.0.)

    ``follow`` (the shared embedded server): called before every request, returns the server's current
    address, and the request goes there; so a client outlives the server's idle stops and restarts.
    """
    import openai  # optional heavy dependency: as above

    http_client = None
    if follow is not None:
        import httpx  # optional heavy dependency: only to follow the shared server

        def redirect(request: httpx.Request) -> None:
            now = httpx.URL(follow())
            if (request.url.host, request.url.port) != (now.host, now.port):
                request.url = request.url.copy_with(host=now.host, port=now.port)
                request.headers["host"] = f"{now.host}:{now.port}"

        http_client = openai.DefaultHttpxClient(event_hooks={"request": [redirect]})

    class BoundedRetryOpenAI(openai.OpenAI):
        def _should_retry(self, response: Any) -> bool:
            wait = self._parse_retry_after_header(response.headers)
            if wait is not None and wait > timeout:
                return False
            return bool(super()._should_retry(response))

    return BoundedRetryOpenAI(
        base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries, http_client=http_client
    )


class _EndpointEmbeddings(Embeddings):
    """An OpenAI-compatible embeddings client whose failures are one-line, key-free BackendErrors."""

    def __init__(self, inner: Embeddings, base_url: str, api_key: str | None) -> None:
        self.inner, self.base_url, self._key = inner, base_url, api_key
        self.model_name = getattr(inner, "model", None)

    def _fail(self, e: Exception) -> BackendError:
        return BackendError(
            redact(f"The embeddings endpoint {self.base_url} failed: {type(e).__name__}: {e}", self._key)
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        try:
            return self.inner.embed_documents(texts)
        except Exception as e:  # openai raises connection, timeout, status and decoding errors
            raise self._fail(e) from e

    def embed_query(self, text: str) -> list[float]:
        try:
            return self.inner.embed_query(text)
        except Exception as e:
            raise self._fail(e) from e


def make_chat_model(settings: Settings, *, streaming: bool = True) -> BaseChatModel:
    """``ChatOpenAI`` against the configured endpoint, or the embedded llama.cpp server (started lazily here).

    A configured endpoint is used as given: if it is down, the caller gets a :class:`BackendError`,
    never a silent fallback to the local model. The ``openai`` client retries connection errors,
    timeouts, 408/409/429 and 5xx ``max_retries`` times with exponential backoff (0.5 s, 1 s, 2 s ... minus
    up to 25% jitter; a Retry-After up to ``timeout`` instead), always before any token has streamed.
    """
    s = settings.llm
    follow = None
    if s.base_url:
        base_url = s.base_url
        api_key = s.api_key.get_secret_value() if s.api_key else "not-needed"
        _mask_in_http_logs(s.api_key.get_secret_value() if s.api_key else None)
    else:
        server = shared_server(settings)
        base_url = server.base_url or ""
        api_key = server.api_key
        follow = getattr(server, "ensure", None)  # the shared server: followed across its restarts
    root = _bounded_retry_client(base_url, api_key, s.timeout, s.max_retries, follow)
    return _checked_chat_openai()(  # field names, not their aliases: see make_embeddings
        model_name=s.model if s.base_url else served_model_name(settings),
        openai_api_base=base_url,
        openai_api_key=SecretStr(api_key),
        root_client=root,
        client=root.chat.completions,
        temperature=s.temperature,
        max_tokens=s.max_tokens + think_budget(settings),  # a <think> block is not counted against the answer
        request_timeout=s.timeout,
        max_retries=s.max_retries,
        streaming=streaming,
        stream_usage=True,
    )


def is_llm_failure(error: Exception) -> bool:
    """True for errors that mean the LLM endpoint cannot answer now (after the client's own retries)."""
    import openai  # optional heavy dependency: loaded by then if a chat model was made

    return isinstance(error, (openai.APIError, StreamError))


def describe_llm_error(error: Exception, settings: Settings) -> BackendError:
    """A one-line, key-free explanation of a failed LLM call: which server, what happened, what to do."""
    import openai  # optional heavy dependency: loaded by then if a chat model was made

    s = settings.llm
    where = f"LLM server at {s.base_url}" if s.base_url else "embedded LLM server"
    secret = s.api_key.get_secret_value() if s.api_key else None
    tries = f"{s.max_retries + 1} attempts" if s.max_retries else "1 attempt, RAG_LLM__MAX_RETRIES=0"
    if isinstance(error, StreamError):
        msg = f"The {where} {error}."
        if error.chars:
            msg += (
                f" The partial answer ({error.chars} characters) was discarded, "
                "and not retried since it had been shown: ask again."
            )
        else:
            msg += " Check the server's log."
    elif isinstance(error, openai.APITimeoutError):
        msg = (
            f"The {where} did not answer within {s.timeout:g} s ({tries}): is it overloaded? "
            "Raise RAG_LLM__TIMEOUT or try later."
        )
    elif isinstance(error, openai.APIConnectionError):
        fix = "Check RAG_LLM_BASE_URL." if s.base_url else "It is restarted on the next question."
        msg = f"Cannot reach the {where} ({tries}): is it running? {fix}"
    elif isinstance(error, openai.AuthenticationError):
        msg = f"The {where} rejected the API key: check RAG_LLM_API_KEY."
    elif isinstance(error, openai.NotFoundError):
        msg = f"The {where} does not serve model {s.model!r} (RAG_LLM_MODEL) or the URL lacks /v1: {_detail(error)}"
    elif isinstance(error, openai.RateLimitError):
        wait = _retry_after(error)
        if wait is not None and wait > s.timeout:
            msg = (
                f"The {where} is rate-limiting requests (HTTP 429) and asks to wait {wait:g} s, longer than "
                f"RAG_LLM__TIMEOUT ({s.timeout:g} s): ask again later."
            )
        else:
            msg = f"The {where} is rate-limiting requests (HTTP 429, {tries}): {_detail(error)}. Ask again later."
    elif isinstance(error, openai.APIStatusError):
        retried = error.status_code >= 500 or error.status_code in (408, 409)
        msg = f"The {where} failed with HTTP {error.status_code}" + (f" ({tries})" if retried else "")
        msg += f": {_detail(error)}. Check the server's log."
    else:
        msg = f"The {where} failed: {type(error).__name__}: {error}"
    return BackendError(redact(" ".join(msg.split()), secret))


def _detail(error: Any) -> str:
    """The server's own error text, without the SDK's 'Error code: 500 - ' prefix, at most 200 characters."""
    text = re.sub(r"^Error code: \d+ - ", "", str(getattr(error, "message", "") or error)).strip()
    return text if len(text) <= 200 else text[:199] + "…"


def _retry_after(error: Any) -> float | None:
    try:
        return float(error.response.headers.get("retry-after"))
    except (AttributeError, TypeError, ValueError):
        return None

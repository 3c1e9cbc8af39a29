"""Builds the models from settings: the ONLY module that names a vendor SDK.

One code path for chat: ``ChatOpenAI`` against any OpenAI-compatible endpoint, the embedded
llama.cpp server included. Embeddings: the bundled MiniLM (ONNX) or any OpenAI-compatible
embeddings endpoint, both behind an on-disk cache keyed by (model, text hash).
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.embeddings import Embeddings

from rag.embedding import CachedEmbeddings, EmbeddingCache, MiniLMEmbeddings
from rag.errors import ConfigError
from rag.settings import Settings


def make_embeddings(settings: Settings, *, cache: bool = True) -> Embeddings:
    """The embedding model the settings name, wrapped in the on-disk cache."""
    s = settings.embedding
    inner: Embeddings
    if s.provider == "local":
        if s.model != MiniLMEmbeddings.model_name:
            raise ConfigError(
                f"The local embedding provider ships only {MiniLMEmbeddings.model_name!r}, not {s.model!r}; "
                "set RAG_EMBEDDING__MODEL accordingly or RAG_EMBEDDING__PROVIDER=openai with RAG_EMBEDDING_BASE_URL."
            )
        inner = MiniLMEmbeddings(threads=s.threads, batch_size=s.batch_size)
    else:
        if not s.base_url:
            raise ConfigError("RAG_EMBEDDING__PROVIDER=openai needs RAG_EMBEDDING_BASE_URL (e.g. http://127.0.0.1:8000/v1).")
        from langchain_openai import OpenAIEmbeddings

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

"""The corpus room: files of abstracts -> validated :class:`~rag.types.Paper` records -> token-aware chunks.

``readers`` picks a reader by file suffix and dedupes; ``records`` validates one record; ``text``
normalises LaTeX/Markdown for indexing; ``tokens`` cuts text into words for BM25, evidence scoring,
verification and the fact checks, and holds the stopword lists and paper-name patterns; ``titles``
derives display titles; ``chunking`` cuts abstracts into sentence-aligned, token-bounded chunks with
offsets into the original text.
"""

from rag.corpus.chunking import chunk_paper, count_tokens
from rag.corpus.display import format_display, format_display_html
from rag.corpus.readers import SUPPORTED_SUFFIXES, IngestResult, bundled_corpus, load_corpora, read_corpora, read_corpus
from rag.corpus.records import paper_id_for
from rag.corpus.text import normalise_text
from rag.corpus.titles import derive_title

__all__ = [
    "SUPPORTED_SUFFIXES",
    "IngestResult",
    "bundled_corpus",
    "chunk_paper",
    "count_tokens",
    "derive_title",
    "format_display",
    "format_display_html",
    "load_corpora",
    "normalise_text",
    "paper_id_for",
    "read_corpora",
    "read_corpus",
]

"""The answering spine's contracts: one path per question kind, keyword-only records, one home for tokenisers."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import pytest

from rag.answering.answers import AnswerPath
from rag.answering.evidence import Candidate
from rag.answering.paths import PATHS
from rag.answering.pipeline import Prepared
from rag.answering.verify import Evidence, SentenceVerdict
from rag.corpus.tokens import BM25_STOPWORDS, bm25_tokens
from rag.store.bm25 import BM25Store
from rag.types import QuestionKind


def test_every_question_kind_has_one_answer_path() -> None:
    assert set(PATHS) == set(typing.get_args(QuestionKind))
    for kind, path in PATHS.items():
        assert issubclass(path, AnswerPath) and path.kind == kind


@pytest.mark.parametrize("record", [Prepared, SentenceVerdict, Evidence, Candidate])
def test_records_are_built_by_keyword_only(record: type) -> None:
    fields = dataclasses.fields(record)
    assert fields and all(f.kw_only for f in fields)
    with pytest.raises(TypeError):
        record(*(None for _ in fields))


def test_bm25_stopwords_are_the_list_bm25_always_used() -> None:
    import bm25s  # the reference only: the package itself no longer imports it

    assert frozenset(bm25s.stopwords.STOPWORDS_EN) == BM25_STOPWORDS


def test_bm25_store_tokenises_as_the_tokens_module(tmp_path: Path) -> None:
    text = "The WildBox dataset's 237,505 boxes: state-of-the-art results on GSM8K, and it isn't running slowly."
    assert BM25Store(tmp_path).tokenize(text) == bm25_tokens(text)
    assert "wildbox" in bm25_tokens(text) and "the" not in bm25_tokens(text)

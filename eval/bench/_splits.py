"""The labelled sets of the question-kind and changed-fact benchmarks, by split, and the corpus each is over.

* ``dev``: what tests and tuning may read (eval/data/question_kinds_dev.jsonl, neurips2026_claims.jsonl);
* ``heldout``: eval/data/heldout/, frozen once by eval/tools/split_heldout.py and read only when a benchmark
  is asked for it (``--split heldout``) or by ``bench ablation`` (tests/test_heldout.py checks its bytes);
* ``fresh``: questions and claims written over SciFact abstracts and ml_abstracts titles before the rules were
  read (question_kinds_fresh.jsonl, scifact_claims.jsonl), over the 30 abstracts of scifact_claims_corpus.jsonl;
* ``terse`` (question kinds only): 40 search-box style questions written on 2026-12-05 before that day's rule
  change (question_kinds_terse.jsonl), and ``terse-after``: 24 written after it (question_kinds_terse_after.jsonl),
  over the same 30 abstracts.

The question-kind and claims splits over NeurIPS are asked of the bundled NeurIPS 2026 abstracts.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag import Assistant, get_settings

DATA = Path(__file__).resolve().parents[1] / "data"
SPLITS = ("dev", "heldout", "fresh")
FRESH_CORPUS = DATA / "scifact_claims_corpus.jsonl"


@dataclass(frozen=True)
class LabelledSet:
    """One labelled file and the corpus (None: the bundled NeurIPS abstracts) its questions are asked of."""

    split: str
    path: Path
    corpus: Path | None


KINDS = {
    "dev": LabelledSet("dev", DATA / "question_kinds_dev.jsonl", None),
    "heldout": LabelledSet("heldout", DATA / "heldout" / "question_kinds.jsonl", None),
    "fresh": LabelledSet("fresh", DATA / "question_kinds_fresh.jsonl", FRESH_CORPUS),
    "terse": LabelledSet("terse", DATA / "question_kinds_terse.jsonl", FRESH_CORPUS),
    "terse-after": LabelledSet("terse-after", DATA / "question_kinds_terse_after.jsonl", FRESH_CORPUS),
}
CLAIMS = {
    "dev": LabelledSet("dev", DATA / "neurips2026_claims.jsonl", None),
    "heldout": LabelledSet("heldout", DATA / "heldout" / "neurips2026_claims.jsonl", None),
    "fresh": LabelledSet("fresh", DATA / "scifact_claims.jsonl", FRESH_CORPUS),
}


def load_rows(path: Path) -> list[dict[str, Any]]:
    """The JSON rows of a labelled file (``//`` lines are comments)."""
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip().startswith("{")]


def wilson(right: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % Wilson score interval of ``right`` successes in ``n`` (sound at 0 and n, unlike the bootstrap)."""
    if n == 0:
        return 0.0, 1.0
    p = right / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@contextmanager
def indexed(corpus: Path | None) -> Iterator[Assistant]:
    """An assistant with ``corpus`` (None: the bundled NeurIPS abstracts) indexed in a temporary data dir."""
    with tempfile.TemporaryDirectory() as tmp:
        a = Assistant.from_settings(get_settings(data_dir=Path(tmp)))
        a.ingest([corpus or Assistant.bundled_corpus()])
        yield a

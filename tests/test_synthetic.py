"""The synthetic abstracts that stand in for real conference data in the scale and filter tests."""

from __future__ import annotations

import collections
import json
from pathlib import Path

from rag.corpus import read_corpus
from tests.synthetic import make_abstracts, write_abstracts


def test_same_seed_same_papers_and_a_prefix_for_fewer() -> None:
    papers = make_abstracts(2000, seed=3)
    assert make_abstracts(2000, seed=3) == papers
    assert make_abstracts(500, seed=3) == papers[:500]
    assert make_abstracts(500, seed=4) != papers[:500]


def test_ids_and_titles_are_distinct_and_lengths_look_real() -> None:
    papers = make_abstracts(5000)
    assert len({p["id"] for p in papers}) == len({p["title"] for p in papers}) == 5000
    words = sorted(len(p["abstract"].split()) for p in papers)
    assert 140 <= sum(words) / len(words) <= 190 and words[0] >= 40 and words[-1] <= 400  # real: 165, 35..393


def test_venues_are_skewed_like_real_conference_data() -> None:
    counts = collections.Counter(p["venue"] for p in make_abstracts(5000))
    shares = sorted((n / 5000 for n in counts.values()), reverse=True)
    assert 0.45 < shares[0] < 0.55 and 0.35 < shares[1] < 0.45
    assert len([s for s in shares if 0.004 <= s < 0.02]) >= 8  # many mid-sized venues
    assert shares[-1] < 0.004  # and rare ones


def test_written_corpus_reads_back_unchanged(tmp_path: Path) -> None:
    records = write_abstracts(tmp_path / "c.jsonl", 50, seed=1)
    papers = read_corpus(tmp_path / "c.jsonl")
    assert [p.paper_id for p in papers] == [r["id"] for r in records]
    assert papers[7].venue == records[7]["venue"] and papers[7].metadata["primary_area"] == records[7]["primary_area"]
    assert json.loads((tmp_path / "c.jsonl").read_text().splitlines()[0]) == records[0]

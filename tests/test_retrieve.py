"""Hybrid retrieval quality on the seed abstracts, filters, and the LangChain retriever adapter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from rag.types import Paper
from tests.conftest import paper_id_containing
from tests.synthetic import make_abstracts

# (paraphrased question, a snippet unique to the paper that must come first)
PARAPHRASES = [
    ("drone footage of zebras in 3D", "We introduce WildBox"),
    (
        "Can a plain transformer learn rotation and translation invariance from augmented training data?",
        "Symmetry Lottery",
    ),
    (
        "a classical dequantized algorithm for sampling sparse subnetworks with the ridgelet transform",
        "quantum-inspired fully classical",
    ),
    ("benchmark of AI agents reverse engineering mobile apps to find security bugs", "WiREBench"),
    (
        "why does in-context learning break when inputs are scaled outside the training range",
        "in-context learning (ICL)",
    ),
    pytest.param(
        "language models should inhibit competing answers instead of blending them",
        "cognitive control",
        marks=pytest.mark.xfail(strict=True, reason="measured miss: hybrid ranks CoCHI first, the right paper second"),
    ),
    (
        "turning continuous latent chain of thought into discrete tokens using rendered images",
        "Discrete Latent Reasoning",
    ),
    ("infinite-width limit of mixture-of-experts routers", "infinite-width limits of MoE"),
    ("why optimizing pass@k hurts pass@1", "pass@1 degrades"),
    ("3D medical image segmentation that generalizes across hospitals and scanners", "We present MaskGen"),
    ("heavy-tailed spectra of weight matrices predict how good a network is", "heavy-tailed spectral"),
    ("why long context windows help forecast related time series", "groups of time series"),
    ("multi-round image editing drifts; align low frequencies in the VAE latent", "VAE-LFA"),
    ("retargeting motion between different skeletons is not identifiable", "Cross-skeleton motion generation"),
    ("when should agents copy others instead of exploring on their own", "Social learning refers"),
    ("blood test for chronic kidney or liver fibrosis from circulating DNA", "Cell-free DNA"),
    ("reduce overconfidence of LLMs by intervening on attention heads", "CoCHI"),
    ("benchmark for finding which step caused an agent system to fail", "Who&When Pro"),
    ("find the parents of a target variable under additive noise with hidden confounders", "additive-noise model"),
]


def _pairs() -> list[tuple[str, str]]:
    return [tuple(p.values) if hasattr(p, "values") else p for p in PARAPHRASES]  # type: ignore[misc]


@pytest.mark.parametrize(("question", "snippet"), PARAPHRASES, ids=[q[:40] for q, _ in _pairs()])
def test_paraphrased_question_finds_its_paper_first(seed_assistant: Any, question: str, snippet: str) -> None:
    expected = paper_id_containing(seed_assistant, snippet)
    hits = seed_assistant.search(question, k=3)
    assert hits[0].paper_id == expected, [h.title for h in hits]


def test_hybrid_finds_every_paraphrase_in_the_top_three(seed_assistant: Any) -> None:
    ranks = []
    for q, s in _pairs():
        ids = [h.paper_id for h in seed_assistant.search(q, k=3)]
        expected = paper_id_containing(seed_assistant, s)
        ranks.append(ids.index(expected) + 1 if expected in ids else None)
    assert None not in ranks, ranks
    assert sum(r == 1 for r in ranks) >= 18, ranks  # measured: 18 of 19 first (hybrid), dense 17, BM25 19


def test_search_returns_one_hit_per_paper_with_scores(seed_assistant: Any) -> None:
    hits = seed_assistant.search("transformers", k=10)
    assert len(hits) == 10 and len({h.paper_id for h in hits}) == 10
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.dense_score is None or -1 <= h.dense_score <= 1 for h in hits)


def _filter_papers() -> list[Paper]:
    return [
        Paper(
            paper_id=f"n{y}",
            title=f"Zebras {y}",
            abstract=f"Counting zebras in drone video, study number {y}.",
            venue="NeurIPS",
            year=y,
            metadata={"track": "main" if y % 2 else "datasets"},
        )
        for y in (2016, 2017, 2018)
    ] + [
        Paper(
            paper_id="i2018",
            title="Zebras ICML",
            abstract="Counting zebras in drone video with transformers.",
            venue="ICML",
            year=2018,
            metadata={"track": "main"},
        )
    ]


@pytest.mark.parametrize("mode", ["hybrid", "dense", "bm25"])
def test_filters_restrict_every_retriever(make_assistant: Callable[..., Any], backend: str, mode: str) -> None:
    a = make_assistant()
    a.ingest_papers(_filter_papers())
    assert {h.paper_id for h in a.search("zebras drone", k=10, where={"venue": "NeurIPS"}, mode=mode)} == {
        "n2016",
        "n2017",
        "n2018",
    }
    assert {h.paper_id for h in a.search("zebras drone", k=10, where={"year": 2018}, mode=mode)} == {"n2018", "i2018"}
    both = a.search("zebras drone", k=10, where={"venue": "NeurIPS", "year": 2018}, mode=mode)
    assert [h.paper_id for h in both] == ["n2018"]
    assert {h.paper_id for h in a.search("zebras", k=10, where={"track": "main"}, mode=mode)} == {"n2017", "i2018"}
    assert a.search("zebras", k=10, where={"venue": "CVPR"}, mode=mode) == []


def test_parse_where_types_integers() -> None:
    from rag.filters import parse_where

    assert parse_where(["venue=NeurIPS", "year=2018"]) == {"venue": "NeurIPS", "year": 2018}
    with pytest.raises(ValueError, match="key=value"):
        parse_where(["venue"])
    with pytest.raises(ValueError, match="internal"):
        parse_where(["_source=x.jsonl"])


def test_langchain_retriever_returns_documents(seed_assistant: Any) -> None:
    from langchain_core.retrievers import BaseRetriever

    retriever = seed_assistant.as_retriever(k=2)
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke("drone footage of zebras in 3D")
    assert len(docs) == 2
    assert docs[0].metadata["paper_id"] == paper_id_containing(seed_assistant, "We introduce WildBox")
    assert "WildBox" in docs[0].page_content and docs[0].metadata["title"] == "WildBox"


def test_chroma_server_backend_ranks_like_the_embedded_one(
    seed_assistant: Any, chroma_server: str, seed_corpus: Any, embeddings: Any, tmp_path: Any
) -> None:
    """The whole paraphrase suite against a real `chroma run` server gives the same rankings."""
    from rag import Assistant, Settings

    server = Assistant(
        Settings(data_dir=tmp_path, chroma_url=chroma_server, collection="seed_server"), embeddings=embeddings
    )
    server.ingest([seed_corpus])
    assert server.stats()["papers"] == 19
    for q, _s in _pairs():
        assert [h.paper_id for h in server.search(q, k=3)] == [h.paper_id for h in seed_assistant.search(q, k=3)], q


@pytest.fixture(scope="module")
def venue_records() -> list[dict[str, Any]]:
    """3,000 synthetic conference abstracts: two big venues (~50 % and ~40 %), ten mid-sized, four rare."""
    return make_abstracts(3000, seed=0)


@pytest.fixture(scope="module")
def venue_assistant(tmp_path_factory: pytest.TempPathFactory, venue_records: list[dict[str, Any]]) -> Any:
    """``venue_records`` indexed with the fast embedder."""
    import json

    from rag import Assistant, Settings

    tmp = tmp_path_factory.mktemp("venues")
    corpus = tmp / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in venue_records))
    a = Assistant(Settings(data_dir=tmp / "data", embedding={"model": "wordllama-l2-supercat-256"}))
    a.ingest([corpus])
    return a


FILTER_QUERIES = {
    "robot grasping with tactile sensing": "robotic manipulation",
    "regret bounds for bandits": "bandits and online learning",
    "semantic segmentation": "semantic segmentation",
    "semantic parsing": "semantic parsing",
}


@pytest.mark.slow
def test_filter_queries_have_relevant_papers_in_the_venue_corpus(
    venue_assistant: Any, venue_records: list[dict[str, Any]]
) -> None:
    """The generated corpus gives the queries below genuinely relevant papers (and far ones)."""
    area = {r["id"]: r["primary_area"] for r in venue_records}
    for query, expected in FILTER_QUERIES.items():
        hits = venue_assistant.search(query, k=10)
        assert [area[h.paper_id] for h in hits] == [expected] * 10, query


def _recording(dense_search: Callable[..., Any], calls: list[int]) -> Callable[..., Any]:
    """``dense_search`` (PaperIndex's, which the retriever calls only to fall back to Chroma's filter)
    that also records the ``n`` of each call in ``calls``."""

    def recorded(vector: Any, n: int, where: Any) -> Any:
        calls.append(n)
        return dense_search(vector, n, where)

    return recorded


def _exact_nearest(a: Any, vector: list[float], n: int, venue: str) -> list[str]:
    """Brute force over every stored vector: the true ``n`` nearest chunks of ``venue``."""
    import numpy as np

    got = a._index.collection.get(include=["embeddings", "metadatas"])
    keep = [i for i, m in enumerate(got["metadatas"]) if m.get("venue") == venue]
    if not keep:
        return []
    matrix = np.asarray(got["embeddings"], dtype=np.float32)[keep]
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    q = np.asarray(vector, dtype=np.float32) / np.linalg.norm(vector)
    return [got["ids"][keep[i]] for i in np.argsort(-(matrix @ q))[:n]]


@pytest.mark.slow
@pytest.mark.parametrize("query", list(FILTER_QUERIES)[:3])
def test_filtered_dense_search_is_as_exact_as_chromas_filtered_query(
    venue_assistant: Any, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over-fetching without a filter and keeping matches finds the true nearest matching chunks at
    least as well as Chroma's own where-filter, for venues of every size: the two big ones, mid-sized
    and rare (Chroma filters those itself) and absent. (Exact search over the vectors beside BM25, which
    now answers every filter of this small corpus first, is switched off here.)"""
    import collections

    from rag.store.bm25 import BM25Store

    monkeypatch.setattr(BM25Store, "has_vectors", property(lambda self: False))
    a = venue_assistant
    counts = collections.Counter(m.get("venue") for m in a._index.bm25.meta)
    ranked = [v for v, _n in counts.most_common()]
    vector = a.embeddings.embed_query(query)
    answered_by_overfetch = []
    # Two big venues, the middle one of the ranking well under over-fetching's ~8 % threshold. (The real
    # slice this test was written on had three venues, 51/44/5 %, so its middle one was the second big one.)
    # The second big venue is a vision one with no bandit paper: for that query over-fetching must go far.
    assert counts[ranked[0]] / counts.total() > 0.45 and counts[ranked[1]] / counts.total() > 0.35
    assert counts[ranked[len(ranked) // 2]] / counts.total() < 0.02
    for venue in [ranked[0], ranked[1], ranked[len(ranked) // 2], ranked[-1], "no-such-venue"]:
        where = {"venue": venue}
        fallbacks: list[int] = []
        a._index.dense_search = _recording(a._index.dense_search, fallbacks)  # type: ignore[method-assign]
        try:
            ours = a._retriever._dense(vector, 50, where)
        finally:
            del a._index.dense_search
        if not fallbacks:
            answered_by_overfetch.append(venue)
        chroma = a._index.dense_search(vector, 50, where)
        exact = _exact_nearest(a, vector, 50, venue)
        assert len(ours) == len(chroma) == len(exact), venue
        assert all(h.metadata.get("venue") == venue for h in ours)
        assert all(h.metadata["_abstract"] for h in ours)  # full metadata, as Chroma's query returns
        if exact:
            recall = len({h.chunk_id for h in ours} & set(exact)) / len(exact)
            chroma_recall = len({h.chunk_id for h in chroma} & set(exact)) / len(exact)
            assert recall >= 0.95 and recall >= chroma_recall - 0.02, (venue, recall, chroma_recall)
    # The two big venues (~50 % and ~39 % of chunks) are answered without Chroma's filter, the mid-sized
    # (~1 %) and rare ones by it: over-fetching pays only for filters keeping >= ~8 % of chunks.
    assert answered_by_overfetch == ranked[:2]


@pytest.mark.slow
@pytest.mark.parametrize("query", list(FILTER_QUERIES)[:3])
def test_narrow_filters_are_searched_exactly_over_the_matching_vectors(venue_assistant: Any, query: str) -> None:
    """A filter keeping few chunks is answered from the vectors kept beside BM25, without Chroma's filtered
    query, and finds exactly the true nearest matching chunks (brute force over Chroma's own vectors)."""
    import collections

    a = venue_assistant
    counts = collections.Counter(m.get("venue") for m in a._index.bm25.meta)
    ranked = [v for v, _n in counts.most_common()]
    vector = a.embeddings.embed_query(query)
    for venue in [ranked[len(ranked) // 2], ranked[-1], ranked[0]]:
        fallbacks: list[int] = []
        a._index.dense_search = _recording(a._index.dense_search, fallbacks)  # type: ignore[method-assign]
        try:
            ours = a._retriever._dense(vector, 50, {"venue": venue})
        finally:
            del a._index.dense_search
        assert fallbacks == [], venue  # Chroma's filtered query was not needed
        exact = _exact_nearest(a, vector, 50, venue)
        assert [h.chunk_id for h in ours] == exact, venue
        assert all(h.metadata.get("venue") == venue and h.metadata["_abstract"] for h in ours)


@pytest.mark.slow
def test_filters_whose_semantics_could_differ_from_chromas_go_to_chroma(venue_assistant: Any) -> None:
    """BM25's mask lets 2018 match 2018.0 and True match 1; Chroma does not. Filters where that could
    matter (a float for an int column, a bool, an operator) are left to Chroma, which stays the reference."""
    a = venue_assistant
    vector = a.embeddings.embed_query("semantic parsing")
    year = next(m["year"] for m in a._index.bm25.meta if m.get("year") is not None)
    assert type(year) is int

    def dense(where: dict[str, Any]) -> tuple[list[Any], bool]:
        fallbacks: list[int] = []
        a._index.dense_search = _recording(a._index.dense_search, fallbacks)  # type: ignore[method-assign]
        try:
            return a._retriever._dense(vector, 20, where), bool(fallbacks)
        finally:
            del a._index.dense_search

    hits, fell_back = dense({"year": year})
    assert not fell_back and hits and all(type(h.metadata["year"]) is int and h.metadata["year"] == year for h in hits)
    for where in ({"year": float(year)}, {"year": {"$gte": year}}):
        hits, fell_back = dense(where)
        assert fell_back, where
        assert [h.chunk_id for h in hits] == [h.chunk_id for h in a._index.dense_search(vector, 20, where)]
    assert hits and all(h.metadata["year"] >= year for h in hits)  # the operator filter, applied by Chroma


def _kitti_papers() -> list[Paper]:
    naming = {
        "k1": "We evaluate visual odometry on the KITTI benchmark and report drift.",
        "k2": "Experiments on SemanticKITTI show better lidar segmentation.",
        "k3": "On KITTI-360 sequences our mapping is more accurate.",
    }
    # generic abstracts full of the question's other words: they outrank the three for the question as a whole
    generic = {
        f"g{i}": f"We evaluate our methods on many datasets and their extensions; methods number {i} evaluate "
        "well across datasets, and papers evaluating methods on datasets or extensions agree."
        for i in range(6)
    }
    other = {"v1": "A vocabulary of voice commands for home robots."}
    return [
        Paper(paper_id=pid, title=f"Paper {pid}", abstract=text) for pid, text in (naming | generic | other).items()
    ]


def test_a_list_question_that_names_a_dataset_judges_every_paper_using_the_name(
    make_assistant: Callable[..., Any],
) -> None:
    """A name in a list question ("KITTI") is an exact criterion: every paper that uses it (also as
    SemanticKITTI or KITTI-360) is judged, even when retrieval's cut (here 3 papers) ranks them below the
    papers that repeat the question's other words; a word that merely starts like a name ("VOC" in
    "vocabulary") does not count."""
    from rag.assistant import Assistant
    from rag.settings import AnswerSettings
    from tests.fakes import ScriptedChatModel

    def judge(prompt: str) -> str:
        paper = prompt.split("Paper:", 1)[1].split("Question:", 1)[0]
        return "Yes" if "KITTI" in paper else "No"

    base = make_assistant(answer=AnswerSettings(list_full_scan=2, list_candidates=3, list_min_judged=1))
    base.ingest_papers(_kitti_papers())
    fake = ScriptedChatModel(reply=judge)
    a = Assistant(base.settings, embeddings=base.embeddings, chat_model=fake)
    question = "How many papers evaluate their methods on the KITTI dataset or one of its extensions?"
    assert {h.paper_id for h in a.search(question, k=3)} & {"k1", "k2", "k3"} != {"k1", "k2", "k3"}
    ans = a.ask(question, kind="list")
    assert {i.paper_id for i in ans.items} == {"k1", "k2", "k3"}


def test_a_name_matches_words_that_contain_it_as_a_name_only(tmp_path: Any) -> None:
    from rag.store.bm25 import BM25Store

    texts = {
        "a": "Results on SemanticKITTI.",
        "b": "Tested on KITTI-360.",
        "c": "We use VOC2012 and the KITTI set.",
        "d": "A vocabulary of voices.",
        "e": "Kittens and kites.",
    }
    store = BM25Store(tmp_path)
    store.build(list(texts), list(texts.values()), [{} for _ in texts], "g1", {})
    assert [cid for cid, keep in zip(store.ids, store.containing(["KITTI"])) if keep] == ["a", "b", "c"]
    assert [cid for cid, keep in zip(store.ids, store.containing(["VOC"])) if keep] == ["c"]
    assert not store.containing(["ZZTop"]).any()
    found = store.search("kites", 5, within=store.containing(["KITTI"]))
    assert {cid for cid, _s in found} == {"a", "b", "c"}  # all of them, though none has the query's word

"""Labelled data for the stance judge: SciFact claims and PubMedQA questions, split once into train and dev.

The split is a hash of each record's id (``split_of``): 70 % train, 30 % dev, the same on every machine and
for every benchmark, so nothing fitted on train is ever scored on dev. The held-out splits of the datasets
(SciFact test, PubMedQA test) are not in ../shared and are never read here.

Training pairs (``train_pairs``), each a statement, an abstract and a stance:
* SciFact claims with evidence: the claim against its evidence abstract -> supports / refutes;
* SciFact claims without evidence: the claim against the abstract it cites -> not stated;
* every SciFact claim against the best BM25 abstract that is not its evidence -> not stated (a hard negative:
  what a claim check meets most, a paper on the topic that does not decide the claim);
* PubMedQA questions against their own abstract -> yes: supports, no: refutes, maybe: not stated.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.answering.stance import STANCES, Stance, StatementKind
from rag.settings import Settings

SCIFACT_STANCE: dict[str, Stance] = {"SUPPORT": "supports", "CONTRADICT": "refutes", "NEI": "not stated"}
PUBMEDQA_STANCE: dict[str, Stance] = {"yes": "supports", "no": "refutes", "maybe": "not stated"}


def split_of(source: str, key: object, dev_share: float = 0.3) -> str:
    """ "train" or "dev" for a record, by a hash of its source and id (stable, no file to keep)."""
    h = hashlib.sha256(f"stance-split/{source}/{key}".encode()).digest()
    return "dev" if int.from_bytes(h[:4], "big") / 2**32 < dev_share else "train"


@dataclass(frozen=True)
class Pair:
    source: str  # "scifact" | "scifact-hard" | "pubmedqa"
    key: str  # claim or question id
    statement: str
    kind: StatementKind
    title: str
    abstract: str
    stance: Stance

    @property
    def label(self) -> int:
        return STANCES.index(self.stance)


@dataclass(frozen=True)
class Claim:
    id: int
    claim: str
    label: str  # SUPPORT / CONTRADICT / NEI
    evidence: tuple[int, ...]  # abstracts with a rationale
    cited: tuple[int, ...]


def scifact_corpus(shared: Path) -> dict[int, dict[str, Any]]:
    with gzip.open(shared / "scifact" / "corpus.jsonl.gz", "rt", encoding="utf-8") as f:
        return {int(r["_id"]): r for r in map(json.loads, f)}


def scifact_claims(shared: Path) -> list[Claim]:
    out = []
    for line in (shared / "scifact" / "claims_train.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        labels = {e["label"] for sets in r["evidence"].values() for e in sets}
        label = (
            "NEI"
            if not labels
            else ("SUPPORT" if labels == {"SUPPORT"} else "CONTRADICT" if labels == {"CONTRADICT"} else "MIXED")
        )
        out.append(
            Claim(
                id=int(r["id"]),
                claim=r["claim"],
                label=label,
                evidence=tuple(int(d) for d in r["evidence"]),
                cited=tuple(int(d) for d in r["cited_doc_ids"]),
            )
        )
    return out


def pubmedqa(shared: Path) -> list[dict[str, Any]]:
    data = json.loads((shared / "pubmedqa" / "pqal_dev.json").read_text(encoding="utf-8"))
    return [
        {"id": k, "question": v["QUESTION"], "abstract": " ".join(v["CONTEXTS"]), "label": v["final_decision"]}
        for k, v in sorted(data.items())
    ]


def _bm25(corpus: dict[int, dict[str, Any]]) -> tuple[Any, list[int]]:
    import bm25s

    ids = sorted(corpus)
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize([f"{corpus[i]['title']} {corpus[i]['text']}" for i in ids], stopwords="en", show_progress=False),
        show_progress=False,
    )
    return retriever, ids


def pairs(shared: Path, split: str, seed: int = 0) -> list[Pair]:
    """Every pair of ``split``, interleaved by source in a seeded order (a prefix is a balanced sample)."""
    corpus = scifact_corpus(shared)
    claims = [c for c in scifact_claims(shared) if c.label != "MIXED" and split_of("scifact", c.id) == split]
    import bm25s

    retriever, ids = _bm25(corpus)
    found, _ = retriever.retrieve(
        bm25s.tokenize([c.claim for c in claims], stopwords="en", show_progress=False), k=5, show_progress=False
    )
    by_source: dict[str, list[Pair]] = {"scifact": [], "scifact-hard": [], "pubmedqa": []}
    for c, row in zip(claims, found):
        docs = c.evidence if c.label != "NEI" else c.cited[:1]
        for d in docs[:1]:
            if d in corpus:
                by_source["scifact"].append(_pair("scifact", c, corpus[d], SCIFACT_STANCE[c.label]))
        gold = set(c.evidence) | (set(c.cited) if c.label == "NEI" else set())
        other = next((ids[int(i)] for i in row if ids[int(i)] not in gold), None)
        if other is not None:
            by_source["scifact-hard"].append(_pair("scifact-hard", c, corpus[other], "not stated"))
    for q in pubmedqa(shared):
        if split_of("pubmedqa", q["id"]) == split:
            by_source["pubmedqa"].append(
                Pair("pubmedqa", q["id"], q["question"], "question", "", q["abstract"], PUBMEDQA_STANCE[q["label"]])
            )
    rng = random.Random(seed)
    for items in by_source.values():
        rng.shuffle(items)
    return list(_interleave([by_source["scifact"], by_source["pubmedqa"], by_source["scifact-hard"]], (2, 1, 1)))


def _pair(source: str, c: Claim, doc: dict[str, Any], stance: Stance) -> Pair:
    return Pair(source, str(c.id), c.claim, "claim", doc.get("title", ""), doc["text"], stance)


def _interleave(lists: list[list[Pair]], weights: tuple[int, ...]) -> Iterator[Pair]:
    its = [iter(x) for x in lists]
    alive = [True] * len(its)
    while any(alive):
        for i, it in enumerate(its):
            for _ in range(weights[i]):
                if not alive[i]:
                    break
                nxt = next(it, None)
                if nxt is None:
                    alive[i] = False
                else:
                    yield nxt


class Memo(MutableMapping[str, dict[str, float]]):
    """The model's label probabilities by prompt hash, appended to a JSON-lines file as they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data: dict[str, dict[str, float]] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.data[row["key"]] = row["probs"]
        path.parent.mkdir(parents=True, exist_ok=True)

    def __getitem__(self, key: str) -> dict[str, float]:
        return self.data[key]

    def __setitem__(self, key: str, value: dict[str, float]) -> None:
        self.data[key] = value
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"key": key, "probs": value}) + "\n")

    def __delitem__(self, key: str) -> None:
        raise TypeError("the memo only grows")

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)


def default_memo(settings: Settings) -> Path:
    """Where the model's label probabilities are kept between runs: one file per model (the bundled default keeps
    the name it always had), so that runs with another model never read this one's."""
    llm = settings.llm
    name = f"gguf-{Path(llm.gguf).stem}" if llm.gguf is not None else llm.model
    suffix = "" if name == "qwen2.5-coder-1.5b-instruct-q4_k_m" else f"-{name}"
    return Path.home() / ".cache" / "rag-abstracts" / "bench-stance" / f"label-probabilities{suffix}.jsonl"


def opposites_memo(memo: Path) -> Memo:
    """The claims' opposites (rag.answering.stance.StanceJudge.opposite) kept beside the label-probability memo."""
    return Memo(memo.with_name(memo.name.replace("label-probabilities", "opposites")))

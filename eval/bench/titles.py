"""Derived titles against real ones: hand ratings, keyword-list rate and word overlap, with examples.

    python -m rag.evaluation.bench titles [--sample 500] [--seed 28] [--examples 8]   # about 20 s

A title is derived from the abstract alone (``rag.derive_title``, what ingest does when a record has none) for a
seeded random sample of SciFact (``scifact/corpus.jsonl.gz``, biomedical) and of ``ml_abstracts.jsonl.gz`` (shared
data, see _shared.py), records with a real title and an abstract of 200+ characters, and compared with the real
title by proxies that anyone can rerun:

- *keyword list* (:func:`is_keyword_list`): two or more comma-separated parts of at most five words each, none
  with a connecting word (of, for, in, ...) or a verb, and no "Name:" head. A title that lists key terms
  ("Chronic diseases, cancer detection, Cell-free DNA (cfDNA)") names no contribution;
- *overlap*: the share of the real title's content words (stemmed) that the derived title has;
- *accepted (proxy)* (:func:`accepted`): short, not cut, not a clause, not a keyword list, and two content
  words shared with the real title (one when the derived title has at most two);
- cut with "…", clauses ("we", "this paper").

The hand ratings are in ``eval/data/derived_titles_rated.jsonl`` (ids, real and derived titles, ratings; the
abstracts stay in the shared data): the seeded sample of 30 records of each corpus (seed 28, ``samples(30, 28)``),
rated by a person against the written rubric in docs/benchmarks.md ("Derived titles"), for the titles of
the previous rule (``before``) and of the current one (``after``). The benchmark prints the accepted rate of each
and how many ``after`` titles the code no longer derives as rated (those ratings are stale: rate them again).
The bundled NeurIPS abstracts have no real titles: their derived titles are printed for inspection.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rag import Assistant, derive_title
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench.suite import ROOT, Output

NEEDS_LLM = False
SEED = 28
RATINGS = ROOT / "eval" / "data" / "derived_titles_rated.jsonl"

_STOP = set(
    "a an the of for and or in on to with by from via at as is are be we our this that its their into using based "
    "towards toward through over under than not".split()
)
_CONNECTING = set("of for in on to with by from via at as into using towards toward through over under than".split())
# endings and words that make a part a clause, not a key term ("removes", "improved", "is")
_VERBISH = re.compile(r"(?i)\b(?:is|are|was|were|be|can|does|do|has|have|\w{3,}(?:ed|izes|ises|ates))\b")


def stems(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9][a-z0-9+@-]*", text.lower())
    out = set()
    for w in words:
        if w in _STOP or len(w) < 2:
            continue
        if len(w) > 4 and w.endswith("ies"):
            w = w[:-3] + "y"
        elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
        out.add(w)
    return out


def is_clause(title: str) -> bool:
    return bool(re.search(r"(?i)\b(we|our|this (paper|work|study))\b", title))


def _top_level_parts(title: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(title):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            parts.append(title[start:i])
            start = i + 1
    return [p.strip() for p in [*parts, title[start:]] if p.strip()]


def is_keyword_list(title: str) -> bool:
    """Two or more comma-separated noun phrases of at most five words, none with a connecting word or a verb,
    and no head phrase ("Name: ..."): a list of key terms, not a title."""
    if ":" in title:
        return False
    parts = _top_level_parts(title)
    if len(parts) < 2:
        return False
    for part in parts:
        words = re.sub(r"\([^()]*\)", " ", part).lower().split()
        if len(words) > 5 or any(w in _CONNECTING for w in words) or _VERBISH.search(part):
            return False
    return True


def overlap(derived: str, real: str) -> float:
    """The share of the real title's content words that the derived one has."""
    r = stems(real)
    return len(stems(derived) & r) / len(r) if r else 0.0


def accepted(derived: str, real: str) -> bool:
    if len(derived) > 80 or derived.endswith("…") or is_clause(derived) or is_keyword_list(derived):
        return False
    d, r = stems(derived), stems(real)
    shared = d & r
    return len(shared) >= 2 or (len(shared) >= 1 and len(d) <= 2)


def _records(path: Path, text_key: str, id_key: str, n: int, seed: int) -> list[dict[str, str]]:
    """``n`` records with a title and a 200+ character abstract, a seeded random sample of the file."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        usable = [
            {"id": str(r[id_key]), "title": r["title"], "abstract": r[text_key]}
            for r in map(json.loads, f)
            if r.get("title") and len(r.get(text_key) or "") >= 200
        ]
    return random.Random(seed).sample(usable, min(n, len(usable)))


def samples(n: int, seed: int) -> dict[str, list[dict[str, str]]]:
    """The seeded samples of both corpora, ``n`` records each (ids, real titles, abstracts)."""
    return {
        "scifact": _records(shared_data("scifact/corpus.jsonl.gz"), "text", "_id", n, seed),
        "ml": _records(shared_data("ml_abstracts.jsonl.gz"), "abstract", "id", n, seed),
    }


def measure(rows: Iterable[tuple[str, str]]) -> dict[str, float]:
    """The proxies over ``(derived, real)`` pairs."""
    pairs = list(rows)
    n = len(pairs) or 1
    return {
        "records": len(pairs),
        "keyword_list": sum(is_keyword_list(d) for d, _ in pairs) / n,
        "overlap": sum(overlap(d, r) for d, r in pairs) / n,
        "accepted_proxy": sum(accepted(d, r) for d, r in pairs) / n,
        "cut": sum(d.endswith("…") for d, _ in pairs) / n,
        "clause": sum(is_clause(d) for d, _ in pairs) / n,
        "median_length": sorted(len(d) for d, _ in pairs)[len(pairs) // 2] if pairs else 0,
    }


def hand_ratings(path: Path = RATINGS) -> dict[str, Any]:
    """The accepted rate of the rated ``before`` and ``after`` titles, and how many ratings are stale."""
    if not path.exists():
        return {}
    rated = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    abstracts = {  # the file keeps ids, not the abstracts (they are the shared data's)
        (corpus, r["id"], r["title"]): r["abstract"] for corpus, records in samples(30, SEED).items() for r in records
    }  # an id with its title: ml_abstracts ids are not unique
    stale = [r for r in rated if derive_title(abstracts[(r["corpus"], r["id"], r["real"])]) != r["after"]]
    out: dict[str, Any] = {"rated": len(rated), "stale": len(stale)}
    for side in ("before", "after"):
        ok = [r for r in rated if r[f"{side}_ok"]]
        out[side] = len(ok) / len(rated)
        for corpus in ("scifact", "ml"):
            part = [r for r in rated if r["corpus"] == corpus]
            out[f"{side}_{corpus}"] = sum(r[f"{side}_ok"] for r in part) / max(1, len(part))
    return out


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--examples", type=int, default=8, help="Examples printed of each corpus.")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    seed = SEED if args.seed is None else args.seed
    figures: dict[str, Any] = {"seed": seed}
    for corpus, records in samples(args.sample or 500, seed).items():
        pairs = [(derive_title(r["abstract"]), r["title"]) for r in records]
        m = measure(pairs)
        real = measure((r, r) for _, r in pairs)
        figures[corpus] = m
        print(
            f"{corpus}: {m['records']} records (seed {seed}); keyword lists {m['keyword_list']:.1%} "
            f"(real titles {real['keyword_list']:.1%}); overlap with the real title {m['overlap']:.3f}; "
            f"accepted (proxy) {m['accepted_proxy']:.1%}; cut {m['cut']:.1%}; clauses {m['clause']:.1%}; "
            f"median length {m['median_length']}"
        )
        for d, r in pairs[: args.examples]:
            print(f"  derived: {d}\n     real: {r}")
    hand = hand_ratings()
    if hand:
        figures["hand"] = hand
        print(
            f"\nhand ratings ({RATINGS.relative_to(ROOT)}, {hand['rated']} records): accepted before "
            f"{hand['before']:.1%} (SciFact {hand['before_scifact']:.1%}, ml {hand['before_ml']:.1%}), after "
            f"{hand['after']:.1%} (SciFact {hand['after_scifact']:.1%}, ml {hand['after_ml']:.1%}); "
            f"stale (derived differently now): {hand['stale']}"
        )
    print("\nNeurIPS abstracts (no real titles):")
    from rag.corpus import read_corpus  # the seed file format; derive_title is what ingest applies to it

    figures["neurips"] = [p.title for p in read_corpus(Assistant.bundled_corpus())]
    for title in figures["neurips"]:
        print(f"  {title}")
    return figures

"""Check the cross-paper gold files: every quote resolves to one paper, every id exists.

    python eval/tools/check_cross_gold.py [--ml1k PATH] [--source PATH]

Files checked (next to this script):

- ``neurips2026_cross.jsonl``: list/count and comparison questions over the bundled abstracts;
- ``neurips2026_table.jsonl``: paper x attribute cells over the bundled abstracts;
- ``ml1k_lists.jsonl``: list/count questions over the ml1k subset;
- ``ml_table_fresh.jsonl``: paper x attribute cells over the ml_table16 subset (make_ml_table.py);
- ``ml_table_blind.jsonl``: paper x attribute cells over the ml_table_blind16 subset (make_ml_table.py
  ``--seed 9090 --exclude`` ml_table16), labelled blind after the table step was tuned on the others.

For the bundled corpus (``rag/data/neurips2026_abstracts.txt``: a title line, then one abstract per
blank-line-separated paragraph) every quote and support must be an exact substring of exactly one
abstract, quotes must be at least 6 words and free of markup characters (``$ \\ * _ ` ``) so that they
survive the ingest normalisation, and a cell's support must come from the same abstract as its quote.
Every keyword group must match (with the same rule as eval/metrics.keyword_group_found) the support
of a cell, or the abstract of a comparison paper. For ml1k every id must exist in the subset, which
is rebuilt in memory with make_ml1k.py unless ``--ml1k`` names a written copy; the two table subsets
are always rebuilt in memory (make_ml_table.py), so a stale copy in /tmp cannot hide a problem. Counts must equal the
size of the expected set; expected and borderline sets must be disjoint. ml1k_lists.jsonl has one
``{"type": "corpus", ...}`` record naming the subset (see eval/dataset.py).

Standard library only. Exit status 1 and one line per problem when anything is wrong.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "data"  # the gold files
ROOT = HERE.parent.parent
BUNDLED = ROOT / "rag" / "data" / "neurips2026_abstracts.txt"
MARKUP = set("$\\*_`")
MIN_QUOTE_WORDS = 6
ATTRIBUTE_LISTS = {
    "task, dataset, metric, best result": {"task", "dataset", "metric", "best result"},
    "method, data domain, main finding": {"method", "data domain", "main finding"},
}

problems: list[str] = []


def problem(where: str, message: str) -> None:
    problems.append(f"{where}: {message}")


# ------------------------------------------------------------------ corpora


def load_bundled(path: Path) -> list[str]:
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")) if p.strip()]
    return [" ".join(p.split()) for p in paragraphs[1:]]  # the first paragraph is the collection title


BLIND_SEED = 9090  # ml_table_blind16: make_ml_table.py --seed 9090 --exclude <ml_table16>


def load_ml_tables(source: str | None) -> tuple[list[str], list[str]]:
    """The abstracts of the ml_table16 and ml_table_blind16 subsets (make_ml_table.py), rebuilt in memory."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import make_ml1k
    import make_ml_table

    records = make_ml1k.load_records(source or make_ml1k.SOURCE)
    fresh = make_ml_table.make_table_subset(records)
    blind = make_ml_table.make_table_subset(records, seed=BLIND_SEED, exclude={r["id"] for r in fresh})
    return [r["abstract"] for r in fresh], [r["abstract"] for r in blind]


def load_ml1k_ids(path: str | None, source: str | None) -> set[str]:
    if path:
        with open(path, encoding="utf-8") as f:
            return {json.loads(line)["id"] for line in f if line.strip()}
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import make_ml1k

    return {r["id"] for r in make_ml1k.make_subset(make_ml1k.load_records(source or make_ml1k.SOURCE))}


# ------------------------------------------------------------------ keyword matching (mirrors eval/metrics.py)

_NUM_SEP = re.compile(r"(?<=\d)[,\u2009\u202f](?=\d{3}\b)")


def normalise(text: str) -> str:
    t = text.lower()
    t = _NUM_SEP.sub("", t)
    t = re.sub(r"[*_$`{}]", "", t)
    t = t.replace("\\pm", "±")
    t = re.sub(r"(\d)\s*(?:\\times|×|x|times)(?![a-z])", r"\1×", t)
    t = t.replace("\\", "")
    t = t.replace("\u2013", "-").replace("\u2014", "-").replace("\u2019", "'")
    return re.sub(r"\s+", " ", t).strip()


def group_found(text: str, group: str) -> bool:
    t = normalise(text)
    for alt in group.split("|"):
        a = normalise(alt)
        end = r"(?![\d]|[.,]\d)" if a[-1:].isdigit() else ""
        if a and re.search(rf"(?<![\w.]){re.escape(a)}{end}", t):
            return True
    return False


def check_groups(where: str, groups: object, text: str, against: str) -> None:
    if not isinstance(groups, list) or not groups:
        problem(where, "needs a non-empty list of keyword groups")
        return
    for g in groups:
        if not isinstance(g, str) or not g.strip() or any(not a.strip() for a in g.split("|")):
            problem(where, f"empty keyword group or alternative in {g!r}")
        elif not group_found(text, g):
            problem(where, f"keyword group {g!r} does not match the {against}")


# ------------------------------------------------------------------ bundled quotes


def resolve(where: str, quote: object, abstracts: list[str], *, is_quote: bool = True) -> int | None:
    """The 1-based paper number whose abstract contains ``quote``; records a problem otherwise."""
    if not isinstance(quote, str) or not quote.strip():
        problem(where, "empty quote")
        return None
    if is_quote:
        if len(quote.split()) < MIN_QUOTE_WORDS:
            problem(where, f"quote has fewer than {MIN_QUOTE_WORDS} words: {quote!r}")
        if MARKUP & set(quote):
            problem(where, f"quote contains markup characters: {quote!r}")
    hits = [i + 1 for i, text in enumerate(abstracts) if quote in text]
    if len(hits) != 1:
        problem(where, f"{'quote' if is_quote else 'support'} is in {len(hits)} abstracts: {quote[:70]!r}")
        return None
    return hits[0]


def read_jsonl(path: Path) -> list[tuple[int, dict]]:
    rows = []
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        try:
            rows.append((no, json.loads(line)))
        except json.JSONDecodeError as e:
            problem(f"{path.name}:{no}", f"invalid JSON: {e.msg}")
    return rows


def check_list(where: str, row: dict, resolve_one, expected_key: str, borderline_key: str) -> tuple[list, list]:
    for key in ("question", "criterion"):
        if not isinstance(row.get(key), str) or not row[key].strip():
            problem(where, f"missing {key}")
    expected = [resolve_one(f"{where} {expected_key}", q) for q in row.get(expected_key, [])]
    borderline = [resolve_one(f"{where} {borderline_key}", q) for q in row.get(borderline_key, [])]
    if expected_key not in row:
        problem(where, f"missing {expected_key}")
    dup = [p for p, n in Counter(expected + borderline).items() if p is not None and n > 1]
    if dup:
        problem(where, f"paper(s) {dup} listed twice (expected and borderline must be disjoint)")
    if "count" in row and row["count"] != len(expected):
        problem(where, f"count {row['count']} != {len(expected)} expected papers")
    return expected, borderline


def check_cross(path: Path, abstracts: list[str], seen_ids: dict, stats: Counter) -> None:
    for no, row in read_jsonl(path):
        where = f"{path.name}:{no} {row.get('id', '?')}"
        note_id(where, row, seen_ids)
        kind = row.get("type")
        if kind == "list":
            expected, _ = check_list(
                where, row, lambda w, q: resolve(w, q, abstracts), "expected_quotes", "borderline_quotes"
            )
            stats["list"] += 1
            stats["list (empty answer)"] += not expected
            stats["list (count)"] += "count" in row
        elif kind == "comparison":
            papers = row.get("papers")
            if not isinstance(papers, list) or len(papers) < 2:
                problem(where, "a comparison needs at least two papers")
                continue
            numbers = []
            for i, paper in enumerate(papers):
                pw = f"{where} papers[{i}]"
                n = resolve(pw, paper.get("quote"), abstracts)
                numbers.append(n)
                if n is not None:
                    check_groups(pw, paper.get("answer_keywords"), abstracts[n - 1], "paper's abstract")
            if len(set(numbers)) != len(numbers):
                problem(where, "the same paper is compared with itself")
            stats["comparison"] += 1
        else:
            problem(where, f"type must be list or comparison, not {kind!r}")


def check_table(path: Path, abstracts: list[str], seen_ids: dict, stats: Counter) -> None:
    cells: set[tuple[str, int, str]] = set()
    for no, row in read_jsonl(path):
        where = f"{path.name}:{no} {row.get('id', '?')}"
        if row.get("type") == "corpus":  # the subset a file over ml_abstracts is graded against
            continue
        note_id(where, row, seen_ids)
        if row.get("type") != "cell":
            problem(where, "type must be cell")
            continue
        attrs, attr = row.get("attributes"), row.get("attribute")
        if attrs not in ATTRIBUTE_LISTS or attr not in ATTRIBUTE_LISTS[attrs]:
            problem(where, f"unknown attribute list/attribute {attrs!r} / {attr!r}")
        n = resolve(where, row.get("quote"), abstracts)
        key = (attrs, n, attr)
        if n is not None and key in cells:
            problem(where, "duplicate cell (same attribute list, paper and attribute)")
        cells.add(key)
        if row.get("not_stated") is True:
            if "value_keywords" in row or "support" in row:
                problem(where, "a not_stated cell has no value_keywords or support")
            stats["cell (not stated)"] += 1
        else:
            support = row.get("support")
            s = resolve(f"{where} support", support, abstracts, is_quote=False)
            if s is not None and n is not None and s != n:
                problem(where, f"support is in paper {s}, quote in paper {n}")
            if isinstance(support, str) and MARKUP & set(support):
                problem(where, f"support contains markup characters: {support!r}")
            if isinstance(support, str):
                check_groups(where, row.get("value_keywords"), support, "support")
            stats["cell (stated)"] += 1
        stats["cell"] += 1


def check_ml1k(path: Path, ids: set[str], seen_ids: dict, stats: Counter) -> None:
    def known(where: str, pid: object) -> str | None:
        if pid not in ids:
            problem(where, f"id {pid!r} is not in the ml1k subset")
            return None
        return pid  # type: ignore[return-value]

    corpus_records = 0
    for no, row in read_jsonl(path):
        where = f"{path.name}:{no} {row.get('id', '?')}"
        if row.get("type") == "corpus":  # names the subset the file is graded against (read by rag eval)
            corpus_records += 1
            if row.get("name") != "ml1k" or row.get("papers") != len(ids):
                problem(where, f"the corpus record must name ml1k with papers = {len(ids)}")
            continue
        note_id(where, row, seen_ids)
        if row.get("type") != "list":
            problem(where, "type must be list")
            continue
        expected, _ = check_list(where, row, known, "expected_ids", "borderline_ids")
        stats["ml1k list"] += 1
        stats["ml1k list (count)"] += "count" in row
        stats["ml1k expected ids"] += len(expected)
    if corpus_records != 1:
        problem(path.name, f"needs exactly one corpus record, found {corpus_records}")


def note_id(where: str, row: dict, seen: dict) -> None:
    rid = row.get("id")
    if not isinstance(rid, str) or not rid:
        problem(where, "missing id")
    elif rid in seen:
        problem(where, f"duplicate id (first at {seen[rid]})")
    else:
        seen[rid] = where


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ml1k", help="a written ml1k subset (JSONL); default: rebuild it in memory")
    parser.add_argument("--source", help="ml_abstracts.jsonl.gz to rebuild the subset from")
    args = parser.parse_args()

    abstracts = load_bundled(BUNDLED)
    if len(abstracts) != 19:
        problem(str(BUNDLED), f"expected 19 abstracts, found {len(abstracts)}")
    stats: Counter = Counter()
    seen: dict[str, str] = {}
    check_cross(HERE / "neurips2026_cross.jsonl", abstracts, seen, stats)
    check_table(HERE / "neurips2026_table.jsonl", abstracts, seen, stats)
    check_ml1k(HERE / "ml1k_lists.jsonl", load_ml1k_ids(args.ml1k, args.source), seen, stats)
    fresh, blind = load_ml_tables(args.source)
    check_table(HERE / "ml_table_fresh.jsonl", fresh, seen, stats)
    check_table(HERE / "ml_table_blind.jsonl", blind, seen, stats)

    for key in sorted(stats):
        print(f"{key:24} {stats[key]}")
    if problems:
        print(f"\n{len(problems)} problem(s):", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        return 1
    print("\nall quotes, supports and ids check out")
    return 0


if __name__ == "__main__":
    sys.exit(main())

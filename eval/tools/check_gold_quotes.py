"""Check a gold question file against a corpus without building an index (standard library only).

    python eval/tools/check_gold_quotes.py eval/data/neurips2026_check.jsonl
    python eval/tools/check_gold_quotes.py GOLD.jsonl --corpus rag/data/neurips2026_abstracts.txt \
        --against eval/data/neurips2026_gold.jsonl

Checks, per question: every supporting quote has at least ``--min-words`` words and is an exact
substring (whitespace-insensitive, as in ``eval.dataset.resolve_cases``) of exactly one abstract; an
answerable question has quotes (or ``supporting_ids``) and an unanswerable one has none and no
keywords; a ``multi`` question is supported by at least two abstracts; a ``yesno`` reference answer
starts with "Yes" or "No"; keyword groups have no empty alternative; ``history`` turns are
``[role, text]`` pairs; ids are unique. Then it prints the questions per type and per abstract and
fails if an abstract has no answerable question (``--allow-uncovered`` to skip that). ``--against``
names other gold files whose questions must not be repeated (same text after lower-casing and
squashing punctuation). The corpus is a ``.txt`` in the seed format (first line the collection title,
then one abstract per blank-line-separated paragraph) or JSON Lines with an ``abstract`` (or ``text``)
field. Exit status 1 when anything is wrong.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

# the bundled abstracts, found from here upwards (so the script works wherever eval/data/ is moved in the tree)
DEFAULT_CORPUS = next(
    (
        d / "rag" / "data" / "neurips2026_abstracts.txt"
        for d in Path(__file__).resolve().parents
        if (d / "rag" / "data" / "neurips2026_abstracts.txt").is_file()
    ),
    Path("rag/data/neurips2026_abstracts.txt"),
)
TYPES = {"factoid", "explanation", "yesno", "multi", "unanswerable"}


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def read_abstracts(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix in {".jsonl", ".ndjson"}:
        out = []
        for line in text.splitlines():
            if line.strip():
                rec = json.loads(line)
                out.append(str(rec.get("abstract", rec.get("text", ""))))
        return out
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    # the first line is the collection title unless it is plainly an abstract (as in rag.ingest)
    if i < len(lines) and len(lines[i].strip()) <= 200 and (i + 1 == len(lines) or not lines[i + 1].strip()):
        i += 1
    paras, para = [], []
    for line in lines[i:] + [""]:
        if line.strip():
            para.append(line.strip())
        elif para:
            paras.append(" ".join(para))
            para = []
    return paras


def label(abstract: str) -> str:
    return squash(abstract)[:60]


def norm_question(q: str) -> str:
    return re.sub(r"[\W_]+", " ", q.lower()).strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("gold", type=Path)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--against", type=Path, action="append", default=[], help="another gold file not to repeat")
    ap.add_argument("--min-words", type=int, default=1, help="fewest words in a quote")
    ap.add_argument("--allow-uncovered", action="store_true")
    args = ap.parse_args(argv)

    abstracts = [squash(a) for a in read_abstracts(args.corpus)]
    others = set()
    for path in args.against:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.lstrip().startswith("//"):
                others.add(norm_question(json.loads(line)["question"]))

    problems: list[str] = []
    types: Counter[str] = Counter()
    cover: Counter[int] = Counter()
    seen: dict[str, int] = {}
    yes_no: Counter[str] = Counter()
    followups = 0
    for no, line in enumerate(args.gold.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("//"):
            continue
        where = f"{args.gold}:{no}"
        try:
            case = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(f"{where}: invalid JSON: {e.msg}")
            continue
        cid, kind = case.get("id", f"q{no}"), case.get("type", "factoid")
        if cid in seen:
            problems.append(f"{where}: duplicate id {cid!r} (first on line {seen[cid]})")
        seen[cid] = no
        types[kind] += 1
        if kind not in TYPES:
            problems.append(f"{where}: unknown type {kind!r}")
        if not str(case.get("question", "")).strip():
            problems.append(f"{where}: empty question")
        if norm_question(case.get("question", "")) in others:
            problems.append(f"{where}: question repeats one in {', '.join(map(str, args.against))}")
        quotes = case.get("supporting_quotes", [])
        keywords = case.get("answer_keywords", [])
        if any(not g.strip() or any(not a.strip() for a in g.split("|")) for g in keywords):
            problems.append(f"{where}: answer_keywords has an empty group or alternative")
        history = case.get("history", [])
        if history:
            followups += 1
            if any(
                not (isinstance(t, list) and len(t) == 2 and t[0] in ("user", "assistant") and t[1].strip())
                for t in history
            ):
                problems.append(f'{where}: history turns must be ["user"|"assistant", text]')
        if kind == "unanswerable":
            if quotes or keywords or case.get("supporting_ids"):
                problems.append(f"{where}: an unanswerable question has no quotes, ids or keywords")
            continue
        if not quotes and not case.get("supporting_ids"):
            problems.append(f"{where}: an answerable question needs supporting quotes")
        hit_papers = set()
        for quote in quotes:
            q = squash(quote)
            if len(q.split()) < args.min_words:
                problems.append(f"{where}: quote {quote[:50]!r} has fewer than {args.min_words} words")
            hits = [i for i, a in enumerate(abstracts) if q in a]
            if len(hits) != 1:
                problems.append(f"{where}: quote {quote[:50]!r} is in {len(hits)} abstracts, not exactly one")
            hit_papers.update(hits)
        if kind == "multi" and len(hit_papers) < 2:
            problems.append(f"{where}: a multi question needs quotes from two or more abstracts")
        if kind == "yesno":
            ref = str(case.get("reference_answer") or "")
            m = re.match(r"(Yes|No)\b", ref)
            if not m:
                problems.append(f"{where}: a yesno reference_answer starts with 'Yes' or 'No'")
            else:
                yes_no[m.group(1)] += 1
        for i in hit_papers:
            cover[i] += 1

    print(f"{args.gold}: {sum(types.values())} questions, {followups} with history")
    print("per type: " + ", ".join(f"{t} {n}" for t, n in sorted(types.items())))
    if yes_no:
        print("yesno answers: " + ", ".join(f"{k} {v}" for k, v in sorted(yes_no.items())))
    print(f"answerable questions per abstract ({len(abstracts)} in {args.corpus.name}):")
    for i, a in enumerate(abstracts):
        print(f"  {cover[i]:3d}  {label(a)}")
    missing = [i for i in range(len(abstracts)) if not cover[i]]
    if missing and not args.allow_uncovered:
        problems += [f"abstract not covered: {label(abstracts[i])!r}" for i in missing]
    for p in problems:
        print(p, file=sys.stderr)
    print("OK" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

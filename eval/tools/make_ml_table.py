"""Write a 16-abstract table subset: ml_table16 (ml_table_fresh.jsonl) or ml_table_blind16 (ml_table_blind.jsonl).

The subsets are not committed (ml_abstracts has no licence to ship); this script rebuilds them exactly:

1. read ml_abstracts.jsonl.gz with make_ml1k.load_records (non-empty abstracts, duplicate ids made
   unique with ``-L<line number>``);
2. drop the 1,000 papers of the ml1k subset (make_ml1k.make_subset), so that none of these papers
   is one the project has already been checked on, and the ids of every record in the ``--exclude``
   JSONL files, so that a new subset shares no paper with an older one;
3. keep the records whose abstract (stripped) has 600-1,800 characters and whose venue is not one of
   the learning-theory venues COLT and ALT (the table needs empirical papers);
4. shuffle what is left with ``random.Random(seed)`` (``--seed``, default 4242) and keep, in that
   order, the first 16 whose abstract describes experiments: it mentions an experiment, a dataset /
   data set or a benchmark (``EXPERIMENTAL``, case-insensitive). The exclusions shrink the pool
   before the shuffle, so ``--exclude`` changes the draw even when no excluded id would be drawn;
5. write them as JSONL with the fields id, title, abstract, venue, year.

Usage: python eval/tools/make_ml_table.py [OUT] [--source PATH] [--seed N] [--exclude PATH ...]
(OUT defaults to /tmp/ml_table16.jsonl). The two subsets the gold files are graded against:

    python eval/tools/make_ml_table.py /tmp/ml_table16.jsonl                  # ml_table16
    python eval/tools/make_ml_table.py /tmp/ml_table_blind16.jsonl --seed 9090 \
        --exclude /tmp/ml_table16.jsonl                                         # ml_table_blind16

Standard library only, so it runs without the project installed.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_ml1k import FIELDS, SOURCE, load_records, make_subset

DEFAULT_OUT = "/tmp/ml_table16.jsonl"
SEED = 4242
SIZE = 16
MIN_CHARS, MAX_CHARS = 600, 1800
THEORY_VENUES = {"colt", "alt"}
EXPERIMENTAL = re.compile(r"\b(?:experiment|data ?sets?\b|benchmark)", re.IGNORECASE)


def eligible(record: dict) -> bool:
    abstract = (record.get("abstract") or "").strip()
    return MIN_CHARS <= len(abstract) <= MAX_CHARS and record.get("venue") not in THEORY_VENUES


def load_ids(path: str) -> set[str]:
    """The ids of the records in a JSONL file (e.g. an earlier subset written by this script)."""
    with open(path, encoding="utf-8") as f:
        return {json.loads(line)["id"] for line in f if line.strip()}


def make_table_subset(records: list[dict], *, seed: int = SEED, exclude: Iterable[str] = ()) -> list[dict]:
    """The SIZE eligible, experimental records drawn with ``seed``, none in ml1k or in ``exclude``."""
    dropped = {r["id"] for r in make_subset(records)} | set(exclude)
    pool = [r for r in records if r["id"] not in dropped and eligible(r)]
    random.Random(seed).shuffle(pool)
    chosen = [r for r in pool if EXPERIMENTAL.search(r["abstract"])][:SIZE]
    return [{k: r.get(k) for k in FIELDS} for r in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=DEFAULT_OUT)
    parser.add_argument("--source", default=SOURCE)
    parser.add_argument("--seed", type=int, default=SEED, help=f"shuffle seed (default {SEED}: ml_table16)")
    parser.add_argument(
        "--exclude", action="append", default=[], metavar="PATH", help="a JSONL whose record ids are left out too"
    )
    args = parser.parse_args()
    exclude = set().union(*(load_ids(p) for p in args.exclude))
    subset = make_table_subset(load_records(args.source), seed=args.seed, exclude=exclude)
    with open(args.out, "w", encoding="utf-8") as f:
        for r in subset:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(subset)} records to {args.out}")


if __name__ == "__main__":
    main()

"""Write the 16-abstract ml_table16 subset that eval/data/ml_table_fresh.jsonl is graded against.

The subset is not committed (ml_abstracts has no licence to ship); this script rebuilds it exactly:

1. read ml_abstracts.jsonl.gz with make_ml1k.load_records (non-empty abstracts, duplicate ids made
   unique with ``-L<line number>``);
2. drop the 1,000 papers of the ml1k subset (make_ml1k.make_subset), so that none of these papers
   is one the project has already been checked on;
3. keep the records whose abstract (stripped) has 600-1,800 characters and whose venue is not one of
   the learning-theory venues COLT and ALT (the table needs empirical papers);
4. shuffle with ``random.Random(4242)`` and keep, in that order, the first 16 whose abstract describes
   experiments: it mentions an experiment, a dataset / data set or a benchmark (``EXPERIMENTAL``,
   case-insensitive);
5. write them as JSONL with the fields id, title, abstract, venue, year.

Usage: python eval/tools/make_ml_table.py [OUT] [--source PATH]   (OUT defaults to /tmp/ml_table16.jsonl)

Standard library only, so it runs without the project installed.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
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


def make_table_subset(records: list[dict]) -> list[dict]:
    ml1k = {r["id"] for r in make_subset(records)}
    pool = [r for r in records if r["id"] not in ml1k and eligible(r)]
    random.Random(SEED).shuffle(pool)
    chosen = [r for r in pool if EXPERIMENTAL.search(r["abstract"])][:SIZE]
    return [{k: r.get(k) for k in FIELDS} for r in chosen]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=DEFAULT_OUT)
    parser.add_argument("--source", default=SOURCE)
    args = parser.parse_args()
    subset = make_table_subset(load_records(args.source))
    with open(args.out, "w", encoding="utf-8") as f:
        for r in subset:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(subset)} records to {args.out}")


if __name__ == "__main__":
    main()

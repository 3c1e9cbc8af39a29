"""Write the 1,000-abstract ml1k subset that eval/data/ml1k_lists.jsonl is graded against.

The subset is not committed (ml_abstracts has no licence to ship); this script rebuilds it exactly:

1. read ml_abstracts.jsonl.gz and keep the records with a non-empty abstract;
2. make ids unique: every record whose id occurs more than once (e.g. ``cvpr2019-None``) gets the
   suffix ``-L<line number in the .gz file, 1-based>``;
3. shuffle with ``random.Random(2026)`` and keep the first 1,000;
4. write them as JSONL with the fields id, title, abstract, venue, year.

Usage: python eval/tools/make_ml1k.py [OUT] [--source PATH]   (OUT defaults to /tmp/ml1k.jsonl)

Standard library only, so it runs without the project installed.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from collections import Counter

SOURCE = "/work/shared/data/ml_abstracts.jsonl.gz"
DEFAULT_OUT = "/tmp/ml1k.jsonl"
SEED = 2026
SIZE = 1000
FIELDS = ("id", "title", "abstract", "venue", "year")


def load_records(source: str) -> list[dict]:
    """The records with a non-empty abstract, ids made unique, in file order."""
    kept: list[tuple[int, dict]] = []
    with gzip.open(source, "rt", encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            record = json.loads(line)
            if record.get("abstract"):
                kept.append((line_no, record))
    counts = Counter(record["id"] for _, record in kept)
    for line_no, record in kept:
        if counts[record["id"]] > 1:
            record["id"] = f"{record['id']}-L{line_no}"
    return [record for _, record in kept]


def make_subset(records: list[dict]) -> list[dict]:
    records = list(records)
    random.Random(SEED).shuffle(records)
    return [{k: r.get(k) for k in FIELDS} for r in records[:SIZE]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=DEFAULT_OUT)
    parser.add_argument("--source", default=SOURCE)
    args = parser.parse_args()
    subset = make_subset(load_records(args.source))
    with open(args.out, "w", encoding="utf-8") as f:
        for r in subset:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(subset)} records to {args.out}")


if __name__ == "__main__":
    main()

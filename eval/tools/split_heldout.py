"""Freeze the held-out splits of the labelled question-kind and changed-fact files (run once, 2026-12-04).

The question-kind files (question_kinds.jsonl, question_kinds_test.jsonl, question_kinds_heldout.jsonl) and
neurips2026_claims.jsonl were all read while the rules of rag/answering/kinds.py and facts.py were written or
tested, so none of them is held out any more. This script splits them, once, with a fixed seed:

* question kinds: the three files become one dev file, ``eval/data/question_kinds_dev.jsonl``, and one held-out
  file, ``eval/data/heldout/question_kinds.jsonl``; each row keeps its fields and gains ``from`` (the file it came
  from). The split is stratified by (file, kind): ``round(35 %)`` of each stratum is held out.
* claims: ``neurips2026_claims.jsonl`` keeps its dev rows and ``eval/data/heldout/neurips2026_claims.jsonl`` gets
  the held-out ones, stratified by the kinds of the row's perturbed copies (its multiset of number / entity /
  negation) or by "unsupported".

Each stratum is shuffled with ``random.Random(SEED)`` after sorting, then its first ``round(share * n)`` rows are
held out. The sha256 of each held-out file goes to ``eval/data/heldout/MANIFEST.sha256`` (``sha256sum`` format);
``tests/test_heldout.py`` fails when a held-out file changes, and when any other test names one.

Usage: python eval/tools/split_heldout.py   (refuses to run again once eval/data/heldout/ exists)

Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
HELDOUT = DATA / "heldout"
SEED = 2804
SHARE = 0.35
KIND_FILES = ("question_kinds.jsonl", "question_kinds_test.jsonl", "question_kinds_heldout.jsonl")


def read(path: Path) -> tuple[list[str], list[dict]]:
    """(comment lines, rows) of a JSONL file whose comments start with ``//``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [x for x in lines if x.startswith("//")], [json.loads(x) for x in lines if x.strip().startswith("{")]


def split(rows: list[dict], stratum, rng: random.Random) -> tuple[list[dict], list[dict]]:
    """(dev, held out): ``SHARE`` of each stratum held out, chosen by ``rng``; both keep the file order."""
    groups: dict[object, list[int]] = defaultdict(list)
    for i, row in enumerate(rows):
        groups[stratum(row)].append(i)
    held: set[int] = set()
    for key in sorted(groups, key=repr):
        members = sorted(groups[key])
        rng.shuffle(members)
        held.update(members[: round(SHARE * len(members))])
    return [r for i, r in enumerate(rows) if i not in held], [r for i, r in enumerate(rows) if i in held]


def write(path: Path, comments: list[str], rows: list[dict]) -> None:
    path.write_text("".join(x + "\n" for x in comments + [json.dumps(r, ensure_ascii=False) for r in rows]))


def main() -> int:
    if HELDOUT.exists():
        print(f"{HELDOUT} exists: the split is made once and frozen", file=sys.stderr)
        return 1
    HELDOUT.mkdir()
    rng = random.Random(SEED)
    rows = []
    for name in KIND_FILES:
        rows += [{**r, "from": name} for r in read(DATA / name)[1]]
    dev, held = split(rows, lambda r: (r["from"], r["kind"]), rng)
    note = (
        "labelled questions for the question-kind classifier (lookup | list | compare | yesno), the {part} part "
        "of question_kinds.jsonl, question_kinds_test.jsonl and question_kinds_heldout.jsonl (field 'from'), "
        "split once by eval/tools/split_heldout.py (seed {seed}, {share:.0%} of each (file, kind) held out). "
        "Labelling convention: lookup = a fact/explanation from one or a few papers (incl. either/or and 'how "
        "many X' inside a paper); list = which/how many papers of the collection match a criterion (incl. 'are "
        "there any papers'); compare = compare/contrast named papers or methods, 'X vs Y', 'which is larger, X "
        "or Y', how several papers each/differ; yesno = a yes/no question. note = why, for borderline cases."
    )
    dev_note = "// question_kinds_dev: " + note.format(part="dev", seed=SEED, share=SHARE)
    write(DATA / "question_kinds_dev.jsonl", [dev_note], dev)
    held_note = (
        "// heldout/question_kinds: HELD OUT, read by no test and no tuning (only `bench kinds --split "
        "heldout` and `bench ablation`): "
    )
    write(HELDOUT / "question_kinds.jsonl", [held_note + note.format(part="held-out", seed=SEED, share=SHARE)], held)
    for name in KIND_FILES:
        (DATA / name).unlink()
    comments, claims = read(DATA / "neurips2026_claims.jsonl")

    def perturbations(row: dict) -> object:
        return "unsupported" if row.get("unsupported") else tuple(sorted(p["kind"] for p in row["perturbed"]))

    dev, held = split(claims, perturbations, rng)
    write(DATA / "neurips2026_claims.jsonl", comments, dev)
    held_note = (
        f"// heldout/neurips2026_claims: HELD OUT, read by no test and no tuning (only `bench claims --split "
        f"heldout` and `bench ablation`): {SHARE:.0%} of the rows of neurips2026_claims.jsonl, split once by "
        f"eval/tools/split_heldout.py (seed {SEED}, stratified by the kinds of the perturbed copies). Fields as there:"
    )
    write(HELDOUT / "neurips2026_claims.jsonl", [held_note + comments[0].split(":", 1)[1]], held)
    manifest = [f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}" for p in sorted(HELDOUT.glob("*.jsonl"))]
    (HELDOUT / "MANIFEST.sha256").write_text("\n".join(manifest) + "\n")
    print("\n".join(manifest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

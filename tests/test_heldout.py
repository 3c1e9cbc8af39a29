"""The held-out splits stay frozen and unread: their bytes match the committed manifest, and no test names them.

eval/data/heldout/ was split off once (eval/tools/split_heldout.py) so that the question-kind and changed-fact
rules can be scored on data they were not fitted on. Only the benches read it, when asked (``--split heldout``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELDOUT = ROOT / "eval" / "data" / "heldout"


def manifest() -> dict[str, str]:
    lines = (HELDOUT / "MANIFEST.sha256").read_text(encoding="utf-8").splitlines()
    return {name: digest for digest, name in (line.split(maxsplit=1) for line in lines if line.strip())}


def test_heldout_files_are_unchanged() -> None:
    expected = manifest()
    assert set(expected) == {p.name for p in HELDOUT.glob("*.jsonl")} and len(expected) >= 2
    for name, digest in expected.items():
        assert hashlib.sha256((HELDOUT / name).read_bytes()).hexdigest() == digest, f"{name} changed"


def test_no_other_test_reads_the_heldout_files() -> None:
    me = Path(__file__).resolve()
    # a path to the folder, however it is spelled: "heldout/x", Path(...) / "heldout", a raw string
    words = ["heldout/", "heldout\\", '"heldout"', "'heldout'"]
    readers = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "tests").rglob("*")
        if p.is_file()
        and p.suffix in (".py", ".json", ".jsonl", ".txt", ".toml")
        and p.resolve() != me
        and any(w in p.read_text(encoding="utf-8", errors="replace") for w in words)
    ]
    assert not readers, f"tests must not read eval/data/heldout/: {readers}"

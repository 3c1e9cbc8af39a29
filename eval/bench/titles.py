"""Derived titles against real ones: how many a reader would accept, with examples.

    python -m rag.evaluation.bench titles [--sample 1000] [--examples 12]   # about 10 s

Takes every k-th record of ``ml_abstracts.jsonl.gz`` (shared data, see _shared.py) so that ``--sample`` records
spread over the whole file (all venues and years), derives a title from the abstract alone
(``rag.derive_title``, what ingest does when a record has none) and compares it with the real title.

A derived title counts as *accepted* when a reader looking for the paper would recognise it:
  - it is short (at most 80 characters), not cut ("…"), and not a clause (no "we", "this paper");
  - and it points at the paper: a named contribution that appears in the real title, or key phrases that
    share at least two content words with it (one, if the derived title has only one or two).
This is a proxy for a person's judgement, strict on purpose (a derived "3D bounding box annotations" for
"WildBox: A Dataset for ..." does not count); the examples are printed so that it can be checked by eye.
The same proxy is applied to the previous rule (the first clause of the first sentence) for comparison.
The seed abstracts have no real titles: their derived titles are printed for inspection.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
from typing import Any

from rag import Assistant, derive_title
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench.suite import Output

NEEDS_LLM = False

_STOP = set(
    "a an the of for and or in on to with by from via at as is are be we our this that its their into using based "
    "towards toward through over under than not".split()
)


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


def accepted(derived: str, real: str) -> bool:
    if len(derived) > 80 or derived.endswith("…") or is_clause(derived):
        return False
    d, r = stems(derived), stems(real)
    shared = d & r
    return len(shared) >= 2 or (len(shared) >= 1 and len(d) <= 2)


def first_clause(abstract: str) -> str:
    """The previous rule, for comparison: the first clause of the first sentence, cut to 80 characters."""
    from rag.corpus.text import normalise_text  # the old rule's own helpers: a bench may read internals
    from rag.corpus.titles import _first_clause

    return _first_clause(normalise_text(abstract))


def sample(n: int) -> tuple[list[dict[str, Any]], int]:
    """``n`` records with a title and an abstract of 200+ characters, every k-th of the file; and k."""
    path = shared_data("ml_abstracts.jsonl.gz")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        total = sum(1 for _ in f)
    step = max(1, total // n)
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i % step:
                continue
            r = json.loads(line)
            if r.get("title") and len(r.get("abstract") or "") >= 200:
                out.append(r)
            if len(out) == n:
                break
    return out, step


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--examples", type=int, default=12, help="Examples printed of each outcome.")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    records, step = sample(args.sample or 1000)
    rows = []
    from rag.corpus.text import normalise_text  # which rule made the title, for the report only
    from rag.corpus.titles import key_phrase_title

    for r in records:
        derived = derive_title(r["abstract"])
        keys = key_phrase_title(normalise_text(r["abstract"]))
        rows.append(
            {
                "real": r["title"],
                "derived": derived,
                "kind": "key phrases" if derived == keys else "named",
                "ok": accepted(derived, r["title"]),
                "old": first_clause(r["abstract"]),
                "old_ok": accepted(first_clause(r["abstract"]), r["title"]),
                "len": len(derived),
            }
        )
    n = len(rows)
    ok = sum(x["ok"] for x in rows)
    old_ok = sum(x["old_ok"] for x in rows)
    lengths = sorted(x["len"] for x in rows)
    print(f"ml_abstracts: {n} records (every {step}th of the file), real titles hidden")
    print(f"accepted (proxy): {ok}/{n} = {ok / n:.1%}   previous rule (first clause): {old_ok}/{n} = {old_ok / n:.1%}")
    for kind in ("named", "key phrases"):
        part = [x for x in rows if x["kind"] == kind]
        if part:
            k_ok = sum(x["ok"] for x in part)
            print(f"  {kind:<12} {len(part):>4} titles, {k_ok} accepted ({k_ok / len(part):.1%})")
    coined = [x for x in rows if x["kind"] == "named" and not x["ok"] and re.fullmatch(r"\S*[A-Z0-9]\S*", x["derived"])]
    print(
        f"  named but not in the real title, a coined one-word name (BoxTE, coCondenser): {len(coined)}; "
        f"counting those as accepted too: {ok + len(coined)}/{n} = {(ok + len(coined)) / n:.1%}"
    )
    print(
        f"derived length: median {lengths[n // 2]} chars, max {lengths[-1]}; cut with '…': "
        f"{sum(x['derived'].endswith('…') for x in rows)}; clauses: {sum(is_clause(x['derived']) for x in rows)}"
    )
    print(f"previous rule: cut with '…' {sum(x['old'].endswith('…') for x in rows)} of {n}")
    for label, pick in (("accepted", True), ("not accepted", False)):
        print(f"\n{label} (examples):")
        for x in [x for x in rows if x["ok"] is pick][: args.examples]:
            print(f"  derived: {x['derived']}\n     real: {x['real']}")
    print("\nseed abstracts (no real titles):")
    from rag.corpus import read_corpus  # the seed file format; derive_title is what ingest applies to it

    for p in read_corpus(Assistant.bundled_corpus()):
        print(f"  {p.title}")
    return {
        "records": n,
        "step": step,
        "accepted": ok,
        "accepted_share": ok / n,
        "previous_rule_accepted": old_ok,
        "coined_names": len(coined),
        "median_length": lengths[n // 2],
    }

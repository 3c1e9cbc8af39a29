"""Metadata filters as users type them: ``venue=NeurIPS year=2018`` -> ``{"venue": "NeurIPS", "year": 2018}``.

The one place that knows which keys a filter may name: the corpus' own fields, never the internal
``_``-prefixed ones the store keeps beside them.
"""

from __future__ import annotations

from rag.types import MetaValue


def parse_where(pairs: list[str] | tuple[str, ...]) -> dict[str, MetaValue]:
    """``["venue=NeurIPS", "year=2018"]`` -> ``{"venue": "NeurIPS", "year": 2018}`` (integers become ints)."""
    where: dict[str, MetaValue] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"Filter {pair!r} is not key=value")
        if key.strip().startswith("_"):
            raise ValueError(
                f"Filter {pair!r}: keys starting with '_' are internal; "
                "filter on the corpus' own fields (venue, year, ...)"
            )
        v: MetaValue = value.strip()
        if isinstance(v, str) and v.lstrip("-").isdigit():
            v = int(v)
        where[key.strip()] = v
    return where

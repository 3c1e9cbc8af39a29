"""One source record (a JSON object, a CSV row, a paragraph) -> a validated :class:`~rag.types.Paper`.

Every check names the file and line; a record that would fail later in the store (metadata Chroma
rejects, surrogates, huge numbers) fails here, before anything is written.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from rag.corpus.text import normalise_text
from rag.corpus.titles import derive_title
from rag.errors import IngestError
from rag.types import MetaValue, Paper

_ID_KEYS = ("id", "paper_id", "_id")
_RESERVED = {"id", "paper_id", "_id", "title", "abstract", "text", "authors", "venue", "year", "url"}
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_INT64 = 2**63


def paper_id_for(abstract: str) -> str:
    """The content id of an abstract without a given id: ``"h-"`` + 16 hex of sha256.

    Hashes the normalised, lower-cased text, so whitespace and markup differences do not matter.
    """
    key = normalise_text(abstract).lower()
    return "h-" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]  # never raises


def paper_from_record(record: Any, where: str, source: str) -> Paper:
    if not isinstance(record, dict):
        raise IngestError(f"{where}: expected a JSON object (a record), got {_json_type(record)}")
    keys = {str(k).lower(): k for k in record}

    def get(name: str) -> Any:
        return record[keys[name]] if name in keys else None

    if "abstract" in keys:
        abstract = get("abstract")
        field_name = "abstract"
    elif "_id" in keys or "text" in keys:  # BEIR corpus record
        if "text" not in keys:
            raise IngestError(f"{where}: BEIR record without 'text' (keys: {_keys_text(record)})")
        abstract, field_name = get("text"), "text"
    else:
        raise IngestError(f"{where}: record without 'abstract' (keys: {_keys_text(record) or 'none'})")
    if not isinstance(abstract, str):
        raise IngestError(f"{where}: '{field_name}' must be a string, got {_json_type(abstract)}")
    if not abstract.strip():
        raise IngestError(f"{where}: '{field_name}' is empty")
    abstract = abstract.strip()
    if not _has_text(abstract):
        raise IngestError(f"{where}: '{field_name}' has no text once markup is removed ({_clip(abstract)})")

    paper_id = None
    for key in _ID_KEYS:
        value = get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        if isinstance(value, (dict, list)):
            raise IngestError(f"{where}: '{key}' must be a string or a number, got {_json_type(value)}")
        paper_id = str(value).strip()
        break

    title = get("title")
    if isinstance(title, (dict, list)):
        raise IngestError(f"{where}: 'title' must be a string, got {_json_type(title)}")
    title = " ".join(str(title).split()) if title is not None else ""
    if title and not _has_text(title):  # e.g. only zero-width spaces: derive a visible one
        title = ""

    try:
        paper = Paper(
            paper_id=paper_id or paper_id_for(abstract),
            title=title or derive_title(abstract),
            title_derived=not title,
            abstract=abstract,
            authors=_parse_authors(get("authors"), where),
            venue=_optional_str(get("venue"), "venue", where),
            year=_parse_year(get("year"), where),
            url=_optional_str(get("url"), "url", where),
            metadata=_metadata(record),
            source=source,
        )
    except ValueError as e:  # pydantic.ValidationError is a ValueError
        raise IngestError(f"{where}: invalid record ({e})") from e
    _check_storable(paper, where)
    return paper


def _keys_text(record: dict[Any, Any]) -> str:
    return ", ".join(_clip(str(k)) for k in record)


def _clip(text: str, limit: int = 40) -> str:
    """``repr`` of the start of ``text``: one line, whatever the text holds."""
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def _has_text(text: str) -> bool:
    """False when nothing is left once markup and zero-width characters are removed (``\\cite{x}``, ``\\u200b``)."""
    if "\\" not in text and any(ch.isalnum() for ch in text):
        return True  # markup without a backslash never removes letters or digits; skips the normalisation
    return bool(normalise_text(text))


def _check_storable(paper: Paper, where: str) -> None:
    """Reject what the index could not store: unpaired surrogates (``\\ud800`` escapes in JSON) in any
    text, metadata keys that Chroma rejects (empty, starting with '$' or '#', ``chroma:document``)."""
    fields: list[tuple[str, Any]] = [
        ("abstract", paper.abstract),
        ("id", paper.paper_id),
        ("title", paper.title),
        ("venue", paper.venue),
        ("url", paper.url),
    ]
    fields += [("authors", a) for a in paper.authors]
    for key, value in paper.metadata.items():
        if not key or key[0] in "$#" or key == "chroma:document":
            raise IngestError(
                f"{where}: the key {_clip(key)} cannot be stored as metadata (keys must not be empty or start with "
                "'$' or '#'); rename or remove it"
            )
        fields += [(key, key), (key, value)]
    for name, value in fields:
        if isinstance(value, str) and _SURROGATE_RE.search(value):
            raise IngestError(
                f"{where}: {_clip(name)} holds an unpaired UTF-16 surrogate (an escape such as \\ud800 without "
                "its pair), which is not valid Unicode"
            )


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _optional_str(value: Any, name: str, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, (dict, list)):
        raise IngestError(f"{where}: '{name}' must be a string, got {_json_type(value)}")
    return str(value).strip() or None


def _parse_authors(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        parts = value.split(";") if ";" in value else value.split(",")
    elif isinstance(value, list):
        if any(isinstance(v, (dict, list)) for v in value):
            raise IngestError(f"{where}: 'authors' must be a list of names or a 'a; b' string")
        parts = [str(v) for v in value if v is not None]
    else:
        raise IngestError(f"{where}: 'authors' must be a list of names or a 'a; b' string, got {_json_type(value)}")
    return tuple(p.strip() for p in parts if p.strip())


def _parse_year(value: Any, where: str) -> int | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    year: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        year = value
    elif isinstance(value, float) and value.is_integer():
        year = int(value)
    elif isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,20}(?:\.0+)?\s*", value):
        year = int(float(value))
    if year is None or not -9999 <= year <= 9999:
        raise IngestError(f"{where}: 'year' must be an integer from -9999 to 9999, got {_clip(str(value))}")
    return year


def _metadata(record: dict[str, Any]) -> dict[str, MetaValue]:
    """Every other key. Lists of scalars are joined with "; "; nested objects are JSON-dumped, except
    a BEIR-style ``metadata`` object, whose scalar entries are merged in."""
    out: dict[str, MetaValue] = {}
    for key, value in record.items():
        key = str(key)
        if key.lower() in _RESERVED:
            continue
        if key.lower() == "metadata" and isinstance(value, dict):
            for sub_key, sub_value in value.items():
                converted = _meta_value(sub_value)
                if converted is not None and str(sub_key) not in out and str(sub_key).lower() not in _RESERVED:
                    out[str(sub_key)] = converted
            continue
        converted = _meta_value(value)
        if converted is not None:
            out[key] = converted
    return out


def _meta_value(value: Any) -> MetaValue | None:
    if value is None or value == "" or value == [] or value == {}:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None  # NaN (often "missing" in exported tables) and infinities: Chroma stores neither
    if isinstance(value, int) and not isinstance(value, bool) and not -_INT64 <= value < _INT64:
        return str(value)  # Chroma would turn it into a lossy float
    if isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, list) and all(isinstance(v, (str, int, float, bool)) or v is None for v in value):
        return "; ".join(str(v) for v in value if v is not None and v != "")
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

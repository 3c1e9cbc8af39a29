"""Read corpus files into :class:`~rag.types.Paper` records: formats, files and directories, dedupe.

Formats, picked by extension (each may also be gzipped, ``.gz``):

* ``.txt``   the seed format: the first non-empty line is the collection title (kept as metadata
  ``collection``), then one abstract per blank-line-separated paragraph.
* ``.jsonl`` / ``.ndjson``  JSON Lines: our schema (``abstract`` required; optional ``id``, ``title``,
  ``authors``, ``venue``, ``year``, ``url``; other keys go to ``metadata``) or a BEIR corpus
  (``_id``, ``title``, ``text``), told apart per record by its keys.
* ``.json``  a JSON array of such records (also a single record object, or JSON Lines saved as ``.json``).
* ``.csv``   a header row with an ``abstract`` column; the other columns as above.

Every file is read and validated completely before anything is returned, so a caller that writes
an index writes nothing when a file is bad. Errors are :class:`~rag.errors.IngestError` and name
the file and the line (the record index too, for JSON arrays).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import sys
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from rag.corpus.records import paper_from_record
from rag.corpus.text import normalise_text
from rag.errors import IngestError
from rag.types import Paper

SUPPORTED_SUFFIXES = (".txt", ".jsonl", ".ndjson", ".json", ".csv")
_BOM = b"\xef\xbb\xbf"
_READ_ERRORS = (OSError, EOFError, zlib.error)  # gzip.BadGzipFile is an OSError; a truncated .gz is an EOFError
# json.loads raises these besides JSONDecodeError: a number longer than sys.get_int_max_str_digits(), deep nesting
_JSON_ERRORS = (ValueError, RecursionError)


@dataclass
class IngestResult:
    """What :func:`load_corpora` read: the papers, and what it dropped on the way."""

    papers: list[Paper] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    duplicates: int = 0
    """Records dropped because an earlier record had the same ``paper_id`` and the same abstract."""
    conflicts: int = 0
    """Records dropped because an earlier record had the same ``paper_id`` but another abstract."""
    warnings: list[str] = field(default_factory=list)
    """One line per conflict and per file skipped in a directory."""


def read_corpus(path: Path) -> list[Paper]:
    """Read one corpus file, or every supported file directly inside a directory (sorted by name).

    Papers with the same ``paper_id`` are kept once (the first one). Raises :class:`IngestError`.
    """
    return load_corpora([path]).papers


def read_corpora(paths: Iterable[Path]) -> list[Paper]:
    """Read files and directories (as :func:`read_corpus`), deduplicating across all of them."""
    return load_corpora(paths).papers


def load_corpora(paths: Iterable[Path] | Path) -> IngestResult:
    """Like :func:`read_corpora`, but also report duplicates, conflicting ids and skipped files."""
    result = IngestResult()
    first_seen: dict[str, Paper] = {}
    for path in _expand([paths] if isinstance(paths, (str, Path)) else paths, result):
        result.files.append(path)
        for paper in _read_file(path):
            earlier = first_seen.get(paper.paper_id)
            if earlier is None:
                first_seen[paper.paper_id] = paper
                result.papers.append(paper)
            elif normalise_text(earlier.abstract) == normalise_text(paper.abstract):
                result.duplicates += 1
            else:
                result.conflicts += 1
                result.warnings.append(
                    f"{paper.source}: paper_id {paper.paper_id!r} was already read from {earlier.source} "
                    "with a different abstract; kept the first one"
                )
    return result


def bundled_corpus() -> Path:
    """The demo corpus shipped inside the package (19 NeurIPS 2026 abstracts, seed ``.txt`` format)."""
    return Path(str(resources.files("rag").joinpath("data", "neurips2026_abstracts.txt")))


def _expand(paths: Iterable[Path | str], result: IngestResult) -> Iterator[Path]:
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = False
            for child in sorted(path.iterdir()):
                if child.name.startswith(".") or not child.is_file():
                    continue
                if _format_of(child) is None:
                    result.warnings.append(f"{child}: skipped (not a corpus file; supported: {_supported_text()})")
                    continue
                found = True
                yield child
            if not found:
                raise IngestError(f"{path}: no corpus files in this directory (supported: {_supported_text()})")
        else:
            yield path


def _supported_text() -> str:
    return ", ".join(SUPPORTED_SUFFIXES) + " (optionally .gz)"


def _format_of(path: Path) -> str | None:
    name = path.name.lower()
    name = name.removesuffix(".gz")
    for suffix in SUPPORTED_SUFFIXES:
        if name.endswith(suffix):
            return "jsonl" if suffix == ".ndjson" else suffix[1:]
    return None


def _read_file(path: Path) -> list[Paper]:
    if not path.exists():
        raise IngestError(f"{path}: file not found")
    fmt = _format_of(path)
    if fmt is None:
        raise IngestError(f"{path}: unsupported file type; use one of {_supported_text()}")
    if not path.is_file():
        raise IngestError(f"{path}: not a regular file")
    try:
        if fmt == "jsonl":
            papers = _read_jsonl(path, _iter_lines(path))
        else:
            text = _read_text(path)
            if fmt == "json":
                papers = _read_json(path, text)
            elif fmt == "csv":
                papers = _read_csv(path, text)
            else:
                papers = _read_txt(path, text)
    except IngestError:
        raise
    except _READ_ERRORS as e:
        raise IngestError(f"{path}: cannot read the file: {e}") from e
    if not papers:
        raise IngestError(f"{path}: the file holds no records")
    return papers


def _open_binary(path: Path) -> io.BufferedIOBase | gzip.GzipFile:
    return gzip.open(path, "rb") if path.name.lower().endswith(".gz") else open(path, "rb")


def _decode_error(
    path: Path, data: bytes, e: UnicodeDecodeError, *, base_line: int = 1, base_offset: int = 0
) -> IngestError:
    line = base_line + data.count(b"\n", 0, e.start)
    offset = base_offset + e.start
    where = " of the uncompressed data" if path.name.lower().endswith(".gz") else ""
    return IngestError(
        f"{path}, line {line}: not valid UTF-8 (byte 0x{data[e.start]:02x} at byte offset {offset}{where}); "
        "re-save the file as UTF-8"
    )


def _read_text(path: Path) -> str:
    with _open_binary(path) as fh:
        data = fh.read()
    bom = len(_BOM) if data.startswith(_BOM) else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as e:
        raise _decode_error(path, data[bom:], e, base_offset=bom) from e
    return text


def _iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Decoded lines, streamed, so a large ``.jsonl.gz`` is never held in memory as one string."""
    offset = 0
    with _open_binary(path) as fh:
        for lineno, raw in enumerate(fh, 1):
            if lineno == 1 and raw.startswith(_BOM):
                raw, offset = raw[len(_BOM) :], len(_BOM)
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise _decode_error(path, raw, e, base_line=lineno, base_offset=offset) from e
            offset += len(raw)
            yield lineno, line


def _read_jsonl(path: Path, lines: Iterable[tuple[int, str]]) -> list[Paper]:
    papers = []
    for lineno, line in lines:
        if not line.strip():
            continue
        where = f"{path}, line {lineno}"
        try:
            record = json.loads(line)
        except _JSON_ERRORS as e:
            raise IngestError(f"{where}: invalid JSON ({_json_problem(e)})") from e
        papers.append(paper_from_record(record, where, f"{path.name}:{lineno}"))
    return papers


def _read_json(path: Path, text: str) -> list[Paper]:
    """A JSON array of records; also a single record object, or JSON Lines saved as ``.json``."""
    if not text.lstrip().startswith("{"):
        return _read_json_array(path, text)
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        return _read_jsonl(path, enumerate(io.StringIO(text, newline=""), 1))
    except _JSON_ERRORS as e:  # in the first record, whichever of the two layouts the file has
        raise IngestError(f"{path}, line 1: invalid JSON ({_json_problem(e)})") from e
    return [paper_from_record(whole, f"{path}, line 1 (a single JSON object)", f"{path.name}:1")]


def _read_json_array(path: Path, text: str) -> list[Paper]:
    """Walk the array with ``raw_decode`` so that each record's line is known."""
    decoder = json.JSONDecoder()
    pos, line, counted = _skip_ws(text, 0), 1, 0

    def line_at(i: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, i)
        counted = i
        return line

    if pos >= len(text):
        return []
    if text[pos] != "[":
        raise IngestError(f"{path}, line {line_at(pos)}: expected a JSON array of records ([{{...}}, ...])")
    pos = _skip_ws(text, pos + 1)
    papers: list[Paper] = []
    index = 0
    while True:
        if pos >= len(text):
            raise IngestError(f"{path}, line {line_at(pos)}: invalid JSON (the array is not closed with ']')")
        if text[pos] == "]" and index == 0:
            pos += 1
            break
        try:
            record, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise IngestError(
                f"{path}, line {e.lineno}: invalid JSON ({e.msg} at column {e.colno}, record [{index}])"
            ) from e
        except _JSON_ERRORS as e:
            raise IngestError(
                f"{path}, record [{index}] (line {line_at(pos)}): invalid JSON ({_json_problem(e)})"
            ) from e
        start_line = line_at(pos)
        papers.append(
            paper_from_record(record, f"{path}, record [{index}] (line {start_line})", f"{path.name}:{start_line}")
        )
        index += 1
        pos = _skip_ws(text, end)
        if text[pos : pos + 1] == ",":
            pos = _skip_ws(text, pos + 1)
        elif text[pos : pos + 1] == "]":
            pos += 1
            break
        else:
            raise IngestError(
                f"{path}, line {line_at(pos)}: invalid JSON (expected ',' or ']' after record [{index - 1}])"
            )
    if _skip_ws(text, pos) < len(text):
        raise IngestError(f"{path}, line {line_at(_skip_ws(text, pos))}: invalid JSON (extra data after the array)")
    return papers


def _json_problem(e: ValueError | RecursionError) -> str:
    if isinstance(e, json.JSONDecodeError):
        return f"{e.msg} at column {e.colno}"
    if isinstance(e, RecursionError):
        return "nested too deeply"
    if "integer string conversion" in str(e):
        return f"a number has more than {sys.get_int_max_str_digits()} digits"
    return str(e)


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _read_csv(path: Path, text: str) -> list[Paper]:
    # No field can be longer than the file; raise the process-wide limit only as far as needed.
    if len(text) >= csv.field_size_limit():
        csv.field_size_limit(min(len(text) + 1, 2**31 - 1))
    # strict: a stray quote is an error here rather than silently merged text in an abstract
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    papers: list[Paper] = []
    prev_end = 0
    try:
        header = next(reader, None)
        if header is None:
            return []
        columns = [h.strip() for h in header]
        if "abstract" not in {c.lower() for c in columns}:
            raise IngestError(
                f"{path}, line 1: no 'abstract' column in the header ({', '.join(repr(c) for c in columns)})"
            )
        prev_end = reader.line_num
        for row in reader:
            start, prev_end = prev_end + 1, reader.line_num
            if not row or all(not cell.strip() for cell in row):
                continue
            where = f"{path}, line {start}"
            extra = row[len(columns) :]
            if any(cell.strip() for cell in extra):
                raise IngestError(
                    f"{where}: {len(row)} fields but the header has {len(columns)}; quote fields that contain commas"
                )
            record = {col: cell for col, cell in zip(columns, row) if col and cell.strip()}
            papers.append(paper_from_record(record, where, f"{path.name}:{start}"))
    except csv.Error as e:
        raise IngestError(f"{path}, line {prev_end + 1}: malformed CSV ({e}); check the quoting of this record") from e
    return papers


def _read_txt(path: Path, text: str) -> list[Paper]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    collection: str | None = None
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    # The first line is the collection's title, unless it is plainly an abstract itself.
    if i < len(lines) and len(lines[i].strip()) <= 200 and (i + 1 == len(lines) or not lines[i + 1].strip()):
        collection = lines[i].strip()
        i += 1
    papers: list[Paper] = []
    para: list[str] = []
    start = 0
    for lineno in range(i + 1, len(lines) + 2):
        line = lines[lineno - 1] if lineno <= len(lines) else ""
        if line.strip():
            if not para:
                start = lineno
            para.append(line.strip())
        elif para:
            record: dict[str, Any] = {"abstract": " ".join(para)}
            if collection:
                record["collection"] = collection
            papers.append(paper_from_record(record, f"{path}, paragraph at line {start}", f"{path.name}:{start}"))
            para = []
    return papers

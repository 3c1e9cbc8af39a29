"""Fuzzing the corpus readers (hypothesis): whatever a file holds, reading it gives papers the index can
store, or an IngestError that names the file and the line or record on one line; `rag ingest` on such a
file exits 1 with that line, no traceback, and writes nothing.

Examples are random (no example database), so a new run explores new inputs; a failure prints the
``@reproduce_failure`` blob that replays it.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import re
import subprocess
import sys
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rag import IngestError, Paper
from rag.apps.cli import cli
from rag.corpus import normalise_text, read_corpora

DATA = Path(__file__).parent / "data"
FUZZ = settings(
    max_examples=200,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SUFFIXES = [".txt", ".jsonl", ".ndjson", ".json", ".csv", ".txt.gz", ".jsonl.gz", ".json.gz", ".csv.gz"]
# where an error points: a line, a JSON array record, a paragraph of the seed format; or the whole file
LOCATED = re.compile(r", (?:line \d+|record \[\d+\] \(line \d+\)|paragraph at line \d+)[:( ]")
WHOLE_FILE = (": the file holds no records", ": cannot read the file: ")
SEEDS = {
    ".jsonl": (DATA / "abstracts.jsonl").read_bytes()[:1500],
    ".json": (DATA / "abstracts.json").read_bytes()[:1500],
    ".csv": (DATA / "abstracts.csv").read_bytes()[:1500],
    ".txt": b"My Papers\n\nWe introduce WildBox, a dataset of zebras.\n\nA second abstract about $k$-means.\n",
}


# ---------------------------------------------------------------------------------------------- the property
def check_read(path: Path) -> list[Paper] | IngestError:
    """Read ``path``: valid papers, or an IngestError with a clear message. Anything else fails the test."""
    try:
        papers = read_corpora([path])
    except IngestError as e:
        assert_clear_error(str(e), path)
        return e
    assert_storable(papers)
    return papers


def assert_clear_error(msg: str, path: Path) -> None:
    assert msg.startswith(str(path)), msg
    assert "\n" not in msg and "\r" not in msg, repr(msg)
    assert LOCATED.match(msg, len(str(path))) or any(msg.startswith(str(path) + w) for w in WHOLE_FILE), msg
    msg.encode("utf-8")  # printable: no unpaired surrogate copied from the input


def assert_storable(papers: list[Paper]) -> None:
    """What the index needs: text in every abstract, an id and a title, unique ids, valid Unicode,
    metadata keys and values Chroma accepts."""
    assert papers
    ids = [p.paper_id for p in papers]
    assert len(set(ids)) == len(ids)
    for p in papers:
        assert p.abstract.strip() and normalise_text(p.abstract), p
        assert p.paper_id.strip() and p.title.strip(), p
        texts = [p.abstract, p.paper_id, p.title, p.venue or "", p.url or "", *p.authors, *p.metadata]
        texts += [v for v in p.metadata.values() if isinstance(v, str)]
        for text in texts:
            text.encode("utf-8")
        for key, value in p.metadata.items():
            assert key and key[0] not in "$#" and key != "chroma:document", key
            assert not isinstance(value, float) or math.isfinite(value), (key, value)
            assert not isinstance(value, int) or -(2**63) <= value < 2**63, (key, value)


@pytest.fixture(scope="module")
def new_path(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder, n = tmp_path_factory.mktemp("fuzz"), count()
    return lambda suffix: folder / f"f{next(n)}{suffix}"


def write(path: Path, data: bytes, compress: bool = True) -> Path:
    path.write_bytes(gzip.compress(data, mtime=0) if compress and path.name.endswith(".gz") else data)
    return path


# ---------------------------------------------------------------------------------------------- strategies
# any code point, unpaired surrogates included (json.dumps writes them as \ud800 escapes)
chars = st.characters() | st.characters(codec=None, categories=["Cs"])
texts = st.text(chars, max_size=40) | st.sampled_from(
    ["", " ", "\u200b", "\\cite{x}", "$x$", "\x00", "NaN", "2024", "a\nb"]
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 2, max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | texts
)
json_values = st.recursive(
    scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(texts, c, max_size=4), max_leaves=12
)
KEYS = [
    "abstract",
    "Abstract",
    "text",
    "_id",
    "id",
    "paper_id",
    "title",
    "authors",
    "venue",
    "year",
    "url",
    "metadata",
    "",
    "$x",
    "#",
    "chroma:document",
    "_internal",
    "track",
]
keys = st.sampled_from(KEYS) | st.text(chars, max_size=6)
records = st.dictionaries(keys, json_values, max_size=6)
# mostly-valid records, so that the "correct read" side of the property is exercised too
plausible = st.fixed_dictionaries(
    {"abstract": st.text(min_size=1, max_size=60) | texts},
    optional=dict.fromkeys(
        ["id", "title", "authors", "venue", "year", "url", "track", "metadata"], json_values | texts
    ),
)


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    """A valid file of some format with a few bytes replaced, inserted or deleted."""
    suffix = draw(st.sampled_from(sorted(SEEDS)))
    data = bytearray(SEEDS[suffix])
    for _ in range(draw(st.integers(1, 6))):
        pos = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["set", "insert", "delete"]))
        byte = draw(st.sampled_from(b'\x00\xff\xc3\x80"{}[],:\\\n\r \t') | st.integers(0, 255))
        if op == "insert" or pos == len(data):
            data.insert(pos, byte)
        elif op == "set":
            data[pos] = byte
        else:
            del data[pos]
    return suffix, bytes(data)


# ---------------------------------------------------------------------------------------------- properties
@FUZZ
@given(data=st.binary(max_size=600), suffix=st.sampled_from(SUFFIXES), compress=st.booleans())
def test_random_bytes_read_or_fail_clearly(new_path: Any, data: bytes, suffix: str, compress: bool) -> None:
    check_read(write(new_path(suffix), data, compress))


@pytest.mark.slow
@FUZZ
@given(case=mutated(), compress=st.booleans())
def test_mutated_valid_files_read_or_fail_clearly(new_path: Any, case: tuple[str, bytes], compress: bool) -> None:
    suffix, data = case
    check_read(write(new_path(suffix + (".gz" if compress else "")), data))


@pytest.mark.slow
@FUZZ
@given(
    values=st.lists(records | plausible | json_values, max_size=5),
    layout=st.sampled_from(["array", "object", "lines", "pretty"]),
    ascii_only=st.booleans(),
)
def test_random_json_reads_or_fails_clearly(new_path: Any, values: list[Any], layout: str, ascii_only: bool) -> None:
    def dump(v: Any, indent: int | None = None) -> str:
        return json.dumps(v, ensure_ascii=ascii_only, indent=indent)

    text = {
        "array": lambda: dump(values),
        "object": lambda: dump(values[0] if values else {}),
        "pretty": lambda: dump(values, indent=2),
        "lines": lambda: "\n".join(dump(v) for v in values),
    }[layout]()
    data = text.encode("utf-8", "surrogatepass")  # unescaped surrogates become bytes that are not UTF-8
    result = check_read(write(new_path(".jsonl" if layout == "lines" else ".json"), data))
    if layout == "lines" and isinstance(result, list):
        assert {p.source.rsplit(":", 1)[1] for p in result} <= {str(i) for i in range(1, len(values) + 1)}


COLUMNS = ["abstract", "Abstract", "title", "id", "year", "authors", "venue", "", "#", "$k", "track", "abstract\x00"]
cells = st.text(chars, max_size=30) | st.sampled_from(['"', '""', "a,b", "x\ny", "\x00", "\r", " ", "1999", "\\emph{}"])


@pytest.mark.slow
@FUZZ
@given(
    header=st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=5),
    rows=st.lists(st.lists(cells, max_size=6), max_size=5),
    quoting=st.sampled_from(["minimal", "all", "nonnumeric", "raw"]),
    bad_byte=st.none() | st.tuples(st.integers(0, 10**4), st.sampled_from([b"\xff", b"\xc3", b"\x80", b"\x00"])),
    huge=st.booleans(),
)
def test_random_csv_reads_or_fails_clearly(
    new_path: Any,
    header: list[str],
    rows: list[list[str]],
    quoting: str,
    bad_byte: tuple[int, bytes] | None,
    huge: bool,
) -> None:
    if huge and rows:
        rows[0] = ["zebra " * 100_000] + rows[0][1:]  # a 600 kB field, beyond csv's default field size limit
    buf = io.StringIO(newline="")
    if quoting == "raw":  # no quoting at all: commas, quotes and newlines inside fields break the layout
        buf.write("\n".join(",".join(r) for r in [header, *rows]))
    else:
        mode = {"minimal": csv.QUOTE_MINIMAL, "all": csv.QUOTE_ALL, "nonnumeric": csv.QUOTE_NONNUMERIC}[quoting]
        csv.writer(buf, quoting=mode).writerows([header, *rows])
    data = buf.getvalue().encode("utf-8", "surrogatepass")
    if bad_byte is not None:
        pos = bad_byte[0] % (len(data) + 1)
        data = data[:pos] + bad_byte[1] + data[pos:]
    check_read(write(new_path(".csv"), data))


@FUZZ
@given(
    paragraphs=st.lists(st.lists(texts, min_size=1, max_size=3), max_size=5), sep=st.sampled_from(["\n", "\r\n", "\r"])
)
def test_random_seed_text_reads_or_fails_clearly(new_path: Any, paragraphs: list[list[str]], sep: str) -> None:
    text = (sep * 2).join(sep.join(lines) for lines in paragraphs)
    check_read(write(new_path(".txt"), text.encode("utf-8", "surrogatepass")))


# ---------------------------------------------------------------------------------------------- what the fuzzer found
BIG = "9" * 5000
FOUND = [  # (file name, content, what the message says); each of these raised something other than IngestError, or read
    (
        "bigint.jsonl",
        f'{{"abstract": "Zebras.", "n": {BIG}}}\n',
        "line 1: invalid JSON (a number has more than 4300 digits)",
    ),
    (
        "bigint.json",
        f'[{{"abstract": "Zebras."}}, {{"abstract": "Okapis.", "year": {BIG}}}]',
        "record [1] (line 1): invalid JSON (a number has more than",
    ),
    ("bigint_object.json", f'{{"abstract": "Zebras.", "n": {BIG}}}', "line 1: invalid JSON (a number has more than"),
    (
        "deep.jsonl",
        '{"abstract": "Zebras.", "m": ' + "[" * 100_000 + "]" * 100_000 + "}\n",
        "line 1: invalid JSON (nested too deeply)",
    ),
    ("deep.json", "[" * 100_000 + "]" * 100_000, "record [0] (line 1): invalid JSON (nested too deeply)"),
    (
        "surrogate.jsonl",
        '{"abstract": "Zebras \\ud800 in 3D."}\n',
        "line 1: 'abstract' holds an unpaired UTF-16 surrogate",
    ),
    (
        "surrogate_key.jsonl",
        '{"abstract": "Zebras.", "\\udfff": 1}\n',
        "line 1: '\\udfff' holds an unpaired UTF-16 surrogate",
    ),
    ("empty_key.jsonl", '{"abstract": "Zebras.", "": 1}\n', "line 1: the key '' cannot be stored as metadata"),
    (
        "dollar_key.json",
        '[{"abstract": "Zebras.", "metadata": {"$and": 1}}]',
        "record [0] (line 1): the key '$and' cannot be stored",
    ),
    ("hash_column.csv", "abstract,#\nZebras.,1\n", "line 2: the key '#' cannot be stored as metadata"),
    (
        "markup_only.jsonl",
        '{"abstract": "\\\\cite{smith2020}"}\n',
        "line 1: 'abstract' has no text once markup is removed",
    ),
    ("zero_width.txt", "Title\n\n\u200b\u200b\n", "paragraph at line 3: 'abstract' has no text once markup is removed"),
    ("newline_key.jsonl", '{"title": "x", "a\\nb": 1}\n', "line 1: record without 'abstract' (keys: 'title', 'a\\nb')"),
    ("year.jsonl", '{"abstract": "Zebras.", "year": 1e300}\n', "line 1: 'year' must be an integer from -9999 to 9999"),
]


@pytest.mark.parametrize(("name", "content", "message"), FOUND, ids=[f[0] for f in FOUND])
def test_inputs_the_fuzzer_found_are_clear_errors(new_path: Any, name: str, content: str, message: str) -> None:
    path = new_path("-" + name)
    path.write_text(content, encoding="utf-8")
    err = check_read(path)
    assert isinstance(err, IngestError) and message in str(err), err


def test_values_the_index_cannot_store_are_dropped_or_kept_as_text(new_path: Any) -> None:
    path = new_path(".jsonl")
    path.write_text(
        json.dumps({"abstract": "Zebras in 3D.", "score": math.nan, "peak": math.inf, "big": 10**30, "title": "\u200b"})
        + "\n"
    )
    [paper] = check_read(path)  # type: ignore[misc]
    assert paper.metadata == {"big": str(10**30)}
    assert paper.title == "Zebras in 3D" and paper.title_derived  # an invisible title is replaced


# ---------------------------------------------------------------------------------------------- the real CLI
CLI_BAD = {  # generated bad files, one per reader and failure kind
    "bigint.jsonl": FOUND[0][1].encode(),
    "deep.json": FOUND[4][1].encode(),
    "surrogate.jsonl": FOUND[5][1].encode(),
    "latin1.csv": "abstract,title\nZ\u00e8bres du Serengeti.,Z\n".encode("latin-1"),
    "nul_header.csv": b"abstract\x00,title\nZebras.,Z\n",
    "truncated.jsonl.gz": gzip.compress(b'{"abstract": "Zebras."}\n' * 50)[:40],
    "random.json": bytes(range(256)),
}


@pytest.fixture
def indexed(tmp_path: Path) -> Any:
    """`rag` in-process on a data dir that already holds one paper; returns (invoke, snapshot)."""
    env = {"RAG_DATA_DIR": str(tmp_path / "data"), "RAG_CONFIG": str(tmp_path / "none.toml")}
    runner = CliRunner()

    def invoke(*args: str) -> Any:
        return runner.invoke(cli, list(args), env=env, catch_exceptions=False)

    def snapshot() -> tuple[Any, ...]:
        # the index (Chroma, BM25) byte for byte; not the embedding cache, whose SQLite WAL any open may checkpoint
        files = sorted(
            (str(p.relative_to(tmp_path)), p.stat().st_size, p.stat().st_mtime_ns)
            for p in (tmp_path / "data").rglob("*")
            if p.is_file() and not p.name.startswith("embedding-cache")
        )
        return json.loads(invoke("stats", "--json").output)["papers"], files

    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"id": "g1", "abstract": "A fine abstract about zebras."}) + "\n")
    assert invoke("ingest", str(good)).exit_code == 0
    return invoke, snapshot, env, good


@pytest.mark.parametrize("name", sorted(CLI_BAD))
def test_cli_ingest_of_a_bad_file_exits_1_with_one_line_and_writes_nothing(
    indexed: Any, tmp_path: Path, name: str
) -> None:
    invoke, snapshot, _, good = indexed
    bad = tmp_path / name
    bad.write_bytes(CLI_BAD[name])
    before = snapshot()
    r = invoke("ingest", str(good), str(bad), "--prune")  # --prune would delete g1 if anything were written
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {bad}") and "Traceback" not in r.output, r.output
    assert snapshot() == before


@pytest.mark.slow
def test_cli_ingest_as_a_real_process(indexed: Any, tmp_path: Path) -> None:
    _, snapshot, env, _ = indexed
    bad = tmp_path / "deep.json"
    bad.write_bytes(CLI_BAD["deep.json"])
    before = snapshot()
    proc = subprocess.run(
        [sys.executable, "-m", "rag.apps.cli", "ingest", str(bad)],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | env,
    )
    assert proc.returncode == 1 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [f"Error: {bad}, record [0] (line 1): invalid JSON (nested too deeply)"]
    assert snapshot() == before

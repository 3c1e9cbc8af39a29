"""The `rag` command line, in-process (CliRunner) and as a real process with networking blocked."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from rag import Assistant, format_display
from rag.apps.cli import cli
from tests.fakes import PathsReply, ScriptedChatModel, cell_prompts, evidence_number, table_cell_prompt, with_label_head

DATA = Path(__file__).parent / "data"


@pytest.fixture
def run(tmp_path: Path):  # type: ignore[no-untyped-def]
    runner = CliRunner()
    env = {"RAG_DATA_DIR": str(tmp_path / "data"), "RAG_CONFIG": str(tmp_path / "none.toml")}

    def invoke(*args: str, extra_env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
        return runner.invoke(cli, list(args), env=env | (extra_env or {}), catch_exceptions=False)

    return invoke


@pytest.mark.slow
def test_ingest_search_stats_json(run, seed_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    r = run("ingest", str(seed_corpus))
    assert r.exit_code == 0, r.output
    assert "19 papers read: 19 added" in r.output
    r = run("search", "drone footage of zebras in 3D", "-k", "2", "--json")
    hits = json.loads(r.output)
    keys = {"paper_id", "title", "score", "rank", "similarity", "match", "text", "metadata"}
    assert [set(h) for h in hits] == [keys] * 2
    assert hits[0]["title"] == "WildBox" and hits[0]["score"] >= hits[1]["score"]
    assert [h["rank"] for h in hits] == [1, 2] and hits[0]["match"] in ("strong", "good", "weak")
    stats = json.loads(run("stats", "--json").output)
    assert set(stats) == {"papers", "chunks", "embedding_model", "dimension", "bytes"}
    assert stats["papers"] == 19 and stats["dimension"] == 384 and stats["bytes"] > 0
    again = run("ingest", str(seed_corpus), "--json")
    assert json.loads(again.output) | {} == json.loads(again.output)
    assert json.loads(again.output)["embedded"] == 0 and json.loads(again.output)["unchanged"] == 19


def test_search_with_where_filter(run) -> None:  # type: ignore[no-untyped-def]
    assert run("ingest", str(DATA / "abstracts.jsonl")).exit_code == 0
    papers = [json.loads(line) for line in (DATA / "abstracts.jsonl").read_text().splitlines() if line.strip()]
    venue = papers[0]["venue"]
    r = run("search", "learning", "-k", "20", "--where", f"venue={venue}", "--json")
    hits = json.loads(r.output)
    assert hits and all(h["metadata"]["venue"] == venue for h in hits)
    assert len(hits) == sum(p.get("venue") == venue for p in papers)


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ("", "empty.jsonl", "empty.jsonl"),
        ('{"abstract": "ok"}\n{"title": "no abstract"}\n', "missing.jsonl", "missing.jsonl, line 2"),
        ('{"abstract": "ok"}\n{"abstract": "ok2"}\n{"abstract": \n', "broken.jsonl", "broken.jsonl, line 3"),
        ('{"abstract": "   "}\n', "blank.jsonl", "blank.jsonl, line 1"),
    ],
)
def test_bad_input_exits_1_with_clear_message_and_writes_nothing(
    run, tmp_path: Path, content: str, name: str, message: str
) -> None:  # type: ignore[no-untyped-def]
    good = tmp_path / "good.jsonl"
    good.write_text('{"id": "g1", "abstract": "A fine abstract about zebras."}\n')
    bad = tmp_path / name
    bad.write_text(content)
    r = run("ingest", str(good), str(bad))
    assert r.exit_code == 1
    assert message in r.output and "Traceback" not in r.output
    assert "Error:" in r.output
    # nothing half-written: the good file was not indexed either
    assert json.loads(run("stats", "--json").output)["papers"] == 0


def test_non_utf8_file_is_a_clear_error(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes('{"abstract": "ok"}\n{"abstract": "caf\xe9"}\n'.encode("latin-1"))
    r = run("ingest", str(bad))
    assert r.exit_code == 1 and "latin1.jsonl" in r.output and "UTF-8" in r.output


def test_search_before_ingest_says_what_to_do(run) -> None:  # type: ignore[no-untyped-def]
    r = run("search", "zebras")
    assert r.exit_code == 1 and "rag ingest" in r.output


@pytest.mark.slow
def test_empty_query_and_bad_filter_are_clear_errors(run, seed_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    run("ingest", str(seed_corpus))
    r = run("search", "   ")
    assert r.exit_code == 1 and "empty" in r.output
    r = run("search", "zebras", "--where", "venue")
    assert r.exit_code == 1 and "key=value" in r.output


def test_over_long_question_is_a_clear_error(run) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import free_port

    question = "How many 3D bounding box annotations does WildBox have?"
    env = {"RAG_ANSWER__MAX_QUESTION_CHARS": "40", "RAG_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1"}
    for args, extra_env, limit in [((), env, 40), (("--json",), env, 40), (("--mode", "extractive"), {}, 2000)]:
        q = question if limit == 40 else "x" * 2001
        r = run("ask", q, *args, extra_env=extra_env)
        assert r.exit_code == 1 and "Traceback" not in r.output
        assert r.output.strip().splitlines() == [
            f"Error: The question has {len(q)} characters; the limit is {limit} (RAG_ANSWER__MAX_QUESTION_CHARS)."
        ]


def test_empty_question_is_a_clear_error(run) -> None:  # type: ignore[no-untyped-def]
    for question in ("", "   "):
        for args in ((), ("--json",), ("--mode", "extractive")):
            r = run("ask", question, *args)
            assert r.exit_code == 1 and r.output.strip().splitlines() == ["Error: The question is empty."]


def test_config_masks_secrets(run) -> None:  # type: ignore[no-untyped-def]
    r = run("config", extra_env={"RAG_LLM_API_KEY": "sk-very-secret-123", "RAG_LLM_BASE_URL": "http://127.0.0.1:9/v1"})
    assert r.exit_code == 0
    assert "sk-very-secret-123" not in r.output and "llm.api_key = **********" in r.output
    assert "llm.base_url = http://127.0.0.1:9/v1" in r.output
    data = json.loads(run("config", "--json", extra_env={"RAG_LLM_API_KEY": "sk-very-secret-123"}).output)
    assert data["llm"]["api_key"] == "**********"


def test_bad_setting_is_a_clear_error(run) -> None:  # type: ignore[no-untyped-def]
    r = run("stats", extra_env={"RAG_RETRIEVAL__K": "zero"})
    assert r.exit_code == 1 and "retrieval.k" in r.output and "Traceback" not in r.output


@pytest.mark.slow
def test_mismatched_index_tells_how_to_rebuild(run, seed_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    run("ingest", str(seed_corpus))
    r = run("search", "zebras", extra_env={"RAG_CHUNKING__MAX_TOKENS": "100"})
    assert r.exit_code == 1 and "rag ingest --rebuild" in r.output
    r = run("ingest", "--rebuild", str(seed_corpus), extra_env={"RAG_CHUNKING__MAX_TOKENS": "100"})
    assert r.exit_code == 0 and "19 added" in r.output


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare(1)")
def test_ingest_and_search_work_with_networking_blocked(tmp_path: Path, seed_corpus: Path) -> None:
    """The real console script in a network namespace with no interfaces up: nothing may download."""
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -n not permitted here: {probe.stderr.decode()[:200]}")
    rag = Path(sys.executable).with_name("rag")
    env = os.environ | {
        "RAG_DATA_DIR": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),  # fresh tiktoken cache: encodings must come from the package
        "HOME": str(tmp_path),
        "HF_HUB_OFFLINE": "0",
    }
    env.pop("TIKTOKEN_CACHE_DIR", None)
    check = subprocess.run(
        [
            "unshare",
            "-n",
            sys.executable,
            "-c",
            "import socket; socket.create_connection(('pypi.org', 443), timeout=3)",
        ],
        capture_output=True,
        env=env,
    )
    assert check.returncode != 0  # the namespace really has no network
    ingest = subprocess.run(
        ["unshare", "-n", str(rag), "ingest", str(seed_corpus)], capture_output=True, text=True, env=env, timeout=600
    )
    assert ingest.returncode == 0, ingest.stderr[-2000:]
    search = subprocess.run(
        ["unshare", "-n", str(rag), "search", "drone footage of zebras in 3D", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert search.returncode == 0, search.stderr[-2000:]
    assert json.loads(search.stdout)[0]["title"] == "WildBox"


@pytest.mark.slow
def test_ask_json_extractive(run, seed_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    run("ingest", str(seed_corpus))
    r = run("ask", "How many 3D bounding box annotations does WildBox have?", "--mode", "extractive", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert {"answer", "refused", "citations", "sources"} <= set(data)
    assert data["refused"] is False and "237,505" in data["answer"]
    c = data["citations"][0]
    assert set(c) >= {"n", "paper_id", "title", "text", "span"} and c["title"] == "WildBox"
    assert data["sources"][c["n"] - 1]["paper_id"] == c["paper_id"]
    r = run("ask", "What is the capital of France?", "--mode", "extractive")
    assert r.exit_code == 0 and "The indexed abstracts don't answer this." in r.output and "Closest papers" in r.output


@pytest.mark.slow
def test_ask_unreachable_llm_is_a_clear_error(run, seed_corpus: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.conftest import free_port

    run("ingest", str(seed_corpus))
    r = run(
        "ask",
        "How many 3D bounding box annotations does WildBox have?",
        extra_env={
            "RAG_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
            "RAG_LLM__MAX_RETRIES": "0",
            "RAG_LLM_API_KEY": "sk-do-not-print-me-42",
        },
    )
    assert r.exit_code == 1 and "Cannot reach the LLM server" in r.output
    assert "sk-do-not-print-me-42" not in r.output and "Traceback" not in r.output


# ------------------------------------------------------------------ question kinds and tables (fake LLM)
WILDBOX_Q = "How many 3D bounding box annotations does WildBox have?"


def with_fake(seed: Any, reply: Callable[[str], str]) -> tuple[Any, ScriptedChatModel]:
    fake = ScriptedChatModel(reply=reply)
    return with_label_head(Assistant(seed.settings, embeddings=seed.embeddings, chat_model=fake)), fake


def invoke(assistant: Any, *args: str) -> Any:
    """`rag ARGS` in-process with ``assistant`` (and its fake LLM) injected."""
    return CliRunner().invoke(cli, list(args), obj={"assistant": assistant}, catch_exceptions=False)


def test_list_question_prints_the_count_and_each_paper_with_its_quote(seed_assistant: Any) -> None:
    judge = PathsReply(judge=r"(?i)\bbenchmark\b")
    a, _ = with_fake(seed_assistant, judge)
    r = invoke(a, "ask", "Which papers introduce a new benchmark?")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    n = len(judge.said_yes)
    assert n >= 2 and lines[0] == f"{n} papers match (19 of 19 abstracts checked):"
    abstracts = {p.paper_id: p.abstract for p in seed_assistant.papers()}
    items = [(i, line) for i, line in enumerate(lines) if re.match(r"\[\d+\] ", line)]
    assert [line.split("]")[0] for _, line in items] == [f"[{i}" for i in range(1, n + 1)]
    for i, line in items:
        paper_id, figure = line.rsplit("[", 1)[1].rstrip("]").split(", ")
        assert figure == "listed · judge 1.00"  # the fake's one word: P(yes) 1 (tests/test_relevance.py: others)
        quote = lines[i + 1].strip().strip('"')
        # the qualifying sentence, as the abstract reads (LaTeX and Markdown rendered)
        assert quote.rstrip("…") in " ".join(format_display(abstracts[paper_id]).split())
    assert "(answered as a list question; --kind chooses another way)" in r.stderr
    data = json.loads(invoke(a, "ask", "Which papers introduce a new benchmark?", "--json").stdout)
    assert data["kind"] == "list" and data["checked"] == data["collection_size"] == 19
    assert len(data["items"]) == n and {"n", "paper_id", "title", "quote", "span", "score"} <= set(data["items"][0])


def test_kind_overrides_the_recognised_form_and_yes_no_prints_the_verdict_first(seed_assistant: Any) -> None:
    reply = PathsReply(verdict=lambda p: "Yes" if "drone" in p else "Not")
    a, fake = with_fake(seed_assistant, reply)
    r = invoke(a, "ask", "WildBox and drone video", "--kind", "yesno")  # not a question's form: the override decides
    assert r.exit_code == 0, r.output
    out = r.stdout.splitlines()
    assert out[0] == "Yes." and out[1].startswith("The abstract states: ") and re.search(r"\[\d+\]\.$", out[1])
    assert any("Yes, No, or Not" in p for p in fake.prompts) and "answered as" not in r.stderr
    data = json.loads(invoke(a, "ask", "WildBox and drone video", "--kind", "yesno", "--json").stdout)
    assert data["kind"] == "yesno" and data["verdict"] == "yes" and data["quoted"] is True
    assert data["citations"][0]["title"] == "WildBox"
    a, _ = with_fake(seed_assistant, PathsReply(verdict=lambda p: "Not"))
    r = invoke(a, "ask", "Does WildBox report the price of the drones?")
    assert r.stdout.splitlines()[:2] == ["Not stated.", "The indexed abstracts don't answer this."]
    assert "Closest papers:" in r.stdout


def test_bad_kind_is_a_usage_error(seed_assistant: Any) -> None:
    r = CliRunner().invoke(cli, ["ask", "What is WildBox?", "--kind", "essay"], obj={"assistant": seed_assistant})
    assert r.exit_code == 2 and "'essay' is not one of 'lookup', 'list', 'compare', 'yesno'" in r.output


def render_terminal(out: str, width: int) -> list[str]:
    """The screen a terminal ``width`` columns wide shows after ``out`` (auto-wrap, CR, LF, cursor up, erase
    to end of screen / line; colours ignored): what a user would see."""
    import unicodedata

    grid: list[list[str]] = [[]]
    row = col = 0
    i = 0
    while i < len(out):
        c = out[i]
        if c == "\x1b":
            m = re.match(r"\x1b\[(\d*)([A-Za-z])", out[i:])
            assert m, repr(out[i : i + 10])
            if m.group(2) == "A":
                row = max(0, row - int(m.group(1) or 1))
            elif m.group(2) == "J":
                del grid[row + 1 :]
                grid[row] = grid[row][:col]
            elif m.group(2) == "K":
                grid[row] = grid[row][:col]
            i += len(m.group(0))
            continue
        if c == "\r":
            col = 0
        elif c == "\n":
            row, col = row + 1, 0
        else:
            w = 2 if unicodedata.east_asian_width(c) in "WF" else 1
            if col + w > width:
                row, col = row + 1, 0
            while len(grid) <= row:
                grid.append([])
            line = grid[row]
            line.extend(" " * (col + w - len(line)))
            line[col : col + w] = [c] + [""] * (w - 1)
            col += w
        while len(grid) <= row:
            grid.append([])
        i += 1
    lines = ["".join(r).rstrip() for r in grid]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def test_terminal_shows_the_evidence_at_once_then_leaves_only_the_verified_answer(seed_assistant: Any) -> None:
    from rag.apps.cli import _follow, _Live

    def reply(p: str) -> str:  # a long draft that wraps, wide characters included
        n = evidence_number(p, "WildBox") or 1
        return f"WildBox comprises 237,505 3D bounding box annotations [{n}]. 野生動物のドローン映像 " + "x" * 70

    a, _ = with_fake(seed_assistant, reply)
    out = io.StringIO()
    answer = _follow(a.stream(WILDBOX_Q), _Live(out, width=37, height=100))
    raw = out.getvalue()
    before_clear = render_terminal(raw[: raw.rindex("\x1b[J")], 37)
    assert before_clear[0].startswith("Reading ") and before_clear[1].startswith("  [1] WildBox: ")
    assert before_clear[2].startswith("      ")  # the same paper's next sentence, under it
    draft_at = next(i for i, line in enumerate(before_clear) if line.startswith("WildBox comprises"))
    assert all(len(line) <= 37 for line in before_clear) and draft_at >= 2  # the evidence came first
    assert raw.index("Reading ") < raw.index("WildBox comprises")
    assert render_terminal(raw, 37) == []  # all erased: only the verified answer will be printed
    assert "237,505" in answer.text and answer.kind == "lookup"

    judge = PathsReply(judge=r"(?i)\bbenchmark\b")
    a, _ = with_fake(seed_assistant, judge)
    out = io.StringIO()
    answer = _follow(a.stream("Which papers introduce a new benchmark?"), _Live(out, width=50, height=100))
    raw = out.getvalue()
    before_clear = render_terminal(raw[: raw.rindex("\x1b[J")], 50)
    assert [line[:4] for line in before_clear[:-1]] == [f"[{i}] " for i in range(1, len(judge.said_yes) + 1)]
    assert before_clear[-1] == f"{len(judge.said_yes)} found, 19 of 19 papers checked…"
    assert "\x1b[2m" in raw  # the counter is dimmed
    assert render_terminal(raw, 50) == [] and len(answer.items) == len(judge.said_yes)


def test_terminal_control_characters_in_abstracts_are_not_sent_to_the_terminal() -> None:
    from rag.apps.cli import _Live, _plain

    out = io.StringIO()
    live = _Live(out, width=20, height=10)
    live.write("a\x1b]0;owned\x07b\x1b[2Jc\td")
    assert out.getvalue() == "a ]0;owned b [2Jc d" and _plain("x\u202ey\n") == "x y\n"


def test_table_prints_markdown_csv_or_json_and_never_guesses_a_cell(seed_assistant: Any, tmp_path: Path) -> None:
    a, fake = with_fake(seed_assistant, PathsReply(judge="."))  # the list judge confirms every paper
    abstracts = {p.paper_id: p.abstract for p in seed_assistant.papers()}
    args = ["table", "task, metric, best result", "--query", "machine learning", "-k", "3"]
    r = invoke(a, *args, "--format", "json")
    assert r.exit_code == 0, r.output
    table = json.loads(r.stdout)
    assert table["attributes"] == ["task", "metric", "best result"] and len(table["rows"]) == 3
    assert table["checked"] == 3 and table["collection_size"] == 19  # 3 judged, 3 rows: then it stops
    cells = cell_prompts(fake.prompts)
    assert (
        len(cells) == 9
        and {table_cell_prompt(p)[0] for p in cells} == {row["title"] for row in table["rows"]}  # type: ignore[index]
        and all(  # a question per cell, each showing its row's abstract
            any(abstracts[row["paper_id"]][:40] in p for p in cells) for row in table["rows"]
        )
    )
    for row in table["rows"]:
        task, metric, best = row["cells"]
        assert metric["value"] is None and metric["quote"] == ""  # the invented value is dropped: not stated
        assert best["value"] is None
        if task["value"] is not None:  # a stated cell: its quote is the span of the abstract that holds the value
            start, end = task["span"]
            assert abstracts[row["paper_id"]][start:end] == task["quote"]
    assert sum(row["cells"][0]["value"] is not None for row in table["rows"]) >= 2

    md = invoke(a, *args).stdout  # --format md is the default
    first = table["rows"][0]["title"]
    assert md.startswith(f"| paper | task | metric | best result |\n|---|---|---|---|\n| {first} | ")
    assert md.count("*not stated*") >= 6 and "References:" in md and f"[1] {first}" in md

    r = invoke(a, *args, "--format", "csv", "--out", str(tmp_path / "t.csv"))
    assert r.exit_code == 0 and r.stdout.startswith(f"Wrote {tmp_path / 't.csv'}: 3 papers x 3 attributes, ")
    rows = list(csv.reader(io.StringIO((tmp_path / "t.csv").read_text(encoding="utf-8"))))
    assert rows[0][:5] == ["n", "paper_id", "title", "task", "task (quote)"] and len(rows) == 4
    assert all(row[5] == row[6] == "" for row in rows[1:])  # metric and its quote: empty


def test_table_errors_are_one_line(seed_assistant: Any, make_assistant: Callable[..., Any], tmp_path: Path) -> None:
    a, fake = with_fake(seed_assistant, PathsReply())
    for args, message in [
        (("table", " , "), "Error: Name at least one attribute, e.g. 'task, dataset, metric'."),
        (("table", "task", "--where", "venue"), "Error: Filter 'venue' is not key=value"),
        (("table", "task", "--out", str(tmp_path / "no" / "t.md")), f"Error: Cannot write {tmp_path / 'no' / 't.md'}"),
    ]:
        r = CliRunner().invoke(cli, list(args), obj={"assistant": a})
        assert r.exit_code == 1 and r.output.strip().startswith(message) and "Traceback" not in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1
    r = CliRunner().invoke(cli, ["table", "task"], obj={"assistant": make_assistant()})
    assert r.exit_code == 1 and "has no papers" in r.output and "rag ingest" in r.output


def test_ask_exports_markdown_bibtex_and_csv_with_references(seed_assistant: Any, tmp_path: Path) -> None:
    """Extractive mode (no LLM): `rag ask --format md|bib|csv`, to the terminal or a file."""
    q = "What AP-BEV does fine-tuning on WildBox recover?"
    md = invoke(seed_assistant, "ask", q, "--mode", "extractive", "--format", "md").stdout
    assert md.startswith(f"# {q}") and "8.68±0.47" in md and "$\\pm$" not in md
    body, refs = md.split("## References")
    markers = set(re.findall(r"\[(\d+)\]", body))
    assert markers and all(f'<a id="ref-{n}"></a>[{n}] WildBox' in refs for n in markers)
    bib = invoke(seed_assistant, "ask", q, "--mode", "extractive", "--format", "bib").stdout
    assert bib.startswith("@misc{wildbox_h") and "title = {{WildBox}}" in bib
    out = tmp_path / "refs.csv"
    r = invoke(seed_assistant, "ask", q, "--mode", "extractive", "--format", "csv", "-o", str(out))
    assert r.exit_code == 0 and f"Wrote {out}" in r.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows and rows[0]["title"] == "WildBox" and "8.68±0.47" in " ".join(row["quote"] for row in rows)


def test_search_and_ask_show_readable_text_and_a_match_level(seed_assistant: Any) -> None:
    r = invoke(seed_assistant, "search", "WildBox fine-tuning AP-BEV", "-k", "3")
    first = r.stdout.splitlines()[0]
    assert re.search(r"\[h-[0-9a-f]{16}, match (strong|good|weak) 0\.\d\d\]$", first), first
    assert "match: closeness in meaning" in r.stdout and "score" not in r.stdout
    text = invoke(seed_assistant, "ask", "What AP-BEV does fine-tuning on WildBox recover?", "--mode", "extractive")
    assert "8.68±0.47" in text.stdout and "\\pm" not in text.stdout

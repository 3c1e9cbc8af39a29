"""Crash safety: kill -9 mid-ingest, concurrent writers, damaged index files.

The kill test ingests 5,000 synthetic conference abstracts (``tests/synthetic.py``: real-data lengths,
so ~1.4 chunks a paper) with the fast WordLlama embedder, so that the ingest takes seconds rather than
minutes: what is under test is the index's bookkeeping, which is the same for every embedding model.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from filelock import FileLock

from rag import Assistant, IngestError, Settings
from rag.apps.cli import cli
from rag.corpus.chunking import chunk_paper
from tests.synthetic import write_abstracts

FAST = {"embedding": {"model": "wordllama-l2-supercat-256"}}

_CHILD = """
import sys, json
from rag import Assistant, Settings
a = Assistant(Settings(data_dir=sys.argv[1], embedding={"model": "wordllama-l2-supercat-256"}))
def progress(done, total):
    print(f"progress {done} {total}", flush=True)
report = a.ingest([sys.argv[2]], progress=progress)
print("done " + json.dumps(report.to_json()), flush=True)
"""


def _start_ingest(data_dir: Path, corpus: Path, stderr: int = subprocess.DEVNULL) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(data_dir), str(corpus)],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )


def _kill_when(proc: subprocess.Popen[str], done_at_least: int, extra_delay: float) -> int:
    """SIGKILL the child once it reports ``done_at_least`` chunks written (plus a delay); chunks seen."""
    assert proc.stdout is not None
    seen = 0
    for line in proc.stdout:
        if line.startswith("progress"):
            seen = int(line.split()[1])
            if seen >= done_at_least:
                time.sleep(extra_delay)
                break
        elif line.startswith("done"):
            pytest.fail("the ingest finished before it could be killed")
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    return seen


def _check_index_exact(assistant: Assistant, records: list[dict[str, Any]]) -> None:
    index = assistant._index
    papers = {p.paper_id: p for p in assistant.read([assistant.settings.data_dir / "corpus.jsonl"])}
    assert set(papers) == {r["id"] for r in records}
    chunk_ids: list[str] = []
    per_paper: dict[str, set[int]] = {}
    for cid, meta in index.iter_all():
        chunk_ids.append(cid)
        per_paper.setdefault(meta["_paper_id"], set()).add(int(meta["_chunk"]))
    assert len(chunk_ids) == len(set(chunk_ids)), "duplicate chunks"
    assert set(per_paper) == set(papers), "missing or orphan papers"
    chunking = assistant.settings.chunking.model_dump()
    for pid, paper in papers.items():
        assert per_paper[pid] == set(range(len(chunk_paper(paper, **chunking)))), f"{pid}: wrong chunks"
    bm25 = index.bm25
    assert sorted(bm25.ids) == sorted(chunk_ids), "BM25 out of sync with Chroma"
    assert bm25.generation == index.collection.metadata["generation"]


@pytest.mark.slow
def test_kill_9_during_ingest_then_reingest_leaves_exactly_the_right_papers(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    corpus = data_dir / "corpus.jsonl"
    data_dir.mkdir()
    records = write_abstracts(corpus, 5000)
    rng = random.Random(7)

    # Killed twice while writing chunks (at a random moment inside a batch), once while BM25 is rebuilt.
    first = _start_ingest(data_dir, corpus)
    total_seen = _kill_when(first, 1500, rng.uniform(0, 0.5))
    second = _start_ingest(data_dir, corpus)
    _kill_when(second, 1000, rng.uniform(0, 0.5))
    third = _start_ingest(data_dir, corpus)
    assert third.stdout is not None
    last = None
    for line in third.stdout:
        if line.startswith("progress"):
            last = line.split()
            if last[1] == last[2]:  # every chunk written: BM25 is being rebuilt now
                break
    third.send_signal(signal.SIGKILL)
    third.wait(timeout=30)
    assert total_seen > 0 and last is not None

    # The lock died with its holder; a normal ingest finishes the job.
    final = _start_ingest(data_dir, corpus)
    out, _ = final.communicate(timeout=600)
    assert final.returncode == 0, out[-2000:]
    report = json.loads(out.strip().splitlines()[-1].removeprefix("done "))
    assert report["added"] + report["repaired"] + report["unchanged"] == 5000

    assistant = Assistant(Settings(data_dir=data_dir, **FAST))
    _check_index_exact(assistant, records)
    again = assistant.ingest([corpus])
    assert again.unchanged == 5000 and again.embedded == 0 and not again.repaired
    # A title naming its method ("KoriGrasp: ..."): generated titles without one share most of their
    # words with others of their area, unlike real titles, so searching them says little.
    title = next(r["title"] for r in records[123:] if ":" in r["title"])
    assert title in [h.title for h in assistant.search(title, k=3)]


def test_a_paper_left_incomplete_is_repaired(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    long_abstract = " ".join(
        f"Sentence {i} reports that method M{i} improves metric Q{i} by {i} points." for i in range(60)
    )
    corpus.write_text(
        json.dumps({"id": "long", "title": "A long paper", "abstract": long_abstract})
        + "\n"
        + json.dumps({"id": "short", "title": "A short paper", "abstract": "Short abstract about graphs."})
        + "\n"
    )
    assistant = Assistant(Settings(data_dir=tmp_path / "d", **FAST))
    assistant.ingest([corpus])
    col = assistant._index.collection
    ids = col.get(where={"_paper_id": "long"})["ids"]
    assert len(ids) >= 3
    # A paper missing its last chunk, the generation untouched: BM25's manifest (3 chunks) then
    # disagrees with Chroma's count, so the next ingest reads Chroma instead of trusting it.
    col.delete(ids=[ids[-1]])

    report = assistant.ingest([corpus])
    assert report.repaired == ["long"] and report.unchanged == 1 and report.embedded == 0
    assert len(col.get(where={"_paper_id": "long"})["ids"]) == len(ids)


@pytest.mark.slow
def test_second_ingest_waits_for_the_first_or_fails_clearly(tmp_path: Path, seed_corpus: Path) -> None:
    settings = Settings(data_dir=tmp_path, **FAST)
    assistant = Assistant(settings)
    lock = FileLock(str(tmp_path / f".ingest-{settings.collection}.lock"))
    lock.acquire()
    try:
        with pytest.raises(IngestError, match="Another ingest holds .*wait for it to finish"):
            assistant._index.ingest(assistant.read([seed_corpus]), lock_timeout=0.5)
        # A waiting ingest proceeds as soon as the lock is released.
        result: dict[str, Any] = {}
        waiter = threading.Thread(target=lambda: result.update(report=Assistant(settings).ingest([seed_corpus])))
        waiter.start()
        time.sleep(1.0)
        assert waiter.is_alive()
    finally:
        lock.release()
    waiter.join(timeout=120)
    assert result["report"].papers_seen == 19
    assert Assistant(settings).stats()["papers"] == 19


@pytest.mark.slow
def test_two_concurrent_ingest_processes_leave_a_consistent_index(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    corpus = data_dir / "corpus.jsonl"
    records = write_abstracts(corpus, 300)
    procs = [_start_ingest(data_dir, corpus, stderr=subprocess.PIPE) for _ in range(2)]
    reports = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        reports.append(json.loads(out.strip().splitlines()[-1].removeprefix("done ")))
    # One of them indexed everything, the other waited and found nothing left to do.
    assert sorted(r["added"] for r in reports) == [0, 300]
    _check_index_exact(Assistant(Settings(data_dir=data_dir, **FAST)), records)


@pytest.mark.slow
def test_damaged_chroma_file_gives_a_clear_error_and_rebuild_recovers(tmp_path: Path, seed_corpus: Path) -> None:
    env = {**os.environ, "RAG_DATA_DIR": str(tmp_path), "RAG_EMBEDDING__MODEL": "wordllama-l2-supercat-256"}
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", str(seed_corpus)], env=env).exit_code == 0
    with (tmp_path / "chroma" / "chroma.sqlite3").open("r+b") as f:
        f.write(b"not a database" * 300)

    # A new process sees the damage (chromadb caches open clients per process).
    run = subprocess.run(
        [sys.executable, "-m", "rag.apps.cli", "search", "zebras"], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr + run.stdout
    message = run.stderr.strip()
    assert "rag ingest --rebuild" in message and str(tmp_path / "chroma") in message and len(message.splitlines()) == 1

    rebuilt = subprocess.run(
        [sys.executable, "-m", "rag.apps.cli", "ingest", "--rebuild", "--json", str(seed_corpus)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert json.loads(rebuilt.stdout.strip().splitlines()[-1])["added"] == 19
    found = subprocess.run(
        [sys.executable, "-m", "rag.apps.cli", "search", "drone footage of zebras", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert found.returncode == 0 and json.loads(found.stdout)[0]["title"] == "WildBox"


def test_damaged_bm25_files_are_rebuilt_from_chroma(tmp_path: Path, seed_corpus: Path) -> None:
    settings = Settings(data_dir=tmp_path, **FAST)
    Assistant(settings).ingest([seed_corpus])
    for f in (tmp_path / "bm25").rglob("*"):
        if f.is_file():
            f.write_bytes(b"\x00garbage")
    hits = Assistant(settings).search("drone footage of zebras", k=3, mode="bm25")
    assert hits[0].title == "WildBox"

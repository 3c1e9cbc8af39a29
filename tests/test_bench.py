"""The benchmark suite's runner (eval/bench/suite.py) and the generated module map, without any model."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

# eval/bench and eval/tools are not installed: these tests need a checkout (and read its docs/)
suite = pytest.importorskip("rag.evaluation.bench.suite", reason="needs a checkout: eval/bench is not installed")
modulemap = pytest.importorskip("rag.evaluation.tools.modulemap", reason="needs a checkout")


@pytest.fixture(autouse=True)
def _shared_data_env_restored(monkeypatch: pytest.MonkeyPatch) -> None:
    """``suite.main([..., "--shared-data", D])`` sets ``$RAG_SHARED_DATA`` for the benchmark and its children; undo
    it after each test here, or every later test looks for the shared data in this test's temporary folder (it
    did: the shared-data tests of test_ingest.py and test_eval_cross.py were skipped in full runs)."""
    monkeypatch.setenv("RAG_SHARED_DATA", "")  # recorded, so teardown restores the value from before (or none)
    monkeypatch.delenv("RAG_SHARED_DATA")


def test_listing_names_every_benchmark_with_its_description(capsys: pytest.CaptureFixture[str]) -> None:
    assert suite.main([]) == 0
    listed = capsys.readouterr().out
    for name in suite.BENCHMARKS:
        e = suite.entry(name)
        assert e.path.exists()
        assert e.description and e.description in listed, name
    assert suite.entry("answer").needs_llm and not suite.entry("kinds").needs_llm


def test_unknown_benchmark_is_refused_with_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert suite.main(["no-such-bench"]) == 2
    assert "kinds" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(suite.BENCHMARKS))
def test_every_benchmark_takes_the_shared_options_once(name: str) -> None:
    """Its own options add to the shared ones without clashing (argparse raises on a clash)."""
    ap, module = suite.make_parser(name)
    assert callable(module.run) and isinstance(module.NEEDS_LLM, bool)
    given = ["--seed", "3", "--sample", "5", "--data-dir", "/tmp/x", "--quiet"]
    required = {"calibrate-yesno": ["cal.json"], "replay": ["report.json"]}.get(name, [])
    args = ap.parse_args([*required, *given])
    assert (args.seed, args.sample, args.data_dir, args.quiet) == (3, 5, Path("/tmp/x"), True)


def _report(path: Path) -> Path:
    """A `rag eval pubmedqa` report as calibrate-yesno reads it: a label and the model's P(yes/no/not stated)."""
    rows = [
        {"label": "yes", "verdict_probabilities": {"yes": 0.7, "no": 0.2, "not stated": 0.1}},
        {"label": "no", "verdict_probabilities": {"yes": 0.3, "no": 0.6, "not stated": 0.1}},
        {"label": "yes", "verdict_probabilities": {"yes": 0.5, "no": 0.4, "not stated": 0.1}},
        {"label": "maybe", "verdict_probabilities": {"yes": 0.2, "no": 0.2, "not stated": 0.6}},
    ]
    path.write_text(json.dumps({"rows": rows}))
    return path


def test_a_run_writes_one_record_named_by_date_commit_and_name(tmp_path: Path) -> None:
    report = _report(tmp_path / "cal.json")
    results = tmp_path / "runs"
    assert suite.main(["calibrate-yesno", str(report), "--results", str(results), "--quiet"]) == 0
    [path] = list(results.iterdir())
    record: dict[str, Any] = json.loads(path.read_text())
    sha, dirty = suite.git_state()
    assert path.name == f"{record['started_utc'][:10]}_{sha}_calibrate-yesno.json"
    assert record["command"] == f"python -m rag.evaluation.bench calibrate-yesno {report} --results {results} --quiet"
    assert (record["commit"], record["dirty"]) == (sha, dirty)
    assert record["started_utc"] <= record["ended_utc"]
    assert len(record["loadavg_start"]) == len(record["loadavg_end"]) == 3
    assert record["cpu_count"] == os.cpu_count()
    assert record["python"] and record["packages"]["chromadb"]
    assert record["settings"]["options"]["calibration"] == str(report)
    assert len(record["figures"]["chosen_biases"]) == 3
    assert record["figures"]["runs"][0]["n"] == 4
    assert "chosen biases" in record["output"]  # what it printed is kept, though --quiet printed nothing


def test_a_second_run_of_the_same_commit_gets_its_own_record(tmp_path: Path) -> None:
    report = _report(tmp_path / "cal.json")
    for _ in range(2):
        assert suite.main(["calibrate-yesno", str(report), "--results", str(tmp_path / "runs"), "--quiet"]) == 0
    names = {p.name for p in (tmp_path / "runs").iterdir()}
    [first] = [n for n in names if n.endswith("_calibrate-yesno.json")]
    assert names == {first, first.replace(".json", "-2.json")}


def test_json_prints_the_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = _report(tmp_path / "cal.json")
    assert suite.main(["calibrate-yesno", str(report), "--results", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["benchmark"] == "calibrate-yesno"


def test_a_benchmark_that_lacks_its_data_fails_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert suite.main(["retrieval", "--shared-data", str(tmp_path), "--results", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("retrieval: ") and "scifact" in err and "--shared-data" in err
    assert not list(tmp_path.glob("*.json"))  # nothing measured, nothing recorded


def test_module_map_in_architecture_md_is_current() -> None:
    text = modulemap.DOC.read_text(encoding="utf-8")
    assert modulemap.updated(text, modulemap.render()) == text, f"the module map is stale: run `{modulemap.COMMAND}`"


def test_module_map_lists_each_module_once_under_its_import_name() -> None:
    names = [name for name, _path in modulemap.module_files()]
    assert len(names) == len(set(names))
    assert {"rag.assistant", "rag.ui.app", "rag.evaluation.run", "rag.evaluation.bench.suite"} <= set(names)


def test_embedders_corpus_subset_keeps_every_relevant_abstract_and_is_seeded(tmp_path: Path) -> None:
    import gzip

    from rag.evaluation.bench import embedders

    corpus = tmp_path / "corpus.jsonl.gz"
    with gzip.open(corpus, "wt", encoding="utf-8") as f:
        for i in range(50):
            f.write(json.dumps({"_id": str(i), "title": f"T{i}", "text": f"abstract {i}"}) + "\n")

    def subset(seed: int, name: str) -> list[str]:
        dest = tmp_path / name
        assert embedders._corpus_subset(corpus, {"3", "41"}, 10, seed, dest) == 10
        with gzip.open(dest, "rt", encoding="utf-8") as f:
            return [json.loads(line)["_id"] for line in f]

    first = subset(29, "a.jsonl.gz")
    assert len(first) == len(set(first)) == 10 and {"3", "41"} <= set(first)
    assert first == sorted(first, key=int)  # corpus order kept
    assert subset(29, "b.jsonl.gz") == first and subset(30, "c.jsonl.gz") != first


def test_stance_train_set_is_named_first_n_then_every_scifact_evidence_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped head's train set is a function of the data and the seed (so `stance-train --write` rebuilds it
    from the model), not of what a memo happens to hold: the first n pairs of the interleaved order, then every
    later SciFact evidence pair in order, and nothing else."""
    from rag.evaluation.bench import stance_train
    from rag.evaluation.bench._stance import Pair

    def pair(source: str, key: int) -> Pair:
        return Pair(source, str(key), f"claim {key}", "claim", "", "abstract", "supports")

    order = [pair(s, i) for i, s in enumerate(["scifact", "pubmedqa", "scifact-hard"] * 4)]
    seen: list[tuple[str, int]] = []

    def fake_pairs(shared: Path, split: str, seed: int = 0) -> list[Pair]:
        seen.append((split, seed))
        return order

    monkeypatch.setattr(stance_train, "pairs", fake_pairs)
    chosen = stance_train.train_set(Path("."), 7, 4)
    assert chosen[:4] == order[:4]
    assert chosen[4:] == [p for p in order[4:] if p.source == "scifact"] and len(chosen) == 4 + 2
    assert stance_train.train_set(Path("."), 7, 4, evidence=False) == order[:4]
    assert seen == [("train", 7), ("train", 7)]

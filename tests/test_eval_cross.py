"""Gold files of every type: loading and resolving them, and scoring lists, comparisons and table cells
on fake assistants whose answers depend on the question (no model)."""

from __future__ import annotations

import importlib.util
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner

from rag import Answer, AnswerEvent, Assistant, Citation, Paper, Settings
from rag.apps.cli import cli
from rag.evaluation.dataset import (
    CellCase,
    ComparisonCase,
    EvalCase,
    GoldError,
    ListCase,
    load_gold,
    load_gold_set,
    resolve_cases,
)
from rag.evaluation.harness import corpus_for, evaluate_gold
from rag.evaluation.run import run_eval
from rag.evaluation.views import ANSWER_FIELDS, view_answer
from tests.conftest import shared_data

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "eval" / "data"


@pytest.fixture(scope="module")
def bundled_papers() -> list[Paper]:
    return Assistant.read([Assistant.bundled_corpus()])


def write(tmp_path: Path, *records: dict[str, Any] | str, name: str = "gold.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n")
    return p


# ---------------------------------------------------------------------- the gold files in eval/data


def test_single_paper_gold_files_load_and_resolve(bundled_papers: list[Paper]) -> None:
    for name, n in (("neurips2026_gold.jsonl", 58), ("neurips2026_check.jsonl", 77)):
        cases = resolve_cases(load_gold(DATA / name), bundled_papers, source=name)
        assert len(cases) == n and all(isinstance(c, EvalCase) for c in cases)
        assert all(c.supporting_ids for c in cases if isinstance(c, EvalCase) and c.answerable)
    check = [c for c in load_gold(DATA / "neurips2026_check.jsonl") if isinstance(c, EvalCase)]
    verdicts = Counter(c.expected_verdict for c in check if c.type == "yesno")
    assert sum(verdicts.values()) == 14 and set(verdicts) == {"yes", "no"}


def test_cross_gold_file_loads_lists_and_comparisons_with_paper_ids(bundled_papers: list[Paper]) -> None:
    gold = load_gold_set(DATA / "neurips2026_cross.jsonl")
    assert gold.corpus is None  # the bundled abstracts
    cases = resolve_cases(gold.cases, bundled_papers, source="cross")
    lists = [c for c in cases if isinstance(c, ListCase)]
    comps = [c for c in cases if isinstance(c, ComparisonCase)]
    assert (len(lists), len(comps)) == (17, 9)
    for c in lists:
        assert len(c.expected_ids) == len(c.expected_quotes) and len(c.borderline_ids) == len(c.borderline_quotes)
        assert not set(c.expected_ids) & set(c.borderline_ids)
    assert sum(not c.expected_ids for c in lists) == 3 and sum(c.count is not None for c in lists) >= 3
    assert all(p.paper_id and p.answer_keywords for c in comps for p in c.papers)


def test_table_gold_file_loads_cells_of_two_attribute_lists(bundled_papers: list[Paper]) -> None:
    cells = resolve_cases(load_gold(DATA / "neurips2026_table.jsonl"), bundled_papers, source="table")
    assert len(cells) == 101 and all(isinstance(c, CellCase) and c.paper_id for c in cells)
    lists = Counter(tuple(c.attributes) for c in cells if isinstance(c, CellCase))
    assert set(lists) == {("task", "dataset", "metric", "best result"), ("method", "data domain", "main finding")}
    assert sum(c.not_stated for c in cells if isinstance(c, CellCase)) == 23


def load_make_ml1k() -> Any:
    spec = importlib.util.spec_from_file_location("make_ml1k", ROOT / "eval" / "tools" / "make_ml1k.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_ml1k_gold_names_its_corpus_and_resolves_against_it(tmp_path: Path) -> None:
    gold = load_gold_set(DATA / "ml1k_lists.jsonl")
    assert gold.corpus is not None and gold.corpus.name == "ml1k" and gold.corpus.papers == 1000
    assert "make_ml1k.py" in gold.corpus.make and len(gold.cases) == 15
    source = shared_data("ml_abstracts.jsonl.gz")
    make = load_make_ml1k()
    subset = make.make_subset(make.load_records(str(source)))
    path = tmp_path / "ml1k.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in subset))
    papers = Assistant.read([path])
    assert len(papers) == 1000
    lists = resolve_cases(gold.cases, papers, source="ml1k")
    assert all(isinstance(c, ListCase) and c.expected_ids for c in lists)


# ---------------------------------------------------------------------- loader errors


def test_every_loader_error_names_the_file_and_line(tmp_path: Path) -> None:
    ok = {"question": "q?", "supporting_ids": ["p1"]}
    bad = [
        ({"type": "list", "question": "Which?", "expected_ids": ["a"], "count": 2}, r"count 2 is not the number"),
        ({"type": "comparison", "question": "Compare", "papers": [{"quote": "x", "answer_keywords": ["y"]}]}, "papers"),
        (
            {"type": "cell", "attributes": "task, dataset", "attribute": "metric", "quote": "q", "not_stated": True},
            r"attribute 'metric' is not one of \['task', 'dataset'\]",
        ),
        ({"type": "cell", "attributes": "task", "attribute": "task", "quote": "q"}, "value_keywords and support"),
        (
            {
                "type": "cell",
                "attributes": "task",
                "attribute": "task",
                "quote": "q",
                "not_stated": True,
                "support": "s",
            },
            "a not_stated cell has no value_keywords or support",
        ),
        ({"question": "Is it?", "type": "yesno", "supporting_ids": ["p"]}, "starts with Yes or No"),
        ({"type": "list", "question": "Which?", "expected_idz": []}, "expected_idz: Extra inputs"),
        ({"type": "corpus", "papers": 3}, "name: Field required"),
    ]
    for record, message in bad:
        with pytest.raises(GoldError, match=rf"gold.jsonl:2: .*{message}"):
            load_gold(write(tmp_path, ok, record))
    corpus = {"type": "corpus", "name": "x"}
    with pytest.raises(GoldError, match=r"gold.jsonl:3: a second corpus record \(the first is on line 1\)"):
        load_gold(write(tmp_path, corpus, ok, corpus))


def test_resolution_errors_name_the_line() -> None:
    papers = [
        Paper(paper_id="p1", title="A", abstract="We introduce WildBox, a dataset of drone video."),
        Paper(paper_id="p2", title="B", abstract="HerdCount counts cattle in drone video."),
    ]
    cases: list[Any] = [
        (
            ListCase(question="Which?", expected_quotes=["WildBox"], borderline_ids=["p1"], line=4),
            r"paper\(s\) \['p1'\] are both expected and borderline",
        ),
        (
            ListCase(question="Which?", expected_quotes=["drone video"], line=4),
            r"expected quote 'drone video' is in 2 abstracts",
        ),
        (ListCase(question="Which?", expected_ids=["p9"], line=4), r"expected id 'p9' is not in the index"),
        (
            CellCase(
                attributes=["task"], attribute="task", quote="WildBox", value_keywords=["x"], support="cattle", line=4
            ),
            r"support 'cattle' is not in the abstract its quote names \(p1\)",
        ),
    ]
    for case, message in cases:
        with pytest.raises(GoldError, match=rf"g.jsonl:4: {message}"):
            resolve_cases([case], papers, source="g.jsonl")
    # the same paper named by a quote and by an id counts once
    both = ListCase(question="Which?", expected_quotes=["WildBox"], expected_ids=["p1"], line=1)
    assert resolve_cases([both], papers)[0].expected_ids == ["p1"]


def test_a_named_corpus_is_used_or_its_make_command_is_given(tmp_path: Path) -> None:
    missing = tmp_path / "ml1k.jsonl"
    record = {"type": "corpus", "name": "ml1k", "papers": 2, "path": str(missing), "make": "python make.py OUT"}
    gold = write(tmp_path, record, {"type": "list", "question": "Which?", "expected_ids": ["a"]})
    with pytest.raises(GoldError, match=r"gold.jsonl:1: .*ml1k corpus .*does not exist.*`python make.py OUT`"):
        corpus_for(load_gold_set(gold))
    given = tmp_path / "other.jsonl"
    assert corpus_for(load_gold_set(gold), [given]) == [given]  # --corpus wins
    missing.write_text("{}\n")
    assert corpus_for(load_gold_set(gold)) == [missing]
    plain = write(tmp_path, {"question": "q?", "supporting_ids": ["p"]}, name="plain.jsonl")
    assert corpus_for(load_gold_set(plain)) == [Assistant.bundled_corpus()]


def test_cli_says_how_to_make_a_missing_corpus_and_rejects_a_useless_baseline(tmp_path: Path) -> None:
    record = {"type": "corpus", "name": "ml1k", "path": str(tmp_path / "nope.jsonl"), "make": "python make.py OUT"}
    gold = write(tmp_path, record, {"type": "list", "question": "Which?", "expected_ids": ["a"]})
    run = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "eval", str(gold)], obj={})
    assert run.exit_code == 1 and "make it with `python make.py OUT`" in run.output and "--corpus PATH" in run.output
    cross = str(DATA / "neurips2026_cross.jsonl")
    run = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "d"), "eval", cross, "--baseline", "textbook"], obj={})
    assert run.exit_code == 1 and "needs single-paper questions" in run.output
    assert not (tmp_path / "d").exists()  # both refused before anything was indexed


# ---------------------------------------------------------------------- scoring on fake assistants

PAPERS = [
    Paper(
        paper_id="p1", title="WildBox", abstract="We introduce WildBox, a dataset of drone video. It reports 41.2 AP."
    ),
    Paper(
        paper_id="p2",
        title="WiREBench",
        abstract="We present WiREBench, a benchmark of app vulnerabilities. Agents confirm 65 vulnerabilities.",
    ),
    Paper(
        paper_id="p3",
        title="HerdCount",
        abstract="HerdCount counts cattle in drone images. It uses a density map method.",
    ),
    Paper(paper_id="p4", title="Symmetry", abstract="A vanilla transformer learns symmetries. No dataset is released."),
]


@dataclass
class FakeItem:
    paper_id: str
    quote: str
    score: float = 1.0


@dataclass
class FakeAnswer:
    """The fields of the newer rag.Answer (kind, items, verdict, ...) plus those score_case reads."""

    text: str
    question: str = ""
    refused: bool = False
    kind: str = "lookup"
    items: list[FakeItem] = field(default_factory=list)
    checked: int | None = None
    collection_size: int | None = None
    verdict: str | None = None
    citations: list[Citation] = field(default_factory=list)
    sentences: list[Any] = field(default_factory=list)
    sources: list[Any] = field(default_factory=list)
    names_source: bool = False
    standalone_question: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)


def sentences_of(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=\.)\s+", text) if s]


class FakeAssistant:
    """Answers from the papers by word matching, and records every call.

    list: the papers whose abstract contains the question's last word; compare: the first sentence of
    each paper whose title the question names, cited, plus an unsupported sentence; lookup (no kind):
    "Yes"/"No" by whether the question's last word is in any abstract; table: per paper and attribute
    the sentence holding the attribute's word ("best result": a sentence with a number), else nothing,
    except that it makes up a "best result" when no sentence has a number (a value with no quote in the
    abstract).
    """

    def __init__(self, settings: Settings, papers: list[Paper] = PAPERS) -> None:
        self.settings = settings
        self._papers = papers
        self.asked: list[tuple[str, str | None]] = []
        self.tables: list[list[str]] = []
        self.embeddings = SimpleNamespace(embed_documents=lambda texts: [[1.0] for _ in texts])

    def papers(self) -> list[Paper]:
        return self._papers

    def search(self, query: str, k: int | None = None) -> list[Any]:
        return []

    def stream(self, question: str, history: Any = None, kind: str | None = None) -> Iterator[AnswerEvent]:
        """The whole answer as the stream's only event."""
        yield AnswerEvent(self.ask(question, history, kind))  # type: ignore[arg-type]

    def ask(self, question: str, history: Any = None, kind: str | None = None) -> FakeAnswer:
        self.asked.append((question, kind))
        last = re.findall(r"\w+", question)[-1].lower()
        if kind == "list":
            hits = [p for p in self._papers if last in p.abstract.lower()]
            items = [FakeItem(p.paper_id, sentences_of(p.abstract)[0]) for p in hits]
            text = f"{len(hits)} papers: " + ", ".join(f"{p.title} [{i}]" for i, p in enumerate(hits, 1))
            return FakeAnswer(text, question, kind="list", items=items, checked=len(self._papers), collection_size=4)
        if kind == "compare":
            named = [p for p in self._papers if p.title in question]
            cites = [
                Citation(n=i, paper_id=p.paper_id, title=p.title, text=p.abstract, span=(0, 1))
                for i, p in enumerate(named, 1)
            ]
            said = [
                SimpleNamespace(text=f"{sentences_of(p.abstract)[0]} [{i}]", citations=(i,), supported=True)
                for i, p in enumerate(named, 1)
            ]
            said.append(SimpleNamespace(text="Both suit density map fans [2].", citations=(2,), supported=False))
            return FakeAnswer(" ".join(s.text for s in said), question, kind="compare", citations=cites, sentences=said)
        yes = any(last in p.abstract.lower() for p in self._papers)
        return FakeAnswer(f"{'Yes' if yes else 'No'}, the abstracts mention {last}.", question)

    def table(self, attributes: list[str], k: int | None = None) -> Any:
        self.tables.append(list(attributes))
        rows = []
        for n, p in enumerate(self._papers[:k], 1):  # at most k rows, as Assistant.table: the eval asks for all
            cells = []
            for a in attributes:
                if a == "best result":
                    found = [s for s in sentences_of(p.abstract) if re.search(r"\d", s)]
                    guess = SimpleNamespace(attribute=a, value="98% accuracy", quote="It reaches 98% accuracy.")
                else:
                    found = [s for s in sentences_of(p.abstract) if a in s.lower()]
                    guess = SimpleNamespace(attribute=a, value=None, quote="")
                cells.append(SimpleNamespace(attribute=a, value=found[0], quote=found[0]) if found else guess)
            rows.append(SimpleNamespace(n=n, paper_id=p.paper_id, title=p.title, cells=cells))
        return SimpleNamespace(attributes=attributes, rows=rows, checked=4, collection_size=4, timings={})


def cell(cid: str, attributes: str, attribute: str, pid: str, **gold: Any) -> dict[str, Any]:
    return {"id": cid, "type": "cell", "attributes": attributes, "attribute": attribute, "paper_id": pid, **gold}


CROSS_GOLD: list[dict[str, Any]] = [
    # fake returns p1, p4 ("dataset"); p4 is borderline: P 1/1, R 1/2, F1 2/3; 2 papers for 2 (+1) -> count right
    {
        "id": "l-dataset",
        "type": "list",
        "question": "Which papers mention a dataset",
        "expected_quotes": ["drone video"],
        "expected_ids": ["p2"],
        "borderline_ids": ["p4"],
        "count": 2,
    },
    # fake returns nothing: the right "none"
    {"id": "l-none", "type": "list", "question": "Which papers use ImageNet", "expected_ids": []},
    # fake returns p1, p3 ("drone"): P 1/2, R 1, F1 2/3
    {"id": "l-drone", "type": "list", "question": "Which papers film from a drone", "expected_ids": ["p1"]},
    # both cited with their keywords: 1.0
    {
        "id": "c-both",
        "type": "comparison",
        "question": "Compare WildBox and WiREBench",
        "papers": [
            {"paper_id": "p1", "answer_keywords": ["drone"]},
            {"paper_id": "p2", "answer_keywords": ["vulnerab"]},
        ],
    },
    # HerdCount's keyword is only in an unsupported sentence: 0.5
    {
        "id": "c-half",
        "type": "comparison",
        "question": "Compare WildBox and HerdCount",
        "papers": [
            {"paper_id": "p1", "answer_keywords": ["WildBox"]},
            {"quote": "counts cattle", "answer_keywords": ["density map"]},
        ],
    },
]
DB = "dataset, best result"
TABLE_GOLD = [
    cell("t-p1-dataset", DB, "dataset", "p1", value_keywords=["drone video"], support="a dataset of drone video"),
    cell("t-p4-dataset", DB, "dataset", "p4", not_stated=True),  # wrong: "No dataset is released." shown
    cell("t-p1-best", DB, "best result", "p1", value_keywords=["41.2"], support="41.2 AP"),  # right by keywords
    # right by the quote overlapping the support (the keywords miss)
    cell("t-p2-best", DB, "best result", "p2", value_keywords=["sixty-five"], support="confirm 65 vulnerabilities"),
    cell("t-p3-best", DB, "best result", "p3", not_stated=True),  # wrong: a made-up number
    cell("t-p3-method", "method", "method", "p3", value_keywords=["density map"], support="a density map method"),
    cell("t-p1-method", "method", "method", "p1", not_stated=True),  # right: left empty
]


def test_lists_and_comparisons_are_asked_with_their_kind_and_scored(tmp_path: Path) -> None:
    fake = FakeAssistant(Settings(data_dir=tmp_path / "d"))
    cases = resolve_cases(load_gold(write(tmp_path, *CROSS_GOLD)), fake.papers())
    report = run_eval(fake, cases)  # type: ignore[arg-type]
    assert [k for _, k in fake.asked] == ["list", "list", "list", "compare", "compare"]
    lists = {r.case_id: r for r in report.lists}
    assert lists["l-dataset"].returned_ids == ["p1", "p4"] and lists["l-dataset"].expected_ids == ["p2", "p1"]
    assert (lists["l-dataset"].precision, lists["l-dataset"].recall) == (1.0, 0.5)
    assert lists["l-dataset"].count_correct is True and lists["l-drone"].count_correct is None
    assert (lists["l-none"].precision, lists["l-none"].recall, lists["l-none"].f1) == (1.0, 1.0, 1.0)
    assert lists["l-drone"].precision == 0.5 and lists["l-drone"].recall == 1.0
    comps = {r.case_id: r for r in report.comparisons}
    assert comps["c-both"].coverage == 1.0 and comps["c-both"].all_covered
    assert [(p.paper_id, p.cited, p.covered) for p in comps["c-half"].papers] == [
        ("p1", True, True),
        ("p3", True, False),
    ]
    half = comps["c-half"]  # p3 cited, but its sentence lacks p3's keywords: supported yet not covered
    assert [p.supported for p in half.papers] == [True, True] and half.all_supported
    agg = report.aggregate
    assert agg["list_f1"].value == pytest.approx((2 / 3 + 1 + 2 / 3) / 3) and agg["list_f1"].n == 3
    assert agg["list_precision"].value == pytest.approx(2.5 / 3) and agg["count_accuracy"].value == 1.0
    assert agg["list_judged_share"].value == 1.0
    assert agg["comparison_coverage"].value == 0.75 and agg["comparison_all_covered"].value == 0.5
    assert agg["comparison_all_cited"].value == 1.0
    lo, hi = agg["comparison_coverage"].ci_low, agg["comparison_coverage"].ci_high
    assert lo is not None and hi is not None and 0.5 <= lo <= 0.75 <= hi <= 1.0
    assert "accuracy" not in agg  # no single-paper questions, no single-paper metrics


def test_cells_take_one_table_call_per_attribute_list(tmp_path: Path) -> None:
    fake = FakeAssistant(Settings(data_dir=tmp_path / "d"))
    cases = resolve_cases(load_gold(write(tmp_path, *TABLE_GOLD)), fake.papers())
    report = run_eval(fake, cases, repeat=2)  # type: ignore[arg-type]
    assert fake.tables == [["dataset", "best result"], ["method"]] * 2
    correct = {c.case_id: c.correct for c in report.cells if c.repeat == 0}
    assert correct == {
        "t-p1-dataset": True,
        "t-p4-dataset": False,
        "t-p1-best": True,
        "t-p2-best": True,
        "t-p3-best": False,
        "t-p3-method": True,
        "t-p1-method": True,
    }
    agg = report.aggregate
    assert agg["cell_accuracy"].value == pytest.approx(5 / 7) and agg["cell_accuracy"].n == 14
    assert agg["cell_accuracy_stated"].value == 1.0 and agg["cell_accuracy_not_stated"].value == pytest.approx(1 / 3)
    # the made-up best results of p3 and p4 (no number in their abstracts), in both repeats
    first = report.tables[0]
    assert first.values == 6 and [(u.paper_id, u.attribute) for u in first.unsupported] == [
        ("p3", "best result"),
        ("p4", "best result"),
    ]
    assert agg["unsupported_values"].value == 4 and agg["unsupported_values"].n == 14


def test_yesno_questions_are_asked_without_a_kind_and_scored_by_verdict(tmp_path: Path) -> None:
    fake = FakeAssistant(Settings(data_dir=tmp_path / "d"))
    common = {"type": "yesno", "supporting_ids": ["p1"]}
    gold = write(
        tmp_path,
        {"id": "y-right", "question": "Do they use a drone", "reference_answer": "Yes.", "answer_keywords": ["drone"]}
        | common,
        {
            "id": "y-wrong",
            "question": "Is there no transformer",
            "reference_answer": "No, one.",
            "answer_keywords": ["a"],
        }
        | common,
    )
    report = run_eval(fake, resolve_cases(load_gold(gold), fake.papers()))  # type: ignore[arg-type]
    assert [k for _, k in fake.asked] == [None, None]
    rows = {r.case_id: r for r in report.rows}
    assert rows["y-right"].verdict == "yes" and rows["y-right"].correct
    assert rows["y-wrong"].verdict == "yes" and rows["y-wrong"].verdict_expected == "no" and not rows["y-wrong"].correct
    assert report.aggregate["yesno_verdict_accuracy"].value == 0.5


def test_report_has_a_section_per_case_type(tmp_path: Path) -> None:
    gold = write(tmp_path, *CROSS_GOLD, *TABLE_GOLD)
    fake = FakeAssistant(Settings(data_dir=tmp_path / "d"))
    out = tmp_path / "out"
    doc = evaluate_gold(gold, [None], out, assistants=[fake])  # type: ignore[list-item]
    md = (out / "report.md").read_text()
    for title in ("## List questions", "## Comparison questions", "## Tables (paper x attribute cells)"):
        assert title in md
    assert "## Aggregate metrics" not in md  # no single-paper questions
    assert "| list_f1 | 0.778 [" in md and "| unsupported_values | 2.000 (n=7) |" in md
    assert "- p3 / best result: 98% accuracy" in md
    assert md.index("## Tables") < md.index("## Per question (lists): default") < md.index("## Per question (table")
    run = doc["runs"][0]
    assert len(run["lists"]) == 3 and len(run["comparisons"]) == 2 and len(run["cells"]) == 7
    assert "NaN" not in (out / "report.json").read_text()
    assert (out / "metrics.png").read_bytes()[:4] == b"\x89PNG"


class FirstOnly(FakeAssistant):
    """Lists only the first paper it finds."""

    def ask(self, question: str, history: Any = None, kind: str | None = None) -> FakeAnswer:
        answer = super().ask(question, history, kind)
        answer.items = answer.items[:1]
        return answer


def test_configs_get_paired_deltas_on_lists_and_cells(tmp_path: Path) -> None:
    gold = write(tmp_path, *CROSS_GOLD, *TABLE_GOLD)
    a, b = FakeAssistant(Settings(data_dir=tmp_path / "a")), FirstOnly(Settings(data_dir=tmp_path / "b"))
    configs = [tmp_path / "a.toml", tmp_path / "b.toml"]
    doc = evaluate_gold(gold, configs, tmp_path / "out", assistants=[a, b])  # type: ignore[list-item]
    delta = doc["comparisons"]["b"]
    assert set(delta) == {"list_f1", "comparison_coverage", "cell_accuracy"}
    # l-drone: p1 alone instead of p1, p3 -> F1 2/3 -> 1; the other two lists unchanged
    assert delta["list_f1"]["delta"] == pytest.approx(1 / 9)
    assert delta["comparison_coverage"]["delta"] == 0.0 and delta["cell_accuracy"]["delta"] == 0.0
    assert "## Deltas vs a" in (tmp_path / "out" / "report.md").read_text()


def test_the_view_reads_real_answers_and_every_name_it_reads_exists() -> None:
    assert set(Answer.model_fields) >= ANSWER_FIELDS
    cite = Citation(n=1, paper_id="p1", title="WildBox", text="t", span=(0, 3))
    answer = Answer(question="q", standalone_question="q", text="WildBox [1].", refused=False, citations=[cite])
    view = view_answer(answer)
    assert view.citations[0].paper_id == "p1" and view.items == [] and view.text == "WildBox [1]."

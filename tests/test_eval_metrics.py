"""Every evaluation metric against values worked out by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rag import Paper
from rag.evaluation import metrics as M
from rag.evaluation.dataset import EvalCase, GoldError, load_gold, resolve_cases
from rag.evaluation.tune import choose, replay, sweep


def test_ndcg_at_10_binary_relevance() -> None:
    # relevant docs at ranks 1 and 3: DCG = 1 + 1/log2(4) = 1.5; ideal = 1 + 1/log2(3)
    got = M.ndcg_at(["a", "x", "b"], {"a": 1, "b": 1}, 10)
    assert got == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert M.ndcg_at(["x", "y"], {"a": 1}, 10) == 0.0
    assert M.ndcg_at(["a"], {}, 10) == 0.0


def test_ndcg_uses_graded_gains_and_cuts_at_k() -> None:
    # rel a=2, b=1; ranked b, a: DCG = 1 + 2/log2(3); ideal = 2 + 1/log2(3)
    assert M.ndcg_at(["b", "a"], {"a": 2, "b": 1}, 10) == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert M.ndcg_at(["x", "a"], {"a": 1}, 1) == 0.0


def test_recall_at_k_and_reciprocal_rank() -> None:
    ranked = ["x", "a", "y", "b"]
    assert M.recall_at(ranked, ["a", "b"], 2) == 0.5
    assert M.recall_at(ranked, ["a", "b"], 4) == 1.0
    assert M.recall_at(ranked, [], 4) == 0.0
    assert M.reciprocal_rank(ranked, ["b", "a"]) == 0.5
    assert M.reciprocal_rank(ranked, ["z"]) == 0.0


def test_citation_precision_and_recall() -> None:
    assert M.citation_precision(["a", "b", "b"], ["a"]) == 0.5  # distinct cited papers: a, b
    assert M.citation_recall(["a"], ["a", "c"]) == 0.5
    assert M.citation_precision([], ["a"]) is None
    assert M.citation_recall(["a"], []) is None


@pytest.mark.parametrize(
    ("text", "group", "found"),
    [
        ("WildBox has 237505 boxes", "237,505", True),
        ("WildBox has 237,505 boxes", "237505", True),
        ("It found 650 bugs", "65", False),
        ("AP of 65.3", "65", False),
        ("It confirmed 65 vulnerabilities.", "65", True),
        ("up to **20$\\times$ compression**", "20×|20 times", True),
        ("a 20x speed-up", "20×", True),
        ("prompt interference", "interfer", True),
        ("the ratio $c(v)$", "c(v)", True),
        ("WildBox", "Symmetry Lottery|Lottery", False),
        ("Expected calibration error", "ECE|Expected Calibration Error", True),
    ],
)
def test_keyword_group_matching(text: str, group: str, found: bool) -> None:
    assert M.keyword_group_found(text, group) is found


def test_answer_correct_needs_every_group() -> None:
    groups = ["22", "62|sixty-two"]
    assert M.answer_correct("22 protocols and 62 subtasks", groups)
    assert not M.answer_correct("22 protocols", groups)
    assert M.keyword_score("22 protocols", groups) == 0.5
    assert M.keyword_score("anything", []) is None


def test_supported_rate() -> None:
    assert M.supported_rate([True, False, True, True]) == 0.75
    assert M.supported_rate([]) is None


def test_abstention_metrics_litqa2_style() -> None:
    # q1 answerable answered right, q2 answerable answered wrong, q3 answerable refused,
    # q4 unanswerable refused (right), q5 unanswerable answered (wrong)
    answerable = [True, True, True, False, False]
    answered = [True, True, False, False, True]
    correct = [True, False, False, False, False]
    m = M.abstention_metrics(answerable, answered, correct)
    assert m["precision"] == pytest.approx(1 / 3)  # 1 right of 3 answered
    assert m["accuracy"] == pytest.approx(1 / 3)  # 1 right of 3 answerable
    assert m["coverage"] == pytest.approx(3 / 5)
    assert m["refusal_recall"] == 0.5
    assert m["false_refusal_rate"] == pytest.approx(1 / 3)
    assert m["decision_accuracy"] == pytest.approx(2 / 5)  # q1 + q4
    empty = M.abstention_metrics([False], [False], [False])
    assert empty["precision"] is None and empty["accuracy"] is None and empty["refusal_recall"] == 1.0


def test_risk_coverage_curve() -> None:
    curve = M.risk_coverage([0.9, 0.8, 0.2], [True, False, True])
    assert curve == [
        (0.9, pytest.approx(1 / 3), 0.0),
        (0.8, pytest.approx(2 / 3), 0.5),
        (0.2, 1.0, pytest.approx(1 / 3)),
    ]


def test_percentiles_interpolate_like_numpy() -> None:
    vals = [1.0, 2.0, 3.0, 4.0]
    assert M.percentile(vals, 50) == 2.5
    assert M.percentile(vals, 95) == pytest.approx(3.85)
    assert M.percentile([], 50) is None


def test_bootstrap_ci_is_reproducible_and_brackets_the_mean() -> None:
    vals = [0.0, 1.0] * 20
    lo, hi = M.bootstrap_ci(vals, seed=0)
    assert (lo, hi) == M.bootstrap_ci(vals, seed=0)
    assert lo is not None and hi is not None and lo < 0.5 < hi and hi - lo < 0.4
    assert M.bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    assert M.bootstrap_ci([None, None]) == (None, None)


def test_paired_delta_uses_only_items_both_define() -> None:
    d, lo, hi = M.paired_bootstrap_delta([0.0, 1.0, None], [1.0, 1.0, 0.0])
    assert d == 0.5 and lo is not None and hi is not None and 0.0 <= lo <= d <= hi <= 1.0
    assert M.paired_bootstrap_delta([None], [1.0]) == (None, None, None)


# ---------------------------------------------------------------------- yes/no, lists, comparisons, tables


@pytest.mark.parametrize(
    ("text", "verdict", "expected"),
    [
        ("Yes, it is released with checkpoints.", None, "yes"),
        ("**No**: it uses a vanilla transformer.", None, "no"),
        ("No.", None, "no"),
        ("Not stated in the abstracts.", None, None),  # "not" is not "no"
        ("Nothing suggests that.", None, None),
        ("Yesterday's model", None, None),
        ("It uses a vanilla transformer [1].", "no", "no"),  # the system's verdict wins over the text
        ("Yes, but the abstract does not say.", "not stated", "not stated"),
    ],
)
def test_answer_verdict_from_the_verdict_or_the_first_word(text: str, verdict: str | None, expected: str) -> None:
    assert M.answer_verdict(text, verdict) == expected


def test_yesno_grading_needs_the_right_verdict_as_well_as_the_keywords() -> None:
    from rag.evaluation.run import grade_answer

    case = EvalCase(
        question="Does it need an equivariant architecture?",
        reference_answer="No: a vanilla transformer.",
        answer_keywords=["vanilla"],
        supporting_ids=["p"],
        type="yesno",
    )
    assert case.expected_verdict == "no"
    text = "It learns symmetries with a vanilla transformer."
    assert grade_answer(case, "No, a vanilla transformer suffices.", "no")
    assert not grade_answer(case, "Yes, a vanilla transformer.", "yes")  # keywords found, verdict wrong
    assert not grade_answer(case, text, None)  # no verdict at all
    assert not grade_answer(case, "No.", "no")  # verdict right, keywords missing
    factoid = case.model_copy(update={"type": "factoid"})
    assert grade_answer(factoid, text, None)  # other types: keywords only


def test_list_scores_ignore_borderline_papers_and_duplicates() -> None:
    # returned {a, b} once x (borderline) is dropped; expected {a, c}: 1 hit of 2 returned, of 2 expected
    assert M.list_scores(["a", "b", "b", "x"], ["a", "c"], ["x"]) == (0.5, 0.5, 0.5)
    p, r, f1 = M.list_scores(["a", "b", "c"], ["a", "b"])
    assert (p, r) == (pytest.approx(2 / 3), 1.0) and f1 == pytest.approx(0.8)


def test_list_scores_of_empty_sets() -> None:
    assert M.list_scores([], []) == (1.0, 1.0, 1.0)  # "none" answered with nothing
    assert M.list_scores(["x"], [], ["x"]) == (1.0, 1.0, 1.0)  # a borderline paper costs nothing
    assert M.list_scores(["a"], []) == (0.0, 1.0, 0.0)  # listed a paper where none qualifies
    assert M.list_scores([], ["a"]) == (None, 0.0, 0.0)  # listed nothing where one qualifies


def test_count_is_right_between_expected_and_expected_plus_borderline() -> None:
    assert M.count_correct(3, 3)
    assert M.count_correct(4, 3, borderline=1)
    assert not M.count_correct(5, 3, borderline=1)
    assert not M.count_correct(2, 3, borderline=1)


def test_comparison_coverage_needs_a_supported_citing_sentence_with_the_keywords() -> None:
    papers = [("p1", ["drone", "3D"]), ("p2", ["vulnerab"]), ("p3", ["cattle"]), ("p4", ["zebra"])]
    citations = [(1, "p1"), (2, "p2"), (4, "p4")]
    sentences = [
        ("WildBox films animals from drones [1].", (1,), True),
        ("It has 3D boxes of zebras [1].", (1,), True),  # "zebra" cites p1, not p4
        ("WiREBench finds vulnerabilities [2].", (2,), False),  # p2's only sentence is unsupported
        ("HerdCount counts cattle [3].", (3,), True),  # [3] is no verified citation
        ("Another paper exists [4].", (4,), True),  # p4 cited, but without its keywords
    ]
    assert M.comparison_coverage(papers, citations, sentences) == [True, False, False, False]


def test_find_span_and_overlap() -> None:
    text = "We  introduce\nWildBox, a dataset."
    s = M.find_span(text, "introduce WildBox,")
    assert s is not None and text[s[0] : s[1]] == "introduce\nWildBox,"
    assert M.find_span(text, "zebras") is None and M.find_span(text, "  ") is None
    assert M.spans_overlap((0, 5), (4, 9)) and not M.spans_overlap((0, 5), (5, 9))
    assert not M.spans_overlap(None, (0, 1))


def test_cell_correct_by_keywords_or_by_value_overlapping_the_support() -> None:
    kw = ["3D detection|3D object detection", "wildlife|animal"]
    assert M.cell_correct(None, not_stated=True)
    assert not M.cell_correct("ImageNet", not_stated=True)  # a value where the abstract states none
    assert M.cell_correct("3D object detection of wildlife", not_stated=False, value_keywords=kw)
    assert not M.cell_correct(None, not_stated=False, value_keywords=kw)
    # keywords missed, but the value sits in the gold support
    assert M.cell_correct(
        "drone video", not_stated=False, value_keywords=kw, value_span=(12, 20), support_span=(10, 30)
    )
    assert not M.cell_correct(
        "drone video", not_stated=False, value_keywords=kw, value_span=(0, 10), support_span=(10, 30)
    )


def test_value_span_is_where_the_value_sits_not_its_whole_sentence() -> None:
    abstract = "Intro. MaskGen presents a principled learning strategy that utilizes foundation model features. End."
    quote = "MaskGen presents a principled learning strategy that utilizes foundation model features."
    support = M.find_span(abstract, "utilizes foundation model features")
    vague = M.value_span(abstract, "principled learning strategy", quote)
    assert vague is not None and abstract[vague[0] : vague[1]] == "principled learning strategy"
    assert not M.spans_overlap(vague, support)  # same sentence as the support, but not the support
    assert M.spans_overlap(M.value_span(abstract, "Foundation model features", quote), support)  # any case
    # a paraphrase: the stretch of the quote between the value's words
    para = M.value_span(abstract, "features of a foundation model", quote)
    assert para is not None and abstract[para[0] : para[1]] == "foundation model features"
    assert M.value_span(abstract, "zebras", quote) is None
    assert M.value_span(abstract, "zebras") is None


def test_a_name_is_read_with_the_definition_the_abstract_gives_it() -> None:
    abstract = (
        "We propose CoCHI (Class-oriented Causal Head Intervention), a framework. "
        "We propose Selective Social Learning (SSL), an algorithm, and **VAE-LFA** (Low Frequency Alignment)."
    )
    assert M.with_definitions("CoCHI", abstract) == "CoCHI Class-oriented Causal Head Intervention"
    assert M.with_definitions("SSL", abstract) == "SSL Selective Social Learning"
    assert M.with_definitions("VAE-LFA", abstract) == "VAE-LFA Low Frequency Alignment"
    assert M.with_definitions("MaskGen", abstract) == "MaskGen"  # not defined here: nothing added
    kw = ["intervention|intervening", "head|internal"]
    assert M.cell_correct("CoCHI", not_stated=False, value_keywords=kw, abstract=abstract)
    assert not M.cell_correct("CoCHI", not_stated=False, value_keywords=kw)  # without the abstract: no match
    assert not M.cell_correct("a framework", not_stated=False, value_keywords=kw, abstract=abstract)


def test_value_supported_needs_a_verbatim_quote() -> None:
    abstract = "We introduce WildBox, a dataset and\nbenchmark for 3D detection."
    assert M.value_supported("a dataset and benchmark", abstract)
    assert not M.value_supported("a dataset of zebras", abstract)
    assert not M.value_supported("", abstract)


# ---------------------------------------------------------------------- gold files


def write(tmp_path: Path, *lines: str) -> Path:
    p = tmp_path / "gold.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_gold_errors_name_the_line(tmp_path: Path) -> None:
    ok = json.dumps({"question": "q?", "supporting_ids": ["p1"]})
    with pytest.raises(GoldError, match=r"gold.jsonl:2: invalid JSON"):
        load_gold(write(tmp_path, ok, "{nope"))
    with pytest.raises(GoldError, match=r"gold.jsonl:1: .*supporting_ids or supporting_quotes"):
        load_gold(write(tmp_path, json.dumps({"question": "q?"})))
    with pytest.raises(GoldError, match=r":2: .*type"):
        load_gold(write(tmp_path, ok, json.dumps({"question": "q?", "type": "trivia", "supporting_ids": ["p"]})))
    with pytest.raises(GoldError, match=r":2: duplicate id 'a'"):
        load_gold(
            write(
                tmp_path,
                json.dumps({"id": "a", "question": "q?", "supporting_ids": ["p"]}),
                json.dumps({"id": "a", "question": "r?", "supporting_ids": ["p"]}),
            )
        )


def test_quotes_resolve_to_paper_ids(tmp_path: Path) -> None:
    papers = [
        Paper(paper_id="p1", title="A", abstract="We   introduce WildBox, a dataset."),
        Paper(paper_id="p2", title="B", abstract="Another dataset."),
    ]
    gold = write(
        tmp_path,
        json.dumps({"question": "q?", "supporting_quotes": ["We introduce\nWildBox"]}),
        json.dumps({"question": "r?", "supporting_quotes": ["dataset."]}),
    )
    cases = load_gold(gold)
    assert resolve_cases(cases[:1], papers)[0].supporting_ids == ["p1"]
    with pytest.raises(GoldError, match=r":2: supporting quote 'dataset.' is in 2 abstracts"):
        resolve_cases(cases, papers, source="gold.jsonl")
    missing = load_gold(write(tmp_path, json.dumps({"question": "q?", "supporting_quotes": ["zebras"]})))
    with pytest.raises(GoldError, match=r":1: supporting quote 'zebras' is in no indexed abstract"):
        resolve_cases(missing, papers)


def test_bundled_gold_set_is_well_formed() -> None:
    cases = load_gold(Path(__file__).resolve().parents[1] / "eval" / "data" / "neurips2026_gold.jsonl")
    types = [c.type for c in cases]
    assert len(cases) >= 40 and types.count("unanswerable") >= 6 and "multi" in types
    assert sum(bool(c.history) for c in cases) >= 2


# ---------------------------------------------------------------------- threshold replay


def test_replay_applies_both_thresholds() -> None:
    from rag.evaluation.run import EvalRow, SentenceRecord

    case = EvalCase(id="a", question="How many?", answer_keywords=["65"], supporting_ids=["p"])
    row = EvalRow(
        case_id="a",
        type="factoid",
        answerable=True,
        question="How many?",
        standalone_question="How many?",
        refused=False,
        best_relevance=0.4,
        source_titles=["WiREBench"],
        sentences=[
            SentenceRecord(text="It found 65 bugs.", support=0.7, supported=True),
            SentenceRecord(text="It is fast.", support=0.3, supported=True),
        ],
    )
    assert replay(row, case, 0.3, 0.6) == (True, True)
    assert replay(row, case, 0.5, 0.6) == (False, False)  # below relevance, names no title
    assert replay(row, case, 0.3, 0.8) == (False, False)  # no sentence left
    named = row.model_copy(update={"names_source": True})  # the answer recorded that the question names a source
    assert replay(named, case, 0.5, 0.6) == (True, True)
    points = sweep([row], {"a": case}, relevance_grid=[0.3, 0.5], support_grid=[0.6, 0.8])
    assert choose(points, current=(0.3, 0.6)).min_relevance == 0.3


# ---------------------------------------------------------------------- PubMedQA answer mapping


def _answer(text: str, first: str | None = None, refused: bool = False) -> object:
    from rag import Answer, AnswerSentence

    sents = [AnswerSentence(text=first)] if first else []
    return Answer(
        question="q", standalone_question="q", text=text, refused=refused, sentences=sents + [AnswerSentence(text=text)]
    )


@pytest.mark.parametrize(
    ("text", "first", "refused", "label"),
    [
        ("Tailored interventions increased mammography use [1].", "Yes.", False, "yes"),
        ("The intervention had no significant effect [1].", "No, it did not.", False, "no"),
        ("The effect is unclear in older women [1].", None, False, "maybe"),
        ("The intervention did not change outcomes [1].", None, False, "no"),
        ("Mammography use rose by 12% [1].", None, False, "yes"),
        ("The indexed abstracts don't answer this.", None, True, "maybe"),
    ],
)
def test_pubmedqa_decision_mapping(text: str, first: str | None, refused: bool, label: str) -> None:
    from rag.evaluation.external import classify_decision

    assert classify_decision(_answer(text, first, refused)) == label  # type: ignore[arg-type]


def test_pubmedqa_replay_turns_refusals_into_maybe() -> None:
    from rag.evaluation.external import pubmedqa_tuning

    rows = [
        {"best_relevance": 0.5, "supports": [0.7], "refused": False, "pred": "yes", "label": "yes"},
        {"best_relevance": 0.2, "supports": [0.9], "refused": False, "pred": "yes", "label": "maybe"},
    ]
    grid = {(p["min_relevance"], p["min_support"]): p for p in pubmedqa_tuning(rows)["grid"]}
    assert grid[(0.0, 0.0)]["accuracy"] == 0.5 and grid[(0.0, 0.0)]["coverage"] == 1.0
    assert grid[(0.3, 0.6)]["accuracy"] == 1.0 and grid[(0.3, 0.6)]["precision"] == 1.0  # row 2 becomes a right "maybe"
    assert grid[(0.3, 0.8)]["accuracy"] == 0.5 and grid[(0.3, 0.8)]["coverage"] == 0.0


def test_supported_citations_ask_only_for_a_supported_citing_sentence() -> None:
    citations = [(1, "a"), (2, "b"), (3, "c")]
    sentences = [("A does X.", (1,), True), ("B does Y.", (2,), False), ("A and C.", (1, 3), True)]
    assert M.supported_citations(["a", "b", "c", "d"], citations, sentences) == [True, False, True, False]

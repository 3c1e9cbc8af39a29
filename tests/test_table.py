"""Table cells: what each kind of attribute is told and checked for, and how a model's reply is read."""

from __future__ import annotations

from typing import Any

from rag.answering.attributes import form_line, kind_of, value_fits
from rag.answering.table import _parse_values
from rag.assistant import Assistant
from tests.fakes import ScriptedChatModel, table_row_prompt


def test_known_kinds_of_attribute_get_a_hint_and_others_are_left_alone() -> None:
    assert form_line("dataset") == "dataset (named data used in experiments):"
    assert form_line("Best result") == "Best result (best number reported):"
    assert form_line("evaluation metric") == "evaluation metric (named evaluation measure):"  # metric, not result
    assert form_line("model size") == "model size (a number):"
    assert form_line("colour of the logo") == "colour of the logo:" and kind_of("colour of the logo") is None


def test_a_result_needs_a_figure_and_a_dataset_or_metric_needs_a_name() -> None:
    assert value_fits("best result", "8.68±0.47 AP-BEV@0.50") and value_fits("best result", "seven of ten tasks")
    assert not value_fits("best result", "strong gains") and not value_fits("best result", "SSL outperforms baselines")
    for data in ("WildBox", "real patient data", "five reasoning benchmarks", "Who&When Pro", "ImageNet-1k"):
        assert value_fits("dataset", data), data
    for field in ("3D biomedical image segmentation", "verifiable mathematical reasoning", "large shallow networks"):
        assert not value_fits("dataset", field), field
    for measure in ("empirical risk", "Brier Score", "AP@50", "pass@k", "ECE"):
        assert value_fits("metric", measure), measure
    assert not value_fits("metric", "end-to-end vulnerability discovery and reverse-engineering capabilities")
    assert not value_fits("model size", "large") and value_fits("model size", "7B parameters")
    assert value_fits("task", "anything at all") and value_fits("colour of the logo", "blue")  # no check


def test_reply_lines_are_read_by_name_with_or_without_the_hint() -> None:
    attrs = ["task", "dataset", "best result"]
    reply = "Task (the problem studied): 3D detection.\n- dataset: **WildBox**\nbest result: not stated\ntask: other"
    assert _parse_values(reply, attrs) == {"task": "3D detection", "dataset": "WildBox", "best result": "not stated"}
    assert _parse_values("WildBox: a dataset\nmetric: AP", attrs) == {}  # no line names an attribute


def test_bare_lines_are_read_in_order_only_when_there_is_one_per_attribute() -> None:
    attrs = ["task", "dataset"]
    assert _parse_values("3D detection of wildlife\nWildBox\n", attrs) == {
        "task": "3D detection of wildlife",
        "dataset": "WildBox",
    }
    assert _parse_values("not stated\nnot stated\nnot stated", attrs) == {}  # three lines for two: unreadable
    assert _parse_values("WildBox: a dataset\nImageNet: another", attrs) == {}  # labelled, by names we did not ask


def test_values_of_the_wrong_kind_are_not_stated_though_the_abstract_holds_them(seed_assistant: Any) -> None:
    field, claim = "monocular 3D detection of wildlife", "monocular aerial depth as the dominant open problem"

    def reply(prompt: str) -> str:
        row = table_row_prompt(prompt)
        assert row is not None and "best result (best number reported):" in prompt
        _title, abstract, attributes = row
        assert attributes == ["task", "dataset", "best result"] and field in abstract and claim in abstract
        # bare lines in the form's order: a task, a research field as the dataset, a claim with no figure
        return f"{field} from drone video\n{field}\n{claim}"

    fake = ScriptedChatModel(reply=reply)
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    table = a.table("task, dataset, best result", query="WildBox 3D detection of wildlife from drone video", k=1)
    (row,) = table.rows
    task, dataset, best = row.cells
    assert task.value == f"{field} from drone video" and task.quote.startswith("We introduce WildBox")
    assert dataset.value is None and best.value is None  # in the abstract, but not a dataset, not a figure
    assert table.timings["values_dropped"] == 2 and len(fake.prompts) == 1


def test_a_reply_cut_at_the_token_limit_loses_only_its_unfinished_line() -> None:
    attrs = ["method", "data domain", "main finding"]
    reply = "method: MaskGen\ndata domain: 3D biomedical images\nmain finding: We prove that under a"
    assert _parse_values(reply, attrs, cut=True) == {"method": "MaskGen", "data domain": "3D biomedical images"}
    assert _parse_values(reply, attrs)["main finding"] == "We prove that under a"  # a finished reply is read whole
    assert _parse_values("MaskGen\n3D images\nWe prove", attrs, cut=True) == {}  # bare lines, one cut: unreadable


def test_a_table_row_cut_at_the_token_limit_shows_no_fragment(seed_assistant: Any) -> None:
    task = "monocular 3D detection of wildlife from drone video"

    def reply(prompt: str) -> str:
        row = table_row_prompt(prompt)
        assert row is not None and task in row[1]
        return f"dataset: WildBox\ntask: {task}"

    # a server stops the reply at its token limit mid-value: "task: monocular 3D", a fragment the abstract holds
    fake = ScriptedChatModel(reply=reply, stop_after_words=5)
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    query = "WildBox 3D detection of wildlife from drone video"
    (row,) = a.table("dataset, task", query=query, k=1).rows
    assert {c.attribute: c.value for c in row.cells} == {"dataset": "WildBox", "task": None}
    fake.stop_after_words = None  # the same reply, finished: the whole value is kept
    (row,) = a.table("dataset, task", query=query, k=1).rows
    assert {c.attribute: c.value for c in row.cells} == {"dataset": "WildBox", "task": task}

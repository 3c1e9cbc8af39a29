"""Table cells: what each kind of attribute is told and checked for, and how a model's reply is read."""

from __future__ import annotations

from typing import Any

from rag.answering.attributes import kind_of, question_for, value_fits
from rag.answering.table import _parse_answer
from rag.assistant import Assistant
from tests.fakes import ScriptedChatModel, asked_attribute, table_cell_prompt


def test_each_kind_of_attribute_is_asked_its_own_question_and_others_plainly() -> None:
    assert question_for("dataset") == question_for("Datasets used")
    assert "dataset or benchmark" in question_for("dataset")
    assert question_for("Best result") == "What is the best result the paper reports (a number)?"
    assert question_for("accuracy") == "What is the best accuracy the paper reports (a number)?"
    assert "evaluation measure" in question_for("evaluation metric")  # a metric, not a result
    assert question_for("model size") == "What is the model size? Give the number."
    assert kind_of("colour of the logo") is None
    assert question_for("colour of the logo") == "What is the colour of the logo of this paper?"
    questions = [question_for(a) for a in ("task", "dataset", "metric", "result", "method", "domain", "finding")]
    assert len(set(questions)) == len(questions)


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


def test_an_answer_is_its_first_line_without_an_echoed_label_or_frame() -> None:
    assert _parse_answer("Answer: **WildBox**.\nIt is a dataset.", "dataset") == "WildBox"
    assert _parse_answer("- dataset: WildBox", "dataset") == "WildBox"
    assert _parse_answer("The authors find that router updates freeze after one step.", "main finding") == (
        "router updates freeze after one step"
    )
    assert _parse_answer("We propose Selective Social Learning (SSL)", "method") == "Selective Social Learning (SSL)"
    assert _parse_answer("AP@50: 8.68", "metric") == "AP@50: 8.68"  # a colon inside a value is kept
    assert _parse_answer("not stated", "task") == "not stated" and _parse_answer(" \n", "task") is None


def test_values_of_the_wrong_kind_are_not_stated_though_the_abstract_holds_them(seed_assistant: Any) -> None:
    field, claim = "monocular 3D detection of wildlife", "monocular aerial depth as the dominant open problem"
    attrs = ["task", "dataset", "best result"]

    def reply(prompt: str) -> str:
        cell = table_cell_prompt(prompt)
        assert cell is not None and field in cell[1] and claim in cell[1]
        # a task, a research field as the dataset, a claim with no figure as the best result
        return {"task": f"{field} from drone video", "dataset": field, "best result": claim}[
            str(asked_attribute(prompt, attrs))
        ]

    fake = ScriptedChatModel(reply=reply)
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    table = a.table(", ".join(attrs), query="WildBox 3D detection of wildlife from drone video", k=1)
    (row,) = table.rows
    task, dataset, best = row.cells
    assert task.value == f"{field} from drone video" and task.quote.startswith("We introduce WildBox")
    assert dataset.value is None and best.value is None  # in the abstract, but not a dataset, not a figure
    assert table.timings["values_dropped"] == 2 and len(fake.prompts) == 3  # one question per attribute
    assert all(p.startswith('Abstract of "') for p in fake.prompts)  # the abstract leads: a prefix the server reuses


def test_a_table_row_cut_at_the_token_limit_shows_no_fragment(seed_assistant: Any) -> None:
    task = "monocular 3D detection of wildlife from drone video"

    def reply(prompt: str) -> str:
        cell = table_cell_prompt(prompt)
        assert cell is not None and task in cell[1]
        return {"dataset": "WildBox", "task": task}[str(asked_attribute(prompt, ["dataset", "task"]))]

    # a server stops the reply at its token limit mid-value: "monocular 3D detection of wildlife", a fragment the
    # abstract holds
    fake = ScriptedChatModel(reply=reply, stop_after_words=5)
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    query = "WildBox 3D detection of wildlife from drone video"
    (row,) = a.table("dataset, task", query=query, k=1).rows
    assert {c.attribute: c.value for c in row.cells} == {"dataset": "WildBox", "task": None}
    fake.stop_after_words = None  # the same reply, finished: the whole value is kept
    (row,) = a.table("dataset, task", query=query, k=1).rows
    assert {c.attribute: c.value for c in row.cells} == {"dataset": "WildBox", "task": task}


def test_attributes_that_ask_the_same_question_share_one_model_call(seed_assistant: Any) -> None:
    fake = ScriptedChatModel(reply=lambda prompt: "WildBox")
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    (row,) = a.table("dataset, benchmarks, task", query="WildBox 3D detection of wildlife from drone video", k=1).rows
    assert [c.value for c in row.cells] == ["WildBox", "WildBox", "WildBox"] and len(fake.prompts) == 2

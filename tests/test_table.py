"""Table cells: what each kind of attribute is told and checked for, and how a model's reply is read."""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import count
from typing import Any

import pytest

from rag.answering.attributes import fits_paper, fits_sentence, kind_of, question_for, value_fits
from rag.answering.table import _parse_answer
from rag.assistant import Assistant
from rag.errors import QuestionError
from rag.events import RowEvent, TableEvent, TableStatusEvent
from tests.fakes import (
    PathsReply,
    ScriptedChatModel,
    asked_attribute,
    cell_prompts,
    copying_table_reply,
    judged_paper,
    judging,
    table_cell_prompt,
)


@pytest.fixture
def ingested(make_settings: Any, embeddings: Any, tmp_path: Any) -> Callable[..., Assistant]:
    """``ingested(records, reply)``: an assistant whose index holds only ``records`` (dicts with id, title and
    abstract) and whose model answers ``reply(prompt)``."""
    made = count()

    def make(records: list[dict[str, str]], reply: Callable[[str], str]) -> Assistant:
        corpus = tmp_path / f"records{next(made)}.jsonl"
        corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        a = Assistant(make_settings(), embeddings=embeddings, chat_model=ScriptedChatModel(reply=reply))
        a.ingest([corpus])
        return a

    return make


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
    for domain in ("time series", "real patient data", "mobile applications", "indoor and outdoor scenes"):
        assert value_fits("data domain", domain), domain
    for how in ("Observational data", "synthetic and real-world data", "challenging datasets", "practical scenarios"):
        assert not value_fits("data domain", how), how
    # a way of learning or a family of models is the method's field, not the data it learns from
    for way in (
        "Quantum machine learning (QML)",
        "Multi-agent reinforcement learning",
        "Deep learning, MoE architectures",
    ):
        assert not value_fits("data domain", way), way
    for area in ("Robot learning tasks", "Transformer-based language models", "Learning analytics in schools"):
        assert value_fits("data domain", area), area
    # a number inside a name is no result; the size of the data is none either
    assert not value_fits("best result", "pass@k improves while pass@1 degrades") and not value_fits("score", "GPT-4")
    sentence = "It holds 12,326 failed trajectories across 26 benchmarks; our method solves 65 of 100 challenges."
    assert not fits_sentence("best result", "12,326", sentence) and not fits_sentence("result", "26", sentence)
    assert fits_sentence("best result", "65", sentence) and fits_sentence("dataset size", "12,326", sentence)


def test_an_answer_is_its_first_line_without_an_echoed_label_or_frame() -> None:
    assert _parse_answer("Answer: **WildBox**.\nIt is a dataset.", "dataset") == "WildBox"
    assert _parse_answer("- dataset: WildBox", "dataset") == "WildBox"
    assert _parse_answer("The authors find that router updates freeze after one step.", "main finding") == (
        "router updates freeze after one step"
    )
    assert _parse_answer("The paper's experiments show that accuracy collapses", "main finding") == (
        "accuracy collapses"
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

    fake = ScriptedChatModel(reply=judging("WildBox", reply))
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    table = a.table(", ".join(attrs), query="WildBox 3D detection of wildlife from drone video", k=1)
    (row,) = table.rows
    task, dataset, best = row.cells
    assert task.value == f"{field} from drone video" and task.quote.startswith("We introduce WildBox")
    assert dataset.value is None and best.value is None  # in the abstract, but not a dataset, not a figure
    cells = cell_prompts(fake.prompts)
    # one question per attribute, and the dataset's once more without "not stated" (its value was not data)
    assert table.timings["values_dropped"] == 2 and len(cells) == 4
    assert [asked_attribute(p, attrs) for p in cells] == ["task", "dataset", "dataset", "best result"]
    assert '"not stated"' not in cells[2]
    assert all(p.startswith('Abstract of "') for p in cells)  # the abstract leads: a prefix the server reuses


def test_a_table_row_cut_at_the_token_limit_shows_no_fragment(seed_assistant: Any) -> None:
    task = "monocular 3D detection of wildlife from drone video"

    def reply(prompt: str) -> str:
        cell = table_cell_prompt(prompt)
        assert cell is not None and task in cell[1]
        return {"dataset": "WildBox", "task": task}[str(asked_attribute(prompt, ["dataset", "task"]))]

    # a server stops the reply at its token limit mid-value: "monocular 3D detection of wildlife", a fragment the
    # abstract holds
    fake = ScriptedChatModel(reply=judging("WildBox", reply), stop_after_words=5)
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    query = "WildBox 3D detection of wildlife from drone video"
    (row,) = a.table("dataset, task", query=query, k=1).rows
    assert {c.attribute: c.value for c in row.cells} == {"dataset": "WildBox", "task": None}
    fake.stop_after_words = None  # the same reply, finished: the whole value is kept
    (row,) = a.table("dataset, task", query=query, k=1).rows
    assert {c.attribute: c.value for c in row.cells} == {"dataset": "WildBox", "task": task}


def test_attributes_that_ask_the_same_question_share_one_model_call(seed_assistant: Any) -> None:
    fake = ScriptedChatModel(reply=judging("WildBox", lambda prompt: "WildBox"))
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    (row,) = a.table("dataset, benchmarks, task", query="WildBox 3D detection of wildlife from drone video", k=1).rows
    # the paper's own name is its dataset (the abstract introduces it as one), never its task
    assert [c.value for c in row.cells] == ["WildBox", "WildBox", None] and len(cell_prompts(fake.prompts)) == 2


def test_data_the_abstract_describes_is_asked_for_again_when_the_model_says_not_stated(seed_assistant: Any) -> None:
    attrs = ["dataset", "metric"]
    query = "Discrete Latent Reasoning latent tokens reasoning benchmarks"

    def reply(prompt: str) -> str:
        if '"not stated"' in prompt:  # the small model's habit: data described rather than named is "not stated"
            return "not stated"
        # asked again without that option; the model echoes the question's frame before the words
        return "DLR experiments are run on five reasoning benchmarks"

    fake = ScriptedChatModel(reply=judging("Discrete Latent Reasoning", reply))
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    (row,) = a.table(", ".join(attrs), query=query, k=1).rows
    dataset, metric = row.cells
    assert dataset.value == "five reasoning benchmarks" and "Experiments on five reasoning benchmarks" in dataset.quote
    assert metric.value is None  # a measure is not asked again: "not stated" stands
    asked = [asked_attribute(p, attrs) for p in cell_prompts(fake.prompts)]
    assert asked == ["dataset", "dataset", "metric"]


def test_every_paper_has_a_task_a_method_and_a_finding_so_not_stated_is_asked_again(seed_assistant: Any) -> None:
    from rag.answering.attributes import described

    attrs = ["task", "method", "main finding", "metric"]
    assert [described(a) for a in attrs] == [True, True, True, False]

    def reply(prompt: str) -> str:
        if '"not stated"' in prompt:  # the small model's habit on a paper that describes rather than names
            return "not stated"
        return {"task": "efficient latent reasoning", "method": "no sentence holds these words"}.get(
            asked_attribute(prompt, attrs) or "", "not stated"
        )

    fake = ScriptedChatModel(reply=judging("Discrete Latent Reasoning", reply))
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    query = "Discrete Latent Reasoning latent tokens reasoning benchmarks"
    table = a.table(", ".join(attrs), query=query, k=1)
    task, method, finding, metric = table.rows[0].cells
    assert task.value == "efficient latent reasoning" and task.quote
    assert method.value is None and finding.value is None and metric.value is None  # never guessed
    asked = [asked_attribute(p, attrs) for p in cell_prompts(fake.prompts)]
    assert asked == ["task", "task", "method", "method", "main finding", "main finding", "metric"]


def test_an_answer_again_that_echoes_the_question_or_no_sentence_holds_stays_not_stated(seed_assistant: Any) -> None:
    for second in ("a named dataset or benchmark", "twelve medical imaging corpora"):
        reply = judging("WildBox", lambda p, s=second: "not stated" if '"not stated"' in p else s)
        fake = ScriptedChatModel(reply=reply)
        a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
        table = a.table("dataset", query="WildBox 3D detection of wildlife from drone video", k=1)
        assert table.rows[0].cells[0].value is None and table.timings["values_dropped"] == 1, second


def test_a_value_is_found_in_another_form_of_its_words_or_an_acronym_the_abstract_defines() -> None:
    from rag.answering.evidence import evidence_spans
    from rag.answering.table import _locate, _same_word
    from rag.corpus.titles import acronym_definitions

    abstract = (
        "Modern large language models (LLMs) often exhibit overconfident errors. Existing methods rely on retraining. "
        "Experiments across multiple LLMs show consistent improvements in calibration metrics."
    )
    assert acronym_definitions(abstract) == [("large language models", "LLMs")]
    spans = evidence_spans(abstract)
    span = _locate("Improving calibration in large language models", abstract, spans, abstract)
    assert span is not None and abstract[span[0] : span[1]].startswith("Experiments across multiple LLMs")
    assert _locate("Improving robustness in vision models", abstract, spans, abstract) is None
    assert _same_word("formalizing", "formalize") and _same_word("classification", "classifier")
    assert not _same_word("generative", "generalization") and not _same_word("2019", "2018")
    assert _same_word("sampling", "samples") and not _same_word("attention", "attacks")


def test_a_value_its_given_title_states_is_quoted_from_the_title_but_never_from_a_derived_one(
    ingested: Callable[..., Assistant],
) -> None:
    record = {
        "id": "af1",
        "title": "Stable Autofocus with Focal Consistency Loss",
        "abstract": "Cameras on phones must focus fast. We train a network on 3,000 focal stacks. It converges in "
        "fewer steps than prior work, and the images it selects are sharper than those of contrast search.",
    }
    (row,) = ingested([record], lambda prompt: "Stable autofocus").table("task").rows
    (cell,) = row.cells
    assert cell.value == "Stable autofocus" and cell.quote == record["title"] and cell.span is None
    # the bundled abstracts come without titles: a title derived from the abstract is our words, never a source
    from rag.answering.evidence import evidence_spans
    from rag.answering.table import _stating
    from rag.types import SearchHit

    given = SearchHit(paper_id="af1", chunk_id="c", title=record["title"], text="", start=0, end=0, score=0.0)
    given = given.model_copy(update={"abstract": record["abstract"]})
    spans = evidence_spans(record["abstract"])
    assert _stating("Stable autofocus", given, spans, record["abstract"], []) == (
        "Stable autofocus",
        record["title"],
        None,
    )
    derived = given.model_copy(update={"title_derived": True})
    assert _stating("Stable autofocus", derived, spans, record["abstract"], []) is None
    assert _stating("Robust tracking", given, spans, record["abstract"], []) is None


def test_a_finding_the_model_joined_from_two_sentences_is_shown_in_the_abstracts_own_words() -> None:
    from rag.answering.evidence import evidence_spans
    from rag.answering.table import _same_word, _stating
    from rag.types import SearchHit

    abstract = (
        "We present a spatially adaptive network that samples a sparse set of feature locations. "
        "In addition, the presented network is shown to save substantial computation while maintaining accuracy "
        "over a variety of computer vision tasks."
    )
    hit = SearchHit(paper_id="p", chunk_id="c", title="", text="", start=0, end=0, score=0.0, abstract=abstract)
    spans = evidence_spans(abstract)
    joined = (
        "the spatially adaptive sampling-based network reduces computation while maintaining accuracy on vision tasks"
    )
    value, quote, span = _stating(joined, hit, spans, abstract, []) or ("", "", None)
    assert value == (
        "the presented network is shown to save substantial computation while maintaining accuracy over a variety "
        "of computer vision tasks"
    )
    assert quote.startswith("In addition, the presented network") and span is not None
    assert abstract[span[0] : span[1]] == quote
    # a short value gets no sentence in its place: it is located as it is, or not stated
    assert _stating("adaptive sparse attention", hit, spans, abstract, []) is None
    assert _same_word("sampling-based", "sampling") and not _same_word("data-driven", "drive")


# ---------------------------------------------------------------------------------------------- rows by query
def test_a_table_with_a_query_has_rows_only_for_the_papers_the_list_judge_confirms(seed_assistant: Any) -> None:
    reply = PathsReply(judge=r"(?i)benchmark")  # the judge says Yes to a paper whose judged text says benchmark
    fake = ScriptedChatModel(reply=reply)
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    table = a.table("task, metric", query="benchmarks for AI agents")
    judged = [judged_paper(p) for p in fake.prompts if judged_paper(p) is not None]
    assert len(judged) == table.checked == 19  # a small collection: every paper judged, as a list question's
    assert all("Question: Is this paper about benchmarks for AI agents?" in p for p in fake.prompts if "Paper: " in p)
    confirmed = {str(t).split(".")[0] for t in reply.said_yes}  # the judged text starts with the title
    assert 0 < len(table.rows) < 19 and {r.title for r in table.rows} == confirmed
    cell_titles = {table_cell_prompt(p)[0] for p in cell_prompts(fake.prompts)}  # type: ignore[index]
    assert cell_titles == confirmed  # no paper the judge rejected was read for its cells


def test_a_table_has_at_most_ten_rows_by_default_and_stops_judging_there(seed_assistant: Any) -> None:
    fake = ScriptedChatModel(reply=PathsReply(judge=r"."))  # every paper qualifies
    s = seed_assistant.settings
    every = s.model_copy(update={"answer": s.answer.model_copy(update={"list_relative_floor": 0.0})})
    a = Assistant(every, embeddings=seed_assistant.embeddings, chat_model=fake)  # all 19 papers are candidates
    assert a.settings.answer.table_max_papers == 10
    table = a.table("task", query="machine learning")
    judged = [p for p in fake.prompts if judged_paper(p) is not None]
    assert len(table.rows) == 10 and len(judged) == 10 and table.checked == 10  # the 11th is never judged
    assert len(a.table("task").rows) == 10  # without a query: the first ten papers
    assert len(a.table("task", k=12).rows) == 12


def test_rows_that_state_nothing_go_last_and_are_numbered_again(seed_assistant: Any) -> None:
    silent = ("WildBox", "Who&When Pro")  # these papers' rows state nothing; the others copy their first words

    def reply(prompt: str) -> str:
        cell = table_cell_prompt(prompt)
        if cell is not None and cell[0] in silent:
            return "not stated"
        return copying_table_reply(prompt) or "not stated"

    fake = ScriptedChatModel(reply=reply)
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    events = list(a.table_stream("task", k=19))
    finished = [e.row for e in events if isinstance(e, RowEvent)]
    (done,) = [e.table for e in events if isinstance(e, TableEvent)]
    stated = [r.title for r in finished if any(c.stated for c in r.cells)]
    empty = [r.title for r in finished if not any(c.stated for c in r.cells)]
    assert set(silent) <= set(empty) and len(stated) >= 10
    titles = [r.title for r in finished]
    assert min(titles.index(t) for t in empty) < titles.index(stated[-1])  # they finished among the others
    assert [r.title for r in done.rows] == stated + empty  # each group in its order, the empty ones last
    assert [r.n for r in done.rows] == list(range(1, 20))  # numbered again in the final order


def test_a_table_stream_reports_progress_before_any_work_then_rows_then_the_table(seed_assistant: Any) -> None:
    fake = ScriptedChatModel(reply=PathsReply(judge=r"(?i)benchmark"))
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    stream = a.table_stream("task, metric", query="benchmarks for AI agents", k=2)
    first = next(stream)
    assert isinstance(first, TableStatusEvent) and first.stage == "finding" and first.text == "Finding papers…"
    assert fake.prompts == []  # said before retrieval and before the model is asked anything
    events = [first, *stream]
    kinds = [type(e).__name__ for e in events]
    assert kinds[-1] == "TableEvent" and kinds.count("TableEvent") == 1 and "ErrorEvent" not in kinds
    rows = [i for i, e in enumerate(events) if isinstance(e, RowEvent)]
    assert len(rows) == 2  # k rows, then it stops
    for i in rows:  # each row is announced by a status that says which row is being filled
        status = events[i - 1]
        assert isinstance(status, TableStatusEvent) and status.stage == "filling"
        assert status.text.startswith(f"Filling row {status.rows} ")
    judging = [e for e in events if isinstance(e, TableStatusEvent) and e.stage == "judging"]
    assert [e.text for e in judging[:2]] == [f"Judging paper {n} of {judging[0].total}…" for n in (1, 2)]
    table = events[-1].table  # type: ignore[union-attr]
    assert [r.paper_id for r in table.rows] == [events[i].row.paper_id for i in rows]  # type: ignore[union-attr]


def test_closing_a_table_stream_frees_the_llm_slot(seed_assistant: Any) -> None:
    fake = ScriptedChatModel(reply=PathsReply(judge=r"."))
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    stream = a.table_stream("task", query="machine learning")
    for event in stream:
        if isinstance(event, RowEvent):
            break
    assert a.llm_queue.active == 1  # a row is out: the stream holds the model
    stream.close()  # what the UI's Stop does
    assert a.llm_queue.active == 0 and len(cell_prompts(fake.prompts)) == 1


def test_bad_table_requests_are_refused_before_the_first_event(seed_assistant: Any) -> None:
    fake = ScriptedChatModel(reply=PathsReply())
    a = Assistant(seed_assistant.settings, embeddings=seed_assistant.embeddings, chat_model=fake)
    with pytest.raises(QuestionError, match="Name at least one attribute"):
        next(a.table_stream(" , "))
    with pytest.raises(QuestionError, match="the limit is 2000"):
        next(a.table_stream("task", query="x" * 2001))
    assert fake.prompts == []


# ---------------------------------------------------------------------------------------------- cell kinds
_OWN = (
    "We propose Glimmer, a simple method for sparse attention. We evaluate Glimmer on ImageNet and COCO. "
    "Glimmer speeds up inference by 2x."
)
_DATA = "We release Marsh-2K, a dataset of 2,000 annotated wetland images. A baseline detector reaches 41 mAP on it."


def test_the_papers_own_method_is_neither_its_dataset_nor_its_task() -> None:
    title = "Glimmer: Sparse Attention Made Simple"
    assert not fits_paper("dataset", "Glimmer", title, _OWN)  # proposed as a method, not as data
    assert not fits_paper("task", "Glimmer", title, _OWN)
    assert fits_paper("dataset", "ImageNet", title, _OWN) and fits_paper("dataset", "COCO", title, _OWN)
    assert fits_paper("task", "sparse attention", title, _OWN)
    assert fits_paper("method", "Glimmer, a simple method for sparse attention", title, _OWN)


def test_a_dataset_the_paper_introduces_is_its_dataset_but_not_its_method() -> None:
    title = "Marsh-2K: Wetland Images for Detection"
    assert fits_paper("dataset", "Marsh-2K", title, _DATA)  # released as a dataset
    assert not fits_paper("method", "Marsh-2K", title, _DATA)
    assert not fits_paper("task", "Marsh-2K", title, _DATA)
    assert fits_paper("method", "a baseline detector", title, _DATA)


def test_a_name_the_paper_coins_is_not_its_task() -> None:
    abstract = "We study how transformers learn symmetries. These findings support what we coin the *Symmetry Lottery*."
    assert not fits_paper("task", "Symmetry Lottery", "How transformers learn symmetries", abstract)
    assert fits_paper("task", "learning symmetries with transformers", "How transformers learn symmetries", abstract)
    assert fits_paper("colour of the logo", "Symmetry Lottery", "x", abstract)  # no kind: no rule


def test_an_introduced_name_is_read_in_its_own_words_only() -> None:
    """Capitalised words between the verb and a value make another name ("propose Selective Social Learning" does
    not introduce "Social Learning"), and only the words around the name say it is data (a data word later in
    the sentence does not make a method a dataset). Both were false drops on the gold table set."""
    from rag.answering.attributes import fits_paper

    abstract = (
        "We propose Selective Social Learning (SSL), a method for agents. "
        "We propose Independent Risk Minimization (IndRM), which we evaluate on three real-world datasets. "
        "We present a new dataset called FooSet for parsing."
    )
    title = "Selective Social Learning for Agents"
    assert fits_paper("task", "Social Learning", title, abstract)
    assert fits_paper("method", "Independent Risk Minimization", title, abstract)
    assert not fits_paper("method", "FooSet", title, abstract)
    assert fits_paper("dataset", "FooSet", title, abstract)


def test_a_common_phrase_is_no_name_and_a_clause_before_the_verb_is_not_its_data() -> None:
    """A value written in lower case in the abstract ("an explicitly designed social learning mechanism") is a
    common phrase, not a name the paper introduces, so it can be the task; a data word before the introducing verb
    belongs to another clause ("For finite data, we propose X" does not introduce X as data)."""
    abstract = (
        "Agents in MARL without an explicitly designed social learning mechanism rarely imitate each other. "
        "For finite data, we propose Independent Risk Minimization (IndRM), which is simple and local. "
        "We also introduce word2vec-lite, a new corpus of 3M sentences."
    )
    title = "Independent Risk Minimization (IndRM)"
    assert fits_paper("task", "Social learning", title, abstract)
    assert fits_paper("method", "Independent Risk Minimization (IndRM)", title, abstract)
    assert not fits_paper("task", "Independent Risk Minimization", title, abstract)  # its own name: never the task
    assert fits_paper("dataset", "word2vec-lite", title, abstract)  # a name with a digit, introduced as data
    assert not fits_paper("method", "word2vec-lite", title, abstract)


def test_only_an_apposition_after_a_name_makes_it_data() -> None:
    """Words that follow a name say what it is only as an apposition or a head noun ("X, a dataset", "the X
    corpus"); a data word later in the clause ("X (OLD-Net) taking only RGB images as input") does not make a
    method a dataset. This dropped a method on the fresh table set."""
    abstract = (
        "This paper proposes a novel approach named Object Level Depth Network (OLD-Net) taking only RGB images as "
        "input. We also introduce ShelfScenes (SS), a large-scale dataset of 5k scenes. "
        "We release the KitchenSet corpus for pose estimation."
    )
    title = "Object Level Depth for Pose Estimation"
    assert fits_paper("method", "Object Level Depth Network", title, abstract)
    assert not fits_paper("dataset", "Object Level Depth Network", title, abstract)  # its own method: no data
    assert not fits_paper("method", "ShelfScenes", title, abstract) and fits_paper(
        "dataset", "ShelfScenes", title, abstract
    )
    assert not fits_paper("method", "KitchenSet", title, abstract) and fits_paper(
        "dataset", "KitchenSet", title, abstract
    )


def test_a_finding_the_model_reworded_in_few_words_is_shown_as_the_sentence_that_holds_it() -> None:
    from rag.answering.attributes import statement
    from rag.answering.evidence import evidence_spans
    from rag.answering.table import CLAUSE_TERMS, STATEMENT_TERMS, _stating
    from rag.types import SearchHit

    abstract = (
        "We propose to compute features only at sparsely sampled locations. "
        "The presented network is experimentally shown to save substantial computation while maintaining accuracy "
        "over a variety of computer vision tasks."
    )
    hit = SearchHit(paper_id="p", chunk_id="c", title="", text="", start=0, end=0, score=0.0, abstract=abstract)
    spans = evidence_spans(abstract)
    reworded = "the proposed sampling-based approach reduces computation while maintaining accuracy"  # six terms
    assert statement("main finding") and not statement("method") and not statement("task")
    assert _stating(reworded, hit, spans, abstract, [], CLAUSE_TERMS) is None  # a method's phrase: as it is
    value, quote, _span = _stating(reworded, hit, spans, abstract, [], STATEMENT_TERMS) or ("", "", None)
    assert quote.startswith("The presented network") and value.startswith("The presented network")
    assert _stating("faster feature sampling", hit, spans, abstract, [], STATEMENT_TERMS) is None  # a phrase
    other = "the network saves memory on speech recognition benchmarks"  # a third of it: another finding
    assert _stating(other, hit, spans, abstract, [], STATEMENT_TERMS) is None


def test_a_reworded_finding_is_never_shown_as_a_sentence_of_the_abstracts_background() -> None:
    from rag.answering.evidence import evidence_spans
    from rag.answering.table import STATEMENT_TERMS, _stating, own_work_start
    from rag.types import SearchHit

    abstract = (
        "Knowledge graphs are far from complete. However, existing completion methods suffer from false negatives "
        "and data sparsity. To this end, we propose PUDA, which treats unlabeled triples as unlabeled. "
        "Experiments show that PUDA works on two benchmarks."
    )
    spans = evidence_spans(abstract)
    start = own_work_start([abstract[a:b] for a, b in spans])
    assert start == 2
    assert own_work_start(["A field overview.", "Nothing of its own."]) == 0  # no own work: nothing is background
    hit = SearchHit(paper_id="p", chunk_id="c", title="", text="", start=0, end=0, score=0.0, abstract=abstract)
    finding = "PUDA tackles false negatives and data sparsity of completion methods on benchmarks"
    anywhere = _stating(finding, hit, spans, abstract, [], STATEMENT_TERMS)
    assert anywhere is not None and anywhere[1].startswith("However, existing completion methods")  # the field's
    assert _stating(finding, hit, spans, abstract, [], STATEMENT_TERMS, start) is None  # not stated instead


def test_a_value_with_a_word_of_the_title_is_no_swap_of_its_sentences_word(
    ingested: Callable[..., Assistant],
) -> None:
    """ "wide" (the title's) where the sentence says "extensive" is the paper's own wording, not a term swapped in
    from elsewhere: each sentence was once counted twice in the paper's text, so every word seemed used elsewhere."""
    record = {
        "id": "ta1",
        "title": "Tele-assembly in Wide Remote Environments",
        "abstract": "The video shows a telepresence system which allows to perform an assembly task in an extensive "
        "remote environment. It comprises a telemanipulator with two arms. The video shows an assembly experiment "
        "with toy bricks, a harder task.",
    }
    a = ingested([record], lambda prompt: "Assembly task in wide remote environments")
    (cell,) = a.table("task").rows[0].cells
    assert cell.value == "Assembly task in wide remote environments" and cell.quote.startswith("The video shows a tele")
    # a true swap is still caught: a term of another sentence in the place of its sentence's own
    b = ingested([record], lambda prompt: "an assembly experiment in an extensive remote environment")
    assert b.table("task").rows[0].cells[0].value is None  # "experiment" (the third sentence's) for "task"


def test_a_domain_no_kind_of_data_fills_is_the_area_the_papers_title_names(
    ingested: Callable[..., Assistant],
) -> None:
    from rag.answering.attributes import area_question
    from rag.answering.table import _in_title

    records = [
        {
            "id": "kg1",
            "title": "Adversarial Augmentation for Knowledge Graph Completion",
            "abstract": "Knowledge graph completion predicts missing facts. We propose an adversarial augmentation "
            "method. Experiments on real-world benchmark datasets show gains.",
        },
        {
            "id": "sl1",
            "title": "The Symmetry Lottery",
            "abstract": "We study why transformers learn symmetries in machine learning. We coin the Symmetry "
            "Lottery. Experiments on real-world benchmark datasets support it.",
        },
    ]
    question = area_question("data domain")
    assert question is not None and area_question("dataset") is None and area_question("task") is None

    def reply(prompt: str) -> str:
        if question in prompt:  # the broader question: the paper's area, or a field
            return "Knowledge graph completion" if "Knowledge graph" in prompt else "Machine learning"
        return "Real-world benchmark datasets"  # data described only by how it was obtained: no kind of data

    cells = {row.paper_id: row.cells[0] for row in ingested(records, reply).table("data domain").rows}
    assert cells["kg1"].value == "Knowledge graph completion" and cells["kg1"].quote.startswith("Knowledge graph")
    assert cells["sl1"].value is None  # "machine learning" is stated, but the title does not name it
    assert _in_title("Robotics", 'Development of a biologically inspired hopping robot-"Kenken"')
    assert not _in_title("Machine learning", "Learning To Adapt CLIP for Few-Shot Monocular Depth Estimation")


def test_a_domain_named_only_by_its_setting_gives_way_to_the_area_the_title_names(
    ingested: Callable[..., Assistant],
) -> None:
    from rag.answering.attributes import area_question, vague_domain

    records = [
        {
            "id": "cf1",
            "title": "Cell-free DNA Classification for Chronic Disease",
            "abstract": "Cell-free DNA classification detects chronic disease from blood. We prove a lower bound. "
            "We then validate on real patient data, where our classifier beats clinical tests.",
        },
        {
            "id": "ot1",
            "title": "A Lower Bound for Sparse Windows",
            "abstract": "Cell-free DNA classification detects chronic disease from blood. We prove a lower bound. "
            "We then validate on real patient data, where our classifier beats clinical tests.",
        },
    ]
    question = area_question("data domain")
    assert vague_domain("Real patient data") and vague_domain("indoor and outdoor datasets")
    assert not vague_domain("time series") and not vague_domain("challenging videos")

    def reply(prompt: str) -> str:
        return "Cell-free DNA classification" if question and question in prompt else "Real patient data"

    cells = {row.paper_id: row.cells[0] for row in ingested(records, reply).table("data domain").rows}
    assert cells["cf1"].value == "Cell-free DNA classification" and cells["cf1"].quote.startswith("Cell-free DNA")
    assert cells["ot1"].value == "Real patient data"  # the title does not name the area: the model's value stands


def test_a_finding_given_as_the_contribution_described_gives_way_to_what_the_work_shows(
    ingested: Callable[..., Assistant],
) -> None:
    from rag.answering.attributes import is_finding, sharper

    assert not is_finding("WiREBench is a unique benchmark derived from real-world mobile applications")
    assert not is_finding("PUDA tailors a positive-unlabeled risk estimator for the task")
    assert not is_finding("cognitive control should be a first-class computational object")
    for found in (
        "DLR outperforms prior latent reasoning baselines",
        "router updates freeze after one step",
        "the proposed hindlimb mechanism is effective for legged running",
    ):
        assert is_finding(found), found
    assert sharper("main finding", "router updates freeze", "T", "A.") is None
    assert sharper("dataset", "X is a set", "T", "A.") is None  # no sharper question for a dataset
    question = sharper("main finding", "WiREBench is a benchmark of mobile apps", "T", "A.")
    assert question is not None

    record = {
        "id": "wb1",
        "title": "A Benchmark for Vulnerability Discovery",
        "abstract": "Agents are used for security. We present WiREBench, a benchmark of real mobile applications. "
        "Agents running on WiREBench identify and confirm 65 protocol vulnerabilities.",
    }
    contribution = "WiREBench is a benchmark of real mobile applications"

    def reply(prompt: str) -> str:
        return "Agents identify and confirm 65 protocol vulnerabilities" if question in prompt else contribution

    (cell,) = ingested([record], reply).table("main finding").rows[0].cells
    assert cell.value == "Agents identify and confirm 65 protocol vulnerabilities" and "65" in str(cell.quote)
    # the sharper answer no sentence states (or "not stated"): the model's first value stands
    for sharp in ("Agents find 90 bugs in the kernel", "not stated"):
        a = ingested([record], lambda p, said=sharp: said if question in p else contribution)
        (kept,) = a.table("main finding").rows[0].cells
        assert kept.value is not None and "WiREBench" in kept.value, sharp


def test_a_method_that_is_the_papers_data_gives_way_to_what_the_authors_evaluate(
    ingested: Callable[..., Assistant],
) -> None:
    from rag.answering.attributes import sharper

    record = {
        "id": "wx1",
        "title": "Wildlife from Drones",
        "abstract": "Drones film wildlife. We introduce WildBox, a dataset and benchmark for 3D detection. "
        "We evaluate two open-vocabulary 3D detectors, OVMono3D-LIFT and DetAny3D, under zero-shot protocols.",
    }
    question = sharper("method", "WildBox", record["title"], record["abstract"])
    assert question is not None and sharper("method", "OVMono3D-LIFT", record["title"], record["abstract"]) is None

    def reply(prompt: str) -> str:
        return "Open-vocabulary 3D detectors OVMono3D-LIFT and DetAny3D" if question in prompt else "WildBox"

    (cell,) = ingested([record], reply).table("method").rows[0].cells
    assert cell.value == "Open-vocabulary 3D detectors OVMono3D-LIFT and DetAny3D" and "evaluate" in str(cell.quote)
    # the sharper answer is the data again: the cell stays empty, never the paper's data as its method
    (empty,) = ingested([record], lambda prompt: "WildBox").table("method").rows[0].cells
    assert empty.value is None

"""Exports of answers and conversations (Markdown with numbered references, BibTeX, CSV) and the conversation
store the UI keeps them in. Answers come from the seed abstracts in extractive mode (real retrieval and
verification, no LLM), so the citations, spans and sources are the ones users get."""

from __future__ import annotations

import csv
import io
import re
from typing import Any

import pytest

from rag import (
    Answer,
    Citation,
    Conversation,
    ConversationStore,
    SearchHit,
    Table,
    TableCell,
    TableRow,
    Turn,
    format_bibtex,
    format_csv,
    format_markdown,
    readable_table,
)


@pytest.fixture(scope="module")
def two_answers(seed_assistant: Any) -> list[Answer]:
    a1 = seed_assistant.ask("How many 3D bounding box annotations does WildBox have?", mode="extractive")
    a2 = seed_assistant.ask("What AP-BEV does fine-tuning on WildBox recover?", mode="extractive")
    assert a1.citations and a2.citations
    return [a1, a2]


def references(md: str) -> dict[int, str]:
    """The numbered entries under "## References": n -> the entry's text (heading line and quotes)."""
    refs = md.split("## References", 1)[1]
    return {int(m.group(1)): m.group(2) for m in re.finditer(r'<a id="ref-(\d+)"></a>(.*?)(?=\n\n|\Z)', refs, re.S)}


def test_every_marker_of_a_conversation_resolves_to_one_reference(two_answers: list[Answer]) -> None:
    md = format_markdown(two_answers, title="WildBox questions")
    body = md.split("## References", 1)[0]
    markers = {int(n) for n in re.findall(r"\[(\d+)\]", body)}
    refs = references(md)
    assert markers and markers <= set(refs)
    assert sorted(refs) == list(range(1, len(refs) + 1))
    for n in markers:  # each reference is a link target, and names a paper the answers cite
        assert f"[{n}]: #ref-{n}" in md
    cited = {c.paper_id for a in two_answers for c in a.citations}
    assert {re.search(r"`([^`]+)`", e).group(1) for e in refs.values()} == cited  # type: ignore[union-attr]
    assert md.count("## ") == 3  # two questions and the references


def test_same_paper_keeps_one_number_across_answers(two_answers: list[Answer]) -> None:
    md = format_markdown(two_answers)
    wildbox = [n for n, entry in references(md).items() if "WildBox" in entry]
    assert len(wildbox) == 1  # cited by both answers, listed once


def test_markdown_is_readable_and_quotes_the_cited_sentence(two_answers: list[Answer]) -> None:
    md = format_markdown(two_answers[1])
    assert md.startswith("# What AP-BEV does fine-tuning on WildBox recover?")
    assert "8.68±0.47" in md and r"$\pm$" not in md
    assert "> “" in md


def answer_with(title: str, quote: str, venue: str = "ICML", paper_id: str = "x-1") -> Answer:
    abstract = f"Intro. {quote} End."
    start = abstract.index(quote)
    hit = SearchHit(
        paper_id=paper_id,
        chunk_id=f"{paper_id}#0",
        title=title,
        text=abstract,
        start=0,
        end=len(abstract),
        score=0.03,
        dense_score=0.61,
        abstract=abstract,
        metadata={"venue": venue, "year": 2025},
        rank=1,
    )
    cite = Citation(n=1, paper_id=paper_id, title=title, text=abstract, span=(start, start + len(quote)), quote=quote)
    return Answer(
        question="What <b>does</b> it do?",
        standalone_question="What does it do?",
        text=f"{quote} [1] [7].",
        refused=False,
        citations=[cite],
        sources=[hit],
    )


def test_markup_in_exports_stays_text() -> None:
    a = answer_with("Quokka <img src=x onerror=alert(1)> & 50% $\\alpha$", "See ![x](https://attacker.example/p.png).")
    md = format_markdown(a)
    # CommonMark shows a backslash-escaped character as itself: no tag, no image, no link
    assert not re.search(r"(?<!\\)<(img|b)\b", md) and not re.search(r"(?<!\\)\]\(https://attacker", md)
    assert "\\<img src=x onerror=alert(1)\\>" in md and "α" in md
    assert "[7]" not in md  # a marker that resolves to no source is dropped
    bib = format_bibtex(a)
    assert r"\& 50\% α" in bib and "booktitle = {ICML}" in bib and "year = {2025}" in bib
    assert bib.startswith("@inproceedings{quokka2025_x1,")


def test_csv_has_the_columns_and_defuses_formulas() -> None:
    a = answer_with('=HYPERLINK("https://attacker.example")', "+1 improves recall to 84\\%.", paper_id="-p")
    rows = list(csv.DictReader(io.StringIO(format_csv(a))))
    assert list(rows[0]) == ["n", "title", "paper_id", "venue", "year", "url", "quote"]
    assert rows[0]["title"].startswith("'=") and rows[0]["quote"] == "'+1 improves recall to 84%."
    assert rows[0]["paper_id"] == "'-p" and rows[0]["year"] == "2025"


def test_refused_answer_exports_without_references() -> None:
    a = Answer(
        question="Unrelated?",
        standalone_question="Unrelated?",
        text="The indexed abstracts don't answer this.",
        refused=True,
    )
    assert "## References" not in format_markdown(a)
    assert format_bibtex(a) == "" and format_csv(a).strip() == "n,title,paper_id,venue,year,url,quote"


def test_conversations_are_kept_per_user_and_round_trip(tmp_path: Any, two_answers: list[Answer]) -> None:
    store = ConversationStore(tmp_path)
    conv = store.save("alice", Conversation(title="WildBox", turns=[Turn(answer=a) for a in two_answers]))
    assert [c.id for c in store.list("alice")] == [conv.id]
    assert store.list("bob") == [] and store.list(None) == []
    back = store.load("alice", conv.id)
    assert back is not None and back.answers == two_answers  # citations, spans, sources with abstracts
    assert store.load("bob", conv.id) is None
    assert store.delete("alice", conv.id) and store.list("alice") == []


def test_conversation_ids_from_outside_cannot_leave_the_folder(tmp_path: Any) -> None:
    store = ConversationStore(tmp_path / "c")
    (tmp_path / "secret.json").write_text("{}")
    assert store.load(None, "../../secret") is None
    assert not store.delete(None, "../secret")
    assert store.folder("../../etc").parent == tmp_path / "c"


def test_table_exports_are_readable_and_json_keeps_the_verbatim_quote() -> None:
    quote = r"Fine-tuning recovers 8.68$\pm$0.47 AP and 84\% recall."
    cell = TableCell(attribute="metric", value=r"8.68$\pm$0.47 AP", quote=quote, span=(0, len(quote)))
    table = Table(attributes=["metric"], rows=[TableRow(n=1, paper_id="p", title=r"\emph{WildBox}", cells=[cell])])
    shown = readable_table(table)
    assert "| WildBox | 8.68±0.47 AP [1] |" in shown.to_markdown() and "84% recall" in shown.to_csv()
    assert table.to_json()["rows"][0]["cells"][0]["quote"] == quote

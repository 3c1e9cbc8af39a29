"""rag.corpus: every reader, every bad input, ids, dedupe, normalisation and derived titles."""

from __future__ import annotations

import csv
import gzip
import json
import re
from pathlib import Path

import pytest

from rag.corpus import (
    bundled_corpus,
    derive_title,
    load_corpora,
    normalise_text,
    paper_id_for,
    read_corpora,
    read_corpus,
)
from rag.errors import IngestError
from rag.types import Paper
from tests.conftest import shared_data

DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture(scope="module")
def seed_path() -> Path:
    return bundled_corpus()


@pytest.fixture(scope="module")
def seed_papers(seed_path: Path) -> list[Paper]:
    return read_corpus(seed_path)


def write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def raises_ingest(path: Path, *patterns: str) -> IngestError:
    """Read ``path``, expect an IngestError naming the file and matching every pattern."""
    with pytest.raises(IngestError) as info:
        read_corpus(path)
    message = str(info.value)
    assert path.name in message, message
    for pattern in patterns:
        assert re.search(pattern, message), f"{pattern!r} not in {message!r}"
    return info.value


# ------------------------------------------------------------------------------------------ readers


def test_txt_reader_reads_every_seed_abstract(seed_papers: list[Paper], seed_path: Path) -> None:
    assert len(seed_papers) == 19
    assert all(p.metadata == {"collection": "NeurIPS 2026 Papers"} for p in seed_papers)
    assert all(p.title_derived and p.paper_id.startswith("h-") for p in seed_papers)
    # one paragraph every other line, after the title on line 1 and a blank line 2
    assert [p.source for p in seed_papers] == [f"{seed_path.name}:{n}" for n in range(3, 41, 2)]
    assert seed_papers[2].abstract.startswith("We introduce WildBox, a dataset")


def test_txt_keeps_abstract_verbatim(seed_papers: list[Paper]) -> None:
    dlr = next(p for p in seed_papers if "DLR" in p.abstract)
    assert "**Discrete Latent Reasoning (DLR)**" in dlr.abstract
    assert "20$\\times$ compression" in dlr.abstract


def test_txt_paragraph_lines_are_joined_with_spaces(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.txt",
        "My Papers\r\n\r\nFirst line of one\r\nabstract, continued.\r\n\r\n\r\n  Second abstract.  \r\n",
    )
    papers = read_corpus(path)
    assert [p.abstract for p in papers] == ["First line of one abstract, continued.", "Second abstract."]
    assert [p.source for p in papers] == ["c.txt:3", "c.txt:7"]
    assert papers[0].metadata == {"collection": "My Papers"}


def test_txt_without_collection_line_keeps_first_abstract(tmp_path: Path) -> None:
    long_first = "We measure something carefully. " * 10
    path = write(tmp_path / "c.txt", f"{long_first}\n\nAnother abstract.\n")
    papers = read_corpus(path)
    assert len(papers) == 2 and papers[0].metadata == {}


def test_jsonl_reader_maps_fields_and_metadata() -> None:
    papers = read_corpus(DATA / "abstracts.jsonl")
    assert [p.paper_id for p in papers] == [f"2401.{n:05d}" for n in range(1, 11)]
    first = papers[0]
    assert first.title == "Sparse Attention Kernels for Long-Context Protein Language Models"
    assert not first.title_derived
    assert first.authors == ("Mira Okafor", "Tomasz Lind")
    assert (first.venue, first.year, first.url) == ("ICML", 2024, "https://example.org/papers/2401.00001")
    assert first.metadata == {"track": "main", "keywords": "proteins; attention; efficiency"}
    assert first.source == "abstracts.jsonl:1"
    assert papers[8].metadata == {"peer_reviewed": True}
    assert papers[9].metadata == {"citations": 12}


def test_jsonl_nested_object_is_json_dumped_into_metadata() -> None:
    tide = read_corpus(DATA / "abstracts.jsonl")[3]
    assert json.loads(str(tide.metadata["resources"])) == {
        "code": "https://example.org/tidebench",
        "license": "CC-BY-4.0",
    }


def test_missing_title_is_derived() -> None:
    tide = read_corpus(DATA / "abstracts.jsonl")[3]
    assert (tide.title, tide.title_derived) == ("TideBench", True)


def test_authors_string_is_split_on_semicolons_then_commas() -> None:
    papers = read_corpus(DATA / "abstracts.jsonl")
    assert papers[1].authors == ("Ana Ruiz", "Kenji Sato", "Priya Natarajan")  # "a; b; c"
    assert papers[8].authors == ("Dana Cohen", "Marcus Lee")  # "a, b"


def test_year_as_numeric_string_is_an_int() -> None:
    assert read_corpus(DATA / "abstracts.jsonl")[1].year == 2024  # given as "2024"


def test_csv_reader_handles_multiline_fields_extra_columns_and_empty_cells() -> None:
    papers = read_corpus(DATA / "abstracts.csv")
    assert [p.paper_id for p in papers] == ["csv-001", "csv-002", "csv-003"]
    assert [p.source for p in papers] == ["abstracts.csv:2", "abstracts.csv:4", "abstracts.csv:5"]
    tree = papers[0]
    assert "1600.\nThe reconstruction" in tree.abstract  # the quoted newline is kept verbatim
    assert (tree.year, tree.authors, tree.url) == (2022, ("Ola Nordmann", "Kari Hansen"), None)
    assert tree.metadata == {"dataset_doi": "10.5061/dryad.x1"}
    assert (papers[1].title, papers[1].title_derived) == ("RouteMix", True)
    assert (papers[2].venue, papers[2].year, papers[2].authors, papers[2].metadata) == (None, None, (), {})


def test_csv_with_bom_crlf_and_capitalised_header(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_bytes(b"\xef\xbb\xbfID,Abstract,Year\r\n7,An abstract about frogs.,2020\r\n")
    (paper,) = read_corpus(path)
    assert (paper.paper_id, paper.abstract, paper.year) == ("7", "An abstract about frogs.", 2020)


def test_csv_field_larger_than_default_limit_is_read(tmp_path: Path) -> None:
    huge = "word " * 60_000  # 300 kB, over csv's default 128 kB field limit
    path = tmp_path / "big.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["abstract"], [huge]])
    (paper,) = read_corpus(path)
    assert paper.abstract == huge.strip()


def test_json_array_reader_gives_each_record_its_line() -> None:
    papers = read_corpus(DATA / "abstracts.json")
    assert [p.paper_id for p in papers[:2]] == ["90001", "90002"]  # an int id becomes a string
    assert [p.source for p in papers] == ["abstracts.json:2", "abstracts.json:12", "abstracts.json:18"]
    assert papers[2].paper_id == paper_id_for(papers[2].abstract)
    assert papers[1].title_derived and papers[1].title == "Greedy decoding of small language models"


def test_json_file_holding_json_lines_or_one_object_is_read(tmp_path: Path) -> None:
    lines = write(tmp_path / "lines.json", '{"abstract": "One."}\n{"abstract": "Two."}\n')
    assert [p.abstract for p in read_corpus(lines)] == ["One.", "Two."]
    single = write(tmp_path / "one.json", '{\n  "id": "x",\n  "abstract": "Only one."\n}\n')
    assert [p.paper_id for p in read_corpus(single)] == ["x"]


def test_beir_corpus_is_detected_by_keys() -> None:
    papers = read_corpus(DATA / "beir_corpus.jsonl.gz")
    assert [p.paper_id for p in papers] == ["4983", "5836", "7912"]
    assert papers[0].title.startswith("Microstructural development") and not papers[0].title_derived
    assert papers[1].title_derived and papers[1].title == "Vitamin D supplementation"
    assert papers[1].metadata == {"pmid": "30415629", "journal": "N Engl J Med"}  # BEIR metadata merged
    assert papers[2].source == "beir_corpus.jsonl.gz:3"


def test_shared_scifact_corpus_reads(tmp_path: Path) -> None:
    papers = read_corpus(shared_data("scifact/corpus.jsonl.gz"))
    assert len(papers) == 5183 and all(not p.title_derived for p in papers)


def test_jsonl_with_bom_crlf_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"abstract": "A."}\r\n\r\n{"abstract": "B.", "year": 2001}\r\n')
    papers = read_corpus(path)
    assert [(p.abstract, p.source) for p in papers] == [("A.", "c.jsonl:1"), ("B.", "c.jsonl:3")]


def test_directory_reads_supported_files_sorted_and_skips_others(tmp_path: Path) -> None:
    write(tmp_path / "b.jsonl", '{"id": "b", "abstract": "Bee."}\n')
    write(tmp_path / "a.csv", "id,abstract\na,Ant.\n")
    write(tmp_path / "README.md", "not a corpus")
    write(tmp_path / ".hidden.jsonl", "garbage")
    result = load_corpora([tmp_path])
    assert [p.paper_id for p in result.papers] == ["a", "b"]
    assert [f.name for f in result.files] == ["a.csv", "b.jsonl"]
    assert len(result.warnings) == 1 and "README.md" in result.warnings[0]
    assert read_corpus(tmp_path) == result.papers


def test_directory_without_corpus_files_is_an_error(tmp_path: Path) -> None:
    write(tmp_path / "notes.md", "x")
    with pytest.raises(IngestError, match="no corpus files"):
        read_corpus(tmp_path)


def test_bundled_corpus_is_the_seed_corpus() -> None:
    path = bundled_corpus()
    assert path.is_file() and path.name == "neurips2026_abstracts.txt"
    assert len(read_corpus(path)) == 19


def test_bundled_corpus_is_a_verbatim_copy_of_the_shared_seed() -> None:
    assert bundled_corpus().read_bytes() == shared_data("neurips2026_abstracts.txt").read_bytes()


# ------------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("name", ["nope.jsonl", "no_such_dir"])
def test_missing_file_is_named(tmp_path: Path, name: str) -> None:
    raises_ingest(tmp_path / name, "not found")


@pytest.mark.parametrize("name", ["e.jsonl", "e.json", "e.csv", "e.txt"])
def test_empty_file_has_no_records(tmp_path: Path, name: str) -> None:
    raises_ingest(write(tmp_path / name, ""), "no records")


@pytest.mark.parametrize(("name", "text"), [("w.jsonl", "\n  \n"), ("w.json", " [ ] "), ("t.txt", "Only A Title\n\n")])
def test_file_without_records_is_an_error(tmp_path: Path, name: str, text: str) -> None:
    raises_ingest(write(tmp_path / name, text), "no records")


def test_invalid_json_names_line_3(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.jsonl", '{"abstract": "A."}\n{"abstract": "B."}\n{"abstract": "C.",}\n')
    error = raises_ingest(path, r"line 3\b", "invalid JSON")
    assert isinstance(error.__cause__, json.JSONDecodeError)


def test_invalid_json_array_names_line(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.json", '[\n  {"abstract": "A."},\n  {"abstract": }\n]\n')
    raises_ingest(path, r"line 3\b", "invalid JSON", r"record \[1\]")


def test_unclosed_json_array_is_an_error(tmp_path: Path) -> None:
    raises_ingest(write(tmp_path / "bad.json", '[{"abstract": "A."}\n'), "invalid JSON")


def test_non_utf8_bytes_name_line_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"abstract": "A."}\n{"abstract": "B."}\n{"abstract": "caf\xe9"}\n')
    error = raises_ingest(path, r"line 3\b", "UTF-8", r"offset 55\b")
    assert isinstance(error.__cause__, UnicodeDecodeError)


@pytest.mark.parametrize("name", ["latin1.csv", "latin1.txt", "latin1.json"])
def test_non_utf8_bytes_name_the_line_in_every_format(tmp_path: Path, name: str) -> None:
    body = {
        "latin1.csv": b"abstract\nfine.\nna\xefve.\n",
        "latin1.txt": b"Title\n\nfine.\n\nna\xefve.\n",
        "latin1.json": b'[{"abstract": "fine."},\n {"abstract": "na\xefve."}]',
    }[name]
    path = tmp_path / name
    path.write_bytes(body)
    raises_ingest(path, r"line (3|5|2)\b", "UTF-8")


def test_record_without_abstract_names_line(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", '{"abstract": "A."}\n{"title": "No abstract", "year": 2020}\n')
    raises_ingest(path, r"line 2\b", "without 'abstract'")


def test_beir_record_without_text_names_line(tmp_path: Path) -> None:
    raises_ingest(write(tmp_path / "b.jsonl", '{"_id": "1", "title": "T"}\n'), r"line 1\b", "without 'text'")


@pytest.mark.parametrize("abstract", ['""', '"   \\n "'])
def test_empty_abstract_names_line(tmp_path: Path, abstract: str) -> None:
    path = write(tmp_path / "e.jsonl", '{"abstract": "A."}\n\n{"abstract": ' + abstract + "}\n")
    raises_ingest(path, r"line 3\b", "'abstract' is empty")


def test_empty_abstract_in_csv_names_line(tmp_path: Path) -> None:
    # an empty cell counts as a missing abstract
    raises_ingest(write(tmp_path / "e.csv", "id,abstract\n1,Fine.\n2,\n"), r"line 3\b", "abstract")


def test_record_that_is_not_an_object_names_line(tmp_path: Path) -> None:
    raises_ingest(write(tmp_path / "l.jsonl", '{"abstract": "A."}\n["a", "list"]\n'), r"line 2\b", "an array")


def test_json_array_element_that_is_not_an_object_names_index(tmp_path: Path) -> None:
    raises_ingest(
        write(tmp_path / "l.json", '[{"abstract": "A."},\n "text"]'), r"record \[1\]", r"line 2\b", "a string"
    )


def test_unsupported_extension(tmp_path: Path) -> None:
    raises_ingest(write(tmp_path / "paper.pdf", "%PDF"), "unsupported", r"\.jsonl")


def test_csv_without_abstract_column(tmp_path: Path) -> None:
    raises_ingest(write(tmp_path / "c.csv", "id,title,text\n1,T,body\n"), r"line 1\b", "no 'abstract' column")


def test_csv_row_with_too_many_fields_names_line(tmp_path: Path) -> None:
    raises_ingest(write(tmp_path / "c.csv", "id,abstract\n1,Fine.\n2,Has, a comma\n"), r"line 3\b", "3 fields")


@pytest.mark.parametrize(
    ("body", "line"), [('id,abstract\n1,Fine.\n2,"a"b\n', 3), ('id,abstract\n1,Fine.\n2,"open\nquote\n', 3)]
)
def test_malformed_csv_names_line(tmp_path: Path, body: str, line: int) -> None:
    error = raises_ingest(write(tmp_path / "c.csv", body), rf"line {line}\b", "malformed CSV")
    assert isinstance(error.__cause__, csv.Error)


@pytest.mark.parametrize("year", ['"2020a"', "20.5", '"MMXX"', "[2020]", "true"])
def test_year_that_is_not_an_integer_names_line(tmp_path: Path, year: str) -> None:
    path = write(tmp_path / "y.jsonl", '{"abstract": "A.", "year": 2020}\n{"abstract": "B.", "year": ' + year + "}\n")
    raises_ingest(path, r"line 2\b", "'year' must be an integer")


def test_year_that_is_not_an_integer_in_csv_names_line(tmp_path: Path) -> None:
    raises_ingest(write(tmp_path / "y.csv", "abstract,year\nA.,2020\nB.,spring\n"), r"line 3\b", "'year'")


def test_corrupt_gzip_is_an_ingest_error(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl.gz"
    path.write_bytes(b"this is not gzip data")
    error = raises_ingest(path, "cannot read")
    assert isinstance(error.__cause__, gzip.BadGzipFile)


def test_truncated_gzip_is_an_ingest_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"abstract": "A."}\n' * 500)[:-20])
    raises_ingest(path, "cannot read")


def test_bad_file_among_good_ones_returns_nothing(tmp_path: Path) -> None:
    bad = write(tmp_path / "z.jsonl", '{"abstract": "A."}\n{"abstract": ""}\n')
    with pytest.raises(IngestError, match="z.jsonl, line 2"):
        read_corpora([DATA / "abstracts.jsonl", bad])


# ------------------------------------------------------------------------------------------ ids and dedupe


def test_same_abstract_in_txt_and_jsonl_gets_the_same_id(tmp_path: Path) -> None:
    abstract = "We study *frogs* in ponds.\nFrogs like ponds."
    txt = write(tmp_path / "a.txt", f"Collection\n\n{abstract}\n")
    jsonl = write(tmp_path / "b.jsonl", json.dumps({"abstract": "We study frogs   in ponds. Frogs like ponds."}) + "\n")
    (from_txt,) = read_corpus(txt)
    (from_jsonl,) = read_corpus(jsonl)
    assert from_txt.paper_id == from_jsonl.paper_id == paper_id_for(abstract)
    assert re.fullmatch(r"h-[0-9a-f]{16}", from_txt.paper_id)
    result = load_corpora([txt, jsonl])
    assert len(result.papers) == 1 and result.duplicates == 1 and result.conflicts == 0


def test_content_id_ignores_case_and_whitespace() -> None:
    assert paper_id_for("Graphene  conducts\nheat.") == paper_id_for("graphene conducts heat.")
    assert paper_id_for("Graphene conducts heat.") != paper_id_for("Graphene conducts heat well.")


def test_given_id_wins_over_content_hash(tmp_path: Path) -> None:
    path = write(tmp_path / "i.jsonl", '{"id": " 2401.5 ", "abstract": "A."}\n{"paper_id": "p-2", "abstract": "B."}\n')
    assert [p.paper_id for p in read_corpus(path)] == ["2401.5", "p-2"]


def test_duplicate_id_with_same_abstract_is_dropped_silently(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", '{"id": "1", "abstract": "Same."}\n{"id": "1", "abstract": "Same. "}\n')
    result = load_corpora([path])
    assert [p.source for p in result.papers] == ["d.jsonl:1"]
    assert (result.duplicates, result.conflicts, result.warnings) == (1, 0, [])


def test_duplicate_id_with_other_abstract_keeps_first_and_warns(tmp_path: Path) -> None:
    first = write(tmp_path / "a.jsonl", '{"id": "1", "abstract": "First."}\n')
    second = write(tmp_path / "b.csv", "id,abstract\n1,Second.\n")
    result = load_corpora([first, second])
    assert [p.abstract for p in result.papers] == ["First."]
    assert result.conflicts == 1 and result.duplicates == 0
    assert result.warnings == [
        "b.csv:2: paper_id '1' was already read from a.jsonl:1 with a different abstract; kept the first one"
    ]
    assert read_corpora([first, second]) == result.papers


def test_seed_ids_are_stable(seed_papers: list[Paper]) -> None:
    wildbox = next(p for p in seed_papers if p.title == "WildBox")
    assert wildbox.paper_id == "h-565a8224458477db"  # changing this re-indexes every user's corpus


# ------------------------------------------------------------------------------------------ normalisation


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("choose $k$ items", "choose k items"),
        ("$\\alpha$-divergence", "alpha-divergence"),
        ("an \\emph{x}, a \\textbf{y} and a \\textit{z}", "an x, a y and a z"),
        ("an *x*, a **y** and a _z_", "an x, a y and a z"),
        ("input--output", "input-output"),
        ("  many\n\n spaces\t here ", "many spaces here"),
        ("20$\\times$ compression, 8.68$\\pm$0.47 AP", "20× compression, 8.68±0.47 AP"),
        ("$O(\\operatorname{poly}(D))$ time", "O(poly(D)) time"),
        ("a $\\sqrt{k/c(v)}$ fraction", "a sqrt k/c(v) fraction"),
        ("Top-\\(K\\) routing", "Top-K routing"),
        ("84\\% of ``no-backward'' cases", '84% of "no-backward" cases'),
        ("[Project page](https://x.org/a_b_c)", "Project page (https://x.org/a_b_c)"),
        ("snake_case_name and 2 * 3 * 4", "snake_case_name and 2 * 3 * 4"),
        ("costs $5 and $10", "costs $5 and $10"),
        ("$x_i + y_j$", "x_i + y_j"),
        ("**Discrete Latent Reasoning (DLR)**", "Discrete Latent Reasoning (DLR)"),
    ],
)
def test_normalise_text_strips_markup(raw: str, expected: str) -> None:
    assert normalise_text(raw) == expected


def test_normalise_text_is_idempotent_on_the_seed(seed_papers: list[Paper]) -> None:
    for paper in seed_papers:
        once = normalise_text(paper.abstract)
        assert normalise_text(once) == once
        assert "$" not in once and "\\emph" not in once and "**" not in once


# ------------------------------------------------------------------------------------------ titles


def test_seed_titles_are_short_unique_and_plain(seed_papers: list[Paper]) -> None:
    titles = [p.title for p in seed_papers]
    assert all(0 < len(t) <= 80 for t in titles)
    assert len(set(titles)) == 19
    assert not any(c in t for t in titles for c in "$*\\_")


def test_seed_titles_name_the_contribution(seed_papers: list[Paper]) -> None:
    titles = [p.title for p in seed_papers]
    assert {
        "WildBox",
        "MaskGen",
        "CoCHI",
        "WiREBench",
        "Who&When Pro",
        "VAE-LFA",
        "Discrete Latent Reasoning (DLR)",
        "Selective Social Learning (SSL)",
        "Source-Instance Fidelity (SIF)",
        "Independent Risk Minimization (IndRM)",
        "Symmetry Lottery",
    } <= set(titles)


def test_seed_titles_without_a_name_are_phrases_never_keyword_lists(seed_papers: list[Paper]) -> None:
    """Unseen-question review found "In-context learning (ICL), distribution shift, forward pass" in list
    answers: a title names what the paper does, never a comma list of key terms."""
    from rag.evaluation.bench.titles import is_keyword_list

    titles = [p.title for p in seed_papers]
    assert "Pass@k policy gradients can conflict with pass@1 gradients" in titles
    assert "Formalizing cell-free DNA (cfDNA) classification" in titles  # the acronym spelled out, as titles do
    assert "Two architectural mechanisms for in-context learning (ICL)" in titles  # the field the abstract opens with
    assert "Deriving the infinite-width limits of Mixture-of-Experts (MoE) architectures" in titles
    assert "Cognitive control should be a first-class computational object" in titles
    assert [t for t in titles if is_keyword_list(t) or "," in t] == []
    assert all(len(t) <= 80 and not t.endswith("…") for t in titles)
    assert not [t for t in titles if re.search(r"(?i)\b(we|our|this paper|aims?|argue)\b", t)]


def test_key_phrases_count_an_acronym_as_uses_of_what_it_stands_for() -> None:
    """The phrase an abstract defines an acronym for is one key phrase with it, and each use of the acronym
    counts for it: "Single-cell RNA (scRNA)" (mixed case) and "graph neural networks (GNNs)"."""
    from rag.corpus.titles import key_phrases

    rna = (
        "Single-cell RNA (scRNA) sequencing measures tissue states. Tissue states drift in tissue samples. "
        "Our scRNA model explains scRNA dropout, and scRNA noise shapes tissue states."
    )
    assert ", ".join(key_phrases(rna)).count("Single-cell RNA (scRNA)") == 1
    gnn = (
        "Graph neural networks (GNNs) overfit on small molecules. We regularise GNNs with molecular motifs. "
        "Motif dropout helps GNNs on molecules, and GNNs trained so transfer to larger molecules."
    )
    phrases = ", ".join(key_phrases(gnn))
    assert "Graph neural networks (GNNs)" in phrases and phrases.count("GNN") == 1


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        ("We introduce WildBox, a dataset of drone video.", "WildBox"),
        ("In this paper we present MaskGen, a simple approach.", "MaskGen"),
        ("We propose CoCHI (Class-oriented Causal Head Intervention), a framework.", "CoCHI"),
        ("We propose a simple yet effective method called FlashRoute to plan paths.", "FlashRoute"),
        ("Our algorithm, dubbed \u201cJiffy\u201d, compresses scans.", "Jiffy"),
        ("Graphs are hard. We build a new library named GraphKit for them.", "GraphKit"),
        ("This paper introduces a new benchmark, OceanQA, for marine questions.", "OceanQA"),
        ("We introduce a benchmark for failure attribution (WhoBench), with 12k traces.", "WhoBench"),
        ("Tables are common. TabSketch, a novel sketching method, compresses them.", "TabSketch"),
        ("We propose \\textbf{Graph Echo Networks} (GEN), the first echo model.", "Graph Echo Networks (GEN)"),
        ("Results support what we coin the *Lazy Learner Effect*: models idle.", "Lazy Learner Effect"),
    ],
)
def test_derive_title_finds_the_named_contribution(abstract: str, title: str) -> None:
    assert derive_title(abstract) == title


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        (
            "We propose an automated approach using Large Language Models (LLMs) to write model cards.",
            # LLMs is no contribution of this paper: the phrase of what it proposes is the title
            "An automated approach using Large Language Models (LLMs) to write model cards",
        ),
        (
            "We present a convolutional neural network (CNN) for handholds.",
            "We present a convolutional neural network (CNN) for handholds",
        ),
        (
            "Another phenomenon, called Crowding, refers to a loss in confidence.",
            "Another phenomenon, called Crowding, refers to a loss in confidence",
        ),
        (
            "This paper presents 1) a Kalman filter and 2) a controller.",
            "This paper presents 1) a Kalman filter and 2) a controller",
        ),
        (
            "We use multi-agent reinforcement learning (MARL) to study it.",
            "We use multi-agent reinforcement learning (MARL) to study it",
        ),
        ("We call for future MARL environments to be sparse.", "We call for future MARL environments to be sparse"),
        (
            "Prompts that we term \\emph{negatively interfering} hurt pass@1.",
            "Prompts that we term negatively interfering hurt pass@1",
        ),
    ],
)
def test_derive_title_ignores_names_of_existing_things(abstract: str, title: str) -> None:
    assert derive_title(abstract) == title


def test_derive_title_without_a_name_is_one_phrase_not_a_cut_clause() -> None:
    abstract = (
        "Large-scale pretraining of multimodal foundation models on noisy web data remains surprisingly "
        "sensitive to the ordering of training examples. We show why."
    )
    assert derive_title(abstract) == "Large-scale pretraining of multimodal foundation models on noisy web data"


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        (  # what it proposes, cut at the clause's end and then, to fit 80 characters, before "in"
            "We present a convolutional neural network (CNN) for detecting handholds in climbing gym photos, "
            "which runs on phones. The convolutional neural network runs on phones.",
            "A convolutional neural network (CNN) for detecting handholds",
        ),
        (  # what it studied, the empty head "the problem of" dropped
            "Labels are noisy. In this work, we address the problem of learning robust object detectors with "
            "inaccurate bounding boxes. Detectors suffer.",
            "Learning robust object detectors with inaccurate bounding boxes",
        ),
        (  # what it found, a statement
            "Vaccines are common. Here we show that acellular pertussis vaccines fail to prevent infection in "
            "baboons, although they protect against disease.",
            "Acellular pertussis vaccines fail to prevent infection in baboons",
        ),
        (  # no contribution sentence: the subject of the first sentence
            "The role of IL-10 in the pathogenesis of autoimmune diabetes was assessed in the NOD mouse. "
            "IL-10 prevented the disease.",
            "The role of IL-10 in the pathogenesis of autoimmune diabetes",
        ),
        (  # what it did, as a gerund; "this" needs the abstract, so the phrase stops before it
            "Cell-free DNA is sparse. We formalize cfDNA classification as recovering a shift on a simplex "
            "under this regime.",
            "Formalizing cfDNA classification as recovering a shift on a simplex",
        ),
    ],
)
def test_a_title_without_a_name_is_the_phrase_of_the_contribution(abstract: str, title: str) -> None:
    assert derive_title(abstract) == title


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        (  # a parenthesis inside a word is part of it
            "Flavanols are common. We studied the one-electron oxidation of (-)-epicatechin by MPO in plasma. "
            "It is fast.",
            "The one-electron oxidation of (-)-epicatechin by MPO in plasma",
        ),
        (  # an acronym the phrase already spells is not repeated
            "Yeast meiosis is regulated. We determined the sequence of the RIM1 gene product (RIM1). RIM1 matters.",
            "The sequence of the RIM1 gene product",
        ),
    ],
)
def test_a_phrase_title_keeps_its_words_whole_and_says_them_once(abstract: str, title: str) -> None:
    assert derive_title(abstract) == title


def test_key_phrases_join_acronyms_keep_names_and_drop_verbs() -> None:
    from rag.corpus.titles import key_phrase_title, key_phrases

    cnn = (
        "We present a convolutional neural network (CNN) for detecting handholds in climbing gym photos. "
        "The convolutional neural network runs on phones."
    )
    assert key_phrases(cnn)[:2] == ["convolutional neural network (CNN)", "climbing gym photos"]
    # "removes" before a number is a verb, not the end of a noun phrase
    search = "Contrastive search removes 95% of loops in greedy decoding of small language models on long outputs."
    assert key_phrases(search) == ["Contrastive search", "greedy decoding", "long outputs"]
    # one phrase with its complement, never a list
    statins = "Statins are common drugs. The pleiotropic effects of statins are many. Pleiotropic effects vary."
    assert key_phrase_title(statins) == "Pleiotropic effects of statins"


def test_derive_title_skips_lead_in_and_strips_markup() -> None:
    assert derive_title("In this paper, we study $k$-means on *streams*. More text.") == "We study k-means on streams"


def test_derive_title_is_never_empty() -> None:
    assert derive_title("") == "Untitled abstract"


def test_derived_titles_of_real_abstracts_are_short_and_never_a_clause() -> None:
    """The first 300 ml_abstracts records (shared data; skipped where absent): every derived title is at most
    80 characters, not cut with "…", and no clause ("we ...", "this paper ..."). How many a reader would
    accept is measured by `python -m rag.evaluation.bench titles`."""
    import gzip
    import itertools
    import json

    from tests.conftest import shared_data

    with gzip.open(shared_data("ml_abstracts.jsonl.gz"), "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in itertools.islice(f, 300)]
    titles = [derive_title(r["abstract"]) for r in records if len(r.get("abstract") or "") > 80]
    assert len(titles) > 250
    assert [t for t in titles if len(t) > 80 or t.endswith("…")] == []
    assert [t for t in titles if re.search(r"(?i)\b(we|our|this (paper|work))\b", t)] == []

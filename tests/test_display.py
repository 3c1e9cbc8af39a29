"""Readable text: the seed abstracts' LaTeX and Markdown shown as Unicode or escaped HTML, spans of the raw
abstract still highlighting the right characters."""

from __future__ import annotations

import re

import pytest

from rag import Assistant
from rag.corpus import read_corpus
from rag.corpus.display import format_display, format_display_html, parse_display, render_math


@pytest.mark.parametrize(
    ("raw", "readable"),
    [
        (r"8.68$\pm$0.47 AP-BEV@0.50", "8.68±0.47 AP-BEV@0.50"),
        (r"over 99\% in zero-shot", "over 99% in zero-shot"),
        (r"At the \emph{signal level}, interference", "At the signal level, interference"),
        (
            r"we propose **Discrete Latent Reasoning (DLR)**, the first",
            "we propose Discrete Latent Reasoning (DLR), the first",
        ),
        (r"achieving **20$\times$ compression** at", "achieving 20× compression at"),
        (r"winning the *Symmetry Lottery*: the", "winning the Symmetry Lottery: the"),
        (r"in time $O(\operatorname{poly}(D))$, thereby", "in time O(poly(D)), thereby"),
        (r"takes $\exp[O(D)]$ time", "takes exp[O(D)] time"),
        (r"with $k \gtrsim c(v)$.", "with k ≳ c(v)."),
        (r"recovers at most a $\sqrt{k/c(v)}$ fraction", "recovers at most a √(k/c(v)) fraction"),
        (r"parent set, $\mathrm{PA}(Y)$, is", "parent set, PA(Y), is"),
        (r"Top-$K$ routing; pass@$k$", "Top-K routing; pass@k"),
        (r"$\alpha_{t+1} \leq \beta^2$ and $\mathcal{O}(n^{-1/2})$", "αₜ₊₁ ≤ β² and O(n^(-1/2))"),
        (r"$\frac{1}{n}$ of $x_{ij}$ costs \$5", "1/n of xᵢⱼ costs $5"),
        ("snake_case_names and 2*3*4 stay", "snake_case_names and 2*3*4 stay"),
    ],
)
def test_markup_reads_as_unicode(raw: str, readable: str) -> None:
    assert format_display(raw) == readable


def test_subscript_without_unicode_form_is_bracketed() -> None:
    assert render_math(r"x_{\mathrm{best}}")[0] == "x_(best)"
    assert render_math(r"x_{\mathrm{best}}")[1] == "x<sub>best</sub>"


def test_seed_abstracts_have_no_markup_left_when_rendered() -> None:
    papers = list(read_corpus(Assistant.bundled_corpus()))
    rendered = [format_display(p.abstract) for p in papers]
    leftovers = [m.group(0) for text in rendered for m in re.finditer(r"\$|\\[a-zA-Z%]+|\*\*|\\emph", text)]
    assert leftovers == []
    joined = "\n".join(rendered)
    for readable in ("8.68±0.47", "99%", "signal level", "20× compression", "k ≳ c(v)", "O(poly(D))", "PA(Y)"):
        assert readable in joined


def test_pieces_cover_the_raw_text_exactly_once() -> None:
    for p in read_corpus(Assistant.bundled_corpus()):
        pieces = parse_display(p.abstract)
        assert pieces[0].start == 0 and pieces[-1].end == len(p.abstract)
        assert all(a.end == b.start for a, b in zip(pieces, pieces[1:]))


def test_highlight_of_a_raw_span_lands_on_the_rendered_sentence() -> None:
    raw = r"Baseline fails. Fine-tuning recovers 8.68$\pm$0.47 AP and 84\% recall. Code is public."
    start = raw.index("Fine-tuning")
    end = raw.index(" Code")
    out = format_display_html(raw, [(start, end)])
    assert out == (
        'Baseline fails. <mark class="rag-support">Fine-tuning recovers 8.68<span class="rag-math">±</span>0.47 AP '
        "and 84% recall.</mark> Code is public."
    )


def test_span_cutting_into_math_covers_the_whole_formula() -> None:
    raw = r"gain of 8.68$\pm$0.47 points"
    cut = raw.index(r"\pm")  # inside the $...$
    out = format_display_html(raw, [(0, cut)])
    assert out.startswith('<mark class="rag-support">gain of 8.68<span class="rag-math">±</span></mark>0.47')


def test_markup_inside_math_and_text_stays_escaped() -> None:
    raw = (
        r"A $<img src=x onerror=alert(1)>$ and $\href{javascript:alert(1)}{x}$ <script>alert(2)</script> "
        r"\emph{<b>x</b>}"
    )
    out = format_display_html(raw, [(0, len(raw))])
    assert "<img" not in out and "<script" not in out and "<b>" not in out and "href=" not in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out and "&lt;script&gt;" in out
    assert format_display(raw).count("<script>") == 1  # the terminal shows it as text


def test_text_without_markup_is_returned_unchanged() -> None:
    text = "Plain abstract, 91.2% recall - no markup."
    assert format_display(text) is text

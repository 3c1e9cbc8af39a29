"""Needless refusals of terse, lowercase and reworded questions: the gold questions rewritten mechanically.

    python -m rag.evaluation.bench variants [--show]

Every answerable question of eval/data/neurips2026_gold.jsonl, neurips2026_check.jsonl and neurips2026_cross.jsonl
(follow-ups excluded: their history is condensed by the LLM), and the two unseen questions issue 28 reports as
needlessly refused, is asked as written and in three mechanical rewrites:

* ``lowercase``: lower-cased, no question mark ("what does top-k routing do for moe specialisation");
* ``terse``: lower-cased, question words, auxiliaries and articles dropped ("many 3d bounding box annotations
  wildbox have");
* ``expanded``: every acronym an abstract defines replaced by its long form ("cfDNA" -> "Cell-free DNA",
  "MoE" -> "Mixture-of-Experts"): the question names the thing in other words than the sentence that answers
  (only the questions that hold such an acronym).

Each goes through the pipeline's own first steps with the bundled 19 NeurIPS abstracts indexed, without the LLM
(retrieval, the papers named, the kind, the relevance gate, the evidence), and is counted as

* **refused before the LLM**: the relevance gate refuses it, or (a comparison) no paper is left to compare;
* **evidence recall**: every gold supporting quote is among the sentences the model would be shown (a question
  whose answer is not shown is refused by the model: "The indexed abstracts don't answer this");
* **kind kept**: recognised as the same kind as the question as written.

The 9 unanswerable gold questions (and their lowercase and terse forms) must stay refused: their pre-LLM refusal
rate is printed too (three are off-topic and refused by the gate; the other six name a paper and are refused
by the model or verification, which this benchmark does not run). No LLM: the run takes about a minute.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rag import Assistant, Paper, get_settings
from rag.answering.paths import _papers_to_compare
from rag.answering.pipeline import run_steps
from rag.evaluation.bench.evidence import covered
from rag.evaluation.bench.suite import Output
from rag.evaluation.dataset import ComparisonCase, EvalCase, ListCase, load_gold, resolve_cases
from rag.evaluation.metrics import bootstrap_ci
from rag.types import Query

DATA = Path(__file__).resolve().parents[1] / "data"
GOLD = ("neurips2026_gold.jsonl", "neurips2026_check.jsonl", "neurips2026_cross.jsonl")
#: the two needless refusals of issue 28 (unseen questions), with the sentence that answers each
ISSUE = (
    EvalCase(
        id="issue28-topk",
        question="what does top-k routing do for MoE specialisation",
        supporting_quotes=["also acts as a symmetry breaking mechanism allowing for both feature learning"],
    ),
    EvalCase(
        id="issue28-cfdna",
        question="What dimensionless quantity separates the cancer and chronic-disease regimes for cell-free DNA "
        "classification?",
        supporting_quotes=["parameterized by one dimensionless quantity: the inverse participation ratio"],
    ),
)
NEEDS_LLM = False

_DROP = frozenset(
    "what which who whom whose where when why how does do did is are was were can could would will should has have "
    "had the a an".split()
)


def lowercase(question: str) -> str:
    return " ".join(question.lower().replace("?", " ").split())


def terse(question: str) -> str:
    """Lower-cased, without question words, auxiliaries and articles (a query typed into a search box)."""
    words = [w for w in lowercase(question).split() if w not in _DROP]
    return " ".join(words)


def acronyms(papers: list[Paper]) -> dict[str, str]:
    """Acronym -> the long form an abstract defines it by ("Cell-free DNA (cfDNA)"): the nearest preceding words
    that start with the acronym's first letter."""
    out: dict[str, str] = {}
    for p in papers:
        for m in re.finditer(r"\(([A-Za-z][\w&-]*[A-Z][\w&-]*)\)", p.abstract):
            acr = m.group(1).rstrip("s") if m.group(1).endswith("s") else m.group(1)
            before = p.abstract[: m.start()].split()[-6:]
            for k in range(1, len(before) + 1):
                first = before[-k]
                if first[:1].lower() == acr[:1].lower() and acr.lower() != first.lower():
                    out.setdefault(acr, " ".join(before[-k:]).strip(",;:"))
                    break
    return out


def expanded(question: str, table: dict[str, str]) -> str:
    out = question
    for acr, long in sorted(table.items(), key=lambda x: -len(x[0])):
        out = re.sub(rf"(?<![\w-]){re.escape(acr)}s?(?![\w-])", long, out)
    return out


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--show", action="store_true", help="List every refused variant and every evidence miss.")


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        a = Assistant.from_settings(get_settings(data_dir=Path(tmp)))
        a.ingest([Assistant.bundled_corpus()])
        papers = a.papers()
        table = acronyms(papers)
        cases = [c for name in GOLD for c in resolve_cases(load_gold(DATA / name), papers, name)]
        cases += resolve_cases(list(ISSUE), papers, "issue 28")
        rows = measure(a, cases, table)
    return report(rows, out, show=args.show)


Row = dict[str, Any]


def measure(a: Assistant, cases: list[Any], table: dict[str, str]) -> list[Row]:
    """One row per question asked: its case, variant, kind, refusal before the LLM and evidence recall."""
    pipeline = a._pipeline  # the first steps of every answer, without the LLM
    by_id = {p.paper_id: p for p in a.papers()}
    variants: dict[str, Callable[[str], str]] = {
        "original": lambda q: q,
        "lowercase": lowercase,
        "terse": terse,
        "expanded": lambda q: expanded(q, table),
    }
    rows: list[Row] = []
    for case in cases:
        if isinstance(case, EvalCase) and case.history:
            continue
        answerable = not isinstance(case, EvalCase) or case.answerable
        kind0 = None
        for name, make in variants.items():
            question = make(case.question)
            if name == "expanded" and question == case.question:
                continue
            query = Query(question=question, mode="extractive")
            prep = pipeline.prepare(query)
            kind0 = kind0 or prep.kind
            refused = prep.refuse_reason is not None or (
                prep.kind == "compare" and not run_steps(_papers_to_compare(pipeline, prep, query))
            )
            recall = None
            if isinstance(case, EvalCase) and case.answerable and case.supporting_quotes and prep.evidence:
                shown: dict[str, list[tuple[int, int]]] = {}
                for q in prep.quotes():
                    shown.setdefault(q.paper_id, []).append(q.span)
                recall = all(
                    any(covered(by_id[pid].abstract, quote, shown.get(pid, [])) for pid in case.supporting_ids)
                    for quote in case.supporting_quotes
                )
            group = (
                "unanswerable"
                if not answerable
                else "cross"
                if isinstance(case, ListCase | ComparisonCase)
                else "issue 28"
                if case.id.startswith("issue28")
                else "gold + check"
            )
            rows.append(
                {
                    "id": case.id,
                    "group": group,
                    "variant": name,
                    "question": question,
                    "kind": prep.kind,
                    "kind_kept": prep.kind == kind0,
                    "refused": refused,
                    "recall": recall,
                }
            )
    return rows


def _rate(values: list[bool]) -> str:
    if not values:
        return "–"
    lo, hi = bootstrap_ci([float(v) for v in values])
    return f"{sum(values) / len(values):.3f} [{lo:.2f}, {hi:.2f}] (n {len(values)})"


def report(rows: list[Row], out: Output, *, show: bool = False) -> dict[str, Any]:
    figures: dict[str, Any] = {}
    lines = [
        "| questions | variant | refused before the LLM | evidence recall | kind kept |",
        "|---|---|---|---|---|",
    ]
    for group in ("gold + check", "cross", "issue 28", "unanswerable"):
        for variant in ("original", "lowercase", "terse", "expanded"):
            sub = [r for r in rows if r["group"] == group and r["variant"] == variant]
            if not sub:
                continue
            refused = [r["refused"] for r in sub]
            recall = [r["recall"] for r in sub if r["recall"] is not None]
            kept = [r["kind_kept"] for r in sub]
            lines.append(f"| {group} | {variant} | {_rate(refused)} | {_rate(recall)} | {_rate(kept)} |")
            figures[f"{group}/{variant}"] = {
                "questions": len(sub),
                "refused_before_llm": sum(refused) / len(sub),
                "evidence_recall": sum(recall) / len(recall) if recall else None,
                "kind_kept": sum(kept) / len(sub),
                "refused": [r["id"] for r in sub if r["refused"]],
                "evidence_missed": [r["id"] for r in sub if r["recall"] is False],
            }
    if show:
        lines.append("")
        for r in rows:
            if (r["group"] != "unanswerable" and r["refused"]) or r["recall"] is False or not r["kind_kept"]:
                what = "REFUSED" if r["refused"] else "MISSED" if r["recall"] is False else f"KIND {r['kind']}"
                lines.append(f"- {what} {r['id']} ({r['variant']}): {r['question']}")
    out.table("variants.md", "\n".join(lines))
    return figures

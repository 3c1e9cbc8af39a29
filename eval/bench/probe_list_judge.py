"""Probe (not in the product): which list-judge policy gives what precision and recall on the NeurIPS cross lists?

    PYTHONPATH=. .venv/bin/python eval/bench/probe_list_judge.py [--out FILE.json] [--replay FILE.json]

For every list question of eval/data/neurips2026_cross.jsonl and every bundled paper, the list judge's P(yes) on
its short view (title and ``list_sentence_tokens`` of best sentences) and on its recheck view
(``list_recheck_tokens``), with the embedded LLM (~8 min idle; ``--replay`` reads a saved ``--out`` instead).
Then the macro precision / recall each policy would give: ``list_min_yes`` x ``list_recheck_from`` (a paper
judged in [recheck_from, min_yes) is judged again on the recheck view), with the product's relative floor. At the
product's settings the replay reproduces ``rag eval``'s list precision and recall.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from rag import Assistant, get_settings
from rag.answering.kinds import list_predicate
from rag.answering.paths import _judge, _list_candidates
from rag.evaluation.dataset import ListCase, load_gold, resolve_cases
from rag.evaluation.metrics import list_scores

GOLD = Path(__file__).resolve().parents[1] / "data" / "neurips2026_cross.jsonl"


def judge_all(system: str | None = None, template: str | None = None) -> list[dict[str, Any]]:
    """P(yes) of each bundled paper for each list question, on both views; ``system`` and ``template`` replace
    the product's judge prompts (to compare wordings on the same rows)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        a = Assistant.from_settings(get_settings(data_dir=Path(tmp)))
        a.ingest([Assistant.bundled_corpus()])
        cases = [c for c in resolve_cases(load_gold(GOLD), a.papers()) if isinstance(c, ListCase)]
        p = a._pipeline
        p.judge_system = system or p.judge_system
        p.judge_template = template or p.judge_template
        recheck = p.settings.answer.list_recheck_tokens
        for c in cases:
            hits = p.retrieve(c.question, len(a.papers()), None, None)
            predicate = list_predicate(c.question)
            longer = {x.hit.paper_id: x for x in _list_candidates(p, c.question, hits, budget=recheck)}
            for x in _list_candidates(p, c.question, hits):
                p1 = _judge(p, predicate, x.text)[0]
                y = longer[x.hit.paper_id]
                p2 = _judge(p, predicate, y.text)[0] if y.text != x.text else p1
                label = "yes" if x.hit.paper_id in c.expected_ids else "no"
                label = "border" if x.hit.paper_id in c.borderline_ids else label
                rows.append(
                    {"case": c.id, "paper": x.hit.paper_id, "prescore": x.prescore, "p1": p1, "p2": p2, "label": label}
                )
    return rows


def policy(rows: list[dict[str, Any]], min_yes: float, recheck_from: float, floor: float) -> tuple[float, float]:
    by_case: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_case[r["case"]].append(r)
    precisions, recalls = [], []
    for rs in by_case.values():
        top = max(r["prescore"] for r in rs)
        got = []
        for r in rs:
            if r["prescore"] < floor * top:
                continue
            p = r["p2"] if recheck_from <= r["p1"] < min_yes else r["p1"]
            if p >= min_yes:
                got.append(r["paper"])
        expected = [r["paper"] for r in rs if r["label"] == "yes"]
        border = [r["paper"] for r in rs if r["label"] == "border"]
        precision, recall, _f1 = list_scores(got, expected, border)
        if precision is not None:
            precisions.append(precision)
        recalls.append(recall)
    return sum(precisions) / len(precisions), sum(recalls) / len(recalls)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--replay", type=Path)
    ap.add_argument("--system", type=Path, help="A judge system prompt to try instead of prompts/judge_system.md.")
    ap.add_argument("--template", type=Path, help="A judge prompt to try instead of prompts/judge.md.")
    args = ap.parse_args(argv)
    system = args.system.read_text().strip() if args.system else None
    template = args.template.read_text() if args.template else None
    rows = json.loads(args.replay.read_text()) if args.replay else judge_all(system, template)
    if args.out:
        args.out.write_text(json.dumps(rows))
    floor = get_settings().answer.list_relative_floor
    print("| list_min_yes | list_recheck_from | precision | recall |\n|---|---|---|---|")
    for min_yes in (0.5, 0.6, 0.65, 0.7, 0.75, 0.8):
        for recheck_from in (0.0, 0.3, 0.45):
            precision, recall = policy(rows, min_yes, recheck_from, floor)
            print(f"| {min_yes} | {recheck_from} | {precision:.3f} | {recall:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

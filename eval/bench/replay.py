"""Replay stored model answers through verification: which sentences does the current code keep?

    python -m rag.evaluation.bench replay REPORT.json [REPORT.json ...]   # verdicts.json in the run's folder

A `rag eval` report keeps each answer's sentences as the model wrote them (text, and whether
verification kept them). Each answer's sentences are given again, joined, as the model's answer to its
question (a fake chat model returns them: retrieval, evidence and verification are the product's own,
over the bundled abstracts), and each sentence's new verdict is printed beside the stored one. Run it
on two commits (PYTHONPATH) and compare the verdicts.json of the two runs to see which verdicts a change moves.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from rag import Assistant, get_settings
from rag.evaluation.bench.suite import Output

NEEDS_LLM = False


def _norm(text: str) -> str:
    return " ".join(text.split()).rstrip(".")


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("reports", nargs="+", type=Path)


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    verdicts = []
    with tempfile.TemporaryDirectory() as tmp:
        a = Assistant.from_settings(get_settings(data_dir=tmp))
        a.ingest([a.bundled_corpus()])
        for report in args.reports:
            for eval_run in json.loads(report.read_text())["runs"]:
                for row in eval_run["rows"]:
                    sentences = row.get("sentences") or []
                    if not sentences:
                        continue
                    raw = " ".join(s["text"].rstrip() for s in sentences)
                    writer = Assistant(
                        a.settings, embeddings=a.embeddings, chat_model=FakeListChatModel(responses=[raw])
                    )
                    answer = writer.ask(row.get("standalone_question") or row["question"], kind="lookup")
                    kept = {_norm(s.text) for s in answer.sentences if s.supported and s.citations}
                    for s in sentences:
                        now = not answer.refused and _norm(s["text"]) in kept
                        verdicts.append(
                            {
                                "report": str(report),
                                "case": row["case_id"],
                                "text": s["text"],
                                "stored": bool(s["supported"]),
                                "replayed": now,
                            }
                        )
    same = sum(r["stored"] == r["replayed"] for r in verdicts)
    print(
        f"sentences: {len(verdicts)}; stored supported: {sum(r['stored'] for r in verdicts)}; "
        f"replayed supported: {sum(r['replayed'] for r in verdicts)}; same verdict: {same}"
    )
    for r in verdicts:
        if r["stored"] != r["replayed"]:
            print(f"  {r['case']}: stored {r['stored']} -> {r['replayed']}: {r['text'][:150]}")
    out.file("verdicts.json").write_text(json.dumps(verdicts, indent=1))
    return {
        "sentences": len(verdicts),
        "stored_supported": sum(r["stored"] for r in verdicts),
        "replayed_supported": sum(r["replayed"] for r in verdicts),
        "same_verdict": same,
    }

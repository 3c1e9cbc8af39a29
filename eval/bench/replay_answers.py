"""Replay stored model answers through verification: which sentences does the current code keep?

    .venv/bin/python eval/bench/replay_answers.py REPORT.json [REPORT.json ...] [--out verdicts.json]

A `rag eval` report keeps each answer's sentences as the model wrote them (text, and whether
verification kept them). Each answer's sentences are given again, joined, as the model's answer to its
question (a fake chat model returns them: retrieval, evidence and verification are the product's own,
over the bundled abstracts), and each sentence's new verdict is printed beside the stored one. Run it
on two commits (PYTHONPATH) and compare the --out files to see which verdicts a change moves.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from langchain_core.language_models.fake_chat_models import FakeListChatModel

from rag import Assistant, get_settings


def _norm(text: str) -> str:
    return " ".join(text.split()).rstrip(".")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, help="Write every sentence's stored and replayed verdict here (JSON).")
    args = ap.parse_args(argv)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        a = Assistant.from_settings(get_settings(data_dir=tmp))
        a.ingest([a.bundled_corpus()])
        for report in args.reports:
            for run in json.loads(report.read_text())["runs"]:
                for row in run["rows"]:
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
                        out.append(
                            {
                                "report": str(report),
                                "case": row["case_id"],
                                "text": s["text"],
                                "stored": bool(s["supported"]),
                                "replayed": now,
                            }
                        )
    same = sum(r["stored"] == r["replayed"] for r in out)
    print(
        f"sentences: {len(out)}; stored supported: {sum(r['stored'] for r in out)}; "
        f"replayed supported: {sum(r['replayed'] for r in out)}; same verdict: {same}"
    )
    for r in out:
        if r["stored"] != r["replayed"]:
            print(f"  {r['case']}: stored {r['stored']} -> {r['replayed']}: {r['text'][:150]}")
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

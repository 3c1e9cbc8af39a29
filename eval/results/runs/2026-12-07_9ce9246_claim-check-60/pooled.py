"""The claim check pooled over two samples of SciFact dev claims (each claim once), reported by the benchmark's own
report (its latency line is meaningless here: the rows come from two runs), plus the gold abstract judged per label.
    python pooled.py ../2026-12-07_9fb1090_named-train/2026-12-07_9fb1090_claim-check.json claim-check.json"""
import argparse, json, sys, tempfile
from pathlib import Path
from rag.evaluation.bench.claim_check import _rate, report
from rag.evaluation.bench.suite import Output

rows: dict[int, dict] = {}
for path in sys.argv[1:]:
    for r in json.load(open(path))["figures"]["rows"]:
        rows.setdefault(r["id"], r)
print(f"{len(rows)} claims")
report(list(rows.values()), Output(Path(tempfile.mkdtemp())), argparse.Namespace(fresh=False))
for lab in ("SUPPORT", "CONTRADICT"):
    rs = [r for r in rows.values() if r["label"] == lab]
    print(f"{lab}: gold among the judged papers {_rate(sum(r['gold judged'] for r in rs), len(rs))}")

"""The claim check pooled over two samples of SciFact dev claims (each claim once).
    python pooled.py ../2026-12-07_9fb1090_named-train/2026-12-07_9fb1090_claim-check.json claim-check.json"""
import json, sys
from rag.evaluation.metrics import wilson

rows: dict[int, dict] = {}
for path in sys.argv[1:]:
    for r in json.load(open(path))["figures"]["rows"]:
        rows.setdefault(r["id"], r)
want = {"SUPPORT": "supports", "CONTRADICT": "refutes"}
other = {"SUPPORT": "refutes", "CONTRADICT": "supports"}
def rate(k, n):
    lo, hi = wilson(k, n)
    return f"{k / n:.3f} [{lo:.2f}, {hi:.2f}] ({k}/{n})"
print(f"{len(rows)} claims")
for lab in ("SUPPORT", "CONTRADICT"):
    rs = [r for r in rows.values() if r["label"] == lab]
    right = sum(want[lab] in r["gold stances"] for r in rs)
    wrong = sum(other[lab] in r["gold stances"] for r in rs)
    judged = sum(r["gold judged"] for r in rs)
    print(f"{lab}: gold judged {rate(judged, len(rs))}; stance right {rate(right, len(rs))}; opposite {rate(wrong, len(rs))}")
rs = [r for r in rows.values() if r["label"] == "NEI"]
called = sum(any(s != "not stated" for s in r["gold decided"]) for r in rs)
print(f"no evidence: cited abstract called supports/refutes {rate(called, len(rs))}")

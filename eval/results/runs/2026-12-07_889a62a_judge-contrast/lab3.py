import json, gzip, sys, numpy as np
sys.path.insert(0, "/work/main/eval/results/runs/2026-12-06_a5139d8_judge-features")
from stance_lab2 import fit, report
dump = [json.loads(l) for l in gzip.open("/work/main/eval/results/runs/2026-12-06_a5139d8_judge-features/pairs-dump.jsonl.gz", "rt")]
ab = {}
for s in ("dev", "train"):
    for l in open(f"/tmp/xe/ab-{s}.jsonl"):
        r = json.loads(l); ab[(s, r["source"], r["key"], r["label"])] = (r["ab"], r["ba"])
def rows(split):
    X, y = [], []
    for r in dump:
        if r["split"] != split or r["kind"] != "claim": continue
        k = (split, r["source"], r["key"], r["label"])
        if r.get("flipped") and k not in ab: continue
        a, b = ab.get(k, (0.0, 0.0))
        X.append(r["x"] + [(a - b) / 2, a]); y.append(r["label"])
    return np.array(X), np.array(y)
Xtr, ytr = rows("train"); Xdv, ydv = rows("dev")
print("train", len(ytr), np.bincount(ytr).tolist(), "dev", len(ydv), np.bincount(ydv).tolist())
V = {"old8": list(range(8)), "old8+ab2": list(range(9)), "7+ab2": [0,1,2,3,4,5,6,8], "7+ab1": [0,1,2,3,4,5,6,9], "old8+ab1": [0,1,2,3,4,5,6,7,9]}
for name, cols in V.items():
    for l2 in (1.0, 10.0):
        for bal in (True, False):
            m, w = fit(Xtr[:, cols], ytr, l2=l2, balanced=bal)
            print(report(f"{name} l2={l2} bal={bal}", m(Xdv[:, cols]), ydv))

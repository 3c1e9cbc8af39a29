import json, gzip, sys, numpy as np
sys.path.insert(0, "/work/main/eval/results/runs/2026-12-06_a5139d8_judge-features")
xe = {(r["source"], r["key"], r["label"]): np.array(r["p"]) for r in json.load(open(sys.argv[1]))}
dump = [json.loads(l) for l in gzip.open("/work/main/eval/results/runs/2026-12-06_a5139d8_judge-features/pairs-dump.jsonl.gz", "rt")]
dv = [r for r in dump if r["split"] == "dev" and r["kind"] == "claim"]
dv = [r for r in dv if (r["source"], r["key"], r["label"]) in xe]
print("dev pairs with both", len(dv))
X = np.array([r["x"] for r in dv]); y = np.array([r["label"] for r in dv])
P = np.array([xe[(r["source"], r["key"], r["label"])] for r in dv])
from stance_lab2 import fit, report
def auc(s, pos):
    o = np.argsort(s); r = np.empty(len(s)); r[o] = np.arange(len(s)); n1 = pos.sum(); n0 = len(s) - n1
    return (r[pos].sum() - n1 * (n1 - 1) / 2) / (n1 * n0)
print("xe alone:", report("", P, y))
print("AUC decided vs NEI: xe", round(auc(1 - P[:, 2], y != 2), 3), " llm p(not)", round(auc(-X[:, 1], y != 2), 3))
m = (y != 2)
print("AUC refutes vs supports (among decided): xe", round(auc(P[m, 1] - P[m, 0], y[m] == 1), 3), " llm opp", round(auc(X[m, 7], y[m] == 1), 3))
rng = np.random.default_rng(0)
for name, F in (("llm8", X), ("llm8+xe", np.hstack([X, np.log(P + 1e-4)]))):
    accs = []
    for seed in range(20):
        idx = np.random.default_rng(seed).permutation(len(y)); A, B = idx[: len(y) // 2], idx[len(y) // 2 :]
        pr = np.zeros((len(y), 3))
        for tr, te in ((A, B), (B, A)):
            f, _ = fit(F[tr], y[tr], l2=10.0); pr[te] = f(F[te])
        pred = pr.argmax(1); rec = [float((pred[y == i] == i).mean()) for i in range(3)]
        accs.append((np.mean(rec), float((pred[y == 0] == 1).mean())))
    a = np.array(accs); print(name, "2-fold CV on dev, 20 seeds: bal", a[:, 0].mean().round(3), "+-", a[:, 0].std().round(3), "S->R", a[:, 1].mean().round(2))

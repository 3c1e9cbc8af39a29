"""Two stages, choice asked of every claim pair (choice_all.npz): a head says decided vs not stated, then the
sign of the forced choice (above t) says supports, else refutes. No LLM.  python twostage.py > twostage.txt"""
import numpy as np
from rag.answering.stance import fit_head
d = np.load("features.npz"); c = np.load("choice_all.npz")
def part(split):
    k = (d[f"{split}_kind"] == "claim") & np.isfinite(c[f"{split}_choice"])
    return d[f"{split}_x"][k], d[f"{split}_y"][k], d[f"{split}_gated"][k], c[f"{split}_choice"][k]
def auc(pos, neg):
    pos, neg = np.asarray(pos), np.asarray(neg)
    return float(((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()))
for split in ("train", "dev"):
    X, y, g, ch = part(split)
    print(split, "choice AUC sup vs ref: all", round(auc(ch[y == 0], ch[y == 1]), 3),
          "gated", round(auc(ch[(y == 0) & g], ch[(y == 1) & g]), 3),
          "skipped", round(auc(ch[(y == 0) & ~g], ch[(y == 1) & ~g]), 3),
          "| sign right: sup", round(float((ch[y == 0] > 0).mean()), 2), "ref", round(float((ch[y == 1] < 0).mean()), 2))
Xtr, ytr, gtr, chtr = part("train"); Xdv, ydv, gdv, chdv = part("dev")
# two-stage: decided vs not (head on 7 features + choice), then sign of the choice (threshold t fit on train)
def pred(Xa, ya, cha, Xb, chb, t):
    Xa = Xa.copy(); Xa[:, 7] = cha; Xb = Xb.copy(); Xb[:, 7] = chb
    w, b, m, s = fit_head(Xa, np.where(ya == 2, 2, 0))  # decided (0) vs not (2)
    z = ((Xb - m) / s) @ w.T + b
    decided = z[:, 0] > z[:, 2]
    return np.where(decided, np.where(chb > t, 0, 1), 2)
ts = np.linspace(-1, 1, 41)
best = max(ts, key=lambda t: np.mean([(pred(Xtr, ytr, chtr, Xtr, chtr, t)[ytr == i] == i).mean() for i in range(3)]))
for t in (0.0, best):
    p = pred(Xtr, ytr, chtr, Xdv, chdv, t)
    rec = [(p[ydv == i] == i).mean() for i in range(3)]
    print(f"two-stage t={t:+.2f}: dev balanced {np.mean(rec):.3f} recall {[round(r,2) for r in rec]} sup->ref {(p[ydv==0]==1).mean():.2f} ref->sup {(p[ydv==1]==0).mean():.2f}")
rng = np.random.default_rng(0); folds = rng.permutation(len(ytr)) % 5
for t in (0.0, 0.1):
    p = np.zeros(len(ytr), int)
    for k in range(5):
        p[folds == k] = pred(Xtr[folds != k], ytr[folds != k], chtr[folds != k], Xtr[folds == k], chtr[folds == k], t)
    rec = [(p[ytr == i] == i).mean() for i in range(3)]
    print(f"two-stage t={t:+.2f}: CV balanced {np.mean(rec):.3f} recall {[round(float(r),2) for r in rec]} sup->ref {(p[ytr==0]==1).mean():.2f} ref->sup {(p[ytr==1]==0).mean():.2f}")

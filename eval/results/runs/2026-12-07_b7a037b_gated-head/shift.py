"""A prior shift on the refutes logit of the shipped head (classes weighted equally in the fit, so refutes, 13 %
of train claim pairs, is predicted at 1.9x its share). From features.npz (shipped gate), no LLM.
    python shift.py > shift.txt
delta is added to the refutes logit; CV on train selects, dev reports."""
import numpy as np
from rag.answering.stance import fit_head

d = np.load("features.npz")
def part(split):
    k = d[f"{split}_kind"] == "claim"
    return d[f"{split}_x"][k], d[f"{split}_y"][k]
Xtr, ytr = part("train"); Xdv, ydv = part("dev")
def logits(h, X):
    w, b, m, s = h
    return ((X - m) / s) @ w.T + b
def figs(Z, y, delta):
    Z = Z.copy(); Z[:, 1] += delta; pred = Z.argmax(1)
    rec = [float((pred[y == i] == i).mean()) for i in range(3)]
    return (float(np.mean(rec)), rec, float((pred[y == 0] == 1).mean()), float((pred[y == 1] == 0).mean()),
            float((pred[y == 2] != 2).mean()), (pred == 1).sum() / max(1, (y == 1).sum()))
rng = np.random.default_rng(0)
folds = rng.permutation(len(ytr)) % 5
Zcv = np.zeros((len(ytr), 3))
for k in range(5):
    Zcv[folds == k] = logits(fit_head(Xtr[folds != k], ytr[folds != k]), Xtr[folds == k])
Zdv = logits(fit_head(Xtr, ytr), Xdv)
print("delta | CV balanced | CV sup->ref | CV ref->sup | CV refutes recall | dev balanced | dev recall s/r/n |"
      " dev sup->ref | dev ref->sup | dev NS decided | dev refutes predicted / true")
for delta in (0.0, -0.25, -0.5, -0.75, -1.0, -1.25, -1.5, -2.0):
    c = figs(Zcv, ytr, delta); v = figs(Zdv, ydv, delta)
    print(f"{delta:+.2f} | {c[0]:.3f} | {c[2]:.2f} | {c[3]:.2f} | {c[1][1]:.2f} | {v[0]:.3f} |"
          f" {'/'.join(f'{r:.2f}' for r in v[1])} | {v[2]:.2f} | {v[3]:.2f} | {v[4]:.2f} | {v[5]:.2f}")

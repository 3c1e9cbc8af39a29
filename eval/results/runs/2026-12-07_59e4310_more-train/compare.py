"""The head refit on more SciFact train pairs against the shipped one (fitted on the first 230), same dev pairs.
    python compare.py ../2026-12-07_b7a037b_gated-head/features.npz features.npz > compare.txt
5-fold CV on the larger train set; learning curve on seeded subsets; dev figures for each."""
import sys
import numpy as np
from rag.answering.stance import fit_head

old, new = np.load(sys.argv[1]), np.load(sys.argv[2])
def claim(d, split):
    k = d[f"{split}_kind"] == "claim"
    return d[f"{split}_x"][k], d[f"{split}_y"][k], d[f"{split}_gated"][k]
Xo, yo, _ = claim(old, "train"); Xn, yn, gn = claim(new, "train"); Xd, yd, gd = claim(new, "dev")
Xd0, yd0, _ = claim(old, "dev")
assert len(yd) == len(yd0) and (yd == yd0).all() and np.allclose(Xd, Xd0), "dev pairs changed"
print(f"train claim pairs: before {len(yo)} {np.bincount(yo, minlength=3).tolist()}, now {len(yn)} "
      f"{np.bincount(yn, minlength=3).tolist()} (choice asked {int(gn.sum())}); dev {len(yd)} {np.bincount(yd, minlength=3).tolist()}")
def pred(h, X):
    w, b, m, s = h
    return (((X - m) / s) @ w.T + b).argmax(1)
def figs(p, y):
    rec = [float((p[y == i] == i).mean()) for i in range(3)]
    return (f"{np.mean(rec):.3f} | {'/'.join(f'{r:.2f}' for r in rec)} | {(p[y == 0] == 1).mean():.2f} |"
            f" {(p[y == 1] == 0).mean():.2f} | {(p == 1).sum() / max(1, (y == 1).sum()):.2f}")
print("\nhead | dev balanced | recall s/r/n | sup->ref | ref->sup | refutes predicted/true")
print(f"shipped (first {len(yo)} train pairs) | {figs(pred(fit_head(Xo, yo), Xd), yd)}")
print(f"all {len(yn)} train pairs | {figs(pred(fit_head(Xn, yn), Xd), yd)}")
rng = np.random.default_rng(0)
print("\nlearning curve (seeded subsets of the train pairs, 5 draws each): mean dev balanced")
for n in (115, 230, 345, len(yn)):
    bal = []
    for r in range(5 if n < len(yn) else 1):
        idx = rng.choice(len(yn), n, replace=False) if n < len(yn) else np.arange(len(yn))
        p = pred(fit_head(Xn[idx], yn[idx]), Xd)
        bal.append(np.mean([(p[yd == i] == i).mean() for i in range(3)]))
    print(f"  {n}: {np.mean(bal):.3f} (min {np.min(bal):.3f}, max {np.max(bal):.3f})")
folds = rng.permutation(len(yn)) % 5
p = np.zeros(len(yn), int)
for k in range(5):
    p[folds == k] = pred(fit_head(Xn[folds != k], yn[folds != k]), Xn[folds == k])
print(f"\n5-fold CV on all {len(yn)} train pairs | {figs(p, yn)}")

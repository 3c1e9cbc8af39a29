"""Head variants for pairs the gate skips (no forced choice asked), from features.npz (no LLM).
    python lab.py > lab.txt
Claim pairs only. For each variant: 5-fold CV on train (selection) and the dev split (report): balanced accuracy,
recall per stance, supports called refutes, refutes called supports; and the same on the gated-out pairs."""
import numpy as np
from rag.answering.stance import fit_head, STANCES

d = np.load("features.npz")
def part(split):
    k = d[f"{split}_kind"] == "claim"
    return d[f"{split}_x"][k], d[f"{split}_y"][k], d[f"{split}_gated"][k], d[f"{split}_source"][k]
Xtr, ytr, gtr, str_ = part("train"); Xdv, ydv, gdv, sdv = part("dev")
print(f"train claim pairs {len(ytr)} (choice asked {gtr.sum()}), dev {len(ydv)} (asked {gdv.sum()})")
for name, y, g in (("train", ytr, gtr), ("dev", ydv, gdv)):
    print(name, "labels asked:", np.bincount(y[g], minlength=3), "skipped:", np.bincount(y[~g], minlength=3))

def softmax_pred(w, b, m, s, X):
    z = ((X - m) / s) @ w.T + b
    p = np.exp(z - z.max(1, keepdims=True)); return p / p.sum(1, keepdims=True)

def add_ind(X, g): return np.column_stack([X, g.astype(float)])

def v_shipped(Xa, ya, ga, Xb, gb):
    return softmax_pred(*fit_head(Xa, ya), Xb)
def v_indicator(Xa, ya, ga, Xb, gb):
    return softmax_pred(*fit_head(add_ind(Xa, ga), ya), add_ind(Xb, gb))
def v_split(Xa, ya, ga, Xb, gb):
    P = np.zeros((len(Xb), 3))
    for flag in (True, False):
        h = fit_head(Xa[ga == flag], ya[ga == flag])
        if (gb == flag).any(): P[gb == flag] = softmax_pred(*h, Xb[gb == flag])
    return P
def v_norefute(Xa, ya, ga, Xb, gb):
    P = v_shipped(Xa, ya, ga, Xb, gb).copy()
    P[~gb, 1] = 0; P /= P.sum(1, keepdims=True); return P
def v_ind_norefute(Xa, ya, ga, Xb, gb):
    P = v_indicator(Xa, ya, ga, Xb, gb).copy()
    P[~gb, 1] = 0; P /= P.sum(1, keepdims=True); return P
VARIANTS = {"shipped (8 features)": v_shipped, "+ choice-asked indicator": v_indicator,
            "two heads (asked / skipped)": v_split, "skipped never refutes": v_norefute,
            "indicator + skipped never refutes": v_ind_norefute}

def figs(P, y, g):
    pred = P.argmax(1)
    rec = [float((pred[y == i] == i).mean()) for i in range(3)]
    sr = float((pred[y == 0] == 1).mean()); rs = float((pred[y == 1] == 0).mean())
    sk = ~g
    sk_sr = float((pred[sk & (y == 0)] == 1).mean()) if (sk & (y == 0)).any() else float("nan")
    sk_ref = float((pred[sk & (y == 1)] == 1).mean()) if (sk & (y == 1)).any() else float("nan")
    return np.mean(rec), rec, sr, rs, sk_sr, sk_ref, np.bincount(pred, minlength=3)

rng = np.random.default_rng(0)
folds = rng.permutation(len(ytr)) % 5
print("\nvariant | CV balanced | CV sup->ref | dev balanced | dev recall s/r/n | dev sup->ref | dev ref->sup |"
      " skipped: sup->ref, refutes recall | dev predicted s/r/n")
for name, f in VARIANTS.items():
    Pcv = np.zeros((len(ytr), 3))
    for k in range(5):
        tr, te = folds != k, folds == k
        Pcv[te] = f(Xtr[tr], ytr[tr], gtr[tr], Xtr[te], gtr[te])
    cv = figs(Pcv, ytr, gtr)
    dv = figs(f(Xtr, ytr, gtr, Xdv, gdv), ydv, gdv)
    print(f"{name} | {cv[0]:.3f} | {cv[2]:.2f} | {dv[0]:.3f} | {'/'.join(f'{r:.2f}' for r in dv[1])} | {dv[2]:.2f} |"
          f" {dv[3]:.2f} | {dv[4]:.2f}, {dv[5]:.2f} | {dv[6].tolist()}")

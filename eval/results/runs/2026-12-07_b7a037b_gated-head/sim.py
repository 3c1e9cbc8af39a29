"""Other gates for the forced choice, simulated from the memo (no LLM): features.npz + choice_all.npz.
    python sim.py > sim.txt
The gate decides which claim pairs get the forced choice (feature 8, 'preferred'); training and use gate alike, so
each variant refits the head on train with its own gate (5-fold CV on train for selection, dev to report)."""
import numpy as np
from rag.answering.stance import fit_head

d = np.load("features.npz"); c = np.load("choice_all.npz")
def part(split):
    k = d[f"{split}_kind"] == "claim"
    ch = c[f"{split}_choice"]; assert len(ch) == len(k)
    k = k & np.isfinite(ch)  # 2 train claim pairs have no choice in the memo: left out of every variant
    X = d[f"{split}_x"][k].copy(); ch = ch[k]
    p_yes = X[:, 2]; p_not = p_yes * np.exp(X[:, 1])
    return X, d[f"{split}_y"][k], d[f"{split}_gated"][k], ch, p_not
tr, dv = part("train"), part("dev")
# the shipped gate reproduces from p_not (sanity)
for X, y, g, ch, pn in (tr, dv):
    assert ((pn < 0.5) == g).mean() > 0.97, ((pn < 0.5) == g).mean()
    assert np.allclose(X[g, 7], ch[g], atol=1e-6), "memo choice differs from feature"

def softmax_pred(h, X):
    w, b, m, s = h
    z = ((X - m) / s) @ w.T + b
    p = np.exp(z - z.max(1, keepdims=True)); return p / p.sum(1, keepdims=True)
def with_gate(X, ch, gate):
    X = X.copy(); X[:, 7] = np.where(gate, ch, 0.0); return X

def figs(P, y):
    pred = P.argmax(1)
    rec = [float((pred[y == i] == i).mean()) for i in range(3)]
    return float(np.mean(rec)), rec, float((pred[y == 0] == 1).mean()), float((pred[y == 1] == 0).mean())

def threshold(t):
    def run(A, B):  # A: training part, B: evaluated part
        ha = fit_head(with_gate(A[0], A[3], A[4] < t), A[1])
        return softmax_pred(ha, with_gate(B[0], B[3], B[4] < t)), (B[4] < t)
    return run
def conditional(t_stage):
    """stage 1: the shipped head (shipped gate); a skipped pair it calls supports/refutes at >= t_stage also gets
    the choice; stage 2: a head fit on features under that gate."""
    def run(A, B):
        g0a, g0b = A[4] < 0.5, B[4] < 0.5
        h1 = fit_head(with_gate(A[0], A[3], g0a), A[1])
        def gate(P, g0): return g0 | ((P[:, :2].max(1) >= t_stage))
        ga = gate(softmax_pred(h1, with_gate(A[0], A[3], g0a)), g0a)
        gb = gate(softmax_pred(h1, with_gate(B[0], B[3], g0b)), g0b)
        h2 = fit_head(with_gate(A[0], A[3], ga), A[1])
        return softmax_pred(h2, with_gate(B[0], B[3], gb)), gb
    return run

VARIANTS = {f"P(not) < {t}": threshold(t) for t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01)}
VARIANTS.update({f"shipped gate + head says decided >= {t}": conditional(t) for t in (0.34, 0.5, 0.6)})
rng = np.random.default_rng(0)
folds = rng.permutation(len(tr[1])) % 5
sub = lambda P, i: tuple(a[i] for a in P)
print("variant | choices asked dev | CV balanced | CV sup->ref | dev balanced | dev recall s/r/n | dev sup->ref | dev ref->sup")
for name, f in VARIANTS.items():
    Pcv = np.zeros((len(tr[1]), 3))
    for k in range(5):
        Pcv[folds == k] = f(sub(tr, folds != k), sub(tr, folds == k))[0]
    cv = figs(Pcv, tr[1])
    P, g = f(tr, dv)
    dvf = figs(P, dv[1])
    print(f"{name} | {g.mean():.2f} | {cv[0]:.3f} | {cv[2]:.2f} | {dvf[0]:.3f} | {'/'.join(f'{r:.2f}' for r in dvf[1])} |"
          f" {dvf[2]:.2f} | {dvf[3]:.2f}")

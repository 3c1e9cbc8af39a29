"""Heads that read the best-sentence choice where the gate skipped the first one (data: best_gated.py's pickle)."""
import pickle, sys
import numpy as np
from rag.answering.stance import fit_head
D = pickle.load(open(sys.argv[1] if len(sys.argv) > 1 else "/tmp/direction-gated.pkl", "rb"))
CHOICE = 7  # "claim over opposite"
def X(rows, mode):
    out = []
    for r in rows:
        x = list(r["x"])
        best = r.get("pref_best") if r["pref"] is None else None
        if mode == "in place" and best is not None:
            x[CHOICE] = best
        elif mode == "own feature":
            x.append(0.0 if best is None else best)
        elif mode == "own feature + asked":
            x += [0.0 if best is None else best, float(best is not None)]
        out.append(x)
    return np.asarray(out)
def report(name, mode, l2=1.0):
    tr, dv = D["train"], D["dev"]
    xt, yt = X(tr, mode), np.asarray([r["label"] for r in tr])
    xd, yd = X(dv, mode), np.asarray([r["label"] for r in dv])
    w, b, m, s = fit_head(xt, yt, l2=l2)
    pred = (((xd - m) / s) @ w.T + b).argmax(1)
    rec = [float((pred[yd == i] == i).mean()) for i in range(3)]
    idx = np.arange(len(yt)); np.random.default_rng(0).shuffle(idx); cv = []
    for k in range(5):
        te = idx[k::5]; trn = np.setdiff1d(idx, te)
        w2, b2, m2, s2 = fit_head(xt[trn], yt[trn], l2=l2)
        p2 = (((xt[te] - m2) / s2) @ w2.T + b2).argmax(1)
        cv.append(np.mean([(p2[yt[te] == i] == i).mean() for i in range(3)]))
    print(f"{name:34} dev bal {np.mean(rec):.3f} rec {rec[0]:.2f}/{rec[1]:.2f}/{rec[2]:.2f} "
          f"s->r {float((pred[yd == 0] == 1).mean()):.2f} r->s {float((pred[yd == 1] == 0).mean()):.2f}  cv {np.mean(cv):.3f}")
print("train", len(D["train"]), "dev", len(D["dev"]), "claim pairs; gated with a best-sentence choice:",
      sum(r["pref"] is None and r.get("pref_best") is not None for r in D["train"]), "/",
      sum(r["pref"] is None and r.get("pref_best") is not None for r in D["dev"]))
report("shipped features", "shipped")
report("best-sentence choice in place", "in place")
report("best-sentence choice, own feature", "own feature")
report("own feature + asked indicator", "own feature + asked")

import pickle, re, sys, math
import numpy as np
import Stemmer
from rag.answering.stance import fit_head, STANCES, StanceHead
from rag.answering import facts
st = Stemmer.Stemmer("english")
W = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
def toks(t): return st.stemWords(W.findall(t.lower()))
D = pickle.load(open(sys.argv[1] if len(sys.argv) > 1 else "/tmp/direction-pairs.pkl", "rb"))
def diff(r, mode):
    if not r["opp"]: return 0.0
    C, O, E = set(toks(r["claim"])), set(toks(r["opp"])), set(toks(r["excerpt"]))
    cu, ou = C - O, O - C
    hc = sum(w in E for w in cu) / len(cu) if cu else 0.0
    ho = sum(w in E for w in ou) / len(ou) if ou else 0.0
    if mode == "diff": return hc - ho
    if mode == "c": return hc
    if mode == "o": return ho
def negp(r):
    best = r["excerpt"]
    a = bool(facts._negation_problems(r["claim"], best, r["abstract"]) or facts._opposite_problems(r["claim"], best))
    b = bool(r["opp"]) and bool(facts._negation_problems(r["opp"], best, r["abstract"]) or facts._opposite_problems(r["opp"], best))
    return float(a) - float(b)
def X(rows, extra):
    base = np.asarray([r["x"] for r in rows])
    cols = [np.asarray([f(r) for r in rows])[:, None] for f in extra]
    return np.hstack([base] + cols) if cols else base
def evaluate(name, extra, l2=1.0):
    tr, dv = D["train"], D["dev"]
    xt, yt = X(tr, extra), np.asarray([r["label"] for r in tr])
    xd, yd = X(dv, extra), np.asarray([r["label"] for r in dv])
    w, b, m, s = fit_head(xt, yt, l2=l2)
    z = ((xd - m) / s) @ w.T + b
    pred = z.argmax(1)
    rec = [float((pred[yd == i] == i).mean()) for i in range(3)]
    s2r = float((pred[yd == 0] == 1).mean()); r2s = float((pred[yd == 1] == 0).mean())
    # 5-fold CV on train
    idx = np.arange(len(yt)); rng = np.random.default_rng(0); rng.shuffle(idx); cv = []
    for k in range(5):
        te = idx[k::5]; trn = np.setdiff1d(idx, te)
        w2, b2, m2, s2 = fit_head(xt[trn], yt[trn], l2=l2)
        p2 = (((xt[te] - m2) / s2) @ w2.T + b2).argmax(1)
        cv.append(np.mean([(p2[yt[te] == i] == i).mean() for i in range(3)]))
    print(f"{name:28} dev bal {np.mean(rec):.3f} rec {rec[0]:.2f}/{rec[1]:.2f}/{rec[2]:.2f} s->r {s2r:.2f} r->s {r2s:.2f}  cv {np.mean(cv):.3f}  n={len(yd)}")
    return w
evaluate("shipped features", [])
evaluate("+diff", [lambda r: diff(r, "diff")])
evaluate("+c +o", [lambda r: diff(r, "c"), lambda r: diff(r, "o")])
evaluate("+negp", [negp])
evaluate("+diff +negp", [lambda r: diff(r, "diff"), negp])
# the shipped head's decisions where the choice was weak or not asked (dev, supporting and refuting pairs)
tr, dv = D["train"], D["dev"]
xt, yt = X(tr, []), np.asarray([r["label"] for r in tr])
w, b, m, s = fit_head(xt, yt)
for name, sel in (("choice not asked", lambda r: r["pref"] is None), ("|choice| < 0.2", lambda r: r["pref"] is not None and abs(r["pref"]) < 0.2), ("|choice| >= 0.2", lambda r: r["pref"] is not None and abs(r["pref"]) >= 0.2)):
    rows = [r for r in dv if sel(r) and r["label"] in (0, 1)]
    if not rows: continue
    xd = X(rows, []); yd = np.asarray([r["label"] for r in rows]); pred = (((xd - m) / s) @ w.T + b).argmax(1)
    print(f"{name:18} supporting {int((yd==0).sum()):3} called refutes {int(((yd==0)&(pred==1)).sum()):2} | refuting {int((yd==1).sum()):3} called refutes {int(((yd==1)&(pred==1)).sum()):2}")

import pickle, sys, math
import numpy as np
D = pickle.load(open(sys.argv[1] if len(sys.argv) > 1 else "/tmp/direction-best.pkl", "rb"))
WEAK = float(sys.argv[2]) if len(sys.argv) > 2 else 0.2
def dfeat(r, which):
    p = r["head"]; h = math.log(max(p["supports"], 1e-4) / max(p["refutes"], 1e-4))
    f = {"h": h, "p1": 0.0 if r["pref"] is None else r["pref"], "p2": r["pref_best"]}
    return [f[k] for k in which]
def fit(x, y, l2=1.0, steps=4000, lr=0.3):
    m, s = x.mean(0), x.std(0) + 1e-9; xs = (x - m) / s; w = np.zeros(x.shape[1]); b = 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(xs @ w + b))); g = p - y
        w -= lr * (xs.T @ g / len(y) + l2 * w / len(y)); b -= lr * g.mean()
    return lambda z: 1 / (1 + np.exp(-(((np.asarray(z) - m) / s) @ w + b))), (w, b, m, s)
def region(r): return (r["pref"] is None if WEAK < 0 else (r["pref"] is None or abs(r["pref"]) < WEAK)) and r.get("pref_best") is not None
for which in (["p2"], ["h", "p2"], ["h", "p1", "p2"]):
    tr = [r for r in D["train"] if r["label"] in (0, 1) and region(r)]
    x = np.asarray([dfeat(r, which) for r in tr]); y = np.asarray([r["label"] == 0 for r in tr], float)
    q, params = fit(x, y)
    dv = [r for r in D["dev"] if r["label"] in (0, 1) and region(r)]
    xd = np.asarray([dfeat(r, which) for r in dv]); yd = np.asarray([r["label"] == 0 for r in dv])
    acc = np.mean((q(xd) > 0.5) == yd); base = np.mean((xd[:, 0] > 0) == yd) if which[0] == "h" else float("nan")
    head_dir = np.mean([(r["head"]["supports"] > r["head"]["refutes"]) == (r["label"] == 0) for r in dv])
    print(f"{'+'.join(which):8} train {len(tr)} dev {len(dv)}: direction right {acc:.3f} (head's own {head_dir:.3f})")
    # the whole dev set: the head's output, with the direction redone on trigger pairs
    conf = np.zeros((3, 3), int); conf0 = np.zeros((3, 3), int)
    for r in D["dev"]:
        p = dict(r["head"]); p0 = max(p, key=p.get)
        if p0 != "not stated" and region(r):
            dec = p["supports"] + p["refutes"]; qq = float(q([dfeat(r, which)])[0])
            p["supports"], p["refutes"] = dec * qq, dec * (1 - qq)
        k = ["supports", "refutes", "not stated"]
        conf[r["label"], k.index(max(p, key=p.get))] += 1; conf0[r["label"], k.index(p0)] += 1
    for name, c in (("shipped", conf0), ("second look", conf)):
        rec = c.diagonal() / c.sum(1)
        print(f"   {name:12} bal {rec.mean():.3f} rec {rec[0]:.2f}/{rec[1]:.2f}/{rec[2]:.2f} s->r {c[0,1]/c[0].sum():.2f} r->s {c[1,0]/c[1].sum():.2f}")

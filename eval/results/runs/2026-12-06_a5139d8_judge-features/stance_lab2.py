import json, sys
import os
sys.path.insert(0, os.environ.get("WT", "/tmp/wt-judge"))  # a worktree with features.patch applied
import numpy as np
from rag.answering.stance import features, Excerpt, FEATURES
def load(path):
    return [json.loads(l) for l in open(path)]
def feats(r):
    ex = Excerpt(text=r["excerpt"], spans=(), best=(0, 0), cosine=r["x"][3])
    return features(r["statement"], ex, r["probs"], r["flipped"], r["opp"] if r["flipped"] else None)
VARIANTS = {"old8": list(range(8)), "+asked": list(range(9)), "+oppdist": list(range(11)), "all12": list(range(12)),
            "noflip7": list(range(7))}
def fit(x, y, l2=1.0, steps=3000, lr=0.5, balanced=True):
    mean = x.mean(0); scale = x.std(0); scale[scale < 1e-6] = 1
    xs = (x - mean) / scale; n, f = xs.shape; k = 3
    oh = np.eye(k)[y]; counts = np.bincount(y, minlength=k).astype(float)
    sw = (n / (k * np.maximum(counts, 1)))[y] if balanced else np.ones(n)
    w = np.zeros((k, f)); b = np.zeros(k)
    for _ in range(steps):
        z = xs @ w.T + b; z -= z.max(1, keepdims=True); p = np.exp(z); p /= p.sum(1, keepdims=True)
        g = (p - oh) * sw[:, None] / n
        w -= lr * (g.T @ xs + l2 * w / n); b -= lr * g.sum(0)
    def pred(xx):
        z = ((xx - mean) / scale) @ w.T + b; z -= z.max(1, keepdims=True); p = np.exp(z); return p / p.sum(1, keepdims=True)
    return pred, w
def report(name, p, y):
    pred = p.argmax(1)
    rec = [float((pred[y == i] == i).mean()) if (y == i).any() else float("nan") for i in range(3)]
    s2r = float((pred[y == 0] == 1).mean()); r2s = float((pred[y == 1] == 0).mean())
    return f"{name:28} acc {float((pred==y).mean()):.3f} bal {np.nanmean(rec):.3f} rec {rec[0]:.2f}/{rec[1]:.2f}/{rec[2]:.2f} S->R {s2r:.2f} R->S {r2s:.2f} pred {np.bincount(pred,minlength=3).tolist()} true {np.bincount(y,minlength=3).tolist()}"
if __name__ == "__main__":
    rows = [r for r in load(sys.argv[1]) if r["kind"] == "claim"]
    cc = load(sys.argv[2]) if len(sys.argv) > 2 else []
    tr = [r for r in rows if r["split"] == "train"]; dv = [r for r in rows if r["split"] == "dev"]
    Xtr = np.array([feats(r) for r in tr]); Xdv = np.array([feats(r) for r in dv]); Xcc = np.array([feats(r) for r in cc]) if cc else None
    ytr = np.array([r["label"] for r in tr]); ydv = np.array([r["label"] for r in dv]); ycc = np.array([r["label"] for r in cc])
    print("train", len(tr), np.bincount(ytr, minlength=3).tolist(), "dev", len(dv))
    for v, cols in VARIANTS.items():
        for l2 in (1.0, 10.0):
            for bal in (True, False):
                m, w = fit(Xtr[:, cols], ytr, l2=l2, balanced=bal)
                print(report(f"{v} l2={l2} bal={bal}", m(Xdv[:, cols]), ydv), "| cc:", report("", m(Xcc[:, cols]), ycc)[30:92] if cc else "")

def cc_metrics(pred_fn, cc, cols, record):
    rows = json.load(open(record))["figures"]["rows"]
    by = {}
    for r in cc:
        p = pred_fn(np.array([feats(r)])[:, cols])[0]
        by.setdefault(r["id"], []).append(p)
    out = {}
    for lab, want, opp in (("SUPPORT", 0, 1), ("CONTRADICT", 1, 0)):
        rs = [x for x in rows if x["label"] == lab]
        right = sum(any(p.argmax() == want for p in by.get(x["id"], [])) for x in rs)
        wrong = sum(any(p.argmax() == opp for p in by.get(x["id"], [])) for x in rs)
        out[lab] = f"{right}/{len(rs)} opp {wrong}"
    rs = [x for x in rows if x["label"] == "NEI"]
    called = sum(any(p.argmax() != 2 and p.max() >= 0.5 for p in by.get(x["id"], [])) for x in rs)
    out["NEI"] = f"{called}/{len(rs)}"
    return out

def cv_score(X, y, cols, l2, bal, folds=5, seed=0):
    rng = np.random.default_rng(seed); idx = rng.permutation(len(y)); parts = np.array_split(idx, folds)
    preds = np.zeros(len(y), dtype=int)
    for k in range(folds):
        te = parts[k]; trn = np.concatenate([parts[j] for j in range(folds) if j != k])
        m, _ = fit(X[trn][:, cols], y[trn], l2=l2, balanced=bal)
        preds[te] = m(X[te][:, cols]).argmax(1)
    rec = [float((preds[y == i] == i).mean()) for i in range(3)]
    s2r = float((preds[y == 0] == 1).mean())
    return float(np.mean(rec)), float((preds == y).mean()), rec, s2r

def main2(dump, ccfile, record):
    rows = [r for r in load(dump) if r["kind"] == "claim"]
    cc = load(ccfile)
    tr = [r for r in rows if r["split"] == "train"]; dv = [r for r in rows if r["split"] == "dev"]
    Xtr = np.array([feats(r) for r in tr]); Xdv = np.array([feats(r) for r in dv])
    ytr = np.array([r["label"] for r in tr]); ydv = np.array([r["label"] for r in dv])
    print("train", len(tr), np.bincount(ytr, minlength=3).tolist(), "dev", len(dv), np.bincount(ydv, minlength=3).tolist())
    for v, cols in VARIANTS.items():
        for l2 in (1.0, 10.0, 30.0):
            for bal in (True, False):
                cvb, cva, rec, s2r = cv_score(Xtr, ytr, cols, l2, bal)
                m, _ = fit(Xtr[:, cols], ytr, l2=l2, balanced=bal)
                print(f"{v:9} l2={l2:<4} bal={bal:d} CV bal {cvb:.3f} acc {cva:.3f} S->R {s2r:.2f} | dev", report("", m(Xdv[:, cols]), ydv)[29:], "| cc", cc_metrics(m, cc, cols, record))

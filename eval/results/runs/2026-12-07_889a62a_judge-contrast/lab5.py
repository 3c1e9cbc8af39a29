import numpy as np
exec(open("lab4.py").read().split("cols = [0,1,2,3,4,5,6,8]")[0])
import json, gzip
def asked(split):
    out = []
    for r in dump:
        if r["split"] != split or r["kind"] != "claim": continue
        k = (split, r["source"], r["key"], r["label"])
        if r.get("flipped") and k not in ab: continue
        out.append(1.0 if r.get("flipped") else 0.0)
    return np.array(out)[:, None]
Atr, Adv = asked("train"), asked("dev")
for name, cols, extra in (("7+ab2", [0,1,2,3,4,5,6,8], False), ("7+ab2+asked", [0,1,2,3,4,5,6,8], True)):
    xtr = np.hstack([Xtr[:, cols], Atr]) if extra else Xtr[:, cols]; xdv = np.hstack([Xdv[:, cols], Adv]) if extra else Xdv[:, cols]
    for l2 in (1.0, 10.0):
        m = fitp(xtr, ytr, l2=l2, power=1.0); p = m(xdv); pred = p.argmax(1)
        rec = [float((pred[ydv == i] == i).mean()) for i in range(3)]
        g = Adv[:, 0] == 0
        print(f"{name} l2={l2}: bal {np.mean(rec):.3f} rec {rec[0]:.2f}/{rec[1]:.2f}/{rec[2]:.2f} S->R {(pred[ydv==0]==1).mean():.2f} | gated dev pairs {int(g.sum())}: S->R {(pred[g & (ydv==0)]==1).mean():.2f} R rec {(pred[g & (ydv==1)]==1).mean():.2f} N->R {(pred[g & (ydv==2)]==1).mean():.2f}")

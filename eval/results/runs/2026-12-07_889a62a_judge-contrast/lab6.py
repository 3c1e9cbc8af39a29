"""Gate thresholds: the head refit with the forced choice asked on pairs with P(not stated) < t (memo only, no LLM)."""
import sys, tempfile, json
from pathlib import Path
import numpy as np
from rag import Assistant, get_settings
from rag.answering.stance import excerpt_of, features, fit_head, StanceHead, STANCES
from rag.evaluation.bench.stance_train import judge_for
from rag.evaluation.bench._stance import pairs
from rag.evaluation.bench._shared import shared_data
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
j = judge_for(a); j.chat = None
shared = shared_data("scifact").parent
def rows(split):
    out = []
    for p in pairs(shared, split, 0):
        if p.kind != "claim": continue
        ex = excerpt_of(j.scorer, p.statement, p.abstract, sentences=j.sentences)
        probs = j.memo.get(j.memo_key(p.statement, p.kind, p.title, ex))
        if probs is None: continue
        pref = None
        if j.opposite_key(p.statement) in j.opposites:
            opp = j.opposite(p.statement)
            if opp and all(k in j.memo for k in j.contrast_keys(p.statement, opp, p.title, ex)):
                pref, _ = j.preference(p.statement, opp, p.title, ex)
        out.append((p, ex, probs, pref))
    return out
tr, dv = rows("train"), rows("dev")
print("train", len(tr), "with choice", sum(r[3] is not None for r in tr), "dev", len(dv), "with choice", sum(r[3] is not None for r in dv))
def X(rs, t):
    xs, ys, keep = [], [], []
    for p, ex, probs, pref in rs:
        gated = probs.get("not", 0) >= t
        if not gated and pref is None:  # the choice is needed but was not asked: leave the pair out
            keep.append(False); continue
        keep.append(True)
        xs.append(features(p.statement, ex, probs, None if gated else pref)); ys.append(p.label)
    return np.array(xs), np.array(ys), np.array(keep)
for t in (0.5, 0.6, 0.7, 0.8, 0.9, 1.01):
    xt, yt, _ = X(tr, t); xd, yd, kd = X(dv, t)
    w, b, m, s = fit_head(xt, yt)
    h = StanceHead({"claim": w}, {"claim": b}, {"claim": m}, {"claim": s})
    pr = np.array([[h.probabilities("claim", x)[c] for c in STANCES] for x in xd]); pred = pr.argmax(1)
    rec = [float((pred[yd == i] == i).mean()) for i in range(3)]
    asked = np.mean([r[2].get("not", 0) < t for r, k in zip(dv, kd) if k])
    print(f"gate P(not)<{t}: train {len(yt)} dev {len(yd)} asked {asked:.2f} | bal {np.mean(rec):.3f} rec {rec[0]:.2f}/{rec[1]:.2f}/{rec[2]:.2f} S->R {(pred[yd==0]==1).mean():.2f} R->S {(pred[yd==1]==0).mean():.2f} N decided {(pred[yd==2]!=2).mean():.2f}")

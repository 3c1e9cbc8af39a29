"""Pilot: a second direction probe on pairs where the first choice is weak or not asked."""
import pickle, sys, random, tempfile, time
from pathlib import Path
import numpy as np
from rag import Assistant, get_settings
from rag.answering.stance import Excerpt, excerpt_of
from rag.evaluation.bench.stance_train import judge_for
D = pickle.load(open(sys.argv[4] if len(sys.argv) > 4 else "/tmp/direction-pairs.pkl", "rb"))
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
j = judge_for(a)
mode = sys.argv[1]; n = int(sys.argv[2]); split = sys.argv[3]
rows = [r for r in D[split] if r["label"] in (0, 1) and (r["pref"] is None or abs(r["pref"]) < 0.2)]
random.Random(5).shuffle(rows)
rows = rows[:n]
res = []
t0 = time.time()
for r in rows:
    opp = r["opp"] or j.opposite(r["claim"])
    if not opp: continue
    title = ""  # the pair's title is not in the pickle; the probe reads the sentences only
    if mode == "best":
        ex = excerpt_of(j.scorer, r["claim"], r["abstract"], sentences=2)
        text = r["abstract"][ex.best[0]:ex.best[1]].strip()
    elif mode == "three":
        text = excerpt_of(j.scorer, r["claim"], r["abstract"], sentences=3).text
    elif mode == "two":
        text = r["excerpt"]
    e = Excerpt(text=text, spans=(), best=(0, 0), cosine=0.0)
    pref, _ = j.preference(r["claim"], opp, title, e)
    res.append((r["label"], pref, r["pref"]))
    print(r["label"], round(pref, 3), r["pref"], file=sys.stderr, flush=True)
y = np.asarray([x[0] for x in res]); p = np.asarray([x[1] for x in res])
def auc(y, s):
    pos, neg = s[y == 0], s[y == 1]
    return np.mean([(a > b) + 0.5 * (a == b) for a in pos for b in neg])
print(mode, split, "n", len(y), "S", int((y == 0).sum()), "R", int((y == 1).sum()), "AUC S>R", round(auc(y, p), 3),
      "sign right", round(float(np.mean((p > 0) == (y == 0))), 3), f"{time.time()-t0:.0f}s")

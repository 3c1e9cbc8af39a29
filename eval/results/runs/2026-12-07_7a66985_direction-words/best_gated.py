"""The best-sentence forced choice for every claim pair the gate skipped (P(not stated) >= 0.5), whatever its label,
so that a head can read it as its choice feature there (writing the claim's opposite where the memo lacks it)."""
import pickle, sys, tempfile, time
from pathlib import Path
from rag import Assistant, get_settings
from rag.answering.stance import Excerpt, excerpt_of
from rag.evaluation.bench.stance_train import judge_for
src, dst = sys.argv[1], sys.argv[2]
D = pickle.load(open(src, "rb"))
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
j = judge_for(a)
t0, k = time.time(), 0
for split in ("dev", "train"):
    for r in D[split]:
        if r["pref"] is not None or r.get("pref_best") is not None:
            continue
        opp = r["opp"] or j.opposite(r["claim"])
        if not opp:
            continue
        ex = excerpt_of(j.scorer, r["claim"], r["abstract"], sentences=2)
        text = r["abstract"][ex.best[0] : ex.best[1]].strip()
        r["pref_best"], _ = j.preference(r["claim"], opp, "", Excerpt(text=text, spans=(), best=(0, 0), cosine=0.0))
        k += 1
        if k % 25 == 0:
            print(f"{k} pairs, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
pickle.dump(D, open(dst, "wb"))

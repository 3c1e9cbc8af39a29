"""The best-sentence forced choice for every claim pair the gate skipped (P(not stated) >= 0.5), whatever its label,
so that a head can read it as its choice feature there (writing the claim's opposite where the memo lacks it)."""
import pickle, sys, time
from best_all import best_sentence_choice, judge
src, dst = sys.argv[1], sys.argv[2]
D = pickle.load(open(src, "rb"))
j = judge()
t0, k = time.time(), 0
for split in ("dev", "train"):
    for r in D[split]:
        if r["pref"] is not None or r.get("pref_best") is not None:
            continue
        got = best_sentence_choice(j, r)
        if got is None:
            continue
        r["pref_best"] = got[0]
        k += 1
        if k % 25 == 0:
            print(f"{k} pairs, {time.time() - t0:.0f} s", file=sys.stderr, flush=True)
pickle.dump(D, open(dst, "wb"))

"""The forced choice read on the best sentence alone, for every supporting / refuting claim pair where the
first choice is weak (|pref| < 0.2) or was not asked; and every pair of any label in that region the head calls decided."""
import pickle, sys, tempfile, time
from pathlib import Path
import numpy as np
from rag import Assistant, get_settings
from rag.answering.stance import Excerpt, excerpt_of, bundled_head
from rag.evaluation.bench.stance_train import judge_for


def best_sentence_choice(j, r):
    """(the choice between the pair's claim and its opposite read on the excerpt's best sentence alone, untitled;
    the opposite), writing the opposite where the memo lacks it; None when the model gives no opposite."""
    opp = r["opp"] or j.opposite(r["claim"])
    if not opp:
        return None
    ex = excerpt_of(j.scorer, r["claim"], r["abstract"], sentences=2)
    text = r["abstract"][ex.best[0] : ex.best[1]].strip()
    pref, _ = j.preference(r["claim"], opp, "", Excerpt(text=text, spans=(), best=(0, 0), cosine=0.0))
    return pref, opp


def judge():
    return judge_for(Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp()))))


if __name__ == "__main__":
    src, dst = sys.argv[1], sys.argv[2]
    D = pickle.load(open(src, "rb"))
    j = judge()
    head = bundled_head()
    t0 = time.time(); k = 0
    for split in ("dev", "train"):
        for r in D[split]:
            weak = r["pref"] is None or abs(r["pref"]) < 0.2
            p = head.probabilities("claim", np.asarray(r["x"]))
            r["head"] = p
            decided = max(p, key=p.get) != "not stated"
            r["pref_best"] = None
            if not weak or not (r["label"] in (0, 1) or decided):
                continue
            got = best_sentence_choice(j, r)
            if got is None:
                continue
            r["pref_best"], r["opp_used"] = got
            k += 1
            if k % 20 == 0:
                print(f"{k} pairs, {time.time()-t0:.0f} s", file=sys.stderr, flush=True)
    pickle.dump(D, open(dst, "wb"))

"""AUC (refutes vs supports, lower preference = refutes) and seconds per call for shipped vs shared-prefix prompts."""
import json, statistics as st
rows = [json.loads(l) for l in open("rows.jsonl")]
def auc(key):
    r = [x[key] for x in rows if x["stance"] == "refutes"]; s = [x[key] for x in rows if x["stance"] == "supports"]
    return sum(1.0 if a < b else 0.5 if a == b else 0.0 for a in r for b in s) / (len(r) * len(s))
n_r = sum(x["stance"] == "refutes" for x in rows)
print(f"pairs: {len(rows)} ({n_r} refutes, {len(rows) - n_r} supports)")
for name in ("shipped", "shared"):
    first = [x[f"{name}_s"][0] for x in rows]; second = [x[f"{name}_s"][1] for x in rows]
    toks = [x["tokens"][name][0] for x in rows]
    print(f"{name}: AUC {auc(name + '_pref'):.3f}; s per call median first order {st.median(first):.2f}, second "
          f"{st.median(second):.2f}; per gated paper (label + both) median "
          f"{st.median([x['label_s'][0] + sum(x[name + '_s']) for x in rows]):.2f} s; prompt tokens first order median {st.median(toks)}")
print("label call median", st.median([x["label_s"][0] for x in rows]), "s, tokens", st.median([x["tokens"]["label"] for x in rows]))

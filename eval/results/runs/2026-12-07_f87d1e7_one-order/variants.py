"""Head refit from the memo (no LLM) with the forced choice asked in one order only, and other gates.
    python variants.py  -> prints dev balanced accuracy per variant (claim pairs)
Each variant monkeypatches StanceJudge.preference / the gate, then runs stance-train's read + fit on the cached
pairs exactly as `stance-train --cached-only` does (no --write)."""
import argparse, math, sys
import numpy as np
import rag.answering.stance as st
from rag.evaluation.bench import stance_train as T
from rag.evaluation.bench.suite import Output

two_order = st.StanceJudge.preference
orig_gate = st.wants_opposite

def one_order(self, statement, opposite, title, excerpt):
    eps = 1e-4
    probs, asked = self._asked(self.contrast_messages(statement, opposite, title, excerpt), st.CHOICE_LETTERS)
    return math.log(max(eps, probs.get("a", 0.0)) / max(eps, probs.get("b", 0.0))), asked

def gate(below):
    return lambda kind, probs: kind == "claim" and probs.get("not", 0.0) < below

VARIANTS = {
    "two orders, gate 0.5 (shipped)": (two_order, 0.5),
    "one order (claim first), gate 0.5": (one_order, 0.5),
    "one order, gate 0.7": (one_order, 0.7),
    "one order, no gate": (one_order, 1.01),
    "two orders, no gate": (two_order, 1.01),
}
ap = argparse.ArgumentParser(); g = ap.add_argument_group()
T.add_arguments(g)
for name, (pref, below) in VARIANTS.items():
    st.StanceJudge.preference = pref
    st.wants_opposite = gate(below); T.wants_opposite = st.wants_opposite
    args = ap.parse_args(["--cached-only"]); args.seed = None; args.data_dir = None
    out = Output.__new__(Output); out.table = lambda *a, **k: None
    figs = T.run(args, out)
    r = figs["claim"]["dev"]["head"]
    bal = np.mean([v for v in r["recall"].values()])
    print(f"{name}: n={r['n']} balanced={bal:.3f} recall={r['recall']} acc={r['accuracy']}", flush=True)

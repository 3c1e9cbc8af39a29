"""Experiment: lexical direction features from the claim's opposite. Dumps per-pair data for train and dev."""
import json, pickle, tempfile, sys, re
from pathlib import Path
import numpy as np
from rag import Assistant, get_settings
from rag.answering.stance import excerpt_of, features, wants_opposite
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import pairs
from rag.evaluation.bench.stance_train import judge_for, train_set, contrast_cached
shared = shared_data("scifact").parent
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
j = judge_for(a)
out = {}
for split, items in (("train", train_set(shared, 0, 420)), ("dev", pairs(shared, "dev", 0))):
    rows = []
    for p in items:
        if p.kind != "claim": continue
        ex = excerpt_of(j.scorer, p.statement, p.abstract, sentences=j.sentences)
        key = j.memo_key(p.statement, p.kind, p.title, ex)
        if key not in j.memo or not contrast_cached(j, p, ex): continue
        probs, pref, tok = j.measured(p.statement, p.kind, p.title, ex, opposite=True)
        assert tok == 0
        opp = j.opposite(p.statement) if j.opposite_key(p.statement) in j.opposites else None
        rows.append(dict(key=p.key, source=p.source, stance=p.stance, label=p.label, claim=p.statement, opp=opp,
                         excerpt=ex.text, abstract=p.abstract, probs=probs, pref=pref,
                         x=features(p.statement, ex, probs, pref).tolist()))
    out[split] = rows
    print(split, len(rows), sum(r["opp"] is not None for r in rows), file=sys.stderr)
pickle.dump(out, open(sys.argv[1] if len(sys.argv) > 1 else "/tmp/direction-pairs.pkl", "wb"))

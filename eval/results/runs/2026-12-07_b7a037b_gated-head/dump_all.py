"""For every cached claim pair: the forced choice as if the gate let every pair through, where the memo holds it
(NaN where it does not). Memo only.
    python dump_all.py choice_all.npz"""
import math, sys, tempfile
from pathlib import Path
import numpy as np
from rag import Assistant, get_settings
from rag.answering.stance import excerpt_of
from rag.evaluation.bench import stance_train as T
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import pairs

shared = shared_data("scifact").parent
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
judge = T.judge_for(a)
out = {}
for split in ("train", "dev"):
    C = []
    for p in pairs(shared, split, 0):
        ex = excerpt_of(judge.scorer, p.statement, p.abstract, sentences=judge.sentences)
        key = judge.memo_key(p.statement, p.kind, p.title, ex)
        if key not in judge.memo or not T.contrast_cached(judge, p, ex):
            continue
        c = float("nan")
        if p.kind == "claim" and judge.opposite_key(p.statement) in judge.opposites:
            opp = judge.opposite(p.statement)
            if opp is not None and all(k in judge.memo for k in judge.contrast_keys(p.statement, opp, p.title, ex)):
                c = judge.preference(p.statement, opp, p.title, ex)[0]
        C.append(c)
    out[f"{split}_choice"] = np.asarray(C)
    print(split, len(C), int(np.isfinite(out[f"{split}_choice"]).sum()), file=sys.stderr)
np.savez_compressed(sys.argv[1], **out)

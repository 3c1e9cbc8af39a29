"""Dump the stance head's features for every cached pair (memo only, asks the model nothing).
    python dump.py features.npz
Reads pairs exactly as `stance-train --cached-only` does and also keeps, per pair, whether the forced choice
was asked (the gate let it through), its source and kind."""
import sys, tempfile
from pathlib import Path
import numpy as np
from rag import Assistant, get_settings
from rag.answering.stance import wants_opposite
from rag.evaluation.bench import stance_train as T
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import pairs
from rag.answering.stance import excerpt_of

shared = shared_data("scifact").parent
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
judge = T.judge_for(a)
out = {}
for split in ("train", "dev"):
    X, Y, K, S, G, I = [], [], [], [], [], []
    for p in pairs(shared, split, 0):
        ex = excerpt_of(judge.scorer, p.statement, p.abstract, sentences=judge.sentences)
        key = judge.memo_key(p.statement, p.kind, p.title, ex)
        if key not in judge.memo or not T.contrast_cached(judge, p, ex):
            continue
        x, tokens = T.pair_features(judge, p, ex)
        assert tokens == 0
        X.append(x); Y.append(p.label); K.append(p.kind); S.append(p.source); I.append(str(p.key))
        G.append(wants_opposite(p.kind, judge.memo.get(key)))
    out.update({f"{split}_x": np.asarray(X), f"{split}_y": np.asarray(Y), f"{split}_kind": np.asarray(K),
                f"{split}_source": np.asarray(S), f"{split}_gated": np.asarray(G), f"{split}_id": np.asarray(I)})
    print(split, len(Y), file=sys.stderr)
np.savez_compressed(sys.argv[1], **out)

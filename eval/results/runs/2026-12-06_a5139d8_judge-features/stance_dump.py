"""Dump raw judge quantities for stance train/dev pairs from the memo (no LLM asked: uncached pairs are skipped)."""
import json, sys, tempfile
from pathlib import Path
import numpy as np
from rag import Assistant, get_settings
from rag.answering.stance import excerpt_of, features, wants_opposite
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import pairs
from rag.evaluation.bench.stance_train import judge_for

shared = shared_data("scifact").parent
assistant = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
judge = judge_for(assistant)
out = open(sys.argv[1], "w")
for split in ("train", "dev"):
    n = 0
    for p in pairs(shared, split, 0):
        ex = excerpt_of(judge.scorer, p.statement, p.abstract, sentences=judge.sentences)
        key = judge.memo_key(p.statement, p.kind, p.title, ex)
        if key not in judge.memo:
            continue
        probs = dict(judge.memo[key])
        opp = None; flipped = None
        if wants_opposite(p.kind, probs):
            ok = judge.opposite_key(p.statement)
            if ok not in judge.opposites:
                continue
            opp = judge.opposites[ok]["text"] or None
            if opp and " ".join(opp.split()).lower() != " ".join(p.statement.split()).lower():
                k2 = judge.memo_key(opp, "claim", p.title, ex)
                if k2 not in judge.memo:
                    continue
                flipped = dict(judge.memo[k2])
        x = features(p.statement, ex, probs, flipped)
        out.write(json.dumps({"split": split, "source": p.source, "key": p.key, "kind": p.kind, "label": p.label,
                              "probs": probs, "opp": opp, "flipped": flipped, "x": x.tolist(),
                              "statement": p.statement, "excerpt": ex.text}) + "\n")
        n += 1
    print(split, n, file=sys.stderr)

"""Ask the forced choice (prompts/contrast.md) on the claim pairs the gate skips (P(not stated) >= 0.5), into the memo."""
import sys, time, tempfile
from pathlib import Path
from rag import Assistant, get_settings
from rag.answering.stance import excerpt_of, wants_opposite
from rag.evaluation.bench.stance_train import judge_for
from rag.evaluation.bench._stance import pairs
from rag.evaluation.bench._shared import shared_data
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
j = judge_for(a)
shared = shared_data("scifact").parent
for split in sys.argv[1:]:
    t0, n = time.time(), 0
    for p in pairs(shared, split, 0):
        if p.kind != "claim": continue
        ex = excerpt_of(j.scorer, p.statement, p.abstract, sentences=j.sentences)
        probs = j.memo.get(j.memo_key(p.statement, p.kind, p.title, ex))
        if probs is None or wants_opposite(p.kind, probs): continue
        opp = j.opposite(p.statement)
        if opp is None: continue
        j.preference(p.statement, opp, p.title, ex); n += 1
        if n % 10 == 0: print(split, n, f"{time.time()-t0:.0f}s", flush=True)
    print(split, "done", n, flush=True)

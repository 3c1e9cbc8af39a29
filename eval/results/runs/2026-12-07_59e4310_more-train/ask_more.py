"""Ask the model for more SciFact train evidence pairs (source "scifact": SUPPORT/CONTRADICT with their evidence
abstract, NEI with its cited one), in the seeded order of `stance-train`, until a deadline; everything goes to the
stance memo, so `stance-train --cached-only` then fits on them. Dev pairs are never asked here.
    python ask_more.py DEADLINE_UNIX_SECONDS"""
import sys, tempfile, time
from pathlib import Path
from rag import Assistant, get_settings
from rag.answering.stance import excerpt_of
from rag.evaluation.bench import stance_train as T
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import pairs

deadline = float(sys.argv[1])
shared = shared_data("scifact").parent
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
judge = T.judge_for(a)
todo = [p for p in pairs(shared, "train", 0) if p.source == "scifact"]
asked = skipped = 0
t0 = time.time()
for p in todo:
    if time.time() > deadline:
        break
    ex = excerpt_of(judge.scorer, p.statement, p.abstract, sentences=judge.sentences)
    if judge.memo_key(p.statement, p.kind, p.title, ex) in judge.memo and T.contrast_cached(judge, p, ex):
        skipped += 1
        continue
    x, tokens = T.pair_features(judge, p, ex)
    asked += 1
    if asked % 10 == 0:
        print(f"{time.strftime('%H:%M:%S')} asked {asked} ({(time.time() - t0) / asked:.1f} s each), cached {skipped}, "
              f"of {len(todo)}", flush=True)
print(f"done: asked {asked}, cached {skipped}, of {len(todo)} scifact train pairs", flush=True)

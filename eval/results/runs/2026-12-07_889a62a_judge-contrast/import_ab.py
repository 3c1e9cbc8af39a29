"""Put the forced-choice probabilities measured by ab.py into the label-probability memo under the product's keys."""
import json, gzip, math
from rag.answering.stance import StanceJudge, Excerpt
from rag.evaluation.bench._stance import Memo, default_memo
from rag import get_settings
memo = Memo(default_memo(get_settings()))
judge = StanceJudge(None, None, memo=memo)
pairs = {(r["split"], r["source"], r["key"], r["label"]): r for r in map(json.loads, open("/tmp/xe/pairs.jsonl"))}
dump = {(r["split"], r["source"], r["key"], r["label"]): r for r in map(json.loads, gzip.open("/work/main/eval/results/runs/2026-12-06_a5139d8_judge-features/pairs-dump.jsonl.gz", "rt"))}
added = mism = 0
for split in ("dev", "train"):
    for l in open(f"/tmp/xe/ab-{split}.jsonl"):
        r = json.loads(l); k = (split, r["source"], r["key"], r["label"])
        p, d = pairs[k], dump[k]
        if d["excerpt"] != p["excerpt"]: mism += 1
        ex = Excerpt(text=p["excerpt"], spans=(), best=(0, 0), cosine=0.0)
        for key, lo in zip(judge.contrast_keys(p["statement"], d["opp"], p["title"], ex), (r["ab"], r["ba"])):
            a = 1 / (1 + math.exp(-lo))
            if key not in memo:
                memo[key] = {"a": a, "b": 1 - a}; added += 1
print("added", added, "excerpt mismatches", mism)

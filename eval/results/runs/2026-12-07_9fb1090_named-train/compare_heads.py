"""The head before (633 train claim pairs: what the memo held) and after (the named train set, 659 claim pairs),
on the same dev claim pairs (every cached dev pair, as `stance-train --cached-only` reads them).
    python ../2026-12-07_b7a037b_gated-head/dump.py features.npz   (memo only)
    git show 9fb1090:rag/data/stance_head.json > before.json
    python compare_heads.py features.npz before.json ../../../../rag/data/stance_head.json > compare.txt"""
import json, sys
import numpy as np
from rag.answering.stance import STANCES, StanceHead

d = np.load(sys.argv[1])
k = d["dev_kind"] == "claim"
X, y = d["dev_x"][k], d["dev_y"][k]
print(f"dev claim pairs {len(y)}, supports/refutes/not stated {np.bincount(y, minlength=3).tolist()}")
print("head | train claim pairs | balanced | recall s/r/n | supports called refutes | refutes called supports")
for path in sys.argv[2:]:
    h = StanceHead.from_json(json.loads(open(path).read()))
    p = np.asarray([max(range(3), key=lambda i: h.probabilities("claim", x)[STANCES[i]]) for x in X])
    rec = [float((p[y == i] == i).mean()) for i in range(3)]
    print(f"{path} | {h.meta['train pairs']['claim']} | {np.mean(rec):.3f} | {'/'.join(f'{r:.2f}' for r in rec)} | "
          f"{(p[y == 0] == 1).mean():.2f} | {(p[y == 1] == 0).mean():.2f}")

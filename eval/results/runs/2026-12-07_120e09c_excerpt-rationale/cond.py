"""Head accuracy on SciFact dev evidence pairs, split by whether the 2-sentence excerpt holds a rationale; and a
position prior for the excerpt (score + beta * relative position), rationale hit rate on train vs dev."""
import json, sys, tempfile
from pathlib import Path
import numpy as np
from rag import Assistant, get_settings
from rag.answering.stance import split_sentences, fit_head
from rag.evaluation.bench import stance_train as T
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import scifact_corpus, split_of

shared = shared_data("scifact").parent
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
judge = T.judge_for(a)
corpus = scifact_corpus(shared)
d = np.load(sys.argv[1])
k = d["train_kind"] == "claim"
h = fit_head(d["train_x"][k], d["train_y"][k])
w, b, m, s = h
pred = {}
for split in ("train", "dev"):
    z = ((d[f"{split}_x"] - m) / s) @ w.T + b
    for i, (src, pid) in enumerate(zip(d[f"{split}_source"], d[f"{split}_id"])):
        if src == "scifact":
            pred[pid] = (int(z[i].argmax()), int(d[f"{split}_y"][i]))
rows = [json.loads(l) for l in (shared / "scifact" / "claims_train.jsonl").read_text().splitlines()]
data = []
for r in rows:
    ev = r["evidence"]
    if not ev: continue
    labels = {e["label"] for sets in ev.values() for e in sets}
    if len(labels) != 1: continue
    doc = next(iter(ev))
    if int(doc) not in corpus: continue
    text = corpus[int(doc)]["text"]
    spans = [s for s in split_sentences(text) if text[s[0]:s[1]].strip()]
    rat = sorted({i for e in ev[doc] for i in e["sentences"]})
    if max(rat) >= len(spans): continue
    texts = [text[a_:b_] for a_, b_ in spans]
    sc = judge.scorer.score(r["claim"], texts)
    data.append((split_of("scifact", int(r["id"])), str(r["id"]), np.asarray(sc, float), set(rat), len(spans)))
# conditional accuracy (shipped excerpt = top-2 by score)
for split in ("train", "dev"):
    acc = {True: [], False: []}
    for sp, pid, sc, rat, n in data:
        if sp != split or pid not in pred: continue
        hit = bool(set(np.argsort(-sc)[:2]) & rat)
        p, y = pred[pid]; acc[hit].append(p == y)
    print(split, "stance right | excerpt holds rationale:", f"{np.mean(acc[True]):.2f} ({len(acc[True])})",
          "| misses:", f"{np.mean(acc[False]):.2f} ({len(acc[False])})")
for beta in (0.0, 0.1, 0.2, 0.3, 0.5, 0.8):
    out = []
    for split in ("train", "dev"):
        hits = [bool(set(np.argsort(-(sc + beta * np.arange(n) / max(1, n - 1)))[:2]) & rat)
                for sp, pid, sc, rat, n in data if sp == split]
        out.append(f"{split} {np.mean(hits):.3f}")
    print(f"beta {beta}: excerpt(2) holds a rationale:", ", ".join(out))

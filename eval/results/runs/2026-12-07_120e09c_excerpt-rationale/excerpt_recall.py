"""Does the judge's excerpt hold a SciFact rationale sentence? Scorer only (no LLM).
    python excerpt_recall.py > excerpt_recall.txt
Rationale sentence indices (claims_train) are mapped onto split_sentences of the corpus text where the sentence
counts agree; other abstracts are left out (counted)."""
import json, sys, tempfile
from pathlib import Path
import numpy as np
from rag import Assistant, get_settings
from rag.answering.stance import excerpt_of, split_sentences
from rag.evaluation.bench import stance_train as T
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import scifact_corpus, split_of

shared = shared_data("scifact").parent
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
judge = T.judge_for(a)
corpus = scifact_corpus(shared)
feat = np.load(sys.argv[1]) if len(sys.argv) > 1 else None
rows = [json.loads(l) for l in (shared / "scifact" / "claims_train.jsonl").read_text().splitlines()]
stats = {}
for r in rows:
    ev = r["evidence"]
    if not ev:
        continue
    labels = {e["label"] for sets in ev.values() for e in sets}
    if len(labels) != 1:
        continue
    label = labels.pop()
    split = split_of("scifact", int(r["id"]))
    doc = next(iter(ev))  # the pair uses the first evidence abstract
    if int(doc) not in corpus:
        continue
    text = corpus[int(doc)]["text"]
    spans = [s for s in split_sentences(text) if text[s[0]:s[1]].strip()]
    rat = sorted({i for e in ev[doc] for i in e["sentences"]})
    key = (split, label)
    st = stats.setdefault(key, {"n": 0, "mapped": 0, "hit2": 0, "hit3": 0, "best": 0, "nsent": []})
    st["n"] += 1
    # map by counting sentences: only when the splitter agrees with max index
    if max(rat) >= len(spans):
        continue
    st["mapped"] += 1
    st["nsent"].append(len(spans))
    rat_spans = {spans[i] for i in rat}
    for n, name in ((2, "hit2"), (3, "hit3")):
        ex = excerpt_of(judge.scorer, r["claim"], text, sentences=n)
        if rat_spans & set(ex.spans):
            st[name] += 1
        if n == 2 and ex.best in rat_spans:
            st["best"] += 1
for (split, label), st in sorted(stats.items()):
    m = max(st["mapped"], 1)
    print(f"{split} {label}: pairs {st['n']}, mapped {st['mapped']}, excerpt(2) holds a rationale {st['hit2']/m:.2f},"
          f" best sentence is one {st['best']/m:.2f}, excerpt(3) {st['hit3']/m:.2f}, median sentences {np.median(st['nsent']):.0f}")

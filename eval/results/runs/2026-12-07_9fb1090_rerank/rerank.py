"""Does a sentence-level rerank of the top-N hybrid hits put the gold abstract into the top 10 more often?"""
import sys, time, json
from pathlib import Path
import numpy as np
from rag.evaluation.bench.claim_check import index
from rag.evaluation.bench._stance import scifact_claims, split_of
from rag.corpus.chunking import split_sentences

shared = Path("/work/shared/data")
a = index(shared, None)
split = sys.argv[1]; N = int(sys.argv[2]); limit = int(sys.argv[3])
claims = [c for c in scifact_claims(shared) if c.label in ("SUPPORT", "CONTRADICT") and split_of("scifact", c.id) == split][:limit]
emb = lambda texts: np.asarray(a.embeddings.embed_documents(list(texts)), dtype=np.float32)
rows = []
t_all = 0.0
for i, c in enumerate(claims):
    hits = a.search(c.claim, k=N)
    t0 = time.perf_counter()
    sents, owner = [], []
    for j, h in enumerate(hits):
        ab = h.abstract or h.text
        for s, e in split_sentences(ab):
            if ab[s:e].strip():
                sents.append(ab[s:e]); owner.append(j)
    vecs = emb([c.claim, *sents])
    cos = vecs[1:] @ vecs[0]
    maxcos = np.full(len(hits), -1.0)
    for k, j in enumerate(owner):
        maxcos[j] = max(maxcos[j], cos[k])
    t_all += time.perf_counter() - t0
    gold = {str(d) for d in c.evidence}
    rows.append({"id": c.id, "label": c.label, "pids": [h.paper_id for h in hits], "dense": [h.dense_score for h in hits],
                 "bm25": [h.bm25_score for h in hits], "maxcos": maxcos.tolist(), "gold": sorted(gold)})
    if i % 20 == 0:
        print(i, f"{t_all/(i+1):.2f} s/claim rerank", file=sys.stderr, flush=True)
Path(f"rerank_{split}.json").write_text(json.dumps(rows))
print("done", len(rows), f"{t_all/len(rows):.2f} s/claim")

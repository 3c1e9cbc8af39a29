from pathlib import Path
HERE = Path(__file__).parent  # the record folder: each script reads and writes its files here
import json, sys, numpy as np
from rag.evaluation.bench.claim_check import index
from rag.evaluation.bench._stance import scifact_claims, split_of
from rag.answering.stance import excerpt_of
from rag.corpus.tokens import stems
shared = Path('/work/shared/data')
a = index(shared, None)
judge = a._pipeline.stance
out = []
claims = [c for c in scifact_claims(shared) if c.label != 'MIXED']
for i, c in enumerate(claims):
    split = split_of('scifact', c.id)
    hits = a.search(c.claim, k=10)
    gold = set(c.evidence) if c.label != 'NEI' else set(c.cited)
    for r, h in enumerate(hits):
        ab = h.abstract or h.text
        ex = excerpt_of(judge.scorer, c.claim, ab, sentences=judge.sentences)
        said, read = set(stems(c.claim)), set(stems(ex.text))
        cov = len(said & read) / len(said) if said else 0.0
        out.append(dict(claim=c.id, split=split, label=c.label, rank=r, pid=h.paper_id, gold=h.paper_id.isdigit() and int(h.paper_id) in gold, cos=ex.cosine, cov=cov, dense=h.dense_score))
    if i % 50 == 0: print(i, len(claims), file=sys.stderr, flush=True)
json.dump(out, open(str(HERE / 'retrcos.json'), 'w'))

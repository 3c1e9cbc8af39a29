"""Dump every stance pair (train and dev) with the runtime excerpt, plus the LLM's cached opposite of the claim."""
import json, sys, hashlib
from pathlib import Path
import numpy as np
from rag import get_settings
from rag.models.embedding import *  # noqa
from rag.answering.evidence import SentenceScorer
from rag.answering.stance import excerpt_of
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import pairs, Memo, opposites_memo, default_memo
from rag import Assistant
a = Assistant(get_settings())
emb = a.embeddings
scorer = SentenceScorer(lambda texts: np.asarray(emb.embed_documents(list(texts)), dtype=np.float32))
shared = shared_data("scifact").parent
opp = opposites_memo(default_memo(a.settings))
from rag.answering.stance import StanceJudge
judge = StanceJudge(None, scorer, memo=None, opposites=opp)
out = open(sys.argv[1], "w")
for split in ("train", "dev"):
    for p in pairs(shared, split, 0):
        ex2 = excerpt_of(scorer, p.statement, p.abstract, sentences=2)
        ex3 = excerpt_of(scorer, p.statement, p.abstract, sentences=3)
        o = opp.get(judge.opposite_key(p.statement)) if p.kind == "claim" else None
        o = o["text"] if o else None
        out.write(json.dumps({"split": split, "source": p.source, "key": p.key, "kind": p.kind, "statement": p.statement,
                              "title": p.title, "excerpt": ex2.text, "excerpt3": ex3.text, "label": p.label,
                              "opposite": o}) + "\n")
out.close()

"""Gold papers of a claim-check record, with the judge's raw quantities from the memo (no LLM)."""
import json, sys, tempfile
from pathlib import Path
from rag import Assistant, get_settings
from rag.answering.stance import excerpt_of, features, wants_opposite
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import scifact_claims, scifact_corpus
from rag.evaluation.bench.stance_train import judge_for

shared = shared_data("scifact").parent
corpus = scifact_corpus(shared)
claims = {c.id: c for c in scifact_claims(shared)}
rec = json.load(open(sys.argv[1]))
assistant = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
judge = judge_for(assistant)
out = open(sys.argv[2], "w")
lab = {"SUPPORT": 0, "CONTRADICT": 1, "NEI": 2}
miss = 0
for row in rec["figures"]["rows"]:
    c = claims[row["id"]]
    gold = set(c.evidence) if c.label != "NEI" else set(c.cited)
    for d in gold:
        doc = corpus[d]
        ex = excerpt_of(judge.scorer, c.claim, doc["text"], sentences=judge.sentences)
        key = judge.memo_key(c.claim, "claim", doc["title"], ex)
        if key not in judge.memo:
            miss += 1
            continue
        probs = dict(judge.memo[key]); opp = flipped = None
        if wants_opposite("claim", probs):
            ok = judge.opposite_key(c.claim)
            opp = judge.opposites[ok]["text"] if ok in judge.opposites else None
            if opp:
                k2 = judge.memo_key(opp, "claim", doc["title"], ex)
                flipped = dict(judge.memo[k2]) if k2 in judge.memo else None
                if flipped is None:
                    miss += 1
        x = features(c.claim, ex, probs, flipped)
        out.write(json.dumps({"id": c.id, "doc": d, "label": lab[c.label], "kind": "claim", "split": "cc",
                              "probs": probs, "opp": opp, "flipped": flipped, "x": x.tolist(),
                              "statement": c.claim, "excerpt": ex.text}) + "\n")
print("missing", miss, file=sys.stderr)

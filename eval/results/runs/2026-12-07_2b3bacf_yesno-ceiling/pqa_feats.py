"""Memo-only: features of every PubMedQA question whose statement, label probabilities and choices are cached."""
import tempfile, json, sys
from pathlib import Path
import numpy as np
from langchain_core.messages import HumanMessage
from rag import Assistant, get_settings
from rag.answering import stance as S
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import split_of, pubmedqa
from rag.evaluation.bench.stance_train import judge_for

shared = shared_data("scifact").parent
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
judge = judge_for(a)
def boom():
    raise RuntimeError("not cached")
judge.chat = boom
rows = []
miss = {"statement": 0, "label": 0, "choice": 0}
for q in pubmedqa(shared):
    key = S._key([HumanMessage(judge.statement_template.format(question=" ".join(q["question"].split())))])
    if key not in judge.opposites:
        miss["statement"] += 1; continue
    st = judge.statement_of(q["question"])
    kind = "claim" if st else "question"
    st = st or q["question"]
    ex = S.excerpt_of(judge.scorer, st, q["abstract"], sentences=judge.sentences)
    if judge.memo_key(st, kind, "", ex) not in judge.memo:
        miss["label"] += 1; continue
    try:
        probs, pref, _ = judge.measured(st, kind, "", ex, opposite=True)
    except RuntimeError:
        miss["choice"] += 1; continue
    x = S.features(st, ex, probs, pref)
    rows.append({"id": q["id"], "split": split_of("pubmedqa", q["id"]), "label": q["label"], "kind": kind,
                 "x": x.tolist(), "asked": pref is not None, "statement": st})
print(len(rows), miss, file=sys.stderr)
Path("pqa_feats.json").write_text(json.dumps(rows))

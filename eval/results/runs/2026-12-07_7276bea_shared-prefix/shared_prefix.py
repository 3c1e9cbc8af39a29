"""Would a contrast prompt that opens like the label prompt be cheaper, and does it still separate?
    python shared_prefix.py ROWS.jsonl [N_SUPPORTS]
Dev claim pairs of the stance split that pass the gate (from the memo): every refuting one and a seeded sample of
supporting ones. Per pair, in the product's order, timed call by call against the embedded server: the label
prompt (as shipped), then the shipped contrast prompts (both orders); then the label prompt again, then the
"shared" contrast prompts: the label prompt's system message and its user text up to the excerpt, followed by the
choice. Logs seconds per call, prompt tokens, and both preferences. Nothing is written to the memo."""
import json, math, random, sys, time
from pathlib import Path
from langchain_core.messages import HumanMessage, SystemMessage
from rag import Assistant, get_settings
from rag.answering.judge import label_probabilities
from rag.answering.stance import CHOICE_LETTERS, LABEL_WORDS, excerpt_of, wants_opposite
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import pairs
from rag.evaluation.bench.stance_train import judge_for
import tempfile

CHOICE = "Which statement does the excerpt support?\nA: {first}\nB: {second}\nAnswer A or B.\nAnswer:"
outp = Path(sys.argv[1]); n_sup = int(sys.argv[2]) if len(sys.argv) > 2 else 19
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
j = judge_for(a)
dev = [p for p in pairs(shared_data("scifact").parent, "dev", 0) if p.kind == "claim" and p.stance != "not stated"]
gated = []
for p in dev:
    ex = excerpt_of(j.scorer, p.statement, p.abstract, sentences=j.sentences)
    probs = j.memo.get(j.memo_key(p.statement, p.kind, p.title, ex))
    if probs is not None and wants_opposite(p.kind, probs) and j.opposite_key(p.statement) in j.opposites:
        opp = j.opposite(p.statement)
        if opp:
            gated.append((p, ex, opp))
ref = [g for g in gated if g[0].stance == "refutes"]
sup = [g for g in gated if g[0].stance == "supports"]
random.Random(0).shuffle(sup)
chosen = ref + sup[:n_sup]
random.Random(1).shuffle(chosen)
print(len(gated), "gated;", len(ref), "refutes,", len(sup), "supports; asking", len(chosen), flush=True)
chat = j.chat()

def timed(messages, labels):
    t = time.perf_counter()
    probs, usage = label_probabilities(chat, messages, labels)
    return probs, time.perf_counter() - t, int(usage.get("input_tokens") or 0)

def pref(results):
    eps = 1e-4
    odds = [math.log(max(eps, r[0].get("a", 0)) / max(eps, r[0].get("b", 0))) for r in results]
    return (odds[0] - odds[1]) / 2

with open(outp, "w") as out:
    for p, ex, opp in chosen:
        label = j.messages(p.statement, p.kind, p.title, ex)
        rec = {"key": p.key, "stance": p.stance}
        l1 = timed(label, LABEL_WORDS)
        shipped = [timed(j.contrast_messages(x, y, p.title, ex), CHOICE_LETTERS) for x, y in ((p.statement, opp), (opp, p.statement))]
        l2 = timed(label, LABEL_WORDS)
        head = str(label[1].content)
        opening = head[: head.index(ex.text) + len(ex.text)] + "\n"
        shared = [timed([SystemMessage(str(label[0].content)), HumanMessage(opening + CHOICE.format(first=x, second=y))], CHOICE_LETTERS)
                  for x, y in ((p.statement, opp), (opp, p.statement))]
        rec.update(label_s=[round(l1[1], 2), round(l2[1], 2)], shipped_s=[round(r[1], 2) for r in shipped],
                   shared_s=[round(r[1], 2) for r in shared], shipped_pref=pref(shipped), shared_pref=pref(shared),
                   tokens={"label": l1[2], "shipped": [r[2] for r in shipped], "shared": [r[2] for r in shared]})
        out.write(json.dumps(rec) + "\n"); out.flush()
        print(rec["stance"], rec["label_s"], rec["shipped_s"], rec["shared_s"], round(rec["shipped_pref"], 2), round(rec["shared_pref"], 2), flush=True)

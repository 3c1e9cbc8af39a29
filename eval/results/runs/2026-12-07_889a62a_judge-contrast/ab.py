import json, gzip, sys, math, time, numpy as np
from langchain_core.messages import SystemMessage, HumanMessage
from rag import Assistant, get_settings
from rag.answering.judge import label_probabilities
a = Assistant(get_settings()); chat = a.chat_model
titles = {(r["source"], r["key"]): r["title"] for r in map(json.loads, open("/tmp/xe/pairs.jsonl"))}
dump = [json.loads(l) for l in gzip.open("/work/main/eval/results/runs/2026-12-06_a5139d8_judge-features/pairs-dump.jsonl.gz", "rt")]
split = sys.argv[1]; n = int(sys.argv[2])
rows = [r for r in dump if r["split"] == split and r["kind"] == "claim" and r.get("opp") and r.get("flipped")][:n]
done = {(json.loads(l)["source"], json.loads(l)["key"], json.loads(l)["label"]) for l in open(f"/tmp/xe/ab-{split}.jsonl")} if __import__("os").path.exists(f"/tmp/xe/ab-{split}.jsonl") else set()
rows = [r for r in rows if (r["source"], r["key"], r["label"]) not in done]
SYS = "You compare two statements with an excerpt of a paper. Answer with one letter."
def ask(title, passage, s1, s2):
    u = f"Paper: {title}\nExcerpt: {passage}\nWhich statement does the excerpt support?\nA: {s1}\nB: {s2}\nAnswer A or B.\nAnswer:"
    p, _ = label_probabilities(chat() if callable(chat) else chat, [SystemMessage(SYS), HumanMessage(u)], ["a", "b"])
    return math.log(max(1e-4, p["a"]) / max(1e-4, p["b"]))
out = open(f"/tmp/xe/ab-{split}.jsonl", "a"); t0 = time.time()
for i, r in enumerate(rows):
    t = titles.get((r["source"], r["key"]), "")
    s1 = ask(t, r["excerpt"], r["statement"], r["opp"]); s2 = ask(t, r["excerpt"], r["opp"], r["statement"])
    out.write(json.dumps({"key": r["key"], "source": r["source"], "label": r["label"], "ab": s1, "ba": s2, "x": r["x"]}) + "\n"); out.flush()
    if i % 10 == 0: print(i, f"{time.time()-t0:.0f}s", flush=True)

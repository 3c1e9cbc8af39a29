"""Does "rewrite the claim so the excerpt supports it, then choose" catch changed facts? Dev claims file only.

For each true claim and perturbed copy (seeded sample), on its own abstract's excerpt (the judge's excerpt_of):
the model rewrites the claim to agree with the excerpt (fewest words changed); if the rewrite differs, it is made
to choose between claim and rewrite on the excerpt, both orders (StanceJudge.preference). Logs the rewrite,
the preference and the word-rule verdict (claims.shown).
    python correct_claims.py eval/data/neurips2026_claims.jsonl ROWS.jsonl [N_PER_KIND]
"""
import json, random, sys, time
from pathlib import Path
from langchain_core.messages import HumanMessage
from rag import Assistant
from rag.answering.stance import excerpt_of
from rag.evaluation.bench._splits import indexed
from rag.evaluation.bench.claims import load_claims, cases, shown
from rag.evaluation.bench.stance_train import judge_for

PROMPT = (
    "Paper: {title}\nExcerpt: {passage}\n\n"
    "Rewrite the claim below so that the excerpt supports it, changing as few words as possible. "
    "If the excerpt already supports it, write it unchanged. Write only the claim.\n\n"
    "Claim: {claim}\nRewritten:"
)
rows = [r for r in load_claims(Path(sys.argv[1])) if not r.get("unsupported")]
outp = Path(sys.argv[2]); n = int(sys.argv[3]) if len(sys.argv) > 3 else 30
done = {json.loads(l)["claim"] for l in open(outp)} if outp.exists() else set()
items = [(r, k, c) for r in rows for k, c in cases(r)]
random.Random(0).shuffle(items)
chosen, per = [], {}
for r, k, c in items:
    if per.get(k, 0) < n:
        per[k] = per.get(k, 0) + 1; chosen.append((r, k, c))
out = open(outp, "a")
with indexed(None) as a:
    papers = a.read([Assistant.bundled_corpus()])
    j = judge_for(a)
    for r, kind, claim in chosen:
        if claim in done: continue
        t = time.time()
        p = next(p for p in papers if r["quote"] in p.abstract)
        ex = excerpt_of(j.scorer, claim, p.abstract, sentences=j.sentences)
        msgs = [HumanMessage(PROMPT.format(title=p.title, passage=ex.text, claim=claim))]
        said = str(j.chat().invoke(msgs, max_tokens=90, temperature=0.0).content).strip()
        fixed = said.splitlines()[0].strip() if said else ""
        same = " ".join(fixed.split()).rstrip(".").lower() == " ".join(claim.split()).rstrip(".").lower()
        pref = None if same or not fixed else j.preference(claim, fixed, p.title, ex)[0]
        rec = {"id": r["id"], "kind": kind, "claim": claim, "rewrite": fixed, "same": same, "preference": pref,
               "word_rules_shown": shown(a, r["question"], claim), "s": round(time.time() - t, 2)}
        out.write(json.dumps(rec) + "\n"); out.flush()
        print(kind, same, pref, rec["word_rules_shown"], rec["s"], flush=True)

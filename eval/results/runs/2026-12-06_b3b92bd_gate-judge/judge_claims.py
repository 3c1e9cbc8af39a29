"""Does the stance judge separate true claims from changed ones? Dev claims file, own abstract, with word rules."""
import json, sys, time
from pathlib import Path
from rag import Assistant
from rag.evaluation.bench._splits import indexed
from rag.evaluation.bench.claims import load_claims, cases, shown
rows = load_claims(Path(sys.argv[1]))
outp = Path(sys.argv[2]); done = {json.loads(l)['claim'] for l in open(outp)} if outp.exists() else set()
out = open(outp, 'a')
with indexed(None) as a:
    papers = a.read([Assistant.bundled_corpus()])
    j = a._pipeline.stance
    for r in rows:
        if r.get('unsupported'): continue
        p = next(p for p in papers if r['quote'] in p.abstract)
        for kind, claim in cases(r):
            if claim in done: continue
            t = time.time()
            jj = j.judge(claim, p.title, p.abstract, kind='claim', opposite=True)
            rec = {'id': r['id'], 'kind': kind, 'claim': claim, 'word_rules_shown': shown(a, r['question'], claim), 'p': jj.probabilities, 'stance': jj.stance, 'labels': jj.label_probabilities, 's': round(time.time() - t, 2)}
            out.write(json.dumps(rec) + '\n'); out.flush()
            print(rec['id'], kind, rec['word_rules_shown'], rec['p'], rec['s'], flush=True)

import json, random, sys, time
from pathlib import Path
from rag import Assistant, get_settings
from rag.evaluation.external import load_pubmedqa, pubmedqa_settings
rows = json.load(open('eval/results/runs/2026-12-06_79716c8_pubmedqa-test/pubmedqa-pqal-dev.json'))['rows']
items = {it['id']: it for it in load_pubmedqa(Path('../shared/data/pubmedqa/pqal_dev.json'))}
random.Random(7).shuffle(rows)
rows = rows[:int(sys.argv[1])]
a = Assistant.from_settings(pubmedqa_settings(get_settings()))
j = a._pipeline.stance
out = open(sys.argv[2], 'a')  # e.g. a new file beside this script's rows.jsonl
for i, r in enumerate(rows):
    it = items[r['id']]
    t = time.time()
    st = j.statement_of(it['question'])
    rec = {'id': r['id'], 'label': r['label'], 'harness_pred': r['pred'], 'harness_p': r['verdict_probabilities'], 'statement': st, 'answer': r['answer']}
    if st is not None:
        for name, title in (('notitle', ''), ('title', f"PubMed {r['id']}")):
            jj = j.judge(st, title, it['abstract'], kind='claim', opposite=True)
            rec[name] = jj.probabilities
            rec[name + '_excerpt'] = str(jj.excerpt)[:300]
    rec['s'] = time.time() - t
    out.write(json.dumps(rec) + '\n'); out.flush()
    print(i, rec['label'], rec['harness_pred'], rec.get('notitle'), rec.get('title'), r['verdict_probabilities'], round(rec['s'],1), flush=True)

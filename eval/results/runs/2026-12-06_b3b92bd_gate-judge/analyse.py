import json, numpy as np
rs=[json.loads(l) for l in open('eval/results/runs/2026-12-06_b3b92bd_gate-judge/rows.jsonl')]
from collections import defaultdict
by=defaultdict(list)
for r in rs: by[r['kind']].append(r)
print({k:len(v) for k,v in by.items()})
for k,v in by.items():
    ps=np.array([r['p']['supports'] for r in v]); wr=np.mean([r['word_rules_shown'] for r in v])
    print(k, 'word rules shown', round(wr,2), 'P(sup) mean', round(ps.mean(),3), 'stance', {s: sum(r['stance']==s for r in v) for s in ('supports','refutes','not stated')})
def auc(pos, neg):
    pos, neg = np.asarray(pos), np.asarray(neg)
    return float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (len(pos) * len(neg)))
t_ps = [r['p']['supports'] for r in by['true']]
for k in ('number', 'entity', 'negation'):
    print('AUC P(supports) true vs', k, round(auc(t_ps, [r['p']['supports'] for r in by[k]]), 3),
          '| among word-rule-shown:', round(auc([r['p']['supports'] for r in by['true'] if r['word_rules_shown']], [r['p']['supports'] for r in by[k] if r['word_rules_shown']] or [0]), 3), sum(r['word_rules_shown'] for r in by[k]))
# gate: shown when the word rules show it AND P(supports) >= t
for t in np.linspace(0, 0.6, 13):
    sh = np.mean([r['word_rules_shown'] and r['p']['supports'] >= t for r in by['true']])
    ent = 1 - np.mean([r['word_rules_shown'] and r['p']['supports'] >= t for r in by['entity']])
    num = 1 - np.mean([r['word_rules_shown'] and r['p']['supports'] >= t for r in by['number']])
    neg = 1 - np.mean([r['word_rules_shown'] and r['p']['supports'] >= t for r in by['negation']])
    print(f't {t:.2f} true shown {sh:.2f} entity rejected {ent:.2f} number {num:.2f} negation {neg:.2f}')

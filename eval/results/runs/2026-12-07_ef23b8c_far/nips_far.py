"""The far rule on true claims over the 19 NeurIPS abstracts (eval/data/neurips2026_claims.jsonl: each claim
paraphrases one abstract, with a quote of it): how often would the claim's own abstract not be asked? And how many
of the other 18 abstracts would be?"""
import json, tempfile
from pathlib import Path
import numpy as np
from rag.assistant import Assistant
from rag.settings import get_settings
from rag.answering.stance import excerpt_of, too_far
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))  # run from the repository root
a.ingest([Path('rag/data/neurips2026_abstracts.txt')])
papers = a.papers()
judge = a._pipeline.stance
rows = [r for r in (json.loads(l) for l in open('eval/data/neurips2026_claims.jsonl') if l.startswith('{')) if r.get('quote')]
own_far = other_far = other_n = 0
for r in rows:
    own = [p for p in papers if ' '.join(r['quote'].split()) in ' '.join(p.abstract.split())]
    assert len(own) == 1, r['id']
    for p in papers:
        far = too_far(r['claim'], excerpt_of(judge.scorer, r['claim'], p.abstract, sentences=2))
        if p.paper_id == own[0].paper_id:
            own_far += far
            if far: print('own abstract far:', r['claim'][:90])
        else:
            other_far += far; other_n += 1
print(f'{len(rows)} true claims: own abstract not asked {own_far}; other abstracts not asked {other_far}/{other_n} = {other_far/other_n:.3f}')
pf = pn = 0
for r in rows:
    own = [p for p in papers if ' '.join(r['quote'].split()) in ' '.join(p.abstract.split())][0]
    for q in r.get('perturbed', []):
        pn += 1
        far = too_far(q['claim'], excerpt_of(judge.scorer, q['claim'], own.abstract, sentences=2))
        pf += far
        if far: print('perturbed, own abstract far:', q['kind'], q['claim'][:90])
print(f'{pn} changed-fact claims: own abstract not asked {pf}')

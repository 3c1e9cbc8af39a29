from pathlib import Path
HERE = Path(__file__).parent  # the record folder: each script reads and writes its files here
import json, numpy as np
d=json.load(open(str(HERE / 'retrcos.json')))
for split in ('train','dev'):
  r=[x for x in d if x['split']==split]
  cos=np.array([x['cos'] for x in r]); cov=np.array([x['cov'] for x in r])
  gold=np.array([x['gold'] and x['label']!='NEI' for x in r])
  neigold=np.array([x['gold'] and x['label']=='NEI' for x in r])
  nclaims=len({x['claim'] for x in r})
  print(split, 'claims',nclaims,'papers',len(r),'evidence papers',gold.sum(), 'nei cited', neigold.sum())
  print(' cos quantiles', np.quantile(cos,[.1,.25,.5,.75]).round(3), 'evidence', np.quantile(cos[gold],[.01,.05,.1,.25]).round(3))
  for t in (0.3,0.35,0.4,0.45,0.5):
    s=cos<t
    print(f'  cos<{t}: papers skipped {s.mean():.3f}, evidence skipped {s[gold].sum()}/{gold.sum()} = {s[gold].mean():.3f}')
  for t,c in ((0.45,0.3),(0.5,0.3),(0.5,0.25),(0.55,0.3),(0.5,0.4)):
    s=(cos<t)&(cov<c)
    print(f'  cos<{t}&cov<{c}: papers skipped {s.mean():.3f}, evidence skipped {s[gold].sum()}/{gold.sum()} = {s[gold].mean():.3f}')
print('--- either rule')
for split in ('train','dev'):
  r=[x for x in d if x['split']==split]
  cos=np.array([x['cos'] for x in r]); cov=np.array([x['cov'] for x in r]); rank=np.array([x['rank'] for x in r])
  gold=np.array([x['gold'] and x['label']!='NEI' for x in r])
  s=(cos<0.4)|((cos<0.5)&(cov<0.3))
  per=np.array([s[rank==i].mean() for i in range(10)])
  print(split,'skipped',s.mean().round(3),'evidence skipped',s[gold].sum(),'/',gold.sum(),'evidence share among skipped',(s&gold).sum()/s.sum(), 'by rank',per.round(2))
  # per claim skipped count distribution
  ids=np.array([x['claim'] for x in r]); 
  cnt=[s[ids==c].sum() for c in set(ids)]
  print('  per-claim skipped: mean',np.mean(cnt).round(2),'median',np.median(cnt), 'zero',np.mean(np.array(cnt)==0).round(2))

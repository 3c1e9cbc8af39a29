from pathlib import Path
HERE = Path(__file__).parent  # the record folder: each script reads and writes its files here
import numpy as np, json
from rag.answering.stance import bundled_head, STANCES
h=bundled_head()
d=np.load(str(HERE / 'feats.npz'))
for split in 't','d':
  x,y,k=d['x'+split],d['y'+split],d['k'+split]
  m=k=='claim'; x,y=x[m],y[m]
  pred=np.array([max(range(3), key=lambda i: list(h.probabilities('claim',r).values())[i]) for r in x])
  pnot=np.exp(x[:,1])*x[:,2]  # p(not)=exp(log(pnot/pyes))*pyes
  gated = pnot<0.5
  cos,cov=x[:,3],x[:,4]
  for name,s in (('cos<0.4',cos<0.4),('cos<0.5&cov<0.3',(cos<0.5)&(cov<0.3)),('either',(cos<0.4)|((cos<0.5)&(cov<0.3)))):
    ev=s&(y<2)
    print(split,name,'pairs',s.sum(),'gated among them',(s&gated).sum(),'| evidence skipped',ev.sum(),'of which head right',(ev&(pred==y)).sum(),'head wrong-direction', (ev&(pred<2)&(pred!=y)).sum(), '| notstated skipped', (s&(y==2)).sum(), 'head wrongly decided', (s&(y==2)&(pred<2)).sum())

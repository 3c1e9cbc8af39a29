from pathlib import Path
HERE = Path(__file__).parent  # the record folder: each script reads and writes its files here
import numpy as np
from rag.answering.stance import bundled_head
h=bundled_head()
d=np.load(str(HERE / 'feats.npz'))
x,y,k=d['xt'],d['yt'],d['kt']; m=k=='claim'; x,y=x[m],y[m]
cos,cov=x[:,3],x[:,4]
s=(cos<0.4)|((cos<0.5)&(cov<0.3))
P=np.array([list(h.probabilities('claim',r).values()) for r in x[s]])
print(s.sum(), P.mean(0).round(3), np.median(P,0).round(3), 'label share', np.bincount(y[s],minlength=3)/s.sum())

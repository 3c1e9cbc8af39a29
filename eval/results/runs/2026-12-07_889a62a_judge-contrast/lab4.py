import numpy as np, sys
exec(open("lab3.py").read().split("V = {")[0])
def fitp(x, y, l2=1.0, power=1.0, steps=3000, lr=0.5):
    mean = x.mean(0); scale = x.std(0); scale[scale < 1e-6] = 1
    xs = (x - mean) / scale; n, f = xs.shape; k = 3
    oh = np.eye(k)[y]; counts = np.bincount(y, minlength=k).astype(float)
    sw = ((n / (k * np.maximum(counts, 1))) ** power)[y]
    w = np.zeros((k, f)); b = np.zeros(k)
    for _ in range(steps):
        z = xs @ w.T + b; z -= z.max(1, keepdims=True); p = np.exp(z); p /= p.sum(1, keepdims=True)
        g = (p - oh) * sw[:, None] / n
        w -= lr * (g.T @ xs + l2 * w / n); b -= lr * g.sum(0)
    return lambda xx: (lambda z: np.exp(z - z.max(1, keepdims=True)) / np.exp(z - z.max(1, keepdims=True)).sum(1, keepdims=True))(((xx - mean) / scale) @ w.T + b)
cols = [0,1,2,3,4,5,6,8]
for power in (1.0, 0.75, 0.5, 0.25, 0.0):
    m = fitp(Xtr[:, cols], ytr, l2=1.0, power=power); p = m(Xdv[:, cols]); pred = p.argmax(1)
    rec = [float((pred[ydv == i] == i).mean()) for i in range(3)]
    print(f"power {power}: bal {np.mean(rec):.3f} rec S {rec[0]:.2f} R {rec[1]:.2f} N {rec[2]:.2f} | S->R {(pred[ydv==0]==1).mean():.2f} R->S {(pred[ydv==1]==0).mean():.2f} N decided {(pred[ydv==2]!=2).mean():.2f} N->R {(pred[ydv==2]==1).mean():.2f} pred {np.bincount(pred,minlength=3).tolist()}")

"""Screen candidate features: held-out loss of v5 + each candidate (mg, eg fitted), K fixed."""
import os, sys, json
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from features import NAMES
from chessaccel.host import tune
from chessaccel.contract.evalweights import WEIGHTS
from chessaccel.contract.evaltables import PHASE_WEIGHT, TAPER_SHIFT
from chessaccel.host.tune import weight_vectors

d = tune.load_data(sys.argv[1])
C = np.load(sys.argv[2]).astype(np.float64)
held_mask, _ = tune._held_out(d, 0.1, 1)
y, ke = tune.targets(d, "engine", ~held_mask)
mg, eg = weight_vectors(WEIGHTS)
base = tune.exact_eval(d, mg, eg).astype(np.float64)
k = tune.fit_k(base[~held_mask], y[~held_mask])
w = np.asarray(PHASE_WEIGHT, dtype=np.float64)[d["phase"].astype(int)] / (1 << TAPER_SHIFT)
sign = 1.0  # exact_eval is white's view; features are white minus black
def fit(cols):
    X = np.hstack([C[:, cols] * w[:, None], C[:, cols] * (1 - w)[:, None]])
    tr = ~held_mask
    theta = np.zeros(X.shape[1])
    lam = 1e-3
    def loss(th, m):
        p = tune._sigmoid(k * (base[m] + X[m] @ th) / 400.0)
        return float(np.mean((p - y[m]) ** 2))
    cur = loss(theta, tr)
    for it in range(30):
        z = k * (base[tr] + X[tr] @ theta) / 400.0
        p = tune._sigmoid(z)
        r = p - y[tr]
        J = (p * (1 - p) * k / 400.0)[:, None] * X[tr]
        g = J.T @ r
        H = J.T @ J
        step = np.linalg.solve(H + lam * np.diag(np.diag(H) + 1e-12), -g)
        new = loss(theta + step, tr)
        if new < cur:
            theta, cur, lam = theta + step, new, lam / 3
        else:
            lam *= 10
    return theta, cur, loss(theta, held_mask)
b_tr = float(np.mean((tune._sigmoid(k * base[~held_mask] / 400) - y[~held_mask]) ** 2))
b_he = float(np.mean((tune._sigmoid(k * base[held_mask] / 400) - y[held_mask]) ** 2))
print(f"positions {len(y)}  K {k:.4f}  base train {b_tr:.6f} held {b_he:.6f}")
rows = []
for i, n in enumerate(NAMES):
    if not C[:, i].any():
        continue
    th, tr, he = fit([i])
    rows.append((he - b_he, n, th, tr - b_tr))
for dh, n, th, dt in sorted(rows):
    print(f"{n:26s} held {dh*1e6:+8.1f}e-6  train {dt*1e6:+8.1f}e-6  mg {th[0]:+8.2f} eg {th[1]:+8.2f}")
cols = [i for i, n in enumerate(NAMES) if C[:, i].any()]
th, tr, he = fit(cols)
print(f"all together: held {(he-b_he)*1e6:+.1f}e-6 train {(tr-b_tr)*1e6:+.1f}e-6")
for j, i in enumerate(cols):
    print(f"   {NAMES[i]:26s} mg {th[j]:+8.2f} eg {th[j+len(cols)]:+8.2f}")
print("greedy:")
chosen = []
avail = [i for i in cols]
prev = b_he
for step in range(9):
    best = None
    for i in avail:
        th, tr, he = fit(chosen + [i])
        if best is None or he < best[0]:
            best = (he, i, th, tr)
    he, i, th, tr = best
    chosen.append(i); avail.remove(i)
    print(f" +{NAMES[i]:24s} held {(he-b_he)*1e6:+8.1f}e-6 (step {(he-prev)*1e6:+7.1f})  train {(tr-b_tr)*1e6:+8.1f}e-6  ",
          " ".join(f"{NAMES[c]}=({th[j]:+.1f},{th[j+len(chosen)]:+.1f})" for j, c in enumerate(chosen)))
    prev = he

"""numpy beside the host gather/scatter/float16/scan/sort rows (issue 28): G1, W8 in float32 and
float16, S1, cumsum, sort. A short companion of peers_cpu.py (numpy alone, no numexpr or numba) for
`arrayc-bench --workload G1,W8-f32-1e8,W8-f16-1e8,S1,cumsum,sort`. Prints one line per peer:
workload tag, peer, median ms. The harness runs it with a Python that has numpy (its peer_python:
ARRAYC_PEER_PYTHON, else the first candidate that imports numpy)."""
import time
import numpy as np

def med(fn, reps=7, warm=1):
    for _ in range(warm): fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    ts.sort(); return ts[len(ts)//2] * 1e3

def rec(w, peer, ms): print(f"{w:28s} {peer:22s} {ms:10.3f} ms", flush=True)

rng = np.random.default_rng(1)
n = 10_000_000
xg = rng.standard_normal(n).astype(np.float32); ig = rng.integers(0, n, n, dtype=np.int64)
rec("G1 gather 1e7 float32", "numpy take", med(lambda: np.take(xg, ig), reps=11))
rec("G1 gather 1e7 float32", "numpy x[i]", med(lambda: xg[ig], reps=11))
del xg, ig

def w8(x):
    return np.where(x > 0, x * 1.5 + 0.25, np.exp(x) - 1) * np.cos(x) + np.sin(x) * 0.5
for dt in (np.float32, np.float16):
    x = rng.standard_normal(100_000_000).astype(dt)
    rec(f"W8 1e8 {np.dtype(dt).name}", "numpy (unfused)", med(lambda: w8(x), reps=3))
    del x

k = 1_000_000
xs = rng.standard_normal(n).astype(np.float32); iz = rng.integers(0, n, k, dtype=np.int64)
vs = rng.standard_normal(k).astype(np.float32)
def add_at():
    y = xs.copy(); np.add.at(y, iz, vs); return y
def bincount():
    return xs + np.bincount(iz, weights=vs, minlength=n).astype(np.float32)
rec("S1 scatter-add 1e7 float32", "numpy copy+add.at", med(add_at, reps=7))
rec("S1 scatter-add 1e7 float32", "numpy bincount (f64)", med(bincount, reps=7))

del xs, iz, vs
# The harness's cumsum-f32-1e8 and sort-f32-1e7 cases (as peers_cpu.py)
x = np.random.default_rng(12).standard_normal(100_000_000).astype(np.float32)
rec("cumsum 1e8 float32", "numpy", med(lambda: np.cumsum(x), reps=5))
x = np.random.default_rng(13).standard_normal(10_000_000).astype(np.float32)
rec("sort 1e7 float32", "numpy (quicksort)", med(lambda: np.sort(x), reps=5))
rec("sort 1e7 float32", "numpy (stable)", med(lambda: np.sort(x, kind="stable"), reps=5))

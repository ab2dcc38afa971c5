"""The reference workloads (docs/workloads.md) timed on the CPU peers available from Debian (numpy, numexpr, numba).
Prints one line per workload: name, peer, median ms. Run with /usr/bin/python3."""
import time, sys, os
import numpy as np, numexpr as ne, numba
from numba import njit

def med(fn, reps=7, warm=2):
    for _ in range(warm): fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    ts.sort(); return ts[len(ts)//2] * 1e3

rows = []
def rec(w, peer, ms): rows.append((w, peer, ms)); print(f"{w:28s} {peer:22s} {ms:10.3f} ms", flush=True)

# W1: numba seed, cos(x)**2 + sin(x)**2 over 1e7
for dt in (np.float64, np.float32):
    x = np.arange(1e7, dtype=dt)
    tag = f"W1 cos2sin2 1e7 {np.dtype(dt).name}"
    rec(tag, "numpy (unfused)", med(lambda: np.cos(x)**2 + np.sin(x)**2, reps=5))
    rec(tag, "numexpr (2 thr)", med(lambda: ne.evaluate("cos(x)**2 + sin(x)**2"), reps=5))
    f = njit(lambda x: np.cos(x)**2 + np.sin(x)**2)
    t = time.perf_counter(); f(x); first = (time.perf_counter() - t) * 1e3
    rec(tag, "numba njit first call", first)
    rec(tag, "numba njit", med(lambda: f(x), reps=5))
    fp = njit(parallel=True)(lambda x: np.cos(x)**2 + np.sin(x)**2)
    fp(x)
    rec(tag, "numba njit parallel", med(lambda: fp(x), reps=5))

# W2: JAX seed SELU on 1e6 float32
x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
def selu_np(x, a=1.67, l=1.05): return l * np.where(x > 0, x, a * np.exp(x) - a)
rec("W2 selu 1e6 f32", "numpy (unfused)", med(lambda: selu_np(x), reps=21))
rec("W2 selu 1e6 f32", "numexpr (2 thr)", med(lambda: ne.evaluate("1.05*where(x>0, x, 1.67*exp(x)-1.67)"), reps=21))
@njit
def selu_nb(x):
    return 1.05 * np.where(x > 0, x, 1.67 * np.exp(x) - 1.67)
t = time.perf_counter(); selu_nb(x); rec("W2 selu 1e6 f32", "numba njit first call", (time.perf_counter()-t)*1e3)
rec("W2 selu 1e6 f32", "numba njit", med(lambda: selu_nb(x), reps=21))

# W3: Nx seed, dot(10000x784, 784x10) f32
rng = np.random.default_rng(1)
a = rng.random((10000, 784), dtype=np.float32); w = rng.standard_normal((784, 10)).astype(np.float32)
rec("W3 dot 10000x784x10 f32", "numpy+OpenBLAS", med(lambda: a @ w, reps=21))
# W4: numpy seed, dot 1000x1000 f64
a = rng.random((1000, 1000)); b = rng.random((1000, 1000))
rec("W4 dot 1000^3 f64", "numpy+OpenBLAS", med(lambda: a @ b, reps=11))
# W5: JAX seed, dot(x, x.T) 3000x3000 f32
x3 = rng.standard_normal((3000, 3000)).astype(np.float32)
rec("W5 dot x x.T 3000 f32", "numpy+OpenBLAS", med(lambda: x3 @ x3.T, reps=5))
# W9 (issue 29): relu(x @ w + b), 256x784 . 784x256 f32
xl = rng.uniform(-1, 1, (256, 784)).astype(np.float32); wl = (rng.standard_normal((784, 256)) * 0.05).astype(np.float32)
bl = rng.standard_normal(256).astype(np.float32)
rec("W9 relu(x@w+b) 256 f32", "numpy+OpenBLAS", med(lambda: np.maximum(xl @ wl + bl, 0), reps=51))
xl = rng.uniform(-1, 1, (4096, 4096)).astype(np.float32); wl = (rng.standard_normal((4096, 4096)) * 0.05).astype(np.float32)
bl = rng.standard_normal(4096).astype(np.float32)
rec("W9 relu(x@w+b) 4096^3 f32", "numpy+OpenBLAS", med(lambda: np.maximum(xl @ wl + bl, 0), reps=3))
# W6: vmap seed, (150x100) matrix times batch of 10 vectors
m = rng.standard_normal((150, 100)).astype(np.float32); bv = rng.standard_normal((10, 100)).astype(np.float32)
rec("W6 batched matvec", "numpy loop+stack", med(lambda: np.stack([m @ v for v in bv]), reps=201))
rec("W6 batched matvec", "numpy batched", med(lambda: bv @ m.T, reps=201))
# W7: d2l exercise, 1000 matmuls of 100x100 and log tr(M M^T)
ms = rng.standard_normal((100, 100)).astype(np.float32)
def w7():
    s = 0.0
    for i in range(1000):
        M = ms @ ms; s += float(np.sum(M * M))
    return s
rec("W7 1000x(100^3)+trMMt", "numpy", med(w7, reps=5))

# W10 (issue 29): row softmax of 4096 x 4096 f32
xs = np.random.default_rng(15).standard_normal((4096, 4096)).astype(np.float32)
def softmax_np(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
rec("W10 softmax 4096^2 f32", "numpy", med(lambda: softmax_np(xs), reps=5))
# G1 (indexing): gather of 1e7 random int64 indices from a float32 source of 1e7
n = 10_000_000
xg = rng.standard_normal(n).astype(np.float32); ig = rng.integers(0, n, n, dtype=np.int64)
rec("G1 gather 1e7 float32", "numpy take", med(lambda: np.take(xg, ig), reps=11))
rec("G1 gather 1e7 float32", "numpy x[i]", med(lambda: xg[ig], reps=11))
# Issue 28: scans and sorts (the harness's cumsum-f32-1e8 and sort-f32-1e7 cases)
x = np.random.default_rng(12).standard_normal(100_000_000).astype(np.float32)
rec("cumsum 1e8 float32", "numpy", med(lambda: np.cumsum(x), reps=5))
x = np.random.default_rng(13).standard_normal(10_000_000).astype(np.float32)
rec("sort 1e7 float32", "numpy (quicksort)", med(lambda: np.sort(x), reps=5))
rec("sort 1e7 float32", "numpy (stable)", med(lambda: np.sort(x, kind="stable"), reps=5))

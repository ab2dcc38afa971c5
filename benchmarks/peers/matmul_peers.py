"""Peers for arrayc-matmul-bench (issue 29): numpy, and PyTorch when importable, on the same
shapes: W3 (10000x784 . 784x10 f32), W4 (1000^3 f64), W5 (x @ x.T, 3000^2 f32) and the layer
relu(x @ w + b) (W9) at 256x784x256, 10000x784x10, 2048^3 (and 4096^3 with --big), f32.
With --packed, only `a @ b` for the shapes of `arrayc-matmul-bench --packed`, numpy and PyTorch;
with --batched, the batches of `arrayc-matmul-bench --batched`.
Prints one line per row: name, peer, median ms.  Usage: python3 matmul_peers.py [--big] [--packed] [--reps N]"""
import sys, time

import numpy as np

big = "--big" in sys.argv
reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 11


def med(fn, reps=reps, warm=2):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def rec(name, peer, ms):
    print(f"{name:32s} {peer:26s} {ms:10.3f} ms", flush=True)


rng = np.random.default_rng(0)

if "--batched" in sys.argv:  # the shapes of arrayc-matmul-bench --batched: torch.bmm, numpy matmul
    cases = [(256, 32, 32, 32, "f32", False), (64, 64, 64, 64, "f32", False), (32, 128, 128, 128, "f32", False),
             (16, 256, 256, 256, "f32", False), (8, 512, 512, 512, "f32", False), (96, 128, 64, 128, "f32", True),
             (96, 128, 128, 64, "f32", False), (4, 1024, 1024, 1024, "f32", False), (64, 64, 64, 64, "f64", False),
             (32, 128, 128, 128, "f64", False)]
    try:
        import torch
    except ImportError:
        torch = None
    for bt, m, k, n, t, tb in cases:
        dt = np.float64 if t == "f64" else np.float32
        a = rng.random((bt, m, k)).astype(dt)
        b = rng.random((bt, n, k)).astype(dt).transpose(0, 2, 1) if tb else rng.random((bt, k, n)).astype(dt)
        name = f"{bt} x ({m}x{k} . {k}x{n}{' T' if tb else ''}) {t}"
        rec(name, "numpy", med(lambda: a @ b))
        if torch is not None:
            with torch.no_grad():
                ta, tbb = torch.from_numpy(a), torch.from_numpy(b)
                rec(name, f"torch {torch.__version__} bmm", med(lambda: torch.bmm(ta, tbb)))
    sys.exit(0)

if "--packed" in sys.argv:  # the shapes of arrayc-matmul-bench --packed, values in [0, 1)
    shapes = [(512, 512, 512, "f32"), (768, 768, 768, "f32"), (1024, 1024, 1024, "f32"), (1536, 1536, 1536, "f32"),
              (2048, 2048, 2048, "f32"), (2048, 784, 256, "f32"), (256, 4096, 256, "f32"), (4096, 4096, 4096, "f32"),
              (3000, 3000, 3000, "f32"), (8192, 1024, 1024, "f32"), (1000, 1000, 1000, "f64"), (2048, 2048, 2048, "f64"),
              (2048, 2048, 2048, "T f32"), (4096, 4096, 4096, "T f32")]  # "T": a is the transpose of a k x m array
    try:
        import torch
    except ImportError:
        torch = None
    for m, k, n, t in shapes:
        dt = np.float64 if t.endswith("f64") else np.float32
        a = rng.random((k, m)).astype(dt).T if t.startswith("T") else rng.random((m, k)).astype(dt)
        b = rng.random((k, n)).astype(dt)
        r = max(3, reps // 4) if m * k * n > 1 << 30 else reps
        name = f"T {m}x{k} . {k}x{n} f32" if t.startswith("T") else f"{m}x{k} . {k}x{n} {t}"
        rec(name, "numpy", med(lambda: a @ b, reps=r))
        if torch is not None:
            with torch.no_grad():
                ta, tb = torch.from_numpy(a), torch.from_numpy(b)
                rec(name, f"torch {torch.__version__}", med(lambda: ta @ tb, reps=r))
    sys.exit(0)
layers = [(256, 784, 256), (10000, 784, 10), (2048, 2048, 2048)] + ([(4096, 4096, 4096)] if big else [])

try:
    cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
    blas = f"{cfg.get('name')} {cfg.get('version')}"
except Exception:
    blas = "?"
print(f"numpy {np.__version__} ({blas})")
a3 = rng.random((10000, 784), dtype=np.float32)
w3 = rng.standard_normal((784, 10)).astype(np.float32)
rec("W3 10000x784.784x10 f32", "numpy", med(lambda: a3 @ w3))
a4 = rng.random((1000, 1000))
b4 = rng.random((1000, 1000))
rec("W4 1000^3 f64", "numpy", med(lambda: a4 @ b4))
x5 = rng.standard_normal((3000, 3000)).astype(np.float32)
rec("W5 3000x3000.T f32", "numpy (syrk)", med(lambda: x5 @ x5.T, reps=max(3, reps // 2)))
for m, k, n in layers:
    x = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    w = (rng.standard_normal((k, n)) * 0.05).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    rec(f"W9 relu(x@w+b) {m}x{k}x{n}", "numpy", med(lambda: np.maximum(x @ w + b, 0), reps=max(3, reps // (4 if m >= 4096 else 1))))

try:
    import torch
except ImportError:
    torch = None
if torch is None:
    print("PyTorch: not importable; no torch rows")
    sys.exit(0)
print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
with torch.no_grad():
    t3, tw3 = torch.from_numpy(a3), torch.from_numpy(w3)
    rec("W3 10000x784.784x10 f32", "torch", med(lambda: t3 @ tw3))
    t4, tb4 = torch.from_numpy(a4), torch.from_numpy(b4)
    rec("W4 1000^3 f64", "torch", med(lambda: t4 @ tb4))
    t5 = torch.from_numpy(x5)
    rec("W5 3000x3000.T f32", "torch", med(lambda: t5 @ t5.T, reps=max(3, reps // 2)))
    for m, k, n in layers:
        x = torch.empty(m, k).uniform_(-1, 1)
        w = torch.randn(k, n) * 0.05
        b = torch.randn(n)
        r = max(3, reps // (4 if m >= 4096 else 1))
        rec(f"W9 relu(x@w+b) {m}x{k}x{n}", "torch eager", med(lambda: torch.relu(x @ w + b), reps=r))
        rec(f"W9 relu(x@w+b) {m}x{k}x{n}", "torch addmm+relu_", med(lambda: torch.relu_(torch.addmm(b, x, w)), reps=r))
    try:
        layer = torch.compile(lambda x, w, b: torch.relu(x @ w + b))
        for m, k, n in layers:
            x = torch.empty(m, k).uniform_(-1, 1)
            w = torch.randn(k, n) * 0.05
            b = torch.randn(n)
            t = time.perf_counter()
            layer(x, w, b)
            first = (time.perf_counter() - t) * 1e3
            r = max(3, reps // (4 if m >= 4096 else 1))
            rec(f"W9 relu(x@w+b) {m}x{k}x{n}", f"torch.compile (1st {first:.0f} ms)", med(lambda: layer(x, w, b), reps=r))
    except Exception as e:  # no C++ compiler, or an old torch
        print(f"torch.compile: not available ({type(e).__name__}: {str(e)[:120]})")

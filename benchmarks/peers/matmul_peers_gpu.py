"""GPU peers for `arrayc-matmul-bench --gpu` (issue 29): cuBLAS through PyTorch on the same shapes,
timed the same way (each call on the host up to torch.cuda.synchronize(), medians in ms):
W3 (10000x784 . 784x10 f32), W4 (1000^3 f64), W5 (torch.mm(x, x.T), 3000^2 f32; cuBLAS computes
the whole product; cuBLAS's syrk, one triangle, through CuPy where installed) and the layer relu(x @ w + b) (W9) at 256x784x256, 2048^3 (and 4096^3 with
--big): PyTorch eager (three kernels), addmm + relu_ (cuBLAS's bias in the product, then relu),
and torch.compile where it works. TF32 is off (exact float32, as arrayc's default); --tf32 turns
it on (as arrayc-matmul-bench --tf32).
float16/bfloat16 (the H rows, issue 29): x @ w at 4096^3 and torch.mm(x, x.T) at 3000^2, on
cuBLAS's tensor cores with float32 accumulation (allow_fp16/bf16_reduced_precision_reduction
off, as arrayc), and for float16 4096^3 also with PyTorch's default (reduced precision allowed).
With --tf32, the T rows: float32 on TF32, 4096^3 x @ w, x @ y.T and x.T @ w, 3000^2 x @ y.T.
HS: float16 x @ w at other sizes (1024^3 to 8192^3, unbalanced shapes), as arrayc-matmul-bench --case HS.
--case NAME: the rows whose name starts with NAME (W3, W4, W5, W9, H, HS, T; HS only for HS).
Usage: python3 matmul_peers_gpu.py [--big] [--reps N] [--tf32] [--case NAME]"""
import sys, time

import torch

big = "--big" in sys.argv
reps = int(sys.argv[sys.argv.index("--reps") + 1]) if "--reps" in sys.argv else 11
tf32 = "--tf32" in sys.argv
only = sys.argv[sys.argv.index("--case") + 1] if "--case" in sys.argv else ""
torch.backends.cuda.matmul.allow_tf32 = tf32
torch.backends.cudnn.allow_tf32 = tf32
dev = torch.device("cuda:0")


def med(fn, reps=reps, warm=2):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def rec(name, peer, ms):
    if not name.startswith(only):
        return
    print(f"{name:32s} {peer:30s} {ms:10.3f} ms", flush=True)


print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}, tf32 {'on' if tf32 else 'off'}")
with torch.no_grad():
    a3 = torch.rand(10000, 784, device=dev)
    w3 = torch.randn(784, 10, device=dev)
    rec("W3 10000x784.784x10 f32", "torch (cuBLAS)", med(lambda: a3 @ w3))
    a4 = torch.rand(1000, 1000, device=dev, dtype=torch.float64)
    b4 = torch.rand(1000, 1000, device=dev, dtype=torch.float64)
    rec("W4 1000^3 f64", "torch (cuBLAS)", med(lambda: a4 @ b4))
    x5 = torch.randn(3000, 3000, device=dev)
    rec("W5 3000x3000.T f32", "torch.mm(x, x.T) (cuBLAS)", med(lambda: torch.mm(x5, x5.T)))
    # float16/bfloat16 (issue 29): TFLOP/s as 2 m n k per call.
    cm = torch.backends.cuda.matmul
    for dt, tag in ((torch.float16, "f16"), (torch.bfloat16, "bf16")):
        if only and not "H".startswith(only[:1]):
            break
        cm.allow_fp16_reduced_precision_reduction = False
        cm.allow_bf16_reduced_precision_reduction = False
        xh = torch.rand(4096, 4096, device=dev).to(dt)
        wh = torch.randn(4096, 4096, device=dev).to(dt)
        ms = med(lambda: xh @ wh)
        rec(f"H {tag} 4096^3 x@w", f"torch (cuBLAS) {2 * 4096**3 / ms * 1e-9:.0f} TFLOP/s", ms)
        if dt == torch.float16:
            cm.allow_fp16_reduced_precision_reduction = True
            ms = med(lambda: xh @ wh)
            rec(f"H {tag} 4096^3 x@w", f"torch, reduced-precision sum {2 * 4096**3 / ms * 1e-9:.0f}", ms)
            cm.allow_fp16_reduced_precision_reduction = False
        xw = torch.rand(3000, 3000, device=dev).to(dt)
        ms = med(lambda: torch.mm(xw, xw.T))
        rec(f"H {tag} W5 3000x3000.T", f"torch.mm(x, x.T) {2 * 3000**3 / ms * 1e-9:.0f} TFLOP/s", ms)
    # float16 x @ w at other sizes (the HS rows): m x k x n.
    if not only or only == "HS":
        cm.allow_fp16_reduced_precision_reduction = False
        for m, k, n in ((1024, 1024, 1024), (2048, 2048, 2048), (8192, 8192, 8192), (4096, 4096, 1024),
                        (1024, 4096, 4096), (8192, 1024, 8192)):
            xs = torch.rand(m, k, device=dev).half()
            ws = torch.randn(k, n, device=dev).half()
            ms = med(lambda: xs @ ws)
            name = f"HS f16 {m}^3" if m == k == n else f"HS f16 {m}x{k}x{n}"
            rec(name, f"torch (cuBLAS) {2 * m * k * n / ms * 1e-9:.0f} TFLOP/s", ms)
    # float32 on TF32 (--tf32): as arrayc-matmul-bench's T rows.
    if tf32 and (not only or only.startswith("T")):
        for n, case in ((4096, "x@w"), (4096, "x@y.T"), (4096, "x.T@w"), (3000, "x@y.T")):
            xt = torch.rand(n, n, device=dev)
            yt = torch.randn(n, n, device=dev)
            ms = med({"x@w": lambda: xt @ yt, "x@y.T": lambda: xt @ yt.T, "x.T@w": lambda: xt.T @ yt}[case])
            rec(f"T tf32 {n}^{3 if n == 4096 else 2} {case}", f"torch (cuBLAS) {2 * n**3 / ms * 1e-9:.0f} TFLOP/s", ms)
    # One triangle, as arrayc computes x @ x.T: cuBLAS's syrk through CuPy, where installed.
    try:
        import cupy, cupy.cublas
        xc = cupy.asarray(x5)
        rec("W5 3000x3000.T f32", "cupy.cublas.syrk (one triangle)", med(lambda: cupy.cublas.syrk("N", xc)))
    except Exception as e:
        print(f"cupy syrk: not available ({type(e).__name__}: {str(e)[:120]})")
    # Batches of 20 queued calls, one synchronize (the kernels' throughput, the dispatch hidden).
    def queued(fn):
        return med(lambda: [fn() for _ in range(20)]) / 20
    rec("W4 1000^3 f64", "torch (cuBLAS), 20 queued", queued(lambda: a4 @ b4))
    rec("W5 3000x3000.T f32", "torch.mm(x, x.T), 20 queued", queued(lambda: torch.mm(x5, x5.T)))
    tiny = torch.rand(8, 8, device=dev, dtype=torch.float64)
    rec("W4 1000^3 f64", "floor: torch 8x8x8 f64", med(lambda: tiny @ tiny))
    layers = [(256, 784, 256), (2048, 2048, 2048)] + ([(4096, 4096, 4096)] if big else [])
    if only and not "W9".startswith(only[:2]):
        layers = []
    for m, k, n in layers:
        x = torch.empty(m, k, device=dev).uniform_(-1, 1)
        w = torch.randn(k, n, device=dev) * 0.05
        b = torch.randn(n, device=dev)
        r = max(3, reps // (4 if m >= 4096 else 1))
        name = f"W9 relu(x@w+b) {m}x{k}x{n}"
        rec(name, "torch eager", med(lambda: torch.relu(x @ w + b), reps=r))
        rec(name, "torch addmm+relu_", med(lambda: torch.relu_(torch.addmm(b, x, w)), reps=r))
        rec(name, "torch mm alone", med(lambda: x @ w, reps=r))
    try:
        if not layers:
            raise SystemExit(0)
        layer = torch.compile(lambda x, w, b: torch.relu(x @ w + b))
        for m, k, n in layers:
            x = torch.empty(m, k, device=dev).uniform_(-1, 1)
            w = torch.randn(k, n, device=dev) * 0.05
            b = torch.randn(n, device=dev)
            t = time.perf_counter()
            layer(x, w, b)
            torch.cuda.synchronize()
            first = (time.perf_counter() - t) * 1e3
            r = max(3, reps // (4 if m >= 4096 else 1))
            rec(f"W9 relu(x@w+b) {m}x{k}x{n}", f"torch.compile (1st {first:.0f} ms)", med(lambda: layer(x, w, b), reps=r))
    except Exception as e:  # no C++ compiler, or an old torch
        print(f"torch.compile: not available ({type(e).__name__}: {str(e)[:120]})")

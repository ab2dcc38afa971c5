"""The reference workloads (docs/workloads.md) timed on the GPU peers (PyTorch, CuPy, JAX, numba-cuda).
One line per measurement: workload, peer, median ms (device time via CUDA events unless noted)."""
import time, os, sys, traceback
import numpy as np
import torch
# Products exact float32, as arrayc's default; ARRAYC_MATMUL_PRECISION=high (arrayc's TF32 setting,
# given to the whole run) lets the peers' float32 products use TF32 too, so both sides match.
TF32 = os.environ.get("ARRAYC_MATMUL_PRECISION", "") == "high"
torch.backends.cuda.matmul.allow_tf32 = TF32
torch.backends.cudnn.allow_tf32 = TF32

def ev_ms(fn, reps=50, warm=5):
    for _ in range(warm): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    ts.sort(); return ts[len(ts)//2]

def wall_ms(fn, reps=50, warm=5):
    for _ in range(warm): fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); ts.append((time.perf_counter()-t)*1e3)
    ts.sort(); return ts[len(ts)//2]

def rec(w, peer, ms, note=""):
    print(f"{w:30s} {peer:30s} {ms:10.4f} ms {note}", flush=True)

def guard(name, f):
    try: f()
    except Exception as e: print(f"{name}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)

print(torch.cuda.get_device_name(0), torch.__version__, flush=True)

def physical():
    n = 1 << 30  # 1 GiB copy
    a = torch.empty(n, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
    ms = ev_ms(lambda: b.copy_(a), reps=20)
    rec("P d2d copy 1GiB", "torch copy_", ms, f"{2*n/ms/1e6:.0f} GB/s (read+write)")
    h = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    ms = ev_ms(lambda: a.copy_(h, non_blocking=True), reps=10)
    rec("P h2d pinned 1GiB", "torch copy_", ms, f"{n/ms/1e6:.0f} GB/s")
    x = torch.randn(8192, 8192, device="cuda"); 
    ms = ev_ms(lambda: x @ x, reps=10)
    rec("P sgemm 8192 fp32 (no tf32)", "torch/cuBLAS", ms, f"{2*8192**3/ms/1e9:.1f} TFLOP/s")
ONLY=os.environ.get("ONLY","").split(",")
if not ONLY[0] or "physical" in ONLY: guard("physical", physical)

def w1_torch():
    for dt in (torch.float32, torch.float64):
        for n in (10_000_000, 100_000_000):
            x = torch.arange(n, dtype=dt, device="cuda")
            tag = f"W1 cos2sin2 {n:.0e} {str(dt)[6:]}"
            rec(tag, "torch eager (unfused)", ev_ms(lambda: torch.cos(x)**2 + torch.sin(x)**2))
            f = torch.compile(lambda x: torch.cos(x)**2 + torch.sin(x)**2)
            t = time.perf_counter(); f(x); torch.cuda.synchronize(); first = (time.perf_counter()-t)*1e3
            rec(tag, "torch.compile first call (wall)", first)
            ms = ev_ms(lambda: f(x))
            rec(tag, "torch.compile (fused)", ms, f"{2*n*x.element_size()/ms/1e6:.0f} GB/s effective")
if not ONLY[0] or "w1_torch" in ONLY: guard("w1_torch", w1_torch)

def w1_cupy():
    import cupy as cp
    for dt in (cp.float32, cp.float64):
        n = 10_000_000
        x = cp.arange(n, dtype=dt)
        tag = f"W1 cos2sin2 1e+07 {np.dtype(dt).name}"
        rec(tag, "cupy eager (unfused)", ev_ms(lambda: cp.cos(x)**2 + cp.sin(x)**2))
        def cos2sin2(x): return cp.cos(x)**2 + cp.sin(x)**2
        f = cp.fuse(cos2sin2)
        t = time.perf_counter(); f(x); cp.cuda.Device().synchronize(); rec(tag, "cupy.fuse first call (wall)", (time.perf_counter()-t)*1e3)
        rec(tag, "cupy.fuse", ev_ms(lambda: f(x)))
if not ONLY[0] or "w1_cupy" in ONLY: guard("w1_cupy", w1_cupy)

def w1_numba():
    from numba import vectorize, float32, float64
    import math
    import cupy as cp
    @vectorize(['float32(float32)', 'float64(float64)'], target='cuda')
    def g(x): return math.cos(x)**2 + math.sin(x)**2
    for dt in (np.float32, np.float64):
        x = cp.arange(10_000_000, dtype=dt)
        tag = f"W1 cos2sin2 1e+07 {np.dtype(dt).name}"
        rec(tag, "numba-cuda vectorize (dev arrays)", ev_ms(lambda: g(x)))
        xh = np.arange(10_000_000, dtype=dt)
        rec(tag, "numba-cuda vectorize (host arrays, wall)", wall_ms(lambda: g(xh), reps=10))
if not ONLY[0] or "w1_numba" in ONLY: guard("w1_numba", w1_numba)

def jax_all():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax, jax.numpy as jnp
    from jax import random, jit, vmap
    print("jax", jax.__version__, jax.devices(), flush=True)
    key = random.PRNGKey(0)
    for dt in (jnp.float32,):
        x = jnp.arange(10_000_000, dtype=dt)
        f = jit(lambda x: jnp.cos(x)**2 + jnp.sin(x)**2)
        t = time.perf_counter(); f(x).block_until_ready(); rec("W1 cos2sin2 1e+07 float32", "jax.jit first call (wall)", (time.perf_counter()-t)*1e3)
        rec("W1 cos2sin2 1e+07 float32", "jax.jit (wall, incl dispatch)", wall_ms(lambda: f(x).block_until_ready()))
    x = random.normal(key, (1_000_000,))
    def slow_selu(x, alpha=1.67, lmbda=1.05): return lmbda * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)
    rec("W2 selu 1e6 f32", "jax eager (wall)", wall_ms(lambda: slow_selu(x).block_until_ready()))
    fast = jit(slow_selu)
    t = time.perf_counter(); fast(x).block_until_ready(); rec("W2 selu 1e6 f32", "jax.jit first call (wall)", (time.perf_counter()-t)*1e3)
    rec("W2 selu 1e6 f32", "jax.jit cached (wall)", wall_ms(lambda: fast(x).block_until_ready(), reps=200))
    a = random.normal(key, (10000, 784)); w = random.normal(key, (784, 10))
    d = jit(lambda a, w: jnp.dot(a, w, precision="highest"))
    d(a, w).block_until_ready()
    rec("W3 dot 10000x784x10 f32", "jax.jit highest (wall)", wall_ms(lambda: d(a, w).block_until_ready(), reps=100))
    x3 = random.normal(key, (3000, 3000), dtype=jnp.float32)
    d2 = jit(lambda x: jnp.dot(x, x.T, precision="highest")); d2(x3).block_until_ready()
    rec("W5 dot x x.T 3000 f32", "jax.jit highest (wall)", wall_ms(lambda: d2(x3).block_until_ready(), reps=50))
    matrix = random.normal(key, (150, 100)); bv = random.normal(key, (10, 100))
    mv = lambda v: jnp.dot(matrix, v)
    rec("W6 batched matvec", "jax loop+stack (wall)", wall_ms(lambda: jnp.stack([mv(v) for v in bv]).block_until_ready(), reps=100))
    rec("W6 batched matvec", "jax vmap (wall)", wall_ms(lambda: vmap(mv)(bv).block_until_ready(), reps=100))
    fv = jit(lambda b: vmap(mv)(b)); fv(bv).block_until_ready()
    rec("W6 batched matvec", "jax jit+vmap (wall)", wall_ms(lambda: fv(bv).block_until_ready(), reps=500))
if not ONLY[0] or "jax" in ONLY: guard("jax", jax_all)

# W8's chain on 1e8 elements of `dt`, eager and through torch.compile.
def w8(dt):
    n = 100_000_000; x = torch.randn(n, device="cuda", dtype=dt)
    chain = lambda x: torch.where(x > 0, x * 1.5 + 0.25, torch.exp(x) - 1.0) * torch.cos(x) + torch.sin(x) * 0.5
    tag = f"W8 8-op chain 1e8 {str(dt)[6:]}"
    rec(tag, "torch eager (unfused)", ev_ms(lambda: chain(x), reps=20))
    fc = torch.compile(chain); fc(x)
    ms = ev_ms(lambda: fc(x), reps=20)
    rec(tag, "torch.compile (fused)", ms, f"{2*n*x.element_size()/ms/1e6:.0f} GB/s effective")

def torch_rest():
    x = torch.randn(1_000_000, device="cuda")
    selu = lambda x: 1.05 * torch.where(x > 0, x, 1.67 * torch.exp(x) - 1.67)
    rec("W2 selu 1e6 f32", "torch eager (unfused)", ev_ms(lambda: selu(x)))
    rec("W2 selu 1e6 f32", "torch eager (wall)", wall_ms(lambda: (selu(x), torch.cuda.synchronize())))
    a = torch.rand(10000, 784, device="cuda"); w = torch.randn(784, 10, device="cuda")
    rec("W3 dot 10000x784x10 f32", "torch/cuBLAS", ev_ms(lambda: a @ w, reps=200))
    a = torch.rand(1000, 1000, device="cuda", dtype=torch.float64); b = torch.rand(1000, 1000, device="cuda", dtype=torch.float64)
    rec("W4 dot 1000^3 f64", "torch/cuBLAS", ev_ms(lambda: a @ b, reps=100))
    x3 = torch.randn(3000, 3000, device="cuda")
    rec("W5 dot x x.T 3000 f32", "torch/cuBLAS", ev_ms(lambda: x3 @ x3.T, reps=50))
    ms_ = torch.randn(100, 100, device="cuda")
    def w7_sync():
        s = 0.0
        for i in range(1000):
            M = ms_ @ ms_; s += float((M * M).sum())
        return s
    def w7_dev():
        acc = torch.zeros((), device="cuda")
        for i in range(1000):
            M = ms_ @ ms_; acc += (M * M).sum()
        return float(acc)
    rec("W7 1000x(100^3)+trMMt", "torch, .item() each (wall)", wall_ms(w7_sync, reps=5, warm=1))
    rec("W7 1000x(100^3)+trMMt", "torch, on-device log (wall)", wall_ms(w7_dev, reps=5, warm=1))
    w8(torch.float32)  # a longer fused chain, bandwidth efficiency at 1e8
if not ONLY[0] or "torch_rest" in ONLY: guard("torch_rest", torch_rest)

# W10 (issue 29): row softmax of 4096 x 4096 f32: torch.softmax, the chain eager and compiled, JAX
def w10():
    x = torch.randn(4096, 4096, device="cuda")
    gb = lambda ms: f"{2*x.numel()*4/ms/1e6:.0f} GB/s (read+write)"
    chain = lambda x: (lambda e: e / e.sum(1, keepdim=True))(torch.exp(x - x.amax(1, keepdim=True)))
    ms = ev_ms(lambda: torch.softmax(x, 1), reps=100); rec("W10 softmax 4096^2 f32", "torch.softmax", ms, gb(ms))
    ms = ev_ms(lambda: chain(x), reps=100); rec("W10 softmax 4096^2 f32", "torch eager (chain)", ms, gb(ms))
    fc = torch.compile(chain); fc(x)
    ms = ev_ms(lambda: fc(x), reps=100); rec("W10 softmax 4096^2 f32", "torch.compile (chain)", ms, gb(ms))
    try:
        import jax, jax.numpy as jnp
        xj = jnp.asarray(x.cpu().numpy())
        f = jax.jit(lambda x: (lambda e: e / e.sum(1, keepdims=True))(jnp.exp(x - x.max(1, keepdims=True))))
        f(xj).block_until_ready()
        ms = wall_ms(lambda: f(xj).block_until_ready(), reps=100); rec("W10 softmax 4096^2 f32", "jax.jit (chain, wall)", ms, gb(ms))
    except ImportError:
        pass
if not ONLY[0] or "w10" in ONLY: guard("w10", w10)

# W9 (issue 29): the dense layer relu(x @ w + b) at 256x784x256 and 4096^3, float32: torch eager,
# addmm + relu_ (what a hand-fused PyTorch layer does), torch.compile, JAX (exact, or TF32 with TF32).
def w9():
    for m, k, n, tag in ((256, 784, 256, "W9 relu(x@w+b) 256 f32"), (4096, 4096, 4096, "W9 relu(x@w+b) 4096^3 f32")):
        g = torch.Generator(device="cuda").manual_seed(9)
        x = torch.rand(m, k, device="cuda", generator=g) * 2 - 1
        w = torch.randn(k, n, device="cuda", generator=g) * 0.05
        b = torch.randn(n, device="cuda", generator=g)
        reps = 200 if m == 256 else 30
        rec(tag, "torch eager", ev_ms(lambda: torch.relu(x @ w + b), reps=reps))
        rec(tag, "torch addmm + relu_", ev_ms(lambda: torch.addmm(b, x, w).relu_(), reps=reps))
        rec(tag, "torch mm alone", ev_ms(lambda: x @ w, reps=reps))
        f = torch.compile(lambda x, w, b: torch.relu(x @ w + b))
        t = time.perf_counter(); f(x, w, b); torch.cuda.synchronize(); rec(tag, "torch.compile first call (wall)", (time.perf_counter() - t) * 1e3)
        rec(tag, "torch.compile", ev_ms(lambda: f(x, w, b), reps=reps))
        try:
            import jax, jax.numpy as jnp
            prec = jax.lax.Precision.DEFAULT if TF32 else jax.lax.Precision.HIGHEST
            xj, wj, bj = (jnp.asarray(t.cpu().numpy()) for t in (x, w, b))
            fj = jax.jit(lambda x, w, b: jnp.maximum(jnp.dot(x, w, precision=prec) + b, 0))
            fj(xj, wj, bj).block_until_ready()
            rec(tag, "jax.jit (wall)", wall_ms(lambda: fj(xj, wj, bj).block_until_ready(), reps=reps))
        except ImportError:
            pass
if not ONLY[0] or "w9" in ONLY: guard("w9", w9)

def launch_latency():
    import cupy as cp
    k = cp.RawKernel(r'extern "C" __global__ void nop(float* x){ }', 'nop')
    x = cp.zeros(1, dtype=cp.float32)
    rec("P empty kernel launch", "cupy RawKernel (event)", ev_ms(lambda: k((1,), (1,), (x,)), reps=500))
    def launch_sync(): k((1,), (1,), (x,)); cp.cuda.Device().synchronize()
    rec("P empty kernel launch+sync", "cupy RawKernel (wall)", wall_ms(launch_sync, reps=500))
if not ONLY[0] or "launch" in ONLY: guard("launch", launch_latency)

# Scans and sorts (issue 28): cumsum of 1e8 and sort of 1e7 float32, the harness's cumsum-f32-1e8
# and sort-f32-1e7 cases.
def scan_sort():
    import cupy as cp
    x = cp.random.standard_normal(100_000_000, dtype=cp.float32)
    rec("cumsum f32 1e8", "cupy.cumsum", ev_ms(lambda: cp.cumsum(x)))
    t = torch.randn(100_000_000, device="cuda")
    rec("cumsum f32 1e8", "torch.cumsum", ev_ms(lambda: torch.cumsum(t, 0)))
    y = cp.random.standard_normal(10_000_000, dtype=cp.float32)
    rec("sort f32 1e7", "cupy.sort", ev_ms(lambda: cp.sort(y)))
    u = torch.randn(10_000_000, device="cuda")
    rec("sort f32 1e7", "torch.sort", ev_ms(lambda: torch.sort(u)))
if not ONLY[0] or "scan_sort" in ONLY: guard("scan_sort", scan_sort)

# Gather and float16 W8 (issue 28): the harness's G1-f32-1e7 (take of 1e7 random int64 indices
# into 1e7 float32) and W8-f16-1e8 (W8's chain on 1e8 float16).
def gather_half():
    import cupy as cp
    n = 10_000_000
    x = cp.random.standard_normal(n, dtype=cp.float32)
    i = cp.random.randint(0, n, n, dtype=cp.int64)
    gb = lambda ms: f"{16*n/ms/1e6:.0f} GB/s counted (16 bytes per element)"
    ms = ev_ms(lambda: cp.take(x, i)); rec("G1 take 1e7 f32", "cupy.take", ms, gb(ms))
    xt = torch.randn(n, device="cuda"); it = torch.randint(0, n, (n,), device="cuda")
    ms = ev_ms(lambda: torch.take(xt, it)); rec("G1 take 1e7 f32", "torch.take", ms, gb(ms))
    ms = ev_ms(lambda: xt[it]); rec("G1 take 1e7 f32", "torch x[i]", ms, gb(ms))
    w8(torch.float16)
if not ONLY[0] or "gather_half" in ONLY: guard("gather_half", gather_half)

# GPU scatter (issue 28): the harness's S2-f32-1e7, x.at(i).add(v) with 1e7 updates into 1e7.
def scatter():
    import cupy as cp, cupyx
    n = k = 10_000_000
    x = cp.random.standard_normal(n, dtype=cp.float32)
    i = cp.random.randint(0, n, k, dtype=cp.int64)
    v = cp.random.standard_normal(k, dtype=cp.float32)
    def cupy_add():
        y = x.copy(); cupyx.scatter_add(y, i, v)
    rec("S2 scatter-add 1e7 f32", "cupyx.scatter_add (copy+add)", ev_ms(cupy_add))
    xt = torch.randn(n, device="cuda"); it = torch.randint(0, n, (k,), device="cuda"); vt = torch.randn(k, device="cuda")
    rec("S2 scatter-add 1e7 f32", "torch.index_add", ev_ms(lambda: xt.index_add(0, it, vt)))
if not ONLY[0] or "scatter" in ONLY: guard("scatter", scatter)

# Float sums (issue 26): the harness's sum-f32-1e8 and sumcols-f32-1e8 cases.
def sums():
    x = torch.rand(100_000_000, device="cuda")
    rec("sum f32 1e8", "torch.sum", ev_ms(lambda: torch.sum(x)))
    m = x.reshape(10_000, 10_000)
    rec("sumcols f32 1e8", "torch.sum", ev_ms(lambda: torch.sum(m, 0)))
if not ONLY[0] or "sums" in ONLY: guard("sums", sums)

"""CPU peers on a many-core host (the GPU machine's 16 cores): numpy, torch eager,
torch.compile (inductor, C++/OpenMP) and jax.jit on CPU, the workloads of docs/workloads.md.
Prints 'workload | peer | median ms'. Run with the python3 that has torch and jax."""
import os, sys, time
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np

def med(fn, reps=7, warm=2):
    for _ in range(warm): fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    ts.sort(); return ts[len(ts) // 2] * 1e3

def rec(w, peer, ms): print(f"{w:26s} | {peer:34s} | {ms:10.3f} ms", flush=True)

def guard(name, fn):
    try: fn()
    except Exception as e: print(f"{name}: FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)

w1 = lambda m: (lambda x: m.cos(x) ** 2 + m.sin(x) ** 2)
selu = lambda m: (lambda x: 1.05 * m.where(x > 0, x, 1.67 * m.exp(x) - 1.67))
w8 = lambda m: (lambda x: m.where(x > 0, x * 1.5 + 0.25, m.exp(x) - 1) * m.cos(x) + m.sin(x) * 0.5)

def numpy_all():
    for dt in (np.float32, np.float64):
        x = np.arange(1e7, dtype=dt)
        rec(f"W1 1e7 {np.dtype(dt).name}", "numpy", med(lambda: w1(np)(x), reps=5))
    x = np.random.default_rng(0).standard_normal(1_000_000).astype(np.float32)
    rec("W2 SELU 1e6 f32", "numpy", med(lambda: selu(np)(x)))
    x = np.random.default_rng(0).standard_normal(100_000_000).astype(np.float32)
    y = np.empty_like(x)
    rec("copy 1e8 f32 (1 thread)", "numpy copyto", med(lambda: np.copyto(y, x), reps=5))

def torch_all():
    import torch
    print("torch", torch.__version__, "threads", torch.get_num_threads(), flush=True)
    for dt in (torch.float32, torch.float64):
        x = torch.arange(10_000_000, dtype=dt)
        tag = f"W1 1e7 {str(dt)[6:]}"
        rec(tag, "torch eager", med(lambda: w1(torch)(x), reps=5))
        f = torch.compile(w1(torch))
        t = time.perf_counter(); f(x); rec(tag, "torch.compile first call", (time.perf_counter() - t) * 1e3)
        rec(tag, "torch.compile", med(lambda: f(x), reps=5))
    x = torch.randn(1_000_000)
    rec("W2 SELU 1e6 f32", "torch eager", med(lambda: selu(torch)(x)))
    f = torch.compile(selu(torch))
    t = time.perf_counter(); f(x); rec("W2 SELU 1e6 f32", "torch.compile first call", (time.perf_counter() - t) * 1e3)
    rec("W2 SELU 1e6 f32", "torch.compile", med(lambda: f(x), reps=21))
    x = torch.randn(100_000_000)
    y = torch.empty_like(x)
    rec("copy 1e8 f32", "torch copy_ (threads)", med(lambda: y.copy_(x), reps=5))
    rec("W8 chain 1e8 f32", "torch eager", med(lambda: w8(torch)(x), reps=3))
    f = torch.compile(w8(torch))
    f(x)
    rec("W8 chain 1e8 f32", "torch.compile", med(lambda: f(x), reps=5))
    a, w = torch.randn(10000, 784), torch.randn(784, 10)
    rec("W3 dot 10000x784x10 f32", "torch (MKL/oneDNN)", med(lambda: a @ w))
    a, b = torch.randn(1000, 1000, dtype=torch.float64), torch.randn(1000, 1000, dtype=torch.float64)
    rec("W4 dot 1000^3 f64", "torch", med(lambda: a @ b))
    x = torch.randn(3000, 3000)
    rec("W5 x.xT 3000 f32", "torch", med(lambda: x @ x.T, reps=5))

def jax_all():
    import jax, jax.numpy as jnp
    print("jax", jax.__version__, jax.devices(), flush=True)
    for dt in (jnp.float32,):
        x = jnp.arange(10_000_000, dtype=dt)
        f = jax.jit(w1(jnp))
        t = time.perf_counter(); f(x).block_until_ready(); rec("W1 1e7 float32", "jax.jit first call", (time.perf_counter() - t) * 1e3)
        rec("W1 1e7 float32", "jax.jit", med(lambda: f(x).block_until_ready(), reps=5))
    x = jax.random.normal(jax.random.PRNGKey(0), (1_000_000,))
    f = jax.jit(selu(jnp))
    t = time.perf_counter(); f(x).block_until_ready(); rec("W2 SELU 1e6 f32", "jax.jit first call", (time.perf_counter() - t) * 1e3)
    rec("W2 SELU 1e6 f32", "jax.jit", med(lambda: f(x).block_until_ready(), reps=21))
    x = jax.random.normal(jax.random.PRNGKey(0), (100_000_000,))
    f = jax.jit(w8(jnp)); f(x).block_until_ready()
    rec("W8 chain 1e8 f32", "jax.jit", med(lambda: f(x).block_until_ready(), reps=5))

# W10 (issue 29): row softmax of 4096 x 4096 f32; torch.softmax, the chain as written, compiled
def softmax_chain(m):
    def f(x):
        e = m.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return f
def w10_all():
    x = np.random.default_rng(15).standard_normal((4096, 4096)).astype(np.float32)
    rec("W10 softmax 4096^2 f32", "numpy", med(lambda: softmax_chain(np)(x), reps=5))
    if "torch" in only:
        import torch
        xt = torch.from_numpy(x)
        chain = lambda x: (lambda e: e / e.sum(1, keepdim=True))(torch.exp(x - x.amax(1, keepdim=True)))
        rec("W10 softmax 4096^2 f32", "torch eager torch.softmax", med(lambda: torch.softmax(xt, 1), reps=11))
        rec("W10 softmax 4096^2 f32", "torch eager (chain)", med(lambda: chain(xt), reps=11))
        f = torch.compile(chain); f(xt)
        rec("W10 softmax 4096^2 f32", "torch.compile (chain)", med(lambda: f(xt), reps=11))
    if "jax" in only:
        import jax, jax.numpy as jnp
        xj = jnp.asarray(x)
        f = jax.jit(softmax_chain(jnp)); f(xj).block_until_ready()
        rec("W10 softmax 4096^2 f32", "jax.jit (chain)", med(lambda: f(xj).block_until_ready(), reps=11))

only = os.environ.get("ONLY", "numpy,torch,jax,w10").split(",")
for name, fn in (("numpy", numpy_all), ("torch", torch_all), ("jax", jax_all), ("w10", w10_all)):
    if name in only: guard(name, fn)

"""W11 (docs/workloads.md): one SGD training step of a 784-256-10 MLP with softmax
cross-entropy at batch 256 (forward, backward, update), as jax.jit(value_and_grad) and as
torch.compile, on the CPU and on the GPU where there is one. Also the first call (trace +
compile + run) of each, in this process. The model is examples/mlp.h's: relu(x w1 + b1) w2 + b2,
weights ~ N(0, 0.05) and N(0, 0.1), lr 0.1, float32, TF32 off (full float32 products).
Prints '{tag:30s} {peer:30s} {ms:10.4f} ms' lines, the format arrayc-bench's --gpu-peers-script
reads (tag 'W11 MLP step b256 f32' is case W11-f32; a '<peer> first call' line becomes that
peer row's first_call_ms). Peer names carry '(cpu)' when DEVICES includes cpu, so run the GPU
part alone to attach it to the harness's GPU rows:

    DEVICES=gpu build/benchmarks/arrayc-bench --device gpu --workload W11 \
        --gpu-peers-script benchmarks/peers/peers_train_step.py
    DEVICES=cpu python3 benchmarks/peers/peers_train_step.py       # the CPU peers, by hand
    ONLY=jax DEVICES=cpu python3 benchmarks/peers/peers_train_step.py
"""
import os
import time

import numpy as np

ONLY = os.environ.get("ONLY", "jax,torch").split(",")
DEVICES = os.environ.get("DEVICES", "cpu,gpu").split(",")
SUFFIX = "" if DEVICES == ["gpu"] else None  # peer names without the device when only the GPU runs


def name(peer, device):
    return peer if SUFFIX == "" else f"{peer} ({device})"
B, D, H, C, LR = 256, 784, 256, 10, 0.1


def med(fn, reps=51, warm=5):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    ts.sort()
    return ts[len(ts) // 2] * 1e3


def rec(peer, ms, what="W11 MLP step b256 f32"):
    print(f"{what:30s} {peer:30s} {ms:10.4f} ms", flush=True)


def guard(name, fn):
    try:
        fn()
    except Exception as e:  # a peer that is missing or fails is reported, not fatal
        print(f"{name}: FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)


def inputs():
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((D, H)) * 0.05).astype(np.float32)
    w2 = (rng.standard_normal((H, C)) * 0.1).astype(np.float32)
    b1, b2 = np.zeros(H, np.float32), np.zeros(C, np.float32)
    x = rng.standard_normal((B, D)).astype(np.float32)
    onehot = np.eye(C, dtype=np.float32)[rng.integers(0, C, B)]
    return (w1, b1, w2, b2), x, onehot


def run_jax(device):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_default_matmul_precision", "highest")
    dev = jax.devices("cpu" if device == "cpu" else "gpu")[0]

    def loss(p, x, onehot):
        w1, b1, w2, b2 = p
        h = jnp.maximum(x @ w1 + b1, 0.0)
        logits = h @ w2 + b2
        m = jnp.max(logits, axis=1, keepdims=True)
        lse = jnp.log(jnp.sum(jnp.exp(logits - m), axis=1, keepdims=True)) + m
        return -jnp.mean(jnp.sum(onehot * (logits - lse), axis=1))

    @jax.jit
    def step(p, x, onehot):
        value, g = jax.value_and_grad(loss)(p, x, onehot)
        return value, tuple(a - LR * b for a, b in zip(p, g))

    p, x, onehot = inputs()
    p = tuple(jax.device_put(a, dev) for a in p)
    x, onehot = jax.device_put(x, dev), jax.device_put(onehot, dev)
    t = time.perf_counter()
    jax.block_until_ready(step(p, x, onehot))
    rec(name("jax.jit first call", device), (time.perf_counter() - t) * 1e3)
    rec(name("jax.jit(value_and_grad)", device), med(lambda: jax.block_until_ready(step(p, x, onehot))))


def run_torch(device):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda" if device == "gpu" else "cpu")
    if device == "gpu" and not torch.cuda.is_available():
        raise RuntimeError("no CUDA device")
    sync = torch.cuda.synchronize if device == "gpu" else (lambda: None)
    p, x, onehot = inputs()
    p = [torch.tensor(a, device=dev, requires_grad=True) for a in p]
    x, onehot = torch.tensor(x, device=dev), torch.tensor(onehot, device=dev)

    def step(w1, b1, w2, b2, x, onehot):
        h = torch.relu(x @ w1 + b1)
        logits = h @ w2 + b2
        loss = -(onehot * torch.log_softmax(logits, dim=1)).sum(1).mean()
        g = torch.autograd.grad(loss, (w1, b1, w2, b2))
        with torch.no_grad():
            return loss, [a - LR * b for a, b in zip((w1, b1, w2, b2), g)]

    for peer, fn in (("torch eager", step), ("torch.compile", torch.compile(step))):
        t = time.perf_counter()
        fn(*p, x, onehot)
        sync()
        rec(name(f"{peer} first call", device), (time.perf_counter() - t) * 1e3)

        def once():
            fn(*p, x, onehot)
            sync()
        rec(name(peer, device), med(once))


for dev in DEVICES:
    if "jax" in ONLY:
        guard(f"jax {dev}", lambda: run_jax(dev))
    if "torch" in ONLY:
        guard(f"torch {dev}", lambda: run_torch(dev))

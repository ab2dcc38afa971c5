"""Reference gradients from JAX for tests/e2e/transforms_jax_test.cpp.

Two fixed programs, logistic regression and a 784-256-10 MLP with softmax cross-entropy, on
inputs both sides make from one formula (exact in float64, then rounded once to float32):
    value(i, seed, scale) = ((i * 7919 + seed * 104729) % 2001 / 1000.0 - 1.0) * scale
for the i-th element, row-major. It writes, per gradient: its L2 norm, its sum, its dot
product with value(i, 100, 1.0), and 16 elements at indices (j * 104729) % n, plus the loss and
each input's sum (so that a mismatch of inputs shows as such). Float32 throughout; matrix
products at full float32 precision (no TF32), on the CPU unless JAX_PLATFORMS says otherwise.

    python3 scripts/jax_reference_grads.py [tests/data/transforms/jax_grads.txt]
"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_default_matmul_precision", "highest")


def values(shape, seed, scale):
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.int64)
    v = ((i * 7919 + seed * 104729) % 2001) / 1000.0 - 1.0
    return (v * scale).astype(np.float32).reshape(shape)


def logreg_inputs():
    x = values((64, 20), 1, 1.0)
    w = values((20,), 2, 0.1)
    b = values((), 3, 0.05)
    y = ((np.arange(64) * 37) % 5 < 2).astype(np.float32)
    return dict(w=w, b=b), dict(x=x, y=y)


def logreg_loss(p, x, y):
    z = x @ p["w"] + p["b"]
    q = 1.0 / (1.0 + jnp.exp(-z))
    return -jnp.mean(y * jnp.log(q) + (1.0 - y) * jnp.log(1.0 - q))


def mlp_inputs():
    x = values((32, 784), 4, 1.0)
    w1 = values((784, 256), 5, 0.05)
    b1 = values((256,), 6, 0.01)
    w2 = values((256, 10), 7, 0.1)
    b2 = values((10,), 8, 0.01)
    onehot = np.eye(10, dtype=np.float32)[(np.arange(32) * 7) % 10]
    return dict(w1=w1, b1=b1, w2=w2, b2=b2), dict(x=x, onehot=onehot)


def mlp_loss(p, x, onehot):
    h = jnp.maximum(x @ p["w1"] + p["b1"], 0.0)
    logits = h @ p["w2"] + p["b2"]
    m = jnp.max(logits, axis=1, keepdims=True)
    lse = jnp.log(jnp.sum(jnp.exp(logits - m), axis=1, keepdims=True)) + m
    return -jnp.mean(jnp.sum(onehot * (logits - lse), axis=1))


def fmt(v):
    return "%.9g" % float(v)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/transforms/jax_grads.txt"
    lines = ["# JAX reference gradients (scripts/jax_reference_grads.py), jax %s on %s"
             % (jax.__version__, jax.devices()[0].platform)]
    for name, (params, data), loss in (("logreg", logreg_inputs(), logreg_loss), ("mlp", mlp_inputs(), mlp_loss)):
        for k, v in list(params.items()) + list(data.items()):
            lines.append("%s input_sum %s %s" % (name, k, fmt(np.sum(v.astype(np.float64)))))
        value, grads = jax.value_and_grad(loss)(params, **data)
        lines.append("%s loss - %s" % (name, fmt(value)))
        for k in params:
            g = np.asarray(grads[k], dtype=np.float64).reshape(-1)
            n = g.size
            proj = values((n,), 100, 1.0).astype(np.float64)
            lines.append("%s norm %s %s" % (name, k, fmt(np.linalg.norm(g))))
            lines.append("%s sum %s %s" % (name, k, fmt(np.sum(g))))
            lines.append("%s proj %s %s" % (name, k, fmt(np.dot(g, proj))))
            idx = [(j * 104729) % n for j in range(16)]
            lines.append("%s samples %s %s" % (name, k, " ".join(fmt(g[i]) for i in idx)))
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", out, len(lines), "lines")


if __name__ == "__main__":
    main()

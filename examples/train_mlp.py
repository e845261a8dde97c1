"""Train a small MLP on the bundled two-spirals data with `core` alone.

This is the main job until the trainer issue lands: a 2-64-64-2 tanh network, softmax
cross-entropy, full-batch SGD with momentum, the gradient from `core.value_and_grad` and the whole
update step compiled with `core.jit`.

    python examples/train_mlp.py [--steps N] [--lr LR] [--seed S]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import core  # noqa: E402
import core.numpy as jnp  # noqa: E402
from core import random  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "two_spirals.csv")


def load_data(path=DATA):
    table = np.loadtxt(path, delimiter=",", comments="#", skiprows=2)
    x, y = table[:, :2].astype(np.float32), table[:, 2].astype(np.int32)
    return jnp.asarray(x), jnp.asarray(y)


def init_params(key, sizes):
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = random.split(key)
        w = random.normal(sub, (n_in, n_out)) * np.sqrt(1.0 / n_in)
        params.append((w, jnp.zeros(n_out)))
    return params


def forward(params, x):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return h @ w + b


def loss_fn(params, x, labels, num_classes):
    """Mean softmax cross-entropy; the logits come back as auxiliary output (for the accuracy)."""
    logits = forward(params, x)
    shifted = logits - jnp.max(logits, axis=1, keepdims=True)
    log_probs = shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=1, keepdims=True))
    onehot = (labels[:, None] == jnp.arange(num_classes)[None, :]).astype(jnp.float32)
    return -jnp.sum(onehot * log_probs) / x.shape[0], logits


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=600)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-every", type=int, default=100)
    args = parser.parse_args(argv)

    x, y = load_data()
    params = init_params(random.PRNGKey(args.seed), [2, 64, 64, 2])
    velocity = [(jnp.zeros_like(w), jnp.zeros_like(b)) for w, b in params]
    print(f"purenn {core.default_backend()} devices={core.device_count()} data={x.shape[0]} examples")
    @core.jit
    def update(params, velocity, x, y):
        (loss, logits), grads = core.value_and_grad(loss_fn, has_aux=True)(params, x, y, 2)
        velocity = [(args.momentum * vw + gw, args.momentum * vb + gb)
                    for (vw, vb), (gw, gb) in zip(velocity, grads, strict=True)]
        params = [(w - args.lr * vw, b - args.lr * vb)
                  for (w, b), (vw, vb) in zip(params, velocity, strict=True)]
        return params, velocity, loss, logits

    start = time.perf_counter()
    first_loss = None
    for step in range(1, args.steps + 1):
        params, velocity, loss, logits = update(params, velocity, x, y)
        if first_loss is None:
            first_loss = float(loss)
        if step % args.log_every == 0 or step == args.steps:
            acc = float(jnp.mean((jnp.argmax(logits, axis=1) == y).astype(jnp.float32)))
            print(f"step {step:5d}  loss {float(loss):.4f}  accuracy {acc:.3f}")
    elapsed = time.perf_counter() - start
    print(f"trained {args.steps} steps in {elapsed:.1f}s; loss {first_loss:.4f} -> {float(loss):.4f}")
    return first_loss, float(loss), acc


if __name__ == "__main__":
    main()

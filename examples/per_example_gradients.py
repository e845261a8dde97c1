"""Per-example gradients with `core.vmap(core.grad(loss), in_axes=(None, 0, 0))`, and a DP-SGD step.

`grad(loss)(params, x, y)` is the gradient for ONE example. `vmap` maps it over the batch axis of x
and y while sharing the parameters (`in_axes=None`), so the result is a params-shaped pytree whose
leaves carry one extra leading axis: the gradient of every example, computed at once by batched
primitives (the weight gradient becomes one batched outer product), not by a loop. The script

1. prints the seed's example: the per-example gradients of `jnp.dot(w, x)` with respect to `w` are
   the rows of x, [[1, 2, 3], [2, 4, 6]];
2. computes the per-example gradients of a small MLP's softmax cross-entropy under `core.jit` and
   checks them against a Python loop of `core.grad`, one example at a time;
3. takes one differentially private SGD step (Abadi et al. 2016, https://arxiv.org/abs/1607.00133):
   clip each example's gradient to norm at most C, average, add Gaussian noise of standard
   deviation `noise_multiplier * C / batch`, drawn with `core.random`.

    PYTHONPATH=. python examples/per_example_gradients.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import core  # noqa: E402
import core.numpy as jnp  # noqa: E402
from core import random  # noqa: E402
from core.tree_util import tree_leaves, tree_map, tree_structure, tree_unflatten  # noqa: E402


def seed_example():
    """The per-example gradients of dot(w, x) with respect to w: each is that example's x."""
    w = jnp.array([0.5, -1.0, 2.0])
    xs = jnp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    return core.vmap(core.grad(lambda w, x: jnp.dot(w, x)), in_axes=(None, 0))(w, xs)


def make_problem(seed, sizes, batch):
    """Random MLP parameters (a list of {"w", "b"} layers) and a batch of inputs and integer labels."""
    rng = np.random.default_rng(seed)
    xs = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    ys = rng.integers(0, sizes[-1], size=batch).astype(np.int32)
    params = [{"w": jnp.asarray(rng.standard_normal((n_in, n_out)).astype(np.float32) / np.sqrt(n_in)),
               "b": jnp.zeros(n_out)}
              for n_in, n_out in zip(sizes[:-1], sizes[1:])]
    return params, jnp.asarray(xs), jnp.asarray(ys)


def loss(params, x, y):
    """Softmax cross-entropy of ONE example: x has shape (features,), y is an integer label."""
    h = x
    for layer in params[:-1]:
        h = jnp.maximum(h @ layer["w"] + layer["b"], 0.0)
    logits = h @ params[-1]["w"] + params[-1]["b"]
    shifted = logits - jnp.max(logits)
    log_probs = shifted - jnp.log(jnp.sum(jnp.exp(shifted)))
    return -log_probs[y]


per_example_grads = core.jit(core.vmap(core.grad(loss), in_axes=(None, 0, 0)))


def loop_grads(params, xs, ys):
    """The reference: a Python loop calling `core.grad` on one example at a time (jitted, so the loop
    compiles one program instead of every op eagerly), stacked leaf by leaf with NumPy."""
    single = core.jit(core.grad(loss))
    xs, ys = np.asarray(xs), np.asarray(ys)  # NumPy slices: no program compiled per index
    grads = [single(params, xs[i], ys[i]) for i in range(xs.shape[0])]
    return tree_map(lambda *gs: np.stack([np.asarray(g) for g in gs]), *grads)


def global_norms(grads):
    """The L2 norm of each example's whole gradient (all leaves together): shape (batch,)."""
    return jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in tree_leaves(grads)))


@core.jit
def dp_sgd_gradient(grads, key, clip_norm, noise_multiplier):
    """Clip every example's gradient to norm <= clip_norm, average them, add N(0, (sigma*C/B)^2) noise."""
    batch = tree_leaves(grads)[0].shape[0]
    scale = 1.0 / jnp.maximum(1.0, global_norms(grads) / clip_norm)  # 1 where already short enough

    def clip(g):
        return g * scale.reshape((batch,) + (1,) * (g.ndim - 1))

    clipped = tree_map(clip, grads)
    mean = tree_map(lambda g: jnp.mean(g, axis=0), clipped)
    leaves = tree_leaves(mean)
    # One draw for all the leaves, cut into pieces: each random.normal call is a sizeable program.
    noise = random.normal(key, (sum(g.size for g in leaves),))
    offsets = np.cumsum([0] + [g.size for g in leaves])
    noisy = [g + noise_multiplier * clip_norm / batch * noise[start:stop].reshape(g.shape)
             for g, start, stop in zip(leaves, offsets[:-1], offsets[1:], strict=True)]
    return clipped, tree_unflatten(tree_structure(mean), noisy)


def main(batch=16, sizes=(20, 32, 4), clip_norm=1.0, noise_multiplier=1.1, lr=0.1, seed=0):
    seed_grads = seed_example()
    print("per-example gradients of dot(w, x) w.r.t. w for x = [[1, 2, 3], [2, 4, 6]]:")
    print(np.asarray(seed_grads))

    params, xs, ys = make_problem(seed, sizes, batch)

    grads = per_example_grads(params, xs, ys)
    reference = loop_grads(params, xs, ys)
    max_diff = max(float(np.max(np.abs(np.asarray(g) - r), initial=0.0))
                   for g, r in zip(tree_leaves(grads), tree_leaves(reference), strict=True))
    print(f"\nMLP {'-'.join(map(str, sizes))}, batch {batch}: per-example gradient shapes "
          f"{[tuple(g.shape) for g in tree_leaves(grads)]}")
    print(f"largest difference from a loop of core.grad: {max_diff:.2e}")

    norms = core.jit(global_norms)(grads)
    clipped, noisy_grad = dp_sgd_gradient(grads, random.PRNGKey(seed), clip_norm, noise_multiplier)
    clipped_norms = core.jit(global_norms)(clipped)
    print(f"per-example gradient norms: min {float(norms.min()):.3f}, max {float(norms.max()):.3f}; "
          f"after clipping to C = {clip_norm}: max {float(clipped_norms.max()):.3f}")
    new_params = core.jit(lambda p, g: tree_map(lambda p, g: p - lr * g, p, g))(params, noisy_grad)
    mean_loss = core.jit(lambda p: jnp.mean(core.vmap(loss, in_axes=(None, 0, 0))(p, xs, ys)))
    print(f"DP-SGD step (noise multiplier {noise_multiplier}): loss on the batch "
          f"{float(mean_loss(params)):.4f} -> {float(mean_loss(new_params)):.4f}")
    return {"seed_grads": seed_grads, "grads": grads, "loop_grads": reference, "norms": norms,
            "clipped": clipped, "clipped_norms": clipped_norms, "noisy_grad": noisy_grad, "params": params,
            "xs": xs, "ys": ys}


if __name__ == "__main__":
    main()

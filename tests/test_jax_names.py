"""JAX's names for the pieces programs reach for (issue 16): `core.nn` as `jax.nn`, the config
options and environment variables as JAX spells them, tracers as `Array`s, `core.tree`,
`ravel_pytree`, `core.ops.segment_*` and the small top-level context managers and callbacks.

Each area has a small JAX-style program written with `jax` names and ported by changing only its
imports (the `import ... as jax` lines), checked against NumPy in float64.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import core
import core.numpy as jnp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----- item 4: core.nn as jax.nn -------------------------------------------------------------

def test_core_nn_is_the_one_implementation_nn_reexports():
    import nn
    for name in ("relu", "gelu", "softmax", "log_softmax", "one_hot", "logsumexp", "standardize",
                 "sigmoid", "silu", "softplus", "log_sigmoid", "elu", "leaky_relu", "selu", "relu6"):
        assert getattr(core.nn, name) is getattr(nn, name) is getattr(nn.functions, name), name
    assert core.nn.initializers.glorot_normal is nn.initializers.glorot_normal
    assert "initializers" in core.nn.__all__


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_jax_style_mlp_program_ported_by_imports():
    # A two-layer classifier as a JAX user writes it; only the imports were rewritten
    # (`import jax` -> `import core as jax`, `import jax.numpy as jnp` -> `import core.numpy as jnp`).
    import core as jax
    import core.numpy as jnp

    def init(key, sizes):
        keys = jax.random.split(key, len(sizes))
        init_w = jax.nn.initializers.glorot_normal()
        return [(init_w(k, (m, n)), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]

    def forward(params, x):
        (w1, b1), (w2, b2) = params
        h = jax.nn.gelu(x @ w1 + b1, approximate=False)
        h = jax.nn.standardize(h, axis=-1)
        return jax.nn.log_softmax(h @ w2 + b2)

    def loss(params, x, y):
        return -jnp.mean(jnp.sum(forward(params, x) * jax.nn.one_hot(y, 3), axis=-1))

    params = init(jax.random.PRNGKey(0), [4, 5, 3])
    x = jnp.asarray(np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4))
    y = jnp.asarray([0, 2])
    value = jax.jit(loss)(params, x, y)
    probs = jax.nn.softmax(forward(params, x))
    lse = jax.nn.logsumexp(x, axis=-1)
    act = jax.nn.relu(x) + jax.nn.sigmoid(x) + jax.nn.silu(x)

    # the NumPy oracle, float64
    from math import erf
    (w1, b1), (w2, b2) = [(np.asarray(w, np.float64), np.asarray(b, np.float64)) for w, b in params]
    xn = np.asarray(x, np.float64)
    pre = xn @ w1 + b1
    h = pre * 0.5 * (1 + np.vectorize(erf)(pre / np.sqrt(2)))
    h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5)
    logits = h @ w2 + b2
    logp = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) \
        - logits.max(-1, keepdims=True)
    want = -np.mean(logp[np.arange(2), [0, 2]])
    np.testing.assert_allclose(float(value), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(probs), _np_softmax(logits), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(lse), np.log(np.exp(xn).sum(-1)), rtol=1e-6)
    sig = 1 / (1 + np.exp(-xn))
    np.testing.assert_allclose(np.asarray(act), np.maximum(xn, 0) + sig + xn * sig, rtol=1e-6)
    # glorot_normal's scale: variance 2 / (fan_in + fan_out), truncated normal: a loose bound
    assert params[0][0].shape == (4, 5) and params[0][0].dtype == jnp.float32

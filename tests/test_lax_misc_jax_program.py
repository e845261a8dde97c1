"""A mixture-of-experts program written for JAX with the jax.lax names of the laxmisc work
(ragged_dot, rng_bit_generator, split, stack, composite, scatter_sub, DotAlgorithmPreset), ported by
changing only its imports, checked against NumPy in float64. The three import lines below replace
    import jax
    import jax.numpy as jnp
    from jax import lax
and nothing else in the program section was changed."""
import numpy as np

import core as jax
import core.numpy as jnp
from core import lax

# ----- the program, as written for JAX -----------------------------------------------------------

def route(x, router):
    """Each token's expert (argmax of the router logits), the tokens sorted by expert and the
    group sizes."""
    expert = jnp.argmax(x @ router, axis=1)
    order = jnp.argsort(expert, stable=True)
    sizes = jnp.zeros(router.shape[1], jnp.int32).at[expert].add(1)
    return order, sizes


@jax.jit
def moe_layer(x, router, w_in, w_out, key):
    order, sizes = route(x, router)
    tokens = x[order]
    pre = lax.ragged_dot(tokens, w_in, sizes, precision=lax.DotAlgorithmPreset.F32_F32_F32)
    hidden = pre * lax.logistic(1.702 * pre)
    _, bits = lax.rng_bit_generator(key, hidden.shape, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    keep = bits < jnp.uint32(3 * 2**30)  # dropout with rate 1/4
    hidden = jnp.where(keep, hidden / 0.75, 0.0)
    out = lax.ragged_dot(hidden, w_out, sizes)
    return jnp.zeros_like(out).at[order].set(out), keep


# a named operation (JAX lowers it to stablehlo.composite); JAX cannot differentiate it
first_and_mean = lax.composite(lambda a: lax.stack([a[0], a[1:].mean(axis=0)], axis=0), name="demo.first_and_mean")


@jax.jit
def report(out, x, router):
    first, rest = lax.split(out, (1, x.shape[0] - 1), axis=0)
    summary = first_and_mean(lax.concatenate([first, rest], 0))
    counts = lax.scatter_sub(jnp.zeros(router.shape[1], jnp.int32), jnp.argmax(x @ router, axis=1)[:, None],
                             jnp.ones(x.shape[0], jnp.int32),
                             lax.ScatterDimensionNumbers((), (0,), (0,)))
    return summary, -counts


def loss(params, x, key):
    out, _ = moe_layer(x, *params, key)
    return jnp.mean(out ** 2)


# ----- the checks ----------------------------------------------------------------------------------

def test_the_jax_program_runs_unchanged_and_matches_numpy():
    rng = np.random.default_rng(0)
    n, d, h, e = 9, 4, 6, 3
    x = rng.standard_normal((n, d)).astype(np.float32)
    router = rng.standard_normal((d, e)).astype(np.float32)
    w_in = rng.standard_normal((e, d, h)).astype(np.float32)
    w_out = rng.standard_normal((e, h, d)).astype(np.float32)
    key = np.array([0, 0, 0, 7], np.uint32)
    out, keep = moe_layer(x, router, w_in, w_out, key)
    summary, counts = report(out, x, router)
    keep = np.asarray(keep)
    assert 0.6 < keep.mean() < 0.9
    # NumPy, token by token: each token through its own expert
    x64 = x.astype(np.float64)
    expert = np.argmax(x64 @ router, axis=1)
    order = np.argsort(expert, kind="stable")
    want = np.zeros((n, d))
    for row, t in enumerate(order):
        pre = x64[t] @ w_in[expert[t]]
        act = pre / (1 + np.exp(-1.702 * pre))
        act = np.where(keep[row], act / 0.75, 0.0)
        want[t] = act @ w_out[expert[t]]
    np.testing.assert_allclose(out, want, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(summary, np.stack([want[0], want[1:].mean(0)]), rtol=2e-5, atol=2e-5)
    np.testing.assert_array_equal(counts, np.bincount(expert, minlength=e))
    # and it differentiates: the gradient of w_out for expert i is its tokens' activations against the output
    g = jax.grad(loss)((router, w_in, w_out), x, key)[2]
    want_g = np.zeros_like(w_out, dtype=np.float64)
    for row, t in enumerate(order):
        pre = x64[t] @ w_in[expert[t]]
        act = np.where(keep[row], pre / (1 + np.exp(-1.702 * pre)) / 0.75, 0.0)
        want_g[expert[t]] += np.outer(act, 2 * want[t] / (n * d))
    np.testing.assert_allclose(g, want_g, rtol=1e-4, atol=1e-5)

"""A program written for JAX with `jax.lax` names, ported by changing only its imports, checked
against NumPy in float64. The three import lines below replace
    import jax
    import jax.numpy as jnp
    from jax import lax
and nothing else in the program section was changed."""
import numpy as np

import core as jax
import core.numpy as jnp
from core import lax

# ----- the program, as written for JAX -----------------------------------------------------------


def conv1d(x, w):
    """Same-padded 1-D cross-correlation of each row of x (N, L) with the kernel w (K,)."""
    y = lax.conv_general_dilated(x[:, None, :], w[None, None, :], window_strides=(1,), padding="SAME",
                                 dimension_numbers=("NCH", "OIH", "NCH"), precision=lax.Precision.HIGHEST)
    return y[:, 0, :]


def loss(w, x, t):
    return jnp.mean(lax.square(conv1d(x, w) - t))


@jax.jit
def train(w, x, t):
    def step(i, w):
        return w - 0.5 * jax.grad(loss)(w, x, t)
    return lax.fori_loop(0, 40, step, w)


@jax.jit
def features(x):
    pooled = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2), (1, 2), "VALID")

    def ema_step(carry, column):
        carry = 0.9 * carry + 0.1 * column
        return carry, carry
    _, ema = lax.scan(ema_step, jnp.zeros(x.shape[0], x.dtype), x.T)
    running = lax.cummax(x, axis=1)
    top, idx = lax.top_k(x, 3)
    gram = lax.dot_general(x, x, (((1,), (1,)), ((), ())), precision=(lax.Precision.HIGHEST, lax.Precision.HIGHEST))
    inv_norm = lax.rsqrt(lax.reduce_sum(lax.square(x), (1,)) + 1e-6)
    window = lax.dynamic_slice_in_dim(x, 2, 4, axis=1)
    relu = lax.select_n(x > 0, jnp.zeros_like(x), x)
    frozen = lax.stop_gradient(lax.cumsum(x, axis=1))
    stacked = lax.stack(lax.split(x, (3, 5), axis=1)[0:1] * 2, axis=0)
    return dict(pooled=pooled, ema=ema.T, running=running, top=top, idx=idx, gram=gram, inv_norm=inv_norm,
                window=window, relu=relu, frozen=frozen, stacked=stacked)


# ----- the checks ----------------------------------------------------------------------------------

def _np_conv(x, w):
    xp = np.pad(x, ((0, 0), (1, 1)))
    return sum(xp[:, k:k + x.shape[1]] * w[k] for k in range(3))


def test_the_jax_program_trains_like_numpy(rng):
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w_true = np.array([-1.0, 2.0, 0.5], np.float32)
    t = _np_conv(x.astype(np.float64), w_true.astype(np.float64)).astype(np.float32)
    w = np.zeros(3, np.float64)
    x64, t64 = x.astype(np.float64), t.astype(np.float64)
    xp = np.pad(x64, ((0, 0), (1, 1)))
    for _ in range(40):  # the same gradient descent in float64
        r = _np_conv(x64, w) - t64
        w = w - 0.5 * np.array([2 * np.mean(r * xp[:, k:k + 8]) for k in range(3)])
    out = train(jnp.zeros(3), x, t)
    np.testing.assert_allclose(out, w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(loss(out, x, t), np.mean((_np_conv(x64, w) - t64) ** 2), rtol=1e-3, atol=1e-7)


def test_the_jax_program_features_match_numpy(rng):
    x = rng.standard_normal((3, 8)).astype(np.float32)
    f = features(x)
    x64 = x.astype(np.float64)
    np.testing.assert_array_equal(f["pooled"], x.reshape(3, 4, 2).max(-1))
    ema, carry = np.zeros((3, 8)), np.zeros(3)
    for i in range(8):
        carry = 0.9 * carry + 0.1 * x64[:, i]
        ema[:, i] = carry
    np.testing.assert_allclose(f["ema"], ema, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(f["running"], np.maximum.accumulate(x, axis=1))
    order = np.argsort(-x, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(f["idx"], order)
    np.testing.assert_array_equal(f["top"], np.take_along_axis(x, order, 1))
    np.testing.assert_allclose(f["gram"], x64 @ x64.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(f["inv_norm"], 1 / np.sqrt((x64 ** 2).sum(1) + 1e-6), rtol=1e-5)
    np.testing.assert_array_equal(f["window"], x[:, 2:6])
    np.testing.assert_array_equal(f["relu"], np.maximum(x, 0))
    np.testing.assert_allclose(f["frozen"], np.cumsum(x64, axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(f["stacked"], np.stack([x[:, :3], x[:, :3]]))
    assert "precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]" in \
        features.lower(x).as_text()

"""Max/min-pool gradients in the shapes pooling layers use (NHWC, 2-D windows, ties from a relu).

The gradient of reduce_window_max / min adds each output's cotangent at the FIRST position of
its window (row-major window order) holding the maximum (minimum); padding never wins. The
oracle is a plain NumPy loop over windows. Inputs have many ties (a relu's zeros, small
integers), which is where a select-and-scatter formulation and ours could disagree.
"""
import numpy as np
import pytest

import core
import core.numpy as jnp
import nn
from core import lax


def _pool_grad_oracle(x, ct, window, strides, pads, pick):
    """Loop oracle: for every window, add its cotangent at the first winner (`pick` is np.argmax
    or np.argmin over the window's real elements, raveled in row-major order)."""
    n, h, w, c = x.shape
    g = np.zeros_like(x)
    (plo_h, _), (plo_w, _) = pads
    for b in range(n):
        for oi in range(ct.shape[1]):
            for oj in range(ct.shape[2]):
                rows = [r for r in range(oi * strides[0] - plo_h, oi * strides[0] - plo_h + window[0]) if 0 <= r < h]
                cols = [s for s in range(oj * strides[1] - plo_w, oj * strides[1] - plo_w + window[1]) if 0 <= s < w]
                if not rows or not cols:
                    continue   # a window of padding only selects nothing
                for ch in range(c):
                    patch = x[b, rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1, ch]
                    k = pick(patch.ravel())
                    g[b, rows[0] + k // len(cols), cols[0] + k % len(cols), ch] += ct[b, oi, oj, ch]
    return g


CASES = [
    ((2, 2), (1, 1), "VALID"),            # the convnet's MaxPool((2, 2)): overlapping windows
    ((2, 2), (2, 2), "VALID"),
    ((3, 3), (2, 2), "SAME"),             # padding on both sides
    ((3, 2), (1, 2), ((2, 0), (0, 1))),   # more padding than the window overlaps on the low side
]


@pytest.mark.parametrize("window,strides,padding", CASES)
@pytest.mark.parametrize("kind", ["max", "min"])
def test_pool_grad_with_ties_matches_loop(rng, kind, window, strides, padding):
    # small integers and a relu's zeros: ties in most windows
    x = np.maximum(rng.integers(-2, 3, size=(2, 5, 6, 3)), 0).astype(np.float32)
    if kind == "min":
        x = -x
    op = lax.reduce_window_max if kind == "max" else lax.reduce_window_min
    win, st = (1, *window, 1), (1, *strides, 1)
    pads = lax.padtype_to_pads(x.shape, win, st, padding) if isinstance(padding, str) else ((0, 0), *padding, (0, 0))
    y, pullback = core.vjp(lambda x: op(x, win, st, pads), x)
    ct = rng.integers(1, 9, size=y.shape).astype(np.float32)
    expected = _pool_grad_oracle(x, ct, window, strides, pads[1:3], np.argmax if kind == "max" else np.argmin)
    np.testing.assert_array_equal(np.asarray(pullback(ct)[0]), expected)
    # the jvp picks the same positions: <jvp(t), ct> == <t, vjp(ct)> exactly on integer data
    t = rng.integers(-3, 4, size=x.shape).astype(np.float32)
    _, ty = core.jvp(lambda x: op(x, win, st, pads), (x,), (t,))
    assert float(np.vdot(np.asarray(ty), ct)) == float(np.vdot(t, expected))


def test_maxpool_layer_grad_under_jit(rng):
    # nn.MaxPool after a relu, as in the convnet, differentiated under jit
    init_fun, apply_fun = nn.serial(nn.Relu, nn.MaxPool((2, 2)))
    x = rng.integers(-2, 3, size=(2, 6, 5, 4)).astype(np.float32)
    ct = rng.integers(1, 9, size=(2, 5, 4, 4)).astype(np.float32)
    _, params = init_fun(core.random.PRNGKey(0), x.shape)
    g = core.jit(core.grad(lambda x: jnp.sum(apply_fun(params, x) * ct)))(x)
    relu = np.maximum(x, 0)
    expected = _pool_grad_oracle(relu, ct, (2, 2), (1, 1), ((0, 0), (0, 0)), np.argmax) * (x > 0)
    np.testing.assert_array_equal(np.asarray(g), expected)


def test_maxpool_second_order(x64, rng):
    # the pool gradient is piecewise linear: its own derivative in the cotangent is the gradient
    # again, and in the input it is zero away from ties (distinct values here)
    x = rng.permutation(np.arange(2 * 4 * 4 * 1, dtype=np.float64)).reshape(2, 4, 4, 1)

    def f(x):
        return jnp.sum(lax.reduce_window_max(x, (1, 2, 2, 1), (1, 1, 1, 1), "VALID") ** 2)
    hvp = core.jvp(core.grad(f), (x,), (np.ones_like(x),))[1]
    y = np.asarray(lax.reduce_window_max(x, (1, 2, 2, 1), (1, 1, 1, 1), "VALID"))
    # d/dx of sum(y^2) is scatter(2y); its derivative along ones is scatter(2 * jvp(y)) = scatter(2)
    expected = _pool_grad_oracle(x, 2 * np.ones_like(y), (2, 2), (1, 1), ((0, 0), (0, 0)), np.argmax)
    np.testing.assert_allclose(np.asarray(hvp), expected)

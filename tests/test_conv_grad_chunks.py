"""The kernel cotangent of conv_general_dilated, computed one chunk of the batch at a time.

For a batch of at least 2 * _KERNEL_CT_CHUNK images (and no feature or batch groups) the
transpose rule sums one convolution per chunk of the batch (at most _MAX_KERNEL_CT_CHUNKS of
them) instead of one convolution over the whole batch (jaxlib's XLA CPU runs the chunks
faster; see bench/RESULTS.md, issue 7). Checked here: the values against a NumPy oracle and
against the unchunked rule for strided, dilated and transposed layouts, a batch that is not a
multiple of the chunk, second derivatives, vmap, and that the jaxpr really holds one convolution
per chunk (a test that fails if the split is lost).
"""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax, test_util as tu
from core.lax import convolution

CHUNK = convolution._KERNEL_CT_CHUNK


def _kernel_grad_oracle(x, ct, kh, kw, pad):
    """dW[i, j, c, o] = sum over n, h, w of xpad[n, h + i, w + j, c] * ct[n, h, w, o] (NHWC x
    HWIO, stride 1), in float64 with NumPy."""
    xp = np.pad(x, ((0, 0), pad[0], pad[1], (0, 0)))
    ho, wo = ct.shape[1:3]
    out = np.zeros((kh, kw, x.shape[3], ct.shape[3]))
    for i in range(kh):
        for j in range(kw):
            out[i, j] = np.einsum("nhwc,nhwo->co", xp[:, i:i + ho, j:j + wo], ct)
    return out


def _kernel_grad(x, w, ct, **kwargs):
    _, pullback = core.vjp(lambda w: lax.conv_general_dilated(x, w, **kwargs), w)
    return np.asarray(pullback(ct)[0])


def test_chunked_kernel_grad_matches_numpy(x64, rng):
    n = 2 * CHUNK + 3   # chunks of CHUNK, CHUNK and 3 images
    x = rng.standard_normal((n, 5, 6, 2))
    w = rng.standard_normal((3, 2, 2, 3))
    ct = rng.standard_normal((n, 5, 6, 3))
    got = _kernel_grad(x, w, ct, window_strides=(1, 1), padding=((1, 1), (0, 1)),
                       dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(got, _kernel_grad_oracle(x, ct, 3, 2, ((1, 1), (0, 1))), rtol=1e-12, atol=1e-12)


# (lhs shape, rhs shape, keyword arguments): strides, dilations and layouts whose kernel
# cotangent goes through the chunked path (batch >= 2 * CHUNK)
CHUNKED_CASES = [
    ((2 * CHUNK, 3, 9), (4, 3, 3), dict(window_strides=(2,), padding=((1, 2),), rhs_dilation=(2,))),
    ((2 * CHUNK + 1, 2, 5), (3, 2, 2), dict(window_strides=(3,), padding=((2, -1),), lhs_dilation=(2,))),
    ((3 * CHUNK, 2, 5, 6), (3, 2, 3, 2), dict(window_strides=(2, 1), padding=((1, 1), (0, 1)))),
    ((2 * CHUNK, 5, 4, 2), (2, 2, 3, 3), dict(window_strides=(1, 1), padding=((2, 0), (1, 1)), lhs_dilation=(2, 1),
                                              rhs_dilation=(1, 2), dimension_numbers=("NHWC", "OIHW", "NCHW"))),
    ((4, 2 * CHUNK + 2, 6), (3, 6, 3), dict(window_strides=(2,), padding="SAME",
                                            dimension_numbers=("WNC", "OIW", "NCW"))),
]


@pytest.mark.parametrize("lhs_shape,rhs_shape,kwargs", CHUNKED_CASES)
def test_chunked_kernel_grad_matches_unchunked(x64, rng, monkeypatch, lhs_shape, rhs_shape, kwargs):
    x, w = rng.standard_normal(lhs_shape), rng.standard_normal(rhs_shape)
    out_shape = core.eval_shape(lambda x, w: lax.conv_general_dilated(x, w, **kwargs), x, w).shape
    ct = rng.standard_normal(out_shape)
    got = _kernel_grad(x, w, ct, **kwargs)
    monkeypatch.setattr(convolution, "_KERNEL_CT_CHUNK", 10 ** 9)
    np.testing.assert_allclose(got, _kernel_grad(x, w, ct, **kwargs), rtol=1e-12, atol=1e-12)


def _kernel_cotangent_convs(f, *args):
    """The number of convolutions in the jaxpr of `grad(f)` whose result has the kernel's shape."""
    w_shape = np.shape(args[0])
    jaxpr = core.make_jaxpr(core.grad(f))(*args).jaxpr
    return sum(e.primitive.name == "conv_general_dilated" and e.outvars[0].aval.shape == w_shape for e in jaxpr.eqns)


def test_one_convolution_per_chunk(rng, monkeypatch):
    x = rng.standard_normal((2 * CHUNK + 1, 4, 4, 2)).astype(np.float32)
    w = rng.standard_normal((3, 3, 2, 3)).astype(np.float32)

    def loss(w, x, **kw):
        return jnp.sum(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                                **kw) ** 2)
    assert _kernel_cotangent_convs(loss, w, x) == 3
    # below two chunks the batch is not split
    assert _kernel_cotangent_convs(loss, w, x[:2 * CHUNK - 1]) == 1
    # nor with feature groups (the split is measured only for ungrouped convolutions)
    wg = rng.standard_normal((3, 3, 1, 4)).astype(np.float32)
    assert _kernel_cotangent_convs(lambda w, x: loss(w, x, feature_group_count=2), wg, x) == 1
    # at most _MAX_KERNEL_CT_CHUNKS convolutions: a larger batch gets larger chunks
    monkeypatch.setattr(convolution, "_MAX_KERNEL_CT_CHUNKS", 2)
    assert _kernel_cotangent_convs(loss, w, x) == 2


def test_chunked_kernel_grad_second_order(x64, rng):
    x = rng.standard_normal((2 * CHUNK, 2, 3, 3))
    w = rng.standard_normal((2, 2, 2, 3))
    tu.check_grads(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME"), (x, w), order=2,
                   modes=("fwd", "rev"))


def test_vmap_of_chunked_kernel_grad(rng):
    # per-example kernel gradients of a batch of 2 * CHUNK images each: vmap equals the loop
    xs = rng.standard_normal((3, 2 * CHUNK, 4, 4, 1)).astype(np.float32)
    w = rng.standard_normal((3, 3, 1, 2)).astype(np.float32)

    def kernel_grad(x, w):
        return core.grad(lambda w: jnp.sum(jnp.tanh(lax.conv_general_dilated(
            x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))))(w)
    tu.check_vmap(kernel_grad, [xs, np.stack([w] * 3)], sizes=(3,), atol=1e-5, rtol=1e-5)

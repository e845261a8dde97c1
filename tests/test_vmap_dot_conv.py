"""vmap of the contractions: dot_general_p and conv_general_dilated_p against loops over examples
(tu.check_vmap: every placement of the batch axis, batch sizes 10 and 0), nested and jitted vmaps,
per-example gradients, the seed examples of issue 5, and the shape of the per-example-gradient HLO
(one batched dot_general per weight gradient, no loops)."""
import re

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax, test_util as tu

# Float32 matmuls and convolutions sum many rounded products, and the batched op (one big GEMM or
# a grouped convolution) may sum them in another order than the per-example op: allow ~1e-4.
TOL = dict(atol=1e-4, rtol=1e-4)


def _stacked(name, *lane_shapes):
    rng = np.random.default_rng(tu.seed_for(name))
    return [tu.rand(rng, (10,) + s, np.float32) for s in lane_shapes]


# ----- dot_general_p -------------------------------------------------------------------------

DOT_CASES = {
    "matvec": ((3, 4), (4,), (((1,), (0,)), ((), ()))),
    "matmat": ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    "vecvec": ((3,), (3,), (((0,), (0,)), ((), ()))),  # 0-d per example
    "batched": ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    # batch and contracting dimensions in no particular place: checks the renumbering
    "scrambled": ((2, 3, 4, 5), (5, 3, 2, 6), (((1, 3), (1, 0)), ((0,), (2,)))),
    "empty": ((0, 3), (3, 2), (((1,), (0,)), ((), ()))),  # size-0 example shape
}


@pytest.mark.parametrize("name", list(DOT_CASES))
def test_dot_general_vmap(name):
    lhs_shape, rhs_shape, dims = DOT_CASES[name]
    args = _stacked("vmap dot " + name, lhs_shape, rhs_shape)
    tu.check_vmap(lambda x, y: lax.dot_general(x, y, dims), args, **TOL)


def test_dot_general_vmap_preferred_element_type():
    rng = np.random.default_rng(tu.seed_for("vmap dot int8"))
    x = rng.integers(-100, 100, (10, 3, 4)).astype(np.int8)
    y = rng.integers(-100, 100, (4, 2)).astype(np.int8)
    f = lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.int32)  # noqa: E731
    out = core.vmap(f, in_axes=(0, None))(x, y)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.einsum("bij,jk->bik", x.astype(np.int64), y))


def test_dot_general_vmap_vmap_and_jit():
    x, y = _stacked("vmap dot nested", (5, 3, 4), (4, 2))
    inner = core.vmap(lambda a, b: jnp.dot(a, b), in_axes=(0, None))
    nested = core.vmap(inner, in_axes=(0, 0))
    expected = np.einsum("bnij,bjk->bnik", x.astype(np.float64), y)
    tu.assert_allclose(nested(x, y), expected, np.float32, **TOL)
    tu.assert_allclose(core.jit(nested)(x, y), expected, np.float32, **TOL)
    # both levels on the rhs: the batch axes become dot_general free dimensions of the rhs
    both_rhs = core.vmap(core.vmap(jnp.dot, in_axes=(None, 1)), in_axes=(None, 2))
    w = x[0, 0]  # (3, 4)
    zs = np.transpose(x[:, :, 0, :], (2, 1, 0))  # (4, 5, 10): per inner example (4,)
    expected = np.einsum("ij,jnb->bni", w.astype(np.float64), zs)
    tu.assert_allclose(both_rhs(w, zs), expected, np.float32, **TOL)


def test_dot_general_vmap_output_position():
    # lhs batched along an axis after its free axis: the free axis stays first in the output,
    # without any transpose in the program
    x, y = _stacked("vmap dot position", (3, 4), (4, 5))
    f = core.vmap(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))), in_axes=(1, None), out_axes=1)
    jaxpr = str(core.make_jaxpr(f)(np.moveaxis(x, 0, 1), y[0]))
    assert "transpose" not in jaxpr, jaxpr
    tu.assert_allclose(f(np.moveaxis(x, 0, 1), y[0]),
                       np.moveaxis(np.einsum("bij,jk->bik", x.astype(np.float64), y[0]), 0, 1), np.float32, **TOL)


# ----- conv_general_dilated_p ----------------------------------------------------------------

CONV_CASES = {
    "1d strided dilated": ((2, 3, 9), (4, 3, 3),
                           dict(window_strides=(2,), padding=((1, 2),), rhs_dilation=(2,))),
    "2d nchw groups lhs_dilation": ((2, 4, 5, 4), (6, 2, 3, 2),
                                    dict(window_strides=(1, 2), padding=((1, 0), (0, 1)), lhs_dilation=(1, 2),
                                         rhs_dilation=(2, 1), feature_group_count=2)),
    "2d nhwc same": ((2, 5, 6, 3), (3, 3, 3, 4),
                     dict(window_strides=(1, 1), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))),
    "2d nhwc groups": ((2, 5, 4, 4), (3, 2, 2, 6),
                       dict(window_strides=(2, 1), padding="VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                            feature_group_count=2)),
    "1d nwc batch groups": ((4, 7, 3), (3, 3, 6),
                            dict(window_strides=(1,), padding=((1, 1),), batch_group_count=2,
                                 dimension_numbers=("NWC", "WIO", "NWC"))),
    "empty batch": ((0, 3, 9), (4, 3, 3), dict(window_strides=(1,), padding="SAME")),  # size-0 example shape
}


@pytest.mark.parametrize("name", list(CONV_CASES))
def test_conv_general_dilated_vmap(name):
    lhs_shape, rhs_shape, params = CONV_CASES[name]
    args = _stacked("vmap conv " + name, lhs_shape, rhs_shape)
    tu.check_vmap(lambda x, w: lax.conv_general_dilated(x, w, **params), args, **TOL)


def test_conv_vmap_vmap_and_jit():
    x, w = _stacked("vmap conv nested", (3, 2, 2, 7), (4, 2, 3))
    f = lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID", feature_group_count=1)  # noqa: E731
    nested = core.vmap(core.vmap(f, in_axes=(0, None)), in_axes=(0, 0))
    expected = np.stack([np.stack([np.asarray(f(x[i, j], w[i])) for j in range(3)]) for i in range(10)])
    tu.assert_allclose(nested(x, w), expected, np.float32, **TOL)
    tu.assert_allclose(core.jit(nested)(x, w), expected, np.float32, **TOL)


# ----- the seed examples of issue 5 ----------------------------------------------------------

def test_seed_per_example_gradient_of_dot():
    w = jnp.array([0.5, -1.0, 2.0])
    x = jnp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]])
    g = core.vmap(core.grad(lambda w, x: jnp.dot(w, x)), in_axes=(None, 0))(w, x)
    np.testing.assert_array_equal(np.asarray(g), [[1, 2, 3], [2, 4, 6]])


def _conv1d(x, w):
    """The seed's 1-D convolution (a valid cross-correlation) of one signal with one kernel."""
    return lax.conv_general_dilated(x[None, None, :], w[None, None, :], (1,), "VALID")[0, 0]


def _seed_convolve(x, w):
    """The seed's convolution written as a loop of slices, as the vmap tutorial does."""
    return jnp.array([jnp.dot(x[i - 1:i + 2], w) for i in range(1, x.shape[-1] - 1)])


@pytest.mark.parametrize("conv", [_conv1d, _seed_convolve])
def test_seed_batched_convolution(conv):
    xs = np.stack([np.arange(10.0), np.arange(10.0)[::-1] ** 2]).astype(np.float32)
    ws = np.array([[2.0, 3.0, 4.0], [1.0, -1.0, 0.5]], np.float32)
    expected = np.stack([np.correlate(xs[0], ws[0], "valid"), np.correlate(xs[1], ws[0], "valid")])
    tu.assert_allclose(core.vmap(conv, in_axes=[0, None])(xs, ws[0]), expected, np.float32, **TOL)
    both = np.stack([np.correlate(x, w, "valid") for x, w in zip(xs, ws)])
    tu.assert_allclose(core.vmap(conv)(xs, ws), both, np.float32, **TOL)
    tu.assert_allclose(core.vmap(conv, in_axes=1, out_axes=1)(xs.T, ws.T), both.T, np.float32, **TOL)
    np.testing.assert_allclose(np.asarray(conv(jnp.arange(5.0), jnp.array([2.0, 3.0, 4.0]))), [11, 20, 29])


# ----- per-example gradients -----------------------------------------------------------------

def _mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(jnp.dot(x, w1) + b1)
    logits = jnp.dot(h, w2) + b2
    shifted = logits - jnp.max(logits)
    return -jnp.sum((shifted - jnp.log(jnp.sum(jnp.exp(shifted)))) * y)


def _mlp(rng, sizes):
    return [(tu.rand(rng, (m, n), np.float32) / np.sqrt(m), tu.rand(rng, (n,), np.float32))
            for m, n in zip(sizes[:-1], sizes[1:])]


def test_per_example_gradients_of_mlp_under_jit():
    rng = np.random.default_rng(tu.seed_for("vmap per-example mlp"))
    params = _mlp(rng, (5, 8, 3))
    xs = tu.rand(rng, (6, 5), np.float32)
    ys = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 6)]
    per_example = core.jit(core.vmap(core.grad(_mlp_loss), in_axes=(None, 0, 0)))(params, xs, ys)
    loop = [core.grad(_mlp_loss)(params, x, y) for x, y in zip(xs, ys)]
    got, _ = core.tree_util.tree_flatten(per_example)
    want = [np.stack(leaves) for leaves in zip(*[core.tree_util.tree_flatten(g)[0] for g in loop])]
    assert [g.shape for g in got] == [(6, 5, 8), (6, 8), (6, 8, 3), (6, 3)]
    for g, e in zip(got, want, strict=True):
        tu.assert_allclose(g, e, np.float32, **TOL)
    # and the sum of the per-example gradients is the gradient of the summed loss
    total = core.grad(lambda p: core.vmap(_mlp_loss, in_axes=(None, 0, 0))(p, xs, ys).sum())(params)
    for g, t in zip(got, core.tree_util.tree_flatten(total)[0], strict=True):
        tu.assert_allclose(np.asarray(g).sum(0), t, np.float32, **TOL)


def _convnet_loss(params, x, y):
    w, v = params
    h = lax.conv_general_dilated(x[None], w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = jnp.tanh(h)[0]
    return jnp.sum((jnp.sum(h, axis=(0, 1)) @ v - y) ** 2)


def test_per_example_gradients_of_convnet_under_jit():
    rng = np.random.default_rng(tu.seed_for("vmap per-example convnet"))
    params = (tu.rand(rng, (3, 3, 2, 4), np.float32) / 4, tu.rand(rng, (4, 2), np.float32) / 8)
    xs = tu.rand(rng, (5, 6, 6, 2), np.float32)
    ys = tu.rand(rng, (5, 2), np.float32)
    gw, gv = core.jit(core.vmap(core.grad(_convnet_loss), in_axes=(None, 0, 0)))(params, xs, ys)
    loop = [core.grad(_convnet_loss)(params, x, y) for x, y in zip(xs, ys)]
    tu.assert_allclose(gw, np.stack([np.asarray(g[0]) for g in loop]), np.float32, **TOL)
    tu.assert_allclose(gv, np.stack([np.asarray(g[1]) for g in loop]), np.float32, **TOL)


def test_per_example_gradient_hlo_has_no_loops():
    # The benchmark's shape (MLP 784-256-10, batch 64), lowered only: each weight gradient is one
    # batched dot_general (the per-example outer product), with no loop and no per-example slice.
    rng = np.random.default_rng(0)
    params = _mlp(rng, (784, 256, 10))
    xs = np.zeros((64, 784), np.float32)
    ys = np.zeros((64, 10), np.float32)
    text = core.jit(core.vmap(core.grad(_mlp_loss), in_axes=(None, 0, 0))).lower(params, xs, ys).as_text()
    assert "stablehlo.while" not in text
    assert "stablehlo.slice" not in text and "dynamic_slice" not in text
    dots = re.findall(r"stablehlo.dot_general.*", text)
    batched = [d for d in dots if "lhs_batching_dimensions = [0]" in d and "rhs_batching_dimensions = [0]" in d]
    assert any("tensor<64x784x256xf32>" in d for d in batched), dots
    assert any("tensor<64x256x10xf32>" in d for d in batched), dots

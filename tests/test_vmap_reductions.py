"""vmap of the reduction primitives (core/lax/reductions.py) against a loop over examples.

`tu.check_vmap` compares `vmap(f)` with `f` applied to each example and stacked, for batch sizes
10 and 0 and every position of the batch axis (docs/reliability.md N5). Primitives covered, by name:
reduce_sum_p reduce_prod_p reduce_max_p reduce_min_p reduce_and_p reduce_or_p reduce_xor_p
argmax_p argmin_p reduce_window_sum_p reduce_window_max_p reduce_window_min_p
cumsum_p cumprod_p cummax_p cummin_p cumlogsumexp_p
"""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core import test_util as tu

B = 10  # examples per stacked operand, as check_vmap expects


def _floats(rng, shape):
    return tu.rand(rng, (B,) + shape, np.float32)


# ----- reduce_sum / reduce_prod / reduce_max / reduce_min ------------------------------------------

# (per-example shape, axes): one axis, all axes, no axis of a 0-d operand, an empty axis
AXES_CASES = [((3, 4), (1,)), ((3, 4), (0, 1)), ((), ()), ((0, 3), (0,)), ((2, 3, 4), (0, 2))]


@pytest.mark.parametrize("shape,axes", AXES_CASES)
@pytest.mark.parametrize("op", [lax.reduce_sum, lax.reduce_max], ids=["reduce_sum", "reduce_max"])
def test_reduce_sum_max(rng, op, shape, axes):
    tu.check_vmap(lambda x: op(x, axes), [_floats(rng, shape)])


@pytest.mark.parametrize("shape,axes", [((3, 4), (0,)), ((2, 3), (0, 1)), ((), ())])
@pytest.mark.parametrize("op", [lax.reduce_prod, lax.reduce_min], ids=["reduce_prod", "reduce_min"])
def test_reduce_prod_min(rng, op, shape, axes):
    tu.check_vmap(lambda x: op(x, axes), [_floats(rng, shape)], rtol=1e-5)


def test_reduce_sum_empty_axis_gives_zeros(rng):
    # the empty per-example axis reduces to the identity in every lane; the loop agrees, and so
    # does the identity itself
    out = core.vmap(lambda x: lax.reduce_sum(x, (1,)), in_axes=1)(np.ones((3, 4, 0), np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.zeros((4, 3), np.float32))
    out = core.vmap(lambda x: lax.reduce_max(x, (0,)), in_axes=1)(np.ones((0, 4), np.float32))
    np.testing.assert_array_equal(np.asarray(out), np.full((4,), -np.inf, np.float32))


def test_reduce_sum_int(rng):
    tu.check_vmap(lambda x: lax.reduce_sum(x, (0,)), [tu.rand(rng, (B, 3, 2), np.int32)])


# ----- reduce_and / reduce_or / reduce_xor ---------------------------------------------------------

@pytest.mark.parametrize("shape,axes", [((3, 4), (0,)), ((3, 4), (0, 1)), ((0, 2), (0,))])
@pytest.mark.parametrize("op", [lax.reduce_and, lax.reduce_or, lax.reduce_xor],
                         ids=["reduce_and", "reduce_or", "reduce_xor"])
def test_reduce_logical_bool(rng, op, shape, axes):
    tu.check_vmap(lambda x: op(x, axes), [tu.rand(rng, (B,) + shape, np.bool_)])


@pytest.mark.parametrize("op", [lax.reduce_and, lax.reduce_or, lax.reduce_xor],
                         ids=["reduce_and", "reduce_or", "reduce_xor"])
def test_reduce_bitwise_int(rng, op):
    x = rng.integers(-100, 100, size=(B, 4, 3)).astype(np.int32)
    tu.check_vmap(lambda x: op(x, (1,)), [x])


# ----- argmax / argmin -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape,axis", [((5,), 0), ((3, 4), 0), ((3, 4), 1)])
@pytest.mark.parametrize("op", [lax.argmax, lax.argmin], ids=["argmax", "argmin"])
def test_argmax_argmin(rng, op, shape, axis):
    # small integers make ties common: the first index must win in every lane
    x = rng.integers(0, 3, size=(B,) + shape).astype(np.float32)
    tu.check_vmap(lambda x: op(x, axis, np.int32), [x])


def test_argmax_nan_and_empty_axis(rng):
    x = _floats(rng, (3, 4))
    x[::3, 1, 2] = np.nan
    tu.check_vmap(lambda x: lax.argmax(x, 0, np.int32), [x])
    tu.check_vmap(lambda x: lax.argmin(x, 1, np.int32), [_floats(rng, (2, 0))])


# ----- reduce_window_sum / reduce_window_max / reduce_window_min -----------------------------------

WINDOW_CASES = [
    ((6,), dict(window_dimensions=(2,), window_strides=(1,), padding="VALID")),
    ((5, 4), dict(window_dimensions=(2, 3), window_strides=(2, 1), padding="SAME")),
    ((5, 4), dict(window_dimensions=(2, 2), window_strides=(1, 2), padding=((1, 0), (0, 2)),
                  base_dilation=(2, 1), window_dilation=(1, 2))),
    ((), dict(window_dimensions=(), window_strides=(), padding=())),
    ((0, 3), dict(window_dimensions=(1, 2), window_strides=(1, 1), padding="VALID")),
]


@pytest.mark.parametrize("shape,params", WINDOW_CASES)
@pytest.mark.parametrize("op", [lax.reduce_window_sum, lax.reduce_window_max, lax.reduce_window_min],
                         ids=["reduce_window_sum", "reduce_window_max", "reduce_window_min"])
def test_reduce_window(rng, op, shape, params):
    tu.check_vmap(lambda x: op(x, **params), [_floats(rng, shape)], rtol=1e-6, atol=1e-6)


def test_reduce_window_negative_padding(rng):
    # negative padding is realized as a slice after the batched window op (see _window_bind)
    tu.check_vmap(lambda x: lax.reduce_window_sum(x, (2,), (2,), ((-1, 1),)), [_floats(rng, (7,))],
                  rtol=1e-6, atol=1e-6)


def test_reduce_window_generic_wrapper(rng):
    # lax.reduce_window with a non-identity init adds elementwise terms around the primitive
    tu.check_vmap(lambda x: lax.reduce_window(x, 0.5, lax.max, (3,), (2,), "SAME"), [_floats(rng, (6,))])


# ----- cumsum / cumprod / cummax / cummin / cumlogsumexp -------------------------------------------

CUM_CASES = [((5,), 0, False), ((3, 4), 1, True), ((3, 4), 0, False), ((0, 3), 0, True)]


@pytest.mark.parametrize("shape,axis,reverse", CUM_CASES)
@pytest.mark.parametrize("op", [lax.cumsum, lax.cumprod, lax.cummax, lax.cummin, lax.cumlogsumexp],
                         ids=["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
def test_cumulative(rng, op, shape, axis, reverse):
    tu.check_vmap(lambda x: op(x, axis, reverse=reverse), [_floats(rng, shape)], rtol=1e-5, atol=1e-6)


def test_cumsum_int_and_cummax_bool(rng):
    tu.check_vmap(lambda x: lax.cumsum(x, 1), [tu.rand(rng, (B, 2, 5), np.int32)])
    tu.check_vmap(lambda x: lax.cummax(x, 0, reverse=True), [tu.rand(rng, (B, 4), np.bool_)])


# ----- the user-level path: core.numpy functions under vmap ------------------------------------------

def test_numpy_sum_last_axis(rng):
    x = _floats(rng, (3, 4))
    tu.check_vmap(lambda x: jnp.sum(x, axis=-1), [x], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(core.vmap(lambda r: jnp.sum(r, axis=-1))(x)), x.sum(-1), rtol=1e-6)


def test_numpy_argmax(rng):
    x = rng.integers(0, 4, size=(B, 3, 4)).astype(np.float32)
    tu.check_vmap(jnp.argmax, [x])  # over the flattened example
    tu.check_vmap(lambda x: jnp.argmax(x, axis=1), [x])
    np.testing.assert_array_equal(np.asarray(core.vmap(lambda r: jnp.argmax(r, axis=1))(x)), x.argmax(-1))


def test_numpy_cumsum(rng):
    x = _floats(rng, (3, 4))
    tu.check_vmap(lambda x: jnp.cumsum(x, axis=0), [x], rtol=1e-5, atol=1e-6)
    # axis=None: each (10, 4) example is flattened first
    np.testing.assert_allclose(np.asarray(core.vmap(jnp.cumsum, in_axes=1)(x)),
                               np.cumsum(np.moveaxis(x, 1, 0).reshape(3, 40), axis=1), rtol=1e-5, atol=1e-5)


def test_numpy_max_keepdims(rng):
    x = _floats(rng, (3, 4))
    tu.check_vmap(lambda x: jnp.max(x, axis=0, keepdims=True), [x])
    # examples x[:, :, k] of shape (10, 3), each reduced to (10, 1), stacked at axis 1
    out = core.vmap(lambda r: jnp.max(r, axis=1, keepdims=True), in_axes=2, out_axes=1)(x)
    np.testing.assert_array_equal(np.asarray(out), np.moveaxis(x.max(axis=1, keepdims=True), 2, 1))


# ----- compositions --------------------------------------------------------------------------------

def test_jit_of_vmap(rng):
    x = _floats(rng, (3, 4))
    f = core.jit(core.vmap(lambda r: lax.cumsum(lax.reduce_max(r, (1,)), 0), in_axes=2))
    expected = np.cumsum(np.moveaxis(x, 2, 0).max(axis=2), axis=1)
    np.testing.assert_allclose(np.asarray(f(x)), expected, rtol=1e-6)


def test_vmap_of_vmap(rng):
    x = _floats(rng, (3, 4, 5))  # two mapped axes: 0 (outer) and, per outer example, 1 (inner)
    inner = core.vmap(lambda r: lax.reduce_sum(r, (0,)), in_axes=1)
    out = core.vmap(inner, in_axes=0)(x)
    np.testing.assert_allclose(np.asarray(out), x.sum(axis=1), rtol=1e-5)
    out = core.vmap(core.vmap(lambda r: lax.argmin(r, 0, np.int32), in_axes=2), in_axes=1)(x)
    # out[i, j, k] = argmin over b of x[b, i, k, j]
    np.testing.assert_array_equal(np.asarray(out), np.transpose(x, (1, 3, 2, 0)).argmin(axis=3))


def test_vmap_of_grad(rng):
    # per-example gradient of sum(cumsum(x) * x): d/dx_i = sum_{j>=i} x_j + cumsum(x)_i
    x = _floats(rng, (5,))
    g = core.vmap(core.grad(lambda r: lax.reduce_sum(lax.mul(lax.cumsum(r, 0), r), (0,))))(x)
    expected = np.cumsum(x[:, ::-1], axis=1)[:, ::-1] + np.cumsum(x, axis=1)
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-5, atol=1e-5)


def test_grad_of_vmap(rng):
    x = _floats(rng, (6,))

    def loss(xs):
        return lax.reduce_sum(core.vmap(lambda r: lax.reduce_window_sum(r, (2,), (2,), "VALID"))(xs), (0, 1))
    g = core.grad(loss)(x)
    np.testing.assert_allclose(np.asarray(g), np.ones_like(x), rtol=1e-6)


def test_vmap_of_grad_choosers(rng):
    # the jvp rules of reduce_max and reduce_window_max / cummax, batched: ties share the tangent
    x = rng.integers(0, 3, size=(B, 5)).astype(np.float32)
    g = core.vmap(core.grad(jnp.max))(x)
    at_max = (x == x.max(axis=1, keepdims=True)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(g), at_max / at_max.sum(axis=1, keepdims=True), rtol=1e-6)
    tu.check_vmap(core.grad(lambda r: lax.reduce_sum(lax.reduce_window_max(r, (2,), (1,), "VALID"), (0,))),
                  [x], sizes=(10,))
    tu.check_vmap(core.grad(lambda r: lax.reduce_sum(lax.cummax(r, 0), (0,))), [x], sizes=(10,))


# ----- reduce_p: lax.reduce with a computation that is not a lax monoid -----------------------------

def test_reduce_general_lambda_and_variadic(rng):
    x = _floats(rng, (3, 4))
    idx = np.broadcast_to(np.arange(4, dtype=np.int32), (B, 3, 4))

    def argmax_pairs(a, b):
        pick = (a[0] > b[0]) | ((a[0] == b[0]) & (a[1] < b[1]))
        return lax.select(pick, a[0], b[0]), lax.select(pick, a[1], b[1])

    tu.check_vmap(lambda v: lax.reduce(v, 0.0, lambda p, q: p + q, (1,)), [x], sizes=(10,))
    tu.check_vmap(lambda v, i: lax.reduce((v, i), (-np.inf, np.int32(0)), argmax_pairs, (0,)), [x, idx],
                  sizes=(10,))
    with pytest.raises(NotImplementedError, match=r"reduce: vmap over the init values"):
        core.vmap(lambda v, i: lax.reduce(v, i, lambda p, q: p + q, (0,)))(x[:, 0], x[:, 0, 0])
    # the batching rule of reduce_p moves the batch axis to the front and shifts the dimensions

"""Derivatives of the structural and gather/scatter primitives (core/lax/structural.py, slicing.py)
and of the core.numpy functions built on them.

Oracles: central differences and the inner-product identity (`check_grads`, float64), hand-derived
cotangents where a convention matters (ties, repeated scatter indices, out-of-bounds windows), and
eager == jit for a few compositions.
"""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import dtypes, lax, test_util as tu

SHAPES = [(), (4,), (2, 3), (2, 1, 3), (0, 4)]
NONSCALAR = SHAPES[1:]

GDN_ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
SDN_ROWS = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))
SDN_POINTS = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))


def _normal(rng, shape):
    return rng.standard_normal(shape)


def _grad_of(f, argnums=0):
    """The gradient of sum(f(...) * w) for fixed random weights w (so every output element matters)."""
    def loss(*args):
        out = f(*args)
        w = np.cos(np.arange(out.size, dtype=np.float64) + 1.0).reshape(out.shape)
        return jnp.sum(out * w)
    return core.grad(loss, argnums)


# ----- structural: one case builder per primitive, sampled over shapes -------------------------------

def _pad_config(shape):
    configs = [(1, -1, 1), (-1, 2, 0), (0, 1, 2), (2, -3, 1)]
    return [configs[i % len(configs)] for i in range(len(shape))]


def _structural_case(name, shape, rng):
    """(function, args) for one primitive at one operand shape."""
    x = _normal(rng, shape)
    nd = len(shape)
    if name == "transpose":
        return (lambda x: lax.transpose(x, tuple(range(1, nd)) + (0,) if nd else ())), (x,)  # not an involution
    if name == "rev":
        return (lambda x: lax.rev(x, tuple(range(nd)))), (x,)
    if name == "squeeze":  # expand_dims is broadcast_in_dim; squeeze undoes it
        return (lambda x: lax.squeeze(lax.expand_dims(x, (0,)) * 2.0, (0,))), (x,)
    if name == "pad":
        config = _pad_config(shape)
        return (lambda x, v: lax.pad(x, v, config)), (x, np.float64(0.3))
    if name == "concatenate":
        y = _normal(rng, shape)
        return (lambda x, y: lax.concatenate([x, y, x], 0)), (x, y)
    if name == "slice":
        starts = [min(1, d) for d in shape]
        return (lambda x: lax.slice(x, starts, shape, [2] * nd)), (x,)
    if name == "dynamic_slice":
        # -1 counts from the end, 7 is clamped back into bounds
        starts = [(1, -1, 7)[i % 3] for i in range(nd)]
        sizes = [max(d - 1, 0) for d in shape]
        return (lambda x: lax.dynamic_slice(x, starts, sizes)), (x,)
    if name == "dynamic_update_slice":
        starts = [(np.int32(7), 1, -1)[i % 3] for i in range(nd)]
        u = _normal(rng, [max(d - 1, 0) for d in shape])
        return (lambda x, u: lax.dynamic_update_slice(x, u, starts)), (x, u)
    raise AssertionError(name)


STRUCTURAL = ["transpose", "rev", "squeeze", "pad", "concatenate", "slice", "dynamic_slice",
              "dynamic_update_slice"]
# every primitive at rank 3 (where a wrong permutation or axis shows), plus two sampled shapes
STRUCTURAL_CASES = [(name, shape) for name in STRUCTURAL
                    for shape in [(2, 1, 3)] + tu.sample_cases(
                        [s for s in (NONSCALAR if name == "concatenate" else SHAPES) if s != (2, 1, 3)],
                        f"grad_structural_{name}", n=2)]


@pytest.mark.parametrize("name,shape", STRUCTURAL_CASES, ids=[f"{n}-{s}" for n, s in STRUCTURAL_CASES])
def test_structural_check_grads(x64, rng, name, shape):
    f, args = _structural_case(name, shape, rng)
    tu.check_grads(f, args, order=2, modes=("fwd", "rev"))


def test_pad_transpose_by_hand(x64):
    # d/dx and d/dv of sum(pad(x, v) * 1): every surviving operand element once; v fills the rest
    x = np.arange(6.0).reshape(2, 3)
    config = [(1, -1, 1), (-2, 1, 0)]   # dim 0: [v x0 v x1] minus the last; dim 1: [x2 v]
    out_shape = (3, 2)
    gx, gv = core.grad(lambda x, v: jnp.sum(lax.pad(x, v, config)), (0, 1))(x, np.float64(0.5))
    np.testing.assert_array_equal(np.asarray(gx), [[0, 0, 1], [0, 0, 0]])
    assert float(gv) == np.prod(out_shape) - 1
    out = lax.pad(x, np.float64(0.5), config)
    np.testing.assert_array_equal(np.asarray(out), [[0.5, 0.5], [2.0, 0.5], [0.5, 0.5]])


def test_slice_transpose_places_cotangent(x64):
    x = np.arange(7.0)
    ct = np.array([10.0, 20.0, 30.0])
    (g,) = core.vjp(lambda x: lax.slice(x, (1,), (7,), (2,)), x)[1](ct)
    np.testing.assert_array_equal(np.asarray(g), [0, 10, 0, 20, 0, 30, 0])


def test_dynamic_slice_clamped_transpose(x64):
    # start 3 with size 3 in a length-4 operand is clamped to 1: the cotangent lands on [1, 4)
    (g,) = core.vjp(lambda x: lax.dynamic_slice(x, (np.int32(3),), (3,)), np.arange(4.0))[1](np.ones(3))
    np.testing.assert_array_equal(np.asarray(g), [0, 1, 1, 1])
    gx, gu = core.vjp(lambda x, u: lax.dynamic_update_slice(x, u, (np.int32(3),)), np.arange(4.0),
                      np.ones(2))[1](np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(np.asarray(gx), [1, 2, 0, 0])
    np.testing.assert_array_equal(np.asarray(gu), [3, 4])


# ----- gather and the scatter family -------------------------------------------------------------------

@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_gather_check_grads(x64, rng, mode):
    x = _normal(rng, (5, 3))
    idx = np.array([[2], [0], [4], [7], [-1], [2]], np.int32)   # out of bounds and repeated
    tu.check_grads(lambda x: lax.gather(x, idx, GDN_ROWS, (1, 3), mode=mode, fill_value=1.5), (x,), order=2)


def test_gather_transpose_agrees_with_out_of_bounds_semantics(x64):
    x = np.arange(4.0)
    idx = np.array([[5], [-2], [1]], np.int32)
    dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    ct = np.array([1.0, 10.0, 100.0])
    cases = [(None, [3, 0, 1], [10, 100, 0, 1]), ("clip", [3, 0, 1], [10, 100, 0, 1]),
             ("fill", [-1, -1, 1], [0, 100, 0, 0])]
    for mode, expected_out, expected_ct in cases:
        out, pullback = core.vjp(lambda x: lax.gather(x, idx, dn, (1,), mode=mode, fill_value=-1.0), x)
        np.testing.assert_array_equal(np.asarray(out), expected_out, err_msg=str(mode))
        np.testing.assert_array_equal(np.asarray(pullback(ct)[0]), expected_ct, err_msg=str(mode))


@pytest.mark.parametrize("mode", [None, "clip"])
@pytest.mark.parametrize("prim", ["scatter_add", "scatter"])
def test_scatter_linear_check_grads(x64, rng, prim, mode):
    x, u = _normal(rng, (5, 3)), _normal(rng, (5, 3))
    idx = np.array([[2], [0], [4], [7], [2]], np.int32)   # repeated and out of bounds
    op = getattr(lax, prim)
    tu.check_grads(lambda x, u: op(x, idx, u, SDN_ROWS, mode=mode), (x, u), order=2)


def test_scatter_unique_indices_check_grads(x64, rng):
    x, u = _normal(rng, (5, 3)), _normal(rng, (3, 3))
    idx = np.array([[3], [0], [1]], np.int32)
    f = lambda x, u: lax.scatter(x, idx, u, SDN_ROWS, unique_indices=True)  # noqa: E731
    tu.check_grads(f, (x, u), order=2)
    # scatter's own transpose rule (the unique case): the overwritten rows get nothing
    ct = _normal(rng, (5, 3))
    gx, gu = core.linear_transpose(f, x, u)(ct)
    expected_x = ct.copy()
    expected_x[[3, 0, 1]] = 0
    np.testing.assert_array_equal(np.asarray(gx), expected_x)
    np.testing.assert_array_equal(np.asarray(gu), ct[[3, 0, 1]])


def test_scatter_repeated_indices_follow_the_winner(x64):
    x = np.array([1.0, 2.0, 3.0])
    u = np.array([10.0, 20.0, 30.0])
    idx = np.array([[1], [1], [2]], np.int32)
    w = np.array([1.0, 2.0, 3.0])
    f = lambda x, u: lax.scatter(x, idx, u, SDN_POINTS)  # noqa: E731
    out = np.asarray(f(x, u))
    gx, gu = core.grad(lambda x, u: jnp.sum(f(x, u) * w), (0, 1))(x, u)
    assert out[1] in (10.0, 20.0) and out[2] == 30.0 and out[0] == 1.0
    winner = 0 if out[1] == 10.0 else 1
    expected_u = np.zeros(3)
    expected_u[winner], expected_u[2] = 2.0, 3.0
    np.testing.assert_array_equal(np.asarray(gx), [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(gu), expected_u)
    with pytest.raises(NotImplementedError, match="scatter transpose is only implemented where unique_indices"):
        core.linear_transpose(f, x, u)(w)


def test_scatter_mul_check_grads(x64, rng):
    x, u = _normal(rng, (5, 3)), _normal(rng, (3, 3))
    unique = np.array([[3], [0], [1]], np.int32)
    repeated = np.array([[3], [3], [1]], np.int32)
    tu.check_grads(lambda x, u: lax.scatter_mul(x, unique, u, SDN_ROWS, unique_indices=True), (x, u), order=2)
    tu.check_grads(lambda x: lax.scatter_mul(x, repeated, u, SDN_ROWS), (x,), order=2)
    with pytest.raises(NotImplementedError, match="scatter_mul gradients with respect to the updates"):
        core.grad(lambda u: jnp.sum(lax.scatter_mul(x, repeated, u, SDN_ROWS)))(u)


@pytest.mark.parametrize("prim", ["scatter_min", "scatter_max"])
def test_scatter_extremal_check_grads(x64, rng, prim):
    x, u = _normal(rng, (5, 3)), _normal(rng, (4, 3))
    idx = np.array([[2], [0], [2], [9]], np.int32)
    op = getattr(lax, prim)
    tu.check_grads(lambda x, u: op(x, idx, u, SDN_ROWS), (x, u), order=2)


@pytest.mark.parametrize("prim", ["scatter_min", "scatter_max"])
def test_scatter_extremal_ties_split_evenly(x64, prim):
    # out[0] = extremum(x0, u0, u1) with x0 == u0 tied at the extremum: each gets half (as JAX)
    x = np.array([1.0, 5.0])
    u = np.array([1.0, 3.0 if prim == "scatter_min" else -3.0, 7.0])
    idx = np.array([[0], [0], [1]], np.int32)
    op = getattr(lax, prim)
    gx, gu = core.grad(lambda x, u: jnp.sum(op(x, idx, u, SDN_POINTS) * np.array([1.0, 2.0])), (0, 1))(x, u)
    win_x1 = prim == "scatter_min"   # min(5, 7) keeps x1; max(5, 7) takes u2
    np.testing.assert_array_equal(np.asarray(gx), [0.5, 2.0 if win_x1 else 0.0])
    np.testing.assert_array_equal(np.asarray(gu), [0.5, 0.0, 0.0 if win_x1 else 2.0])


# ----- non-differentiable primitives -------------------------------------------------------------------

def test_iota_and_bitcast_are_not_differentiable(x64):
    def f(x):
        bits = lax.bitcast_convert_type(x, np.int64)
        back = lax.bitcast_convert_type(x, np.float64)
        ramp = lax.iota(np.float64, 3)
        return bits, back * 0.0 + ramp
    x = np.array([1.0, 2.0, 3.0])
    (bits, y), (t_bits, t_y) = core.jvp(f, (x,), (np.ones(3),))
    assert t_bits.dtype == dtypes.float0 and t_bits.shape == (3,)
    np.testing.assert_array_equal(np.asarray(t_y), np.zeros(3))
    np.testing.assert_array_equal(np.asarray(y), [0.0, 1.0, 2.0])
    # an integer output differentiated in reverse mode: zero cotangent, no error
    g = core.grad(lambda x: jnp.sum(lax.convert_element_type(lax.bitcast_convert_type(x, np.int64), np.float64)))(x)
    np.testing.assert_array_equal(np.asarray(g), np.zeros(3))


# ----- core.numpy functions built on these primitives --------------------------------------------------

_I2 = np.array([2, 0])
_I3 = np.array([1, 1, 3])


def _at(x):
    return jnp.asarray(x)


NUMPY_CASES = {
    "take_clip": lambda x, u: jnp.take(x, np.array([3, 0, 5]), axis=0, mode="clip"),
    "take_axis1": lambda x, u: jnp.take(x, np.array([2, 0, 2]), axis=1),
    "getitem_int_array": lambda x, u: x[_I3],
    "getitem_mixed": lambda x, u: x[1:, np.array([0, 2, 2])],
    "getitem_strided": lambda x, u: x[::-2, 1:],
    "getitem_scalar": lambda x, u: x[-1, 1],
    "at_set": lambda x, u: _at(x).at[_I2].set(u),
    "at_set_repeated": lambda x, u: _at(x).at[np.array([1, 1])].set(u),
    "at_add": lambda x, u: _at(x).at[_I3].add(u[np.array([0, 1, 0])]),
    "at_mul_unique": lambda x, u: _at(x).at[_I2].mul(u, unique_indices=True),
    "at_min": lambda x, u: _at(x).at[_I3].min(u[np.array([0, 1, 1])]),
    "at_max": lambda x, u: _at(x).at[_I3].max(u[np.array([0, 1, 1])]),
    "concatenate": lambda x, u: jnp.concatenate([x, u, x[:1]], axis=0),
    "pad_constant": lambda x, u: jnp.pad(x, ((1, 2), (0, 3)), constant_values=u[0, 0]),
    "pad_reflect": lambda x, u: jnp.pad(x, ((1, 2), (2, 1)), mode="reflect"),
    "flip": lambda x, u: jnp.flip(x),
    "transpose": lambda x, u: jnp.transpose(x),
    "roll": lambda x, u: jnp.roll(x, -5),
    "split": lambda x, u: jnp.split(x, [1, 3]),
}


@pytest.mark.parametrize("name", list(NUMPY_CASES))
def test_numpy_functions_check_grads(x64, rng, name):
    x, u = _normal(rng, (4, 3)), _normal(rng, (2, 3))
    tu.check_grads(NUMPY_CASES[name], (x, u), order=2 if name in ("at_set_repeated", "pad_constant") else 1)


def test_numpy_getitem_grad_by_hand(x64):
    # repeated integer indices accumulate; a slice's cotangent lands only in the slice
    x = np.arange(5.0)
    g = core.grad(lambda x: jnp.sum(x[np.array([1, 1, 4])]) + jnp.sum(x[:2]))(x)
    np.testing.assert_array_equal(np.asarray(g), [1.0, 3.0, 0.0, 0.0, 1.0])


# ----- float32 and jit ---------------------------------------------------------------------------

def test_float32_smoke(rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    u = rng.standard_normal((2, 3)).astype(np.float32)
    tu.check_grads(lambda x: lax.pad(lax.transpose(x, (1, 0)), np.float32(0.5), [(1, -1, 1), (0, 2, 0)]), (x,),
                   order=1)
    tu.check_grads(lambda x, u: _at(x).at[_I2].add(u)[np.array([0, 2, 3])], (x, u), order=1)


def _composite(x, u):
    y = lax.concatenate([lax.rev(x, (0,)), u], 0)
    y = lax.dynamic_slice(lax.pad(y, np.float64(0.0), [(1, 1, 1), (0, 0, 0)]), (np.int32(2), 0), (5, 3))
    y = lax.scatter_add(y, np.array([[0], [4], [0]], np.int32), u[np.array([0, 1, 1])] ** 2, SDN_ROWS)
    return lax.gather(lax.transpose(y, (1, 0)) * y[:3, :1], np.array([[1], [0]], np.int32),
                      GDN_ROWS, (1, 5), mode="clip")


def test_grad_under_jit_matches_eager(x64, rng):
    x, u = _normal(rng, (4, 3)), _normal(rng, (2, 3))
    eager = _grad_of(_composite, (0, 1))(x, u)
    outer = core.jit(_grad_of(_composite, (0, 1)))(x, u)
    inner = _grad_of(core.jit(_composite), (0, 1))(x, u)
    for a, b, c in zip(eager, outer, inner, strict=True):
        tu.assert_allclose(np.asarray(b), np.asarray(a), np.float64)
        tu.assert_allclose(np.asarray(c), np.asarray(a), np.float64)
    tu.check_grads(_composite, (x, u), order=2)


@pytest.mark.parametrize("method", ["set", "max"])
def test_scatter_id_trick_under_jit(x64, rng, method):
    # the repeated-index jvp (scattered ids, masks, scatter_add) staged inside jit and around it
    x, u = _normal(rng, (4, 3)), _normal(rng, (3, 3))
    idx = np.array([1, 1, 3])
    f = lambda x, u: jnp.sum(jnp.sin(getattr(_at(x).at[idx], method)(u)))  # noqa: E731
    g = core.grad(f, (0, 1))
    for a, b, c in zip(g(x, u), core.jit(g)(x, u), core.grad(core.jit(f), (0, 1))(x, u), strict=True):
        tu.assert_allclose(np.asarray(b), np.asarray(a), np.float64)
        tu.assert_allclose(np.asarray(c), np.asarray(a), np.float64)

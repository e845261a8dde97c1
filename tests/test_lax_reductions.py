"""lax reductions, argmax/argmin, cumulative ops, reduce_window and reduce against NumPy float64
oracles (and a plain loop for windows)."""
import itertools

import numpy as np
import pytest

import core.numpy as jnp
from core import dtypes, lax, test_util as tu

REAL_DTYPES = tu.FLOAT_DTYPES + tu.INT_DTYPES + tu.UINT_DTYPES
# (shape, axes) pairs: full, partial, none (0-d), and size-0 reductions
SHAPE_AXES = [((), ()), ((4,), (0,)), ((2, 3), (1,)), ((2, 3), (0, 1)), ((2, 1, 3), (0, 2)),
              ((0,), (0,)), ((0, 4), (0,)), ((3, 0), (1,))]


def _wide(x):
    """The float64 (or complex128) oracle form of a test input."""
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _np_reduce(name, x, axes, dtype):
    dtype = np.dtype(dtype)
    if name in ("reduce_and", "reduce_or", "reduce_xor"):
        ufunc = {"reduce_and": np.logical_and if dtype == np.bool_ else np.bitwise_and,
                 "reduce_or": np.logical_or if dtype == np.bool_ else np.bitwise_or,
                 "reduce_xor": np.logical_xor if dtype == np.bool_ else np.bitwise_xor}[name]
        identity = {"reduce_and": True if dtype == np.bool_ else ~dtype.type(0), "reduce_or": dtype.type(0),
                    "reduce_xor": dtype.type(0)}[name]
        return ufunc.reduce(x, axis=axes, initial=identity).astype(dtype)
    if dtype.kind in "iub":
        # integers wrap on the device as in NumPy's own fixed-width arithmetic
        if name == "reduce_sum":
            return np.sum(x, axis=axes, dtype=dtype)
        if name == "reduce_prod":
            return np.prod(x, axis=axes, dtype=dtype)
        info = np.iinfo(dtype) if dtype.kind != "b" else None
        lowest = info.min if info else False
        highest = info.max if info else True
        if name == "reduce_max":
            return np.max(x, axis=axes, initial=lowest)
        return np.min(x, axis=axes, initial=highest)
    w = _wide(x)
    if name == "reduce_sum":
        return np.sum(w, axis=axes)
    if name == "reduce_prod":
        return np.prod(w, axis=axes)
    if name == "reduce_max":
        return np.max(w, axis=axes, initial=-np.inf)
    return np.min(w, axis=axes, initial=np.inf)


_ARITH = tu.sample_cases(tu.product(["reduce_sum", "reduce_prod"], SHAPE_AXES, REAL_DTYPES + tu.COMPLEX_DTYPES),
                         "lax_arith_reductions", 10)
_ORDER = tu.sample_cases(tu.product(["reduce_max", "reduce_min"], SHAPE_AXES, REAL_DTYPES + tu.BOOL_DTYPES),
                         "lax_order_reductions", 10)
_BITS = tu.sample_cases(tu.product(["reduce_and", "reduce_or", "reduce_xor"], SHAPE_AXES,
                                   tu.INT_DTYPES + tu.UINT_DTYPES + tu.BOOL_DTYPES), "lax_bit_reductions", 8)


@pytest.mark.parametrize("name,shape_axes,dtype", _ARITH + _ORDER + _BITS)
def test_monoid_reductions_match_numpy(rng, name, shape_axes, dtype):
    shape, axes = shape_axes
    x = tu.rand(rng, shape, dtype, low=-2, high=2)
    out = getattr(lax, name)(jnp.asarray(x), axes)
    expected = _np_reduce(name, x, axes, dtype)
    assert out.dtype == np.dtype(dtype)
    # products of float16/bfloat16 values accumulate rounding per factor
    atol = 5e-2 if np.dtype(dtype) == dtypes.bfloat16 else None
    tu.assert_allclose(out, expected, dtype, atol=atol, rtol=atol)


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint8, np.bool_])
def test_empty_reductions_give_identities(dtype):
    x = jnp.zeros((0, 2), dtype)
    dt = np.dtype(dtype)
    lowest = -np.inf if dt.kind == "f" else False if dt.kind == "b" else np.iinfo(dt).min
    highest = np.inf if dt.kind == "f" else True if dt.kind == "b" else np.iinfo(dt).max
    np.testing.assert_array_equal(lax.reduce_max(x, (0,)), np.full(2, lowest, dt))
    np.testing.assert_array_equal(lax.reduce_min(x, (0,)), np.full(2, highest, dt))
    if dt.kind != "b":
        np.testing.assert_array_equal(lax.reduce_sum(x, (0,)), np.zeros(2, dt))
        np.testing.assert_array_equal(lax.reduce_prod(x, (0,)), np.ones(2, dt))
    if dt.kind in "iub":
        all_bits = True if dt.kind == "b" else ~dt.type(0)
        np.testing.assert_array_equal(lax.reduce_and(x, (0,)), np.full(2, all_bits, dt))
        np.testing.assert_array_equal(lax.reduce_or(x, (0,)), np.zeros(2, dt))


def test_max_min_propagate_nan():
    x = jnp.asarray(np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]], np.float32))
    np.testing.assert_array_equal(lax.reduce_max(x, (1,)), [np.nan, 5.0])
    np.testing.assert_array_equal(lax.reduce_min(x, (1,)), [np.nan, -np.inf])


def test_reduction_errors():
    with pytest.raises(ValueError, match=r"reduce_sum: axes \(2,\) are out of range .* shape \(2, 3\)"):
        lax.reduce_sum(jnp.ones((2, 3)), (2,))
    with pytest.raises(ValueError, match=r"reduce_max: axes \(0, 0\) are out of range or repeated"):
        lax.reduce_max(jnp.ones((2, 3)), (0, 0))
    # complex operands are accepted (lexicographic order): tests/test_numpy_complex_order.py
    with pytest.raises(TypeError, match=r"reduce_and does not accept dtype f32"):
        lax.reduce_and(jnp.ones(3), (0,))
    with pytest.raises(TypeError, match=r"reduce_sum does not accept dtype bool"):
        lax.reduce_sum(jnp.ones(3, jnp.bool_), (0,))


# ----- argmax / argmin -----------------------------------------------------------------------

_ARG_CASES = tu.sample_cases(tu.product(["argmax", "argmin"], [((4,), 0), ((2, 3), 1), ((2, 3), 0), ((3, 1, 2), 2)],
                                        [np.float32, dtypes.bfloat16, np.float16, np.int32, np.uint8,
                                         np.bool_]),
                             "lax_argminmax", 8)


@pytest.mark.parametrize("name,shape_axis,dtype", _ARG_CASES)
def test_argminmax_match_numpy(rng, name, shape_axis, dtype):
    shape, axis = shape_axis
    # few distinct values make ties likely: the first occurrence must win
    x = rng.integers(0, 3, size=shape).astype(dtype)
    out = getattr(lax, name)(jnp.asarray(x), axis, jnp.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, getattr(np, name)(x, axis=axis))


def test_argminmax_ties_nan_and_index_dtype():
    x = np.array([[1.0, 3.0, 3.0, 0.0], [np.nan, 2.0, np.nan, 9.0], [-np.inf, -np.inf, 5.0, 5.0]], np.float32)
    a = jnp.asarray(x)
    np.testing.assert_array_equal(lax.argmax(a, 1, jnp.int32), np.argmax(x, axis=1))  # [1, 0, 2]
    np.testing.assert_array_equal(lax.argmin(a, 1, jnp.int32), np.argmin(x, axis=1))  # [3, 0, 0]
    np.testing.assert_array_equal(lax.argmax(a, 1, jnp.int32), [1, 0, 2])
    out = lax.argmax(a, 0, jnp.int16)
    assert out.dtype == np.int16
    np.testing.assert_array_equal(out, np.argmax(x, axis=0))
    with pytest.raises(TypeError, match=r"argmax: index_dtype must be an integer type, got float32"):
        lax.argmax(a, 0, jnp.float32)
    with pytest.raises(ValueError, match=r"argmin: axes \(2,\) are out of range"):
        lax.argmin(a, 2, jnp.int32)


# ----- cumulative ops ------------------------------------------------------------------------

def _np_cumulative(name, x, axis, reverse):
    ufunc = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum, "cummin": np.minimum,
             "cumlogsumexp": np.logaddexp}[name]
    w = _wide(x) if x.dtype.kind in "fcV" or x.dtype == dtypes.bfloat16 else x
    if reverse:
        w = np.flip(w, axis)
    out = ufunc.accumulate(w, axis=axis) if w.size else w
    return np.flip(out, axis) if reverse else out


_CUM_CASES = tu.sample_cases(
    tu.product(["cumsum", "cumprod", "cummax", "cummin"], [((5,), 0), ((2, 3), 1), ((2, 3), -2), ((0, 3), 0)],
               [np.float32, np.float16, np.int32, np.uint8], [False, True]), "lax_cumulative", 10)
_CUM_CASES += [("cumlogsumexp", ((2, 4), 1), np.float32, False), ("cumlogsumexp", ((3,), 0), np.float32, True),
               ("cummax", ((4,), 0), np.bool_, False), ("cumsum", ((6,), 0), np.int8, True)]


@pytest.mark.parametrize("name,shape_axis,dtype,reverse", _CUM_CASES)
def test_cumulative_match_numpy(rng, name, shape_axis, dtype, reverse):
    shape, axis = shape_axis
    x = tu.rand(rng, shape, dtype, low=-2, high=2)
    out = getattr(lax, name)(jnp.asarray(x), axis=axis, reverse=reverse)
    assert out.dtype == np.dtype(dtype) and out.shape == shape
    tu.assert_allclose(out, _np_cumulative(name, x, axis, reverse), dtype, atol=5e-3 if dtype == np.float16 else None)


def test_cumulative_nan_and_infinities():
    x = jnp.asarray(np.array([-np.inf, -np.inf, 0.0, np.inf, 1.0], np.float32))
    np.testing.assert_allclose(lax.cumlogsumexp(x), np.logaddexp.accumulate(np.asarray(x, np.float64)))
    y = jnp.asarray(np.array([1.0, np.nan, 3.0], np.float32))
    np.testing.assert_array_equal(lax.cummax(y), [1.0, np.nan, np.nan])
    np.testing.assert_array_equal(lax.cumsum(y, reverse=True), [np.nan, np.nan, 3.0])
    with pytest.raises(ValueError, match=r"cumsum: axis 1 is out of bounds for an operand of shape \(3,\)"):
        lax.cumsum(y, axis=1)


# ----- reduce_window -------------------------------------------------------------------------

def _np_reduce_window(x, init, op, window, strides, padding, base_dilation=None, window_dilation=None):
    """XLA's ReduceWindow by a plain loop: dilate, pad with `init`, reduce each window from `init`."""
    x = np.asarray(x, np.float64)
    n = x.ndim
    base_dilation = base_dilation or (1,) * n
    window_dilation = window_dilation or (1,) * n
    dshape = tuple((d - 1) * b + 1 if d else 0 for d, b in zip(x.shape, base_dilation))
    dilated = np.full(dshape, init, np.float64)
    dilated[tuple(np.s_[::b] for b in base_dilation)] = x
    padded = np.pad(dilated, padding, constant_values=init)
    eff = [(w - 1) * wd + 1 for w, wd in zip(window, window_dilation)]
    out_shape = [max(0, (p - e) // s + 1) for p, e, s in zip(padded.shape, eff, strides)]
    out = np.empty(out_shape)
    for idx in itertools.product(*map(range, out_shape)):
        sl = tuple(np.s_[i * s: i * s + e: wd] for i, s, e, wd in zip(idx, strides, eff, window_dilation))
        out[idx] = op.reduce(padded[sl].ravel(), initial=init)
    return out


_WINDOW_CASES = [
    ("max", (4, 5), (2, 2), (2, 2), "VALID"),
    ("max", (4, 5), (3, 3), (2, 2), "SAME"),
    ("add", (5, 6), (2, 3), (1, 2), "SAME"),
    ("add", (1, 6, 6, 2), (1, 3, 3, 1), (1, 2, 2, 1), "VALID"),
    ("min", (7,), (3,), (2,), ((1, 2),)),
    ("add", (3, 4), (2, 2), (1, 1), ((1, 0), (0, 1))),
]


@pytest.mark.parametrize("kind,shape,window,strides,padding", _WINDOW_CASES)
def test_reduce_window_matches_loop(rng, kind, shape, window, strides, padding):
    x = tu.rand(rng, shape, np.float32)
    fn, ufunc, init = {"max": (lax.max, np.maximum, -np.inf), "min": (lax.min, np.minimum, np.inf),
                       "add": (lax.add, np.add, 0.0)}[kind]
    out = lax.reduce_window(jnp.asarray(x), init, fn, window, strides, padding)
    pads = lax.padtype_to_pads(shape, window, strides, padding)
    tu.assert_allclose(out, _np_reduce_window(x, init, ufunc, window, strides, pads), np.float32, atol=1e-5)


def test_reduce_window_same_padding_shapes_and_dilation(rng):
    assert lax.padtype_to_pads((5, 6), (3, 2), (2, 1), "SAME") == ((1, 1), (0, 1))
    assert lax.padtype_to_pads((5,), (3,), (2,), "VALID") == ((0, 0),)
    x = tu.rand(rng, (5, 6), np.float32)
    out = lax.reduce_window_max(jnp.asarray(x), (2, 2), (1, 2), ((0, 1), (1, 0)), base_dilation=(2, 1),
                                window_dilation=(1, 2))
    expected = _np_reduce_window(x, -np.inf, np.maximum, (2, 2), (1, 2), ((0, 1), (1, 0)), (2, 1), (1, 2))
    tu.assert_allclose(out, expected, np.float32)
    ints = jnp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    np.testing.assert_array_equal(lax.reduce_window_sum(ints, (1, 2), (1, 1), "VALID"), [[1, 3], [7, 9]])


def test_reduce_window_non_identity_init(rng):
    # XLA semantics: init is counted once per window and also fills every padding slot
    x = tu.rand(rng, (5,), np.float32)
    out = lax.reduce_window(jnp.asarray(x), 1.0, lax.add, (3,), (1,), "SAME")
    tu.assert_allclose(out, _np_reduce_window(x, 1.0, np.add, (3,), (1,), ((1, 1),)), np.float32, atol=1e-5)
    out = lax.reduce_window(jnp.asarray(x), 0.5, lax.max, (2,), (2,), ((0, 1),))
    tu.assert_allclose(out, _np_reduce_window(x, 0.5, np.maximum, (2,), (2,), ((0, 1),)), np.float32)


def test_reduce_window_errors():
    x = jnp.ones((4, 4))
    with pytest.raises(TypeError, match=r"reduce_window_max: window_dimensions must have one entry per operand "
                                        r"dimension; got window_dimensions \(2,\) for an operand of shape \(4, 4\)"):
        lax.reduce_window(x, -jnp.inf, lax.max, (2,), (1, 1), "VALID")
    with pytest.raises(ValueError, match=r"Unknown padding type: 'FULL'"):
        lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "FULL")
    with pytest.raises(NotImplementedError, match=r"reduce_window supports computation in \(lax.add, lax.max, "
                                                  r"lax.min\)"):
        lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 1), "VALID")
    with pytest.raises(TypeError, match=r"window dimensions, strides and dilations must be positive"):
        lax.reduce_window_sum(x, (2, 2), (0, 1), "VALID")


# ----- generic reduce ------------------------------------------------------------------------

def test_generic_reduce_monoids(rng):
    x = tu.rand(rng, (3, 4), np.float32)
    a = jnp.asarray(x)
    tu.assert_allclose(lax.reduce(a, 0.0, lax.add, (0,)), _wide(x).sum(0), np.float32, atol=1e-5)
    tu.assert_allclose(lax.reduce(a, 2.0, lax.add, (0,)), _wide(x).sum(0) + 2, np.float32, atol=1e-5)
    tu.assert_allclose(lax.reduce(a, 1.0, lax.mul, (1,)), _wide(x).prod(1), np.float32, atol=1e-5)
    tu.assert_allclose(lax.reduce(a, -np.inf, lax.max, (0, 1)), x.max(), np.float32)
    tu.assert_allclose(lax.reduce(a, 0.0, lax.max, (1,)), np.maximum(x.max(1), 0), np.float32)
    b = rng.random((3, 4)) < 0.5
    i = rng.integers(0, 8, (3, 4)).astype(np.int32)
    s, m, o = lax.reduce((a, jnp.asarray(i), jnp.asarray(b)), (np.inf, np.int32(2**31 - 1), True), lax.min, (1,))
    tu.assert_allclose(s, x.min(1), np.float32)
    np.testing.assert_array_equal(m, i.min(1))
    np.testing.assert_array_equal(o, b.all(1))
    np.testing.assert_array_equal(lax.reduce(jnp.asarray(i), 0, lax.bitwise_or, (0,)), np.bitwise_or.reduce(i, 0))
    np.testing.assert_array_equal(lax.reduce(jnp.asarray(b), False, lax.bitwise_or, (0,)), b.any(0))
    with pytest.raises(TypeError, match=r"reduce: got 2 operands but 1 init values"):
        lax.reduce((a, a), (0.0,), lax.add, (0,))


def test_reduce_window_min_primitive_directly(rng):
    x = tu.rand(rng, (7,), np.float32)
    out = lax.reduce_window_min(jnp.asarray(x), (2,), (1,), "VALID")
    np.testing.assert_array_equal(np.asarray(out), np.minimum(x[:-1], x[1:]))


def test_reduce_window_with_negative_padding_crops_instead_of_crashing():
    # XLA's simplifier aborts the process on reduce_window with negative padding; the wrapper
    # realizes negative padding as a slice of a non-negatively padded result
    x = jnp.arange(6.0)
    np.testing.assert_array_equal(np.asarray(lax.reduce_window_sum(x, (1,), (1,), ((0, -1),))),
                                  [0.0, 1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(lax.reduce_window_sum(x, (2,), (2,), ((-1, 1),))),
                                  [3.0, 7.0, 5.0])
    np.testing.assert_array_equal(np.asarray(lax.reduce_window_max(x, (2,), (1,), ((-2, 0),))),
                                  [3.0, 4.0, 5.0])

"""Numerics audit (issue 17, items 5 and 9): results that differed from NumPy, checked against it.

Each class is table-driven and run in float32 and in float64 (64-bit types under the `x64`
fixture): integer and float division by zero, gcd/lcm at the integer extremes, quantiles over
empty axes, the gradient of `det` at singular matrices (against cofactors from minors and central
differences, both in NumPy float64), `logaddexp` gradients at infinities, `pad(mode="mean")` of
bools and small integers, `reshape`/`ravel` orders, and big-endian host arrays.
"""
import itertools
import warnings

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core.avals import ShapedArray
from core.runtime import buffers

LA = jnp.linalg


@pytest.fixture(params=["float32", "float64"])
def precision(request):
    """'float32' (the default types) or 'float64' (with x64 on: int64/uint64 join the tables)."""
    if request.param == "float64":
        request.getfixturevalue("x64")
    return request.param


def _ints(precision):
    dts = [np.int8, np.int16, np.int32, np.uint8, np.uint32]
    return dts + ([np.int64, np.uint64] if precision == "float64" else [])


def _same(actual, expected):
    """Equal values, dtype and shape; NaNs equal and, for floats, the sign of zero counts."""
    actual = np.asarray(actual)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual.dtype, actual.shape,
                                                                               expected.dtype, expected.shape)
    if expected.dtype.kind == "f":
        same = (actual == expected) & (np.signbit(actual) == np.signbit(expected)) | np.isnan(actual) & np.isnan(expected)
    else:
        same = actual == expected
    return same


def _pairs(values, dtype):
    v = np.array(sorted(values), dtype)
    x, y = np.meshgrid(v, v, indexing="ij")
    return x.ravel(), y.ravel()


# ----- integer (and float) division by zero -----------------------------------------------------------

def _division_operands(dtype):
    if np.dtype(dtype).kind == "f":
        return _pairs([0.0, -0.0, 1.0, -1.0, 3.0, 7.5, -7.5, 1e30, -1e-30, np.inf, -np.inf, np.nan], dtype)
    info = np.iinfo(dtype)
    values = {0, 1, 3, 7, info.max - 1, info.max}
    if info.min:
        values |= {-1, -3, -7, info.min + 1, info.min}  # includes INT_MIN // -1 (wraps in both)
    return _pairs(values, dtype)


DIVISION_OPS = {"floor_divide": np.floor_divide, "remainder": np.remainder, "mod": np.mod, "fmod": np.fmod,
                "divmod": np.divmod}


@pytest.mark.parametrize("name", sorted(DIVISION_OPS))
def test_division_table_matches_numpy(precision, name):
    dts = _ints(precision) + [np.dtype(precision)]
    for dtype in dts:
        x, y = _division_operands(dtype)
        with np.errstate(all="ignore"):
            expected = DIVISION_OPS[name](x, y)
        actual = core.jit(getattr(jnp, name))(x, y)
        if name != "divmod":
            expected, actual = (expected,), (actual,)
        for a, e in zip(actual, expected, strict=True):
            same = _same(a, e)
            assert same.all(), (name, np.dtype(dtype).name, list(zip(x[~same], y[~same], np.asarray(a)[~same],
                                                                      e[~same]))[:5])


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int8])
def test_integer_operators_by_zero_are_zero_eagerly(dtype):
    # the eager operators, with an Array and with a Python 0 as divisor: NumPy's 0, not the dividend
    x = np.array([5, 0, 1, np.iinfo(dtype).max], dtype)
    xj, zero = jnp.asarray(x), jnp.zeros(4, dtype)
    for got in (xj % 0, xj // 0, xj % zero, xj // zero, jnp.fmod(xj, zero), *divmod(xj, zero),
                *jnp.divmod(xj, 0)):
        np.testing.assert_array_equal(np.asarray(got), np.zeros(4, dtype))
        assert got.dtype == dtype


# ----- gcd and lcm at the integer extremes ------------------------------------------------------------

@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_extremes_match_numpy(precision, name):
    for dtype in _ints(precision):
        info = np.iinfo(dtype)
        values = {0, 1, 2, 3, 6, 12, info.max, info.max - 1, info.max // 2, info.max // 3}
        if info.min:
            values |= {-1, -2, -6, info.min, info.min + 1, info.min // 2, info.min // 3}
        x, y = _pairs(values, dtype)
        expected = getattr(np, name)(x, y)
        actual = core.jit(getattr(jnp, name))(x, y)
        same = _same(actual, expected)
        assert same.all(), (name, np.dtype(dtype).name, list(zip(x[~same], y[~same], np.asarray(actual)[~same],
                                                                  expected[~same]))[:5])


def test_gcd_of_int_min_is_positive_and_lcm_wraps_as_numpy():
    # the two reported cases: gcd(INT_MIN, 5) was -1, and an overflowing lcm had the opposite sign
    assert int(jnp.gcd(jnp.int32(-2**31), jnp.int32(5))) == 1
    assert int(jnp.gcd(jnp.int32(-2**31), jnp.int32(6))) == 2
    big = (2**20 + 1, 2**20 - 1)  # the lcm 2**40 - 1 wraps to -1 in int32
    assert int(jnp.lcm(jnp.int32(big[0]), jnp.int32(big[1]))) == int(np.lcm(np.int32(big[0]), np.int32(big[1]))) == -1


# ----- quantiles over empty axes ----------------------------------------------------------------------

QUANTILE_FNS = {  # function, q's shape
    "median": (lambda m, a, **kw: m.median(a, **kw), ()),
    "nanmedian": (lambda m, a, **kw: m.nanmedian(a, **kw), ()),
    "quantile": (lambda m, a, **kw: m.quantile(a, 0.3, **kw), ()),
    "quantile_q2": (lambda m, a, **kw: m.quantile(a, np.array([0.1, 0.9]), **kw), (2,)),
    "quantile_nearest": (lambda m, a, **kw: m.quantile(a, 0.5, method="nearest", **kw), ()),
    "nanquantile": (lambda m, a, **kw: m.nanquantile(a, 0.3, **kw), ()),
    "percentile": (lambda m, a, **kw: m.percentile(a, 40.0, **kw), ()),
    "percentile_lower": (lambda m, a, **kw: m.percentile(a, 40.0, method="lower", **kw), ()),
    "nanpercentile": (lambda m, a, **kw: m.nanpercentile(a, np.array([40.0, 60.0]), method="midpoint", **kw), (2,)),
}
EMPTY_CASES = [((0,), None), ((0,), 0), ((0, 3), 0), ((0, 3), 1), ((3, 0), 0), ((3, 0), 1), ((3, 0), None),
               ((2, 0, 3), (1, 2)), ((2, 0, 3), (0, 2)), ((2, 0, 3), 1), ((2, 0, 3), -1)]


@pytest.mark.parametrize("name", sorted(QUANTILE_FNS))
def test_quantiles_over_empty_axes_match_numpy(precision, name):
    # An empty reduced axis gives NaN and an empty kept axis an empty result (it crashed in
    # gather): NaNs of shape q.shape + the reduced shape. NumPy's median, nanquantile and
    # nanpercentile give exactly that; its quantile and percentile raise IndexError on an empty
    # reduced axis, and it cannot reshape an empty kept axis next to two reduced ones; its
    # nanquantile of a vector q over nothing drops q's axis. So the oracle is the shape rule,
    # checked against NumPy wherever NumPy answers for a scalar q.
    f, q_shape = QUANTILE_FNS[name]
    for (shape, axis), keepdims in itertools.product(EMPTY_CASES, [False, True]):
        a = np.zeros(shape, precision)
        expected = np.full(q_shape + np.sum(a, axis=axis, keepdims=keepdims).shape, np.nan, precision)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "mean of empty slice"
            try:
                numpy_result = np.asarray(f(np, a, axis=axis, keepdims=keepdims))
            except (IndexError, ValueError):
                numpy_result = None
        if numpy_result is not None and not q_shape:
            assert _same(numpy_result, expected).all()
        actual = f(jnp, a, axis=axis, keepdims=keepdims)
        assert _same(actual, expected).all(), (name, shape, axis, keepdims, np.asarray(actual), expected)


# ----- the gradient of det at singular matrices --------------------------------------------------------

def _cofactors(a):
    """C[i, j] = (-1)**(i + j) det(a without row i and column j): d det / da, in float64."""
    a = np.asarray(a, np.complex128 if np.iscomplexobj(a) else np.float64)
    n = a.shape[0]
    c = np.empty_like(a)
    for i, j in itertools.product(range(n), range(n)):
        minor = np.delete(np.delete(a, i, 0), j, 1)
        c[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if n > 1 else 1.0)
    return c


def _det_central_differences(a, h=0.5):
    """d det / da_ij by central differences: exact up to rounding, as det is affine in each entry."""
    a = np.asarray(a, np.float64)
    g = np.empty_like(a)
    for i, j in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[i, j] = h
        g[i, j] = (np.linalg.det(a + e) - np.linalg.det(a - e)) / (2 * h)
    return g


SINGULAR = {
    "2x2_rank1": [[1, 2], [2, 4]],                               # the reported case: [[4, -2], [-2, 1]]
    "2x2_zero_column": [[0, 1], [0, 1]],                         # zero pivot first, not last
    "2x2_nilpotent": [[0, 1], [0, 0]],                           # two zero pivots, cofactors nonzero
    "2x2_zero": [[0, 0], [0, 0]],
    "3x3_rank1": np.outer([1, -2, 3], [2, 1, -1]),               # rank n-2: all cofactors 0
    "3x3_rank1_ones": np.ones((3, 3)),
    "3x3_rank2_consecutive": [[1, 2, 3], [4, 5, 6], [7, 8, 9]],
    "3x3_rank2_sum": np.outer([1, 0, 2], [1, 2, -1]) + np.outer([0, 1, 1], [3, -1, 2]),
    "3x3_rank2_zero_column": [[0, 1, 2], [0, 3, 4], [0, 5, 6]],
    "3x3_rank2_repeated_row": [[2, -1, 3], [1, 4, 0], [2, -1, 3]],
    "3x3_nonsingular": [[2, 1, 0], [1, 3, 1], [0, 1, 4]],
}


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_gradient_at_singular_matrices(precision, name):
    a = np.asarray(SINGULAR[name], np.float64)  # small integers: exact in float32 as well
    cof = _cofactors(a)
    np.testing.assert_allclose(_det_central_differences(a), cof, atol=1e-9)  # the two oracles agree
    tol = 2e-5 if precision == "float32" else 1e-12
    scale = 1 + np.abs(a).max() ** (a.shape[0] - 1)
    g = core.jit(core.grad(LA.det))(a.astype(precision))
    assert np.asarray(g).dtype == np.dtype(precision)
    np.testing.assert_allclose(np.asarray(g, np.float64), cof, atol=tol * scale, rtol=0)


def test_det_gradient_singular_eager_batched_and_forward_mode():
    batch = np.array([SINGULAR["2x2_rank1"], SINGULAR["2x2_zero_column"], [[3.0, 1.0], [1.0, 2.0]]], np.float32)
    expected = np.stack([_cofactors(m) for m in batch])
    np.testing.assert_allclose(core.grad(LA.det)(batch[0]), expected[0], atol=1e-5)
    np.testing.assert_allclose(core.jit(core.grad(lambda m: jnp.sum(LA.det(m))))(batch), expected, atol=1e-5)
    np.testing.assert_allclose(core.jit(core.vmap(core.grad(LA.det)))(batch), expected, atol=1e-5)
    t = np.arange(4, dtype=np.float32).reshape(2, 2)
    _, tangent = core.jit(lambda a, t: core.jvp(LA.det, (a,), (t,)))(batch[0], t)
    np.testing.assert_allclose(float(tangent), np.sum(expected[0] * t), atol=1e-5)


def test_det_gradient_at_a_singular_complex_matrix():
    # det is holomorphic: its gradient is the (unconjugated) cofactor matrix, here of a rank-1 matrix
    a = np.outer([1 + 2j, 2 + 4j], [1, 1 - 0.5j * 2]).astype(np.complex64)
    assert np.linalg.matrix_rank(a) == 1
    _, tangent = core.jvp(LA.det, (a,), (np.ones_like(a),))
    np.testing.assert_allclose(complex(tangent), np.sum(_cofactors(a)), atol=1e-5)
    np.testing.assert_allclose(core.jit(core.grad(LA.det, holomorphic=True))(a), _cofactors(a), atol=1e-5)


def test_det_hessian_at_identity(x64):
    # second derivatives go through the cofactor's own rule: d2 det / da_ij da_kl at I is
    # [i == j][k == l] - [i == l][j == k]
    n = 3
    eye = np.eye(n)
    expected = np.einsum("ij,kl->ijkl", eye, eye) - np.einsum("il,jk->ijkl", eye, eye)
    np.testing.assert_allclose(core.jit(core.hessian(LA.det))(eye), expected, atol=1e-12)


# ----- logaddexp gradients at infinities --------------------------------------------------------------

LOGADDEXP_POINTS = [(-np.inf, -np.inf), (np.inf, np.inf), (-np.inf, 3.0), (3.0, -np.inf), (np.inf, 3.0),
                    (-2.0, np.inf), (1.0, 1.0), (2.0, -1.0), (-40.0, 40.0), (0.5, -0.25)]


def _logaddexp_partials(x1, x2, base):
    """b**x1 / (b**x1 + b**x2) and its mirror: NaN where both are the same infinity, where
    the derivative is undefined (the partials must sum to 1 wherever they exist)."""
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.float64(x1) - np.float64(x2)
        return 1 / (1 + base ** -d), 1 / (1 + base ** d)


@pytest.mark.parametrize("name,base", [("logaddexp", np.e), ("logaddexp2", 2.0)])
def test_logaddexp_gradient_at_infinities(precision, name, base):
    f = getattr(jnp, name)
    grad = core.jit(core.grad(f, argnums=(0, 1)))
    for x1, x2 in LOGADDEXP_POINTS:
        got = [float(g) for g in grad(np.array(x1, precision), np.array(x2, precision))]
        want = _logaddexp_partials(x1, x2, base)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-30, err_msg=f"{name} at {(x1, x2)}")
        if not np.isnan(want[0]):
            assert abs(sum(got) - 1) < 1e-6


# ----- pad(mode="mean") ---------------------------------------------------------------------------------

PAD_MEAN_CASES = [
    (np.array([True, False]), None),                       # NumPy: mean 0.5 cast back to bool is True
    (np.array([[True, False, False], [False, False, False]]), None),
    (np.array([False, True, True]), 1),
    (np.array([200, 255, 7], np.uint8), None),             # the sum 462 overflowed uint8
    (np.array([-100, -100, 7, 3], np.int8), 2),
    (np.array([1, 2, 1, 2], np.int16), None),              # a mean of 1.5 rounds half to even
]


@pytest.mark.parametrize("case", range(len(PAD_MEAN_CASES)))
def test_pad_mean_of_bools_and_small_integers(case):
    a, stat_length = PAD_MEAN_CASES[case]
    expected = np.pad(a, 2, mode="mean", stat_length=stat_length)
    actual = jnp.pad(a, 2, mode="mean", stat_length=stat_length)
    assert _same(actual, expected).all(), (np.asarray(actual), expected)


# ----- reshape and ravel orders -------------------------------------------------------------------------

def _host_layouts():
    x = np.arange(24).reshape(2, 3, 4)
    return {"C": x, "F": np.asfortranarray(x), "transposed": x.transpose(1, 0, 2), "strided": x[:, ::-1, ::2]}


@pytest.mark.parametrize("order", ["C", "F", "A"])
def test_reshape_orders_match_numpy(order):
    for layout, x in _host_layouts().items():
        for shape in [(4, 6), (24,), (2, 2, 6), (-1, 3)]:
            if layout == "strided" and shape[0] in (4, 24, 2):
                shape = (-1,)
            want = np.reshape(x, shape, order=order)
            np.testing.assert_array_equal(jnp.reshape(x, shape, order=order), want, err_msg=f"{layout} {shape}")
            xj = jnp.asarray(x)  # a purenn array reads as C-contiguous, so 'A' is 'C' for it
            want = np.reshape(np.ascontiguousarray(x), shape, order=order)
            np.testing.assert_array_equal(xj.reshape(shape, order=order), want)
            np.testing.assert_array_equal(xj.reshape(*shape, order=order), want)
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(core.jit(lambda v: jnp.reshape(v, (3, 2), order=order))(x),
                                  np.reshape(x, (3, 2), order=order))


@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_ravel_and_flatten_orders_match_numpy(order):
    for layout, x in _host_layouts().items():
        np.testing.assert_array_equal(jnp.ravel(x, order=order), np.ravel(x, order=order), err_msg=layout)
    xj = jnp.asarray(np.arange(6).reshape(2, 3))
    want = np.arange(6).reshape(2, 3).flatten(order=order)
    np.testing.assert_array_equal(xj.flatten(order=order), want)
    np.testing.assert_array_equal(xj.ravel(order=order), want)
    np.testing.assert_array_equal(core.jit(lambda v: jnp.ravel(v, order=order))(xj), want)


def test_reshape_order_errors_name_the_argument():
    x = jnp.ones((2, 3))
    with pytest.raises(ValueError, match="reshape: order='K' is not permitted"):
        jnp.reshape(x, (6,), order="K")
    with pytest.raises(ValueError, match="ravel: order must be one of 'C', 'F', 'A' or 'K', got order='Z'"):
        jnp.ravel(x, order="Z")


# ----- big-endian host arrays ---------------------------------------------------------------------------

BIG_ENDIAN = [">f4", ">i4", ">u2", ">c8", ">f2"]


@pytest.mark.parametrize("dtype", BIG_ENDIAN)
def test_big_endian_host_arrays_keep_their_values(dtype):
    host = np.arange(3, dtype=dtype)
    native = host.astype(np.dtype(dtype).newbyteorder("="))
    for name, got in [("asarray", jnp.asarray(host)), ("array", jnp.array(host)),
                      ("device_put", core.device_put(host)),
                      ("device_put committed", core.device_put(host, core.devices()[1])),
                      ("jit", core.jit(lambda v: v)(host)), ("eager numpy", jnp.negative(jnp.negative(host))),
                      ("lax", lax.neg(lax.neg(host)))]:
        assert got.dtype == native.dtype and got.dtype.isnative, name
        np.testing.assert_array_equal(np.asarray(got), native, err_msg=name)


def test_big_endian_in_mixed_operations_and_as_requested_dtype():
    np.testing.assert_array_equal(jnp.add(np.arange(3, dtype=">i4"), 1), [1, 2, 3])
    np.testing.assert_array_equal(core.jit(lambda a, b: a * b)(np.arange(3, dtype=">f4"), np.float32(2)),
                                  [0, 2, 4])
    np.testing.assert_array_equal(jnp.arange(4.0)[np.array([3, 1], ">i4")], [3, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # '>f4' is float32: no "truncated dtype" warning
        z = jnp.zeros(2, dtype=">f4")
        c = jnp.asarray(np.arange(2, dtype=">i2"), dtype=">f4")
    assert z.dtype == c.dtype == np.float32
    np.testing.assert_array_equal(c, [0, 1])


def test_big_endian_64_bit(x64):
    for dtype in (">f8", ">i8", ">u8"):
        host = np.array([1, 2**40 + 3], dtype=dtype)
        got = core.jit(lambda v: v + 1)(host)
        assert got.dtype == np.dtype(dtype).newbyteorder("=")
        np.testing.assert_array_equal(np.asarray(got), host.astype(got.dtype) + 1)


def test_buffer_put_converts_byte_order():
    # the last boundary: jaxlib copies the bytes as they are, which read back as other numbers
    buf = buffers.put(np.arange(3, dtype=">f4"), ShapedArray((3,), np.dtype(np.float32), False))
    np.testing.assert_array_equal(buffers.to_numpy(buf), [0.0, 1.0, 2.0])


def test_unsupported_dtype_still_refused_by_name():
    with pytest.raises(TypeError, match="only supports number and bool dtypes, got dtype <U1"):
        lax.neg(np.array(["a"]))

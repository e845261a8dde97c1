"""core.numpy reductions against NumPy in float64: values, JAX's result dtypes, axis/keepdims/where/
initial handling, NaN variants, quantiles and cumulative ops, and the error messages."""
import numpy as np
import pytest

import core.numpy as jnp
from core import dtypes, test_util as tu

AXES = [((), None), ((4,), 0), ((4,), None), ((2, 3), 1), ((2, 3), -2), ((2, 3), (0, 1)), ((2, 1, 3), (0, 2)),
        ((0,), None), ((3, 0), 1), ((0, 4), 0)]
DTYPES = [np.float32, np.float16, dtypes.bfloat16, np.int32, np.int8, np.uint8, np.bool_]


def _wide(x):
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _sum_dtype(dtype):
    """JAX's result dtype for sum/prod with x64 off."""
    dt = np.dtype(dtype)
    if dt.kind == "b" or (dt.kind == "i" and dt.itemsize < 4):
        return np.dtype(np.int32)
    if dt.kind == "u" and dt.itemsize < 4:
        return np.dtype(np.uint32)
    return dt


def _float_dtype(dtype):
    dt = np.dtype(dtype)
    return dt if dt.kind in "fc" or dt == dtypes.bfloat16 else np.dtype(np.float32)


def _numpy_raises(name, shape_axis, dtype):
    """max/min/ptp of an empty slice, and ptp of bools, raise in NumPy too (tested separately)."""
    shape, axis = shape_axis
    axes = (axis,) if isinstance(axis, int) else range(len(shape)) if axis is None else axis
    empty = any(shape[a] == 0 for a in axes)
    return (name in ("max", "min", "ptp") and empty) or (name == "ptp" and np.dtype(dtype) == np.bool_)


_CASES = tu.sample_cases([c for c in tu.product(["sum", "prod", "max", "min", "mean", "var", "std", "all", "any",
                                                 "ptp", "count_nonzero"], AXES, DTYPES, [False, True])
                          if not _numpy_raises(*c[:3])], "jnp_reductions", 40)


@pytest.mark.parametrize("name,shape_axis,dtype,keepdims", _CASES)
def test_reductions_match_numpy(rng, name, shape_axis, dtype, keepdims):
    shape, axis = shape_axis
    x = tu.rand(rng, shape, dtype, low=-2, high=2)
    out = getattr(jnp, name)(jnp.asarray(x), axis=axis, keepdims=keepdims)
    if name in ("sum", "prod"):
        expected_dtype = _sum_dtype(dtype)
    elif name in ("mean", "var", "std"):
        expected_dtype = _float_dtype(dtype)
    elif name in ("all", "any"):
        expected_dtype = np.dtype(np.bool_)
    elif name == "count_nonzero":
        expected_dtype = np.dtype(np.int32)
    else:
        expected_dtype = np.dtype(dtype)
    assert out.dtype == expected_dtype, (out.dtype, expected_dtype)
    w = _wide(x) if name not in ("all", "any", "count_nonzero") else x
    if name in ("sum", "prod") and expected_dtype.kind in "iu":
        w = x.astype(expected_dtype)
    with np.errstate(all="ignore"):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = getattr(np, name)(w, axis=axis, keepdims=keepdims)
    atol = 3e-2 if np.dtype(dtype) == dtypes.bfloat16 or np.dtype(dtype) == np.float16 else 1e-5
    tu.assert_allclose(out, np.asarray(expected), expected_dtype, atol=atol, rtol=atol)


def test_half_precision_sums_accumulate_in_float32():
    # float16 alone cannot count past 2048 (2048 + 1 rounds back to 2048)
    out = jnp.sum(jnp.ones(4096, jnp.float16))
    assert out.dtype == jnp.float16 and float(out) == 4096.0
    assert float(jnp.mean(jnp.ones(4096, jnp.bfloat16))) == 1.0


def test_sum_dtype_argument_and_x64(x64):
    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    assert jnp.sum(jnp.asarray(x)).dtype == np.int64
    out = jnp.sum(jnp.asarray(x), axis=0, dtype=jnp.float32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x.sum(0))


def test_where_and_initial(rng):
    x = tu.rand(rng, (3, 4), np.float32)
    where = rng.random((3, 4)) < 0.5
    row_mask = np.array([True, False, True, True])  # broadcasts against (3, 4)
    a = jnp.asarray(x)
    tu.assert_allclose(jnp.sum(a, axis=1, where=jnp.asarray(where)), _wide(x).sum(1, where=where), np.float32)
    tu.assert_allclose(jnp.sum(a, axis=0, initial=2.0), _wide(x).sum(0, initial=2.0), np.float32, atol=1e-5)
    tu.assert_allclose(jnp.prod(a, axis=1, where=jnp.asarray(row_mask)), _wide(x).prod(1, where=row_mask), np.float32)
    tu.assert_allclose(jnp.max(a, axis=1, initial=0.5, where=jnp.asarray(where)),
                       x.max(1, initial=0.5, where=where), np.float32)
    tu.assert_allclose(jnp.min(a, axis=0, initial=10.0), x.min(0, initial=10.0), np.float32)
    tu.assert_allclose(jnp.mean(a, axis=1, where=jnp.asarray(where)), _wide(x).mean(1, where=where), np.float32)
    tu.assert_allclose(jnp.var(a, axis=1, where=jnp.asarray(where)), _wide(x).var(1, where=where), np.float32,
                       atol=1e-5)
    np.testing.assert_array_equal(jnp.all(jnp.asarray(x > 0), axis=1, where=jnp.asarray(where)),
                                  np.all(x > 0, axis=1, where=where))
    np.testing.assert_array_equal(jnp.any(jnp.asarray(x > 0), where=jnp.asarray(where)), np.any(x > 0, where=where))
    np.testing.assert_array_equal(jnp.max(jnp.zeros((0, 3), jnp.int32), axis=0, initial=-5), [-5, -5, -5])


def test_var_std_ddof_correction_complex(rng):
    x = tu.rand(rng, (4, 5), np.float32)
    a = jnp.asarray(x)
    tu.assert_allclose(jnp.var(a, axis=1, ddof=1), _wide(x).var(1, ddof=1), np.float32, atol=1e-5)
    tu.assert_allclose(jnp.std(a, axis=0, correction=2), _wide(x).std(0, ddof=2), np.float32, atol=1e-5)
    tu.assert_allclose(jnp.var(a, axis=0, ddof=4), np.full(5, np.inf), np.float32)  # n - ddof == 0, as NumPy
    z = tu.rand(rng, (6,), np.complex64)
    out = jnp.var(jnp.asarray(z))
    assert out.dtype == np.float32
    tu.assert_allclose(out, _wide(z).var(), np.float32, atol=1e-5)
    with pytest.raises(ValueError, match="ddof and correction can't be provided simultaneously"):
        jnp.var(a, ddof=1, correction=1)


def test_average(rng):
    x = tu.rand(rng, (3, 4), np.float32)
    w2 = tu.rand(rng, (3, 4), np.float32, positive=True)
    w1 = tu.rand(rng, (4,), np.float32, positive=True)
    a = jnp.asarray(x)
    tu.assert_allclose(jnp.average(a), _wide(x).mean(), np.float32)
    tu.assert_allclose(jnp.average(a, axis=0, weights=jnp.asarray(w2)), np.average(_wide(x), 0, _wide(w2)),
                       np.float32, atol=1e-5)
    avg, scl = jnp.average(a, axis=1, weights=jnp.asarray(w1), returned=True, keepdims=True)
    e_avg, e_scl = np.average(_wide(x), 1, _wide(w1), returned=True, keepdims=True)
    tu.assert_allclose(avg, e_avg, np.float32, atol=1e-5)
    tu.assert_allclose(scl, e_scl, np.float32, atol=1e-5)
    avg, scl = jnp.average(jnp.asarray(np.arange(6).reshape(2, 3)), axis=1, returned=True)
    assert avg.dtype == np.float32
    np.testing.assert_array_equal(scl, [3.0, 3.0])
    with pytest.raises(ValueError, match="Axis must be specified when shapes of a and weights differ"):
        jnp.average(a, weights=jnp.asarray(w1))
    with pytest.raises(ValueError, match="Length of weights not compatible with specified axis"):
        jnp.average(a, axis=0, weights=jnp.asarray(w1))


# ----- quantiles -----------------------------------------------------------------------------

_Q_CASES = tu.sample_cases(tu.product(["linear", "lower", "higher", "midpoint", "nearest"],
                                      [((7,), None), ((4, 5), 1), ((4, 5), 0), ((2, 3, 4), (0, 2))],
                                      [0.5, (0.0, 0.25, 0.3, 1.0)], [False, True]), "jnp_quantile", 8)


@pytest.mark.parametrize("method,shape_axis,q,keepdims", _Q_CASES)
def test_quantile_matches_numpy(rng, method, shape_axis, q, keepdims):
    shape, axis = shape_axis
    x = tu.rand(rng, shape, np.float32)
    qa = np.asarray(q, np.float32)
    out = jnp.quantile(jnp.asarray(x), jnp.asarray(qa), axis=axis, method=method, keepdims=keepdims)
    expected = np.quantile(_wide(x), qa.astype(np.float64), axis=axis, method=method, keepdims=keepdims)
    assert out.dtype == np.float32
    tu.assert_allclose(out, expected, np.float32, atol=1e-5, rtol=1e-5)


def test_median_percentile_and_int_inputs(rng):
    x = tu.rand(rng, (4, 6), np.int32, low=-50, high=50)
    a = jnp.asarray(x)
    out = jnp.median(a, axis=1)
    assert out.dtype == np.float32
    tu.assert_allclose(out, np.median(x, axis=1), np.float32)
    tu.assert_allclose(jnp.median(a), np.median(x), np.float32)
    tu.assert_allclose(jnp.percentile(a, 30.0, axis=0), np.percentile(x, 30.0, axis=0), np.float32, atol=1e-4)
    tu.assert_allclose(jnp.percentile(a, jnp.asarray(np.array([10.0, 90.0], np.float32)), method="nearest"),
                       np.percentile(x, [10.0, 90.0], method="nearest"), np.float32)
    tu.assert_allclose(jnp.median(jnp.asarray(np.float32(3.5))), 3.5, np.float32)
    assert np.isnan(float(jnp.median(jnp.zeros((0,)))))


def test_quantile_nan_handling():
    x = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 0.0, -1.0, 8.0], [np.nan] * 4], np.float32)
    a = jnp.asarray(x)
    np.testing.assert_array_equal(jnp.median(a, axis=1), [np.nan, 2.0, np.nan])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tu.assert_allclose(jnp.nanmedian(a, axis=1), np.nanmedian(x, axis=1), np.float32)
        tu.assert_allclose(jnp.nanquantile(a, 0.25, axis=1), np.nanquantile(x, 0.25, axis=1), np.float32)
        tu.assert_allclose(jnp.nanpercentile(a, 75, axis=1, method="lower", keepdims=True),
                           np.nanpercentile(x, 75, axis=1, method="lower", keepdims=True), np.float32)


def test_quantile_errors():
    a = jnp.ones((3, 4))
    with pytest.raises(ValueError, match=r"Quantiles must be in the range \[0, 1\]"):
        jnp.quantile(a, 1.5)
    with pytest.raises(ValueError, match=r"quantile: method must be one of .* got 'cubic'"):
        jnp.quantile(a, 0.5, method="cubic")
    with pytest.raises(np.exceptions.AxisError, match=r"quantile: axis 2 is out of bounds for array of dimension 2"):
        jnp.quantile(a, 0.5, axis=2)


# ----- nan-ignoring reductions -----------------------------------------------------------------

_NAN_CASES = tu.sample_cases(tu.product(["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
                                         "nanargmax", "nanargmin"], [((5,), None), ((3, 4), 1), ((3, 4), 0)],
                                        [np.float32, np.float16]), "jnp_nan_reductions", 12)


@pytest.mark.parametrize("name,shape_axis,dtype", _NAN_CASES)
def test_nan_reductions_match_numpy(rng, name, shape_axis, dtype):
    shape, axis = shape_axis
    x = tu.rand(rng, shape, dtype)
    x[rng.random(shape) < 0.3] = np.nan
    x.flat[0] = 1.0  # keep every slice with a number: NumPy raises on all-NaN argmax slices
    if x.ndim == 2:
        x[:, 0] = 1.0
        x[0, :] = 2.0
    out = getattr(jnp, name)(jnp.asarray(x), axis=axis)
    expected = getattr(np, name)(_wide(x) if "arg" not in name else x, axis=axis)
    if "arg" in name:
        np.testing.assert_array_equal(out, expected)
    else:
        tu.assert_allclose(out, expected, dtype, atol=1e-2 if dtype == np.float16 else 1e-5)


def test_nan_reductions_all_nan_slices_and_ints():
    x = np.array([[np.nan, np.nan], [1.0, np.nan]], np.float32)
    a = jnp.asarray(x)
    np.testing.assert_array_equal(jnp.nanmax(a, axis=1), [np.nan, 1.0])
    np.testing.assert_array_equal(jnp.nanmin(a, axis=1), [np.nan, 1.0])
    np.testing.assert_array_equal(jnp.nansum(a, axis=1), [0.0, 1.0])
    np.testing.assert_array_equal(jnp.nanmean(a, axis=1), [np.nan, 1.0])
    np.testing.assert_array_equal(jnp.nanargmax(a, axis=1), [-1, 0])  # JAX's -1 where NumPy raises
    np.testing.assert_array_equal(jnp.nanargmin(a, axis=1, keepdims=True), [[-1], [0]])
    i = jnp.asarray(np.array([3, 1, 2], np.int32))
    assert int(jnp.nanmax(i)) == 3 and int(jnp.nanargmin(i)) == 1 and int(jnp.nansum(i)) == 6


# ----- argmax / argmin -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(rng, name):
    x = rng.integers(0, 3, size=(3, 4)).astype(np.float32)  # ties everywhere
    x[1, 2] = np.nan
    a = jnp.asarray(x)
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            out = getattr(jnp, name)(a, axis=axis, keepdims=keepdims)
            assert out.dtype == np.int32
            np.testing.assert_array_equal(out, getattr(np, name)(x, axis=axis, keepdims=keepdims))
    with pytest.raises(ValueError, match=f"attempt to get {name} of an empty sequence"):
        getattr(jnp, name)(jnp.zeros((0, 3)))
    with pytest.raises(np.exceptions.AxisError, match=f"{name}: axis 2 is out of bounds for array of dimension 2"):
        getattr(jnp, name)(a, axis=2)


# ----- cumulative sums and products ------------------------------------------------------------

_CUM_CASES = tu.sample_cases(tu.product(["cumsum", "cumprod", "nancumsum", "nancumprod"],
                                        [((5,), None), ((2, 3), None), ((2, 3), 1), ((2, 3), -2), ((0, 2), 0),
                                         ((), None)],
                                        [np.float32, np.int8, np.bool_, np.uint8]), "jnp_cumulative", 12)


@pytest.mark.parametrize("name,shape_axis,dtype", _CUM_CASES)
def test_cumulative_match_numpy(rng, name, shape_axis, dtype):
    shape, axis = shape_axis
    x = tu.rand(rng, shape, dtype, low=-2, high=2)
    out = getattr(jnp, name)(jnp.asarray(x), axis=axis)
    # JAX 0.10.2: cumsum/cumprod widen bools to int32 but keep narrow integers (unlike sum)
    expected_dtype = np.dtype(np.int32) if np.dtype(dtype) == np.bool_ else np.dtype(dtype)
    assert out.dtype == expected_dtype
    w = x.astype(expected_dtype) if np.dtype(dtype).kind in "biu" else _wide(x)
    tu.assert_allclose(out, getattr(np, name)(w, axis=axis), expected_dtype, atol=1e-5)


def test_cumulative_array_api_and_nan():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    a = jnp.asarray(x)
    np.testing.assert_array_equal(jnp.cumulative_sum(a, axis=1, include_initial=True),
                                  np.cumulative_sum(x, axis=1, include_initial=True))
    np.testing.assert_array_equal(jnp.cumulative_prod(a, axis=0), np.cumulative_prod(x, axis=0))
    np.testing.assert_array_equal(jnp.cumulative_prod(jnp.asarray(x[0]), include_initial=True), [1, 1, 2, 6])
    out = jnp.cumsum(a, axis=1, dtype=jnp.float32)
    assert out.dtype == np.float32
    y = jnp.asarray(np.array([1.0, np.nan, 2.0], np.float32))
    np.testing.assert_array_equal(jnp.cumsum(y), [1.0, np.nan, np.nan])
    np.testing.assert_array_equal(jnp.nancumsum(y), [1.0, 1.0, 3.0])
    np.testing.assert_array_equal(jnp.nancumprod(y), [1.0, 1.0, 2.0])
    with pytest.raises(ValueError, match=r"cumulative_sum: axis must be specified .* got shape \(2, 3\)"):
        jnp.cumulative_sum(a)


# ----- errors ------------------------------------------------------------------------------------

def test_reduction_errors():
    a = jnp.ones((2, 3))
    with pytest.raises(np.exceptions.AxisError, match=r"sum: axis 2 is out of bounds for array of dimension 2"):
        jnp.sum(a, axis=2)
    with pytest.raises(np.exceptions.AxisError, match=r"mean: axis -3 is out of bounds for array of dimension 2"):
        jnp.mean(a, axis=(0, -3))
    with pytest.raises(np.exceptions.AxisError, match=r"cumsum: axis 0 is out of bounds for array of dimension 0"):
        jnp.cumsum(jnp.ones(()), axis=0)
    with pytest.raises(ValueError, match=r"zero-size array to reduction operation max which has no identity"):
        jnp.max(jnp.zeros((0, 3)), axis=0)
    with pytest.raises(ValueError, match=r"reduction operation min does not have an identity, so to use a where"):
        jnp.min(a, where=jnp.asarray(np.ones((2, 3), bool)))
    with pytest.raises(TypeError, match=r"sum requires ndarray or scalar arguments, but got list .*jnp.asarray"):
        jnp.sum([1, 2])
    with pytest.raises(NotImplementedError, match=r"The 'out' argument to jnp.sum is not supported"):
        jnp.sum(a, out=a)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting"):
        jnp.sum(a, where=jnp.asarray(np.ones(4, bool)))


def test_methods_forward_to_reductions():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = jnp.asarray(x)
    np.testing.assert_array_equal(a.sum(axis=0), x.sum(0))
    np.testing.assert_array_equal(a.max(), 5.0)
    np.testing.assert_array_equal(a.argmin(axis=1), [0, 0])
    np.testing.assert_array_equal(a.cumsum(axis=1), x.cumsum(1))
    tu.assert_allclose(a.std(), x.std(), np.float32)

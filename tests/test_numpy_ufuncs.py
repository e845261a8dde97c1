"""core.numpy's elementwise functions against NumPy (float64 oracle inputs), with NumPy rank
broadcasting, JAX's weak-type promotion, special values and the F17 error row."""

import numpy as np
import pytest

import core.numpy as jnp
from core import dtypes, test_util as tu

F = tu.FLOAT_DTYPES
C = tu.COMPLEX_DTYPES
I = tu.INT_DTYPES + tu.UINT_DTYPES
SI = tu.INT_DTYPES
B = tu.BOOL_DTYPES
NUM = tu.NUMBER_DTYPES

BINARY_SHAPES = [((), ()), ((4,), ()), ((), (2, 3)), ((2, 3), (3,)), ((2, 1, 3), (4, 1)), ((0,), (1,)),
                 ((3, 0), (3, 1)), ((2, 3), (2, 3))]
UNARY_SHAPES = tu.ALL_SHAPES


_wide = tu.wide
_oracle = tu.numpy_oracle


def _expected_dtype(rule, dtype):
    """The result dtype JAX gives for inputs of one `dtype` (x64 off), by the function's rule."""
    dtype = np.dtype(dtype)
    kind = "f" if dtype == dtypes.bfloat16 else dtype.kind
    if rule == "bool":
        return np.dtype(bool)
    if rule == "uint8":
        return np.dtype(np.uint8)
    if rule == "inexact":
        return np.dtype(np.float32) if kind in "biu" else dtype
    if rule == "numeric":
        return np.dtype(np.int32) if kind == "b" else dtype
    if rule == "real":
        return np.dtype(np.float32) if kind == "c" else dtype
    if rule == "real_inexact":
        return np.dtype(np.float32) if kind in "biuc" else dtype
    return dtype


def _sample(rng, shape, dtype, domain):
    kind = np.dtype(dtype).kind
    if domain == "pos":
        return tu.rand(rng, shape, dtype, positive=True)
    if domain == "unit":
        return tu.rand(rng, shape, dtype, low=-0.9, high=0.9) if kind not in "iu" else tu.rand(rng, shape, dtype, low=0, high=0)
    if domain == "ge1":
        return tu.rand(rng, shape, dtype, low=1.1, high=4.0) if kind not in "iu" else tu.rand(rng, shape, dtype, low=2, high=4)
    if domain == "nonzero":
        x = tu.rand(rng, shape, dtype, positive=True)
        if kind not in "ub":
            x = np.where(rng.random(shape) < 0.5, -x, x).astype(dtype)
        return x
    if domain == "small_nat":
        return rng.integers(0, 4, size=shape).astype(dtype)
    if domain == "shift":
        return rng.integers(0, 8, size=shape).astype(dtype)
    return tu.rand(rng, shape, dtype)


def _cases(name, shapes, dts, coverage_shape):
    """Two sampled (shape, dtype) cases, plus one case for each of the dtype kinds a function accepts
    (float16 or bfloat16 alternately, int32, complex64, bool)."""
    cases = tu.sample_cases(tu.product(shapes, dts), name, n=2)
    half = (np.float16, dtypes.bfloat16)[tu.seed_for(name) % 2]
    cases += [(coverage_shape, dt) for dt in dts if dt in (half, np.int32, np.complex64, np.bool_)]
    return list(dict.fromkeys(cases))


# name, oracle, dtypes, domain, result rule, tolerance multiplier (over the dtype's tolerance)
UNARY = [
    ("negative", np.negative, NUM, "any", "same", 1),
    ("positive", np.positive, NUM, "any", "same", 1),
    ("absolute", np.abs, NUM + B, "any", "real", 1),
    ("abs", np.abs, SI + F, "any", "real", 1),
    ("fabs", np.fabs, F + SI, "any", "inexact", 1),
    ("sign", np.sign, NUM, "any", "same", 1),
    ("floor", np.floor, F + I + B, "any", "same", 1),
    ("ceil", np.ceil, F + I + B, "any", "same", 1),
    ("trunc", np.trunc, F + I, "any", "same", 1),
    ("fix", np.fix, F + SI, "any", "same", 1),
    ("rint", np.rint, F + SI + C, "any", "inexact", 1),
    ("round", np.round, F + SI + C, "any", "same", 1),
    ("around", np.round, F + SI, "any", "same", 1),
    ("exp", np.exp, F + SI + C, "any", "inexact", 3),
    ("exp2", np.exp2, F + SI + C, "any", "inexact", 3),
    ("expm1", np.expm1, F + SI + C, "any", "inexact", 3),
    ("log", np.log, F + C + I, "pos", "inexact", 3),
    ("log2", np.log2, F + C + I, "pos", "inexact", 3),
    ("log10", np.log10, F + C + I, "pos", "inexact", 3),
    ("log1p", np.log1p, F + C + I, "pos", "inexact", 3),
    ("sqrt", np.sqrt, F + C + I, "pos", "inexact", 1),
    ("cbrt", np.cbrt, F + SI, "any", "inexact", 3),
    ("square", np.square, NUM, "any", "numeric", 1),
    ("reciprocal", np.reciprocal, F + C, "pos", "inexact", 1),
    ("sin", np.sin, F + C + SI, "any", "inexact", 3),
    ("cos", np.cos, F + C + SI, "any", "inexact", 3),
    ("tan", np.tan, F + C, "unit", "inexact", 3),
    ("arcsin", np.arcsin, F + C, "unit", "inexact", 3),
    ("arccos", np.arccos, F + C, "unit", "inexact", 3),
    ("arctan", np.arctan, F + C + SI, "any", "inexact", 3),
    ("sinh", np.sinh, F + C + SI, "any", "inexact", 3),
    ("cosh", np.cosh, F + C + SI, "any", "inexact", 3),
    ("tanh", np.tanh, F + C + SI, "any", "inexact", 3),
    ("arcsinh", np.arcsinh, F + C + SI, "any", "inexact", 3),
    ("arccosh", np.arccosh, F + C + SI, "ge1", "inexact", 3),
    ("arctanh", np.arctanh, F + C, "unit", "inexact", 3),
    ("deg2rad", np.deg2rad, F + SI, "any", "inexact", 2),
    ("rad2deg", np.rad2deg, F + SI, "any", "inexact", 2),
    ("degrees", np.degrees, F, "any", "inexact", 2),
    ("radians", np.radians, F, "any", "inexact", 2),
    ("isfinite", np.isfinite, F + C + I + B, "any", "bool", 1),
    ("isinf", np.isinf, F + C + I + B, "any", "bool", 1),
    ("isnan", np.isnan, F + C + I + B, "any", "bool", 1),
    ("isneginf", np.isneginf, F + SI, "any", "bool", 1),
    ("isposinf", np.isposinf, F + SI, "any", "bool", 1),
    ("signbit", np.signbit, F + I, "any", "bool", 1),
    ("logical_not", np.logical_not, NUM + B, "any", "bool", 1),
    ("bitwise_not", np.bitwise_not, I + B, "any", "same", 1),
    ("invert", np.invert, I + B, "any", "same", 1),
    ("bitwise_count", np.bitwise_count, I, "any", "uint8", 1),
    ("sinc", np.sinc, F + SI, "any", "inexact", 4),
    ("conj", np.conj, NUM, "any", "same", 1),
    ("conjugate", np.conjugate, NUM, "any", "same", 1),
    ("real", np.real, NUM, "any", "real", 1),
    ("imag", np.imag, NUM, "any", "real", 1),
    ("angle", np.angle, F + C + SI, "any", "real_inexact", 2),
    ("iscomplex", np.iscomplex, NUM, "any", "bool", 1),
    ("isreal", np.isreal, NUM, "any", "bool", 1),
    ("nan_to_num", np.nan_to_num, F + C + SI, "any", "same", 1),
    ("i0", np.i0, F + SI, "any", "inexact", 10),
    ("spacing", np.spacing, [np.float32, np.float16], "any", "same", 0),
]
_UNARY = {r[0]: r for r in UNARY}
_UNARY_CASES = [(r[0], s, d) for r in UNARY for s, d in _cases(f"np_{r[0]}", UNARY_SHAPES, r[2], (2, 3))]


def _check(out, expected, rule, dtype, mult, name):
    assert np.dtype(out.dtype) == _expected_dtype(rule, dtype), (name, out.dtype)
    out_dtype = np.dtype(out.dtype)
    expected = np.asarray(expected)
    if out_dtype.kind in "biu":
        tu.assert_allclose(out, expected, out_dtype, err_msg=name)
    elif mult == 0:  # exact
        np.testing.assert_array_equal(np.asarray(out), expected.astype(out_dtype), err_msg=name)
    else:
        tol = tu.tolerance(out_dtype) * mult
        tu.assert_allclose(out, expected, out_dtype, atol=tol, rtol=tol, err_msg=name)


@pytest.mark.parametrize("name,shape,dtype", _UNARY_CASES)
def test_unary_matches_numpy(rng, name, shape, dtype):
    _, oracle, _, domain, rule, mult = _UNARY[name]
    x = _sample(rng, shape, dtype, domain)
    out = getattr(jnp, name)(jnp.asarray(x))
    assert out.shape == shape
    if mult == 0:
        expected = oracle(x)  # computed in the dtype itself: the op is exact
    elif np.dtype(dtype).kind in "biu" and rule in ("same", "numeric", "uint8"):
        expected = oracle(x)  # integer results wrap in the dtype, as on the device
    else:
        expected = _oracle(oracle, _float64_if_inexact(x, rule))
    _check(out, expected, rule, dtype, mult, name)


def _float64_if_inexact(x, rule):
    """NumPy computes log(uint8) in float16: give the oracle float64 inputs instead."""
    return x.astype(np.float64) if rule in ("inexact", "real_inexact") and x.dtype.kind in "biu" else x


BINARY = [
    ("add", np.add, NUM + B, ("any", "any"), "same", 1),
    ("subtract", np.subtract, NUM, ("any", "any"), "same", 1),
    ("multiply", np.multiply, NUM + B, ("any", "any"), "same", 1),
    ("divide", np.divide, F + SI + C, ("any", "nonzero"), "inexact", 1),
    ("true_divide", np.true_divide, F + I, ("any", "nonzero"), "inexact", 1),
    ("floor_divide", np.floor_divide, F + I, ("any", "nonzero"), "same", 1),
    ("remainder", np.remainder, F + I, ("any", "nonzero"), "same", 2),
    ("mod", np.mod, F + SI, ("any", "nonzero"), "same", 2),
    ("fmod", np.fmod, F + I, ("any", "nonzero"), "same", 1),
    ("power", np.power, F + C, ("pos", "any"), "same", 3),
    ("float_power", np.float_power, F + SI, ("pos", "small_nat"), "inexact", 3),
    ("arctan2", np.arctan2, F + SI, ("any", "any"), "inexact", 3),
    ("hypot", np.hypot, F + SI, ("any", "any"), "inexact", 2),
    ("maximum", np.maximum, NUM + B, ("any", "any"), "same", 1),
    ("minimum", np.minimum, NUM + B, ("any", "any"), "same", 1),
    ("fmax", np.fmax, F + I, ("any", "any"), "same", 1),
    ("fmin", np.fmin, F + I, ("any", "any"), "same", 1),
    ("equal", np.equal, NUM + B, ("any", "any"), "bool", 1),
    ("not_equal", np.not_equal, NUM + B, ("any", "any"), "bool", 1),
    ("less", np.less, F + I + B, ("any", "any"), "bool", 1),
    ("less_equal", np.less_equal, F + I + B, ("any", "any"), "bool", 1),
    ("greater", np.greater, F + I + B, ("any", "any"), "bool", 1),
    ("greater_equal", np.greater_equal, F + I + B, ("any", "any"), "bool", 1),
    ("logical_and", np.logical_and, NUM + B, ("any", "any"), "bool", 1),
    ("logical_or", np.logical_or, NUM + B, ("any", "any"), "bool", 1),
    ("logical_xor", np.logical_xor, NUM + B, ("any", "any"), "bool", 1),
    ("bitwise_and", np.bitwise_and, I + B, ("any", "any"), "same", 1),
    ("bitwise_or", np.bitwise_or, I + B, ("any", "any"), "same", 1),
    ("bitwise_xor", np.bitwise_xor, I + B, ("any", "any"), "same", 1),
    ("left_shift", np.left_shift, I, ("any", "shift"), "same", 1),
    ("right_shift", np.right_shift, I, ("any", "shift"), "same", 1),
    ("copysign", np.copysign, F + SI, ("any", "any"), "inexact", 1),
    ("nextafter", np.nextafter, [np.float32, np.float16, dtypes.bfloat16], ("any", "any"), "same", 0),
    ("heaviside", np.heaviside, F + SI, ("any", "any"), "inexact", 1),
    ("logaddexp", np.logaddexp, F + SI, ("any", "any"), "inexact", 3),
    ("logaddexp2", np.logaddexp2, F + SI, ("any", "any"), "inexact", 3),
    ("gcd", np.gcd, I, ("any", "any"), "same", 1),
    ("lcm", np.lcm, I, ("any", "any"), "same", 1),
]
_BINARY = {r[0]: r for r in BINARY}
_BINARY_CASES = [(r[0], s, d) for r in BINARY for s, d in _cases(f"np2_{r[0]}", BINARY_SHAPES, r[2], ((2, 3), (3,)))]


@pytest.mark.parametrize("name,shapes,dtype", _BINARY_CASES)
def test_binary_matches_numpy(rng, name, shapes, dtype):
    _, oracle, _, (dx, dy), rule, mult = _BINARY[name]
    x, y = _sample(rng, shapes[0], dtype, dx), _sample(rng, shapes[1], dtype, dy)
    if name in ("heaviside", "copysign"):
        x.reshape(-1)[:2] = 0  # the interesting point of the step, and a zero magnitude
    out = getattr(jnp, name)(jnp.asarray(x), jnp.asarray(y))
    assert out.shape == np.broadcast_shapes(shapes[0], shapes[1])
    if mult == 0:
        expected = oracle(x, y)
    elif np.dtype(dtype).kind in "biu" and rule == "same":
        with np.errstate(all="ignore"):
            expected = oracle(x, y)
    else:
        expected = _oracle(oracle, _float64_if_inexact(x, rule), _float64_if_inexact(y, rule))
    _check(out, expected, rule, dtype, mult, name)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8])
def test_divmod(rng, dtype):
    x, y = _sample(rng, (2, 3), dtype, "any"), _sample(rng, (3,), dtype, "nonzero")
    q, r = jnp.divmod(jnp.asarray(x), jnp.asarray(y))
    eq, er = np.divmod(_wide(x), _wide(y))
    tu.assert_allclose(q, eq, dtype)
    tu.assert_allclose(r, er, dtype, atol=2 * tu.tolerance(dtype), rtol=2 * tu.tolerance(dtype))


def test_floor_divide_and_remainder_signs():
    x = jnp.array([-7, 7, -7, 7, -6, 6])
    y = jnp.array([2, 2, -2, -2, 3, -3])
    np.testing.assert_array_equal(jnp.floor_divide(x, y), np.floor_divide(np.asarray(x), np.asarray(y)))
    np.testing.assert_array_equal(jnp.remainder(x, y), np.remainder(np.asarray(x), np.asarray(y)))
    xf = np.array([-7.5, 7.5, -7.5, 7.5, 1.0, -0.0, 3.0], np.float32)
    yf = np.array([2.0, 2.0, -2.0, -2.0, 0.1, 2.0, 0.0], np.float32)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(jnp.floor_divide(jnp.asarray(xf), jnp.asarray(yf)), np.floor_divide(xf, yf))
        np.testing.assert_allclose(jnp.remainder(jnp.asarray(xf), jnp.asarray(yf)), np.remainder(xf, yf))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32])
def test_frexp_ldexp_modf(rng, dtype):
    x = _sample(rng, (2, 3), dtype, "any")
    m, e = jnp.frexp(jnp.asarray(x))
    em, ee = np.frexp(_wide(x))
    assert e.dtype == np.int32 and m.dtype == _expected_dtype("inexact", dtype)
    np.testing.assert_array_equal(np.asarray(m), em.astype(m.dtype))
    np.testing.assert_array_equal(e, ee)
    k = rng.integers(-10, 10, size=(3,)).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.ldexp(jnp.asarray(x), jnp.asarray(k))),
                                  np.ldexp(_wide(x), k).astype(m.dtype))
    frac, whole = jnp.modf(jnp.asarray(x))
    ef, ew = np.modf(_wide(x))
    tu.assert_allclose(frac, ef, m.dtype)
    tu.assert_allclose(whole, ew, m.dtype)


def test_frexp_ldexp_special_values():
    tiny = np.finfo(np.float32).tiny
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 8.0, -3.0, 1.0, tiny, np.finfo(np.float32).max], np.float32)
    m, e = jnp.frexp(jnp.asarray(x))
    em, ee = np.frexp(x)
    np.testing.assert_array_equal(np.asarray(m), em)
    np.testing.assert_array_equal(np.asarray(e)[np.isfinite(x)], ee[np.isfinite(x)])
    # ldexp reaches the extremes of the normal exponent range exactly, and saturates beyond them
    # (subnormal results are left out: XLA on CPU may flush them to zero)
    x1 = np.array([1.0, 1.0, 0.75, 1.5, 3.0, 1.0], np.float32)
    k = np.array([127, -126, 128, -125, 300, -300], np.int32)
    with np.errstate(over="ignore"):
        expected = np.ldexp(x1, k)
    np.testing.assert_array_equal(np.asarray(jnp.ldexp(jnp.asarray(x1), jnp.asarray(k))), expected)


def test_rounding_is_half_to_even():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5], np.float32)
    np.testing.assert_array_equal(jnp.round(jnp.asarray(x)), np.round(x))
    np.testing.assert_array_equal(jnp.rint(jnp.asarray(x)), np.rint(x))
    np.testing.assert_array_equal(jnp.around(jnp.asarray(x)), np.round(x))
    np.testing.assert_array_equal(jnp.trunc(jnp.asarray(x)), np.trunc(x))


@pytest.mark.parametrize("decimals", [1, 2, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.complex64])
def test_round_decimals(rng, decimals, dtype):
    x = tu.rand(rng, (2, 3), dtype, low=-30, high=30)
    out = jnp.round(jnp.asarray(x), decimals)
    assert out.dtype == np.dtype(dtype)
    tu.assert_allclose(out, np.round(_wide(x), decimals), dtype)
    np.testing.assert_array_equal(jnp.round(jnp.array([15, 25]), 1), [15, 25])


def test_power_special_cases():
    # a Python int exponent is exact for integers (integer_pow) and keeps a float16 base float16
    np.testing.assert_array_equal(jnp.power(jnp.array([2, -3]), 3), [8, -27])
    assert jnp.power(jnp.ones(2, jnp.float16), 2).dtype == np.float16
    assert jnp.power(4, 3).weak_type
    xi = np.array([2, -3, 0, 5, 1], np.int32)
    yi = np.array([10, 3, 0, 2, 7], np.int32)
    np.testing.assert_array_equal(jnp.power(jnp.asarray(xi), jnp.asarray(yi)), xi ** yi)
    # integers to a negative integer array: JAX's values (binary exponentiation on the low 6 bits)
    np.testing.assert_array_equal(jnp.power(jnp.array([2, 3, 1, -1]), jnp.array([-1, -2, -1, -1])),
                                  [0, 703701817, 1, -1])
    with pytest.raises(TypeError, match=r"Integers cannot be raised to negative powers, got integer_pow\(i32\[2\], -1\)"):
        jnp.power(jnp.array([2, 3]), -1)
    np.testing.assert_allclose(jnp.power(jnp.array([2.0, 4.0]), -1), [0.5, 0.25])


def test_weak_type_promotion():
    assert (jnp.ones(3, jnp.float16) + 1.0).dtype == np.float16
    assert (jnp.ones(3, jnp.bfloat16) * 2).dtype == dtypes.bfloat16
    assert (jnp.ones(3, jnp.int8) + 2.5).dtype == np.float32
    assert (jnp.ones(3, jnp.uint8) + 1).dtype == np.uint8
    assert jnp.add(1, 2.0).dtype == np.float32 and jnp.add(1, 2.0).weak_type
    assert jnp.multiply(2, 3).weak_type and jnp.multiply(2, 3).dtype == np.int32
    assert not jnp.add(jnp.ones(2), 1.0).weak_type
    # strong dtypes join on JAX's lattice
    assert jnp.add(jnp.ones(2, jnp.int32), jnp.ones(2, jnp.float16)).dtype == np.float16
    assert jnp.add(jnp.ones(2, jnp.bfloat16), jnp.ones(2, jnp.float16)).dtype == np.float32
    assert jnp.add(jnp.ones(2, jnp.uint8), jnp.ones(2, jnp.int8)).dtype == np.int16
    assert jnp.exp(jnp.ones(2, jnp.int8)).dtype == np.float32
    assert jnp.exp(jnp.ones(2, jnp.float16)).dtype == np.float16
    assert jnp.square(jnp.ones(2, jnp.bool_)).dtype == np.int32
    assert jnp.floor_divide(jnp.ones(2, jnp.bool_), True).dtype == np.int32
    assert jnp.left_shift(jnp.ones(2, jnp.bool_), True).dtype == np.int32
    assert jnp.clip(jnp.array([1, 5, 10]), min=2, max=8.5).dtype == np.float32


def test_python_ints_wrap_in_small_integer_dtypes():
    # as JAX: the weak Python int takes the array's dtype and wraps (NumPy 2 raises OverflowError)
    np.testing.assert_array_equal(jnp.ones(3, jnp.int8) + 300, np.full(3, 45, np.int8))
    assert (jnp.ones(3, jnp.int8) + 300).dtype == np.int8
    np.testing.assert_array_equal(jnp.ones(3, jnp.uint8) + -1, np.zeros(3, np.uint8))
    np.testing.assert_array_equal(jnp.ones((), jnp.int16) * 70000, np.int16(np.int64(70000).astype(np.int16)))
    with pytest.raises(OverflowError):
        jnp.ones(3, jnp.int32) + 2 ** 40


def test_rank_broadcasting(rng):
    x, y = tu.rand(rng, (2, 1, 3), np.float32), tu.rand(rng, (4, 1), np.float32)
    out = jnp.arctan2(jnp.asarray(x), jnp.asarray(y))
    assert out.shape == (2, 4, 3)
    tu.assert_allclose(out, np.arctan2(_wide(x), _wide(y)), np.float32, atol=3e-6, rtol=3e-6)
    np.testing.assert_array_equal(jnp.fmax(jnp.asarray(x), 0.0), np.fmax(x, 0.0))
    np.testing.assert_array_equal(jnp.maximum(1.0, jnp.asarray(y)), np.maximum(1.0, y))


_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.5, -3.0], np.float32)


@pytest.mark.parametrize("name", ["isfinite", "isinf", "isnan", "isneginf", "isposinf", "signbit", "nan_to_num",
                                  "sign", "absolute", "sqrt", "log", "log2", "log10", "exp", "floor", "trunc",
                                  "rint", "spacing", "sinc", "cbrt", "reciprocal", "fabs", "i0"])
def test_unary_special_values(name):
    out = np.asarray(getattr(jnp, name)(jnp.asarray(_SPECIAL)))
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(_SPECIAL)
    np.testing.assert_allclose(out, expected, rtol=3e-6, equal_nan=True)
    if name in ("absolute", "fabs", "signbit", "trunc", "floor", "rint", "sqrt", "cbrt"):
        np.testing.assert_array_equal(np.signbit(out), np.signbit(expected))


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin", "hypot", "logaddexp", "logaddexp2",
                                  "copysign", "heaviside", "arctan2", "nextafter", "add", "divide", "remainder"])
def test_binary_special_values(name):
    x = np.repeat(_SPECIAL, len(_SPECIAL))
    y = np.tile(_SPECIAL, len(_SPECIAL))
    out = np.asarray(getattr(jnp, name)(jnp.asarray(x), jnp.asarray(y)))
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(x, y)
    # atol: under jit XLA may fuse a multiply and an add into one FMA, so an exact 0 (logaddexp2(-1, -1))
    # comes out as about -1e-8
    np.testing.assert_allclose(out, expected, rtol=3e-6, atol=1e-7, equal_nan=True)


def test_nan_to_num_options():
    x = jnp.asarray(np.array([np.nan, np.inf, -np.inf, 1.0], np.float16))
    np.testing.assert_array_equal(jnp.nan_to_num(x), np.nan_to_num(np.asarray(x)))
    np.testing.assert_array_equal(jnp.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0), [-1, 9, -9, 1])
    c = np.array([complex(np.nan, np.inf)], np.complex64)
    np.testing.assert_array_equal(jnp.nan_to_num(jnp.asarray(c)), np.nan_to_num(c))
    np.testing.assert_array_equal(jnp.nan_to_num(jnp.array([1, 2])), [1, 2])


def test_clip():
    x = jnp.array([0, 1, 2, 3, 4, 5])
    np.testing.assert_array_equal(jnp.clip(x, 1, 3), np.clip(np.asarray(x), 1, 3))
    np.testing.assert_array_equal(jnp.clip(x, a_min=1, a_max=3), [1, 1, 2, 3, 3, 3])
    np.testing.assert_array_equal(jnp.clip(x, min=2), [2, 2, 2, 3, 4, 5])
    np.testing.assert_array_equal(jnp.clip(x, max=2), [0, 1, 2, 2, 2, 2])
    np.testing.assert_array_equal(jnp.clip(x), np.asarray(x))
    # array bounds broadcast; a lower bound above the upper one yields the upper, as in NumPy
    np.testing.assert_array_equal(jnp.clip(x, jnp.array([0, 0, 3, 3, 9, 9]), 4), [0, 1, 3, 3, 4, 4])
    with pytest.raises(TypeError, match="clip: pass only one of min and a_min"):
        jnp.clip(x, a_min=1, min=1)


def test_complex_helpers():
    z = np.array([1 + 2j, -3 + 0j, 0 - 1j], np.complex64)
    jz = jnp.asarray(z)
    np.testing.assert_allclose(jnp.angle(jz, deg=True), np.angle(z, deg=True), rtol=1e-6)
    np.testing.assert_array_equal(jnp.iscomplex(jz), np.iscomplex(z))
    assert jnp.iscomplexobj(jz) and not jnp.isrealobj(jz)
    assert jnp.isrealobj(1.0) and jnp.isrealobj(jnp.ones(2)) and not jnp.iscomplexobj(None)
    assert jnp.iscomplexobj(np.array([1j]))
    np.testing.assert_array_equal(jnp.imag(jnp.array([1, 2])), [0, 0])
    assert jnp.imag(jnp.array([1, 2])).dtype == np.int32


def test_gcd_lcm_edge_cases():
    x = np.array([0, 0, 12, -8, 2 ** 30, 7, -2 ** 31 + 1], np.int32)
    y = np.array([0, 5, 18, 12, 2 ** 20 * 3, 1, 3], np.int32)
    np.testing.assert_array_equal(jnp.gcd(jnp.asarray(x), jnp.asarray(y)), np.gcd(x, y))
    np.testing.assert_array_equal(jnp.lcm(jnp.asarray(x[:4]), jnp.asarray(y[:4])), np.lcm(x[:4], y[:4]))
    # consecutive Fibonacci numbers are Euclid's worst case
    fib = [1, 2]
    while fib[-1] < 2 ** 30:
        fib.append(fib[-1] + fib[-2])
    np.testing.assert_array_equal(jnp.gcd(jnp.int32(fib[-2]), jnp.int32(fib[-3])), 1)


def test_errors():
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(3, 1\), \(4, 1\)\]"):
        jnp.add(jnp.ones((3, 1)), jnp.ones((4, 1)))
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(3,\), \(4,\)\]"):
        jnp.ones(3) * jnp.ones(4)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(2, 3\), \(2,\)\]"):
        jnp.logical_and(jnp.ones((2, 3)), jnp.ones(2))
    with pytest.raises(TypeError, match=r"add requires ndarray or scalar arguments, but got list at position 0"):
        jnp.add([1, 2], 1)
    with pytest.raises(TypeError, match=r"fabs does not support complex-valued inputs"):
        jnp.fabs(jnp.ones(2, jnp.complex64))
    with pytest.raises(TypeError, match=r"floor_divide does not support complex-valued inputs"):
        jnp.floor_divide(jnp.ones(2, jnp.complex64), 1)
    with pytest.raises(ValueError, match=r"Arguments to gcd must be integers, got dtypes float32"):
        jnp.gcd(jnp.ones(2), 1)
    with pytest.raises(ValueError, match=r"Arguments to lcm must be integers"):
        jnp.lcm(jnp.ones(2, jnp.bool_), True)
    with pytest.raises(ValueError, match=r"isposinf/isneginf are not well defined for complex types"):
        jnp.isneginf(jnp.ones(2, jnp.complex64))
    with pytest.raises(NotImplementedError, match=r"integer np.round not implemented for decimals < 0"):
        jnp.round(jnp.array([15]), -1)
    with pytest.raises(TypeError, match=r"ldexp: the exponent x2 must be an integer array, got dtype float32"):
        jnp.ldexp(jnp.ones(2), jnp.ones(2))
    with pytest.raises(TypeError, match=r"sign does not accept dtype bool"):
        jnp.sign(jnp.ones(2, jnp.bool_))
    with pytest.raises(TypeError, match=r"sub does not accept dtype bool"):
        jnp.subtract(jnp.ones(2, jnp.bool_), True)
    with pytest.raises(TypeError, match=r"not does not accept dtype f32"):
        jnp.invert(jnp.ones(2))

"""The elementwise lax primitives against float64 NumPy/scipy oracles (and loops for the bit
operations), on sampled (shape, dtype) cases, special values, size-1 broadcasting and errors."""

import numpy as np
import pytest
import scipy.special as sp

import core.numpy as jnp
from core import dtypes, lax, test_util as tu

F = tu.FLOAT_DTYPES
FC = tu.FLOAT_DTYPES + tu.COMPLEX_DTYPES
SIGNED = tu.INT_DTYPES
INTS = tu.INT_DTYPES + tu.UINT_DTYPES
NUM = tu.NUMBER_DTYPES


_wide = tu.wide
_oracle = tu.numpy_oracle


def _round_afz(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _logistic(x):
    return 1 / (1 + np.exp(-x))


# name, lax function, oracle, dtypes, input kind, tolerance override (None: the dtype's)
# Input kinds: "any" uniform in [-3, 3); "pos" (0.1, 3); "unit" (-0.9, 0.9); "ge1" [1.1, 4).
UNARY = [
    ("neg", lax.neg, np.negative, NUM, "any", None),
    ("sign", lax.sign, np.sign, NUM, "any", None),
    ("floor", lax.floor, np.floor, F, "any", None),
    ("ceil", lax.ceil, np.ceil, F, "any", None),
    ("round", lax.round, _round_afz, F, "any", None),
    ("abs", lax.abs, np.abs, SIGNED + FC, "any", None),
    ("exp", lax.exp, np.exp, FC, "any", 2e-6),
    ("exp2", lax.exp2, np.exp2, FC, "any", 2e-6),
    ("log", lax.log, np.log, FC, "pos", 2e-6),
    ("log1p", lax.log1p, np.log1p, FC, "pos", 2e-6),
    ("expm1", lax.expm1, np.expm1, FC, "any", 2e-6),
    ("tanh", lax.tanh, np.tanh, FC, "any", 2e-6),
    ("logistic", lax.logistic, _logistic, FC, "any", 2e-6),
    ("sin", lax.sin, np.sin, FC, "any", 2e-6),
    ("cos", lax.cos, np.cos, FC, "any", 2e-6),
    ("tan", lax.tan, np.tan, FC, "unit", 2e-6),
    ("asin", lax.asin, np.arcsin, FC, "unit", 2e-6),
    ("acos", lax.acos, np.arccos, FC, "unit", 2e-6),
    ("atan", lax.atan, np.arctan, FC, "any", 2e-6),
    ("sinh", lax.sinh, np.sinh, FC, "any", 2e-6),
    ("cosh", lax.cosh, np.cosh, FC, "any", 2e-6),
    ("asinh", lax.asinh, np.arcsinh, FC, "any", 2e-6),
    ("acosh", lax.acosh, np.arccosh, FC, "ge1", 2e-6),
    ("atanh", lax.atanh, np.arctanh, FC, "unit", 2e-6),
    ("sqrt", lax.sqrt, np.sqrt, FC, "pos", None),
    ("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), FC, "pos", 2e-6),
    ("cbrt", lax.cbrt, np.cbrt, F, "any", 2e-6),
    ("erf", lax.erf, sp.erf, F, "any", 2e-6),
    ("erfc", lax.erfc, sp.erfc, F, "any", 2e-6),
    ("erf_inv", lax.erf_inv, sp.erfinv, F, "unit", 5e-6),
    ("lgamma", lax.lgamma, sp.gammaln, F, "pos", 5e-6),
    ("digamma", lax.digamma, sp.psi, F, "pos", 5e-6),
    ("is_finite", lax.is_finite, np.isfinite, F, "any", None),
    ("square", lax.square, np.square, NUM, "any", None),
    ("reciprocal", lax.reciprocal, np.reciprocal, FC, "pos", None),
    ("real", lax.real, np.real, tu.COMPLEX_DTYPES, "any", None),
    ("imag", lax.imag, np.imag, tu.COMPLEX_DTYPES, "any", None),
    ("conj", lax.conj, lambda x: np.conj(x).astype(np.complex128), [np.float32] + tu.COMPLEX_DTYPES, "any", None),
    ("not_", lax.not_, np.invert, INTS + tu.BOOL_DTYPES, "any", None),
    ("population_count", lax.population_count, None, INTS, "any", None),
    ("clz", lax.clz, None, INTS, "any", None),
]


def _sample(rng, shape, dtype, kind):
    if kind == "pos":
        return tu.rand(rng, shape, dtype, positive=True)
    if kind == "unit":
        return tu.rand(rng, shape, dtype, low=-0.9, high=0.9)
    if kind == "ge1":
        return tu.rand(rng, shape, dtype, low=1.1, high=4.0)
    return tu.rand(rng, shape, dtype)


def _bits_of(v, dtype):
    """The two's-complement bit string of integer `v` in `dtype`."""
    bits = np.dtype(dtype).itemsize * 8
    return format(int(v) % (1 << bits), f"0{bits}b")


def _loop_oracle(name, x):
    flat = [_bits_of(v, x.dtype) for v in x.reshape(-1)]
    if name == "population_count":
        out = [b.count("1") for b in flat]
    else:
        out = [len(b) - len(b.lstrip("0")) for b in flat]
    return np.array(out, dtype=x.dtype).reshape(x.shape)


def _cases(name, dts):
    """A sampled (shape, dtype) case, each accepted dtype kind once (float32, float16, bfloat16,
    complex64, int32, uint8, bool), and a 0-d and a size-0 case."""
    cases = tu.sample_cases(tu.product(tu.ALL_SHAPES, dts), name, n=1)
    kinds = (np.float32, np.float16, dtypes.bfloat16, np.complex64, np.int32, np.uint8, np.bool_)
    cases += [((2, 3), dt) for dt in dts if dt in kinds] + [((), dts[0]), ((0, 4), dts[-1])]
    return list(dict.fromkeys(cases))


_UNARY_CASES = [(name, shape, dtype) for name, _, _, dts, _, _ in UNARY
                for shape, dtype in _cases(f"lax_{name}", dts)]
_UNARY_TABLE = {row[0]: row for row in UNARY}


@pytest.mark.parametrize("name,shape,dtype", _UNARY_CASES)
def test_unary_matches_oracle(rng, name, shape, dtype):
    _, fn, oracle, _, kind, tol = _UNARY_TABLE[name]
    x = _sample(rng, shape, dtype, kind)
    if name == "not_" and np.dtype(dtype) == np.bool_:
        oracle = np.logical_not
    out = fn(jnp.asarray(x))
    expected = _loop_oracle(name, x) if oracle is None else _oracle(oracle, x)
    assert out.shape == shape
    out_dtype = np.dtype(out.dtype)
    if name in ("abs", "real", "imag") and np.dtype(dtype).kind == "c":
        assert out_dtype == np.float32
    elif name == "conj":
        assert out_dtype == np.complex64
    elif name == "is_finite":
        assert out_dtype == np.bool_
    else:
        assert out_dtype == np.dtype(dtype)
    if tol is not None and out_dtype in (np.float32, np.complex64):
        # XLA's float32 transcendental approximations are accurate to a few ulp, not 1e-6
        tu.assert_allclose(out, expected, out_dtype, atol=tol, rtol=tol)
    elif np.dtype(dtype).kind in "iu":
        tu.assert_allclose(out, np.asarray(expected).astype(dtype), out_dtype)  # wraps as the device does
    else:
        tu.assert_allclose(out, expected, out_dtype)


def _c_div(x, y):
    q = np.abs(x.astype(np.int64)) // np.abs(y.astype(np.int64))
    return (np.sign(x.astype(np.int64)) * np.sign(y.astype(np.int64)) * q).astype(x.dtype)


def _div_oracle(x, y):
    return _c_div(x, y) if x.dtype.kind in "iu" else x / y


def _rem_oracle(x, y):
    if x.dtype.kind in "iu":
        return (x.astype(np.int64) - _c_div(x, y).astype(np.int64) * y).astype(x.dtype)
    return np.fmod(x, y)


# name, lax function, oracle, dtypes, kinds of (x, y)
BINARY = [
    ("add", lax.add, np.add, NUM, ("any", "any")),
    ("sub", lax.sub, np.subtract, NUM, ("any", "any")),
    ("mul", lax.mul, np.multiply, NUM, ("any", "any")),
    ("div", lax.div, _div_oracle, NUM, ("any", "nonzero")),
    ("rem", lax.rem, _rem_oracle, INTS + F, ("any", "nonzero")),
    ("pow", lax.pow, np.power, FC, ("pos", "any")),
    ("atan2", lax.atan2, np.arctan2, F, ("any", "any")),
    ("max", lax.max, np.maximum, tu.ALL_DTYPES, ("any", "any")),
    ("min", lax.min, np.minimum, tu.ALL_DTYPES, ("any", "any")),
    ("eq", lax.eq, np.equal, tu.ALL_DTYPES, ("any", "any")),
    ("ne", lax.ne, np.not_equal, tu.ALL_DTYPES, ("any", "any")),
    ("lt", lax.lt, np.less, F + INTS + tu.BOOL_DTYPES, ("any", "any")),
    ("le", lax.le, np.less_equal, F + INTS + tu.BOOL_DTYPES, ("any", "any")),
    ("gt", lax.gt, np.greater, F + INTS + tu.BOOL_DTYPES, ("any", "any")),
    ("ge", lax.ge, np.greater_equal, F + INTS + tu.BOOL_DTYPES, ("any", "any")),
    ("and_", lax.and_, np.bitwise_and, INTS + tu.BOOL_DTYPES, ("any", "any")),
    ("or_", lax.or_, np.bitwise_or, INTS + tu.BOOL_DTYPES, ("any", "any")),
    ("xor", lax.xor, np.bitwise_xor, INTS + tu.BOOL_DTYPES, ("any", "any")),
    ("complex", lax.complex, lambda x, y: x + 1j * y, [np.float32], ("any", "any")),
]
_BINARY_TABLE = {row[0]: row for row in BINARY}
_BINARY_CASES = [(name, shape, dtype) for name, _, _, dts, _ in BINARY
                 for shape, dtype in _cases(f"lax2_{name}", dts)]


def _sample2(rng, shape, dtype, kind):
    if kind == "nonzero":
        x = tu.rand(rng, shape, dtype, positive=True)
        if np.dtype(dtype).kind != "u":
            x = np.where(rng.random(shape) < 0.5, -x, x).astype(dtype)
        return x
    return _sample(rng, shape, dtype, kind)


@pytest.mark.parametrize("name,shape,dtype", _BINARY_CASES)
def test_binary_matches_oracle(rng, name, shape, dtype):
    _, fn, oracle, _, (kx, ky) = _BINARY_TABLE[name]
    x, y = _sample2(rng, shape, dtype, kx), _sample2(rng, shape, dtype, ky)
    out = fn(jnp.asarray(x), jnp.asarray(y))
    assert out.shape == shape
    if np.dtype(dtype).kind in "biu":
        with np.errstate(over="ignore"):
            expected = oracle(x, y)  # integer arithmetic wraps in the dtype, as on the device
        tu.assert_allclose(out, expected, out.dtype)
    else:
        expected = _oracle(oracle, x, y)
        # pow and atan2 are accurate to a few float32 ulp, not 1e-6
        few_ulp = name in ("pow", "atan2") and np.dtype(dtype) in (np.float32, np.complex64)
        tol = 2e-6 if few_ulp else None
        tu.assert_allclose(out, expected, out.dtype, atol=tol, rtol=tol)


def test_result_dtypes():
    c = jnp.asarray(np.array([1 + 2j], np.complex64))
    assert lax.abs(c).dtype == np.float32
    assert lax.real(c).dtype == np.float32 and lax.imag(c).dtype == np.float32
    assert lax.eq(jnp.ones(2), jnp.ones(2)).dtype == np.bool_
    assert lax.conj(jnp.ones(2)).dtype == np.complex64
    assert lax.complex(jnp.ones(2), jnp.ones(2)).dtype == np.complex64
    assert lax.is_finite(jnp.ones(2, jnp.bfloat16)).dtype == np.bool_


def test_int_div_rem_are_c_semantics():
    x = jnp.array([-7, 7, -7, 7], jnp.int32)
    y = jnp.array([2, 2, -2, -2], jnp.int32)
    np.testing.assert_array_equal(lax.div(x, y), [-3, 3, 3, -3])
    np.testing.assert_array_equal(lax.rem(x, y), [-1, 1, -1, 1])
    np.testing.assert_array_equal(lax.rem(jnp.array([-5.5, 5.5]), 2.0), [-1.5, 1.5])


def test_round_methods():
    x = jnp.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6], jnp.float32)
    np.testing.assert_array_equal(lax.round(x), [-3, -2, -1, 1, 2, 3, 2, -3])
    np.testing.assert_array_equal(lax.round(x, rounding_method=lax.RoundingMethod.TO_NEAREST_EVEN),
                                  [-2, -2, -0, 0, 2, 2, 2, -3])
    np.testing.assert_array_equal(lax.round(x, rounding_method=1), lax.round(x, rounding_method=lax.RoundingMethod.TO_NEAREST_EVEN))


@pytest.mark.parametrize("y", [0, 1, 2, 3, 5, -1, -3])
def test_integer_pow(rng, y):
    x = tu.rand(rng, (2, 3), np.float32, positive=True)
    tu.assert_allclose(lax.integer_pow(jnp.asarray(x), y), _wide(x) ** y, np.float32, atol=2e-6, rtol=2e-6)
    if y >= 0:
        xi = tu.rand(rng, (4,), np.int32)
        np.testing.assert_array_equal(lax.integer_pow(jnp.asarray(xi), y), xi ** y)


def test_pow_with_integer_exponent():
    out = lax.pow(jnp.array([2.0, -2.0, 4.0]), jnp.array([3, 3, -1], jnp.int32))
    np.testing.assert_allclose(out, [8.0, -8.0, 0.25])
    assert out.dtype == np.float32


def _shift_oracle(kind, x, s):
    bits = np.dtype(x.dtype).itemsize * 8
    out = []
    for v, k in zip(x.reshape(-1).tolist(), s.reshape(-1).tolist()):
        k = k % (1 << bits)  # a negative amount is a huge unsigned one: out of range
        u = v % (1 << bits)
        if kind == "left":
            r = (u << k) % (1 << bits) if k < bits else 0
        elif kind == "logical":
            r = u >> k if k < bits else 0
        else:
            signed = u - (1 << bits) if u >> (bits - 1) else u  # the top bit is the sign, even for unsigned
            r = signed >> k if k < bits else (-1 if signed < 0 else 0)
        out.append(r % (1 << bits))
    return np.array(out, np.uint64).astype(x.dtype).reshape(x.shape)


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint8, np.uint32])
@pytest.mark.parametrize("kind,fn", [("left", lax.shift_left), ("logical", lax.shift_right_logical),
                                     ("arith", lax.shift_right_arithmetic)])
def test_shifts_including_out_of_range_amounts(dtype, kind, fn):
    bits = np.dtype(dtype).itemsize * 8
    info = np.iinfo(dtype)
    x = np.array([1, 5, info.max, info.min, 3, info.min + 1, 7, 1], dtype)
    amounts = [0, 1, 3, bits - 1, bits, bits + 3, -1, 100 % (info.max + 1)]
    s = np.array(amounts, np.int64).astype(dtype)
    np.testing.assert_array_equal(fn(jnp.asarray(x), jnp.asarray(s)), _shift_oracle(kind, x, s))


def test_select_n(rng):
    cases = [jnp.full((2, 3), float(i)) for i in range(5)]
    which = rng.integers(0, 5, size=(2, 3)).astype(np.int32)
    np.testing.assert_array_equal(lax.select_n(jnp.asarray(which), *cases), which.astype(np.float32))
    pred = rng.random((2, 3)) < 0.5
    x, y = tu.rand(rng, (2, 3), np.int8), tu.rand(rng, (2, 3), np.int8)
    np.testing.assert_array_equal(lax.select_n(jnp.asarray(pred), jnp.asarray(x), jnp.asarray(y)), np.where(pred, y, x))
    # a scalar `which` picks whole cases; one case is returned as it is
    np.testing.assert_array_equal(lax.select_n(True, jnp.asarray(x), jnp.asarray(y)), y)
    np.testing.assert_array_equal(lax.select_n(jnp.int32(2), *cases), np.full((2, 3), 2.0))
    np.testing.assert_array_equal(lax.select_n(jnp.zeros((0,), bool), jnp.ones(0), jnp.zeros(0)), np.ones(0))
    np.testing.assert_array_equal(lax.select_n(pred[0], jnp.asarray(x[0])), x[0])


def test_clamp(rng):
    x = tu.rand(rng, (2, 3), np.float32)
    np.testing.assert_array_equal(lax.clamp(-1.0, jnp.asarray(x), 1.0), np.clip(x, -1, 1))
    lo, hi = np.full((2, 3), -0.5, np.float32), np.full((2, 3), 0.5, np.float32)
    np.testing.assert_array_equal(lax.clamp(jnp.asarray(lo), jnp.asarray(x), jnp.asarray(hi)), np.clip(x, lo, hi))
    xi = np.array([-5, 0, 5], np.int8)
    np.testing.assert_array_equal(lax.clamp(np.int8(-2), jnp.asarray(xi), np.int8(3)), [-2, 0, 3])


def test_nextafter_is_exact(rng):
    for dtype in (np.float32, np.float16, dtypes.bfloat16):
        x, y = tu.rand(rng, (5,), dtype), tu.rand(rng, (5,), dtype)
        y[0] = x[0]
        np.testing.assert_array_equal(np.asarray(lax.nextafter(jnp.asarray(x), jnp.asarray(y))), np.nextafter(x, y))


_SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -2.0, 2.0], np.float32)
SPECIAL_OPS = [
    ("sqrt", lax.sqrt, np.sqrt), ("rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x)),
    ("log", lax.log, np.log), ("log1p", lax.log1p, np.log1p), ("exp", lax.exp, np.exp),
    ("exp2", lax.exp2, np.exp2), ("expm1", lax.expm1, np.expm1), ("tanh", lax.tanh, np.tanh),
    ("logistic", lax.logistic, _logistic), ("sin", lax.sin, np.sin), ("cos", lax.cos, np.cos),
    ("tan", lax.tan, np.tan), ("asin", lax.asin, np.arcsin), ("acos", lax.acos, np.arccos),
    ("atan", lax.atan, np.arctan), ("sinh", lax.sinh, np.sinh), ("cosh", lax.cosh, np.cosh),
    ("asinh", lax.asinh, np.arcsinh), ("acosh", lax.acosh, np.arccosh), ("atanh", lax.atanh, np.arctanh),
    ("cbrt", lax.cbrt, np.cbrt), ("erf", lax.erf, sp.erf), ("erfc", lax.erfc, sp.erfc),
    ("erf_inv", lax.erf_inv, sp.erfinv), ("lgamma", lax.lgamma, sp.gammaln), ("digamma", lax.digamma, sp.psi),
    ("floor", lax.floor, np.floor), ("ceil", lax.ceil, np.ceil), ("round", lax.round, _round_afz),
    ("sign", lax.sign, np.sign), ("abs", lax.abs, np.abs), ("neg", lax.neg, np.negative),
    ("is_finite", lax.is_finite, np.isfinite), ("reciprocal", lax.reciprocal, np.reciprocal),
]
# Where XLA's special-value convention differs from the scipy oracle (documented, not hidden):
# lgamma(-inf) is +inf (C's lgamma) where scipy says -inf; digamma has a pole at 0 where XLA gives
# nan for both zeros, and digamma(-inf) is nan in both.
_SPECIAL_EXCEPTIONS = {("lgamma", 3): np.inf, ("digamma", 0): np.nan, ("digamma", 1): np.nan}


@pytest.mark.parametrize("name,fn,oracle", SPECIAL_OPS, ids=[r[0] for r in SPECIAL_OPS])
def test_special_values(name, fn, oracle):
    out = np.asarray(fn(jnp.asarray(_SPECIAL)))
    expected = np.array(_oracle(oracle, _SPECIAL), dtype=np.float64)
    for (n, i), v in _SPECIAL_EXCEPTIONS.items():
        if n == name:
            expected[i] = v
    # float32 ulps near 1 for the transcendental functions; lgamma's zeros at 1 and 2 come out as
    # about 5e-7 (an absolute, not relative, error)
    atol = 1e-6 if name == "lgamma" else 3e-7
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=3e-6, atol=atol, equal_nan=True)


def test_special_values_named_in_the_brief():
    assert np.isnan(lax.sqrt(jnp.float32(-1.0)))
    assert lax.log(jnp.float32(0.0)) == -np.inf
    assert np.signbit(lax.neg(jnp.float32(0.0)))
    assert np.signbit(lax.sqrt(jnp.float32(-0.0)))
    assert not np.signbit(lax.abs(jnp.float32(-0.0)))
    assert np.isnan(lax.max(jnp.float32(np.nan), jnp.float32(1.0)))
    assert np.isnan(lax.min(jnp.float32(1.0), jnp.float32(np.nan)))


def test_max_min_complex_are_lexicographic():
    x = jnp.asarray(np.array([1 + 2j, 1 + 1j, 3 - 1j], np.complex64))
    y = jnp.asarray(np.array([1 + 1j, 2 + 0j, 3 + 0j], np.complex64))
    np.testing.assert_array_equal(lax.max(x, y), np.maximum(np.asarray(x), np.asarray(y)))
    np.testing.assert_array_equal(lax.min(x, y), np.minimum(np.asarray(x), np.asarray(y)))


def test_size_one_and_scalar_broadcasting(rng):
    x, y = tu.rand(rng, (2, 1, 3), np.float32), tu.rand(rng, (1, 4, 3), np.float32)
    out = lax.mul(jnp.asarray(x), jnp.asarray(y))
    assert out.shape == (2, 4, 3)
    tu.assert_allclose(out, _wide(x) * _wide(y), np.float32)
    out = lax.lt(jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_array_equal(out, x < y)
    out = lax.select_n(jnp.asarray(x[:, :, :1] > 0), jnp.zeros((2, 1, 1)), jnp.ones((2, 1, 1)))
    np.testing.assert_array_equal(out, (x[:, :, :1] > 0).astype(np.float32))
    # rank-0 operands (Python scalars and 0-d arrays) broadcast against any shape, as in JAX's lax
    np.testing.assert_array_equal(lax.add(jnp.ones(3), 2.0), [3, 3, 3])
    np.testing.assert_array_equal(lax.sub(jnp.float32(5), jnp.ones((2, 2))), np.full((2, 2), 4))
    np.testing.assert_array_equal(lax.complex(1.0, jnp.array([2.0])), [1 + 2j])


def test_weak_type_of_results():
    assert lax.add(jnp.ones(3, jnp.float16), 1.0).dtype == np.float16
    assert lax.mul(2.0, 3.0).weak_type
    assert not lax.mul(jnp.ones(3), 3.0).weak_type
    assert not lax.eq(1.0, 1.0).weak_type


@pytest.mark.parametrize("fn,name", [(lax.add, "add"), (lax.atan2, "atan2"), (lax.max, "max"), (lax.eq, "eq"),
                                     (lax.pow, "pow"), (lax.complex, "complex"), (lax.nextafter, "nextafter")])
def test_shape_errors_f13_f14(fn, name):
    with pytest.raises(TypeError, match=rf"{name} got incompatible shapes for broadcasting: \(3,\), \(4,\)"):
        fn(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError, match=rf"{name}: arrays must have same number of dimensions, got \(3,\), \(3, 4\)"):
        fn(jnp.ones(3), jnp.ones((3, 4)))


@pytest.mark.parametrize("fn,args,pattern", [
    (lax.sin, (jnp.ones(2, jnp.int32),), r"sin does not accept dtype i32"),
    (lax.erf, (jnp.ones(2, jnp.complex64),), r"erf does not accept dtype c64"),
    (lax.floor, (jnp.ones(2, jnp.int32),), r"floor does not accept dtype i32"),
    (lax.abs, (jnp.ones(2, jnp.uint8),), r"abs does not accept dtype u8"),
    (lax.is_finite, (jnp.ones(2, jnp.int32),), r"is_finite does not accept dtype i32"),
    (lax.nextafter, (jnp.ones(2, jnp.int32), jnp.ones(2, jnp.int32)), r"nextafter does not accept dtype i32"),
    (lax.population_count, (jnp.ones(2, jnp.bool_),), r"population_count does not accept dtype bool"),
    (lax.clz, (jnp.ones(2),), r"clz does not accept dtype f32"),
    (lax.shift_left, (jnp.ones(2), jnp.ones(2)), r"shift_left does not accept dtype f32"),
    (lax.not_, (jnp.ones(2),), r"not does not accept dtype f32"),
    (lax.add, (jnp.ones(2, jnp.bool_), jnp.ones(2, jnp.bool_)), r"add does not accept dtype bool"),
    (lax.neg, (jnp.ones(2, jnp.bool_),), r"neg does not accept dtype bool"),
    (lax.rem, (jnp.ones(2, jnp.complex64), jnp.ones(2, jnp.complex64)), r"rem does not accept dtype c64"),
    (lax.lt, (jnp.ones(2, jnp.complex64), jnp.ones(2, jnp.complex64)), r"lt does not accept dtype c64"),
    (lax.real, (jnp.ones(2),), r"real does not accept dtype f32"),
    (lax.conj, (jnp.ones(2, jnp.int32),), r"conj does not accept dtype i32"),
    (lax.complex, (jnp.ones(2, jnp.float16), jnp.ones(2, jnp.float16)), r"complex does not accept dtype f16"),
    (lax.pow, (jnp.ones(2, jnp.int32), jnp.ones(2, jnp.int32)), r"pow does not accept dtype i32"),
    (lax.cbrt, (jnp.ones(2, jnp.complex64),), r"cbrt does not accept dtype c64"),
    (lambda x: lax.integer_pow(x, 2), (jnp.ones(2, jnp.bool_),), r"integer_pow does not accept dtype bool"),
    (lambda x: lax.round(x), (jnp.ones(2, jnp.int32),), r"round does not accept dtype i32"),
])
def test_unsupported_dtypes_are_refused(fn, args, pattern):
    with pytest.raises(TypeError, match=pattern):
        fn(*args)


def test_other_errors():
    with pytest.raises(TypeError, match=r"lax.add requires arguments to have the same dtypes, got f32, i32"):
        lax.add(jnp.ones(3), jnp.ones(3, jnp.int32))
    with pytest.raises(TypeError, match=r"Integers cannot be raised to negative powers, got integer_pow\(i32\[2\], -1\)"):
        lax.integer_pow(jnp.ones(2, jnp.int32), -1)
    with pytest.raises(TypeError, match=r"Integers cannot be raised to negative powers"):
        lax.reciprocal(jnp.ones(2, jnp.int32))
    with pytest.raises(TypeError, match=r"lax.pow requires y to have x's dtype or an integer dtype, got f32, f16"):
        lax.pow(jnp.ones(2), jnp.ones(2, jnp.float16))
    with pytest.raises(TypeError, match=r"clamp requires min.shape == operand.shape or min.shape == \(\), "
                                        r"got min.shape=\(2,\), operand.shape=\(3,\)"):
        lax.clamp(jnp.zeros(2), jnp.ones(3), 2.0)
    with pytest.raises(TypeError, match=r"lax.clamp requires arguments to have the same dtypes, got i32, f32, f32"):
        lax.clamp(jnp.zeros((), jnp.int32), jnp.ones(3), 2.0)
    with pytest.raises(ValueError, match=r"select_n\(\) must have at least one case"):
        lax.select_n(jnp.ones(2, jnp.bool_))
    with pytest.raises(TypeError, match=r"select with boolean `which` cannot have > 2 cases"):
        lax.select_n(jnp.ones(1, jnp.bool_), jnp.zeros(1), jnp.ones(1), jnp.ones(1))
    with pytest.raises(TypeError, match=r"select `which` must be boolean or int32 type, got f32"):
        lax.select_n(jnp.ones(1), jnp.zeros(1), jnp.ones(1))
    with pytest.raises(TypeError, match=r"select `which` must be scalar or have the same shape as cases, "
                                        r"got `which` shape \(2,\) but case shape \(3,\)"):
        lax.select_n(jnp.ones(2, jnp.bool_), jnp.zeros(3), jnp.ones(3))
    with pytest.raises(TypeError, match=r"select cases must have the same shapes, got \[\(3,\), \(1,\)\]"):
        lax.select_n(True, jnp.zeros(3), jnp.ones(1))
    with pytest.raises(TypeError, match=r"lax.select_n requires arguments to have the same dtypes, got f32, i32"):
        lax.select_n(True, jnp.zeros(1), jnp.ones(1, jnp.int32))
    with pytest.raises(ValueError):
        lax.round(jnp.ones(2), rounding_method=5)

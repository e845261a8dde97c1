"""isclose, allclose, array_equal, array_equiv and the array-API aliases against NumPy (float64
oracle), including infinities, NaN, integer inputs (exact, as JAX), shape mismatches and jit."""
import numpy as np
import pytest

import core
import core.numpy as jnp

INF, NAN = np.inf, np.nan
A = np.array([1.0, 1.0, 1e10, INF, INF, -INF, NAN, NAN, 0.0, 1e-9])
B = np.array([1.0 + 1e-6, 1.1, 1.00001e10, INF, -INF, -INF, NAN, 1.0, 1e-9, 0.0])


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("rtol,atol", [(1e-5, 1e-8), (1e-1, 0.0), (0.0, 1e-3)])
def test_isclose_matches_numpy(dtype, equal_nan, rtol, atol):
    with np.errstate(over="ignore"):  # 1e10 is inf in float16, which the table then covers too
        a, b = A.astype(dtype), B.astype(dtype)
    out = jnp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    # the oracle compares in the inputs' dtype, as JAX casts the tolerances to it
    expected = np.isclose(a, b, rtol=dtype(rtol), atol=dtype(atol), equal_nan=equal_nan)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert bool(jnp.allclose(a, b, rtol, atol, equal_nan)) == bool(np.all(expected))


def test_isclose_float64_complex_and_broadcast(x64):
    a = np.array([[1.0, 2.0 + 1e-9], [3.0, NAN]])
    b = np.array([1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(jnp.isclose(a, b)), np.isclose(a, b))
    z1 = np.array([1 + 1j, 1 + 2j, complex(INF, 0)])
    z2 = np.array([1 + 1j + 1e-9, 1 + 2.1j, complex(INF, 0)])
    np.testing.assert_array_equal(np.asarray(jnp.isclose(z1, z2)), np.isclose(z1, z2))
    assert jnp.isclose(a, b).shape == (2, 2)


def test_isclose_integers_compare_exactly_as_jax():
    a, b = np.array([1, 2, 3], np.int32), np.array([1, 3, 3], np.int32)
    # NumPy would call 2 and 3 close with atol=1; JAX (and we) compare integers exactly
    np.testing.assert_array_equal(np.asarray(jnp.isclose(a, b, atol=1)), [True, False, True])
    assert not bool(jnp.allclose(a, b, atol=1))


def test_comparisons_under_jit():
    f = core.jit(lambda a, b: (jnp.isclose(a, b), jnp.allclose(a, b), jnp.array_equal(a, b),
                               jnp.array_equiv(a, b)))
    a = np.array([1.0, 2.0, NAN], np.float32)
    close, allc, eq, equiv = f(a, a)
    np.testing.assert_array_equal(np.asarray(close), [True, True, False])
    assert not bool(allc) and not bool(eq) and not bool(equiv)
    close, allc, eq, equiv = f(a[:2], a[:2] + np.float32(1e-7))
    assert bool(allc) and not bool(eq)


CASES = [
    (np.array([1, 2]), np.array([1, 2])),
    (np.array([1, 2]), np.array([1, 3])),
    (np.array([1.0, 2.0]), np.array([1, 2], np.int32)),
    (np.array([1, 2]), np.array([[1, 2], [1, 2]])),
    (np.array([1, 2]), np.array([[1, 2], [1, 3]])),
    (np.array([1, 2]), np.array([1, 2, 3])),
    (np.zeros((2, 3)), np.zeros((3, 2))),
    (np.array([NAN, 1.0]), np.array([NAN, 1.0])),
    (np.zeros((0,)), np.zeros((0,))),
    (np.float32(3.0), 3.0),
]


@pytest.mark.parametrize("name", ["array_equal", "array_equiv"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_array_equal_and_equiv_match_numpy(name, case):
    a, b = CASES[case]
    out = getattr(jnp, name)(a, b)
    assert out.dtype == np.bool_ and out.shape == ()
    assert bool(out) == bool(getattr(np, name)(a, b)), (a, b)


def test_array_equal_equal_nan():
    a = np.array([NAN, 1.0], np.float32)
    assert bool(jnp.array_equal(a, a, equal_nan=True)) and not bool(jnp.array_equal(a, a))
    assert bool(np.array_equal(a, a, equal_nan=True))
    ints = np.array([1, 2], np.int32)
    assert bool(jnp.array_equal(ints, ints, equal_nan=True))


ALIASES = [("pow", "power"), ("acos", "arccos"), ("asin", "arcsin"), ("atan", "arctan"), ("atan2", "arctan2"),
           ("acosh", "arccosh"), ("asinh", "arcsinh"), ("atanh", "arctanh"),
           ("bitwise_left_shift", "left_shift"), ("bitwise_right_shift", "right_shift"),
           ("bitwise_invert", "invert")]


@pytest.mark.eager_only  # the jit harness wraps each name separately, so identity holds only eagerly
def test_array_api_aliases_are_the_numpy_named_functions():
    for alias, name in ALIASES:
        assert getattr(jnp, alias) is getattr(jnp, name), alias


@pytest.mark.parametrize("alias,name", ALIASES)
def test_array_api_aliases_match_numpy(rng, alias, name):
    if alias.startswith("bitwise"):
        x = rng.integers(0, 100, size=(3,)).astype(np.int32)
        args = (x, np.array([1, 2, 3], np.int32))[:1 if alias == "bitwise_invert" else 2]
        out = getattr(jnp, alias)(*args)
        np.testing.assert_array_equal(np.asarray(out), getattr(np, alias)(*args))
        return
    lo = 1.1 if alias == "acosh" else 0.1
    hi = 3.0 if alias in ("acosh", "asinh", "pow", "atan", "atan2") else 0.9
    args = [rng.uniform(lo, hi, size=(3,)) for _ in range(2 if alias in ("pow", "atan2") else 1)]
    out = getattr(jnp, alias)(*[a.astype(np.float32) for a in args])
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out, np.float64), getattr(np, alias)(*args), rtol=1e-5, atol=1e-6)


UNIQUE_X = np.array([[3, 1, 3], [7, 1, 0]], np.int32)


@pytest.mark.parametrize("name", ["unique_values", "unique_counts", "unique_inverse", "unique_all"])
def test_array_api_unique_functions_match_numpy(name):
    out = getattr(jnp, name)(UNIQUE_X)
    expected = getattr(np, name)(UNIQUE_X)
    if name == "unique_values":
        # NumPy 2 does not promise an order here; JAX (and we) sort
        np.testing.assert_array_equal(np.asarray(out), np.sort(expected))
        return
    assert out._fields == expected._fields
    for field in out._fields:
        np.testing.assert_array_equal(np.asarray(getattr(out, field)), getattr(expected, field), err_msg=field)


def test_unique_functions_with_size_under_jit():
    f = core.jit(lambda x: jnp.unique_counts(x, size=5, fill_value=-1))
    values, counts = f(UNIQUE_X)
    np.testing.assert_array_equal(np.asarray(values), [0, 1, 3, 7, -1])
    np.testing.assert_array_equal(np.asarray(counts), [1, 2, 2, 1, 0])


@pytest.mark.parametrize("name,s1,s2", [("matvec", (3, 4), (4,)), ("matvec", (2, 3, 4), (1, 4)),
                                        ("vecmat", (4,), (4, 3)), ("vecmat", (2, 1, 4), (3, 4, 2))])
def test_matvec_vecmat_match_numpy(rng, x64, name, s1, s2):
    a = rng.standard_normal(s1) + 1j * rng.standard_normal(s1)
    b = rng.standard_normal(s2) + 1j * rng.standard_normal(s2)
    out = getattr(jnp, name)(a, b)
    np.testing.assert_allclose(np.asarray(out), getattr(np, name)(a, b), rtol=1e-12, atol=1e-12)
    from core import test_util as tu
    tu.check_grads(lambda x, y: getattr(jnp, name)(x, y), (a.real, b.real), order=1)

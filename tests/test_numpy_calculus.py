"""diff, ediff1d, gradient, trapezoid and interp against NumPy in float64 (and float32), their
derivatives against finite differences, and a jitted run."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu

# (name, args builder(rng) -> tuple of NumPy args, kwargs)
CASES = [
    ("diff", lambda r: (r.standard_normal(5),), {}),
    ("diff", lambda r: (r.standard_normal((3, 4)),), {"n": 2, "axis": 0}),
    ("diff", lambda r: (r.standard_normal((2, 5)),), {"n": 3}),
    ("diff", lambda r: (r.standard_normal((2, 3)),), {"prepend": 1.5, "append": np.ones((2, 1))}),
    ("diff", lambda r: (r.standard_normal(4),), {"n": 0}),
    ("diff", lambda r: (r.standard_normal(2),), {"n": 3}),
    ("ediff1d", lambda r: (r.standard_normal((2, 3)),), {}),
    ("ediff1d", lambda r: (r.standard_normal(4),), {"to_begin": np.array([-1.0, 0.0]), "to_end": 5.0}),
    ("gradient", lambda r: (r.standard_normal(6),), {}),
    ("gradient", lambda r: (r.standard_normal((3, 4)),), {}),
    ("gradient", lambda r: (r.standard_normal((3, 4)), 0.5), {}),
    ("gradient", lambda r: (r.standard_normal((3, 4)), 2.0, np.cumsum(r.uniform(0.2, 1.0, 4))), {}),
    ("gradient", lambda r: (r.standard_normal((3, 4)), np.cumsum(r.uniform(0.2, 1.0, 4))), {"axis": 1}),
    ("gradient", lambda r: (r.standard_normal((2, 3, 2)),), {"axis": (0, -1)}),
    ("trapezoid", lambda r: (r.standard_normal(5),), {}),
    ("trapezoid", lambda r: (r.standard_normal((3, 4)),), {"dx": 0.3, "axis": 0}),
    ("trapezoid", lambda r: (r.standard_normal((3, 4)), np.cumsum(r.uniform(0.1, 1, 4))), {}),
    ("trapezoid", lambda r: (r.standard_normal((3, 4)), np.cumsum(r.uniform(0.1, 1, (3, 4)), axis=0)), {"axis": 0}),
    ("interp", lambda r: (r.uniform(-1, 5, 7), np.array([0.0, 1.0, 1.5, 3.0, 4.0]), r.standard_normal(5)), {}),
    ("interp", lambda r: (np.array([-1.0, 0.0, 0.5, 4.0, 5.0]), np.array([0.0, 1.0, 4.0]), np.array([1.0, -1.0, 2.0])),
     {"left": -7.0, "right": 9.0}),
    ("interp", lambda r: (r.uniform(-400, 400, 6), np.array([-180.0, -90, 0, 90, 170]), r.standard_normal(5)),
     {"period": 360.0}),
    ("interp", lambda r: (r.uniform(-1, 2, (2, 3)), np.array([0.0, 1.0]), np.array([2.0, 3.0])), {}),
    ("interp", lambda r: (np.array([0.5, 2.0]), np.array([1.0]), np.array([4.0])), {}),
]


def _check(out, expected, dtype):
    if isinstance(expected, (list, tuple)):
        assert isinstance(out, list) and len(out) == len(expected)
        for o, e in zip(out, expected):
            _check(o, e, dtype)
        return
    assert out.dtype == dtype, (out.dtype, dtype)
    tol = 1e-12 if dtype == np.float64 else 2e-5
    tu.assert_allclose(out, np.asarray(expected), dtype, atol=tol, rtol=tol)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_numpy_float32(rng, case):
    name, build, kwargs = CASES[case]
    args = build(rng)
    f32 = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
    out = getattr(jnp, name)(*f32, **kwargs)
    wide_args = [np.asarray(a, np.float64) if isinstance(a, np.ndarray) else a for a in f32]
    _check(out, getattr(np, name)(*wide_args, **kwargs), np.dtype(np.float32))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_numpy_float64_and_gradients(rng, x64, case):
    name, build, kwargs = CASES[case]
    args = build(rng)
    _check(getattr(jnp, name)(*args, **kwargs), getattr(np, name)(*args, **kwargs), np.dtype(np.float64))
    # the derivative in every array argument (interp's x stays away from the knots: sampled uniformly)
    diff_args = tuple(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.size > 1)
    if name == "interp":
        diff_args = tuple(i for i in diff_args if i != 1)  # derivatives in xp: checked in the next test
        if np.isin(args[0], args[1]).any():  # x on a knot, where the derivative jumps
            diff_args = tuple(i for i in diff_args if i != 0)

    def f(*d):
        full = list(args)
        for i, v in zip(diff_args, d):
            full[i] = v
        return getattr(jnp, name)(*full, **kwargs)
    tu.check_grads(f, tuple(args[i] for i in diff_args), order=1)


def test_interp_derivative_in_the_knots(x64):
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    fp = np.array([1.0, -2.0, 0.5, 3.0])
    x = np.array([0.3, 1.7, 3.1])
    tu.check_grads(lambda xp_: jnp.interp(x, xp_, fp), (xp,), order=1)


def test_integer_and_bool_inputs(x64):
    ints = np.array([1, 4, 9, 16], np.int32)
    out = jnp.diff(ints)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.diff(ints))
    bools = np.array([True, True, False, True])
    np.testing.assert_array_equal(np.asarray(jnp.diff(bools)), np.diff(bools))
    g = jnp.gradient(ints)
    assert g.dtype == np.float64
    np.testing.assert_allclose(np.asarray(g), np.gradient(ints))
    np.testing.assert_allclose(float(jnp.trapezoid(ints)), np.trapezoid(ints))


def test_under_jit():
    @core.jit
    def f(y, x, q):
        return (jnp.diff(y, n=2), jnp.gradient(y, x), jnp.trapezoid(y, x), jnp.interp(q, x, y),
                jnp.ediff1d(y, to_end=0.0))
    y = np.array([0.0, 1.0, 4.0, 2.0, 5.0], np.float32)
    x = np.array([0.0, 0.5, 1.5, 2.0, 4.0], np.float32)
    q = np.array([-1.0, 0.25, 3.0, 9.0], np.float32)
    out = f(y, x, q)
    expected = (np.diff(y, n=2), np.gradient(y, x), np.trapezoid(y, x), np.interp(q, x, y), np.ediff1d(y, to_end=0.0))
    for o, e in zip(out, expected):
        tu.assert_allclose(o, e, np.float32, atol=1e-5, rtol=1e-5)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="diff requires input that is at least one dimensional"):
        jnp.diff(jnp.float32(1.0))
    with pytest.raises(ValueError, match="order must be non-negative"):
        jnp.diff(jnp.ones(3), n=-1)
    with pytest.raises(NotImplementedError, match="edge_order=2"):
        jnp.gradient(jnp.ones(3), edge_order=2)
    with pytest.raises(ValueError, match="at least 2 samples"):
        jnp.gradient(jnp.ones((1, 3)))
    with pytest.raises(ValueError, match="same non-zero length"):
        jnp.interp(jnp.ones(2), jnp.ones(3), jnp.ones(2))

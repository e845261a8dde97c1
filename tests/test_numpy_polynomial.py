"""polyval, polyfit, roots, vander, poly, polyadd/sub/mul, polyder, polyint against NumPy in float64
(and float32), derivatives against finite differences, and a jitted run (all but roots, which is
eager-only)."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu


def _tol(dtype):
    return 1e-11 if np.dtype(dtype) == np.float64 else 3e-4


# (name, builder(rng) -> args, kwargs); every array argument is differentiated unless listed in NO_GRAD
CASES = [
    ("polyval", lambda r: (r.standard_normal(4), r.standard_normal((2, 3))), {}),
    ("polyval", lambda r: (r.standard_normal(1), r.standard_normal(3)), {}),
    ("polyfit", lambda r: (np.linspace(-1, 1, 7), r.standard_normal(7), 2), {}),
    ("polyfit", lambda r: (np.linspace(0, 2, 6), r.standard_normal((6, 2)), 3), {}),
    ("polyfit", lambda r: (np.linspace(0, 2, 6), r.standard_normal(6), 1), {"w": np.linspace(0.5, 2, 6)}),
    ("vander", lambda r: (r.standard_normal(3),), {}),
    ("vander", lambda r: (r.standard_normal(4), 2), {"increasing": True}),
    ("poly", lambda r: (r.standard_normal(3),), {}),
    ("polyadd", lambda r: (r.standard_normal(2), r.standard_normal(4)), {}),
    ("polysub", lambda r: (r.standard_normal(3), r.standard_normal(1)), {}),
    ("polymul", lambda r: (r.standard_normal(3), r.standard_normal(2)), {}),
    ("polyder", lambda r: (r.standard_normal(5),), {"m": 2}),
    ("polyder", lambda r: (r.standard_normal(1),), {}),
    ("polyint", lambda r: (r.standard_normal(3),), {}),
    ("polyint", lambda r: (r.standard_normal(3),), {"m": 2, "k": np.array([1.5, -2.0])}),
]


def _array_positions(args):
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_numpy_float32(rng, case):
    name, build, kwargs = CASES[case]
    args = build(rng)
    args32 = [a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args]
    kw32 = {k: v.astype(np.float32) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    out = getattr(jnp, name)(*args32, **kw32)
    expected = getattr(np, name)(*[np.asarray(a, np.float64) if isinstance(a, np.ndarray) else a for a in args32],
                                 **kwargs)
    assert out.dtype == np.float32
    tu.assert_allclose(out, expected, np.float32, atol=_tol(np.float32), rtol=_tol(np.float32))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_float64_and_gradients(rng, x64, case):
    name, build, kwargs = CASES[case]
    args = build(rng)
    tu.assert_allclose(getattr(jnp, name)(*args, **kwargs), getattr(np, name)(*args, **kwargs), np.float64,
                       atol=1e-11, rtol=1e-11)
    pos = _array_positions(args)

    def f(*d):
        full = list(args)
        for i, v in zip(pos, d):
            full[i] = v
        return getattr(jnp, name)(*full, **kwargs)
    tu.check_grads(f, tuple(args[i] for i in pos), order=1)


def test_integer_coefficients(x64):
    p, q = np.array([1, -2, 3], np.int32), np.array([2, 5], np.int32)
    for name, args in (("polyval", (p, np.array([0, 2, -3], np.int32))), ("polyadd", (p, q)), ("polysub", (p, q)),
                       ("polymul", (p, q)), ("polyder", (p,)), ("vander", (q, 3))):
        out = getattr(jnp, name)(*args)
        assert out.dtype == np.int32, name
        np.testing.assert_array_equal(np.asarray(out), getattr(np, name)(*args), err_msg=name)


def test_polyfit_full_and_cov(rng, x64):
    x = np.linspace(-1, 2, 8)
    y = 0.5 * x ** 2 - x + 0.1 * rng.standard_normal(8)
    c, resid, rank, s, rcond = jnp.polyfit(x, y, 2, full=True)
    ec, eresid, erank, es, ercond = np.polyfit(x, y, 2, full=True)
    tu.assert_allclose(c, ec, np.float64, atol=1e-11, rtol=1e-11)
    tu.assert_allclose(resid, eresid[0], np.float64, atol=1e-11, rtol=1e-11)
    assert int(rank) == erank and rcond == pytest.approx(ercond)
    tu.assert_allclose(s, es, np.float64, atol=1e-11, rtol=1e-11)
    for cov in (True, "unscaled"):
        c, v = jnp.polyfit(x, y, 2, cov=cov)
        ec, ev = np.polyfit(x, y, 2, cov=cov)
        tu.assert_allclose(v, ev, np.float64, atol=1e-11, rtol=1e-9)
    y2 = np.stack([y, 2 * y + 1], axis=1)
    c, v = jnp.polyfit(x, y2, 1, cov=True)
    ec, ev = np.polyfit(x, y2, 1, cov=True)
    tu.assert_allclose(v, ev, np.float64, atol=1e-11, rtol=1e-9)


ROOTS = [np.array([1.0, -3.0, 2.0]), np.array([1.0, 0.0, 1.0]), np.array([0.0, 0.0, 2.0, -1.0, 0.0, 0.0]),
         np.array([3.0]), np.array([0.0, 0.0]), np.array([2.0, 1.0, -4.0, 0.5])]


@pytest.mark.parametrize("case", range(len(ROOTS)))
def test_roots_match_numpy(x64, case):
    p = ROOTS[case]
    out = jnp.roots(p)
    assert out.dtype == np.complex128
    np.testing.assert_allclose(np.sort_complex(np.asarray(out)), np.sort_complex(np.roots(p).astype(complex)),
                               atol=1e-12)
    # the roots are roots: the polynomial vanishes there
    if out.shape[0]:
        np.testing.assert_allclose(np.polyval(p, np.asarray(out)), 0, atol=1e-10)


def test_roots_float32_and_complex_coefficients(x64):
    out = jnp.roots(np.array([1.0, -3.0, 2.0], np.float32))
    assert out.dtype == np.complex64
    p = np.array([1.0, -1j, 2.0 + 1j])
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.roots(p))), np.sort_complex(np.roots(p)), atol=1e-12)


def test_under_jit_and_roots_refuses_tracers():
    x = np.linspace(0, 1, 5).astype(np.float32)
    y = (2 * x ** 2 + 1).astype(np.float32)
    f = core.jit(lambda x, y: (jnp.polyval(jnp.polyfit(x, y, 2), x), jnp.polyint(jnp.polyder(y)),
                               jnp.polymul(x, y)))
    v, pi, pm = f(x, y)
    tu.assert_allclose(v, y.astype(np.float64), np.float32, atol=1e-4, rtol=1e-4)
    tu.assert_allclose(pi, np.polyint(np.polyder(y.astype(np.float64))), np.float32, atol=1e-5, rtol=1e-5)
    # x starts with 0: NumPy's polymul trims that leading zero, JAX's (and ours) keeps it unless asked
    tu.assert_allclose(pm, np.convolve(x.astype(np.float64), y), np.float32, atol=1e-5, rtol=1e-5)
    trimmed = jnp.polymul(x, y, trim_leading_zeros=True)
    tu.assert_allclose(trimmed, np.polymul(x.astype(np.float64), y), np.float32, atol=1e-5, rtol=1e-5)
    with pytest.raises(TypeError, match="roots needs concrete coefficients"):
        core.jit(jnp.roots)(y)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"polyval: the coefficients must be a 1-D array .* shape \(2, 2\)"):
        jnp.polyval(jnp.ones((2, 2)), 1.0)
    with pytest.raises(TypeError, match="same length, got 3 and 2"):
        jnp.polyfit(jnp.ones(3), jnp.ones(2), 1)
    with pytest.raises(ValueError, match="must exceed order"):
        jnp.polyfit(jnp.arange(3.0), jnp.ones(3), 2, cov=True)


POLYDIV = [(np.array([1.0, -3.0, 2.0]), np.array([1.0, -1.0])), (np.array([2.0, 0.0, 1.0, 5.0]), np.array([0.5, 1.0, -1.0])),
           (np.array([1.0, 2.0]), np.array([3.0, 1.0, 1.0])), (np.array([4.0, 2.0, 1.0]), np.array([2.0]))]


@pytest.mark.parametrize("case", range(len(POLYDIV)))
def test_polydiv_matches_numpy(x64, case):
    u, v = POLYDIV[case]
    q, r = jnp.polydiv(u, v)
    eq, er = np.polydiv(u, v)
    tu.assert_allclose(q, eq, np.float64, atol=1e-12, rtol=1e-12)
    # JAX keeps len(u) remainder coefficients; NumPy trims the leading (zero) ones
    tu.assert_allclose(r[r.shape[0] - er.shape[0]:], er, np.float64, atol=1e-12, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(r[:r.shape[0] - er.shape[0]]), 0, atol=1e-12)
    qt, rt = jnp.polydiv(u, v, trim_leading_zeros=True)
    tu.assert_allclose(rt, er, np.float64, atol=1e-12, rtol=1e-12)
    tu.check_grads(lambda a, b: jnp.polydiv(a, b), (u, v), order=1)

"""polyval, polyfit, roots, vander, poly, polyadd/sub/mul, polyder, polyint against NumPy in float64
(and float32), derivatives against finite differences, and a jitted run (roots under jit with strip_zeros=False, as
JAX's)."""
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
    # the default strip_zeros=True fixes the output's length from the values: concrete input only
    with pytest.raises(core.errors.ConcretizationTypeError,
                       match=r"roots\(p\) with strip_zeros=True needs concrete coefficients \(got a traced "
                             r"float32\[5\]\).*pass strip_zeros=False"):
        core.jit(jnp.roots)(y)


# (coefficients, number of leading zeros): strip_zeros=False keeps len(p) - 1 roots, NaN for each leading zero
ROOTS_UNDER_JIT = [np.array([1.0, -3.0, 2.0]), np.array([2.0, 1.0, -4.0, 0.5]), np.array([1.0, 0.0, 1.0]),
                   np.array([0.0, 1.0, -3.0, 2.0]), np.array([0.0, 0.0, 2.0, -1.0, 0.0]),
                   np.array([1.0, -1j, 2.0 + 1j]), np.array([3.0])]


def test_roots_strip_zeros_false_under_jit_match_numpy(x64):
    f = core.jit(lambda p: jnp.roots(p, strip_zeros=False))
    for p in ROOTS_UNDER_JIT:
        out = np.asarray(f(p))
        assert out.dtype == np.complex128 and out.shape == (p.size - 1,), p
        leading = int(np.argmax(p != 0))
        assert np.isnan(out[out.size - leading:]).all() and not np.isnan(out[:out.size - leading]).any(), (p, out)
        np.testing.assert_allclose(np.sort_complex(out[:out.size - leading]), np.sort_complex(np.roots(p)),
                                   atol=1e-12, err_msg=str(p))
    # float32 coefficients give complex64 roots, as JAX's
    r32 = f(np.array([1.0, -3.0, 2.0], np.float32))
    assert r32.dtype == np.complex64
    np.testing.assert_allclose(np.sort_complex(np.asarray(r32)), [1, 2], atol=1e-5)


def test_roots_strip_zeros_false_under_vmap_match_a_loop(x64):
    batch = np.array([[1.0, -3.0, 2.0, 0.5], [2.0, 0.0, -1.0, 0.25], [1.0, 1.0, 1.0, 1.0]])
    out = np.asarray(core.vmap(lambda p: jnp.roots(p, strip_zeros=False))(batch))
    for row, p in zip(out, batch):
        np.testing.assert_allclose(np.sort_complex(row), np.sort_complex(np.roots(p)), atol=1e-12)


def test_roots_gradient_is_the_implicit_function_formula(x64):
    # distinct real roots r of p: dr/dp_k = -r^(n-k) / p'(r), from p(r) = 0 differentiated in p_k
    p = np.array([2.0, 1.0, -4.0, 0.5])
    n = p.size - 1
    jac = np.asarray(core.jit(core.jacrev(lambda q: jnp.sort(jnp.roots(q, strip_zeros=False).real)))(p))
    r = np.sort(np.roots(p).real)
    expected = -r[:, None] ** (n - np.arange(n + 1))[None, :] / np.polyval(np.polyder(p), r)[:, None]
    np.testing.assert_allclose(jac, expected, rtol=1e-9, atol=1e-12)
    # and against central differences of NumPy's roots
    h = 1e-6
    fd = np.stack([(np.sort(np.roots(p + h * e).real) - np.sort(np.roots(p - h * e).real)) / (2 * h)
                   for e in np.eye(n + 1)], axis=1)
    np.testing.assert_allclose(jac, fd, rtol=1e-6, atol=1e-8)


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

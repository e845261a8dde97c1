"""core.scipy.special's gamma/beta family, incomplete gamma and beta, polygamma, Bessel I0/I1 and
erfcinv against scipy.special (float64 oracle), SciPy's edge values, and finite differences."""

import numpy as np
import pytest
import scipy.special as ss

import core
import core.numpy as jnp
from core import test_util as tu
from core.scipy import special


def _f64(*values):
    return np.array(values, dtype=np.float64)


def _close(actual, expected, rtol, atol=0.0):
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=rtol, atol=atol, equal_nan=True)


# ----- values over parameter grids (float64) -----------------------------------------------------

A_GRID = _f64(0.01, 0.5, 1.0, 2.0, 3.7, 10.0, 55.0, 400.0, 3000.0)
X_GRID = _f64(1e-6, 0.1, 0.9, 1.0, 2.5, 9.0, 30.0, 380.0, 3100.0)


def test_gammainc_gammaincc_grid_float64(x64):
    a, x = np.meshgrid(A_GRID, X_GRID)
    _close(special.gammainc(a, x), ss.gammainc(a, x), rtol=1e-11, atol=1e-300)
    # the upper tail keeps its relative accuracy where it is tiny (computed directly, not 1 - P)
    _close(special.gammaincc(a, x), ss.gammaincc(a, x), rtol=1e-11, atol=1e-300)


def test_betainc_grid_float64(x64):
    ab = _f64(0.05, 0.5, 1.0, 2.0, 7.5, 60.0, 700.0)
    a, b, x = np.meshgrid(ab, ab, _f64(1e-5, 0.05, 0.3, 0.5, 0.77, 0.999))
    _close(special.betainc(a, b, x), ss.betainc(a, b, x), rtol=2e-11, atol=1e-290)


def test_gamma_family_float64(x64, rng):
    x = np.concatenate([rng.uniform(0.05, 30, 8), rng.uniform(-6, -0.05, 6), _f64(170.5, 1e-8, -1e-8)])
    _close(special.gamma(x), ss.gamma(x), rtol=5e-13)
    _close(special.gammasgn(x), ss.gammasgn(x), rtol=0)
    a, b = rng.uniform(0.1, 40, 8), rng.uniform(0.1, 40, 8)
    _close(special.beta(a, b), ss.beta(a, b), rtol=1e-12)
    _close(special.beta(-0.5, 1.5), ss.beta(-0.5, 1.5), rtol=1e-13)
    for d in (1, 2, 5):
        _close(special.multigammaln(a + 3, d), ss.multigammaln(a + 3, d), rtol=1e-13)


def test_polygamma_float64(x64, rng):
    n = np.array([0, 1, 2, 3, 4, 6, 1, 2, 1, 3])
    x = np.concatenate([rng.uniform(0.05, 12, 7), _f64(-0.5, -2.5, 250.0)])
    _close(special.polygamma(n, x), ss.polygamma(n, x), rtol=1e-12)


def test_bessel_float64(x64):
    # both sides of the series / asymptotic switch at |x| = 20, and far out
    x = _f64(0.0, 1e-4, -0.7, 3.0, -12.0, 19.99, 20.01, -45.0, 700.0, 1e5)
    for name in ("i0e", "i1e"):
        _close(getattr(special, name)(x), getattr(ss, name)(x), rtol=2e-15, atol=1e-300)
    for name in ("i0", "i1"):
        finite = np.abs(x) < 700
        _close(getattr(special, name)(x[finite]), getattr(ss, name)(x[finite]), rtol=2e-15)


def test_erfcinv_float64(x64):
    y = _f64(1e-300, 1e-30, 1e-5, 0.3, 0.5, 1.0, 1.2, 1.9, 2 - 1e-9)
    _close(special.erfcinv(y), ss.erfcinv(y), rtol=1e-13, atol=1e-300)


# ----- float32 ------------------------------------------------------------------------------------

FLOAT32_CASES = {
    # name -> (oracle, sampler of float64 arguments, rtol)
    "gammainc": (ss.gammainc, lambda r: (r.uniform(0.1, 20, 12), r.uniform(0.01, 30, 12)), 2e-5),
    "gammaincc": (ss.gammaincc, lambda r: (r.uniform(0.1, 20, 12), r.uniform(0.01, 30, 12)), 2e-5),
    "betainc": (ss.betainc, lambda r: (r.uniform(0.2, 20, 12), r.uniform(0.2, 20, 12), r.uniform(0, 1, 12)), 5e-5),
    "gamma": (ss.gamma, lambda r: (r.uniform(-4.9, 20, 12),), 2e-5),
    "beta": (ss.beta, lambda r: (r.uniform(0.2, 10, 12), r.uniform(0.2, 10, 12)), 2e-5),
    "i0e": (ss.i0e, lambda r: (r.uniform(-40, 40, 12),), 2e-6),
    "i1e": (ss.i1e, lambda r: (r.uniform(-40, 40, 12),), 2e-6),
    "i0": (ss.i0, lambda r: (r.uniform(-30, 30, 12),), 2e-6),
    "i1": (ss.i1, lambda r: (r.uniform(-30, 30, 12),), 2e-6),
    "erfcinv": (ss.erfcinv, lambda r: (r.uniform(1e-3, 1.999, 12),), 5e-6),
}


@pytest.mark.parametrize("name", sorted(FLOAT32_CASES))
def test_float32_matches_scipy(rng, name):
    oracle, sample, rtol = FLOAT32_CASES[name]
    args = [a.astype(np.float32) for a in sample(rng)]
    out = getattr(special, name)(*[jnp.asarray(a) for a in args])
    assert out.dtype == np.float32 and out.shape == args[0].shape
    # a float32 argument's own rounding moves these functions by up to their condition number
    _close(out, oracle(*[a.astype(np.float64) for a in args]), rtol=rtol, atol=1e-6)


def test_polygamma_and_multigammaln_float32():
    out = special.polygamma(jnp.array([0, 1, 3]), jnp.array([0.5, 2.0, 4.0], np.float32))
    assert out.dtype == np.float32
    _close(out, ss.polygamma([0, 1, 3], [0.5, 2.0, 4.0]), rtol=2e-5)
    _close(special.multigammaln(jnp.array([2.6, 7.0]), 3), ss.multigammaln(np.array([2.6, 7.0]), 3), rtol=1e-5)


# ----- edges as SciPy has them -------------------------------------------------------------------

def test_incomplete_gamma_edges(x64):
    a = _f64(0, 0, 1, 1, 1, -1, 2, 2, np.nan, 3)
    x = _f64(0, 1, 0, np.inf, -1, 1, 1e-300, 1e3, 1, np.nan)
    _close(special.gammainc(a, x), ss.gammainc(a, x), rtol=0)
    _close(special.gammaincc(a, x), ss.gammaincc(a, x), rtol=0)


def test_betainc_edges(x64):
    a = _f64(0, 1, 1, 1, 1, -1, 2, 0, 2, np.nan)
    b = _f64(1, 0, 1, 1, 1, 1, 3, 0, 3, 1)
    x = _f64(0.5, 0.5, 0, 1, 1.5, 0.5, -0.1, 0.5, np.nan, 0.5)
    _close(special.betainc(a, b, x), ss.betainc(a, b, x), rtol=0)


def test_gamma_bessel_erfcinv_edges(x64):
    x = _f64(0, -0.0, -1, -2, np.inf, -np.inf, np.nan, 172)
    with np.errstate(all="ignore"):
        _close(special.gamma(x), ss.gamma(x), rtol=0)
        _close(special.gammasgn(x), ss.gammasgn(x), rtol=0)
    e = _f64(0, np.inf, -np.inf, np.nan)
    for name in ("i0e", "i1e", "i0", "i1"):
        out = np.asarray(getattr(special, name)(e))
        np.testing.assert_array_equal(out, getattr(ss, name)(e))
    _close(special.polygamma(np.array([1, 1, 2]), _f64(0, -1, 0)), [np.inf, np.inf, -np.inf], rtol=0)
    _close(special.erfcinv(_f64(0, 2, -0.5, 2.5, 1)), [np.inf, -np.inf, np.nan, np.nan, 0], rtol=0)


def test_argument_errors():
    with pytest.raises(ValueError, match="polygamma: argument n must be of integer type, got float32"):
        special.polygamma(jnp.array([1.0]), 2.0)
    with pytest.raises(TypeError, match="multigammaln: d must be a static integer"):
        special.multigammaln(3.0, 2.5)
    with pytest.raises(ValueError, match="multigammaln: d must be a positive integer, got 0"):
        special.multigammaln(3.0, 0)


# ----- derivatives --------------------------------------------------------------------------------

def _central(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] = up[i] + h
    down[i] = down[i] - h
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize("name,argnum,points", [
    # gammainc in x (the gamma density) and in a, on both algorithms' sides of x = a + 1 and at an
    # integer a, where the continued fraction terminates but its derivative does not
    ("gammainc", 1, [(2.0, 3.0), (0.7, 0.2), (6.5, 20.0)]),
    ("gammainc", 0, [(2.0, 3.0), (0.7, 0.2), (6.5, 20.0), (3.0, 1.0)]),
    ("gammaincc", 0, [(2.0, 3.0), (4.0, 9.0), (0.4, 0.1)]),
    ("gammaincc", 1, [(2.0, 3.0), (4.0, 9.0)]),
    ("betainc", 2, [(2.0, 3.0, 0.4), (0.5, 7.0, 0.05), (30.0, 4.0, 0.2)]),
    ("betainc", 0, [(2.0, 3.0, 0.4), (0.5, 7.0, 0.05)]),
    ("betainc", 1, [(2.0, 3.0, 0.4), (0.5, 7.0, 0.3)]),
    ("polygamma_x", 1, [(1, 0.6), (3, 2.2)]),
    ("gamma", 0, [(4.2,), (-1.3,)]),
])
def test_gradients_match_finite_differences(x64, name, argnum, points):
    ours = (lambda n, x: special.polygamma(n, x)) if name == "polygamma_x" else getattr(special, name)
    oracle = {"polygamma_x": ss.polygamma}.get(name) or getattr(ss, name)
    argnums = argnum
    for p in points:
        g = core.grad(ours, argnums=argnums)(*p)
        args = [np.float64(v) if isinstance(v, float) else v for v in p]
        fd = _central(oracle, args, argnum, h=1e-5)
        _close(g, fd, rtol=1e-6, atol=1e-12)


def test_bessel_gradients(x64):
    x = _f64(0.0, 0.5, -2.0, 19.0, 25.0, -60.0)
    for name in ("i0e", "i1e", "i0", "i1"):
        g = core.vmap(core.grad(getattr(special, name)))(x)
        fd = _central(getattr(ss, name), [x], 0, h=1e-6)
        # at 0, by hand: i0e has a kink (slopes -1 and 1), where JAX defines its derivative as 0;
        # i0' = i1 = 0; i1' = i1e' = 1/2 (central differences see the kink of e^-|x| there)
        fd[0] = {"i0e": 0.0, "i0": 0.0, "i1e": 0.5, "i1": 0.5}[name]
        _close(g, fd, rtol=1e-7, atol=1e-9)


def test_reverse_mode_through_the_iterations(x64):
    # grad of a sum over an array: the shape-parameter derivatives reach reverse mode as products
    # with a forward-computed slope (a while loop itself cannot be transposed)
    a, x = _f64(0.5, 2.0, 8.0), _f64(1.0, 2.0, 12.0)
    ga, gx = core.grad(lambda a, x: jnp.sum(special.gammainc(a, x)), argnums=(0, 1))(a, x)
    _close(ga, _central(ss.gammainc, [a, x], 0), rtol=2e-7)
    _close(gx, _central(ss.gammainc, [a, x], 1), rtol=2e-7)


# ----- transformations ----------------------------------------------------------------------------

def test_jit_and_vmap_agree_with_eager():
    a = np.array([0.5, 2.0, 9.0], np.float32)
    x = np.array([0.3, 4.0, 7.0], np.float32)
    eager = special.gammainc(a, x)
    tu.assert_allclose(core.jit(special.gammainc)(a, x), eager, np.float32)
    tu.assert_allclose(core.vmap(special.gammainc)(a, x), eager, np.float32)
    b = np.array([1.5, 0.7, 3.0], np.float32)
    loop = [special.betainc(a[i], b[i], x[i] / 10) for i in range(3)]
    tu.assert_allclose(core.vmap(special.betainc)(a, b, x / 10), np.stack([np.asarray(v) for v in loop]),
                       np.float32)
    tu.assert_allclose(core.jit(special.i1e)(x), special.i1e(x), np.float32)

"""core.scipy.special's names added for jax.scipy.special 0.10.2's list (bernoulli, boxcox, boxcox1p,
comb, factorial, kl_div, loggamma, poch, rel_entr, spence, zeta, erfcx, exp1, expi, expn, dawsn, sici,
fresnel, owens_t, bessel_jn, hyp1f1) against
scipy.special in float64 over grids that include the hard regions (series / continued-fraction
switch points, large and tiny arguments, poles, negative arguments), SciPy's edge values, float32,
first derivatives against central differences of SciPy, and jit / vmap."""
import fractions

import mpmath
import numpy as np
import pytest
import scipy.special as ss

import core
import core.numpy as jnp
from core.scipy import special


def _f64(*values):
    return np.array(values, dtype=np.float64)


def _close(actual, expected, rtol, atol=0.0):
    np.testing.assert_allclose(np.asarray(actual, np.float64), expected, rtol=rtol, atol=atol, equal_nan=True)


# exp1 / expn: both sides of the series / continued fraction switch at x = 2, tiny and huge x
X_EXP = _f64(1e-10, 1e-3, 0.3, 1.0, 1.99, 2.0, 2.01, 5.0, 30.0, 100.0, 700.0)
# name -> (ours, oracle, float64 arguments, rtol). Tolerances: measured worst errors were 1e-14 for
# the series/fraction functions (the series below x = 2 cancels by up to e^(2x) ~ 55 ulp) and
# ~1e-13 for the functions built from exp(lgamma differences) (the lgammas are ~100 there, their
# ulp-sized absolute errors become that relative error); each tolerance is ~5x the measured error.
FLOAT64_CASES = {
    "exp1": (special.exp1, ss.exp1, (X_EXP,), 1e-13),
    "expn": (special.expn, ss.expn, [np.array(a) for a in np.broadcast_arrays(_f64(0, 1, 2, 3, 7, 30)[:, None], X_EXP[None, :])], 1e-13),
    # Ei: negative x through E_1, the positive series up to 40, the asymptotic series beyond
    "expi": (special.expi, ss.expi, (_f64(-700, -30, -2.5, -1.0, -1e-8, 1e-8, 0.5, 2.0, 10.0, 39.9, 40.1, 90.0, 700.0),),
             2e-13),
    "erfcx": (special.erfcx, ss.erfcx, (_f64(-26.0, -5.0, -1.0, 0.0, 0.5, 1.9, 2.0, 2.1, 5.0, 30.0, 1e5, 1e300),), 5e-15),
    # spence: each side of the reflections at x = 1/2 and x = 2, near 1, huge x
    "spence": (special.spence, ss.spence, (_f64(0.0, 1e-12, 0.1, 0.49, 0.5, 0.51, 1.0, 1 + 1e-9, 1.5, 2.0, 2.01, 10.0, 1e6, 1e300),),
               1e-14),
    "zeta": (special.zeta, ss.zeta, (_f64(1.01, 1.5, 2.0, 3.7, 10.0, 60.0, 1.2), _f64(1.0, 0.3, 5.0, 1e-3, 100.0, 2.0, 1e4)),
             1e-14),
    # poch: negative z, poles of Gamma(z) with and without a pole of Gamma(z + m), m = 0, large values
    "poch": (special.poch, ss.poch, (_f64(2.0, -2.5, 0.0, -3.0, -3.0, 0.3, 10.0, -1.0, 50.0, -4.5),
                                     _f64(3.0, 2.0, 1.5, 2.0, 0.5, -0.2, 0.0, -2.0, 3.3, 7.0)), 2e-13),
    "comb": (special.comb, ss.comb, (_f64(5, 10, 50, 2, 5, 0, 7.5, 300), _f64(2, 0, 25, 5, -1, 0, 2.2, 150)), 5e-13),
    "factorial": (special.factorial, ss.factorial, (_f64(0.0, 3.0, 4.5, -1.0, 20.0, 170.0),), 5e-13),
    "loggamma": (special.loggamma, ss.loggamma, (_f64(-1.5, 1e-300, 0.5, 1.0, 3.0, 1e5, 1e300),), 1e-14),
    # boxcox: lmbda at 0, tiny (the series), moderate, negative; x at 0, tiny, large
    "boxcox": (special.boxcox, ss.boxcox, (_f64(0.0, 2.0, 1e-5, 3.0, 3.0, 3.0, 100.0, 0.5, 2.0),
                                           _f64(0.5, 0.0, 0.3, 1e-9, -2.0, 1e-3, 0.01, -0.02, 3e-3)), 1e-14),
    "boxcox1p": (special.boxcox1p, ss.boxcox1p, (_f64(1e-12, 2.0, -0.5, 3.0, 3.0, 100.0, -1.0),
                                                 _f64(0.5, 0.0, 0.3, 1e-9, -2.0, 0.01, 0.5)), 1e-14),
    "kl_div": (special.kl_div, ss.kl_div, (_f64(0.5, 1e-300, 3.0, 2.0), _f64(0.7, 1.0, 1e-20, 2.0)), 1e-14),
    "rel_entr": (special.rel_entr, ss.rel_entr, (_f64(0.5, 1e-300, 3.0, 2.0), _f64(0.7, 1.0, 1e-20, 2.0)), 1e-14),
    # dawsn: both sides of the series switch at 0.2, Rybicki's sum from 0.2 to 1e10, negative x
    "dawsn": (special.dawsn, ss.dawsn, (_f64(1e-8, 0.1, 0.19, 0.21, 0.5, 1.0, 3.7, 10.0, 1e4, 1e10, -0.3, -5.0),), 5e-15),
    # sici: series up to 4, continued fraction beyond; Ci's zeros (0.6165, 3.3843) are avoided,
    # where only an absolute bound means anything
    "sici_si": (lambda x: special.sici(x)[0], lambda x: ss.sici(x)[0],
                (_f64(1e-8, 0.1, 1.0, 3.0, 3.99, 4.0, 4.01, 6.0, 20.0, 1e3, 1e8, -1.0, -7.0),), 5e-15),
    "sici_ci": (lambda x: special.sici(x)[1], lambda x: ss.sici(x)[1],
                (_f64(1e-8, 0.1, 1.0, 3.0, 3.99, 4.0, 4.01, 6.0, 20.0, 1e3, 1e8, -1.0, -7.0),), 2e-14),
    # fresnel: both sides of the series switch at 1.6, far out, negative x
    "fresnel_s": (lambda x: special.fresnel(x)[0], lambda x: ss.fresnel(x)[0],
                  (_f64(1e-8, 0.1, 1.0, 1.59, 1.61, 2.0, 3.0, 5.5, 20.0, 100.0, -0.7, -4.0),), 5e-15),
    "fresnel_c": (lambda x: special.fresnel(x)[1], lambda x: ss.fresnel(x)[1],
                  (_f64(1e-8, 0.1, 1.0, 1.59, 1.61, 2.0, 3.0, 5.5, 20.0, 100.0, -0.7, -4.0),), 1e-14),
    # owens_t: |a| <= 1 by quadrature, |a| > 1 through the identity, negative h and a, a = inf
    "owens_t": (special.owens_t, ss.owens_t, (_f64(0.0, 0.5, 2.0, -1.0, 0.3, 3.0, 5.0, 0.1, 1.0, 2.0),
                                              _f64(0.5, 0.3, 5.0, 0.7, -2.0, 1.0, 0.5, 100.0, np.inf, 1.5)), 5e-15),
    # hyp1f1: x from -200 to 100 (Kummer's transformation below 0), a < 1 and > 1, b < a (terms of one sign)
    "hyp1f1": (special.hyp1f1, ss.hyp1f1, (_f64(1.5, 0.5, 2.0, 3.0, 1.0, 0.3, 10.0, 0.5, 1e-3),
                                           _f64(2.5, 1.5, 0.5, 7.0, 2.0, 4.0, 3.0, 0.5, 2.0),
                                           _f64(-3.0, 0.5, 10.0, -30.0, 100.0, -200.0, 50.0, 1e-6, 5.0)), 1e-14),
    # bessel_jn: orders 0..5 from 0 to |z| = 25 (half of the default n_iter); absolute tolerance,
    # since J_n has zeros (measured error 3e-12 at z = 25, 1e-15 below 20)
    "bessel_jn": (lambda z: special.bessel_jn(z, v=5), lambda z: np.stack([ss.jv(n, z) for n in range(6)]),
                  (_f64(0.0, 1e-3, 0.1, 1.0, 2.4048, 5.0, 10.0, 20.0, 25.0, -3.0),), (0.0, 1e-11)),
}


@pytest.mark.parametrize("name", sorted(FLOAT64_CASES))
def test_float64_matches_scipy(x64, name):
    ours, oracle, args, rtol = FLOAT64_CASES[name]
    rtol, atol = rtol if isinstance(rtol, tuple) else (rtol, 1e-300)
    _close(core.jit(ours)(*args), oracle(*args), rtol=rtol, atol=atol)


def test_where_scipy_is_less_accurate(x64):
    # E_60(30): SciPy's 1.0474376e-15 is off by 6e-7 relative; mpmath (30 digits) is the oracle
    mpmath.mp.dps = 30
    _close(special.expn(60, 30.0), float(mpmath.expint(60, 30)), rtol=1e-14)
    # Bernoulli numbers: exact fractions (SciPy's lose ~1e-12 relative by B_30)
    exact = [fractions.Fraction(1), fractions.Fraction(-1, 2), fractions.Fraction(1, 6), 0, fractions.Fraction(-1, 30),
             0, fractions.Fraction(1, 42)]
    _close(special.bernoulli(6), [float(b) for b in exact], rtol=0)
    _close(special.bernoulli(30)[30], 8615841276005 / 14322, rtol=1e-15)


def test_edges_as_scipy(x64):
    def edges(x, n, xn, p, q, b, lb, cn, ck):
        return ({name: getattr(special, name)(x) for name in ("exp1", "erfcx", "spence", "loggamma", "expi")},
                special.expn(n, xn), special.zeta(x + 1.0, x), special.kl_div(p, q), special.rel_entr(p, q),
                special.boxcox(b, lb), special.comb(cn, ck, repetition=True), special.comb(ck, cn))

    x = _f64(0.0, -1.0, np.inf, np.nan, -np.inf)
    n, xn = _f64(0, 1, 2, 5, -1, 2.5, 3), _f64(0, 0, 0, 0, 1, 1, np.inf)
    p, q = _f64(0.0, 1.0, -1.0, 0.0, np.nan), _f64(1.0, 0.0, 1.0, -1.0, 1.0)
    b, lb = _f64(0.0, -1.0, 0.0), _f64(0.5, 0.5, 0.0)
    cn, ck = _f64(0, 3, -1), _f64(0, 0, 0)
    named, en, ze, kl, re, bc, cr, c = core.jit(edges)(x, n, xn, p, q, b, lb, cn, ck)
    with np.errstate(all="ignore"):
        for name, out in named.items():
            _close(out, getattr(ss, name)(x), rtol=1e-13)
        _close(en, [np.inf, np.inf, 1.0, 0.25, np.nan, np.nan, 0.0], rtol=1e-15)
        # zeta at x = 1 (inf), x < 1 (NaN; no reflection formula), q <= 0 (NaN), inf, NaN
        _close(ze, [np.inf, np.nan, np.nan, np.nan, np.nan], rtol=0)
        _close(kl, ss.kl_div(p, q), rtol=0)
        _close(re, ss.rel_entr(p, q), rtol=0)
        _close(bc, ss.boxcox(b, lb), rtol=0)
    _close(cr, [1, 1, 0], rtol=0)
    _close(c, [1, 0, 0], rtol=0)


def test_argument_errors():
    with pytest.raises(TypeError, match="bernoulli: n must be a static integer"):
        special.bernoulli(2.5)
    with pytest.raises(ValueError, match="bernoulli: n must be non-negative, got -1"):
        special.bernoulli(-1)
    with pytest.raises(NotImplementedError, match="factorial: exact=True is not supported"):
        special.factorial(3, exact=True)
    with pytest.raises(TypeError, match=r"loggamma: complex arguments are not supported, got complex64\[2\]"):
        special.loggamma(jnp.array([1 + 1j, 2.0]))
    with pytest.raises(TypeError, match="bessel_jn: v and n_iter must be static integers"):
        special.bessel_jn(1.0, v=2.5)
    with pytest.raises(ValueError, match="bessel_jn: v must be >= 0 and n_iter >= 1, got v=-1"):
        special.bessel_jn(1.0, v=-1)


def test_float32_jit_and_vmap(rng):
    # float32 under jit: each within float32 rounding times the function's condition number
    # (measured worst ~3e-6; tolerance 2e-5)
    x = rng.uniform(0.05, 12, 8).astype(np.float32)
    y = rng.uniform(0.05, 3, 8).astype(np.float32)

    def all_of(x, y):
        return (special.exp1(x), special.expi(x - 6), special.expn(3, x), special.erfcx(x - 4), special.spence(x),
                special.zeta(x + 1.5, y), special.poch(y, x / 4), special.comb(x + 3, y), special.boxcox(x, y - 1.5),
                special.kl_div(x, y), special.dawsn(x - 6), special.sici(x)[1], special.owens_t(x - 6, y),
                special.bessel_jn(x, v=2)[2], special.fresnel(x / 2)[0], special.hyp1f1(y, y + 1, x - 6))

    oracles = (ss.exp1(x), ss.expi(x - 6.0), ss.expn(3, x), ss.erfcx(x - 4.0), ss.spence(x), ss.zeta(x + 1.5, y),
               ss.poch(y, x / 4), ss.comb(x + 3.0, y), ss.boxcox(x, y - 1.5), ss.kl_div(x, y), ss.dawsn(x - 6.0),
               ss.sici(x)[1], ss.owens_t(x - 6.0, y), ss.jv(2, x), ss.fresnel(x / 2)[0], ss.hyp1f1(y, y + 1.0, x - 6.0))
    outs = core.jit(all_of)(x, y)
    for out, expected in zip(outs, oracles):
        assert out.dtype == np.float32
        _close(out, expected.astype(np.float64), rtol=2e-5, atol=1e-6)
    # vmap (per-example loops and custom derivatives batched) against the same oracle
    batched = core.vmap(lambda x, y: (special.expn(3, x), special.expi(x - 6), special.spence(x)))(x, y)
    for out, expected in zip(batched, oracles[2:0:-1] + oracles[4:5]):
        _close(out, expected.astype(np.float64), rtol=2e-5, atol=1e-6)


def _central(f, args, i, h):
    up, down = list(args), list(args)
    up[i], down[i] = up[i] + h, down[i] - h
    return (f(*up) - f(*down)) / (2 * h)


GRAD_CASES = [
    # (name, ours, oracle, points (float64 arrays, one per argument), argnums)
    ("exp1", special.exp1, ss.exp1, (_f64(0.1, 1.9, 2.1, 30.0),), (0,)),
    ("expn", lambda x: special.expn(3, x), lambda x: ss.expn(3, x), (_f64(0.1, 1.9, 2.1, 30.0),), (0,)),
    ("expn0", lambda x: special.expn(0, x), lambda x: ss.expn(0, x), (_f64(0.1, 2.5),), (0,)),
    ("expi", special.expi, ss.expi, (_f64(-3.0, 0.5, 39.0, 41.0),), (0,)),
    ("erfcx", special.erfcx, ss.erfcx, (_f64(-3.0, 0.5, 1.99, 2.01, 10.0),), (0,)),
    ("spence", special.spence, ss.spence, (_f64(0.2, 0.9995, 1.0, 1.5, 5.0),), (0,)),
    ("zeta", special.zeta, ss.zeta, (_f64(1.5, 2.5, 7.0), _f64(0.4, 1.5, 3.0)), (0, 1)),
    ("poch", special.poch, ss.poch, (_f64(2.0, -2.5, 0.7), _f64(3.0, 1.3, -0.4)), (0, 1)),
    ("comb", special.comb, ss.comb, (_f64(5.0, 7.5), _f64(2.0, 3.2)), (0, 1)),
    ("factorial", special.factorial, ss.factorial, (_f64(2.5, 6.0),), (0,)),
    ("loggamma", special.loggamma, ss.loggamma, (_f64(0.3, 2.5, 40.0),), (0,)),
    # boxcox through lmbda = 0 (the derivative in lmbda is log(x)^2 / 2 there)
    ("boxcox", special.boxcox, ss.boxcox, (_f64(0.5, 3.0, 3.0), _f64(0.0, 1e-4, -0.7)), (0, 1)),
    ("boxcox1p", special.boxcox1p, ss.boxcox1p, (_f64(0.5, 3.0, -0.3), _f64(0.0, 1e-4, 0.7)), (0, 1)),
    ("kl_div", special.kl_div, ss.kl_div, (_f64(0.5, 2.0), _f64(0.7, 0.1)), (0, 1)),
    ("rel_entr", special.rel_entr, ss.rel_entr, (_f64(0.5, 2.0), _f64(0.7, 0.1)), (0, 1)),
    ("dawsn", special.dawsn, ss.dawsn, (_f64(0.1, 0.7, 3.0, -12.0),), (0,)),
    ("sici", lambda x: sum(special.sici(x)), lambda x: sum(ss.sici(x)), (_f64(0.3, 3.9, 4.1, 15.0, -2.0),), (0,)),
    ("fresnel", lambda x: sum(special.fresnel(x)), lambda x: sum(ss.fresnel(x)), (_f64(0.3, 1.5, 1.7, 6.0, -2.0),),
     (0,)),
    ("hyp1f1", special.hyp1f1, ss.hyp1f1, (_f64(1.5, 0.5, 2.0), _f64(2.5, 1.5, 3.0), _f64(-3.0, 0.5, 8.0)), (0, 1, 2)),
    ("owens_t", special.owens_t, ss.owens_t, (_f64(0.5, -1.0, 2.0), _f64(0.3, 0.8, 3.0)), (0, 1)),
    ("bessel_jn", lambda z: special.bessel_jn(z, v=3), lambda z: np.stack([ss.jv(n, z) for n in range(4)]),
     (_f64(0.5, 3.0, -7.0, 15.0),), (0,)),
]


@pytest.mark.parametrize("name,ours,oracle,args,argnums", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_finite_differences(x64, name, ours, oracle, args, argnums):
    # elementwise functions: the gradient of the sum is the elementwise derivative. Central
    # differences with h = 1e-6 relative: truncation ~1e-12, rounding ~1e-10 relative; rtol 1e-7
    grads = core.jit(core.grad(lambda *a: jnp.sum(ours(*a)), argnums=argnums))(*args)
    for i, g in zip(argnums, grads):
        h = 1e-6 * np.maximum(np.abs(args[i]), 1.0)
        fd = _central(oracle, args, i, h)
        _close(g, fd.sum(0) if fd.ndim > g.ndim else fd, rtol=1e-7, atol=1e-9)


def test_second_derivatives_by_hand(x64):
    # E_1'' = e^-x (1/x + 1/x^2); Ei'' = e^x (1/x - 1/x^2); E_3'' = E_1; Si'' = cos/x - sin/x^2;
    # Ci'' = -sin/x - cos/x^2; J_1'' = -J_1 (1 - 1/x^2) - J_1'/x with J_1' = J_0 - J_1/x;
    # owens_t: dT/da = e^(-h^2 q / 2) / (2 pi q) with q = 1 + a^2, so
    # d2T/da2 = -a (2 + h^2 q) e^(-h^2 q / 2) / (2 pi q^2)
    x, a, h = _f64(0.4, 2.5, 7.0), _f64(0.3, 0.9, 2.5), _f64(0.5, 1.2, -0.7)

    def second(f):
        return core.vmap(core.grad(core.grad(f)))

    def all_second(x, a, h):
        return (second(special.exp1)(x), second(special.expi)(x), second(lambda t: special.expn(3, t))(x),
                second(lambda t: special.sici(t)[0])(x), second(lambda t: special.sici(t)[1])(x),
                second(lambda t: special.bessel_jn(t, v=1)[1])(x),
                core.vmap(core.grad(core.grad(special.owens_t, 1), 1))(h, a),
                second(lambda t: special.fresnel(t)[0])(x))

    e1, ei, e3, si, ci, j1, ta, fs = core.jit(all_second)(x, a, h)
    _close(fs, np.pi * x * np.cos(np.pi * x ** 2 / 2), rtol=1e-12)  # S'' = pi x cos(pi x^2 / 2)
    _close(e1, np.exp(-x) * (1 / x + 1 / x ** 2), rtol=1e-12)
    _close(ei, np.exp(x) * (1 / x - 1 / x ** 2), rtol=1e-12)
    _close(e3, ss.exp1(x), rtol=1e-12)
    _close(si, np.cos(x) / x - np.sin(x) / x ** 2, rtol=1e-12)
    _close(ci, -np.sin(x) / x - np.cos(x) / x ** 2, rtol=1e-12)
    j1p = ss.j0(x) - ss.j1(x) / x
    _close(j1, -ss.j1(x) * (1 - 1 / x ** 2) - j1p / x, rtol=1e-10)
    q = 1 + a ** 2
    _close(ta, -a * (2 + h ** 2 * q) * np.exp(-h ** 2 * q / 2) / (2 * np.pi * q ** 2), rtol=1e-12)

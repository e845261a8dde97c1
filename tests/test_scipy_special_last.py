"""jax.scipy.special 0.10.2's last names in core.scipy.special: hyp2f1, wofz and sph_harm_y, against
scipy.special in float64 (mpmath where SciPy itself is wrong), their derivatives against central
differences of SciPy, float32 in / float32 out, JAX's conventions (recorded from jax 0.10.2), and one
JAX-style program. Few compiles: each function runs once on a whole grid."""
import functools
import itertools

import mpmath
import numpy as np
import pytest
import scipy.special as ss

import core
import core.numpy as jnp
from core.scipy import special


def _rel(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    return np.abs(actual - expected) / np.maximum(np.abs(expected), 1e-300)


# ----- hyp2f1 ------------------------------------------------------------------------------------

def _hyp2f1_grid():
    params = [-7.0, -2.0, -0.5, 0.3, 1.0, 2.5, 6.0]  # integers <= 0: polynomials
    cs = [-2.5, 0.5, 1.0, 2.0, 3.7, 8.0]
    xs = [-1e6, -30.0, -3.0, -1.0, -0.2, 0.0, 0.1, 0.45, 0.55, 0.8, 0.95, 0.999, 1.0]
    grid = list(itertools.product(params, params, cs, xs))
    # c - a - b an integer (the connection formula's limit), on both sides of 1/2 and for x < 0
    grid += [(a, b, a + b + m, x) for a in (0.3, 1.5, -0.7) for b in (0.6, 1.0, 2.5) for m in (-3, -1, 0, 1, 2)
             for x in (-50.0, -2.0, -0.6, 0.3, 0.6, 0.9, 0.9999)]
    return np.array(grid).T


# where scipy.special.hyp2f1 1.17 is wrong (checked with mpmath at 40 digits): (a, b, c, x, mpmath value)
SCIPY_WRONG = [
    (1.0, 1.0, 2.0, -1e10, 2.3025850930040456e-09),  # SciPy 2.3025850847e-09: log(1 - x) / -x
    (0.3, 1.0, 2.3, 0.9999, 1.299656663888713),       # c - a - b = 1 - 2e-16: SciPy inf
    (0.3, 2.5, 1.7999999999999998, 0.9999, 2344.950803944857),
    (2.0, 0.6, -0.3999999999999999, -50.0, 0.0022691121815893197),  # SciPy -inf
]


# hyp2f1's derivatives in each argument, (a, b, c, x, d/da, d/db, d/dc, d/dx) from mpmath.diff at 30
# digits: the series, Pfaff, the connection formula, integer c - a - b at 0.95 (the limit formula;
# jax 0.10.2 gives d/da 4.72337342 there), m = 2, after Pfaff, at a polynomial (a = -2), x -> -inf, c < 0
DERIVATIVES = [
    (0.5, 1.5, 2.5, 0.3, 0.22988108250652227, 0.080511039572112141, -0.049363665853922282, 0.43583029138730823),
    (1.5, 0.3, 3.7, -3.0, -0.093333745764430182, -0.57506829491279335, 0.034463448389733092, 0.038973841797415268),
    (-0.7, 1.2, 1.9, 0.9, 0.40608841082075814, -0.4350059352734211, 0.28211149445846865, -0.67028329393500356),
    (1.0, 1.0, 2.3, 0.95, 2.9063515775166509, 2.9063515775166509, -1.6801321173481054, 9.20263202214903),
    (1.0, 1.0, 2.0, 0.95, 4.7233746604278732, 4.7233746604278732, -3.0864288956026618, 17.733260638721323),
    (0.3, 1.5, 3.8, 0.8, 0.50806456213275018, 0.11863615500980419, -0.051193291845451441, 0.27501810585689067),
    (2.5, 1.0, 1.5, -0.6, -0.12977069497571995, -0.37656420120893854, 0.23393736164238661, 0.45572916666666668),
    (-2.0, 1.5, 2.5, 0.7, 0.15048823041635461, -0.336, 0.192, -0.6),
    (1.0, 1.0, 2.0, -1e6, -9.5434179804115314e-5, -9.5434179804115314e-5, 1.2170592306619448e-5, 1.2815512557962774e-11),
    (0.5, 2.0, -1.5, 0.4, 23.907368726769861, 9.7028726113630998, -0.86210123705792051, 87.448559670781917),
]

# c a pole (inf unless the polynomial ends first), Gauss's sum, d = 0 at x = 1, a polynomial beyond 1,
# a = 0, the branch cut: (a, b, c, x)
EDGES = [(1.0, 2.0, -3.0, 0.5), (-2.0, 1.0, -3.0, 0.5), (-3.0, 1.0, -2.0, 0.5), (1.0, 2.0, 3.5, 1.0),
         (1.0, 2.0, 3.0, 1.0), (-2.0, 1.0, 3.0, 1.5), (0.0, 1.0, -3.0, 0.5), (1.0, 2.0, 3.0, 1.5)]


@functools.cache
def _hyp2f1_run():
    """hyp2f1 on every point of this file's hyp2f1 tests in one compiled program: core.jvp over the
    grid, SCIPY_WRONG and EDGES (tangent 0) and the DERIVATIVES points four times, with tangent 1 in a,
    b, c and x in turn. Returns {part: (a, b, c, x, values, tangents)}."""
    parts = {"grid": _hyp2f1_grid(), "wrong": np.array([case[:4] for case in SCIPY_WRONG]).T,
             "edges": np.array(EDGES).T, "derivatives": np.tile(np.array([case[:4] for case in DERIVATIVES]).T, 4)}
    args = np.concatenate(list(parts.values()), axis=1)
    tangents = np.zeros_like(args)
    n = len(DERIVATIVES)
    for i in range(4):
        tangents[i, args.shape[1] - 4 * n + i * n:args.shape[1] - 3 * n + i * n] = 1.0
    values, slopes = core.jit(lambda p, t: core.jvp(special.hyp2f1, tuple(p), tuple(t)))(list(args), list(tangents))
    values, slopes, out, start = np.asarray(values), np.asarray(slopes), {}, 0
    for name, part in parts.items():
        stop = start + part.shape[1]
        out[name] = (*part, values[start:stop], slopes[start:stop])
        start = stop
    return out


def test_hyp2f1_matches_scipy(x64):
    a, b, c, x, ours, _ = _hyp2f1_run()["grid"]
    expected = ss.hyp2f1(a, b, c, x)
    # SciPy's inf at x = 1 where it diverges, and its inf/-inf where it is wrong, are excluded here
    finite = np.isfinite(expected)
    err = _rel(ours[finite], expected[finite])
    # large parameters with c < 0 at x in [-1, -0.7] cancel in every formula used here: 1e-9 there
    hard = (np.abs(a[finite]) + np.abs(b[finite]) >= 19) & (c[finite] < 0) & (x[finite] >= -1) & (x[finite] < 0)
    # zeros of F (polynomials at x = 1, where SciPy's rounding leaves 1e-16): absolute
    zero = np.abs(expected[finite]) < 1e-12
    # where SciPy and we differ by more than 1e-10, mpmath (40 digits) decides: SciPy 1.17 loses up to
    # 2e-7 near x = 1 with c - a - b a non-integer and ~2e-10 for x -> -inf
    mpmath.mp.dps = 40
    for i in np.flatnonzero(~hard & ~zero & (err > 1e-10)):
        args = [v[finite][i] for v in (a, b, c, x)]
        exact = float(mpmath.hyp2f1(*args).real)
        assert abs(ours[finite][i] - exact) <= 1e-12 * abs(exact), (args, ours[finite][i], exact)
    assert not hard.any() or np.max(err[hard]) < 5e-9
    assert np.max(np.abs(ours[finite][zero] - expected[finite][zero])) < 1e-14
    # x = 1 beyond Gauss's sum, x > 1 and c at a pole: SciPy's infinities (their signs where SciPy
    # gives one, except d = c - a - b = 0, where SciPy says +inf)
    at_one = np.isinf(expected) & (x == 1)
    assert np.all(np.isinf(ours[at_one]))
    np.testing.assert_allclose(_hyp2f1_run()["wrong"][4], [case[4] for case in SCIPY_WRONG], rtol=1e-12)


def test_hyp2f1_edges_as_scipy(x64):
    a, b, c, x, ours, _ = _hyp2f1_run()["edges"]
    np.testing.assert_allclose(ours, ss.hyp2f1(a, b, c, x), rtol=1e-14)


def test_hyp2f1_derivatives(x64):
    # x: a b / c F(a + 1, b + 1; c + 1; x), to rounding; a, b, c: central differences of order 6 of the
    # evaluation (~1e-11 against mpmath here), including integer c - a - b near 1, where forward-mode
    # differentiation of the limit formula gave d/da 1.64 instead of 4.72 (it holds c - a - b fixed)
    *_, slopes = _hyp2f1_run()["derivatives"]
    expected = np.array([case[4:] for case in DERIVATIVES])
    np.testing.assert_allclose(slopes.reshape(4, -1).T, expected, rtol=1e-9)
    # and the value rows of the same program are F itself (SciPy is 4e-12 off at x = -1e6, where ours
    # is log(1 - x) / -x to 1e-16)
    a, b, c, x, values, _ = _hyp2f1_run()["derivatives"]
    np.testing.assert_allclose(values, ss.hyp2f1(a, b, c, x), rtol=1e-11)
    np.testing.assert_allclose(values[8], np.log1p(1e6) / 1e6, rtol=1e-15)


# ----- wofz ----------------------------------------------------------------------------------------

def _wofz_points():
    rng = np.random.default_rng(7)
    n = 600
    z = rng.uniform(-1, 1, n) * 10 ** rng.uniform(-4, 2, n) + 1j * rng.uniform(-1, 1, n) * 10 ** rng.uniform(-8, 1.3, n)
    # the real axis, just off it, the switch at |z| = 6, huge |z|, the overflowing lower half plane
    special_points = [0.0, 1e-5, 3.0, -26.0, 5 + 1e-9j, 5 - 1e-300j, 0.3 - 1e-9j, 6.0j, 6 + 0.01j, -4.2 + 4.3j,
                      1e300 + 1e300j, 1e10 - 1j, 3 - 26.5j, 30 - 30j, 1 - 30j, -30j, np.inf, np.nan]
    return np.concatenate([z, np.array(special_points, complex)])


WOFZ_SLOPE_POINTS = np.array([0.5 + 0.2j, 3 - 1j, 7 + 2j, 2 + 1e-10j, -1.5 - 0.7j])


@functools.cache
def _wofz_run():
    """wofz and its jvp (tangent 1) on _wofz_points() then WOFZ_SLOPE_POINTS, in one compiled program."""
    z = np.concatenate([_wofz_points(), WOFZ_SLOPE_POINTS])
    values, slopes = core.jit(lambda z: core.jvp(special.wofz, (z,), (jnp.ones_like(z),)))(z)
    n = len(WOFZ_SLOPE_POINTS)
    return z[:-n], np.asarray(values)[:-n], np.asarray(slopes)[-n:]


def test_wofz_matches_scipy(x64):
    z, ours, _ = _wofz_run()
    expected = ss.wofz(z)
    finite = np.isfinite(expected)
    # measured 2.3e-14 (|z| ~ 7.8, the rational approximation's worst); rounding of e^(-z^2) below
    assert np.max(_rel(ours[finite], expected[finite])) < 1e-13
    np.testing.assert_array_equal(ours[~finite], expected[~finite])  # signed infinities, NaN
    # on and near the real axis each part keeps its relative accuracy
    axis = finite & (np.abs(z.imag) < 1e-8) & (np.abs(z.real) < 26)
    assert np.max(_rel(ours[axis].real, expected[axis].real)) < 1e-12
    assert np.max(_rel(ours[axis].imag, expected[axis].imag)) < 1e-13


def test_wofz_derivative_and_dtypes(x64):
    z = WOFZ_SLOPE_POINTS
    slope = _wofz_run()[2]
    h = 1e-6
    fd = (ss.wofz(z + h) - ss.wofz(z - h)) / (2 * h)
    assert np.max(_rel(slope, fd)) < 1e-8
    np.testing.assert_allclose(slope, -2 * z * ss.wofz(z) + 2j / np.sqrt(np.pi), rtol=1e-13)
    # real input: the complex type of its precision, as JAX's promote_args_complex (shapes only)
    assert core.eval_shape(special.wofz, np.float32(1.0)).dtype == np.complex64
    assert core.eval_shape(special.wofz, np.array([1.0, 2.0])).dtype == np.complex128


# ----- sph_harm_y ----------------------------------------------------------------------------------

# d/dtheta and d/dphi points: (n, m, theta, phi)
SPH_SLOPE_POINTS = np.array([[1, 0, 0.4, 0.3], [2, -1, 1.2, 2.0], [4, 3, 2.0, 4.0], [6, 2, 2.8, 5.5]])


@functools.cache
def _sph_harm_y_run():
    """sph_harm_y (n_max=20) on 400 random points, then SPH_SLOPE_POINTS twice with tangent 1 in
    theta and then in phi, in one compiled program: (n, m, theta, phi, values, tangents)."""
    rng = np.random.default_rng(3)
    n = rng.integers(0, 21, 400)
    m = np.array([rng.integers(-k, k + 1) for k in n])
    theta, phi = rng.uniform(0, np.pi, 400), rng.uniform(0, 2 * np.pi, 400)
    theta[:4] = [0.0, np.pi, 1e-9, np.pi / 2]
    slope_points = np.tile(SPH_SLOPE_POINTS.T, 2)
    n, m = (np.concatenate([v, w.astype(int)]) for v, w in ((n, slope_points[0]), (m, slope_points[1])))
    theta, phi = np.concatenate([theta, slope_points[2]]), np.concatenate([phi, slope_points[3]])
    k = len(SPH_SLOPE_POINTS)
    t_theta, t_phi = np.zeros_like(theta), np.zeros_like(phi)
    t_theta[-2 * k:-k], t_phi[-k:] = 1.0, 1.0
    values, slopes = core.jit(lambda t, p, tt, tp: core.jvp(
        lambda t, p: special.sph_harm_y(n, m, t, p, n_max=20), (t, p), (tt, tp)))(theta, phi, t_theta, t_phi)
    return n, m, theta, phi, np.asarray(values), np.asarray(slopes)


def test_sph_harm_y_matches_scipy(x64):
    n, m, theta, phi, ours, _ = (v[:400] for v in _sph_harm_y_run())
    scale = np.sqrt((2 * n + 1) / (4 * np.pi))  # |Y| <= scale
    assert np.max(np.abs(ours - ss.sph_harm_y(n, m, theta, phi)) / scale) < 1e-13
    # broadcasting (scalar angles), n_max from a concrete n, SciPy's diff_n=0
    y = special.sph_harm_y(np.array([2, 3]), np.array([1, -2]), 0.7, 1.1, diff_n=0)
    np.testing.assert_allclose(y, ss.sph_harm_y(np.array([2, 3]), np.array([1, -2]), 0.7, 1.1), rtol=1e-13)


def test_sph_harm_y_jax_conventions():
    # jax 0.10.2's values with n_max=3 below the largest n: degree and Legendre order clipped to 3,
    # the phase e^(i |m| phi) and the sign with the order given (recorded from jax, float64)
    n, m = np.array([0, 1, 1, 2, 3, 5, 5]), np.array([0, -1, 1, -2, 3, -4, 2])
    theta = np.array([0.3, 1.1, 2.0, 0.7, 1.5, 2.9, 0.01], np.float32)
    phi = np.array([0.1, 5.0, 2.2, 1.0, 3.3, 0.4, 6.0], np.float32)
    jax_values = np.array([2.82094792e-01 + 0j, 8.73415524e-02 + 2.95259428e-01j, 1.84881711e-01 - 2.53994757e-01j,
                           -6.67125575e-02 - 1.45769598e-01j, 3.68210693e-01 + 1.89463883e-01j,
                           1.66838790e-04 + 5.71131434e-03j, 8.62334625e-05 - 5.48324033e-05j])
    y = special.sph_harm_y(n, m, theta, phi, n_max=3)
    assert y.dtype == np.complex64  # float32 angles
    np.testing.assert_allclose(y, jax_values, rtol=2e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match=r"sph_harm_y: diff_n=1 .* not supported"):
        special.sph_harm_y(n, m, theta, phi, diff_n=1)
    with pytest.raises(TypeError, match=r"sph_harm_y: n must have an integer dtype, got f32\[7\]"):
        special.sph_harm_y(n.astype(np.float32), m, theta, phi)
    with pytest.raises(TypeError, match="sph_harm_y: n_max must be given"):
        core.jit(lambda n: special.sph_harm_y(n, m, theta, phi))(n)


def test_sph_harm_y_derivatives(x64):
    # d/dtheta and d/dphi against central differences of SciPy (real and imaginary parts)
    *_, slopes = _sph_harm_y_run()
    k = len(SPH_SLOPE_POINTS)
    n, m, theta, phi = SPH_SLOPE_POINTS.T
    n, m = n.astype(int), m.astype(int)
    h = 1e-6
    for slope, (tu, pu, td, pd) in ((slopes[-2 * k:-k], (theta + h, phi, theta - h, phi)),
                                    (slopes[-k:], (theta, phi + h, theta, phi - h))):
        fd = (ss.sph_harm_y(n, m, tu, pu) - ss.sph_harm_y(n, m, td, pd)) / (2 * h)
        np.testing.assert_allclose(slope.real, fd.real, rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(slope.imag, fd.imag, rtol=1e-7, atol=1e-9)


# ----- float32, dtypes ------------------------------------------------------------------------------

def test_float32_stays_float32_under_x64(x64):
    # every core.scipy.special function keeps float32 float32 with x64 on (dawsn, erfcx and fresnel's
    # NumPy float64 constants promoted them to float64 before): shapes only, nothing compiled
    x = jnp.ones(3, jnp.float32)
    calls = {"hyp2f1": lambda v: special.hyp2f1(v, v, v, v), "wofz": special.wofz,
             "sph_harm_y": lambda v: special.sph_harm_y(jnp.array([1, 2, 0]), jnp.array([0, 1, 0]), v, v, n_max=2),
             "dawsn": special.dawsn, "erfcx": special.erfcx, "fresnel": special.fresnel, "owens_t": lambda v: special.owens_t(v, v)}
    for name, call in calls.items():
        dtypes = {str(leaf.dtype) for leaf in core.tree_util.tree_leaves(core.eval_shape(call, x))}
        assert dtypes <= {"float32", "complex64"}, (name, dtypes)


# ----- a JAX-style program --------------------------------------------------------------------------

def test_jax_style_program(x64):
    # the spectral density of a Voigt line profile (Re w), weighted by a spherical harmonic, and the
    # gradient of its sum with respect to the line centre, vmapped over centres
    freqs = np.linspace(-4.0, 4.0, 9)
    centres = np.array([-0.5, 0.25, 1.0])
    gamma_width = 0.3

    def profile(centre):
        z = (freqs - centre + 1j * gamma_width) / np.sqrt(2.0)
        weight = special.sph_harm_y(jnp.array([2]), jnp.array([1]), centre + 1.5, 0.4, n_max=2)[0].real
        return jnp.sum(special.wofz(z).real) * weight

    values, slopes = core.jit(core.vmap(core.value_and_grad(profile)))(centres)

    def oracle(c):
        return np.sum(ss.wofz((freqs - c + 1j * gamma_width) / np.sqrt(2.0)).real) * \
            ss.sph_harm_y(2, 1, c + 1.5, 0.4).real

    np.testing.assert_allclose(values, [oracle(c) for c in centres], rtol=1e-12)
    np.testing.assert_allclose(slopes, [(oracle(c + 1e-6) - oracle(c - 1e-6)) / 2e-6 for c in centres], rtol=1e-7)


# ----- hyp1f1 over SciPy's domain ---------------------------------------------------------------------

def test_hyp1f1_large_x_and_negative_parameters(x64):
    # |a| <= 7 (negative too), b below a, |x| up to 700: the asymptotic expansion for large |x|
    # (the 500-term series alone gave inf or 1e-2 relative at |x| = 700), Kummer's transformation
    # skipped for polynomials at x < 0. Values and d/dx = a / b 1F1(a + 1; b + 1; x) against SciPy,
    # in one compiled program (the jvp in x)
    a, b, x = np.array(list(itertools.product([-7.0, -3.3, -0.5, 0.4, 1.0, 2.5, 7.0], [-4.5, 0.3, 2.5, 7.5, 20.0],
                                              [-700.0, -300.0, -40.0, -1.0, 0.5, 5.0, 30.0, 100.0, 300.0, 700.0]))).T
    values, slopes = core.jit(lambda a, b, x: core.jvp(special.hyp1f1, (a, b, x), (0 * a, 0 * b, 1 + 0 * x)))(a, b, x)
    expected, expected_slope = ss.hyp1f1(a, b, x), a / b * ss.hyp1f1(a + 1, b + 1, x)
    finite = np.isfinite(expected) & (np.abs(expected) > 1e-290)
    # e^x x^(a - b) near 1e300 keeps ~|log| eps (1e-13); a < 0 with x > 0 cancels (2e-11 at a = -7,
    # b = 20, x = 30, mpmath agreeing with SciPy there)
    cancelling = (a < 0) & (x > 0)
    assert np.max(_rel(np.asarray(values)[finite & ~cancelling], expected[finite & ~cancelling])) < 2e-13
    assert np.max(_rel(np.asarray(values)[finite & cancelling], expected[finite & cancelling])) < 5e-11
    finite = np.isfinite(expected_slope) & (np.abs(expected_slope) > 1e-290)
    assert np.max(_rel(np.asarray(slopes)[finite], expected_slope[finite])) < 1e-11

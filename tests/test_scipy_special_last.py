"""jax.scipy.special 0.10.2's last names in core.scipy.special: hyp2f1, wofz and sph_harm_y, against
scipy.special in float64 (mpmath where SciPy itself is wrong), their derivatives against central
differences of SciPy, float32 in / float32 out, JAX's conventions (recorded from jax 0.10.2), and one
JAX-style program. Few compiles: each function runs once on a whole grid."""
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


def test_hyp2f1_matches_scipy(x64):
    a, b, c, x = _hyp2f1_grid()
    extra = np.array([case[:4] for case in SCIPY_WRONG]).T
    ours = np.asarray(core.jit(special.hyp2f1)(*(np.concatenate([u, v]) for u, v in zip((a, b, c, x), extra))))
    ours, ours_extra = ours[:a.size], ours[a.size:]
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
    np.testing.assert_allclose(ours_extra, [case[4] for case in SCIPY_WRONG], rtol=1e-12)


def test_hyp2f1_edges_as_scipy(x64):
    a = np.array([1.0, -2.0, -3.0, 1.0, 1.0, -2.0, 0.0, 1.0])
    b = np.array([2.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 2.0])
    c = np.array([-3.0, -3.0, -2.0, 3.5, 3.0, 3.0, -3.0, 3.0])
    x = np.array([0.5, 0.5, 0.5, 1.0, 1.0, 1.5, 0.5, 1.5])
    # c a pole (inf unless the polynomial ends first), Gauss's sum, d = 0 at x = 1, a polynomial
    # beyond 1, a = 0, the branch cut
    np.testing.assert_allclose(special.hyp2f1(a, b, c, x), ss.hyp2f1(a, b, c, x), rtol=1e-14)


def test_hyp2f1_derivatives(x64):
    # x: a b / c F(a + 1, b + 1; c + 1; x); a, b, c: forward differentiation of the evaluation;
    # one point per branch (series, Pfaff, the connection formula at 0.9 and 0.95). Not at an integer
    # c - a - b with x near 1: there the parameter derivatives are wrong (the limit formula holds
    # c - a - b fixed; hyp2f1(1, 1, 2, 0.95) gives d/da 1.64 instead of 4.72), a known limitation
    a, b, c, x = (np.array(v) for v in ([0.5, 1.5, -0.7, 1.0], [1.5, 0.3, 1.2, 1.0], [2.5, 3.7, 1.9, 2.3],
                                        [0.3, -3.0, 0.9, 0.95]))
    grads = core.jit(core.grad(lambda *v: jnp.sum(special.hyp2f1(*v)), argnums=(0, 1, 2, 3)))(a, b, c, x)
    args = [a, b, c, x]
    for i, g in enumerate(grads):
        h = 1e-6 * np.maximum(np.abs(args[i]), 1.0)
        up, down = list(args), list(args)
        up[i], down[i] = up[i] + h, down[i] - h
        fd = (ss.hyp2f1(*up) - ss.hyp2f1(*down)) / (2 * h)
        np.testing.assert_allclose(g, fd, rtol=1e-7)


# ----- wofz ----------------------------------------------------------------------------------------

def _wofz_points():
    rng = np.random.default_rng(7)
    n = 600
    z = rng.uniform(-1, 1, n) * 10 ** rng.uniform(-4, 2, n) + 1j * rng.uniform(-1, 1, n) * 10 ** rng.uniform(-8, 1.3, n)
    # the real axis, just off it, the switch at |z| = 6, huge |z|, the overflowing lower half plane
    special_points = [0.0, 1e-5, 3.0, -26.0, 5 + 1e-9j, 5 - 1e-300j, 0.3 - 1e-9j, 6.0j, 6 + 0.01j, -4.2 + 4.3j,
                      1e300 + 1e300j, 1e10 - 1j, 3 - 26.5j, 30 - 30j, 1 - 30j, -30j, np.inf, np.nan]
    return np.concatenate([z, np.array(special_points, complex)])


def test_wofz_matches_scipy(x64):
    z = _wofz_points()
    ours = np.asarray(core.jit(special.wofz)(z))
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
    z = np.array([0.5 + 0.2j, 3 - 1j, 7 + 2j, 2 + 1e-10j, -1.5 - 0.7j])
    _, slope = core.jvp(special.wofz, (z,), (np.ones_like(z),))
    h = 1e-6
    fd = (ss.wofz(z + h) - ss.wofz(z - h)) / (2 * h)
    assert np.max(_rel(slope, fd)) < 1e-8
    np.testing.assert_allclose(slope, -2 * z * ss.wofz(z) + 2j / np.sqrt(np.pi), rtol=1e-13)
    # real input: the complex type of its precision, as JAX's promote_args_complex
    assert special.wofz(np.float32(1.0)).dtype == np.complex64
    assert special.wofz(np.array([1.0, 2.0])).dtype == np.complex128


# ----- sph_harm_y ----------------------------------------------------------------------------------

def test_sph_harm_y_matches_scipy(x64):
    rng = np.random.default_rng(3)
    n = rng.integers(0, 21, 400)
    m = np.array([rng.integers(-k, k + 1) for k in n])
    theta, phi = rng.uniform(0, np.pi, 400), rng.uniform(0, 2 * np.pi, 400)
    theta[:4] = [0.0, np.pi, 1e-9, np.pi / 2]
    ours = special.sph_harm_y(n, m, theta, phi, n_max=20)
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
    n, m = np.array([1, 2, 4, 6]), np.array([0, -1, 3, 2])
    theta, phi = np.array([0.4, 1.2, 2.0, 2.8]), np.array([0.3, 2.0, 4.0, 5.5])

    def parts(t, p):
        y = special.sph_harm_y(n, m, t, p, n_max=6)
        return jnp.stack([y.real, y.imag])

    dt, dp = core.jit(core.jacfwd(parts, argnums=(0, 1)))(theta, phi)
    h = 1e-6
    for slope, (tu, pu, td, pd) in ((dt, (theta + h, phi, theta - h, phi)), (dp, (theta, phi + h, theta, phi - h))):
        fd = (ss.sph_harm_y(n, m, tu, pu) - ss.sph_harm_y(n, m, td, pd)) / (2 * h)
        np.testing.assert_allclose(np.einsum("rkk->rk", np.asarray(slope)), np.stack([fd.real, fd.imag]),
                                   rtol=1e-7, atol=1e-9)


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

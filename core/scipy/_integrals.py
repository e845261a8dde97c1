"""Integrals of Gaussians and trigonometric functions: `dawsn`, `sici`, `fresnel` and `owens_t`.

dawsn: a power series below |x| = 0.2, elsewhere Rybicki's exponentially convergent sum
F(x) = lim_(h -> 0) pi^(-1/2) sum_(n odd) e^(-(x - n h)^2) / n, with h = 1/4 (error ~ e^-(pi/2h)^2
~ 1e-17) shifted so that the terms are centred on x (13 pairs of terms reach float64 rounding).
sici: power series up to x = 4, above it the continued fraction of E_1(i x) = -Ci(x) + i (Si(x) - pi/2)
(in real arithmetic; 60 levels: ~1e-15 at x = 4). fresnel: power series below |x| = 1.6, above it
C + i S = (1 + i) / 2 (1 - erfc(z)), z = sqrt(pi) / 2 (1 - i) x, with erfc's continued fraction
(120 levels: ~2e-16 at 1.6) in real arithmetic. owens_t: 48-point Gauss-Legendre quadrature of
its defining integral for |a| <= 1, and for |a| > 1 the identity
T(h, a) = (Phi(h) Q(a h) + Phi(a h) Q(h)) / 2 - T(a h, 1 / a) (h >= 0, Q = 1 - Phi).
Derivatives: closed forms (F' = 1 - 2 x F, Si' = sin(x) / x, Ci' = cos(x) / x, S' = sin(pi x^2 / 2),
C' = cos(pi x^2 / 2)); owens_t by autodiff
of the quadrature.
"""
import numpy as np

from .. import lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from ._util import inexact_args, library_jit

_EULER = 0.57721566490153286061

# ----- dawsn ------------------------------------------------------------------------------------

_DAWSON_H = 0.25
_DAWSON_PAIRS = 13
_DAWSON_SERIES_BELOW = 0.2


def _dawson_value(x):
    ax = jnp.abs(x)
    small = ax < _DAWSON_SERIES_BELOW
    # series: F(x) = sum_k (-2)^k x^(2k+1) / (2k+1)!!, 10 terms below 0.2
    xs = jnp.where(small, x, 0.0)
    x2 = xs * xs
    coeffs, c = [], 1.0
    for k in range(10):
        coeffs.append(c)
        c *= -2.0 / (2 * k + 3)
    series = jnp.zeros_like(x)
    for c in reversed(coeffs):
        series = series * x2 + c
    series = series * xs
    # Rybicki: x = n0 h + xp with n0 even, |xp| <= h; pairs n = +-(2i+1) around n0
    axl = jnp.where(small, 1.0, ax)
    n0 = 2 * jnp.round(0.5 * axl / _DAWSON_H)
    xp = axl - n0 * _DAWSON_H
    total = jnp.zeros_like(x)
    for i in range(_DAWSON_PAIRS):
        n = 2 * i + 1
        weight = float(np.exp(-(n * _DAWSON_H) ** 2))
        grow = jnp.exp(2 * xp * n * _DAWSON_H)
        total = total + weight * (grow / (n0 + n) + 1 / (grow * (n0 - n)))
    far = jnp.sign(x) * jnp.exp(-xp * xp) * total / float(np.sqrt(np.pi))
    far = jnp.where(jnp.isinf(x), 0.0, far)
    return jnp.where(small, series, far)


@custom_jvp
def _dawsn_rule(x):
    return _dawson_value(x)


@_dawsn_rule.defjvp
def _dawsn_jvp(primals, tangents):
    x, = primals
    t, = tangents
    y = _dawsn_rule(x)
    return y, t * (1 - 2 * x * y)


_dawsn = library_jit(_dawsn_rule)


def dawsn(x):
    """Dawson's integral F(x) = e^(-x^2) integral_0^x e^(t^2) dt (odd; ~1 / (2x) for large x).
    Differentiable: F'(x) = 1 - 2 x F(x).

    >>> print(round(float(dawsn(1.0)), 4))
    0.5381
    """
    x, = inexact_args("dawsn", x)
    return _dawsn(x)


# ----- sici -------------------------------------------------------------------------------------

_SICI_SERIES_BELOW = 4.0
_SICI_SERIES_TERMS = 22  # 4^44 / 44! ~ 1e-28
_SICI_FRACTION_DEPTH = 60


def _sici_value(x):
    ax = jnp.abs(x)
    small = ax <= _SICI_SERIES_BELOW
    xs = jnp.where(small, ax, 1.0)
    x2 = xs * xs
    si, ci, term = jnp.zeros_like(x), jnp.zeros_like(x), xs  # term = (-1)^k x^(2k+1) / (2k+1)!
    for k in range(_SICI_SERIES_TERMS):
        si = si + term / (2 * k + 1)
        even = -term * xs / (2 * k + 2)  # (-1)^(k+1) x^(2k+2) / (2k+2)!
        ci = ci + even / (2 * k + 2)
        term = even * xs / (2 * k + 3)
    ci = ci + _EULER + jnp.log(xs)
    # continued fraction of E_1(z), z = i x: e^-z / (z + 1 - 1 / (z + 3 - 4 / (z + 5 - ...)))
    xl = jnp.where(small, 2 * _SICI_SERIES_BELOW, ax)

    def level(i, t):
        k = _SICI_FRACTION_DEPTH - i
        tr, ti = t
        den = tr * tr + ti * ti
        # t <- z + 2k - 1 - k^2 / t, with 1 / t = conj(t) / |t|^2
        return 2 * k - 1 - k * k * tr / den, xl + k * k * ti / den

    start = (jnp.full_like(x, 2 * _SICI_FRACTION_DEPTH + 1), xl)
    tr, ti = lax.fori_loop(0, _SICI_FRACTION_DEPTH,
                           lambda i, t: level(lax.convert_element_type(i, x.dtype), t), start)
    # E_1 = e^(-i x) / t = (cos x - i sin x) (tr - i ti) / |t|^2
    den = tr * tr + ti * ti
    c, s = jnp.cos(xl), jnp.sin(xl)
    e_re, e_im = (c * tr - s * ti) / den, -(c * ti + s * tr) / den
    si_far, ci_far = e_im + np.pi / 2, -e_re
    si_far = jnp.where(jnp.isinf(x), np.pi / 2, si_far)
    ci_far = jnp.where(jnp.isinf(x), 0.0, ci_far)
    si = jnp.where(small, si, si_far)
    ci = jnp.where(small, ci, ci_far)
    si = jnp.sign(x) * si
    # Ci(-x) = Ci(x) + i pi: SciPy (and JAX) return the real part
    ci = jnp.where(x == 0, -np.inf, ci)
    return si, ci


@custom_jvp
def _sici_rule(x):
    return _sici_value(x)


@_sici_rule.defjvp
def _sici_jvp(primals, tangents):
    x, = primals
    t, = tangents
    si, ci = _sici_rule(x)
    safe = jnp.where(x == 0, 1.0, x)
    dsi = jnp.where(x == 0, 1.0, jnp.sin(safe) / safe)
    return (si, ci), (t * dsi, t * jnp.cos(x) / x)


_sici = library_jit(_sici_rule)


def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)): Si(x) = integral_0^x sin(t) / t dt,
    Ci(x) = gamma + log|x| + integral_0^x (cos(t) - 1) / t dt (for x < 0 the real part, as SciPy and
    JAX; -inf at 0). Differentiable: Si' = sin(x) / x, Ci' = cos(x) / x.

    >>> si, ci = sici(1.0)
    >>> print(round(float(si), 4), round(float(ci), 4))
    0.9461 0.3374
    """
    x, = inexact_args("sici", x)
    return _sici(x)


# ----- fresnel ----------------------------------------------------------------------------------

_FRESNEL_SERIES_BELOW = 1.6
_FRESNEL_SERIES_TERMS = 32  # u = pi x^2 / 2 <= 4.03: u^32 / 32! ~ 1e-16 of the sum
_FRESNEL_FRACTION_DEPTH = 120


def _fresnel_value(x):
    ax = jnp.abs(x)
    small = ax < _FRESNEL_SERIES_BELOW
    xs = jnp.where(small, ax, 0.0)
    u = 0.5 * np.pi * xs * xs
    # term_n = x u^n / n!: even n feed C (sign (-1)^(n/2)), odd n feed S (sign (-1)^((n-1)/2)),
    # each divided by 2n + 1
    s_series, c_series, term = jnp.zeros_like(x), jnp.zeros_like(x), xs
    for n in range(_FRESNEL_SERIES_TERMS):
        sign = -1.0 if (n // 2) % 2 else 1.0
        if n % 2 == 0:
            c_series = c_series + sign * term / (2 * n + 1)
        else:
            s_series = s_series + sign * term / (2 * n + 1)
        term = term * u / (n + 1)
    xl = jnp.where(small, 2 * _FRESNEL_SERIES_BELOW, ax)
    p = float(np.sqrt(np.pi) / 2) * xl  # z = p - i p

    def level(i, t):
        k = lax.convert_element_type(_FRESNEL_FRACTION_DEPTH - i, x.dtype)
        tr, ti = t
        den = tr * tr + ti * ti
        return p + (k / 2) * tr / den, -p - (k / 2) * ti / den  # z + (k/2) / t

    tr, ti = lax.fori_loop(0, _FRESNEL_FRACTION_DEPTH, level, (p, -p))
    # erfc(z) = e^(-z^2) / (sqrt(pi) t), e^(-z^2) = e^(i theta) with theta = pi x^2 / 2
    theta = 0.5 * np.pi * xl * xl
    den = float(np.sqrt(np.pi)) * (tr * tr + ti * ti)
    c, s = jnp.cos(theta), jnp.sin(theta)
    er, ei = (c * tr + s * ti) / den, (s * tr - c * ti) / den
    c_far, s_far = ((1 - er) + ei) / 2, ((1 - er) - ei) / 2
    c_far = jnp.where(jnp.isinf(x), 0.5, c_far)
    s_far = jnp.where(jnp.isinf(x), 0.5, s_far)
    sign = jnp.sign(x)
    return sign * jnp.where(small, s_series, s_far), sign * jnp.where(small, c_series, c_far)


@custom_jvp
def _fresnel_rule(x):
    return _fresnel_value(x)


@_fresnel_rule.defjvp
def _fresnel_jvp(primals, tangents):
    x, = primals
    t, = tangents
    theta = 0.5 * np.pi * x * x
    return _fresnel_rule(x), (t * jnp.sin(theta), t * jnp.cos(theta))


_fresnel = library_jit(_fresnel_rule)


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)): S(x) = integral_0^x sin(pi t^2 / 2) dt and
    C(x) = integral_0^x cos(pi t^2 / 2) dt (odd; both tend to 1/2). Differentiable.

    >>> s, c = fresnel(1.0)
    >>> print(round(float(s), 4), round(float(c), 4))
    0.4383 0.7799
    """
    x, = inexact_args("fresnel", x)
    return _fresnel(x)


# ----- owens_t ----------------------------------------------------------------------------------

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(48)


def _owens_t_small_a(h, a):
    """T(h, a) for |a| <= 1: (1 / 2 pi) integral_0^a e^(-h^2 (1 + x^2) / 2) / (1 + x^2) dx, by
    Gauss-Legendre on [0, a] (x = a (u + 1) / 2)."""
    # the nodes along a new trailing axis: one vectorized expression, not 48 copies of it
    nodes = jnp.asarray((_GL_NODES + 1) / 2, dtype=h.dtype)
    weights = jnp.asarray(_GL_WEIGHTS, dtype=h.dtype)
    t = a[..., None] * nodes
    one_t2 = 1 + t * t
    total = jnp.sum(weights * jnp.exp(-0.5 * (h * h)[..., None] * one_t2) / one_t2, axis=-1)
    return total * a / (4 * np.pi)


def _normal_cdf(x):
    return 0.5 * lax.erfc(-x / float(np.sqrt(2.0)))


def _owens_t_value(h, a):
    h = jnp.abs(h)  # T is even in h and odd in a
    sign, a = jnp.sign(a), jnp.abs(a)
    small = a <= 1
    a_small = jnp.where(small, a, 1.0)
    direct = _owens_t_small_a(h, a_small)
    a_big = jnp.where(small, 2.0, a)
    ah = a_big * h
    swapped = _owens_t_small_a(ah, 1 / a_big)
    ph, pah = _normal_cdf(h), _normal_cdf(ah)
    qh, qah = _normal_cdf(-h), _normal_cdf(-ah)
    far = 0.5 * (ph * qah + pah * qh) - swapped
    # a = inf: T(h, inf) = Q(h) / 2
    far = jnp.where(jnp.isinf(a_big), 0.5 * qh, far)
    return sign * jnp.where(small, direct, far)


def owens_t(h, a):
    """Owen's T function T(h, a) = (1 / 2 pi) integral_0^a e^(-h^2 (1 + x^2) / 2) / (1 + x^2) dx
    (even in h, odd in a). Differentiable in h and a.

    >>> print(round(float(owens_t(0.5, 0.3)), 5))
    0.04079
    """
    h, a = inexact_args("owens_t", h, a)
    return _owens_t(h, a)


_owens_t = library_jit(_owens_t_value)

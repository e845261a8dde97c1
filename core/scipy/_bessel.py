"""Modified Bessel functions of the first kind of orders 0 and 1 (`i0`, `i0e`, `i1`, `i1e`).

|x| <= 20: the power series I_nu(x) = (x/2)^nu sum_k (x^2/4)^k / (k! (k+nu)!) (all terms
positive: no cancellation), 40 terms. |x| > 20: Hankel's asymptotic expansion
e^-x I_nu(x) ~ sum_k (-1)^k a_k(nu) / x^k / sqrt(2 pi x), 30 terms (its smallest term at x = 20 is
below float64 rounding). The exponentially scaled forms carry closed-form derivatives
(i0e' = i1e - sign(x) i0e, i1e' = i0e - i1e (sign(x) + 1/x)), as JAX defines them.
"""
import math

import numpy as np

from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from ._util import inexact_args

_SWITCH = 20.0


def _series_coeffs(nu, n):
    return [1.0 / (math.factorial(k) * math.factorial(k + nu)) for k in range(n)]


def _asymptotic_coeffs(nu, n):
    mu = 4.0 * nu * nu
    coeffs, c = [], 1.0
    for k in range(n):
        coeffs.append(c)
        c *= (mu - (2 * k + 1) ** 2) / ((k + 1) * 8.0)
    # the (-1)^k of the expansion
    return [ck * (-1) ** k for k, ck in enumerate(coeffs)]


_SERIES = {nu: _series_coeffs(nu, 40) for nu in (0, 1)}
_ASYMPTOTIC = {nu: _asymptotic_coeffs(nu, 30) for nu in (0, 1)}


def _horner(coeffs, t):
    out = jnp.full_like(t, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        out = out * t + c
    return out


def _scaled(nu, x):
    """e^-|x| I_nu(|x|) for x of any sign (the caller restores I_1's odd sign)."""
    ax = jnp.abs(x)
    small = ax <= _SWITCH
    xs = jnp.where(small, ax, 1.0)
    series = _horner(_SERIES[nu], xs * xs / 4) * jnp.exp(-xs)
    if nu == 1:
        series = series * xs / 2
    xl = jnp.where(small, 2 * _SWITCH, ax)
    asym = _horner(_ASYMPTOTIC[nu], 1 / xl) / jnp.sqrt(2 * np.pi * xl)
    return jnp.where(small, series, asym)


@custom_jvp
def _i0e(x):
    return _scaled(0, x)


@custom_jvp
def _i1e(x):
    return jnp.sign(x) * _scaled(1, x)


@_i0e.defjvp
def _i0e_jvp(primals, tangents):
    x, = primals
    t, = tangents
    y0, y1 = _i0e(x), _i1e(x)
    return y0, t * (y1 - jnp.sign(x) * y0)


@_i1e.defjvp
def _i1e_jvp(primals, tangents):
    x, = primals
    t, = tangents
    y0, y1 = _i0e(x), _i1e(x)
    safe = jnp.where(x == 0, 1.0, x)
    # at 0 the limit of i0e - i1e (sign(x) + 1/x) is 1/2
    slope = jnp.where(x == 0, 0.5, y0 - y1 * (jnp.sign(x) + 1 / safe))
    return y1, t * slope


@custom_jvp
def _i0(x):
    return jnp.exp(jnp.abs(x)) * _i0e(x)


@custom_jvp
def _i1(x):
    return jnp.exp(jnp.abs(x)) * _i1e(x)


@_i0.defjvp
def _i0_jvp(primals, tangents):
    # I0' = I1 (smooth at 0, where the kinks of exp(|x|) and i0e would cancel)
    x, = primals
    t, = tangents
    return _i0(x), t * _i1(x)


@_i1.defjvp
def _i1_jvp(primals, tangents):
    # I1' = I0 - I1 / x, 1/2 at 0
    x, = primals
    t, = tangents
    y0, y1 = _i0(x), _i1(x)
    safe = jnp.where(x == 0, 1.0, x)
    return y1, t * jnp.where(x == 0, 0.5, y0 - y1 / safe)


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0, exp(-|x|) I0(x).

    >>> print(round(float(i0e(1.0)), 6))
    0.46576
    """
    x, = inexact_args("i0e", x)
    return _i0e(x)


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1, exp(-|x|) I1(x) (odd in x).

    >>> print(round(float(i1e(1.0)), 6))
    0.20791
    """
    x, = inexact_args("i1e", x)
    return _i1e(x)


def i0(x):
    """The modified Bessel function of order 0, I0(x) = exp(|x|) i0e(x) (overflows to inf past
    |x| ~ 713 in float64; NaN at +-inf, as SciPy).

    >>> print(round(float(i0(1.0)), 6))
    1.266066
    """
    x, = inexact_args("i0", x)
    return _i0(x)


def i1(x):
    """The modified Bessel function of order 1, I1(x) = exp(|x|) i1e(x).

    >>> print(round(float(i1(1.0)), 6))
    0.565159
    """
    x, = inexact_args("i1", x)
    return _i1(x)

"""The gamma family: `gamma`, `gammasgn`, `beta`, `polygamma`, `multigammaln`.

`polygamma(n, x)` for n >= 1 is (-1)^(n+1) n! zeta(n+1, x), with the Hurwitz zeta function summed
directly for its first 16 terms and the rest by the Euler-Maclaurin formula (10 Bernoulli terms):
the tail starts at x + 16, where the formula is accurate to float64 rounding for moderate n.
"""
import math
import operator

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..lax._base import aval_of
from ._util import inexact_args


def gammasgn(x):
    """The sign of the gamma function: 1 for x > 0 (and +0), -1 for -0, (-1)^ceil(-x) between
    the negative integers, NaN at the negative integers, -inf and NaN (as SciPy).

    >>> print(gammasgn(-0.5), gammasgn(-1.5))
    -1.0 1.0
    """
    x, = inexact_args("gammasgn", x)
    floor = jnp.floor(x)
    odd = jnp.fmod(floor, 2.0) != 0
    negative = jnp.where(odd, -1.0, 1.0).astype(x.dtype)
    out = jnp.where(x > 0, 1.0, negative)
    out = jnp.where(x == 0, jnp.where(jnp.signbit(x), -1.0, 1.0), out)
    bad = ((x < 0) & (floor == x)) | jnp.isnan(x)
    return jnp.where(bad, np.nan, out).astype(x.dtype)


def gamma(x):
    """The gamma function, gammasgn(x) * exp(gammaln(x)): inf at +0 (-inf at -0), NaN at the
    negative integers, overflow to inf past x ~ 171.6 in float64.

    >>> print(round(float(gamma(5.0)), 4))
    24.0
    """
    x, = inexact_args("gamma", x)
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


def beta(a, b):
    """The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b), from log-gammas with the
    signs restored.

    >>> print(round(float(beta(2.0, 3.0)), 6))
    0.083333
    """
    a, b = inexact_args("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b))


# ----- polygamma through the Hurwitz zeta function -------------------------------------------

_DIRECT_TERMS = 16
# B_2j / (2j)! for j = 1..10 (Bernoulli numbers as exact fractions)
_BERNOULLI = [(1, 6), (-1, 30), (1, 42), (-1, 30), (5, 66), (-691, 2730), (7, 6), (-3617, 510),
              (43867, 798), (-174611, 330)]
_EM_COEFFS = [num / den / math.factorial(2 * j) for j, (num, den) in enumerate(_BERNOULLI, start=1)]


def _signed_power(base, s, s_odd):
    """base^-s for an integer-valued s, including negative bases."""
    mag = jnp.exp(-s * jnp.log(jnp.abs(base)))
    return jnp.where((base < 0) & s_odd, -mag, mag)


def _hurwitz_zeta(s, q, s_odd):
    """zeta(s, q) = sum_k (q + k)^-s for integer s >= 2 and q > -16 (not a non-positive integer)."""
    total = jnp.zeros_like(q)
    for k in range(_DIRECT_TERMS):
        total = total + _signed_power(q + k, s, s_odd)
    w = q + _DIRECT_TERMS
    w_s = jnp.exp(-s * jnp.log(w))  # w^-s
    total = total + w * w_s / (s - 1) + w_s / 2
    # Euler-Maclaurin: sum_j B_2j/(2j)! s (s+1) ... (s+2j-2) w^(-s-2j+1)
    rising, inv_w2, w_pow = s, 1 / (w * w), w_s / w
    for j, coeff in enumerate(_EM_COEFFS, start=1):
        total = total + coeff * rising * w_pow
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        w_pow = w_pow * inv_w2
    return total


def polygamma(n, x):
    """The n-th derivative of digamma, for an integer array `n >= 0` (NaN for n < 0).

    Accurate for x > -16 away from the poles at the non-positive integers (where it is infinite).
    Differentiable in x (d/dx polygamma(n, x) = polygamma(n + 1, x)).

    >>> print(round(float(polygamma(1, 1.0)), 6))   # pi^2 / 6
    1.644934
    """
    n_aval = aval_of(n) if hasattr(n, "aval") else np.asarray(n)
    if np.dtype(n_aval.dtype).kind not in "iub":
        raise ValueError(f"polygamma: argument n must be of integer type, got "
                         f"{np.dtype(n_aval.dtype).name}{list(np.shape(n_aval))}. Pass an int or an "
                         "integer array (e.g. n.astype(jnp.int32)).")
    n_float, x = inexact_args("polygamma", n, x)
    s = n_float + 1
    s_odd = jnp.fmod(s, 2.0) != 0
    safe_s = jnp.where(n_float >= 1, s, 2.0)
    fact = jnp.exp(lax.lgamma(safe_s))  # n!
    sign = jnp.where(s_odd, -1.0, 1.0).astype(x.dtype)  # (-1)^(n+1)
    higher = sign * fact * _hurwitz_zeta(safe_s, x, s_odd)
    out = jnp.where(n_float == 0, lax.digamma(x), higher)
    return jnp.where(n_float < 0, np.nan, out)


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension `d` (a static positive int):
    d (d - 1) / 4 log(pi) + sum_j gammaln(a - j / 2), j = 0..d-1.

    >>> print(round(float(multigammaln(2.6, 3)), 5))
    2.00735
    """
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError(f"multigammaln: d must be a static integer (the dimension), got {d!r}.") from None
    if d < 1:
        raise ValueError(f"multigammaln: d must be a positive integer, got {d}.")
    a, = inexact_args("multigammaln", a)
    total = jnp.full_like(a, d * (d - 1) / 4 * np.log(np.pi))
    for j in range(d):
        total = total + lax.lgamma(a - j / 2)
    return total

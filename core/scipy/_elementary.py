"""Special functions built from elementary ones and the gamma family: `bernoulli`, `factorial`,
`comb`, `poch`, `loggamma`, `boxcox`, `boxcox1p`, `kl_div`, `rel_entr`, `zeta` and `spence`.

Signatures and semantics are jax.scipy.special 0.10.2's (SciPy's where the two agree); where they
differ the docstring says so. Every function is differentiable by autodiff of its formula, or by
a closed-form rule where the formula has a removable singularity.
"""
import fractions
import math
import operator

import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from ._gamma import _hurwitz_zeta, gammasgn
from ._util import inexact_args, library_jit


def _bernoulli_exact(n):
    """B_0..B_n as exact fractions (B_1 = -1/2), by the recurrence sum_k C(m+1, k) B_k = 0."""
    b = [fractions.Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b


def bernoulli(n):
    """The first n + 1 Bernoulli numbers B_0..B_n (B_1 = -1/2, as SciPy and JAX), for a static
    integer n >= 0, in the default float dtype. Computed exactly, then rounded (JAX's are float32
    approximations: its B_4 is -0.03333325).

    >>> print(bernoulli(4))
    [ 1.         -0.5         0.16666667  0.         -0.03333334]
    """
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"bernoulli: n must be a static integer, got {n!r}.") from None
    if n < 0:
        raise ValueError(f"bernoulli: n must be non-negative, got {n}.")
    values = [float(b) for b in _bernoulli_exact(n)]
    return jnp.asarray(np.array(values), dtype=dtypes.canonicalize_dtype(np.float64))


def factorial(n, exact=False):
    """n! = Gamma(n + 1) for real n >= 0, 0 for n < 0 (as SciPy); differentiable in n.
    `exact=True` is not supported (as in JAX): it needs arbitrary-precision integers.

    >>> print(np.round(np.asarray(factorial(jnp.array([3.0, 4.5, -1.0]))), 3))
    [ 6.    52.343  0.   ]
    """
    if exact:
        raise NotImplementedError("factorial: exact=True is not supported (it needs Python's unbounded "
                                  "integers); use math.factorial on a concrete int, or exact=False.")
    n, = inexact_args("factorial", n)
    safe = jnp.where(n < 0, 0.0, n)
    return jnp.where(n < 0, 0.0, jnp.exp(lax.lgamma(safe + 1)))


def comb(N, k, *, repetition=False):
    """The binomial coefficient C(N, k) = Gamma(N + 1) / (Gamma(k + 1) Gamma(N - k + 1)) for real
    0 <= k <= N (0 elsewhere, as SciPy's `exact=False`); with `repetition=True`, C(N + k - 1, k).
    Computed from log-gammas (relative error ~ N eps). Differentiable in N and k.

    >>> print(round(float(comb(5.0, 2.0)), 4))
    10.0
    """
    N, k = inexact_args("comb", N, k)
    empty = (k == 0) & (N >= 0)  # C(N, 0) = 1, also with repetition for N = 0 (SciPy and JAX)
    if repetition:
        N = N + k - 1
    valid = (k >= 0) & (N >= 0) & (k <= N)
    sN, sk = jnp.where(valid, N, 1.0), jnp.where(valid, k, 0.0)
    log_c = lax.lgamma(sN + 1) - lax.lgamma(sk + 1) - lax.lgamma(sN - sk + 1)
    return jnp.where(valid, jnp.exp(log_c), jnp.where(empty, 1.0, 0.0))


def _nonpositive_integer(x):
    return (x <= 0) & (jnp.floor(x) == x)


def poch(z, m):
    """The Pochhammer symbol (rising factorial) Gamma(z + m) / Gamma(z), for real z and m,
    including negative z (signs from `gammasgn`). Where Gamma(z) is infinite (z a non-positive
    integer) it is 0, unless z + m is one too: then the limit (-1)^m Gamma(1 - z) / Gamma(1 - z - m).
    poch(z, 0) = 1. Differentiable in z and m away from those points.

    >>> print(round(float(poch(2.0, 3.0)), 3))
    24.0
    """
    z, m = inexact_args("poch", z, m)
    z_pole, zm_pole = _nonpositive_integer(z), _nonpositive_integer(z + m)
    both = z_pole & zm_pole
    general = gammasgn(z + m) * gammasgn(z) * jnp.exp(lax.lgamma(z + m) - lax.lgamma(z))
    # both at poles: m is an integer; Gamma(1 - z) / Gamma(1 - z - m) with positive arguments
    rz, rm = jnp.where(both, z, 0.0), jnp.where(both, m, 0.0)
    sign = jnp.where(jnp.fmod(jnp.abs(rm), 2.0) == 1, -1.0, 1.0).astype(z.dtype)
    limit = sign * jnp.exp(lax.lgamma(1 - rz) - lax.lgamma(1 - rz - rm))
    out = jnp.where(both, limit, jnp.where(z_pole, 0.0, general))
    return jnp.where(m == 0, 1.0, out)


def loggamma(x):
    """The principal branch of log Gamma(x) for real x: gammaln(x) for x > 0 (and +inf at 0),
    NaN for x < 0, as SciPy's and JAX's real loggamma. Complex arguments are not supported.

    >>> print(round(float(loggamma(3.0)), 6))
    0.693147
    """
    x, = inexact_args("loggamma", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise TypeError(f"loggamma: complex arguments are not supported, got {x.dtype.name}{list(x.shape)}; "
                        "pass a real array.")
    return jnp.where(x < 0, np.nan, lax.lgamma(x))


# (e^(l L) - 1) / l for |l L| below this: its Taylor series in l L, 9 terms (the next one is
# below 1e-2^9 / 10! relative); above it expm1(l L) / l. Smooth through l = 0 with the right
# derivative in l (L^2 / 2 there), where a select on l == 0 would give 0.
_BOXCOX_SERIES = 1e-2


def _boxcox_core(log_x, lmbda):
    # 0 * -inf would be NaN at x = 0, lmbda = 0, where the value is log(0) = -inf
    t = lmbda * jnp.where(jnp.isinf(log_x) & (lmbda == 0), 0.0, log_x)
    small = jnp.abs(t) < _BOXCOX_SERIES
    ts = jnp.where(small, t, 0.0)
    series, term = jnp.ones_like(t), jnp.ones_like(t)
    for k in range(2, 11):
        term = term * ts / k
        series = series + term
    safe_l = jnp.where(small, 1.0, lmbda)
    return jnp.where(small, log_x * series, jnp.expm1(jnp.where(small, 0.0, t)) / safe_l)


def boxcox(x, lmbda):
    """The Box-Cox transformation (x^lmbda - 1) / lmbda, log(x) at lmbda == 0 (NaN for x < 0).
    Accurate and differentiable in both arguments through lmbda = 0.

    >>> print(round(float(boxcox(2.0, 0.5)), 6))
    0.828427
    """
    x, lmbda = inexact_args("boxcox", x, lmbda)
    return _boxcox_core(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transformation of 1 + x, ((1 + x)^lmbda - 1) / lmbda, accurate for small x
    (log1p). NaN for x < -1.

    >>> print(round(float(boxcox1p(1.0, 0.5)), 6))
    0.828427
    """
    x, lmbda = inexact_args("boxcox1p", x, lmbda)
    return _boxcox_core(jnp.log1p(x), lmbda)


def rel_entr(p, q):
    """Elementwise relative entropy p log(p / q) for p, q > 0; 0 for p == 0 <= q; inf otherwise
    (SciPy's convention). Differentiable for p, q > 0.

    >>> print(round(float(rel_entr(0.5, 0.25)), 6))
    0.346574
    """
    p, q = inexact_args("rel_entr", p, q)
    both = (p > 0) & (q > 0)
    sp, sq = jnp.where(both, p, 1.0), jnp.where(both, q, 1.0)
    edge = jnp.where((p == 0) & (q >= 0), 0.0, np.inf)
    out = jnp.where(both, sp * jnp.log(sp / sq), edge)
    return jnp.where(jnp.isnan(p) | jnp.isnan(q), np.nan, out)


def kl_div(p, q):
    """Elementwise Kullback-Leibler divergence term p log(p / q) - p + q for p, q > 0; q for
    p == 0 <= q; inf otherwise (SciPy's convention).

    >>> print(round(float(kl_div(0.5, 0.25)), 6))
    0.096574
    """
    p, q = inexact_args("kl_div", p, q)
    both = (p > 0) & (q > 0)
    sp, sq = jnp.where(both, p, 1.0), jnp.where(both, q, 1.0)
    edge = jnp.where((p == 0) & (q >= 0), q, np.inf)
    out = jnp.where(both, sp * jnp.log(sp / sq) - sp + sq, edge)
    return jnp.where(jnp.isnan(p) | jnp.isnan(q), np.nan, out)


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x for x > 1, q > 0 (16 direct terms, then
    Euler-Maclaurin; see `polygamma`); x == 1 gives inf, x < 1 NaN, as SciPy. Differentiable in x
    and q. `q=None` is Riemann's zeta (q = 1), which JAX 0.10.2 refuses; here it is SciPy's for
    x > 1 (inf at 1, NaN below: the reflection formula is not implemented).

    >>> print(round(float(zeta(2.0, 1.0)), 6))   # pi^2 / 6
    1.644934
    """
    if q is None:
        q = 1.0
    x, q = inexact_args("zeta", x, q)
    inside = (x > 1) & (q > 0)
    sx, sq = jnp.where(inside, x, 2.0), jnp.where(inside, q, 1.0)
    value = _hurwitz_zeta(sx, sq, jnp.zeros(sx.shape, bool))
    out = jnp.where(x == 1, np.inf, np.nan)
    return jnp.where(inside, value, out)


# ----- spence -----------------------------------------------------------------------------------

def _dilog_series(y):
    """Li2(y) for -1 <= y <= 1/2: the Bernoulli series sum_n B_n u^(n+1) / (n+1)! in
    u = -log(1 - y) (|u| <= log 2, so 18 terms reach float64 rounding)."""
    u = -jnp.log1p(-y)
    coeffs = [float(b) / math.factorial(n + 1) for n, b in enumerate(_bernoulli_exact(18))]
    out = jnp.zeros_like(u)
    for c in reversed(coeffs):
        out = (out + c) * u
    return out


def _spence_value(x):
    # spence(x) = Li2(1 - x). y = 1 - x in [-1, 1/2]: the series; y in (1/2, 1]: Euler's reflection
    # Li2(y) = pi^2/6 - log(y) log(1 - y) - Li2(1 - y); y < -1: the inversion
    # Li2(y) = -pi^2/6 - log(-y)^2 / 2 - Li2(1/y)
    pi2_6 = np.pi ** 2 / 6
    y = 1 - x
    mid = (y >= -1) & (y <= 0.5)
    high = y > 0.5
    low = y < -1
    v_mid = _dilog_series(jnp.where(mid, y, 0.0))
    xh = jnp.where(high, x, 0.5)  # 1 - y, in [0, 1/2)
    log_prod = jnp.where(xh == 0, 0.0, jnp.log1p(-xh) * jnp.log(jnp.where(xh == 0, 1.0, xh)))
    v_high = pi2_6 - log_prod - _dilog_series(xh)
    yl = jnp.where(low, y, -2.0)
    v_low = -pi2_6 - 0.5 * jnp.log(-yl) ** 2 - _dilog_series(1 / yl)
    out = jnp.where(mid, v_mid, jnp.where(high, v_high, v_low))
    return jnp.where((x < 0) | jnp.isinf(x) | jnp.isnan(x), np.nan, out)  # SciPy's (and JAX's) NaN at inf too


@custom_jvp
def _spence_rule(x):
    return _spence_value(x)


@_spence_rule.defjvp
def _spence_jvp(primals, tangents):
    # d/dx spence(x) = log(x) / (1 - x), -1 at x = 1
    x, = primals
    t, = tangents
    near = jnp.abs(x - 1) < 1e-3
    safe = jnp.where(near, 0.5, x)
    # near 1: log(x) / (1 - x) = -(1 - e/2 + e^2/3 - e^3/4 + ...) with e = x - 1
    e = jnp.where(near, x - 1, 0.0)
    series = -(1 - e / 2 + e * e / 3 - e * e * e / 4 + e ** 4 / 5)
    slope = jnp.where(near, series, jnp.log(safe) / (1 - safe))
    return _spence_rule(x), t * slope


# jitted: eagerly a custom_jvp function is traced and compiled again on every call; jit keeps the
# program and its derivatives once per shape and dtype
_spence = library_jit(_spence_rule)


def spence(x):
    """Spence's function (SciPy's convention): the integral from 1 to x of log(t) / (1 - t) dt,
    which is the dilogarithm Li2(1 - x), for finite x >= 0 (NaN elsewhere). Differentiable.

    >>> print(round(float(spence(0.5)), 6))
    0.582241
    """
    x, = inexact_args("spence", x)
    return _spence(x)

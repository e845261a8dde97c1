"""Special functions of `jax.lax` beyond elementwise.py's: `polygamma`, `zeta` (Hurwitz),
`bessel_i0e` and `bessel_i1e` (exponentially scaled modified Bessel functions of order 0 and 1).

polygamma, zeta and bessel_i1e are primitives lowered to CHLO's ops of the same names (XLA
expands them), as JAX lowers them. bessel_i0e is a primitive too (one equation, `bessel_i0e_p` as
in JAX) with no CHLO op here: its lowering inlines a composition of lax operations (a power series
where that converges fast, the asymptotic series beyond), and its jvp is the closed form.
"""
import numpy as np

from .. import dtypes
from ..interpreters import lowering
from ._base import FLOAT, aval_of, defjvp, defjvp2, elementwise_args, lower_fun, naryop
from .elementwise import abs, add, div, exp, gt, mul, neg, reciprocal, rsqrt, select_n, sign, sub
from .structural import full_like

__all__ = ["polygamma", "zeta", "bessel_i0e", "bessel_i1e"]


def _not_differentiable(what):
    def rule(*_, **__):
        raise NotImplementedError(f"{what} is not differentiable (as in JAX).")
    return rule


# ----- polygamma -------------------------------------------------------------------------------

def polygamma(m, x):
    """Elementwise polygamma function psi^(m)(x), the m-th derivative of digamma; `m` holds
    non-negative integers of x's floating dtype (NaN elsewhere).

    >>> lax.polygamma(jnp.array([1.0]), jnp.array([1.0]))  # pi**2 / 6
    Array([1.644934], dtype=float32)
    """
    return polygamma_p.bind(*elementwise_args(m, x))


polygamma_p = naryop("polygamma", FLOAT, hlo_op="chlo.polygamma")
# d/dx psi^(m)(x) = psi^(m+1)(x); m is an order, not a variable
defjvp(polygamma_p, _not_differentiable("polygamma with respect to its order m"),
       lambda t, m, x: mul(t, polygamma(add(m, 1.0), x)))


# ----- zeta --------------------------------------------------------------------------------------

def zeta(x, q):
    """Elementwise Hurwitz zeta function sum_{k >= 0} (k + q) ** -x (x > 1, q > 0); with q = 1
    it is Riemann's zeta.

    >>> lax.zeta(jnp.array([2.0]), jnp.array([1.0]))  # pi**2 / 6
    Array([1.644934], dtype=float32)
    """
    return zeta_p.bind(*elementwise_args(x, q))


zeta_p = naryop("zeta", FLOAT, hlo_op="chlo.zeta")
# d/dq zeta(x, q) = -x zeta(x + 1, q); JAX defines no derivative in x either
defjvp(zeta_p, _not_differentiable("zeta with respect to x"),
       lambda t, x, q: mul(t, neg(mul(x, zeta(add(x, 1.0), q)))))


# ----- bessel_i1e --------------------------------------------------------------------------------

def bessel_i1e(x):
    """Elementwise exp(-|x|) I1(x), the exponentially scaled modified Bessel function of order 1.

    >>> lax.bessel_i1e(jnp.array([0.0, 1.0]))
    Array([0.        , 0.20791042], dtype=float32)
    """
    return bessel_i1e_p.bind(x)


bessel_i1e_p = naryop("bessel_i1e", FLOAT, hlo_op="chlo.bessel_i1e")


def _bessel_i1e_jvp(t, ans, x):
    # i1e'(x) = i0e(x) - i1e(x) (sign(x) + 1/x), whose limit at 0 is 1/2: near 0 the formula
    # divides by x, so there the limit is used (and the formula sees a safe x).
    eps = float(dtypes.finfo(aval_of(x).dtype).eps)
    not_tiny = gt(abs(x), eps)
    safe_x = select_n(not_tiny, full_like(x, eps), x)
    d = sub(bessel_i0e(safe_x), mul(ans, add(sign(safe_x), reciprocal(safe_x))))
    return mul(t, select_n(not_tiny, full_like(x, 0.5), d))


defjvp2(bessel_i1e_p, _bessel_i1e_jvp)


# ----- bessel_i0e --------------------------------------------------------------------------------

# (threshold, power-series terms, asymptotic terms) per precision. Below the threshold,
# I0(x) = sum_k (x^2/4)^k / (k!)^2 (positive terms, no cancellation); above it, the asymptotic
# series exp(-x) I0(x) ~ (2 pi x)^-1/2 sum_k a_k x^-k, a_k = a_{k-1} (2k - 1)^2 / (8k), whose
# error is about exp(-2x). Measured against scipy.special.i0e over [0, 400]: float32 settings
# 9e-16 (series) and 9e-9 (asymptotic) relative, float64 settings 2e-15 and 4e-16.
_I0E_SETTINGS = {4: (10.0, 24, 12), 8: (20.0, 46, 25)}


def _asymptotic_coefficients(n):
    a = [1.0]
    for k in range(1, n):
        a.append(a[-1] * (2 * k - 1) ** 2 / (8 * k))
    return a


def bessel_i0e(x):
    """Elementwise exp(-|x|) I0(x), the exponentially scaled modified Bessel function of order 0.

    >>> lax.bessel_i0e(jnp.array([0.0, 1.0]))
    Array([1.        , 0.46575963], dtype=float32)
    """
    return bessel_i0e_p.bind(x)


def _bessel_i0e_series(x):
    """The value, as lax operations on `x` (inlined by the primitive's lowering)."""
    aval = aval_of(x)
    threshold, n_series, n_asym = _I0E_SETTINGS[8 if aval.dtype.itemsize == 8 else 4]
    ax = abs(x)
    small = gt(full_like(ax, threshold), ax)
    # each branch sees an argument where it is finite, so the other's derivative is never nan
    xs = select_n(small, full_like(ax, threshold), ax)
    xb = select_n(small, ax, full_like(ax, threshold))
    y = mul(mul(xs, xs), 0.25)
    term = full_like(ax, 1.0)
    total = term
    for k in range(1, n_series):
        term = mul(term, mul(y, 1.0 / (k * k)))
        total = add(total, term)
    series = mul(exp(neg(xs)), total)
    u = reciprocal(xb)
    acc = full_like(ax, 0.0)
    for c in reversed(_asymptotic_coefficients(n_asym)):
        acc = add(mul(acc, u), c)
    asymptotic = mul(acc, mul(rsqrt(xb), float(1 / np.sqrt(2 * np.pi))))
    return select_n(small, asymptotic, series)


bessel_i0e_p = naryop("bessel_i0e", FLOAT)
lowering.register(bessel_i0e_p, lower_fun(_bessel_i0e_series))
# i0e'(x) = i1e(x) - sign(x) i0e(x) (finite at 0, where both terms vanish)
defjvp2(bessel_i0e_p, lambda t, ans, x: mul(t, sub(bessel_i1e(x), mul(sign(x), ans))))

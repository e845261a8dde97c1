"""Exponential integrals and the scaled complementary error function: `exp1`, `expi`, `expn`,
`erfcx`.

Each is branch-free over the whole array: a power series where it converges without cancellation
(small arguments) and a continued fraction evaluated backwards from a fixed depth elsewhere; each
element reads only the branch selected for it (the other is fed a harmless stand-in). Depths and
switch points were chosen from float64 measurements against SciPy (errors below 1e-14 relative).
Derivatives are closed forms (custom_jvp): E_n' = -E_(n-1), Ei'(x) = e^x / x,
erfcx'(x) = 2 x erfcx(x) - 2 / sqrt(pi). The loops are `fori_loop`s, and each function is a jitted
custom_jvp function: eagerly, a loop or a custom_jvp function is traced again on every call (a new
program, compiled again; ~0.1-1 s under grad), while jit compiles it, and its derivatives, once
per shape and dtype.
"""
import numpy as np

from .. import lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from ._util import inexact_args, library_jit

_EULER = 0.57721566490153286061
_SERIES_BELOW = 2.0   # E_n: power series below, continued fraction above
_CF_DEPTH = 60        # continued-fraction depth: ~1e-15 relative at x = 2, better beyond
_SERIES_TERMS = 32    # for x < 2: the 32nd term is below 2^32 / 32! ~ 1e-26
_EI_SERIES_BELOW = 40.0  # Ei: positive series below (all terms positive), asymptotic above
_EI_SERIES_TERMS = 130   # terms x^k / (k k!) at x = 40 fall below 1e-17 of the sum by k ~ 120
_EI_ASYMPTOTIC_TERMS = 40  # sum k! / x^k for x >= 40: the smallest term (k ~ 40) is ~ e^-40


def _loop(n_steps, body, init):
    """`init` carried through `body(k, carry)` for k = 0 .. n_steps - 1 (k a float of the carry's
    dtype): one loop in the program instead of n_steps unrolled copies, which keeps these
    functions' programs small and quick to compile."""
    dtype = jnp.result_type(*(init if isinstance(init, tuple) else (init,)))
    return lax.fori_loop(0, n_steps, lambda i, c: body(lax.convert_element_type(i, dtype), c), init)


def _en_fraction(n, x):
    """E_n(x) for x >= 2, n >= 1: e^-x / (x + n - 1 n / (x + n + 2 - 2 (n + 1) / (x + n + 4 - ...)))."""
    def step(i, t):
        k = _CF_DEPTH - i  # from the deepest level up
        return x + n + 2 * (k - 1) - k * (n + k - 1) / t

    return jnp.exp(-x) / _loop(_CF_DEPTH, step, x + n + 2 * _CF_DEPTH)


def _en_series(n, x):
    """E_n(x) for 0 < x < 2, integer n >= 1: (-x)^(n-1) / (n-1)! (digamma(n) - log x)
    - sum_{k != n-1} (-x)^k / ((k - n + 1) k!)."""
    log_part = lax.digamma(n) - jnp.log(x)

    def step(k, carry):
        total, term = carry  # term = (-x)^k / k!
        at_log = n == k + 1
        denom = jnp.where(at_log, 1.0, k - n + 1)
        total = total + jnp.where(at_log, term * log_part, -term / denom)
        return total, term * (-x) / (k + 1)

    return _loop(_SERIES_TERMS, step, (jnp.zeros_like(x), jnp.ones_like(x)))[0]


def _expn_value(n, x):
    valid = (n >= 0) & (x >= 0) & (jnp.floor(n) == n)
    inside = valid & (x > 0) & jnp.isfinite(x)
    sn, sx = jnp.where(inside & (n >= 1), n, 1.0), jnp.where(inside, x, 1.0)
    small = sx < _SERIES_BELOW
    series = _en_series(sn, jnp.where(small, sx, 1.0))
    fraction = _en_fraction(sn, jnp.where(small, _SERIES_BELOW, sx))
    value = jnp.where(small, series, fraction)
    value = jnp.where(n == 0, jnp.exp(-sx) / sx, value)
    # E_n(0) = 1 / (n - 1) for n >= 2, inf for n <= 1; E_n(inf) = 0
    at_zero = jnp.where(n >= 2, 1 / jnp.where(n >= 2, n - 1, 1.0), np.inf)
    out = jnp.where(x == 0, at_zero, jnp.where(jnp.isinf(x), 0.0, value))
    return jnp.where(valid, out, np.nan)


@custom_jvp
def _expn_rule(n, x):
    return _expn_value(n, x)


@_expn_rule.defjvp
def _expn_jvp(primals, tangents):
    n, x = primals
    _, tx = tangents
    # E_n' = -E_(n-1); E_0 = e^-x / x has E_0' = -E_0 (1 + 1/x)
    lower = _expn_rule(jnp.maximum(n - 1, 0.0), x)
    e0 = _expn_rule(jnp.zeros_like(n), x)
    slope = jnp.where(n >= 1, -lower, -e0 * (1 + 1 / x))
    return _expn_rule(n, x), tx * slope


_expn = library_jit(_expn_rule)


def expn(n, x):
    """The generalized exponential integral E_n(x) = integral_1^inf e^(-x t) / t^n dt, for integer
    n >= 0 and x >= 0 (NaN for negative or non-integer n, negative x; E_n(0) = 1/(n-1), inf for
    n <= 1). Differentiable in x (d/dx E_n = -E_(n-1)).

    >>> print(round(float(expn(2, 1.0)), 4))
    0.1485
    """
    n, x = inexact_args("expn", n, x)
    return _expn(n, x)


def exp1(x):
    """The exponential integral E_1(x) = integral_x^inf e^-t / t dt for x >= 0 (inf at 0, NaN for
    x < 0, as SciPy and JAX for real x). Differentiable: E_1'(x) = -e^-x / x.

    >>> print(round(float(exp1(1.0)), 6))
    0.219384
    """
    x, = inexact_args("exp1", x)
    return _expn(jnp.ones_like(x), x)


def _ei_positive(x):
    """Ei(x) for x > 0: gamma + log x + sum x^k / (k k!) below 40, e^x / x sum k! / x^k above."""
    small = x < _EI_SERIES_BELOW
    xs = jnp.where(small, x, 1.0)
    def series_step(k, carry):
        total, term = carry
        term = term * xs / (k + 1)
        return total + term / (k + 1), term

    total = _loop(_EI_SERIES_TERMS, series_step, (jnp.zeros_like(x), jnp.ones_like(x)))[0]
    series = _EULER + jnp.log(xs) + total
    xl = jnp.where(small, 2 * _EI_SERIES_BELOW, x)

    def asymptotic_step(k, carry):
        acc, term = carry
        term = term * (k + 1) / xl
        return acc + term, term

    acc = _loop(_EI_ASYMPTOTIC_TERMS, asymptotic_step, (jnp.ones_like(x), jnp.ones_like(x)))[0]
    # e^x / x as exp(x - log x): finite a little further before overflowing
    asym = jnp.exp(xl - jnp.log(xl)) * acc
    return jnp.where(small, series, asym)


@custom_jvp
def _expi_rule(x):
    positive = x > 0
    pos = _ei_positive(jnp.where(positive, x, 1.0))
    neg = -_expn_value(jnp.ones_like(x), jnp.where(positive, 1.0, -x))
    out = jnp.where(positive, pos, neg)
    return jnp.where(x == 0, -np.inf, jnp.where(jnp.isposinf(x), np.inf, out))


@_expi_rule.defjvp
def _expi_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return _expi_rule(x), t * jnp.exp(x) / x


_expi = library_jit(_expi_rule)


def expi(x):
    """The exponential integral Ei(x) = -PV integral_-x^inf e^-t / t dt for real x, with
    Ei(x) = -E_1(-x) for x < 0 and Ei(0) = -inf (as SciPy; JAX 0.10.2 gives NaN at 0).
    Differentiable: Ei'(x) = e^x / x.

    >>> print(round(float(expi(1.0)), 6))
    1.895118
    """
    x, = inexact_args("expi", x)
    return _expi(x)


# ----- erfcx ------------------------------------------------------------------------------------

_ERFCX_FRACTION_ABOVE = 2.0


def _erfcx_value(x):
    # below 2 (and for every negative x) e^(x^2) erfc(x) directly: erfc is not small there, and
    # the rounding of x^2 costs at most ~4 eps; above, the continued fraction
    # erfcx(x) = 1 / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))), which cannot underflow
    direct = x < _ERFCX_FRACTION_ABOVE
    xd = jnp.where(direct, x, 0.0)
    near = jnp.exp(xd * xd) * lax.erfc(xd)
    xf = jnp.where(direct, _ERFCX_FRACTION_ABOVE, x)
    t = _loop(_CF_DEPTH, lambda i, t: xf + ((_CF_DEPTH - i) / 2) / t, xf)
    far = float(1 / np.sqrt(np.pi)) / t
    return jnp.where(direct, near, jnp.where(jnp.isposinf(x), 0.0, far))


@custom_jvp
def _erfcx_rule(x):
    return _erfcx_value(x)


@_erfcx_rule.defjvp
def _erfcx_jvp(primals, tangents):
    x, = primals
    t, = tangents
    y = _erfcx_rule(x)
    return y, t * (2 * x * y - float(2 / np.sqrt(np.pi)))


_erfcx = library_jit(_erfcx_rule)


def erfcx(x):
    """The scaled complementary error function e^(x^2) erfc(x), without the overflow and underflow
    of that product (~1 / (x sqrt(pi)) for large x; inf below x ~ -26.6 in float64, as SciPy).
    Differentiable: erfcx'(x) = 2 x erfcx(x) - 2 / sqrt(pi).

    >>> print(round(float(erfcx(1.0)), 6))
    0.427584
    """
    x, = inexact_args("erfcx", x)
    return _erfcx(x)

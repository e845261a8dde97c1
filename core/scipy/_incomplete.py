"""The regularized incomplete gamma and beta functions (`gammainc`, `gammaincc`, `betainc`).

Each is an elementwise iteration run over the whole array at once: a `while_loop` that stops when
every element has converged (or at an iteration cap), with the elements outside an algorithm's
region fed a harmless stand-in so they converge at once. Derivatives: the one in `x` is the
closed-form density; those in the shape parameters come from forward-mode differentiation of the
same iteration (JAX leaves betainc's undefined; here they are finite and correct where the
iteration converges).
"""
import functools

import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from ._util import inexact_args


def _eps_tiny(x):
    info = dtypes.finfo(x.dtype)
    return float(info.eps), float(info.tiny) * 1e3  # tiny * 1e3 keeps 1 / tiny finite


def _max_iter(x):
    # the series and continued fractions take O(sqrt(a)) steps near x ~ a; the caps cover shape
    # parameters up to ~1e4 (float64) and ~1e5 (float32, fewer digits wanted)
    return 2000 if x.dtype == dtypes.float64 else 700


def _changed(new, old, eps):
    """Elements whose value still moves by more than eps relative (NaN counts as settled)."""
    return jnp.abs(new - old) > eps * jnp.abs(new)


def _iterate_value(init, step, params):
    """Run `state = step(state, *params)` until the result (`state[-1]`) stops changing in every
    element, or an iteration cap."""
    eps, _ = _eps_tiny(params[0])
    state = init(*params)

    def cond(carry):
        i, _, moving = carry
        return jnp.logical_and(i < _max_iter(params[0]), jnp.any(moving))

    def body(carry):
        i, s, _ = carry
        s2 = step(s, *params)
        return i + 1, s2, _changed(s2[-1], s[-1], eps)

    return lax.while_loop(cond, body, (jnp.int32(0), state, jnp.ones_like(state[-1], dtype=bool)))[1][-1]


@functools.partial(custom_jvp, nondiff_argnums=(0, 1))
def _iterate(init, step, *params):
    return _iterate_value(init, step, params)


def _iterate_jvp(init, step, primals, tangents):
    """Forward mode run inside the loop, so that it also waits for the tangent of the result to
    settle: differentiating the plain loop would stop when the value converges, which can be far
    too early for the derivative (the fractions terminate exactly at integer shape parameters,
    while their derivatives do not)."""
    from ..autodiff import jvp
    eps, _ = _eps_tiny(primals[0])
    state, dstate = jvp(lambda *p: init(*p), tuple(primals), tuple(tangents))

    def cond(carry):
        i, _, _, moving = carry
        return jnp.logical_and(i < _max_iter(primals[0]), jnp.any(moving))

    def body(carry):
        i, s, ds, _ = carry
        s2, ds2 = jvp(lambda s_, *p: step(s_, *p), (s, *primals), (ds, *tangents))
        moving = _changed(s2[-1], s[-1], eps) | _changed(ds2[-1], ds[-1], eps)
        return i + 1, s2, ds2, moving

    init_carry = (jnp.int32(0), state, dstate, jnp.ones_like(state[-1], dtype=bool))
    _, s, ds, _ = lax.while_loop(cond, body, init_carry)
    return s[-1], ds[-1]


_iterate.defjvp(_iterate_jvp)


def _guard(v, tiny):
    return jnp.where(jnp.abs(v) < tiny, tiny, v)


# ----- incomplete gamma -----------------------------------------------------------------------

# P(a, x) = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n)); converges fast for x < a + 1.
# state: (a + n, the n-th term, the partial sum)

def _series_init(a, x):
    one = jnp.ones_like(x)
    return a, one, one


def _series_step(s, a, x):
    ap, term, total = s
    ap = ap + 1
    term = term * x / ap
    return ap, term, total + term


def _igamma_series(a, x):
    total = _iterate(_series_init, _series_step, a, x)
    return total * jnp.exp(a * jnp.log(x) - x - lax.lgamma(a + 1))


# Q(a, x) by its continued fraction, evaluated by the modified Lentz method; converges fast for
# x >= a + 1. state: (step i, denominator b_i, Lentz's C and D, the convergent h)

def _fraction_init(a, x):
    _, tiny = _eps_tiny(x)
    b = x + 1 - a
    d = 1 / _guard(b, tiny)
    return jnp.zeros_like(x), b, jnp.full_like(x, 1 / tiny), d, d


def _fraction_step(s, a, x):
    _, tiny = _eps_tiny(x)
    i, b, c, d, h = s
    i = i + 1
    an = -i * (i - a)
    b = b + 2
    d = 1 / _guard(an * d + b, tiny)
    c = _guard(b + an / c, tiny)
    return i, b, c, d, h * d * c


def _igammac_fraction(a, x):
    h = _iterate(_fraction_init, _fraction_step, a, x)
    return h * jnp.exp(a * jnp.log(x) - x - lax.lgamma(a))


def _igamma_both(a, x):
    """(P, Q) for valid a > 0, 0 < x < inf, each from the algorithm accurate for it."""
    series = x < a + 1
    p = _igamma_series(jnp.where(series, a, 1.0), jnp.where(series, x, 0.5))
    q = _igammac_fraction(jnp.where(series, 1.0, a), jnp.where(series, 2.0, x))
    return jnp.where(series, p, 1 - q), jnp.where(series, 1 - p, q)


def _igamma_edges(a, x, value, upper):
    """SciPy's values off the interior: NaN for a < 0, x < 0 or NaN inputs; a == 0 is the limit
    (P = 1 for x > 0, NaN at x == 0); x == 0 gives P = 0, x == inf gives P = 1."""
    p0, p_inf = (1.0, 0.0) if upper else (0.0, 1.0)
    out = jnp.where(x == 0, p0, jnp.where(jnp.isinf(x), p_inf, value))
    out = jnp.where((a == 0) & (x > 0), p_inf, out)
    bad = (a < 0) | (x < 0) | ((a == 0) & (x == 0)) | jnp.isnan(a) | jnp.isnan(x)
    return jnp.where(bad, np.nan, out)


def _interior(a, x):
    inside = (a > 0) & (x > 0) & jnp.isfinite(x)
    return jnp.where(inside, a, 1.0), jnp.where(inside, x, 1.0)


def _igamma_value(a, x, upper):
    sa, sx = _interior(a, x)
    p, q = _igamma_both(sa, sx)
    return _igamma_edges(a, x, q if upper else p, upper)


def _igamma_jvp(upper, primals, tangents):
    from ..autodiff import jvp
    a, x = primals
    ta, tx = tangents
    out, d_da = jvp(lambda a_: _igamma_value(a_, x, upper), (a,), (jnp.ones_like(a),))
    sa, sx = _interior(a, x)
    # d/dx P = x^(a-1) e^-x / Gamma(a): the gamma density
    density = jnp.exp((sa - 1) * jnp.log(sx) - sx - lax.lgamma(sa))
    density = jnp.where((a > 0) & (x > 0) & jnp.isfinite(x), density, 0.0)
    d_dx = -density if upper else density
    return out, ta * d_da + tx * d_dx


@custom_jvp
def _gammainc(a, x):
    return _igamma_value(a, x, upper=False)


@custom_jvp
def _gammaincc(a, x):
    return _igamma_value(a, x, upper=True)


_gammainc.defjvp(lambda primals, tangents: _igamma_jvp(False, primals, tangents))
_gammaincc.defjvp(lambda primals, tangents: _igamma_jvp(True, primals, tangents))


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x) = gamma(a, x) / Gamma(a), for
    a > 0, x >= 0 (NaN outside, as SciPy; P(0, x > 0) = 1). Differentiable in x (the gamma
    density) and in a.

    >>> print(round(float(gammainc(2.0, 3.0)), 6))
    0.800852
    """
    a, x = inexact_args("gammainc", a, x)
    return _gammainc(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x), computed directly
    (so small upper tails keep their relative accuracy).

    >>> print(round(float(gammaincc(2.0, 3.0)), 6))
    0.199148
    """
    a, x = inexact_args("gammaincc", a, x)
    return _gammaincc(a, x)


# ----- incomplete beta ------------------------------------------------------------------------

# I_x(a, b) by its continued fraction (modified Lentz, two partial fractions per step), accurate
# for x < (a + 1) / (a + b + 2). state: (step m, Lentz's C and D, the convergent h)

def _beta_fraction_init(a, b, x):
    _, tiny = _eps_tiny(x)
    d = 1 / _guard(1 - (a + b) * x / (a + 1), tiny)
    return jnp.zeros_like(x), jnp.ones_like(x), d, d


def _beta_fraction_step(s, a, b, x):
    _, tiny = _eps_tiny(x)
    m, c, d, h = s
    m = m + 1
    m2 = 2 * m
    even = m * (b - m) * x / ((a + m2 - 1) * (a + m2))
    d = 1 / _guard(1 + even * d, tiny)
    c = _guard(1 + even / c, tiny)
    h = h * d * c
    odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))
    d = 1 / _guard(1 + odd * d, tiny)
    c = _guard(1 + odd / c, tiny)
    return m, c, d, h * d * c


def _ibeta_fraction(a, b, x):
    h = _iterate(_beta_fraction_init, _beta_fraction_step, a, b, x)
    log_front = a * jnp.log(x) + b * jnp.log1p(-x) - _betaln(a, b)
    return jnp.exp(log_front) * h / a


def _betaln(a, b):
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def _betainc_value(a, b, x):
    inside = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    sa, sb, sx = jnp.where(inside, a, 1.0), jnp.where(inside, b, 1.0), jnp.where(inside, x, 0.5)
    # the fraction converges fast below the mean-ish point; above it use I_x(a,b) = 1 - I_{1-x}(b,a)
    flip = sx > (sa + 1) / (sa + sb + 2)
    fa, fb, fx = jnp.where(flip, sb, sa), jnp.where(flip, sa, sb), jnp.where(flip, 1 - sx, sx)
    frac = _ibeta_fraction(fa, fb, fx)
    value = jnp.where(flip, 1 - frac, frac)
    # SciPy's edges: x = 0 -> 0, x = 1 -> 1; a == 0 (b > 0) is the point mass at 0, b == 0 at 1
    out = jnp.where(x == 0, 0.0, jnp.where(x == 1, 1.0, value))
    out = jnp.where((a == 0) & (b > 0), 1.0, out)
    out = jnp.where((b == 0) & (a > 0), 0.0, out)
    bad = ((a < 0) | (b < 0) | ((a == 0) & (b == 0)) | (x < 0) | (x > 1)
           | jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(x))
    return jnp.where(bad, np.nan, out)


@custom_jvp
def _betainc(a, b, x):
    return _betainc_value(a, b, x)


@_betainc.defjvp
def _betainc_jvp(primals, tangents):
    from ..autodiff import jvp
    a, b, x = primals
    ta, tb, tx = tangents
    # one forward pass per shape parameter with a unit tangent: the result is then linear in
    # (ta, tb) through plain products, which reverse mode can transpose (a while loop cannot be)
    f = lambda a_, b_: _betainc_value(a_, b_, x)  # noqa: E731
    one, zero = jnp.ones_like(a), jnp.zeros_like(a)
    out, d_da = jvp(f, (a, b), (one, zero))
    _, d_db = jvp(f, (a, b), (zero, one))
    inside = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    sa, sb, sx = jnp.where(inside, a, 1.0), jnp.where(inside, b, 1.0), jnp.where(inside, x, 0.5)
    # d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b): the beta density
    density = jnp.exp((sa - 1) * jnp.log(sx) + (sb - 1) * jnp.log1p(-sx) - _betaln(sa, sb))
    return out, ta * d_da + tb * d_db + tx * jnp.where(inside, density, 0.0)


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) for a, b > 0, 0 <= x <= 1 (NaN outside,
    as SciPy). Differentiable in x (the beta density) and in a and b.

    >>> print(round(float(betainc(2.0, 3.0, 0.4)), 6))
    0.5248
    """
    a, b, x = inexact_args("betainc", a, b, x)
    return _betainc(a, b, x)

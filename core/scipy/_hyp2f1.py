"""Gauss's hypergeometric function `hyp2f1(a, b, c, x)` for real arguments, x <= 1.

Every element is reduced to power series in a variable of size at most 1/2, each summed for a fixed
number of terms (`_TERMS`) in one loop over the whole array (each element reads the branch selected
for it, the others get a harmless stand-in):
* a or b a non-positive integer (a polynomial): the terminating series in x itself, for every x
  (SciPy's values for x > 1 too).
* 0 <= x <= 1/2: the series in x.
* x < 0: Pfaff's transformation F(a, b; c; x) = (1 - x)^-a F(a, c - b; c; z), z = x / (x - 1) in (0, 1),
  with 1 - z = 1 / (1 - x) formed directly (no cancellation for x -> -inf).
* z (= x, or the Pfaff variable) in (1/2, 1): the connection to 1 - z (Abramowitz & Stegun 15.3.6),
  F = A F(a, b; 1 - d; 1 - z) + B (1 - z)^d F(c - a, c - b; 1 + d; 1 - z), d = c - a - b,
  A = G(c) G(d) / (G(c - a) G(c - b)), B = G(c) G(-d) / (G(a) G(b)).
  Where d is within sqrt(eps) of an integer m the two terms' poles cancel, and the limit formula is
  used instead (A&S 15.3.10 for m = 0, 15.3.11 for m > 0, a finite sum plus a series with digammas,
  which run as recurrences psi(z + 1) = psi(z) + 1/z); m < 0 first goes through Euler's
  transformation F = (1 - z)^d F(c - a, c - b; c; z), whose d is -m.
* x = 1: Gauss's sum G(c) G(c - a - b) / (G(c - a) G(c - b)) where c - a - b > 0, else inf;
  x > 1 (the branch cut) gives inf unless the series terminates, as SciPy's; c a non-positive integer
  is a pole (inf) unless a terminating series ends before it; a = 0 or b = 0 gives 1.
The gamma ratios are exp of log-gamma sums with the signs restored (a pole in a denominator gives 0).

Accuracy (float64, measured against SciPy and mpmath): ~1e-13 relative for |a|, |b|, |c| up to ~20
away from the cancellations below. Limits: parameters beyond ~50 need more terms than `_TERMS`
(the series' terms grow before they fall); d within ~1e-8 of an integer without being one loses up
to ~1e-8 (both formulas cancel there: eps / |d - m| and |d - m|); polynomials of degree above
`_TERMS - 1` are truncated; the sums cancel where F is much smaller than its terms (near its zeros).

Derivatives (custom_jvp): in x the closed form dF/dx = a b / c F(a + 1, b + 1; c + 1; x); in a, b and c
forward-mode differentiation of the evaluation itself (exact away from the integer-d limit points,
where the limit formula's parameter derivative holds c - a - b fixed).
"""
import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..autodiff import jvp
from ..custom_derivatives import custom_jvp
from ._util import inexact_args, library_jit

_TERMS = 300
_EULER = 0.57721566490153286061


def _is_pole(v):
    """True at the non-positive integers (the poles of Gamma)."""
    return (v <= 0) & (v == jnp.floor(v))


def _gamma_ratio(numerators, denominators):
    """prod Gamma(n) / prod Gamma(d), through log-gammas with the signs restored; 0 where a
    denominator is at a pole (the reciprocal gamma function's zeros)."""
    def safe(v):
        return jnp.where(_is_pole(v), 1.0, v)

    def sign(v):
        odd = jnp.fmod(jnp.floor(v), 2.0) != 0
        return jnp.where((v < 0) & odd, -1.0, 1.0)

    # one lgamma over the stacked arguments: each lgamma is a long expansion in the compiled program
    logs = lax.lgamma(jnp.stack([safe(v) for v in list(numerators) + list(denominators)]))
    log_total = sum(logs[i] for i in range(len(numerators))) - sum(
        logs[len(numerators) + i] for i in range(len(denominators)))
    total_sign = 1.0
    for v in list(numerators) + list(denominators):
        total_sign = total_sign * sign(v)
    zero = False
    for v in denominators:
        zero = zero | _is_pole(v)
    return jnp.where(zero, 0.0, total_sign * jnp.exp(log_total))


def _series(a, b, c, z):
    """sum_k (a)_k (b)_k / ((c)_k k!) z^k, _TERMS terms, and a bound on its error: rounding
    (eps times the sum of the terms' magnitudes) plus the truncated tail (the last term over 1 - |z|).
    Once a term is 0 (a terminating series) it stays 0, so a pole of (c)_k after the end does no harm."""
    dt = z.dtype

    def step(i, carry):
        total, magnitude, term = carry
        k = lax.convert_element_type(i, dt)
        ended = term == 0
        nxt = term * ((a + k) * (b + k) * z) / (jnp.where(ended, 1.0, c + k) * (k + 1))
        nxt = jnp.where(ended, 0.0, nxt)
        return total + nxt, magnitude + jnp.abs(nxt), nxt

    one = jnp.ones_like(z)
    total, magnitude, before_last = lax.fori_loop(0, _TERMS - 1, step, (one, one, one))
    total, magnitude, last = step(_TERMS - 1, (total, magnitude, before_last))
    return total, float(dtypes.finfo(dt).eps) * magnitude + _tail(last, before_last)


def _tail(last, before_last):
    """A bound on what follows a series' last term, from the ratio of its last two terms (inf
    while the terms still grow; 0 once they are 0)."""
    ratio = jnp.abs(last) / jnp.where(before_last == 0, 1.0, jnp.abs(before_last))
    tail = jnp.where(ratio < 1, jnp.abs(last) * ratio / jnp.where(ratio < 1, 1 - ratio, 1.0), np.inf)
    return jnp.where(last == 0, 0.0, tail)


def _integer_d_limit(a, b, m, s):
    """F(a, b; a + b + m; 1 - s) for an integer m >= 0 (A&S 15.3.11; 15.3.10 is its m = 0 case)."""
    dt = s.dtype
    ab_m = a + b + m
    log_s = jnp.log(s)

    def step(i, carry):
        finite, f_term, total, magnitude, term, psi_1, psi_m1, psi_a, psi_b = carry
        n = lax.convert_element_type(i, dt)
        # the finite part: sum_(n < m) (a)_n (b)_n / (n! (1 - m)_n) s^n
        finite = finite + jnp.where(n < m, f_term, 0.0)
        more = n + 1 < m
        f_term = jnp.where(more, f_term * (a + n) * (b + n) * s / ((n + 1) * jnp.where(more, 1 - m + n, 1.0)), 0.0)
        # the series: (a + m)_n (b + m)_n / (n! (n + m)!) s^n [log s - psi(n + 1) - psi(n + m + 1)
        #                                                     + psi(a + n + m) + psi(b + n + m)]
        piece = term * (log_s - psi_1 - psi_m1 + psi_a + psi_b)
        total, magnitude = total + piece, magnitude + jnp.abs(piece)
        term = term * (a + m + n) * (b + m + n) * s / ((n + 1) * (n + m + 1))
        return (finite, f_term, total, magnitude, term, psi_1 + 1 / (n + 1), psi_m1 + 1 / (n + m + 1),
                psi_a + 1 / (a + m + n), psi_b + 1 / (b + m + n))

    zero, one = jnp.zeros_like(s), jnp.ones_like(s)
    start = (zero, one, zero, zero, jnp.exp(-lax.lgamma(m + 1)), jnp.full_like(s, -_EULER), lax.digamma(m + 1),
             lax.digamma(a + m), lax.digamma(b + m))
    carry = lax.fori_loop(0, _TERMS - 1, step, start)
    before_last = carry[4]
    finite, _, total, magnitude, last, *_ = step(_TERMS - 1, carry)
    first = jnp.where(m > 0, _gamma_ratio([jnp.where(m > 0, m, 1.0), ab_m], [a + m, b + m]), 0.0) * finite
    sign = jnp.where(jnp.fmod(m, 2.0) != 0, -1.0, 1.0)
    factor = s ** m * _gamma_ratio([ab_m], [a, b])
    eps = float(dtypes.finfo(dt).eps)
    # the finite part's rounding is taken as eps |first|, and the tail of the series from its last
    # terms, times the bracket's size (its digammas grow like a logarithm)
    bracket = 1 + jnp.abs(log_s) + 4 * jnp.log(jnp.abs(a) + jnp.abs(b) + m + _TERMS)
    bound = eps * (jnp.abs(first) + jnp.abs(factor) * magnitude) + jnp.abs(factor) * bracket * _tail(last, before_last)
    return first - sign * factor * total, bound


def _polynomial_in_s(p, q, c, s):
    """F(p, q; c; 1 - s) for p = -N a non-positive integer, as a polynomial in s:
    sum_(j <= N) C(N, j) (q)_j (c - q)_(N - j) / (c)_N s^j (the connection formula to 1 - z with its
    poles divided out), summed by Horner's rule from j = N down; exact at s = 0 (z = 1) and without
    the cancellation of the series in z near 1. The coefficients run backwards:
    coef_N = (q)_N / (c)_N, coef_(j-1) = coef_j j (c - q + N - j) / ((N - j + 1) (q + j - 1))."""
    dt = s.dtype
    n = -p

    def leading(i, coef):
        k = lax.convert_element_type(i, dt)
        return jnp.where(k < n, coef * (q + k) / (c + k), coef)

    coef = lax.fori_loop(0, _TERMS, leading, jnp.ones_like(s))

    def horner(i, carry):
        acc, coef = carry
        j = n - lax.convert_element_type(i, dt)  # the power whose coefficient `coef` is
        active = j >= 1
        # q + j - 1 != 0 for j <= N: q is not a non-positive integer above -N (p is the shorter one)
        nxt = coef * j * (c - q + n - j) / jnp.where(active, (n - j + 1) * (q + j - 1), 1.0)
        return jnp.where(active, acc * s + nxt, acc), jnp.where(active, nxt, coef)

    def horner_magnitude(i, carry):
        acc, magnitude, coef = carry
        acc, nxt = horner(i, (acc, coef))
        active = n - lax.convert_element_type(i, dt) >= 1
        return acc, jnp.where(active, magnitude * jnp.abs(s) + jnp.abs(nxt), magnitude), nxt

    total, magnitude, _ = lax.fori_loop(0, _TERMS, horner_magnitude, (coef, jnp.abs(coef), coef))
    return total, float(dtypes.finfo(dt).eps) * magnitude


def _hyp2f1_value(a, b, c, x):
    tol = float(np.sqrt(dtypes.finfo(x.dtype).eps))
    # a terminating series: put the parameter that ends it first (the shorter one if both do)
    poly_a, poly_b = _is_pole(a), _is_pole(b)
    swap = poly_b & (~poly_a | (b > a))
    a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
    polynomial = poly_a | poly_b
    degree = jnp.where(polynomial, -a, 0.0)

    # Pfaff for x < 0 (not a polynomial in x): F = (1 - x)^-a F(a, c - b; c; z), z = x / (x - 1),
    # with 1 - z = 1 / (1 - x) formed directly (no cancellation for x -> -inf)
    neg = (x < 0) & ~polynomial
    # of Pfaff's two forms (a and b swap), the one that terminates if one does
    swap = neg & _is_pole(c - a) & ~_is_pole(c - b)
    a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
    z = jnp.where(neg, x / (x - 1), x)
    s = jnp.where(neg, 1 / (1 - x), 1 - x)
    b1 = jnp.where(neg, c - b, b)
    pfaff = jnp.where(neg, (1 - x) ** jnp.where(neg, -a, 0.0), 1.0)
    poly_z = polynomial | _is_pole(b1)  # terminating in z (b1 first when it is the one)
    pa, pb = jnp.where(polynomial, a, jnp.where(poly_z, b1, a)), jnp.where(polynomial, b, jnp.where(poly_z, a, b1))

    # two candidates per element, the one with the smaller error bound wins: the series in z, and
    # a transformation to s = 1 - z (a polynomial in s, the connection formula, or its integer-d limit)
    d = c - a - b1
    m_signed = jnp.round(d)
    integer_d = jnp.abs(d - m_signed) < tol
    general = ~poly_z & ~integer_d
    limit = ~poly_z & integer_d
    # integer d < 0: Euler's transformation first, F = s^d F(c - a, c - b1; c; z), with d' = -d
    euler = limit & (m_signed < 0)
    a2, b2 = jnp.where(euler, c - a, a), jnp.where(euler, c - b1, b1)
    euler_factor = jnp.where(euler, s ** jnp.where(euler, m_signed, 0.0), 1.0)
    # ... which may terminate
    poly_2 = limit & (_is_pole(a2) | _is_pole(b2))
    swap2 = _is_pole(b2) & (~_is_pole(a2) | (b2 > a2))
    a2, b2 = jnp.where(swap2, b2, a2), jnp.where(swap2, a2, b2)
    limit_series = limit & ~poly_2
    c_ok = ~_is_pole(c) | polynomial  # a c pole is answered below; after a polynomial's end it does no harm
    safe_c = jnp.where(c_ok, c, 1.5)

    # the series in z (beyond z = 1 only polynomials in x, which terminate)
    series_ok = (z < 1) | polynomial
    direct, direct_bound = _series(jnp.where(series_ok, pa, 0.25), jnp.where(series_ok, pb, 0.5), safe_c,
                                   jnp.where(series_ok, z, 0.25))

    # polynomials in s (in x, or in z after Pfaff or Euler)
    in_s = poly_z | poly_2
    qa = jnp.where(in_s, jnp.where(poly_2, a2, pa), -1.0)
    qb = jnp.where(in_s, jnp.where(poly_2, b2, pb), 0.5)
    by_s, by_s_bound = _polynomial_in_s(qa, qb, safe_c, jnp.where(in_s, s, 0.25))

    # the general connection formula (stand-ins elsewhere: a = 1/4, b = 1/2, c = 3/2, d = 3/4, s = 1/4)
    ga, gb, gc = (jnp.where(general, v, w) for v, w in ((a, 0.25), (b1, 0.5), (safe_c, 1.5)))
    gd, gs = jnp.where(general, d, 0.75), jnp.where(general & (s > 0), s, 0.25)
    f1, f1_bound = _series(ga, gb, 1 - gd, gs)
    f2, f2_bound = _series(gc - ga, gc - gb, 1 + gd, gs)
    first = _gamma_ratio([gc, gd], [gc - ga, gc - gb])
    second = _gamma_ratio([gc, -gd], [ga, gb]) * gs ** gd
    connection = first * f1 + second * f2
    connection_bound = jnp.abs(first) * f1_bound + jnp.abs(second) * f2_bound

    # the integer-d limit, m = |round(d)| >= 0
    la, lb = jnp.where(limit_series, a2, 0.25), jnp.where(limit_series, b2, 0.5)
    lm, ls = jnp.where(limit_series, jnp.abs(m_signed), 1.0), jnp.where(limit_series & (s > 0), s, 0.25)
    limit_value, limit_bound = _integer_d_limit(la, lb, lm, ls)

    transformed = jnp.where(in_s, by_s, jnp.where(general, connection, limit_value))
    transformed_bound = jnp.where(in_s, by_s_bound, jnp.where(general, connection_bound, limit_bound))
    transformed_bound = jnp.where(jnp.isnan(transformed_bound) | (~in_s & (s <= 0)), np.inf, transformed_bound)
    use_series = series_ok & (direct_bound <= jnp.abs(euler_factor) * transformed_bound)
    value = pfaff * jnp.where(use_series, direct, euler_factor * transformed)
    # x = 1: Gauss's sum where it converges, else +-inf (the sign of the dominant term); x > 1: the
    # branch cut (SciPy gives inf)
    gauss = _gamma_ratio([jnp.where(_is_pole(c), 1.0, c), jnp.where(d > 0, d, 1.0)], [c - a, c - b])
    blow_up = _gamma_ratio([jnp.where(_is_pole(c), 1.0, c), jnp.where(d < 0, -d, 1.0)], [a, b])
    # (SciPy gives +inf at d = 0, where the logarithmic divergence has the sign of G(c) / (G(a) G(b)))
    at_one = jnp.where(d > 0, gauss, jnp.where((blow_up < 0) & (d < 0), -np.inf, np.inf))
    value = jnp.where((x == 1) & ~polynomial, at_one, value)
    value = jnp.where((x > 1) & ~polynomial, np.inf, value)
    # c a pole: inf, unless the series ends first (degree <= -c)
    c_pole = _is_pole(c) & ~(polynomial & (degree <= -c))
    value = jnp.where(c_pole, np.inf, value)
    return jnp.where((a == 0) | (b == 0), 1.0, value)


@custom_jvp
def _hyp2f1_rule(a, b, c, x):
    return _hyp2f1_value(a, b, c, x)


@_hyp2f1_rule.defjvp
def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = primals
    ta, tb, tc, tx = tangents
    value = _hyp2f1_rule(a, b, c, x)
    slope_x = a * b / c * _hyp2f1_rule(a + 1, b + 1, c + 1, x)
    _, in_params = jvp(lambda a, b, c: _hyp2f1_value(a, b, c, x), (a, b, c), (ta, tb, tc))
    return value, slope_x * tx + in_params


_hyp2f1 = library_jit(_hyp2f1_rule)


def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k! for real
    arguments, x <= 1 (its analytic continuation below x = -1, as SciPy's; x > 1 gives inf unless
    the series terminates). About 1e-13 relative to SciPy for parameters up to ~20 (see the module
    notes for the limits). Differentiable in all four arguments.

    >>> print(round(float(hyp2f1(1.0, 1.0, 2.0, -1.0)), 5))   # log(2), in float32
    0.69315
    """
    a, b, c, x = inexact_args("hyp2f1", a, b, c, x)
    return _hyp2f1(a, b, c, x)

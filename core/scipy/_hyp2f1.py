"""Gauss's hypergeometric function `hyp2f1(a, b, c, x)` for real arguments, x <= 1.

Every element is reduced to power series in a variable of size at most 1/2 (or polynomials), all
summed in one loop of `_TERMS` steps over a stack of rows (`_sum_rows`: one compiled loop body
instead of one per formula), each element reading the branch selected for it while the other
rows get a harmless stand-in:
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
  transformation F = (1 - z)^d F(c - a, c - b; c; z), whose d is -m. A polynomial whose z is near 1
  is summed in powers of 1 - z (the connection formula with its poles divided out) by Horner's rule.
* x = 1: Gauss's sum G(c) G(c - a - b) / (G(c - a) G(c - b)) where c - a - b > 0, else inf;
  x > 1 (the branch cut) gives inf unless the series terminates, as SciPy's; c a non-positive integer
  is a pole (inf) unless a terminating series ends before it; a = 0 or b = 0 gives 1.
Every gamma ratio comes from one lgamma over all their arguments stacked (signs restored; a pole in
a denominator gives 0), and the digammas from one digamma call: each is a long expansion in the
compiled program.

Accuracy (float64, measured against SciPy and mpmath): ~1e-13 relative for |a|, |b|, |c| up to ~20
away from the cancellations below. Limits: parameters beyond ~50 need more terms than `_TERMS`
(the series' terms grow before they fall); d within ~1e-8 of an integer without being one loses up
to ~1e-8 (both formulas cancel there: eps / |d - m| and |d - m|); polynomials of degree above
`_TERMS - 1` are truncated; the sums cancel where F is much smaller than its terms (near its zeros).

Derivatives (custom_jvp), in all four arguments as JAX's: in x the closed form
dF/dx = a b / c F(a + 1, b + 1; c + 1; x), exact. F has no closed-form derivative in a, b or c (JAX
sums the differentiated series in x, which holds only for |x| < 1); here they are central differences
of order 6 of this evaluation in each parameter, evaluated together with the value and the x
derivative as one stacked call. F is analytic in a, b and c (poles only at c = 0, -1, ...), and the
steps are h = eps^(1/7) / (1 + |log|1 - x||) (F varies like (1 - x)^-a), at most 1/50 of c's distance
to a pole: the truncation (h L)^6 / 140 and the rounding ~200 eps / (h L) leave ~1e-10 relative in
float64 and ~1e-4 in float32 (every formula's accuracy is the value's, including integer c - a - b,
where the limit formula holds d fixed and forward differentiation of it would not see d change).
"""
import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from ._util import inexact_args, library_jit

_TERMS = 300
_EULER = 0.57721566490153286061


def _is_pole(v):
    """True at the non-positive integers (the poles of Gamma)."""
    return (v <= 0) & (v == jnp.floor(v))


def _gamma_ratios(ratios):
    """[prod Gamma(n) / prod Gamma(d) for (n, d) in ratios], through one lgamma over all the
    arguments stacked, with the signs restored; 0 where a denominator is at a pole (the reciprocal
    gamma function's zeros). Numerators must avoid the poles (callers put 1 there)."""
    args = [v for nums, dens in ratios for v in (*nums, *dens)]
    stacked = jnp.stack(args)
    pole = _is_pole(stacked)
    logs = lax.lgamma(jnp.where(pole, 1.0, stacked))
    # Gamma(v) < 0 for v in (-1, 0), (-3, -2), ...: floor(v) odd
    negative = ((stacked < 0) & (jnp.fmod(jnp.floor(stacked), 2.0) != 0)).astype(stacked.dtype)
    out, i = [], 0
    for nums, dens in ratios:
        n, m = len(nums), len(dens)
        # sums of slices rather than reductions: they fuse into one kernel with their consumers
        log_total, flips, zero = 0.0, 0.0, False
        for j in range(i, i + n + m):
            log_total = log_total + (logs[j] if j < i + n else -logs[j])
            flips = flips + negative[j]
            if j >= i + n:
                zero = zero | pole[j]
        sign = jnp.where(jnp.fmod(flips, 2.0) != 0, -1.0, 1.0)
        out.append(jnp.where(zero, 0.0, sign * jnp.exp(log_total)))
        i += n + m
    return out


def _tail(last, before_last):
    """A bound on what follows a series' last term, from the ratio of its last two terms (inf
    while the terms still grow; 0 once they are 0)."""
    ratio = jnp.abs(last) / jnp.where(before_last == 0, 1.0, jnp.abs(before_last))
    tail = jnp.where(ratio < 1, jnp.abs(last) * ratio / jnp.where(ratio < 1, 1 - ratio, 1.0), np.inf)
    return jnp.where(last == 0, 0.0, tail)


def _sum_rows(alpha, beta, gamma, v, sigma, log_s, weighted, start, psi0, n_stop):
    """The one loop of the module. Row r (every argument is stacked by rows) runs the terms
    t_0 = start, t_(k+1) = t_k (alpha + k) (beta + k) v / ((gamma + k) (k + 1)) for k + 1 < n_stop and
    accumulates total_(k+1) = total_k sigma + t_(k+1) (log_s - psi_(k+1)), total_0 = start (log_s - psi0),
    where psi_(k+1) = psi_k + 1/(k + 1) + 1/(gamma + k) - 1/(alpha + k) - 1/(beta + k) on weighted rows
    (the digamma sums of A&S 15.3.10-11; `weighted` is 1 there, else 0) and stays 0 elsewhere (with
    log_s = 1). So sigma = 1 sums a
    series, sigma = s with v = 1 runs Horner's rule over coefficients given from the top, and sigma = 0
    keeps the last term (a Pochhammer ratio). A term 0 stays 0 (a terminating series: a pole of
    (gamma)_k after its end does no harm).

    Returns the totals, their magnitudes (the same recurrence on absolute values, for rounding
    bounds) and a bound on the truncated tail of each series."""
    dt = v.dtype
    weighted = weighted != 0

    def step(i, carry):
        total, magnitude, term, _, psi = carry
        k = lax.convert_element_type(i, dt)
        live = k + 1 < n_stop
        on = live & (term != 0)
        nxt = jnp.where(on, term * ((alpha + k) * (beta + k) * v) / (jnp.where(on, gamma + k, 1.0) * (k + 1)), 0.0)
        psi = jnp.where(weighted, psi + (1 / (k + 1) + 1 / (gamma + k) - 1 / (alpha + k) - 1 / (beta + k)), psi)
        piece = nxt * (log_s - psi)
        total = jnp.where(live, total * sigma + piece, total)
        magnitude = jnp.where(live, magnitude * jnp.abs(sigma) + jnp.abs(piece), magnitude)
        return total, magnitude, nxt, term, psi

    first = start * (log_s - psi0)
    total, magnitude, last, before_last, _ = lax.fori_loop(
        0, _TERMS - 1, step, (first, jnp.abs(first), start, start, psi0))
    return total, magnitude, _tail(last, before_last)


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

    # the series in z (row 0; beyond z = 1 only polynomials in x, which terminate)
    series_ok = (z < 1) | polynomial
    row0 = (jnp.where(series_ok, pa, 0.25), jnp.where(series_ok, pb, 0.5), safe_c, jnp.where(series_ok, z, 0.25))

    # rows 1 and 2: the element's transformation to s = 1 - z, one of
    # * a polynomial in s (in x, or in z after Pfaff or Euler), F(-N, q; c; z): row 1 the leading
    #   coefficient (q)_N / (c)_N, row 2 Horner's rule over sum_j C(N, j) (q)_j (c - q)_(N - j) s^j
    #   scaled by it (the coefficients run down: ratio (N - i)(c - q + i) / ((i + 1)(q + N - 1 - i)))
    in_s = poly_z | poly_2
    qa = jnp.where(in_s, jnp.where(poly_2, a2, pa), -1.0)  # -N
    qb = jnp.where(in_s, jnp.where(poly_2, b2, pb), 0.5)   # q
    qs = jnp.where(in_s, s, 0.25)
    # * the general connection formula (stand-ins elsewhere: a = 1/4, b = 1/2, c = 3/2, d = 3/4, s = 1/4)
    ga, gb, gc = (jnp.where(general, v, w) for v, w in ((a, 0.25), (b1, 0.5), (safe_c, 1.5)))
    gd, gs = jnp.where(general, d, 0.75), jnp.where(general & (s > 0), s, 0.25)
    # * the integer-d limit, m = |round(d)| >= 0: row 1 its finite sum, row 2 its digamma series
    la, lb = jnp.where(limit_series, a2, 0.25), jnp.where(limit_series, b2, 0.5)
    lm, ls = jnp.where(limit_series, jnp.abs(m_signed), 1.0), jnp.where(limit_series & (s > 0), s, 0.25)

    # every gamma ratio in one lgamma, every digamma in one digamma
    c_or_1 = jnp.where(_is_pole(c), 1.0, c)
    first, second, limit_first, limit_factor, inv_factorial, gauss, blow_up = _gamma_ratios([
        ([gc, gd], [gc - ga, gc - gb]), ([gc, -gd], [ga, gb]),
        ([jnp.where(lm > 0, lm, 1.0), la + lb + lm], [la + lm, lb + lm]), ([la + lb + lm], [la, lb]), ([], [lm + 1]),
        ([c_or_1, jnp.where(d > 0, d, 1.0)], [c - a, c - b]), ([c_or_1, jnp.where(d < 0, -d, 1.0)], [a, b])])
    psi_m1, psi_a, psi_b = lax.digamma(jnp.stack([lm + 1, la + lm, lb + lm]))
    second = second * gs ** gd
    log_ls = jnp.log(ls)

    row = lax.broadcasted_iota("int32", (3,) + x.shape, 0)

    row = lax.broadcasted_iota("int32", (3,) + x.shape, 0)

    def rows(series, poly, connection, limit_part):
        """One argument of `_sum_rows` by rows: row 0, then rows 1 and 2 as (polynomial in s,
        connection, limit) each; selects on the row index (measured: a little less compile time
        than a stack, whose parts XLA on the CPU compiles as kernels of their own)."""
        def by_row(pair):
            return jnp.where(row == 1, pair[0], pair[1])
        return jnp.where(row == 0, series, jnp.where(in_s, by_row(poly), jnp.where(
            general, by_row(connection), by_row(limit_part)))).astype(x.dtype)

    one, zero, inf = 1.0, 0.0, np.inf
    total, magnitude, tail = _sum_rows(
        rows(row0[0], (qb, qa), (ga, gc - ga), (la, la + lm)),
        rows(row0[1], (one, safe_c - qb), (gb, gc - gb), (lb, lb + lm)),
        rows(row0[2], (safe_c, 1 - qb + qa), (1 - gd, 1 + gd), (1 - lm, lm + 1)),
        rows(row0[3], (one, one), (gs, gs), (ls, ls)),
        rows(one, (zero, qs), (one, one), (one, one)),
        rows(one, (one, one), (one, one), (one, log_ls)),
        rows(zero, (zero, zero), (zero, zero), (zero, jnp.where(limit_series, 1.0, 0.0))),
        rows(one, (one, one), (one, one), (one, inv_factorial)),
        rows(zero, (zero, zero), (zero, zero), (zero, -_EULER + psi_m1 - psi_a - psi_b)),
        rows(inf, (1 - qa, 1 - qa), (inf, inf), (lm, inf)))
    eps = float(dtypes.finfo(x.dtype).eps)
    direct, direct_bound = total[0], eps * magnitude[0] + tail[0]

    by_s = total[1] * total[2]
    by_s_bound = eps * jnp.abs(total[1]) * magnitude[2]
    connection = first * total[1] + second * total[2]
    connection_bound = jnp.abs(first) * (eps * magnitude[1] + tail[1]) + jnp.abs(second) * (eps * magnitude[2] + tail[2])
    # the limit: the finite part's rounding is taken as eps |first part|, and the series' tail from its
    # last terms, times the bracket's size (its digammas grow like a logarithm)
    limit_first = jnp.where(lm > 0, limit_first, 0.0) * total[1]
    factor = ls ** lm * limit_factor
    sign = jnp.where(jnp.fmod(lm, 2.0) != 0, -1.0, 1.0)
    limit_value = limit_first - sign * factor * total[2]
    bracket = 1 + jnp.abs(log_ls) + 4 * jnp.log(jnp.abs(la) + jnp.abs(lb) + lm + _TERMS)
    limit_bound = eps * (jnp.abs(limit_first) + jnp.abs(factor) * magnitude[2]) + jnp.abs(factor) * bracket * tail[2]

    transformed = jnp.where(in_s, by_s, jnp.where(general, connection, limit_value))
    transformed_bound = jnp.where(in_s, by_s_bound, jnp.where(general, connection_bound, limit_bound))
    transformed_bound = jnp.where(jnp.isnan(transformed_bound) | (~in_s & (s <= 0)), np.inf, transformed_bound)
    use_series = series_ok & (direct_bound <= jnp.abs(euler_factor) * transformed_bound)
    value = pfaff * jnp.where(use_series, direct, euler_factor * transformed)
    # x = 1: Gauss's sum where it converges, else +-inf (the sign of the dominant term); x > 1: the
    # branch cut (SciPy gives inf). SciPy gives +inf at d = c - a - b = 0, where the logarithmic
    # divergence has the sign of G(c) / (G(a) G(b))
    at_one = jnp.where(d > 0, gauss, jnp.where((blow_up < 0) & (d < 0), -np.inf, np.inf))
    value = jnp.where((x == 1) & ~polynomial, at_one, value)
    value = jnp.where((x > 1) & ~polynomial, np.inf, value)
    # c a pole: inf, unless the series ends first (degree <= -c)
    c_pole = _is_pole(c) & ~(polynomial & (degree <= -c))
    value = jnp.where(c_pole, np.inf, value)
    return jnp.where((a == 0) | (b == 0), 1.0, value)


@custom_jvp
def _hyp2f1_rule(a, b, c, x):
    # on one axis: XLA on the CPU compiles the same program ~20% faster for 1-d arrays than for 2-d
    flat = _hyp2f1_value(*(v.reshape(-1) for v in (a, b, c, x)))
    return flat.reshape(x.shape)


# central differences of order 6: f'(p) ~ sum_j w_j (f(p + j h) - f(p - j h)) / h
_OFFSETS = np.array([1, -1, 2, -2, 3, -3], float)
_WEIGHTS = np.array([45, -45, -9, 9, 1, -1], float) / 60
# the rows of the jvp rule's one stacked evaluation: the value, F(a + 1, b + 1; c + 1; x) for d/dx,
# then a, b and c's stencils (6 rows each); per parameter, its shift by 1 and its shift in steps
_SHIFT_ONE = np.array([0, 1] + [0] * 18, float)
_SHIFT_STEPS = [np.concatenate([[0, 0], np.zeros(6 * i), _OFFSETS, np.zeros(6 * (2 - i))]) for i in range(3)]


@_hyp2f1_rule.defjvp
def _hyp2f1_jvp(primals, tangents):
    a, b, c, x = primals
    dt = x.dtype
    # the steps (module notes): F varies like (1 - x)^-a, and like 1 / (c + n) near a pole of c
    h = float(dtypes.finfo(dt).eps) ** (1 / 7) / (1 + jnp.minimum(jnp.abs(jnp.log(jnp.abs(1 - x))), 40.0))
    pole_distance = jnp.where(jnp.round(c) <= 0, jnp.abs(c - jnp.round(c)), np.inf)
    h_c = jnp.where(pole_distance > 0, jnp.minimum(h, pole_distance / 50), h)
    steps = (h, h, h_c)
    # the stack is formed by broadcasting against constant shift columns (one fused kernel; a
    # jnp.stack of 20 rows would compile each row as a kernel of its own)
    column = (20,) + (1,) * x.ndim
    shifted = [p + _SHIFT_ONE.reshape(column).astype(dt) + _SHIFT_STEPS[i].reshape(column).astype(dt) * step
               for i, (p, step) in enumerate(zip((a, b, c), steps))]
    values = _hyp2f1_rule(*shifted, jnp.broadcast_to(x, (20,) + x.shape))
    tangent = a * b / c * values[1] * tangents[3]
    weights = _WEIGHTS.reshape((6,) + (1,) * x.ndim).astype(dt)
    for i, step in enumerate(steps):
        slope = jnp.sum(values[2 + 6 * i:8 + 6 * i] * weights, axis=0) / step
        tangent = tangent + slope * tangents[i]
    return values[0], tangent


_hyp2f1 = library_jit(_hyp2f1_rule)


def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k! for real
    arguments, x <= 1 (its analytic continuation below x = -1, as SciPy's; x > 1 gives inf unless
    the series terminates). About 1e-13 relative to SciPy for parameters up to ~20 (see the module
    notes for the limits). Differentiable in all four arguments, as JAX's: in x exactly, in a, b and
    c by central differences of order 6 (~1e-10 relative in float64; module notes).

    >>> print(round(float(hyp2f1(1.0, 1.0, 2.0, -1.0)), 5))   # log(2), in float32
    0.69315
    """
    a, b, c, x = inexact_args("hyp2f1", a, b, c, x)
    return _hyp2f1(a, b, c, x)

"""The rest of `jax.random`'s samplers: transformations of the basic draws in core/random.py
(lognormal, rayleigh, maxwell, pareto, weibull_min, triangular, wald, t, chisquare, f, ...) and
the discrete laws that need loops (poisson, binomial, multinomial).

Each sampler consumes its key once (core/random.py's `_check_key`, which also accepts typed keys)
and then draws with the private helpers only, so the key-reuse checker sees one use. Where JAX's
sampler is a closed-form transformation of `uniform`/`normal`/`exponential`, ours applies the same
transformation to the same bits (equal numbers, up to an ulp where XLA fuses differently), and
`poisson` runs JAX's two methods on the same key (equal numbers); samplers built on `gamma` (t, chisquare, f, generalized_normal,
ball) inherit its difference from JAX (core/random.py `gamma`), and binomial / multinomial use their
own exact methods (same laws, other numbers). Poisson and binomial are the
classic exact methods: Knuth's product of uniforms / the inversion by geometric jumps for small
means, and Hormann's transformed rejection (PTRS, 1993; BTRS, 1993) for large ones, each as a
`lax.while_loop` that runs until every sample is accepted.

Example:
    >>> key = random.PRNGKey(0)
    >>> random.poisson(key, 3.0, (4,)).dtype, random.t(key, 5.0, (2, 3)).shape
    (dtype('int32'), (2, 3))
"""
import numpy as np

from . import dtypes
from . import lax
from . import numpy as jnp
from .lax._base import aval_of
from .numpy._util import broadcast_shapes
from .random import (_bernoulli, _canonical_shape, _check_key, _check_shape, _float_dtype, _loggamma, _normal,
                     _param, _shape_of, _split, _split2, _uniform)

__all__ = ["lognormal", "rayleigh", "maxwell", "double_sided_maxwell", "weibull_min", "pareto", "geometric",
           "triangular", "wald", "t", "chisquare", "f", "generalized_normal", "ball", "poisson", "binomial",
           "multinomial"]


def _law_shape(name, shape, *params):
    """`shape`, or the parameters' broadcast shape when it is None; checked against them."""
    shapes = [_shape_of(p) for p in params]
    if shape is None:
        return broadcast_shapes(*shapes) if shapes else ()
    shape = _canonical_shape(name, shape)
    _check_shape(name, shape, *shapes)
    return shape


def _exponential(key, shape, dtype):
    return lax.neg(lax.log1p(lax.neg(_uniform(key, shape, dtype, 0.0, 1.0))))


def _gamma(key, a, shape, dtype):
    return lax.exp(_loggamma(key, a, shape, dtype))


def _rademacher(key, shape, dtype):
    b = lax.convert_element_type(_bernoulli(key, 0.5, shape, "low"), dtype)
    return lax.sub(lax.mul(lax.full(shape, 2, dtype), b), lax.full(shape, 1, dtype))


# ----- transformations of uniform, normal and exponential draws --------------------------------

def lognormal(key, sigma=np.float32(1.0), shape=None, dtype=None):
    """Log-normal samples `exp(sigma * z)`, z standard normal (so `log` of a sample is N(0, sigma^2)).
    Example: `random.lognormal(key, 0.5, (3,))`."""
    key = _check_key("lognormal", key)
    dtype = _float_dtype("lognormal", dtype)
    shape = _law_shape("lognormal", shape, sigma)
    return lax.exp(lax.mul(_normal(key, shape, dtype), _param(sigma, dtype, shape)))


def rayleigh(key, scale, shape=None, dtype=None):
    """Rayleigh(scale) samples `scale * sqrt(-2 log u)`, the length of a 2-D N(0, scale^2 I) vector.
    Example: `random.rayleigh(key, 2.0, (3,))`."""
    key = _check_key("rayleigh", key)
    dtype = _float_dtype("rayleigh", dtype)
    shape = _law_shape("rayleigh", shape, scale)
    u = _uniform(key, shape, dtype, 0.0, 1.0)
    return lax.mul(_param(scale, dtype, shape), lax.sqrt(lax.mul(lax.log(u), lax.full(shape, -2.0, dtype))))


def _maxwell(key, shape, dtype):
    z = _normal(key, (*shape, 3), dtype)
    return lax.sqrt(lax.reduce_sum(lax.mul(z, z), (len(shape),)))


def maxwell(key, shape=(), dtype=None):
    """Maxwell samples: the length of a 3-D standard normal vector (scale 1).
    Example: `random.maxwell(key, (3,))`."""
    key = _check_key("maxwell", key)
    dtype = _float_dtype("maxwell", dtype)
    return _maxwell(key, _canonical_shape("maxwell", shape), dtype)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell samples `loc + scale * s * m`, m Maxwell and s a random sign. As in JAX,
    the result shape is `shape + broadcast(loc.shape, scale.shape)` (not a broadcast with `shape`).
    Example: `random.double_sided_maxwell(key, 0.0, 1.0, (3,))`."""
    key = _check_key("double_sided_maxwell", key)
    dtype = _float_dtype("double_sided_maxwell", dtype)
    shape = _canonical_shape("double_sided_maxwell", shape) + broadcast_shapes(_shape_of(loc), _shape_of(scale))
    key_m, key_s = _split2(key)
    m = _maxwell(key_m, shape, dtype)
    sign = _rademacher(key_s, shape, dtype)
    return lax.add(lax.mul(lax.mul(sign, m), _param(scale, dtype, shape)), _param(loc, dtype, shape))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples with CDF `1 - exp(-(x / scale)^concentration)`, by inverting the CDF:
    `scale * (-log1p(-u))^(1 / concentration)`. Example: `random.weibull_min(key, 1.0, 1.5, (3,))`."""
    key = _check_key("weibull_min", key)
    dtype = _float_dtype("weibull_min", dtype)
    shape = _canonical_shape("weibull_min", shape)
    e = lax.neg(lax.log1p(lax.neg(_uniform(key, shape, dtype, 0.0, 1.0))))
    inv_c = lax.div(lax.full(shape, 1.0, dtype), _param(concentration, dtype, shape))
    return lax.mul(lax.pow(e, inv_c), _param(scale, dtype, shape))


def pareto(key, b, shape=None, dtype=None):
    """Pareto(b) samples on [1, inf), density `b / x^(b + 1)`: `exp(e / b)` with e exponential.
    Example: `random.pareto(key, 3.0, (3,))`."""
    key = _check_key("pareto", key)
    dtype = _float_dtype("pareto", dtype)
    shape = _law_shape("pareto", shape, b)
    return lax.exp(lax.div(_exponential(key, shape, dtype), _param(b, dtype, shape)))


def geometric(key, p, shape=None, dtype=None):
    """Geometric(p) samples: the number of Bernoulli(p) trials up to and including the first
    success (values 1, 2, ...), `floor(log u / log1p(-p)) + 1`. Default dtype int32 (int64 with x64).
    Example: `random.geometric(key, 0.25, (3,))`."""
    key = _check_key("geometric", key)
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.check_user_dtype(dtype, "geometric")
    if not dtypes.is_int(dtype):
        raise TypeError(f"geometric: dtype must be an integer dtype, got {dtype}.")
    shape = _law_shape("geometric", shape, p)
    pdt = aval_of(jnp.asarray(p)).dtype
    pdt = pdt if dtypes.is_float(pdt) else dtypes.default_float_dtype()
    p = _param(p, pdt, shape)
    u = _uniform(key, shape, pdt, 0.0, 1.0)
    g = lax.add(lax.floor(lax.div(lax.log(u), lax.log1p(lax.neg(p)))), lax.full(shape, 1.0, pdt))
    return lax.convert_element_type(g, dtype)


def triangular(key, left, mode, right, shape=None, dtype=None):
    """Triangular samples on [left, right] peaking at `mode`, by inverting the piecewise-quadratic
    CDF. Example: `random.triangular(key, 0.0, 0.3, 1.0, (3,))`."""
    key = _check_key("triangular", key)
    dtype = _float_dtype("triangular", dtype)
    shape = _law_shape("triangular", shape, left, mode, right)
    left, mode, right = (_param(v, dtype, shape) for v in (left, mode, right))
    width = lax.sub(right, left)
    u = _uniform(key, shape, dtype, 0.0, 1.0)
    below = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    above = lax.sub(right, lax.sqrt(lax.mul(lax.mul(lax.sub(lax.full(shape, 1.0, dtype), u), width),
                                            lax.sub(right, mode))))
    return lax.select(lax.lt(u, lax.div(lax.sub(mode, left), width)), below, above)


def wald(key, mean, shape=None, dtype=None):
    """Wald (inverse Gaussian) samples with the given mean and shape parameter 1 (Michael, Schucany
    and Haas, 1976: a root of the chi-square transform, chosen with one uniform).
    Example: `random.wald(key, 2.0, (3,))`."""
    key = _check_key("wald", key)
    dtype = _float_dtype("wald", dtype)
    shape = _law_shape("wald", shape, mean)
    key_n, key_u = _split2(key)
    mu = _param(mean, dtype, shape)
    y = lax.integer_pow(_normal(key_n, shape, dtype), 2)
    z = _uniform(key_u, shape, dtype, 0.0, 1.0)
    mu2 = lax.integer_pow(mu, 2)
    root = lax.sqrt(lax.add(lax.mul(lax.mul(lax.full(shape, 4.0, dtype), mu), y),
                            lax.mul(mu2, lax.integer_pow(y, 2))))
    half = lax.full(shape, 2.0, dtype)
    x = lax.sub(lax.add(mu, lax.div(lax.mul(mu2, y), half)), lax.mul(lax.div(mu, half), root))
    return lax.select(lax.le(z, lax.div(mu, lax.add(mu, x))), x, lax.div(mu2, x))


# ----- built on gamma ------------------------------------------------------------------------

def t(key, df, shape=None, dtype=None):
    """Student's t samples with `df` degrees of freedom: `z * sqrt((df / 2) / g)`, z standard normal
    and g Gamma(df / 2). Example: `random.t(key, 5.0, (3,))`."""
    key = _check_key("t", key)
    dtype = _float_dtype("t", dtype)
    shape = _law_shape("t", shape, df)
    key_n, key_g = _split2(key)
    half_df = lax.div(_param(df, dtype, shape), lax.full(shape, 2.0, dtype))
    z = _normal(key_n, shape, dtype)
    return lax.mul(z, lax.sqrt(lax.div(half_df, _gamma(key_g, half_df, shape, dtype))))


def _chisquare(key, df, shape, dtype):
    half_df = lax.div(df, lax.full(shape, 2.0, dtype))
    return lax.mul(lax.full(shape, 2.0, dtype), lax.exp(_loggamma(key, half_df, shape, dtype)))


def chisquare(key, df, shape=None, dtype=None):
    """Chi-square samples with `df` degrees of freedom: `2 * Gamma(df / 2)`.
    Example: `random.chisquare(key, 3.0, (3,))`."""
    key = _check_key("chisquare", key)
    dtype = _float_dtype("chisquare", dtype)
    shape = _law_shape("chisquare", shape, df)
    return _chisquare(key, _param(df, dtype, shape), shape, dtype)


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F-distribution samples `(X / dfnum) / (Y / dfden)`, X and Y independent chi-squares.
    Example: `random.f(key, 5.0, 10.0, (3,))`."""
    key = _check_key("f", key)
    dtype = _float_dtype("f", dtype)
    shape = _law_shape("f", shape, dfnum, dfden)
    key_den, key_num = _split2(key)
    dfnum, dfden = _param(dfnum, dtype, shape), _param(dfden, dtype, shape)
    num = lax.div(_chisquare(key_num, dfnum, shape, dtype), dfnum)
    return lax.div(num, lax.div(_chisquare(key_den, dfden, shape, dtype), dfden))


def _generalized_normal(key, p, shape, dtype):
    key_g, key_s = _split2(key)
    inv_p = lax.div(lax.full(shape, 1.0, dtype), _param(p, dtype, shape))
    g = _gamma(key_g, inv_p, shape, dtype)
    return lax.mul(_rademacher(key_s, shape, dtype), lax.pow(g, inv_p))


def generalized_normal(key, p, shape=(), dtype=None):
    """Generalized normal samples, density proportional to `exp(-|x|^p)`: `s * G^(1/p)`, G
    Gamma(1/p) and s a random sign (p=2 gives N(0, 1/2), p=1 a Laplace).
    Example: `random.generalized_normal(key, 1.5, (3,))`."""
    key = _check_key("generalized_normal", key)
    dtype = _float_dtype("generalized_normal", dtype)
    shape = _canonical_shape("generalized_normal", shape)
    _check_shape("generalized_normal", shape, _shape_of(p))
    return _generalized_normal(key, p, shape, dtype)


def ball(key, d, p=2, shape=(), dtype=None):
    """Points uniform in the unit p-norm ball of dimension `d` (Barthe, Guedon, Mendelson and Naor,
    2005): `g / (sum |g|^p + e)^(1/p)`, g generalized-normal(p) in R^d, e exponential. Result shape
    `shape + (d,)`. Example: `random.ball(key, 3, shape=(5,))`."""
    key = _check_key("ball", key)
    dtype = _float_dtype("ball", dtype)
    shape = _canonical_shape("ball", shape)
    d = int(d)
    if d < 1:
        raise ValueError(f"ball: the dimension d must be a positive integer, got {d}.")
    key_g, key_e = _split2(key)
    g = _generalized_normal(key_g, p, (*shape, d), dtype)
    e = _exponential(key_e, shape, dtype)
    inv_p = 1.0 / p
    radius = lax.pow(lax.add(jnp.sum(lax.pow(lax.abs(g), lax.full(g.shape, p, dtype)), -1), e),
                     lax.full(shape, inv_p, dtype))
    return lax.div(g, jnp.expand_dims(radius, -1))


# ----- poisson, binomial, multinomial ---------------------------------------------------------
#
# The loops below run until every element is accepted; each round draws fresh uniforms for all
# elements (from a key split off the carried one) and only the still-open elements take them.
# The expected number of rounds is small (Knuth: lam + 1 < 11; inversion: n p + 1 < 11; the
# rejection methods accept with probability about 0.9 per round), and they stop when all are done.

def _split_carry(key, n):
    keys = _split(key, (n,))
    return [lax.index_in_dim(keys, i, keepdims=False) for i in range(n)]


def _poisson_knuth(key, lam, shape):
    """Knuth: the number of uniforms whose running product stays above exp(-lam), minus one."""
    def cond(c):
        return jnp.any(c[2] > -lam)

    def body(c):
        key, k, log_prod = c
        key, sub = _split_carry(key, 2)
        open_ = log_prod > -lam
        u = _uniform(sub, shape, lam.dtype, 0.0, 1.0)
        return key, jnp.where(open_, k + 1, k), jnp.where(open_, log_prod + jnp.log(u), log_prod)

    zero = jnp.zeros(shape, lam.dtype)
    return lax.while_loop(cond, body, (key, zero, zero))[1] - 1


def _poisson_ptrs(key, lam, shape):
    """Hormann's PTRS: transformed rejection with squeeze, for lam >= 10."""
    log_lam = jnp.log(lam)
    b = 0.931 + 2.53 * jnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def cond(c):
        return jnp.logical_not(jnp.all(c[2]))

    def body(c):
        key, k_out, done = c
        key, k_u, k_v = _split_carry(key, 3)
        u = _uniform(k_u, shape, lam.dtype, 0.0, 1.0) - 0.5
        v = _uniform(k_v, shape, lam.dtype, 0.0, 1.0)
        us = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / us + b) * u + lam + 0.43)
        quick = (us >= 0.07) & (v <= v_r)
        hopeless = (k < 0) | ((us < 0.013) & (v > us))
        lhs = jnp.log(v * inv_alpha / (a / (us * us) + b))
        rhs = -lam + k * log_lam - lax.lgamma(k + 1)
        # an element accepted in an earlier round may take a later accepted proposal too (as in
        # JAX): the rounds' count does not depend on that element's draws, so its law is unchanged
        accept = quick | (~hopeless & (lhs <= rhs))
        return key, jnp.where(accept, k, k_out), done | accept

    return lax.while_loop(cond, body, (key, jnp.full(shape, -1.0, lam.dtype), jnp.zeros(shape, bool)))[1]


def poisson(key, lam, shape=None, dtype=None):
    """Poisson(lam) counts (default dtype int32; int64 with x64 on): Knuth's method for lam < 10,
    Hormann's transformed rejection (PTRS, 1993) above; lam == 0 gives 0. Runs as a
    `lax.while_loop`, so it works under jit and vmap (not differentiable in lam).
    Example: `random.poisson(key, 4.0, (3,))`."""
    key = _check_key("poisson", key)
    dtype = dtypes.default_int_dtype() if dtype is None else dtypes.check_user_dtype(dtype, "poisson")
    if not dtypes.is_int(dtype):
        raise TypeError(f"poisson: dtype must be an integer dtype, got {dtype}.")
    shape = _law_shape("poisson", shape, lam)
    lam = _param(lax.stop_gradient(jnp.asarray(lam)), dtypes.float32, shape)
    small = jnp.isnan(lam) | (lam < 10)
    # both methods draw from the same key, as JAX's, which makes the numbers JAX's
    k_small = _poisson_knuth(key, jnp.where(small, lam, 0.0), shape)
    k_large = _poisson_ptrs(key, jnp.where(small, 1e5, lam), shape)
    k = jnp.where(lam == 0, 0.0, jnp.where(small, k_small, k_large))
    return lax.convert_element_type(k, dtype)


def _binomial_inversion(key, n, p, shape):
    """Count the Bernoulli(p) successes among n trials by jumping from success to success with
    geometric waiting times (p <= 1/2, n p small)."""
    log_q = jnp.log1p(-p)

    def cond(c):
        return jnp.logical_not(jnp.all(c[3]))

    def body(c):
        key, count, used, done = c
        key, sub = _split_carry(key, 2)
        u = _uniform(sub, shape, p.dtype, 0.0, 1.0)
        used = jnp.where(done, used, used + jnp.maximum(jnp.ceil(jnp.log1p(-u) / log_q), 1.0))
        over = used > n
        count = jnp.where(done | over, count, count + 1)
        return key, count, used, done | over

    zero = jnp.zeros(shape, p.dtype)
    start_done = (n <= 0) | (p <= 0)
    return lax.while_loop(cond, body, (key, zero, zero, start_done))[1]


def _binomial_btrs(key, n, p, shape):
    """Hormann's BTRS: transformed rejection with squeeze, for n p >= 10 and p <= 1/2."""
    q = 1 - p
    spq = jnp.sqrt(n * p * q)
    b = 1.15 + 2.53 * spq
    a = -0.0873 + 0.0248 * b + 0.01 * p
    c = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    alpha = (2.83 + 5.1 / b) * spq
    log_odds = jnp.log(p / q)
    m = jnp.floor((n + 1) * p)
    h = lax.lgamma(m + 1) + lax.lgamma(n - m + 1)

    def cond(carry):
        return jnp.logical_not(jnp.all(carry[2]))

    def body(carry):
        key, k_out, done = carry
        key, k_u, k_v = _split_carry(key, 3)
        u = _uniform(k_u, shape, p.dtype, 0.0, 1.0) - 0.5
        v = _uniform(k_v, shape, p.dtype, 0.0, 1.0)
        us = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / us + b) * u + c)
        quick = (us >= 0.07) & (v <= v_r)
        outside = (k < 0) | (k > n)
        lhs = jnp.log(v * alpha / (a / (us * us) + b))
        rhs = h - lax.lgamma(k + 1) - lax.lgamma(n - k + 1) + (k - m) * log_odds
        accept = (quick | (~outside & (lhs <= rhs))) & ~done
        return key, jnp.where(accept, k, k_out), done | accept

    return lax.while_loop(cond, body, (key, jnp.zeros(shape, p.dtype), jnp.zeros(shape, bool)))[1]


def _binomial(key, n, p, shape, dtype):
    flip = p > 0.5
    pp = jnp.where(flip, 1 - p, p)
    small = n * pp < 10
    key_i, key_r = _split2(key)
    k_small = _binomial_inversion(key_i, jnp.where(small, n, 0.0), jnp.where(small, pp, 0.0), shape)
    k_large = _binomial_btrs(key_r, jnp.where(small, 1e4, n), jnp.where(small, 0.5, pp), shape)
    k = jnp.where(small, k_small, k_large)
    k = jnp.where(flip, n - k, k)
    bad = jnp.isnan(n) | jnp.isnan(p) | (n < 0) | (p < 0) | (p > 1)
    return lax.convert_element_type(jnp.where(bad, jnp.nan, k), dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts as floats (default float32, as JAX): the inversion by geometric jumps
    when n min(p, 1-p) < 10, Hormann's BTRS (1993) above; NaN for an invalid n or p. `n` is the
    (integer-valued) number of trials. Example: `random.binomial(key, 20.0, 0.3, (3,))`."""
    key = _check_key("binomial", key)
    dtype = _float_dtype("binomial", dtype)
    shape = _law_shape("binomial", shape, n, p)
    n = _param(lax.stop_gradient(jnp.asarray(n)), dtype, shape)
    p = _param(lax.stop_gradient(jnp.asarray(p)), dtype, shape)
    return _binomial(key, n, p, shape, dtype)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts of `n` draws over the categories of `p` (last axis; probabilities, not
    normalised by us): category i gets Binomial(remaining draws, p_i / remaining probability), in
    order. `shape` is the full result shape, its last axis the categories; by default
    `broadcast(n.shape, p.shape[:-1]) + p.shape[-1:]`. Floats (float32 by default), as JAX.
    Example: `random.multinomial(key, 10.0, jnp.array([0.2, 0.3, 0.5]))`."""
    del unroll  # JAX's scan unroll factor: the categories are unrolled here anyway
    key = _check_key("multinomial", key)
    dtype = _float_dtype("multinomial", dtype)
    p_shape = _shape_of(p)
    if len(p_shape) < 1:
        raise ValueError("multinomial: p must have at least one dimension (the categories), got a scalar.")
    if shape is None:
        shape = broadcast_shapes(_shape_of(n), p_shape[:-1]) + p_shape[-1:]
    else:
        shape = _canonical_shape("multinomial", shape)
        if not shape or shape[-1] != p_shape[-1]:
            raise ValueError(f"multinomial: shape {shape} must end with the number of categories "
                             f"{p_shape[-1]} (p has shape {p_shape}).")
        _check_shape("multinomial", shape[:-1], _shape_of(n), p_shape[:-1])
    batch, k = shape[:-1], shape[-1]
    n = _param(lax.stop_gradient(jnp.asarray(n)), dtype, batch)
    p = _param(lax.stop_gradient(jnp.asarray(p)), dtype, shape)
    keys = _split_carry(key, k) if k > 1 else [key]
    remaining_n, remaining_p, counts = n, jnp.ones(batch, dtype), []
    for i in range(k):
        p_i = lax.index_in_dim(p, i, axis=len(batch), keepdims=False)
        if i == k - 1:
            c = remaining_n  # the last category takes every draw left
        else:
            ratio = jnp.clip(jnp.where(remaining_p > 0, p_i / remaining_p, 0.0), 0.0, 1.0)
            c = _binomial(keys[i], remaining_n, ratio, batch, dtype)
        counts.append(c)
        remaining_n, remaining_p = remaining_n - c, remaining_p - p_i
    return jnp.stack(counts, -1)


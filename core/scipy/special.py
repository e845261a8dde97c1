"""`core.scipy.special`: special functions as in `scipy.special` / `jax.scipy.special`.

Integer and bool inputs are promoted to the default float dtype; arguments broadcast as NumPy
arrays do. Conventions at the edges follow SciPy: `xlogy(0, 0) == 0`, `entr(0) == 0`,
`logit(0) == -inf`, `ndtri(0) == -inf`.
"""
import numpy as np

from .. import dtypes
from .. import lax
from ..custom_derivatives import custom_jvp
from ..lax._base import aval_of
from ..numpy._util import canonicalize_axes, check_arraylike, promote_args_inexact
from ._bessel import i0, i0e, i1, i1e
from ._elementary import (bernoulli, boxcox, boxcox1p, comb, factorial, kl_div, loggamma, poch, rel_entr, spence,
                          zeta)
from ._expint import erfcx, exp1, expi, expn
from ._integrals import dawsn, fresnel, owens_t, sici
from ._bessel_jn import bessel_jn
from ._hypergeometric import hyp1f1
from ._faddeeva import wofz
from ._hyp2f1 import hyp2f1
from ._spherical import sph_harm_y
from ._gamma import beta, gamma, gammasgn, multigammaln, polygamma
from ._incomplete import betainc, gammainc, gammaincc
from ._util import inexact_args as _inexact

__all__ = ["logsumexp", "expit", "logit", "erf", "erfc", "erfinv", "erfcinv", "gammaln", "digamma", "xlogy",
           "xlog1py", "ndtr", "ndtri", "log_ndtr", "softmax", "log_softmax", "entr", "betaln", "gamma",
           "gammasgn", "beta", "betainc", "gammainc", "gammaincc", "polygamma", "multigammaln", "i0", "i0e",
           "i1", "i1e", "bernoulli", "boxcox", "boxcox1p", "comb", "factorial", "kl_div", "loggamma", "poch",
           "rel_entr", "spence", "zeta", "erfcx", "exp1", "expi", "expn", "dawsn", "owens_t", "sici",
           "bessel_jn", "fresnel", "hyp1f1", "hyp2f1", "wofz", "sph_harm_y"]

# the functions defined in the private modules are documented (and their examples run) as this
# module's, as JAX's are under jax.scipy.special
for _f in (i0, i0e, i1, i1e, beta, gamma, gammasgn, multigammaln, polygamma, betainc, gammainc, gammaincc,
           bernoulli, boxcox, boxcox1p, comb, factorial, kl_div, loggamma, poch, rel_entr, spence, zeta, erfcx, exp1,
           expi, expn, dawsn, owens_t, sici, bessel_jn, fresnel, hyp1f1, hyp2f1, wofz, sph_harm_y):
    _f.__module__ = __name__
del _f


# ----- helpers ------------------------------------------------------------------------------


def _c(x, value):
    """A constant of `x`'s shape and dtype."""
    aval = aval_of(x)
    return lax.full(aval.shape, value, aval.dtype)


def _where(pred, on_true, on_false):
    return lax.select_n(pred, on_false, on_true)


def _keepdims_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _reduce_keep(reducer, x, axes):
    """`reducer` over `axes`, keeping the reduced dimensions as size 1."""
    shape = aval_of(x).shape
    return lax.reshape(reducer(x, axes), _keepdims_shape(shape, axes))


# ----- elementwise functions ----------------------------------------------------------------

def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x)). Example: `expit(0.0)` is `0.5`."""
    x, = _inexact("expit", x)
    return lax.logistic(x)


def logit(x):
    """The inverse of `expit`: log(x / (1 - x)). Example: `logit(0.5)` is `0.0`."""
    x, = _inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_c(x, 1.0), x)))


def erf(x):
    """The error function. Example: `erf(0.5)` is about `0.5205`."""
    x, = _inexact("erf", x)
    return lax.erf(x)


def erfc(x):
    """The complementary error function 1 - erf(x), accurate for large x. Example: `erfc(3.0)`."""
    x, = _inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x):
    """The inverse error function on (-1, 1). Example: `erfinv(0.5)` is about `0.4769`."""
    x, = _inexact("erfinv", x)
    return lax.erf_inv(x)


def erfcinv(y):
    """The inverse of `erfc` on [0, 2]: erfcinv(y) = -ndtri(y / 2) / sqrt(2), which keeps
    relative accuracy for tiny y (where erfinv(1 - y) would round to inf). As SciPy's.
    Example: `erfcinv(0.5)` is about `0.4769`."""
    y, = _inexact("erfcinv", y)
    return lax.mul(ndtri(lax.mul(y, _c(y, 0.5))), _c(y, -np.sqrt(0.5)))


def gammaln(x):
    """log|Gamma(x)|. Example: `gammaln(5.0)` is `log(24)`."""
    x, = _inexact("gammaln", x)
    return lax.lgamma(x)


def digamma(x):
    """The logarithmic derivative of Gamma. Example: `digamma(1.0)` is `-0.5772...`."""
    x, = _inexact("digamma", x)
    return lax.digamma(x)


def betaln(a, b):
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b) (direct formula: loses relative
    accuracy when a and b are both large). Example: `betaln(2.0, 3.0)` is `log(1/12)`."""
    a, b = _inexact("betaln", a, b)
    return lax.sub(lax.add(lax.lgamma(a), lax.lgamma(b)), lax.lgamma(lax.add(a, b)))


def xlogy(x, y):
    """x * log(y), defined as 0 where x == 0 (even for y == 0; a NaN y still gives NaN, as SciPy).
    Example: `xlogy(0., 0.)` is `0.`."""
    x, y = _inexact("xlogy", x, y)
    return _xlogy(x, y)


@custom_jvp
def _xlogy(x, y):
    nonzero = lax.bitwise_or(lax.ne(x, _c(x, 0.0)), lax.ne(y, y))
    # substitute 1 where x == 0 so no log(0) * 0 = nan is ever formed
    safe_x, safe_y = _where(nonzero, x, _c(x, 1.0)), _where(nonzero, y, _c(y, 1.0))
    return _where(nonzero, lax.mul(safe_x, lax.log(safe_y)), _c(x, 0.0))


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    # d/dx is log(y) even at x == 0, where the value is defined as 0 (as JAX and SciPy mean it)
    (x, y), (tx, ty) = primals, tangents
    return _xlogy(x, y), lax.add(lax.mul(tx, lax.log(y)), lax.mul(ty, lax.div(x, y)))


def xlog1py(x, y):
    """x * log1p(y), defined as 0 where x == 0 (even for y == -1; a NaN y still gives NaN, as
    SciPy). Example: `xlog1py(0., -1.)` is `0.`."""
    x, y = _inexact("xlog1py", x, y)
    return _xlog1py(x, y)


@custom_jvp
def _xlog1py(x, y):
    nonzero = lax.bitwise_or(lax.ne(x, _c(x, 0.0)), lax.ne(y, y))
    safe_x, safe_y = _where(nonzero, x, _c(x, 1.0)), _where(nonzero, y, _c(y, 0.0))
    return _where(nonzero, lax.mul(safe_x, lax.log1p(safe_y)), _c(x, 0.0))


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py(x, y), lax.add(lax.mul(tx, lax.log1p(y)), lax.mul(ty, lax.div(x, lax.add(y, _c(y, 1.0)))))


def entr(x):
    """Elementwise entropy term: -x log x for x > 0, 0 at 0, -inf for x < 0 (NaN stays NaN).
    Example: `entr(0.5)` is `0.3466`."""
    x, = _inexact("entr", x)
    positive = lax.gt(x, _c(x, 0.0))
    safe = _where(positive, x, _c(x, 1.0))
    neg_x_log_x = lax.neg(lax.mul(safe, lax.log(safe)))
    rest = _where(lax.eq(x, _c(x, 0.0)), _c(x, 0.0), _where(lax.lt(x, _c(x, 0.0)), _c(x, -np.inf), x))
    return _where(positive, neg_x_log_x, rest)


def ndtr(x):
    """The standard normal CDF, via erf near 0 and erfc in the tails (keeps relative accuracy for
    very negative x). Example: `ndtr(0.0)` is `0.5`."""
    x, = _inexact("ndtr", x)
    return _ndtr(x)


def _ndtr(x):
    half_sqrt2 = _c(x, np.sqrt(0.5))
    z = lax.mul(x, half_sqrt2)
    az = lax.abs(z)
    tail = _where(lax.gt(z, _c(x, 0.0)), lax.sub(_c(x, 2.0), lax.erfc(az)), lax.erfc(az))
    y = _where(lax.lt(az, half_sqrt2), lax.add(_c(x, 1.0), lax.erf(z)), tail)
    return lax.mul(_c(x, 0.5), y)


def ndtri(p):
    """The inverse of `ndtr` (the standard normal quantile) on [0, 1].

    Central p: sqrt(2) * erfinv(2p - 1). Tails (p < 0.075 or p > 0.925): the Abramowitz-Stegun
    26.2.23 approximation refined by two Halley steps on ndtr(x) = p, which keeps relative
    accuracy down to the smallest normal floats. Example: `ndtri(0.975)` is about `1.96`.
    """
    p, = _inexact("ndtri", p)
    c = lambda v: _c(p, v)  # noqa: E731
    central = lax.mul(c(np.sqrt(2.0)), lax.erf_inv(lax.sub(lax.mul(c(2.0), p), c(1.0))))
    # tails: solve for the lower tail q = min(p, 1 - p), then restore the sign
    upper = lax.gt(p, c(0.5))
    q = _where(upper, lax.sub(c(1.0), p), p)
    safe_q = lax.max(q, c(float(dtypes.finfo(aval_of(p).dtype).tiny)))
    t = lax.sqrt(lax.mul(c(-2.0), lax.log(safe_q)))
    num = lax.add(c(2.515517), lax.mul(t, lax.add(c(0.802853), lax.mul(t, c(0.010328)))))
    den = lax.add(c(1.0), lax.mul(t, lax.add(c(1.432788), lax.mul(t, lax.add(c(0.189269), lax.mul(t, c(0.001308)))))))
    x = lax.neg(lax.sub(t, lax.div(num, den)))
    for _ in range(2):
        # Halley's step for f(x) = ndtr(x) - q: x -= r / (1 + x r / 2), r = f / pdf(x)
        pdf = lax.mul(c(1.0 / np.sqrt(2 * np.pi)), lax.exp(lax.mul(c(-0.5), lax.mul(x, x))))
        r = lax.div(lax.sub(_ndtr(x), safe_q), pdf)
        x = lax.sub(x, lax.div(r, lax.add(c(1.0), lax.mul(lax.mul(x, r), c(0.5)))))
    tail = _where(upper, lax.neg(x), x)
    in_tail = lax.lt(q, c(0.075))
    out = _where(in_tail, tail, central)
    out = _where(lax.eq(p, c(0.0)), c(-np.inf), out)
    out = _where(lax.eq(p, c(1.0)), c(np.inf), out)
    return _where(lax.bitwise_or(lax.lt(p, c(0.0)), lax.gt(p, c(1.0))), c(np.nan), out)


def log_ndtr(x):
    """log(ndtr(x)), accurate far into both tails: an asymptotic series for very negative x,
    log1p(-ndtr(-x)) for positive x. Example: `log_ndtr(-20.0)` is about `-203.917`."""
    x, = _inexact("log_ndtr", x)
    lower = -20.0 if aval_of(x).dtype == dtypes.float64 else -10.0
    c = lambda v: _c(x, v)  # noqa: E731
    # x <= 0: log of ndtr (erfc-based, relatively accurate); x > 0: log1p of the small upper tail
    # each branch reads x where it is selected and a harmless constant elsewhere (selects, not
    # min/max clamps, whose derivative would be split at the branch points)
    in_low, in_pos = lax.lt(x, c(lower)), lax.gt(x, c(0.0))
    neg = lax.log(_ndtr(_where(lax.bitwise_or(in_low, in_pos), c(-1.0), x)))
    pos = lax.log1p(lax.neg(_ndtr(lax.neg(_where(in_pos, x, c(1.0))))))
    # x -> -inf: log ndtr(x) = -x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4 - 15/x^6 + ...)
    xs = _where(in_low, x, c(lower))
    inv2 = lax.div(c(1.0), lax.mul(xs, xs))
    series, term = c(1.0), c(1.0)
    for k in range(1, 7):
        term = lax.mul(term, lax.mul(inv2, c(-(2 * k - 1))))
        series = lax.add(series, term)
    low = lax.sub(lax.sub(lax.mul(c(-0.5), lax.mul(xs, xs)), lax.log(lax.neg(xs))),
                  lax.sub(c(0.5 * np.log(2 * np.pi)), lax.log(series)))
    return _where(in_low, low, _where(in_pos, pos, neg))


# ----- reductions ---------------------------------------------------------------------------

def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over `axis`, computed stably by factoring out the maximum.

    With `b` the sum may be negative: then the result is NaN unless `return_sign=True`, which
    returns `(log|sum|, sign(sum))`. Example: `logsumexp(jnp.array([0., 0.]))` is `log(2)`.
    """
    if b is None:
        check_arraylike("logsumexp", a)
        a, = promote_args_inexact("logsumexp", a)
    else:
        a, b = _inexact("logsumexp", a, b)
    shape = aval_of(a).shape
    axes = canonicalize_axes(axis, len(shape), "logsumexp")
    kept = _keepdims_shape(shape, axes)
    out_shape = kept if keepdims else tuple(d for i, d in enumerate(shape) if i not in axes)
    amax = _reduce_keep(lax.reduce_max, a, axes)
    # an infinite max (all -inf, or some +inf) must not be subtracted: inf - inf = nan
    amax = lax.stop_gradient(_where(lax.is_finite(amax), amax, _c(amax, 0.0)))
    e = lax.exp(lax.sub(a, amax))
    if b is not None:
        e = lax.mul(b, e)
    total = _reduce_keep(lax.reduce_sum, e, axes)
    sign = lax.sign(total)
    out = lax.add(lax.log(lax.abs(total)), amax)
    if not return_sign:
        out = _where(lax.lt(sign, _c(sign, 0.0)), _c(out, np.nan), out)
    out, sign = lax.reshape(out, out_shape), lax.reshape(sign, out_shape)
    return (out, sign) if return_sign else out


def _softmax_parts(name, x, axis):
    check_arraylike(name, x)
    x, = promote_args_inexact(name, x)
    shape = aval_of(x).shape
    axes = canonicalize_axes(axis, len(shape), name)
    m = lax.stop_gradient(_reduce_keep(lax.reduce_max, x, axes))
    shifted = lax.sub(x, m)
    return shifted, axes, shape


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis` (max-shifted for stability).
    Example: `softmax(jnp.array([0., 0.]))` is `[0.5, 0.5]`."""
    shifted, axes, shape = _softmax_parts("softmax", x, axis)
    e = lax.exp(shifted)
    return lax.div(e, _reduce_keep(lax.reduce_sum, e, axes))


def log_softmax(x, axis=-1):
    """x - logsumexp(x) along `axis`. Example: `log_softmax(jnp.array([0., 0.]))` is `[-0.693, -0.693]`."""
    shifted, axes, shape = _softmax_parts("log_softmax", x, axis)
    return lax.sub(shifted, lax.log(_reduce_keep(lax.reduce_sum, lax.exp(shifted), axes)))

"""The truncated normal distribution, as `scipy.stats.truncnorm` / `jax.scipy.stats.truncnorm`:
the standard normal restricted to [a, b], then shifted by `loc` and scaled by `scale` (so `a` and
`b` count standard deviations from `loc`, as in SciPy).

Everything goes through the log of a normal mass, log(Phi(hi) - Phi(lo)), computed where it is
accurate: from the tail's log-survival when the interval lies right of 1 (or, mirrored, left of
-1), and from a difference of erfs otherwise. So the log-functions
stay finite far in the tails (an interval [30, 40], the cdf's lower tail at -40) where a
difference of cdfs would be 0 - 0.

>>> from core.scipy.stats import truncnorm
>>> print(round(float(truncnorm.cdf(0.0, -1.0, 1.0)), 5))
0.5
"""
import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import args, log1mexp, nan_unless

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]

_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)
# log-cdfs above this are recomputed as log1p(-sf) (SciPy's threshold): there the cdf is near 1
# and the difference of log-masses has lost its small deficit
_NEAR_ONE = -0.1


def _log_diff_of_logs(big, small):
    """log(exp(big) - exp(small)) for big >= small."""
    return big + log1mexp(big - small)


def _log_mass(lo, hi):
    """log(Phi(hi) - Phi(lo)) for lo <= hi (-inf where lo == hi, infinite ends included).

    An interval left of -1 is first mirrored to the right of 1 (the mass of [lo, hi] is that of
    [-hi, -lo]). Right of 1 the mass is a difference of small survival values, taken in log space.
    Elsewhere it is (erf(hi/sqrt2) - erf(lo/sqrt2)) / 2, which loses nothing while the erfs are not
    both near 1 in magnitude (erf is relatively accurate near 0, where a log-survival is log(1/2)
    and its differences would cancel), or, when the interval holds most of the mass,
    1 - Phi(lo) - Phi(-hi) through log1p. Each branch sees placeholder arguments where it is not
    taken, so none of them makes NaNs (or NaN gradients) that `where` would have to hide."""
    empty = ~(lo < hi)
    mirror = hi < -1
    lo, hi = jnp.where(mirror, -hi, lo), jnp.where(mirror, -lo, hi)
    tail = (lo > 1) & ~empty
    center = ~tail & ~empty
    lo_t, hi_t = jnp.where(tail, lo, 2.0), jnp.where(tail, hi, 3.0)
    from_tail = _log_diff_of_logs(special.log_ndtr(-lo_t), special.log_ndtr(-hi_t))
    lo_c, hi_c = jnp.where(center, lo, -1.0), jnp.where(center, hi, 1.0)
    tails = special.ndtr(lo_c) + special.ndtr(-hi_c)
    most = tails < 0.5
    lo_s, hi_s = jnp.where(most, -1.0, lo_c), jnp.where(most, 1.0, hi_c)
    mass = 0.5 * (special.erf(hi_s / np.sqrt(2)) - special.erf(lo_s / np.sqrt(2)))
    from_center = jnp.where(most, jnp.log1p(-jnp.where(most, tails, 0.0)), jnp.log(mass))
    return jnp.where(empty, -np.inf, jnp.where(tail, from_tail, from_center))


def _parts(name, x, a, b, loc, scale):
    """The standardized x clipped to [a, b], whether it was inside, a, b, scale, log of the
    normal mass on [a, b], and the validity mask (a < b, scale > 0)."""
    x, a, b, loc, scale = args(name, x, a, b, loc, scale)
    valid = (a < b) & (scale > 0)
    # invalid parameters get a placeholder interval, so that no branch computes with lo > hi
    a, b = jnp.where(valid, a, -1.0), jnp.where(valid, b, 1.0)
    y = (x - loc) / scale
    inside = (y >= a) & (y <= b)
    return jnp.clip(y, a, b), inside, a, b, scale, _log_mass(a, b), valid


def logpdf(x, a, b, loc=0, scale=1):
    """-y^2/2 - log(sqrt(2 pi) scale) - log(Phi(b) - Phi(a)) for a <= y <= b, -inf outside, with
    y = (x - loc) / scale (NaN unless a < b and scale > 0).

    >>> print(round(float(logpdf(0.0, -1.0, 1.0)), 5))
    -0.53722
    """
    y, inside, a, b, scale, log_z, valid = _parts("truncnorm.logpdf", x, a, b, loc, scale)
    value = -0.5 * y * y - _LOG_SQRT_2PI - log_z - jnp.log(scale)
    return nan_unless(valid, jnp.where(inside, value, -np.inf))


def pdf(x, a, b, loc=0, scale=1):
    """The truncated normal density.

    >>> print(round(float(pdf(0.0, -1.0, 1.0)), 5))
    0.58437
    """
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _logcdf_logsf(name, x, a, b, loc, scale):
    y, _, a, b, scale, log_z, valid = _parts(name, x, a, b, loc, scale)
    lower = _log_mass(a, y) - log_z
    upper = _log_mass(y, b) - log_z
    # each is log1p(-exp(other)) where it is near 0, its own difference elsewhere; the clamp keeps
    # log1p's argument in (-1, 0] on the branch `where` discards
    lower_fixed = jnp.log1p(-jnp.exp(jnp.minimum(upper, _NEAR_ONE)))
    upper_fixed = jnp.log1p(-jnp.exp(jnp.minimum(lower, _NEAR_ONE)))
    logcdf_ = jnp.where(lower > _NEAR_ONE, lower_fixed, lower)
    logsf_ = jnp.where(upper > _NEAR_ONE, upper_fixed, upper)
    return nan_unless(valid, logcdf_), nan_unless(valid, logsf_)


def logcdf(x, a, b, loc=0, scale=1):
    """log P(X <= x) = log(Phi(y) - Phi(a)) - log(Phi(b) - Phi(a)) (log1p(-sf) near 1); -inf
    below a, 0 above b.

    >>> print(round(float(logcdf(-40.0, -np.inf, np.inf)), 3))   # the untruncated normal's far tail
    -804.608
    """
    return _logcdf_logsf("truncnorm.logcdf", x, a, b, loc, scale)[0]


def cdf(x, a, b, loc=0, scale=1):
    """P(X <= x).

    >>> print(round(float(cdf(1.0, 0.0, 2.0)), 5))
    0.71523
    """
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """log P(X > x) = log(Phi(b) - Phi(y)) - log(Phi(b) - Phi(a)) (log1p(-cdf) near 1); 0 below
    a, -inf above b.

    >>> print(round(float(logsf(30.5, 30.0, 40.0)), 2))
    -15.14
    """
    return _logcdf_logsf("truncnorm.logsf", x, a, b, loc, scale)[1]


def sf(x, a, b, loc=0, scale=1):
    """P(X > x).

    >>> print(round(float(sf(1.0, 0.0, 2.0)), 5))
    0.28477
    """
    return jnp.exp(logsf(x, a, b, loc, scale))

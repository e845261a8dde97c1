"""The truncated normal distribution, as `scipy.stats.truncnorm` / `jax.scipy.stats.truncnorm`:
the standard normal restricted to [a, b], then shifted by `loc` and scaled by `scale` (so `a` and
`b` count standard deviations from `loc`, as in SciPy).

Everything goes through the log of a normal mass, log(Phi(hi) - Phi(lo)), computed where it is
accurate: from the upper tail's log-survival when the interval is right of 0, from the lower
tail's log-cdf when it is left of 0, and from the central mass otherwise. So the log-functions
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
    """log(Phi(hi) - Phi(lo)) for lo <= hi (-inf where lo == hi).

    Right of 0 the masses are differences of small survival values, left of 0 of small cdf values,
    both taken in log space; across 0 the mass is at least Phi's central part, computed as
    1 - Phi(lo) - Phi(-hi) when it is near 1 and as (erf(hi/sqrt2) - erf(lo/sqrt2)) / 2, a sum
    of two non-negative terms, when it is not. Each branch sees placeholder arguments where it is
    not taken, so none of them makes NaNs (or NaN gradients) that `where` would have to hide."""
    right, left = lo > 0, hi < 0
    center = ~right & ~left
    lo_r, hi_r = jnp.where(right, lo, 1.0), jnp.where(right, hi, 2.0)
    from_right = _log_diff_of_logs(special.log_ndtr(-lo_r), special.log_ndtr(-hi_r))
    lo_l, hi_l = jnp.where(left, lo, -2.0), jnp.where(left, hi, -1.0)
    from_left = _log_diff_of_logs(special.log_ndtr(hi_l), special.log_ndtr(lo_l))
    lo_c, hi_c = jnp.where(center, lo, -1.0), jnp.where(center, hi, 1.0)
    tails = special.ndtr(lo_c) + special.ndtr(-hi_c)
    big = tails < 0.5
    lo_s, hi_s = jnp.where(big, -1.0, lo_c), jnp.where(big, 1.0, hi_c)
    small_mass = 0.5 * (special.erf(hi_s / np.sqrt(2)) - special.erf(lo_s / np.sqrt(2)))
    from_center = jnp.where(big, jnp.log1p(-jnp.where(big, tails, 0.0)), jnp.log(small_mass))
    return jnp.where(right, from_right, jnp.where(left, from_left, from_center))


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

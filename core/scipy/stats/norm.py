"""The normal distribution, as `scipy.stats.norm` / `jax.scipy.stats.norm`.

>>> from core.scipy.stats import norm
>>> print(round(float(norm.cdf(1.96)), 4))
0.975
"""
import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import nan_unless, quantile, standardize, args

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]

_LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


def logpdf(x, loc=0, scale=1):
    """log of the normal density -((x - loc) / scale)^2 / 2 - log(scale sqrt(2 pi)).

    >>> print(round(float(logpdf(0.0)), 5))
    -0.91894
    """
    x, loc, scale, y = standardize("norm.logpdf", x, loc, scale)
    return nan_unless(scale > 0, -0.5 * y * y - _LOG_SQRT_2PI - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The normal density. Example: `pdf(0.0)` is 1 / sqrt(2 pi).

    >>> print(round(float(pdf(0.0)), 5))
    0.39894
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x), via `ndtr` (relatively accurate in the lower tail).

    >>> print(float(cdf(0.0)))
    0.5
    """
    x, loc, scale, y = standardize("norm.cdf", x, loc, scale)
    return nan_unless(scale > 0, special.ndtr(y))


def logcdf(x, loc=0, scale=1):
    """log P(X <= x), via `log_ndtr` (finite far into the lower tail).

    >>> print(round(float(logcdf(-10.0)), 3))
    -53.231
    """
    x, loc, scale, y = standardize("norm.logcdf", x, loc, scale)
    return nan_unless(scale > 0, special.log_ndtr(y))


def sf(x, loc=0, scale=1):
    """P(X > x) = cdf(-x) for the standardized x (no cancellation in the upper tail).

    >>> print(float(sf(0.0)))
    0.5
    """
    x, loc, scale, y = standardize("norm.sf", x, loc, scale)
    return nan_unless(scale > 0, special.ndtr(-y))


def logsf(x, loc=0, scale=1):
    """log P(X > x).

    >>> print(round(float(logsf(10.0)), 3))
    -53.231
    """
    x, loc, scale, y = standardize("norm.logsf", x, loc, scale)
    return nan_unless(scale > 0, special.log_ndtr(-y))


def ppf(q, loc=0, scale=1):
    """The quantile function, loc + scale ndtri(q) (NaN outside [0, 1]).

    >>> print(round(float(ppf(0.975)), 4))
    1.96
    """
    q, loc, scale = args("norm.ppf", q, loc, scale)
    return nan_unless(scale > 0, quantile(q, loc + scale * special.ndtri(q)))


def isf(q, loc=0, scale=1):
    """The inverse survival function, loc - scale ndtri(q) (accurate for tiny q).

    >>> print(round(float(isf(0.025)), 4))
    1.96
    """
    q, loc, scale = args("norm.isf", q, loc, scale)
    return nan_unless(scale > 0, quantile(q, loc - scale * special.ndtri(q)))

"""The right-skewed Gumbel (extreme value type I) distribution, as `scipy.stats.gumbel_r` /
`jax.scipy.stats.gumbel_r`: cdf exp(-exp(-(x - loc) / scale)).

>>> from core.scipy.stats import gumbel_r
>>> print(round(float(gumbel_r.cdf(0.0)), 5))   # exp(-1)
0.36788
"""
from ... import numpy as jnp
from . import _gumbel
from ._util import args, nan_unless, quantile, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """-z - exp(-z) - log(scale) with z = (x - loc) / scale (NaN for scale <= 0).

    >>> print(round(float(logpdf(0.0)), 5))
    -1.0
    """
    x, loc, scale, z = standardize("gumbel_r.logpdf", x, loc, scale)
    return nan_unless(scale > 0, _gumbel.logpdf(z) - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The Gumbel density exp(-z - exp(-z)) / scale.

    >>> print(round(float(pdf(0.0)), 5))
    0.36788
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """exp(-exp(-z)).

    >>> print(round(float(cdf(1.0)), 5))
    0.6922
    """
    x, loc, scale, z = standardize("gumbel_r.cdf", x, loc, scale)
    return nan_unless(scale > 0, _gumbel.cdf(z))


def logcdf(x, loc=0, scale=1):
    """-exp(-z) (exact in the lower tail, where the cdf underflows).

    >>> print(round(float(logcdf(-5.0)), 5))
    -148.41316
    """
    x, loc, scale, z = standardize("gumbel_r.logcdf", x, loc, scale)
    return nan_unless(scale > 0, _gumbel.logcdf(z))


def sf(x, loc=0, scale=1):
    """1 - exp(-exp(-z)), as -expm1(-exp(-z)) (relatively accurate in the upper tail).

    >>> print(round(float(sf(1.0)), 5))
    0.3078
    """
    x, loc, scale, z = standardize("gumbel_r.sf", x, loc, scale)
    return nan_unless(scale > 0, _gumbel.sf(z))


def logsf(x, loc=0, scale=1):
    """log(1 - exp(-exp(-z))); about -z far in the upper tail (finite where the sf underflows).

    >>> print(round(float(logsf(800.0)), 5))
    -800.0
    """
    x, loc, scale, z = standardize("gumbel_r.logsf", x, loc, scale)
    return nan_unless(scale > 0, _gumbel.logsf(z))


def ppf(p, loc=0, scale=1):
    """loc - scale log(-log p): -inf at 0, inf at 1, NaN outside [0, 1].

    >>> print(round(float(ppf(0.5)), 5))
    0.36651
    """
    p, loc, scale = args("gumbel_r.ppf", p, loc, scale)
    return nan_unless(scale > 0, quantile(p, loc + scale * _gumbel.ppf(p)))

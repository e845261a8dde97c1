"""The left-skewed Gumbel distribution, as `scipy.stats.gumbel_l` / `jax.scipy.stats.gumbel_l`:
the mirror image of `gumbel_r`, with cdf 1 - exp(-exp((x - loc) / scale)).

>>> from core.scipy.stats import gumbel_l
>>> print(round(float(gumbel_l.sf(0.0)), 5))   # exp(-1)
0.36788
"""
from ... import numpy as jnp
from . import _gumbel
from ._util import args, nan_unless, quantile, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """z - exp(z) - log(scale) with z = (x - loc) / scale (NaN for scale <= 0).

    >>> print(round(float(logpdf(0.0)), 5))
    -1.0
    """
    x, loc, scale, z = standardize("gumbel_l.logpdf", x, loc, scale)
    return nan_unless(scale > 0, _gumbel.logpdf(-z) - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The density exp(z - exp(z)) / scale.

    >>> print(round(float(pdf(0.0)), 5))
    0.36788
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """1 - exp(-exp(z)), as -expm1(-exp(z)) (relatively accurate in the lower tail).

    >>> print(round(float(cdf(-1.0)), 5))
    0.3078
    """
    x, loc, scale, z = standardize("gumbel_l.cdf", x, loc, scale)
    return nan_unless(scale > 0, _gumbel.sf(-z))


def logcdf(x, loc=0, scale=1):
    """log(1 - exp(-exp(z))); about z far in the lower tail (finite where the cdf underflows).

    >>> print(round(float(logcdf(-800.0)), 5))
    -800.0
    """
    x, loc, scale, z = standardize("gumbel_l.logcdf", x, loc, scale)
    return nan_unless(scale > 0, _gumbel.logsf(-z))


def sf(x, loc=0, scale=1):
    """exp(-exp(z)).

    >>> print(round(float(sf(-1.0)), 5))
    0.6922
    """
    x, loc, scale, z = standardize("gumbel_l.sf", x, loc, scale)
    return nan_unless(scale > 0, _gumbel.cdf(-z))


def logsf(x, loc=0, scale=1):
    """-exp(z) (exact in the upper tail, where the sf underflows).

    >>> print(round(float(logsf(5.0)), 5))
    -148.41316
    """
    x, loc, scale, z = standardize("gumbel_l.logsf", x, loc, scale)
    return nan_unless(scale > 0, _gumbel.logcdf(-z))


def ppf(p, loc=0, scale=1):
    """loc + scale log(-log(1 - p)): -inf at 0, inf at 1, NaN outside [0, 1].

    >>> print(round(float(ppf(0.5)), 5))
    -0.36651
    """
    p, loc, scale = args("gumbel_l.ppf", p, loc, scale)
    return nan_unless(scale > 0, quantile(p, loc - scale * _gumbel.ppf_of_sf(p)))

"""The exponential distribution, as `scipy.stats.expon` / `jax.scipy.stats.expon`.

>>> from core.scipy.stats import expon
>>> print(round(float(expon.cdf(1.0)), 5))
0.63212
"""
import numpy as np

from ... import numpy as jnp
from ._util import args, nan_unless, quantile, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """-(x - loc) / scale - log(scale) for x >= loc, -inf below.

    >>> print(float(logpdf(1.0)))
    -1.0
    """
    x, loc, scale, y = standardize("expon.logpdf", x, loc, scale)
    return nan_unless(scale > 0, jnp.where(y >= 0, -y - jnp.log(scale), -np.inf))


def pdf(x, loc=0, scale=1):
    """The exponential density.

    >>> print(round(float(pdf(1.0)), 5))
    0.36788
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """1 - exp(-y) as -expm1(-y) (accurate for small y); 0 below loc.

    >>> print(round(float(cdf(1.0)), 5))
    0.63212
    """
    x, loc, scale, y = standardize("expon.cdf", x, loc, scale)
    return nan_unless(scale > 0, jnp.where(y > 0, -jnp.expm1(-jnp.maximum(y, 0)), 0.0))


def logcdf(x, loc=0, scale=1):
    """log(1 - exp(-y)); -inf at and below loc.

    >>> print(round(float(logcdf(1.0)), 5))
    -0.45868
    """
    x, loc, scale, y = standardize("expon.logcdf", x, loc, scale)
    safe = jnp.where(y > 0, y, 1.0)
    # log(-expm1(-y)) near 0, log1p(-exp(-y)) for large y (where 1 - exp(-y) rounds to 1)
    value = jnp.where(safe < np.log(2.0), jnp.log(-jnp.expm1(-safe)), jnp.log1p(-jnp.exp(-safe)))
    return nan_unless(scale > 0, jnp.where(y > 0, value, -np.inf))


def sf(x, loc=0, scale=1):
    """exp(-y) above loc, 1 below.

    >>> print(round(float(sf(1.0)), 5))
    0.36788
    """
    return jnp.exp(logsf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """-y above loc, 0 below.

    >>> print(float(logsf(2.0)))
    -2.0
    """
    x, loc, scale, y = standardize("expon.logsf", x, loc, scale)
    return nan_unless(scale > 0, jnp.where(y > 0, -y, 0.0))


def ppf(q, loc=0, scale=1):
    """The quantile function loc - scale log1p(-q) (NaN outside [0, 1]; inf at 1).

    >>> print(round(float(ppf(0.5)), 5))
    0.69315
    """
    q, loc, scale = args("expon.ppf", q, loc, scale)
    return nan_unless(scale > 0, quantile(q, loc - scale * jnp.log1p(-q)))

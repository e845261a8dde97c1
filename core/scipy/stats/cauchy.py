"""The Cauchy distribution, as `scipy.stats.cauchy` / `jax.scipy.stats.cauchy`.

>>> from core.scipy.stats import cauchy
>>> print(round(float(cauchy.cdf(1.0)), 5))
0.75
"""
import numpy as np

from ... import numpy as jnp
from ._util import args, nan_unless, quantile, standardize

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1):
    """-log(pi scale) - log1p(y^2).

    >>> print(round(float(logpdf(0.0)), 5))
    -1.14473
    """
    x, loc, scale, y = standardize("cauchy.logpdf", x, loc, scale)
    return nan_unless(scale > 0, -np.log(np.pi) - jnp.log(scale) - jnp.log1p(y * y))


def pdf(x, loc=0, scale=1):
    """The Cauchy density 1 / (pi scale (1 + y^2)).

    >>> print(round(float(pdf(0.0)), 5))
    0.31831
    """
    return jnp.exp(logpdf(x, loc, scale))


def _cdf(y):
    # atan2(1, -y) / pi = 1/2 + atan(y) / pi, without the cancellation in the lower tail
    return jnp.arctan2(1.0, -y) / np.pi


def cdf(x, loc=0, scale=1):
    """1/2 + atan(y) / pi, computed as atan2(1, -y) / pi (relatively accurate in both tails).

    >>> print(round(float(cdf(0.0)), 5))
    0.5
    """
    x, loc, scale, y = standardize("cauchy.cdf", x, loc, scale)
    return nan_unless(scale > 0, _cdf(y))


def logcdf(x, loc=0, scale=1):
    """log cdf.

    >>> print(round(float(logcdf(0.0)), 5))
    -0.69315
    """
    x, loc, scale, y = standardize("cauchy.logcdf", x, loc, scale)
    return nan_unless(scale > 0, jnp.log(_cdf(y)))


def sf(x, loc=0, scale=1):
    """P(X > x) = cdf(-y).

    >>> print(round(float(sf(1.0)), 5))
    0.25
    """
    x, loc, scale, y = standardize("cauchy.sf", x, loc, scale)
    return nan_unless(scale > 0, _cdf(-y))


def logsf(x, loc=0, scale=1):
    """log sf.

    >>> print(round(float(logsf(1.0)), 5))
    -1.38629
    """
    x, loc, scale, y = standardize("cauchy.logsf", x, loc, scale)
    return nan_unless(scale > 0, jnp.log(_cdf(-y)))


def _ppf(q):
    # tan(pi (q - 1/2)) = -1 / tan(pi q) = -1 / tan(pi (q - 1)): the argument nearest 0 keeps the
    # relative accuracy of the far tails (q - 1/2 would round away tiny q)
    t = jnp.tan(np.pi * jnp.where(q < 0.5, q, q - 1))
    y = jnp.where(q == 0.5, 0.0, -1 / t)
    return jnp.where(q == 0, -np.inf, jnp.where(q == 1, np.inf, y))


def ppf(q, loc=0, scale=1):
    """loc + scale tan(pi (q - 1/2)); -inf at 0, inf at 1, NaN outside [0, 1].

    >>> print(round(float(ppf(0.75)), 5))
    1.0
    """
    q, loc, scale = args("cauchy.ppf", q, loc, scale)
    return nan_unless(scale > 0, quantile(q, loc + scale * _ppf(q)))


def isf(q, loc=0, scale=1):
    """loc - scale tan(pi (q - 1/2)) (the distribution is symmetric).

    >>> print(round(float(isf(0.25)), 5))
    1.0
    """
    q, loc, scale = args("cauchy.isf", q, loc, scale)
    return nan_unless(scale > 0, quantile(q, loc - scale * _ppf(q)))

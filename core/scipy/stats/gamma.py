"""The gamma distribution with shape `a`, as `scipy.stats.gamma` / `jax.scipy.stats.gamma`.

>>> from core.scipy.stats import gamma
>>> print(round(float(gamma.cdf(1.0, 1.0)), 5))   # a = 1 is the exponential distribution
0.63212
"""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._util import args, nan_unless

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _parts(name, x, a, loc, scale):
    x, a, loc, scale = args(name, x, a, loc, scale)
    return (x - loc) / scale, a, scale, (a > 0) & (scale > 0)


def logpdf(x, a, loc=0, scale=1):
    """(a-1) log y - y - log Gamma(a) - log(scale) for y >= 0, -inf below.

    >>> print(round(float(logpdf(2.0, 3.0)), 5))
    -1.30685
    """
    y, a, scale, valid = _parts("gamma.logpdf", x, a, loc, scale)
    safe = jnp.where(y >= 0, y, 1.0)
    value = special.xlogy(a - 1, safe) - safe - lax.lgamma(a) - jnp.log(scale)
    return nan_unless(valid, jnp.where(y >= 0, value, -np.inf))


def pdf(x, a, loc=0, scale=1):
    """The gamma density.

    >>> print(round(float(pdf(2.0, 3.0)), 5))
    0.27067
    """
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """gammainc(a, max(y, 0)).

    >>> print(round(float(cdf(2.0, 3.0)), 5))
    0.32332
    """
    y, a, scale, valid = _parts("gamma.cdf", x, a, loc, scale)
    return nan_unless(valid, special.gammainc(a, jnp.maximum(y, 0.0)))


def logcdf(x, a, loc=0, scale=1):
    """log cdf (through log1p(-sf) where the cdf is near 1).

    >>> print(round(float(logcdf(2.0, 3.0)), 5))
    -1.1291
    """
    lower, upper = cdf(x, a, loc, scale), sf(x, a, loc, scale)
    # log1p(-sf) where the cdf is near 1 (log would round its small deficit away)
    return jnp.where(lower > 0.5, jnp.log1p(-upper), jnp.log(lower))


def sf(x, a, loc=0, scale=1):
    """gammaincc(a, max(y, 0)) (computed directly: keeps small upper tails).

    >>> print(round(float(sf(2.0, 3.0)), 5))
    0.67668
    """
    y, a, scale, valid = _parts("gamma.sf", x, a, loc, scale)
    return nan_unless(valid, special.gammaincc(a, jnp.maximum(y, 0.0)))


def logsf(x, a, loc=0, scale=1):
    """log sf (through log1p(-cdf) where sf is near 1).

    >>> print(round(float(logsf(2.0, 3.0)), 5))
    -0.39056
    """
    lower, upper = cdf(x, a, loc, scale), sf(x, a, loc, scale)
    return jnp.where(upper > 0.5, jnp.log1p(-lower), jnp.log(upper))

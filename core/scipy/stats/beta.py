"""The beta distribution on [loc, loc + scale], as `scipy.stats.beta` / `jax.scipy.stats.beta`.

>>> from core.scipy.stats import beta
>>> print(round(float(beta.cdf(0.5, 2.0, 2.0)), 5))
0.5
"""
import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import args, nan_unless

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _parts(name, x, a, b, loc, scale):
    x, a, b, loc, scale = args(name, x, a, b, loc, scale)
    return (x - loc) / scale, a, b, scale, (a > 0) & (b > 0) & (scale > 0)


def logpdf(x, a, b, loc=0, scale=1):
    """(a-1) log y + (b-1) log(1-y) - log B(a, b) - log(scale) on 0 <= y <= 1, -inf outside
    (+inf at an edge where a < 1 or b < 1, as SciPy).

    >>> print(round(float(logpdf(0.5, 2.0, 2.0)), 5))
    0.40547
    """
    y, a, b, scale, valid = _parts("beta.logpdf", x, a, b, loc, scale)
    inside = (y >= 0) & (y <= 1)
    safe = jnp.where(inside, y, 0.5)
    value = special.xlogy(a - 1, safe) + special.xlog1py(b - 1, -safe) - special.betaln(a, b) - jnp.log(scale)
    return nan_unless(valid, jnp.where(inside, value, -np.inf))


def pdf(x, a, b, loc=0, scale=1):
    """The beta density.

    >>> print(round(float(pdf(0.5, 2.0, 2.0)), 5))
    1.5
    """
    return jnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    """betainc(a, b, y) with y clipped to [0, 1].

    >>> print(round(float(cdf(0.25, 2.0, 2.0)), 5))
    0.15625
    """
    y, a, b, scale, valid = _parts("beta.cdf", x, a, b, loc, scale)
    return nan_unless(valid, special.betainc(a, b, jnp.clip(y, 0.0, 1.0)))


def logcdf(x, a, b, loc=0, scale=1):
    """log cdf (through log1p(-sf) where the cdf is near 1).

    >>> print(round(float(logcdf(0.25, 2.0, 2.0)), 5))
    -1.8563
    """
    lower, upper = cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale)
    # log1p(-sf) where the cdf is near 1 (log would round its small deficit away)
    return jnp.where(lower > 0.5, jnp.log1p(-upper), jnp.log(lower))


def sf(x, a, b, loc=0, scale=1):
    """P(X > x) = betainc(b, a, 1 - y) (computed directly: keeps small upper tails).

    >>> print(round(float(sf(0.25, 2.0, 2.0)), 5))
    0.84375
    """
    y, a, b, scale, valid = _parts("beta.sf", x, a, b, loc, scale)
    return nan_unless(valid, special.betainc(b, a, 1 - jnp.clip(y, 0.0, 1.0)))


def logsf(x, a, b, loc=0, scale=1):
    """log sf (through log1p(-cdf) where sf is near 1).

    >>> print(round(float(logsf(0.25, 2.0, 2.0)), 5))
    -0.1699
    """
    lower, upper = cdf(x, a, b, loc, scale), sf(x, a, b, loc, scale)
    return jnp.where(upper > 0.5, jnp.log1p(-lower), jnp.log(upper))

"""The geometric distribution (trials up to the first success), as `scipy.stats.geom` /
`jax.scipy.stats.geom`: pmf (1 - p)^(k - 1) p on k = 1, 2, ...

>>> from core.scipy.stats import geom
>>> print(round(float(geom.pmf(2, 0.25)), 5))
0.1875
"""
import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import args, nan_unless

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    """(k - 1) log1p(-p) + log p at the integers k - loc >= 1, -inf elsewhere (NaN unless 0 < p <= 1).

    >>> print(round(float(logpmf(1, 0.25)), 5))
    -1.38629
    """
    k, p, loc = args("geom.logpmf", k, p, loc)
    k = k - loc
    inside = (k >= 1) & (k == jnp.floor(k))
    safe = jnp.where(inside, k, 1.0)
    value = special.xlog1py(safe - 1, -p) + jnp.log(p)
    return nan_unless((p > 0) & (p <= 1), jnp.where(inside, value, -np.inf))


def pmf(k, p, loc=0):
    """The geometric probability mass.

    >>> print(round(float(pmf(3, 0.5)), 5))
    0.125
    """
    return jnp.exp(logpmf(k, p, loc))

"""The Bernoulli distribution, as `scipy.stats.bernoulli` / `jax.scipy.stats.bernoulli`.

>>> from core.scipy.stats import bernoulli
>>> print(round(float(bernoulli.pmf(1, 0.3)), 5))
0.3
"""
import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import args, nan_unless

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


def logpmf(k, p, loc=0):
    """log p at k - loc == 1, log(1 - p) at 0, -inf elsewhere (NaN for p outside [0, 1]).

    >>> print(round(float(logpmf(0, 0.3)), 5))
    -0.35667
    """
    k, p, loc = args("bernoulli.logpmf", k, p, loc)
    k = k - loc
    inside = (k == 0) | (k == 1)
    safe = jnp.where(inside, k, 0.0)
    value = special.xlogy(safe, p) + special.xlog1py(1 - safe, -p)
    return nan_unless((p >= 0) & (p <= 1), jnp.where(inside, value, -np.inf))


def pmf(k, p, loc=0):
    """The Bernoulli probability mass.

    >>> print(round(float(pmf(0, 0.3)), 5))
    0.7
    """
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """0 below 0, 1 - p on [0, 1), 1 from 1 on.

    >>> print(round(float(cdf(0.5, 0.3)), 5))
    0.7
    """
    k, p = args("bernoulli.cdf", k, p)
    value = jnp.where(k < 0, 0.0, jnp.where(k < 1, 1 - p, 1.0))
    return nan_unless((p >= 0) & (p <= 1), value)


def ppf(q, p):
    """The smallest k with cdf(k) >= q: -1 at q == 0, 0 up to q = 1 - p (below 1), then 1 (NaN outside [0, 1]).

    >>> print(float(ppf(0.9, 0.3)))
    1.0
    """
    q, p = args("bernoulli.ppf", q, p)
    value = jnp.where(q == 0, -1.0, jnp.where((q <= 1 - p) & (q < 1), 0.0, 1.0))
    valid = (p >= 0) & (p <= 1) & (q >= 0) & (q <= 1)
    return nan_unless(valid, value)

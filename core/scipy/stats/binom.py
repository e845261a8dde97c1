"""The binomial distribution, as `scipy.stats.binom` / `jax.scipy.stats.binom` (logpmf, pmf).

>>> from core.scipy.stats import binom
>>> print(round(float(binom.pmf(1, 2, 0.5)), 5))
0.5
"""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._util import args, nan_unless

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """log C(n, k) + k log p + (n - k) log(1 - p) at the integers 0 <= k - loc <= n, -inf
    elsewhere (NaN for p outside [0, 1] or n < 0).

    >>> print(round(float(logpmf(1, 2, 0.5)), 5))
    -0.69315
    """
    k, n, p, loc = args("binom.logpmf", k, n, p, loc)
    k = k - loc
    inside = (k >= 0) & (k <= n) & (k == jnp.floor(k))
    safe = jnp.where(inside, k, 0.0)
    log_choose = lax.lgamma(n + 1) - lax.lgamma(safe + 1) - lax.lgamma(n - safe + 1)
    value = log_choose + special.xlogy(safe, p) + special.xlog1py(n - safe, -p)
    return nan_unless((p >= 0) & (p <= 1) & (n >= 0), jnp.where(inside, value, -np.inf))


def pmf(k, n, p, loc=0):
    """The binomial probability mass.

    >>> print(round(float(pmf(0, 3, 0.5)), 5))
    0.125
    """
    return jnp.exp(logpmf(k, n, p, loc))

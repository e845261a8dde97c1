"""The beta-binomial distribution, as `scipy.stats.betabinom` / `jax.scipy.stats.betabinom`: a
binomial count of n trials whose success probability is Beta(a, b) distributed.

>>> from core.scipy.stats import betabinom
>>> print(round(float(betabinom.pmf(1, 2, 1.0, 1.0)), 5))   # a = b = 1: uniform on 0..n
0.33333
"""
import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import args, nan_unless

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    """log C(n, k) + log B(k + a, n - k + b) - log B(a, b) at the integers 0 <= k - loc <= n, -inf
    elsewhere (NaN unless n is a non-negative integer and a, b > 0). C(n, k) is taken as
    1 / ((n + 1) B(n - k + 1, k + 1)).

    >>> print(round(float(logpmf(0, 3, 2.0, 2.0)), 5))
    -1.60944
    """
    k, n, a, b, loc = args("betabinom.logpmf", k, n, a, b, loc)
    k = k - loc
    valid = (n >= 0) & (n == jnp.floor(n)) & (a > 0) & (b > 0)
    inside = (k >= 0) & (k <= n) & (k == jnp.floor(k))
    ok = valid & inside
    # placeholders off the support and for invalid parameters keep every log-beta finite
    k, n = jnp.where(ok, k, 0.0), jnp.where(ok, n, 1.0)
    a, b = jnp.where(valid, a, 1.0), jnp.where(valid, b, 1.0)
    log_choose = -jnp.log1p(n) - special.betaln(n - k + 1, k + 1)
    value = log_choose + special.betaln(k + a, n - k + b) - special.betaln(a, b)
    return nan_unless(valid, jnp.where(inside, value, -np.inf))


def pmf(k, n, a, b, loc=0):
    """The beta-binomial probability mass.

    >>> print(round(float(pmf(2, 4, 0.5, 0.5)), 4))   # 9/64
    0.1406
    """
    return jnp.exp(logpmf(k, n, a, b, loc))

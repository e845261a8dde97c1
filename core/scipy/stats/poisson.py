"""The Poisson distribution, as `scipy.stats.poisson` / `jax.scipy.stats.poisson`.

>>> from core.scipy.stats import poisson
>>> print(round(float(poisson.pmf(2, 3.0)), 5))
0.22404
"""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._util import args, nan_unless

__all__ = ["logpmf", "pmf", "cdf", "entropy"]


def logpmf(k, mu, loc=0):
    """k log(mu) - mu - log(k!) at the integers k - loc >= 0, -inf elsewhere (NaN for mu < 0).

    >>> print(round(float(logpmf(2, 3.0)), 5))
    -1.49592
    """
    k, mu, loc = args("poisson.logpmf", k, mu, loc)
    k = k - loc
    inside = (k >= 0) & (k == jnp.floor(k))
    safe = jnp.where(inside, k, 0.0)
    value = special.xlogy(safe, mu) - mu - lax.lgamma(safe + 1)
    return nan_unless(mu >= 0, jnp.where(inside, value, -np.inf))


def pmf(k, mu, loc=0):
    """The Poisson probability mass.

    >>> print(round(float(pmf(0, 1.0)), 5))
    0.36788
    """
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """P(K <= k) = gammaincc(floor(k - loc) + 1, mu); 0 below loc.

    >>> print(round(float(cdf(2, 3.0)), 5))
    0.42319
    """
    k, mu, loc = args("poisson.cdf", k, mu, loc)
    k = jnp.floor(k - loc)
    value = special.gammaincc(jnp.maximum(k, 0.0) + 1, mu)
    return nan_unless(mu >= 0, jnp.where(k >= 0, value, 0.0))


# below this mean the entropy is summed over the support's first _TERMS points (the mass beyond
# mu + 15 sqrt(mu) is negligible); above it, the asymptotic expansion in 1/mu (error below 1e-11)
_DIRECT_BELOW = 400.0
_TERMS = 720


def entropy(mu, loc=0):
    """The entropy -sum_k pmf(k) log pmf(k) (independent of loc; 0 at mu = 0, NaN for mu < 0).

    >>> print(round(float(entropy(3.0)), 5))
    1.93147
    """
    mu, loc = args("poisson.entropy", mu, loc)
    small = mu < _DIRECT_BELOW
    m = jnp.where(small, mu, 1.0)
    k = jnp.arange(_TERMS, dtype=mu.dtype).reshape((_TERMS,) + (1,) * mu.ndim)
    logp = special.xlogy(k, m) - m - lax.lgamma(k + 1)
    # terms of zero mass (all k > 0 when mu == 0) contribute 0, not 0 * -inf
    direct = -jnp.sum(jnp.where(logp > -np.inf, jnp.exp(logp) * logp, 0.0), axis=0)
    big = jnp.where(small, _DIRECT_BELOW, mu)
    inv = 1 / big
    asymptotic = (0.5 * jnp.log(2 * np.pi * np.e * big)
                  - inv * (1 / 12 + inv * (1 / 24 + inv * (19 / 360))))
    return nan_unless(mu >= 0, jnp.where(small, direct, asymptotic))

"""The negative binomial distribution (failures before the n-th success), as
`scipy.stats.nbinom` / `jax.scipy.stats.nbinom`: pmf C(k + n - 1, k) p^n (1 - p)^k on k = 0, 1, ...
(n may be any positive real).

>>> from core.scipy.stats import nbinom
>>> print(round(float(nbinom.pmf(1, 2, 0.5)), 5))
0.25
"""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._util import args, nan_unless

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """log C(k + n - 1, k) + n log p + k log1p(-p) at the integers k - loc >= 0, -inf elsewhere
    (NaN unless n > 0 and 0 < p <= 1). The binomial coefficient is a difference of log-gammas, as
    SciPy's logpmf takes it (exact at k = 0; for n of 1e6 it keeps about 9 digits).

    >>> print(round(float(logpmf(0, 3.0, 0.5)), 5))
    -2.07944
    """
    k, n, p, loc = args("nbinom.logpmf", k, n, p, loc)
    k = k - loc
    valid = (n > 0) & (p > 0) & (p <= 1)
    inside = (k >= 0) & (k == jnp.floor(k))
    safe_k = jnp.where(inside, k, 0.0)
    safe_n = jnp.where(valid, n, 1.0)
    log_choose = lax.lgamma(safe_n + safe_k) - lax.lgamma(safe_n) - lax.lgamma(safe_k + 1)
    value = log_choose + safe_n * jnp.log(p) + special.xlog1py(safe_k, -p)
    return nan_unless(valid, jnp.where(inside, value, -np.inf))


def pmf(k, n, p, loc=0):
    """The negative binomial probability mass.

    >>> print(round(float(pmf(2, 1.5, 0.4)), 5))
    0.17076
    """
    return jnp.exp(logpmf(k, n, p, loc))

"""The multinomial distribution, as `scipy.stats.multinomial` / `jax.scipy.stats.multinomial`:
counts `x` of K categories in `n` draws with probabilities `p`, along the last axis (leading axes
of x, n and p broadcast).

>>> from core.scipy.stats import multinomial
>>> print(round(float(multinomial.pmf(jnp.array([1, 1]), 2, jnp.array([0.5, 0.5]))), 5))
0.5
"""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    """log n! + sum_i (x_i log p_i - log x_i!) where the x_i are non-negative integers summing to
    n, -inf elsewhere; NaN where n < 0 or some p_i is outside [0, 1].

    Unlike SciPy, which replaces p's last entry by 1 - sum(p[:-1]), `p` is used as given (as jax
    does), so a gradient reaches every p_i; the two agree when p sums to 1. Counts may be integers
    (as jax requires) or integral floats.

    >>> print(round(float(logpmf(jnp.array([1, 2, 0]), 3, jnp.array([0.2, 0.3, 0.5]))), 5))
    -2.91877
    """
    x, n, p = (jnp.asarray(v) for v in (x, n, p))
    if x.ndim == 0 or p.ndim == 0:
        raise ValueError(f"multinomial.logpmf: x and p must have the categories along their last axis, got x "
                         f"{x.dtype.name}{list(x.shape)} and p {p.dtype.name}{list(p.shape)}.")
    if x.shape[-1] != p.shape[-1]:
        raise ValueError(f"multinomial.logpmf: x and p must have as many categories (last axis), got x "
                         f"{x.dtype.name}{list(x.shape)} and p {p.dtype.name}{list(p.shape)}.")
    dtype = jnp.result_type(x, n, p, float)
    x, n, p = x.astype(dtype), n.astype(dtype), p.astype(dtype)
    counts_ok = jnp.all((x >= 0) & (x == jnp.floor(x)), axis=-1) & (jnp.sum(x, axis=-1) == n)
    safe_x = jnp.where((x >= 0) & (x == jnp.floor(x)), x, 0.0)
    value = lax.lgamma(jnp.maximum(n, 0.0) + 1) + jnp.sum(special.xlogy(safe_x, p) - lax.lgamma(safe_x + 1), axis=-1)
    out = jnp.where(counts_ok, value, -np.inf)
    valid = (n >= 0) & jnp.all((p >= 0) & (p <= 1), axis=-1)
    return jnp.where(valid, out, np.nan)


def pmf(x, n, p):
    """The multinomial probability mass.

    >>> print(round(float(pmf(jnp.array([0, 0, 3]), 3, jnp.array([0.2, 0.3, 0.5]))), 5))
    0.125
    """
    return jnp.exp(logpmf(x, n, p))

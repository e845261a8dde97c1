"""The Dirichlet distribution, as `scipy.stats.dirichlet` / `jax.scipy.stats.dirichlet`.

`x` holds the K components along its first axis (further axes are a batch); with K - 1
components the last is 1 - sum(x), as SciPy.

>>> from core.scipy.stats import dirichlet
>>> print(round(float(dirichlet.pdf(jnp.array([0.5, 0.5]), jnp.array([1.0, 1.0]))), 5))
1.0
"""
import numpy as np

from ... import dtypes
from ... import numpy as jnp
from ... import lax
from .. import special

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha):
    """sum_i (alpha_i - 1) log x_i - log B(alpha) on the simplex (x >= 0, sum 1), -inf off it;
    NaN where some alpha_i <= 0.

    >>> print(round(float(logpdf(jnp.array([0.2, 0.3, 0.5]), jnp.array([1.0, 2.0, 3.0]))), 5))
    1.50408
    """
    x, alpha = _promote(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"dirichlet.logpdf: alpha must be one-dimensional (K concentrations), got "
                         f"{alpha.dtype.name}{list(alpha.shape)}.")
    k = alpha.shape[0]
    if x.ndim == 0 or x.shape[0] not in (k, k - 1):
        raise ValueError(f"dirichlet.logpdf: x must have {k} (or {k - 1}) components along its first axis "
                         f"to match alpha {alpha.dtype.name}{list(alpha.shape)}, got {x.dtype.name}{list(x.shape)}.")
    if x.shape[0] == k - 1:
        x = jnp.concatenate([x, (1 - jnp.sum(x, axis=0))[None]], axis=0)
    a = alpha.reshape((k,) + (1,) * (x.ndim - 1))
    log_norm = jnp.sum(lax.lgamma(alpha)) - lax.lgamma(jnp.sum(alpha))
    value = jnp.sum(special.xlogy(a - 1, jnp.maximum(x, 0.0)), axis=0) - log_norm
    tol = float(np.sqrt(dtypes.finfo(x.dtype).eps))
    on_simplex = jnp.all(x >= 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) <= tol)
    out = jnp.where(on_simplex, value, -np.inf)
    return jnp.where(jnp.all(alpha > 0), out, np.nan)


def _promote(x, alpha):
    x, alpha = jnp.asarray(x), jnp.asarray(alpha)
    dtype = jnp.result_type(x, alpha, float)
    return x.astype(dtype), alpha.astype(dtype)


def pdf(x, alpha):
    """The Dirichlet density.

    >>> print(round(float(pdf(jnp.array([0.2, 0.3, 0.5]), jnp.array([1.0, 2.0, 3.0]))), 4))
    4.5
    """
    return jnp.exp(logpdf(x, alpha))

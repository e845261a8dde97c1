"""The multivariate normal distribution, as `scipy.stats.multivariate_normal` /
`jax.scipy.stats.multivariate_normal` (logpdf, pdf).

`x` is (..., n), `mean` (..., n) and `cov` (..., n, n), with their batch dimensions broadcast; a
0-d `cov` is an isotropic variance; a 0-d `mean` makes the distribution univariate.

>>> from core.scipy.stats import multivariate_normal
>>> print(round(float(multivariate_normal.pdf(jnp.zeros(2), jnp.zeros(2), jnp.eye(2))), 5))
0.15915
"""
import numpy as np

from ... import numpy as jnp
from ...lax import linalg as lax_linalg

__all__ = ["logpdf", "pdf"]

_LOG_2PI = np.log(2 * np.pi)


def logpdf(x, mean, cov, allow_singular=None):
    """-(x - mean)^T cov^-1 (x - mean) / 2 - log det(2 pi cov) / 2, through the Cholesky factor of
    `cov` (NaN where cov is not positive definite). `allow_singular` is not supported (as JAX).

    >>> print(round(float(logpdf(jnp.array([1.0, 0.0]), jnp.zeros(2), jnp.eye(2))), 5))
    -2.33788
    """
    if allow_singular is not None:
        raise NotImplementedError("multivariate_normal.logpdf: allow_singular is not supported; leave it None.")
    x, mean, cov = _promote(x, mean, cov)
    if mean.ndim == 0:
        if cov.ndim != 0:
            raise ValueError(f"multivariate_normal.logpdf: a scalar mean needs a scalar cov (a variance), got "
                             f"cov {cov.dtype.name}{list(cov.shape)}.")
        y = x - mean
        return -0.5 * y * y / cov - 0.5 * (_LOG_2PI + jnp.log(cov))
    n = mean.shape[-1]
    if x.ndim == 0 or x.shape[-1] != n:
        raise ValueError(f"multivariate_normal.logpdf: x's last dimension must match mean's ({n}), got x "
                         f"{x.dtype.name}{list(x.shape)} and mean {mean.dtype.name}{list(mean.shape)}.")
    y = x - mean
    if cov.ndim == 0:
        return -0.5 * jnp.sum(y * y, axis=-1) / cov - 0.5 * n * (_LOG_2PI + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal.logpdf: cov must be a scalar or (..., {n}, {n}) to match mean "
                         f"{mean.dtype.name}{list(mean.shape)}, got cov {cov.dtype.name}{list(cov.shape)}.")
    factor = jnp.linalg.cholesky(cov)
    batch = np.broadcast_shapes(y.shape[:-1], cov.shape[:-2])
    factor = jnp.broadcast_to(factor, batch + (n, n))
    y = jnp.broadcast_to(y, batch + (n,))
    # z = L^-1 (x - mean): then the quadratic form is |z|^2
    z = lax_linalg.triangular_solve(factor, y[..., None], left_side=True, lower=True)[..., 0]
    log_det_half = jnp.sum(jnp.log(jnp.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(z * z, axis=-1) - 0.5 * n * _LOG_2PI - log_det_half


def _promote(*values):
    values = [jnp.asarray(v) for v in values]
    dtype = jnp.result_type(*values, float)
    return [v.astype(dtype) for v in values]


def pdf(x, mean, cov):
    """The multivariate normal density.

    >>> print(round(float(pdf(jnp.zeros(1), jnp.zeros(1), jnp.eye(1))), 5))
    0.39894
    """
    return jnp.exp(logpdf(x, mean, cov))

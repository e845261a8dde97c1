"""Gaussian kernel density estimation, as `scipy.stats.gaussian_kde` /
`jax.scipy.stats.gaussian_kde`.

The estimate is a weighted mixture of normal kernels, one at each data point, sharing the
covariance `covariance` = (the data's weighted covariance) * factor^2, where the bandwidth factor
is Scott's rule neff^(-1/(d+4)), Silverman's (neff (d+2)/4)^(-1/(d+4)), a given scalar or a
callable's value on the estimator. The estimator is a pytree (its arrays are its leaves), so it
can be passed through jit, vmap and grad.

>>> import core
>>> from core.scipy.stats import gaussian_kde
>>> kde = gaussian_kde(jnp.array([-1.0, 0.0, 1.0]), bw_method=1.0)
>>> print(round(float(kde.integrate_box_1d(-np.inf, 0.0)), 5))   # symmetric data
0.5
"""
import numpy as np

from ... import dtypes
from ... import numpy as jnp
from ... import random
from ...tree_util import register_pytree_node_class
from .. import special
from . import multivariate_normal

__all__ = ["gaussian_kde"]

_LOG_2PI = np.log(2 * np.pi)


def _promote(*values):
    values = [jnp.asarray(v) for v in values]
    dtype = jnp.result_type(*values, float)
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise NotImplementedError(f"gaussian_kde: complex data ({dtype.name}) is not supported; pass real arrays.")
    return [v.astype(dtype) for v in values]


@register_pytree_node_class
class gaussian_kde:
    """A Gaussian kernel density estimate of `dataset`: (n,) points in one dimension, or (d, n)
    for n points in d dimensions. `bw_method` is None or 'scott', 'silverman', a scalar bandwidth
    factor, or a callable taking the estimator (with `dataset`, `weights`, `neff`, `d` and `n`
    set) and returning the factor. `weights`, (n,) and non-negative, are normalized to sum 1.

    Attributes: `dataset` (d, n), `weights` (n,), `neff` (the effective sample size
    1 / sum(weights^2)), `covariance` and `inv_cov` (d, d) of the kernels, `d`, `n`.

    >>> kde = gaussian_kde(jnp.array([0.0, 1.0, 2.0, 4.0]))
    >>> print(kde.d, kde.n, kde.evaluate(jnp.array([1.0, 3.0])).shape)
    1 4 (2,)
    """

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if dataset.size <= 1:
            raise ValueError(f"gaussian_kde: dataset must hold several points, got "
                             f"{dataset.dtype.name}{list(dataset.shape)}.")
        d, n = dataset.shape
        if weights is None:
            (dataset,) = _promote(dataset)
            weights = jnp.full((n,), 1.0 / n, dataset.dtype)
        else:
            dataset, weights = _promote(dataset, weights)
            weights = jnp.atleast_1d(weights)
            if weights.shape != (n,):
                raise ValueError(f"gaussian_kde: weights must be one-dimensional with one weight per point "
                                 f"({n}), got {weights.dtype.name}{list(weights.shape)}.")
            weights = weights / jnp.sum(weights)
        self.dataset, self.weights = dataset, weights
        self.neff = 1 / jnp.sum(weights * weights)
        factor = self._bandwidth_factor(bw_method)
        data_cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        self.covariance = data_cov * factor ** 2
        self.inv_cov = jnp.linalg.inv(data_cov) / factor ** 2

    def _bandwidth_factor(self, bw_method):
        d = self.d
        if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
            return self.neff ** (-1.0 / (d + 4))
        if isinstance(bw_method, str) and bw_method == "silverman":
            return (self.neff * (d + 2) / 4.0) ** (-1.0 / (d + 4))
        if callable(bw_method):
            return bw_method(self)
        if not isinstance(bw_method, str) and np.ndim(bw_method) == 0:
            return bw_method
        raise ValueError(f"gaussian_kde: bw_method must be 'scott', 'silverman', a scalar or a callable, "
                         f"got {bw_method!r}.")

    # -- pytree ---------------------------------------------------------------------------------
    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        kde = cls.__new__(cls)
        kde.neff, kde.dataset, kde.weights, kde.covariance, kde.inv_cov = children
        return kde

    @property
    def d(self):
        """The number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """The number of data points."""
        return self.dataset.shape[1]

    # -- densities ------------------------------------------------------------------------------
    def _points(self, name, points):
        (points,) = _promote(points)
        points = jnp.atleast_2d(points)
        if points.shape[0] != self.d:
            if points.shape == (1, self.d):  # one d-dimensional point given flat
                return points.reshape(self.d, 1)
            raise ValueError(f"gaussian_kde.{name}: points must be (d, m) with d = {self.d} (the dataset's "
                             f"dimension), got {points.dtype.name}{list(points.shape)}.")
        return points

    def _log_kernels(self, name, points):
        """(m, n): log(weight_j) + log N(point_i; data_j, covariance), through the Cholesky factor W
        of the inverse covariance (|W^T (x - y)|^2 is the Mahalanobis distance)."""
        points = self._points(name, points)
        dtype = jnp.result_type(points, self.dataset)
        whitening = jnp.linalg.cholesky(self.inv_cov.astype(dtype))
        log_norm = jnp.sum(jnp.log(jnp.diagonal(whitening))) - 0.5 * self.d * _LOG_2PI
        p = whitening.T @ points.astype(dtype)
        data = whitening.T @ self.dataset.astype(dtype)
        diff = p[:, :, None] - data[:, None, :]
        return jnp.log(self.weights)[None, :] + log_norm - 0.5 * jnp.sum(diff * diff, axis=0)

    def evaluate(self, points):
        """The density at `points`: (d, m), or (m,) when d = 1, or one point as (d,).

        >>> kde = gaussian_kde(jnp.array([0.0, 2.0]), bw_method=1.0)
        >>> print(kde.evaluate(jnp.array([1.0, 1.0])).shape)
        (2,)
        """
        return jnp.sum(jnp.exp(self._log_kernels("evaluate", points)), axis=1)

    __call__ = evaluate

    def pdf(self, x):
        """The density at `x` (the same as `evaluate`).

        >>> kde = gaussian_kde(jnp.array([-1.0, 1.0]), bw_method=1.0)
        >>> print(round(float(kde.pdf(jnp.array([0.0]))[0]), 4))   # N(0; +-1, 2) averaged
        0.2197
        """
        return self.evaluate(x)

    def logpdf(self, x):
        """log of the density, through logsumexp (finite where the density underflows).

        >>> kde = gaussian_kde(jnp.array([-1.0, 1.0]), bw_method=1.0)
        >>> print(round(float(kde.logpdf(jnp.array([100.0]))[0]), 2))
        -2452.21
        """
        return special.logsumexp(self._log_kernels("logpdf", x), axis=1)

    # -- integrals ------------------------------------------------------------------------------
    def integrate_box_1d(self, low, high):
        """The probability mass between the scalars `low` and `high` (one-dimensional data only).

        >>> kde = gaussian_kde(jnp.array([-1.0, 1.0]), bw_method=1.0)
        >>> print(round(float(kde.integrate_box_1d(-np.inf, np.inf)), 5))
        1.0
        """
        if self.d != 1:
            raise ValueError(f"gaussian_kde.integrate_box_1d: only one-dimensional data is supported, the "
                             f"dataset has d = {self.d}; use integrate_gaussian or resample instead.")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError(f"gaussian_kde.integrate_box_1d: low and high must be scalars, got shapes "
                             f"{np.shape(low)} and {np.shape(high)}.")
        sigma = jnp.sqrt(self.covariance[0, 0])
        data = self.dataset[0]
        upper = special.ndtr((high - data) / sigma)
        lower = special.ndtr((low - data) / sigma)
        return jnp.sum(self.weights * (upper - lower))

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the normal density N(mean, cov): the mixture of
        N(data_j; mean, covariance + cov).

        >>> kde = gaussian_kde(jnp.array([0.0, 0.0001]), bw_method=1.0)
        >>> print(kde.integrate_gaussian(jnp.array([0.0]), jnp.array([[1.0]])).shape)
        ()
        """
        mean = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean)))
        cov = jnp.atleast_2d(jnp.asarray(cov))
        if mean.shape != (self.d,) or cov.shape != (self.d, self.d):
            raise ValueError(f"gaussian_kde.integrate_gaussian: mean must be ({self.d},) and cov ({self.d}, "
                             f"{self.d}), got {mean.dtype.name}{list(mean.shape)} and "
                             f"{cov.dtype.name}{list(cov.shape)}.")
        density = multivariate_normal.pdf(self.dataset.T, mean, self.covariance + cov)
        return jnp.sum(self.weights * density)

    def integrate_kde(self, other):
        """The integral of the product of this density and another `gaussian_kde`'s.

        >>> a = gaussian_kde(jnp.array([0.0, 1.0]), bw_method=1.0)
        >>> print(round(float(a.integrate_kde(a)), 5) == round(float(a.integrate_kde(a)), 5))
        True
        """
        if other.d != self.d:
            raise ValueError(f"gaussian_kde.integrate_kde: both estimates must have the same dimension, got "
                             f"{self.d} and {other.d}.")
        diff = self.dataset.T[:, None, :] - other.dataset.T[None, :, :]
        density = multivariate_normal.pdf(diff, jnp.zeros(self.d, diff.dtype), self.covariance + other.covariance)
        return jnp.sum(self.weights[:, None] * other.weights[None, :] * density)

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not supported (as in jax): only one-dimensional boxes, through `integrate_box_1d`."""
        raise NotImplementedError("gaussian_kde.integrate_box: only one-dimensional boxes are supported; use "
                                  "integrate_box_1d.")

    def set_bandwidth(self, bw_method=None):
        """Not supported (as in jax): the estimator is immutable; build a new one with `bw_method`."""
        raise NotImplementedError("gaussian_kde.set_bandwidth: the estimator is immutable; build a new "
                                  "gaussian_kde(dataset, bw_method=..., weights=...) instead.")

    # -- sampling -------------------------------------------------------------------------------
    def resample(self, key, shape=()):
        """Draws from the density: a data point chosen by weight, plus normal noise with the kernel
        covariance. Returns (d,) + shape.

        One uniform draw of d + 1 components per sample serves both: the first picks the point (by
        the weights' cumulative sums), the others become the noise through the normal quantile
        function. (Splitting the key for jax's two draws, a choice and a multivariate normal, gives
        other, equally valid samples, but compiles about five times slower: XLA is slow on random
        bits from a derived key and on a normal draw mapped back through the normal cdf.)

        >>> kde = gaussian_kde(jnp.array([0.0, 1.0, 3.0]))
        >>> print(kde.resample(random.key(0), (5,)).shape)
        (1, 5)
        """
        shape = tuple(shape)
        dtype = self.dataset.dtype
        # (0, 1) without 0, so that every quantile is finite
        u = random.uniform(key, shape + (self.d + 1,), dtype, minval=dtypes.finfo(dtype).tiny)
        cumulative = jnp.cumsum(self.weights)
        index = jnp.searchsorted(cumulative, u[..., 0] * cumulative[-1], side="right")
        noise = special.ndtri(u[..., 1:]) @ jnp.linalg.cholesky(self.covariance).T
        return self.dataset[:, jnp.minimum(index, self.n - 1)] + jnp.moveaxis(noise, -1, 0)

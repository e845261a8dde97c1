"""The Laplace (double exponential) distribution, as `jax.scipy.stats.laplace`.

>>> from core.scipy.stats import laplace
>>> print(float(laplace.cdf(0.0)))
0.5
"""
import numpy as np

from ... import numpy as jnp
from ._util import nan_unless, standardize

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x, loc=0, scale=1):
    """-|x - loc| / scale - log(2 scale).

    >>> print(round(float(logpdf(0.0)), 5))
    -0.69315
    """
    x, loc, scale, y = standardize("laplace.logpdf", x, loc, scale)
    return nan_unless(scale > 0, -jnp.abs(y) - np.log(2.0) - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The Laplace density exp(-|y|) / (2 scale).

    >>> print(float(pdf(0.0)))
    0.5
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """exp(y) / 2 below loc, 1 - exp(-y) / 2 above.

    >>> print(round(float(cdf(1.0)), 5))
    0.81606
    """
    x, loc, scale, y = standardize("laplace.cdf", x, loc, scale)
    half_tail = 0.5 * jnp.exp(-jnp.abs(y))
    return nan_unless(scale > 0, jnp.where(y < 0, half_tail, 1 - half_tail))

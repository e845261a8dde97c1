"""The wrapped Cauchy distribution on [0, 2 pi] with shape `c`, as `scipy.stats.wrapcauchy` /
`jax.scipy.stats.wrapcauchy` (standard form): density (1 - c^2) / (2 pi (1 + c^2 - 2 c cos x)).

>>> from core.scipy.stats import wrapcauchy
>>> print(round(float(wrapcauchy.pdf(np.pi, 0.5)), 5))
0.05305
"""
import numpy as np

from ... import numpy as jnp
from ._util import args, nan_unless

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    """log(1 - c^2) - log(2 pi) - log(1 + c^2 - 2 c cos x) on 0 <= x <= 2 pi, -inf outside, NaN
    unless 0 < c < 1. Both factors are written without cancellation for c near 1: 1 - c^2 as
    (1 - c)(1 + c) and the denominator as (1 - c)^2 + 4 c sin(x/2)^2.

    >>> print(round(float(logpdf(0.0, 0.5)), 5))
    -0.73926
    """
    x, c = args("wrapcauchy.logpdf", x, c)
    half_sin = jnp.sin(0.5 * x)
    denominator = (1 - c) ** 2 + 4 * c * half_sin * half_sin
    value = jnp.log1p(-c) + jnp.log1p(c) - np.log(2 * np.pi) - jnp.log(denominator)
    inside = (x >= 0) & (x <= 2 * np.pi)
    return nan_unless((c > 0) & (c < 1), jnp.where(inside, value, -np.inf))


def pdf(x, c):
    """The wrapped Cauchy density.

    >>> print(round(float(pdf(0.0, 0.5)), 5))
    0.47746
    """
    return jnp.exp(logpdf(x, c))

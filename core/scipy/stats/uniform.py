"""The continuous uniform distribution on [loc, loc + scale], as `jax.scipy.stats.uniform`.

>>> from core.scipy.stats import uniform
>>> print(float(uniform.pdf(0.5, 0.0, 2.0)))
0.5
"""
import numpy as np

from ... import numpy as jnp
from ._util import args, nan_unless, quantile, standardize

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """-log(scale) on [loc, loc + scale], -inf outside.

    >>> print(float(logpdf(2.0)))
    -inf
    """
    x, loc, scale, y = standardize("uniform.logpdf", x, loc, scale)
    inside = (x >= loc) & (x <= loc + scale)
    return nan_unless(scale > 0, jnp.where(inside, -jnp.log(scale), -np.inf))


def pdf(x, loc=0, scale=1):
    """1 / scale on [loc, loc + scale], 0 outside.

    >>> print(float(pdf(0.5)))
    1.0
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """(x - loc) / scale clipped to [0, 1].

    >>> print(float(cdf(0.25)))
    0.25
    """
    x, loc, scale, y = standardize("uniform.cdf", x, loc, scale)
    return nan_unless(scale > 0, jnp.clip(y, 0.0, 1.0))


def ppf(q, loc=0, scale=1):
    """loc + scale q (NaN outside [0, 1]).

    >>> print(float(ppf(0.5, 1.0, 2.0)))
    2.0
    """
    q, loc, scale = args("uniform.ppf", q, loc, scale)
    return nan_unless(scale > 0, quantile(q, loc + scale * q))

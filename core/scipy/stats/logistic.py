"""The logistic distribution, as `scipy.stats.logistic` / `jax.scipy.stats.logistic`.

>>> from core.scipy.stats import logistic
>>> print(float(logistic.cdf(0.0)))
0.5
"""
from ... import numpy as jnp
from .. import special
from ._util import args, nan_unless, quantile, standardize

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]


def logpdf(x, loc=0, scale=1):
    """-|y| - 2 log1p(exp(-|y|)) - log(scale) (the density is symmetric; no overflow for large |y|).

    >>> print(round(float(logpdf(0.0)), 5))
    -1.38629
    """
    x, loc, scale, y = standardize("logistic.logpdf", x, loc, scale)
    a = jnp.abs(y)
    return nan_unless(scale > 0, -a - 2 * jnp.log1p(jnp.exp(-a)) - jnp.log(scale))


def pdf(x, loc=0, scale=1):
    """The logistic density.

    >>> print(float(pdf(0.0)))
    0.25
    """
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """expit((x - loc) / scale).

    >>> print(round(float(cdf(1.0)), 5))
    0.73106
    """
    x, loc, scale, y = standardize("logistic.cdf", x, loc, scale)
    return nan_unless(scale > 0, special.expit(y))


def sf(x, loc=0, scale=1):
    """expit(-(x - loc) / scale).

    >>> print(round(float(sf(1.0)), 5))
    0.26894
    """
    x, loc, scale, y = standardize("logistic.sf", x, loc, scale)
    return nan_unless(scale > 0, special.expit(-y))


def ppf(x, loc=0, scale=1):
    """loc + scale logit(q) (the argument is named `x` as in JAX; NaN outside [0, 1]).

    >>> print(round(float(ppf(0.75)), 5))
    1.09861
    """
    q, loc, scale = args("logistic.ppf", x, loc, scale)
    return nan_unless(scale > 0, quantile(q, loc + scale * special.logit(q)))


def isf(x, loc=0, scale=1):
    """loc - scale logit(q).

    >>> print(round(float(isf(0.25)), 5))
    1.09861
    """
    q, loc, scale = args("logistic.isf", x, loc, scale)
    return nan_unless(scale > 0, quantile(q, loc - scale * special.logit(q)))

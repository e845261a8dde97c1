"""The generalized normal distribution with shape `beta`, as `scipy.stats.gennorm` /
`jax.scipy.stats.gennorm` (standard form: jax takes no loc or scale): density
beta / (2 Gamma(1/beta)) exp(-|x|^beta). beta = 2 is a normal with variance 1/2, beta = 1 the
Laplace distribution.

>>> from core.scipy.stats import gennorm
>>> print(round(float(gennorm.cdf(1.0, 1.0)), 5))   # Laplace: 1 - exp(-1) / 2
0.81606
"""
import numpy as np

from ... import numpy as jnp
from ... import lax
from .. import special
from ._util import args, nan_unless

__all__ = ["logpdf", "pdf", "cdf"]


def logpdf(x, beta):
    """log(beta / 2) - log Gamma(1/beta) - |x|^beta (NaN for beta <= 0).

    >>> print(round(float(logpdf(0.0, 2.0)), 5))   # the normal with variance 1/2: -log(sqrt(pi))
    -0.57236
    """
    x, beta = args("gennorm.logpdf", x, beta)
    value = jnp.log(0.5 * beta) - lax.lgamma(1 / beta) - jnp.abs(x) ** beta
    return nan_unless(beta > 0, value)


def pdf(x, beta):
    """The generalized normal density.

    >>> print(round(float(pdf(0.0, 1.0)), 5))
    0.5
    """
    return jnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """1/2 + sign(x) P(1/beta, |x|^beta) / 2, with the lower tail taken as Q(1/beta, |x|^beta) / 2
    (the regularized upper incomplete gamma), which keeps its small values instead of 1/2 - 1/2.

    >>> print(round(float(cdf(0.0, 3.0)), 5))
    0.5
    """
    x, beta = args("gennorm.cdf", x, beta)
    inv, power = 1 / beta, jnp.abs(x) ** beta
    value = jnp.where(x < 0, 0.5 * special.gammaincc(inv, power), 0.5 + 0.5 * special.gammainc(inv, power))
    return nan_unless(beta > 0, value)

"""Student's t distribution, as `jax.scipy.stats.t` (logpdf and pdf).

>>> from core.scipy.stats import t
>>> print(round(float(t.pdf(0.0, 1.0)), 5))   # df = 1 is the Cauchy distribution
0.31831
"""
import numpy as np

from ... import numpy as jnp
from ... import lax
from ._util import args, nan_unless

__all__ = ["logpdf", "pdf"]


def _log_gamma_ratio(z):
    """log Gamma(z + 1/2) - log Gamma(z). For large z the two log-gammas are huge and nearly
    equal, so their difference comes from its asymptotic series (next term ~ z^-7)."""
    big = z > 50
    zb = jnp.where(big, z, 100.0)
    inv = 1 / zb
    series = 0.5 * jnp.log(zb) - inv / 8 + inv ** 3 / 192 - inv ** 5 / 640
    zs = jnp.where(big, 1.0, z)
    return jnp.where(big, series, lax.lgamma(zs + 0.5) - lax.lgamma(zs))


def logpdf(x, df, loc=0, scale=1):
    """log Gamma((df+1)/2) - log Gamma(df/2) - log(sqrt(pi df) scale) - (df+1)/2 log1p(y^2 / df).

    >>> print(round(float(logpdf(0.0, 3.0)), 5))
    -1.00089
    """
    x, df, loc, scale = args("t.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half = 0.5 * (df + 1)
    norm = _log_gamma_ratio(0.5 * df) - 0.5 * jnp.log(np.pi * df) - jnp.log(scale)
    return nan_unless((scale > 0) & (df > 0), norm - half * jnp.log1p(y * y / df))


def pdf(x, df, loc=0, scale=1):
    """The t density.

    >>> print(round(float(pdf(0.0, 3.0)), 5))
    0.36755
    """
    return jnp.exp(logpdf(x, df, loc, scale))

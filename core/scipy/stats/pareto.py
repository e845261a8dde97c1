"""The Pareto distribution with shape `b`, as `scipy.stats.pareto` / `jax.scipy.stats.pareto`:
sf y^-b on y = (x - loc) / scale >= 1.

>>> from core.scipy.stats import pareto
>>> print(float(pareto.sf(2.0, 3.0)))
0.125
"""
import numpy as np

from ... import numpy as jnp
from ._util import args, log1mexp, nan_unless, quantile

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _parts(name, x, b, loc, scale):
    """(b log y on the support, 2.0 below it), the support mask, b, scale and the validity mask.
    Points off the support see log y = log 2, so no branch later divides by 0 or takes log 0."""
    x, b, loc, scale = args(name, x, b, loc, scale)
    y = (x - loc) / scale
    inside = y >= 1
    log_y = jnp.log(jnp.where(inside, y, 2.0))
    return log_y, inside, b, scale, (b > 0) & (scale > 0)


def logpdf(x, b, loc=0, scale=1):
    """log b - (b + 1) log y - log(scale) for y >= 1, -inf below (NaN for b <= 0 or scale <= 0).

    >>> print(round(float(logpdf(2.0, 3.0)), 5))
    -1.67398
    """
    log_y, inside, b, scale, valid = _parts("pareto.logpdf", x, b, loc, scale)
    value = jnp.log(b) - (b + 1) * log_y - jnp.log(scale)
    return nan_unless(valid, jnp.where(inside, value, -np.inf))


def pdf(x, b, loc=0, scale=1):
    """The Pareto density b / (scale y^(b + 1)).

    >>> print(round(float(pdf(2.0, 3.0)), 5))
    0.1875
    """
    return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """1 - y^-b, as -expm1(-b log y) (relatively accurate just above y = 1); 0 below.

    >>> print(float(cdf(2.0, 3.0)))
    0.875
    """
    log_y, inside, b, scale, valid = _parts("pareto.cdf", x, b, loc, scale)
    return nan_unless(valid, jnp.where(inside, -jnp.expm1(-b * log_y), 0.0))


def logcdf(x, b, loc=0, scale=1):
    """log(1 - y^-b) through log1mexp(b log y), accurate near y = 1 and far out; -inf below 1.

    >>> print(round(float(logcdf(2.0, 3.0)), 5))
    -0.13353
    """
    log_y, inside, b, scale, valid = _parts("pareto.logcdf", x, b, loc, scale)
    return nan_unless(valid, jnp.where(inside, log1mexp(b * log_y), -np.inf))


def sf(x, b, loc=0, scale=1):
    """y^-b; 1 below y = 1.

    >>> print(float(sf(2.0, 3.0)))
    0.125
    """
    return jnp.exp(logsf(x, b, loc, scale))


def logsf(x, b, loc=0, scale=1):
    """-b log y (exact far in the upper tail); 0 below y = 1.

    >>> print(round(float(logsf(1e30, 2.0)), 2))
    -138.16
    """
    log_y, inside, b, scale, valid = _parts("pareto.logsf", x, b, loc, scale)
    return nan_unless(valid, jnp.where(inside, -b * log_y, 0.0))


def ppf(q, b, loc=0, scale=1):
    """loc + scale (1 - q)^(-1/b), as exp(-log1p(-q) / b): loc + scale at 0, inf at 1, NaN outside [0, 1].

    >>> print(float(ppf(0.875, 3.0)))
    2.0
    """
    q, b, loc, scale = args("pareto.ppf", q, b, loc, scale)
    value = loc + scale * jnp.exp(-jnp.log1p(-q) / b)
    return nan_unless((b > 0) & (scale > 0), quantile(q, value))

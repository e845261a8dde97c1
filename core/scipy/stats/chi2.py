"""The chi-squared distribution, as `scipy.stats.chi2` / `jax.scipy.stats.chi2`: a gamma
distribution with shape df / 2 and scale 2.

>>> from core.scipy.stats import chi2
>>> print(round(float(chi2.cdf(3.841, 1.0)), 4))
0.95
"""
from . import gamma as _gamma
from ._util import args

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _as_gamma(name, fn, x, df, loc, scale):
    x, df, loc, scale = args(name, x, df, loc, scale)
    return fn(x, df / 2, loc, 2 * scale)


def logpdf(x, df, loc=0, scale=1):
    """The log density of chi2(df), shifted by loc and scaled by scale.

    >>> print(round(float(logpdf(1.0, 2.0)), 5))
    -1.19315
    """
    return _as_gamma("chi2.logpdf", _gamma.logpdf, x, df, loc, scale)


def pdf(x, df, loc=0, scale=1):
    """The chi2 density.

    >>> print(round(float(pdf(1.0, 2.0)), 5))
    0.30327
    """
    return _as_gamma("chi2.pdf", _gamma.pdf, x, df, loc, scale)


def cdf(x, df, loc=0, scale=1):
    """gammainc(df / 2, y / 2).

    >>> print(round(float(cdf(2.0, 2.0)), 5))
    0.63212
    """
    return _as_gamma("chi2.cdf", _gamma.cdf, x, df, loc, scale)


def logcdf(x, df, loc=0, scale=1):
    """log cdf.

    >>> print(round(float(logcdf(2.0, 2.0)), 5))
    -0.45868
    """
    return _as_gamma("chi2.logcdf", _gamma.logcdf, x, df, loc, scale)


def sf(x, df, loc=0, scale=1):
    """gammaincc(df / 2, y / 2).

    >>> print(round(float(sf(2.0, 2.0)), 5))
    0.36788
    """
    return _as_gamma("chi2.sf", _gamma.sf, x, df, loc, scale)


def logsf(x, df, loc=0, scale=1):
    """log sf.

    >>> print(round(float(logsf(2.0, 2.0)), 5))
    -1.0
    """
    return _as_gamma("chi2.logsf", _gamma.logsf, x, df, loc, scale)

"""The von Mises distribution on the circle with concentration `kappa`, as
`scipy.stats.vonmises` / `jax.scipy.stats.vonmises` (standard form: jax takes no loc or scale):
density exp(kappa cos x) / (2 pi I0(kappa)), periodic in x as SciPy's is.

>>> from core.scipy.stats import vonmises
>>> print(round(float(vonmises.pdf(1.0, 0.0)), 5))   # kappa = 0: uniform on the circle
0.15915
"""
import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import args, nan_unless

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    """kappa (cos x - 1) - log(2 pi i0e(kappa)): the exponentially scaled Bessel function keeps
    large concentrations finite (exp(kappa) / I0(kappa) would be inf / inf). NaN for kappa < 0;
    kappa = 0 is the uniform density 1 / (2 pi), as SciPy (jax gives NaN there).

    >>> print(round(float(logpdf(0.0, 1e4)), 5))
    3.68622
    """
    x, kappa = args("vonmises.logpdf", x, kappa)
    value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * special.i0e(kappa))
    return nan_unless(kappa >= 0, value)


def pdf(x, kappa):
    """The von Mises density.

    >>> print(round(float(pdf(np.pi, 2.0)), 5))
    0.00945
    """
    return jnp.exp(logpdf(x, kappa))

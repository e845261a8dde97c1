"""What the distributions share: argument promotion, standardizing by loc/scale, and SciPy's
conventions for invalid parameters and probabilities."""
import numpy as np

from ... import numpy as jnp
from .._util import inexact_args


def args(name, *values):
    """The arguments promoted to one inexact dtype and broadcast together."""
    return inexact_args(name, *values)


def standardize(name, x, loc, scale):
    """(x, loc, scale, y = (x - loc) / scale), promoted and broadcast."""
    x, loc, scale = inexact_args(name, x, loc, scale)
    return x, loc, scale, (x - loc) / scale


def nan_unless(valid, value):
    """`value` where the parameters are valid, NaN elsewhere (SciPy: scale <= 0, p outside [0, 1]...)."""
    return jnp.where(valid, value, np.nan)


def quantile(q, value):
    """A ppf/isf result: NaN for probabilities outside [0, 1] (and NaN ones)."""
    return jnp.where((q >= 0) & (q <= 1), value, np.nan)

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


def log1mexp(a):
    """log(1 - exp(-a)) for a >= 0, accurate at both ends: log(-expm1(-a)) for a below log 2 (where
    1 - exp(-a) is small and log1p would lose it) and log1p(-exp(-a)) above (where it is near 1).
    0 at a = inf, -inf at a = 0."""
    small = a < np.log(2.0)
    near_zero = jnp.where(small, a, 1.0)  # each branch sees only arguments it is accurate (and finite) for
    far = jnp.where(small, 1.0, a)
    return jnp.where(small, jnp.log(-jnp.expm1(-near_zero)), jnp.log1p(-jnp.exp(-far)))

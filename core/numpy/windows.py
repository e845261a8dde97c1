"""NumPy's window functions for signal processing: `bartlett`, `blackman`, `hamming`, `hanning`,
`kaiser`, each a symmetric 1-D window of static length `M` in the default float dtype (float32
unless x64 is on, as in JAX); `M < 1` gives an empty window and `M == 1` the window `[1.]`.

Example:
    >>> jnp.round(jnp.hanning(5), 4)
    Array([0. , 0.5, 1. , 0.5, 0. ], dtype=float32)
"""
import operator

import numpy as np

from .. import dtypes
from ._util import asarray_operand
from . import ufuncs as _u
from . import creation as _c

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _length(M, name):
    try:
        return operator.index(M)
    except TypeError:
        raise TypeError(f"{name}: M must be a static integer (the window length), got {type(M).__name__}") from None


def _cosine_window(M, name, coefficients):
    M = _length(M, name)
    dtype = dtypes.default_float_dtype()
    if M < 1:
        return _c.zeros((0,), dtype)
    if M == 1:
        return _c.ones((1,), dtype)
    n = _c.arange(1 - M, M, 2).astype(dtype)
    phase = _u.multiply(n, np.pi / (M - 1))
    out = _c.full((M,), coefficients[0], dtype)
    for k, c in enumerate(coefficients[1:], start=1):
        out = _u.add(out, _u.multiply(c, _u.cos(_u.multiply(phase, float(k)))))
    return out


def bartlett(M):
    """The triangular (Bartlett) window of length `M`. Example: `jnp.bartlett(5)` is `[0., .5, 1., .5, 0.]`."""
    M = _length(M, "bartlett")
    dtype = dtypes.default_float_dtype()
    if M < 1:
        return _c.zeros((0,), dtype)
    if M == 1:
        return _c.ones((1,), dtype)
    n = _c.arange(1 - M, M, 2).astype(dtype)
    return _u.subtract(1.0, _u.divide(_u.abs(n), float(M - 1)))


def blackman(M):
    """The Blackman window `0.42 + 0.5 cos(pi n/(M-1)) + 0.08 cos(2 pi n/(M-1))` of length `M`.
    Example: `jnp.blackman(3)` is about `[0., 1., 0.]`."""
    return _cosine_window(M, "blackman", (0.42, 0.5, 0.08))


def hamming(M):
    """The Hamming window `0.54 + 0.46 cos(pi n/(M-1))` of length `M`. Example: `jnp.hamming(3)` is `[.08, 1., .08]`."""
    return _cosine_window(M, "hamming", (0.54, 0.46))


def hanning(M):
    """The Hann window `0.5 + 0.5 cos(pi n/(M-1))` of length `M`. Example: `jnp.hanning(3)` is `[0., 1., 0.]`."""
    return _cosine_window(M, "hanning", (0.5, 0.5))


def kaiser(M, beta):
    """The Kaiser window `i0(beta sqrt(1 - (2n/(M-1) - 1)**2)) / i0(beta)` of length `M`; `beta`
    may be traced (and is differentiable). Example: `jnp.kaiser(3, 0.0)` is `[1., 1., 1.]`.
    """
    M = _length(M, "kaiser")
    dtype = dtypes.default_float_dtype()
    if M < 1:
        return _c.zeros((0,), dtype)
    if M == 1:
        return _c.ones((1,), dtype)
    beta = asarray_operand(beta).astype(dtype)
    alpha = (M - 1) / 2.0
    r = _u.divide(_u.subtract(_c.arange(M).astype(dtype), alpha), alpha)
    return _u.divide(_u.i0(_u.multiply(beta, _u.sqrt(_u.subtract(1.0, _u.multiply(r, r))))), _u.i0(beta))

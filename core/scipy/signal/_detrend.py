"""`detrend`: remove a constant or a (piecewise) linear least-squares fit along one axis.

The linear fit has a closed form, so no least-squares solve is needed: over a piece of n
samples with centred positions t_i = i - (n - 1) / 2 (which sum to zero), the fitted line is
mean(y) + slope t with slope = sum(t y) / sum(t^2). Breakpoints are static, so each piece is a
static slice; the result is differentiable and runs under jit and vmap.
"""
import numpy as np

from ... import lax
from ... import numpy as jnp
from ...numpy._util import canonicalize_axis, check_arraylike, promote_dtypes_inexact
from ._util import short, static_int

_TYPES = {"linear": "linear", "l": "linear", "constant": "constant", "c": "constant"}


def _remove_line(piece, axis):
    """`piece` minus its least-squares line along `axis`."""
    n = piece.shape[axis]
    centred = np.arange(n) - (n - 1) / 2.0
    shape = [1] * piece.ndim
    shape[axis] = n
    t = jnp.asarray(centred.reshape(shape), dtype=jnp.real(piece).dtype)
    denominator = float(np.sum(centred ** 2))
    residual = piece - jnp.mean(piece, axis=axis, keepdims=True)
    if denominator == 0:  # a single sample: the line through it leaves nothing
        return residual
    slope = jnp.sum(t * piece, axis=axis, keepdims=True) / denominator
    return residual - slope * t


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """`data` minus its trend along `axis`, as `scipy.signal.detrend` (and jax.scipy.signal's):
    type='linear' removes the least-squares line, separately between consecutive breakpoints `bp`
    (static sample indices) if given; type='constant' removes the mean. Integers are promoted to
    the default float dtype; complex data is fitted by a complex line.

    Example:
        >>> core.scipy.signal.detrend(jnp.array([1.0, 4.0, 8.0, 8.0, 9.0])).round(3)
        Array([-1.,  0.,  2.,  0., -1.], dtype=float32)
        >>> core.scipy.signal.detrend(jnp.array([1.0, 4.0, 8.0, 8.0, 9.0]), type="constant")
        Array([-5., -2.,  2.,  2.,  3.], dtype=float32)
    """
    if overwrite_data is not None:
        raise NotImplementedError("detrend: overwrite_data is not supported (arrays are immutable); leave it None.")
    if type not in _TYPES:
        raise ValueError(f"detrend: type must be 'linear' or 'constant'; got {type!r}.")
    check_arraylike("detrend", data)
    (data,) = promote_dtypes_inexact(jnp.asarray(data))
    if data.ndim == 0:
        raise ValueError(f"detrend: data must have at least one dimension; got {short(data)}.")
    axis = canonicalize_axis(static_int("detrend", "axis", axis), data.ndim, "detrend")
    if _TYPES[type] == "constant":
        return data - jnp.mean(data, axis=axis, keepdims=True)
    n = data.shape[axis]
    breakpoints = [static_int("detrend", "bp", b) for b in np.atleast_1d(np.asarray(bp)).tolist()]
    if any(b < 0 or b > n for b in breakpoints):
        raise ValueError(f"detrend: breakpoints must lie in [0, {n}] (the length of axis {axis} of "
                         f"{short(data)}); got bp={bp!r}.")
    edges = sorted(set([0, n] + breakpoints))
    pieces = [_remove_line(lax.slice_in_dim(data, lo, hi, axis=axis), axis) for lo, hi in zip(edges[:-1], edges[1:])]
    return pieces[0] if len(pieces) == 1 else jnp.concatenate(pieces, axis=axis)

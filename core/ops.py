"""`core.ops`: segment reductions, as `jax.ops`.

`segment_sum(data, segment_ids, num_segments)` adds the rows of `data` (along axis 0) that share a
segment id: `out[k] = sum of data[i] where segment_ids[i] == k`, for k in `range(num_segments)`.
Ids outside that range (negative ones included) are dropped, as in JAX; an empty segment gets
the reduction's identity (0 for sum, 1 for prod, -inf / the dtype's minimum for max, +inf / the
maximum for min). `num_segments` fixes the output's shape, so under `jit` it must be given (a
Python int); without it the ids must be concrete and `max(segment_ids) + 1` is used.
`indices_are_sorted` and `unique_indices` are promises that XLA may use; `bucket_size` is
accepted for JAX's signature and ignored (one scatter does the whole reduction).

Example:
    >>> segment_sum(jnp.array([1.0, 2.0, 3.0, 4.0]), jnp.array([0, 0, 2, 1]), num_segments=3)
    Array([3., 4., 3.], dtype=float32)
"""
import operator

import numpy as np

from . import numpy as jnp
from .trace import Tracer

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _num_segments(fname, segment_ids, num_segments):
    if num_segments is not None:
        try:
            n = operator.index(num_segments)
        except TypeError:
            raise TypeError(f"{fname}: num_segments must be a Python int (it fixes the output's shape), got "
                            f"{type(num_segments).__name__} {num_segments!r}.") from None
        if n < 0:
            raise ValueError(f"{fname}: num_segments must be >= 0, got {n}.")
        return n
    if isinstance(segment_ids, Tracer):
        raise TypeError(f"{fname}: num_segments is needed under a transformation: the output's shape cannot "
                        f"depend on the traced segment_ids ({segment_ids.aval}). Pass num_segments=<int>.")
    ids = np.asarray(segment_ids)
    return int(ids.max()) + 1 if ids.size else 0


def _segment_reduce(fname, method, identity, data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices):
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    if segment_ids.ndim != 1 or not jnp.issubdtype(segment_ids.dtype, jnp.integer):
        raise TypeError(f"{fname}: segment_ids must be a 1-D integer array, got "
                        f"{segment_ids.dtype}{list(segment_ids.shape)}.")
    if data.ndim < 1 or data.shape[0] != segment_ids.shape[0]:
        raise ValueError(f"{fname}: data's leading axis must match segment_ids: data is "
                         f"{data.dtype}{list(data.shape)}, segment_ids {segment_ids.dtype}{list(segment_ids.shape)}.")
    n = _num_segments(fname, segment_ids, num_segments)
    # negative ids would wrap around in a NumPy-style index; send them out of range to be dropped
    ids = jnp.where(segment_ids < 0, n, segment_ids)
    out = jnp.full((n,) + data.shape[1:], identity(data.dtype), data.dtype)
    return getattr(out.at[ids], method)(data, indices_are_sorted=indices_are_sorted,
                                        unique_indices=unique_indices, mode="drop")


def _lowest(dtype):
    return -np.inf if jnp.issubdtype(dtype, jnp.inexact) else (
        False if dtype == jnp.bool_ else jnp.iinfo(dtype).min)


def _highest(dtype):
    return np.inf if jnp.issubdtype(dtype, jnp.inexact) else (
        True if dtype == jnp.bool_ else jnp.iinfo(dtype).max)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """The sum of `data`'s rows in each segment (see the module docstring).

    Example:
        >>> segment_sum(jnp.ones((3, 2)), jnp.array([1, 1, 0]), 2)
        Array([[1., 1.],
               [2., 2.]], dtype=float32)
    """
    return _segment_reduce("segment_sum", "add", lambda dt: 0, data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                 bucket_size=None, mode=None):
    """The product of `data`'s rows in each segment; 1 for an empty segment.

    Example:
        >>> segment_prod(jnp.array([2.0, 3.0, 4.0]), jnp.array([0, 0, 1]), 3)
        Array([6., 4., 1.], dtype=float32)
    """
    return _segment_reduce("segment_prod", "multiply", lambda dt: 1, data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """The elementwise maximum of `data`'s rows in each segment; -inf (the dtype's minimum for
    integers) for an empty segment.

    Example:
        >>> segment_max(jnp.array([2.0, 3.0, 4.0]), jnp.array([0, 0, 2]), 3)
        Array([  3., -inf,   4.], dtype=float32)
    """
    return _segment_reduce("segment_max", "max", _lowest, data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None):
    """The elementwise minimum of `data`'s rows in each segment; +inf (the dtype's maximum for
    integers) for an empty segment.

    Example:
        >>> segment_min(jnp.array([2.0, 3.0, 4.0]), jnp.array([0, 0, 2]), 3)
        Array([ 2., inf,  4.], dtype=float32)
    """
    return _segment_reduce("segment_min", "min", _highest, data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices)

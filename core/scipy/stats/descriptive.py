"""Descriptive statistics of samples, as `scipy.stats` / `jax.scipy.stats`: `mode`, `rankdata`
and `sem`.

`mode` and `rankdata` sort each slice once and read ties off the sorted order: every element learns
where its run of equal values starts and ends (a running maximum of run starts from the left, a
running minimum of run ends from the right), which gives counts, and min, max, average and dense
ranks, without a data-dependent shape, so they work under jit and vmap.

>>> from core.scipy import stats
>>> print(stats.rankdata(jnp.array([10, 30, 20, 20])))
[1.  4.  2.5 2.5]
"""
from typing import NamedTuple

import numpy as np

from ... import dtypes
from ... import lax
from ... import numpy as jnp
from ...basearray import Array
from ...numpy._util import canonicalize_axis

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_NAN_POLICIES = ("propagate", "omit", "raise")
_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    """`mode`'s result: the modal values and how often each occurs."""
    mode: Array
    count: Array


def _check_nan_policy(name, nan_policy):
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"{name}: nan_policy must be one of {_NAN_POLICIES}, got {nan_policy!r}.")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"{name}: nan_policy='raise' is not supported: whether the data hold NaNs is not known while "
            f"tracing (as in jax). Check with jnp.isnan(a).any() before the call, or use 'propagate' or 'omit'.")


def _is_nan(x):
    if dtypes.issubdtype(x.dtype, np.inexact):
        return jnp.isnan(x)
    return jnp.zeros(x.shape, bool)


def _runs(s):
    """For `s` sorted along its last axis: (start, end), the indices of the first and last element
    of the run of equal values each element belongs to (NaNs form one run, as SciPy counts them)."""
    n = s.shape[-1]
    last = s.ndim - 1
    nan = _is_nan(s)
    same = (s[..., 1:] == s[..., :-1]) | (nan[..., 1:] & nan[..., :-1])
    false = jnp.zeros(s.shape[:-1] + (1,), bool)
    same_as_previous = jnp.concatenate([false, same], axis=-1)
    same_as_next = jnp.concatenate([same, false], axis=-1)
    index = jnp.broadcast_to(jnp.arange(n), s.shape)
    start = lax.cummax(jnp.where(same_as_previous, 0, index), axis=last)
    end = lax.cummin(jnp.where(same_as_next, n - 1, index), axis=last, reverse=True)
    return start, end


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along `axis` (the smallest of several equally common ones) and its
    count, as a `ModeResult`. `axis=None` looks at the flattened array. NaNs count as one value with
    'propagate' (SciPy's convention: they are the mode if they are the most common) and are ignored
    with 'omit' (an all-NaN slice gives NaN with count 0). An empty slice gives NaN and count 0.

    >>> m, c = mode(jnp.array([2, 4, 1, 1, 3, 4, 4, 2, 3]))
    >>> print(m, c)
    4 3
    """
    _check_nan_policy("mode", nan_policy)
    x = jnp.atleast_1d(jnp.asarray(a))
    if axis is None:
        out_shape = (1,) * x.ndim if keepdims else ()
        x = x.reshape(-1)
        axis = 0
    else:
        axis = canonicalize_axis(axis, x.ndim, "mode")
        out_shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape) if keepdims or i != axis)
    x = jnp.moveaxis(x, axis, -1)
    if x.shape[-1] == 0:
        nan = jnp.full(out_shape, np.nan, dtypes.default_float_dtype())
        return ModeResult(nan, jnp.zeros(out_shape, dtypes.default_float_dtype()))
    s = jnp.sort(x, axis=-1)
    start, end = _runs(s)
    counts = end - start + 1
    if nan_policy == "omit":
        counts = jnp.where(_is_nan(s), 0, counts)
    # argmax takes the first maximum: the smallest value of the most common ones
    best = jnp.argmax(counts, axis=-1)
    value = jnp.take_along_axis(s, best[..., None], axis=-1)[..., 0]
    count = jnp.max(counts, axis=-1)
    if nan_policy == "omit" and dtypes.issubdtype(s.dtype, np.inexact):
        value = jnp.where(count == 0, np.nan, value)
    return ModeResult(value.reshape(out_shape), count.astype(dtypes.default_int_dtype()).reshape(out_shape))


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks of the data, from 1, in the default float dtype (as jax). `method` handles ties:
    'average' (their mean rank), 'min', 'max', 'dense' (consecutive integers for the distinct
    values) or 'ordinal' (first come, first ranked). With `axis=None` the array is flattened; with
    an axis each slice along it is ranked. A slice holding a NaN is all NaN with 'propagate'; with
    'omit' NaNs get NaN and the other values are ranked among themselves (SciPy's meaning; jax
    supports only 'propagate').

    >>> print(rankdata(jnp.array([1, 3, 2, 3]), method="min"))
    [1. 3. 2. 3.]
    """
    _check_nan_policy("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"rankdata: method must be one of {_RANK_METHODS}, got {method!r}.")
    x = jnp.asarray(a)
    if axis is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = canonicalize_axis(axis, max(x.ndim, 1), "rankdata")
        x = jnp.atleast_1d(x)
    x = jnp.moveaxis(x, axis, -1)
    out_dtype = dtypes.default_float_dtype()
    if x.shape[-1] == 0:
        return jnp.moveaxis(jnp.zeros(x.shape, out_dtype), -1, axis)
    # NaNs sort last, so the other values' ranks do not depend on them ('omit')
    order = jnp.argsort(x, axis=-1, stable=True)
    where_in_order = jnp.argsort(order, axis=-1, stable=True)  # the inverse permutation

    def back(ranks_in_order):
        return jnp.take_along_axis(ranks_in_order, where_in_order, axis=-1)

    if method == "ordinal":
        ranks = (where_in_order + 1).astype(out_dtype)
    else:
        s = jnp.take_along_axis(x, order, axis=-1)
        start, end = _runs(s)
        if method == "dense":
            new_value = start == jnp.arange(s.shape[-1])
            ranks = back(jnp.cumsum(new_value, axis=-1)).astype(out_dtype)
        elif method == "min":
            ranks = back(start + 1).astype(out_dtype)
        elif method == "max":
            ranks = back(end + 1).astype(out_dtype)
        else:
            ranks = back(start.astype(out_dtype) + end.astype(out_dtype)) / 2 + 1
    nan = _is_nan(x)
    if nan_policy == "propagate":
        ranks = jnp.where(jnp.any(nan, axis=-1, keepdims=True), np.nan, ranks)
    else:
        ranks = jnp.where(nan, np.nan, ranks)
    return jnp.moveaxis(ranks, -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, std(a, ddof) / sqrt(n), along `axis` (flattened for None).
    With 'omit', NaNs are left out of both the deviation and the count n.

    >>> print(round(float(sem(jnp.array([2.0, 4.0, 6.0]))), 5))
    1.1547
    """
    _check_nan_policy("sem", nan_policy)
    x = jnp.asarray(a)
    x = x.astype(jnp.result_type(x, float))
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(x), axis=axis, keepdims=keepdims)
        return jnp.nanstd(x, axis=axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count.astype(x.dtype))
    if axis is not None:
        axis = canonicalize_axis(axis, x.ndim, "sem")
    count = x.size if axis is None else x.shape[axis]
    return jnp.std(x, axis=axis, ddof=ddof, keepdims=keepdims) / np.sqrt(count).astype(x.dtype)

"""NumPy sorting, searching, counting and set operations over `lax.sort` and compare-and-sum.

Order: NaNs sort last and -0.0 ties with 0.0 (NumPy's order); `descending=True` reverses a stable
ascending sort of the reversed array, so equal elements keep their order and NaNs come first.
Searches (`searchsorted`, `digitize`, `isin`) compare every query with every sorted value and sum:
O(n * m) work but fully vectorized and traceable. Functions whose output size depends on the
values (`unique`, the set operations, `bincount` without `length`) need concrete arrays, or a
static `size=` (padded with `fill_value`) under tracing, as in JAX.
"""
import numpy as np

from .. import dtypes, lax
from ..trace import Tracer
from ._util import asarray_operand, canonicalize_axis, check_arraylike, promote_dtypes
from .reductions import _broadcast_to, _convert, _full, _isnan, _ravel, _where, take_last
from .reductions import any as _any, sum as _sum, min as _min, max as _max

__all__ = ["sort", "argsort", "lexsort", "partition", "argpartition", "searchsorted", "digitize", "bincount",
           "unique", "union1d", "intersect1d", "setdiff1d", "setxor1d", "isin", "in1d", "histogram"]


def _concrete_or_raise(x, name, what="size"):
    if isinstance(x, Tracer):
        raise TypeError(f"jnp.{name} needs a concrete array here: its output shape depends on the values. "
                        f"Under jit/vmap pass a static `{what}=` argument (or use jnp.where).")


def _flatten_axis(a, axis, name):
    a = asarray_operand(a)
    if axis is None:
        return _ravel(a), 0
    return a, canonicalize_axis(axis, a.ndim, name)


# ----- sort / argsort / lexsort / partition -------------------------------------------------------

def sort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    """A sorted copy of `a` along `axis` (flattened when None); NaNs last. `descending=True` sorts
    largest first, keeping equal elements in order. `kind` is ignored and `order` unsupported.

    Example: `jnp.sort(jnp.array([3., jnp.nan, 1.]))` is `[1., 3., nan]`.
    """
    check_arraylike("sort", a)
    if order is not None:
        raise NotImplementedError("jnp.sort: the 'order' argument (structured arrays) is not supported.")
    a, axis = _flatten_axis(a, axis, "sort")
    if descending:
        return lax.rev(lax.sort(lax.rev(a, (axis,)), dimension=axis, is_stable=stable), (axis,))
    return lax.sort(a, dimension=axis, is_stable=stable)


def argsort(a, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    """The indices that sort `a` along `axis` (default int dtype); equal elements keep their order
    (stable by default). Example: `jnp.argsort(jnp.array([3, 1, 2]))` is `[1, 2, 0]`.
    """
    check_arraylike("argsort", a)
    if order is not None:
        raise NotImplementedError("jnp.argsort: the 'order' argument (structured arrays) is not supported.")
    a, axis = _flatten_axis(a, axis, "argsort")
    idx_dtype = dtypes.default_int_dtype()
    iota = lax.broadcasted_iota(idx_dtype, a.shape, axis)
    if not descending:
        return lax.sort((a, iota), dimension=axis, is_stable=stable, num_keys=1)[1]
    # sort the reversed array, reverse the permutation and map it back to original positions
    _, perm = lax.sort((lax.rev(a, (axis,)), iota), dimension=axis, is_stable=stable, num_keys=1)
    n = _full(a.shape, a.shape[axis] - 1, idx_dtype)
    return lax.sub(n, lax.rev(perm, (axis,)))


def lexsort(keys, axis=-1):
    """Indices sorting by several keys, the LAST key primary (as `numpy.lexsort`); stable.

    Example: `jnp.lexsort((jnp.array([2, 1, 0]), jnp.array([0, 0, 1])))` is `[1, 0, 2]`.
    """
    if not isinstance(keys, (tuple, list)):
        check_arraylike("lexsort", keys)
        keys = asarray_operand(keys)
        if keys.ndim == 0:
            raise TypeError("lexsort: need a sequence of keys with len > 0.")
        keys = tuple(lax.index_in_dim(keys, i, 0, keepdims=False) for i in range(keys.shape[0]))
    if not keys:
        raise TypeError("lexsort: need a sequence of keys with len > 0.")
    check_arraylike("lexsort", *keys)
    keys = [asarray_operand(k) for k in keys]
    shape = keys[0].shape
    for k in keys:
        if k.shape != shape:
            raise ValueError(f"lexsort: all keys need to be the same shape, got {[k.shape for k in keys]}")
    idx_dtype = dtypes.default_int_dtype()
    if not shape:
        return _full((), 0, idx_dtype)
    axis = canonicalize_axis(axis, len(shape), "lexsort")
    iota = lax.broadcasted_iota(idx_dtype, shape, axis)
    return lax.sort(tuple(keys[::-1]) + (iota,), dimension=axis, is_stable=True, num_keys=len(keys))[-1]


def partition(a, kth, axis=-1):
    """An array whose `kth` element along `axis` is where a sort would put it, smaller elements
    before and larger after. Implemented as a full sort, which satisfies this (NumPy leaves the
    order within each side unspecified). Example: `jnp.partition(jnp.array([3, 1, 2]), 1)[1]` is `2`.
    """
    check_arraylike("partition", a)
    a = asarray_operand(a)
    axis = canonicalize_axis(axis, a.ndim, "partition")
    _check_kth(kth, a.shape[axis], "partition")
    return sort(a, axis=axis)


def argpartition(a, kth, axis=-1):
    """Indices that partition `a` around its `kth` element (a stable full argsort, see `partition`).
    Example: `jnp.argpartition(jnp.array([3, 1, 2]), 0)[0]` is `1`.
    """
    check_arraylike("argpartition", a)
    a = asarray_operand(a)
    axis = canonicalize_axis(axis, a.ndim, "argpartition")
    _check_kth(kth, a.shape[axis], "argpartition")
    return argsort(a, axis=axis)


def _check_kth(kth, n, name):
    for k in np.atleast_1d(np.asarray(kth)).ravel():
        if not -n <= int(k) < n:
            raise ValueError(f"{name}: kth(={int(k)}) out of bounds ({n})")


# ----- searching ------------------------------------------------------------------------------

def _less_total(x, y, or_equal):
    """x < y (or x <= y) in the order NaN-last, on operands of one shape."""
    if dtypes.is_inexact(x.dtype):
        y_nan, x_nan = _isnan(y), _isnan(x)
        if or_equal:
            return lax.or_(lax.le(x, y), y_nan)
        return lax.or_(lax.lt(x, y), lax.and_(y_nan, lax.not_(x_nan)))
    return lax.le(x, y) if or_equal else lax.lt(x, y)


def searchsorted(a, v, side="left", sorter=None, *, method="compare_all"):
    """Indices where `v`'s elements would be inserted into the sorted 1-D `a` to keep it sorted:
    the first such place ('left') or the last ('right'). `sorter` (argsort of `a`) sorts `a` first.
    Vectorized by comparing each value with all of `a` (NaN sorts last); returns int32.

    Example: `jnp.searchsorted(jnp.array([1, 2, 3]), jnp.array([2, 5]))` is `[1, 3]`.
    """
    check_arraylike("searchsorted", a, v)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    a, v = promote_dtypes(asarray_operand(a), asarray_operand(v))
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a should be 1-dimensional, got shape {a.shape}")
    if sorter is not None:
        check_arraylike("searchsorted", sorter)
        sorter = _convert(asarray_operand(sorter), dtypes.int32)
        a = take_last(a, sorter) if a.shape[0] else a
    n = a.shape[0]
    shape = v.shape + (n,)
    av = lax.broadcast_in_dim(a, shape, (v.ndim,))
    vv = lax.broadcast_in_dim(v, shape, tuple(range(v.ndim)))
    before = _less_total(av, vv, or_equal=(side == "right"))
    return _sum(before, axis=-1, dtype=dtypes.int32)


def digitize(x, bins, right=False):
    """The index of the bin each value of `x` falls in, for monotonic 1-D `bins` (increasing or
    decreasing), as `numpy.digitize`. Example: `jnp.digitize(jnp.array([0.5, 1.5]), jnp.array([0., 1., 2.]))`
    is `[1, 2]`.
    """
    check_arraylike("digitize", x, bins)
    x, bins = promote_dtypes(asarray_operand(x), asarray_operand(bins))
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array, got shape {bins.shape}")
    n = bins.shape[0]
    if n == 0:
        return _full(x.shape, 0, dtypes.int32)
    side = "left" if right else "right"
    inc = searchsorted(bins, x, side=side)
    dec = lax.sub(_full(x.shape, n, dtypes.int32), searchsorted(lax.rev(bins, (0,)), x, side=side))
    increasing = lax.ge(lax.slice(bins, (n - 1,), (n,)), lax.slice(bins, (0,), (1,)))
    increasing = lax.broadcast_in_dim(lax.reshape(increasing, ()), x.shape, ())
    return _where(increasing, inc, dec)


def bincount(x, weights=None, minlength=0, *, length=None):
    """Count occurrences of each value in the non-negative int array `x` (summing `weights` when
    given). The output length is `max(x) + 1` (at least `minlength`), which needs a concrete `x`;
    pass a static `length=` under tracing. Values outside [0, length) are dropped, as JAX does.

    Example: `jnp.bincount(jnp.array([0, 1, 1, 3]))` is `[1, 2, 0, 1]`.
    """
    check_arraylike("bincount", x)
    x = asarray_operand(x)
    if not (dtypes.is_int(x.dtype) or dtypes.is_bool(x.dtype)):
        raise TypeError(f"bincount: x argument must have an integer type, got {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"bincount: x must be 1-dimensional, got shape {x.shape}")
    if length is None:
        _concrete_or_raise(x, "bincount", "length")
        xv = np.asarray(x)
        if xv.size and xv.min() < 0:
            raise ValueError("bincount: x must contain only non-negative values.")
        length = int(np.max(xv, initial=-1)) + 1
        length = length if length > int(minlength) else int(minlength)
    length = int(length)
    if weights is None:
        w = _full(x.shape, 1, dtypes.default_int_dtype())
    else:
        check_arraylike("bincount", weights)
        w = asarray_operand(weights)
        if w.shape != x.shape:
            raise ValueError(f"bincount: weights must have the shape of x, got {w.shape} and {x.shape}")
        if dtypes.is_bool(w.dtype):
            w = _convert(w, dtypes.default_int_dtype())
    return _scatter_1d(_full((length,), 0, w.dtype), x, w, add=True)


# ----- unique and set operations --------------------------------------------------------------

def _same_as_previous(s):
    """mask[i] = s[i] equals s[i-1] (NaNs equal to NaNs) for a sorted 1-D array, mask[0] False."""
    n = s.shape[0]
    cur, prev = lax.slice(s, (1,), (n,)), lax.slice(s, (0,), (n - 1,))
    same = lax.eq(cur, prev)
    if dtypes.is_inexact(s.dtype):
        same = lax.or_(same, lax.and_(_isnan(cur), _isnan(prev)))
    return lax.concatenate([_full((1,), False, dtypes.bool_), same], 0)


_SCATTER_1D = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                          scatter_dims_to_operand_dims=(0,))


def _scatter_1d(operand, idx, updates, add=False):
    """operand[idx[i]] = updates[i] (or += when `add`) for 1-D arrays; out-of-range idx are dropped."""
    idx = lax.reshape(_convert(idx, dtypes.int32), (idx.shape[0], 1))
    fn = lax.scatter_add if add else lax.scatter
    return fn(operand, idx, updates, _SCATTER_1D, mode="drop")


def _compact(values, keep, size, fill_value):
    """The entries of 1-D `values` where `keep`, in order, in an array of static `size` padded
    with `fill_value` (broadcastable to ()): one scatter to positions cumsum(keep) - 1."""
    n = values.shape[0]
    pos = lax.sub(lax.cumsum(_convert(keep, dtypes.int32)), _full((n,), 1, dtypes.int32))
    pos = _where(keep, pos, _full((n,), size, dtypes.int32))  # dropped: out of range
    out = _broadcast_to(_convert(asarray_operand(fill_value), values.dtype), (size,))
    return _scatter_1d(out, pos, values) if n else out


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           size=None, fill_value=None, sorted=True):
    """The sorted unique values of `ar` (flattened), optionally with the index of each value's first
    occurrence, the inverse (indices rebuilding `ar`) and the counts. NaNs count as one value.

    Needs a concrete `ar` unless a static `size=` is given; then the result is truncated or padded
    with `fill_value` (default: the smallest value; counts pad with 0, indices with 0).
    Example: `jnp.unique(jnp.array([3, 1, 3]))` is `[1, 3]`.
    """
    check_arraylike("unique", ar)
    if axis is not None:
        raise NotImplementedError("jnp.unique: only axis=None (the flattened array) is supported.")
    if not equal_nan:
        raise NotImplementedError("jnp.unique: only equal_nan=True is supported.")
    ar = asarray_operand(ar)
    shape = ar.shape
    x = _ravel(ar)
    n = x.shape[0]
    idx_dtype = dtypes.default_int_dtype()
    if n == 0:
        size = 0 if size is None else int(size)
        empty = _full((size,), 0 if fill_value is None else fill_value, x.dtype)
        extra = []
        if return_index:
            extra.append(_full((size,), 0, idx_dtype))
        if return_inverse:
            extra.append(_full(shape, 0, idx_dtype))
        if return_counts:
            extra.append(_full((size,), 0, idx_dtype))
        return (empty, *extra) if extra else empty
    iota = lax.iota(idx_dtype, n)
    s, perm = lax.sort((x, iota), dimension=0, is_stable=True, num_keys=1)
    first = lax.not_(_same_as_previous(s))
    if size is None:
        _concrete_or_raise(x, "unique")
        size = int(np.count_nonzero(np.asarray(first)))
    size = int(size)
    smallest = lax.slice(s, (0,), (1,))
    fill = lax.reshape(smallest, ()) if fill_value is None else fill_value
    values = _compact(s, first, size, asarray_operand(fill))
    outs = [values]
    if return_index:
        outs.append(_compact(perm, first, size, _full((), 0, idx_dtype)))
    if return_inverse:
        group = lax.sub(lax.cumsum(_convert(first, idx_dtype)), _full((n,), 1, idx_dtype))
        # the sorted group ids go back to the original positions: inverse[perm[i]] = group[i]
        inv = _scatter_1d(_full((n,), 0, idx_dtype), perm, group)
        outs.append(lax.reshape(inv, shape))
    if return_counts:
        starts = _compact(iota, first, size, _full((), n, idx_dtype))
        nxt = lax.concatenate([lax.slice(starts, (1,), (size,)), _full((1,), n, idx_dtype)], 0) if size else starts
        counts = lax.sub(lax.min(nxt, _full((size,), n, idx_dtype)), starts)
        outs.append(counts)
    return tuple(outs) if len(outs) > 1 else values


def _ravel_concrete_check(name, *arrays):
    check_arraylike(name, *arrays)
    return [_ravel(asarray_operand(a)) for a in arrays]


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Whether each element of `element` is in `test_elements` (NaN is in nothing), with
    `element`'s shape. Compares every pair: O(element.size * test_elements.size).

    Example: `jnp.isin(jnp.array([1, 2, 3]), jnp.array([2, 4]))` is `[False, True, False]`.
    """
    check_arraylike("isin", element, test_elements)
    e, t = promote_dtypes(asarray_operand(element), asarray_operand(test_elements))
    t = _ravel(t)
    shape = e.shape + (t.shape[0],)
    eq = lax.eq(lax.broadcast_in_dim(e, shape, tuple(range(e.ndim))), lax.broadcast_in_dim(t, shape, (e.ndim,)))
    found = _any(eq, axis=-1)
    return lax.not_(found) if invert else found


def in1d(ar1, ar2, assume_unique=False, invert=False, *, kind=None):
    """`isin` of the flattened `ar1` (NumPy's older name). Example: `jnp.in1d(jnp.array([1, 2]), jnp.array([2]))`
    is `[False, True]`."""
    check_arraylike("in1d", ar1, ar2)
    return isin(_ravel(asarray_operand(ar1)), ar2, assume_unique, invert)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """Sorted unique values in either array. Example: `jnp.union1d(jnp.array([3, 1]), jnp.array([2, 1]))`
    is `[1, 2, 3]`."""
    a, b = _ravel_concrete_check("union1d", ar1, ar2)
    a, b = promote_dtypes(a, b)
    return unique(lax.concatenate([a, b], 0), size=size, fill_value=fill_value)


def _filtered_unique(name, values, keep, size, fill_value):
    """unique values where `keep` (a mask over the sorted unique `values`)."""
    if size is None:
        _concrete_or_raise(keep, name)
        size = int(np.count_nonzero(np.asarray(keep)))
    if values.shape[0] == 0:
        return _full((int(size),), 0 if fill_value is None else fill_value, values.dtype)
    fill = lax.reshape(lax.slice(values, (0,), (1,)), ()) if fill_value is None else asarray_operand(fill_value)
    return _compact(values, keep, int(size), fill)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None):
    """Sorted unique values in both arrays. Example: `jnp.intersect1d(jnp.array([1, 2, 3]), jnp.array([2, 3, 4]))`
    is `[2, 3]`. (`return_indices` is not supported.)"""
    if return_indices:
        raise NotImplementedError("jnp.intersect1d: return_indices=True is not supported.")
    a, b = _ravel_concrete_check("intersect1d", ar1, ar2)
    a, b = promote_dtypes(a, b)
    ua = unique(a) if size is None else unique(a, size=a.shape[0], fill_value=fill_value)
    keep = isin(ua, b)
    if size is not None:
        keep = lax.and_(keep, _valid_prefix(a, ua))
    return _filtered_unique("intersect1d", ua, keep, size, fill_value)


def _valid_prefix(a, ua_padded):
    """Under tracing `unique(a, size=len(a))` pads; mark the real (first n_unique) entries."""
    n = ua_padded.shape[0]
    if n == 0:
        return _full((0,), False, dtypes.bool_)
    s = lax.sort(a, dimension=0)
    n_unique = _sum(lax.not_(_same_as_previous(s)), dtype=dtypes.int32)
    return lax.lt(lax.iota(dtypes.int32, n), lax.broadcast_in_dim(n_unique, (n,), ()))


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of `ar1` that are not in `ar2`.
    Example: `jnp.setdiff1d(jnp.array([1, 2, 3]), jnp.array([2]))` is `[1, 3]`."""
    a, b = _ravel_concrete_check("setdiff1d", ar1, ar2)
    a, b = promote_dtypes(a, b)
    ua = unique(a) if size is None else unique(a, size=a.shape[0], fill_value=fill_value)
    keep = isin(ua, b, invert=True)
    if size is not None:
        keep = lax.and_(keep, _valid_prefix(a, ua))
    return _filtered_unique("setdiff1d", ua, keep, size, fill_value)


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values in exactly one of the arrays.
    Example: `jnp.setxor1d(jnp.array([1, 2]), jnp.array([2, 3]))` is `[1, 3]`."""
    a, b = _ravel_concrete_check("setxor1d", ar1, ar2)
    a, b = promote_dtypes(a, b)
    both = lax.concatenate([a, b], 0)
    u = unique(both) if size is None else unique(both, size=both.shape[0], fill_value=fill_value)
    keep = lax.xor(isin(u, a), isin(u, b))
    if size is not None:
        keep = lax.and_(keep, _valid_prefix(both, u))
    return _filtered_unique("setxor1d", u, keep, size, fill_value)


# ----- histogram ------------------------------------------------------------------------------

def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002 (NumPy's name)
    """Counts of `a` (flattened) in `bins`: an int (equal-width bins over `range`, default the data's
    min and max) or monotonic bin edges. Returns (hist, bin_edges); the last bin includes its right
    edge; values outside are ignored. `density=True` normalizes to unit area.

    Example: `jnp.histogram(jnp.array([0., 1., 1., 2.]), bins=2)` is `([1, 3], [0., 1., 2.])`.
    """
    check_arraylike("histogram", a)
    a = _ravel(asarray_operand(a))
    float_dtype = a.dtype if dtypes.is_inexact(a.dtype) else dtypes.default_float_dtype()
    a = _convert(a, float_dtype)
    if isinstance(bins, (int, np.integer)):
        nbins = int(bins)
        if nbins < 1:
            raise ValueError(f"histogram: `bins` must be positive, when an integer, got {nbins}")
        if range is None:
            if a.shape[0] == 0:
                lo, hi = _full((), 0, float_dtype), _full((), 1, float_dtype)
            else:
                lo, hi = _min(a), _max(a)
        else:
            # checked on the values as given: converted, even constants become tracers under jit
            if _builtin_gt_concrete(*range):
                raise ValueError("histogram: max must be larger than min in range parameter.")
            lo, hi = (_convert(asarray_operand(r), float_dtype) for r in range)
        same = lax.eq(lo, hi)
        half = _full((), 0.5, float_dtype)
        lo = _where(same, lax.sub(lo, half), lo)
        hi = _where(same, lax.add(hi, half), hi)
        steps = lax.div(lax.iota(float_dtype, nbins + 1), _full((nbins + 1,), nbins, float_dtype))
        width = lax.broadcast_in_dim(lax.sub(hi, lo), (nbins + 1,), ())
        edges = lax.add(lax.broadcast_in_dim(lo, (nbins + 1,), ()), lax.mul(steps, width))
        # the last edge is exactly `hi`, as NumPy's linspace makes it: lo + (hi - lo) can round
        # below hi, and the maximum would then fall outside every bin
        edges = lax.concatenate([lax.slice(edges, (0,), (nbins,)), lax.reshape(hi, (1,))], 0)
    else:
        check_arraylike("histogram", bins)
        edges = _convert(asarray_operand(bins), float_dtype)
        if edges.ndim != 1:
            raise ValueError(f"histogram: bins must be 1-dimensional, got shape {edges.shape}")
        nbins = edges.shape[0] - 1
    idx = lax.sub(searchsorted(edges, a, side="right"), _full(a.shape, 1, dtypes.int32))
    last = lax.eq(a, lax.broadcast_in_dim(lax.reshape(lax.slice(edges, (nbins,), (nbins + 1,)), ()), a.shape, ()))
    idx = _where(last, _full(a.shape, nbins - 1, dtypes.int32), idx)
    inside = lax.and_(lax.ge(idx, _full(a.shape, 0, dtypes.int32)), lax.lt(idx, _full(a.shape, nbins, dtypes.int32)))
    idx = _where(inside, idx, _full(a.shape, nbins, dtypes.int32))  # out-of-range: an extra, dropped bin
    if weights is not None:
        check_arraylike("histogram", weights)
        weights = _ravel(asarray_operand(weights))
    counts = bincount(idx, weights, length=nbins + 1)
    counts = lax.slice(counts, (0,), (nbins,))
    if density:
        counts = _convert(counts, float_dtype) if not dtypes.is_inexact(counts.dtype) else counts
        widths = lax.sub(lax.slice(edges, (1,), (nbins + 1,)), lax.slice(edges, (0,), (nbins,)))
        total = lax.broadcast_in_dim(_sum(counts), (nbins,), ())
        counts = lax.div(counts, lax.mul(total, _convert(widths, counts.dtype)))
    return counts, edges


def _builtin_gt_concrete(lo, hi):
    if isinstance(lo, Tracer) or isinstance(hi, Tracer):
        return False
    return bool(np.asarray(lo) > np.asarray(hi))



def sort_complex(a):
    """`a` sorted along its last axis, as complex numbers (real part first, then imaginary; NumPy's
    lexicographic order), in the complex dtype that holds `a`'s values.

    Example:
        >>> jnp.sort_complex(jnp.array([3.0, 1.0, 2.0]))
        Array([1.+0.j, 2.+0.j, 3.+0.j], dtype=complex64)
    """
    check_arraylike("sort_complex", a)
    a = sort(asarray_operand(a), axis=-1)
    if dtypes.is_complex(a.dtype):
        return a
    # as JAX: integers and bools go through the default float dtype (float64 with x64 on)
    real = a.dtype if dtypes.is_inexact(a.dtype) else dtypes.default_float_dtype()
    target = np.complex128 if np.dtype(real) == np.float64 else np.complex64
    return _convert(a, dtypes.canonicalize_dtype(target))


__all__ += ["sort_complex"]

"""NumPy indexing (`x[idx]`, `x.at[idx].set(v)`) and the index functions (take, where, nonzero ...).

JAX's documented differences from NumPy apply: arrays are immutable, so `x[idx] = v` is spelled
`x = x.at[idx].set(v)`; out-of-bounds integer indices are CLAMPED when reading (`x[10]` of a
length-5 vector is `x[4]`; `x[-10]` is `x[0]`) and out-of-bounds updates are DROPPED when writing;
boolean masks and `nonzero` without `size=` need concrete values (not tracers).

How an index becomes primitives: indices made only of ints, slices, None and Ellipsis take a
static path (one `lax.slice`, then `lax.rev` for negative steps and one `lax.reshape`); any
integer array (or boolean mask, through its nonzero positions) turns the whole index into ONE
`gather` (or one scatter for `.at[]`). The plan for both is computed from static shapes only.
"""
import operator

import numpy as np

from .. import dtypes, errors
from .. import lax
from ..array import Array
from ..lax import slicing
from ..lax._base import any_key_array, is_key_array
from ..trace import Tracer
from .creation import _contains_tracer, array as _array
from ._util import (asarray_operand, broadcast_shapes, canonicalize_axis, check_arraylike,
                    promote_args_inexact, promote_dtypes)

__all__ = ["take", "take_along_axis", "put_along_axis", "where", "select", "nonzero", "flatnonzero", "argwhere",
           "compress", "extract", "choose", "diag_indices", "diag_indices_from", "tril_indices", "triu_indices",
           "tril_indices_from", "triu_indices_from", "ix_", "unravel_index", "ravel_multi_index"]


class NonConcreteBooleanIndexError(TypeError):
    """A boolean mask index (or `nonzero` without `size=`) was a tracer: the result's shape
    would depend on its values, which a transformation cannot know. Use `jnp.where(mask, x, y)`
    to select elementwise, or pass `size=` to `jnp.nonzero`/`jnp.where` for a fixed-size result."""


def _non_concrete_error(what, aval):
    return NonConcreteBooleanIndexError(
        f"{what} must be concrete, got a traced value {aval}: the result shape would depend on its "
        "values. Use jnp.where(mask, x, y) to select elementwise, or jnp.nonzero(mask, size=N) / "
        "jnp.where(mask, size=N) for a fixed-size result.")


def _concrete(x, what):
    """The NumPy value of `x`; a tracer raises NonConcreteBooleanIndexError."""
    if isinstance(x, Tracer):
        raise _non_concrete_error(what, x.aval)
    return np.asarray(x)


def _concrete_for_raise(x, fun_name, what):
    """The NumPy value of `x` for mode='raise' range checks; a tracer raises a
    ConcretizationTypeError that points to the modes that need no check."""
    if isinstance(x, Tracer):
        raise errors.ConcretizationTypeError(
            f"jnp.{fun_name} with mode='raise' checks the values of {what}, which are not known under a "
            f"transformation (got a traced value {x.aval}). Use mode='wrap' or mode='clip' instead.")
    return np.asarray(x)


# ----- small elementwise helpers over lax (index arithmetic) -------------------------------------
# NumPy index values are computed on the host (they are static); others with lax. Narrow integer
# indices are widened first, so that `i + n` cannot overflow an int8.

def _widen(i):
    if isinstance(i, np.ndarray):
        return i.astype(np.int64)
    if np.dtype(i.dtype).itemsize < 4:
        return lax.convert_element_type(i, np.int32)
    return i


def _normalize_negative(i, n):
    """i + n where i < 0 (NumPy's negative indices); static for NumPy values."""
    i = _widen(i)
    if isinstance(i, np.ndarray):
        return np.where(i < 0, i + n, i) if i.dtype.kind == "i" else i
    if dtypes.is_unsigned(i.dtype):
        return i
    return lax.select_n(lax.lt(i, 0), i, lax.add(i, n))


def _clamp_index(i, lo, hi):
    i = _widen(i)
    if isinstance(i, np.ndarray):
        return np.clip(i, lo, hi).astype(i.dtype)
    return lax.clamp(lo, i, hi)


def _floor_mod(i, n):
    i = _widen(i)
    if isinstance(i, np.ndarray):
        return np.mod(i, n).astype(i.dtype) if n else i
    r = lax.rem(i, n)
    if dtypes.is_unsigned(i.dtype):
        return r
    return lax.select_n(lax.lt(r, 0), r, lax.add(r, n))


def _broadcast_to(x, shape):
    """`x` broadcast to `shape` by NumPy's rules; ValueError naming both shapes otherwise."""
    x = asarray_operand(x)
    shape = tuple(shape)
    if x.shape == shape:
        return x
    try:
        ok = broadcast_shapes(x.shape, shape) == shape
    except ValueError:
        ok = False
    if not ok or x.ndim > len(shape):
        raise ValueError(f"Incompatible shapes for broadcasting: {x.shape} and requested shape {shape}")
    lead = len(shape) - x.ndim
    kept = [i for i, d in enumerate(x.shape) if d == shape[lead + i]]
    if len(kept) != x.ndim:  # drop the size-1 dims that broadcast, then broadcast_in_dim
        x = lax.reshape(x, tuple(x.shape[i] for i in kept))
    return lax.broadcast_in_dim(x, shape, tuple(lead + i for i in kept))


def _is_int_scalar(i):
    return (type(i) is int or isinstance(i, np.integer)) and not isinstance(i, (bool, np.bool_))


# ----- parsing an index --------------------------------------------------------------------------
# An index becomes a list of entries, one per result-affecting item, after Ellipsis expansion:
#   ("none",)                 a new axis
#   ("int", i)                a static Python int (not yet normalized)
#   ("slice", start, step, n) a static slice, already normalized by slice.indices (n = its length)
#   ("array", a)              an integer index array: np.ndarray (static) or Array/Tracer

def _index_array(i):
    """An index array-like as np.ndarray (lists, NumPy values) or Array/Tracer; checks its dtype."""
    if isinstance(i, (Array, Tracer)):
        arr = i
    else:
        if isinstance(i, (list, tuple)) and _contains_tracer(i):
            arr = _array(i)
        else:
            arr = np.asarray(i)
            if arr.size == 0 and arr.dtype == np.float64 and isinstance(i, (list, tuple)):
                arr = arr.astype(np.int32)  # NumPy reads an empty list index as an integer index
    kind = np.dtype(arr.dtype).kind
    if kind not in "biu":
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {arr.dtype} "
                        "(JAX and NumPy allow only integer, slice, None, Ellipsis and boolean indices).")
    return arr


def _expand_index(idx, shape):
    """(entries, shape of the operand after inserting the axes that scalar booleans index)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    items = []
    for i in idx:
        if i is None or i is Ellipsis:
            items.append(i)
        elif isinstance(i, slice):
            items.append(("slice", i))
        elif isinstance(i, (bool, np.bool_)):
            items.append(("bool", bool(i)))
        elif _is_int_scalar(i):
            items.append(("int", int(i)))
        elif isinstance(i, (list, tuple, np.ndarray, np.generic, Array, Tracer)):
            arr = _index_array(i)
            if np.dtype(arr.dtype) == np.bool_:
                if arr.ndim == 0:
                    items.append(("bool", bool(_concrete(arr, "A boolean index"))))
                else:
                    items.append(("mask", _concrete(arr, "Array boolean indices")))
            else:
                items.append(("array", arr))
        elif hasattr(i, "__index__"):
            items.append(("int", operator.index(i)))
        else:
            raise TypeError(f"Indexing mode not supported: index {i!r} of type {type(i).__name__}. Use ints, "
                            "slices, None, Ellipsis, or integer / boolean arrays.")
    n_ellipsis = sum(1 for i in items if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 if i[0] in ("slice", "int", "array") else i[1].ndim if i[0] == "mask" else 0
                   for i in items if i is not None and i is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {consumed} were indexed")
    rest = [("slice", slice(None))] * (len(shape) - consumed)
    if n_ellipsis:
        k = items.index(Ellipsis)
        items = items[:k] + rest + items[k + 1:]
    else:
        items = items + rest
    entries, new_shape, dim = [], [], 0
    for i in items:
        if i is None:
            entries.append(("none",))
        elif i[0] == "bool":
            # NumPy: a scalar bool indexes a new size-1 axis with the mask [True] or [False]
            new_shape.append(1)
            entries.append(("array", np.arange(int(i[1]), dtype=np.int32)))
        elif i[0] == "mask":
            mask = i[1]
            if mask.shape != tuple(shape[dim:dim + mask.ndim]):
                raise IndexError(f"boolean index did not match indexed array in dimension {dim}: the mask "
                                 f"has shape {mask.shape}, the indexed dimensions {tuple(shape[dim:dim + mask.ndim])}")
            for nz in np.nonzero(mask):
                entries.append(("array", nz.astype(np.int32)))
                new_shape.append(shape[dim])
                dim += 1
        else:
            n = shape[dim]
            if i[0] == "slice":
                start, stop, step = _static_slice(i[1], n)
                entries.append(("slice", start, step, len(range(start, stop, step))))
            else:
                entries.append(i)
            new_shape.append(n)
            dim += 1
    return entries, tuple(new_shape)


def _static_slice(s, n):
    parts = []
    for v in (s.start, s.stop, s.step):
        if isinstance(v, Tracer):
            raise TypeError("Slice entries must be static integers, got a traced value. Use "
                            "lax.dynamic_slice (or lax.dynamic_slice_in_dim) for a slice with a traced start.")
        parts.append(None if v is None else operator.index(v))
    if parts[2] == 0:
        raise ValueError("slice step cannot be zero")
    return slice(*parts).indices(n)


# ----- the static path: ints, slices, None ------------------------------------------------------

def _static_take(arr, entries, shape):
    starts, limits, strides, rev, out_shape = [], [], [], [], []
    dim = 0
    for e in entries:
        if e[0] == "none":
            out_shape.append(1)
            continue
        n = shape[dim]
        if e[0] == "int":
            if n == 0:
                raise IndexError(f"index {e[1]} is out of bounds for axis {dim} with size 0")
            i = min(max(e[1] + n if e[1] < 0 else e[1], 0), n - 1)  # clamp, as JAX's gathers do
            starts.append(i), limits.append(i + 1), strides.append(1)
        else:
            _, start, step, length = e
            if step > 0 or length == 0:
                lo = start if length else 0
                starts.append(lo), limits.append(lo + (length - 1) * abs(step) + 1 if length else 0)
            else:
                lo = start + (length - 1) * step
                starts.append(lo), limits.append(start + 1)
                if length > 1:
                    rev.append(dim)
            strides.append(abs(step) if length > 1 else 1)
            out_shape.append(length)
        dim += 1
    out = lax.slice(arr, starts, limits, strides)
    if rev:
        out = lax.rev(out, tuple(rev))
    return lax.reshape(out, tuple(out_shape))


# ----- the gather/scatter plan ------------------------------------------------------------------

class _Plan:
    """Everything static about an advanced index: dimension numbers, shapes, and the recipe of the
    index tensor (a NumPy block of static components, then traced components)."""
    __slots__ = ("static", "dynamic", "index_map", "collapsed", "slice_sizes", "offset_dims",
                 "gather_shape", "out_shape", "batch_shape", "index_dtype")


def _index_dtype(entries, shape):
    """int32 unless a dimension or an index array needs 64 bits (and x64 allows them)."""
    def wide(dt):
        dt = np.dtype(dt)
        return dt.itemsize == 8 or (dt.kind == "u" and dt.itemsize == 4)
    if max(shape, default=0) >= 2 ** 31 or any(e[0] == "array" and wide(e[1].dtype) for e in entries):
        return dtypes.canonicalize_dtype(np.int64)
    return np.dtype(np.int32)


def _plan(entries, shape):
    arrays = [e[1] for e in entries if e[0] == "array"]
    adv = [k for k, e in enumerate(entries) if e[0] in ("int", "array")]
    try:
        bshape = broadcast_shapes(*[tuple(a.shape) for a in arrays]) if arrays else ()
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(tuple(a.shape)) for a in arrays)) from None
    adjacent = not adv or adv == list(range(adv[0], adv[-1] + 1))
    # output dimensions in NumPy's order: ("new",) ("window", dim) ("stride", dim, k) ("adv", j)
    out = [] if adjacent else [("adv", j) for j in range(len(bshape))]
    dim = 0
    dims_of = []
    for k, e in enumerate(entries):
        if e[0] == "none":
            out.append(("new",))
            continue
        dims_of.append(dim)
        if e[0] == "slice":
            out.append(("window", dim) if e[2] == 1 else ("stride", dim))
        elif adjacent and k == adv[0]:
            out += [("adv", j) for j in range(len(bshape))]
        dim += 1
    sizes = {}
    dim = 0
    for e in entries:
        if e[0] != "none":
            if e[0] == "slice":
                sizes[dim] = e[3]
            dim += 1
    out_shape = tuple(1 if o[0] == "new" else bshape[o[1]] if o[0] == "adv" else sizes[o[1]] for o in out)
    gathered = [o for o in out if o[0] != "new"]
    batch = [o for o in gathered if o[0] != "window"]
    batch_shape = tuple(bshape[o[1]] if o[0] == "adv" else sizes[o[1]] for o in batch)
    adv_pos = [p for p, o in enumerate(batch) if o[0] == "adv"]
    p = _Plan()
    p.index_dtype = _index_dtype(entries, shape)
    p.out_shape, p.batch_shape = out_shape, batch_shape
    p.gather_shape = tuple(s for s, o in zip(out_shape, out, strict=True) if o[0] != "new")
    p.offset_dims = tuple(q for q, o in enumerate(gathered) if o[0] == "window")
    static, static_map, p.dynamic, dynamic_map = [], [], [], []
    collapsed, slice_sizes = [], []
    nb = len(batch_shape)

    def place(value, positions):
        """A static component laid out along `positions` of the batch shape (NumPy)."""
        value = np.asarray(value)
        full = [1] * nb
        for pos, d in zip(positions, value.shape, strict=True):
            full[pos] = d
        return value.reshape(full)

    dim = 0
    for e in entries:
        if e[0] == "none":
            continue
        n = shape[dim]
        if e[0] == "slice":
            _, start, step, length = e
            if step == 1:
                slice_sizes.append(length)
                if length != n:
                    static.append(place(start, [])), static_map.append(dim)
            else:
                collapsed.append(dim), slice_sizes.append(min(1, n))
                pos = batch.index(("stride", dim))
                static.append(place(start + step * np.arange(length), [pos])), static_map.append(dim)
        else:
            if n == 0 and int(np.prod(batch_shape)) != 0:
                raise IndexError(f"index is out of bounds for axis {dim} with size 0")
            collapsed.append(dim), slice_sizes.append(min(1, n))
            if e[0] == "int":
                static.append(place(e[1] + n if e[1] < 0 else e[1], [])), static_map.append(dim)
            else:
                a = e[1]
                positions = adv_pos[len(adv_pos) - a.ndim:]
                if isinstance(a, np.ndarray):
                    static.append(place(_normalize_negative(a.astype(np.int64), n), positions))
                    static_map.append(dim)
                else:
                    p.dynamic.append((_normalize_negative(lax.convert_element_type(a, p.index_dtype), n), positions))
                    dynamic_map.append(dim)
        dim += 1
    if static:
        block = np.stack([np.broadcast_to(c, batch_shape) for c in static], axis=-1)
        info = np.iinfo(p.index_dtype)
        p.static = np.clip(block, info.min, info.max).astype(p.index_dtype)
    else:
        p.static = None
    p.index_map = tuple(static_map + dynamic_map)
    p.collapsed = tuple(collapsed)
    p.slice_sizes = tuple(slice_sizes)
    return p


def _plan_indices(p):
    """The index tensor of a plan: batch_shape + (number of components,)."""
    parts = []
    if p.static is not None:
        parts.append(np.ascontiguousarray(p.static))
    for value, positions in p.dynamic:
        parts.append(lax.broadcast_in_dim(value, p.batch_shape + (1,), tuple(positions)))
    if not parts:
        return np.zeros(p.batch_shape + (0,), p.index_dtype)
    if len(parts) == 1:
        return parts[0]
    if isinstance(parts[0], np.ndarray):
        parts[0] = lax.convert_element_type(parts[0], p.index_dtype)
    return lax.concatenate(parts, len(p.batch_shape))


def _rewriting_take(arr, idx, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
    """`arr[idx]` with NumPy's indexing semantics (how `Array.__getitem__` and tracers index).

    Out-of-bounds integer indices are clamped (JAX's semantics, NumPy would raise); `mode` and
    `fill_value` are those of `x.at[idx].get`. Basic indices become static slices; any integer or
    boolean array index makes the whole index one gather.

    Example: `jnp.arange(10)[2:8:3]` is `[2, 5]`; `x[[0, 2], 1:]` gathers rows 0 and 2.
    """
    arr = asarray_operand(arr)
    entries, shape = _expand_index(idx, arr.shape)
    if shape != arr.shape:
        arr = lax.reshape(arr, shape)
    parsed = slicing.GatherScatterMode.from_any(mode) if mode is not None else None
    if not any(e[0] == "array" for e in entries) and parsed != slicing.GatherScatterMode.FILL_OR_DROP:
        return _static_take(arr, entries, shape)
    p = _plan(entries, shape)
    dn = slicing.GatherDimensionNumbers(offset_dims=p.offset_dims, collapsed_slice_dims=p.collapsed,
                                        start_index_map=p.index_map)
    out = slicing.gather(arr, _plan_indices(p), dn, p.slice_sizes, indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, mode="clip" if mode is None else mode,
                         fill_value=fill_value)
    return lax.reshape(out, p.out_shape)


def _scatter_update(x, idx, values, scatter_fn, indices_are_sorted=False, unique_indices=False, mode=None):
    x = asarray_operand(x)
    check_arraylike("scatter", values)
    values = asarray_operand(values)
    if values.dtype != x.dtype:
        values = lax.convert_element_type(values, x.dtype)
    entries, shape = _expand_index(idx, x.shape)
    operand = lax.reshape(x, shape) if shape != x.shape else x
    p = _plan(entries, shape)
    updates = lax.reshape(_broadcast_to(values, p.out_shape), p.gather_shape)
    dn = slicing.ScatterDimensionNumbers(update_window_dims=p.offset_dims, inserted_window_dims=p.collapsed,
                                         scatter_dims_to_operand_dims=p.index_map)
    out = scatter_fn(operand, _plan_indices(p), updates, dn, indices_are_sorted=indices_are_sorted,
                     unique_indices=unique_indices, mode=mode)
    return lax.reshape(out, x.shape) if shape != x.shape else out


class _IndexUpdateHelper:
    """The `x.at` property: `x.at[idx]` names the elements that an update or `get` acts on.

    Example: `x.at[1].set(5.)`, `x.at[[0, 0]].add(1.)` (repeated indices accumulate),
    `x.at[7].get(mode='fill', fill_value=0)`.
    """
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """Pure updates of `array[index]`. Every method returns a new array with `array`'s dtype and
    shape (values are cast and broadcast to `array[index].shape`). Out-of-bounds updates are
    dropped unless `mode='clip'`; `get` clamps out-of-bounds reads unless `mode='fill'`.

    Repeated indices: `add`, `subtract`, `multiply`, `divide` (inexact arrays), `min` and `max`
    accumulate every update; with `set` one of them wins (unspecified which). `power`, `apply` and
    integer `divide` read `array[index]` once, compute, and set (so they apply once per index).
    """
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        """`array[index]`; `mode='fill'` returns `fill_value` (default NaN / min int) out of bounds."""
        return _rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode, fill_value=fill_value)

    def _scatter(self, values, fn, indices_are_sorted, unique_indices, mode):
        return _scatter_update(self.array, self.index, values, fn, indices_are_sorted, unique_indices, mode)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`array[index] = values`, as a new array."""
        return self._scatter(values, slicing.scatter, indices_are_sorted, unique_indices, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`array[index] += values`; repeated indices accumulate (like `np.add.at`)."""
        return self._scatter(values, slicing.scatter_add, indices_are_sorted, unique_indices, mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`array[index] -= values`; repeated indices accumulate."""
        values = asarray_operand(values)
        if values.dtype != np.dtype(self.array.dtype):
            values = lax.convert_element_type(values, self.array.dtype)
        return self._scatter(lax.neg(values), slicing.scatter_add, indices_are_sorted, unique_indices, mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`array[index] *= values`; repeated indices accumulate."""
        return self._scatter(values, slicing.scatter_mul, indices_are_sorted, unique_indices, mode)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`array[index] /= values` (integer arrays: true division, then cast back)."""
        dt = np.dtype(self.array.dtype)
        if dtypes.is_inexact(dt):
            v = asarray_operand(values)
            v = v if v.dtype == dt else lax.convert_element_type(v, dt)
            recip = lax.div(lax.full_like(v, 1), v)
            return self._scatter(recip, slicing.scatter_mul, indices_are_sorted, unique_indices, mode)

        def true_divide(old):
            return lax.div(*promote_args_inexact("divide", old, values))
        return self._compute(true_divide, indices_are_sorted, unique_indices, mode)

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`array[index] **= values` (applied once per index)."""
        import core.numpy as jnp
        return self._compute(lambda old: jnp.power(old, values), indices_are_sorted, unique_indices, mode)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`array[index] = minimum(array[index], values)`; repeated indices accumulate."""
        return self._scatter(values, slicing.scatter_min, indices_are_sorted, unique_indices, mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`array[index] = maximum(array[index], values)`; repeated indices accumulate."""
        return self._scatter(values, slicing.scatter_max, indices_are_sorted, unique_indices, mode)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """`array[index] = func(array[index])` for a unary elementwise `func` (once per index)."""
        return self._compute(func, indices_are_sorted, unique_indices, mode)

    def _compute(self, func, indices_are_sorted, unique_indices, mode):
        # read with "clip" so every in-bounds element gets its own value; out-of-bounds writes drop
        old = _rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode="clip")
        return self._scatter(func(old), slicing.scatter, indices_are_sorted, unique_indices, mode)


# ----- numpy functions ---------------------------------------------------------------------------

def _operand(x, fun_name):
    check_arraylike(fun_name, x)
    return asarray_operand(x)


def _index_operand(x, fun_name):
    """An integer index argument: NumPy values stay static (planned on the host), others become
    arrays; non-integer dtypes are a TypeError naming the dtype."""
    check_arraylike(fun_name, x)
    if not isinstance(x, (Array, Tracer)):
        x = np.asarray(x)
    if np.dtype(x.dtype).kind not in "iu":
        raise TypeError(f"{fun_name}: indices must have an integer dtype, got {x.dtype}")
    return x


def _ravel(x):
    return lax.reshape(x, (x.size,))


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    """Elements of `a` at `indices` along `axis` (the flattened array when None), as `numpy.take`.

    `mode`: None or 'fill' (JAX's default: negative indices count from the end, out-of-bounds
    ones give `fill_value`, default NaN / min int), 'clip' (clamp to [0, n-1], negatives included),
    'wrap' (indices modulo n). NumPy's 'raise' is not supported (no errors from inside a program).

    Example: `jnp.take(jnp.array([1., 2., 3.]), jnp.array([2, -1, 5]))` is `[3., 3., nan]`.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    if is_key_array(a):  # typed PRNG keys: taken along their key axes (core/prng_keys.py)
        from .. import prng_keys
        return prng_keys.on_key_data(take, a, indices, axis, None, mode, unique_indices, indices_are_sorted,
                                     fill_value)
    a = _operand(a, "take")
    idx = _index_operand(indices, "take")
    if axis is None:
        a, axis = _ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim, "take")
    n = a.shape[axis]
    if mode is None or mode == "fill":
        gather_mode = "fill"
    elif mode == "clip":
        idx, gather_mode = _clamp_index(idx, 0, max(n - 1, 0)), "clip"
    elif mode == "wrap":
        idx, gather_mode = _floor_mod(idx, n), "clip"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported: indices cannot be checked "
                                  "inside a program. Use mode='fill', 'clip' or 'wrap'.")
    else:
        raise ValueError(f"Invalid mode for jnp.take: {mode!r}; expected 'fill', 'clip' or 'wrap'.")
    return _rewriting_take(a, (slice(None),) * axis + (idx,), indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=gather_mode, fill_value=fill_value)


def _along_axis_setup(fun_name, arr, indices, axis):
    """Common checks of take/put_along_axis: (arr, indices as int32-ish, axis, common shape)."""
    arr = _operand(arr, fun_name)
    idx = _index_operand(indices, fun_name)
    if axis is None:
        if idx.ndim != 1:
            raise ValueError(f"{fun_name}: when axis=None, indices must be one-dimensional, got shape {idx.shape}")
        arr, axis = _ravel(arr), 0
    if arr.ndim != idx.ndim:
        raise ValueError(f"{fun_name}: indices and arr must have the same number of dimensions; "
                         f"{idx.ndim} vs. {arr.ndim}")
    axis = canonicalize_axis(axis, arr.ndim, fun_name)
    shape = []
    for d, (sa, si) in enumerate(zip(arr.shape, idx.shape, strict=True)):
        if d == axis:
            shape.append(None)
            continue
        try:
            shape.append(broadcast_shapes((sa,), (si,))[0])
        except ValueError:
            raise ValueError(f"{fun_name}: arr of shape {arr.shape} and indices of shape {idx.shape} do not "
                             f"broadcast in dimension {d}") from None
    n = arr.shape[axis]
    idx = _normalize_negative(idx.astype(np.int32) if isinstance(idx, np.ndarray) else idx, n)
    if not isinstance(idx, np.ndarray) and idx.dtype != np.int32 and not dtypes.x64_enabled():
        idx = lax.convert_element_type(idx, np.int32)
    if isinstance(idx, np.ndarray):
        idx = asarray_operand(idx)
    arr_shape = tuple(n if s is None else s for s in shape)
    idx_shape = tuple(idx.shape[axis] if s is None else s for s in shape)
    arr = _broadcast_to(arr, arr_shape)
    idx = _broadcast_to(idx, idx_shape)
    others = tuple(d for d in range(arr.ndim) if d != axis)
    return arr, lax.reshape(idx, idx_shape + (1,)), axis, others


def take_along_axis(arr, indices, axis, mode=None, fill_value=None):
    """`arr` sampled at `indices` along `axis`, as `numpy.take_along_axis` (other dimensions
    broadcast). Negative indices count from the end; out-of-bounds ones give `fill_value` (mode
    None / 'fill', JAX's default) or are clamped (mode 'clip').

    Example: `jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1)` sorts each row.
    """
    arr, idx, axis, others = _along_axis_setup("take_along_axis", arr, indices, axis)
    if arr.shape[axis] == 0 and idx.size:
        raise IndexError(f"take_along_axis: cannot take from axis {axis} of size 0")
    dn = slicing.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
                                        operand_batching_dims=others, start_indices_batching_dims=others)
    return slicing.gather(arr, idx, dn, tuple(min(1, d) for d in arr.shape),
                          mode="fill" if mode is None else mode, fill_value=fill_value)


def put_along_axis(arr, indices, values, axis, inplace=True, mode=None):
    """A copy of `arr` with `values` written at `indices` along `axis` (`numpy.put_along_axis`).

    Arrays are immutable, so `inplace=False` is required. Out-of-bounds writes are dropped
    (mode None / 'drop') or clamped ('clip'); with repeated indices one write wins.

    Example: `jnp.put_along_axis(x, jnp.array([[0], [2]]), 9., axis=1, inplace=False)`.
    """
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    arr = _operand(arr, "put_along_axis")
    work, idx, axis2, others = _along_axis_setup("put_along_axis", arr, indices, axis)
    if work.shape != (arr.shape if axis is not None else (arr.size,)):
        raise ValueError(f"put_along_axis: indices of shape {np.shape(indices)} must not broadcast arr of "
                         f"shape {arr.shape}")
    vals = asarray_operand(values)
    vals = vals if vals.dtype == work.dtype else lax.convert_element_type(vals, work.dtype)
    vals = _broadcast_to(vals, idx.shape[:-1])
    dn = slicing.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(axis2,),
                                         scatter_dims_to_operand_dims=(axis2,), operand_batching_dims=others,
                                         scatter_indices_batching_dims=others)
    out = slicing.scatter(work, idx, vals, dn, mode=mode)
    return lax.reshape(out, arr.shape)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """`x` where `condition` else `y`, elementwise with NumPy broadcasting and JAX's promotion;
    with only `condition`, `nonzero(condition, size=, fill_value=)`.

    Example: `jnp.where(x > 0, x, 0.)` is relu; `jnp.where(jnp.array([0, 3, 5]))` is `(Array([1, 2]),)`.
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided to "
                         f"jax.numpy.where, got {x} and {y}.")
    if size is not None or fill_value is not None:
        raise ValueError("jnp.where: size and fill_value apply only to the one-argument form where(condition).")
    if is_key_array(x) or is_key_array(y):  # typed PRNG keys (core/prng_keys.py)
        from .. import prng_keys
        prng_keys.check_all_keys("where", [x, y])
        return prng_keys.on_key_data(where, condition, x, y)
    check_arraylike("where", condition, x, y)
    x, y = promote_dtypes(x, y)
    cond = asarray_operand(condition)
    shape = broadcast_shapes(cond.shape, x.shape, y.shape)
    cond = _to_bool(cond)
    return lax.select_n(_broadcast_to(cond, shape), _broadcast_to(y, shape), _broadcast_to(x, shape))


def _to_bool(x):
    if x.dtype == np.bool_:
        return x
    return lax.ne(x, lax.full_like(x, 0))


def select(condlist, choicelist, default=0):
    """The first `choicelist[i]` whose `condlist[i]` is true, elementwise, else `default`
    (`numpy.select`); choices and default are promoted together and all arguments broadcast.

    Example: `jnp.select([x < 0, x > 0], [-1, 1], 0)` is the sign of x.
    """
    if len(condlist) != len(choicelist):
        raise ValueError(f"list of cases must be same length as list of conditions, got {len(choicelist)} "
                         f"cases and {len(condlist)} conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    if any_key_array([*choicelist, default]):  # typed PRNG keys (core/prng_keys.py)
        from .. import prng_keys
        prng_keys.check_all_keys("select", [*choicelist, default])
        n = len(condlist)
        return prng_keys.on_key_data(lambda *xs: select(list(xs[:n]), list(xs[n:-1]), xs[-1]),
                                     *condlist, *choicelist, default)
    check_arraylike("select", *condlist, *choicelist, default)
    conds = [asarray_operand(c) for c in condlist]
    for i, c in enumerate(conds):
        if c.dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray, got dtype {c.dtype}")
    values = promote_dtypes(*choicelist, default)
    shape = broadcast_shapes(*[c.shape for c in conds], *[v.shape for v in values])
    out = _broadcast_to(values[-1], shape)
    for c, v in zip(reversed(conds), reversed(values[:-1]), strict=True):
        out = lax.select_n(_broadcast_to(c, shape), out, _broadcast_to(v, shape))
    return out


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of `a`, one int32 array per dimension (`numpy.nonzero`).

    Without `size` the values must be concrete (not traced). With `size=N` the result has exactly
    N entries: the first N nonzeros, padded with `fill_value` (default 0; a scalar, or one value per
    dimension), and it works under transformations.

    Example: `jnp.nonzero(jnp.array([0, 3, 0, 5]))` is `(Array([1, 3]),)`;
    `jnp.nonzero(jnp.array([0, 3]), size=3, fill_value=-1)` is `(Array([1, -1, -1]),)`.
    """
    a = _operand(a, "nonzero")
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() "
                         "instead.")
    if size is None:
        if isinstance(a, Tracer):
            raise _non_concrete_error("The argument to jnp.nonzero (without size=)", a.aval)
        return tuple(asarray_operand(nz.astype(np.int32)) for nz in np.nonzero(np.asarray(a)))
    size = operator.index(size)
    if size < 0:
        raise ValueError(f"nonzero: size must be non-negative, got {size}")
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * a.ndim
    if len(fills) != a.ndim:
        raise ValueError(f"nonzero: fill_value must be a scalar or a tuple of length {a.ndim}, got {fill_value}")
    fills = [0 if f is None else f for f in fills]
    int_t = np.dtype(np.int32)
    if a.size == 0:
        return tuple(lax.full((size,), f, int_t) for f in fills)
    mask = _ravel(_to_bool(a))
    positions = lax.sub(lax.cumsum(lax.convert_element_type(mask, int_t)), 1)
    # the k-th nonzero goes to slot k; zeros (and nonzeros past `size`) go out of bounds: dropped
    target = lax.reshape(lax.select_n(mask, lax.full((a.size,), size, int_t), positions), (a.size, 1))
    dn = slicing.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))
    out = []
    for d, f in enumerate(fills):
        coords = _ravel(lax.broadcasted_iota(int_t, a.shape, d))
        out.append(slicing.scatter(lax.full((size,), f, int_t), target, coords, dn, mode="drop"))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements of the flattened `a` (`numpy.flatnonzero`); `size` and
    `fill_value` as in `nonzero`.

    Example: `jnp.flatnonzero(jnp.array([[0, 1], [2, 0]]))` is `[1, 2]`.
    """
    return nonzero(_ravel(_operand(a, "flatnonzero")), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements as rows of an (N, a.ndim) array (`numpy.argwhere`);
    `size` and `fill_value` as in `nonzero`.

    Example: `jnp.argwhere(jnp.array([[0, 1], [2, 0]]))` is `[[0, 1], [1, 0]]`.
    """
    a = _operand(a, "argwhere")
    if a.ndim == 0:
        if size is None:
            n = int(bool(_concrete(a, "The argument to jnp.argwhere (without size=)")))
        else:
            n = operator.index(size)
        return lax.full((n, 0), 0, np.int32)
    cols = nonzero(a, size=size, fill_value=fill_value)
    return lax.concatenate([lax.reshape(c, (c.shape[0], 1)) for c in cols], 1)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of `a` along `axis` (the flattened array when None) where the 1-D `condition`
    is true (`numpy.compress`). Without `size`, `condition` must be concrete; with `size=N` the
    result has N slices, padded with `fill_value`.

    Example: `jnp.compress(jnp.array([True, False, True]), jnp.array([1, 2, 3]))` is `[1, 3]`.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    check_arraylike("compress", condition, a)
    a = asarray_operand(a)
    cond = asarray_operand(condition)
    if cond.ndim != 1:
        raise ValueError(f"condition must be a 1D array, got shape {cond.shape}")
    if axis is None:
        a, axis = _ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim, "compress")
    n = a.shape[axis]
    if size is None:
        positions = np.nonzero(_concrete(cond, "The condition of jnp.compress (without size=)"))[0]
        if positions.size and positions[-1] >= n:
            raise IndexError(f"index {positions[-1]} is out of bounds for axis {axis} with size {n}")
        return take(a, positions.astype(np.int32), axis=axis, mode="clip")
    positions = nonzero(cond, size=size, fill_value=n)[0]
    return take(a, positions, axis=axis, mode="fill", fill_value=fill_value)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of `arr` where `condition` is true, both flattened (`numpy.extract`); `size`
    and `fill_value` as in `compress`.

    Example: `jnp.extract(x % 2 == 0, x)` is the even elements of x.
    """
    check_arraylike("extract", condition, arr)
    return compress(_ravel(asarray_operand(condition)), _ravel(asarray_operand(arr)), size=size,
                    fill_value=fill_value)


def choose(a, choices, out=None, mode="raise"):
    """`choices[a[i]][i]` elementwise, with `a` and all choices broadcast (`numpy.choose`).

    `mode`: 'raise' (the index values must be concrete and in [0, len(choices))), 'wrap'
    (modulo) or 'clip'.

    Example: `jnp.choose(jnp.array([0, 1, 0]), [jnp.zeros(3), jnp.ones(3)])` is `[0., 1., 0.]`.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    idx = _index_operand(a, "choose")
    check_arraylike("choose", *choices)
    n = len(choices)
    if n == 0:
        raise ValueError("choose: choices must be a non-empty sequence of arrays")
    if mode == "raise":
        concrete = _concrete_for_raise(idx, "choose", "the index array")
        if concrete.size and (concrete.min() < 0 or concrete.max() >= n):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        idx = _floor_mod(idx, n)
    elif mode == "clip":
        idx = _clamp_index(idx, 0, n - 1)
    else:
        raise ValueError(f"invalid mode {mode!r} for jnp.choose; expected 'raise', 'wrap' or 'clip'")
    values = promote_dtypes(*choices)
    shape = broadcast_shapes(idx.shape, *[v.shape for v in values])
    stacked = lax.concatenate([lax.reshape(_broadcast_to(v, shape), (1,) + shape) for v in values], 0)
    idx = asarray_operand(idx.astype(np.int32) if isinstance(idx, np.ndarray) else idx)
    idx = lax.reshape(_broadcast_to(idx, shape), (1,) + shape)
    return lax.reshape(take_along_axis(stacked, idx, 0, mode="clip"), shape)


def _iota_int(n):
    return lax.iota(np.int32, n)


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an `ndim`-dimensional array of side `n`
    (`numpy.diag_indices`): `ndim` copies of `arange(n)`.

    Example: `x[jnp.diag_indices(3)]` is the diagonal of a (3, 3) array.
    """
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (_iota_int(n),) * ndim


def diag_indices_from(arr):
    """`diag_indices` for a square (all sides equal) array of rank >= 2.

    Example: `jnp.diag_indices_from(jnp.ones((3, 3)))` is `(arange(3), arange(3))`.
    """
    arr = _operand(arr, "diag_indices_from")
    if arr.ndim < 2:
        raise ValueError(f"input array must be at least 2-d, got shape {arr.shape}")
    if len(set(arr.shape)) != 1:
        raise ValueError(f"All dimensions of input must be of equal length, got shape {arr.shape}")
    return diag_indices(arr.shape[0], arr.ndim)


def _tri_indices(np_fn, n, k, m):
    rows, cols = np_fn(operator.index(n), operator.index(k), None if m is None else operator.index(m))
    return asarray_operand(rows.astype(np.int32)), asarray_operand(cols.astype(np.int32))


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle (diagonal offset `k`) of an (n, m) array.

    Example: `jnp.tril_indices(2)` is `([0, 1, 1], [0, 0, 1])`.
    """
    return _tri_indices(np.tril_indices, n, k, m)


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle (diagonal offset `k`) of an (n, m) array.

    Example: `jnp.triu_indices(2)` is `([0, 0, 1], [0, 1, 1])`.
    """
    return _tri_indices(np.triu_indices, n, k, m)


def _check_2d(arr, name):
    arr = _operand(arr, name)
    if arr.ndim != 2:
        raise ValueError(f"{name}: input array must be 2-d, got shape {arr.shape}")
    return arr


def tril_indices_from(arr, k=0):
    """`tril_indices` for the shape of the 2-D array `arr`.

    Example: `x[jnp.tril_indices_from(x)]` is x's lower triangle, row by row.
    """
    arr = _check_2d(arr, "tril_indices_from")
    return tril_indices(arr.shape[0], k, arr.shape[1])


def triu_indices_from(arr, k=0):
    """`triu_indices` for the shape of the 2-D array `arr`.

    Example: `x[jnp.triu_indices_from(x, k=1)]` is x's strict upper triangle.
    """
    arr = _check_2d(arr, "triu_indices_from")
    return triu_indices(arr.shape[0], k, arr.shape[1])


def ix_(*args):
    """An open mesh from 1-D index sequences (`numpy.ix_`): `x[jnp.ix_(rows, cols)]` is the
    submatrix of those rows and columns. Boolean sequences (concrete) mean their nonzeros.

    Example: `jnp.ix_(jnp.array([0, 2]), jnp.array([1]))` has shapes (2, 1) and (1, 1).
    """
    out = []
    for k, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            a = np.asarray(a) if a else np.zeros(0, np.int32)
        check_arraylike("ix_", a)
        if not isinstance(a, (Array, Tracer)):
            a = np.asarray(a)
        if a.ndim != 1:
            raise ValueError(f"Cross index must be 1 dimensional, got shape {a.shape}")
        if np.dtype(a.dtype) == np.bool_:
            a = np.nonzero(_concrete(a, "A boolean argument of jnp.ix_"))[0].astype(np.int32)
        elif np.dtype(a.dtype).kind not in "iu":
            raise TypeError(f"ix_: arguments must be integer or boolean sequences, got dtype {a.dtype}")
        shape = (1,) * k + (a.shape[0],) + (1,) * (len(args) - k - 1)
        out.append(lax.reshape(asarray_operand(a), shape))
    return tuple(out)


def unravel_index(indices, shape):
    """Convert flat indices into a tuple of coordinate arrays for `shape` (`numpy.unravel_index`).

    As in JAX, negative indices count from the end and out-of-bounds ones are clamped (NumPy
    raises).

    Example: `jnp.unravel_index(jnp.array([5, 1]), (2, 3))` is `([1, 0], [2, 1])`.
    """
    idx = _index_operand(indices, "unravel_index")
    shape = tuple(operator.index(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    total = int(np.prod(shape))
    if total == 0:
        raise ValueError(f"unravel_index: cannot unravel into a shape of size 0, got {shape}")
    idx = asarray_operand(idx)
    idx = _clamp_index(_normalize_negative(idx, total), 0, total - 1)
    coords = []
    for d in reversed(shape):
        coords.append(lax.rem(idx, d))
        idx = lax.div(idx, d)
    return tuple(reversed(coords))


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of the coordinate arrays `multi_index` into an array of shape `dims`
    (`numpy.ravel_multi_index`). `mode`: 'raise' (coordinates must be concrete and in bounds),
    'wrap' or 'clip'; `order`: 'C' (row-major) or 'F'.

    Example: `jnp.ravel_multi_index((jnp.array([1, 0]), jnp.array([2, 1])), (2, 3))` is `[5, 1]`.
    """
    dims = tuple(operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}, got "
                         f"{len(multi_index)}")
    if order not in ("C", "F"):
        raise ValueError(f"only 'C' or 'F' order is permitted, got {order!r}")
    coords = [_index_operand(i, "ravel_multi_index") for i in multi_index]
    fixed = []
    for c, d in zip(coords, dims, strict=True):
        if mode == "raise":
            v = _concrete_for_raise(c, "ravel_multi_index", "the coordinates")
            if v.size and (v.min() < 0 or v.max() >= d):
                raise ValueError("invalid entry in coordinates array")
        elif mode == "wrap":
            c = _floor_mod(c, d)
        elif mode == "clip":
            c = _clamp_index(c, 0, max(d - 1, 0))
        else:
            raise ValueError(f"invalid mode {mode!r} for jnp.ravel_multi_index; expected 'raise', 'wrap' or 'clip'")
        fixed.append(asarray_operand(c.astype(np.int32) if isinstance(c, np.ndarray) else c))
    strides = np.cumprod((1,) + (dims[::-1] if order == "C" else dims)[:-1])
    strides = strides[::-1] if order == "C" else strides
    fixed = promote_dtypes(*fixed) if len(fixed) > 1 else fixed
    shape = broadcast_shapes(*[c.shape for c in fixed]) if fixed else ()
    total = None
    for c, s in zip(fixed, strides, strict=True):
        term = lax.mul(_broadcast_to(c, shape), int(s))
        total = term if total is None else lax.add(total, term)
    return total if total is not None else asarray_operand(np.int32(0))


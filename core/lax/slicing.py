"""Gather and scatter: XLA's general indexed reads and writes, in JAX's `lax` API.

`gather(operand, start_indices, dimension_numbers, slice_sizes)` reads one window of
`slice_sizes` at each start index; `scatter*(operand, scatter_indices, updates,
dimension_numbers)` combines each window of `updates` into `operand` at its start index. As in
JAX, the index vector is always the LAST dimension of the index array. Out-of-bounds indices are
handled by `mode` (a `GatherScatterMode`): CLIP clamps start indices so the whole window is in
bounds; FILL_OR_DROP makes a gather return `fill_value` for any window that is not wholly in
bounds and makes a scatter skip such windows; PROMISE_IN_BOUNDS checks nothing (XLA then clamps
gathers and skips scatters). `core.numpy` indexing and `x.at[...]` are built on these.
"""
import enum
import math
import weakref
from typing import NamedTuple

import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import ad, batching, lowering
from ..interpreters.lowering import i64_array, int_list
from ._base import ANY, INT, NUMBER, aval_of, check_dtype_accepted, dtype_kind, standard_primitive

__all__ = ["GatherDimensionNumbers", "GatherScatterMode", "gather", "ScatterDimensionNumbers",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max", "scatter_apply",
           "index_take"]


class GatherScatterMode(enum.Enum):
    """How gather and scatter treat out-of-bounds indices (see the module docstring)."""
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()

    @staticmethod
    def from_any(s):
        """Parse 'clip', 'fill', 'drop', 'promise_in_bounds', None (FILL_OR_DROP) or a mode."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f'Unknown gather mode "{s}"; expected one of "clip", "fill", "drop", '
                         '"promise_in_bounds" or None.')


class GatherDimensionNumbers(NamedTuple):
    """How operand, start indices and output dimensions relate in a `gather` (XLA's meaning).

    offset_dims: output dimensions that hold the window (the non-collapsed slice dimensions);
    collapsed_slice_dims: operand dimensions of slice size 1 dropped from the window;
    start_index_map: the operand dimension each component of an index vector indexes;
    operand_batching_dims / start_indices_batching_dims: paired batch dimensions.
    """
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How operand, scatter indices and updates dimensions relate in a `scatter` (XLA's meaning).

    update_window_dims: updates dimensions that hold the window; inserted_window_dims: operand
    dimensions of window size 1 absent from the updates' windows; scatter_dims_to_operand_dims:
    the operand dimension each component of an index vector indexes; operand_batching_dims /
    scatter_indices_batching_dims: paired batch dimensions.
    """
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


def _ints(seq):
    return tuple(int(d) for d in seq)


def _default_fill_value(dtype):
    """JAX's fill for out-of-bounds gathers: NaN, the minimum signed, the maximum unsigned, True."""
    dtype = np.dtype(dtype)
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtype.kind == "i":
        return int(np.iinfo(dtype).min)
    if dtype.kind == "u":
        return int(np.iinfo(dtype).max)
    return True


class _BitsFloat(float):
    """A float static parameter that is equal (and hashes) by its bits: 0.0 and -0.0, equal as
    floats, are different fill values, and must not share a cached program; a NaN equals itself.
    It is never equal to an int or bool, so 1, 1.0 and True are three parameters."""
    __slots__ = ()

    def __eq__(self, other):
        return type(other) is _BitsFloat and self.hex() == other.hex()

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(("float", self.hex()))

    def __repr__(self):
        return float.__repr__(self)


def _hashable_scalar(value):
    """A Python scalar for a static parameter, whose equality means "same program" (caches key on
    it): floats compare by their bits (`_BitsFloat`)."""
    value = np.asarray(value)
    if value.ndim != 0:
        raise TypeError(f"fill_value must be a scalar, got an array of shape {value.shape}")
    value = value.item()
    if isinstance(value, float):
        return _BitsFloat(value)
    return value


def _shift(dims, at):
    """`dims` renumbered for a new dimension inserted at position `at`."""
    return tuple(d + (d >= at) for d in dims)


def _position_after(positions, k):
    """Where to insert a new dimension so that it becomes entry `k` of the sorted `positions`
    (the output positions of one kind of dimension, e.g. a gather's offset dims)."""
    return positions[k - 1] + 1 if k else 0


def _move_index_bdim(indices, bdim):
    """Batched indices with the batch axis anywhere but the last (index vector) position, and
    where it is, counted among the index batch dimensions."""
    last = aval_of(indices).ndim - 1
    if bdim == last:
        indices, bdim = batching.moveaxis(indices, last, last - 1), last - 1
    return indices, bdim


def _check_dims(op, name, dims, bound, what="rank"):
    if any(d < 0 or d >= bound for d in dims):
        raise TypeError(f"{op}: {name} must be in range [0, {bound}) (the {what}), got {name}={dims}.")
    if len(set(dims)) != len(dims):
        raise TypeError(f"{op}: {name} must not contain repeated dimensions, got {name}={dims}.")


def _check_sorted(op, name, dims):
    if list(dims) != sorted(dims):
        raise TypeError(f"{op}: {name} must be sorted, got {name}={dims}.")


def _check_index_dtype(op, indices):
    if dtype_kind(indices.dtype) not in INT:
        raise TypeError(f"{op}: indices must have an integer dtype, got {dtypes.short_name(indices.dtype)}.")


def _index_bounds(operand_shape, index_map, window_sizes, index_dtype):
    """For each index-vector component, the largest start index keeping the window in bounds,
    saturated to what the index dtype can hold."""
    top = int(np.iinfo(index_dtype).max)
    return [min(max(operand_shape[d] - window_sizes[d], 0), top) for d in index_map]


def _bounds_tensor(b, bounds, indices_aval):
    """`bounds` (one per index-vector component) broadcast along the index array's last axis."""
    k = len(bounds)
    vec = b.constant(np.asarray(bounds, dtype=indices_aval.dtype), indices_aval.dtype, (k,))
    return b.op("stablehlo.broadcast_in_dim", [vec], [indices_aval],
                {"broadcast_dimensions": i64_array([indices_aval.ndim - 1])})


def _clamp_indices(b, indices, indices_aval, bounds):
    lo = lowering.full_like(b, 0, indices_aval)
    hi = _bounds_tensor(b, bounds, indices_aval)
    return b.op("stablehlo.clamp", [lo, indices, hi], [indices_aval])


def _in_bounds_mask(b, indices, indices_aval, bounds):
    """A bool tensor of the index batch shape: every component of the index vector in range."""
    lo = lowering.full_like(b, 0, indices_aval)
    hi = _bounds_tensor(b, bounds, indices_aval)
    ok = b.op("stablehlo.and", [lowering.compare(b, indices, lo, "GE", indices_aval),
                                lowering.compare(b, indices, hi, "LE", indices_aval)],
              [indices_aval.update(dtype=dtypes.bool_)])
    batch = ShapedArray(indices_aval.shape[:-1], dtypes.bool_)
    scalar = ShapedArray((), dtypes.bool_)
    init = b.constant(True, dtypes.bool_, ())
    region = b.region([scalar, scalar], lambda rb, x, y: rb.op("stablehlo.and", [x, y], [scalar]))
    return b.op("stablehlo.reduce", [ok, init], [batch], {"dimensions": i64_array([indices_aval.ndim - 1])},
                regions=[region])


# ----- gather --------------------------------------------------------------------------------

def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """Gather windows of `slice_sizes` from `operand` at `start_indices` (XLA's Gather).

    The last dimension of `start_indices` holds index vectors; `dimension_numbers` (a
    `GatherDimensionNumbers`) says how dimensions correspond. `mode=None` is PROMISE_IN_BOUNDS
    (XLA clamps); 'clip' clamps explicitly; 'fill' returns `fill_value` (default NaN for inexact
    dtypes, the minimum signed / maximum unsigned integer, True for bool) for windows that are not
    wholly in bounds.

    Example: rows 2 and 0 of a (3, 4) matrix `x`, as a (2, 4) array, are
    `lax.gather(x, jnp.array([[2], [0]]), dn, slice_sizes=(1, 4))` with
    `dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))`.
    """
    dn = GatherDimensionNumbers(*(_ints(d) for d in dimension_numbers))
    mode = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)
    if mode == GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = _default_fill_value(aval_of(operand).dtype)
        fill_value = _hashable_scalar(fill_value)
    else:
        fill_value = None
    return gather_p.bind(operand, start_indices, dimension_numbers=dn, slice_sizes=_ints(slice_sizes),
                         unique_indices=bool(unique_indices), indices_are_sorted=bool(indices_are_sorted),
                         mode=mode, fill_value=fill_value)


def _gather_shape_rule(operand, indices, *, dimension_numbers, slice_sizes, **_):
    dn = dimension_numbers
    op = "gather"
    if indices.ndim < 1:
        raise TypeError(f"{op}: start_indices must have rank >= 1 (the last dimension holds the index "
                        f"vectors), got shape {indices.shape}.")
    if len(slice_sizes) != operand.ndim:
        raise TypeError(f"{op}: slice_sizes must have one entry per operand dimension, got slice_sizes="
                        f"{slice_sizes} for operand shape {operand.shape}.")
    out_rank = len(dn.offset_dims) + indices.ndim - 1
    _check_dims(op, "offset_dims", dn.offset_dims, out_rank, "output rank")
    _check_sorted(op, "offset_dims", dn.offset_dims)
    _check_dims(op, "collapsed_slice_dims", dn.collapsed_slice_dims, operand.ndim, "operand rank")
    _check_sorted(op, "collapsed_slice_dims", dn.collapsed_slice_dims)
    _check_dims(op, "operand_batching_dims", dn.operand_batching_dims, operand.ndim, "operand rank")
    _check_sorted(op, "operand_batching_dims", dn.operand_batching_dims)
    _check_dims(op, "start_index_map", dn.start_index_map, operand.ndim, "operand rank")
    _check_dims(op, "start_indices_batching_dims", dn.start_indices_batching_dims, indices.ndim - 1,
                "start_indices rank without the index vector dimension")
    if set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims):
        raise TypeError(f"{op}: collapsed_slice_dims {dn.collapsed_slice_dims} and operand_batching_dims "
                        f"{dn.operand_batching_dims} must be disjoint.")
    if set(dn.start_index_map) & set(dn.operand_batching_dims):
        raise TypeError(f"{op}: start_index_map {dn.start_index_map} and operand_batching_dims "
                        f"{dn.operand_batching_dims} must be disjoint.")
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims):
        raise TypeError(f"{op}: operand_batching_dims {dn.operand_batching_dims} and "
                        f"start_indices_batching_dims {dn.start_indices_batching_dims} must have the same length.")
    for od, sd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True):
        if operand.shape[od] != indices.shape[sd]:
            raise TypeError(f"{op}: operand batching dimension {od} (size {operand.shape[od]}) and start_indices "
                            f"batching dimension {sd} (size {indices.shape[sd]}) must have the same size.")
    if len(dn.start_index_map) != indices.shape[-1]:
        raise TypeError(f"{op}: start_index_map must have one entry per index vector component; got "
                        f"start_index_map={dn.start_index_map} for start_indices of shape {indices.shape} "
                        f"(index vectors of size {indices.shape[-1]}).")
    for i, (size, dim) in enumerate(zip(slice_sizes, operand.shape, strict=True)):
        if not 0 <= size <= dim:
            raise TypeError(f"{op}: slice_sizes must be in range [0, operand shape], got slice_sizes="
                            f"{slice_sizes} for operand shape {operand.shape} (dimension {i}).")
    for name, dims in (("collapsed_slice_dims", dn.collapsed_slice_dims),
                       ("operand_batching_dims", dn.operand_batching_dims)):
        if any(slice_sizes[d] > 1 for d in dims):
            raise TypeError(f"{op}: slice_sizes in {name} must be at most 1, got slice_sizes={slice_sizes} "
                            f"and {name}={dims}.")
    window = [s for i, s in enumerate(slice_sizes)
              if i not in dn.collapsed_slice_dims and i not in dn.operand_batching_dims]
    if len(window) != len(dn.offset_dims):
        raise TypeError(f"{op}: offset_dims must have one entry per slice dimension that is neither collapsed "
                        f"nor batching; got offset_dims={dn.offset_dims} for {len(window)} such dimensions "
                        f"(slice_sizes={slice_sizes}, collapsed_slice_dims={dn.collapsed_slice_dims}, "
                        f"operand_batching_dims={dn.operand_batching_dims}).")
    batch = iter(indices.shape[:-1])
    window = iter(window)
    return tuple(next(window) if i in dn.offset_dims else next(batch) for i in range(out_rank))


def _gather_dtype_rule(operand, indices, **_):
    check_dtype_accepted("gather", operand.dtype, ANY)
    _check_index_dtype("gather", indices)
    return operand.dtype


def _gather_attrs(dn, slice_sizes, indices_aval, indices_are_sorted):
    fields = [f"offset_dims = {int_list(dn.offset_dims)}",
              f"collapsed_slice_dims = {int_list(dn.collapsed_slice_dims)}"]
    if dn.operand_batching_dims:
        fields += [f"operand_batching_dims = {int_list(dn.operand_batching_dims)}",
                   f"start_indices_batching_dims = {int_list(dn.start_indices_batching_dims)}"]
    fields += [f"start_index_map = {int_list(dn.start_index_map)}", f"index_vector_dim = {indices_aval.ndim - 1}"]
    return {"dimension_numbers": f"#stablehlo.gather<{', '.join(fields)}>",
            "indices_are_sorted": "true" if indices_are_sorted else "false",
            "slice_sizes": i64_array(slice_sizes)}


def _gather_lowering(ctx, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                     indices_are_sorted, mode, fill_value):
    b = ctx.b
    op_aval, idx_aval = ctx.avals_in
    out_aval = ctx.avals_out[0]
    dn = dimension_numbers
    bounds = _index_bounds(op_aval.shape, dn.start_index_map, slice_sizes, idx_aval.dtype)
    mask = None
    if mode == GatherScatterMode.FILL_OR_DROP:
        mask = _in_bounds_mask(b, indices, idx_aval, bounds)
    if mode != GatherScatterMode.PROMISE_IN_BOUNDS:
        # XLA clamps natively, but its spec calls that implementation-defined: clamp ourselves
        indices = _clamp_indices(b, indices, idx_aval, bounds)
    out = b.op("stablehlo.gather", [operand, indices], [out_aval],
               _gather_attrs(dn, slice_sizes, idx_aval, indices_are_sorted))
    if mask is None:
        return out
    batch_positions = [i for i in range(out_aval.ndim) if i not in dn.offset_dims]
    mask = b.op("stablehlo.broadcast_in_dim", [mask], [out_aval.update(dtype=dtypes.bool_)],
                {"broadcast_dimensions": i64_array(batch_positions)})
    fill = lowering.full_like(b, fill_value, out_aval)
    return b.op("stablehlo.select", [mask, out, fill], [out_aval])


gather_p = standard_primitive("gather", _gather_shape_rule, _gather_dtype_rule,
                              lambda operand, indices, **_: operand.weak_type)
lowering.register(gather_p, _gather_lowering)


def _gather_jvp(primals, tangents, *, mode, fill_value, **params):
    # linear in the operand; a window filled with `fill_value` is constant, so its tangent is zero
    operand, indices = primals
    out = gather_p.bind(operand, indices, mode=mode, fill_value=fill_value, **params)
    if type(tangents[0]) is ad.Zero:
        return out, ad.Zero(ad.tangent_aval(aval_of(out)))
    t_fill = 0 if mode == GatherScatterMode.FILL_OR_DROP else None
    return out, gather_p.bind(tangents[0], indices, mode=mode, fill_value=t_fill, **params)


def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                      indices_are_sorted, mode, fill_value):
    # Each output window adds its cotangent back where it was read. The scatter must treat an
    # out-of-bounds window as the gather did: FILL_OR_DROP drops what the gather filled, CLIP clamps
    # the same way (same window sizes), and PROMISE_IN_BOUNDS, which XLA clamps in a gather but skips
    # in a scatter, becomes an explicit CLIP.
    from .structural import full
    dn = dimension_numbers
    aval = operand.aval
    scatter_dn = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map, operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)
    scatter_mode = GatherScatterMode.CLIP if mode == GatherScatterMode.PROMISE_IN_BOUNDS else mode
    zeros = full(aval.shape, 0, aval.dtype)
    t = scatter_add_p.bind(zeros, indices, ct, dimension_numbers=scatter_dn, indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=scatter_mode)
    return [t, None]


ad.jvp_rules[gather_p] = _gather_jvp
ad.transpose_rules[gather_p] = _gather_transpose


def _gather_batch_rule(vals, dims, *, dimension_numbers, slice_sizes, unique_indices, indices_are_sorted, mode,
                       fill_value):
    # The batch becomes one more dimension of the gather itself, left where the operand or the
    # indices hold it (no transpose of a possibly large operand): batched operand only -> one more
    # full-size window dimension; batched indices only -> one more index batch dimension; both ->
    # a pair of batching dimensions (example b reads only from operand example b). The index
    # vector never gets a batch component, so `mode` clamps / fills exactly as per example.
    operand, indices = vals
    op_bdim, idx_bdim = dims
    dn = dimension_numbers
    size = batching.batch_size(vals, dims)
    params = dict(unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, mode=mode,
                  fill_value=fill_value)
    if idx_bdim is None:
        window_dims = [d for d in range(len(slice_sizes))
                       if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
        out_bdim = _position_after(dn.offset_dims, sum(d < op_bdim for d in window_dims))
        new_dn = GatherDimensionNumbers(
            offset_dims=tuple(sorted(_shift(dn.offset_dims, out_bdim) + (out_bdim,))),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims, op_bdim),
            start_index_map=_shift(dn.start_index_map, op_bdim),
            operand_batching_dims=_shift(dn.operand_batching_dims, op_bdim),
            start_indices_batching_dims=dn.start_indices_batching_dims)
        sizes = slice_sizes[:op_bdim] + (size,) + slice_sizes[op_bdim:]
        return gather_p.bind(operand, indices, dimension_numbers=new_dn, slice_sizes=sizes, **params), out_bdim
    indices, idx_bdim = _move_index_bdim(indices, idx_bdim)
    out_rank = len(dn.offset_dims) + aval_of(indices).ndim - 2
    out_bdim = _position_after([i for i in range(out_rank) if i not in dn.offset_dims], idx_bdim)
    offset_dims = _shift(dn.offset_dims, out_bdim)
    start_indices_batching_dims = _shift(dn.start_indices_batching_dims, idx_bdim)
    if op_bdim is None:
        # examples may read the same operand element, and the flattened indices are not sorted
        new_dn = dn._replace(offset_dims=offset_dims, start_indices_batching_dims=start_indices_batching_dims)
        params.update(unique_indices=False, indices_are_sorted=False)
        return gather_p.bind(operand, indices, dimension_numbers=new_dn, slice_sizes=slice_sizes, **params), out_bdim
    # batching dims pair up by position and the operand's must stay sorted: insert the new pair there
    j = sum(d < op_bdim for d in dn.operand_batching_dims)
    operand_batching_dims = _shift(dn.operand_batching_dims, op_bdim)
    new_dn = GatherDimensionNumbers(
        offset_dims=offset_dims,
        collapsed_slice_dims=_shift(dn.collapsed_slice_dims, op_bdim),
        start_index_map=_shift(dn.start_index_map, op_bdim),
        operand_batching_dims=operand_batching_dims[:j] + (op_bdim,) + operand_batching_dims[j:],
        start_indices_batching_dims=start_indices_batching_dims[:j] + (idx_bdim,) + start_indices_batching_dims[j:])
    # a batching dimension has slice size 1 (0 for an empty batch, which has no element to read)
    sizes = slice_sizes[:op_bdim] + (min(size, 1),) + slice_sizes[op_bdim:]
    params.update(indices_are_sorted=False)
    return gather_p.bind(operand, indices, dimension_numbers=new_dn, slice_sizes=sizes, **params), out_bdim


batching.batching_rules[gather_p] = _gather_batch_rule


# ----- scatter family ------------------------------------------------------------------------
# One primitive per combiner (scatter, scatter-add, -mul, -min, -max), sharing the shape rule and
# the lowering; they differ only in the update region's body.

def _scatter_shape_rule(operand, indices, updates, *, dimension_numbers, name, **_):
    dn = dimension_numbers
    op = name
    if indices.ndim < 1:
        raise TypeError(f"{op}: scatter_indices must have rank >= 1 (the last dimension holds the index "
                        f"vectors), got shape {indices.shape}.")
    _check_dims(op, "update_window_dims", dn.update_window_dims, updates.ndim, "updates rank")
    _check_sorted(op, "update_window_dims", dn.update_window_dims)
    _check_dims(op, "inserted_window_dims", dn.inserted_window_dims, operand.ndim, "operand rank")
    _check_sorted(op, "inserted_window_dims", dn.inserted_window_dims)
    _check_dims(op, "operand_batching_dims", dn.operand_batching_dims, operand.ndim, "operand rank")
    _check_sorted(op, "operand_batching_dims", dn.operand_batching_dims)
    _check_dims(op, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims, operand.ndim, "operand rank")
    _check_dims(op, "scatter_indices_batching_dims", dn.scatter_indices_batching_dims, indices.ndim - 1,
                "scatter_indices rank without the index vector dimension")
    if set(dn.inserted_window_dims) & set(dn.operand_batching_dims):
        raise TypeError(f"{op}: inserted_window_dims {dn.inserted_window_dims} and operand_batching_dims "
                        f"{dn.operand_batching_dims} must be disjoint.")
    if set(dn.scatter_dims_to_operand_dims) & set(dn.operand_batching_dims):
        raise TypeError(f"{op}: scatter_dims_to_operand_dims {dn.scatter_dims_to_operand_dims} and "
                        f"operand_batching_dims {dn.operand_batching_dims} must be disjoint.")
    if len(dn.operand_batching_dims) != len(dn.scatter_indices_batching_dims):
        raise TypeError(f"{op}: operand_batching_dims {dn.operand_batching_dims} and scatter_indices_batching_dims "
                        f"{dn.scatter_indices_batching_dims} must have the same length.")
    for od, sd in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, strict=True):
        if operand.shape[od] != indices.shape[sd]:
            raise TypeError(f"{op}: operand batching dimension {od} (size {operand.shape[od]}) and scatter_indices "
                            f"batching dimension {sd} (size {indices.shape[sd]}) must have the same size.")
    if len(dn.scatter_dims_to_operand_dims) != indices.shape[-1]:
        raise TypeError(f"{op}: scatter_dims_to_operand_dims must have one entry per index vector component; got "
                        f"scatter_dims_to_operand_dims={dn.scatter_dims_to_operand_dims} for scatter_indices of "
                        f"shape {indices.shape} (index vectors of size {indices.shape[-1]}).")
    n_window = len(dn.update_window_dims) + len(dn.inserted_window_dims) + len(dn.operand_batching_dims)
    if n_window != operand.ndim:
        raise TypeError(f"{op}: update_window_dims, inserted_window_dims and operand_batching_dims must together "
                        f"have one entry per operand dimension; got update_window_dims={dn.update_window_dims}, "
                        f"inserted_window_dims={dn.inserted_window_dims}, operand_batching_dims="
                        f"{dn.operand_batching_dims} for operand shape {operand.shape}.")
    if updates.ndim != len(dn.update_window_dims) + indices.ndim - 1:
        raise TypeError(f"{op}: updates must have rank len(update_window_dims) + scatter_indices rank - 1 = "
                        f"{len(dn.update_window_dims) + indices.ndim - 1}, got updates of shape {updates.shape}.")
    scatter_sizes = tuple(d for i, d in enumerate(updates.shape) if i not in dn.update_window_dims)
    if scatter_sizes != indices.shape[:-1]:
        raise TypeError(f"{op}: the scatter dimensions of updates {scatter_sizes} must equal the batch shape of "
                        f"scatter_indices {indices.shape[:-1]} (updates shape {updates.shape}, update_window_dims="
                        f"{dn.update_window_dims}).")
    window_operand_dims = [i for i in range(operand.ndim)
                           if i not in dn.inserted_window_dims and i not in dn.operand_batching_dims]
    for ud, od in zip(dn.update_window_dims, window_operand_dims, strict=True):
        if updates.shape[ud] > operand.shape[od]:
            raise TypeError(f"{op}: updates window dimension {ud} (size {updates.shape[ud]}) must not exceed "
                            f"operand dimension {od} (size {operand.shape[od]}); updates shape {updates.shape}, "
                            f"operand shape {operand.shape}.")
    return operand.shape


def _scatter_dtype_rule(operand, indices, updates, *, name, **_):
    check_dtype_accepted(name, operand.dtype, NUMBER if name == "scatter_sub" else ANY)
    _check_index_dtype(name, indices)
    if operand.dtype != updates.dtype:
        raise TypeError(f"{name}: operand and updates must have the same dtype, got "
                        f"{dtypes.short_name(operand.dtype)} and {dtypes.short_name(updates.dtype)}.")
    return operand.dtype


def _scatter_window_sizes(operand_aval, updates_aval, dn):
    """Each operand dimension's window size in the scatter (1 for inserted and batching dims)."""
    sizes = [1] * operand_aval.ndim
    window_dims = [i for i in range(operand_aval.ndim)
                   if i not in dn.inserted_window_dims and i not in dn.operand_batching_dims]
    for od, ud in zip(window_dims, dn.update_window_dims, strict=True):
        sizes[od] = updates_aval.shape[ud]
    return sizes


def _scatter_attrs(dn, indices_aval, indices_are_sorted, unique_indices):
    fields = [f"update_window_dims = {int_list(dn.update_window_dims)}",
              f"inserted_window_dims = {int_list(dn.inserted_window_dims)}"]
    if dn.operand_batching_dims:
        fields += [f"input_batching_dims = {int_list(dn.operand_batching_dims)}",
                   f"scatter_indices_batching_dims = {int_list(dn.scatter_indices_batching_dims)}"]
    fields += [f"scatter_dims_to_operand_dims = {int_list(dn.scatter_dims_to_operand_dims)}",
               f"index_vector_dim = {indices_aval.ndim - 1}"]
    return {"scatter_dimension_numbers": f"#stablehlo.scatter<{', '.join(fields)}>",
            "indices_are_sorted": "true" if indices_are_sorted else "false",
            "unique_indices": "true" if unique_indices else "false"}


# combiner name -> (StableHLO op for numbers, op for bools); None means "take the update"
_COMBINERS = {"scatter": (None, None), "scatter_add": ("stablehlo.add", "stablehlo.or"),
              "scatter_sub": ("stablehlo.subtract", None),
              "scatter_mul": ("stablehlo.multiply", "stablehlo.and"),
              "scatter_min": ("stablehlo.minimum", "stablehlo.and"),
              "scatter_max": ("stablehlo.maximum", "stablehlo.or")}


def _scatter_lowering(ctx, operand, indices, updates, *, dimension_numbers, indices_are_sorted,
                      unique_indices, mode, name, update_jaxpr=None):
    b = ctx.b
    op_aval, idx_aval, upd_aval = ctx.avals_in
    dn = dimension_numbers
    if mode == GatherScatterMode.CLIP:
        windows = _scatter_window_sizes(op_aval, upd_aval, dn)
        bounds = _index_bounds(op_aval.shape, dn.scatter_dims_to_operand_dims, windows, idx_aval.dtype)
        indices = _clamp_indices(b, indices, idx_aval, bounds)
    # FILL_OR_DROP and PROMISE_IN_BOUNDS: XLA skips a window that is not wholly in bounds
    scalar = ShapedArray((), op_aval.dtype)
    combine = _COMBINERS[name][1 if op_aval.dtype == dtypes.bool_ else 0]

    def body(rb, old, new):
        if update_jaxpr is not None:  # scatter_apply: the function of the old value
            return lowering.lower_jaxpr_into(rb, update_jaxpr.jaxpr, [old])
        return new if combine is None else rb.op(combine, [old, new], [scalar])

    region = b.region([scalar, scalar], body)
    return b.op("stablehlo.scatter", [operand, indices, updates], [ctx.avals_out[0]],
                _scatter_attrs(dn, idx_aval, indices_are_sorted, unique_indices), regions=[region])


def _scatter_primitive(name):
    def shape_rule(*avals, **params):
        return _scatter_shape_rule(*avals, name=name, **params)

    def dtype_rule(*avals, **params):
        return _scatter_dtype_rule(*avals, name=name, **params)

    prim = standard_primitive(name, shape_rule, dtype_rule, lambda operand, *_, **__: operand.weak_type)

    def rule(ctx, *args, **params):
        return _scatter_lowering(ctx, *args, name=name, **params)

    lowering.register(prim, rule)
    return prim


def _gather_scattered(x, indices, updates_aval, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
    """The windows of the operand-shaped `x` that a scatter with these parameters writes, shaped like
    its updates; zero for windows the scatter drops (the inverse of a scatter, for its rules)."""
    dn = dimension_numbers
    gather_dn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims, operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)
    sizes = tuple(_scatter_window_sizes(aval_of(x), updates_aval, dn))
    # a scatter clamps only in CLIP mode; otherwise XLA skips a window that is not wholly in bounds
    clip = mode == GatherScatterMode.CLIP
    return gather_p.bind(x, indices, dimension_numbers=gather_dn, slice_sizes=sizes, unique_indices=unique_indices,
                         indices_are_sorted=indices_are_sorted,
                         mode=GatherScatterMode.CLIP if clip else GatherScatterMode.FILL_OR_DROP,
                         fill_value=None if clip else 0)


def _scatter_zero_tangent(out):
    return ad.Zero(ad.tangent_aval(aval_of(out)))


def _scatter_bind(prim, operand, scatter_indices, updates, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, **extra):
    dn = ScatterDimensionNumbers(*(_ints(d) for d in dimension_numbers))
    return prim.bind(operand, scatter_indices, updates, dimension_numbers=dn,
                     indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
                     mode=GatherScatterMode.from_any(mode), **extra)


def _scatter_batch_rule(prim):
    """The batching rule of a scatter-family primitive `prim` (they differ only in the combiner).

    The operand always carries the batch (broadcast when only the indices or the updates do: each
    example writes into its own copy) and keeps it where it is. Unbatched indices: the batch is one
    more full-size window dimension of the updates. Batched indices: a pair of batching dimensions
    (example b writes only into operand example b). No index vector gets a batch component, so
    `mode` clamps or drops exactly as per example, and unique per-example indices stay unique.
    """
    def rule(vals, dims, *, dimension_numbers, indices_are_sorted, unique_indices, mode, **extra):
        operand, indices, updates = vals
        op_bdim, idx_bdim, upd_bdim = dims
        dn = dimension_numbers
        size = batching.batch_size(vals, dims)
        if op_bdim is None:
            operand, op_bdim = batching.broadcast_batch(operand, size, 0), 0
        op_rank = aval_of(operand).ndim - 1
        upd_rank = aval_of(updates).ndim - (upd_bdim is not None)
        if idx_bdim is None:
            window_dims = [d for d in range(op_rank)
                           if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
            upd_dst = _position_after(dn.update_window_dims, sum(d < op_bdim for d in window_dims))
            new_dn = ScatterDimensionNumbers(
                update_window_dims=tuple(sorted(_shift(dn.update_window_dims, upd_dst) + (upd_dst,))),
                inserted_window_dims=_shift(dn.inserted_window_dims, op_bdim),
                scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims, op_bdim),
                operand_batching_dims=_shift(dn.operand_batching_dims, op_bdim),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
        else:
            indices, idx_bdim = _move_index_bdim(indices, idx_bdim)
            upd_dst = _position_after([i for i in range(upd_rank) if i not in dn.update_window_dims], idx_bdim)
            j = sum(d < op_bdim for d in dn.operand_batching_dims)  # the operand's must stay sorted
            operand_batching_dims = _shift(dn.operand_batching_dims, op_bdim)
            indices_batching_dims = _shift(dn.scatter_indices_batching_dims, idx_bdim)
            new_dn = ScatterDimensionNumbers(
                update_window_dims=_shift(dn.update_window_dims, upd_dst),
                inserted_window_dims=_shift(dn.inserted_window_dims, op_bdim),
                scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims, op_bdim),
                operand_batching_dims=operand_batching_dims[:j] + (op_bdim,) + operand_batching_dims[j:],
                scatter_indices_batching_dims=indices_batching_dims[:j] + (idx_bdim,) + indices_batching_dims[j:])
            indices_are_sorted = False  # the flattened batched indices are not sorted
        updates = batching.move_bdim(updates, upd_bdim, upd_dst, size)
        out = prim.bind(operand, indices, updates, dimension_numbers=new_dn, indices_are_sorted=indices_are_sorted,
                        unique_indices=unique_indices, mode=mode, **extra)
        return out, op_bdim
    return rule


def scatter(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
            unique_indices=False, mode=None):
    """Write windows of `updates` into `operand` at `scatter_indices` (XLA's Scatter, replacing).

    Where windows overlap, which update wins is unspecified. `mode=None` is FILL_OR_DROP: windows
    that are not wholly in bounds are skipped; 'clip' clamps the start indices instead.

    Example: rows 2 and 0 of a (3, 4) matrix `x` set from a (2, 4) array `u` are
    `lax.scatter(x, jnp.array([[2], [0]]), u, dn)` with `dn = lax.ScatterDimensionNumbers(
    update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))`.
    """
    return _scatter_bind(scatter_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


scatter_p = _scatter_primitive("scatter")


def _scatter_jvp(primals, tangents, **params):
    # With unique indices, scatter is linear in (operand, updates) jointly. Otherwise, where indices
    # repeat, XLA picks one winning update, which the tangent must follow. As JAX does: scatter an id
    # per update element, gather the ids back to learn which update elements won, then rebuild the
    # output (and its tangent) as a scatter_add of the masked operand and the masked updates, so the
    # output and its tangent agree on the winners.
    from .elementwise import add, eq, select_n
    from .structural import broadcast_in_dim, full, iota, reshape
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    t_operand, t_updates = ad.instantiate_zeros(t_operand), ad.instantiate_zeros(t_updates)
    if params["unique_indices"]:
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, scatter_p.bind(t_operand, indices, t_updates, **params)
    dn = params["dimension_numbers"]
    op_aval, idx_aval, upd_aval = aval_of(operand), aval_of(indices), aval_of(updates)
    batch_shape = idx_aval.shape[:-1]
    ids = add(reshape(iota(dtypes.int32, math.prod(batch_shape)), batch_shape), np.int32(1))
    scatter_dims = tuple(d for d in range(upd_aval.ndim) if d not in dn.update_window_dims)
    update_ids = broadcast_in_dim(ids, upd_aval.shape, scatter_dims)
    scattered_ids = scatter_p.bind(full(op_aval.shape, 0, dtypes.int32), indices, update_ids, **params)
    gathered_ids = _gather_scattered(scattered_ids, indices, upd_aval, **params)
    operand_kept = eq(scattered_ids, np.int32(0))
    update_won = eq(update_ids, gathered_ids)

    def rebuild(x, u):
        x = select_n(operand_kept, full(op_aval.shape, 0, aval_of(x).dtype), x)
        u = select_n(update_won, full(upd_aval.shape, 0, aval_of(u).dtype), u)
        return scatter_add_p.bind(x, indices, u, **params)

    return rebuild(operand, updates), rebuild(t_operand, t_updates)


def _scatter_transpose(ct, operand, indices, updates, **params):
    from .structural import full
    if not params["unique_indices"]:
        raise NotImplementedError("scatter transpose is only implemented where unique_indices=True (the jvp "
                                  "of a scatter without it is a scatter_add, which transposes).")
    upd_aval = updates.aval if ad.is_undefined(updates) else aval_of(updates)
    t_operand = t_updates = None
    if ad.is_undefined(operand):  # overwritten elements get no cotangent
        t_operand = scatter_p.bind(ct, indices, full(upd_aval.shape, 0, upd_aval.dtype), **params)
    if ad.is_undefined(updates):
        t_updates = _gather_scattered(ct, indices, upd_aval, **params)
    return [t_operand, None, t_updates]


ad.jvp_rules[scatter_p] = _scatter_jvp
ad.transpose_rules[scatter_p] = _scatter_transpose
batching.batching_rules[scatter_p] = _scatter_batch_rule(scatter_p)


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """As `scatter`, but adds the updates; repeated indices accumulate (like `np.add.at`).

    Example: `lax.scatter_add(jnp.zeros(3), jnp.array([[1], [1]]), jnp.ones(2), dn)` is
    `[0., 2., 0.]` with `dn = ScatterDimensionNumbers((), (0,), (0,))`.
    """
    return _scatter_bind(scatter_add_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


scatter_add_p = _scatter_primitive("scatter_add")


def _scatter_add_jvp(primals, tangents, **params):
    # linear in (operand, updates) jointly; the integer indices carry no tangent
    operand, indices, updates = primals
    out = scatter_add_p.bind(operand, indices, updates, **params)
    t_operand, t_updates = ad.instantiate_zeros(tangents[0]), ad.instantiate_zeros(tangents[2])
    return out, scatter_add_p.bind(t_operand, indices, t_updates, **params)


def _scatter_add_transpose(ct, operand, indices, updates, **params):
    t_operand = ct if ad.is_undefined(operand) else None
    t_updates = _gather_scattered(ct, indices, updates.aval, **params) if ad.is_undefined(updates) else None
    return [t_operand, None, t_updates]


ad.jvp_rules[scatter_add_p] = _scatter_add_jvp
ad.transpose_rules[scatter_add_p] = _scatter_add_transpose
batching.batching_rules[scatter_add_p] = _scatter_batch_rule(scatter_add_p)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """As `scatter_add`, but subtracts the updates; repeated indices accumulate.

    >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> lax.scatter_sub(jnp.zeros(3), jnp.array([[1], [1]]), jnp.ones(2), dn).tolist()
    [0.0, -2.0, 0.0]
    """
    return _scatter_bind(scatter_sub_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


scatter_sub_p = _scatter_primitive("scatter_sub")


def _scatter_sub_jvp(primals, tangents, **params):
    # linear in (operand, updates) jointly, as scatter_add
    operand, indices, updates = primals
    out = scatter_sub_p.bind(operand, indices, updates, **params)
    t_operand, t_updates = ad.instantiate_zeros(tangents[0]), ad.instantiate_zeros(tangents[2])
    return out, scatter_sub_p.bind(t_operand, indices, t_updates, **params)


def _scatter_sub_transpose(ct, operand, indices, updates, **params):
    from .elementwise import neg
    t_operand = ct if ad.is_undefined(operand) else None
    t_updates = (neg(_gather_scattered(ct, indices, updates.aval, **params)) if ad.is_undefined(updates)
                 else None)
    return [t_operand, None, t_updates]


ad.jvp_rules[scatter_sub_p] = _scatter_sub_jvp
ad.transpose_rules[scatter_sub_p] = _scatter_sub_transpose
batching.batching_rules[scatter_sub_p] = _scatter_batch_rule(scatter_sub_p)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """As `scatter`, but multiplies by the updates; repeated indices accumulate.

    Example: `lax.scatter_mul(jnp.full(3, 2.), jnp.array([[0]]), jnp.array([5.]), dn)` is
    `[10., 2., 2.]` with `dn = ScatterDimensionNumbers((), (0,), (0,))`.
    """
    return _scatter_bind(scatter_mul_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


scatter_mul_p = _scatter_primitive("scatter_mul")


def _scatter_mul_jvp(primals, tangents, **params):
    # Linear in the operand (each element is multiplied by the updates landing on it). In the updates
    # only with unique indices, as in JAX: then out = x * u at each written element.
    from .elementwise import mul
    from .structural import full
    operand, indices, updates = primals
    t_operand, _, t_updates = tangents
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    t_out = _scatter_zero_tangent(out)
    if type(t_operand) is not ad.Zero:
        t_out = scatter_mul_p.bind(t_operand, indices, updates, **params)
    if type(t_updates) is not ad.Zero:
        if not params["unique_indices"]:
            raise NotImplementedError("scatter_mul gradients with respect to the updates are only implemented "
                                      "if unique_indices=True.")
        op_aval = aval_of(operand)
        spread = scatter_add_p.bind(full(op_aval.shape, 0, op_aval.dtype), indices, t_updates, **params)
        t_out = ad.add_tangents(t_out, mul(operand, spread))
    return out, t_out


def _scatter_mul_transpose(ct, operand, indices, updates, **params):
    if ad.is_undefined(updates):
        raise NotImplementedError("scatter_mul is linear only in its operand; it cannot be transposed in its "
                                  "updates.")
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


ad.jvp_rules[scatter_mul_p] = _scatter_mul_jvp
ad.transpose_rules[scatter_mul_p] = _scatter_mul_transpose
batching.batching_rules[scatter_mul_p] = _scatter_batch_rule(scatter_mul_p)


def _scatter_extremal_jvp(prim):
    """The jvp of scatter_min / scatter_max: each output element takes the tangent of whichever of
    the operand and the updates landing on it attains the extremum, averaged over ties (as JAX)."""
    def jvp(primals, tangents, **params):
        from .elementwise import div, eq, mul, select_n
        from .structural import convert_element_type, full
        operand, indices, updates = primals
        out = prim.bind(operand, indices, updates, **params)
        op_aval, upd_aval = aval_of(operand), aval_of(updates)
        dtype = op_aval.dtype
        operand_hit = eq(operand, out)
        update_hit = eq(updates, _gather_scattered(out, indices, upd_aval, **params))
        count = scatter_add_p.bind(convert_element_type(operand_hit, dtype), indices,
                                   convert_element_type(update_hit, dtype), **params)
        t_operand = select_n(operand_hit, full(op_aval.shape, 0, dtype), ad.instantiate_zeros(tangents[0]))
        t_updates = select_n(update_hit, full(upd_aval.shape, 0, dtype), ad.instantiate_zeros(tangents[2]))
        t_sum = scatter_add_p.bind(t_operand, indices, t_updates, **params)
        return out, mul(t_sum, div(full(op_aval.shape, 1, dtype), count))
    return jvp


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """As `scatter`, but keeps the minimum of the operand and every update at an index.

    Example: `lax.scatter_min(jnp.zeros(2), jnp.array([[1]]), jnp.array([-3.]), dn)` is `[0., -3.]`
    with `dn = ScatterDimensionNumbers((), (0,), (0,))`.
    """
    return _scatter_bind(scatter_min_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


scatter_min_p = _scatter_primitive("scatter_min")
ad.jvp_rules[scatter_min_p] = _scatter_extremal_jvp(scatter_min_p)
batching.batching_rules[scatter_min_p] = _scatter_batch_rule(scatter_min_p)


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
                unique_indices=False, mode=None):
    """As `scatter`, but keeps the maximum of the operand and every update at an index.

    Example: `lax.scatter_max(jnp.zeros(2), jnp.array([[1]]), jnp.array([3.]), dn)` is `[0., 3.]`
    with `dn = ScatterDimensionNumbers((), (0,), (0,))`.
    """
    return _scatter_bind(scatter_max_p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)


scatter_max_p = _scatter_primitive("scatter_max")
ad.jvp_rules[scatter_max_p] = _scatter_extremal_jvp(scatter_max_p)
batching.batching_rules[scatter_max_p] = _scatter_batch_rule(scatter_max_p)


# ----- scatter_apply: a function applied where a scatter would write ----------------------------

def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(), indices_are_sorted=False,
                  unique_indices=False, mode=None):
    """`operand` with the elements a scatter of updates of `update_shape` would write replaced by
    `func` of themselves (`func` maps a scalar of operand's dtype to one); an element written by k
    windows gets `func` applied k times. As in JAX there is no derivative.

    >>> dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    >>> lax.scatter_apply(jnp.ones(3), jnp.array([[0], [2], [2]]), lambda v: v * 10, dn, update_shape=(3,)).tolist()
    [10.0, 1.0, 100.0]
    """
    op_aval = aval_of(operand)
    placeholder = _zeros(tuple(int(d) for d in update_shape), op_aval.dtype)
    return _scatter_bind(scatter_apply_p, operand, scatter_indices, placeholder, dimension_numbers,
                         indices_are_sorted, unique_indices, mode, update_jaxpr=_scalar_jaxpr(func, op_aval.dtype))


def _zeros(shape, dtype):
    from .structural import full
    return full(shape, 0, dtype)


_scalar_jaxprs = weakref.WeakKeyDictionary()  # func -> {dtype: ClosedJaxpr}, so a reused func compiles once


def _scalar_jaxpr(func, dtype):
    """`func` traced on one scalar of `dtype`, as a parameter (cached per function and dtype)."""
    from ..interpreters.staging import trace_to_jaxpr
    try:
        per_func = _scalar_jaxprs.setdefault(func, {})
    except TypeError:  # not weakly referenceable: trace each time
        per_func = {}
    closed = per_func.get(np.dtype(dtype))
    if closed is None:
        closed = trace_to_jaxpr(lambda v: [func(v)], [ShapedArray((), dtype)], fun_name="scatter_apply func")
        out = closed.out_avals[0] if closed.out_avals else None
        if out is None or out.shape != () or out.dtype != np.dtype(dtype):
            raise TypeError(f"scatter_apply: func must map a {np.dtype(dtype).name} scalar to one, got "
                            f"{'nothing' if out is None else np.dtype(out.dtype).name + str(list(out.shape))}.")
        if closed.jaxpr.constvars:
            raise TypeError("scatter_apply: func must not close over arrays (it runs inside XLA's scatter "
                            "combiner); write the array's effect with lax.scatter / x.at[...] instead.")
        per_func[np.dtype(dtype)] = closed
    return closed


def _scatter_apply_shape_rule(operand, indices, updates, *, update_jaxpr, **params):
    return _scatter_shape_rule(operand, indices, updates, name="scatter_apply", **params)


def _scatter_apply_dtype_rule(operand, indices, updates, *, update_jaxpr, **params):
    return _scatter_dtype_rule(operand, indices, updates, name="scatter_apply", **params)


def _scatter_apply_jvp(primals, tangents, **params):
    if type(tangents[0]) is not ad.Zero:
        raise NotImplementedError("scatter_apply has no derivative (as in JAX). Differentiate "
                                  "x.at[idx].set(f(x[idx])) instead, or jnp.where over a mask.")
    out = scatter_apply_p.bind(*primals, **params)
    return out, ad.Zero(ad.tangent_aval(aval_of(out)))


scatter_apply_p = standard_primitive("scatter_apply", _scatter_apply_shape_rule, _scatter_apply_dtype_rule,
                                     lambda operand, *_, **__: operand.weak_type)
lowering.register(scatter_apply_p, lambda ctx, *args, **params: _scatter_lowering(ctx, *args, name="scatter",
                                                                                 **params))
ad.jvp_rules[scatter_apply_p] = _scatter_apply_jvp
batching.batching_rules[scatter_apply_p] = _scatter_batch_rule(scatter_apply_p)


# ----- index_take: a gather spelled with one index vector per axis -----------------------------

def index_take(src, idxs, axes):
    """`src` at the points whose coordinates along `axes` are given by the 1-D arrays `idxs`
    (one per axis, all of length N); the result has shape (N,) + the other dimensions of `src`.
    Out-of-bounds indices are clamped.

    Example: `lax.index_take(x, (jnp.array([0, 2]), jnp.array([1, 1])), (0, 1))` is
    `[x[0, 1], x[2, 1]]` for a 2-D x.
    """
    from .structural import concatenate, reshape
    axes = _ints(axes)
    idxs = tuple(idxs)
    if len(idxs) != len(axes):
        raise TypeError(f"index_take: needs one index array per axis, got {len(idxs)} index arrays for axes {axes}.")
    avals = [aval_of(i) for i in idxs]
    if any(a.ndim != 1 for a in avals) or len({a.shape for a in avals}) > 1:
        raise TypeError(f"index_take: index arrays must be 1-D of one length, got shapes "
                        f"{[a.shape for a in avals]}.")
    shape = aval_of(src).shape
    n = avals[0].shape[0] if avals else 1
    indices = concatenate([reshape(i, (n, 1)) for i in idxs], 1)
    rest = [d for d in range(len(shape)) if d not in axes]
    dn = GatherDimensionNumbers(offset_dims=tuple(range(1, 1 + len(rest))), collapsed_slice_dims=tuple(sorted(axes)),
                                start_index_map=axes)
    sizes = tuple(1 if d in axes else shape[d] for d in range(len(shape)))
    return gather(src, indices, dn, sizes, mode=GatherScatterMode.CLIP)

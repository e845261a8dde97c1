"""Structural primitives: dtype conversion, broadcasting, reshaping, slicing and friends.

Each primitive is one block (wrapper, shape and dtype rule, lowering, registration). Wrappers take
arrays positionally and static parameters as keywords, as `jax.lax` does; the derived helpers at
the end (`full`, `slice_in_dim`, `dynamic_index_in_dim`, ...) only call the wrappers.
"""
import math

import numpy as np

from .. import dtypes
from ..array import Array, copy_array, new_scalar_array, scalar_array
from ..avals import ShapedArray
from ..config import config
from ..trace import EvalTrace, Primitive
from ..trace import _state as _trace_state
from ..interpreters import ad, batching, lowering
from ..interpreters.lowering import i64_array
from ._base import (ANY, NUMBER, aval_of, check_dtype_accepted, is_key_array, deflinear, defnondiff, defvectorized,
                    same_dtypes_rule, standard_primitive)

__all__ = ["convert_element_type", "broadcast_in_dim", "reshape", "broadcast", "broadcast_to_rank",
           "bitcast_convert_type", "iota", "broadcasted_iota", "squeeze", "expand_dims", "transpose", "rev",
           "pad", "concatenate", "slice", "dynamic_slice", "dynamic_update_slice", "stop_gradient",
           "full", "full_like", "zeros_like_array", "collapse", "slice_in_dim", "index_in_dim",
           "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim"]


def _operand_weak(operand, *_, **__):
    return operand.weak_type


def _operand_dtype(operand, *_, **__):
    return operand.dtype


def _python_scalar(x):
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


# ----- convert_element_type ------------------------------------------------------------------

def convert_element_type(operand, new_dtype, weak_type=False):
    """Convert `operand` to `new_dtype` elementwise (C-style casts; float -> int truncates).

    Example: `lax.convert_element_type(jnp.array([1.7, -1.7]), jnp.int32)` is `[1, -1]`.
    """
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    aval = aval_of(operand)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return operand
    return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=bool(weak_type))


def _convert_element_type_abstract_eval(operand, *, new_dtype, weak_type):
    return ShapedArray(operand.shape, new_dtype, weak_type)


def _convert_element_type_lowering(ctx, x, *, new_dtype, weak_type):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    if aval_in.dtype == aval_out.dtype:
        return x
    b = ctx.b
    if dtypes.is_complex(aval_in.dtype) and not dtypes.is_complex(new_dtype):
        x = b.op("stablehlo.real", [x], [aval_in.update(dtype=dtypes.finfo(aval_in.dtype).dtype)])
        aval_in = aval_in.update(dtype=dtypes.finfo(aval_in.dtype).dtype)
    if new_dtype == dtypes.bool_ and aval_in.dtype != dtypes.bool_:
        zero = lowering.full_like(b, 0, aval_in)
        return lowering.compare(b, x, zero, "NE", aval_in)
    return b.op("stablehlo.convert", [x], [aval_out])


convert_element_type_p = standard_primitive("convert_element_type", None, None)
convert_element_type_p.def_abstract_eval(_convert_element_type_abstract_eval)
lowering.register(convert_element_type_p, _convert_element_type_lowering)


def _convert_element_type_jvp(primals, tangents, *, new_dtype, weak_type):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    if not dtypes.is_inexact(new_dtype) or not dtypes.is_inexact(aval_of(x).dtype):
        return out, ad.Zero(ad.tangent_aval(aval_of(out)))  # through integers nothing flows
    return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=False)


def _convert_element_type_transpose(ct, operand, *, new_dtype, weak_type):
    return [convert_element_type_p.bind(ct, new_dtype=operand.aval.dtype, weak_type=False)]


ad.jvp_rules[convert_element_type_p] = _convert_element_type_jvp
ad.transpose_rules[convert_element_type_p] = _convert_element_type_transpose
defvectorized(convert_element_type_p)


# ----- broadcast_in_dim ----------------------------------------------------------------------

def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """Broadcast `operand` to `shape`; operand dimension i becomes dimension
    `broadcast_dimensions[i]` of the result (sizes equal, or 1).

    Example: `lax.broadcast_in_dim(jnp.ones(3), (2, 3), (1,))` has shape (2, 3).
    """
    shape = tuple(int(d) for d in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    aval = aval_of(operand)
    if aval.shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=broadcast_dimensions)


def _broadcast_in_dim_shape_rule(operand, *, shape, broadcast_dimensions):
    if operand.ndim != len(broadcast_dimensions):
        raise TypeError("broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; "
                        f"got broadcast_dimensions {broadcast_dimensions} for operand ndim {operand.ndim}.")
    if len(shape) < operand.ndim:
        raise TypeError(f"broadcast_in_dim target broadcast shape must have equal or higher rank to the "
                        f"operand shape; got operand ndim {operand.ndim} and target broadcast ndim {len(shape)}.")
    if any(d < 0 or d >= len(shape) for d in broadcast_dimensions):
        raise TypeError(f"broadcast_in_dim broadcast_dimensions must be in range [0, {len(shape)}); "
                        f"got {broadcast_dimensions}.")
    if any(a >= b for a, b in zip(broadcast_dimensions, broadcast_dimensions[1:])):
        raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing; "
                        f"got broadcast_dimensions {broadcast_dimensions}")
    for i, d in enumerate(broadcast_dimensions):
        if operand.shape[i] != 1 and operand.shape[i] != shape[d]:
            raise TypeError(
                "broadcast_in_dim operand dimension sizes must either be 1, or be equal to their "
                f"corresponding dimensions in the target broadcast shape; got operand of shape "
                f"{operand.shape}, target broadcast shape {shape}, broadcast_dimensions {broadcast_dimensions}")
    return shape


def _broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions):
    return ctx.b.op("stablehlo.broadcast_in_dim", [x], [ctx.avals_out[0]],
                    {"broadcast_dimensions": i64_array(broadcast_dimensions)})


broadcast_in_dim_p = standard_primitive(
    "broadcast_in_dim", _broadcast_in_dim_shape_rule, lambda operand, **_: operand.dtype,
    lambda operand, **_: operand.weak_type)
lowering.register(broadcast_in_dim_p, _broadcast_in_dim_lowering)


def _broadcast_in_dim_transpose(ct, operand, *, shape, broadcast_dimensions):
    # sum over the new dimensions and over operand dimensions of size 1 that were expanded
    from .reductions import reduce_sum
    in_shape = operand.aval.shape
    new_dims = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    expanded = tuple(d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1)
    summed = reduce_sum(ct, tuple(sorted(new_dims + expanded)))
    return [reshape(summed, in_shape)]


deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _broadcast_in_dim_batch_rule(vals, dims, *, shape, broadcast_dimensions):
    # The batch axis goes right after the result dimension of the operand dimension before it, so
    # broadcast_dimensions stays increasing without moving the operand's batch axis.
    (x,), (bdim,) = vals, dims
    size = aval_of(x).shape[bdim]
    out_bdim = broadcast_dimensions[bdim - 1] + 1 if bdim > 0 else 0
    new_dims = (broadcast_dimensions[:bdim] + (out_bdim,)
                + tuple(d + 1 for d in broadcast_dimensions[bdim:]))
    new_shape = shape[:out_bdim] + (size,) + shape[out_bdim:]
    return broadcast_in_dim_p.bind(x, shape=new_shape, broadcast_dimensions=new_dims), out_bdim


batching.batching_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch_rule


def broadcast(operand, sizes):
    """Add leading dimensions of `sizes` to `operand` (like `lax.broadcast`)."""
    aval = aval_of(operand)
    sizes = tuple(sizes)
    n = len(sizes)
    return broadcast_in_dim(operand, sizes + aval.shape, tuple(range(n, n + aval.ndim)))


def broadcast_to_rank(x, rank):
    """Prepend size-1 dimensions until `x` has `rank` dimensions."""
    aval = aval_of(x)
    if aval.ndim >= rank:
        return x
    return reshape(x, (1,) * (rank - aval.ndim) + aval.shape)


# ----- reshape -------------------------------------------------------------------------------

def reshape(operand, new_sizes, dimensions=None):
    """Reshape `operand` to `new_sizes` (row-major); `dimensions` permutes the operand first.

    Example: `lax.reshape(jnp.arange(6), (2, 3))`.
    """
    new_sizes = tuple(int(d) for d in new_sizes)
    aval = aval_of(operand)
    if dimensions is not None and tuple(dimensions) != tuple(range(aval.ndim)):
        from .structural import transpose
        operand = transpose(operand, dimensions)
    if aval.shape == new_sizes:
        return operand
    return reshape_p.bind(operand, new_sizes=new_sizes)


def _reshape_shape_rule(operand, *, new_sizes):
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be non-negative, got {new_sizes}.")
    if int(np.prod(new_sizes)) != operand.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} for shape "
                        f"{operand.shape}.")
    return new_sizes


reshape_p = standard_primitive("reshape", _reshape_shape_rule, lambda operand, **_: operand.dtype,
                               lambda operand, **_: operand.weak_type)
lowering.register(reshape_p, lambda ctx, x, *, new_sizes: ctx.b.op("stablehlo.reshape", [x], [ctx.avals_out[0]]))
deflinear(reshape_p, lambda ct, operand, *, new_sizes: [reshape(ct, operand.aval.shape)])


def _reshape_batch_rule(vals, dims, *, new_sizes):
    # row-major order mixes all dimensions, so each example must be one contiguous block: batch first
    (x,), (bdim,) = vals, dims
    size = aval_of(x).shape[bdim]
    x = batching.moveaxis(x, bdim, 0)
    return reshape_p.bind(x, new_sizes=(size,) + new_sizes), 0


batching.batching_rules[reshape_p] = _reshape_batch_rule


# ----- bitcast_convert_type -----------------------------------------------------------------

def bitcast_convert_type(operand, new_dtype):
    """Reinterpret the bits of `operand` as `new_dtype`. Equal widths keep the shape; a narrower
    `new_dtype` adds a trailing dimension of size `old_bits // new_bits`; a wider one consumes a
    trailing dimension of that size.

    Example: `lax.bitcast_convert_type(jnp.float32(1.0), jnp.int32)` is `1065353216`.
    """
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)


def _bitcast_convert_type_shape_rule(operand, *, new_dtype):
    old_bits, new_bits = operand.dtype.itemsize, np.dtype(new_dtype).itemsize
    if old_bits == new_bits:
        return operand.shape
    if old_bits > new_bits:
        return operand.shape + (old_bits // new_bits,)
    ratio = new_bits // old_bits
    if not operand.shape or operand.shape[-1] != ratio:
        raise TypeError(f"bitcast_convert_type from {dtypes.short_name(operand.dtype)} to "
                        f"{dtypes.short_name(new_dtype)} requires the operand's last dimension to be {ratio}, "
                        f"got shape {operand.shape}.")
    return operand.shape[:-1]


def _bitcast_convert_type_dtype_rule(operand, *, new_dtype):
    for dt in (operand.dtype, new_dtype):
        if dtypes.is_bool(dt):
            raise TypeError("bitcast_convert_type does not accept bool (its bit layout is not defined); "
                            "convert with lax.convert_element_type instead.")
    return new_dtype


bitcast_convert_type_p = standard_primitive("bitcast_convert_type", _bitcast_convert_type_shape_rule,
                                            _bitcast_convert_type_dtype_rule)
lowering.register(bitcast_convert_type_p,
                  lambda ctx, x, *, new_dtype: ctx.b.op("stablehlo.bitcast_convert", [x], [ctx.avals_out[0]]))
defnondiff(bitcast_convert_type_p)  # a bit pattern has no derivative (as in JAX)


def _bitcast_convert_type_batch_rule(vals, dims, *, new_dtype):
    # Elementwise, except that a change of width adds (narrower) or consumes (wider) a trailing
    # dimension. An added one comes after the batch axis wherever it is; a consumed one must not
    # be the batch axis, so then the batch axis moves to the front.
    (x,), (bdim,) = vals, dims
    aval = aval_of(x)
    if np.dtype(new_dtype).itemsize > aval.dtype.itemsize and bdim == aval.ndim - 1:
        x, bdim = batching.moveaxis(x, bdim, 0), 0
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), bdim


batching.batching_rules[bitcast_convert_type_p] = _bitcast_convert_type_batch_rule


# ----- iota ------------------------------------------------------------------------------------

def broadcasted_iota(dtype, shape, dimension):
    """An array of `shape` whose entries count 0, 1, ... along `dimension`.

    Example: `lax.broadcasted_iota(jnp.int32, (2, 3), 1)` is `[[0, 1, 2], [0, 1, 2]]`.
    """
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = tuple(int(d) for d in shape)
    return iota_p.bind(dtype=dtype, shape=shape, dimension=int(dimension))


def iota(dtype, size):
    """The vector `[0, 1, ..., size - 1]` of `dtype`. Example: `lax.iota(jnp.float32, 3)`."""
    return broadcasted_iota(dtype, (int(size),), 0)


def _iota_shape_rule(*, dtype, shape, dimension):
    if any(d < 0 for d in shape):
        raise TypeError(f"iota shape must have non-negative sizes, got {shape}.")
    if not 0 <= dimension < len(shape):
        raise TypeError(f"iota dimension must be in range [0, {len(shape)}), got dimension={dimension} "
                        f"for shape {shape}.")
    return shape


def _iota_dtype_rule(*, dtype, shape, dimension):
    check_dtype_accepted("iota", dtype, NUMBER)
    return dtype


def _iota_lowering(ctx, *, dtype, shape, dimension):
    return ctx.b.op("stablehlo.iota", [], [ctx.avals_out[0]], {"iota_dimension": f"{dimension} : i64"})


iota_p = standard_primitive("iota", _iota_shape_rule, _iota_dtype_rule)
lowering.register(iota_p, _iota_lowering)
defnondiff(iota_p)
# no batching rule: iota has no operands, so under vmap it is never batched (applied directly)


# ----- squeeze / expand_dims ---------------------------------------------------------------

def squeeze(array, dimensions):
    """Remove the size-1 `dimensions` (negative values count from the end) from `array`.

    Example: `lax.squeeze(jnp.ones((1, 3, 1)), (0, 2))` has shape (3,).
    """
    ndim = aval_of(array).ndim
    dims = []
    for d in dimensions:
        d = int(d)
        if not -ndim <= d < ndim:
            raise ValueError(f"squeeze: dimension {d} is out of bounds for an array of rank {ndim}.")
        dims.append(d % ndim)
    dims = tuple(sorted(set(dims)))
    if not dims:
        return array
    return squeeze_p.bind(array, dimensions=dims)


def _squeeze_shape_rule(operand, *, dimensions):
    if any(operand.shape[d] != 1 for d in dimensions):
        raise ValueError("cannot select an axis to squeeze out which has size not equal to one, got "
                         f"shape={operand.shape} and dimensions={dimensions}")
    return tuple(s for i, s in enumerate(operand.shape) if i not in dimensions)


squeeze_p = standard_primitive("squeeze", _squeeze_shape_rule, _operand_dtype, _operand_weak)
lowering.register(squeeze_p, lambda ctx, x, *, dimensions: ctx.b.op("stablehlo.reshape", [x], [ctx.avals_out[0]]))
deflinear(squeeze_p, lambda ct, operand, *, dimensions: [reshape(ct, operand.aval.shape)])


def _squeeze_batch_rule(vals, dims, *, dimensions):
    (x,), (bdim,) = vals, dims
    new_dims = tuple(d + (d >= bdim) for d in dimensions)
    out_bdim = bdim - sum(d < bdim for d in dimensions)
    return squeeze_p.bind(x, dimensions=new_dims), out_bdim


batching.batching_rules[squeeze_p] = _squeeze_batch_rule


def expand_dims(array, dimensions):
    """Insert size-1 dimensions at `dimensions` (positions in the result; negative from its end).

    Example: `lax.expand_dims(jnp.ones(3), (0, 2))` has shape (1, 3, 1).
    """
    aval = aval_of(array)
    out_ndim = aval.ndim + len(dimensions)
    dims = []
    for d in dimensions:
        d = int(d)
        if not -out_ndim <= d < out_ndim:
            raise ValueError(f"expand_dims: dimension {d} is out of bounds for a result of rank {out_ndim}.")
        dims.append(d % out_ndim)
    if len(set(dims)) != len(dims):
        raise ValueError(f"expand_dims: repeated dimension in {tuple(dimensions)}.")
    shape = list(aval.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    kept = tuple(i for i in range(out_ndim) if i not in dims)
    return broadcast_in_dim(array, tuple(shape), kept)


# ----- transpose -------------------------------------------------------------------------------

def transpose(operand, permutation):
    """Permute the dimensions: result dimension i is operand dimension `permutation[i]`.

    Example: `lax.transpose(jnp.ones((2, 3)), (1, 0))` has shape (3, 2).
    """
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(aval_of(operand).ndim)):
        return operand
    return transpose_p.bind(operand, permutation=permutation)


def _transpose_shape_rule(operand, *, permutation):
    if sorted(permutation) != list(range(operand.ndim)):
        raise TypeError("transpose permutation isn't a permutation of operand dimensions, got "
                        f"permutation {permutation} for operand shape {operand.shape}.")
    return tuple(operand.shape[p] for p in permutation)


def _transpose_lowering(ctx, x, *, permutation):
    return ctx.b.op("stablehlo.transpose", [x], [ctx.avals_out[0]], {"permutation": i64_array(permutation)})


transpose_p = standard_primitive("transpose", _transpose_shape_rule, _operand_dtype, _operand_weak)
lowering.register(transpose_p, _transpose_lowering)


def _transpose_transpose(ct, operand, *, permutation):
    return [transpose(ct, tuple(np.argsort(permutation)))]  # the inverse permutation


deflinear(transpose_p, _transpose_transpose)


def _transpose_batch_rule(vals, dims, *, permutation):
    # the batch axis keeps its position in the result; the other axes permute around it
    (x,), (bdim,) = vals, dims
    perm = [p + (p >= bdim) for p in permutation]
    perm.insert(bdim, bdim)
    return transpose_p.bind(x, permutation=tuple(perm)), bdim


batching.batching_rules[transpose_p] = _transpose_batch_rule


# ----- rev -------------------------------------------------------------------------------------

def rev(operand, dimensions):
    """Reverse `operand` along each of `dimensions`. Example: `lax.rev(jnp.arange(3), (0,))`."""
    dimensions = tuple(int(d) for d in dimensions)
    if not dimensions:
        return operand
    return rev_p.bind(operand, dimensions=dimensions)


def _rev_shape_rule(operand, *, dimensions):
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    if any(not 0 <= d < operand.ndim for d in dimensions):
        raise TypeError(f"rev dimensions must all be in range [0, {operand.ndim}) for operand shape "
                        f"{operand.shape}, got dimensions {dimensions}.")
    return operand.shape


def _rev_lowering(ctx, x, *, dimensions):
    return ctx.b.op("stablehlo.reverse", [x], [ctx.avals_out[0]], {"dimensions": i64_array(dimensions)})


rev_p = standard_primitive("rev", _rev_shape_rule, _operand_dtype, _operand_weak)
lowering.register(rev_p, _rev_lowering)
deflinear(rev_p, lambda ct, operand, *, dimensions: [rev(ct, dimensions)])


def _rev_batch_rule(vals, dims, *, dimensions):
    (x,), (bdim,) = vals, dims
    return rev_p.bind(x, dimensions=tuple(d + (d >= bdim) for d in dimensions)), bdim


batching.batching_rules[rev_p] = _rev_batch_rule


# ----- pad -------------------------------------------------------------------------------------

def pad(operand, padding_value, padding_config):
    """Pad `operand` with the scalar `padding_value`; `padding_config` has one `(low, high,
    interior)` per dimension. Negative low/high remove elements; interior pads between elements.

    Example: `lax.pad(jnp.array([1, 2]), 0, [(1, 2, 1)])` is `[0, 1, 0, 2, 0, 0]`.
    """
    if _python_scalar(padding_value):
        padding_value = scalar_array(padding_value, aval_of(operand).dtype, weak_type=aval_of(operand).weak_type)
    padding_config = tuple((int(lo), int(hi), int(interior)) for lo, hi, interior in padding_config)
    return pad_p.bind(operand, padding_value, padding_config=padding_config)


def _pad_shape_rule(operand, padding_value, *, padding_config):
    if padding_value.ndim != 0:
        raise TypeError(f"pad padding_value must be a scalar, got shape {padding_value.shape}.")
    if len(padding_config) != operand.ndim:
        raise TypeError(f"pad: len(padding_config) must equal operand.ndim, got padding_config "
                        f"{padding_config} for operand shape {operand.shape}.")
    if any(interior < 0 for _, _, interior in padding_config):
        raise TypeError(f"pad interior padding must be non-negative, got padding_config {padding_config}.")
    out = tuple(lo + hi + d + max(d - 1, 0) * interior
                for d, (lo, hi, interior) in zip(operand.shape, padding_config, strict=True))
    if any(d < 0 for d in out):
        raise TypeError(f"pad: dimension sizes after padding must be non-negative, got {out} for operand "
                        f"shape {operand.shape} and padding_config {padding_config}.")
    return out


def _pad_lowering(ctx, x, v, *, padding_config):
    lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
    return ctx.b.op("stablehlo.pad", [x, v], [ctx.avals_out[0]],
                    {"edge_padding_low": i64_array(lo), "edge_padding_high": i64_array(hi),
                     "interior_padding": i64_array(interior)})


pad_p = standard_primitive("pad", _pad_shape_rule, lambda x, v, **_: same_dtypes_rule("pad", ANY, x, v),
                           lambda x, v, **_: x.weak_type and v.weak_type)
lowering.register(pad_p, _pad_lowering)


def _pad_transpose(ct, operand, padding_value, *, padding_config):
    # pad is linear in (operand, padding_value) jointly. The operand's cotangent: undo the edge
    # padding (negating the config also restores elements a negative edge cut off, as zeros), then
    # drop the interior padding with a strided slice. Every other element of ct came from the padding
    # value, so its cotangent is sum(ct) - sum(operand's cotangent).
    from .elementwise import sub
    from .reductions import reduce_sum
    aval = operand.aval if ad.is_undefined(operand) else aval_of(operand)
    zero = scalar_array(0, aval_of(ct).dtype, weak_type=False)
    unpadded = pad(ct, zero, [(-lo, -hi, 0) for lo, hi, _ in padding_config])
    t_operand = slice(unpadded, (0,) * aval.ndim, aval_of(unpadded).shape,
                      tuple(interior + 1 for _, _, interior in padding_config))
    t_value = None
    if ad.is_undefined(padding_value):
        everything = tuple(range(aval.ndim))
        t_value = sub(reduce_sum(ct, everything), reduce_sum(t_operand, everything))
    return [t_operand if ad.is_undefined(operand) else None, t_value]


deflinear(pad_p, _pad_transpose)


def _pad_batch_rule(vals, dims, *, padding_config):
    from .elementwise import select_n
    operand, padding_value = vals
    bdim, vdim = dims
    if vdim is None:
        config = list(padding_config)
        config.insert(bdim, (0, 0, 0))
        return pad_p.bind(operand, padding_value, padding_config=tuple(config)), bdim
    # One padding value per example: pad with zeros, then put each example's value wherever the
    # (per-example) mask of operand positions is False.
    size = aval_of(padding_value).shape[vdim]
    dtype = aval_of(padding_value).dtype
    zero = scalar_array(0, dtype, weak_type=False)
    if bdim is None:
        example_shape = aval_of(operand).shape
        padded = batching.broadcast_batch(pad_p.bind(operand, zero, padding_config=padding_config), size, 0)
        bdim = 0
    else:
        example_shape = aval_of(operand).shape[:bdim] + aval_of(operand).shape[bdim + 1:]
        config = list(padding_config)
        config.insert(bdim, (0, 0, 0))
        padded = pad_p.bind(operand, zero, padding_config=tuple(config))
    inside = pad_p.bind(full(example_shape, True, dtypes.bool_), scalar_array(False, dtypes.bool_, weak_type=False),
                        padding_config=padding_config)
    inside = batching.broadcast_batch(inside, size, bdim)
    out_shape = aval_of(padded).shape
    fill = broadcast_in_dim(padding_value, out_shape, (bdim,))
    return select_n(inside, fill, padded), bdim


batching.batching_rules[pad_p] = _pad_batch_rule


# ----- concatenate -----------------------------------------------------------------------------

def concatenate(operands, dimension):
    """Join `operands` (same dtype and rank) along `dimension`.

    Example: `lax.concatenate([jnp.ones(2), jnp.zeros(3)], 0)` has shape (5,).
    """
    operands = list(operands)
    if not operands:
        raise TypeError("concatenate requires a non-empty sequence of arrays.")
    if len(operands) == 1:
        _concatenate_shape_rule(aval_of(operands[0]), dimension=int(dimension))
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


def _concatenate_shape_rule(*operands, dimension):
    shapes = [o.shape for o in operands]
    shapes_str = ", ".join(map(str, shapes))
    if len({len(s) for s in shapes}) != 1:
        raise TypeError(f"Cannot concatenate arrays with different numbers of dimensions: got {shapes_str}.")
    if not 0 <= dimension < len(shapes[0]):
        raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for shapes {shapes_str}.")
    rest = {s[:dimension] + s[dimension + 1:] for s in shapes}
    if len(rest) != 1:
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other than the one "
                        f"being concatenated: concatenating along dimension {dimension} for shapes {shapes_str}.")
    out = list(shapes[0])
    out[dimension] = sum(s[dimension] for s in shapes)
    return tuple(out)


def _concatenate_lowering(ctx, *xs, dimension):
    return ctx.b.op("stablehlo.concatenate", list(xs), [ctx.avals_out[0]], {"dimension": f"{dimension} : i64"})


concatenate_p = standard_primitive("concatenate", _concatenate_shape_rule,
                                   lambda *ops, **_: same_dtypes_rule("concatenate", ANY, *ops),
                                   lambda *ops, **_: all(o.weak_type for o in ops))
lowering.register(concatenate_p, _concatenate_lowering)


def _concatenate_transpose(ct, *operands, dimension):
    ct_shape = aval_of(ct).shape
    cts, start = [], 0
    for x in operands:
        size = (x.aval if ad.is_undefined(x) else aval_of(x)).shape[dimension]
        if ad.is_undefined(x):
            starts, limits = [0] * len(ct_shape), list(ct_shape)
            starts[dimension], limits[dimension] = start, start + size
            cts.append(slice(ct, starts, limits))
        else:
            cts.append(None)
        start += size
    return cts


deflinear(concatenate_p, _concatenate_transpose)


def _concatenate_batch_rule(vals, dims, *, dimension):
    # every operand gets the batch axis where the first batched one has it
    size = batching.batch_size(vals, dims)
    bdim = next(d for d in dims if d is not None)
    operands = [batching.broadcast_batch(x, size, bdim) if d is None else batching.moveaxis(x, d, bdim)
                for x, d in zip(vals, dims, strict=True)]
    return concatenate_p.bind(*operands, dimension=dimension + (dimension >= bdim)), bdim


batching.batching_rules[concatenate_p] = _concatenate_batch_rule


# ----- slice -----------------------------------------------------------------------------------

def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 (JAX's name)
    """The static slice `operand[start:limit:stride]` in every dimension (non-negative indices).

    Example: `lax.slice(jnp.arange(10), (1,), (8,), (3,))` is `[1, 4, 7]`.
    """
    start_indices = tuple(int(i) for i in start_indices)
    limit_indices = tuple(int(i) for i in limit_indices)
    strides = (1,) * len(start_indices) if strides is None else tuple(int(s) for s in strides)
    aval = aval_of(operand)
    if start_indices == (0,) * aval.ndim and limit_indices == aval.shape and strides == (1,) * aval.ndim:
        return operand
    return slice_p.bind(operand, start_indices=start_indices, limit_indices=limit_indices, strides=strides)


def _slice_shape_rule(operand, *, start_indices, limit_indices, strides):
    shape = operand.shape
    if not len(start_indices) == len(limit_indices) == len(strides) == operand.ndim:
        raise TypeError(f"slice start_indices, limit_indices and strides must have length equal to the "
                        f"operand's rank {operand.ndim}, got {start_indices}, {limit_indices} and {strides}.")
    if any(s < 0 for s in start_indices):
        raise TypeError(f"slice start_indices must be non-negative, got {start_indices}.")
    if any(l > d for l, d in zip(limit_indices, shape, strict=True)):
        raise TypeError(f"slice limit_indices must be less than or equal to operand shape, got limit_indices "
                        f"{limit_indices} for operand shape {shape}.")
    if any(s > l for s, l in zip(start_indices, limit_indices, strict=True)):
        raise TypeError(f"slice limit_indices must be greater than or equal to start_indices, got "
                        f"start_indices {start_indices} and limit_indices {limit_indices}.")
    if any(s <= 0 for s in strides):
        raise TypeError(f"slice strides must be positive, got {strides}.")
    return tuple(-(-(l - s) // st) for s, l, st in zip(start_indices, limit_indices, strides, strict=True))


def _slice_lowering(ctx, x, *, start_indices, limit_indices, strides):
    return ctx.b.op("stablehlo.slice", [x], [ctx.avals_out[0]],
                    {"start_indices": i64_array(start_indices), "limit_indices": i64_array(limit_indices),
                     "strides": i64_array(strides)})


slice_p = standard_primitive("slice", _slice_shape_rule, _operand_dtype, _operand_weak)
lowering.register(slice_p, _slice_lowering)


def _slice_transpose(ct, operand, *, start_indices, limit_indices, strides):
    # zeros everywhere the slice did not read: pad with the stride's gaps as interior padding
    config = []
    for d, lo, n, st in zip(operand.aval.shape, start_indices, aval_of(ct).shape, strides, strict=True):
        used = n + max(n - 1, 0) * (st - 1)
        config.append((lo, d - lo - used, st - 1))
    return [pad(ct, scalar_array(0, aval_of(ct).dtype, weak_type=False), config)]


deflinear(slice_p, _slice_transpose)


def _slice_batch_rule(vals, dims, *, start_indices, limit_indices, strides):
    (x,), (bdim,) = vals, dims
    size = aval_of(x).shape[bdim]
    starts, limits, steps = list(start_indices), list(limit_indices), list(strides)
    starts.insert(bdim, 0)
    limits.insert(bdim, size)
    steps.insert(bdim, 1)
    return slice_p.bind(x, start_indices=tuple(starts), limit_indices=tuple(limits), strides=tuple(steps)), bdim


batching.batching_rules[slice_p] = _slice_batch_rule


# ----- dynamic_slice / dynamic_update_slice -------------------------------------------------------
# Start indices are scalar integer operands. As in JAX, a negative index counts from the end of its
# dimension (the lowering adds the size), then XLA clamps it so the whole slice stays in bounds.

def _index_operands(name, start_indices, ndim):
    """The start indices as 0-d arrays of one integer dtype (Python ints become int32)."""
    start_indices = list(start_indices)
    if len(start_indices) != ndim:
        raise TypeError(f"{name}: the number of start_indices must equal the operand's rank {ndim}, "
                        f"got {len(start_indices)}.")
    avals = [None if _python_scalar(i) else aval_of(i) for i in start_indices]
    for a in avals:
        if a is not None and (a.ndim != 0 or not (dtypes.is_int(a.dtype) or dtypes.is_unsigned(a.dtype))):
            raise TypeError(f"{name}: start_indices must be scalar integers, got an index of type "
                            f"{a.str_short()}.")
    array_dtypes = {a.dtype for a in avals if a is not None}
    dtype = array_dtypes.pop() if len(array_dtypes) == 1 else dtypes.int32
    if any(d.itemsize == 8 for d in array_dtypes):
        dtype = dtypes.canonicalize_dtype(dtypes.int64)
    out = []
    for i, a in zip(start_indices, avals, strict=True):
        if a is None:
            i = scalar_array(int(i), dtype, weak_type=False)
        elif a.dtype != dtype:
            i = convert_element_type(i, dtype)
        out.append(i)
    return out


def _normalized_indices(ctx, indices, index_avals, dims):
    """Lower `i < 0 ? i + dim : i` for each signed index."""
    b, out = ctx.b, []
    for i, a, d in zip(indices, index_avals, dims, strict=True):
        if a.dtype.kind == "i":
            zero = b.constant(0, a.dtype, ())
            size = b.constant(d, a.dtype, ())
            neg = lowering.compare(b, i, zero, "LT", a)
            i = b.op("stablehlo.select", [neg, b.op("stablehlo.add", [i, size], [a]), i], [a])
        out.append(i)
    return out


def _check_index_dtypes(name, indices):
    if len({a.dtype for a in indices}) > 1 or any(a.ndim != 0 or a.dtype.kind not in "iu" for a in indices):
        raise TypeError(f"{name}: start_indices must be scalar integers of one dtype, got "
                        f"{', '.join(a.str_short() for a in indices)}.")


def _batched_start_indices(indices, idims, example_shape, window_shape, size):
    """Every example's start indices as one (size, rank) array for gather/scatter: made
    non-negative and clamped so that a window of `window_shape` fits, exactly as the lowering of
    dynamic_slice / dynamic_update_slice treats the starts of one example. `idims[k]` is None for
    an index shared by every example, else 0 (a batched scalar has shape (size,))."""
    from .elementwise import add, clamp, lt, select_n
    columns = []
    for i, d, dim, window in zip(indices, idims, example_shape, window_shape, strict=True):
        if d is None:
            i = broadcast_in_dim(i, (size,), ())
        if aval_of(i).dtype.kind == "i":
            i = select_n(lt(i, 0), i, add(i, dim))
        i = clamp(0, i, dim - window)
        columns.append(reshape(i, (size, 1)))
    return concatenate(columns, 1)


def _zero_start(indices):
    """A 0 start index of the dtype the other start indices have (int32 when there are none)."""
    dtype = aval_of(indices[0]).dtype if indices else dtypes.int32
    return scalar_array(0, dtype, weak_type=False)


def dynamic_slice(operand, start_indices, slice_sizes):
    """The slice of static size `slice_sizes` starting at the (possibly traced) `start_indices`.

    Unlike NumPy, the start is clamped so that the slice stays in bounds (as XLA does); a negative
    start counts from the end. Example: `lax.dynamic_slice(jnp.arange(5), (3,), (3,))` is `[2, 3, 4]`.
    """
    if is_key_array(operand):  # typed PRNG keys (core/prng_keys.py imports lax)
        from .. import prng_keys
        return prng_keys.on_key_data(dynamic_slice, operand, start_indices, slice_sizes)
    aval = aval_of(operand)
    indices = _index_operands("dynamic_slice", start_indices, aval.ndim)
    slice_sizes = tuple(int(s) for s in slice_sizes)
    return dynamic_slice_p.bind(operand, *indices, slice_sizes=slice_sizes)


def _dynamic_slice_shape_rule(operand, *indices, slice_sizes):
    _check_index_dtypes("dynamic_slice", indices)
    if len(indices) != operand.ndim or len(slice_sizes) != operand.ndim:
        raise TypeError(f"dynamic_slice: start_indices and slice_sizes must have length equal to the operand's "
                        f"rank {operand.ndim}, got {len(indices)} and {slice_sizes}.")
    if any(not 0 <= s <= d for s, d in zip(slice_sizes, operand.shape, strict=True)):
        raise TypeError(f"dynamic_slice slice_sizes must be non-negative and at most the operand shape, got "
                        f"slice_sizes {slice_sizes} for operand shape {operand.shape}.")
    return slice_sizes


def _dynamic_slice_lowering(ctx, x, *indices, slice_sizes):
    indices = _normalized_indices(ctx, indices, ctx.avals_in[1:], ctx.avals_in[0].shape)
    return ctx.b.op("stablehlo.dynamic_slice", [x, *indices], [ctx.avals_out[0]],
                    {"slice_sizes": i64_array(slice_sizes)})


dynamic_slice_p = standard_primitive("dynamic_slice", _dynamic_slice_shape_rule, _operand_dtype, _operand_weak)
lowering.register(dynamic_slice_p, _dynamic_slice_lowering)


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    # linear in the operand; the integer start indices carry no tangent
    operand, *indices = primals
    out = dynamic_slice_p.bind(operand, *indices, slice_sizes=slice_sizes)
    if type(tangents[0]) is ad.Zero:
        return out, ad.Zero(ad.tangent_aval(aval_of(out)))
    return out, dynamic_slice_p.bind(tangents[0], *indices, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, operand, *indices, slice_sizes):
    # dynamic_update_slice clamps its start exactly as dynamic_slice does (same block size)
    aval = operand.aval
    zeros = full(aval.shape, 0, aval.dtype)
    return [dynamic_update_slice_p.bind(zeros, ct, *indices)] + [None] * len(indices)


ad.jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
ad.transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose


def _dynamic_slice_batch_rule(vals, dims, *, slice_sizes):
    from .slicing import GatherDimensionNumbers, GatherScatterMode, gather
    operand, *indices = vals
    bdim, *idims = dims
    if all(d is None for d in idims):
        # one start for every example: take the whole batch axis (start 0) in the same slice
        sizes = list(slice_sizes)
        sizes.insert(bdim, aval_of(operand).shape[bdim])
        indices.insert(bdim, _zero_start(indices))
        return dynamic_slice_p.bind(operand, *indices, slice_sizes=tuple(sizes)), bdim
    # a start per example: one gather window per example, the batch axis paired with the
    # operand's (operand_batching_dims) when the operand is batched too
    size = batching.batch_size(vals, dims)
    shape = aval_of(operand).shape
    if bdim is not None:
        shape = shape[:bdim] + shape[bdim + 1:]
    rank = len(shape)
    if size == 0:  # no examples; XLA rejects a window of 1 along an empty batching dimension
        out_bdim = 0 if bdim is None else bdim
        out_shape = slice_sizes[:out_bdim] + (0,) + slice_sizes[out_bdim:]
        return full(out_shape, 0, aval_of(operand).dtype), out_bdim
    starts = _batched_start_indices(indices, idims, shape, slice_sizes, size)
    if bdim is None:
        dn = GatherDimensionNumbers(offset_dims=tuple(range(1, rank + 1)), collapsed_slice_dims=(),
                                    start_index_map=tuple(range(rank)))
        return gather(operand, starts, dn, slice_sizes, mode=GatherScatterMode.CLIP), 0
    others = tuple(d for d in range(rank + 1) if d != bdim)
    dn = GatherDimensionNumbers(offset_dims=others, collapsed_slice_dims=(), start_index_map=others,
                                operand_batching_dims=(bdim,), start_indices_batching_dims=(0,))
    sizes = slice_sizes[:bdim] + (1,) + slice_sizes[bdim:]
    return gather(operand, starts, dn, sizes, mode=GatherScatterMode.CLIP), bdim


batching.batching_rules[dynamic_slice_p] = _dynamic_slice_batch_rule


def dynamic_update_slice(operand, update, start_indices):
    """`operand` with the block `update` written at `start_indices` (clamped so that the whole
    update fits, as XLA does; negative starts count from the end).

    Example: `lax.dynamic_update_slice(jnp.zeros(4), jnp.ones(2), (1,))` is `[0., 1., 1., 0.]`.
    """
    aval = aval_of(operand)
    if _python_scalar(update):
        update = scalar_array(update, aval.dtype, weak_type=aval.weak_type)
    indices = _index_operands("dynamic_update_slice", start_indices, aval.ndim)
    return dynamic_update_slice_p.bind(operand, update, *indices)


def _dynamic_update_slice_shape_rule(operand, update, *indices):
    _check_index_dtypes("dynamic_update_slice", indices)
    if update.ndim != operand.ndim or len(indices) != operand.ndim:
        raise TypeError(f"dynamic_update_slice: update rank and the number of start_indices must equal the "
                        f"operand's rank, got operand shape {operand.shape}, update shape {update.shape} and "
                        f"{len(indices)} start indices.")
    if any(u > d for u, d in zip(update.shape, operand.shape, strict=True)):
        raise TypeError(f"dynamic_update_slice update shape must be smaller than operand shape, got update "
                        f"shape {update.shape} for operand shape {operand.shape}.")
    return operand.shape


def _dynamic_update_slice_lowering(ctx, x, u, *indices):
    indices = _normalized_indices(ctx, indices, ctx.avals_in[2:], ctx.avals_in[0].shape)
    return ctx.b.op("stablehlo.dynamic_update_slice", [x, u, *indices], [ctx.avals_out[0]])


dynamic_update_slice_p = standard_primitive(
    "dynamic_update_slice", _dynamic_update_slice_shape_rule,
    lambda x, u, *_: same_dtypes_rule("dynamic_update_slice", ANY, x, u),
    lambda x, u, *_: x.weak_type and u.weak_type)
lowering.register(dynamic_update_slice_p, _dynamic_update_slice_lowering)


def _dynamic_update_slice_jvp(primals, tangents, **params):
    # linear in (operand, update) jointly; the integer start indices carry no tangent
    operand, update, *indices = primals
    out = dynamic_update_slice_p.bind(operand, update, *indices)
    t_operand, t_update = tangents[:2]
    if type(t_operand) is ad.Zero and type(t_update) is ad.Zero:
        return out, ad.Zero(ad.tangent_aval(aval_of(out)))
    t_out = dynamic_update_slice_p.bind(ad.instantiate_zeros(t_operand), ad.instantiate_zeros(t_update),
                                        *indices)
    return out, t_out


def _dynamic_update_slice_transpose(ct, operand, update, *indices):
    update_shape = (update.aval if ad.is_undefined(update) else aval_of(update)).shape
    t_operand = t_update = None
    if ad.is_undefined(operand):
        zeros = full(update_shape, 0, aval_of(ct).dtype)
        t_operand = dynamic_update_slice_p.bind(ct, zeros, *indices)  # overwritten elements get nothing
    if ad.is_undefined(update):
        t_update = dynamic_slice_p.bind(ct, *indices, slice_sizes=update_shape)
    return [t_operand, t_update] + [None] * len(indices)


ad.jvp_rules[dynamic_update_slice_p] = _dynamic_update_slice_jvp
ad.transpose_rules[dynamic_update_slice_p] = _dynamic_update_slice_transpose


def _dynamic_update_slice_batch_rule(vals, dims):
    from .slicing import GatherScatterMode, ScatterDimensionNumbers, scatter
    operand, update, *indices = vals
    obdim, ubdim, *idims = dims
    size = batching.batch_size(vals, dims)
    if all(d is None for d in idims):
        # one start for every example: write the whole batch at start 0 along the batch axis
        bdim = obdim if obdim is not None else ubdim
        operand = batching.move_bdim(operand, obdim, bdim, size)
        update = batching.move_bdim(update, ubdim, bdim, size)
        indices.insert(bdim, _zero_start(indices))
        return dynamic_update_slice_p.bind(operand, update, *indices), bdim
    # a start per example: one scatter window per example, paired with the operand's batch axis
    if obdim is None:
        operand, obdim = batching.broadcast_batch(operand, size, 0), 0
    if size == 0:  # no examples: nothing to write (and XLA rejects an empty batching dimension)
        return operand, obdim
    if ubdim is None:
        update, ubdim = batching.broadcast_batch(update, size, 0), 0
    op_shape, upd_shape = aval_of(operand).shape, aval_of(update).shape
    op_shape = op_shape[:obdim] + op_shape[obdim + 1:]
    upd_shape = upd_shape[:ubdim] + upd_shape[ubdim + 1:]
    starts = _batched_start_indices(indices, idims, op_shape, upd_shape, size)
    rank = len(op_shape)
    dn = ScatterDimensionNumbers(
        update_window_dims=tuple(d for d in range(rank + 1) if d != ubdim), inserted_window_dims=(),
        scatter_dims_to_operand_dims=tuple(d for d in range(rank + 1) if d != obdim),
        operand_batching_dims=(obdim,), scatter_indices_batching_dims=(0,))
    out = scatter(operand, starts, update, dn, unique_indices=True, mode=GatherScatterMode.CLIP)
    return out, obdim


batching.batching_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch_rule


# ----- stop_gradient ---------------------------------------------------------------------------

def stop_gradient(x):
    """The identity on values, but gradients do not flow through it. `x` may be a pytree; only
    floating-point leaves are wrapped (others have no gradient anyway).

    Example: `grad(lambda x: x * lax.stop_gradient(x))(3.)` is `3.`.
    """
    from ..tree_util import physical_map

    def stop(leaf):
        if dtypes.is_inexact(dtypes.dtype(leaf)):
            return stop_gradient_p.bind(leaf)
        return leaf

    return physical_map(stop, x)  # a typed key (its integer data) comes back as it is


stop_gradient_p = standard_primitive("stop_gradient", lambda x: x.shape, _operand_dtype, _operand_weak)
lowering.register(stop_gradient_p, lambda ctx, x: x)
defnondiff(stop_gradient_p)
defvectorized(stop_gradient_p)


# ----- copy -------------------------------------------------------------------------------------

def _array_copy(x):
    """A copy of `x` that owns its device buffer (what `jnp.array(x)`, `jnp.copy(x)` and
    `x.copy()` return), so that donating one of the two leaves the other usable.

    Example:
        >>> from core.lax.structural import _array_copy
        >>> x = jnp.arange(3)
        >>> y = _array_copy(x)
        >>> y is x, y
        (False, Array([0, 1, 2], dtype=int32))
    """
    return copy_p.bind(x)


class _CopyPrimitive(Primitive):
    """Eagerly, copying an Array is a device-side buffer copy (no program to compile per shape).
    Traced, `copy` is an equation whose lowering is the identity: inside a program a copy has no
    meaning, and XLA gives each output of a program its own buffer anyway."""

    def bind(self, *args, **params):
        if _trace_state.trace.__class__ is EvalTrace and len(args) == 1 and isinstance(args[0], Array):
            out = copy_array(args[0])
            if config.debug_key_reuse:  # a copy of keys is the same keys (core/key_reuse.py)
                from ..key_reuse import share_marks
                share_marks(args[0], out)
            return out
        return super().bind(*args, **params)


def _copy_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return copy_p.bind(x), t if type(t) is ad.Zero else copy_p.bind(t)


copy_p = _CopyPrimitive("copy")
copy_p.def_abstract_eval(lambda x: x)
lowering.register(copy_p, lambda ctx, x: x)
ad.jvp_rules[copy_p] = _copy_jvp
ad.transpose_rules[copy_p] = lambda ct, x: [copy_p.bind(ct)]
defvectorized(copy_p)


# ----- derived helpers (no primitives of their own) -----------------------------------------------

def full(shape, fill_value, dtype=None):
    """An array of `shape` whose every element is the scalar `fill_value` (as `dtype`, default its
    own; a Python scalar with no `dtype` gives a weakly typed result).

    Example: `lax.full((2, 3), 1.5)`.
    """
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise TypeError(f"full: shape must have non-negative sizes, got {shape}.")
    fill_aval = aval_of(fill_value) if not _python_scalar(fill_value) else None
    if fill_aval is not None and fill_aval.ndim != 0:
        raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {fill_aval.shape}.")
    weak = dtype is None and (fill_aval.weak_type if fill_aval is not None else type(fill_value) is not bool)
    dtype = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.dtype(fill_value))
    if fill_aval is None:
        # a 0-d result is this array itself (the broadcast below is the identity): it must be a
        # new one, not the operand cache's, which a user who donates it would delete
        if not shape:
            return new_scalar_array(fill_value, dtype, weak_type=weak)
        value = scalar_array(fill_value, dtype, weak_type=weak)
    else:
        value = convert_element_type(fill_value, dtype, weak_type=weak)
    return broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None):
    """An array like `x` (its shape and dtype, unless given) filled with `fill_value`.

    Example: `lax.full_like(jnp.ones((2, 2)), 3)` is a float32 array of threes.
    """
    aval = aval_of(x)
    weak = dtype is None and aval.weak_type
    dtype = aval.dtype if dtype is None else dtypes.canonicalize_dtype(dtype)
    out = full(aval.shape if shape is None else shape, fill_value, dtype)
    return convert_element_type(out, dtype, weak_type=weak) if weak else out


def zeros_like_array(x):
    """Zeros with the shape and dtype of `x`."""
    return full_like(x, 0)


def collapse(operand, start_dimension, stop_dimension=None):
    """Merge dimensions `[start_dimension, stop_dimension)` into one.

    Example: `lax.collapse(jnp.ones((2, 3, 4)), 1)` has shape (2, 12).
    """
    shape = aval_of(operand).shape
    ndim = len(shape)
    stop = ndim if stop_dimension is None else stop_dimension
    start = start_dimension + ndim if start_dimension < 0 else start_dimension
    stop = stop + ndim if stop < 0 else stop
    if not 0 <= start <= stop <= ndim:
        raise ValueError(f"collapse: invalid dimensions [{start_dimension}, {stop_dimension}) for shape {shape}.")
    new_shape = shape[:start] + (math.prod(shape[start:stop]),) + shape[stop:]
    return reshape(operand, new_shape)


def _canonical_axis(axis, ndim, name):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of rank {ndim}.")
    return axis % ndim


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """`lax.slice` along one `axis`; `None` and negative indices are interpreted as in Python.

    Example: `lax.slice_in_dim(jnp.arange(6), 1, -1)` is `[1, 2, 3, 4]`.
    """
    shape = aval_of(operand).shape
    axis = _canonical_axis(int(axis), len(shape), "slice_in_dim")
    size = shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = size if limit_index is None else int(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """Element `index` (a static int, negative from the end) along `axis`.

    Example: `lax.index_in_dim(jnp.ones((2, 3)), 1, keepdims=False)` has shape (3,).
    """
    shape = aval_of(operand).shape
    axis = _canonical_axis(int(axis), len(shape), "index_in_dim")
    index = int(index)
    if not -shape[axis] <= index < shape[axis]:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {shape[axis]}")
    index = index % shape[axis]
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0):
    """`lax.dynamic_slice` along one `axis` (other dimensions taken whole)."""
    shape = aval_of(operand).shape
    axis = _canonical_axis(int(axis), len(shape), "dynamic_slice_in_dim")
    starts = [0] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = int(slice_size)
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True):
    """Element `index` (possibly traced; clamped) along `axis`."""
    axis = _canonical_axis(int(axis), aval_of(operand).ndim, "dynamic_index_in_dim")
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis):
    """`lax.dynamic_update_slice` with the start given only along `axis` (zero elsewhere)."""
    ndim = aval_of(operand).ndim
    axis = _canonical_axis(int(axis), ndim, "dynamic_update_slice_in_dim")
    starts = [0] * ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


def dynamic_update_index_in_dim(operand, update, index, axis):
    """Write `update` (with or without the size-1 `axis`) at position `index` along `axis`."""
    ndim = aval_of(operand).ndim
    axis = _canonical_axis(int(axis), ndim, "dynamic_update_index_in_dim")
    if aval_of(update).ndim == ndim - 1:
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis)

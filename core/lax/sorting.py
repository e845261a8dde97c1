"""Sorting: `sort` (one or several operands ordered by the first `num_keys`), `sort_key_val`, `top_k`.

The order is JAX's: floats are compared in IEEE total order after two canonicalizations inside the
comparator, -0.0 -> 0.0 (so zeros tie and a stable sort keeps their order, as NumPy) and every NaN ->
+NaN (so NaNs sort last); complex numbers order by real part, then imaginary part, those with a NaN
part last (NumPy's order: R+nanj, then nan+Rj, then nan+nanj); bools False < True.
"""
import math

import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import ad, batching, lowering
from ..interpreters.lowering import i64_array
from ._base import ANY, aval_of, check_dtype_accepted, standard_primitive

__all__ = ["sort", "sort_key_val", "top_k"]


def _key_parts(b, x, dtype):
    """The comparable parts of one key value inside a comparator region: [(value, dtype), ...]."""
    if dtypes.is_complex(dtype):
        part = dtypes.finfo(dtype).dtype
        t = lowering.tensor_type((), part)
        re = b.op("stablehlo.real", [x], [t])
        im = b.op("stablehlo.imag", [x], [t])
        # NumPy's order: numbers without NaN first, then those with a NaN part ordered by
        # (real, imag) with NaN last in each part, i.e. R+nanj < nan+Rj < nan+nanj. A leading "has a
        # NaN" key gives exactly that (JAX would put -1+nanj before 0+0j).
        scalar = ShapedArray((), part)
        nan_key = b.op("stablehlo.or", [lowering.compare(b, re, re, "NE", scalar),
                                        lowering.compare(b, im, im, "NE", scalar)],
                       [lowering.tensor_type((), dtypes.bool_)])
        return [(nan_key, dtypes.bool_)] + _key_parts(b, re, part) + _key_parts(b, im, part)
    if dtypes.is_float(dtype):
        scalar = ShapedArray((), dtype)
        zero = b.constant(0.0, dtype, ())
        x = b.op("stablehlo.select", [lowering.compare(b, x, zero, "EQ", scalar), zero, x], [scalar])
        nan = b.constant(np.nan, dtype, ())
        x = b.op("stablehlo.select", [lowering.compare(b, x, x, "NE", scalar), nan, x], [scalar])
    return [(x, dtype)]


def _compare(b, x, y, direction, dtype):
    kind = "TOTALORDER" if dtypes.is_float(dtype) else lowering.compare_type(dtype)
    return b.op("stablehlo.compare", [x, y], [lowering.tensor_type((), dtypes.bool_)],
                {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                 "compare_type": f"#stablehlo<comparison_type {kind}>"})


def lexicographic_less(b, xs, ys, key_dtypes, descending=False):
    """Emit `xs < ys` (or `>` when descending) in the sort order, comparing keys lexicographically."""
    xparts, yparts = [], []
    for x, y, dt in zip(xs, ys, key_dtypes, strict=True):
        xparts += _key_parts(b, x, dt)
        yparts += _key_parts(b, y, dt)
    direction = "GT" if descending else "LT"
    result = None
    for (x, dt), (y, _) in reversed(list(zip(xparts, yparts, strict=True))):
        lt = _compare(b, x, y, direction, dt)
        if result is None:
            result = lt
        else:
            eq = _compare(b, x, y, "EQ", dt)
            bool_t = b.type_of(lt)
            result = b.op("stablehlo.or", [lt, b.op("stablehlo.and", [eq, result], [bool_t])], [bool_t])
    return result


# ----- sort ----------------------------------------------------------------------------------

def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort `operand` along `dimension`; with a tuple of operands, sort them all by the first
    `num_keys` (lexicographically) and return a tuple. NaNs sort last.

    Example: `lax.sort(jnp.array([3., nan, 1.]))` is `[1., 3., nan]`;
    `lax.sort((keys, vals), num_keys=1)` sorts `vals` along with `keys`.
    """
    single = not isinstance(operand, (tuple, list))
    operands = (operand,) if single else tuple(operand)
    if not operands:
        raise TypeError("sort requires at least one operand")
    ndim = aval_of(operands[0]).ndim
    dimension = int(dimension)
    if ndim and -ndim <= dimension < 0:
        dimension += ndim
    outs = sort_p.bind(*operands, dimension=dimension, is_stable=bool(is_stable), num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def _sort_abstract_eval(*operands, dimension, is_stable, num_keys):
    shape = operands[0].shape
    for op in operands:
        if op.shape != shape:
            raise TypeError(f"sort requires all operands to have the same shape, got "
                            f"{', '.join(str(o.shape) for o in operands)}.")
        check_dtype_accepted("sort", op.dtype, ANY)
    if not 0 <= dimension < len(shape):
        raise ValueError(f"sort: dimension {dimension} is out of bounds for operands of shape {shape}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be at least 1 and at most the number of "
                         f"operands ({len(operands)}).")
    return [ShapedArray(o.shape, o.dtype, o.weak_type) for o in operands]


def _sort_lowering(ctx, *xs, dimension, is_stable, num_keys):
    b = ctx.b
    key_dtypes = [a.dtype for a in ctx.avals_in[:num_keys]]
    scalars = [ShapedArray((), a.dtype) for a in ctx.avals_in]

    def comparator(r, *args):
        lhs, rhs = args[0::2], args[1::2]
        return lexicographic_less(r, lhs[:num_keys], rhs[:num_keys], key_dtypes)

    region = b.region([s for s in scalars for _ in (0, 1)], comparator)
    outs = b.op("stablehlo.sort", list(xs), list(ctx.avals_out),
                {"dimension": f"{dimension} : i64", "is_stable": "true" if is_stable else "false"},
                regions=[region])
    return [outs] if isinstance(outs, str) else outs


sort_p = standard_primitive("sort", None, None, multiple_results=True)
sort_p.def_abstract_eval(_sort_abstract_eval)
lowering.register(sort_p, _sort_lowering)


def take_along(x, indices, axis):
    """`x[..., indices[...], ...]` along `axis` (numpy.take_along_axis with in-bounds indices of
    x's rank, the other dimensions equal): a gather with the other dimensions as batch dimensions."""
    from .slicing import GatherDimensionNumbers, gather
    from .structural import reshape
    shape = aval_of(x).shape
    others = tuple(d for d in range(len(shape)) if d != axis)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
                                operand_batching_dims=others, start_indices_batching_dims=others)
    idx_shape = aval_of(indices).shape
    return gather(x, reshape(indices, idx_shape + (1,)), dn, (1,) * len(shape))


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    # Sort an iota along with the operands (it is not a key, so the order is unchanged) to learn
    # the permutation, then apply it to each tangent.
    from .structural import broadcasted_iota
    shape = aval_of(primals[0]).shape
    iota = broadcasted_iota(dtypes.int32, shape, dimension)
    outs = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    outs, perm = list(outs[:-1]), outs[-1]
    t_outs = []
    for t, out in zip(tangents, outs, strict=True):
        if type(t) is ad.Zero:
            t_outs.append(ad.Zero(ad.tangent_aval(aval_of(out))))
        elif math.prod(shape) == 0:
            t_outs.append(t)
        else:
            t_outs.append(take_along(t, perm, dimension))
    return outs, t_outs


ad.jvp_rules[sort_p] = _sort_jvp


def _sort_batch_rule(vals, dims, *, dimension, is_stable, num_keys):
    # Every operand gets the batch axis where the first batched one has it (unbatched operands are
    # broadcast there: sort needs equal shapes); the sorted dimension shifts past it.
    size = batching.batch_size(vals, dims)
    bdim = next(d for d in dims if d is not None)
    args = [batching.broadcast_batch(x, size, bdim) if d is None else batching.moveaxis(x, d, bdim)
            for x, d in zip(vals, dims, strict=True)]
    dimension = dimension + (dimension >= bdim)
    outs = sort_p.bind(*args, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    return outs, [bdim] * len(outs)


batching.batching_rules[sort_p] = _sort_batch_rule


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sort `keys` along `dimension` and reorder `values` the same way; returns (keys, values).

    Example: `lax.sort_key_val(jnp.array([2, 1]), jnp.array([10, 20]))` is `([1, 2], [20, 10])`.
    """
    k, v = sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


# ----- top_k ---------------------------------------------------------------------------------

def top_k(operand, k):
    """The `k` largest entries along the last axis, largest first, and their int32 indices; ties
    keep the lower index first and NaN counts as the largest value.

    Example: `lax.top_k(jnp.array([1., 4., 2., 4.]), 2)` is `([4., 4.], [1, 3])`.
    """
    return tuple(top_k_p.bind(operand, k=int(k)))


def _top_k_abstract_eval(operand, *, k):
    check_dtype_accepted("top_k", operand.dtype, ANY)
    if operand.ndim == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got shape ().")
    if k < 0:
        raise ValueError(f"top_k: k must be non-negative, got k={k}.")
    if k > operand.shape[-1]:
        raise TypeError(f"top_k: k must be smaller than or equal to the size of the last axis, got k={k} "
                        f"for operand of shape {operand.shape}.")
    shape = operand.shape[:-1] + (k,)
    return [ShapedArray(shape, operand.dtype, operand.weak_type), ShapedArray(shape, dtypes.int32)]


def _top_k_lowering(ctx, x, *, k):
    # A stable descending sort of (value, index) pairs, then the first k columns: ties keep index order.
    b = ctx.b
    aval = ctx.avals_in[0]
    last = aval.ndim - 1
    idx_aval = aval.update(dtype=dtypes.int32)
    iota = b.op("stablehlo.iota", [], [idx_aval], {"iota_dimension": f"{last} : i64"})

    def comparator(r, xa, xb, ia, ib):
        return lexicographic_less(r, [xa], [xb], [aval.dtype], descending=True)

    scalars = [ShapedArray((), aval.dtype)] * 2 + [ShapedArray((), dtypes.int32)] * 2
    region = b.region(scalars, comparator)
    vals, idxs = b.op("stablehlo.sort", [x, iota], [aval, idx_aval],
                      {"dimension": f"{last} : i64", "is_stable": "true"}, regions=[region])
    if k == aval.shape[-1]:
        return [vals, idxs]
    start = i64_array([0] * aval.ndim)
    limit = i64_array(aval.shape[:-1] + (k,))
    strides = i64_array([1] * aval.ndim)
    attrs = {"start_indices": start, "limit_indices": limit, "strides": strides}
    return [b.op("stablehlo.slice", [vals], [ctx.avals_out[0]], attrs),
            b.op("stablehlo.slice", [idxs], [ctx.avals_out[1]], attrs)]


top_k_p = standard_primitive("top_k", None, None, multiple_results=True)
top_k_p.def_abstract_eval(_top_k_abstract_eval)
lowering.register(top_k_p, _top_k_lowering)


def _top_k_jvp(primals, tangents, *, k):
    # The values' tangent is the tangent read at the returned indices; the indices have none.
    x, = primals
    t, = tangents
    vals, idxs = top_k_p.bind(x, k=k)
    if aval_of(vals).size == 0:
        t_vals = ad.Zero(ad.tangent_aval(aval_of(vals)))
    else:
        t_vals = take_along(t, idxs, aval_of(x).ndim - 1)
    return [vals, idxs], [t_vals, ad.Zero(ad.tangent_aval(aval_of(idxs)))]


ad.jvp_rules[top_k_p] = _top_k_jvp


def _top_k_batch_rule(vals, dims, *, k):
    # top_k works on the last axis and treats the others as a batch: only a batch axis in the last
    # position has to move.
    (x,), (d,) = vals, dims
    if d == aval_of(x).ndim - 1:
        x, d = batching.moveaxis(x, d, 0), 0
    outs = top_k_p.bind(x, k=k)
    return outs, [d, d]


batching.batching_rules[top_k_p] = _top_k_batch_rule

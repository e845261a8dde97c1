"""Arrays cut into pieces and put together again: `split` (pieces of given sizes along an axis),
`stack` (arrays joined along a new axis), `unstack` (its inverse) and `tile` (an array repeated
along each axis). Each is one primitive, as in JAX (`split_p`, `stack_p`, `unstack_p`, `tile_p`),
so a jaxpr shows one equation for each and programs that look for these primitives find them.
All four are linear: split and concatenate-like stack transpose into each other, unstack into
stack, and tile into a sum over its repetitions.
"""
from .. import dtypes
from ..interpreters import batching, lowering
from ..interpreters.lowering import i64_array
from ._base import aval_of, deflinear, standard_primitive

__all__ = ["split", "stack", "unstack", "tile"]


def _axis(name, axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of rank {ndim}.")
    return axis % ndim


def _slice(b, x, aval, axis, start, size, out_aval):
    starts = [0] * aval.ndim
    limits = list(aval.shape)
    starts[axis], limits[axis] = start, start + size
    return b.op("stablehlo.slice", [x], [out_aval], {"start_indices": i64_array(starts),
                                                    "limit_indices": i64_array(limits),
                                                    "strides": i64_array([1] * aval.ndim)})


# ----- split -------------------------------------------------------------------------------------

def split(operand, sizes, axis=0):
    """`operand` cut along `axis` into consecutive pieces of the given `sizes` (they must add up to
    the axis' size), as a list.

    >>> [p.shape for p in lax.split(jnp.zeros((5, 2)), (2, 3))]
    [(2, 2), (3, 2)]
    """
    aval = aval_of(operand)
    sizes = tuple(int(s) for s in sizes)
    axis = _axis("split", axis, aval.ndim)
    if any(s < 0 for s in sizes) or sum(sizes) != aval.shape[axis]:
        raise ValueError(f"split: sizes {sizes} must be non-negative and add up to the size {aval.shape[axis]} of "
                         f"axis {axis} of the operand of shape {aval.shape}.")
    return list(split_p.bind(operand, sizes=sizes, axis=axis))


def _split_shape_rule(x, *, sizes, axis):
    return [x.shape[:axis] + (s,) + x.shape[axis + 1:] for s in sizes]


def _split_lowering(ctx, x, *, sizes, axis):
    outs, start = [], 0
    for size, out in zip(sizes, ctx.avals_out, strict=True):
        outs.append(_slice(ctx.b, x, ctx.avals_in[0], axis, start, size, out))
        start += size
    return outs


split_p = standard_primitive("split", _split_shape_rule, lambda x, *, sizes, **_: [x.dtype] * len(sizes),
                             lambda x, *, sizes, **_: [x.weak_type] * len(sizes), multiple_results=True)
lowering.register(split_p, _split_lowering)


def _split_transpose(cts, x, *, sizes, axis):
    from .structural import concatenate, full
    if not cts:  # no pieces: the operand's axis is empty
        return [full(x.aval.shape, 0, x.aval.dtype)]
    return [concatenate(list(cts), axis)]


deflinear(split_p, _split_transpose)
batching.batching_rules[split_p] = lambda vals, dims, *, sizes, axis: (
    split_p.bind(vals[0], sizes=sizes, axis=axis + (dims[0] <= axis)), [dims[0]] * len(sizes))


# ----- stack and unstack -------------------------------------------------------------------------

def stack(operands, axis=0):
    """The arrays `operands` (one shape and dtype) stacked along a new axis `axis`.

    >>> lax.stack([jnp.zeros(3), jnp.ones(3)], axis=1).shape
    (3, 2)
    """
    operands = list(operands)
    if not operands:
        raise ValueError("stack requires at least one operand.")
    avals = [aval_of(x) for x in operands]
    if len({(a.shape, a.dtype) for a in avals}) > 1:
        raise TypeError("stack requires operands of one shape and dtype, got "
                        f"{', '.join(dtypes.short_name(a.dtype) + str(list(a.shape)) for a in avals)}.")
    return stack_p.bind(*operands, axis=_axis("stack", axis, avals[0].ndim + 1))


def _stack_shape_rule(*xs, axis):
    return xs[0].shape[:axis] + (len(xs),) + xs[0].shape[axis:]


def _stack_lowering(ctx, *xs, axis):
    aval = ctx.avals_in[0]
    one = aval.update(shape=aval.shape[:axis] + (1,) + aval.shape[axis:])
    pieces = [ctx.b.op("stablehlo.reshape", [x], [one]) for x in xs]
    if len(pieces) == 1:
        return pieces[0]
    return ctx.b.op("stablehlo.concatenate", pieces, [ctx.avals_out[0]], {"dimension": f"{axis} : i64"})


stack_p = standard_primitive("stack", _stack_shape_rule, lambda *xs, **_: xs[0].dtype,
                             lambda *xs, **_: all(x.weak_type for x in xs))
lowering.register(stack_p, _stack_lowering)


def _stack_transpose(ct, *xs, axis):
    from ..interpreters import ad
    cts = unstack_p.bind(ct, axis=axis)
    return [c if ad.is_undefined(x) else None for c, x in zip(cts, xs, strict=True)]


def _stack_batch_rule(vals, dims, *, axis):
    size = batching.batch_size(vals, dims)
    vals = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims, strict=True)]
    return stack_p.bind(*vals, axis=axis + 1), 0


deflinear(stack_p, _stack_transpose)
batching.batching_rules[stack_p] = _stack_batch_rule


def unstack(x, axis=0):
    """The slices of `x` along `axis`, as a tuple of arrays with that axis removed.

    >>> [a.tolist() for a in lax.unstack(jnp.array([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    aval = aval_of(x)
    if aval.ndim == 0:
        raise ValueError(f"unstack requires an operand of rank > 0, got shape {aval.shape}.")
    return tuple(unstack_p.bind(x, axis=_axis("unstack", axis, aval.ndim)))


def _unstack_lowering(ctx, x, *, axis):
    aval = ctx.avals_in[0]
    one = aval.update(shape=aval.shape[:axis] + (1,) + aval.shape[axis + 1:])
    return [ctx.b.op("stablehlo.reshape", [_slice(ctx.b, x, aval, axis, i, 1, one)], [out])
            for i, out in enumerate(ctx.avals_out)]


unstack_p = standard_primitive(
    "unstack", lambda x, *, axis: [x.shape[:axis] + x.shape[axis + 1:]] * x.shape[axis],
    lambda x, *, axis: [x.dtype] * x.shape[axis], lambda x, *, axis: [x.weak_type] * x.shape[axis],
    multiple_results=True)
lowering.register(unstack_p, _unstack_lowering)


def _unstack_transpose(cts, x, *, axis):
    from .structural import full
    if not cts:
        return [full(x.aval.shape, 0, x.aval.dtype)]
    return [stack_p.bind(*cts, axis=axis)]


def _unstack_batch_rule(vals, dims, *, axis):
    (x,), (d,) = vals, dims
    n = aval_of(x).shape[axis + (d <= axis)]
    return unstack_p.bind(x, axis=axis + (d <= axis)), [d - (axis < d)] * n


deflinear(unstack_p, _unstack_transpose)
batching.batching_rules[unstack_p] = _unstack_batch_rule


# ----- tile --------------------------------------------------------------------------------------

def tile(operand, reps):
    """`operand` repeated `reps[i]` times along each axis i (len(reps) == operand.ndim).

    >>> lax.tile(jnp.array([[1, 2]]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    aval = aval_of(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != aval.ndim or any(r < 0 for r in reps):
        raise ValueError(f"tile: reps {reps} must have one non-negative entry per dimension of the operand of "
                         f"shape {aval.shape}.")
    return tile_p.bind(operand, reps=reps)


def _tile_lowering(ctx, x, *, reps):
    aval = ctx.avals_in[0]
    # (r0, d0, r1, d1, ...) by one broadcast, then merged pairwise
    pairs = aval.update(shape=tuple(v for r, d in zip(reps, aval.shape) for v in (r, d)))
    wide = ctx.b.op("stablehlo.broadcast_in_dim", [x], [pairs],
                    {"broadcast_dimensions": i64_array(range(1, 2 * aval.ndim, 2))})
    return ctx.b.op("stablehlo.reshape", [wide], [ctx.avals_out[0]])


tile_p = standard_primitive("tile", lambda x, *, reps: tuple(d * r for d, r in zip(x.shape, reps)),
                            lambda x, **_: x.dtype, lambda x, **_: x.weak_type)
lowering.register(tile_p, _tile_lowering)


def _tile_transpose(ct, x, *, reps):
    # each operand element received the cotangents of all its copies
    from .reductions import reduce_sum
    from .structural import reshape
    shape = x.aval.shape
    pairs = reshape(ct, tuple(v for r, d in zip(reps, shape) for v in (r, d)))
    return [reduce_sum(pairs, tuple(range(0, 2 * len(shape), 2)))]


def _tile_batch_rule(vals, dims, *, reps):
    (x,), (d,) = vals, dims
    return tile_p.bind(x, reps=reps[:d] + (1,) + reps[d:]), d


deflinear(tile_p, _tile_transpose)
batching.batching_rules[tile_p] = _tile_batch_rule

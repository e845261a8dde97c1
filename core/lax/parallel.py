"""Collectives over named axes: `psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `psum_scatter`,
`all_to_all`, `ppermute`, `axis_index`, `axis_size`.

A collective combines a value across the examples of a named mapped axis: the axis a
`vmap(..., axis_name=name)` or a `pmap(..., axis_name=name)` binds. Under vmap the examples are the
lanes of one batched array, so each collective's batching rule is a reduction, a reshaping or a
gather of the batch axis. Under pmap the examples are devices: the body is lowered to one
replicated module (`mhlo.num_replicas = size`, replica id = axis index) whose builder carries
`axis_env = {axis_name: size}`, and each collective lowers to the cross-replica StableHLO op
(`all_reduce`, `all_gather`, `reduce_scatter`, `all_to_all`, `collective_permute`, `replica_id`)
over the one replica group of every device. A collective naming an axis that nothing binds is an
error that lists the names that are bound; one lowered outside a pmap that binds its axis is a
NameError too. `axis_index_groups` (collectives over subgroups of an axis) is not supported.

Typed PRNG key arrays (`random.key`) go through the collectives that move values (`all_gather`,
`all_to_all`, `ppermute`, and `pshuffle`/`pswapaxes` built on them), as in JAX: the collective
runs on the keys' uint32 data, vmapped over its trailing data axis, so its axis arguments mean
key axes. The arithmetic ones (`psum`, `pmean`, `pmax`, `pmin`, `psum_scatter`) refuse keys with
a TypeError, as JAX's do.
"""
import functools

import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import ad, batching, lowering
from ..tree_util import tree_flatten, tree_leaves, tree_unflatten
from ._base import any_key_array, aval_of, deflinear, defnondiff, is_key_array, standard_primitive
from .elementwise import div, eq, mul, select_n
from .reductions import reduce_max, reduce_min, reduce_sum
from .slicing import index_take
from .structural import broadcast_in_dim, convert_element_type, expand_dims, full_like, iota, reshape, squeeze

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all", "ppermute", "axis_index",
           "axis_size", "pbroadcast", "pcast", "ragged_all_to_all", "psend", "precv"]


def _names(axis_name):
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        if batching.bound_axis(n) is None:
            bound = batching.bound_axis_names()
            raise NameError(f"unbound axis name: {n!r}. The axis names bound here are {bound}: a collective "
                            "refers to the axis_name of an enclosing vmap or pmap."
                            if bound else
                            f"unbound axis name: {n!r}. No vmap or pmap with an axis_name encloses this "
                            "collective; wrap the function in vmap(..., axis_name=...) or pmap.")
    return tuple(names)


def _one_name(op, axis_name):
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"{op} over several axis names at once is not supported; apply it over one "
                                  "name at a time.")
    return names


def _no_groups(op, axis_index_groups):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{op}: axis_index_groups is not supported (only axis_index_groups=None, the "
                                  "whole axis as one group).")


def _moves_keys(collective):
    """Let `collective` (one that moves values without combining them) take typed PRNG key
    arrays among the leaves of its operand, as JAX's does: a key leaf goes through
    `prng_keys.on_key_data`, which runs the collective on the key data vmapped over its data
    axis, so every axis argument means a key axis and the collective's own checks and errors
    apply to the key shape."""
    @functools.wraps(collective)
    def wrapper(x, *args, **kwargs):
        leaves, tree = tree_flatten(x)
        if not any_key_array(leaves):
            return collective(x, *args, **kwargs)
        from ..prng_keys import on_key_data  # prng_keys imports lax
        return tree_unflatten(tree, [on_key_data(collective, leaf, *args, **kwargs) if is_key_array(leaf)
                                     else collective(leaf, *args, **kwargs) for leaf in leaves])
    return wrapper


def _no_keys(op, x):
    """The arithmetic collectives refuse typed PRNG keys (keys are not numbers), as JAX's do."""
    for leaf in tree_leaves(x):
        if is_key_array(leaf):
            raise TypeError(f"{op} does not accept PRNG key arrays (got {leaf.dtype}{list(leaf.shape)}): keys are "
                            "not numbers. all_gather, all_to_all, ppermute and pshuffle move keys; for arithmetic "
                            "on the raw words use random.key_data(keys).")


def _tree_collective(prim, x, names, **params):
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [prim.bind(leaf, axis_name=names, **params) for leaf in leaves])


def axis_size(axis_name):
    """The size of the named mapped axis (a Python int): the batch size of the vmap (or the
    device count of the pmap) that binds `axis_name`.

    Example: inside `vmap(f, axis_name="i")` applied to 8 examples, `lax.axis_size("i")` is 8.
    """
    size = 1
    for n in _names(axis_name):
        size *= batching.bound_axis(n).size
    return size


# ----- lowering for pmap -------------------------------------------------------------------------------
# pmap lowers its body into one replicated module whose builder has `axis_env = {name: size}`; the
# replica id is the axis index, so every collective runs over the single group of all replicas.

def _unbound_error(op, axis_name):
    return NameError(f"{op} over axis {axis_name} cannot be compiled: the axis is not bound by a vmap or pmap "
                     "around this program (it was traced inside one, then run outside it).")


def _axis_env_size(ctx, axis_name):
    """The replica count of the pmap axis `axis_name` (a tuple of names) in the module being lowered."""
    env = getattr(ctx.b.module, "axis_env", None) or {}
    names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not names or any(n not in env for n in names) or len(set(names)) != 1:
        raise _unbound_error(ctx.primitive.name, axis_name)
    return env[names[0]]


def _replica_groups(ctx, axis_name):
    """The `replica_groups` attribute text: one group holding every replica of the pmap axis."""
    size = _axis_env_size(ctx, axis_name)
    return f"dense<[[{', '.join(map(str, range(size)))}]]> : tensor<1x{size}xi64>"


def _scalar_region(ctx, dtype, hlo_op):
    scalar = ShapedArray((), dtype)
    return ctx.b.region([scalar, scalar], lambda b, x, y: b.op(hlo_op, [x, y], [scalar]))


def _reducer_op(kind, dtype):
    if dtype == dtypes.bool_:
        return {"sum": "stablehlo.or", "max": "stablehlo.or", "min": "stablehlo.and"}[kind]
    return {"sum": "stablehlo.add", "max": "stablehlo.maximum", "min": "stablehlo.minimum"}[kind]


def _all_reduce_lowering(kind):
    def rule(ctx, x, *, axis_name):
        aval = ctx.avals_in[0]
        groups = _replica_groups(ctx, axis_name)
        region = _scalar_region(ctx, aval.dtype, _reducer_op(kind, aval.dtype))
        return ctx.b.op("stablehlo.all_reduce", [x], [ctx.avals_out[0]], {"replica_groups": groups}, [region])
    return rule


# ----- psum --------------------------------------------------------------------------------------

def psum(x, axis_name):
    """The sum of `x` over every example of the named axis (a pytree of arrays works leafwise).

    Example: `vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(jnp.array([1., 3.]))` is
    `[0.25, 0.75]`. Booleans are counted: their psum is int32, as in JAX.
    """
    names = _names(axis_name)
    _no_keys("psum", x)
    leaves, tree = tree_flatten(x)
    leaves = [convert_element_type(leaf, dtypes.int32) if aval_of(leaf).dtype == dtypes.bool_ else leaf
              for leaf in leaves]
    return tree_unflatten(tree, [psum_p.bind(leaf, axis_name=names) for leaf in leaves])


psum_p = standard_primitive("psum", lambda x, **_: x.shape, lambda x, **_: x.dtype)
lowering.register(psum_p, _all_reduce_lowering("sum"))


def _psum_batch(axis, vals, dims, *, axis_name):
    (x,), (d,) = vals, dims
    if axis.name not in axis_name:
        return psum_p.bind(x, axis_name=axis_name), d
    rest = tuple(n for n in axis_name if n != axis.name)
    if d is None:  # the same value in every example: the sum is size times it
        out = mul(x, full_like(x, axis.size))
    else:
        out = reduce_sum(x, (d,))
    return (psum_p.bind(out, axis_name=rest) if rest else out), None


batching.axis_batching_rules[psum_p] = _psum_batch


def _psum_jvp(primals, tangents, *, axis_name):
    (x,), (t,) = primals, tangents
    return psum_p.bind(x, axis_name=axis_name), psum_p.bind(ad.instantiate_zeros(t), axis_name=axis_name)


# every example's output is the sum of all inputs, so every input's cotangent is the sum of all
# output cotangents: psum is its own transpose
ad.jvp_rules[psum_p] = _psum_jvp
ad.transpose_rules[psum_p] = lambda ct, x, *, axis_name: [psum_p.bind(ct, axis_name=axis_name)]


def pmean(x, axis_name):
    """The mean of `x` over the examples of the named axis.

    Example: `vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i")(jnp.array([1., 3.]))` is
    `[-1., 1.]`.
    """
    _no_keys("pmean", x)
    n = axis_size(axis_name)
    leaves, tree = tree_flatten(psum(x, axis_name))
    return tree_unflatten(tree, [div(s, full_like(s, n)) for s in leaves])


# ----- pmax, pmin ------------------------------------------------------------------------------------

def pmax(x, axis_name):
    """The elementwise maximum of `x` over the examples of the named axis.

    Example: `vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(jnp.array([1., 3.]))` is `[3., 3.]`.
    """
    _no_keys("pmax", x)
    return _tree_collective(pmax_p, x, _names(axis_name))


def pmin(x, axis_name):
    """The elementwise minimum of `x` over the examples of the named axis.

    Example: `vmap(lambda v: lax.pmin(v, "i"), axis_name="i")(jnp.array([1., 3.]))` is `[1., 1.]`.
    """
    _no_keys("pmin", x)
    return _tree_collective(pmin_p, x, _names(axis_name))


def _extremum(name, reducer, kind):
    prim = standard_primitive(name, lambda x, **_: x.shape, lambda x, **_: x.dtype)
    lowering.register(prim, _all_reduce_lowering(kind))

    def batch(axis, vals, dims, *, axis_name):
        (x,), (d,) = vals, dims
        if axis.name not in axis_name:
            return prim.bind(x, axis_name=axis_name), d
        rest = tuple(n for n in axis_name if n != axis.name)
        out = x if d is None else reducer(x, (d,))
        return (prim.bind(out, axis_name=rest) if rest else out), None

    # the tangent of the examples holding the extreme (shared evenly on ties, as lax.max does)
    def jvp(primals, tangents, *, axis_name):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axis_name=axis_name)
        at_extreme = eq(x, ans)
        zeros = full_like(x, 0)
        picked = psum_p.bind(select_n(at_extreme, zeros, ad.instantiate_zeros(t)), axis_name=axis_name)
        count = psum_p.bind(select_n(at_extreme, zeros, full_like(x, 1)), axis_name=axis_name)
        return ans, div(picked, count)

    batching.axis_batching_rules[prim] = batch
    ad.jvp_rules[prim] = jvp
    return prim


pmax_p = _extremum("pmax", reduce_max, "max")
pmin_p = _extremum("pmin", reduce_min, "min")


# ----- all_gather ------------------------------------------------------------------------------------

@_moves_keys
def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every example's `x`, stacked along a new axis `axis` (or, with `tiled`, concatenated along
    the existing axis `axis`), the same in every example.

    Example: `vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(jnp.array([1., 3.]))` is
    `[[1., 3.], [1., 3.]]`.
    """
    names = _one_name("all_gather", axis_name)
    leaves, tree = tree_flatten(x)
    outs = []
    for leaf in leaves:
        ndim = aval_of(leaf).ndim
        if not -(ndim + (not tiled)) <= axis < ndim + (not tiled) or (tiled and ndim == 0):
            raise ValueError(f"all_gather: axis {axis} is out of range for an operand of rank {ndim}"
                             f"{' (tiled needs rank >= 1)' if tiled and ndim == 0 else ''}.")
        a = axis % (ndim + (not tiled))
        outs.append(all_gather_p.bind(leaf, axis_name=names, axis=a, tiled=bool(tiled),
                                      axis_size=batching.bound_axis(names[0]).size))
    return tree_unflatten(tree, outs)


def _all_gather_shape(x, *, axis_name, axis, tiled, axis_size):
    shape = list(x.shape)
    if tiled:
        shape[axis] *= axis_size
    else:
        shape.insert(axis, axis_size)
    return tuple(shape)


def _all_gather_lowering(ctx, x, *, axis_name, axis, tiled, axis_size):
    groups = _replica_groups(ctx, axis_name)
    aval = ctx.avals_in[0]
    if not tiled:  # gather along a new size-1 axis
        shape = list(aval.shape)
        shape.insert(axis, 1)
        aval = aval.update(shape=tuple(shape))
        x = ctx.b.op("stablehlo.reshape", [x], [aval])
    return ctx.b.op("stablehlo.all_gather", [x], [ctx.avals_out[0]],
                    {"all_gather_dim": f"{axis} : i64", "replica_groups": groups})


all_gather_p = standard_primitive("all_gather", _all_gather_shape, lambda x, **_: x.dtype)
lowering.register(all_gather_p, _all_gather_lowering)


def _all_gather_batch(mapped, vals, dims, **params):
    (x,), (d,) = vals, dims
    if mapped.name not in params["axis_name"]:  # another axis's gather: keep our batch axis in front
        x = batching.bdim_at_front(x, d, mapped.size)
        return all_gather_p.bind(x, **{**params, "axis": params["axis"] + 1}), 0
    at = params["axis"]
    stacked = batching.move_bdim(x, d, at, mapped.size)
    if params["tiled"]:
        shape = list(aval_of(stacked).shape)
        shape[at:at + 2] = [shape[at] * shape[at + 1]]
        stacked = reshape(stacked, tuple(shape))
    return stacked, None


batching.axis_batching_rules[all_gather_p] = _all_gather_batch


# example i's input reached every example's output at slot i: sum the cotangents over the
# examples and keep slot i, which is psum_scatter
def _all_gather_transpose(ct, x, *, axis_name, axis, tiled, axis_size):
    return [psum_scatter_p.bind(ct, axis_name=axis_name, scatter_dimension=axis, tiled=tiled, axis_size=axis_size)]


deflinear(all_gather_p, _all_gather_transpose)


# ----- psum_scatter --------------------------------------------------------------------------------------

def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """The psum of `x`, of which example i keeps only part i along `scatter_dimension`: slice i of
    that dimension (it must have the axis size; the dimension is removed), or with `tiled` the i-th
    of axis-size equal blocks (the size must be divisible by the axis size). `all_gather` of the
    result is `psum(x)`; booleans are counted (int32). `axis_index_groups` must be None (subgroups
    are not supported).

    Example: `vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(jnp.array([[1., 2.], [3., 4.]]))`
    is `[4., 6.]`.
    """
    names = _one_name("psum_scatter", axis_name)
    _no_groups("psum_scatter", axis_index_groups)
    _no_keys("psum_scatter", x)
    size = batching.bound_axis(names[0]).size
    leaves, tree = tree_flatten(x)
    outs = []
    for leaf in leaves:
        shape = aval_of(leaf).shape
        if not -len(shape) <= scatter_dimension < len(shape):
            raise ValueError(f"psum_scatter: scatter_dimension {scatter_dimension} is out of range for an operand "
                             f"of shape {shape}.")
        dim = scatter_dimension % len(shape)
        if not tiled and shape[dim] != size:
            raise ValueError(f"psum_scatter requires the size of scatter_dimension {dim} of the operand (shape "
                             f"{shape}) to equal the size of axis {names[0]!r}, {size}; or pass tiled=True to "
                             "scatter blocks of a dimension divisible by it.")
        if tiled and shape[dim] % size:
            raise ValueError(f"psum_scatter with tiled=True requires the size of scatter_dimension {dim} of the "
                             f"operand (shape {shape}) to be divisible by the size of axis {names[0]!r}, {size}.")
        if aval_of(leaf).dtype == dtypes.bool_:  # counted, as psum does
            leaf = convert_element_type(leaf, dtypes.int32)
        outs.append(psum_scatter_p.bind(leaf, axis_name=names, scatter_dimension=dim, tiled=bool(tiled),
                                        axis_size=size))
    return tree_unflatten(tree, outs)


def _psum_scatter_shape(x, *, axis_name, scatter_dimension, tiled, axis_size):
    shape = list(x.shape)
    if tiled:
        shape[scatter_dimension] //= axis_size
    else:
        del shape[scatter_dimension]
    return tuple(shape)


def _psum_scatter_lowering(ctx, x, *, axis_name, scatter_dimension, tiled, axis_size):
    groups = _replica_groups(ctx, axis_name)
    aval = ctx.avals_in[0]
    shape = list(aval.shape)
    shape[scatter_dimension] //= axis_size
    region = _scalar_region(ctx, aval.dtype, _reducer_op("sum", aval.dtype))
    out = ctx.b.op("stablehlo.reduce_scatter", [x], [aval.update(shape=tuple(shape))],
                   {"scatter_dimension": f"{scatter_dimension} : i64", "replica_groups": groups}, [region])
    if not tiled:  # drop the size-1 block dimension
        out = ctx.b.op("stablehlo.reshape", [out], [ctx.avals_out[0]])
    return out


psum_scatter_p = standard_primitive("psum_scatter", _psum_scatter_shape, lambda x, **_: x.dtype)
lowering.register(psum_scatter_p, _psum_scatter_lowering)


def _psum_scatter_batch(mapped, vals, dims, *, axis_name, scatter_dimension, tiled, axis_size):
    (x,), (d,) = vals, dims
    if mapped.name not in axis_name:
        x = batching.bdim_at_front(x, d, mapped.size)
        return psum_scatter_p.bind(x, axis_name=axis_name, scatter_dimension=scatter_dimension + 1, tiled=tiled,
                                   axis_size=axis_size), 0
    # the total, with example i's part found at index i of the scatter dimension: that dimension
    # (split into blocks when tiled) is the output's batch axis
    total = mul(x, full_like(x, mapped.size)) if d is None else reduce_sum(x, (d,))
    if tiled:
        shape = list(aval_of(total).shape)
        shape[scatter_dimension:scatter_dimension + 1] = [mapped.size, shape[scatter_dimension] // mapped.size]
        total = reshape(total, tuple(shape))
    return total, scatter_dimension


batching.axis_batching_rules[psum_scatter_p] = _psum_scatter_batch


# example j's part i of the input reached example i's output: its cotangent is gathered back
def _psum_scatter_transpose(ct, x, *, axis_name, scatter_dimension, tiled, axis_size):
    return [all_gather_p.bind(ct, axis_name=axis_name, axis=scatter_dimension, tiled=tiled, axis_size=axis_size)]


deflinear(psum_scatter_p, _psum_scatter_transpose)


# ----- all_to_all -----------------------------------------------------------------------------------------
# The primitive has the tiled (StableHLO) meaning: split `split_axis` into axis-size blocks, send
# block j to example j, concatenate the blocks received along `concat_axis` in example order. The
# untiled form is that, on an operand given a size-1 axis, followed by a squeeze (as in JAX).

@_moves_keys
def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Exchange parts of `x` between the examples of the named axis: example j receives part j of
    every example's `x` along `split_axis`, stacked in example order along a new axis at
    `concat_axis` of the result (the split axis, which must have the axis size, is removed). With
    `tiled`, the parts are blocks of `split_axis` (its size divisible by the axis size) and they are
    concatenated along the existing `concat_axis`. `axis_index_groups` must be None.

    Example: with `xs = jnp.arange(4.).reshape(2, 2)`,
    `vmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(xs)` is `xs.T`.
    """
    names = _one_name("all_to_all", axis_name)
    _no_groups("all_to_all", axis_index_groups)
    size = batching.bound_axis(names[0]).size
    leaves, tree = tree_flatten(x)
    outs = []
    for leaf in leaves:
        shape = aval_of(leaf).shape
        ndim = len(shape)
        for what, a in (("split_axis", split_axis), ("concat_axis", concat_axis)):
            if not -ndim <= a < ndim:
                raise ValueError(f"all_to_all: {what} {a} is out of range for an operand of shape {shape}.")
        split, concat = split_axis % ndim, concat_axis % ndim
        if not tiled and shape[split] != size:
            raise ValueError(f"all_to_all requires the size of split_axis {split} of the operand (shape {shape}) "
                             f"to equal the size of axis {names[0]!r}, {size}; or pass tiled=True to split it "
                             "into blocks.")
        if tiled and shape[split] % size:
            raise ValueError(f"all_to_all with tiled=True requires the size of split_axis {split} of the operand "
                             f"(shape {shape}) to be divisible by the size of axis {names[0]!r}, {size}.")
        if tiled or split == concat:
            outs.append(all_to_all_p.bind(leaf, axis_name=names, split_axis=split, concat_axis=concat,
                                          axis_size=size))
            continue
        # concat_axis is a position in the result, which lacks the split axis
        if split < concat:
            concat += 1
        else:
            split += 1
        y = all_to_all_p.bind(expand_dims(leaf, (concat,)), axis_name=names, split_axis=split, concat_axis=concat,
                              axis_size=size)
        outs.append(squeeze(y, (split,)))
    return tree_unflatten(tree, outs)


def _all_to_all_shape(x, *, axis_name, split_axis, concat_axis, axis_size):
    shape = list(x.shape)
    shape[split_axis] //= axis_size
    shape[concat_axis] *= axis_size
    return tuple(shape)


def _all_to_all_lowering(ctx, x, *, axis_name, split_axis, concat_axis, axis_size):
    groups = _replica_groups(ctx, axis_name)
    return ctx.b.op("stablehlo.all_to_all", [x], [ctx.avals_out[0]],
                    {"split_dimension": f"{split_axis} : i64", "concat_dimension": f"{concat_axis} : i64",
                     "split_count": f"{axis_size} : i64", "replica_groups": groups})


all_to_all_p = standard_primitive("all_to_all", _all_to_all_shape, lambda x, **_: x.dtype)
lowering.register(all_to_all_p, _all_to_all_lowering)


def _all_to_all_batch(mapped, vals, dims, *, axis_name, split_axis, concat_axis, axis_size):
    (x,), (d,) = vals, dims
    x = batching.bdim_at_front(x, d, mapped.size)
    if mapped.name not in axis_name:
        return all_to_all_p.bind(x, axis_name=axis_name, split_axis=split_axis + 1, concat_axis=concat_axis + 1,
                                 axis_size=axis_size), 0
    # x[s, ..., (j, k) at split, ...]: example s's block j goes to example j, so j becomes the batch
    # axis and s joins concat_axis as its major part
    n = mapped.size
    shape = list(aval_of(x).shape)
    shape[1 + split_axis:2 + split_axis] = [n, shape[1 + split_axis] // n]
    x = batching.moveaxis(reshape(x, tuple(shape)), 1 + split_axis, 0)  # [j, s, per-example dims with blocks k]
    x = batching.moveaxis(x, 1, 1 + concat_axis)                      # [j, ..., s, concat dim, ...]
    shape = list(aval_of(x).shape)
    shape[1 + concat_axis:3 + concat_axis] = [shape[1 + concat_axis] * shape[2 + concat_axis]]
    return reshape(x, tuple(shape)), 0


batching.axis_batching_rules[all_to_all_p] = _all_to_all_batch


# block j of example s's input became block s of example j's output: sending the cotangents back
# is the all_to_all with the two axes' roles swapped
def _all_to_all_transpose(ct, x, *, axis_name, split_axis, concat_axis, axis_size):
    return [all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis, concat_axis=split_axis,
                              axis_size=axis_size)]


deflinear(all_to_all_p, _all_to_all_transpose)


# ----- ppermute -------------------------------------------------------------------------------------------

@_moves_keys
def ppermute(x, axis_name, perm):
    """Send `x` from example to example: `perm` is a sequence of `(source, destination)` index pairs
    (each source and each destination at most once); example `destination` gets the `x` of example
    `source`, and an example that no pair reaches gets zeros.

    Example: a cyclic shift, `vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]),
    axis_name="i")(jnp.array([1., 2., 3.]))` is `[3., 1., 2.]`.
    """
    names = _one_name("ppermute", axis_name)
    size = batching.bound_axis(names[0]).size
    try:
        pairs = tuple((int(s), int(t)) for s, t in perm)
    except (TypeError, ValueError):
        raise TypeError(f"ppermute: perm must be a sequence of (source, destination) pairs of ints, got {perm!r}.") \
            from None
    sources, dests = [s for s, _ in pairs], [t for _, t in pairs]
    if len(set(sources)) != len(sources) or len(set(dests)) != len(dests):
        raise ValueError(f"ppermute: perm sources and destinations must be unique, got perm={pairs}.")
    bad = [i for i in sources + dests if not 0 <= i < size]
    if bad:
        raise ValueError(f"ppermute: perm indices must be in range(0, {size}) (the size of axis {names[0]!r}), got "
                         f"{bad[0]} in perm={pairs}.")
    return _tree_collective(ppermute_p, x, names, perm=pairs)


ppermute_p = standard_primitive("ppermute", lambda x, **_: x.shape, lambda x, **_: x.dtype)


def _ppermute_lowering(ctx, x, *, axis_name, perm):
    _replica_groups(ctx, axis_name)  # the axis must be this module's pmap axis
    if not perm:
        return lowering.full_like(ctx.b, 0, ctx.avals_out[0])
    pairs = "[" + ", ".join(lowering.int_list(p) for p in perm) + "]"
    return ctx.b.op("stablehlo.collective_permute", [x], [ctx.avals_out[0]],
                    {"source_target_pairs": f"dense<{pairs}> : tensor<{len(perm)}x2xi64>"})


lowering.register(ppermute_p, _ppermute_lowering)


def _ppermute_batch(mapped, vals, dims, *, axis_name, perm):
    (x,), (d,) = vals, dims
    if mapped.name not in axis_name:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
    n = mapped.size
    x = batching.bdim_at_front(x, d, n)
    source = np.zeros(n, np.int32)
    reached = np.zeros(n, bool)
    for s, t in perm:
        source[t], reached[t] = s, True
    out = index_take(x, (source,), (0,))
    if not reached.all():
        shape = aval_of(out).shape
        out = select_n(broadcast_in_dim(reached, shape, (0,)), full_like(out, 0), out)
    return out, 0


batching.axis_batching_rules[ppermute_p] = _ppermute_batch


# what went from s to t comes back from t to s
def _ppermute_transpose(ct, x, *, axis_name, perm):
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm))]


deflinear(ppermute_p, _ppermute_transpose)


# ----- axis_index --------------------------------------------------------------------------------------

def axis_index(axis_name):
    """The position (int32) of the current example along the named axis.

    Example: `vmap(lambda v: lax.axis_index("i"), axis_name="i")(jnp.zeros(3))` is `[0, 1, 2]`.
    """
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError("axis_index takes one axis name.")
    return axis_index_p.bind(axis_name=names)


def _axis_index_lowering(ctx, *, axis_name):
    _replica_groups(ctx, axis_name)  # the axis must be this module's pmap axis
    replica = ctx.b.op("stablehlo.replica_id", [], [lowering.tensor_type((), dtypes.uint32)])
    return ctx.b.op("stablehlo.convert", [replica], [ctx.avals_out[0]])


axis_index_p = standard_primitive("axis_index", lambda **_: (), lambda **_: np.dtype(dtypes.int32))
lowering.register(axis_index_p, _axis_index_lowering)
defnondiff(axis_index_p)


def _axis_index_batch(axis, vals, dims, *, axis_name):
    if axis.name not in axis_name:
        return axis_index_p.bind(axis_name=axis_name), None
    return iota(dtypes.int32, axis.size), 0


batching.axis_batching_rules[axis_index_p] = _axis_index_batch


# ----- pbroadcast, pcast, ragged_all_to_all, psend / precv (jax.lax's remaining collectives) ----------
# Compositions of the collectives above, so they run wherever those do (pmap and vmap with an axis
# name) and are differentiated and batched through their parts. JAX 0.10.2 lowers none of them on
# CPU (pbroadcast has no CPU rule, ragged_all_to_all is a GPU/TPU HLO, psend/precv are GPU only).

def pbroadcast(x, axis_name, source):
    """Every example gets the `x` of example `source` along the named axis (XLA's
    CollectiveBroadcast; a pytree of arrays works leafwise): `psum` of `x` masked to `source`.

    >>> core.vmap(lambda v: lax.pbroadcast(v, "i", 1), axis_name="i")(jnp.array([1., 2., 3.]))
    Array([2., 2., 2.], dtype=float32)
    """
    names = _one_name("pbroadcast", axis_name)
    size = batching.bound_axis(names[0]).size
    if not isinstance(source, (int, np.integer)) or isinstance(source, bool) or not 0 <= source < size:
        raise ValueError(f"pbroadcast: source must be an int in range(0, {size}) (the size of axis {names[0]!r}), "
                         f"got {source!r}.")
    is_source = eq(axis_index(names[0]), np.int32(source))

    def one(leaf):
        aval = aval_of(leaf)
        mask = broadcast_in_dim(is_source, aval.shape, ())
        value = leaf if aval.dtype != dtypes.bool_ else convert_element_type(leaf, dtypes.int32)
        out = psum_p.bind(select_n(mask, full_like(value, 0), value), axis_name=names)
        return out if aval.dtype != dtypes.bool_ else convert_element_type(out, dtypes.bool_)
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [one(leaf) for leaf in leaves])


_PCAST_TO = ("varying", "unreduced", "reduced")


def pcast(x, axis_name, *, to):
    """Change the varying-axis type of `x` (jax.lax.pcast). JAX tracks, inside `shard_map`, whether
    each value varies along a mesh axis; `pmap` and `vmap` have no such types (every value inside
    them is per example), so `to="varying"` and `to="reduced"` return `x` unchanged, as JAX's pcast
    does under pmap. `to="unreduced"` needs shard_map's unreduced type and raises NotImplementedError.

    >>> core.vmap(lambda v: lax.pcast(v, "i", to="varying"), axis_name="i")(jnp.array([1., 2.]))
    Array([1., 2.], dtype=float32)
    """
    if isinstance(axis_name, (set, frozenset)):
        raise TypeError(f"pcast: axis_name must be a name or a tuple of names, got the set {axis_name!r}.")
    if to not in _PCAST_TO:
        raise ValueError(f"pcast: to must be one of {_PCAST_TO}, got {to!r}.")
    if axis_name == () or axis_name is None:
        return x
    _names(axis_name)
    if to == "unreduced":
        raise NotImplementedError("pcast(to='unreduced') needs shard_map's unreduced varying-axis type, which purenn "
                                  "lacks (pmap and vmap values carry no varying-axis type); use psum to reduce.")
    return x


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes, *, axis_name,
                      axis_index_groups=None):
    """The ragged all_to_all of jax.lax: every example sends the slices
    `operand[input_offsets[i]:input_offsets[i] + send_sizes[i]]` (slice i goes to example
    `i // (K / axis_size)`, K = len(input_offsets)), and each receiver writes what it gets into
    `output` at the offset the sender gave in `output_offsets[i]`; the rest of `output` is kept.
    `recv_sizes` must be `all_to_all(send_sizes)`, as in JAX (it is checked for shape only).
    Built from `all_gather` and a scatter that drops the rows beyond each slice, so it runs
    under pmap and vmap alike, and is differentiable in `operand` and `output`.

    >>> f = lambda op, out, io, ss, oo, rs: lax.ragged_all_to_all(op, out, io, ss, oo, rs, axis_name="i")
    >>> core.vmap(f, axis_name="i")(jnp.array([[1., 2, 2], [3, 4, 0]]), jnp.zeros((2, 4)),
    ...     jnp.array([[0, 1], [0, 1]]), jnp.array([[1, 2], [1, 1]]), jnp.array([[0, 0], [1, 2]]),
    ...     jnp.array([[1, 1], [2, 1]]))
    Array([[1., 3., 0., 0.],
           [2., 2., 4., 0.]], dtype=float32)
    """
    from .slicing import GatherScatterMode, ScatterDimensionNumbers, scatter
    from .structural import dynamic_slice_in_dim
    from .elementwise import add, lt
    _no_groups("ragged_all_to_all", axis_index_groups)
    names = _one_name("ragged_all_to_all", axis_name)
    n = batching.bound_axis(names[0]).size
    op_aval, out_aval = aval_of(operand), aval_of(output)
    meta = {"input_offsets": input_offsets, "send_sizes": send_sizes, "output_offsets": output_offsets,
            "recv_sizes": recv_sizes}
    avals = {k: aval_of(v) for k, v in meta.items()}
    if op_aval.ndim < 1 or out_aval.ndim != op_aval.ndim or out_aval.shape[1:] != op_aval.shape[1:] \
            or out_aval.dtype != op_aval.dtype:
        raise TypeError(f"ragged_all_to_all: operand and output must be arrays of one dtype and rank >= 1 that agree "
                        f"beyond their leading axis, got operand {op_aval.str_short()} and output "
                        f"{out_aval.str_short()}.")
    shapes = {a.shape for a in avals.values()}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1 or any(a.dtype.kind not in "iu" for a in avals.values()):
        listed = ", ".join(f"{k}: {a.str_short()}" for k, a in avals.items())
        raise TypeError(f"ragged_all_to_all: input_offsets, send_sizes, output_offsets and recv_sizes must be 1-D "
                        f"integer arrays of one length, got {listed}.")
    k = next(iter(shapes))[0]
    if k % n:
        raise ValueError(f"ragged_all_to_all: the number of slices ({k}) must be a multiple of the size of axis "
                         f"{names[0]!r} ({n}).")
    per = k // n
    rows = op_aval.shape[0]
    me = mul(axis_index(names[0]), np.int32(per))
    # what every sender sends to this example: its slices me*per .. me*per + per - 1, shape (n, per)
    mine = [dynamic_slice_in_dim(all_gather_p.bind(convert_element_type(meta[key], dtypes.int32), axis_name=names,
                                                   axis=0, tiled=False, axis_size=n), me, per, axis=1)
            for key in ("input_offsets", "send_sizes", "output_offsets")]
    starts, sizes, targets = (broadcast_in_dim(v, (n, per, rows), (0, 1)) for v in mine)
    r = broadcast_in_dim(iota(dtypes.int32, rows), (n, per, rows), (2,))
    senders = broadcast_in_dim(iota(dtypes.int32, n), (n, per, rows), (0,))
    gathered = all_gather_p.bind(operand, axis_name=names, axis=0, tiled=False, axis_size=n)  # (n, rows, ...)
    src = reshape(add(starts, r), (n, per, rows, 1))
    src_index = _concat_last(reshape(senders, (n, per, rows, 1)), src)
    trailing = op_aval.shape[1:]
    values = _gather_rows(gathered, src_index, trailing)  # (n, per, rows, ...)
    # rows past a slice's size go to an out-of-range row, which the scatter drops
    dst = select_n(lt(r, sizes), full_like(r, out_aval.shape[0]), add(targets, r))
    dnums = ScatterDimensionNumbers(update_window_dims=tuple(range(3, 3 + len(trailing))),
                                    inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    return scatter(output, reshape(dst, (n, per, rows, 1)), values, dnums, mode=GatherScatterMode.FILL_OR_DROP)


def _concat_last(a, b):
    from .structural import concatenate
    return concatenate([a, b], aval_of(a).ndim - 1)


def _gather_rows(gathered, index, trailing):
    """gathered[index[..., 0], index[..., 1]] with the trailing dimensions kept (indices clamped)."""
    from .slicing import GatherDimensionNumbers, GatherScatterMode, gather
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(3, 3 + len(trailing))), collapsed_slice_dims=(0, 1),
                                   start_index_map=(0, 1))
    return gather(gathered, index, dnums, (1, 1) + tuple(trailing), mode=GatherScatterMode.CLIP)


def psend(x, axis_name, perm):
    """jax.lax.psend: a point-to-point send (XLA's Send) that returns a token for `precv`. XLA
    implements Send/Recv between devices only on GPU (JAX 0.10.2 raises on CPU too); purenn's
    pmap runs on CPU, so this raises NotImplementedError. `lax.ppermute(x, axis_name, perm)` is
    the send and the receive in one collective."""
    raise NotImplementedError("psend: point-to-point Send/Recv between devices is implemented by XLA only on GPU, "
                              "which purenn's pmap does not run on; use lax.ppermute(x, axis_name, perm), which sends "
                              "and receives in one collective.")


def precv(token, out_shape, axis_name, perm):
    """jax.lax.precv: the receive matching `psend` (XLA's Recv). Not implemented, as `psend`: use
    `lax.ppermute`."""
    raise NotImplementedError("precv: point-to-point Send/Recv between devices is implemented by XLA only on GPU, "
                              "which purenn's pmap does not run on; use lax.ppermute(x, axis_name, perm), which sends "
                              "and receives in one collective.")

"""Collectives over named axes: `psum`, `pmean`, `pmax`, `pmin`, `all_gather`, `axis_index`.

A collective combines a value across the examples of a named mapped axis: the axis a
`vmap(..., axis_name=name)` (or, with issue 6, a `pmap`) binds. Under vmap the examples are the
lanes of one batched array, so each collective's batching rule is a reduction or a reshaping of
the batch axis; the same code then runs under pmap, where the lanes are devices. A collective
naming an axis that nothing binds is an error that lists the names that are bound.
"""
import numpy as np

from .. import dtypes
from ..interpreters import ad, batching, lowering
from ..tree_util import tree_flatten, tree_unflatten
from ._base import aval_of, defnondiff, standard_primitive
from .elementwise import div, eq, mul, select_n
from .reductions import reduce_max, reduce_min, reduce_sum
from .structural import dynamic_slice_in_dim, full_like, iota, reshape

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "axis_size"]


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


def _unbound_lowering(name):
    def rule(ctx, *args, axis_name, **params):
        raise NameError(f"{name} over axis {axis_name} cannot be compiled: the axis is not bound by a vmap "
                        "or pmap around this program (it was traced inside one, then run outside it).")
    return rule


# ----- psum --------------------------------------------------------------------------------------

def psum(x, axis_name):
    """The sum of `x` over every example of the named axis (a pytree of arrays works leafwise).

    Example: `vmap(lambda v: v / lax.psum(v, "i"), axis_name="i")(jnp.array([1., 3.]))` is
    `[0.25, 0.75]`.
    """
    return _tree_collective(psum_p, x, _names(axis_name))


psum_p = standard_primitive("psum", lambda x, **_: x.shape, lambda x, **_: x.dtype)
lowering.register(psum_p, _unbound_lowering("psum"))


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
    n = axis_size(axis_name)
    leaves, tree = tree_flatten(psum(x, axis_name))
    return tree_unflatten(tree, [div(s, full_like(s, n)) for s in leaves])


# ----- pmax, pmin ------------------------------------------------------------------------------------

def pmax(x, axis_name):
    """The elementwise maximum of `x` over the examples of the named axis.

    Example: `vmap(lambda v: lax.pmax(v, "i"), axis_name="i")(jnp.array([1., 3.]))` is `[3., 3.]`.
    """
    return _tree_collective(pmax_p, x, _names(axis_name))


def pmin(x, axis_name):
    """The elementwise minimum of `x` over the examples of the named axis.

    Example: `vmap(lambda v: lax.pmin(v, "i"), axis_name="i")(jnp.array([1., 3.]))` is `[1., 1.]`.
    """
    return _tree_collective(pmin_p, x, _names(axis_name))


def _extremum(name, reducer):
    prim = standard_primitive(name, lambda x, **_: x.shape, lambda x, **_: x.dtype)
    lowering.register(prim, _unbound_lowering(name))

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


pmax_p = _extremum("pmax", reduce_max)
pmin_p = _extremum("pmin", reduce_min)


# ----- all_gather ------------------------------------------------------------------------------------

def all_gather(x, axis_name, *, axis=0, tiled=False):
    """Every example's `x`, stacked along a new axis `axis` (or, with `tiled`, concatenated along
    the existing axis `axis`), the same in every example.

    Example: `vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(jnp.array([1., 3.]))` is
    `[[1., 3.], [1., 3.]]`.
    """
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError("all_gather over several axis names at once is not supported; gather over "
                                  "one name at a time.")
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


all_gather_p = standard_primitive("all_gather", _all_gather_shape, lambda x, **_: x.dtype)
lowering.register(all_gather_p, _unbound_lowering("all_gather"))


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


def _all_gather_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    return all_gather_p.bind(x, **params), all_gather_p.bind(ad.instantiate_zeros(t), **params)


def _all_gather_transpose(ct, x, *, axis_name, axis, tiled, axis_size):
    # example i's input reached every example's output at slot i: sum the cotangents, take slot i
    total = psum_p.bind(ct, axis_name=axis_name)
    index = axis_index_p.bind(axis_name=axis_name)
    if tiled:
        size = x.aval.shape[axis]
        return [dynamic_slice_in_dim(total, mul(index, size), size, axis)]
    piece = dynamic_slice_in_dim(total, index, 1, axis)
    return [reshape(piece, x.aval.shape)]


ad.jvp_rules[all_gather_p] = _all_gather_jvp
ad.transpose_rules[all_gather_p] = _all_gather_transpose


# ----- axis_index --------------------------------------------------------------------------------------

def axis_index(axis_name):
    """The position (int32) of the current example along the named axis.

    Example: `vmap(lambda v: lax.axis_index("i"), axis_name="i")(jnp.zeros(3))` is `[0, 1, 2]`.
    """
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError("axis_index takes one axis name.")
    return axis_index_p.bind(axis_name=names)


axis_index_p = standard_primitive("axis_index", lambda **_: (), lambda **_: np.dtype(dtypes.int32))
lowering.register(axis_index_p, _unbound_lowering("axis_index"))
defnondiff(axis_index_p)


def _axis_index_batch(axis, vals, dims, *, axis_name):
    if axis.name not in axis_name:
        return axis_index_p.bind(axis_name=axis_name), None
    return iota(dtypes.int32, axis.size), 0


batching.axis_batching_rules[axis_index_p] = _axis_index_batch

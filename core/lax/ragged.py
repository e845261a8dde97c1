"""Ragged contractions: `ragged_dot` and `ragged_dot_general`, matrix products where one dimension
of `lhs` is cut into consecutive groups (of sizes `group_sizes`) that each meet their own slice of
`rhs` (a mixture-of-experts layer: the rows routed to expert i times expert i's weights).

Written, as JAX writes its CPU and GPU fallback, over `dot_general`: the ragged dimension is
expanded into a leading group axis with every element outside its group masked to zero, and the
group axis is then contracted (ragged non-contracting mode), made a batch axis (ragged contracting
mode) or not needed (ragged batch mode). So every transformation (grad, vmap, jit) comes from
dot_general's, select_n's and broadcast_in_dim's rules, and the cost is `g` dense products.
"""
import dataclasses

import numpy as np

from ._base import aval_of
from .dot import dot_general
from .elementwise import bitwise_and, le, lt, select_n, sub
from .reductions import cumsum
from .structural import broadcast_in_dim, broadcasted_iota, full, transpose

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """The dimensions of a `ragged_dot_general`, as `jax.lax.RaggedDotDimensionNumbers`:
    `dot_dimension_numbers` (those of `dot_general`), `lhs_ragged_dimensions` (exactly one lhs
    dimension, cut into groups) and `rhs_group_dimensions` (the rhs dimension indexing the groups,
    in ragged non-contracting mode; empty otherwise). Hashable, with every field a tuple.

    >>> lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0]).rhs_group_dimensions
    (0,)
    """

    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        (lc, rc), (lb, rb) = dot_dimension_numbers
        object.__setattr__(self, "dot_dimension_numbers",
                           ((_ints(lc), _ints(rc)), (_ints(lb), _ints(rb))))
        object.__setattr__(self, "lhs_ragged_dimensions", _ints(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", _ints(rhs_group_dimensions))


def _ints(seq):
    return tuple(int(d) for d in seq)


# ragged_dot's: lhs (m, k) ragged along m, rhs (g, k, n) with groups along 0
_RAGGED_DOT_DIMS = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None, group_offset=None):
    """The (m, n) product of `lhs` (m, k) with `rhs` (g, k, n) where the rows of `lhs` form `g`
    consecutive groups of sizes `group_sizes` (an integer (g,) array) and the rows of group i are
    multiplied by `rhs[i]`; rows after the last group are zero. `precision` and
    `preferred_element_type` are those of `dot_general`.

    >>> lhs = jnp.arange(6.0).reshape(3, 2)
    >>> rhs = jnp.stack([jnp.eye(2), 10 * jnp.eye(2)])
    >>> lax.ragged_dot(lhs, rhs, jnp.array([1, 2])).tolist()
    [[0.0, 1.0], [20.0, 30.0], [40.0, 50.0]]
    """
    return ragged_dot_general(lhs, rhs, group_sizes, _RAGGED_DOT_DIMS, precision=precision,
                              preferred_element_type=preferred_element_type, group_offset=group_offset)


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None):
    """`dot_general` with one lhs dimension cut into groups of sizes `group_sizes`
    (`ragged_dot_dimension_numbers` is a `RaggedDotDimensionNumbers`). Three modes, by the kind of
    the lhs ragged dimension, as in JAX:

    1. non-contracting (`m`): rhs has a group dimension; each group of lhs rows meets its rhs
       slice; the result has dot_general's shape.
    2. contracting (`k`): each group contracts only its own part of k; the result is dot_general's
       with a leading dimension of size g.
    3. batch: a plain dot_general.

    `group_sizes` is (g,) or has the lhs dimensions outer to the ragged one (batch dimensions first)
    before g. `group_offset` (a TPU feature, unimplemented in JAX on CPU and GPU too) is refused.

    >>> dn = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], [])
    >>> lax.ragged_dot_general(jnp.ones((1, 3)), jnp.ones((3, 2)), jnp.array([1, 2]), dn).tolist()
    [[[1.0, 1.0]], [[2.0, 2.0]]]
    """
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not implemented (JAX implements it on TPU "
                                  "only); slice lhs, rhs and group_sizes to the groups you need instead.")
    dn = ragged_dot_dimension_numbers
    if not isinstance(dn, RaggedDotDimensionNumbers):
        raise TypeError(f"ragged_dot_general: ragged_dot_dimension_numbers must be a lax.RaggedDotDimensionNumbers, "
                        f"got {dn!r}.")
    la, ra, ga = aval_of(lhs), aval_of(rhs), aval_of(group_sizes)
    if ga.dtype.kind not in "iu":
        raise TypeError(f"ragged_dot_general: group_sizes must be integers, got "
                        f"{np.dtype(ga.dtype).name}{list(ga.shape)}.")
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError(f"ragged_dot_general expects exactly one lhs ragged dimension, got "
                        f"{dn.lhs_ragged_dimensions}.")
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    ragged = dn.lhs_ragged_dimensions[0]
    if not 0 <= ragged < la.ndim:
        raise TypeError(f"ragged_dot_general: lhs ragged dimension {ragged} is out of range for lhs of rank "
                        f"{la.ndim}.")
    lhs_free = [d for d in range(la.ndim) if d not in lc and d not in lb]
    mode = "noncontracting" if ragged in lhs_free else "contracting" if ragged in lc else "batch"
    kw = dict(precision=precision, preferred_element_type=preferred_element_type)
    if mode == "batch":
        return dot_general(lhs, rhs, dn.dot_dimension_numbers, **kw)
    inc = lambda dims: tuple(d + 1 for d in dims)  # noqa: E731  (dimensions after a new leading axis)
    if mode == "noncontracting":
        if len(dn.rhs_group_dimensions) != 1:
            raise TypeError("ragged_dot_general: in ragged non-contracting mode rhs needs exactly one group "
                            f"dimension, got rhs_group_dimensions={dn.rhs_group_dimensions}.")
        group_dim = dn.rhs_group_dimensions[0]
        if not 0 <= group_dim < ra.ndim or group_dim in rc or group_dim in rb:
            raise TypeError(f"ragged_dot_general: rhs group dimension {group_dim} must be a free dimension of rhs "
                            f"(shape {ra.shape}, contracting {rc}, batch {rb}).")
        num_groups = ra.shape[group_dim]
        prefix = list(lb) + lhs_free[:lhs_free.index(ragged)]
        gs = _group_sizes(group_sizes, ga, [la.shape[d] for d in prefix], num_groups)
        # the group axis of the expanded lhs contracts with rhs's group dimension: each row meets
        # only its own group's slice, the others having been masked to zero
        return dot_general(_expand(lhs, ragged, gs, prefix), rhs,
                           ((inc(lc) + (0,), rc + (group_dim,)), (inc(lb), rb)), **kw)
    if dn.rhs_group_dimensions:
        raise TypeError("ragged_dot_general: in ragged contracting mode rhs has no group dimension, got "
                        f"rhs_group_dimensions={dn.rhs_group_dimensions}.")
    rhs_ragged = rc[lc.index(ragged)]
    num_groups = ga.shape[-1] if ga.ndim else 0
    prefix = list(lb) + list(lc[:lc.index(ragged)])
    rhs_prefix = list(rb) + list(rc[:rc.index(rhs_ragged)])
    gs = _group_sizes(group_sizes, ga, [la.shape[d] for d in prefix], num_groups)
    # the group axis becomes a batch axis: group i contracts only its own part of the ragged dimension
    return dot_general(_expand(lhs, ragged, gs, prefix), _expand(rhs, rhs_ragged, gs, rhs_prefix),
                       ((inc(lc), inc(rc)), ((0,) + inc(lb), (0,) + inc(rb))), **kw)


def _group_sizes(group_sizes, aval, prefix_shape, num_groups):
    """`group_sizes` as an array of shape prefix_shape + (g,)."""
    want = tuple(prefix_shape) + (num_groups,)
    if aval.shape == (num_groups,):
        return broadcast_in_dim(group_sizes, want, (len(want) - 1,))
    if aval.shape != want:
        raise TypeError(f"ragged_dot_general: group_sizes must have shape ({num_groups},) or {want} (the lhs "
                        f"dimensions outer to the ragged one, then the number of groups), got "
                        f"{np.dtype(aval.dtype).name}{list(aval.shape)}.")
    return group_sizes


def _expand(x, dim, gs, prefix):
    """`x` with a leading group axis of size g: slice j keeps the elements of `x` whose index along
    `dim` lies in group j (given by the sizes `gs`, one row of sizes per index of the `prefix`
    dimensions of x) and is zero elsewhere."""
    xa, ga = aval_of(x), aval_of(gs)
    g = ga.shape[-1]
    shape = (g,) + xa.shape
    ends = cumsum(gs, axis=ga.ndim - 1)
    starts = sub(ends, gs)
    # the sizes' axes in the order of x's dimensions they index, the group axis first
    order = [int(i) for i in np.argsort(prefix)]
    perm = (ga.ndim - 1,) + tuple(order)
    dims = (0,) + tuple(1 + prefix[i] for i in order)
    starts, ends = (broadcast_in_dim(transpose(v, perm), shape, dims) for v in (starts, ends))
    index = broadcasted_iota(ga.dtype, shape, dim + 1)
    inside = bitwise_and(le(starts, index), lt(index, ends))
    expanded = broadcast_in_dim(x, shape, tuple(range(1, xa.ndim + 1)))
    return select_n(inside, full(shape, 0, xa.dtype), expanded)


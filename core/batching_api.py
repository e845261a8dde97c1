"""`vmap`: vectorize a function along an axis of its arguments.

The work is done by the batching interpreter (`core/interpreters/batching.py`); this module turns
pytrees of arguments and the `in_axes` / `out_axes` specifications into flat lists, checks them,
and reports mistakes with the argument they concern (docs/reliability.md F25, F26).
"""
import functools
import inspect

import numpy as np

from . import traceback_util
from .array import Array, to_array
from .interpreters.batching import vmap_flat
from .tokens import Token, is_token
from .trace import Tracer
from .tree_util import (is_typed_leaf, keystr, physical_flatten, tree_flatten, tree_flatten_with_path, tree_leaves,
                        tree_structure, tree_unflatten)

__all__ = ["vmap"]


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None):
    """Vectorize `fun` along an axis of its inputs: `vmap(f)(xs)` stacks `f(x)` over the rows of
    `xs`, computed at once by batched primitives rather than a loop.

    `in_axes` says which axis of each positional argument is mapped: an int (negative counts from
    the end), None (not mapped: every example sees the whole argument), or a tuple with one entry
    per argument, each a pytree prefix of that argument. Keyword arguments are mapped over axis 0.
    `out_axes` places the mapped axis in the outputs the same way (None: the output must not depend
    on the mapped inputs). `axis_name` names the mapped axis for collectives (`lax.psum(x, name)`);
    `axis_size` gives the size when no argument is mapped.

    Example: `vmap(jnp.dot, in_axes=(0, None))(xs, w)` is the matrix of `dot(x, w)` for each row x.
    """
    if not callable(fun):
        raise TypeError(f"vmap: the function to map must be callable, got {fun!r}.")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)  # as in JAX: a top-level list means one entry per argument
    _check_axes_spec(in_axes, "in_axes")
    _check_axes_spec(out_axes, "out_axes")
    name = getattr(fun, "__name__", None) or type(fun).__name__

    @functools.wraps(fun)
    @traceback_util.api_boundary
    def batched(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
                f"arguments passed to the function, but got len(in_axes)={len(in_axes)}, len(args)={len(args)}.")
        # Axes are checked and made non-negative on the leaves the user sees, so that a typed key
        # of shape S (one leaf) is mapped along an axis of S; its traced data, S + (2,), has the
        # same non-negative axes (core/tree_util.py, "The physical view").
        leaves, in_tree = physical_flatten((args, kwargs))
        axes = _flat_in_axes(in_axes, args, kwargs)
        leaves = [_as_operand(x, name) for x in leaves]
        axes = [_normalize_axis(ax, x, i, in_tree, fun) for i, (ax, x) in
                enumerate(zip(axes, _logical_leaves((args, kwargs), leaves)))]
        size = _mapped_size(leaves, axes, in_tree, axis_size, fun)
        store = {}

        def flat_fun(*flat):
            a, k = tree_unflatten(in_tree, flat)
            out = fun(*a, **k)
            store["ranks"] = [x.ndim if is_typed_leaf(x) else None for x in tree_leaves(out)]
            out_leaves, store["tree"] = physical_flatten(out)
            return [_as_operand(x, name, output=True) for x in out_leaves]

        def flat_out_axes(n_out):  # the output tree is known once the function has run
            skeleton = tree_unflatten(store["tree"], [object()] * n_out)
            axes = _broadcast_prefix(out_axes, skeleton, "out_axes", name)
            return [_typed_out_axis(ax, r, i, name) for i, (ax, r) in enumerate(zip(axes, store["ranks"]))]

        outs = vmap_flat(flat_fun, leaves, axes, flat_out_axes, size, axis_name, name)
        return tree_unflatten(store["tree"], outs)

    return batched


def _check_axes_spec(spec, what, transform="vmap"):
    leaves, _ = tree_flatten(spec, is_leaf=lambda x: x is None)
    for ax in leaves:
        if ax is not None and (not isinstance(ax, (int, np.integer)) or isinstance(ax, bool)):
            raise TypeError(f"{transform} {what} must be an int, None, or (nested) container with those types as "
                            f"leaves, but got {ax!r} of type {type(ax).__name__}.")


def _broadcast_prefix(prefix, tree, what, fun_name, transform="vmap"):
    """One axis per leaf of `tree`, from `prefix`, a pytree prefix of it (None counts as a leaf)."""
    prefix_def = tree_structure(prefix, is_leaf=lambda x: x is None)
    prefix_leaves = tree_flatten(prefix, is_leaf=lambda x: x is None)[0]
    try:
        subtrees = prefix_def.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise ValueError(
            f"{transform} {what} specification must be a tree prefix of the corresponding value, got specification "
            f"{prefix!r} for value tree {tree!r} (mapping {fun_name}). {e}") from None
    out = []
    for ax, sub in zip(prefix_leaves, subtrees, strict=True):
        out.extend([ax] * tree_structure(sub).num_leaves)
    return out


def _flat_in_axes(in_axes, args, kwargs):
    args_tree = tree_structure(args)
    if isinstance(in_axes, tuple):
        flat = _broadcast_prefix(in_axes, args, "in_axes", "")
    else:
        flat = [in_axes] * args_tree.num_leaves
    return flat + [0] * tree_structure(kwargs).num_leaves


def _logical_leaves(tree, operands):
    """The leaves of `tree` as the user sees them: a typed key where there is one, else the
    operand (Array or tracer) in `operands`, the leaves of tree's physical view, in order."""
    return [x if is_typed_leaf(x) else op for x, op in zip(tree_leaves(tree), operands, strict=True)]


def _typed_out_axis(ax, rank, i, fun_name, transform="vmap"):
    """Output `i`'s axis `ax` (from out_axes) as an axis of the traced data: for a typed key whose
    keys have rank `rank` per example, `ax` counts its key axes (rank + 1 with the mapped one)."""
    if ax is None or rank is None:
        return ax
    if not -(rank + 1) <= ax < rank + 1:
        raise ValueError(f"{transform} of {fun_name}: out_axes={ax} is out of range for output {i}, a PRNG key array "
                         f"of rank {rank} per example (the mapped axis makes it {rank + 1}).")
    return int(ax) % (rank + 1)


def _as_operand(x, fun_name, output=False):
    if isinstance(x, (Array, Tracer, Token)):
        return x
    if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)):
        return to_array(x)
    where = "returned" if output else "was passed"
    raise TypeError(f"vmap of {fun_name}: a value of type {type(x).__name__} {where}; vmap maps arrays, "
                    "scalars and pytrees of them.")


def _leaf_description(i, in_tree, fun):
    """'argument x' / "argument p['w']" / 'keyword argument scale' for flat input leaf i."""
    skeleton = tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
    path = [p for p, _ in tree_flatten_with_path(skeleton)[0]][i]
    (_, k), rest = path[:2], path[2:]
    if path[0].idx == 1:
        return f"keyword argument {k.key}{keystr(rest)}"
    try:
        params = [p for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        name = params[k.idx].name
    except (TypeError, ValueError, IndexError):
        name = f"args[{k.idx}]"
    return f"argument {name}{keystr(rest)}"


def _normalize_axis(ax, x, i, in_tree, fun, transform="vmap"):
    if ax is None:
        return None
    if is_token(x):
        raise ValueError(f"{transform} was requested to map its {_leaf_description(i, in_tree, fun)} along axis "
                         f"{ax}, but it is a token, which has no axes (one token orders the effects of every "
                         "example); give it in_axes None.")
    ndim = x.ndim
    if not -ndim <= ax < ndim:
        raise ValueError(
            f"{transform} was requested to map its {_leaf_description(i, in_tree, fun)} along axis {ax}, which "
            f"implies that its rank should be at least {max(ax + 1, -ax)}, but is only {ndim} (its shape is "
            f"{tuple(x.shape)}).")
    return int(ax) % ndim


def _mapped_size(leaves, axes, in_tree, axis_size, fun, transform="vmap"):
    sizes = [(i, x.shape[ax]) for i, (x, ax) in enumerate(zip(leaves, axes)) if ax is not None]
    if not sizes:
        if axis_size is None:
            raise ValueError(f"{transform} must have at least one non-None value in in_axes (or be given axis_size).")
        return int(axis_size)
    distinct = {s for _, s in sizes}
    if axis_size is not None:
        distinct.add(int(axis_size))
    if len(distinct) == 1:
        return distinct.pop()
    groups = {}
    for i, s in sizes:
        groups.setdefault(s, []).append(i)
    lines = []
    for s, members in groups.items():
        i = members[0]
        shape = ",".join(map(str, leaves[i].shape))
        what = f"axis {axes[i]} of {_leaf_description(i, in_tree, fun)} of type {leaves[i].dtype.name}[{shape}]"
        if len(members) == 1:
            lines.append(f"  * one axis had size {s}: {what};")
        else:
            lines.append(f"  * some axes ({len(members)} of them) had size {s}, e.g. {what};")
    if axis_size is not None:
        lines.append(f"  * axis_size was given as {axis_size};")
    raise ValueError(f"{transform} got inconsistent sizes for array axes to be mapped:\n" + "\n".join(lines))

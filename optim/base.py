"""The optimizer contract (mirrors `jax.example_libraries.optimizers`, so a program ports by
changing its imports).

An optimizer is an `Optimizer(init_fn, update_fn, params_fn)`, a NamedTuple that unpacks like the
tuple `(init, update, get_params)`:

    opt_state = init_fn(params)                  # params: any pytree of arrays
    opt_state = update_fn(step, grads, opt_state)  # grads: the same tree structure as params
    params = params_fn(opt_state)                # get_params(init_fn(p)) == p

`step` is the integer step count (0 for the first update); it feeds step-size schedules. The
state is an `OptimizerState`, a pytree whose leaves are arrays only (so it passes through `jit`,
`pmap` and checkpoints); its structure never changes from one update to the next.

Optimizers are written for ONE array and lifted to pytrees by the `@optimizer` decorator: the
decorated function returns `(init, update, get_params)` acting on a single array and its state
(any pytree of arrays, e.g. a NamedTuple with named fields), and the decorator applies them leaf
by leaf. Mismatched gradient trees and state structures are errors (docs/reliability.md F23, F24),
and so is a gradient leaf whose shape differs from its parameter's (the error names the leaf's
path in the tree, e.g. `['w']`, and both shapes): broadcasting it would silently change the
parameter's shape.
"""
import functools
from collections import namedtuple

import numpy as np

from core import tree_util
from core.tree_util import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

__all__ = ["Optimizer", "OptimizerState", "optimizer", "JoinPoint", "unpack_optimizer_state",
           "pack_optimizer_state"]

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])


class OptimizerState(namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])):
    """The state of an optimizer over a parameter tree: for each parameter leaf, the flat leaves of
    its per-array state (`packed_state`), the parameter tree's structure (`tree_def`) and each
    per-array state's structure (`subtree_defs`). Only `packed_state` holds arrays (pytree children);
    the structures are static data."""
    __slots__ = ()


tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))


def optimizer(opt_maker):
    """Lift an optimizer written for one array to one over pytrees of arrays.

    `opt_maker(*args, **kwargs)` returns `(init, update, get_params)` for a single array: `init(x)`
    gives its state, `update(step, g, state)` the next state, `get_params(state)` the array. The
    decorated maker returns an `Optimizer` over any parameter pytree.

    Example:
        >>> @optimizer
        ... def plain_sgd(step_size):
        ...     return (lambda x: x, lambda i, g, x: x - step_size * g, lambda x: x)
        >>> init, update, get_params = plain_sgd(0.1)
    """
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            states = [init(x0) for x0 in x0_flat]
            packed, subtrees = _flatten_each(states)
            return OptimizerState(packed, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            packed, tree, subtrees = opt_state
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match the parameter tree "
                    f"structure with which it was initialized: parameter tree {tree} and grad tree "
                    f"{grad_tree_def}. Pass the gradient of the loss with respect to exactly the parameters "
                    "given to init_fn.")
            states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, packed)]
            _check_leaf_shapes(grad_tree, grad_flat, [get_params(state) for state in states])
            new_states = [update(i, g, state) for g, state in zip(grad_flat, states)]
            new_packed, new_subtrees = _flatten_each(new_states)
            for old, new in zip(subtrees, new_subtrees):
                if old != new:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not match its input "
                        f"structure: input {old} and output {new}. A per-array update must return its state "
                        "in the same structure init created.")
            return OptimizerState(new_packed, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            packed, tree, subtrees = opt_state
            states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, packed)]
            return tree_unflatten(tree, [get_params(s) for s in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _check_leaf_shapes(grad_tree, grad_flat, params_flat):
    """Each gradient leaf must have its parameter's shape (shapes are static: no cost under jit)."""
    for k, (g, p) in enumerate(zip(grad_flat, params_flat)):
        if np.shape(g) != np.shape(p):
            path = keystr(tree_flatten_with_path(grad_tree)[0][k][0]) or "(the root)"
            raise ValueError(
                f"optimizer update: the gradient for the parameter {path} has shape {np.shape(g)}, but the "
                f"parameter has shape {np.shape(p)}. Each gradient leaf must have its parameter's shape: pass the "
                "gradient of the loss with respect to exactly the parameters given to init_fn.")


def _flatten_each(states):
    packed, subtrees = [], []
    for s in states:
        leaves, sub = tree_flatten(s)
        packed.append(leaves)
        subtrees.append(sub)
    return packed, tuple(subtrees)  # the structures are static (hashable) data of the state


# ----- minmax's marked-pytree view of a state ------------------------------------------------------
#
# An OptimizerState keeps its per-array states flattened (leaves + PyTreeDefs). minmax's
# `unpack_optimizer_state` turns it into ONE nested pytree: the parameter tree with, at each
# parameter leaf, a `JoinPoint` holding that parameter's per-array state tree. `JoinPoint` is NOT a
# registered pytree node, so a flatten of the marked tree stops at it; the marked tree holds no
# PyTreeDefs, only containers and arrays, which is what made it pickle-able for minmax users.
# (Our pickle-free saving is optim/utils.py's `optimizer_state_to_arrays`.)

class JoinPoint:
    """Marks where the parameter tree of an unpacked optimizer state ends and one parameter's
    per-array state tree begins (`subtree`). A leaf to `tree_flatten`; iterable like minmax's, so
    `(state,) = join_point` works.

    Example:
        >>> JoinPoint((1.0, 2.0)).subtree
        (1.0, 2.0)
    """
    __slots__ = ("subtree",)

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree

    def __eq__(self, other):
        return isinstance(other, JoinPoint) and tree_util.tree_all(
            tree_util.tree_map(lambda a, b: bool(np.array_equal(a, b)), self.subtree, other.subtree))

    __hash__ = None

    def __repr__(self):
        return f"JoinPoint({self.subtree!r})"


def unpack_optimizer_state(opt_state):
    """Convert an `OptimizerState` into a marked pytree, as minmax does: the parameter tree with a
    `JoinPoint(per_array_state)` at each parameter leaf. The marked tree holds only containers,
    NamedTuples and arrays (no PyTreeDefs), so it can be pickled or walked with tree_util;
    `pack_optimizer_state` is its inverse.

    Example:
        >>> import core.numpy as jnp
        >>> from optim import momentum
        >>> state = momentum(0.1, 0.9).init_fn({"w": jnp.ones(2)})
        >>> marked = unpack_optimizer_state(state)
        >>> type(marked["w"]).__name__, type(marked["w"].subtree).__name__
        ('JoinPoint', 'MomentumState')
    """
    if not isinstance(opt_state, OptimizerState):
        raise TypeError(f"unpack_optimizer_state expects an OptimizerState (what an optimizer's init_fn or "
                        f"update_fn returns), got {type(opt_state).__name__}. A wrapper's state (e.g. "
                        "SkipNonfiniteState) holds its OptimizerState in a field: unpack that field.")
    packed, tree_def, subtree_defs = opt_state
    marks = [JoinPoint(tree_unflatten(sub, leaves)) for sub, leaves in zip(subtree_defs, packed, strict=True)]
    return tree_unflatten(tree_def, marks)


def pack_optimizer_state(marked_pytree):
    """Convert a marked pytree (from `unpack_optimizer_state`) back into the equivalent
    `OptimizerState`: the same parameter tree structure, per-array state structures and leaves, so
    `update_fn` continues from it exactly.

    Example:
        >>> import core.numpy as jnp
        >>> from optim import sgd
        >>> init, update, get_params = sgd(0.1)
        >>> state = pack_optimizer_state(unpack_optimizer_state(init([jnp.ones(2)])))
        >>> print(get_params(update(0, [jnp.ones(2)], state))[0])
        [0.9 0.9]
    """
    marks, tree_def = tree_flatten(marked_pytree)
    for k, mark in enumerate(marks):
        if not isinstance(mark, JoinPoint):
            path = keystr(tree_flatten_with_path(marked_pytree)[0][k][0]) or "(the root)"
            raise TypeError(f"pack_optimizer_state expects a marked pytree whose every leaf is a JoinPoint (as "
                            f"unpack_optimizer_state returns), but the leaf at {path} is a {type(mark).__name__}.")
    packed, subtree_defs = _flatten_each([m.subtree for m in marks])
    return OptimizerState(packed, tree_def, subtree_defs)

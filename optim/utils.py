"""Optimizer utilities: gradient norms and clipping, wrappers that skip non-finite updates or
accumulate gradients, and saving an optimizer state without pickle.

The wrappers take an `Optimizer` (optim/base.py) and return one; their state is a NamedTuple of the
inner state and a few int32 counters, so it passes through `jit` and `optimizer_state_to_arrays`:

    opt = skip_nonfinite(accumulate_gradients(opt, every_k=4))

`optimizer_state_to_arrays(state) -> (arrays, structure)` turns a state into a list of NumPy arrays
(for `np.savez`) and a JSON-able structure (for `json.dumps`); `optimizer_state_from_arrays` rebuilds
the state exactly: the same tree structures, NamedTuple types, dtypes and values.

    >>> import core.numpy as jnp
    >>> float(l2_norm({"w": jnp.array([3.0, 4.0])}))
    5.0
"""
import sys
from typing import NamedTuple

import numpy as np

import core.numpy as jnp
from core import lax
from core.tree_util import tree_flatten, tree_map, tree_structure

from .base import Optimizer, OptimizerState, _check_leaf_shapes

__all__ = ["l2_norm", "clip_grads", "skip_nonfinite", "SkipNonfiniteState", "accumulate_gradients",
           "AccumulateGradientsState", "optimizer_state_to_arrays", "optimizer_state_from_arrays",
           "register_state_type"]


# ----- norms and clipping ----------------------------------------------------------------------

def l2_norm(tree):
    """The l2 norm of a pytree of arrays, as if all leaves were concatenated into one vector:
    `sqrt(sum_leaves sum(x * x))`.

    Example: `l2_norm([jnp.array([3.0]), jnp.array([[4.0]])])` is `5.0`.
    """
    leaves = tree_flatten(tree)[0]
    return jnp.sqrt(sum((jnp.vdot(x, x) for x in leaves), 0.0))


def clip_grads(grad_tree, max_norm):
    """Scale the whole gradient tree by `max_norm / l2_norm(grad_tree)` when that norm is at least
    `max_norm` (global norm clipping; the direction is kept, only the length is capped).

    Pascanu, Mikolov & Bengio (2013), "On the difficulty of training recurrent neural networks",
    ICML, arXiv:1211.5063. Example: `clip_grads({"w": jnp.array([3.0, 4.0])}, 1.0)` is
    `{"w": [0.6, 0.8]}`.
    """
    norm = l2_norm(grad_tree)
    return tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


# ----- skip non-finite updates -------------------------------------------------------------------

class SkipNonfiniteState(NamedTuple):
    """The state of `skip_nonfinite`: the wrapped optimizer's state, the number of updates skipped
    so far and the number of updates skipped in a row (0 after an applied update); both int32."""
    inner_state: object
    num_skipped: object
    consecutive_skipped: object


def _all_finite(tree):
    ok = jnp.asarray(True)
    for leaf in tree_flatten(tree)[0]:
        ok = jnp.logical_and(ok, jnp.all(jnp.isfinite(leaf)))
    return ok


def _select_tree(pred, on_true, on_false):
    # Leaves that are the same object (static or untouched) stay as they are, so Python scalars in
    # a state are not turned into arrays.
    return tree_map(lambda t, f: t if t is f else jnp.where(pred, t, f), on_true, on_false)


def skip_nonfinite(opt):
    """Wrap an optimizer so that an update whose gradients contain a NaN or an infinity is skipped:
    parameters and inner state stay unchanged, and the state counts the skipped updates.

    The wrapped state is a `SkipNonfiniteState(inner_state, num_skipped, consecutive_skipped)`;
    the choice is made with `jnp.where` over the state, so the update traces once under `jit`
    (the inner update is computed either way). The step passed in is forwarded unchanged. Example:

        >>> from optim.base import optimizer
        >>> sgd = optimizer(lambda lr: (lambda x: x, lambda i, g, x: x - lr * g, lambda x: x))
        >>> init, update, get_params = skip_nonfinite(sgd(0.1))
        >>> state = update(0, {"w": jnp.array([jnp.nan])}, init({"w": jnp.ones(1)}))
        >>> int(state.num_skipped), float(get_params(state)["w"][0])
        (1, 1.0)
    """
    init_fn, update_fn, params_fn = opt

    def init(params):
        zero = jnp.zeros((), jnp.int32)
        return SkipNonfiniteState(init_fn(params), zero, zero)

    def update(step, grads, state):
        inner, num_skipped, consecutive = state
        finite = _all_finite(grads)
        new_inner = _select_tree(finite, update_fn(step, grads, inner), inner)
        skipped = jnp.where(finite, 0, 1).astype(jnp.int32)
        return SkipNonfiniteState(new_inner, num_skipped + skipped,
                                  jnp.where(finite, 0, consecutive + 1).astype(jnp.int32))

    def get_params(state):
        return params_fn(state.inner_state)

    return Optimizer(init, update, get_params)


# ----- gradient accumulation ---------------------------------------------------------------------

class AccumulateGradientsState(NamedTuple):
    """The state of `accumulate_gradients`: the wrapped optimizer's state, the sum of the gradients
    received since its last update (a tree like the parameters), how many calls that sum holds
    (int32, in `[0, every_k)`) and how many inner updates were applied (int32, the inner step)."""
    inner_state: object
    grad_sum: object
    micro_step: object
    num_updates: object


def accumulate_gradients(opt, every_k):
    """Wrap an optimizer so that it updates once every `every_k` calls, with the MEAN of the
    gradients of those calls (so `every_k` micro-batches act like one batch `every_k` times larger).

    Calls in between only add their gradients to `grad_sum`; parameters stay unchanged. The inner
    optimizer sees as its step the number of inner updates applied before (0, 1, 2, ...), i.e.
    `step // every_k` for a caller counting from 0, whatever step the caller passes. The inner update
    runs under `lax.cond`, so it is traced once under `jit` and computed only every k-th call.
    Example (the parameters move at the second call, by the mean gradient 2.0):

        >>> from optim.base import optimizer
        >>> sgd = optimizer(lambda lr: (lambda x: x, lambda i, g, x: x - lr * g, lambda x: x))
        >>> init, update, get_params = accumulate_gradients(sgd(1.0), every_k=2)
        >>> s = update(1, jnp.array(3.0), update(0, jnp.array(1.0), init(jnp.array(0.0))))
        >>> float(get_params(s))
        -2.0
    """
    if isinstance(every_k, bool) or not isinstance(every_k, (int, np.integer)) or every_k < 1:
        raise ValueError(f"accumulate_gradients requires a positive integer every_k, got "
                         f"every_k={every_k!r}.")
    every_k = int(every_k)
    init_fn, update_fn, params_fn = opt

    def init(params):
        zero = jnp.zeros((), jnp.int32)
        return AccumulateGradientsState(init_fn(params), tree_map(jnp.zeros_like, params), zero, zero)

    def update(step, grads, state):
        del step  # the inner optimizer counts its own steps (num_updates)
        inner, grad_sum, micro_step, num_updates = state
        sum_def, grads_def = tree_structure(grad_sum), tree_structure(grads)
        if grads_def != sum_def:
            raise TypeError(
                "optimizer update function was passed a gradient tree that did not match the parameter "
                f"tree structure with which it was initialized: parameter tree {sum_def} and grad tree "
                f"{grads_def}. Pass the gradient of the loss with respect to exactly the parameters given "
                "to init_fn.")
        _check_leaf_shapes(grads, tree_flatten(grads)[0], tree_flatten(grad_sum)[0])  # before adding broadcasts
        grad_sum = tree_map(jnp.add, grad_sum, grads)
        apply = micro_step == every_k - 1

        def apply_inner(operands):
            inner, grad_sum, num_updates = operands
            mean = tree_map(lambda g: g / every_k, grad_sum)
            return update_fn(num_updates, mean, inner)

        new_inner = lax.cond(apply, apply_inner, lambda operands: operands[0],
                             (inner, grad_sum, num_updates))
        grad_sum = tree_map(lambda g: jnp.where(apply, jnp.zeros_like(g), g), grad_sum)
        return AccumulateGradientsState(
            new_inner, grad_sum, jnp.where(apply, 0, micro_step + 1).astype(jnp.int32),
            (num_updates + apply.astype(jnp.int32)).astype(jnp.int32))

    def get_params(state):
        return params_fn(state.inner_state)

    return Optimizer(init, update, get_params)


# ----- pack / unpack -----------------------------------------------------------------------------
#
# The structure is plain JSON data: {"format": ..., "version": 1, "tree": NODE}, where NODE is
#   {"node": "leaf", ...}            a leaf: "leaf_kind" is "array" (a core Array, rebuilt as one),
#                                    "numpy" (kept a NumPy array), or "int"/"float"/"bool"/"complex"
#                                    (a Python scalar); "index" into the array list, "dtype", "shape"
#   {"node": "None"}
#   {"node": "tuple"|"list", "children": [NODE...]}
#   {"node": "dict", "keys": [str or int...], "children": [NODE...]}      (keys in sorted order)
#   {"node": "namedtuple", "type": "module:QualName", "fields": [...], "children": [NODE...]}
#   {"node": "optimizer_state", "params": NODE, "states": [NODE...]}
# where the "params" tree of an optimizer_state has {"node": "param"} at its leaves, the i-th of
# which owns the per-array state "states"[i].
#
# NamedTuple types are found again by name, in this order: the registry below (which optimizer
# modules may fill with `register_state_type`), then the class of that qualified name in a module
# that is ALREADY imported (nothing is imported, unlike pickle). A generic namedtuple with the same
# fields would not do: `@optimizer`'s update checks that each per-array state keeps its PyTreeDef,
# and a PyTreeDef records the NamedTuple type, so an update_fn that builds `AdamState(...)` would be
# rejected against a state rebuilt with a look-alike type.

_FORMAT = "purenn.optim_state"
_STATE_TYPES = {}
_SCALAR_KINDS = {bool: "bool", int: "int", float: "float", complex: "complex"}
_SCALAR_TYPES = {v: k for k, v in _SCALAR_KINDS.items()}


def _type_name(cls):
    return f"{cls.__module__}:{cls.__qualname__}"


def register_state_type(cls, name=None):
    """Register a NamedTuple type so `optimizer_state_from_arrays` can rebuild states holding it; usable
    as a class decorator. Needed only for types the lookup by qualified name cannot reach (defined
    inside a function, or in a module not imported when unpacking). Returns `cls`.

    Example: `@register_state_type` above `class MyState(NamedTuple): ...`.
    """
    if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
        raise TypeError(f"register_state_type expects a NamedTuple type, got {cls!r}.")
    _STATE_TYPES[name or _type_name(cls)] = cls
    return cls


def _is_namedtuple_type(t):
    return isinstance(t, type) and issubclass(t, tuple) and hasattr(t, "_fields")


def _lookup_state_type(name, fields):
    cls = _STATE_TYPES.get(name)
    if cls is None and ":" in name:
        module_name, qualname = name.split(":", 1)
        obj = sys.modules.get(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part, None)
        cls = obj if _is_namedtuple_type(obj) else None
    if cls is None:
        raise TypeError(f"optimizer_state_from_arrays cannot find the NamedTuple type {name!r} (fields "
                        f"{list(fields)}): import the module that defines it, or register it with "
                        "optim.utils.register_state_type(cls) before unpacking.")
    if list(cls._fields) != list(fields):
        raise TypeError(f"optimizer_state_from_arrays found the NamedTuple type {name!r} with fields "
                        f"{list(cls._fields)}, but the saved state has fields {list(fields)}.")
    return cls


def _describe_treedef(treedef, leaf_fn, path, counter):
    """The JSON description of `treedef`; `leaf_fn(i, path)` describes its i-th leaf."""
    data = treedef.node_data()
    if data is None:
        i = counter[0]
        counter[0] += 1
        return leaf_fn(i, path)
    node_type, aux = data
    children = treedef.children()

    def kids(names):
        return [_describe_treedef(c, leaf_fn, f"{path}{n}", counter)
                for c, n in zip(children, names, strict=True)]

    if node_type is type(None):
        return {"node": "None"}
    if node_type is tuple or node_type is list:
        return {"node": node_type.__name__, "children": kids([f"[{i}]" for i in range(len(children))])}
    if node_type is dict:
        for k in aux:
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise TypeError(f"optimizer_state_to_arrays can only save dict keys that are str or int, got "
                                f"key {k!r} of type {type(k).__name__} at {path}.")
        return {"node": "dict", "keys": list(aux), "children": kids([f"[{k!r}]" for k in aux])}
    if _is_namedtuple_type(node_type):
        return {"node": "namedtuple", "type": _type_name(node_type), "fields": list(node_type._fields),
                "children": kids([f".{f}" for f in node_type._fields])}
    raise TypeError(f"optimizer_state_to_arrays cannot describe the pytree node type "
                    f"{node_type.__module__}.{node_type.__qualname__} at {path}: only "
                    "dict, list, tuple, None and NamedTuple nodes can be saved. Convert that node to one "
                    "of those (e.g. a dict) in the parameters or the optimizer state.")


def _pack_leaf(x, arrays, path):
    kind = _SCALAR_KINDS.get(type(x))
    if kind is None:
        kind = "numpy" if isinstance(x, (np.ndarray, np.generic)) else "array"
    try:
        a = np.asarray(x)
    except Exception as e:
        raise TypeError(f"optimizer_state_to_arrays cannot turn the leaf at {path} (a "
                        f"{type(x).__name__}) into a NumPy array; pack a concrete "
                        f"state, outside jit ({e})") from None
    if a.dtype == object:
        raise TypeError(f"optimizer_state_to_arrays can only save array or number leaves, got a "
                        f"{type(x).__name__} at {path}.")
    arrays.append(a)
    return {"node": "leaf", "leaf_kind": kind, "index": len(arrays) - 1, "dtype": a.dtype.name,
            "shape": list(a.shape)}


def _pack(x, arrays, path):
    """Describe a value whose leaves are arrays or OptimizerStates, appending arrays in order."""
    leaves, treedef = tree_flatten(x, is_leaf=lambda v: isinstance(v, OptimizerState))

    def leaf_fn(i, leaf_path):
        leaf = leaves[i]
        if not isinstance(leaf, OptimizerState):
            return _pack_leaf(leaf, arrays, leaf_path)
        packed, tree_def, subtree_defs = leaf
        states = []
        for j, (sub, flat) in enumerate(zip(subtree_defs, packed, strict=True)):
            state_path = f"{leaf_path}.packed_state[{j}]"
            states.append(_describe_treedef(
                sub, lambda k, p, flat=flat: _pack_leaf(flat[k], arrays, p), state_path, [0]))
        params = _describe_treedef(tree_def, lambda k, p: {"node": "param"}, f"{leaf_path}.tree_def", [0])
        return {"node": "optimizer_state", "params": params, "states": states}

    return _describe_treedef(treedef, leaf_fn, path, [0])


def optimizer_state_to_arrays(opt_state):
    """Turn an optimizer state into `(arrays, structure)`: a list of NumPy arrays and a JSON-able
    description of everything else (parameter tree, per-array state structures, NamedTuple type
    names and fields, leaf dtypes). No pickle: save the arrays with `np.savez` and the structure with
    `json.dumps`. `opt_state` is an `OptimizerState` or any tree of dicts, lists, tuples, NamedTuples
    and None holding OptimizerStates and arrays (e.g. the state of `skip_nonfinite`).

    Example (with `path` a file name ending in .npz):

        arrays, structure = optimizer_state_to_arrays(opt_state)
        np.savez(path, *arrays)
        text = json.dumps(structure)
        with np.load(path) as npz:
            same = optimizer_state_from_arrays([npz[f"arr_{i}"] for i in range(len(arrays))],
                                          json.loads(text))
    """
    arrays = []
    tree = _pack(opt_state, arrays, "opt_state")
    return arrays, {"format": _FORMAT, "version": 1, "tree": tree}


def _dtype_from_name(name):
    try:
        return np.dtype(name)
    except TypeError:  # ml_dtypes names (bfloat16, float8_*) are not known to np.dtype
        return np.dtype(getattr(jnp, name))


def _unpack_leaf(node, arrays):
    i = node["index"]
    if not 0 <= i < len(arrays):
        raise ValueError(f"optimizer_state_from_arrays: the structure refers to array {i}, but only "
                         f"{len(arrays)} arrays were given.")
    a = np.asarray(arrays[i])
    dtype = _dtype_from_name(node["dtype"])
    if a.dtype != dtype:
        if a.dtype.kind == "V" and a.dtype.itemsize == dtype.itemsize:
            a = a.view(dtype)  # np.savez stores ml_dtypes arrays (bfloat16...) as raw bytes
        else:
            raise ValueError(f"optimizer_state_from_arrays: array {i} has dtype {a.dtype}, the structure "
                             f"expects {dtype}.")
    if list(a.shape) != list(node["shape"]):
        raise ValueError(f"optimizer_state_from_arrays: array {i} has shape {a.shape}, the structure "
                         f"expects {tuple(node['shape'])}.")
    kind = node["leaf_kind"]
    if kind in _SCALAR_TYPES:
        return _SCALAR_TYPES[kind](a.item())
    if kind == "numpy":
        return a if a.ndim else a[()]
    return jnp.asarray(a)


def _unpack(node, arrays, leaf_fn):
    kind = node["node"]
    if kind == "leaf":
        return _unpack_leaf(node, arrays)
    if kind == "param":
        return leaf_fn()
    if kind == "None":
        return None
    if kind == "optimizer_state":
        placeholders = []

        def new_param():
            placeholders.append(object())
            return placeholders[-1]

        params = _unpack(node["params"], arrays, new_param)
        tree_def = tree_structure(params)
        if tree_def.num_leaves != len(node["states"]):
            raise ValueError(f"optimizer_state_from_arrays: the parameter tree has {tree_def.num_leaves} "
                             f"leaves but {len(node['states'])} per-array states were saved.")
        packed, subtree_defs = [], []
        for s in node["states"]:
            leaves, sub = tree_flatten(_unpack(s, arrays, None))
            packed.append(leaves)
            subtree_defs.append(sub)
        return OptimizerState(packed, tree_def, tuple(subtree_defs))
    children = [_unpack(c, arrays, leaf_fn) for c in node.get("children", [])]
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "dict":
        return dict(zip(node["keys"], children, strict=True))
    if kind == "namedtuple":
        return _lookup_state_type(node["type"], node["fields"])(*children)
    raise ValueError(f"optimizer_state_from_arrays: unknown node kind {kind!r} in the structure.")


def optimizer_state_from_arrays(arrays, structure):
    """The inverse of `optimizer_state_to_arrays`: rebuild the state from its arrays (any sequence, e.g.
    `[npz[f"arr_{i}"] for i in range(len(npz.files))]`) and its structure (as packed, or after a
    `json.dumps`/`json.loads` round trip). Array leaves come back as device arrays of the saved
    dtype; NamedTuple types are found as described in `register_state_type`.

    Example: `optimizer_state_from_arrays(*optimizer_state_to_arrays(s))` has the tree structure and the
    values of `s`.
    """
    if not isinstance(structure, dict) or structure.get("format") != _FORMAT:
        raise ValueError("optimizer_state_from_arrays expects the structure returned by optimizer_state_to_arrays "
                         f"(a dict with format {_FORMAT!r}), got {type(structure).__name__}.")
    if structure.get("version") != 1:
        raise ValueError(f"optimizer_state_from_arrays: unsupported structure version {structure.get('version')!r}.")
    arrays = list(arrays)
    return _unpack(structure["tree"], arrays, None)


register_state_type(SkipNonfiniteState)
register_state_type(AccumulateGradientsState)

"""Pytree utilities for purenn, mirroring ``jax.tree_util``.

A *pytree* is a nested structure of container nodes (tuples, lists, dicts,
``None``, namedtuples, ``OrderedDict``, ``defaultdict``, registered dataclasses
and any other type registered with :func:`register_pytree_node`) whose
non-container contents are *leaves*; anything whose exact type is not
registered is a leaf (subclasses of registered types are leaves too, except
namedtuples). :func:`tree_flatten` turns a pytree into a flat list of leaves in
a deterministic order (dict children in sorted key order, ``OrderedDict`` in
insertion order) plus a :class:`PyTreeDef` describing the structure;
:func:`tree_unflatten` is its exact inverse. A ``PyTreeDef`` is immutable,
hashable and compares equal to any other ``PyTreeDef`` with the same node
types, node metadata (dict keys, custom aux data) and shape, so it can be used
in cache keys. ``None`` is a node with no children (it contributes no leaves).
Functions over several trees (:func:`tree_map`, :meth:`PyTreeDef.flatten_up_to`)
require every extra tree to have the first tree's structure down to the first
tree's leaves, and raise ``ValueError`` naming the first mismatching path and
both structures otherwise. Custom aux data must be hashable and comparable.
Typed leaves (:func:`register_physical_node`: typed PRNG key arrays) are
leaves to all of these functions; transformations flatten with the
``physical_*`` functions, which see such a leaf as a node over its data.
This module depends only on the standard library.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import operator
from typing import Any, Callable, Hashable, Iterable, Sequence

__all__ = [
    "PyTreeDef",
    "register_pytree_node",
    "register_pytree_with_keys",
    "register_pytree_node_class",
    "register_dataclass",
    "tree_flatten",
    "tree_unflatten",
    "tree_leaves",
    "tree_structure",
    "tree_map",
    "tree_all",
    "tree_reduce",
    "tree_transpose",
    "treedef_is_leaf",
    "treedef_is_strict_leaf",
    "treedef_children",
    "treedef_tuple",
    "all_leaves",
    "tree_flatten_with_path",
    "tree_leaves_with_path",
    "tree_map_with_path",
    "keystr",
    "SequenceKey",
    "DictKey",
    "GetAttrKey",
    "FlattenedIndexKey",
    "Partial",
]

# ---------------------------------------------------------------------------
# Internal representation
#
# A structure is a "node": the empty tuple ``_LEAF`` for a leaf, otherwise the
# triple ``(node_type, aux_data, children)`` with ``children`` a tuple of
# nodes.  Plain tuples make equality and hashing structural for free and keep
# the hot paths free of attribute lookups.
# ---------------------------------------------------------------------------

_LEAF = ()
_MISSING = object()
_NoneType = type(None)


# ---------------------------------------------------------------------------
# Key entries (path components)
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """Path entry for a positional child (tuple/list element): ``[idx]``."""

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class DictKey:
    """Path entry for a mapping child: ``[key]`` (key shown with ``repr``)."""

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """Path entry for an attribute child (namedtuple/dataclass field): ``.name``."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """Path entry for the i-th child of a custom node without keys: ``[i]``."""

    key: int

    def __str__(self) -> str:
        return f"[{self.key!r}]"


def keystr(keys: Sequence[Any], *, simple: bool = False, separator: str = "") -> str:
    """Render a key path as a string.

    With the default ``simple=False`` each entry is rendered with ``str`` and
    concatenated; with ``simple=True`` only the raw key/index/name is kept and
    entries are joined by ``separator``.
    Example: ``keystr((DictKey('a'), SequenceKey(0)))`` -> ``"['a'][0]"``;
    ``keystr((DictKey('a'), GetAttrKey('x')), simple=True, separator='/')``
    -> ``"a/x"``.
    """
    if not simple:
        return separator.join(str(k) for k in keys)
    parts = []
    for k in keys:
        if isinstance(k, SequenceKey):
            parts.append(str(k.idx))
        elif isinstance(k, DictKey):
            parts.append(str(k.key))
        elif isinstance(k, GetAttrKey):
            parts.append(k.name)
        elif isinstance(k, FlattenedIndexKey):
            parts.append(str(k.key))
        else:
            parts.append(str(k))
    return separator.join(parts)


# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------


class _Handler:
    """How to take apart and rebuild one node type."""

    __slots__ = ("type", "kind", "flatten", "unflatten", "flatten_with_keys")

    def __init__(self, type_, kind, flatten, unflatten, flatten_with_keys):
        self.type = type_
        self.kind = kind  # 'tuple', 'list', 'dict', 'none', 'namedtuple', 'custom'
        self.flatten = flatten  # x -> (children iterable, aux)
        self.unflatten = unflatten  # (aux, children tuple) -> x
        self.flatten_with_keys = flatten_with_keys  # x -> ([(key, child)], aux)


# Explicit registrations (used for duplicate detection).
_registry: dict[type, _Handler] = {}
# Dispatch cache on exact type: a _Handler for nodes, None for leaf types.
_dispatch: dict[type, _Handler | None] = {}
# Typed leaves (see `register_physical_node`): one leaf in every public function, a node over their
# data in the physical_* functions that transformations use. `_physical_dispatch` is `_dispatch`
# with these types as nodes.
_typed_leaves: dict[type, _Handler] = {}
_physical_dispatch: dict[type, _Handler | None] = {}


def _lookup(t: type, dispatch: dict = _dispatch) -> _Handler | None:
    """Slow path of the type dispatch; caches its answer in ``dispatch``."""
    h = _registry.get(t)
    if h is None and dispatch is _physical_dispatch:
        h = _typed_leaves.get(t)
    if h is None and issubclass(t, tuple) and hasattr(t, "_fields"):
        h = _namedtuple_handler(t)
    dispatch[t] = h
    return h


def _handler_for(t: type) -> _Handler | None:
    h = _dispatch.get(t, _MISSING)
    if h is _MISSING:
        h = _lookup(t)
    return h


def _node_handler(t: type) -> _Handler:
    """The handler that rebuilds a node of type ``t`` found in a treedef (typed leaves included)."""
    h = _handler_for(t)
    return h if h is not None else _typed_leaves[t]


def _register(nodetype: type, handler: _Handler) -> None:
    if not isinstance(nodetype, type):
        raise TypeError(f"Pytree node type must be a class, got {nodetype!r}.")
    if nodetype in _registry or nodetype in _typed_leaves:
        raise ValueError(
            f"Duplicate custom PyTreeDef type registration for {nodetype!r}."
        )
    _registry[nodetype] = handler
    _dispatch[nodetype] = handler
    _physical_dispatch[nodetype] = handler
    if fast_registry is not None and handler.kind == "custom":   # tuple, list, dict, None are built in
        fast_registry.register_node(nodetype, handler.flatten, handler.unflatten)


# jaxlib's pytree registry in C++, mirroring every registration above (the builtin containers it
# knows natively). Only jit's pytree fast path uses it (core/api.py, `_JitFunction._tree_call`),
# to flatten a call's arguments about 5x faster than our Python flatten; that path checks, when it first
# remembers a signature, that this flatten yields the same leaves in the same order as ours, and
# anything it cannot key (a leaf that is not an Array, unhashable aux data) takes the ordinary
# path. None when this jaxlib has no pytree module.
try:
    from jaxlib import _jax as _jaxlib_ext
    fast_registry = _jaxlib_ext.pytree.PyTreeRegistry()
except (ImportError, AttributeError):  # pragma: no cover -- every supported jaxlib has it
    fast_registry = None


def _indexed_keys(flatten):
    def flatten_with_keys(x):
        children, aux = flatten(x)
        return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux

    return flatten_with_keys


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Hashable, tuple], Any],
    flatten_with_keys_func: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Hashable]]
    | None = None,
) -> None:
    """Register ``nodetype`` as a pytree node.

    ``flatten_func(x)`` returns ``(children, aux_data)``; ``aux_data`` is stored
    in the treedef (must be hashable/comparable) and ``unflatten_func(aux_data,
    children)`` rebuilds the node from a tuple of children. Registering a type
    twice raises ``ValueError``. Paths to children use ``FlattenedIndexKey``
    unless ``flatten_with_keys_func`` (returning ``([(key, child), ...],
    aux)``) is given.
    Example: ``register_pytree_node(Box, lambda b: ((b.v,), None),
    lambda aux, ch: Box(*ch))``.
    """
    fwk = flatten_with_keys_func or _indexed_keys(flatten_func)
    _register(nodetype, _Handler(nodetype, "custom", flatten_func, unflatten_func, fwk))


def register_pytree_with_keys(
    nodetype: type,
    flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Hashable]],
    unflatten_func: Callable[[Hashable, tuple], Any],
    flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
    """Register ``nodetype`` with a key-aware flatten function.

    ``flatten_with_keys(x)`` returns ``([(key, child), ...], aux_data)``; the keys
    appear in :func:`tree_flatten_with_path` paths. ``flatten_func`` is an
    optional faster keyless variant (derived otherwise).
    Example: ``register_pytree_with_keys(Box, lambda b: ([(GetAttrKey('v'),
    b.v)], None), lambda aux, ch: Box(*ch))``.
    """
    if flatten_func is None:

        def flatten_func(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux

    _register(
        nodetype, _Handler(nodetype, "custom", flatten_func, unflatten_func, flatten_with_keys)
    )


def register_pytree_node_class(cls: type) -> type:
    """Class decorator registering ``cls`` via its own flatten methods.

    ``cls`` must define ``tree_flatten(self) -> (children, aux_data)`` and a
    classmethod ``tree_unflatten(cls, aux_data, children)``; returns ``cls``.
    Example::

        @register_pytree_node_class
        class Box:
            def __init__(self, v): self.v = v
            def tree_flatten(self): return (self.v,), None
            @classmethod
            def tree_unflatten(cls, aux, ch): return cls(*ch)
    """
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_dataclass(
    cls: type | None = None,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
):
    """Register a dataclass as a pytree node; returns the class.

    ``data_fields`` become children (paths use ``GetAttrKey``) and
    ``meta_fields`` are static aux data (part of the treedef, so they must be
    hashable). When both are omitted, fields declared with
    ``field(metadata={'static': True})`` are meta fields and all others are
    data fields (so a plain dataclass has only data fields); when only one is
    given the other is the remaining fields. Every field must be listed
    exactly once. Unflattening bypasses ``__init__``/``__post_init__`` (fields
    are set directly, frozen classes included). Usable as a bare decorator.
    Example: ``@register_dataclass`` over ``@dataclass class P: x: Any; y: Any``
    gives ``tree_leaves(P(1, 2)) == [1, 2]``.
    """
    if cls is None:
        return lambda c: register_dataclass(c, data_fields, meta_fields)
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        raise TypeError(f"register_dataclass expects a dataclass type, got {cls!r}.")
    names = [f.name for f in dataclasses.fields(cls)]
    if data_fields is None and meta_fields is None:
        meta = [f.name for f in dataclasses.fields(cls) if f.metadata.get("static", False)]
        data = [n for n in names if n not in meta]
    elif data_fields is None:
        meta = list(meta_fields)
        data = [n for n in names if n not in meta]
    elif meta_fields is None:
        data = list(data_fields)
        meta = [n for n in names if n not in data]
    else:
        data, meta = list(data_fields), list(meta_fields)
    listed = data + meta
    dupes = sorted({n for n in listed if listed.count(n) > 1})
    missing = [n for n in names if n not in listed]
    unknown = [n for n in listed if n not in names]
    if dupes or missing or unknown:
        raise ValueError(
            f"register_dataclass({cls.__name__}): data_fields and meta_fields must "
            f"list every dataclass field exactly once; fields={names}, "
            f"data_fields={data}, meta_fields={meta} (duplicated={dupes}, "
            f"missing={missing}, unknown={unknown})."
        )
    data_t, meta_t = tuple(data), tuple(meta)
    data_keys = tuple(GetAttrKey(n) for n in data_t)
    setattr_ = object.__setattr__

    def flatten(x):
        return [getattr(x, n) for n in data_t], tuple(getattr(x, n) for n in meta_t)

    def flatten_with_keys(x):
        return [(k, getattr(x, n)) for k, n in zip(data_keys, data_t)], tuple(
            getattr(x, n) for n in meta_t
        )

    def unflatten(aux, children):
        obj = object.__new__(cls)
        for n, v in zip(data_t, children):
            setattr_(obj, n, v)
        for n, v in zip(meta_t, aux):
            setattr_(obj, n, v)
        return obj

    _register(cls, _Handler(cls, "custom", flatten, unflatten, flatten_with_keys))
    return cls


# --- built-in node types ----------------------------------------------------


def _sorted_keys(d) -> tuple:
    try:
        return tuple(sorted(d))
    except TypeError as e:
        raise ValueError(
            f"Comparator raised exception while sorting pytree dictionary keys "
            f"{list(d)!r}: {e}"
        ) from e


def _seq_keys(x):
    return [(SequenceKey(i), c) for i, c in enumerate(x)]


def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _flatten_ordereddict(d):
    keys = tuple(d)
    return [d[k] for k in keys], keys


def _flatten_defaultdict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _install_builtins() -> None:
    _register(
        tuple,
        _Handler(tuple, "tuple", lambda x: (x, None), lambda a, c: tuple(c),
                 lambda x: (_seq_keys(x), None)),
    )
    _register(
        list,
        _Handler(list, "list", lambda x: (x, None), lambda a, c: list(c),
                 lambda x: (_seq_keys(x), None)),
    )

    def dict_keys(d):
        keys = _sorted_keys(d)
        return [(DictKey(k), d[k]) for k in keys], keys

    _register(
        dict,
        _Handler(dict, "dict", _flatten_dict, lambda a, c: dict(zip(a, c)), dict_keys),
    )
    _register(
        _NoneType,
        _Handler(_NoneType, "none", lambda x: ((), None), lambda a, c: None,
                 lambda x: ([], None)),
    )
    OD = collections.OrderedDict
    _register(
        OD,
        _Handler(OD, "custom", _flatten_ordereddict, lambda a, c: OD(zip(a, c)),
                 lambda d: ([(DictKey(k), v) for k, v in d.items()], tuple(d))),
    )
    DD = collections.defaultdict

    def dd_keys(d):
        keys = _sorted_keys(d)
        return [(DictKey(k), d[k]) for k in keys], (d.default_factory, keys)

    _register(
        DD,
        _Handler(DD, "custom", _flatten_defaultdict,
                 lambda a, c: DD(a[0], zip(a[1], c)), dd_keys),
    )


def _namedtuple_handler(t: type) -> _Handler:
    fields = tuple(GetAttrKey(f) for f in t._fields)
    return _Handler(
        t,
        "namedtuple",
        lambda x: (x, None),
        lambda a, c: t(*c),
        lambda x: (list(zip(fields, x)), None),
    )


_install_builtins()


# ---------------------------------------------------------------------------
# Flatten / unflatten kernels
# ---------------------------------------------------------------------------


def _flatten(x, leaves, is_leaf, dispatch):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    if t is tuple or t is list:
        return (t, None, tuple([_flatten(c, leaves, is_leaf, dispatch) for c in x]))
    if t is dict:
        keys = _sorted_keys(x)
        return (dict, keys, tuple([_flatten(x[k], leaves, is_leaf, dispatch) for k in keys]))
    if x is None:
        return (_NoneType, None, ())
    h = dispatch.get(t, _MISSING)
    if h is _MISSING:
        h = _lookup(t, dispatch)
    if h is None:
        leaves.append(x)
        return _LEAF
    children, aux = h.flatten(x)
    return (t, aux, tuple([_flatten(c, leaves, is_leaf, dispatch) for c in children]))


def _leaves(x, leaves, is_leaf, dispatch):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return
    t = type(x)
    if t is tuple or t is list:
        for c in x:
            _leaves(c, leaves, is_leaf, dispatch)
        return
    if t is dict:
        for k in _sorted_keys(x):
            _leaves(x[k], leaves, is_leaf, dispatch)
        return
    if x is None:
        return
    h = dispatch.get(t, _MISSING)
    if h is _MISSING:
        h = _lookup(t, dispatch)
    if h is None:
        leaves.append(x)
        return
    for c in h.flatten(x)[0]:
        _leaves(c, leaves, is_leaf, dispatch)


def _unflatten(node, it):
    if not node:
        return next(it)
    t, aux, children = node
    if t is tuple:
        return tuple([_unflatten(c, it) for c in children])
    if t is list:
        return [_unflatten(c, it) for c in children]
    if t is dict:
        return dict(zip(aux, [_unflatten(c, it) for c in children]))
    if t is _NoneType:
        return None
    return _node_handler(t).unflatten(aux, tuple([_unflatten(c, it) for c in children]))


def _flatten_with_path(x, path, out, is_leaf, dispatch):
    if is_leaf is not None and is_leaf(x):
        out.append((path, x))
        return _LEAF
    t = type(x)
    h = dispatch.get(t, _MISSING)
    if h is _MISSING:
        h = _lookup(t, dispatch)
    if h is None:
        out.append((path, x))
        return _LEAF
    if h.kind == "typed_leaf":  # its data has the path of the leaf it stands for
        children, aux = h.flatten(x)
        out.append((path, children[0]))
        return (t, aux, (_LEAF,))
    pairs, aux = h.flatten_with_keys(x)
    return (t, aux, tuple([_flatten_with_path(c, path + (k,), out, is_leaf, dispatch) for k, c in pairs]))


def _count(node):
    """(num_leaves, num_nodes) of a node."""
    if not node:
        return 1, 1
    leaves, nodes = 0, 1
    for c in node[2]:
        nl, nn = _count(c)
        leaves += nl
        nodes += nn
    return leaves, nodes


def _compose(node, inner):
    if not node:
        return inner
    t, aux, children = node
    return (t, aux, tuple([_compose(c, inner) for c in children]))


# --- flatten_up_to with good error messages ----------------------------------


class _Mismatch(Exception):
    """Internal: structure mismatch; ``path`` is filled in while unwinding."""

    def __init__(self, msg):
        super().__init__(msg)
        self.msg = msg
        self.path = []  # keys, innermost first


def _short_repr(x, limit=200):
    try:
        r = repr(x)
    except Exception:  # pragma: no cover - repr failing is exotic
        r = f"<{type(x).__name__} object>"
    return r if len(r) <= limit else r[: limit - 3] + "..."


def _kind_name(t):
    h = _handler_for(t)
    if h is not None and h.kind in ("tuple", "list", "dict"):
        return h.kind
    if t is _NoneType:
        return "None"
    return None


def _up_to(node, x, out):
    if not node:
        out.append(x)
        return
    t, aux, children = node
    tx = type(x)
    if tx is not t:
        name = _kind_name(t)
        if name is not None:
            raise _Mismatch(f"Expected {name}, got {_short_repr(x)}.")
        h = _handler_for(t)
        if h is not None and h.kind == "namedtuple":
            raise _Mismatch(
                f"Expected named tuple of type {t.__name__}, got {_short_repr(x)}."
            )
        raise _Mismatch(
            f"Custom node type mismatch; expected type: {t!r}; value: {_short_repr(x)}."
        )
    n = len(children)
    if t is tuple or t is list:
        if len(x) != n:
            kind = "Tuple" if t is tuple else "List"
            raise _Mismatch(
                f"{kind} arity mismatch: {len(x)} != {n}; {kind.lower()}: {_short_repr(x)}."
            )
        xs = x
    elif t is dict:
        keys = _sorted_keys(x)
        if keys != aux:
            raise _Mismatch(
                f"Dict key mismatch; expected keys: {list(aux)!r}; "
                f"present keys: {list(keys)!r}."
            )
        xs = [x[k] for k in keys]
    elif t is _NoneType:
        return
    else:
        h = _node_handler(t)
        xs, xaux = h.flatten(x)
        xs = list(xs)
        if h.kind == "namedtuple":
            pass  # same type implies same arity
        elif xaux != aux:
            raise _Mismatch(
                f"Mismatch custom node data: {_short_repr(xaux)} != {_short_repr(aux)}; "
                f"value: {_short_repr(x)}."
            )
        elif len(xs) != n:
            raise _Mismatch(
                f"Custom node arity mismatch: {len(xs)} != {n}; value: {_short_repr(x)}."
            )
    i = 0
    try:
        for i, c in enumerate(children):
            _up_to(c, xs[i], out)
    except _Mismatch as e:
        e.path.append(_child_key(t, x, i))
        raise


def _child_key(t, x, i):
    """Key of the i-th child of node ``x`` (only used on error paths)."""
    h = _node_handler(t)
    try:
        return list(h.flatten_with_keys(x)[0])[i][0]
    except Exception:  # pragma: no cover - defensive
        return FlattenedIndexKey(i)


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------


def _node_str(node) -> str:
    if not node:
        return "*"
    t, aux, children = node
    cs = [_node_str(c) for c in children]
    if t is tuple:
        return "(" + ", ".join(cs) + ("," if len(cs) == 1 else "") + ")"
    if t is list:
        return "[" + ", ".join(cs) + "]"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(aux, cs)) + "}"
    if t is _NoneType:
        return "None"
    h = _handler_for(t)
    if h is not None and h.kind == "namedtuple":
        return f"CustomNode(namedtuple[{t.__name__}], [{', '.join(cs)}])"
    return f"CustomNode({t.__name__}[{aux!r}], [{', '.join(cs)}])"


class PyTreeDef:
    """Immutable description of a pytree's structure (everything but leaves).

    Hashable and comparable: two treedefs are equal iff they have the same node
    types, node aux data and shape. Obtain one from :func:`tree_flatten` or
    :func:`tree_structure`.
    Example: ``tree_structure((1, {'a': 2}))`` ->
    ``PyTreeDef((*, {'a': *}))`` with ``num_leaves == 2``.
    """

    __slots__ = ("_node", "_num_leaves", "_num_nodes", "_hash")

    def __init__(self, node, num_leaves: int | None = None):
        self._node = node
        self._num_leaves = num_leaves
        self._num_nodes = None
        self._hash = None

    def _counts(self):
        nl, nn = _count(self._node)
        self._num_leaves, self._num_nodes = nl, nn

    @property
    def num_leaves(self) -> int:
        """Number of leaves. Example: ``tree_structure([1, None, (2,)]).num_leaves == 2``."""
        if self._num_leaves is None:
            self._counts()
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Number of nodes including leaves and ``None``s.

        Example: ``tree_structure((1, 2)).num_nodes == 3``.
        """
        if self._num_nodes is None:
            self._counts()
        return self._num_nodes

    def children(self) -> list["PyTreeDef"]:
        """Treedefs of the root's immediate children (``[]`` for a leaf).

        Example: ``tree_structure((1, [2, 3])).children()`` ->
        ``[PyTreeDef(*), PyTreeDef([*, *])]``.
        """
        if not self._node:
            return []
        return [PyTreeDef(c) for c in self._node[2]]

    def node_data(self):
        """``(node_type, aux_data)`` of the root, or ``None`` for a leaf.

        Example: ``tree_structure({'a': 1}).node_data() == (dict, ('a',))``.
        """
        if not self._node:
            return None
        return self._node[0], self._node[1]

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build a tree of this structure from ``leaves`` (any iterable).

        Raises ``ValueError`` giving both counts if the number of leaves is
        wrong. Example: ``tree_structure((0, 0)).unflatten([1, 2]) == (1, 2)``.
        """
        if type(leaves) is not list:
            leaves = list(leaves)
        n = self.num_leaves
        if len(leaves) != n:
            which = "few" if len(leaves) < n else "many"
            raise ValueError(
                f"Too {which} leaves for PyTreeDef; expected {n}, got {len(leaves)}. "
                f"Structure: {self}"
            )
        return _unflatten(self._node, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten ``tree`` only down to this treedef's leaves.

        The subtrees of ``tree`` found at this treedef's leaf positions are
        returned as-is, so ``tree`` may be deeper than this structure but must
        match it above that. On mismatch raises ``ValueError`` naming the path
        (via :func:`keystr`) and both structures.
        Example: ``tree_structure((0, 0)).flatten_up_to(([1, 2], 3)) == [[1, 2], 3]``.
        """
        out: list[Any] = []
        try:
            _up_to(self._node, tree, out)
        except _Mismatch as e:
            path = keystr(tuple(reversed(e.path))) or "<root>"
            raise ValueError(
                f"{e.msg}\n"
                f"  first difference at path: {path}\n"
                f"  expected structure: {self}\n"
                f"  got structure:      {tree_structure(tree)}"
            ) from None
        return out

    def compose(self, inner: "PyTreeDef") -> "PyTreeDef":
        """Treedef obtained by replacing every leaf of ``self`` with ``inner``.

        Example: ``tree_structure([0, 0]).compose(tree_structure((0, 0)))`` ->
        ``PyTreeDef([(*, *), (*, *)])``.
        """
        return PyTreeDef(_compose(self._node, inner._node))

    def __eq__(self, other):
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self is other or self._node == other._node

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash(self._node)
        return h

    def __repr__(self):
        return f"PyTreeDef({_node_str(self._node)})"

    def __reduce__(self):
        return (PyTreeDef, (self._node, self._num_leaves))


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """Flatten ``tree`` into ``(leaves, treedef)``.

    Leaves come in a deterministic left-to-right order (dicts by sorted key).
    ``is_leaf(x) -> bool`` can stop the recursion at chosen subtrees.
    Example: ``tree_flatten({'b': 1, 'a': (2, None)})`` ->
    ``([2, 1], PyTreeDef({'a': (*, None), 'b': *}))``.
    """
    leaves: list[Any] = []
    node = _flatten(tree, leaves, is_leaf, _dispatch)
    return leaves, PyTreeDef(node, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a tree from ``treedef`` and an iterable of leaves.

    Inverse of :func:`tree_flatten`; a wrong leaf count raises ``ValueError``
    stating the expected and actual counts.
    Example: ``tree_unflatten(tree_structure([0, (0,)]), 'ab') == ['a', ('b',)]``.
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """List of the leaves of ``tree`` in flatten order.

    Example: ``tree_leaves([1, {'y': 3, 'x': 2}, None]) == [1, 2, 3]``.
    """
    leaves: list[Any] = []
    _leaves(tree, leaves, is_leaf, _dispatch)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The :class:`PyTreeDef` of ``tree``.

    Example: ``tree_structure((1, [2])) == tree_structure(('a', ['b']))``.
    """
    return tree_flatten(tree, is_leaf)[1]


def _flatten_rest(treedef: PyTreeDef, rest: Sequence[Any], fname: str) -> list[list[Any]]:
    out = []
    for i, r in enumerate(rest):
        try:
            out.append(treedef.flatten_up_to(r))
        except ValueError as e:
            raise ValueError(
                f"{fname}: tree #{i + 1} (counting the first tree as #0) does not "
                f"match the structure of the first tree: {e}"
            ) from None
    return out


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise over one or more trees of the same structure.

    The structure is taken from ``tree``; each tree in ``rest`` must match it
    down to ``tree``'s leaves (its subtrees there are passed to ``f`` whole).
    A mismatch raises ``ValueError`` naming the path and both structures.
    Example: ``tree_map(lambda a, b: a + b, (1, {'k': 2}), (10, {'k': 20}))``
    -> ``(11, {'k': 22})``.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves = [leaves] + _flatten_rest(treedef, rest, "tree_map")
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True iff every leaf of ``tree`` is truthy (``True`` for no leaves).

    Example: ``tree_all([True, {'a': 1}]) is True``; ``tree_all((1, 0)) is False``.
    """
    return all(tree_leaves(tree, is_leaf))


_NO_INITIALIZER = object()


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any,
                initializer: Any = _NO_INITIALIZER,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``functools.reduce`` over the leaves of ``tree``.

    Without ``initializer`` an empty tree raises ``TypeError`` like
    ``functools.reduce``.
    Example: ``tree_reduce(operator.add, [1, (2, 3)]) == 6``;
    ``tree_reduce(operator.add, [], 10) == 10``.
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn an outer-of-inner tree into an inner-of-outer tree.

    ``pytree_to_transpose`` must have structure ``outer_treedef`` whose leaves
    are trees of structure ``inner_treedef`` (inner leaves may be arbitrary
    subtrees). If ``inner_treedef`` is ``None`` it is taken from the first
    outer leaf. A mismatch raises ``TypeError`` (as in JAX) showing both
    structures.
    Example: ``tree_transpose(tree_structure([0, 0]), tree_structure((0, 0)),
    [(1, 2), (3, 4)]) == ([1, 3], [2, 4])``.
    """
    if inner_treedef is None:
        first = outer_treedef.flatten_up_to(pytree_to_transpose)
        if not first:
            raise TypeError("tree_transpose: cannot infer inner_treedef from an empty outer tree.")
        inner_treedef = tree_structure(first[0])
    expected = outer_treedef.compose(inner_treedef)
    try:
        flat = expected.flatten_up_to(pytree_to_transpose)
    except ValueError as e:
        raise TypeError(
            f"tree_transpose: tree does not have structure outer.compose(inner).\n"
            f"  tree structure:     {tree_structure(pytree_to_transpose)}\n"
            f"  expected structure: {expected}\n"
            f"  (outer={outer_treedef}, inner={inner_treedef})\n"
            f"details: {e}"
        ) from None
    n_in = inner_treedef.num_leaves
    n_out = outer_treedef.num_leaves
    rows = [flat[i * n_in:(i + 1) * n_in] for i in range(n_out)]
    columns = [outer_treedef.unflatten([row[j] for row in rows]) for j in range(n_in)]
    return inner_treedef.unflatten(columns)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True iff ``treedef`` has a single node (as in JAX, so ``None`` and ``()``
    count too; see :func:`treedef_is_strict_leaf`).

    Example: ``treedef_is_leaf(tree_structure(1)) is True``;
    ``treedef_is_leaf(tree_structure([1])) is False``.
    """
    return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
    """True iff ``treedef`` is exactly one leaf.

    Example: ``treedef_is_strict_leaf(tree_structure(None)) is False``.
    """
    return not treedef._node


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """Same as ``treedef.children()``.

    Example: ``len(treedef_children(tree_structure((1, 2, 3)))) == 3``.
    """
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """Treedef of a tuple whose children have the given treedefs.

    Example: ``treedef_tuple([tree_structure(1), tree_structure([1])])`` ->
    ``PyTreeDef((*, [*]))``.
    """
    return PyTreeDef((tuple, None, tuple(td._node for td in treedefs)))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True iff every element of ``iterable`` is a leaf (not a pytree node).

    ``None`` is a node, hence not a leaf.
    Example: ``all_leaves([1, 'a', object()]) is True``; ``all_leaves([1, (2,)]) is False``.
    """
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        if _handler_for(type(x)) is not None:
            return False
    return True


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """Like :func:`tree_flatten` but each leaf comes with its key path.

    Returns ``([(path, leaf), ...], treedef)`` where ``path`` is a tuple of key
    entries (``SequenceKey``, ``DictKey``, ``GetAttrKey``, ``FlattenedIndexKey``).
    Example: ``tree_flatten_with_path({'a': [5]})[0]`` ->
    ``[((DictKey(key='a'), SequenceKey(idx=0)), 5)]``.
    """
    out: list[tuple[tuple, Any]] = []
    node = _flatten_with_path(tree, (), out, is_leaf, _dispatch)
    return out, PyTreeDef(node, len(out))


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """``[(path, leaf), ...]`` in flatten order.

    Example: ``keystr(tree_leaves_with_path((0, (0, 7)))[-1][0]) == '[1][1]'``.
    """
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Like :func:`tree_map` but calls ``f(path, x, *ys)``.

    Example: ``tree_map_with_path(lambda p, x: keystr(p), {'a': (0, 0)})`` ->
    ``{'a': ("['a'][0]", "['a'][1]")}``.
    """
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = _flatten_rest(treedef, rest, "tree_map_with_path")
    if not others:
        return treedef.unflatten([f(p, x) for p, x in pairs])
    return treedef.unflatten(
        [f(p, x, *ys) for (p, x), ys in zip(pairs, zip(*others))]
    )


# ---------------------------------------------------------------------------
# The physical view, for transformations: typed leaves as nodes over their data
#
# A typed key array (core/prng_keys.py) is ONE leaf of shape S to every function above, as
# in JAX, but the tracing machinery knows only arrays of numbers: it traces the key's uint32
# data of shape S + (2,). Transformations (jit, vmap, grad, scan, cond, while, pmap, custom
# derivatives, checkpoint, device_put, ...) therefore flatten their arguments and results with
# the physical_* functions below, which see a typed leaf as a node whose one child is its data:
# the traced program gets the data, and unflattening the physical treedef rewraps it, so the
# user's function inside sees a typed leaf again (wrapping a tracer). Each typed leaf has exactly
# one data leaf, so a tree's logical and physical leaves correspond one to one, in order.
# ---------------------------------------------------------------------------


def register_physical_node(leaftype: type, data_of: Callable[[Any], Any],
                           wrap: Callable[[Any], Any]) -> None:
    """Register ``leaftype`` as a typed leaf: a leaf for every public function, and for the
    physical_* functions a node whose one child is ``data_of(x)`` (an array), rebuilt by
    ``wrap(data)``. jaxlib's registry (``fast_registry``, used by jit's fast path, a
    transformation) gets the physical view.
    Example: ``register_physical_node(Key, lambda k: k.data, Key)``; then
    ``tree_leaves(Key(a)) == [Key(a)]`` and ``physical_leaves(Key(a)) == [a]``.
    """
    if not isinstance(leaftype, type):
        raise TypeError(f"register_physical_node: the leaf type must be a class, got {leaftype!r}.")
    if leaftype in _registry or leaftype in _typed_leaves:
        raise ValueError(f"Duplicate pytree registration for {leaftype!r}.")

    def flatten(x):
        return (data_of(x),), None

    def unflatten(aux, children):
        return wrap(children[0])

    handler = _Handler(leaftype, "typed_leaf", flatten, unflatten,
                       lambda x: ([(FlattenedIndexKey(0), data_of(x))], None))
    _typed_leaves[leaftype] = handler
    _physical_dispatch[leaftype] = handler
    _dispatch[leaftype] = None
    if fast_registry is not None:
        fast_registry.register_node(leaftype, flatten, unflatten)


def is_typed_leaf(x: Any) -> bool:
    """Whether ``x`` is a typed leaf (a typed PRNG key array): a leaf whose physical view is its data.

    Example: ``is_typed_leaf(1) is False``.
    """
    return type(x) in _typed_leaves


def physical_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """:func:`tree_flatten` with each typed leaf replaced by its data; unflattening the treedef
    rewraps the data (see the section comment above).

    Example: ``physical_flatten([1, (2,)]) == tree_flatten([1, (2,)])`` (no typed leaves).
    """
    leaves: list[Any] = []
    node = _flatten(tree, leaves, is_leaf, _physical_dispatch)
    return leaves, PyTreeDef(node, len(leaves))


def physical_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """:func:`tree_leaves` with each typed leaf replaced by its data.

    Example: ``physical_leaves({'a': 1, 'b': None}) == [1]``.
    """
    leaves: list[Any] = []
    _leaves(tree, leaves, is_leaf, _physical_dispatch)
    return leaves


def physical_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The treedef of :func:`physical_flatten`.

    Example: ``physical_structure((1, 2)).num_leaves == 2``.
    """
    return physical_flatten(tree, is_leaf)[1]


def physical_map(f: Callable[..., Any], tree: Any, *rest: Any,
                 is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """:func:`tree_map` over physical leaves: ``f`` sees a typed leaf's data and its result is
    rewrapped.

    Example: ``physical_map(lambda x: x + 1, [1, 2]) == [2, 3]``.
    """
    leaves, treedef = physical_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    all_leaves = [leaves] + _flatten_rest(treedef, rest, "tree_map")
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


def physical_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """:func:`tree_flatten_with_path` with each typed leaf replaced by its data, which keeps the
    leaf's path.

    Example: ``physical_flatten_with_path([5])[0] == [((SequenceKey(0),), 5)]``.
    """
    out: list[tuple[tuple, Any]] = []
    node = _flatten_with_path(tree, (), out, is_leaf, _physical_dispatch)
    return out, PyTreeDef(node, len(out))


def _logical_node(node):
    if not node:
        return node
    t, aux, children = node
    if t in _typed_leaves:
        return _LEAF
    return (t, aux, tuple([_logical_node(c) for c in children]))


def _typed_mask(node, out):
    if not node:
        out.append(False)
    elif node[0] in _typed_leaves:
        out.append(True)
    else:
        for c in node[2]:
            _typed_mask(c, out)


def logical_structure(treedef: PyTreeDef) -> PyTreeDef:
    """The treedef the public functions give for the tree whose physical treedef is ``treedef``
    (typed leaves as leaves); the same number of leaves.

    Example: ``logical_structure(physical_structure((1, 2))) == tree_structure((1, 2))``.
    """
    return PyTreeDef(_logical_node(treedef._node), treedef._num_leaves)


def typed_leaf_mask(treedef: PyTreeDef) -> list[bool]:
    """For each leaf of the physical treedef ``treedef``, whether it is a typed leaf's data.

    Example: ``typed_leaf_mask(physical_structure([1, 2])) == [False, False]``.
    """
    out: list[bool] = []
    _typed_mask(treedef._node, out)
    return out


# ---------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------


class _HashableCallableShim:
    """Opaque wrapper keeping a plain ``functools.partial`` as static data.

    Without it ``functools.partial.__new__`` would merge the inner partial's
    arguments into the outer ``Partial``, turning them into leaves.
    """

    __slots__ = ("_fn",)

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    @property
    def func(self):
        return self._fn.func

    @property
    def args(self):
        return self._fn.args

    @property
    def keywords(self):
        return self._fn.keywords

    def __eq__(self, other):
        return isinstance(other, _HashableCallableShim) and self._fn == other._fn

    def __hash__(self):
        return hash(self._fn)

    def __repr__(self):
        return repr(self._fn)


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree.

    ``func`` is static (part of the treedef, compared by equality) while the
    bound positional ``args`` and ``keywords`` are children, so a ``Partial``
    can be passed through transformations and ``tree_map``. A plain
    ``functools.partial`` given as ``func`` stays opaque (static); a nested
    ``Partial`` is merged by ``functools.partial`` so its bound arguments
    become children of the outer one.
    Example: ``tree_leaves(Partial(operator.add, 1)) == [1]`` and
    ``tree_map(lambda x: x * 10, Partial(operator.add, 1))(2) == 12``.
    """

    def __new__(cls, func, *args, **kwargs):
        if isinstance(func, functools.partial) and not isinstance(func, Partial):
            func = _HashableCallableShim(func)
        return super().__new__(cls, func, *args, **kwargs)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)

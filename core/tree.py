"""`core.tree`: the pytree functions under JAX's short names (`jax.tree`): `core.tree.map` is
`core.tree_util.tree_map`, and so on. The same functions, no second implementation.

Example:
    >>> core.tree.map(lambda x: x * 2, {"a": 1, "b": (2, 3)})
    {'a': 2, 'b': (4, 6)}
    >>> core.tree.leaves([1, (2, None), {"c": 3}])
    [1, 2, 3]
"""
from . import tree_util as _tu

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map", "map_with_path",
           "reduce", "structure", "transpose", "unflatten"]

all = _tu.tree_all  # noqa: A001 (JAX's name)
flatten = _tu.tree_flatten
flatten_with_path = _tu.tree_flatten_with_path
leaves = _tu.tree_leaves
leaves_with_path = _tu.tree_leaves_with_path
map = _tu.tree_map  # noqa: A001 (JAX's name)
map_with_path = _tu.tree_map_with_path
reduce = _tu.tree_reduce
structure = _tu.tree_structure
transpose = _tu.tree_transpose
unflatten = _tu.tree_unflatten

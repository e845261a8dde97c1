"""`ravel_pytree`: a pytree of arrays as one flat vector, and back (as `jax.flatten_util`).

Optimizers written for a single vector (BFGS, a Newton step, a flat parameter average) use it to
run on any parameter pytree. The vector's dtype is the promoted dtype of the leaves; the unravel
function casts each piece back to its leaf's dtype and shape. Both directions are array
operations (concatenate, slice, reshape), so gradients flow through them. Typed PRNG keys
(`random.key`) are not numbers and are refused (TypeError), as JAX refuses them.

Example:
    >>> flat, unravel = ravel_pytree({"w": jnp.ones((2, 2)), "b": jnp.zeros(3)})
    >>> flat
    Array([0., 0., 0., 1., 1., 1., 1.], dtype=float32)
    >>> unravel(flat)["w"].shape
    (2, 2)
"""
import numpy as np

from . import dtypes
from . import lax
from . import numpy as jnp
from .tree_util import is_typed_leaf, keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """Flatten `pytree`'s leaves (in `tree_flatten` order) into one 1-D array; returns
    `(flat, unravel)`, where `unravel(flat_like)` rebuilds a pytree of the same structure, shapes and
    dtypes from a vector of `flat`'s shape and dtype.

    Example:
        >>> flat, unravel = ravel_pytree((jnp.arange(2), jnp.float32(5.0)))
        >>> flat, unravel(flat)[0]
        (Array([0., 1., 5.], dtype=float32), Array([0, 1], dtype=int32))
    """
    leaves, treedef = tree_flatten(pytree)
    if any(map(is_typed_leaf, leaves)):
        _refuse_keys(pytree)
    flat, unravel_leaves = _ravel_list([jnp.asarray(leaf) for leaf in leaves])
    return flat, _Unravel(treedef, unravel_leaves)


def _refuse_keys(pytree):
    path, key = next((p, x) for p, x in tree_flatten_with_path(pytree)[0] if is_typed_leaf(x))
    raise TypeError(f"ravel_pytree: the leaf at {keystr(path) or 'the root'} is a PRNG key array "
                    f"({key.dtype}{list(key.shape)}), which cannot be part of a numeric vector (JAX refuses it too). "
                    "Keep keys out of the raveled tree, or ravel random.key_data(keys).")


class _Unravel:
    """The unravel function of one `ravel_pytree` call (a class so that its repr says what it is)."""

    def __init__(self, treedef, unravel_leaves):
        self.treedef, self.unravel_leaves = treedef, unravel_leaves

    def __call__(self, flat):
        return tree_unflatten(self.treedef, self.unravel_leaves(flat))

    def __repr__(self):
        return f"<unravel function of ravel_pytree for {self.treedef}>"


def _ravel_list(leaves):
    if not leaves:
        return jnp.zeros((0,), dtypes.default_float_dtype()), lambda flat: []
    from_dtypes = [leaf.dtype for leaf in leaves]
    to_dtype = jnp.result_type(*from_dtypes)
    shapes = [leaf.shape for leaf in leaves]
    sizes = [int(np.prod(shape, dtype=np.int64)) for shape in shapes]
    flat = jnp.concatenate([jnp.ravel(lax.convert_element_type(leaf, to_dtype)) for leaf in leaves])
    total = sum(sizes)

    def unravel(arr):
        arr_dtype = getattr(arr, "dtype", None)
        if np.shape(arr) != (total,):
            raise ValueError(f"The unravel function of ravel_pytree expects an array of shape ({total},), got "
                             f"shape {np.shape(arr)}.")
        if arr_dtype is not None and np.dtype(arr_dtype) != np.dtype(to_dtype):
            raise TypeError(f"The unravel function of ravel_pytree expects an array of dtype {np.dtype(to_dtype)} "
                            f"(the raveled vector's), got {np.dtype(arr_dtype)}; cast it first.")
        arr = jnp.asarray(arr)
        pieces, start = [], 0
        for shape, size, dtype in zip(shapes, sizes, from_dtypes):
            piece = lax.slice(arr, (start,), (start + size,)).reshape(shape)
            pieces.append(piece if piece.dtype == dtype else lax.convert_element_type(piece, dtype))
            start += size
        return pieces

    return flat, unravel

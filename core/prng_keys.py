"""Typed PRNG key arrays (`random.key(seed)`), as JAX's new-style keys.

A `KeyArray` of shape `S` is a thin wrapper over its key data, a uint32 array of shape `S + (2,)`
(the threefry2x32 words of each key); its dtype is `KEY_DTYPE`, printed `key<fry>`, with
`jnp.issubdtype(k.dtype, dtypes.prng_key)` true. To tree_util it is ONE leaf, as in JAX, and it
is a `core.Array`; transformations (jit, vmap, scan, cond, pmap, grad, ...) flatten with
tree_util's physical view, where it is a node over its data, so they trace the data and the
function inside sees a KeyArray wrapping a tracer. See docs/design.md "Typed PRNG keys".

Shape operations act on the key axes and keep the trailing data axis: indexing, `reshape`,
`ravel`, `squeeze`, `swapaxes`/`transpose`, `concatenate`/`stack`, and (through `on_key_data`) the
jnp / lax shape and selection functions. Arithmetic, ordering and conversion to NumPy raise a
TypeError naming `random.key_data`.

Example:
    >>> k = random.key(0)
    >>> k.shape, str(k.dtype), random.split(k, 3).shape
    ((), 'key<fry>', (3,))
"""
import operator

import numpy as np

from . import dtypes
from . import lax
from .lax._base import aval_of
from .basearray import Array as _AbstractArray
from .tree_util import register_physical_node

__all__ = ["KeyArray", "KeyDType", "KEY_DTYPE", "is_key_array", "concatenate_keys", "stack_keys", "on_key_data",
           "array_of_keys"]


class KeyDType:
    """The dtype of typed keys of one PRNG implementation (only threefry2x32 exists here)."""
    __slots__ = ("impl", "name")
    type = dtypes.prng_key
    kind = "V"

    def __init__(self, impl, short):
        self.impl = impl
        self.name = f"key<{short}>"

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyDType) and other.impl == self.impl

    def __hash__(self):
        return hash(("KeyDType", self.impl))


KEY_DTYPE = KeyDType("threefry2x32", "fry")


def _no_arithmetic(op):
    def method(self, *args):
        raise TypeError(f"{op} is not defined on PRNG key arrays (dtype {self.dtype}, shape {self.shape}): keys "
                        "are not numbers. Derive new keys with random.split or random.fold_in, or operate on "
                        "the raw uint32 words with random.key_data(keys).")
    method.__name__ = op
    return method


class KeyArray:
    """An array of typed PRNG keys: shape `S`, dtype `key<fry>`, data uint32[S + (2,)]."""
    __slots__ = ("_base",)
    __array_priority__ = 100  # NumPy defers to our (raising) operators instead of broadcasting

    def __init__(self, base):
        self._base = base  # unchecked: tree_util rebuilds wrappers around placeholders too

    # ----- array-like attributes -----
    @property
    def dtype(self):
        return KEY_DTYPE

    @property
    def shape(self):
        return tuple(aval_of(self._base).shape[:-1])

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a scalar PRNG key array (shape ()).")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a scalar PRNG key array (shape ()).")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self):
        try:
            words = np.asarray(self._base)
        except Exception:  # a tracer
            return f"KeyArray(shape={self.shape}, dtype={self.dtype}) overlaying {self._base!r}"
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{words}"

    # ----- shape operations: on the key axes, the data axis stays last -----
    def __getitem__(self, idx):
        if isinstance(idx, KeyArray):
            raise TypeError("a PRNG key array cannot index an array.")
        idx = idx if isinstance(idx, tuple) else (idx,)
        used = sum(np.ndim(i) if getattr(i, "dtype", None) == np.bool_ else 1 for i in idx
                   if i is not None and i is not Ellipsis)
        if used > self.ndim:  # the data axis is not a key axis: it cannot be indexed
            raise IndexError(f"too many indices for a PRNG key array of shape {self.shape}: {used} were indexed.")
        if any(i is Ellipsis for i in idx):
            idx = idx + (slice(None),)  # the ellipsis must not swallow the data axis
        return KeyArray(self._base[idx])

    def reshape(self, *shape, order="C"):
        if order != "C":
            raise NotImplementedError("KeyArray.reshape supports order='C' only.")
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)) else shape
        shape = tuple(operator.index(d) for d in shape)
        if shape.count(-1) == 1:
            known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
            shape = tuple(self.size // max(known, 1) if d == -1 else d for d in shape)
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise ValueError(f"cannot reshape a PRNG key array of shape {self.shape} into shape {shape}.")
        return KeyArray(lax.reshape(self._base, (*shape, 2)))

    def ravel(self):
        return self.reshape(-1)

    flatten = ravel

    def copy(self):
        from .numpy import copy
        return KeyArray(copy(self._base))

    def take(self, indices, axis=None, **kwargs):
        from .numpy import take
        return take(self, indices, axis=axis, **kwargs)

    def squeeze(self, axis=None):
        shape = self.shape
        axes = range(len(shape)) if axis is None else [a % len(shape) for a in np.atleast_1d(axis)]
        keep = [d for i, d in enumerate(shape) if not (i in axes and d == 1)]
        return self.reshape(tuple(keep))

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        axes = tuple(range(self.ndim))[::-1] if not axes else tuple(a % self.ndim for a in axes)
        return KeyArray(lax.transpose(self._base, (*axes, self.ndim)))

    @property
    def T(self):
        return self.transpose()

    def swapaxes(self, a, b):
        perm = list(range(self.ndim))
        a, b = a % self.ndim, b % self.ndim
        perm[a], perm[b] = perm[b], perm[a]
        return self.transpose(tuple(perm))

    # ----- equality compares the keys' words; everything else numeric is an error -----
    def __eq__(self, other):
        if not isinstance(other, KeyArray):
            return NotImplemented
        from . import numpy as jnp
        return jnp.all(jnp.equal(self._base, other._base), axis=-1)

    def __ne__(self, other):
        if not isinstance(other, KeyArray):
            return NotImplemented
        from . import numpy as jnp
        return jnp.logical_not(self == other)

    __hash__ = None

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"a PRNG key array (dtype {self.dtype}, shape {self.shape}) has no NumPy form; use "
                        "np.asarray(random.key_data(keys)) for its uint32 words.")

    def __bool__(self):
        raise TypeError("the truth value of a PRNG key array is not defined.")

    for _op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__",
                "__matmul__", "__rmatmul__", "__neg__", "__pos__", "__abs__", "__invert__", "__and__", "__rand__",
                "__or__", "__ror__", "__xor__", "__rxor__", "__lshift__", "__rshift__", "__lt__", "__le__",
                "__gt__", "__ge__", "__float__", "__int__", "__index__", "astype"):
        locals()[_op] = _no_arithmetic(_op)
    del _op


# One leaf for tree_util, as in JAX; transformations trace its data (tree_util's physical view).
register_physical_node(KeyArray, operator.attrgetter("_base"), KeyArray)
# `isinstance(k, core.Array)` holds for keys, traced ones included (a KeyArray wraps a tracer there).
_AbstractArray.register(KeyArray)


def is_key_array(x):
    """Whether `x` is a typed PRNG key array (`random.key`), not a raw uint32[..., 2] key."""
    return isinstance(x, KeyArray)


def _typed_key_class():  # for core.lax, which prng_keys imports: lax.select_n / dynamic_slice take keys
    from .lax import _base
    _base.register_key_array_type(KeyArray)


_typed_key_class()


def on_key_data(fn, *args, **kwargs):
    """`fn(*args, **kwargs)` for a shape or indexing function `fn` of core.numpy or core.lax, given
    typed key arrays among its positional `args`: `fn` is vmapped over the keys' data axis, so it
    sees arrays of the keys' shape S (one uint32 word of each key) and every axis, shape and index
    argument means what it means for keys of shape S, as in JAX; its array results (S' + the data
    axis) come back as key arrays. The caller checks first (`check_all_keys`) that the operands
    `fn` takes values from are all keys or none.

    Example:
        >>> from core import numpy as jnp
        >>> ks = random.split(random.key(0), 6).reshape(2, 3)
        >>> on_key_data(jnp.moveaxis, ks, 0, -1).shape
        (3, 2)
    """
    from .batching_api import vmap
    from .tree_util import tree_map
    keyed = [isinstance(a, KeyArray) for a in args]

    def per_word(*words):
        it = iter(words)
        return fn(*[next(it) if k else a for a, k in zip(args, keyed)], **kwargs)

    out = vmap(per_word, in_axes=-1, out_axes=-1)(*[a._base for a, k in zip(args, keyed) if k])
    return tree_map(KeyArray, out)


def check_all_keys(name, values):
    """`values` (the value operands of `name`) are all typed key arrays, or none of them is."""
    keyed = [isinstance(v, KeyArray) for v in values]
    if any(keyed) and not all(keyed):
        kinds = ", ".join(f"{v.dtype}{list(v.shape)}" if hasattr(v, "dtype") and hasattr(v, "shape")
                          else type(v).__name__ for v in values)
        raise TypeError(f"{name}: cannot mix PRNG key arrays with other values (got {kinds}); wrap raw "
                        "uint32[..., 2] keys with random.wrap_key_data, or take random.key_data of the keys.")
    return any(keyed)


def _key_axis(name, keys, axis, extra=0):
    ndim = keys[0].ndim + extra
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for PRNG key arrays of rank {keys[0].ndim}.")
    return axis % ndim


def _all_keys(name, arrays):
    arrays = list(arrays)
    if not arrays:
        raise ValueError(f"{name}: need at least one array.")
    if not all(isinstance(a, KeyArray) for a in arrays):
        kinds = sorted({type(a).__name__ for a in arrays})
        raise TypeError(f"{name}: cannot mix PRNG key arrays with other arrays (got {', '.join(kinds)}); wrap "
                        "raw uint32[..., 2] keys with random.wrap_key_data first.")
    return arrays


def concatenate_keys(arrays, axis=0):
    """`jnp.concatenate` for key arrays: along a key axis. Example: see the module docstring."""
    arrays = _all_keys("concatenate", arrays)
    if arrays[0].ndim == 0:
        raise ValueError("concatenate: zero-dimensional PRNG key arrays cannot be concatenated; use stack.")
    axis = _key_axis("concatenate", arrays, axis)
    return KeyArray(lax.concatenate([a._base for a in arrays], axis))


def stack_keys(arrays, axis=0):
    """`jnp.stack` for key arrays: a new key axis."""
    arrays = _all_keys("stack", arrays)
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"stack: all PRNG key arrays must have the same shape, got {sorted(shapes)}.")
    axis = _key_axis("stack", arrays, axis, extra=1)
    expanded = [lax.expand_dims(a._base, (axis,)) for a in arrays]
    return KeyArray(lax.concatenate(expanded, axis))


def array_of_keys(obj, dtype=None, copy=True, ndmin=0, name="array"):
    """`jnp.array` / `jnp.asarray` of typed keys, as JAX's: `obj` is a key array or a (nested) list
    or tuple of key arrays, which are stacked; the result is a key array, `obj` itself when it is
    one and `copy` is false. `dtype` may be None or the key dtype: keys do not convert to numbers
    (ValueError, as in JAX; `random.key_data` gives their words). `ndmin` adds leading key axes.

    Example:
        >>> ks = random.split(random.key(0), 2)
        >>> array_of_keys(ks, copy=False) is ks, array_of_keys([ks[0], ks[1]]).shape
        (True, (2,))
    """
    if dtype is not None and not KEY_DTYPE == dtype:
        try:
            dtype = np.dtype(dtype).name
        except TypeError:
            pass
        raise ValueError(f"{name}: cannot convert PRNG key arrays ({KEY_DTYPE}) to dtype {dtype}; keys are not "
                         "numbers. Use random.key_data(keys) for their uint32 words.")
    if isinstance(obj, KeyArray):
        out = obj.copy() if copy else obj
    else:
        parts = [array_of_keys(o, copy=False, name=name) if isinstance(o, (list, tuple)) else o for o in obj]
        if not parts or not all(isinstance(p, KeyArray) for p in parts):
            kinds = sorted({type(p).__name__ for p in parts})
            raise TypeError(f"{name}: a list that holds PRNG key arrays must hold only key arrays (got "
                            f"{', '.join(kinds) or 'an empty list'}); wrap raw uint32[..., 2] keys with "
                            "random.wrap_key_data, or take random.key_data of the keys.")
        out = stack_keys(parts)
    if ndmin > out.ndim:
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return out

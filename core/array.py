"""`core.Array`: an immutable array on a device.

An Array wraps one jaxlib device buffer and its abstract value. NumPy-style methods and operators
(`x + y`, `x.sum()`, `x[1:]`, `x.at[0].set(1)`) are installed by `core.numpy`, so that Arrays and
tracers share one implementation.
"""
import os

import numpy as np

from . import dtypes
from .avals import ShapedArray
from .runtime import client as _client
from .runtime import buffers as _buffers
from .tree_util import physical_leaves as _physical_leaves, tree_flatten as _tree_flatten

__all__ = ["Array", "asarray_device", "device_put", "device_get", "block_until_ready"]

try:  # Array's base in C (core/_jitfast.c): the host value through the Python buffer protocol
    if os.environ.get("PURENN_PURE_PYTHON_JIT", "") == "1":
        raise ImportError("PURENN_PURE_PYTHON_JIT=1")
    from . import _jitfast
    _ArrayBase = _jitfast.ArrayBase
except (ImportError, AttributeError):  # no compiler at install time, or an extension built before it
    _jitfast = None
    _ArrayBase = object


class Array(_ArrayBase):
    """An immutable n-dimensional array living on a device.

    Example:
        >>> import core.numpy as jnp
        >>> jnp.array([1.0, 2.0]) * 2
        Array([2., 4.], dtype=float32)
    """
    __slots__ = ("_buf", "aval", "_npy", "_device", "_fkey", "__weakref__")
    __array_priority__ = 100

    def __init__(self, buf, aval, device=None):
        self._buf = buf
        self.aval = aval
        self._npy = None
        self._device = device  # None: uncommitted, on the default device
        self._fkey = aval.type_id if device is None else None  # jit's fast-path signature entry (api.py)

    # ----- the basics -------------------------------------------------------------------
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    itemsize = property(lambda self: self.aval.dtype.itemsize)
    nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)

    def _value(self):
        """The host copy (read-only ndarray), fetched once."""
        v = self._npy
        if v is None:
            try:
                v = self._npy = _buffers.to_numpy(self._buf, self.aval.dtype)
            except RuntimeError:
                self._raise_if_deleted()
                raise
        return v

    def _raise_if_deleted(self):
        if self._buf.is_deleted():
            raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short()}. (It was donated "
                               "to a jitted function or deleted explicitly; use the function's output instead.)")

    def __array__(self, dtype=None, copy=None):
        v = self._npy
        if v is None:
            v = self._value()
        if dtype is None and not copy:  # np.asarray(x): the common case first
            return v
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        if copy:
            return v.copy()
        return v

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def item(self, *args):
        return self._value().item(*args)

    def tolist(self):
        return self._value().tolist()

    def __bool__(self):
        if self.aval.size != 1:
            raise ValueError(f"The truth value of an array with shape {self.aval.shape} is ambiguous. "
                             "Use a.any() or a.all().")
        return bool(self._value())

    def _scalar(self, convert, what):
        if self.aval.size != 1:
            raise TypeError(f"only size-1 arrays can be converted to Python {what}s, got shape {self.aval.shape}")
        return convert(self._value().reshape(()))

    def __int__(self):
        return self._scalar(int, "int")

    def __float__(self):
        return self._scalar(float, "float")

    def __complex__(self):
        return self._scalar(complex, "complex")

    def __index__(self):
        if not dtypes.is_int(self.aval.dtype) and not dtypes.is_bool(self.aval.dtype):
            raise TypeError(f"only integer arrays can be used as an index, got dtype {self.aval.dtype}")
        return self._scalar(int, "int")

    def __hash__(self):
        raise TypeError("unhashable type: 'Array' (arrays are mutable-looking values; use a tuple or "
                        "x.item() as a key)")

    def __setitem__(self, idx, value):
        raise TypeError("'Array' object does not support item assignment: purenn arrays are immutable. "
                        "Use x = x.at[idx].set(value) (or .add, .multiply, .min, .max) instead.")

    def __repr__(self):
        body = np.array2string(np.asarray(self._value()), separator=", ", prefix="Array(")
        extra = f", dtype={self.aval.dtype.name}"
        if self.aval.size == 0 and self.aval.shape != (0,):
            extra = f", shape={self.aval.shape}" + extra
        if self.aval.weak_type:
            extra += ", weak_type=True"
        return f"Array({body}{extra})"

    def __str__(self):
        return str(self._value())

    def __format__(self, spec):
        if self.aval.ndim == 0:
            return format(self._value()[()], spec)
        return format(str(self), spec)

    def __reduce__(self):
        return (_reconstruct, (np.asarray(self._value()), self.aval.weak_type))

    def __copy__(self):
        # as in JAX: a copy owns its buffer, so donating one leaves the other usable
        return copy_array(self)

    def __deepcopy__(self, memo):
        return copy_array(self)

    # ----- devices ----------------------------------------------------------------------
    def devices(self):
        return {self.device}

    @property
    def device(self):
        return self._device or _client.backend().default_device

    @property
    def committed(self):
        return self._device is not None

    def block_until_ready(self):
        try:
            self._buf.block_until_ready()
        except RuntimeError:
            self._raise_if_deleted()
            raise
        return self

    def is_ready(self):
        """Whether the computation producing this array has finished (as `jax.Array.is_ready`):
        True means a fetch will not wait."""
        self._raise_if_deleted()    # jaxlib's is_ready crashes the process on a deleted buffer
        return self._buf.is_ready()

    def is_deleted(self):
        return self._buf.is_deleted()

    def delete(self):
        _forget_cached(self._buf)
        self._buf.delete()

    def copy_to_host_async(self):
        """Start the transfer of this array to the host, without waiting (a no-op on CPU)."""
        _buffers.copy_to_host_async(self._buf)


if _jitfast is not None:
    # NumPy reads an Array through the buffer protocol before `__array__`: exactly this type
    # exports its `_buf` (jaxlib's read-only view of the device buffer on CPU); subclasses and the
    # buffers jaxlib will not export go through `_value()` (core/_jitfast.c, ArrayBase).
    _jitfast.configure_array(Array)


def _reconstruct(value, weak_type):
    return asarray_device(value, weak_type=weak_type)


def asarray_device(value, dtype=None, weak_type=False, device=None):
    """Put `value` (NumPy array or scalar) on `device` as an Array with a canonical dtype."""
    value = np.asarray(value)
    dt = dtypes.canonicalize_dtype(value.dtype if dtype is None else dtype)
    if value.dtype != dt:
        value = value.astype(dt)
    aval = ShapedArray(value.shape, dt, weak_type)
    return Array(_buffers.put(value, aval, device), aval, device)


def to_array(x):
    """The Array form of any array-like primitive operand: Arrays pass through; Python scalars
    become weakly typed arrays; NumPy values keep their (canonicalized) dtype."""
    if isinstance(x, Array):
        return x
    t = type(x)
    if t in _SCALAR_TYPES:
        return _scalar_array(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return asarray_device(x)  # canonicalize_dtype refuses unsupported dtypes, converts byte order
    if hasattr(x, "__jax_array__"):
        return to_array(x.__jax_array__())
    if isinstance(x, (bool, int, float, complex)):
        return _scalar_array(x)
    from .trace import Tracer, escaped_tracer_error
    if isinstance(x, Tracer):  # a traced value where only concrete ones can be: it leaked
        raise escaped_tracer_error(x)
    raise TypeError(f"Value {x!r} of type {type(x)} is not a valid purenn array type")


_SCALAR_TYPES = (bool, int, float, complex)

# Python scalar operands as device arrays, per (value, dtype): `x * 2.0` is a common eager pattern.
# These arrays are operands only: a function that hands an array to the user makes a new one
# (`new_scalar_array`), because a user may donate or delete what it is given, and a deleted cached
# buffer would break every later use of that constant (docs/design.md, "Donation and shared
# buffers"). `_scalar_cache_keys` maps id(buffer) -> key, so that donation and `delete()` can tell a
# cached buffer (`is_cached_buffer`) without scanning the cache.
_scalar_cache = {}
_scalar_cache_keys = {}


def _scalar_host_value(x, pytype, dtype):
    """`x` (of Python type `pytype`) as a 0-d ndarray of `dtype` (default: the scalar's canonical
    dtype); an int out of the dtype's range is an OverflowError, as in JAX."""
    dt = dtypes.scalar_type_default(pytype) if dtype is None else dtypes.canonicalize_dtype(dtype)
    if pytype is int and dtypes.is_int(dt):
        info = np.iinfo(dt)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {dt.name}")
    return np.array(x, dtype=dt)


def _python_scalar_type(x):
    pytype = type(x)
    if pytype not in _SCALAR_TYPES:
        pytype = bool if isinstance(x, bool) else int if isinstance(x, int) else float if isinstance(x, float) else complex
    return pytype


def scalar_array(x, dtype=None, weak_type=None):
    """A device Array holding the Python scalar `x`, as `dtype` (default: the scalar's canonical
    dtype, weakly typed), from a cache: for primitive operands only, never returned to a user
    (`new_scalar_array` makes one that is)."""
    pytype = type(x)
    if pytype not in _SCALAR_TYPES:
        pytype = _python_scalar_type(x)
        x = pytype(x)
    if weak_type is None:
        weak_type = pytype is not bool
    key = (pytype, x if pytype is not float else x.hex(), dtype, weak_type, dtypes.config.enable_x64)
    arr = _scalar_cache.get(key)
    if arr is None:
        value = _scalar_host_value(x, pytype, dtype)
        value.flags.writeable = False  # the device buffer may then share its memory: it is never donated
        arr = asarray_device(value, weak_type=weak_type)
        arr._npy = value  # the host value, for reads and for `new_scalar_array`
        if len(_scalar_cache) > 1024 or len(_scalar_cache_keys) > 1024:
            _scalar_cache.clear()
            _scalar_cache_keys.clear()
        _scalar_cache[key] = arr
        _scalar_cache_keys[id(arr._buf)] = key
    return arr


def new_scalar_array(x, dtype=None, weak_type=None):
    """Like `scalar_array`, but a new Array with its own buffer: what functions that return a
    Python scalar as an array to the user (`jnp.array(2.0)`, `jnp.zeros(())`) give.

    Example:
        >>> from core.array import new_scalar_array
        >>> a, b = new_scalar_array(2.0), new_scalar_array(2.0)
        >>> a is b, a
        (False, Array(2., dtype=float32, weak_type=True))
    """
    cached = scalar_array(x, dtype, weak_type)  # its host value and aval: checked and converted once
    # a writeable host value is copied to the device (`_buffers.put`): the buffer is the device's
    # own, so donating it really hands its memory to the program
    return Array(_buffers.put(cached._npy.copy(), cached.aval), cached.aval)


def is_cached_buffer(buf):
    """Whether the scalar-operand cache holds `buf` (a jaxlib buffer): such a buffer must not be
    donated or deleted. A stale entry of `_scalar_cache_keys` (its array was dropped by
    `core.clear_caches()`) fails the identity check, so it never gives a false answer.

    Example:
        >>> from core.array import is_cached_buffer, scalar_array
        >>> is_cached_buffer(scalar_array(2.0)._buf), is_cached_buffer(jnp.array(2.0)._buf)
        (True, False)
    """
    key = _scalar_cache_keys.get(id(buf))
    if key is None:
        return False
    arr = _scalar_cache.get(key)
    return arr is not None and arr._buf is buf


def _forget_cached(buf):
    """Drop `buf` from the scalar-operand cache, if it holds it (before the buffer is deleted)."""
    if is_cached_buffer(buf):
        _scalar_cache.pop(_scalar_cache_keys.pop(id(buf), None), None)  # pop: another thread may clear


def copy_array(x):
    """A new Array equal to `x` (same aval and device) with its own buffer: a device-side copy,
    no host round trip and no program to compile. `jnp.copy` and `copy.copy` end here eagerly
    (a ShardedArray's copy is of its gathered value: a plain Array).

    Example:
        >>> from core.array import copy_array
        >>> x = jnp.arange(3.0)
        >>> y = copy_array(x)
        >>> x.delete()
        >>> y
        Array([0., 1., 2.], dtype=float32)
    """
    try:
        buf = _buffers.copy(x._buf)
    except RuntimeError:
        x._raise_if_deleted()
        raise
    return Array(buf, x.aval, x._device)


_scalar_array = scalar_array


def device_put(x, device=None):
    """Place a pytree of arrays on `device` (the default device when None).

    Example: `core.device_put(np.ones(3))` returns an Array on the default device. With a device,
    the result is committed to it, and eager operations on it run there.
    """
    if device is None and type(x) is np.ndarray:
        # the commonest call (a batch's arrays, put by a prefetch thread): skip the pytree walk and
        # the checks a dtype that is already canonical does not need (~8 of ~15 us an array)
        aval = _ndarray_aval(x)
        if aval is not None:
            return Array(_buffers.put(x, aval), aval)
    from .tree_util import physical_map  # a typed key's data is placed (core/tree_util.py)

    def put_one(v):
        if isinstance(v, Array):
            # to the device it is on: the same buffer (as JAX's device_put, which may alias)
            if device is None or device == v.device:
                return v if device is None or v._device is device else Array(v._buf, v.aval, device)
            return asarray_device(v._value(), weak_type=v.aval.weak_type, device=device)
        if device is None and type(v) in _SCALAR_TYPES:
            return new_scalar_array(v)  # its own buffer, not the operand cache's: the user may donate it
        arr = to_array(v)
        if device is None:
            return arr
        return asarray_device(arr._value(), weak_type=arr.aval.weak_type, device=device)

    return physical_map(put_one, x)


# the avals of the NumPy arrays `device_put` placed, by (shape, dtype): only dtypes that are
# canonical whatever `enable_x64` says, so an entry never goes stale
_NDARRAY_AVALS = {}
_ALWAYS_CANONICAL = frozenset(np.dtype(t) for t in (np.float32, np.int32, np.uint32, np.bool_, np.float16,
                                                    np.int8, np.uint8, np.int16, np.uint16, np.complex64))


def _ndarray_aval(x):
    """The aval of NumPy array `x` when its dtype is canonical in every mode and its byte order
    native (anything else takes `to_array`'s way), else None."""
    key = (x.shape, x.dtype)
    aval = _NDARRAY_AVALS.get(key)
    if aval is None and x.dtype in _ALWAYS_CANONICAL and x.dtype.isnative:
        if len(_NDARRAY_AVALS) > 256:
            _NDARRAY_AVALS.clear()
        aval = _NDARRAY_AVALS[key] = ShapedArray(x.shape, x.dtype, False)
    return aval


def device_get(x):
    """Copy a pytree of Arrays to the host as NumPy arrays (other leaves pass through).

    Each value is read-only (on CPU, a view of the device buffer, as JAX gives). Off CPU the
    transfers of all leaves start before the first is read, so they overlap.

    Example:
        >>> core.device_get({"w": jnp.ones(2), "step": 3})
        {'step': 3, 'w': array([1., 1.], dtype=float32)}
    """
    if type(x) is Array:
        return x._value()
    leaves, treedef = _tree_flatten(x)
    if not _buffers._host_is_device():
        for v in leaves:
            if isinstance(v, Array) and v._npy is None:
                v.copy_to_host_async()
    return treedef.unflatten([v._value() if isinstance(v, Array) else v for v in leaves])


def _collect_buffers(x, bufs):
    """Append the buffers of the Arrays in the pytree `x` to `bufs` (ShardedArrays are waited for
    here). Only the set of leaves matters, not their order, so plain lists, tuples and dicts are
    walked directly (dicts unsorted); any other node goes through `tree_leaves`."""
    t = type(x)
    if t is Array:
        bufs.append(x._buf)
    elif t is list or t is tuple:
        for c in x:
            _collect_buffers(c, bufs)
    elif t is dict:
        for c in x.values():
            _collect_buffers(c, bufs)
    elif isinstance(x, Array):  # ShardedArray: its own buffers
        x.block_until_ready()
    elif x is not None and t not in _SCALAR_TYPES:
        for leaf in _physical_leaves(x):  # custom nodes, namedtuples, dict subclasses, typed keys; or a leaf
            if type(leaf) is Array:
                bufs.append(leaf._buf)
            elif isinstance(leaf, Array):
                leaf.block_until_ready()


def block_until_ready(x):
    """Wait until every Array in the pytree `x` is computed; returns `x` itself.

    The buffers of a tree are waited for in one jaxlib call (`batched_block_until_ready`), and a
    single Array takes no tree walk, so a blocked call of a small program costs what JAX's does.

    Example:
        >>> tree = {"a": jnp.ones(2), "b": [jnp.zeros(3)]}
        >>> core.block_until_ready(tree) is tree
        True
    """
    if type(x) is Array:
        try:
            x._buf.block_until_ready()
        except RuntimeError:
            x._raise_if_deleted()
            raise
        return x
    bufs = []
    _collect_buffers(x, bufs)
    if bufs:
        try:
            _buffers.block_until_ready_all(bufs)
        except RuntimeError:
            for leaf in _physical_leaves(x):  # the named error of the deleted one
                if isinstance(leaf, Array):
                    leaf.block_until_ready()
            raise
    return x

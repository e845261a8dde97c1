"""Host data in and out: `.npy`/`.npz` files, text, DLPack, and the two sources jax.numpy refuses.

These run on host values, eagerly: a file or an iterator is consumed as a side effect, which a
traced (jit, vmap, grad) function must not do, so none of them is meant to be called under a trace.
"""
import numpy as np

from .. import dtypes
from ..basearray import Array
from .creation import array, asarray

__all__ = ["load", "save", "savez", "fromstring", "from_dlpack", "fromfile", "fromiter"]

# NumPy's writers take anything with __array__, purenn's arrays included: jax.numpy re-exports them.
save = np.save
savez = np.savez

# NumPy has no bfloat16: `np.save` of one writes its 2-byte records as the void dtype 'V2'.
_BFLOAT16_AS_SAVED = np.dtype("V2")


def load(file, *args, **kwargs):
    """`numpy.load`, returning a purenn Array for a `.npy` file whose dtype an Array can hold.

    A bfloat16 array written by `save` comes back as bfloat16 (NumPy reads it as void 'V2'); any other
    dtype purenn cannot hold (strings, objects) and `.npz` archives come back as NumPy returns them.
    Extra arguments go to `numpy.load`.

    >>> import io
    >>> import core.numpy as jnp
    >>> f = io.BytesIO()
    >>> jnp.save(f, jnp.array([1.5, 2.0], dtype=jnp.bfloat16))
    >>> _ = f.seek(0)
    >>> jnp.load(f)
    Array([1.5, 2], dtype=bfloat16)
    """
    out = np.load(file, *args, **kwargs)
    if not isinstance(out, np.ndarray):
        return out
    if out.dtype == _BFLOAT16_AS_SAVED:
        out = out.view(dtypes.bfloat16)
    if np.dtype(out.dtype).newbyteorder("=") not in dtypes.SUPPORTED:
        return out
    return asarray(out)


def fromstring(string, dtype=float, count=-1, *, sep):
    """A 1-D Array parsed from the text `string`, its items separated by `sep` (`numpy.fromstring`).

    `dtype` is canonicalized as in `array` (a Python `float` is float32 unless x64 is enabled).

    >>> import core.numpy as jnp
    >>> jnp.fromstring("1, 2, 3", dtype=int, sep=",")
    Array([1, 2, 3], dtype=int32)
    """
    value = np.fromstring(string, dtype=np.dtype(dtype), count=count, sep=sep)
    return array(value, dtype=dtypes.check_user_dtype(dtype, "fromstring"))


def from_dlpack(x, /, *, device=None, copy=None):
    """An Array from `x`, any object with `__dlpack__` (a NumPy array, a torch CPU tensor).

    The data are read through NumPy's DLPack import and placed on `device` (the default device if
    None); `copy` is passed to `numpy.from_dlpack`. A purenn Array is returned as it is (or copied
    when `copy=True`).

    >>> import numpy as np
    >>> import core.numpy as jnp
    >>> jnp.from_dlpack(np.arange(3, dtype=np.float32))
    Array([0., 1., 2.], dtype=float32)
    """
    from ..array import device_put
    if isinstance(x, Array):
        value = array(x, copy=True) if copy else x
    else:
        if not hasattr(x, "__dlpack__"):
            raise TypeError(f"from_dlpack: expected an object with a __dlpack__ method (a NumPy array, a "
                            f"DLPack-capable tensor), got {type(x).__name__}; use jnp.asarray for other inputs")
        value = asarray(np.from_dlpack(x, copy=copy))
    return value if device is None else device_put(value, device)


def fromfile(*args, **kwargs):
    """Not provided, as in jax.numpy: reading a file is a side effect that jit, vmap and grad must not
    repeat or skip. Read on the host instead: `jnp.asarray(np.fromfile(...))`, outside traced code."""
    raise NotImplementedError(
        "jnp.fromfile is not provided: reading a file is a side effect, unsafe inside jit/vmap/grad. "
        "Read it on the host with jnp.asarray(np.fromfile(...)), outside any traced function.")


def fromiter(*args, **kwargs):
    """Not provided, as in jax.numpy: consuming an iterator is a side effect that jit, vmap and grad
    must not repeat or skip. Build it on the host instead: `jnp.asarray(np.fromiter(...))`."""
    raise NotImplementedError(
        "jnp.fromiter is not provided: consuming an iterator is a side effect, unsafe inside "
        "jit/vmap/grad. Build it on the host with jnp.asarray(np.fromiter(...)), outside any traced function.")

"""`core.Array` (and `core.numpy.ndarray`): the public array type, as `jax.Array` is.

It is abstract: a concrete device array (`core.array.Array`, the class every array operation
makes) and every tracer (under `grad`, `jit`, `vmap`, `pmap`) are instances of it, so that user
code that checks `isinstance(x, core.Array)` behaves the same inside and outside a
transformation, as in JAX. The concrete class is registered as a virtual subclass rather than
made a subclass, and core's own code keeps checking the concrete class (`type(x) is Array` in
the jit fast path, `isinstance(x, array.Array)` where a device buffer is needed): there a tracer
must not pass for an array. Calling `core.Array(buf, aval)` builds a concrete array.

Example:
    >>> x = jnp.ones(3)
    >>> isinstance(x, core.Array), type(x) is core.array.Array
    (True, True)
    >>> core.grad(lambda x: float(isinstance(x, core.Array)) * x)(2.0)
    Array(1., dtype=float32)
"""
import abc

from .array import Array as _DeviceArray
from .trace import Tracer as _Tracer

__all__ = ["Array"]


class _ArrayMeta(abc.ABCMeta):
    def __call__(cls, *args, **kwargs):
        # the abstract type cannot be instantiated itself; `core.Array(buf, aval)` keeps building the
        # concrete array, as it did when `core.Array` was the concrete class
        return _DeviceArray(*args, **kwargs)


class Array(metaclass=_ArrayMeta):
    """The type of every array value: a device array, or a tracer standing for one inside a
    transformation (`isinstance(x, core.Array)` is True for both, as with `jax.Array`)."""
    __slots__ = ()


Array.register(_DeviceArray)  # ShardedArray subclasses it
Array.register(_Tracer)

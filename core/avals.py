"""Abstract values: what a transformation knows about an array without its contents."""
import math
import threading

import numpy as np

from . import dtypes

__all__ = ["ShapedArray", "ShapeDtypeStruct"]


_type_ids = {}
_type_ids_lock = threading.Lock()  # two threads must never hand out the same id for different types


class ShapedArray:
    """The type of an array: shape, dtype and whether the dtype is weak (came from a Python scalar).

    Example: `ShapedArray((3, 4), np.float32)` prints as `f32[3,4]`.
    """
    __slots__ = ("shape", "dtype", "weak_type", "_hash", "type_id")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        key = (self.shape, self.dtype, self.weak_type)
        self._hash = hash(key)
        # a small int naming this type, equal for equal avals: jit's dispatch keys on these ints,
        # which hash and compare in C (the table grows with the distinct types a program uses)
        type_id = _type_ids.get(key)
        if type_id is None:
            with _type_ids_lock:  # double-checked: `len` then store is not atomic
                type_id = _type_ids.get(key)
                if type_id is None:
                    type_id = _type_ids[key] = len(_type_ids)
        self.type_id = type_id

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __eq__(self, other):
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return self._hash

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self.shape if shape is None else shape, self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def strip_weak_type(self):
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def str_short(self):
        return f"{dtypes.short_name(self.dtype)}[{','.join(map(str, self.shape))}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"

    __str__ = str_short


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (for `eval_shape` and friends)."""
    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape, self.dtype, self.weak_type = tuple(shape), np.dtype(dtype), weak_type

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self):
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"

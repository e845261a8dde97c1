"""NumPy-style methods and operators for `core.Array` and tracers, defined once for both.

Each method forwards to the `core.numpy` function of the same meaning, looked up when called, so
a function added to `core.numpy` later is picked up without touching this table. Each is a public
entry point (its errors show the user's frames only, see core/traceback_util.py): it calls the
plain function behind `core.numpy`'s entry-point wrapper and filters in its own frame, so an
operator costs no extra call layer.
"""
import numpy as np

from ..array import Array
from ..trace import Tracer
from ..traceback_util import filter_exception, register_boundary, unwrap_boundary

# operator -> (core.numpy function name, whether the operands are swapped)
_BINARY_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift", "divmod": "divmod",
}
_COMPARISONS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                "gt": "greater", "ge": "greater_equal"}
_UNARY_OPERATORS = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}

# method name -> core.numpy function name (the array is the first argument)
_METHODS = {
    "all": "all", "any": "any", "argmax": "argmax", "argmin": "argmin", "argpartition": "argpartition",
    "argsort": "argsort", "astype": "_astype", "choose": "choose", "clip": "clip", "compress": "compress",
    "conj": "conjugate", "conjugate": "conjugate", "copy": "copy", "cumprod": "cumprod", "cumsum": "cumsum",
    "diagonal": "diagonal", "dot": "dot", "flatten": "ravel", "max": "max", "mean": "mean", "min": "min",
    "nonzero": "nonzero", "prod": "prod", "ptp": "ptp", "ravel": "ravel", "repeat": "repeat",
    "reshape": "_reshape_method", "round": "round", "searchsorted": "searchsorted", "sort": "sort",
    "squeeze": "squeeze", "std": "std", "sum": "sum", "swapaxes": "swapaxes", "take": "take",
    "trace": "trace", "transpose": "_transpose_method", "var": "var", "view": "_view",
}
_PROPERTIES = {"T": "transpose", "mT": "matrix_transpose", "real": "real", "imag": "imag"}


def _jnp():
    import core.numpy as jnp
    return jnp


class _Lazy:
    """Resolve `core.numpy.<name>` on first use (core.numpy imports this module), then keep it."""
    __slots__ = ("name", "fn")

    def __init__(self, name):
        self.name, self.fn = name, None

    def get(self):
        fn = self.fn
        if fn is None:
            fn = self.fn = unwrap_boundary(getattr(_jnp(), self.name))
        return fn


def _forward(fname):
    lazy = _Lazy(fname)

    def method(self, *args, **kwargs):
        try:
            return (lazy.fn or lazy.get())(self, *args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise
    method.__name__ = fname
    return register_boundary(method)


def _binary_op(fname, swap):
    lazy = _Lazy(fname)
    if swap:
        def op(self, other):
            if type(other) not in _FAST_OPERANDS and not _accepts(other):
                return NotImplemented
            try:
                return (lazy.fn or lazy.get())(other, self)
            except Exception as e:
                filter_exception(e)
                raise
    else:
        def op(self, other):
            if type(other) not in _FAST_OPERANDS and not _accepts(other):
                return NotImplemented
            try:
                return (lazy.fn or lazy.get())(self, other)
            except Exception as e:
                filter_exception(e)
                raise
    return register_boundary(op)


_FAST_OPERANDS = frozenset([Array, bool, int, float, complex])


def _accepts(other):
    return isinstance(other, (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)) or hasattr(other, "__jax_array__")


def _property(fname):
    lazy = _Lazy(fname)

    def getter(self):
        try:
            return (lazy.fn or lazy.get())(self)
        except Exception as e:
            filter_exception(e)
            raise
    return property(register_boundary(getter))


@register_boundary
def _getitem(self, idx):
    try:
        return _jnp()._rewriting_take(self, idx)
    except Exception as e:
        filter_exception(e)
        raise


def _at(self):
    return _jnp()._IndexUpdateHelper(self)


def install(cls):
    for op, fname in _BINARY_OPERATORS.items():
        setattr(cls, f"__{op}__", _binary_op(fname, False))
        setattr(cls, f"__r{op}__", _binary_op(fname, True))
    for op, fname in _COMPARISONS.items():
        setattr(cls, f"__{op}__", _binary_op(fname, False))
    for op, fname in _UNARY_OPERATORS.items():
        setattr(cls, f"__{op}__", _forward(fname))
    for name, fname in _METHODS.items():
        setattr(cls, name, _forward(fname))
    for name, fname in _PROPERTIES.items():
        setattr(cls, name, _property(fname))
    cls.__getitem__ = _getitem
    cls.at = property(_at)


def _tracer_iter(self):
    # Without __iter__, Python would iterate through __getitem__ until an IndexError, which never
    # comes: out-of-bounds reads clamp. Iterating unstacks the leading axis, as for an Array.
    if not self.shape:
        raise TypeError("iteration over a 0-d array")
    return (self[i] for i in range(self.shape[0]))


def install_all():
    install(Array)
    install(Tracer)
    Tracer.__iter__ = _tracer_iter

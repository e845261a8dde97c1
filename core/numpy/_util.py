"""Shared machinery of `core.numpy`: argument checks, NumPy-style dtype promotion and broadcasting."""
import warnings

import numpy as np

from .. import dtypes
from ..config import config
from ..array import Array, scalar_array, to_array
from ..trace import Tracer
from .. import lax
from ..lax._base import aval_of

_SCALARS = (bool, int, float, complex)


def is_arraylike(x):
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)) or hasattr(x, "__jax_array__")


def check_arraylike(fun_name, *args):
    """Raise a TypeError naming `fun_name` and the position if an argument is not array-like.

    Lists and tuples are refused as in JAX (`jnp.sum([1, 2])` would silently trace every element);
    the message says to wrap them with `jnp.asarray`.
    """
    for pos, arg in enumerate(args):
        if not is_arraylike(arg):
            hint = " Use jnp.asarray(x) (or jnp.array) to convert a list or tuple." if isinstance(arg, (list, tuple)) else ""
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, but got {type(arg).__name__} "
                            f"at position {pos}.{hint}")


def asarray_operand(x):
    """An array-like argument as an Array or tracer (Python scalars stay weakly typed)."""
    if isinstance(x, (Array, Tracer)):
        return x
    return to_array(x)


def broadcast_shapes(*shapes):
    """NumPy's broadcast of `shapes`; ValueError `Incompatible shapes for broadcasting` otherwise."""
    if len(shapes) == 1:
        return tuple(shapes[0])
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    out = []
    for dims in zip(*padded):
        non_one = {d for d in dims if d != 1}
        if len(non_one) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}")
        out.append(non_one.pop() if non_one else 1)
    return tuple(out)


def promote_shapes(fun_name, *args):
    """Rank-promote array arguments for an elementwise lax op (check NumPy broadcast compatibility)."""
    if len(args) < 2:
        return args
    shapes = [aval_of(a).shape if not isinstance(a, _SCALARS) else () for a in args]
    if all(s == shapes[0] for s in shapes):
        return args
    broadcast_shapes(*shapes)
    nonscalar_ranks = {len(s) for s in shapes if s}
    if len(nonscalar_ranks) < 2:
        return args  # lax broadcasts rank-0 operands and size-1 dimensions itself
    _rank_promotion(fun_name, shapes)
    rank = max(nonscalar_ranks)
    return [lax.broadcast_to_rank(a, rank) if 0 < len(s) < rank else a for a, s in zip(args, shapes, strict=True)]


def _rank_promotion(fun_name, shapes):
    mode = config.numpy_rank_promotion
    if mode == "allow":
        return
    msg = (f"{fun_name}: operands could not be broadcast together with shapes "
           f"{' '.join(map(str, shapes))} and with the config option numpy_rank_promotion='{mode}'. "
           "Promote ranks explicitly (x[None, :], jnp.expand_dims or jnp.broadcast_to), or set "
           "core.config.update('numpy_rank_promotion', 'allow').")
    if mode == "raise":
        raise ValueError(msg)
    warnings.warn(msg, UserWarning, stacklevel=4)


def promote_dtypes(*args):
    """Convert arguments to their common dtype by JAX's lattice (weak types respected)."""
    if len(args) == 1:
        return [asarray_operand(args[0])]
    pairs = [dtypes.dtype_and_weak_type(a) for a in args]
    to_dtype, weak = dtypes.promote_dtypes_weak(*pairs)
    return [_convert(a, to_dtype, weak) for a in args]


def _convert(a, to_dtype, weak):
    if type(a) in _SCALARS:
        return scalar_array(a, to_dtype, weak_type=weak)
    a = asarray_operand(a)
    aval = a.aval
    if aval.dtype == to_dtype and aval.weak_type == weak:
        return a
    return lax.convert_element_type(a, to_dtype, weak_type=weak)


def promote_dtypes_inexact(*args):
    """As `promote_dtypes`, then integers and bools become the default float dtype."""
    pairs = [dtypes.dtype_and_weak_type(a) for a in args]
    to_dtype, weak = dtypes.promote_dtypes_weak(*pairs)
    if not dtypes.is_inexact(to_dtype):
        to_dtype = dtypes.default_float_dtype()
    return [_convert(a, to_dtype, weak) for a in args]


def promote_dtypes_numeric(*args):
    """As `promote_dtypes`, then bools become the default int dtype."""
    pairs = [dtypes.dtype_and_weak_type(a) for a in args]
    to_dtype, weak = dtypes.promote_dtypes_weak(*pairs)
    if dtypes.is_bool(to_dtype):
        to_dtype = dtypes.default_int_dtype()
    return [_convert(a, to_dtype, weak) for a in args]


# One concrete Array of these dtypes is returned unchanged by every promote_args* below (no
# conversion, no rank promotion, in every x64 mode), so the eager `jnp.sin(x)` skips the ~2 us
# of checks and promotion; float64 is not here: without x64 it canonicalizes to float32.
_UNCHANGED_SINGLE = frozenset([dtypes.float16, dtypes.bfloat16, dtypes.float32])


def promote_args(fun_name, *args):
    """Check, dtype-promote and rank-promote the arguments of a NumPy elementwise function."""
    if len(args) == 1 and type(args[0]) is Array and args[0].aval.dtype in _UNCHANGED_SINGLE:
        return args
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name, *args):
    if len(args) == 1 and type(args[0]) is Array and args[0].aval.dtype in _UNCHANGED_SINGLE:
        return args
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name, *args):
    if len(args) == 1 and type(args[0]) is Array and args[0].aval.dtype in _UNCHANGED_SINGLE:
        return args
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


def canonicalize_axis(axis, ndim, fun_name="axis"):
    """A non-negative axis; out of range raises the NumPy-style AxisError (a ValueError)."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{fun_name}: axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


def canonicalize_axes(axis, ndim, fun_name="axis"):
    """None -> all axes; int or tuple -> a sorted tuple of non-negative axes, checked."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, np.integer)):
        return (canonicalize_axis(axis, ndim, fun_name),)
    axes = tuple(canonicalize_axis(a, ndim, fun_name) for a in axis)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fun_name}: repeated axis in {axis}")
    return axes


def broadcast_to_common_shape(*arrays):
    """Broadcast arrays to their common NumPy-broadcast shape (for formulas that select between
    them, since `lax.select_n` needs equal shapes)."""
    shape = broadcast_shapes(*(aval_of(a).shape for a in arrays))
    out = []
    for a in arrays:
        a_shape = aval_of(a).shape
        if a_shape != shape:
            a = lax.broadcast_in_dim(a, shape, tuple(range(len(shape) - len(a_shape), len(shape))))
        out.append(a)
    return out

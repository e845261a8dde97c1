"""Shape manipulation: reshape, transpose, stacking and splitting, flips, rolls, padding, tiling.

Every function is built from lax wrappers and static shape information, so it traces as well as
it runs eagerly. As in `jax.numpy`, arrays are immutable (functions return new arrays, `copy`
arguments are accepted and ignored), and arguments that determine a shape (split points, repeat
counts, pad widths) must be concrete. Arrays have no memory layout: `reshape`/`ravel` read and
write them in C (row-major) or F (column-major) index order as asked, and 'A'/'K' mean C for them.
"""
import builtins
import math
import operator

import numpy as np

from .. import dtypes, errors
from .. import lax
from .. import prng_keys
from ..array import Array
from ..trace import Tracer
from ..lax._base import aval_of
from ._util import (asarray_operand, broadcast_shapes as _broadcast_shapes, canonicalize_axis, check_arraylike,
                    promote_dtypes)

__all__ = ["reshape", "ravel", "transpose", "swapaxes", "moveaxis", "rollaxis", "expand_dims", "squeeze",
           "broadcast_to", "broadcast_arrays", "broadcast_shapes", "concatenate", "concat", "stack", "hstack",
           "vstack", "dstack", "column_stack", "row_stack", "split", "array_split", "hsplit", "vsplit", "dsplit",
           "tile", "repeat", "flip", "fliplr", "flipud", "rot90", "roll", "pad", "atleast_1d", "atleast_2d",
           "atleast_3d", "append", "delete", "insert", "resize", "trim_zeros", "block", "unstack",
           "matrix_transpose", "permute_dims", "astype"]


def _arr(fun_name, x):
    check_arraylike(fun_name, x)
    return asarray_operand(x)


def _concrete_ints(x, fun_name, what):
    """Static integer values (a Python int or a concrete array) for shape-determining arguments."""
    if isinstance(x, Tracer):
        raise TypeError(f"{fun_name}: {what} must be concrete (it determines the result's shape), got a traced "
                        "value. Pass Python ints or a NumPy array.")
    return np.asarray(x)


# ----- reshaping -------------------------------------------------------------------------------

def _shape_arg(shape, fun_name="reshape", what="shape"):
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    for d in dims:
        if isinstance(d, Tracer):  # shapes are static: say so, rather than fail in __index__
            raise errors.static_value_error(f"core.numpy.{fun_name}", what, d)
    if isinstance(shape, (int, np.integer)) or (hasattr(shape, "ndim") and shape.ndim == 0):
        return (operator.index(shape),)
    return tuple(operator.index(d) for d in shape)


def _infer_shape(size, shape, old_shape):
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1:
        raise ValueError(f"can only specify one unknown dimension, got shape {shape}")
    if any(d < -1 for d in shape):
        raise ValueError(f"reshape: invalid negative dimension in shape {shape}")
    if unknown:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of shape {old_shape} (size {size}) into shape {shape}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    if math.prod(shape) != size:
        raise TypeError(f"cannot reshape array of shape {old_shape} (size {size}) into shape {shape} "
                        f"(size {math.prod(shape)})")
    return shape


_NO_SHAPE = object()


def reshape(a, shape=None, order="C", *, newshape=_NO_SHAPE, copy=None):
    """`a` with a new `shape`; one dimension may be -1 and is inferred, as `numpy.reshape`.

    `order='C'` reads and writes elements in row-major index order, 'F' in column-major order
    (the first index changing fastest), and 'A' means 'F' only for a Fortran-contiguous NumPy
    array (purenn arrays read as C-contiguous). Example: `jnp.reshape(jnp.arange(6), (2, -1))` is
    `[[0, 1, 2], [3, 4, 5]]`; with `order='F'` it is `[[0, 2, 4], [1, 3, 5]]`.
    """
    if newshape is not _NO_SHAPE:
        if shape is not None:
            raise TypeError("reshape: pass only one of shape and newshape (newshape is deprecated)")
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing required argument 'shape'")
    if order == "K":
        raise ValueError("reshape: order='K' is not permitted for reshaping (as in NumPy); use 'C', 'F' or 'A'.")
    if isinstance(a, prng_keys.KeyArray):
        return a.reshape(_shape_arg(shape), order="C" if order in ("C", "A") else order)
    order = _index_order("reshape", a, order)
    a = _arr("reshape", a)
    new = _infer_shape(a.size, _shape_arg(shape), a.shape)
    if order == "F":
        return _reverse_axes(lax.reshape(_reverse_axes(a), new[::-1]))
    return lax.reshape(a, new)


def _index_order(fun_name, a, order):
    """'C' or 'F', the index order that `order` ('C', 'F', 'A' or 'K') reads `a` in. Only a
    NumPy array has a memory layout: 'A' and 'K' are 'F' for one that is Fortran- but not
    C-contiguous, as in NumPy, and 'C' otherwise."""
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"{fun_name}: order must be one of 'C', 'F', 'A' or 'K', got order={order!r}.")
    if order in ("A", "K"):
        fortran = isinstance(a, np.ndarray) and a.flags.f_contiguous and not a.flags.c_contiguous
        return "F" if fortran else "C"
    return order


def _reverse_axes(a):
    return lax.transpose(a, tuple(range(a.ndim))[::-1]) if a.ndim > 1 else a


def _reshape_method(x, *shape, order="C", **kwargs):
    """`x.reshape(2, 3)` and `x.reshape((2, 3))` alike."""
    if "shape" in kwargs:
        shape = (kwargs.pop("shape"),)
    if kwargs:
        raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kwargs)}")
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = shape[0]
    return reshape(x, shape, order=order)


def ravel(a, order="C"):
    """The flattened array, as `numpy.ravel` (and `x.ravel()`, `x.flatten()`): elements in
    row-major index order for `order='C'`, column-major for 'F'. 'A' and 'K' read a NumPy array
    as NumPy does ('K': in memory order) and a purenn array in C order.
    Example: `jnp.ravel(jnp.array([[1, 2], [3, 4]]), order="F")` is `[1, 3, 2, 4]`.
    """
    if isinstance(a, prng_keys.KeyArray):  # typed keys: along their key axes (core/prng_keys.py)
        return prng_keys.on_key_data(ravel, a, order)
    if order == "K" and isinstance(a, np.ndarray):
        a, order = np.ravel(a, order="K"), "C"  # memory order, strides of any sign: NumPy's own
    order = _index_order("ravel", a, order)
    a = _arr("ravel", a)
    if order == "F":
        a = _reverse_axes(a)
    return lax.reshape(a, (a.size,))


def _canonical_permutation(axes, ndim, fun_name):
    perm = tuple(canonicalize_axis(ax, ndim, fun_name) for ax in axes)
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"{fun_name}: axes {tuple(axes)} don't match array of dimension {ndim}")
    return perm


def transpose(a, axes=None):
    """Permute the axes of `a` (reverse them when `axes` is None); also `x.T`.

    Example: `jnp.transpose(jnp.ones((2, 3, 4)), (1, 0, 2)).shape` is (3, 2, 4).
    """
    if isinstance(a, prng_keys.KeyArray):
        return prng_keys.on_key_data(transpose, a, axes)
    a = _arr("transpose", a)
    perm = tuple(reversed(range(a.ndim))) if axes is None else _canonical_permutation(axes, a.ndim, "transpose")
    return lax.transpose(a, perm)


def permute_dims(a, /, axes):
    """The Array API name of `transpose` (axes required)."""
    return transpose(a, axes)


def _transpose_method(x, *axes):
    """`x.transpose()`, `x.transpose(1, 0)` and `x.transpose((1, 0))` alike."""
    if not axes or (len(axes) == 1 and axes[0] is None):
        return transpose(x)
    if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
        axes = axes[0]
    return transpose(x, axes)


def matrix_transpose(x, /):
    """Swap the last two axes (`x.mT`). Example: `jnp.matrix_transpose(jnp.ones((5, 2, 3))).shape` is (5, 3, 2)."""
    x = _arr("matrix_transpose", x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={x.ndim}")
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return lax.transpose(x, perm)


def swapaxes(a, axis1, axis2):
    """`a` with two axes interchanged. Example: `jnp.swapaxes(jnp.ones((2, 3)), 0, 1).shape` is (3, 2)."""
    if isinstance(a, prng_keys.KeyArray):
        return prng_keys.on_key_data(swapaxes, a, axis1, axis2)
    a = _arr("swapaxes", a)
    i, j = canonicalize_axis(axis1, a.ndim, "swapaxes"), canonicalize_axis(axis2, a.ndim, "swapaxes")
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, perm)


def moveaxis(a, source, destination):
    """Move axes `source` to positions `destination` (ints or sequences), others keep their order.

    Example: `jnp.moveaxis(jnp.ones((2, 3, 4)), 0, -1).shape` is (3, 4, 2).
    """
    if isinstance(a, prng_keys.KeyArray):
        return prng_keys.on_key_data(moveaxis, a, source, destination)
    a = _arr("moveaxis", a)
    src = (source,) if isinstance(source, (int, np.integer)) else tuple(source)
    dst = (destination,) if isinstance(destination, (int, np.integer)) else tuple(destination)
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination arguments must have the same number of elements")
    src = tuple(canonicalize_axis(s, a.ndim, "moveaxis") for s in src)
    dst = tuple(canonicalize_axis(d, a.ndim, "moveaxis") for d in dst)
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError("moveaxis: repeated axis in source or destination")
    perm = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        perm.insert(d, s)
    return lax.transpose(a, perm)


def rollaxis(a, axis, start=0):
    """Roll `axis` backwards until it lies before position `start` (prefer `moveaxis`)."""
    a = _arr("rollaxis", a)
    axis = canonicalize_axis(axis, a.ndim, "rollaxis")
    start = operator.index(start)
    if not -a.ndim <= start <= a.ndim:
        raise np.exceptions.AxisError(f"rollaxis: start {start} is out of bounds for array of dimension {a.ndim}")
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start) if axis != start else a


def expand_dims(a, axis):
    """Insert size-1 axes at `axis` (an int or tuple; positions in the result).

    Example: `jnp.expand_dims(jnp.ones(3), (0, 2)).shape` is (1, 3, 1).
    """
    if isinstance(a, prng_keys.KeyArray):
        return prng_keys.on_key_data(expand_dims, a, axis)
    a = _arr("expand_dims", a)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out_ndim = a.ndim + len(axes)
    axes = tuple(canonicalize_axis(ax, out_ndim, "expand_dims") for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    return lax.expand_dims(a, axes)


def squeeze(a, axis=None):
    """Remove size-1 axes (all of them, or those in `axis`; others raise ValueError).

    Example: `jnp.squeeze(jnp.ones((1, 3, 1))).shape` is (3,).
    """
    if isinstance(a, prng_keys.KeyArray):
        return prng_keys.on_key_data(squeeze, a, axis)
    a = _arr("squeeze", a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(canonicalize_axis(ax, a.ndim, "squeeze") for ax in axes)
        bad = [ax for ax in axes if a.shape[ax] != 1]
        if bad:
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one, got "
                             f"shape={a.shape} and dimensions={axes}")
    return lax.squeeze(a, axes)


# ----- broadcasting ----------------------------------------------------------------------------

def broadcast_shapes(*shapes):
    """The NumPy broadcast of `shapes` (ints count as 1-d shapes).

    Example: `jnp.broadcast_shapes((3, 1), (4,))` is (3, 4).
    """
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(int(d) for d in s) for s in shapes]
    if not shapes:
        return ()
    return _broadcast_shapes(*shapes)


def broadcast_to(array, shape):
    """`array` broadcast to `shape` by NumPy's rules (a read-only view in NumPy; a new array here).

    Example: `jnp.broadcast_to(jnp.arange(3), (2, 3))`.
    """
    if isinstance(array, prng_keys.KeyArray):
        return prng_keys.on_key_data(broadcast_to, array, shape)
    a = _arr("broadcast_to", array)
    shape = _shape_arg(shape, "broadcast_to")
    if a.shape == shape:
        return a
    if len(shape) < a.ndim:
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape={a.shape} shape={shape}")
    lead = len(shape) - a.ndim
    if any(d != 1 and d != s for d, s in zip(a.shape, shape[lead:], strict=True)):
        raise ValueError(f"Incompatible shapes for broadcasting: {a.shape} and requested shape {shape}")
    if any(d < 0 for d in shape):
        raise ValueError(f"broadcast_to: negative dimensions are not allowed, got shape {shape}")
    return lax.broadcast_in_dim(a, shape, tuple(range(lead, len(shape))))


def broadcast_arrays(*args):
    """The arguments broadcast against each other. Example: shapes (3, 1) and (4,) give two (3, 4) arrays."""
    check_arraylike("broadcast_arrays", *args)
    arrs = [asarray_operand(a) for a in args]
    shape = _broadcast_shapes(*(a.shape for a in arrs)) if arrs else ()
    return [broadcast_to(a, shape) for a in arrs]


# ----- joining ---------------------------------------------------------------------------------

def _promoted(fun_name, arrays, dtype=None):
    if isinstance(arrays, (Array, Tracer, np.ndarray)):
        arrays = list(arrays) if aval_of(arrays).ndim else [arrays]
    arrays = list(arrays)
    check_arraylike(fun_name, *arrays)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if dtype is not None:
        dtype = dtypes.check_user_dtype(dtype, fun_name)
        return [lax.convert_element_type(asarray_operand(a), dtype) for a in arrays]
    return list(promote_dtypes(*arrays))


def _has_keys(arrays):
    return isinstance(arrays, (list, tuple)) and any(isinstance(a, prng_keys.KeyArray) for a in arrays)


def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing `axis` (flattening them first when `axis` is None), with
    dtype promotion. Example: `jnp.concatenate([jnp.ones(2), jnp.zeros(3)])` has shape (5,).
    """
    if _has_keys(arrays):  # typed PRNG keys join along their key axes (core/prng_keys.py)
        return prng_keys.concatenate_keys([a.ravel() for a in arrays] if axis is None else arrays,
                                          0 if axis is None else axis)
    arrays = _promoted("concatenate", arrays, dtype)
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    if arrays[0].ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, arrays[0].ndim, "concatenate")
    return lax.concatenate(arrays, axis)


def concat(arrays, /, *, axis=0):
    """The Array API name of `concatenate`."""
    return concatenate(arrays, axis=axis)


def stack(arrays, axis=0, out=None, dtype=None):
    """Join equally shaped arrays along a new `axis`. Example: `jnp.stack([jnp.ones(3)] * 2).shape` is (2, 3)."""
    if out is not None:
        raise NotImplementedError("stack: the 'out' argument is not supported (arrays are immutable)")
    if _has_keys(arrays):
        return prng_keys.stack_keys(arrays, axis)
    arrays = _promoted("stack", arrays, dtype)
    shape = arrays[0].shape
    if any(a.shape != shape for a in arrays):
        raise ValueError(f"All input arrays must have the same shape, got {[a.shape for a in arrays]}.")
    axis = canonicalize_axis(axis, len(shape) + 1, "stack")
    return lax.concatenate([lax.expand_dims(a, (axis,)) for a in arrays], axis)


def atleast_1d(*arys):
    """Each argument as an array of at least 1 dimension (one array, or a list for several)."""
    check_arraylike("atleast_1d", *arys)
    out = [lax.reshape(a, (1,)) if a.ndim == 0 else a for a in map(asarray_operand, arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    """Each argument with at least 2 dimensions: shape (N,) becomes (1, N)."""
    check_arraylike("atleast_2d", *arys)
    out = [lax.broadcast_to_rank(a, 2) for a in map(asarray_operand, arys)]
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """Each argument with at least 3 dimensions: (N,) becomes (1, N, 1) and (M, N) becomes (M, N, 1)."""
    check_arraylike("atleast_3d", *arys)
    out = []
    for a in map(asarray_operand, arys):
        if a.ndim == 0:
            a = lax.reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = lax.reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = lax.reshape(a, a.shape + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def _as_list(fun_name, tup):
    if isinstance(tup, (Array, Tracer, np.ndarray)):
        return [tup[i] for i in range(len(tup))] if aval_of(tup).ndim else [tup]
    return list(tup)


def hstack(tup, dtype=None):
    """Concatenate along axis 1 (axis 0 for 1-d arrays)."""
    arrs = atleast_1d(*_as_list("hstack", tup))
    arrs = arrs if isinstance(arrs, list) else [arrs]
    return concatenate(arrs, 0 if arrs[0].ndim == 1 else 1, dtype)


def vstack(tup, dtype=None):
    """Concatenate along axis 0 after making the arrays at least 2-d."""
    arrs = atleast_2d(*_as_list("vstack", tup))
    return concatenate(arrs if isinstance(arrs, list) else [arrs], 0, dtype)


row_stack = vstack


def dstack(tup, dtype=None):
    """Concatenate along axis 2 after making the arrays at least 3-d."""
    arrs = atleast_3d(*_as_list("dstack", tup))
    return concatenate(arrs if isinstance(arrs, list) else [arrs], 2, dtype)


def column_stack(tup):
    """Stack 1-d arrays as columns of a 2-d array (2-d arrays are joined as they are)."""
    arrs = [asarray_operand(a) for a in _as_list("column_stack", tup)]
    check_arraylike("column_stack", *arrs)
    arrs = [lax.reshape(a, (a.size, 1)) if a.ndim < 2 else a for a in arrs]
    return concatenate(arrs, 1)


def block(arrays):
    """Assemble an array from nested lists of blocks (innermost lists join along the last axis).

    Example: `jnp.block([[jnp.eye(2), jnp.zeros((2, 1))]]).shape` is (2, 3).
    """
    def depth(x):
        if isinstance(x, list):
            if not x:
                raise ValueError("block: lists cannot be empty")
            ds = {depth(e) for e in x}
            if len(ds) != 1:
                raise ValueError("block: list depths are mismatched")
            return ds.pop() + 1
        if isinstance(x, tuple):
            raise TypeError("block: arrays must be nested lists, got a tuple")
        return 0

    list_depth = depth(arrays)
    leaves = []

    def collect(x):
        if isinstance(x, list):
            for e in x:
                collect(e)
        else:
            leaves.append(x)

    collect(arrays)
    check_arraylike("block", *leaves)
    rank = builtins.max([list_depth] + [np.ndim(l) if not hasattr(l, "ndim") else l.ndim for l in leaves])
    promoted = iter(promote_dtypes(*leaves) if len(leaves) > 1 else [asarray_operand(leaves[0])])

    def build(x, level):
        if not isinstance(x, list):
            return lax.broadcast_to_rank(next(promoted), rank)
        parts = [build(e, level + 1) for e in x]
        return lax.concatenate(parts, rank - (list_depth - level))

    return build(arrays, 0)


def append(arr, values, axis=None):
    """`arr` with `values` appended (both flattened when `axis` is None)."""
    return concatenate([arr, values], axis=axis)


# ----- splitting -------------------------------------------------------------------------------

def _split_points(fun_name, size, indices_or_sections, equal):
    if isinstance(indices_or_sections, (int, np.integer)) or (
            not isinstance(indices_or_sections, Tracer) and np.ndim(indices_or_sections) == 0):
        n = operator.index(_concrete_ints(indices_or_sections, fun_name, "indices_or_sections").item())
        if n <= 0:
            raise ValueError(f"{fun_name}: number sections must be larger than 0, got {n}")
        if equal and size % n:
            raise ValueError("array split does not result in an equal division")
        q, r = divmod(size, n)
        sizes = [q + 1] * r + [q] * (n - r)
        return list(np.cumsum([0] + sizes))
    idx = _concrete_ints(indices_or_sections, fun_name, "indices_or_sections").astype(np.int64).reshape(-1)
    points = [int(min(max(i + size if i < 0 else i, 0), size)) for i in idx]
    return [0] + points + [size]


def _split(fun_name, ary, indices_or_sections, axis, equal):
    if isinstance(ary, prng_keys.KeyArray):  # typed keys: along their key axes (core/prng_keys.py)
        return prng_keys.on_key_data(_split, fun_name, ary, indices_or_sections, axis, equal)
    ary = _arr(fun_name, ary)
    axis = canonicalize_axis(axis, ary.ndim, fun_name)
    points = _split_points(fun_name, ary.shape[axis], indices_or_sections, equal)
    out = []
    for start, stop in zip(points[:-1], points[1:]):
        out.append(lax.slice_in_dim(ary, start, builtins.max(start, stop), axis=axis))
    return out


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int) or at the static indices given. Example:
    `jnp.split(jnp.arange(6), 3)` gives three arrays of shape (2,); `jnp.split(x, [1, 4])` three pieces.
    """
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary, indices_or_sections, axis=0):
    """As `split`, but an int need not divide the axis (the first sections are one longer)."""
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def hsplit(ary, indices_or_sections):
    """`split` along axis 1 (axis 0 for 1-d arrays)."""
    a = _arr("hsplit", ary)
    return split(a, indices_or_sections, axis=0 if a.ndim == 1 else 1)


def vsplit(ary, indices_or_sections):
    """`split` along axis 0 of an array of at least 2 dimensions."""
    a = _arr("vsplit", ary)
    if a.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(a, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """`split` along axis 2 of an array of at least 3 dimensions."""
    a = _arr("dsplit", ary)
    if a.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(a, indices_or_sections, axis=2)


def unstack(x, /, *, axis=0):
    """The slices of `x` along `axis`, as a tuple. Example: `jnp.unstack(jnp.ones((2, 3)))` has two (3,) arrays."""
    x = _arr("unstack", x)
    if x.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was passed.")
    axis = canonicalize_axis(axis, x.ndim, "unstack")
    return tuple(lax.index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


# ----- repetition ------------------------------------------------------------------------------

def tile(A, reps):
    """`A` repeated `reps` times along each axis. Example: `jnp.tile(jnp.array([1, 2]), 2)` is `[1, 2, 1, 2]`."""
    if isinstance(A, prng_keys.KeyArray):
        return prng_keys.on_key_data(tile, A, reps)
    A = _arr("tile", A)
    reps = _shape_arg(_concrete_ints(reps, "tile", "reps").astype(np.int64)) if not isinstance(reps, (int, np.integer)) \
        else (operator.index(reps),)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: negative repetitions are not allowed, got {reps}")
    n = builtins.max(len(reps), A.ndim)
    reps = (1,) * (n - len(reps)) + reps
    A = lax.broadcast_to_rank(A, n)
    # interleave a repeat axis before each axis, broadcast it, then merge the pairs
    big = tuple(x for r, d in zip(reps, A.shape, strict=True) for x in (r, d))
    expanded = lax.broadcast_in_dim(A, big, tuple(range(1, 2 * n, 2)))
    return lax.reshape(expanded, tuple(r * d for r, d in zip(reps, A.shape, strict=True)))


def _repeat_uniform(a, r, axis):
    shape = a.shape
    big = shape[:axis + 1] + (r,) + shape[axis + 1:]
    dims = tuple(range(axis + 1)) + tuple(range(axis + 2, len(big)))
    out = lax.broadcast_in_dim(a, big, dims)
    return lax.reshape(out, shape[:axis] + (shape[axis] * r,) + shape[axis + 1:])


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat each element of `a` (flattened when `axis` is None) `repeats` times; `repeats` is an
    int or a concrete array with one count per element. With `total_repeat_length`, the result is
    cut or padded (by repeating the last element) to that length, as in JAX; `repeats` may then
    be traced (under jit).

    Example: `jnp.repeat(jnp.array([1, 2]), [1, 3])` is `[1, 2, 2, 2]`.
    """
    a = _arr("repeat", a)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, a.ndim, "repeat")
    if isinstance(repeats, Tracer) and total_repeat_length is not None:
        return _repeat_traced(a, repeats, axis, operator.index(total_repeat_length))
    if isinstance(repeats, Tracer):
        raise TypeError("repeat: repeats must be concrete (it determines the result's shape), got a traced value. "
                        "Pass Python ints or a NumPy array, or a static total_repeat_length= (as in JAX).")
    reps = _concrete_ints(repeats, "repeat", "repeats")
    if reps.ndim > 1:
        raise ValueError(f"repeat: repeats must be an int or a 1-d array, got shape {reps.shape}")
    if np.any(reps < 0):
        raise ValueError("repeat: negative repeats are not allowed")
    n = a.shape[axis]
    if reps.ndim == 1 and reps.shape[0] == 1:
        reps = reps.reshape(())
    if reps.ndim == 0:
        out = _repeat_uniform(a, int(reps), axis)
    else:
        if reps.shape[0] != n:
            raise ValueError(f"repeat: repeats has {reps.shape[0]} entries, but axis {axis} has size {n}")
        parts, i = [], 0
        while i < n:  # one broadcast per run of equal counts
            j = i
            while j + 1 < n and reps[j + 1] == reps[i]:
                j += 1
            if reps[i] > 0:
                parts.append(_repeat_uniform(lax.slice_in_dim(a, i, j + 1, axis=axis), int(reps[i]), axis))
            i = j + 1
        out = lax.concatenate(parts, axis) if parts else lax.slice_in_dim(a, 0, 0, axis=axis)
    if total_repeat_length is not None:
        total = operator.index(total_repeat_length)
        cur = out.shape[axis]
        if total <= cur:
            out = lax.slice_in_dim(out, 0, total, axis=axis)
        elif n == 0:
            raise ValueError("repeat: total_repeat_length exceeds an empty result")
        else:
            # JAX pads with the last element of `a` (even when its count is 0), traced or not
            last = lax.slice_in_dim(a, n - 1, n, axis=axis)
            out = lax.concatenate([out, _repeat_uniform(last, total - cur, axis)], axis)
    return out


def _repeat_traced(a, repeats, axis, total):
    """`repeat` with traced counts and a static result length `total` (JAX's method): mark where
    each element's block starts, and a running count of the marks is the gather index of each
    output position. A shorter result is cut; a longer one repeats the last element."""
    from .indexing import take
    n = a.shape[axis]
    reps = asarray_operand(repeats)
    if reps.ndim > 1 or (reps.ndim == 1 and reps.shape[0] not in (1, n)):
        raise ValueError(f"repeat: repeats must be an int or a 1-d array of {n} counts, got shape {reps.shape}")
    if total == 0:
        return lax.slice_in_dim(a, 0, 0, axis=axis)
    if n == 0:
        raise ValueError("repeat: total_repeat_length exceeds an empty result")
    reps = lax.convert_element_type(reps, np.int32)
    if reps.ndim == 1 and n != 1 and reps.shape[0] == 1:
        reps = lax.reshape(reps, ())
    if reps.ndim == 0:
        reps = lax.broadcast_in_dim(reps, (n,), ())
    starts = lax.sub(lax.cumsum(reps), reps)
    marks = lax.full((total,), 0, np.int32).at[starts].add(1)  # starts past the end are dropped
    return take(a, lax.sub(lax.cumsum(marks), lax.full((total,), 1, np.int32)), axis=axis)


def resize(a, new_shape):
    """`a` flattened, repeated cyclically to fill `new_shape`. Example: `jnp.resize(jnp.arange(3), 5)` is `[0, 1, 2, 0, 1]`."""
    a = _arr("resize", a)
    new_shape = _shape_arg(new_shape, "resize", "new_shape")
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    size = math.prod(new_shape)
    flat = ravel(a)
    if a.size == 0 or size == 0:
        return lax.full(new_shape, 0, a.dtype)
    flat = tile(flat, -(-size // a.size))
    return lax.reshape(lax.slice_in_dim(flat, 0, size), new_shape)


# ----- reordering ------------------------------------------------------------------------------

def flip(m, axis=None):
    """`m` reversed along `axis` (all axes when None). Example: `jnp.flip(jnp.arange(3))` is `[2, 1, 0]`."""
    if isinstance(m, prng_keys.KeyArray):
        return prng_keys.on_key_data(flip, m, axis)
    m = _arr("flip", m)
    axes = tuple(range(m.ndim)) if axis is None else (
        (canonicalize_axis(axis, m.ndim, "flip"),) if isinstance(axis, (int, np.integer))
        else tuple(canonicalize_axis(ax, m.ndim, "flip") for ax in axis))
    return lax.rev(m, axes)


def fliplr(m):
    """Reverse along axis 1."""
    m = _arr("fliplr", m)
    if m.ndim < 2:
        raise ValueError(f"fliplr requires an array of at least 2 dimensions, got shape {m.shape}")
    return lax.rev(m, (1,))


def flipud(m):
    """Reverse along axis 0."""
    m = _arr("flipud", m)
    if m.ndim < 1:
        raise ValueError("flipud requires an array of at least 1 dimension")
    return lax.rev(m, (0,))


def rot90(m, k=1, axes=(0, 1)):
    """Rotate `m` by 90 degrees `k` times in the plane of `axes` (from the first axis toward the second)."""
    m = _arr("rot90", m)
    if len(axes) != 2:
        raise ValueError("rot90: len(axes) must be 2.")
    ax1, ax2 = (canonicalize_axis(ax, m.ndim, "rot90") for ax in axes)
    if ax1 == ax2:
        raise ValueError("rot90: axes must be different.")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return lax.rev(m, (ax1, ax2))
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return lax.transpose(lax.rev(m, (ax2,)), perm)
    return lax.rev(lax.transpose(m, perm), (ax2,))


def _roll_one(a, shift, axis):
    n = a.shape[axis]
    if n == 0:
        return a
    if isinstance(shift, (int, np.integer)):
        s = int(shift) % n
        if s == 0:
            return a
        return lax.concatenate([lax.slice_in_dim(a, n - s, n, axis=axis), lax.slice_in_dim(a, 0, n - s, axis=axis)],
                               axis)
    # a traced shift: read a window of the doubled array (the start is always in [0, n])
    shift = asarray_operand(shift)
    shift = lax.convert_element_type(shift, dtypes.int32) if shift.dtype != dtypes.int32 else shift
    nn = lax.full((), n, dtypes.int32)
    s = lax.rem(lax.add(lax.rem(shift, nn), nn), nn)
    start = lax.sub(nn, s)
    doubled = lax.concatenate([a, a], axis)
    return lax.dynamic_slice_in_dim(doubled, start, n, axis)


def roll(a, shift, axis=None):
    """Shift elements along `axis` cyclically (the flattened array when None). `shift` and `axis`
    may be sequences; an integer `shift` may be traced.

    Example: `jnp.roll(jnp.arange(5), 2)` is `[3, 4, 0, 1, 2]`.
    """
    if isinstance(a, prng_keys.KeyArray):
        return prng_keys.on_key_data(roll, a, shift, axis)
    a = _arr("roll", a)
    if axis is None:
        return lax.reshape(roll(ravel(a), shift, 0), a.shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if isinstance(shift, (Array, Tracer)) and shift.ndim == 0 or isinstance(shift, (int, np.integer)):
        shifts = (shift,) * len(axes)
    else:
        shifts = tuple(shift) if not isinstance(shift, (Array, Tracer)) else tuple(shift[i] for i in range(len(shift)))
    if len(shifts) != len(axes):
        shifts, axes = np.broadcast_arrays(np.asarray(shifts), np.asarray(axes))
        shifts, axes = tuple(int(s) for s in shifts), tuple(int(x) for x in axes)
    for s, ax in zip(shifts, axes, strict=True):
        a = _roll_one(a, s, canonicalize_axis(ax, a.ndim, "roll"))
    return a


# ----- padding ---------------------------------------------------------------------------------

def _pad_widths(pad_width, ndim):
    w = _concrete_ints(pad_width, "pad", "pad_width")
    if w.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
    try:
        w = np.broadcast_to(w, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} cannot be broadcast to (ndim, 2) = ({ndim}, 2)") from None
    if np.any(w < 0):
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    return [(int(lo), int(hi)) for lo, hi in w]


def _pad_constant(a, widths, constant_values):
    cv = constant_values
    if isinstance(cv, (Array, Tracer)) and cv.ndim == 0 or np.ndim(cv) == 0 and not isinstance(cv, (Array, Tracer)):
        value = lax.convert_element_type(asarray_operand(cv), a.dtype)
        return lax.pad(a, value, [(lo, hi, 0) for lo, hi in widths])
    from .creation import asarray
    values = broadcast_to(asarray(cv), (a.ndim, 2))
    for i, (lo, hi) in enumerate(widths):
        for side, width in ((0, lo), (1, hi)):
            if width:
                v = lax.convert_element_type(lax.index_in_dim(lax.index_in_dim(values, i, 0, False), side, 0, False),
                                             a.dtype)
                cfg = [(0, 0, 0)] * a.ndim
                cfg[i] = (width, 0, 0) if side == 0 else (0, width, 0)
                a = lax.pad(a, v, cfg)
    return a


def _edge_block(x, axis, width, before):
    n = x.shape[axis]
    edge = lax.slice_in_dim(x, 0, 1, axis=axis) if before else lax.slice_in_dim(x, n - 1, n, axis=axis)
    shape = list(x.shape)
    shape[axis] = width
    return lax.broadcast_in_dim(edge, tuple(shape), tuple(range(x.ndim)))


def _pad_reflect(a, axis, lo, hi, mode, reflect_type):
    size = a.shape[axis]
    offset = 1 if mode == "reflect" and size > 1 else 0

    def grow(x, width, before):
        edge = _edge_block(x, axis, 1, before)
        while width > 0:
            step = builtins.min(width, size - offset)
            width -= step
            n = x.shape[axis]
            if before:
                piece = lax.slice_in_dim(x, offset, offset + step, axis=axis)
            else:
                stop = n if mode == "symmetric" or size == 1 else n - 1
                piece = lax.slice_in_dim(x, stop - step, stop, axis=axis)
            piece = lax.rev(piece, (axis,))
            if reflect_type == "odd":
                piece = lax.sub(lax.mul(lax.full_like(piece, 2), lax.broadcast_in_dim(edge, piece.shape, tuple(range(x.ndim)))), piece)
                if size > 1:
                    m = piece.shape[axis]
                    edge = lax.slice_in_dim(piece, 0, 1, axis=axis) if before else lax.slice_in_dim(piece, m - 1, m, axis=axis)
            x = lax.concatenate([piece, x] if before else [x, piece], axis)
        return x

    return grow(grow(a, lo, True), hi, False)


def _pad_wrap(a, axis, lo, hi):
    size = a.shape[axis]
    lrep, lrem = divmod(lo, size)
    rrep, rrem = divmod(hi, size)
    parts = []
    if lrem:
        parts.append(lax.slice_in_dim(a, size - lrem, size, axis=axis))
    parts += [a] * (lrep + rrep + 1)
    if rrem:
        parts.append(lax.slice_in_dim(a, 0, rrem, axis=axis))
    return lax.concatenate(parts, axis) if len(parts) > 1 else a


def _pad_stat(a, axis, lo, hi, mode, stat_length):
    size = a.shape[axis]
    out = [a]
    for width, before, length in ((lo, True, stat_length[0]), (hi, False, stat_length[1])):
        if not width:
            continue
        length = size if length is None else builtins.max(1, builtins.min(int(length), size))
        region = lax.slice_in_dim(a, 0, length, axis=axis) if before else lax.slice_in_dim(a, size - length, size, axis=axis)
        if mode == "maximum":
            stat = lax.reduce_max(region, (axis,))
        elif mode == "minimum":
            stat = lax.reduce_min(region, (axis,))
        elif a.dtype == dtypes.bool_:
            # NumPy casts the float mean back to bool unrounded: True when any element is
            stat = lax.reduce_or(region, (axis,))
        elif dtypes.is_inexact(a.dtype):
            total = lax.reduce_sum(region, (axis,))
            stat = lax.div(total, lax.full_like(total, length))
        else:
            # NumPy (and JAX) take the mean of integers in floating point, so the sum cannot
            # overflow the integer dtype, and round it back to the integer dtype
            f = dtypes.default_float_dtype()
            total = lax.reduce_sum(lax.convert_element_type(region, f), (axis,))
            mean = lax.div(total, lax.full(total.shape, length, f))
            stat = lax.convert_element_type(lax.round(mean, lax.RoundingMethod.TO_NEAREST_EVEN), a.dtype)
        shape = list(a.shape)
        shape[axis] = width
        block_ = lax.broadcast_in_dim(stat, tuple(shape), tuple(d for d in range(a.ndim) if d != axis))
        out = [block_] + out if before else out + [block_]
    return lax.concatenate(out, axis) if len(out) > 1 else a


def _pad_linear_ramp(a, axis, lo, hi, end_values):
    """Ramps from each end value to the edge value, as NumPy's `linspace(end, edge, width, endpoint=False)`."""
    size = a.shape[axis]
    out = [a]
    comp = a.dtype if dtypes.is_inexact(a.dtype) else dtypes.default_float_dtype()
    for width, before, end in ((lo, True, end_values[0]), (hi, False, end_values[1])):
        if not width:
            continue
        edge = lax.convert_element_type(lax.index_in_dim(a, 0 if before else size - 1, axis, keepdims=False), comp)
        shape = list(a.shape)
        shape[axis] = width
        shape = tuple(shape)
        others = tuple(d for d in range(a.ndim) if d != axis)
        t = lax.div(lax.broadcasted_iota(comp, shape, axis), lax.full(shape, width, comp))
        if not before:
            t = lax.rev(t, (axis,))
        edge_b = lax.broadcast_in_dim(edge, shape, others)
        end_b = lax.full(shape, end, comp)
        ramp = lax.add(end_b, lax.mul(lax.sub(edge_b, end_b), t))
        if not dtypes.is_inexact(a.dtype):
            # NumPy computes the ramp in float and floors it (linspace with an integer dtype)
            ramp = lax.convert_element_type(lax.floor(ramp), a.dtype)
        out = [ramp] + out if before else out + [ramp]
    return lax.concatenate(out, axis) if len(out) > 1 else a


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean", "linear_ramp",
              "empty")


def _per_axis_pairs(value, ndim, fun_name):
    v = np.broadcast_to(np.asarray(value, dtype=object), (ndim, 2))
    return [(v[i, 0], v[i, 1]) for i in range(ndim)]


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad `array` by `pad_width` (an int, a (before, after) pair, or one pair per axis) in
    NumPy's `mode`: constant (`constant_values`), edge, reflect and symmetric (`reflect_type`
    'even' or 'odd'), wrap, maximum/minimum/mean (`stat_length`), linear_ramp (`end_values`),
    empty (zeros here). Pad widths must be concrete.

    Example: `jnp.pad(jnp.array([1, 2, 3]), 2, mode="reflect")` is `[3, 2, 1, 2, 3, 2, 1]`.
    """
    a = _arr("pad", array)
    if callable(mode):
        raise NotImplementedError("pad: callable modes are not supported")
    if mode not in _PAD_MODES:
        raise ValueError(f"Unimplemented padding mode '{mode}' for np.pad.")
    allowed = {"constant": {"constant_values"}, "reflect": {"reflect_type"}, "symmetric": {"reflect_type"},
               "maximum": {"stat_length"}, "minimum": {"stat_length"}, "mean": {"stat_length"},
               "linear_ramp": {"end_values"}}.get(mode, set())
    unexpected = set(kwargs) - allowed
    if unexpected:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {sorted(unexpected)}")
    widths = _pad_widths(pad_width, a.ndim)
    if mode in ("constant", "empty"):
        return _pad_constant(a, widths, kwargs.get("constant_values", 0))
    for axis, (lo, hi) in enumerate(widths):
        if (lo or hi) and a.shape[axis] == 0:
            raise ValueError(f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'")
    if mode == "edge":
        for axis, (lo, hi) in enumerate(widths):
            parts = ([_edge_block(a, axis, lo, True)] if lo else []) + [a] + ([_edge_block(a, axis, hi, False)] if hi else [])
            a = lax.concatenate(parts, axis) if len(parts) > 1 else a
        return a
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
        for axis, (lo, hi) in enumerate(widths):
            if lo or hi:
                a = _pad_reflect(a, axis, lo, hi, mode, reflect_type)
        return a
    if mode == "wrap":
        for axis, (lo, hi) in enumerate(widths):
            if lo or hi:
                a = _pad_wrap(a, axis, lo, hi)
        return a
    if mode == "linear_ramp":
        ends = _per_axis_pairs(kwargs.get("end_values", 0), a.ndim, "pad")
        for axis, (lo, hi) in enumerate(widths):
            a = _pad_linear_ramp(a, axis, lo, hi, ends[axis])
        return a
    stat = kwargs.get("stat_length")
    stats = _per_axis_pairs(stat, a.ndim, "pad") if stat is not None else [(None, None)] * a.ndim
    for axis, (lo, hi) in enumerate(widths):
        a = _pad_stat(a, axis, lo, hi, mode, stats[axis])
    return a


# ----- deleting and inserting (static indices) ------------------------------------------------------

def _runs(indices):
    """Maximal runs of consecutive integers in a sorted list, as (start, stop) pairs."""
    runs = []
    for i in indices:
        if runs and runs[-1][1] == i:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    return runs


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """`arr` without the entries `obj` (an int, slice or concrete index/boolean array) along
    `axis` (of the flattened array when None). Example: `jnp.delete(jnp.arange(5), [0, 2])` is `[1, 3, 4]`.
    """
    a = _arr("delete", arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, a.ndim, "delete")
    n = a.shape[axis]
    if isinstance(obj, builtins.slice):
        drop = np.arange(n)[obj]
    else:
        idx = _concrete_ints(obj, "delete", "obj")
        if idx.dtype == np.bool_:
            if idx.shape != (n,):
                raise ValueError(f"delete: boolean mask of shape {idx.shape} does not match axis of size {n}")
            drop = np.nonzero(idx)[0]
        else:
            idx = idx.astype(np.int64).reshape(-1)
            if np.any((idx < -n) | (idx >= n)):
                raise IndexError(f"delete: index out of bounds for axis {axis} with size {n}: {idx.tolist()}")
            drop = idx % n if n else idx
    keep = sorted(set(range(n)) - set(int(i) for i in drop))
    parts = [lax.slice_in_dim(a, s, e, axis=axis) for s, e in _runs(keep)]
    if not parts:
        return lax.slice_in_dim(a, 0, 0, axis=axis)
    return lax.concatenate(parts, axis) if len(parts) > 1 else parts[0]


def insert(arr, obj, values, axis=None):
    """`arr` with `values` inserted before the static index or indices `obj` along `axis` (of the
    flattened array when None). Example: `jnp.insert(jnp.array([1, 2]), 1, 9)` is `[1, 9, 2]`.
    """
    a = _arr("insert", arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, a.ndim, "insert")
    n = a.shape[axis]
    scalar_obj = isinstance(obj, (int, np.integer))
    idx = np.arange(n + 1)[obj] if isinstance(obj, builtins.slice) else _concrete_ints(obj, "insert", "obj")
    if idx.dtype == np.bool_:
        raise TypeError("insert: boolean indices are not supported; pass integer indices")
    scalar_obj = scalar_obj or idx.ndim == 0
    idx = idx.astype(np.int64).reshape(-1)
    if np.any((idx < -n) | (idx > n)):
        raise IndexError(f"insert: index out of bounds for axis {axis} with size {n}: {idx.tolist()}")
    idx = np.where(idx < 0, idx + n, idx)
    from .creation import asarray
    v = asarray(values)
    v = lax.convert_element_type(v, a.dtype) if v.dtype != a.dtype else v
    shape = list(a.shape)
    if idx.size == 1:
        # NumPy's single-index case: the values form one block whose length along `axis` is their
        # own; a scalar `obj` first moves the values' leading axis there
        v = lax.broadcast_to_rank(v, a.ndim)
        if scalar_obj:
            v = moveaxis(v, 0, axis)
        shape[axis] = v.shape[axis]
        pieces, idx = [broadcast_to(v, tuple(shape))], idx[:1]
    else:
        shape[axis] = len(idx)
        v = broadcast_to(v, tuple(shape))
        order = np.argsort(idx, kind="stable")
        pieces = [lax.index_in_dim(v, int(j), axis) for j in order]
        idx = idx[order]
    parts, prev = [], 0
    for i, piece in zip(idx, pieces, strict=True):
        if i > prev:
            parts.append(lax.slice_in_dim(a, prev, int(i), axis=axis))
        parts.append(piece)
        prev = int(i)
    if prev < n:
        parts.append(lax.slice_in_dim(a, prev, n, axis=axis))
    return lax.concatenate(parts, axis) if len(parts) > 1 else parts[0]


def trim_zeros(filt, trim="fb"):
    """The 1-d `filt` without its leading ('f') and/or trailing ('b') zeros. Needs concrete
    values (the result's length depends on them), so it cannot be traced."""
    if isinstance(filt, Tracer):
        raise TypeError("trim_zeros: the result's size depends on the values, so `filt` must be concrete; "
                        "use jnp.where with a mask instead under jit.")
    a = _arr("trim_zeros", filt)
    if a.ndim != 1:
        raise ValueError(f"trim_zeros requires a 1-d array, got shape {a.shape}")
    nz = np.flatnonzero(np.asarray(a))
    trim = trim.lower()
    start = (nz[0] if nz.size else a.shape[0]) if "f" in trim else 0
    stop = (nz[-1] + 1 if nz.size else start) if "b" in trim else a.shape[0]
    return lax.slice_in_dim(a, int(start), int(builtins.max(start, stop)))


# ----- dtypes ----------------------------------------------------------------------------------

def astype(x, dtype, /, *, copy=False, device=None):
    """`x` converted to `dtype`. Complex to bool tests `x != 0` (both parts), as NumPy does;
    complex to real takes the real part. Example: `jnp.astype(jnp.array([1.7]), jnp.int32)` is `[1]`.
    """
    x = _arr("astype", x)
    dtype = dtypes.check_user_dtype(dtype, "astype")
    if dtypes.is_bool(dtype) and dtypes.is_complex(x.dtype):
        out = lax.ne(x, lax.full_like(x, 0))
    else:
        out = lax.convert_element_type(x, dtype)
    if device is not None:
        from ..array import device_put
        out = device_put(out, device)
    return out


def _astype(x, dtype, copy=False, device=None):
    return astype(x, dtype, copy=copy, device=device)


def _view(x, dtype=None, type=None):
    """`x.view(dtype)`: the same bytes read as `dtype`; the last axis rescales when the item sizes
    differ (it must then be contiguous and divisible), as NumPy does."""
    if type is not None:
        raise NotImplementedError("view: the `type` argument is not supported")
    x = _arr("view", x)
    if dtype is None:
        return x
    dtype = dtypes.check_user_dtype(dtype, "view")
    if x.dtype == dtype:
        return x
    if dtypes.is_bool(x.dtype):
        x = lax.convert_element_type(x, dtypes.uint8)
    to_bool = dtypes.is_bool(dtype)
    target = np.dtype(dtypes.uint8) if to_bool else dtype
    old, new = x.dtype.itemsize, target.itemsize
    if old != new and x.ndim == 0:
        raise ValueError("view: changing to a dtype of a different size requires at least one dimension")
    if old == new:
        out = lax.bitcast_convert_type(x, target) if x.dtype != target else x
    elif old > new:
        out = lax.bitcast_convert_type(x, target)
        out = lax.reshape(out, x.shape[:-1] + (x.shape[-1] * (old // new),))
    else:
        ratio = new // old
        if x.shape[-1] % ratio:
            raise ValueError(f"view: the last axis ({x.shape[-1]}) must be divisible by {ratio} to view "
                             f"{x.dtype} as {target}")
        out = lax.bitcast_convert_type(lax.reshape(x, x.shape[:-1] + (x.shape[-1] // ratio, ratio)), target)
    return lax.ne(out, lax.full_like(out, 0)) if to_bool else out

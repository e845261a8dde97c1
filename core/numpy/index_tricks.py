"""NumPy's index helpers and the functional `fill_diagonal`: `r_`, `c_` (concatenation by index
syntax), `s_`, `index_exp` (slice objects), `mgrid`, `ogrid` (dense and open grids).

`mgrid`/`ogrid`/`r_`/`c_` build their ranges from static slice bounds (a complex step `5j` means
5 points, endpoints included); the items they join may be traced. As in JAX, `r_`/`c_` refuse the
'r'/'c' directives that ask for a `numpy.matrix`, and `fill_diagonal` returns a new array and needs
`inplace=False` (arrays are immutable).

Example:
    >>> jnp.r_[jnp.array([1, 2]), 0, 4:6], jnp.c_[jnp.array([1, 2]), jnp.array([3, 4])].shape
    (Array([1, 2, 0, 4, 5], dtype=int32), (2, 2))
    >>> jnp.mgrid[0:1:3j], [g.shape for g in jnp.ogrid[0:2, 0:3]], jnp.s_[1:2, ::2]
    (Array([0. , 0.5, 1. ], dtype=float32), [(2, 1), (1, 3)], (slice(1, 2, None), slice(None, None, 2)))
"""
import numpy as np

from .. import dtypes
from .. import lax
from ._util import asarray_operand, canonicalize_axis, check_arraylike, promote_dtypes
from . import manipulation as _m
from . import creation as _c
from . import ufuncs as _u
from . import reductions as _r
from . import indexing as _ix

__all__ = ["r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "fill_diagonal", "put", "packbits", "unpackbits", "place",
           "mask_indices"]


class _IndexExpression:
    """`s_[...]` is the index itself; `index_exp[...]` is always a tuple (NumPy's IndexExpression)."""

    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


s_ = _IndexExpression(maketuple=False)
index_exp = _IndexExpression(maketuple=True)


def _static_number(x, where):
    if x is None or isinstance(x, (bool, int, float, complex, np.number)):
        return x
    try:
        return np.asarray(x).item()
    except Exception:  # noqa: BLE001 (a tracer)
        raise TypeError(f"{where}: slice bounds and steps must be static numbers (they set the output shape), "
                        f"got {type(x).__name__}") from None


def _grid_from_slice(s, where):
    """The 1-D range of one slice: arange(start, stop, step), or linspace(start, stop, n) when
    the step is the complex number n*1j."""
    start = _static_number(s.start, where)
    stop = _static_number(s.stop, where)
    step = _static_number(s.step, where)
    start = 0 if start is None else start
    if stop is None:
        raise ValueError(f"{where}: a slice needs a stop, got {s}")
    if isinstance(step, complex):
        return _c.linspace(start, stop, int(abs(step)), endpoint=True)
    step = 1 if step is None else step
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (start, stop, step)):
        return _c.arange(start, stop, step)
    return _c.arange(float(start), float(stop), float(step))


class _Grid:
    def __init__(self, sparse, name):
        self.sparse, self.name = sparse, name

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_from_slice(key, self.name)
        key = key if isinstance(key, tuple) else (key,)
        axes = promote_dtypes(*[_grid_from_slice(k, self.name) for k in key])
        if not axes:
            return _c.arange(0)
        grids = _c.meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else _m.stack(grids, axis=0)

    def __repr__(self):
        return f"jnp.{self.name}"


mgrid = _Grid(sparse=False, name="mgrid")
mgrid.__doc__ = """A dense multi-dimensional mesh from slices: `mgrid[0:2, 0:3]` has shape (2, 2, 3)
(`out[i]` varies along axis i); a complex step `n*1j` gives n points including the stop.

Example:
    >>> jnp.mgrid[0:2, 0:3]
    Array([[[0, 0, 0],
            [1, 1, 1]],
    <BLANKLINE>
           [[0, 1, 2],
            [0, 1, 2]]], dtype=int32)
"""
ogrid = _Grid(sparse=True, name="ogrid")
ogrid.__doc__ = """An open (broadcastable) mesh from slices: a list of arrays with one
non-unit axis each. Example: `[g.shape for g in jnp.ogrid[0:2, 0:3]]` is `[(2, 1), (1, 3)]`.
"""


class _AxisConcat:
    def __init__(self, axis, ndmin, trans1d, name):
        self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if key and isinstance(key[0], str):
            directive, key = key[0], key[1:]
            if directive in ("r", "c"):
                raise NotImplementedError(f"jnp.{self.name}: the {directive!r} directive makes a numpy.matrix, "
                                          "which core.numpy does not have")
            parts = directive.split(",")
            if len(parts) > 3:
                raise ValueError(f"jnp.{self.name}: the directive is 'axis[,ndmin[,trans1d]]', got {directive!r}")
            try:
                values = [int(p) for p in parts]
            except ValueError:
                raise ValueError(f"jnp.{self.name}: could not parse the directive {directive!r} as "
                                 "'axis[,ndmin[,trans1d]]' integers") from None
            axis, ndmin, trans1d = (values + [axis, ndmin, trans1d][len(values):])[:3]
        out = []
        for item in key:
            if isinstance(item, slice):
                arr, item_ndim = _grid_from_slice(item, self.name), 1
            elif isinstance(item, str):
                raise ValueError(f"jnp.{self.name}: a string directive must come first, got {item!r} later")
            else:
                check_arraylike(self.name, item)
                arr = asarray_operand(item)
                item_ndim = arr.ndim
            if arr.ndim < ndmin:
                arr = lax.reshape(arr, (1,) * (ndmin - arr.ndim) + arr.shape)
            if trans1d != -1 and item_ndim < ndmin:
                # NumPy's rule: the item's own axes start at position trans1d among the ndmin axes
                k2 = ndmin - item_ndim
                k1 = trans1d + k2 + 1 if trans1d < 0 else trans1d
                order = list(range(ndmin))
                arr = _m.transpose(arr, tuple(order[:k1] + order[k2:] + order[k1:k2]))
            out.append(arr)
        if not out:
            return _c.zeros((0,))
        return _m.concatenate(out, axis=axis)

    def __repr__(self):
        return f"jnp.{self.name}"


r_ = _AxisConcat(axis=0, ndmin=1, trans1d=-1, name="r_")
r_.__doc__ = """Concatenation along the first axis by index syntax: arrays, scalars and slices (as
ranges); a leading string 'axis,ndmin,trans1d' changes the axis and the minimum rank.

Example:
    >>> jnp.r_[jnp.array([1, 2]), 0, 4:6]
    Array([1, 2, 0, 4, 5], dtype=int32)
"""
c_ = _AxisConcat(axis=-1, ndmin=2, trans1d=0, name="c_")
c_.__doc__ = """Concatenation along the last axis by index syntax, 1-D items becoming columns.

Example:
    >>> jnp.c_[jnp.array([1, 2]), jnp.array([3, 4])]
    Array([[1, 3],
           [2, 4]], dtype=int32)
"""


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """A copy of `a` (2-D, or N-D with equal sides) with its main diagonal set to `val` (a scalar,
    or values used in order and repeated as needed). `wrap=True` continues the diagonal below a
    tall matrix every `ncols + 1` rows, as NumPy. Arrays are immutable: pass `inplace=False`.

    Example:
        >>> jnp.fill_diagonal(jnp.zeros((2, 3)), 7.0, inplace=False)
        Array([[7., 0., 0.],
               [0., 7., 0.]], dtype=float32)
    """
    if inplace:
        raise NotImplementedError("fill_diagonal: arrays are immutable, so it cannot write into `a`; call "
                                  "jnp.fill_diagonal(a, val, inplace=False), which returns the filled copy")
    check_arraylike("fill_diagonal", a, val)
    a, val = asarray_operand(a), asarray_operand(val)
    if a.ndim < 2:
        raise ValueError(f"fill_diagonal: array must be at least 2-d, got shape {a.shape}")
    if a.ndim > 2 and any(d != a.shape[0] for d in a.shape):
        raise ValueError(f"fill_diagonal: all dimensions of input must be of equal length, got shape {a.shape}")
    # NumPy's flat-index rule: every (step)-th element of the raveled array, step 1 + sum of strides
    if a.ndim == 2:
        step = a.shape[1] + 1
        end = a.size if wrap else a.shape[1] * a.shape[1]
    else:
        step = 1 + int(np.cumprod(a.shape[:-1]).sum())
        end = a.size
    flat_index = np.arange(0, min(end, a.size), step, dtype=np.int32)
    k = flat_index.shape[0]
    val = val.astype(a.dtype)
    if val.ndim != 0:
        v = _m.ravel(val)
        if v.shape[0] == 0 or k == 0:
            return a
        v = _m.tile(v, -(-k // v.shape[0]))[:k]
    else:
        v = val
    flat = _m.ravel(a).at[flat_index].set(v)
    return lax.reshape(flat, a.shape)


def put(a, ind, v, mode=None, *, inplace=True):
    """A copy of `a` with the elements at the flat indices `ind` replaced by `v` (repeated as
    needed). `mode`: None drops out-of-bounds indices (negative ones count from the end), 'clip'
    clamps them, 'wrap' wraps them; NumPy's 'raise' needs concrete indices and is not supported.
    Arrays are immutable: pass `inplace=False`.

    Example:
        >>> jnp.put(jnp.zeros(4), jnp.array([0, 2]), jnp.array([5.0, 6.0]), inplace=False)
        Array([5., 0., 6., 0.], dtype=float32)
    """
    if inplace:
        raise NotImplementedError("put: arrays are immutable, so it cannot write into `a`; call "
                                  "jnp.put(a, ind, v, inplace=False), which returns the updated copy")
    if mode not in (None, "clip", "wrap"):
        raise NotImplementedError(f"put: mode={mode!r} is not supported; use None (drop out-of-bounds), 'clip' "
                                  "or 'wrap'")
    check_arraylike("put", a, ind, v)
    a = asarray_operand(a)
    flat = _m.ravel(a)
    n = flat.shape[0]
    ind = _m.ravel(asarray_operand(ind))
    if not (dtypes.is_int(ind.dtype) or dtypes.is_bool(ind.dtype)):
        raise TypeError(f"put: ind must hold integers, got {ind.dtype}")
    ind = ind.astype(dtypes.int32)
    v = _m.ravel(asarray_operand(v)).astype(a.dtype)
    k = ind.shape[0]
    if k == 0 or v.shape[0] == 0:
        return a
    if v.shape[0] != k:
        v = _m.tile(v, -(-k // v.shape[0]))[:k]
    if mode == "clip":
        ind = _u.clip(ind, 0, n - 1)
    elif mode == "wrap":
        ind = _u.remainder(ind, n)
    else:
        ind = _ix.where(_u.less(ind, 0), _u.add(ind, n), ind)
        ind = _ix.where(_u.logical_or(_u.less(ind, 0), _u.greater_equal(ind, n)), n, ind)  # dropped
    return lax.reshape(flat.at[ind].set(v, mode="drop"), a.shape)


def packbits(a, axis=None, bitorder="big"):
    """The elements of `a` (non-zero is 1) packed 8 to a uint8 along `axis` (flattened when None),
    the last byte padded with zeros; `bitorder` 'big' puts the first element in the top bit.

    Example:
        >>> jnp.packbits(jnp.array([1, 0, 1, 1, 0, 0, 0, 0, 1]))
        Array([176, 128], dtype=uint8)
    """
    check_arraylike("packbits", a)
    a = asarray_operand(a)
    if not (dtypes.is_int(a.dtype) or dtypes.is_bool(a.dtype)):
        raise TypeError(f"packbits: expected an integer or bool array, got {a.dtype}")
    if bitorder not in ("big", "little"):
        raise ValueError(f"packbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    if axis is None:
        a, axis = _m.ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim, "axis")
    bits = _u.not_equal(a, 0).astype(np.uint8)
    bits = _m.moveaxis(bits, axis, -1)
    length = bits.shape[-1]
    pad = (-length) % 8
    if pad:
        bits = _m.concatenate([bits, _c.zeros(bits.shape[:-1] + (pad,), np.uint8)], axis=-1)
    bits = lax.reshape(bits, bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    weights = np.array([128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else [1, 2, 4, 8, 16, 32, 64, 128],
                       np.uint8)
    packed = _r.sum(_u.multiply(bits, asarray_operand(weights)), axis=-1, dtype=np.uint8)
    return _m.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of the uint8 array `a` as a uint8 array of 0s and 1s, 8 per element along `axis`
    (flattened when None); `count` keeps that many (negative: drops that many from the end;
    more than there are: pads with zeros).

    Example:
        >>> jnp.unpackbits(jnp.array([176], dtype=jnp.uint8))
        Array([1, 0, 1, 1, 0, 0, 0, 0], dtype=uint8)
    """
    check_arraylike("unpackbits", a)
    a = asarray_operand(a)
    if a.dtype != np.uint8:
        raise TypeError(f"unpackbits: expected a uint8 array, got {a.dtype}")
    if bitorder not in ("big", "little"):
        raise ValueError(f"unpackbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    if axis is None:
        a, axis = _m.ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim, "axis")
    shifts = np.arange(7, -1, -1, dtype=np.uint8) if bitorder == "big" else np.arange(8, dtype=np.uint8)
    moved = _m.moveaxis(a, axis, -1)
    bits = _u.bitwise_and(_u.right_shift(moved[..., None], asarray_operand(shifts)), np.uint8(1))
    bits = lax.reshape(bits, moved.shape[:-1] + (moved.shape[-1] * 8,))
    if count is not None:
        total = bits.shape[-1]
        keep = count if count >= 0 else max(total + count, 0)
        if keep <= total:
            bits = bits[..., :keep]
        else:
            bits = _m.concatenate([bits, _c.zeros(bits.shape[:-1] + (keep - total,), np.uint8)], axis=-1)
    return _m.moveaxis(bits, -1, axis)


def place(arr, mask, vals, *, inplace=True):
    """A copy of `arr` whose elements where `mask` is True are replaced, in order, by `vals`
    (repeated as needed), as `numpy.place`. Runs under jit (the mask may be traced). Arrays are
    immutable: pass `inplace=False`.

    Example:
        >>> jnp.place(jnp.arange(5), jnp.arange(5) % 2 == 1, jnp.array([-1, -2]), inplace=False)
        Array([ 0, -1,  2, -2,  4], dtype=int32)
    """
    if inplace:
        raise NotImplementedError("place: arrays are immutable, so it cannot write into `arr`; call "
                                  "jnp.place(arr, mask, vals, inplace=False), which returns the updated copy")
    check_arraylike("place", arr, mask, vals)
    arr, mask = asarray_operand(arr), asarray_operand(mask)
    if mask.size != arr.size:
        raise ValueError(f"place: mask and arr must have the same size, got shapes {mask.shape} and {arr.shape}")
    data = _m.ravel(arr)
    n = data.shape[0]
    vals = _m.ravel(asarray_operand(vals)).astype(arr.dtype)
    if n == 0 or vals.shape[0] == 0:
        return arr
    # the k-th True position gets vals[k % len(vals)]; padding indices (= n) are dropped
    (indices,) = _ix.nonzero(_m.ravel(mask), size=n, fill_value=n)
    vals = _m.tile(vals, -(-n // vals.shape[0]))[:n]
    return lax.reshape(data.at[indices].set(vals, mode="drop"), arr.shape)


def mask_indices(n, mask_func, k=0, *, size=None):
    """The (row, column) indices where `mask_func(ones((n, n)), k)` is non-zero, e.g.
    `mask_indices(3, jnp.triu)` for the upper triangle; `size=` fixes the count for jit.

    Example:
        >>> jnp.mask_indices(3, jnp.triu, 1)
        (Array([0, 0, 1], dtype=int32), Array([1, 2, 2], dtype=int32))
    """
    i, j = _ix.nonzero(mask_func(_c.ones((n, n)), k), size=size)
    return i, j

"""NumPy reductions: sum, prod, max, min, all, any, mean, var, std, average, quantiles and medians,
the nan-ignoring variants, argmax/argmin and cumulative sums and products.

Dtype results follow jax.numpy: `sum`/`prod`/`cumulative_sum` of bools and narrow integers give the
default integer dtype (int32 unless x64 is on), `cumsum`/`cumprod` of bools too but keep narrow
integers; `mean`/`var`/quantiles of integers give the default float;
float16 and bfloat16 sums and means accumulate in float32. As in JAX, there is no `out=` (arrays are
immutable) and `nanargmax`/`nanargmin` of an all-NaN slice give -1 instead of raising.
"""
import math

import numpy as np

from .. import dtypes, lax
from ..trace import Tracer
from ._util import (asarray_operand, broadcast_shapes, canonicalize_axes, canonicalize_axis, check_arraylike,
                    promote_dtypes_inexact)

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "var", "std", "average",
           "median", "quantile", "percentile", "nanmedian", "nanquantile", "nanpercentile", "ptp",
           "count_nonzero", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
           "nanargmax", "nanargmin", "argmax", "argmin", "cumsum", "cumprod", "cumulative_sum",
           "cumulative_prod", "nancumsum", "nancumprod"]

_builtin_any = any  # the Python builtin, shadowed by jnp.any below


# ----- small lax compositions shared with sorting.py -------------------------------------------

def _where(cond, x, y):
    """Elementwise `x if cond else y` for operands of one shape (cond bool of that shape)."""
    return lax.select_n(cond, y, x)


def _isnan(x):
    return lax.ne(x, x)


def _full(shape, value, dtype):
    return lax.full(shape, value, dtype)


def _broadcast_to(x, shape):
    """NumPy broadcasting of `x` to `shape` (trailing dimensions aligned)."""
    x = asarray_operand(x)
    shape = tuple(shape)
    if x.shape == shape:
        return x
    if broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={[x.shape, shape]}")
    lead = len(shape) - x.ndim
    keep = tuple(i for i, d in enumerate(x.shape) if d == shape[lead + i])
    x = lax.reshape(x, tuple(x.shape[i] for i in keep)) if len(keep) != x.ndim else x
    return lax.broadcast_in_dim(x, shape, tuple(lead + i for i in keep))


def _convert(x, dtype, weak=False):
    return lax.convert_element_type(x, dtype, weak_type=weak)


def _ravel(x):
    return lax.reshape(x, (x.size,))


def _keepdims_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _is_concrete(x):
    return not isinstance(x, Tracer)


def _promote_integers(dtype):
    """JAX's accumulation dtype for sums and products: bool and narrow integers widen."""
    if dtypes.is_bool(dtype):
        return dtypes.default_int_dtype()
    if dtypes.is_unsigned(dtype) and dtype.itemsize < dtypes.default_uint_dtype().itemsize:
        return dtypes.default_uint_dtype()
    if dtypes.is_int(dtype) and dtype.itemsize < dtypes.default_int_dtype().itemsize:
        return dtypes.default_int_dtype()
    return dtype


def _to_inexact(dtype):
    return dtype if dtypes.is_inexact(dtype) else dtypes.default_float_dtype()


def _upcast(dtype):
    """The dtype to accumulate in: float16/bfloat16 sums lose too much precision on their own."""
    return dtypes.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else dtype


# ----- the generic monoid reduction --------------------------------------------------------------

_LAX_REDUCE = {"add": lax.reduce_sum, "mul": lax.reduce_prod, "max": lax.reduce_max, "min": lax.reduce_min,
               "and": lax.reduce_and, "or": lax.reduce_or, "xor": lax.reduce_xor}  # xor: jnp.bitwise_xor.reduce
_COMBINE = {"add": "add", "mul": "mul", "max": "max", "min": "min", "and": "and_", "or": "or_", "xor": "xor"}
_UFUNC_NAMES = {"max": "maximum", "min": "minimum"}


def _reduction(a, name, kind, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
               promote_integers=False, upcast=False, bool_op=False):
    check_arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported: purenn arrays are "
                                  "immutable; use the return value.")
    a = asarray_operand(a)
    axes = canonicalize_axes(axis, a.ndim, name)
    if bool_op:
        result_dtype = dtypes.bool_
    elif dtype is not None:
        result_dtype = dtypes.check_user_dtype(dtype, name)
    else:
        result_dtype = _promote_integers(a.dtype) if promote_integers else a.dtype
    weak = a.weak_type and dtype is None and result_dtype == a.dtype
    compute = _upcast(result_dtype) if upcast else result_dtype
    if kind in ("max", "min") and initial is None:
        if _builtin_any(a.shape[i] == 0 for i in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity; pass "
                             "`initial=` to give empty slices a value.")
        if where is not None:
            raise ValueError(f"reduction operation {name} does not have an identity, so to use a where "
                             "mask one has to specify 'initial'.")
    x = _convert(a, compute)
    if where is not None:
        mask = _broadcast_to(_convert(asarray_operand(where), dtypes.bool_), x.shape)
        x = _where(mask, x, _full(x.shape, _identity(kind, compute), compute))
    if kind in ("max", "min") and dtypes.is_bool(compute):
        kind = "or" if kind == "max" else "and"
    r = _LAX_REDUCE[kind](x, axes)
    if initial is not None:
        init = _convert(asarray_operand(initial), compute)
        if init.ndim:
            raise ValueError(f"{name}: initial must be a scalar, got shape {init.shape}")
        r = getattr(lax, _COMBINE[kind])(r, lax.broadcast_in_dim(init, r.shape, ()))
    r = _convert(r, result_dtype, weak)
    if keepdims:
        r = lax.reshape(r, _keepdims_shape(a.shape, axes))
    return r


def _identity(kind, dtype):
    from ..lax.reductions import identity
    return identity(kind, dtype)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Sum of elements over `axis` (None: all; an int or a tuple of ints), as `numpy.sum`.

    Bools and integers narrower than the default int are summed as the default int (JAX's rule);
    float16 sums accumulate in float32. Example: `jnp.sum(jnp.array([[1, 2], [3, 4]]), axis=0)` is
    `[4, 6]`.
    """
    return _reduction(a, "sum", "add", axis, dtype, out, keepdims, initial, where, promote_integers=True,
                      upcast=True)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product of elements over `axis`, as `numpy.prod` (with `sum`'s dtype rules).

    Example: `jnp.prod(jnp.array([1., 2., 3.]))` is `6.`.
    """
    return _reduction(a, "prod", "mul", axis, dtype, out, keepdims, initial, where, promote_integers=True,
                      upcast=True)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Maximum over `axis`, NaN propagating, as `numpy.max`. An empty slice needs `initial`
    (otherwise ValueError, as NumPy). Example: `jnp.max(jnp.array([1, 5, 3]))` is `5`.
    """
    return _reduction(a, "max", "max", axis, None, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Minimum over `axis`, NaN propagating, as `numpy.min`. Example: `jnp.min(jnp.array([4, 2]))` is `2`."""
    return _reduction(a, "min", "min", axis, None, out, keepdims, initial, where)


amax = max
amin = min


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether every element over `axis` is true (nonzero). Example: `jnp.all(jnp.array([1, 0]))` is False."""
    return _reduction(a, "all", "and", axis, None, out, keepdims, None, where, bool_op=True)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether some element over `axis` is true (nonzero). Example: `jnp.any(jnp.array([1, 0]))` is True."""
    return _reduction(a, "any", "or", axis, None, out, keepdims, None, where, bool_op=True)


def count_nonzero(a, axis=None, keepdims=False):
    """The number of nonzero elements over `axis`, as the default int dtype.

    Example: `jnp.count_nonzero(jnp.array([[0, 1], [2, 0]]), axis=1)` is `[1, 1]`.
    """
    check_arraylike("count_nonzero", a)
    a = asarray_operand(a)
    nz = lax.ne(a, _full(a.shape, 0, a.dtype)) if not dtypes.is_bool(a.dtype) else a
    return sum(nz, axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range (max - min) over `axis`. Example: `jnp.ptp(jnp.array([3, 9, 1]))` is `8`."""
    return lax.sub(max(a, axis, out, keepdims), min(a, axis, out, keepdims))


# ----- mean, var, std, average -----------------------------------------------------------------

def _count(shape, axes, where, dtype, keepdims):
    """How many elements each reduced slice holds (the `where` mask counted), as `dtype`."""
    if where is None:
        n = math.prod(shape[i] for i in axes)
        out_shape = _keepdims_shape(shape, axes) if keepdims else tuple(d for i, d in enumerate(shape) if i not in axes)
        return _full(out_shape, n, dtype)
    mask = _broadcast_to(_convert(asarray_operand(where), dtypes.bool_), shape)
    return sum(mask, axis=axes, dtype=dtype, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over `axis`; integers and bools give the default float dtype, float16
    accumulates in float32. Example: `jnp.mean(jnp.array([1, 2]))` is `1.5`.
    """
    check_arraylike("mean", a)
    a = asarray_operand(a)
    axes = canonicalize_axes(axis, a.ndim, "mean")
    result_dtype = dtypes.check_user_dtype(dtype, "mean") if dtype is not None else _to_inexact(a.dtype)
    compute = _upcast(_to_inexact(result_dtype))
    s = sum(_convert(a, compute), axis=axes, out=out, keepdims=keepdims, where=where)
    n = _count(a.shape, axes, where, compute, keepdims)
    return _convert(lax.div(s, n), result_dtype)


def _var_dtypes(a_dtype, dtype, name):
    if dtype is not None:
        result = dtypes.check_user_dtype(dtype, name)
    else:
        result = _to_inexact(a_dtype)
        if dtypes.is_complex(result):
            result = dtypes.finfo(result).dtype
    compute = _upcast(_to_inexact(a_dtype if dtypes.is_inexact(a_dtype) else result))
    return result, compute


def _correction(ddof, correction, name):
    if correction is not None:
        if ddof != 0:
            raise ValueError(f"{name}: ddof and correction can't be provided simultaneously.")
        return correction
    return ddof


def _var(a, axis, dtype, out, ddof, keepdims, where, correction, name, ignore_nan):
    check_arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    a = asarray_operand(a)
    axes = canonicalize_axes(axis, a.ndim, name)
    corr = _correction(ddof, correction, name)
    result_dtype, compute = _var_dtypes(a.dtype, dtype, name)
    x = _convert(a, compute)
    if where is not None:
        where = _broadcast_to(_convert(asarray_operand(where), dtypes.bool_), x.shape)
    if ignore_nan and dtypes.is_inexact(compute):
        valid = lax.not_(_isnan(x))
        where = valid if where is None else lax.and_(where, valid)
    n = _count(x.shape, axes, where, _real(compute), keepdims=True)
    zero = _full(x.shape, 0, compute)
    xs = x if where is None else _where(where, x, zero)
    m = lax.div(sum(xs, axis=axes, keepdims=True), _convert(n, compute))
    c = lax.sub(x, _broadcast_to(m, x.shape))
    if where is not None:
        c = _where(where, c, zero)
    sq = lax.real(lax.mul(c, lax.conj(c))) if dtypes.is_complex(compute) else lax.mul(c, c)
    ss = sum(sq, axis=axes, keepdims=True)
    denom = lax.max(lax.sub(n, _full(n.shape, corr, n.dtype)), _full(n.shape, 0, n.dtype))
    v = lax.div(ss, denom)
    if not keepdims:
        v = lax.reshape(v, tuple(d for i, d in enumerate(x.shape) if i not in axes))
    return _convert(v, result_dtype)


def _real(dtype):
    return dtypes.finfo(dtype).dtype if dtypes.is_complex(dtype) else dtype


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Variance over `axis` with `ddof` (or the array-API name `correction`) delta degrees of freedom;
    complex inputs give a real variance. Example: `jnp.var(jnp.array([1., 3.]))` is `1.`.
    """
    return _var(a, axis, dtype, out, ddof, keepdims, where, correction, "var", False)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Standard deviation (the square root of `var`). Example: `jnp.std(jnp.array([1., 3.]))` is `1.`."""
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted average over `axis`; 1-D `weights` along one `axis` are allowed, as in NumPy. With
    `returned=True` also returns the sum of weights (broadcast to the result's shape).

    Example: `jnp.average(jnp.array([1., 2.]), weights=jnp.array([3., 1.]))` is `1.25`.
    """
    check_arraylike("average", a)
    a = asarray_operand(a)
    axes = canonicalize_axes(axis, a.ndim, "average")
    if weights is None:
        avg = mean(a, axis=axes, keepdims=keepdims)
        scl = _full(avg.shape, math.prod(a.shape[i] for i in axes), avg.dtype)
    else:
        check_arraylike("average", weights)
        a, w = promote_dtypes_inexact(a, weights)
        if w.shape != a.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if w.ndim != 1:
                raise ValueError("1D weights expected when shapes of a and weights differ.")
            if len(axes) != 1 or w.shape[0] != a.shape[axes[0]]:
                raise ValueError("Length of weights not compatible with specified axis.")
            w = lax.broadcast_in_dim(w, a.shape, axes)
        scl = sum(w, axis=axes, keepdims=keepdims)
        avg = lax.div(sum(lax.mul(a, w), axis=axes, keepdims=keepdims), scl)
    if returned:
        if scl.shape != avg.shape:
            scl = _broadcast_to(scl, avg.shape)
        return avg, scl
    return avg


# ----- nan-ignoring reductions ---------------------------------------------------------------------

def _nan_to(a, value):
    a = asarray_operand(a)
    if not dtypes.is_inexact(a.dtype):
        return a
    return _where(_isnan(a), _full(a.shape, value, a.dtype), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """`sum` treating NaNs as zero. Example: `jnp.nansum(jnp.array([1., jnp.nan]))` is `1.`."""
    check_arraylike("nansum", a)
    return sum(_nan_to(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """`prod` treating NaNs as one. Example: `jnp.nanprod(jnp.array([2., jnp.nan]))` is `2.`."""
    check_arraylike("nanprod", a)
    return prod(_nan_to(a, 1), axis, dtype, out, keepdims, initial, where)


def _nan_extreme(a, axis, out, keepdims, initial, where, name, fn, fill):
    check_arraylike(name, a)
    a = asarray_operand(a)
    if not dtypes.is_inexact(a.dtype):
        return fn(a, axis, out, keepdims, initial, where)
    nan = _isnan(a)
    r = fn(_where(nan, _full(a.shape, _identity(fill, a.dtype), a.dtype), a), axis, out, keepdims, initial,
           where)
    all_nan = all(nan, axis=axis, keepdims=keepdims, where=where)
    if initial is not None:
        return r  # an initial value makes every slice non-empty of NaN-free values
    return _where(all_nan, _full(r.shape, np.nan, r.dtype), r)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`max` ignoring NaNs (an all-NaN slice gives NaN). Example: `jnp.nanmax(jnp.array([1., jnp.nan]))` is `1.`."""
    return _nan_extreme(a, axis, out, keepdims, initial, where, "nanmax", max, "max")


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`min` ignoring NaNs (an all-NaN slice gives NaN). Example: `jnp.nanmin(jnp.array([1., jnp.nan]))` is `1.`."""
    return _nan_extreme(a, axis, out, keepdims, initial, where, "nanmin", min, "min")


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """`mean` over the non-NaN elements (NaN for a slice of only NaNs).

    Example: `jnp.nanmean(jnp.array([1., jnp.nan, 3.]))` is `2.`.
    """
    check_arraylike("nanmean", a)
    a = asarray_operand(a)
    if not dtypes.is_inexact(a.dtype):
        return mean(a, axis, dtype, out, keepdims, where=where)
    valid = lax.not_(_isnan(a))
    if where is not None:
        valid = lax.and_(valid, _broadcast_to(_convert(asarray_operand(where), dtypes.bool_), a.shape))
    return mean(a, axis, dtype, out, keepdims, where=valid)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """`var` over the non-NaN elements. Example: `jnp.nanvar(jnp.array([1., jnp.nan, 3.]))` is `1.`."""
    return _var(a, axis, dtype, out, ddof, keepdims, where, correction, "nanvar", True)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """`std` over the non-NaN elements. Example: `jnp.nanstd(jnp.array([1., jnp.nan, 3.]))` is `1.`."""
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


# ----- argmax / argmin -----------------------------------------------------------------------------

def _arg_extreme(a, axis, out, keepdims, name, lax_fn):
    check_arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    a = asarray_operand(a)
    if axis is None:
        x, ax = _ravel(a), 0
        shape_kept = (1,) * a.ndim
    else:
        ax = canonicalize_axis(axis, a.ndim, name)
        x = a
        shape_kept = _keepdims_shape(a.shape, (ax,))
    if x.shape[ax] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    r = lax_fn(x, ax, dtypes.default_int_dtype())
    return lax.reshape(r, shape_kept) if keepdims else r


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the maximum along `axis` (of the flattened array when None); the first on ties,
    and NaN counts as the maximum. Example: `jnp.argmax(jnp.array([1, 3, 3]))` is `1`.
    """
    return _arg_extreme(a, axis, out, keepdims, "argmax", lax.argmax)


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the minimum along `axis`; the first on ties, and NaN counts as the minimum.
    Example: `jnp.argmin(jnp.array([3, 1, 1]))` is `1`.
    """
    return _arg_extreme(a, axis, out, keepdims, "argmin", lax.argmin)


def _nan_arg_extreme(a, axis, out, keepdims, name, fn, fill):
    check_arraylike(name, a)
    a = asarray_operand(a)
    if not dtypes.is_inexact(a.dtype):
        return fn(a, axis, out, keepdims)
    nan = _isnan(a)
    r = fn(_where(nan, _full(a.shape, _identity(fill, a.dtype), a.dtype), a), axis, out, keepdims)
    all_nan = all(nan, axis=axis, keepdims=bool(keepdims))
    return _where(all_nan, _full(r.shape, -1, r.dtype), r)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """`argmax` ignoring NaNs; unlike NumPy (which raises), an all-NaN slice gives -1, as in JAX.
    Example: `jnp.nanargmax(jnp.array([jnp.nan, 2., 1.]))` is `1`.
    """
    return _nan_arg_extreme(a, axis, out, keepdims, "nanargmax", argmax, "max")


def nanargmin(a, axis=None, out=None, keepdims=None):
    """`argmin` ignoring NaNs; an all-NaN slice gives -1, as in JAX.
    Example: `jnp.nanargmin(jnp.array([jnp.nan, 2., 1.]))` is `2`.
    """
    return _nan_arg_extreme(a, axis, out, keepdims, "nanargmin", argmin, "min")


# ----- cumulative sums and products --------------------------------------------------------------

def _cumulative(a, axis, dtype, out, name, lax_fn, nan_fill=None, promote_integers=False):
    check_arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    a = asarray_operand(a)
    if axis is None:
        a, axis = _ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim, name)
    if dtype is not None:
        result_dtype = dtypes.check_user_dtype(dtype, name)
    elif promote_integers or dtypes.is_bool(a.dtype):
        result_dtype = _promote_integers(a.dtype)
    else:  # jnp.cumsum and friends keep narrow integers (int8 wraps), as JAX 0.10.2's do
        result_dtype = a.dtype
    if nan_fill is not None:
        a = _nan_to(a, nan_fill)
    return lax_fn(_convert(a, result_dtype), axis)


def cumsum(a, axis=None, dtype=None, out=None):
    """Running sum along `axis` (of the flattened array when None), with `sum`'s dtype rules.
    Example: `jnp.cumsum(jnp.array([1, 2, 3]))` is `[1, 3, 6]`.
    """
    return _cumulative(a, axis, dtype, out, "cumsum", lax.cumsum)


def cumprod(a, axis=None, dtype=None, out=None):
    """Running product along `axis`. Example: `jnp.cumprod(jnp.array([1, 2, 3]))` is `[1, 2, 6]`."""
    return _cumulative(a, axis, dtype, out, "cumprod", lax.cumprod)


def nancumsum(a, axis=None, dtype=None, out=None):
    """`cumsum` treating NaNs as zero. Example: `jnp.nancumsum(jnp.array([1., jnp.nan, 2.]))` is `[1., 1., 3.]`."""
    return _cumulative(a, axis, dtype, out, "nancumsum", lax.cumsum, nan_fill=0)


def nancumprod(a, axis=None, dtype=None, out=None):
    """`cumprod` treating NaNs as one. Example: `jnp.nancumprod(jnp.array([2., jnp.nan, 2.]))` is `[2., 2., 4.]`."""
    return _cumulative(a, axis, dtype, out, "nancumprod", lax.cumprod, nan_fill=1)


def _cumulative_api(x, axis, dtype, include_initial, name, lax_fn, initial):
    check_arraylike(name, x)
    x = asarray_operand(x)
    if x.ndim == 0:
        raise ValueError(f"{name}: the input must have at least one dimension, got a 0-d array.")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{name}: axis must be specified when the input has more than one dimension, "
                             f"got shape {x.shape}.")
        axis = 0
    axis = canonicalize_axis(axis, x.ndim, name)
    r = _cumulative(x, axis, dtype, None, name, lax_fn, promote_integers=True)  # the array API widens
    if include_initial:
        pad = [(0, 0, 0)] * r.ndim
        pad[axis] = (1, 0, 0)
        r = lax.pad(r, _convert(asarray_operand(initial), r.dtype), pad)
    return r


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array-API running sum: `axis` is required beyond 1-D; `include_initial` prepends a 0.
    Example: `jnp.cumulative_sum(jnp.array([1, 2]), include_initial=True)` is `[0, 1, 3]`.
    """
    return _cumulative_api(x, axis, dtype, include_initial, "cumulative_sum", lax.cumsum, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array-API running product; `include_initial` prepends a 1.
    Example: `jnp.cumulative_prod(jnp.array([2, 3]))` is `[2, 6]`.
    """
    return _cumulative_api(x, axis, dtype, include_initial, "cumulative_prod", lax.cumprod, 1)


# ----- quantiles and medians -----------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def take_last(x, idx):
    """`x[..., idx[..., j]]` for an int32 `idx` whose leading dimensions equal `x`'s: one flat
    gather (indices are in range by construction)."""
    n = x.shape[-1]
    lead = x.shape[:-1]
    rows = math.prod(lead)
    q = idx.shape[-1]
    if rows == 0 or q == 0:
        return _full(lead + (q,), 0, x.dtype)  # nothing to gather (a gather from an empty operand is invalid)
    flat_idx = lax.reshape(idx, (rows, q))
    offsets = lax.mul(lax.broadcasted_iota(idx.dtype, (rows, q), 0), _full((rows, q), n, idx.dtype))
    flat_idx = lax.reshape(lax.add(flat_idx, offsets), (rows, q, 1))
    dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    out = lax.gather(lax.reshape(x, (rows * n,)), flat_idx, dn, (1,), mode="clip")
    return lax.reshape(out, lead + (q,))


def _quantile(a, q, axis, method, keepdims, name, ignore_nan, out=None):
    check_arraylike(name, a, q)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    if method not in _METHODS:
        raise ValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
    a, q = promote_dtypes_inexact(a, q)
    if dtypes.is_complex(a.dtype):
        raise ValueError(f"{name} does not support complex input, got dtype {a.dtype}")
    if _is_concrete(q):
        qv = np.asarray(q, np.float64)
        if not np.all((qv >= 0) & (qv <= 1)):
            raise ValueError("Quantiles must be in the range [0, 1]")
    if q.ndim > 1:
        raise ValueError(f"{name}: q must be a scalar or 1-D, got shape {q.shape}")
    axes = canonicalize_axes(axis, a.ndim, name)
    rest = tuple(i for i in range(a.ndim) if i not in axes)
    rest_shape = tuple(a.shape[i] for i in rest)
    out_rest = _keepdims_shape(a.shape, axes) if keepdims else rest_shape
    n = math.prod(a.shape[i] for i in axes)
    qn = math.prod(q.shape)
    if n == 0:
        return _full(q.shape + out_rest, np.nan, a.dtype)
    x = lax.reshape(lax.transpose(a, rest + axes), rest_shape + (n,))
    # positions are computed in float32 at least: float16 cannot even count past 2048
    cd = _upcast(a.dtype)
    s = lax.sort(x, dimension=x.ndim - 1)
    qf = lax.broadcast_in_dim(_convert(lax.reshape(q, (qn,)), cd), rest_shape + (qn,), (len(rest_shape),))
    if ignore_nan:
        count = sum(lax.not_(_isnan(x)), axis=-1, keepdims=True, dtype=cd)
        count = _broadcast_to(count, rest_shape + (qn,))
    else:
        count = _full(rest_shape + (qn,), n, cd)
    last = lax.sub(count, _full(count.shape, 1, cd))
    pos = lax.mul(qf, lax.max(last, _full(count.shape, 0, cd)))
    lo = lax.floor(pos)
    hi = lax.ceil(pos)

    def val(p):
        i = lax.clamp(_full((), 0, dtypes.int32), _convert(p, dtypes.int32), _full((), n - 1, dtypes.int32))
        return _convert(take_last(s, i), cd)

    if method == "lower":
        r = val(lo)
    elif method == "higher":
        r = val(hi)
    elif method == "nearest":
        r = val(lax.round(pos, lax.RoundingMethod.TO_NEAREST_EVEN))
    else:
        vlo, vhi = val(lo), val(hi)
        t = lax.sub(pos, lo) if method == "linear" else _where(lax.eq(lo, hi), _full(pos.shape, 0, cd),
                                                                  _full(pos.shape, 0.5, cd))
        r = _lerp(vlo, vhi, t)
    if ignore_nan:
        r = _where(lax.eq(count, _full(count.shape, 0, cd)), _full(r.shape, np.nan, cd), r)
    else:
        has_nan = _broadcast_to(any(_isnan(x), axis=-1, keepdims=True), r.shape)
        r = _where(has_nan, _full(r.shape, np.nan, cd), r)
    r = lax.transpose(r, (r.ndim - 1,) + tuple(range(r.ndim - 1)))
    return _convert(lax.reshape(r, q.shape + out_rest), a.dtype)


def _lerp(a, b, t):
    """a + (b - a) t, evaluated from the nearer end as NumPy does (exact at t = 0 and t = 1)."""
    d = lax.sub(b, a)
    one = _full(t.shape, 1, t.dtype)
    near_b = lax.ge(t, _full(t.shape, 0.5, t.dtype))
    return _where(near_b, lax.sub(b, lax.mul(d, lax.sub(one, t))), lax.add(a, lax.mul(d, t)))


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """The `q`-th quantiles (q in [0, 1], a scalar or 1-D) over `axis`, with NumPy's `method`s
    'linear', 'lower', 'higher', 'midpoint' and 'nearest'; any NaN in a slice gives NaN. The result
    has shape `q.shape + reduced shape`. Example: `jnp.quantile(jnp.array([1., 2., 3., 4.]), 0.5)` is `2.5`.
    """
    return _quantile(a, q, axis, method, keepdims, "quantile", False, out)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """`quantile` with `q` in percent. Example: `jnp.percentile(jnp.array([1., 3.]), 50)` is `2.`."""
    check_arraylike("percentile", a, q)
    return quantile(a, lax.div(*promote_dtypes_inexact(q, 100.0)), axis, out, overwrite_input, method,
                    keepdims)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over `axis` (the mean of the two middle values for even counts); NaN if a slice holds
    NaN. Example: `jnp.median(jnp.array([3., 1., 2., 10.]))` is `2.5`.
    """
    return _quantile(a, 0.5, axis, "midpoint", keepdims, "median", False, out)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """`quantile` ignoring NaNs (an all-NaN slice gives NaN).
    Example: `jnp.nanquantile(jnp.array([1., jnp.nan, 3.]), 0.5)` is `2.`.
    """
    return _quantile(a, q, axis, method, keepdims, "nanquantile", True, out)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """`percentile` ignoring NaNs. Example: `jnp.nanpercentile(jnp.array([1., jnp.nan, 3.]), 50)` is `2.`."""
    check_arraylike("nanpercentile", a, q)
    return nanquantile(a, lax.div(*promote_dtypes_inexact(q, 100.0)), axis, out, overwrite_input, method,
                       keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """`median` ignoring NaNs. Example: `jnp.nanmedian(jnp.array([1., jnp.nan, 3.]))` is `2.`."""
    return _quantile(a, 0.5, axis, "midpoint", keepdims, "nanmedian", True, out)

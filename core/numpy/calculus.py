"""Finite differences, numerical derivatives and integrals, and 1-D interpolation: `diff`,
`ediff1d`, `gradient`, `trapezoid`, `interp`, as NumPy has them and JAX follows.

All are built from static slices, so they are linear in the sampled values (and differentiable in
the coordinates), and run under jit. As in JAX, `gradient` supports only `edge_order=1` (one-sided
first differences at the ends, NumPy's default), and `diff` of booleans is `not_equal`.
"""
import numpy as np

from .. import dtypes
from .. import lax
from ._util import asarray_operand, canonicalize_axis, check_arraylike, promote_dtypes_inexact
from . import ufuncs as _u
from . import reductions as _r
from . import manipulation as _m
from . import sorting as _s
from . import indexing as _ix

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "interp"]


def _slice(a, start, stop, axis):
    """`a[..., start:stop, ...]` along `axis` (NumPy-style negative/None bounds, static)."""
    start, stop, _ = slice(start, stop).indices(a.shape[axis])
    return lax.slice_in_dim(a, start, max(start, stop), axis=axis)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The `n`-th discrete difference `a[1:] - a[:-1]` along `axis`, optionally after
    concatenating `prepend` / `append` (scalars broadcast to one slice); booleans give `a[1:] != a[:-1]`.

    Example:
        >>> jnp.diff(jnp.array([1, 4, 9, 16]), n=2)
        Array([2, 2], dtype=int32)
    """
    check_arraylike("diff", a)
    a = asarray_operand(a)
    if n == 0:
        return a
    if n < 0:
        raise ValueError(f"diff: order must be non-negative but got n={n}")
    if a.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got a of shape {a.shape}")
    axis = canonicalize_axis(axis, a.ndim, "diff")
    parts = []
    for extra, what in ((prepend, "prepend"), (append, "append")):
        if extra is None:
            parts.append(None)
            continue
        check_arraylike("diff", extra)
        extra = asarray_operand(extra)
        if extra.ndim == 0:
            shape = a.shape[:axis] + (1,) + a.shape[axis + 1:]
            extra = _m.broadcast_to(extra, shape)
        parts.append(extra)
    pieces = [p for p in (parts[0], a, parts[1]) if p is not None]
    if len(pieces) > 1:
        a = _m.concatenate(pieces, axis=axis)
    op = _u.not_equal if dtypes.is_bool(a.dtype) else _u.subtract
    for _ in range(n):
        a = op(_slice(a, 1, None, axis), _slice(a, None, -1, axis))
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences between consecutive elements of the flattened `ary`, with `to_begin` and
    `to_end` (flattened) attached at the ends.

    Example:
        >>> jnp.ediff1d(jnp.array([[1, 2], [4, 7]]), to_begin=jnp.array([0]))
        Array([0, 1, 2, 3], dtype=int32)
    """
    check_arraylike("ediff1d", ary)
    ary = _m.ravel(asarray_operand(ary))
    out = _u.subtract(_slice(ary, 1, None, 0), _slice(ary, None, -1, 0))
    pieces = [out]
    for extra, at_end in ((to_begin, False), (to_end, True)):
        if extra is None:
            continue
        check_arraylike("ediff1d", extra)
        extra = _m.ravel(asarray_operand(extra)).astype(out.dtype)
        pieces = pieces + [extra] if at_end else [extra] + pieces
    return _m.concatenate(pieces, axis=0) if len(pieces) > 1 else out


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of the sampled `f` by second-order central differences inside and first
    differences at the ends, along each of `axis` (all by default); `varargs` give the spacing:
    one scalar for all axes, or one scalar or 1-D coordinate array per axis. Returns one array per
    axis (a list, as JAX; NumPy gives a tuple), or one array when there is a single axis.

    Example:
        >>> jnp.gradient(jnp.array([1.0, 2.0, 4.0, 7.0]))
        Array([1. , 1.5, 2.5, 3. ], dtype=float32)
    """
    check_arraylike("gradient", f)
    if edge_order is not None and edge_order != 1:
        raise NotImplementedError(f"gradient: edge_order={edge_order} is not supported (JAX supports only the "
                                  "default, first-order differences at the ends); leave edge_order unset")
    f = asarray_operand(f)
    (f,) = promote_dtypes_inexact(f)
    if axis is None:
        axes = tuple(range(f.ndim))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(ax, f.ndim, "gradient") for ax in axis)
    else:
        axes = (canonicalize_axis(axis, f.ndim, "gradient"),)
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"gradient: expected 0, 1 or {len(axes)} spacing arguments (one per axis), "
                        f"got {len(varargs)}")
    out = []
    for ax, h in zip(axes, spacings):
        if f.shape[ax] < 2:
            raise ValueError(f"gradient: f has shape {f.shape}; each differentiated axis needs at least 2 "
                             f"samples (edge_order + 1), axis {ax} has {f.shape[ax]}")
        out.append(_gradient_along(f, h, ax))
    return out[0] if len(axes) == 1 else out


def _gradient_along(f, h, axis):
    h = asarray_operand(h)
    first = _slice(f, 1, 2, axis), _slice(f, 0, 1, axis)
    last = _slice(f, -1, None, axis), _slice(f, -2, -1, axis)
    if h.ndim == 0:
        h = h.astype(f.dtype)
        inner = _u.divide(_u.subtract(_slice(f, 2, None, axis), _slice(f, None, -2, axis)), _u.multiply(2, h))
        begin = _u.divide(_u.subtract(*first), h)
        end = _u.divide(_u.subtract(*last), h)
    else:
        if h.ndim != 1 or h.shape[0] != f.shape[axis]:
            raise ValueError(f"gradient: a coordinate array must be 1-D with one entry per sample "
                             f"({f.shape[axis]} along axis {axis}), got shape {h.shape}")
        (h,) = promote_dtypes_inexact(h)
        d = diff(h).astype(f.dtype)
        shape = [1] * f.ndim
        shape[axis] = -1
        d = lax.reshape(d, tuple(f.shape[axis] - 1 if s == -1 else 1 for s in shape))
        dx1, dx2 = _slice(d, None, -1, axis), _slice(d, 1, None, axis)
        a = _u.divide(_u.negative(dx2), _u.multiply(dx1, _u.add(dx1, dx2)))
        b = _u.divide(_u.subtract(dx2, dx1), _u.multiply(dx1, dx2))
        c = _u.divide(dx1, _u.multiply(dx2, _u.add(dx1, dx2)))
        inner = _u.add(_u.add(_u.multiply(a, _slice(f, None, -2, axis)), _u.multiply(b, _slice(f, 1, -1, axis))),
                       _u.multiply(c, _slice(f, 2, None, axis)))
        begin = _u.divide(_u.subtract(*first), _slice(d, 0, 1, axis))
        end = _u.divide(_u.subtract(*last), _slice(d, -1, None, axis))
    return _m.concatenate([begin, inner, end], axis=axis)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of the sampled `y` along `axis` by the trapezoidal rule, at sample points `x`
    (1-D, or broadcastable with `y`) or with uniform spacing `dx`.

    Example:
        >>> jnp.trapezoid(jnp.array([1.0, 2.0, 3.0]), x=jnp.array([0.0, 1.0, 3.0]))
        Array(6.5, dtype=float32)
    """
    check_arraylike("trapezoid", y)
    y = asarray_operand(y)
    axis = canonicalize_axis(axis, y.ndim, "trapezoid")
    if x is None:
        (y,) = promote_dtypes_inexact(y)
        d = dx
    else:
        check_arraylike("trapezoid", x)
        y, x = promote_dtypes_inexact(y, asarray_operand(x))
        if x.ndim == 1:
            d = diff(x)
            d = lax.broadcast_in_dim(d, tuple(d.shape[0] if i == axis else 1 for i in range(y.ndim)), (axis,))
        else:
            d = diff(x, axis=axis)
    mid = _u.multiply(_u.add(_slice(y, 1, None, axis), _slice(y, None, -1, axis)), 0.5)
    return _r.sum(_u.multiply(d, mid), axis=axis)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (`xp`, `fp`) (`xp` increasing) at `x`; below
    `xp[0]` gives `left` (default `fp[0]`), above `xp[-1]` gives `right` (default `fp[-1]`); with
    `period`, `xp` is treated as periodic. Differentiable in `x` and `fp` (and `xp`).

    Example:
        >>> jnp.interp(jnp.array([0.5, 2.5, 9.0]), jnp.array([0.0, 1.0, 3.0]), jnp.array([0.0, 2.0, 3.0]))
        Array([1.  , 2.75, 3.  ], dtype=float32)
    """
    check_arraylike("interp", x, xp, fp)
    x, xp = promote_dtypes_inexact(asarray_operand(x), asarray_operand(xp))
    fp = asarray_operand(fp)
    (fp,) = promote_dtypes_inexact(fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError(f"interp: xp and fp must be 1-D, got shapes {xp.shape} and {fp.shape}")
    if xp.shape[0] != fp.shape[0] or xp.shape[0] == 0:
        raise ValueError(f"interp: xp and fp must have the same non-zero length, got {xp.shape[0]} and "
                         f"{fp.shape[0]}")
    if period is not None:
        if left is not None or right is not None:
            raise ValueError("interp: left and right have no meaning with period; pass only one of them")
        period = _u.abs(asarray_operand(period))
        x = _u.remainder(x, period)
        xp = _u.remainder(xp, period)
        order = _s.argsort(xp)
        xp, fp = _ix.take(xp, order), _ix.take(fp, order)
        xp = _m.concatenate([_u.subtract(xp[-1:], period), xp, _u.add(xp[:1], period)])
        fp = _m.concatenate([fp[-1:], fp, fp[:1]])
    n = xp.shape[0]
    if n == 1:
        out = _m.broadcast_to(fp[0], x.shape)
    else:
        i = _u.clip(_s.searchsorted(xp, x, side="right"), 1, n - 1)
        x0, x1 = _ix.take(xp, i - 1), _ix.take(xp, i)
        f0, f1 = _ix.take(fp, i - 1), _ix.take(fp, i)
        dx = _u.subtract(x1, x0)
        flat = _u.less_equal(_u.abs(dx), 0)  # repeated xp: take the right value, as NumPy does
        slope = _u.divide(_u.subtract(f1, f0), _ix.where(flat, 1.0, dx))
        out = _ix.where(flat, f1, _u.add(f0, _u.multiply(_u.subtract(x, x0), slope)))
    if period is None:
        lo = fp[0] if left is None else left
        hi = fp[-1] if right is None else right
        out = _ix.where(_u.less(x, xp[0]), lo, out)
        out = _ix.where(_u.greater(x, xp[-1]), hi, out)
    return out

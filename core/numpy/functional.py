"""Applying functions over axes and pieces of an array: `apply_along_axis`, `apply_over_axes`,
`piecewise`, and the predicates `isscalar` and `iterable`.

`apply_along_axis` is `vmap` over every axis but one, so `func1d` is traced once (not called
per slice as in NumPy) and must be written with `core.numpy`. `piecewise` evaluates each function
on the whole of `x` and selects per element (later conditions win, as in NumPy): it runs under
jit, and its derivative is that of the selected piece. As in JAX, `isscalar` is also True for 0-d
arrays.
"""
import numpy as np

from ..array import Array
from ..trace import Tracer
from ._util import asarray_operand, canonicalize_axis, check_arraylike
from . import manipulation as _m
from . import indexing as _ix
from . import creation as _c

__all__ = ["apply_along_axis", "apply_over_axes", "piecewise", "isscalar", "iterable"]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """`func1d(a, *args, **kwargs)` applied to every 1-D slice of `arr` along `axis`; the slices'
    results (of any shape) take that axis's place in the output.

    Example:
        >>> jnp.apply_along_axis(lambda v: v[0] + v[-1], 1, jnp.arange(6.0).reshape(2, 3))
        Array([2., 8.], dtype=float32)
    """
    from ..batching_api import vmap  # imported here: core.numpy loads before the transformations
    check_arraylike("apply_along_axis", arr)
    arr = asarray_operand(arr)
    axis = canonicalize_axis(axis, arr.ndim, "apply_along_axis")

    def func(a):
        return func1d(a, *args, **kwargs)
    for i in range(1, arr.ndim - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func, a, axes):
    """`func(a, axis)` applied over each of `axes` in turn, keeping the rank: a result with one
    axis fewer gets it back with length 1 (as `sum(..., keepdims=True)` would).

    Example:
        >>> jnp.apply_over_axes(jnp.sum, jnp.arange(6.0).reshape(2, 3), [0, 1])
        Array([[15.]], dtype=float32)
    """
    check_arraylike("apply_over_axes", a)
    a = asarray_operand(a)
    for axis in ([axes] if isinstance(axes, int) else axes):
        b = asarray_operand(func(a, axis))
        ax = canonicalize_axis(axis, a.ndim, "apply_over_axes")
        if b.ndim == a.ndim - 1:
            b = _m.expand_dims(b, ax)
        elif b.ndim != a.ndim:
            raise ValueError(f"apply_over_axes: function is not returning an array of the correct shape: "
                             f"input {a.shape}, axis {axis}, output {b.shape}")
        a = b
    return a


def piecewise(x, condlist, funclist, *args, **kw):
    """`funclist[i](x, *args, **kw)` where `condlist[i]` is True (a later condition overriding an
    earlier one), the extra last entry of `funclist` (if any) where none is, else 0; a non-callable
    entry is a constant. The result has `x`'s shape and dtype.

    Example:
        >>> x = jnp.array([-2.0, 0.5, 3.0])
        >>> jnp.piecewise(x, [x < 0, x > 1], [lambda v: -v, 10.0, lambda v: v * 2])
        Array([ 2.,  1., 10.], dtype=float32)
    """
    check_arraylike("piecewise", x)
    x = asarray_operand(x)
    if isinstance(condlist, (Array, Tracer, np.ndarray)) or not isinstance(condlist, (list, tuple)):
        condlist = asarray_operand(condlist)
        condlist = [condlist] if condlist.ndim == x.ndim else [condlist[i] for i in range(condlist.shape[0])]
    n = len(condlist)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"piecewise: with {n} condition(s) funclist must have {n} or {n + 1} entries, got "
                         f"{len(funclist)}")

    def evaluate(f):
        value = f(x, *args, **kw) if callable(f) else f
        return _m.broadcast_to(asarray_operand(value).astype(x.dtype), x.shape)
    out = evaluate(funclist[n]) if len(funclist) == n + 1 else _c.zeros_like(x)
    for cond, f in zip(condlist, funclist):
        cond = _m.broadcast_to(asarray_operand(cond).astype(bool), x.shape)
        out = _ix.where(cond, evaluate(f), out)
    return out


def isscalar(element):
    """True for Python and NumPy scalars and (as in JAX, unlike NumPy) for 0-d arrays.
    Example: `jnp.isscalar(3.0), jnp.isscalar(jnp.ones(2))` is `(True, False)`."""
    if hasattr(element, "__jax_array__"):
        element = element.__jax_array__()
    if isinstance(element, (bool, int, float, complex)) or np.isscalar(element):
        return True
    return isinstance(element, (np.ndarray, Array, Tracer)) and np.ndim(element) == 0


def iterable(y):
    """True when `iter(y)` works (arrays of rank >= 1, lists, ...). Example: `jnp.iterable(jnp.ones(2))` is True."""
    try:
        iter(y)
    except TypeError:
        return False
    return True

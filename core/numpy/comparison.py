"""Whole-array and tolerance comparisons: `isclose`, `allclose`, `array_equal`, `array_equiv`.

As in JAX, integer (and bool) inputs compare exactly in `isclose` (the tolerances apply only to
inexact dtypes; NumPy would add `atol` to integer differences too), and the tolerances are cast to
the inputs' dtype, so float32 inputs compare in float32. `array_equal` and `array_equiv` return a
bool array (False, not an error, for shapes that do not match), so they work under jit.
"""
import numpy as np

from .. import dtypes
from .. import lax
from ..array import to_array
from ._util import asarray_operand, broadcast_shapes, check_arraylike, promote_args
from . import ufuncs as _ufuncs
from . import reductions as _reductions

__all__ = ["isclose", "allclose", "array_equal", "array_equiv"]


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise `|a - b| <= atol + rtol * |b|` (not symmetric, as NumPy's); infinities are close
    only to the same infinity, NaN only to NaN when `equal_nan`. Integers compare exactly (JAX).

    Example:
        >>> jnp.isclose(jnp.array([1.0, 1.1, jnp.inf]), jnp.array([1.0 + 1e-9, 1.0, jnp.inf]))
        Array([ True, False,  True], dtype=bool)
    """
    check_arraylike("isclose", a, b)
    a, b = promote_args("isclose", a, b)
    dtype = a.dtype
    if not dtypes.is_inexact(dtype):
        return lax.eq(a, b)
    real = _real_dtype(dtype)
    rtol = lax.convert_element_type(asarray_operand(rtol), real)
    atol = lax.convert_element_type(asarray_operand(atol), real)
    out = _ufuncs.less_equal(_ufuncs.abs(_ufuncs.subtract(a, b)),
                             _ufuncs.add(atol, _ufuncs.multiply(rtol, _ufuncs.abs(b))))
    a_inf, b_inf = _ufuncs.isinf(a), _ufuncs.isinf(b)
    # where either side is infinite the formula is meaningless (inf <= inf): only equal infinities match
    out = _ufuncs.logical_and(out, _ufuncs.logical_not(_ufuncs.logical_or(a_inf, b_inf)))
    same_inf = _ufuncs.logical_and(_ufuncs.logical_and(a_inf, b_inf), _ufuncs.equal(a, b))
    out = _ufuncs.logical_or(out, same_inf)
    if equal_nan:
        out = _ufuncs.logical_or(out, _ufuncs.logical_and(_ufuncs.isnan(a), _ufuncs.isnan(b)))
    return out


def _real_dtype(dtype):
    if dtypes.is_complex(dtype):
        return np.dtype(np.float64) if np.dtype(dtype) == np.complex128 else np.dtype(np.float32)
    return np.dtype(dtype)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True (a bool scalar array) when every element of `a` is close to `b` by `isclose`.

    Example:
        >>> jnp.allclose(jnp.array([1.0, 2.0]), jnp.array([1.0, 2.0 + 1e-7]))
        Array(True, dtype=bool)
    """
    check_arraylike("allclose", a, b)
    return _reductions.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """True (a bool scalar array) when `a1` and `a2` have the same shape and elements; False for
    different shapes. With `equal_nan`, NaNs in the same places count as equal.

    Example:
        >>> jnp.array_equal(jnp.array([1, 2]), jnp.array([1, 2])), jnp.array_equal(jnp.ones(2), jnp.ones(3))
        (Array(True, dtype=bool), Array(False, dtype=bool))
    """
    try:
        a1, a2 = asarray_operand(a1), asarray_operand(a2)
    except TypeError:
        return to_array(np.bool_(False))
    if a1.shape != a2.shape:
        return to_array(np.bool_(False))
    return _all_equal(a1, a2, equal_nan)


def _all_equal(a1, a2, equal_nan):
    eq = _ufuncs.equal(a1, a2)
    if equal_nan:
        eq = _ufuncs.logical_or(eq, _ufuncs.logical_and(_ufuncs.isnan(a1), _ufuncs.isnan(a2)))
    return _reductions.all(eq)


def array_equiv(a1, a2):
    """True (a bool scalar array) when `a1` and `a2` broadcast to one shape and are equal there;
    False when their shapes do not broadcast.

    Example:
        >>> jnp.array_equiv(jnp.array([1, 2]), jnp.array([[1, 2], [1, 2]]))
        Array(True, dtype=bool)
    """
    try:
        a1, a2 = asarray_operand(a1), asarray_operand(a2)
    except TypeError:
        return to_array(np.bool_(False))
    try:
        broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return to_array(np.bool_(False))
    return _all_equal(a1, a2, False)

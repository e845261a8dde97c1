"""The Python array API standard's names for functions NumPy spells otherwise (NumPy 2 and
`jax.numpy` have both): each is the very same function object as its NumPy-named twin.

Example:
    >>> jnp.acos is jnp.arccos, jnp.pow(jnp.array([2.0]), 3)
    (True, Array([8.], dtype=float32))
"""
from typing import NamedTuple

from ._util import asarray_operand, check_arraylike
from . import ufuncs as _ufuncs
from . import sorting as _sorting
from . import products as _products
from ..array import Array

__all__ = ["pow", "acos", "asin", "atan", "atan2", "acosh", "asinh", "atanh", "bitwise_left_shift",
           "bitwise_right_shift", "bitwise_invert", "unique_values", "unique_counts", "unique_inverse",
           "unique_all", "matvec", "vecmat"]

pow = _ufuncs.power  # noqa: A001 (the array API's name)
acos = _ufuncs.arccos
asin = _ufuncs.arcsin
atan = _ufuncs.arctan
atan2 = _ufuncs.arctan2
acosh = _ufuncs.arccosh
asinh = _ufuncs.arcsinh
atanh = _ufuncs.arctanh
bitwise_left_shift = _ufuncs.left_shift
bitwise_right_shift = _ufuncs.right_shift
bitwise_invert = _ufuncs.invert


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted unique values of `x` (flattened): `unique(x)`; a static `size=` (padded with
    `fill_value`) lets it run under jit. Example: `jnp.unique_values(jnp.array([3, 1, 3]))` is `[1, 3]`.
    """
    return _sorting.unique(x, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """The sorted unique values of `x` and how often each occurs (a named tuple `values, counts`).

    Example:
        >>> jnp.unique_counts(jnp.array([3, 1, 3])).counts
        Array([1, 2], dtype=int32)
    """
    values, counts = _sorting.unique(x, return_counts=True, size=size, fill_value=fill_value)
    return UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """The sorted unique values of `x` and, for each element of `x` (in `x`'s shape), the index of
    its value among them (a named tuple `values, inverse_indices`). Example:
    `jnp.unique_inverse(jnp.array([3, 1, 3])).inverse_indices` is `[1, 0, 1]`.
    """
    values, inverse = _sorting.unique(x, return_inverse=True, size=size, fill_value=fill_value)
    return UniqueInverseResult(values, inverse)


def unique_all(x, /, *, size=None, fill_value=None):
    """The sorted unique values of `x` with each one's first index, the inverse indices (in `x`'s
    shape) and the counts, as a named tuple `values, indices, inverse_indices, counts`.
    Example: `jnp.unique_all(jnp.array([3, 1, 3])).indices` is `[1, 0]`.
    """
    values, index, inverse, counts = _sorting.unique(x, return_index=True, return_inverse=True, return_counts=True,
                                                     size=size, fill_value=fill_value)
    return UniqueAllResult(values, index, inverse, counts)


def matvec(x1, x2, /):
    """The matrix-vector product over the last axes, batched by broadcasting: (..., m, n) with
    (..., n) gives (..., m), as NumPy 2's `matvec`.

    Example:
        >>> jnp.matvec(jnp.eye(2) * 2, jnp.array([1.0, 3.0]))
        Array([2., 6.], dtype=float32)
    """
    check_arraylike("matvec", x1, x2)
    x1, x2 = asarray_operand(x1), asarray_operand(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec: x1 must be at least 2-D and x2 at least 1-D, got shapes {x1.shape} and {x2.shape}")
    return _products.matmul(x1, x2[..., None])[..., 0]


def vecmat(x1, x2, /):
    """The vector-matrix product `conj(x1) @ x2` over the last axes, batched by broadcasting:
    (..., n) with (..., n, m) gives (..., m), as NumPy 2's `vecmat`.

    Example:
        >>> jnp.vecmat(jnp.array([1.0, 3.0]), jnp.eye(2) * 2)
        Array([2., 6.], dtype=float32)
    """
    check_arraylike("vecmat", x1, x2)
    x1, x2 = asarray_operand(x1), asarray_operand(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat: x1 must be at least 1-D and x2 at least 2-D, got shapes {x1.shape} and {x2.shape}")
    return _products.matmul(_ufuncs.conjugate(x1)[..., None, :], x2)[..., 0, :]

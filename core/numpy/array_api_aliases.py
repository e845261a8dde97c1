"""The Python array API standard's names for functions NumPy spells otherwise (NumPy 2 and
`jax.numpy` have both): each is the very same function object as its NumPy-named twin.

Example:
    >>> jnp.acos is jnp.arccos, jnp.pow(jnp.array([2.0]), 3)
    (True, Array([8.], dtype=float32))
"""
from . import ufuncs as _ufuncs

__all__ = ["pow", "acos", "asin", "atan", "atan2", "acosh", "asinh", "atanh", "bitwise_left_shift",
           "bitwise_right_shift", "bitwise_invert"]

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

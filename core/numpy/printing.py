"""Printing: NumPy's own print options and array formatters, as jax.numpy re-exports them.

purenn arrays print through NumPy (their repr fetches the host value), so NumPy's print options are
the ones that apply; these names are NumPy's objects, not wrappers, so `jnp.printoptions(...)` and
`np.printoptions(...)` set the same state.

>>> import numpy as np
>>> import core.numpy as jnp
>>> with jnp.printoptions(precision=2):
...     print(jnp.array_str(np.array([1 / 3])))
[0.33]
"""
import numpy as np

__all__ = ["array_repr", "array_str", "printoptions", "get_printoptions", "set_printoptions",
           "ComplexWarning"]

array_repr = np.array_repr
array_str = np.array_str
printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
# Warned when a complex value is cast to a real dtype (as `astype` does); NumPy's class, as in jax.numpy.
ComplexWarning = np.exceptions.ComplexWarning

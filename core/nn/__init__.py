"""`core.nn`: JAX's `jax.nn`, so that `jax.nn.relu` ports as `core.nn.relu` by changing the import.

The activation functions, the softmax family, `one_hot`, `logsumexp`, `standardize` and the
parameter `initializers` live here, in core, because they are pure array functions built from
`core.numpy` and `core.lax` only; the `nn` package (stax-style layers, a layer above core)
re-exports them as `nn.relu`, `nn.functions`, `nn.initializers`. One implementation, and no import
cycle: core never imports the `nn` package.

Example:
    >>> core.nn.relu(jnp.array([-1.0, 2.0]))
    Array([0., 2.], dtype=float32)
    >>> core.nn.initializers.zeros(None, (2,))
    Array([0., 0.], dtype=float32)
"""
from . import functions  # noqa: F401
from . import initializers  # noqa: F401
from .functions import *  # noqa: F401,F403
from .functions import __all__ as _functions_all

__all__ = list(_functions_all) + ["initializers"]

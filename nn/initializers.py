"""Parameter initializers, as `jax.nn.initializers`: `core.nn.initializers` re-exported (the one
implementation lives in core; see `core/nn/__init__.py` for why).

Example:
    >>> from nn import initializers
    >>> initializers.ones(None, (2,))
    Array([1., 1.], dtype=float32)
"""
from core.nn.initializers import *  # noqa: F401,F403
from core.nn.initializers import __all__  # noqa: F401

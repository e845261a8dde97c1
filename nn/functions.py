"""Activation functions and array utilities for networks, as `jax.nn`: `core.nn.functions`
re-exported (the one implementation lives in core; see `core/nn/__init__.py` for why).

Example:
    >>> from nn import functions as F
    >>> F.relu(jnp.array([-1.0, 2.0]))
    Array([0., 2.], dtype=float32)
"""
from core.nn.functions import *  # noqa: F401,F403
from core.nn.functions import __all__  # noqa: F401

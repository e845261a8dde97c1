"""The helper names `jax.example_libraries.stax` exports besides its layers, so a stax program
that writes `stax.glorot()`, `stax.randn()`, `stax.zeros` or `stax.logsoftmax` ports by changing
only its imports. They are the same objects as the initializers and functions they alias (stax
keeps them for backwards compatibility); stax's layers, `elementwise` and `shape_dependent` live in
nn/layers.py and nn/combinators.py.

- `glorot`, `glorot_normal`: initializer factories, `glorot(in_axis=-2, out_axis=-1)(key, shape)`
  (Glorot normal, truncated, variance 2 / (fan_in + fan_out)).
- `randn`, `normal`: initializer factories, `randn(stddev=1e-2)(key, shape)`.
- `ones`, `zeros`: initializers themselves, `ones(key, shape, dtype=None)` (the key is ignored).
- `logsoftmax`: `log_softmax(x, axis=-1)`.

Example:
    >>> import nn
    >>> from core import random
    >>> nn.zeros(random.PRNGKey(0), (2,)), nn.glorot()(random.PRNGKey(0), (3, 4)).shape
    (Array([0., 0.], dtype=float32), (3, 4))
"""
from .functions import log_softmax
from .initializers import glorot_normal, normal, ones, zeros

__all__ = ["glorot", "glorot_normal", "randn", "normal", "ones", "zeros", "logsoftmax"]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

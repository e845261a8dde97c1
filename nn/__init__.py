"""`nn`: stax-style layers, each an `(init_fun, apply_fun)` pair, that can also carry state, plus
initializers, activation functions and losses (issue 7). The layer contract, and how state and
train/eval mode work, is written once at the top of `nn/base.py`."""
from .base import Layer, layer, is_stateful, init_state, apply_with_state  # noqa: F401
from . import initializers  # noqa: F401
from . import functions  # noqa: F401
from .functions import *  # noqa: F401,F403
from .losses import *  # noqa: F401,F403
from .layers import *  # noqa: F401,F403
from .combinators import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .recurrent import *  # noqa: F401,F403
from .summary import summary  # noqa: F401
from .stax_names import *  # noqa: F401,F403

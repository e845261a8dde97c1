"""`core.lax`: the primitives, one block each, with thin wrappers in JAX's `lax` calling convention
(arrays positional, static parameters as keywords)."""
from .elementwise import *  # noqa: F401,F403
from .structural import *  # noqa: F401,F403
from .slicing import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .dot import *  # noqa: F401,F403
from .convolution import *  # noqa: F401,F403
from .fft import *  # noqa: F401,F403
from .prng import *  # noqa: F401,F403
from .control_flow import *  # noqa: F401,F403
from . import linalg  # noqa: F401
from . import _base  # noqa: F401

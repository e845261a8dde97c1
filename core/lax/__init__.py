"""`core.lax`: the primitives, one block each, with thin wrappers in JAX's `lax` calling convention
(arrays positional, static parameters as keywords)."""
from .precision import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .structural import *  # noqa: F401,F403
from .slicing import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .reduce_general import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .dot import *  # noqa: F401,F403
from .ragged import *  # noqa: F401,F403
from .convolution import *  # noqa: F401,F403
from .fft import *  # noqa: F401,F403
from .prng import *  # noqa: F401,F403
from .rng_bits import *  # noqa: F401,F403
from .control_flow import *  # noqa: F401,F403
from .parallel import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .incomplete import *  # noqa: F401,F403
from .split_stack import *  # noqa: F401,F403
from .mulhi import *  # noqa: F401,F403
from .total_order import *  # noqa: F401,F403
from .compositions import *  # noqa: F401,F403
from .program_control import *  # noqa: F401,F403
from .tokens import *  # noqa: F401,F403
from .solves import *  # noqa: F401,F403
from . import linalg  # noqa: F401
from . import _base  # noqa: F401


def _register_ad_ops():
    from ..interpreters import ad
    from .elementwise import add_p
    from .structural import full
    ad.set_lax_ops(add=add_p.bind, zeros=lambda aval: full(aval.shape, 0, aval.dtype))


_register_ad_ops()

from .. import traceback_util as _traceback_util  # noqa: E402
_traceback_util.boundaries_for_namespace(globals())
_traceback_util.boundaries_for_namespace(linalg.__dict__)


def _export_primitives():
    """JAX's `lax` exports its primitives (`add_p`, `dot_general_p`, ...) for programs that inspect
    jaxprs or register rules; ours are exported under the same names (those of `lax.linalg` stay
    there, as in JAX)."""
    import sys
    from ..trace import Primitive
    namespace = globals()
    for name, module in list(sys.modules.items()):
        if not name.startswith(__name__ + ".") or module is None or name == __name__ + ".linalg":
            continue
        for attr, value in vars(module).items():
            if attr.endswith("_p") and not attr.startswith("_") and isinstance(value, Primitive):
                namespace.setdefault(attr, value)


_export_primitives()

"""Helpers shared by `core.scipy`'s modules: argument promotion and constants shaped like an array."""
from .. import lax
from ..api import jit
from ..lax._base import aval_of
from ..numpy._util import broadcast_to_common_shape, promote_args_inexact


def inexact_args(name, *args):
    """Promote to a common inexact dtype (ints and bools to the default float) and broadcast to
    one shape, as SciPy-style elementwise functions take their arguments."""
    return broadcast_to_common_shape(*promote_args_inexact(name, *args))


def full_like_aval(x, value):
    """A constant of `x`'s shape and dtype."""
    aval = aval_of(x)
    return lax.full(aval.shape, value, aval.dtype)


def library_jit(fun, **jit_options):
    """`jit(fun)` for a library function's internals, without jit's warning after many signatures:
    the signatures are the caller's shapes, and a warning pointing into core.scipy would not help.
    Used where eager evaluation would trace again on every call (loops, custom_jvp functions)."""
    jitted = jit(fun, **jit_options)
    jitted._warned = True
    return jitted

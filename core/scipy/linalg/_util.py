"""Helpers shared by the `core.scipy.linalg` modules: argument checks, dtype promotion, transposes."""
import numpy as np

from ... import dtypes
from ... import numpy as jnp
from ...numpy._util import broadcast_shapes, check_arraylike, promote_dtypes_inexact


def _inexact(name, *args):
    check_arraylike(name, *args)
    return promote_dtypes_inexact(*(jnp.asarray(a) for a in args))


def _short(x):
    return f"{np.dtype(x.dtype).name}{list(x.shape)}"


def _check_square(name, a, arg="a"):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: `{arg}` must be a square matrix or a stack of them, shape (..., n, n); "
                         f"got {_short(a)}.")


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def _mH(x):
    return jnp.conj(_mT(x)) if dtypes.is_complex(x.dtype) else _mT(x)


def _rhs_as_matrices(name, a, b, vector):
    """b as a stack of (n, k) matrices broadcast against `a`'s batch, and a and b's common batch.

    `vector` says whether b is a (stack of) vectors; each caller decides it as JAX's function of the
    same name does. Returns (a, b, vector) with a and b broadcast to the same batch dimensions."""
    n = a.shape[-1]
    if vector:
        b = b[..., None]
    if b.ndim < 2 or b.shape[-2] != n:
        want = f"(..., {n}) (vectors)" if vector else f"(..., {n}, k)"
        raise ValueError(f"{name}: `b` must have shape {want} to match `a` {_short(a)}; got {_short(b)}. "
                         f"A stack of vectors is written b[..., None] (then take [..., 0] of the result).")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return (jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:]), vector)


def _trans_flags(name, trans):
    """SciPy's `trans` (0/'N', 1/'T', 2/'C') as triangular_solve's (transpose_a, conjugate_a)."""
    flags = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
             2: (True, True), "C": (True, True)}
    if isinstance(trans, (bool, np.bool_)) or trans not in flags:
        raise ValueError(f"{name}: `trans` must be 0 ('N'), 1 ('T') or 2 ('C'); got {trans!r}.")
    return flags[trans]

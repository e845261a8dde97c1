"""Matrices built from vectors or sizes: block_diag, toeplitz and their kin."""
import numpy as np

from ... import numpy as jnp
from ...numpy._util import broadcast_shapes, check_arraylike, promote_dtypes
from ._util import _short


# ----- building matrices ---------------------------------------------------------------------------

def block_diag(*arrs):
    """A block-diagonal matrix of the given arrays (each at most 2-D; a scalar or vector is one
    row), as `scipy.linalg.block_diag`; dtypes promote.

    Example:
        >>> core.scipy.linalg.block_diag(jnp.array([[1, 2]]), 3)
        Array([[1, 2, 0],
               [0, 0, 3]], dtype=int32)
    """
    if not arrs:
        arrs = (jnp.zeros((1, 0)),)
    check_arraylike("block_diag", *arrs)
    arrs = [jnp.asarray(a) for a in arrs]
    for i, a in enumerate(arrs):
        if a.ndim > 2:
            raise ValueError(f"block_diag: arguments must have at most 2 dimensions; argument {i} is {_short(a)}.")
    arrs = promote_dtypes(*arrs)
    arrs = [jnp.atleast_2d(a) for a in arrs]
    cols = sum(a.shape[1] for a in arrs)
    rows, start = [], 0
    for a in arrs:
        c = a.shape[1]
        rows.append(jnp.pad(a, ((0, 0), (start, cols - start - c))))
        start += c
    return jnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column `c` and first row `r` (default conj(c)), as
    `scipy.linalg.toeplitz`; `r[0]` is ignored. As JAX (and SciPy 1.17), leading dimensions of
    c and r are a batch: (..., m) and (..., n) give (..., m, n).

    Example:
        >>> core.scipy.linalg.toeplitz(jnp.array([1, 2, 3]), jnp.array([1, 4]))
        Array([[1, 4],
               [2, 1],
               [3, 2]], dtype=int32)
    """
    if r is None:
        check_arraylike("toeplitz", c)
        c = jnp.atleast_1d(jnp.asarray(c))
        r = jnp.conj(c)
    else:
        check_arraylike("toeplitz", c, r)
    c, r = promote_dtypes(jnp.atleast_1d(jnp.asarray(c)), jnp.atleast_1d(jnp.asarray(r)))
    m, n = c.shape[-1], r.shape[-1]
    batch = broadcast_shapes(c.shape[:-1], r.shape[:-1])
    c = jnp.broadcast_to(c, batch + (m,))
    r = jnp.broadcast_to(r, batch + (n,))
    # element (i, j) is values[m - 1 - i + j] of the values c[::-1] followed by r[1:]
    values = jnp.concatenate([jnp.flip(c, axis=-1), r[..., 1:]], axis=-1)
    index = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return values[..., index]

"""QR, SVD, Hermitian eigendecomposition and Schur form."""
import functools

import numpy as np

from ... import dtypes
from ... import numpy as jnp
from ...lax import linalg as lax_linalg
from ...numpy import linalg as jnp_linalg
from ...numpy._util import broadcast_shapes
from ._util import _check_square, _inexact, _mH, _short


# ----- QR, SVD, eigh -------------------------------------------------------------------------------

def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """QR decomposition, as `scipy.linalg.qr`: `(q, r)` with `q @ r == a`; mode "full" gives q
    (m, m) and r (m, n), "economic" q (m, k) and r (k, n) with k = min(m, n), and "r" the
    1-tuple `(r,)` of the full r (as SciPy). Signs follow LAPACK (r's diagonal may be negative).

    Example:
        >>> q, r = core.scipy.linalg.qr(jnp.array([[3.0, 0.0], [4.0, 5.0]]))
        >>> jnp.abs(r)
        Array([[5., 4.],
               [0., 3.]], dtype=float32)
    """
    del overwrite_a, lwork, check_finite
    if pivoting:
        raise NotImplementedError("qr: pivoting=True (LAPACK geqp3) is not implemented; use pivoting=False.")
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"qr: `mode` must be 'full', 'r' or 'economic' ('raw' is not supported); got {mode!r}.")
    (a,) = _inexact("qr", a)
    if a.ndim < 2:
        raise ValueError(f"qr: `a` must have at least 2 dimensions (..., m, n); got {_short(a)}.")
    q, r = lax_linalg.qr(a, full_matrices=mode != "economic")
    return (r,) if mode == "r" else (q, r)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """Singular value decomposition, as `scipy.linalg.svd`: `(u, s, vh)` with
    `u * s[..., None, :] @ vh == a` (s real, descending), or just s for `compute_uv=False`.

    Example:
        >>> core.scipy.linalg.svd(jnp.array([[3.0, 0.0], [0.0, -4.0]]), compute_uv=False)
        Array([4., 3.], dtype=float32)
    """
    del overwrite_a, check_finite
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"svd: `lapack_driver` must be 'gesdd' or 'gesvd'; got {lapack_driver!r}.")
    out = jnp_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True,
         eigvals=None, type=1, check_finite=True, *, subset_by_index=None):
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian matrices, as
    `scipy.linalg.eigh`: `(w, v)` with `a @ v == v * w`, or w for `eigvals_only`. As in JAX the
    decomposition reads the Hermitian part (a + a^H) / 2 (and of b; `lower` is accepted). With `b`
    (Hermitian positive definite) it solves the generalized problem of `type` 1 (`a v = w b v`), 2
    (`a b v = w v`) or 3 (`b a v = w v`) through b's Cholesky factor, with `v^H b v == I` for
    types 1 and 2 (as SciPy). `subset_by_index=(lo, hi)` (or the older `eigvals`) keeps
    eigenpairs lo..hi inclusive.

    Example:
        >>> core.scipy.linalg.eigh(jnp.array([[2.0, 1.0], [1.0, 2.0]]), eigvals_only=True)
        Array([1., 3.], dtype=float32)
    """
    del overwrite_a, overwrite_b, turbo, check_finite
    if type not in (1, 2, 3):
        raise ValueError(f"eigh: `type` must be 1, 2 or 3; got {type!r}.")
    subset = subset_by_index if subset_by_index is not None else eigvals
    if b is None:
        (a,) = _inexact("eigh", a)
        _check_square("eigh", a)
        v, w = lax_linalg.eigh(a, lower=bool(lower))
    else:
        a, b = _inexact("eigh", a, b)
        _check_square("eigh", a)
        _check_square("eigh", b, "b")
        if a.shape[-1] != b.shape[-1]:
            raise ValueError(f"eigh: `a` {_short(a)} and `b` {_short(b)} must be matrices of the same size.")
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = jnp.broadcast_to(a, batch + a.shape[-2:])
        b = jnp.broadcast_to(b, batch + b.shape[-2:])
        w, v = _generalized_eigh(a, b, bool(lower), type)
    if subset is not None:
        lo, hi = (int(i) for i in subset)
        n = a.shape[-1]
        if not 0 <= lo <= hi < n:
            raise ValueError(f"eigh: `subset_by_index` must be (lo, hi) with 0 <= lo <= hi < {n}; got {subset!r}.")
        w, v = w[..., lo:hi + 1], v[..., lo:hi + 1]
    return w if eigvals_only else (w, v)


def _generalized_eigh(a, b, lower, type):
    """Reduce to a standard problem with b = L L^H: type 1 takes C = L^-1 a L^-H, v = L^-H y;
    types 2 and 3 take C = L^H a L, with v = L^-H y (type 2) or v = L y (type 3)."""
    del lower  # both matrices are read through their Hermitian parts
    factor = lax_linalg.cholesky(b)
    tri = functools.partial(lax_linalg.triangular_solve, factor, lower=True)
    if type == 1:
        c = tri(tri(a, left_side=True), left_side=False, transpose_a=True, conjugate_a=True)
    else:
        c = _mH(factor) @ a @ factor
    y, w = lax_linalg.eigh(c)
    if type == 3:
        v = factor @ y
    else:
        v = tri(y, left_side=True, transpose_a=True, conjugate_a=True)
    return w, v



def schur(a, output="real"):
    """The Schur decomposition `(t, z)` with `a == z @ t @ z^H`, as `scipy.linalg.schur`: z is
    unitary; t is upper triangular for `output="complex"` (a real input is cast to complex first)
    and quasi-upper triangular (2x2 blocks for complex eigenvalue pairs) for "real" and real input.
    LAPACK gees (CPU); not differentiable, as in JAX.

    Example:
        >>> t, z = core.scipy.linalg.schur(jnp.array([[1.0, 2.0], [0.0, 3.0]]))
        >>> t
        Array([[1., 2.],
               [0., 3.]], dtype=float32)
    """
    if output not in ("real", "complex"):
        raise ValueError(f"schur: `output` must be 'real' or 'complex'; got {output!r}.")
    (a,) = _inexact("schur", a)
    _check_square("schur", a)
    if output == "complex" and not dtypes.is_complex(a.dtype):
        a = a.astype(jnp.result_type(a.dtype, np.complex64))
    return tuple(lax_linalg.schur(a))


def _complex_schur(name, a):
    (a,) = _inexact(name, a)
    _check_square(name, a, "A")
    if not dtypes.is_complex(a.dtype):
        a = a.astype(jnp.result_type(a.dtype, np.complex64))
    t, z = lax_linalg.schur(a)
    return t, z

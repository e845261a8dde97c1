"""Decompositions: QR (and qr_multiply), SVD, Hermitian eigendecomposition, Schur, Hessenberg and polar forms."""
import functools

import numpy as np

from ... import dtypes
from ... import numpy as jnp
from ...lax import linalg as lax_linalg
from ...numpy import linalg as jnp_linalg
from ...numpy._util import broadcast_shapes
from .._util import library_jit
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


# ----- Schur, Hessenberg, polar ---------------------------------------------------------------------

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


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False, overwrite_c=False):
    """Q of the QR decomposition of `a` (..., m, n) applied to `c`, as `scipy.linalg.qr_multiply`
    with JAX's shapes: `(q @ c, r)` for `mode="left"` with c (..., k, p), k = min(m, n), and
    `(c @ q, r)` for "right" (default) with c (..., p, m), where q is the economic (m, k) factor
    and r (..., k, n); `conjugate=True` uses conj(q). A 1-D c is a column (left) or a row (right)
    and the product comes back 1-D. Batch dimensions broadcast. Differentiable through `qr`
    (JAX's geqrf/ormqr route is not); `pivoting=True` is not implemented (as `qr`).

    Example:
        >>> a = jnp.array([[1.0, 1.0], [1.0, 2.0], [1.0, 3.0]])
        >>> qtb, r = core.scipy.linalg.qr_multiply(a, jnp.array([1.0, 2.0, 3.0]))
        >>> core.scipy.linalg.solve_triangular(r, qtb).round(5) + 0.0   # least squares: y = 0 + 1 x
        Array([0., 1.], dtype=float32)
    """
    del overwrite_a, overwrite_c
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting=True (LAPACK geqp3) is not implemented; use pivoting=False.")
    if mode not in ("left", "right"):
        raise ValueError(f"qr_multiply: `mode` must be 'left' or 'right'; got {mode!r}.")
    a, c = _inexact("qr_multiply", a, c)
    if a.ndim < 2:
        raise ValueError(f"qr_multiply: `a` must have at least 2 dimensions (..., m, n); got {_short(a)}.")
    m, n = a.shape[-2:]
    k = min(m, n)
    vector = c.ndim == 1
    if vector:
        c = c[:, None] if mode == "left" else c[None, :]
    if c.ndim < 2:
        raise ValueError(f"qr_multiply: `c` must have at least 1 dimension; got {_short(c)}.")
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"qr_multiply: for mode='left' `c` must have min(m, n) = {k} rows to be multiplied by q "
                         f"(m, {k}) of `a` {_short(a)}; got {_short(c)}.")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"qr_multiply: for mode='right' `c` must have m = {m} columns to multiply q ({m}, {k}) "
                         f"of `a` {_short(a)}; got {_short(c)}.")
    q, r = lax_linalg.qr(a, full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    out = q @ c if mode == "left" else c @ q
    return (out.reshape(out.shape[:-2] + (-1,)) if vector else out), r


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The Hessenberg form `h` of square matrices, zero below the first subdiagonal, with
    `a == q @ h @ q^H` for unitary q, as `scipy.linalg.hessenberg`; `(h, q)` for `calc_q=True`.
    LAPACK gehrd, then orgqr for q; not differentiable, as in JAX. Leading dimensions are a batch.

    Example:
        >>> h, q = core.scipy.linalg.hessenberg(jnp.array([[1.0, 2.0, 3.0], [0.0, 4.0, 5.0], [0.0, 6.0, 7.0]]),
        ...                                     calc_q=True)
        >>> jnp.allclose(q @ h @ q.T, jnp.array([[1.0, 2.0, 3.0], [0.0, 4.0, 5.0], [0.0, 6.0, 7.0]]), atol=1e-5)
        Array(True, dtype=bool)
    """
    del overwrite_a, check_finite
    (a,) = _inexact("hessenberg", a)
    _check_square("hessenberg", a)
    if a.shape[-1] == 0:
        return (a, a) if calc_q else a
    return _hessenberg_jit(a, bool(calc_q))


def _hessenberg(a, calc_q):
    n = a.shape[-1]
    packed, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(packed, -1)
    if not calc_q:
        return h
    # gehrd's reflectors act on rows/columns 1..n-1: q = 1 (+) householder_product of them
    q = lax_linalg.householder_product(packed[..., 1:, :-1], taus)
    q = jnp.pad(q, [(0, 0)] * (q.ndim - 2) + [(1, 0), (1, 0)])
    corner = np.zeros((n, n), a.dtype)
    corner[0, 0] = 1
    return h, q + corner


# one program instead of one per operation
_hessenberg_jit = library_jit(_hessenberg, static_argnums=(1,))


_POLAR_METHODS = ("qdwh", "svd")


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """The polar decomposition `(u, p)` of `a` (..., m, n), as `scipy.linalg.polar`: `a == u @ p`
    for `side="right"` (p (n, n)) or `a == p @ u` for "left" (p (m, m)), u with orthonormal
    columns (rows if n > m) and p Hermitian positive semi-definite. `method="qdwh"` (default) is
    `lax.linalg.qdwh` (stopping by `eps` and `max_iterations`; forward-mode derivatives only, a
    while loop), "svd" goes through the SVD (differentiable both ways). Unlike JAX's qdwh route,
    every shape works with either side (the other side's p is u p u^H, a wide `a` goes through
    a^H). Leading dimensions are a batch.

    Example:
        >>> u, p = core.scipy.linalg.polar(jnp.array([[0.0, -2.0], [3.0, 0.0]]))
        >>> u.round(4) + 0.0, p.round(4) + 0.0   # (+ 0.0 turns -0. into 0.)
        (Array([[ 0., -1.],
               [ 1.,  0.]], dtype=float32), Array([[3., 0.],
               [0., 2.]], dtype=float32))
    """
    if side not in ("right", "left"):
        raise ValueError(f"polar: `side` must be 'right' or 'left'; got {side!r}.")
    if method not in _POLAR_METHODS:
        raise ValueError(f"polar: `method` must be one of {_POLAR_METHODS}; got {method!r}.")
    (a,) = _inexact("polar", a)
    if a.ndim < 2:
        raise ValueError(f"polar: `a` must have at least 2 dimensions (..., m, n); got {_short(a)}.")
    if method == "svd":
        u_s, s, vh = lax_linalg.svd(a, full_matrices=False)
        s = s.astype(a.dtype)
        u = u_s @ vh
        p = (_mH(vh) * s[..., None, :]) @ vh if side == "right" else (u_s * s[..., None, :]) @ _mH(u_s)
        return u, p
    m, n = a.shape[-2:]
    wide = m < n
    # qdwh takes one tall matrix: x = u_x h_x with x = a, or x = a^H (then a = h_x u_x^H)
    x = _mH(a) if wide else a
    qdwh = functools.partial(_qdwh_factors, eps=eps, max_iterations=max_iterations)
    if x.ndim > 2:
        qdwh = jnp.vectorize(qdwh, signature="(m,n)->(m,n),(n,n)")
    u, h = qdwh(x)
    if wide:
        u = _mH(u)
    if (side == "left") == wide:
        return u, h
    # the factor on the other side: a = u h = (u h u^H) u (tall, left), or a = h u = u (u^H h u) (wide, right)
    p = u @ h @ _mH(u) if not wide else _mH(u) @ h @ u
    return u, (p + _mH(p)) / 2


def _qdwh_factors(x, eps, max_iterations):
    u, h, _, _ = lax_linalg.qdwh(x, eps=eps, max_iterations=max_iterations)
    return u, h

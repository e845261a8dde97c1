"""`core.scipy.linalg`: `scipy.linalg`'s names over the `lax.linalg` primitives, as `jax.scipy.linalg`.

Signatures are SciPy's (and JAX's); the SciPy arguments that only concern memory or input checks
(`overwrite_a`, `overwrite_b`, `check_finite`, `lwork`, `debug`, `turbo`, `lapack_driver`) are
accepted and ignored. Where JAX and SciPy differ we do as JAX: no LinAlgError (a singular or
indefinite matrix gives inf/NaN), factors come back clean (`cho_factor` zeroes the unused
triangle), `sqrtm` is always complex, and leading dimensions are a batch. Derivatives come from the
primitives' rules (cholesky, lu, qr, eigh, svd, triangular_solve) and from `lax` control flow
(`expm`); `schur`, and so `sqrtm` and `logm`, have none (as in JAX); `solve(..., assume_a="pos")` has its own rule so that the gradient with respect to `a`
is that of the full matrix, as with JAX's `custom_linear_solve`.
"""
import functools

import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..custom_derivatives import custom_jvp
from ..lax import linalg as lax_linalg
from ..numpy import linalg as jnp_linalg
from ..numpy._util import broadcast_shapes, check_arraylike, promote_dtypes, promote_dtypes_inexact

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "lu", "lu_factor", "lu_solve", "qr",
           "svd", "eigh", "schur", "inv", "det", "solve", "expm", "sqrtm", "logm", "block_diag", "toeplitz"]


# ----- helpers ------------------------------------------------------------------------------------

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


# ----- Cholesky ------------------------------------------------------------------------------------

def _cholesky(a, lower):
    # JAX reads only the named triangle (symmetrize_input=False): the upper factor of `a` is the
    # conjugate transpose of the lower factor of a^H, whose lower triangle is a's upper one.
    factor = lax_linalg.cholesky(a if lower else _mH(a), symmetrize_input=False)
    return factor if lower else _mH(factor)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor of Hermitian positive-definite matrices, as `scipy.linalg.cholesky`:
    upper U with `U^H @ U == a` by default (only a's upper triangle is read), lower L with
    `L @ L^H == a` for `lower=True` (only the lower triangle is read). A matrix that is not
    positive definite gives NaN, not an error.

    Example:
        >>> core.scipy.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 5.0]]))
        Array([[2., 1.],
               [0., 2.]], dtype=float32)
    """
    del overwrite_a, check_finite
    (a,) = _inexact("cholesky", a)
    _check_square("cholesky", a)
    return _cholesky(a, bool(lower))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factorization `(c, lower)` for `cho_solve`, as `scipy.linalg.cho_factor`;
    unlike SciPy's, the triangle of `c` that is not the factor is zero (as in JAX).

    Example:
        >>> c, lower = core.scipy.linalg.cho_factor(jnp.array([[4.0, 2.0], [2.0, 5.0]]), lower=True)
        >>> c, lower
        (Array([[2., 0.],
               [1., 2.]], dtype=float32), True)
    """
    return cholesky(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite), bool(lower)


def _cho_solve(c, b, lower):
    """Two triangular solves with the factor `c` (matrices b of equal batch)."""
    b = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                    conjugate_a=not lower)
    return lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve `a @ x == b` given `cho_factor(a)`, as `scipy.linalg.cho_solve`. b is a vector (n,)
    or a stack of matrices (..., n, k); batch dimensions of the factor and b broadcast.

    Example:
        >>> a = jnp.array([[4.0, 2.0], [2.0, 5.0]])
        >>> core.scipy.linalg.cho_solve(core.scipy.linalg.cho_factor(a), a @ jnp.array([1.0, -1.0]))
        Array([ 1., -1.], dtype=float32)
    """
    del overwrite_b, check_finite
    try:
        c, lower = c_and_lower
    except (TypeError, ValueError):
        raise TypeError("cho_solve: the first argument must be the pair (c, lower) that cho_factor returns; "
                        f"got {type(c_and_lower).__name__}.") from None
    c, b = _inexact("cho_solve", c, b)
    _check_square("cho_solve", c, "c")
    c, bm, vector = _rhs_as_matrices("cho_solve", c, b, b.ndim == 1)
    x = _cho_solve(c, bm, bool(lower))
    return x[..., 0] if vector else x


# ----- triangular and general solves, inverse, determinant ---------------------------------------

def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):
    """Solve `op(a) @ x == b` for triangular `a`, as `scipy.linalg.solve_triangular`: op is the
    identity (`trans=0` or 'N'), the transpose (1, 'T') or the conjugate transpose (2, 'C'); only
    the `lower` (default upper) triangle is read, and `unit_diagonal` takes its diagonal as ones.
    b is (n,) or (..., n, k); batch dimensions broadcast.

    Example:
        >>> core.scipy.linalg.solve_triangular(jnp.array([[2.0, 1.0], [0.0, 4.0]]), jnp.array([4.0, 8.0]))
        Array([1., 2.], dtype=float32)
    """
    del overwrite_b, debug, check_finite
    transpose_a, conjugate_a = _trans_flags("solve_triangular", trans)
    a, b = _inexact("solve_triangular", a, b)
    _check_square("solve_triangular", a)
    a, bm, vector = _rhs_as_matrices("solve_triangular", a, b, b.ndim == 1)
    x = lax_linalg.triangular_solve(a, bm, left_side=True, lower=bool(lower), transpose_a=transpose_a,
                                    conjugate_a=conjugate_a, unit_diagonal=bool(unit_diagonal))
    return x[..., 0] if vector else x


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of square matrices, as `scipy.linalg.inv` (a singular matrix gives inf/NaN).

    Example:
        >>> core.scipy.linalg.inv(jnp.array([[2.0, 0.0], [0.0, 4.0]]))
        Array([[0.5 , 0.  ],
               [0.  , 0.25]], dtype=float32)
    """
    del overwrite_a, check_finite
    return jnp_linalg.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of square matrices, as `scipy.linalg.det` (via LU; its derivative is the
    cofactor matrix, finite also where `a` is singular).

    Example:
        >>> core.scipy.linalg.det(jnp.array([[2.0, 1.0], [1.0, 3.5]]))
        Array(6., dtype=float32)
    """
    del overwrite_a, check_finite
    return jnp_linalg.det(a)


_ASSUME_A = ("gen", "sym", "her", "pos")


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False, check_finite=True,
          assume_a="gen"):
    """Solve `a @ x == b`, as `scipy.linalg.solve`. `assume_a` "gen", "sym" and "her" use LU with
    partial pivoting (b is (n,) or (..., n, k), as `jnp.linalg.solve`); "pos" uses the Cholesky
    factor of the `lower` (default upper) triangle, and there b is a (stack of) vector(s) when it
    has one dimension fewer than `a`. A singular `a` gives inf/NaN.

    Example:
        >>> core.scipy.linalg.solve(jnp.array([[4.0, 2.0], [2.0, 5.0]]), jnp.array([2.0, -3.0]), assume_a="pos")
        Array([ 1., -1.], dtype=float32)
    """
    del overwrite_a, overwrite_b, debug, check_finite
    if assume_a not in _ASSUME_A:
        raise ValueError(f"solve: `assume_a` must be one of {_ASSUME_A}; got {assume_a!r}.")
    if assume_a != "pos":
        return jnp_linalg.solve(a, b)
    a, b = _inexact("solve", a, b)
    _check_square("solve", a)
    a, bm, vector = _rhs_as_matrices("solve", a, b, a.ndim == b.ndim + 1)
    x = _pos_solve(bool(lower), a, bm)
    return x[..., 0] if vector else x


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _pos_solve(lower, a, b):
    return _cho_solve(_cholesky(a, lower), b, lower)


@_pos_solve.defjvp
def _pos_solve_jvp(lower, primals, tangents):
    # x = a^-1 b for the full matrix a (as JAX's custom_linear_solve with a's matvec), so
    # dx = a^-1 (db - da x): linear in the tangents, and reusing the Cholesky factor.
    a, b = primals
    da, db = tangents
    factor = _cholesky(a, lower)
    x = _cho_solve(factor, b, lower)
    return x, _cho_solve(factor, db - da @ x, lower)


# ----- LU ------------------------------------------------------------------------------------------

def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """LU decomposition with partial pivoting, as `scipy.linalg.lu`: `(p, l, u)` with
    `a == p @ l @ u` (p a permutation matrix, l unit lower trapezoidal (m, k), u upper (k, n),
    k = min(m, n)), or `(p @ l, u)` for `permute_l=True`.

    Example:
        >>> p, l, u = core.scipy.linalg.lu(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> p
        Array([[0., 1.],
               [1., 0.]], dtype=float32)
    """
    del overwrite_a, check_finite
    (a,) = _inexact("lu", a)
    if a.ndim < 2:
        raise ValueError(f"lu: `a` must have at least 2 dimensions (..., m, n); got {_short(a)}.")
    packed, _, permutation = lax_linalg.lu(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    # row i of a[perm] is row perm[i] of a, so a = P (L U) with P[perm[i], i] = 1
    p = jnp.swapaxes((permutation[..., :, None] == jnp.arange(m, dtype=permutation.dtype)).astype(a.dtype), -1, -2)
    l = jnp.tril(packed, -1)[..., :, :k] + jnp.eye(m, k, dtype=a.dtype)
    u = jnp.triu(packed)[..., :k, :]
    if permute_l:
        return p @ l, u
    return p, l, u


def lu_factor(a, overwrite_a=False, check_finite=True):
    """The packed LU factorization `(lu, piv)` for `lu_solve`, as `scipy.linalg.lu_factor`: L
    (unit diagonal) below and U on and above the diagonal of `lu`; row i was swapped with row
    `piv[i]` (int32, 0-based).

    Example:
        >>> lu, piv = core.scipy.linalg.lu_factor(jnp.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> piv
        Array([1, 1], dtype=int32)
    """
    del overwrite_a, check_finite
    (a,) = _inexact("lu_factor", a)
    if a.ndim < 2:
        raise ValueError(f"lu_factor: `a` must have at least 2 dimensions (..., m, n); got {_short(a)}.")
    packed, pivots, _ = lax_linalg.lu(a)
    return packed, pivots


def _pivots_to_permutation(pivots, m):
    """The row order that LAPACK's sequence of swaps (row i <-> row pivots[i], in order) makes of
    range(m), for a stack of pivot vectors: each swap is two selects over the whole stack."""
    k = pivots.shape[-1]
    perm0 = jnp.broadcast_to(jnp.arange(m, dtype=np.int32), pivots.shape[:-1] + (m,))
    rows = jnp.arange(m, dtype=np.int32)

    def swap(i, perm):
        j = lax.dynamic_index_in_dim(pivots, i, axis=pivots.ndim - 1, keepdims=True)
        at_i = lax.dynamic_index_in_dim(perm, i, axis=perm.ndim - 1, keepdims=True)
        at_j = jnp.take_along_axis(perm, j, axis=-1)
        return jnp.where(rows == i, at_j, jnp.where(rows == j, at_i, perm))

    return lax.fori_loop(0, k, swap, perm0) if k else perm0


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve `op(a) @ x == b` from `lu_factor(a)`, as `scipy.linalg.lu_solve` (op by `trans`: 0 the
    identity, 1 the transpose, 2 the conjugate transpose). b is a (stack of) vector(s) when it has
    one dimension fewer than `lu`, else (..., n, k); batch dimensions broadcast.

    Example:
        >>> a = jnp.array([[1.0, 2.0], [3.0, 4.0]])
        >>> core.scipy.linalg.lu_solve(core.scipy.linalg.lu_factor(a), jnp.array([5.0, 11.0]))
        Array([1., 2.], dtype=float32)
    """
    del overwrite_b, check_finite
    try:
        packed, pivots = lu_and_piv
    except (TypeError, ValueError):
        raise TypeError("lu_solve: the first argument must be the pair (lu, piv) that lu_factor returns; "
                        f"got {type(lu_and_piv).__name__}.") from None
    transpose, conjugate = _trans_flags("lu_solve", trans)
    packed, b = _inexact("lu_solve", packed, b)
    _check_square("lu_solve", packed, "lu")
    pivots = jnp.asarray(pivots)
    if pivots.dtype.kind not in "iu" or pivots.shape[-1:] != packed.shape[-1:]:
        raise ValueError(f"lu_solve: `piv` must be integer pivots of shape (..., {packed.shape[-1]}) as lu_factor "
                         f"returns them; got {_short(pivots)}.")
    n = packed.shape[-1]
    perm = _pivots_to_permutation(pivots.astype(np.int32), n)
    packed, bm, vector = _rhs_as_matrices("lu_solve", packed, b, packed.ndim == b.ndim + 1)
    batch = bm.shape[:-2]
    perm = jnp.broadcast_to(perm, batch + (n,))
    solve_ = functools.partial(lax_linalg.triangular_solve, packed, left_side=True)
    if not transpose:
        # a[perm] = L U
        x = jnp.take_along_axis(bm, perm[..., None], axis=-2)
        x = solve_(x, lower=True, unit_diagonal=True)
        x = solve_(x, lower=False)
    else:
        # op(a)[:, perm] = op(U) op(L): solve with op(U) then op(L), then undo the permutation
        x = solve_(bm, lower=False, transpose_a=True, conjugate_a=conjugate)
        x = solve_(x, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=conjugate)
        inverse = jnp.argsort(perm, axis=-1).astype(np.int32)
        x = jnp.take_along_axis(x, inverse[..., None], axis=-2)
    return x[..., 0] if vector else x


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


# ----- matrix functions ----------------------------------------------------------------------------

# Higham (2005), "The scaling and squaring method for the matrix exponential revisited": the
# coefficients of the [m/m] Pade approximants of exp, and the largest 1-norm for which each is
# accurate to unit roundoff (theta_m; float64 from the paper, float32 the values JAX uses).
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0,
        3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
_THETA_64 = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
             (9, 2.097847961257068e0), (13, 5.371920351148152e0))
_THETA_32 = ((3, 4.258730016922831e-1), (5, 1.880152677804762e0), (7, 3.925724783138660e0))


def _pade(m, a):
    """The odd and even parts (u, v) of the degree-m Pade numerator at `a`: p = v + u, q = v - u."""
    c = _PADE[m]
    eye = jnp.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    if m == 13:
        a4 = a2 @ a2
        a6 = a4 @ a2
        u = a @ (a6 @ (c[13] * a6 + c[11] * a4 + c[9] * a2) + c[7] * a6 + c[5] * a4 + c[3] * a2 + c[1] * eye)
        v = a6 @ (c[12] * a6 + c[10] * a4 + c[8] * a2) + c[6] * a6 + c[4] * a4 + c[2] * a2 + c[0] * eye
        return u, v
    powers = [eye, a2]  # a^0, a^2, a^4, ... up to a^(m-1)
    while len(powers) <= m // 2:
        powers.append(powers[-1] @ a2)
    u = a @ sum(c[2 * i + 1] * p for i, p in enumerate(powers))
    v = sum(c[2 * i] * p for i, p in enumerate(powers))
    return u, v


def _expm_2d(a, upper_triangular, max_squarings):
    thetas = _THETA_64 if a.dtype in (np.float64, np.complex128) else _THETA_32
    norm = jnp.max(jnp.sum(jnp.abs(a), axis=0))  # the 1-norm
    # scale a by 2^-s so that its norm is at most the largest theta, then undo it by s squarings.
    # Higham's s = ceil(log2(norm / theta)); JAX's floor leaves norms up to twice theta, which
    # costs seven digits in float64 (expm(diag([20., 10.])) was off by 4e-8 relative).
    s = jnp.maximum(0.0, jnp.ceil(jnp.log2(norm / thetas[-1][1])))
    a = a / (2.0 ** s).astype(a.dtype)
    # the cheapest approximant accurate at this norm (the unscaled norm picks it, as JAX does)
    index = jnp.digitize(norm, jnp.array([t for _, t in thetas[:-1]], norm.dtype))
    branches = [functools.partial(_pade, m) for m, _ in thetas]
    u, v = lax.switch(index, branches, a)
    p, q = v + u, v - u
    r = solve_triangular(q, p) if upper_triangular else jnp_linalg.solve(q, p)

    def square(i, r):
        return lax.cond(i < s, lambda r: r @ r, lambda r: r, r)

    r = lax.fori_loop(0, max_squarings, square, r)
    # more squarings than allowed: the result would be inaccurate, so NaN (as JAX)
    return jnp.where(s > max_squarings, jnp.full_like(r, np.nan), r)


def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential, as `scipy.linalg.expm`, by Pade scaling and squaring (Higham 2005,
    as JAX, with Higham's number of squarings): the [m/m] approximant (m in 3..13, by the 1-norm)
    of A / 2^s, squared s times. A
    norm that would need more than `max_squarings` squarings gives NaN. `upper_triangular` solves
    the Pade system by back substitution. Leading dimensions are a batch; differentiable.

    Example:
        >>> core.scipy.linalg.expm(jnp.array([[0.0, 1.0], [0.0, 0.0]]))
        Array([[1., 1.],
               [0., 1.]], dtype=float32)
    """
    (A,) = _inexact("expm", A)
    _check_square("expm", A, "A")
    if A.shape[-1] == 0:
        return A
    fn = functools.partial(_expm_2d, upper_triangular=bool(upper_triangular), max_squarings=int(max_squarings))
    if A.ndim > 2:
        fn = jnp.vectorize(fn, signature="(n,n)->(n,n)")
    return fn(A)


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


def _sqrtm_triu(t):
    """The principal square root r of upper triangular (n, n) `t` (Bjorck and Hammarling 1983):
    r_ii = sqrt(t_ii), then superdiagonal by superdiagonal, r_ij = (t_ij - sum_{i<k<j} r_ik r_kj) /
    (r_ii + r_jj). The sum for a whole superdiagonal is one product of the strictly upper part
    computed so far with itself (entries beyond the current superdiagonal are still zero)."""
    n = t.shape[-1]
    root = jnp.sqrt(jnp.diagonal(t))
    rows, cols = np.indices((n, n))
    strictly_upper = jnp.asarray(cols > rows)
    denominator = root[:, None] + root[None, :]

    def superdiagonal(k, r):
        upper = jnp.where(strictly_upper, r, 0)
        rest = t - upper @ upper
        value = jnp.where(rest == 0, 0, rest / denominator)  # 0/0 (a repeated zero eigenvalue) is 0
        return jnp.where(jnp.asarray(cols - rows) == k, value, r)

    return lax.fori_loop(1, n, superdiagonal, jnp.diag(root))


def sqrtm(A, blocksize=1):
    """The principal matrix square root, as `scipy.linalg.sqrtm` by the complex Schur method (as
    JAX): `X @ X == A`. As in JAX the result is always complex. Leading dimensions are a batch.

    Example:
        >>> core.scipy.linalg.sqrtm(jnp.array([[4.0, 0.0], [0.0, 9.0]]))
        Array([[2.+0.j, 0.+0.j],
               [0.+0.j, 3.+0.j]], dtype=complex64)
    """
    if blocksize != 1:
        raise NotImplementedError(f"sqrtm: only blocksize=1 is implemented; got blocksize={blocksize!r}.")
    t, z = _complex_schur("sqrtm", A)
    if t.shape[-1] == 0:
        return t
    r = jnp.vectorize(_sqrtm_triu, signature="(n,n)->(n,n)")(t)
    return z @ r @ _mH(z)


# log(1 + x) = integral over s in [0, 1] of x / (1 + s x): an 8-point Gauss-Legendre rule is the
# [8/8] Pade approximant, accurate to far below float64 roundoff while |x| <= 1/4
_LOG_NODES, _LOG_WEIGHTS = np.polynomial.legendre.leggauss(8)
_LOG_NODES, _LOG_WEIGHTS = (_LOG_NODES + 1) / 2, _LOG_WEIGHTS / 2
_LOG_THETA = 0.25
_LOG_MAX_ROOTS = 64


def _logm_triu(t):
    """The principal logarithm of upper triangular `t` by inverse scaling and squaring: take square
    roots until the 1-norm of t - I is at most 1/4, evaluate log(I + x) by the quadrature above
    (each node one triangular solve), and scale by 2^roots."""
    n = t.shape[-1]
    eye = jnp.eye(n, dtype=t.dtype)

    def far(carry):
        roots, t = carry
        return (jnp.max(jnp.sum(jnp.abs(t - eye), axis=0)) > _LOG_THETA) & (roots < _LOG_MAX_ROOTS)

    roots, t = lax.while_loop(far, lambda c: (c[0] + 1, _sqrtm_triu(c[1])), (jnp.zeros((), np.int32), t))
    x = t - eye
    log = sum(float(w) * solve_triangular(eye + float(s) * x, x) for s, w in zip(_LOG_NODES, _LOG_WEIGHTS))
    log = log * (2.0 ** roots).astype(log.dtype)
    # a singular matrix has no logarithm
    return jnp.where(jnp.any(jnp.diagonal(t) == 0), jnp.full_like(log, np.nan), log)


def logm(A, disp=True):
    """The principal matrix logarithm, as `scipy.linalg.logm`, by the complex Schur form and
    inverse scaling and squaring: `expm(logm(A)) == A` for A with no eigenvalues on the closed
    negative real axis. Like `sqrtm` the result is always complex; a singular A gives NaN.
    `disp` is accepted (there is no error estimate to print). Leading dimensions are a batch.

    Example:
        >>> jnp.round(core.scipy.linalg.logm(jnp.array([[1.0, 1.0], [0.0, 1.0]])), 5)
        Array([[0.+0.j, 1.+0.j],
               [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    del disp
    t, z = _complex_schur("logm", A)
    if t.shape[-1] == 0:
        return t
    r = jnp.vectorize(_logm_triu, signature="(n,n)->(n,n)")(t)
    return z @ r @ _mH(z)


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

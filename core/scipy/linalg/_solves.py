"""Cholesky and LU factorizations and the solves, inverse and determinant built on them."""
import functools

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...custom_derivatives import custom_jvp
from ...lax import linalg as lax_linalg
from ...numpy import linalg as jnp_linalg
from ._util import _check_square, _inexact, _mH, _rhs_as_matrices, _short, _trans_flags


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

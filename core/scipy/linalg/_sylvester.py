"""`solve_sylvester`: A X + X B = C by Bartels-Stewart (complex Schur forms) or eigendecompositions.

The solver is the `solve` of `lax.custom_linear_solve` for the operator X -> A X + X B, so its
derivatives are implicit (one more Sylvester solve of dC - dA X - X dB, with the factorizations
already made) and reach A, B and C; JAX's goes through `schur` and has none. The factorizations
are of stop_gradient(A) and stop_gradient(B): the derivative never looks inside the solver.
"""
import functools

import numpy as np

from ... import dtypes
from ... import lax
from ... import numpy as jnp
from ...lax import linalg as lax_linalg
from .._util import library_jit
from ._util import _inexact, _mH, _short

_METHODS = ("schur", "eigen")


def _triangular_sylvester(r, s, f):
    """Y with R Y + Y S = F for upper triangular R (m, m) and S (n, n), column by column: column
    j solves (R + s_jj I) y_j = f_j - sum_{k<j} y_k s_kj, one triangular solve; the columns not
    yet found are zero, so the sum is Y @ S[:, j]."""
    m, n = f.shape
    eye = jnp.eye(m, dtype=r.dtype)

    def column(j, y):
        s_j = lax.dynamic_slice_in_dim(s, j, 1, axis=1)  # (n, 1)
        rhs = lax.dynamic_slice_in_dim(f, j, 1, axis=1) - y @ s_j
        s_jj = lax.dynamic_slice_in_dim(s_j, j, 1, axis=0)[0, 0]
        y_j = lax_linalg.triangular_solve(r + s_jj * eye, rhs, left_side=True, lower=False)
        return lax.dynamic_update_slice_in_dim(y, y_j, j, axis=1)

    return lax.fori_loop(0, n, column, jnp.zeros_like(f))


class _Factored:
    """A and B factored once (A = Qa Ta Qa^-1, B = Qb Tb Qb^-1) with the solve of A X + X B = C,
    the solve of the transposed equation A^T X + X B^T = C (what reverse mode needs), and the
    sums of eigenvalues that must not vanish."""

    def __init__(self, a, b, method):
        dtype = jnp.result_type(a.dtype, np.complex64)
        a, b = a.astype(dtype), b.astype(dtype)
        if method == "schur":
            ta, qa = lax_linalg.schur(a)
            tb, qb = lax_linalg.schur(b)
            self.eig_a, self.eig_b = jnp.diagonal(ta), jnp.diagonal(tb)
            self._a, self._b = (ta, qa, _mH(qa)), (tb, qb, _mH(qb))
        else:
            self.eig_a, qa = lax_linalg.eig(a, compute_left_eigenvectors=False)
            self.eig_b, qb = lax_linalg.eig(b, compute_left_eigenvectors=False)
            self._a, self._b = (self.eig_a, qa, jnp.linalg.inv(qa)), (self.eig_b, qb, jnp.linalg.inv(qb))
        self.method = method

    def _solve(self, fa, fb, c):
        (ta, qa, qa_inv), (tb, qb, qb_inv) = fa, fb
        f = qa_inv @ c.astype(qa.dtype) @ qb
        if self.method == "schur":
            y = _triangular_sylvester(ta, tb, f)
        else:
            y = f / (ta[:, None] + tb[None, :])
        x = qa @ y @ qb_inv
        return x if dtypes.is_complex(c.dtype) else x.real.astype(c.dtype)

    def solve(self, c):
        return self._solve(self._a, self._b, c)

    def solve_transposed(self, c):
        # A^T X + X B^T = C is, transposed, B Y + Y A = C^T with Y = X^T
        return _mT(self._solve(self._b, self._a, _mT(c)))


def _mT(x):
    return jnp.swapaxes(x, -1, -2)


def _solve_sylvester_2d(a, b, c, method, tol):
    factored = _Factored(lax.stop_gradient(a), lax.stop_gradient(b), method)
    x = lax.custom_linear_solve(lambda x: a @ x + x @ b, c, lambda _, rhs: factored.solve(rhs),
                                transpose_solve=lambda _, rhs: factored.solve_transposed(rhs))
    # A and -B sharing an eigenvalue: no unique solution (NaN, as JAX, instead of a huge X)
    singular = jnp.any(jnp.abs(factored.eig_a[:, None] + factored.eig_b[None, :]) < tol)
    return jnp.where(singular, jnp.full_like(x, np.nan), x)


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """X with `A @ X + X @ B == C`, as `scipy.linalg.solve_sylvester` (JAX's signature): A (..., m,
    m), B (..., n, n), C (..., m, n), batch dimensions broadcast. `method="schur"` is
    Bartels-Stewart on the complex Schur forms; "eigen" uses eigendecompositions (faster,
    inaccurate for nearly defective A or B). Where an eigenvalue of A and one of -B are closer
    than `tol` the result is NaN (as JAX). Real input gives a real X. Differentiable in A, B and C
    (implicitly, by `lax.custom_linear_solve`), which JAX's is not.

    Example:
        >>> a = jnp.array([[2.0, 0.0], [0.0, 3.0]])
        >>> core.scipy.linalg.solve_sylvester(a, jnp.eye(2), jnp.array([[3.0, 6.0], [4.0, 8.0]]))
        Array([[1., 2.],
               [1., 2.]], dtype=float32)
    """
    if method not in _METHODS:
        raise ValueError(f"solve_sylvester: `method` must be one of {_METHODS}; got {method!r}.")
    A, B, C = _inexact("solve_sylvester", A, B, C)
    if C.ndim < 2 or A.shape[-2:] != (C.shape[-2],) * 2 or B.shape[-2:] != (C.shape[-1],) * 2:
        raise ValueError(f"solve_sylvester: A (..., m, m), B (..., n, n) and C (..., m, n) must agree; got A "
                         f"{_short(A)}, B {_short(B)} and C {_short(C)}.")
    return _solve_sylvester_jit(A, B, C, method, float(tol))


def _solve_sylvester(a, b, c, method, tol):
    fn = functools.partial(_solve_sylvester_2d, method=method, tol=tol)
    if a.ndim == b.ndim == c.ndim == 2:
        return fn(a, b, c)
    return jnp.vectorize(fn, signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)


# loops run eagerly would be traced and compiled again on every call; jitted, once per signature
_solve_sylvester_jit = library_jit(_solve_sylvester, static_argnums=(3, 4))

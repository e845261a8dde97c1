"""Functions of the Schur form: `rsf2csf` (real Schur form to complex) and `funm` (Parlett's
recurrence for a scalar function of a matrix)."""
import numpy as np

from ... import dtypes
from ... import lax
from ... import numpy as jnp
from .._util import library_jit
from ._decompositions import _complex_schur
from ._util import _check_square, _inexact, _mH, _short


def _rsf2csf_2d(t, z):
    """Bottom to top, each 2x2 diagonal block of the real Schur form with a nonzero subdiagonal
    entry t[m, m-1] (a complex eigenvalue pair) is triangularized by the unitary rotation
    G = [[conj(c), s], [-s, c]] whose first column is the eigenvector direction (mu, t[m, m-1]),
    mu = lambda - t[m, m] for the eigenvalue lambda of the block with positive imaginary part (as
    LAPACK orders a pair, so the result is SciPy's). G acts on rows m-1, m of t and on columns
    m-1, m of t and z; the rows left of the block and the columns below it are zero, so whole
    rows and columns can be rotated."""
    n = t.shape[-1]
    eps = float(dtypes.finfo(t.dtype).eps)

    def rotate(i, tz):
        t, z = tz
        m = n - i
        block = lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))
        a, b, c, d = block[0, 0], block[0, 1], block[1, 0], block[1, 1]
        half = (a - d) / 2
        mu = half + jnp.sqrt(half * half + b * c)  # principal root: the eigenvalue with imag >= 0
        r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(c) ** 2).astype(t.dtype)
        cs, sn = mu / r, c / r
        g = jnp.stack([jnp.stack([jnp.conj(cs), sn]), jnp.stack([-sn, cs])])
        rows = g @ lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
        t_new = lax.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
        cols = lax.dynamic_slice_in_dim(t_new, m - 1, 2, axis=1) @ _mH(g)
        t_new = lax.dynamic_update_slice_in_dim(t_new, cols, m - 1, axis=1)
        z_new = lax.dynamic_update_slice_in_dim(z, lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1) @ _mH(g),
                                                m - 1, axis=1)
        split = jnp.abs(c) > eps * (jnp.abs(a) + jnp.abs(d))
        t = jnp.where(split, t_new, t)
        z = jnp.where(split, z_new, z)
        zero = jnp.zeros((1, 1), t.dtype)
        return lax.dynamic_update_slice(t, zero, (m, m - 1)), z

    return lax.fori_loop(1, n, rotate, (t, z)) if n > 1 else (t, z)


def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form `(T, Z)` from a real one, as `scipy.linalg.rsf2csf`: given
    `a == Z @ T @ Z.T` with T quasi-upper triangular (`schur(a)`), returns complex upper
    triangular T and unitary Z with `a == Z @ T @ Z^H`. Leading dimensions are a batch
    (broadcast between T and Z). Not differentiable through `schur`, as in JAX.

    Example:
        >>> t, z = core.scipy.linalg.rsf2csf(jnp.array([[0.0, 1.0], [-1.0, 0.0]]), jnp.eye(2))
        >>> jnp.diagonal(t).round(4)   # the eigenvalues +-i on the diagonal
        Array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    del check_finite
    T, Z = _inexact("rsf2csf", T, Z)
    _check_square("rsf2csf", T, "T")
    _check_square("rsf2csf", Z, "Z")
    if T.shape[-1] != Z.shape[-1]:
        raise ValueError(f"rsf2csf: `T` {_short(T)} and `Z` {_short(Z)} must be matrices of the same size.")
    complex_dtype = jnp.result_type(T.dtype, np.complex64)
    T, Z = T.astype(complex_dtype), Z.astype(complex_dtype)
    return _rsf2csf_jit(T, Z)


def _rsf2csf(t, z):
    if t.ndim == 2 and z.ndim == 2:
        return _rsf2csf_2d(t, z)
    return jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


# a loop run eagerly would be traced and compiled again on every call; jitted, once per signature
_rsf2csf_jit = library_jit(_rsf2csf)


def _parlett(t, f_diag):
    """F = f(T) for upper triangular T from F's diagonal f(t_ii), superdiagonal by superdiagonal
    (Parlett 1976; Golub and Van Loan, Algorithm 11.1.1): F commutes with T, so
    f_ij (t_jj - t_ii) = t_ij (f_jj - f_ii) + sum_{i<k<j} (t_ik f_kj - f_ik t_kj). The sum for a
    whole superdiagonal is one commutator of the strictly upper parts, with F's entries beyond
    the superdiagonals already computed still zero. Where t_jj == t_ii the numerator is kept
    undivided, as SciPy does. Returns F and the smallest |t_jj - t_ii| (i < j)."""
    n = t.shape[-1]
    rows, cols = np.indices((n, n))
    strictly_upper = jnp.asarray(cols > rows)
    t_upper = jnp.where(strictly_upper, t, 0)
    diag = jnp.diagonal(t)
    den = diag[None, :] - diag[:, None]
    f_gap = f_diag[None, :] - f_diag[:, None]

    def superdiagonal(p, f):
        f_upper = jnp.where(strictly_upper, f, 0)
        num = t * f_gap + t_upper @ f_upper - f_upper @ t_upper
        value = jnp.where(den != 0, num / jnp.where(den != 0, den, 1), num)
        return jnp.where(jnp.asarray(cols - rows) == p, value, f)

    f = lax.fori_loop(1, n, superdiagonal, jnp.diag(f_diag)) if n > 1 else jnp.diag(f_diag)
    gaps = jnp.where(strictly_upper, jnp.abs(den), jnp.inf)
    return f, jnp.min(gaps) if n > 1 else jnp.asarray(np.inf, gaps.dtype)


def funm(A, func, disp=True):
    """A scalar function applied to a square matrix, as `scipy.linalg.funm`: `func` maps the
    vector of eigenvalues (from the complex Schur form T of A) elementwise, and Parlett's
    recurrence fills the rest of f(T); the result is Z f(T) Z^H, always complex (as JAX). With
    `disp=False` returns `(F, err)`, SciPy's estimate of the relative error (large when
    eigenvalues are close: the recurrence divides by their differences). One (n, n) matrix, as
    in SciPy and JAX; not differentiable (Schur has no derivative, as in JAX).

    Example:
        >>> f = core.scipy.linalg.funm(jnp.array([[1.0, 2.0], [0.0, 3.0]]), jnp.exp)
        >>> jnp.allclose(f, core.scipy.linalg.expm(jnp.array([[1.0, 2.0], [0.0, 3.0]])))
        Array(True, dtype=bool)
    """
    (A,) = _inexact("funm", A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError(f"funm: `A` must be one square matrix (n, n); got {_short(A)}.")
    t, z = _complex_schur("funm", A)
    # func runs eagerly, outside any jit, so a NumPy function works too (as in JAX)
    f_diag = jnp.asarray(func(jnp.diagonal(t))).astype(t.dtype)
    if f_diag.shape != (A.shape[0],):
        raise ValueError(f"funm: `func` must map the ({A.shape[0]},) vector of eigenvalues elementwise; it returned "
                         f"{_short(f_diag)}.")
    f, err = _parlett_product_jit(t, z, f_diag)
    return f if disp else (f, err)


def _parlett_product(t, z, f_diag):
    """Z f(T) Z^H and SciPy's error estimate, from the Schur form and f at the eigenvalues."""
    f_t, min_gap = _parlett(t, f_diag)
    f = z @ f_t @ _mH(z)
    tol = float(dtypes.finfo(t.dtype).eps)
    min_gap = jnp.where(min_gap == 0, tol, min_gap)
    t_norm = jnp.max(jnp.sum(jnp.abs(jnp.triu(t, 1)), axis=0))  # the 1-norm of T's strict upper part
    err = jnp.minimum(1.0, jnp.maximum(tol, (tol / min_gap) * t_norm))
    return f, jnp.where(jnp.any(jnp.isinf(f)), np.inf, err)


# a loop run eagerly would be traced and compiled again on every call; jitted, once per signature
_parlett_product_jit = library_jit(_parlett_product)

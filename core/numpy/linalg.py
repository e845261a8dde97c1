"""`core.numpy.linalg`: NumPy's linear algebra over the `lax.linalg` primitives (LAPACK on CPU).

Matrices live in the two trailing dimensions; leading dimensions are a batch and broadcast as in
`numpy.linalg`. As in JAX: integer inputs promote to the default float type; there is no
LinAlgError: a shape error is a ValueError, and a failed factorization (cholesky of a matrix that
is not positive definite) gives NaN instead of raising; results are namedtuples like NumPy 2's
(`EighResult`, `QRResult`, `SVDResult`, `SlogdetResult`).
"""
import collections
import operator

import numpy as np

from .. import dtypes
from .. import lax
from ..custom_derivatives import custom_jvp
from ..lax import linalg as lax_linalg
from ._util import (asarray_operand, broadcast_shapes, canonicalize_axis, check_arraylike,
                    promote_dtypes_inexact, promote_dtypes)

__all__ = ["norm", "vector_norm", "matrix_norm", "solve", "inv", "det", "slogdet", "cholesky", "qr", "eig",
           "eigvals", "eigh", "eigvalsh", "svd", "svdvals", "matrix_rank", "pinv", "lstsq", "matrix_power", "multi_dot", "cond",
           "outer", "trace", "diagonal", "vecdot", "cross", "matmul", "matrix_transpose",
           "tensordot", "tensorinv", "tensorsolve",
           "EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult"]

EigResult = collections.namedtuple("EigResult", ["eigenvalues", "eigenvectors"])
EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = collections.namedtuple("QRResult", ["Q", "R"])
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])
SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])


# ----- small helpers over lax --------------------------------------------------------------------

def _inexact(name, *args):
    check_arraylike(name, *args)
    return promote_dtypes_inexact(*args)


def _check_square(name, a):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: argument must be a square matrix or a stack of square matrices, of shape "
                         f"(..., n, n); got shape {a.shape}.")


def _check_matrix(name, a):
    if a.ndim < 2:
        raise ValueError(f"{name}: argument must have at least 2 dimensions (..., m, n); got shape {a.shape}.")


def _real_dtype(dtype):
    return dtypes.finfo(dtype).dtype if dtypes.is_complex(dtype) else np.dtype(dtype)


def _full(value, shape, dtype):
    return lax.full(shape, value, dtype)


def _bcast(x, shape):
    """Broadcast `x` (NumPy rules, rank <= len(shape)) to `shape`."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    nd = len(shape)
    return lax.broadcast_in_dim(x, shape, tuple(range(nd - x.ndim, nd)))


def _binary(fn, x, y):
    """An elementwise lax op after NumPy broadcasting of the two operands."""
    shape = broadcast_shapes(x.shape, y.shape)
    return fn(_bcast(x, shape), _bcast(y, shape))


def _T(x):
    nd = x.ndim
    return lax.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _H(x):
    return _T(lax.conj(x) if dtypes.is_complex(x.dtype) else x)


def _matmul(a, b):
    """(..., m, k) @ (..., k, n) with broadcast batch dimensions."""
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = _bcast(a, batch + a.shape[-2:])
    b = _bcast(b, batch + b.shape[-2:])
    nb = len(batch)
    return lax.dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))


def _eye(n, dtype, batch=()):
    shape = tuple(batch) + (n, n)
    nd = len(shape)
    same = lax.eq(lax.broadcasted_iota(np.int32, shape, nd - 2), lax.broadcasted_iota(np.int32, shape, nd - 1))
    return lax.convert_element_type(same, dtype)


def _diag(x, offset=0):
    """The `offset` diagonal of the trailing matrices: shape (..., length)."""
    m, n = x.shape[-2:]
    nd = x.ndim
    length = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
    rows = lax.broadcasted_iota(np.int32, x.shape, nd - 2)
    cols = lax.broadcasted_iota(np.int32, x.shape, nd - 1)
    on = lax.eq(lax.add(rows, lax.full(x.shape, offset, np.int32)), cols)
    picked = lax.select_n(on, _full(0, x.shape, x.dtype), x)
    # sum each row (offset >= 0) or column (offset < 0) to its single diagonal element, then crop
    if offset >= 0:
        d = lax.reduce_sum(picked, (nd - 1,))
        return lax.slice(d, (0,) * (nd - 1), x.shape[:-2] + (length,))
    d = lax.reduce_sum(picked, (nd - 2,))
    return lax.slice(d, (0,) * (nd - 2) + (0,), x.shape[:-2] + (length,))


def _sum(x, axes, keepdims=False):
    out = lax.reduce_sum(x, tuple(axes))
    return _keep(out, x.shape, axes) if keepdims else out


def _keep(out, shape, axes):
    return lax.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(shape)))


def _scalar_like(x, value):
    return _full(value, x.shape, x.dtype)


def _abs(x):
    return lax.abs(x)


# ----- norms --------------------------------------------------------------------------------------

def _vector_norm(x, axes, ord, keepdims):
    ax = _abs(x)
    if ord is None or ord == 2:
        out = lax.sqrt(lax.reduce_sum(lax.mul(ax, ax), axes))
    elif ord == np.inf:
        out = lax.reduce_max(ax, axes)
    elif ord == -np.inf:
        out = lax.reduce_min(ax, axes)
    elif ord == 0:
        out = lax.reduce_sum(lax.convert_element_type(lax.ne(ax, _scalar_like(ax, 0)), ax.dtype), axes)
    elif ord == 1:
        out = lax.reduce_sum(ax, axes)
    elif isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    else:
        p = float(ord)
        out = lax.pow(lax.reduce_sum(lax.pow(ax, _scalar_like(ax, p)), axes), lax.full((), 1.0 / p, ax.dtype))
    return _keep(out, x.shape, axes) if keepdims else out


def _matrix_norm(x, axes, ord, keepdims):
    r, c = axes
    if ord in ("fro", "f", None):
        ax = _abs(x)
        out = lax.sqrt(lax.reduce_sum(lax.mul(ax, ax), (r, c)))
    elif ord in (1, -1):
        sums = lax.reduce_sum(_abs(x), (r,))
        cc = c - 1 if c > r else c
        out = (lax.reduce_max if ord == 1 else lax.reduce_min)(sums, (cc,))
    elif ord in (np.inf, -np.inf):
        sums = lax.reduce_sum(_abs(x), (c,))
        rr = r - 1 if r > c else r
        out = (lax.reduce_max if ord == np.inf else lax.reduce_min)(sums, (rr,))
    elif ord in (2, -2, "nuc"):
        rest = [i for i in range(x.ndim) if i not in (r, c)]
        moved = lax.transpose(x, tuple(rest) + (r, c))
        s = lax_linalg.svd(moved, compute_uv=False)
        last = (s.ndim - 1,)
        out = {2: lax.reduce_max, -2: lax.reduce_min, "nuc": lax.reduce_sum}[ord](s, last)
    else:
        raise ValueError(f"Invalid order {ord!r} for matrix norm.")
    return _keep(out, x.shape, (r, c)) if keepdims else out


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm, as `numpy.linalg.norm`.

    With `axis` None: the 2-norm of the flattened array when `ord` is None, else the vector norm
    of a 1-D or the matrix norm of a 2-D `x`. An int `axis` is a vector norm (ord None/2, 1, inf,
    -inf, 0 = count of nonzeros, any p); a pair is a matrix norm (None/'fro', 'nuc', 1, -1, 2, -2,
    inf, -inf). The result is real. Example: `jnp.linalg.norm(jnp.array([3., 4.]))` is `5.`.
    """
    (x,) = _inexact("norm", x)
    if axis is None:
        if ord is None:
            out = _vector_norm(lax.reshape(x, (x.size,)), (0,), None, False)
            return _keep(out, x.shape, tuple(range(x.ndim))) if keepdims else out
        if x.ndim not in (1, 2):
            raise ValueError(f"norm: improper number of dimensions to norm: ord={ord!r} needs a 1-D or 2-D "
                             f"array when axis is None, got shape {x.shape}.")
        axis = tuple(range(x.ndim))
    elif isinstance(axis, (int, np.integer)):
        axis = (axis,)
    axis = tuple(canonicalize_axis(a, x.ndim, "norm") for a in axis)
    if len(axis) == 1:
        return _vector_norm(x, axis, ord, keepdims)
    if len(axis) == 2:
        if axis[0] == axis[1]:
            raise ValueError(f"norm: duplicate axes given: {axis}.")
        return _matrix_norm(x, axis, ord, keepdims)
    raise ValueError(f"norm: improper number of axes {axis}; give one (vector norm) or two (matrix norm).")


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """The vector norm over `axis` (None: the whole array, flattened), as `numpy.linalg.vector_norm`.

    Example: `jnp.linalg.vector_norm(jnp.ones((2, 2)))` is `2.`.
    """
    (x,) = _inexact("vector_norm", x)
    if axis is None:
        out = _vector_norm(lax.reshape(x, (x.size,)), (0,), ord, False)
        return _keep(out, x.shape, tuple(range(x.ndim))) if keepdims else out
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = tuple(canonicalize_axis(a, x.ndim, "vector_norm") for a in axes)
    return _vector_norm(x, axes, ord, keepdims)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """The matrix norm over the last two axes, as `numpy.linalg.matrix_norm`.

    Example: `jnp.linalg.matrix_norm(jnp.eye(3), ord=2)` is `1.`.
    """
    (x,) = _inexact("matrix_norm", x)
    _check_matrix("matrix_norm", x)
    return _matrix_norm(x, (x.ndim - 2, x.ndim - 1), ord, keepdims)


# ----- solving and inverting ---------------------------------------------------------------------

def _permute_rows(b, perm):
    """b[..., perm, :]: a gather of whole rows (measured faster than a one-hot permutation matmul,
    which costs O(n^2 k))."""
    from .indexing import take_along_axis
    from .manipulation import broadcast_to
    return take_along_axis(b, broadcast_to(lax.expand_dims(perm, (perm.ndim,)), b.shape), axis=-2)


def _lu_solve(a, b):
    lu, _, perm = lax_linalg.lu(a)
    y = lax_linalg.triangular_solve(lu, _permute_rows(b, perm), left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu, y, left_side=True, lower=False)


def solve(a, b):
    """Solve `a @ x == b` for x, as `numpy.linalg.solve` (LU with partial pivoting).

    a is (..., n, n); b is (n,) (a vector) or (..., n, k); batch dimensions broadcast. A singular
    `a` gives inf/NaN rather than an error. Example: `jnp.linalg.solve(2 * jnp.eye(2), jnp.ones(2))`
    is `[0.5, 0.5]`.
    """
    a, b = _inexact("solve", a, b)
    _check_square("solve", a)
    n = a.shape[-1]
    vector = b.ndim == 1
    bm = lax.reshape(b, b.shape + (1,)) if vector else b
    if bm.ndim < 2 or bm.shape[-2] != n:
        raise ValueError(f"solve: b must have shape ({n},) or (..., {n}, k) to match a of shape {a.shape}; "
                         f"got b of shape {b.shape}.")
    batch = broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    x = _lu_solve(_bcast(a, batch + (n, n)), _bcast(bm, batch + bm.shape[-2:]))
    return lax.reshape(x, x.shape[:-1]) if vector else x


def inv(a):
    """The inverse of square matrices, as `numpy.linalg.inv` (a singular matrix gives inf/NaN).

    Example: `jnp.linalg.inv(jnp.array([[2., 0.], [0., 4.]]))` is `[[0.5, 0], [0, 0.25]]`.
    """
    (a,) = _inexact("inv", a)
    _check_square("inv", a)
    return _lu_solve(a, _eye(a.shape[-1], a.dtype, a.shape[:-2]))


def _lu_det_parts(a):
    lu, pivots, _ = lax_linalg.lu(a)
    diag = _diag(lu)
    k = pivots.shape[-1]
    swapped = lax.ne(pivots, lax.broadcasted_iota(np.int32, pivots.shape, pivots.ndim - 1))
    swaps = lax.reduce_sum(lax.convert_element_type(swapped, np.int32), (pivots.ndim - 1,)) if k else \
        _full(0, pivots.shape[:-1], np.int32)
    odd = lax.eq(lax.rem(swaps, _full(2, swaps.shape, np.int32)), _full(1, swaps.shape, np.int32))
    parity = lax.select_n(odd, _full(1, odd.shape, a.dtype), _full(-1, odd.shape, a.dtype))
    return diag, parity


def det(a):
    """The determinant of square matrices, as `numpy.linalg.det` (via LU).

    Example: `jnp.linalg.det(jnp.array([[1., 2.], [3., 4.]]))` is `-2.`.
    """
    (a,) = _inexact("det", a)
    _check_square("det", a)
    return _det(a)


@custom_jvp
def _det(a):
    diag, parity = _lu_det_parts(a)
    return lax.mul(parity, lax.reduce_prod(diag, (diag.ndim - 1,)))


@_det.defjvp
def _det_jvp(primals, tangents):
    # Jacobi's formula, d det(a) = <cofactor(a), da>, with a cofactor matrix that is finite and
    # exact also where a is singular. Differentiating the LU product instead divides by the
    # zero pivot of a singular matrix (NaN), and JAX's LU-based rule finds the cofactors only when
    # that zero pivot comes last (not for [[0, 1], [0, 1]], nor for [[0, 1], [0, 0]]).
    (a,), (da,) = primals, tangents
    nd = a.ndim
    return _det(a), lax.reduce_sum(lax.mul(_cofactor(a), da), (nd - 2, nd - 1))


@custom_jvp
def _cofactor(a):
    """The cofactor matrix of square `a` (the transposed adjugate; det(a) a^-T where a is
    invertible), which is d det(a) / da. From the SVD a = u diag(s) vh it is
    det(u) det(vh) conj(u diag(s') vh), s'_i the product of the singular values other than s_i:
    exact for every rank (rank n-1 leaves one nonzero s'_i, lower ranks none) and without any
    division, so a singular `a` needs no special case."""
    n = a.shape[-1]
    if n == 0:
        return a
    u, s, vh = lax_linalg.svd(a, full_matrices=False)
    nb = s.ndim - 1
    rows = lax.broadcast_in_dim(s, s.shape + (n,), tuple(range(nb)) + (nb + 1,))  # rows[..., i, j] = s_j
    on_diagonal = lax.eq(lax.broadcasted_iota(np.int32, rows.shape, nb), lax.broadcasted_iota(np.int32, rows.shape, nb + 1))
    others = lax.reduce_prod(lax.select_n(on_diagonal, rows, _scalar_like(rows, 1)), (nb + 1,))
    scaled_u = lax.mul(u, lax.broadcast_in_dim(lax.convert_element_type(others, a.dtype), u.shape,
                                               tuple(range(nb)) + (nb + 1,)))
    m = _matmul(scaled_u, vh)
    if dtypes.is_complex(a.dtype):
        m = lax.conj(m)
    phase = lax.mul(_det(u), _det(vh))  # +-1, or a unit complex number
    return lax.mul(m, lax.broadcast_in_dim(phase, m.shape, tuple(range(nb))))


@_cofactor.defjvp
def _cofactor_jvp(primals, tangents):
    # With x = a^-1 da, d cof(a) = tr(x) cof(a) - cof(a) x^T (from cof = det(a) a^-T). This is
    # what second derivatives of det use; unlike the first, it needs an invertible `a`.
    (a,), (da,) = primals, tangents
    c = _cofactor(a)
    if a.shape[-1] == 0:
        return c, da
    x = solve(a, da)
    nb = a.ndim - 2
    tr = lax.broadcast_in_dim(lax.reduce_sum(_diag(x), (nb,)), c.shape, tuple(range(nb)))
    return c, lax.sub(lax.mul(tr, c), _matmul(c, _T(x)))


def slogdet(a):
    """Sign and natural log of the absolute determinant, as `numpy.linalg.slogdet`.

    Returns `SlogdetResult(sign, logabsdet)`; a singular matrix has sign 0 and logabsdet -inf.
    For complex input the sign is a unit complex number. Example:
    `jnp.linalg.slogdet(jnp.array([[1., 2.], [3., 4.]]))` is `(-1., log(2.))`.
    """
    (a,) = _inexact("slogdet", a)
    _check_square("slogdet", a)
    diag, parity = _lu_det_parts(a)
    last = (diag.ndim - 1,)
    mag = _abs(diag)
    logabs = lax.reduce_sum(lax.log(mag), last)
    if dtypes.is_complex(a.dtype):
        zero = lax.eq(mag, _scalar_like(mag, 0))
        safe = lax.select_n(zero, mag, _scalar_like(mag, 1))
        phase = lax.div(diag, lax.convert_element_type(safe, a.dtype))
        phase = lax.select_n(zero, phase, _scalar_like(phase, 0))
    else:
        phase = lax.sign(diag)
    sign = lax.mul(parity, lax.reduce_prod(phase, last))
    return SlogdetResult(sign, logabs)


# ----- factorizations ----------------------------------------------------------------------------

def cholesky(a, *, upper=False, symmetrize_input=True):
    """The Cholesky factor of Hermitian positive-definite matrices, as `numpy.linalg.cholesky`.

    Returns lower L with `L @ L^H == a` (or upper U = L^H with `upper=True`). As in JAX, a matrix
    that is not positive definite gives NaN instead of raising LinAlgError.
    Example: `jnp.linalg.cholesky(jnp.array([[4., 2.], [2., 5.]]))` is `[[2., 0.], [1., 2.]]`.
    """
    (a,) = _inexact("cholesky", a)
    _check_square("cholesky", a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(factor) if upper else factor


def qr(a, mode="reduced"):
    """QR decomposition, as `numpy.linalg.qr`: `QRResult(Q, R)`, or just R for mode="r".

    mode "reduced": Q (..., m, k), R (..., k, n) with k = min(m, n); "complete": Q (..., m, m),
    R (..., m, n). Signs follow LAPACK (R's diagonal may be negative), like NumPy.
    Example: `q, r = jnp.linalg.qr(jnp.ones((3, 2)))`.
    """
    (a,) = _inexact("qr", a)
    _check_matrix("qr", a)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: unsupported mode {mode!r}; use 'reduced', 'complete' or 'r'.")
    q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def eig(a):
    """Eigenvalues and right eigenvectors (columns) of general square matrices, as
    `jax.numpy.linalg.eig`: `EigResult(eigenvalues, eigenvectors)` with `a @ v == v * w`.

    As in JAX (unlike NumPy), the results are always complex: complex64 for 32-bit input,
    complex128 for 64-bit. Eigenvectors have unit norm; eigenvalues are in LAPACK's order. CPU only
    (LAPACK geev). Differentiable through the eigenvalues only (use `eigvals`).

    Example:
        >>> w, v = jnp.linalg.eig(jnp.array([[2., 0.], [0., 3.]]))
        >>> w
        Array([2.+0.j, 3.+0.j], dtype=complex64)
    """
    (a,) = _inexact("eig", a)
    _check_square("eig", a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """The eigenvalues of general square matrices (complex, LAPACK's order), as
    `jax.numpy.linalg.eigvals`; differentiable.

    Example: `jnp.linalg.eigvals(jnp.array([[0., 1.], [-1., 0.]]))` is `[0.+1.j, 0.-1.j]`.
    """
    (a,) = _inexact("eigvals", a)
    _check_square("eigvals", a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of Hermitian matrices, as `numpy.linalg.eigh`.

    Returns `EighResult(eigenvalues, eigenvectors)` with `a @ v == v * w`. With the JAX default
    `symmetrize_input=True` the decomposition reads (a + a^H) / 2; otherwise the `UPLO` ('L' default)
    triangle. Example: `jnp.linalg.eigh(jnp.array([[2., 1.], [1., 2.]])).eigenvalues` is `[1., 3.]`.
    """
    (a,) = _inexact("eigh", a)
    _check_square("eigh", a)
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', got {UPLO!r}.")
    v, w = lax_linalg.eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L"):
    """The eigenvalues (ascending, real) of Hermitian matrices, as `numpy.linalg.eigvalsh`.

    Example: `jnp.linalg.eigvalsh(jnp.eye(2))` is `[1., 1.]`.
    """
    return eigh(a, UPLO).eigenvalues


def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition, as `numpy.linalg.svd`: `SVDResult(U, S, Vh)` or just S.

    `U * S[..., None, :] @ Vh == a`; S is real and descending. `hermitian` is accepted for NumPy
    compatibility; the general algorithm is used either way (same S; U and Vh may differ in sign).
    Example: `jnp.linalg.svd(jnp.eye(2), compute_uv=False)` is `[1., 1.]`.
    """
    del hermitian
    (a,) = _inexact("svd", a)
    _check_matrix("svd", a)
    if not compute_uv:
        return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False)
    u, s, vh = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True)
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """The singular values (descending), as `numpy.linalg.svdvals`. Example: `svdvals(2 * jnp.eye(2))` is `[2., 2.]`."""
    return svd(x, compute_uv=False)


# ----- derived quantities ------------------------------------------------------------------------

def matrix_rank(M, rtol=None, *, tol=None):
    """The number of singular values above a tolerance, as `numpy.linalg.matrix_rank`.

    Default threshold: `S.max() * max(m, n) * eps`; `rtol` scales S.max() instead, `tol` is absolute.
    A 1-D or 0-D input has rank 1 unless it is all zeros. Example: `matrix_rank(jnp.ones((3, 3)))` is `1`.
    """
    (M,) = _inexact("matrix_rank", M)
    if M.ndim < 2:
        nonzero = lax.ne(M, _scalar_like(M, 0))
        any_ = lax.reduce_or(lax.reshape(nonzero, (M.size,)), (0,))
        return lax.convert_element_type(any_, np.int32)
    s = lax_linalg.svd(M, compute_uv=False)
    last = (s.ndim - 1,)
    if tol is not None:
        thresh = lax.convert_element_type(asarray_operand(tol), s.dtype)
        thresh = _bcast(thresh, s.shape[:-1]) if thresh.ndim <= s.ndim - 1 else thresh
    else:
        eps = float(np.finfo(s.dtype).eps)
        factor = max(M.shape[-2:]) * eps if rtol is None else rtol
        smax = lax.reduce_max(s, last)
        thresh = _binary(lax.mul, smax, lax.convert_element_type(asarray_operand(factor), s.dtype))
    above = lax.gt(s, lax.broadcast_in_dim(thresh, s.shape, tuple(range(s.ndim - 1))))
    return lax.reduce_sum(lax.convert_element_type(above, np.int32), last)


def pinv(a, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse via SVD, as `numpy.linalg.pinv` (JAX's default cutoff).

    Singular values below `rtol * S.max()` (default `10 * max(m, n) * eps`) count as zero.
    Example: `jnp.linalg.pinv(jnp.array([[2., 0.], [0., 0.]]))` is `[[0.5, 0.], [0., 0.]]`.
    """
    del hermitian
    (a,) = _inexact("pinv", a)
    _check_matrix("pinv", a)
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return _full(0, a.shape[:-2] + (n, m), a.dtype)
    u, s, vh = lax_linalg.svd(a, full_matrices=False)
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(np.finfo(s.dtype).eps)
    smax = lax.reduce_max(s, (s.ndim - 1,))
    cutoff = _binary(lax.mul, smax, lax.convert_element_type(asarray_operand(rtol), s.dtype))
    cutoff = lax.broadcast_in_dim(cutoff, s.shape, tuple(range(s.ndim - 1)))
    keep = lax.gt(s, cutoff)
    safe = lax.select_n(keep, _scalar_like(s, 1), s)
    s_inv = lax.select_n(keep, _scalar_like(s, 0), lax.div(_scalar_like(s, 1), safe))
    s_inv = lax.convert_element_type(s_inv, a.dtype)
    scaled = lax.mul(_H(u), lax.broadcast_in_dim(s_inv, s.shape + (m,), tuple(range(s.ndim))))
    return _matmul(_H(vh), scaled)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution of `a @ x ≈ b` via SVD, as `numpy.linalg.lstsq` (JAX's conventions).

    Returns `(x, resid, rank, s)`. a is (m, n); b is (m,) or (m, k). Singular values below
    `rcond * S.max()` (default `eps * max(m, n)`) are dropped. As in JAX, `resid` is always the
    squared residual norm per column (NumPy returns an empty array when rank < n or m <= n; pass
    `numpy_resid=True` for that, which needs concrete values).
    Example: `jnp.linalg.lstsq(jnp.ones((3, 1)), jnp.array([1., 2., 3.]))[0]` is `[2.]`.
    """
    a, b = _inexact("lstsq", a, b)
    if a.ndim != 2:
        raise ValueError(f"lstsq: a must be a 2-D matrix, got shape {a.shape}.")
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        raise ValueError(f"lstsq: b must have shape ({a.shape[0]},) or ({a.shape[0]}, k) to match a of shape "
                         f"{a.shape}; got b of shape {b.shape}.")
    m, n = a.shape
    vector = b.ndim == 1
    bm = lax.reshape(b, (m, 1)) if vector else b
    u, s, vh = lax_linalg.svd(a, full_matrices=False)
    if rcond is None:
        rcond = float(np.finfo(s.dtype).eps) * max(m, n)
    k = s.shape[0]
    if k:
        smax = lax.reduce_max(s, (0,))
        cutoff = lax.mul(lax.convert_element_type(asarray_operand(rcond), s.dtype), smax)
        keep = lax.ge(s, lax.broadcast_in_dim(cutoff, s.shape, ()))
    else:
        keep = lax.full((0,), True, np.bool_)
    rank = lax.reduce_sum(lax.convert_element_type(keep, np.int32), (0,))
    safe = lax.select_n(keep, _scalar_like(s, 1), s)
    s_inv = lax.select_n(keep, _scalar_like(s, 0), lax.div(_scalar_like(s, 1), safe))
    uhb = _matmul(_H(u), bm)
    scaled = lax.mul(lax.broadcast_in_dim(lax.convert_element_type(s_inv, a.dtype), uhb.shape, (0,)), uhb)
    x = _matmul(_H(vh), scaled)
    r = lax.sub(bm, _matmul(a, x))
    ar = _abs(r)
    resid = lax.reduce_sum(lax.mul(ar, ar), (0,))
    if vector:
        x = lax.reshape(x, (n,))
        resid = lax.reshape(resid, ())
    if numpy_resid:
        from ..trace import Tracer
        if isinstance(rank, Tracer):
            raise TypeError("lstsq(numpy_resid=True) needs concrete values; it cannot run under a transformation.")
        if int(rank) < n or m <= n:
            resid = _full(0, (0,), resid.dtype)
    return x, resid, rank, s


def matrix_power(a, n):
    """`a` raised to the integer power `n` by repeated squaring, as `numpy.linalg.matrix_power`.

    n = 0 gives the identity; negative n inverts first. Example: `matrix_power(2 * jnp.eye(2), 3)`
    is `8 * I`.
    """
    check_arraylike("matrix_power", a)
    a = asarray_operand(a)
    _check_square("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"matrix_power: exponent must be an integer, got {n!r}.") from None
    if n == 0:
        return _eye(a.shape[-1], a.dtype, a.shape[:-2])
    if n < 0:
        a = inv(a)
        n = -n
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else _matmul(result, power)
        n >>= 1
        if n:
            power = _matmul(power, power)
    return result


def multi_dot(arrays, *, precision=None):
    """The chained product of `arrays`, as `numpy.linalg.multi_dot` (evaluated left to right).

    The first array may be 1-D (a row vector) and the last 1-D (a column vector); the others are
    2-D. Example: `multi_dot([jnp.ones(2), jnp.eye(2), jnp.ones(2)])` is `2.`.
    """
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot: expected at least two arrays, got {len(arrays)}.")
    check_arraylike("multi_dot", *arrays)
    arrays = promote_dtypes(*arrays)
    first_vec, last_vec = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vec:
        arrays[0] = lax.reshape(arrays[0], (1,) + arrays[0].shape)
    if last_vec:
        arrays[-1] = lax.reshape(arrays[-1], arrays[-1].shape + (1,))
    for i, x in enumerate(arrays):
        if x.ndim != 2:
            raise ValueError(f"multi_dot: array {i} must be 2-D (only the first and last may be 1-D), got shape "
                             f"{x.shape}.")
    out = arrays[0]
    for x in arrays[1:]:
        if out.shape[1] != x.shape[0]:
            raise ValueError(f"multi_dot: shapes {out.shape} and {x.shape} are not aligned.")
        out = lax.dot_general(out, x, (((1,), (0,)), ((), ())), precision=precision)
    if first_vec:
        out = lax.reshape(out, out.shape[1:])
    if last_vec:
        out = lax.reshape(out, out.shape[:-1])
    return out


def cond(x, p=None):
    """The condition number of matrices, as `numpy.linalg.cond`.

    p None/2/-2: a ratio of extreme singular values; otherwise `norm(x, p) * norm(inv(x), p)`.
    Example: `jnp.linalg.cond(jnp.array([[1., 0.], [0., 2.]]))` is `2.`.
    """
    (x,) = _inexact("cond", x)
    _check_matrix("cond", x)
    axes = (x.ndim - 2, x.ndim - 1)
    if p in (None, 2, -2):
        s = lax_linalg.svd(x, compute_uv=False)
        last = (s.ndim - 1,)
        hi, lo = lax.reduce_max(s, last), lax.reduce_min(s, last)
        return lax.div(hi, lo) if p != -2 else lax.div(lo, hi)
    _check_square("cond", x)
    return lax.mul(_matrix_norm(x, axes, p, False), _matrix_norm(inv(x), axes, p, False))


# ----- array-API helpers -------------------------------------------------------------------------

def outer(x1, x2, /):
    """The outer product of two 1-D arrays, as `numpy.linalg.outer`.

    Example: `jnp.linalg.outer(jnp.ones(2), jnp.ones(3))` has shape (2, 3).
    """
    check_arraylike("outer", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"outer: inputs must be 1-D, got shapes {x1.shape} and {x2.shape}.")
    shape = (x1.shape[0], x2.shape[0])
    return lax.mul(lax.broadcast_in_dim(x1, shape, (0,)), lax.broadcast_in_dim(x2, shape, (1,)))


def diagonal(x, /, *, offset=0):
    """The `offset` diagonal of the trailing matrices, as `numpy.linalg.diagonal`.

    Example: `jnp.linalg.diagonal(jnp.array([[1, 2], [3, 4]]))` is `[1, 4]`.
    """
    check_arraylike("diagonal", x)
    x = asarray_operand(x)
    _check_matrix("diagonal", x)
    return _diag(x, int(offset))


def trace(x, /, *, offset=0, dtype=None):
    """The sum of the `offset` diagonal of the trailing matrices, as `numpy.linalg.trace`.

    Example: `jnp.linalg.trace(jnp.eye(3))` is `3.`.
    """
    check_arraylike("trace", x)
    x = asarray_operand(x)
    _check_matrix("trace", x)
    if dtype is not None:
        x = lax.convert_element_type(x, dtypes.canonicalize_dtype(dtype))
    elif dtypes.is_bool(x.dtype) or (dtypes.is_int(x.dtype) and x.dtype.itemsize < 4):
        x = lax.convert_element_type(x, dtypes.default_int_dtype())
    d = _diag(x, int(offset))
    return lax.reduce_sum(d, (d.ndim - 1,))


def vecdot(x1, x2, /, *, axis=-1):
    """The vector dot product `sum(conj(x1) * x2)` along `axis`, broadcasting the rest.

    Example: `jnp.linalg.vecdot(jnp.array([1., 2.]), jnp.array([3., 4.]))` is `11.`.
    """
    check_arraylike("vecdot", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    shape = broadcast_shapes(x1.shape, x2.shape)
    axis = canonicalize_axis(axis, len(shape), "vecdot")
    x1, x2 = _bcast(x1, shape), _bcast(x2, shape)
    if dtypes.is_complex(x1.dtype):
        x1 = lax.conj(x1)
    return lax.reduce_sum(lax.mul(x1, x2), (axis,))


def cross(x1, x2, /, *, axis=-1):
    """The cross product of 3-vectors along `axis`, as `numpy.linalg.cross`.

    Example: `jnp.linalg.cross(jnp.array([1., 0., 0.]), jnp.array([0., 1., 0.]))` is `[0., 0., 1.]`.
    """
    check_arraylike("cross", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    shape = broadcast_shapes(x1.shape, x2.shape)
    axis = canonicalize_axis(axis, len(shape), "cross")
    if shape[axis] != 3:
        raise ValueError(f"cross: both inputs must have size 3 along axis {axis}, got shapes {x1.shape} and "
                         f"{x2.shape}.")
    x1, x2 = _bcast(x1, shape), _bcast(x2, shape)

    def comp(x, i):
        return lax.index_in_dim(x, i, axis, keepdims=True)

    a0, a1, a2 = (comp(x1, i) for i in range(3))
    b0, b1, b2 = (comp(x2, i) for i in range(3))
    parts = [lax.sub(lax.mul(a1, b2), lax.mul(a2, b1)), lax.sub(lax.mul(a2, b0), lax.mul(a0, b2)),
             lax.sub(lax.mul(a0, b1), lax.mul(a1, b0))]
    return lax.concatenate(parts, axis)


def matmul(x1, x2, /):
    """The matrix product with broadcast batch dimensions (both inputs at least 2-D here; see
    `core.numpy.matmul` for 1-D promotion). Example: `jnp.linalg.matmul(jnp.eye(2), jnp.ones((2, 3)))`."""
    check_arraylike("matmul", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if x1.ndim == 1 or x2.ndim == 1:
        a = lax.reshape(x1, (1,) + x1.shape) if x1.ndim == 1 else x1
        b = lax.reshape(x2, x2.shape + (1,)) if x2.ndim == 1 else x2
        out = matmul(a, b)
        if x1.ndim == 1:
            out = lax.reshape(out, out.shape[:-2] + out.shape[-1:])
        if x2.ndim == 1:
            out = lax.reshape(out, out.shape[:-1])
        return out
    if x1.shape[-1] != x2.shape[-2]:
        raise ValueError(f"matmul: shapes {x1.shape} and {x2.shape} are not aligned (contraction sizes "
                         f"{x1.shape[-1]} and {x2.shape[-2]}).")
    return _matmul(x1, x2)


def matrix_transpose(x, /):
    """Swap the last two axes, as `numpy.linalg.matrix_transpose`. Example: shape (2, 3, 4) -> (2, 4, 3)."""
    check_arraylike("matrix_transpose", x)
    x = asarray_operand(x)
    _check_matrix("matrix_transpose", x)
    return _T(x)


# ----- tensor forms: products, inverses and solves over groups of axes ----------------------------

def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """`numpy.linalg.tensordot`: the array-API spelling of `core.numpy.tensordot` (`axes` keyword-only).

    >>> jnp.linalg.tensordot(jnp.ones((2, 3)), jnp.ones((3, 4)), axes=1).shape
    (2, 4)
    """
    from .products import tensordot as _tensordot
    return _tensordot(x1, x2, axes, precision=precision, preferred_element_type=preferred_element_type)


def tensorinv(a, ind=2):
    """The inverse of `a` under `tensordot(.., .., ind)`, as `numpy.linalg.tensorinv`.

    `a`'s first `ind` axes (the "output" group) and its remaining axes must hold equally many
    elements; the result has shape `a.shape[ind:] + a.shape[:ind]`, and is the matrix inverse of `a`
    flattened to that square matrix.

    >>> a = jnp.eye(6).reshape(6, 2, 3)
    >>> jnp.linalg.tensorinv(a, ind=1).shape
    (2, 3, 6)
    """
    (a,) = _inexact("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"tensorinv: ind must be a positive integer, got ind={ind}.")
    rows, cols = a.shape[:ind], a.shape[ind:]
    n_rows, n_cols = int(np.prod(rows)), int(np.prod(cols))
    if n_rows != n_cols:
        raise ValueError(f"tensorinv: the first ind={ind} axes of a (shape {rows}, {n_rows} elements) must hold as "
                         f"many elements as the rest (shape {cols}, {n_cols}); got a of shape {a.shape}.")
    return lax.reshape(inv(lax.reshape(a, (n_rows, n_cols))), cols + rows)


def tensorsolve(a, b, axes=None):
    """Solve `tensordot(a, x, x.ndim) == b` for x, as `numpy.linalg.tensorsolve`.

    `axes` (optional) are axes of `a` moved to the end, in that order, before solving; then `a`'s
    leading axes must have `b`'s shape, and its trailing axes (x's shape) as many elements as `b`.

    >>> a = jnp.eye(6).reshape(2, 3, 6)
    >>> jnp.linalg.tensorsolve(a, jnp.ones((2, 3))).shape
    (6,)
    """
    a, b = _inexact("tensorsolve", a, b)
    if axes is not None:
        order = [i for i in range(a.ndim) if i not in {canonicalize_axis(k, a.ndim, "tensorsolve") for k in axes}]
        order += [canonicalize_axis(k, a.ndim, "tensorsolve") for k in axes]
        a = lax.transpose(a, tuple(order))
    x_shape = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape:
        raise ValueError(f"tensorsolve: after moving axes, the leading axes of a (shape {a.shape}) must match "
                         f"b's shape {b.shape}.")
    n = int(np.prod(x_shape))
    if b.size != n:
        raise ValueError(f"tensorsolve: a's trailing axes {x_shape} ({n} elements) must hold as many elements "
                         f"as b (shape {b.shape}, {b.size}); got a of shape {a.shape}.")
    x = solve(lax.reshape(a, (b.size, n)), lax.reshape(b, (b.size,)))
    return lax.reshape(x, x_shape)

"""Matrices built from vectors or sizes: block_diag, toeplitz and their kin."""
import operator

import numpy as np

from ... import numpy as jnp
from ...numpy._util import broadcast_shapes, check_arraylike, promote_dtypes, promote_dtypes_inexact
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


def _vector(name, x, arg):
    """`x` as an array of at least one dimension (a stack of vectors along the last axis)."""
    x = jnp.asarray(x)
    if x.ndim == 0:
        raise ValueError(f"{name}: `{arg}` must have at least 1 dimension (a vector or a stack of them); "
                         f"got the scalar {_short(x)}.")
    return x


def _gather(values, index):
    """The matrices whose entry (i, j) is values[..., index[i, j]], with index ZERO (-1) for 0 and
    ONE (-2) for 1: every structured matrix below is one gather with a static index map."""
    k = values.shape[-1]
    values = jnp.concatenate([values, jnp.zeros_like(values[..., :1]), jnp.ones_like(values[..., :1])], axis=-1)
    index = np.where(index == _ZERO, k, np.where(index == _ONE, k + 1, index))
    return values[..., index]


_ZERO, _ONE = -1, -2


def hankel(c, r=None):
    """The Hankel matrix with first column `c` and last row `r` (default zeros), as
    `scipy.linalg.hankel`: entry (i, j) is v[i + j] for v = c followed by r[1:] (so `r[0]` is
    ignored). As in JAX, leading dimensions of c and r are a batch: (..., m) and (..., n) give
    (..., m, n); dtypes promote.

    Example:
        >>> core.scipy.linalg.hankel(jnp.array([1, 2, 3]), jnp.array([9, 4, 5]))
        Array([[1, 2, 3],
               [2, 3, 4],
               [3, 4, 5]], dtype=int32)
    """
    if r is None:
        check_arraylike("hankel", c)
        c = _vector("hankel", c, "c")
        r = jnp.zeros_like(c)
    else:
        check_arraylike("hankel", c, r)
        c, r = _vector("hankel", c, "c"), _vector("hankel", r, "r")
    c, r = promote_dtypes(c, r)
    m, n = c.shape[-1], r.shape[-1]
    batch = broadcast_shapes(c.shape[:-1], r.shape[:-1])
    values = jnp.concatenate([jnp.broadcast_to(c, batch + (m,)), jnp.broadcast_to(r, batch + (n,))[..., 1:]],
                             axis=-1)
    return values[..., np.arange(m)[:, None] + np.arange(n)[None, :]]


def circulant(c):
    """The circulant matrix with first column `c`, as `scipy.linalg.circulant`: entry (i, j) is
    c[(i - j) mod n]. Leading dimensions of c are a batch: (..., n) gives (..., n, n).

    Example:
        >>> core.scipy.linalg.circulant(jnp.array([1, 2, 3]))
        Array([[1, 3, 2],
               [2, 1, 3],
               [3, 2, 1]], dtype=int32)
    """
    check_arraylike("circulant", c)
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def leslie(f, s):
    """The Leslie matrix of fecundities `f` (..., n) and survival rates `s` (..., n - 1), as
    `scipy.linalg.leslie`: f is the first row, s the first subdiagonal, zeros elsewhere. Leading
    dimensions of f and s are a batch (as in JAX); dtypes promote.

    Example:
        >>> core.scipy.linalg.leslie(jnp.array([0.5, 2.0, 1.0]), jnp.array([0.25, 0.75]))
        Array([[0.5 , 2.  , 1.  ],
               [0.25, 0.  , 0.  ],
               [0.  , 0.75, 0.  ]], dtype=float32)
    """
    check_arraylike("leslie", f, s)
    f, s = promote_dtypes(jnp.atleast_1d(jnp.asarray(f)), jnp.atleast_1d(jnp.asarray(s)))
    n = f.shape[-1]
    if n < 2 or s.shape[-1] != n - 1:
        raise ValueError(f"leslie: `f` must have shape (..., n) with n >= 2 and `s` shape (..., n - 1); got f "
                         f"{_short(f)} and s {_short(s)}.")
    batch = broadcast_shapes(f.shape[:-1], s.shape[:-1])
    values = jnp.concatenate([jnp.broadcast_to(f, batch + (n,)), jnp.broadcast_to(s, batch + (n - 1,))], axis=-1)
    index = np.full((n, n), _ZERO)
    index[0] = np.arange(n)
    index[np.arange(1, n), np.arange(n - 1)] = n + np.arange(n - 1)
    return _gather(values, index)


def _monic(name, a, shortest):
    """Polynomial coefficients (..., N), highest degree first, divided by the leading one."""
    check_arraylike(name, a)
    (a,) = promote_dtypes_inexact(jnp.atleast_1d(jnp.asarray(a)))
    if a.shape[-1] < shortest:
        raise ValueError(f"{name}: `a` must hold at least {shortest} coefficients along its last axis; "
                         f"got {_short(a)}.")
    # a zero leading coefficient gives inf/NaN (SciPy raises; JAX, tracing, cannot look)
    return a / a[..., :1]


def companion(a):
    """The companion matrix of the polynomial with coefficients `a` (..., N), highest degree
    first, N >= 2, as `scipy.linalg.companion`: (N - 1, N - 1) with first row -a[1:] / a[0] and
    ones on the first subdiagonal; its eigenvalues are the polynomial's roots. Leading dimensions
    are a batch; integers become floats; a[0] == 0 gives inf/NaN (as in JAX).

    Example:
        >>> core.scipy.linalg.companion(jnp.array([1.0, -10.0, 31.0, -30.0]))
        Array([[ 10., -31.,  30.],
               [  1.,   0.,   0.],
               [  0.,   1.,   0.]], dtype=float32)
    """
    a = _monic("companion", a, 2)
    m = a.shape[-1] - 1
    index = np.full((m, m), _ZERO)
    index[0] = np.arange(1, m + 1)
    index[np.arange(1, m), np.arange(m - 1)] = _ONE
    return _gather(-a, index)


def fiedler(a):
    """The symmetric Fiedler matrix |a_i - a_j| of `a` (..., n), as `scipy.linalg.fiedler`
    (leading dimensions are a batch).

    Example:
        >>> core.scipy.linalg.fiedler(jnp.array([1, 4, 12]))
        Array([[ 0,  3, 11],
               [ 3,  0,  8],
               [11,  8,  0]], dtype=int32)
    """
    check_arraylike("fiedler", a)
    a = jnp.atleast_1d(jnp.asarray(a))
    return jnp.abs(a[..., :, None] - a[..., None, :])


def _fiedler_companion_index(n):
    """Where each coefficient goes in the (n, n) Fiedler companion matrix of a monic polynomial of
    degree n (Fiedler 2003): -a[1] and 1 start the first column; row 2k holds -a[2k+1] left of
    the diagonal (k >= 1) and -a[2k+2] right of it, with a 1 two columns further right; row 2k+1
    holds a 1 two columns left of the diagonal (k >= 1)."""
    index = np.full((n, n), _ZERO)
    if n > 0:
        index[0, 0] = 1
    if n > 1:
        index[1, 0] = _ONE
    for i in range(0, n, 2):
        if i >= 2:
            index[i, i - 1] = i + 1
        if i + 1 < n:
            index[i, i + 1] = i + 2
        if i + 2 < n:
            index[i, i + 2] = _ONE
        if i + 3 < n:
            index[i + 3, i + 1] = _ONE
    return index


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients `a` (..., N), highest
    degree first, as `scipy.linalg.fiedler_companion`: a pentadiagonal (N - 1, N - 1) matrix whose
    eigenvalues are the polynomial's roots. Leading dimensions are a batch; N == 1 gives a (0, 0)
    matrix; integers become floats; a[0] == 0 gives inf/NaN (as in JAX).

    Example:
        >>> core.scipy.linalg.fiedler_companion(jnp.array([1.0, -16.0, 86.0, -176.0, 105.0]))
        Array([[  16.,  -86.,    1.,    0.],
               [   1.,    0.,    0.,    0.],
               [   0.,  176.,    0., -105.],
               [   0.,    1.,    0.,    0.]], dtype=float32)
    """
    a = _monic("fiedler_companion", a, 1)
    return _gather(-a, _fiedler_companion_index(a.shape[-1] - 1))


_CONVOLUTION_MODES = ("full", "same", "valid")


def convolution_matrix(a, n, mode="full"):
    """The matrix A with `A @ v == jnp.convolve(a, v, mode)` for every v of length `n`, as
    `scipy.linalg.convolution_matrix`: (m + n - 1, n) for "full", (max(m, n), n) for "same" and
    (max(m, n) - min(m, n) + 1, n) for "valid", where m is a's length. Leading dimensions of `a`
    are a batch.

    Example:
        >>> core.scipy.linalg.convolution_matrix(jnp.array([1, 2]), 3, "same")
        Array([[1, 0, 0],
               [2, 1, 0],
               [0, 2, 1]], dtype=int32)
    """
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"convolution_matrix: `n` must be a positive integer; got {n}.")
    if mode not in _CONVOLUTION_MODES:
        raise ValueError(f"convolution_matrix: `mode` must be one of {_CONVOLUTION_MODES}; got {mode!r}.")
    check_arraylike("convolution_matrix", a)
    a = _vector("convolution_matrix", a, "a")
    m = a.shape[-1]
    if m == 0:
        raise ValueError(f"convolution_matrix: `a` must hold at least one value; got {_short(a)}.")
    # the full matrix has a[i - j] at (i, j) where 0 <= i - j < m; "same" and "valid" keep the
    # rows np.convolve keeps: trim = min(m, n) - 1 rows go, split between both ends
    lag = np.arange(m + n - 1)[:, None] - np.arange(n)[None, :]
    index = np.where((lag >= 0) & (lag < m), lag, _ZERO)
    trim = min(m, n) - 1
    first = {"full": 0, "same": trim // 2, "valid": trim}[mode]
    last = {"full": 0, "same": trim - trim // 2, "valid": trim}[mode]
    return _gather(a, index[first:m + n - 1 - last])

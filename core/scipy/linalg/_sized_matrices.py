"""Matrices given by their size alone: hilbert, invhilbert, pascal, invpascal, helmert, hadamard, dft.

Their entries depend only on the static size `n`, so they are computed on the host, integers in
exact arithmetic (Python ints: binomial coefficients do not overflow), then rounded to the result
dtype; under jit they are constants. JAX instead evaluates binomials as exp(lgamma(..)),
so its `pascal(3)` is 0.99999905 where the entry is 1; ours are the correctly rounded values, and
`pascal` follows the default float dtype (float64 with x64 on), as `invpascal` does in JAX.
"""
import math
import operator

import numpy as np

from ... import dtypes
from ... import numpy as jnp


def _size(name, n):
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"{name}: `n` must be a non-negative integer; got {n}.")
    return n


def _float(table):
    """A host float64 table as an Array of the default float dtype."""
    return jnp.asarray(table, dtypes.default_float_dtype())


def _exact(table, n):
    """An (n, n) list of lists of Python ints as float64 (exact below 2^53)."""
    return np.array(table, dtype=object).reshape(n, n).astype(np.float64)


def hilbert(n):
    """The Hilbert matrix H[i, j] = 1 / (i + j + 1) of order `n`, as `scipy.linalg.hilbert`
    (default float dtype).

    Example:
        >>> core.scipy.linalg.hilbert(3)
        Array([[1.        , 0.5       , 0.33333334],
               [0.5       , 0.33333334, 0.25      ],
               [0.33333334, 0.25      , 0.2       ]], dtype=float32)
    """
    n = _size("hilbert", n)
    i = np.arange(n)
    return _float(1.0 / (i[:, None] + i[None, :] + 1.0))


def invhilbert(n):
    """The inverse of the Hilbert matrix of order `n`, as `scipy.linalg.invhilbert` (default float
    dtype; SciPy's `exact=True` is not offered, as in JAX). Its entries are integers,
    (-1)^(i+j) (i+j+1) C(n+i, n-j-1) C(n+j, n-i-1) C(i+j, i)^2, computed exactly, then rounded;
    they grow fast (float32 holds them exactly up to n = 4, float64 up to n = 13 or so).

    Example:
        >>> core.scipy.linalg.invhilbert(3)
        Array([[   9.,  -36.,   30.],
               [ -36.,  192., -180.],
               [  30., -180.,  180.]], dtype=float32)
    """
    n = _size("invhilbert", n)
    table = [[(-1) ** (i + j) * (i + j + 1) * math.comb(n + i, n - j - 1) * math.comb(n + j, n - i - 1)
              * math.comb(i + j, i) ** 2 for j in range(n)] for i in range(n)]
    return _float(_exact(table, n))


_PASCAL_KINDS = ("symmetric", "lower", "upper")


def _pascal_kind(name, kind):
    kind = "symmetric" if kind is None else kind
    if kind not in _PASCAL_KINDS:
        raise ValueError(f"{name}: `kind` must be one of {_PASCAL_KINDS} (or None); got {kind!r}.")
    return kind


def pascal(n, kind=None):
    """The Pascal matrix of order `n`, as `scipy.linalg.pascal`: binomial coefficients C(i, j) in
    the "lower" triangular kind, its transpose for "upper", and C(i + j, i) for "symmetric" (the
    default; lower @ upper). Exact integers rounded to the default float dtype (SciPy gives
    uint64; JAX approximates through lgamma).

    Example:
        >>> core.scipy.linalg.pascal(4)
        Array([[ 1.,  1.,  1.,  1.],
               [ 1.,  2.,  3.,  4.],
               [ 1.,  3.,  6., 10.],
               [ 1.,  4., 10., 20.]], dtype=float32)
    """
    n = _size("pascal", n)
    kind = _pascal_kind("pascal", kind)
    if kind == "symmetric":
        return _float(_exact([[math.comb(i + j, i) for j in range(n)] for i in range(n)], n))
    lower = _exact([[math.comb(i, j) for j in range(n)] for i in range(n)], n)
    return _float(lower if kind == "lower" else lower.T)


def invpascal(n, kind=None):
    """The inverse of the Pascal matrix of order `n`, as `scipy.linalg.invpascal`: for "lower",
    (-1)^(i-j) C(i, j); for "upper" its transpose; for "symmetric" (default) upper^-1 @ lower^-1,
    whose entries are sum_k (-1)^(i+j) C(k, i) C(k, j). Exact integers rounded to the
    default float dtype (SciPy's `exact` is not offered, as in JAX).

    Example:
        >>> core.scipy.linalg.invpascal(3)
        Array([[ 3., -3.,  1.],
               [-3.,  5., -2.],
               [ 1., -2.,  1.]], dtype=float32)
    """
    n = _size("invpascal", n)
    kind = _pascal_kind("invpascal", kind)
    lower = [[(-1) ** (i - j) * math.comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "symmetric":
        table = [[sum(lower[k][i] * lower[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
        return _float(_exact(table, n))
    lower = _exact(lower, n)
    return _float(lower if kind == "lower" else lower.T)


def helmert(n, full=False):
    """The Helmert matrix of order `n`, as `scipy.linalg.helmert`: row k - 1 (k = 1 .. n - 1) is
    (1, ..., 1, -k, 0, ..., 0) / sqrt(k (k + 1)) with k ones, orthonormal contrasts; `full=True`
    puts the row 1 / sqrt(n) first, making an orthogonal (n, n) matrix. Default float dtype.

    Example:
        >>> core.scipy.linalg.helmert(3)
        Array([[ 0.70710677, -0.70710677,  0.        ],
               [ 0.4082483 ,  0.4082483 , -0.8164966 ]], dtype=float32)
    """
    n = _size("helmert", n)
    if n < 1:
        raise ValueError(f"helmert: `n` must be a positive integer; got {n}.")
    i = np.arange(n)
    k = i[1:, None]
    rows = np.where(i[None, :] < k, 1.0, np.where(i[None, :] == k, -k, 0.0)) / np.sqrt(k * (k + 1.0))
    if full:
        rows = np.concatenate([np.full((1, n), 1.0 / np.sqrt(n)), rows])
    return _float(rows)


def hadamard(n, dtype=int):
    """The Sylvester-construction Hadamard matrix of order `n` (a power of 2), as
    `scipy.linalg.hadamard`: entries +-1 with H @ H.T == n I. `dtype` defaults to the default
    integer dtype.

    Example:
        >>> core.scipy.linalg.hadamard(4)
        Array([[ 1,  1,  1,  1],
               [ 1, -1,  1, -1],
               [ 1,  1, -1, -1],
               [ 1, -1, -1,  1]], dtype=int32)
    """
    n = operator.index(n)
    if n < 1 or n & (n - 1):
        raise ValueError(f"hadamard: `n` must be a positive power of 2; got {n}.")
    dtype = dtypes.check_user_dtype(dtype, "hadamard")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:  # H_2m = [[H_m, H_m], [H_m, -H_m]]
        h = np.block([[h, h], [h, -h]])
    return jnp.asarray(h, dtype)


_DFT_SCALES = (None, "sqrtn", "n")


def dft(n, scale=None, *, dtype=None):
    """The (n, n) discrete Fourier transform matrix W[i, j] = exp(-2 pi i ij / n), as
    `scipy.linalg.dft` (`W @ x == jnp.fft.fft(x)`); `scale` "sqrtn" divides by sqrt(n) (unitary),
    "n" by n. `dtype` is complex, by default the default complex dtype. The exponent is reduced
    mod n before the exponential, so every entry is a correctly rounded root of unity.

    Example:
        >>> x = jnp.array([1.0, 2.0, 0.0, -1.0])
        >>> jnp.allclose(core.scipy.linalg.dft(4) @ x, jnp.fft.fft(x))
        Array(True, dtype=bool)
    """
    n = _size("dft", n)
    if scale not in _DFT_SCALES:
        raise ValueError(f"dft: `scale` must be None, 'sqrtn' or 'n'; got {scale!r}.")
    dtype = dtypes.default_complex_dtype() if dtype is None else dtypes.check_user_dtype(dtype, "dft")
    if not dtypes.is_complex(dtype):
        raise ValueError(f"dft: `dtype` must be a complex dtype; got {np.dtype(dtype).name}.")
    i = np.arange(n)
    w = np.exp(-2j * np.pi * ((i[:, None] * i[None, :]) % max(n, 1)) / max(n, 1))
    if scale == "sqrtn":
        w = w / np.sqrt(n)
    elif scale == "n":
        w = w / n
    return jnp.asarray(w, dtype)

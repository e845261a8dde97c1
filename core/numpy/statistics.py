"""Covariance and correlation matrices, `cov` and `corrcoef`, as NumPy has them: variables in rows
(or columns with `rowvar=False`), `ddof`/`bias`, frequency and analytic weights.

Integer inputs give the default float dtype (float32 unless x64 is on), as in JAX. NumPy checks
that `fweights` are non-negative integers; that needs their values, so, as JAX, we check only
their dtype and shape (the values may be traced).
"""
from .. import dtypes
from .. import lax
from ._util import asarray_operand, check_arraylike, promote_dtypes_inexact
from . import ufuncs as _u
from . import reductions as _r
from . import manipulation as _m
from . import creation as _c
from . import products as _p

__all__ = ["cov", "corrcoef"]


def _variables(name, x, rowvar):
    x = asarray_operand(x)
    if x.ndim > 2:
        raise ValueError(f"{name}: m has more than 2 dimensions (shape {x.shape}); pass a 1-D or 2-D array")
    x = _m.atleast_2d(x)
    if not rowvar and x.shape[0] != 1:
        x = _m.transpose(x)
    return x


def _weights(name, w, n, what, integer):
    check_arraylike(name, w)
    w = asarray_operand(w)
    if w.ndim != 1 or w.shape[0] != n:
        raise ValueError(f"{name}: {what} must be 1-D with one weight per observation ({n}), got shape {w.shape}")
    if integer and not (dtypes.is_int(w.dtype) or dtypes.is_bool(w.dtype)):
        raise TypeError(f"{name}: fweights must be integers (frequencies), got {w.dtype}")
    return w


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of `m` (and of `y`, stacked below),
    observations in the columns (swapped by `rowvar=False`), normalized by N - 1 (N with
    `bias=True`, N - `ddof` if given), with integer `fweights` and analytic `aweights`.

    Example:
        >>> jnp.cov(jnp.array([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        Array([[ 1., -1.],
               [-1.,  1.]], dtype=float32)
    """
    check_arraylike("cov", m)
    if y is not None:
        check_arraylike("cov", y)
    if ddof is not None and ddof != int(ddof):
        raise ValueError(f"cov: ddof must be an integer, got {ddof!r}")
    (x,) = promote_dtypes_inexact(_variables("cov", m, rowvar))
    if y is not None:
        x, yy = promote_dtypes_inexact(x, _variables("cov", y, rowvar))
        x = _m.concatenate([x, yy], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _weights("cov", fweights, n, "fweights", True)
    if aweights is not None:
        aw = _weights("cov", aweights, n, "aweights", False)
        w = aw if w is None else _u.multiply(w, aw)
    if w is None:
        avg = _r.mean(x, axis=1)
        norm = n - ddof
    else:
        x, w = promote_dtypes_inexact(x, w)
        avg, w_sum = _r.average(x, axis=1, weights=w, returned=True)
        w_sum = w_sum[0]
        if ddof == 0:
            norm = w_sum
        elif aweights is None:
            norm = _u.subtract(w_sum, ddof)
        else:
            aw = asarray_operand(aweights).astype(w.dtype)
            norm = _u.subtract(w_sum, _u.divide(_u.multiply(ddof, _r.sum(_u.multiply(w, aw))), w_sum))
    xc = _u.subtract(x, avg[:, None])
    xw = xc if w is None else _u.multiply(xc, w)
    c = _u.divide(_p.matmul(xc, _u.conjugate(_m.transpose(xw))), norm)
    return _m.squeeze(c)


def corrcoef(x, y=None, rowvar=True):
    """The Pearson correlation coefficients `cov[i, j] / sqrt(cov[i, i] cov[j, j])` of the variables
    in the rows of `x` (and `y`), clipped to [-1, 1] (real and imaginary parts separately).

    Example:
        >>> jnp.corrcoef(jnp.array([[0.0, 1.0, 2.0], [4.0, 2.0, 0.0]]))
        Array([[ 1., -1.],
               [-1.,  1.]], dtype=float32)
    """
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return _u.divide(c, c)  # NumPy's value too: 1, or nan for a constant variable
    d = _c.diag(c)
    std = _u.sqrt(_u.real(d)).astype(c.dtype)
    c = _u.divide(_u.divide(c, std[:, None]), std[None, :])
    re = _u.clip(_u.real(c), -1, 1)
    if dtypes.is_complex(c.dtype):
        return lax.complex(re, _u.clip(_u.imag(c), -1, 1))
    return re

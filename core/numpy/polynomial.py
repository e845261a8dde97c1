"""NumPy's legacy polynomial functions over coefficient arrays, highest power first: `polyval`,
`polyfit`, `roots`, `vander`, `poly`, `polyadd`, `polysub`, `polymul`, `polyder`, `polyint`.

All are built from lax operations with static shapes, so they run under jit and differentiate,
except where an output's shape depends on values: `roots` is the eigenvalues of the companion
matrix (`linalg.eigvals`); its default `strip_zeros=True` strips zeros from concrete coefficients
as NumPy does, while `strip_zeros=False` runs under jit as JAX's (leading zeros give NaN roots). It
returns complex roots as JAX does (NumPy returns a real array when every root is real). `poly` of a
square matrix takes its eigenvalues eagerly.
"""
import numpy as np

from .. import dtypes
from .. import lax
from ..errors import ConcretizationTypeError
from ..trace import Tracer
from ._util import asarray_operand, check_arraylike, promote_dtypes, promote_dtypes_inexact
from . import ufuncs as _u
from . import reductions as _r
from . import manipulation as _m
from . import products as _p
from . import linalg as _linalg
from . import signal as _signal
from . import creation as _c
from . import indexing as _indexing
from . import sorting as _sort

__all__ = ["vander", "polyval", "polyfit", "roots", "poly", "polyadd", "polysub", "polymul", "polyder",
           "polyint", "polydiv"]


def _coefficients(name, p):
    check_arraylike(name, p)
    p = asarray_operand(p)
    if p.ndim != 1:
        raise ValueError(f"{name}: the coefficients must be a 1-D array (highest power first), got shape {p.shape}")
    return p


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of the 1-D `x`: columns `x**(N-1), ..., x, 1` (`N` defaults to
    `len(x)`; reversed with `increasing=True`).

    Example:
        >>> jnp.vander(jnp.array([1, 2, 3]), 3)
        Array([[1, 1, 1],
               [4, 2, 1],
               [9, 3, 1]], dtype=int32)
    """
    check_arraylike("vander", x)
    x = asarray_operand(x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be a one-dimensional array, got shape {x.shape}")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise ValueError(f"vander: N must be non-negative, got {N}")
    if dtypes.is_bool(x.dtype):
        x = x.astype(dtypes.int32)
    # repeated products, not power(x, k): exact for integers, and a derivative that is finite at
    # x = 0 (d/dx x**0 through pow would be 0 * inf there)
    columns = []
    col = _c.ones_like(x)
    for _ in range(n):
        columns.append(col)
        col = _u.multiply(col, x)
    if not increasing:
        columns = columns[::-1]
    if not columns:
        return _c.zeros((x.shape[0], 0), x.dtype)
    return _m.stack(columns, axis=1)


def polyval(p, x, *, unroll=16):
    """The polynomial with coefficients `p` (highest power first) at `x`, by Horner's rule:
    `p[0] * x**(N-1) + ... + p[N-1]`. (`unroll` is accepted for JAX compatibility; the loop is
    always unrolled, since the degree is static.)

    Example:
        >>> jnp.polyval(jnp.array([3.0, 0.0, 1.0]), jnp.array([1.0, 2.0]))
        Array([ 4., 13.], dtype=float32)
    """
    p = _coefficients("polyval", p)
    check_arraylike("polyval", x)
    p, x = promote_dtypes(p, asarray_operand(x))
    y = _c.zeros_like(x)
    for i in range(p.shape[0]):
        y = _u.add(_u.multiply(y, x), p[i])
    return y


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree `deg` through the points (`x`, `y`) (`y` may be 2-D,
    one fit per column), highest power first; optional weights `w` multiply the residuals. With
    `full=True` also returns the residual sums of squares (always, as JAX's lstsq), the rank, the
    singular values and `rcond`; with `cov=True` (or 'unscaled') the covariance of the estimates.

    Example:
        >>> jnp.round(jnp.polyfit(jnp.array([0.0, 1.0, 2.0, 3.0]), jnp.array([1.0, 3.0, 5.0, 7.0]), 1), 4)
        Array([2., 1.], dtype=float32)
    """
    check_arraylike("polyfit", x, y)
    x, y = promote_dtypes_inexact(asarray_operand(x), asarray_operand(y))
    deg = int(deg)
    if deg < 0:
        raise ValueError(f"polyfit: deg must be non-negative, got {deg}")
    if x.ndim != 1:
        raise TypeError(f"polyfit: expected 1-D x, got shape {x.shape}")
    if x.shape[0] == 0:
        raise TypeError("polyfit: expected non-empty x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError(f"polyfit: expected 1-D or 2-D y, got shape {y.shape}")
    if x.shape[0] != y.shape[0]:
        raise TypeError(f"polyfit: expected x and y to have the same length, got {x.shape[0]} and {y.shape[0]}")
    order = deg + 1
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(x.dtype).eps)
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        check_arraylike("polyfit", w)
        (w,) = promote_dtypes_inexact(asarray_operand(w))
        if w.ndim != 1 or w.shape[0] != x.shape[0]:
            raise TypeError(f"polyfit: expected a 1-D w of length {x.shape[0]}, got shape {w.shape}")
        lhs = _u.multiply(lhs, w[:, None])
        rhs = _u.multiply(rhs, w if rhs.ndim == 1 else w[:, None])
    # scale the columns to unit norm: the Vandermonde matrix is badly conditioned otherwise
    scale = _u.sqrt(_r.sum(_u.multiply(lhs, lhs), axis=0))
    lhs = _u.divide(lhs, scale[None, :])
    c, resids, rank, s = _linalg.lstsq(lhs, rhs, rcond)
    c = _u.divide(c, scale if c.ndim == 1 else scale[:, None])
    if full:
        return c, resids, rank, s, rcond
    if cov:
        base = _u.divide(_linalg.inv(_p.matmul(_m.transpose(lhs), lhs)), _p.outer(scale, scale))
        if cov == "unscaled":
            fac = 1
        else:
            if x.shape[0] <= order:
                raise ValueError("polyfit: the number of data points must exceed order to scale the covariance "
                                 "matrix; pass cov='unscaled' or more points")
            fac = _u.divide(resids, x.shape[0] - order)
        if y.ndim == 1:
            return c, _u.multiply(base, fac)
        return c, _u.multiply(base[:, :, None], fac)
    return c


def _companion_roots(p):
    """The eigenvalues of the companion matrix of `p` (1-D, leading coefficient non-zero): the
    roots of the polynomial, complex, in LAPACK's order. Traceable (static shapes only)."""
    n = p.shape[0] - 1
    if n < 1:
        return _c.zeros((0,), np.result_type(p.dtype, np.complex64))
    # first row -p[1:] / p[0], then the shifted identity [I | 0] below it
    first = lax.reshape(_u.negative(p[1:]) / p[0], (1, n))
    return _linalg.eigvals(_m.concatenate([first, _c.eye(n - 1, n, dtype=p.dtype)], axis=0))


def _roots_leading_zeros_nan(p):
    """JAX's `roots(p, strip_zeros=False)`: the number of leading zeros k is traced, so the output
    keeps the length len(p) - 1; the leading zeros are rolled to the end (each adds a zero root of
    the rolled polynomial), the zero roots sorted last, and the last k set to NaN."""
    k = _r.argmin(p == 0)  # the first non-zero coefficient (0 when every coefficient is zero)
    found = _companion_roots(_m.roll(p, -k))
    n = found.shape[0]
    if n == 0:
        return found
    zeros_last = _sort.argsort(found == 0, stable=True)
    found = _indexing.take(found, zeros_last)
    nan = np.array(complex(np.nan, np.nan), found.dtype)
    return _indexing.where(_c.arange(n) < n - k, found, nan)


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients `p` (highest power first), as complex numbers:
    the eigenvalues of its companion matrix (complex64 for 32-bit input, as JAX).

    With `strip_zeros=True` (the default) leading zeros are stripped and trailing zeros give zero
    roots, as in NumPy; the output's length depends on the values, so the coefficients must be
    concrete (outside jit, vmap and grad). With `strip_zeros=False` it runs under any
    transformation, as JAX's does: the output has length len(p) - 1 and each leading zero yields a
    NaN root instead of being stripped.

    Example:
        >>> r = jnp.roots(jnp.array([1.0, -3.0, 2.0]))
        >>> np.sort_complex(np.asarray(r))
        array([1.+0.j, 2.+0.j], dtype=complex64)
        >>> r = core.jit(lambda p: jnp.roots(p, strip_zeros=False))(jnp.array([0.0, 1.0, -1.0]))
        >>> np.asarray(r)
        array([ 1. +0.j, nan+nanj], dtype=complex64)
    """
    p = _coefficients("roots", p)
    (p,) = promote_dtypes_inexact(p)
    if not strip_zeros:
        return _roots_leading_zeros_nan(p)
    if isinstance(p, Tracer):
        raise ConcretizationTypeError(
            f"jnp.roots(p) with strip_zeros=True needs concrete coefficients (got a traced "
            f"{p.dtype}{list(p.shape)}): the number of leading zeros it strips fixes the output's length. "
            "Under jit/vmap/grad pass strip_zeros=False (leading zeros then give NaN roots, as in JAX), "
            "or call it outside the transformation.")
    nonzero = np.flatnonzero(np.asarray(p))
    if nonzero.size == 0:
        return _c.zeros((0,), np.result_type(p.dtype, np.complex64))
    trailing = p.shape[0] - int(nonzero[-1]) - 1
    found = _companion_roots(p[int(nonzero[0]):int(nonzero[-1]) + 1])
    return _m.concatenate([found, _c.zeros((trailing,), found.dtype)])


def poly(seq_of_zeros):
    """The coefficients (highest power first) of the monic polynomial with the given roots, or of
    the characteristic polynomial of a square matrix (from its eigenvalues; eager only then).

    Example:
        >>> jnp.poly(jnp.array([1.0, 2.0]))
        Array([ 1., -3.,  2.], dtype=float32)
    """
    check_arraylike("poly", seq_of_zeros)
    z = asarray_operand(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        if isinstance(z, Tracer):
            raise TypeError("jnp.poly of a matrix needs its eigenvalues, which run eagerly only; pass the roots")
        z = asarray_operand(np.linalg.eigvals(np.asarray(z)).astype(np.result_type(z.dtype, np.complex64)))
    elif z.ndim != 1:
        raise ValueError(f"poly: input must be 1-D or a non-empty square 2-D array, got shape {z.shape}")
    (z,) = promote_dtypes_inexact(z)
    a = _c.ones((1,), z.dtype)
    for k in range(z.shape[0]):
        a = _signal.convolve(a, _m.stack([_c.ones((), z.dtype), _u.negative(z[k])]), mode="full")
    if dtypes.is_complex(a.dtype) and not isinstance(z, Tracer):
        # conjugate pairs give real coefficients: NumPy returns them real
        zs = np.asarray(z)
        if np.array_equal(np.sort_complex(zs), np.sort_complex(np.conj(zs))):
            a = _u.real(a)
    return a


def _pad_front(a, n):
    return a if a.shape[0] == n else _m.concatenate([_c.zeros((n - a.shape[0],), a.dtype), a])


def polyadd(a1, a2):
    """The sum of two polynomials (coefficients highest power first, aligned at the constant term).

    Example:
        >>> jnp.polyadd(jnp.array([1, 2]), jnp.array([1, 0, 0]))
        Array([1, 1, 2], dtype=int32)
    """
    a1, a2 = promote_dtypes(_coefficients("polyadd", a1), _coefficients("polyadd", a2))
    n = max(a1.shape[0], a2.shape[0])
    return _u.add(_pad_front(a1, n), _pad_front(a2, n))


def polysub(a1, a2):
    """The difference of two polynomials (coefficients highest power first).

    Example:
        >>> jnp.polysub(jnp.array([1, 2]), jnp.array([1, 0, 0]))
        Array([-1,  1,  2], dtype=int32)
    """
    a1, a2 = promote_dtypes(_coefficients("polysub", a1), _coefficients("polysub", a2))
    n = max(a1.shape[0], a2.shape[0])
    return _u.subtract(_pad_front(a1, n), _pad_front(a2, n))


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (the convolution of their coefficients). As in JAX, leading
    zeros are kept unless `trim_leading_zeros=True` (which needs concrete values).

    Example:
        >>> jnp.polymul(jnp.array([1.0, 1.0]), jnp.array([1.0, -1.0]))
        Array([ 1.,  0., -1.], dtype=float32)
    """
    a1, a2 = promote_dtypes(_coefficients("polymul", a1), _coefficients("polymul", a2))
    if trim_leading_zeros:
        a1, a2 = (_trim_leading(a, "polymul") for a in (a1, a2))
    if a1.shape[0] == 0 or a2.shape[0] == 0:
        return _c.zeros((0,), a1.dtype)
    return _signal.convolve(a1, a2, mode="full")


def _trim_leading(a, name):
    if isinstance(a, Tracer):
        raise TypeError(f"jnp.{name}(trim_leading_zeros=True) needs concrete coefficients; leave it False under jit")
    nz = np.flatnonzero(np.asarray(a))
    return a[nz[0]:] if nz.size else a[:1]


def polyder(p, m=1):
    """The coefficients of the `m`-th derivative of the polynomial `p` (highest power first).

    Example:
        >>> jnp.polyder(jnp.array([1.0, 1.0, 1.0, 1.0]))
        Array([3., 2., 1.], dtype=float32)
    """
    p = _coefficients("polyder", p)
    if m < 0:
        raise ValueError(f"polyder: the order of the derivative must be non-negative, got m={m}")
    for _ in range(int(m)):
        n = p.shape[0]
        if n <= 1:
            return p[:0]  # NumPy's value: the derivative of a constant has no coefficients
        p = _u.multiply(p[:-1], lax.rev(_c.arange(1, n), (0,)).astype(p.dtype))
    return p


def polyint(p, m=1, k=None):
    """The coefficients of an `m`-th antiderivative of `p`, with integration constants `k` (one
    scalar for all steps, or `m` of them, the first for the first integration; zero by default).

    Example:
        >>> jnp.polyint(jnp.array([3.0, 2.0, 1.0]), k=5.0)
        Array([1., 1., 1., 5.], dtype=float32)
    """
    p = _coefficients("polyint", p)
    m = int(m)
    if m < 0:
        raise ValueError(f"polyint: the order of the integral must be non-negative, got m={m}")
    (p,) = promote_dtypes_inexact(p)
    if k is None:
        ks = [0.0] * m
    else:
        check_arraylike("polyint", k)
        kk = asarray_operand(k)
        if kk.ndim == 0:
            ks = [kk] * m
        elif kk.shape == (m,):
            ks = [kk[i] for i in range(m)]
        else:
            raise ValueError(f"polyint: k must be a scalar or have one constant per integration ({m}), got shape "
                             f"{kk.shape}")
    for i in range(m):
        n = p.shape[0]
        divisors = lax.rev(_c.arange(1, n + 1), (0,)).astype(p.dtype) if n else _c.zeros((0,), p.dtype)
        const = _m.reshape(asarray_operand(ks[i]).astype(p.dtype), (1,))
        p = _m.concatenate([_u.divide(p, divisors), const])
    return p


def polydiv(u, v, *, trim_leading_zeros=False):
    """The quotient and remainder of polynomial division `u / v` (coefficients highest power
    first). As in JAX, the remainder keeps `len(u)` coefficients (its leading ones zero) unless
    `trim_leading_zeros=True` (which needs concrete values); NumPy trims them.

    Example:
        >>> q, r = jnp.polydiv(jnp.array([1.0, -3.0, 2.0]), jnp.array([1.0, -1.0]))
        >>> q, r
        (Array([ 1., -2.], dtype=float32), Array([0., 0., 0.], dtype=float32))
    """
    u, v = promote_dtypes_inexact(_coefficients("polydiv", u), _coefficients("polydiv", v))
    if v.shape[0] == 0:
        raise ValueError("polydiv: the divisor v has no coefficients")
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = _u.divide(1.0, v[0])
    q = _c.zeros((max(m - n + 1, 1),), u.dtype)
    r = u
    for k in range(0, m - n + 1):
        d = _u.multiply(scale, r[k])
        q = q.at[k].set(d)
        r = r.at[k:k + n + 1].add(_u.negative(_u.multiply(d, v)))
    if trim_leading_zeros:
        if isinstance(r, Tracer):
            raise TypeError("jnp.polydiv(trim_leading_zeros=True) needs concrete values; leave it False under jit")
        rv = np.asarray(r)
        tol = float(np.sqrt(np.finfo(rv.dtype).eps)) * max(1.0, float(np.abs(rv).max(initial=0.0)))
        keep = np.flatnonzero(np.abs(rv) > tol)
        r = r[keep[0]:] if keep.size else r[-1:]
    return q, r

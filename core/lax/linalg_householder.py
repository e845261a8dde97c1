"""Householder reflectors in `lax.linalg`: `hessenberg` (LAPACK gehrd), `householder_product`
(orgqr/ungqr: the reflectors multiplied out into Q) and `ormqr` (ormqr/unmqr: Q applied to a
matrix without forming Q).

The shared contract of `core/lax/linalg.py` holds (leading batch dimensions, column-major matrix
layouts, NaN where a kernel reports failure). None of the three has a derivative, as in JAX.
A reflector set is what `geqrf` leaves: column j of `a` below the diagonal holds v_j (with an
implicit 1 on the diagonal) and H_j = I - taus[j] v_j v_j^H; Q = H_0 H_1 ... H_{k-1}.
"""
import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import ad, batching, lowering
from ..runtime import custom_calls
from ._base import FLOAT_OR_COMPLEX, check_dtype_accepted, standard_primitive
from .linalg import _check_matrix, _custom_call, _layout, _leading_batch_rule, _nan_where_failed

__all__ = ["hessenberg", "householder_product", "ormqr", "hessenberg_p", "householder_product_p", "ormqr_p"]


def _same_dtype(name, *avals):
    check_dtype_accepted(name, avals[0].dtype, FLOAT_OR_COMPLEX, 0)
    if any(a.dtype != avals[0].dtype for a in avals):
        raise TypeError(f"{name} requires operands of one dtype, got "
                        f"{', '.join(dtypes.short_name(a.dtype) for a in avals)}.")
    return avals[0].dtype


def _check_batch(name, *avals):
    batches = [a.shape[:a.ndim - r] for a, r in avals]
    if any(bt != batches[0] for bt in batches):
        raise TypeError(f"{name} requires equal batch (leading) dimensions, got shapes "
                        f"{', '.join(str(a.shape) for a, _ in avals)}.")


def _batch_all_at_front(prim):
    """Batching for a primitive whose operands share leading batch dimensions: the batch axis of
    every operand moves to the front (unbatched ones are broadcast)."""
    def rule(vals, dims, **params):
        size = batching.batch_size(vals, dims)
        vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims, strict=True)]
        out = prim.bind(*vals, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
    return rule


def _no_derivative(name):
    def rule(primals, tangents, **_):
        # JAX defines none either; say so instead of a missing-rule error
        raise NotImplementedError(f"{name} has no derivative (as in JAX).")
    return rule


# ----- hessenberg -------------------------------------------------------------------------------

def hessenberg(a):
    """Reduce square matrices to upper Hessenberg form: `(arr, taus)` (as `jax.lax.linalg`).

    Q^H A Q = H with H zero below its first subdiagonal: `arr`'s upper triangle and first
    subdiagonal hold H, the entries below hold the Householder reflectors whose product is Q,
    and `taus` (..., n-1) their scale factors (`householder_product` of them gives Q). LAPACK
    gehrd, CPU only; failure gives NaN; no derivative (as in JAX).

    Example:
        >>> arr, taus = lax.linalg.hessenberg(jnp.array([[1., 2.], [3., 4.]]))
        >>> taus   # a 2x2 matrix is already Hessenberg
        Array([0.], dtype=float32)
    """
    return tuple(hessenberg_p.bind(a))


def _hessenberg_shape_rule(a):
    _check_matrix("hessenberg", a)
    return a.shape, a.shape[:-2] + (max(a.shape[-1] - 1, 0),)


def _hessenberg_dtype_rule(a):
    check_dtype_accepted("hessenberg", a.dtype, FLOAT_OR_COMPLEX)
    return a.dtype, a.dtype


def _hessenberg_lowering(ctx, a):
    b, aval = ctx.b, ctx.avals_in[0]
    arr_aval, taus_aval = ctx.avals_out
    if aval.size == 0:
        return [a, lowering.full_like(b, 0, taus_aval)]
    n = aval.shape[-1]
    target = custom_calls.lapack_target("gehrd", aval.dtype, "hessenberg")
    batch = aval.shape[:-2]
    # gehrd reduces rows/columns low..high (1-based): all of them
    arr, taus, info = _custom_call(b, target, [a], [arr_aval, taus_aval, ShapedArray(batch, np.int32)],
                                   {"low": "1 : i32", "high": f"{n} : i32"}, [_layout(aval.ndim)],
                                   [_layout(aval.ndim), _layout(taus_aval.ndim, False), _layout(len(batch), False)])
    return [_nan_where_failed(b, info, batch, arr, arr_aval), _nan_where_failed(b, info, batch, taus, taus_aval)]


hessenberg_p = standard_primitive("hessenberg", _hessenberg_shape_rule, _hessenberg_dtype_rule,
                                  multiple_results=True)
lowering.register(hessenberg_p, _hessenberg_lowering)
batching.batching_rules[hessenberg_p] = _leading_batch_rule(hessenberg_p)
ad.jvp_rules[hessenberg_p] = _no_derivative("hessenberg")


# ----- householder_product ----------------------------------------------------------------------

def householder_product(a, taus):
    """The product Q = H_0 ... H_{k-1} of Householder reflectors, with `a`'s shape (m, n), m >= n.

    `a` (..., m, n) holds the reflectors below its diagonal (as geqrf, `hessenberg` or
    `tridiagonal` leave them) and `taus` (..., k), k <= n, their scale factors; the result is the
    first n columns of Q. LAPACK orgqr/ungqr, CPU only; no derivative (as in JAX).

    Example:
        >>> q = lax.linalg.householder_product(jnp.array([[1.], [1.]]), jnp.array([1.]))
        >>> q   # I - v v^T with v = (1, 1): first column (0, -1)
        Array([[ 0.],
               [-1.]], dtype=float32)
    """
    return householder_product_p.bind(a, taus)


def _householder_product_shape_rule(a, taus):
    _check_matrix("householder_product", a, square=False)
    m, n = a.shape[-2:]
    if m < n:
        raise TypeError(f"householder_product: the first argument must have at least as many rows as columns, "
                        f"got shape {a.shape}.")
    if taus.ndim != a.ndim - 1 or taus.shape[-1] > min(m, n):
        raise TypeError(f"householder_product: taus must have shape (..., k) with k <= min(m, n) = {min(m, n)} for "
                        f"a of shape {a.shape}, got {taus.shape}.")
    _check_batch("householder_product", (a, 2), (taus, 1))
    return a.shape


def _householder_product_lowering(ctx, a, taus):
    b = ctx.b
    a_aval, taus_aval = ctx.avals_in
    if a_aval.size == 0:
        return lowering.full_like(b, 0, a_aval)
    routine = "ungqr" if dtypes.is_complex(a_aval.dtype) else "orgqr"
    target = custom_calls.lapack_target(routine, a_aval.dtype, "householder_product")
    (q,) = _custom_call(b, target, [a, taus], [a_aval], {},
                        [_layout(a_aval.ndim), _layout(taus_aval.ndim, False)], [_layout(a_aval.ndim)])
    return q


householder_product_p = standard_primitive("householder_product", _householder_product_shape_rule,
                                           lambda a, taus: _same_dtype("householder_product", a, taus))
lowering.register(householder_product_p, _householder_product_lowering)
batching.batching_rules[householder_product_p] = _batch_all_at_front(householder_product_p)
ad.jvp_rules[householder_product_p] = _no_derivative("householder_product")


# ----- ormqr ------------------------------------------------------------------------------------

def ormqr(a, taus, c, *, left=True, transpose=False):
    """Multiply `c` by Q of a QR factorization without forming Q (as `jax.lax.linalg.ormqr`).

    `a` (..., m, n) and `taus` (..., k) are geqrf's reflectors and scale factors; Q is m x m.
    Computes Q @ c (`left`), c @ Q (not `left`), and with `transpose` Q^T (Q^H for complex)
    instead of Q. LAPACK ormqr/unmqr, CPU only; no derivative (as in JAX).

    Example:
        >>> lax.linalg.ormqr(jnp.array([[1.], [1.]]), jnp.array([1.]), jnp.eye(2))   # Q = I - v v^T
        Array([[ 0., -1.],
               [-1.,  0.]], dtype=float32)
    """
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


def _ormqr_shape_rule(a, taus, c, *, left, transpose):
    _check_matrix("ormqr", a, square=False)
    _check_matrix("ormqr", c, square=False)
    m, n = a.shape[-2:]
    if taus.ndim != a.ndim - 1 or taus.shape[-1] > min(m, n):
        raise TypeError(f"ormqr: taus must have shape (..., k) with k <= min(m, n) = {min(m, n)} for a of shape "
                        f"{a.shape}, got {taus.shape}.")
    if left and c.shape[-2] != m:
        raise TypeError(f"ormqr with left=True expects c to have as many rows as the Householder matrix a, got a "
                        f"of shape {a.shape} and c of shape {c.shape}.")
    if not left and c.shape[-1] != m:
        raise TypeError(f"ormqr with left=False expects c to have as many columns as the Householder matrix a has "
                        f"rows, got a of shape {a.shape} and c of shape {c.shape}.")
    _check_batch("ormqr", (a, 2), (taus, 1), (c, 2))
    return c.shape


def _ormqr_lowering(ctx, a, taus, c, *, left, transpose):
    b = ctx.b
    a_aval, taus_aval, c_aval = ctx.avals_in
    if c_aval.size == 0 or taus_aval.shape[-1] == 0:
        return c
    routine = "unmqr" if dtypes.is_complex(a_aval.dtype) else "ormqr"
    target = custom_calls.lapack_target(routine, a_aval.dtype, "ormqr")
    k = taus_aval.shape[-1]
    if a_aval.shape[-1] != k:
        # LAPACK reads exactly k reflector columns
        from .linalg import _slice
        a = _slice(b, a, a_aval, a_aval.shape[:-1] + (k,))
        a_aval = a_aval.update(shape=a_aval.shape[:-1] + (k,))
    (out,) = _custom_call(b, target, [a, taus, c], [c_aval],
                          {"left": "true" if left else "false", "transpose": "true" if transpose else "false"},
                          [_layout(a_aval.ndim), _layout(taus_aval.ndim, False), _layout(c_aval.ndim)],
                          [_layout(c_aval.ndim)])
    return out


ormqr_p = standard_primitive("ormqr", _ormqr_shape_rule, lambda a, taus, c, **_: _same_dtype("ormqr", a, taus, c))
lowering.register(ormqr_p, _ormqr_lowering)
batching.batching_rules[ormqr_p] = _batch_all_at_front(ormqr_p)
ad.jvp_rules[ormqr_p] = _no_derivative("ormqr")

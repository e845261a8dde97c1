"""Linear-algebra primitives (JAX's `lax.linalg`): cholesky, lu, qr, eigh, svd, triangular_solve.

Each lowers to jaxlib's CPU LAPACK kernels, called as typed-FFI custom calls
(`core/runtime/custom_calls.py` registers them on first use). The contract every block shares:

* Operands are matrices in the two trailing dimensions; leading dimensions are a batch, which the
  kernels loop over. LAPACK is column-major, so each call declares column-major layouts for the
  matrix dimensions (`dense<[r-2, r-1, r-3, ..., 0]>`, minor to major) and XLA transposes around it.
* A kernel reports failure per matrix in an `info` output; as in JAX, results of a failed matrix
  become NaN (cholesky of a matrix that is not positive definite, a non-converged eigh or svd).
* Empty matrices (a zero dimension) never reach LAPACK: the lowering builds the trivial answer.

Supported dtypes: float32, float64 (with x64), complex64, complex128.
"""
import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import lowering
from ..interpreters.lowering import i64_array
from ..runtime import custom_calls
from ._base import FLOAT_OR_COMPLEX, aval_of, check_dtype_accepted, standard_primitive

__all__ = ["cholesky", "lu", "qr", "eigh", "svd", "triangular_solve", "symmetrize"]


# ----- helpers shared by the lowerings ------------------------------------------------------------

def _real_dtype(dtype):
    return dtypes.finfo(dtype).dtype if dtypes.is_complex(dtype) else np.dtype(dtype)


def _layout(ndim, matrix=True):
    """A minor-to-major layout attribute: column-major trailing matrix dims, batch dims major."""
    if matrix:
        order = [ndim - 2, ndim - 1] + list(range(ndim - 3, -1, -1))
    else:
        order = list(range(ndim - 1, -1, -1))
    if not order:
        return "dense<> : tensor<0xindex>"
    return f"dense<[{', '.join(map(str, order))}]> : tensor<{len(order)}xindex>"


def _char(c):
    """An FFI enum attribute: LAPACK's option characters travel as `ui8` scalars."""
    return f"{ord(c)} : ui8"


def _custom_call(b, target, operands, results, config, operand_layouts, result_layouts):
    attrs = {
        "call_target_name": f'"{target}"',
        "api_version": "4 : i32",
        "backend_config": "{" + ", ".join(f"{k} = {v}" for k, v in config.items()) + "}",
        "operand_layouts": "[" + ", ".join(operand_layouts) + "]",
        "result_layouts": "[" + ", ".join(result_layouts) + "]",
    }
    outs = b.op("stablehlo.custom_call", list(operands), list(results), attrs)
    return [outs] if isinstance(outs, str) else outs


def _iota(b, shape, dimension, dtype=np.int32):
    return b.op("stablehlo.iota", [], [ShapedArray(shape, dtype)], {"iota_dimension": f"{dimension} : i64"})


def _select(b, pred, x, y, aval):
    return b.op("stablehlo.select", [pred, x, y], [aval])


def _nan_where_failed(b, info, batch, value, aval):
    """`value` where its matrix's `info` is 0, NaN elsewhere (`info` has the `batch` shape)."""
    zero = lowering.full_like(b, 0, ShapedArray(batch, np.int32))
    ok = lowering.compare(b, info, zero, "EQ", ShapedArray(batch, np.int32))
    ok = b.op("stablehlo.broadcast_in_dim", [ok], [ShapedArray(aval.shape, np.bool_)],
              {"broadcast_dimensions": i64_array(range(len(batch)))})
    return _select(b, ok, value, lowering.full_like(b, np.nan, aval), aval)


def _triangle(b, x, aval, lower, k=0):
    """Zero the strict upper (lower=True) or strict lower part of the trailing matrices of `x`;
    `k` shifts the kept diagonal as in numpy.tril/triu."""
    shape, nd = aval.shape, aval.ndim
    rows = _iota(b, shape, nd - 2)
    cols = _iota(b, shape, nd - 1)
    if k:
        rows = b.op("stablehlo.add", [rows, lowering.full_like(b, k, ShapedArray(shape, np.int32))],
                    [ShapedArray(shape, np.int32)])
    keep = lowering.compare(b, rows, cols, "GE" if lower else "LE", ShapedArray(shape, np.int32))
    return _select(b, keep, x, lowering.full_like(b, 0, aval), aval)


def _eye(b, aval):
    """Identity matrices (ones where row == column) broadcast over the batch."""
    shape, nd = aval.shape, aval.ndim
    same = lowering.compare(b, _iota(b, shape, nd - 2), _iota(b, shape, nd - 1), "EQ",
                            ShapedArray(shape, np.int32))
    return _select(b, same, lowering.full_like(b, 1, aval), lowering.full_like(b, 0, aval), aval)


def _slice(b, x, aval, limits):
    out = aval.update(shape=tuple(limits))
    return b.op("stablehlo.slice", [x], [out], {"start_indices": i64_array([0] * aval.ndim),
                                                "limit_indices": i64_array(limits),
                                                "strides": i64_array([1] * aval.ndim)})


def _pad_high(b, x, aval, shape):
    high = [t - s for s, t in zip(aval.shape, shape, strict=True)]
    zero = b.constant(0, aval.dtype, ())
    return b.op("stablehlo.pad", [x, zero], [aval.update(shape=tuple(shape))],
                {"edge_padding_low": i64_array([0] * aval.ndim), "edge_padding_high": i64_array(high),
                 "interior_padding": i64_array([0] * aval.ndim)})


def _conj(b, x, aval):
    if not dtypes.is_complex(aval.dtype):
        return x
    part = aval.update(dtype=_real_dtype(aval.dtype))
    re = b.op("stablehlo.real", [x], [part])
    im = b.op("stablehlo.negate", [b.op("stablehlo.imag", [x], [part])], [part])
    return b.op("stablehlo.complex", [re, im], [aval])


def _check_matrix(name, aval, square=True):
    if aval.ndim < 2:
        raise TypeError(f"{name} requires an operand with at least 2 dimensions (a matrix or a batch of "
                        f"matrices), got shape {aval.shape}.")
    if square and aval.shape[-1] != aval.shape[-2]:
        raise TypeError(f"{name} requires square matrices of shape (..., n, n), got shape {aval.shape}.")


def _inexact_dtype_rule(name):
    def rule(x, **_):
        check_dtype_accepted(name, x.dtype, FLOAT_OR_COMPLEX)
        return x.dtype
    return rule


def symmetrize(x):
    """(x + x^H) / 2 over the trailing two dimensions: the Hermitian part of a square matrix.

    Example: `symmetrize(jnp.array([[1., 2.], [0., 1.]]))` is `[[1., 1.], [1., 1.]]`.
    """
    from . import add, full_like, mul, transpose
    aval = aval_of(x)
    nd = aval.ndim
    xt = transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))
    if dtypes.is_complex(aval.dtype):
        from . import conj
        xt = conj(xt)
    return mul(add(x, xt), full_like(x, 0.5))


# ----- cholesky ---------------------------------------------------------------------------------

def cholesky(x, *, symmetrize_input=True):
    """The lower Cholesky factor L of Hermitian positive-definite matrices: L @ L^H == x.

    With `symmetrize_input` the factorization reads (x + x^H)/2; otherwise only the lower triangle
    of `x`. A matrix that is not positive definite gives a result full of NaN (as in JAX), not an
    error. Example: `lax.linalg.cholesky(jnp.array([[4., 2.], [2., 5.]]))` is `[[2, 0], [1, 2]]`.
    """
    if symmetrize_input:
        x = symmetrize(x)
    return cholesky_p.bind(x)


def _cholesky_shape_rule(x):
    _check_matrix("cholesky", x)
    return x.shape


def _cholesky_lowering(ctx, x):
    b, aval = ctx.b, ctx.avals_in[0]
    if aval.size == 0:
        return lowering.full_like(b, 0, aval)
    target = custom_calls.lapack_target("potrf", aval.dtype, "cholesky")
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, np.int32)
    factor, info = _custom_call(b, target, [x], [aval, info_aval], {"uplo": _char("L")},
                                [_layout(aval.ndim)], [_layout(aval.ndim), _layout(len(batch), False)])
    # potrf leaves the strict upper triangle as it found it
    factor = _triangle(b, factor, aval, lower=True)
    return _nan_where_failed(b, info, batch, factor, aval)


cholesky_p = standard_primitive("cholesky", _cholesky_shape_rule, _inexact_dtype_rule("cholesky"))
lowering.register(cholesky_p, _cholesky_lowering)


# ----- lu ---------------------------------------------------------------------------------------

def lu(x):
    """LU decomposition with partial pivoting: returns `(lu, pivots, permutation)`.

    `lu` holds L (unit diagonal, below) and U (on and above the diagonal); `pivots[i]` is the row
    swapped with row i (0-based, int32) and `permutation` the resulting row order, so that
    `x[..., permutation, :] == L @ U`. Works for rectangular (m, n) matrices.
    Example: `lu, piv, perm = lax.linalg.lu(jnp.array([[1., 2.], [3., 4.]]))`; `perm` is `[1, 0]`.
    """
    return lu_p.bind(x)


def _lu_shape_rule(x):
    _check_matrix("lu", x, square=False)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    return x.shape, batch + (min(m, n),), batch + (m,)


def _lu_dtype_rule(x):
    check_dtype_accepted("lu", x.dtype, FLOAT_OR_COMPLEX)
    return x.dtype, np.dtype(np.int32), np.dtype(np.int32)


def _lu_lowering(ctx, x):
    b, aval = ctx.b, ctx.avals_in[0]
    _, piv_aval, perm_aval = ctx.avals_out
    m = aval.shape[-2]
    if aval.size == 0:
        perm = _iota(b, perm_aval.shape, perm_aval.ndim - 1)
        return [lowering.full_like(b, 0, aval), lowering.full_like(b, 0, piv_aval), perm]
    target = custom_calls.lapack_target("getrf", aval.dtype, "lu")
    batch = aval.shape[:-2]
    factors, ipiv, _ = _custom_call(
        b, target, [x], [aval, piv_aval, ShapedArray(batch, np.int32)], {},
        [_layout(aval.ndim)], [_layout(aval.ndim), _layout(piv_aval.ndim, False), _layout(len(batch), False)])
    # getrf fails only on illegal arguments (info < 0); a singular U (info > 0) is still a valid LU
    pivots = b.op("stablehlo.subtract", [ipiv, lowering.full_like(b, 1, piv_aval)], [piv_aval])
    return [factors, pivots, _pivots_to_permutation(b, pivots, piv_aval, m)]


def _pivots_to_permutation(b, pivots, piv_aval, m):
    """Apply LAPACK's row swaps (row i <-> row pivots[i], in order) to 0..m-1, in a while loop.

    Each step reads and writes the permutation with one-hot masks over the last axis, so batched
    matrices (each with its own pivots) need no gather.
    """
    batch, k = piv_aval.shape[:-1], piv_aval.shape[-1]
    i32 = np.int32
    perm_aval = ShapedArray(batch + (m,), i32)
    scalar = ShapedArray((), i32)
    batch_aval = ShapedArray(batch, i32)
    nb = len(batch)
    perm0 = _iota(b, perm_aval.shape, nb)
    i0 = b.constant(0, i32, ())

    def cond(cb, i, perm, piv):
        limit = cb.constant(k, i32, ())
        return lowering.compare(cb, i, limit, "LT", scalar)

    def pick(bb, vec, vec_aval, index_b):
        """vec[..., index] for a per-batch index, as a masked sum over the last axis."""
        positions = _iota(bb, vec_aval.shape, vec_aval.ndim - 1)
        idx = bb.op("stablehlo.broadcast_in_dim", [index_b], [vec_aval],
                    {"broadcast_dimensions": i64_array(range(nb))})
        hit = lowering.compare(bb, positions, idx, "EQ", vec_aval)
        masked = _select(bb, hit, vec, lowering.full_like(bb, 0, vec_aval), vec_aval)
        zero = bb.constant(0, i32, ())
        region = bb.region([scalar, scalar], lambda rb, a, c: rb.op("stablehlo.add", [a, c], [scalar]))
        return bb.op("stablehlo.reduce", [masked, zero], [batch_aval],
                     {"dimensions": i64_array([nb])}, regions=[region]), hit

    def body(bb, i, perm, piv):
        i_b = bb.op("stablehlo.broadcast_in_dim", [i], [batch_aval], {"broadcast_dimensions": i64_array([])})
        j_b, _ = pick(bb, piv, piv_aval, i_b)
        at_i, hit_i = pick(bb, perm, perm_aval, i_b)
        at_j, hit_j = pick(bb, perm, perm_aval, j_b)
        spread = {"broadcast_dimensions": i64_array(range(nb))}
        at_i = bb.op("stablehlo.broadcast_in_dim", [at_i], [perm_aval], spread)
        at_j = bb.op("stablehlo.broadcast_in_dim", [at_j], [perm_aval], spread)
        perm = _select(bb, hit_j, at_i, perm, perm_aval)
        perm = _select(bb, hit_i, at_j, perm, perm_aval)
        one = bb.constant(1, i32, ())
        return [bb.op("stablehlo.add", [i, one], [scalar]), perm, piv]

    avals = [scalar, perm_aval, piv_aval]
    outs = b.op("stablehlo.while", [i0, perm0, pivots], avals,
                regions=[b.region(avals, cond), b.region(avals, body)])
    return outs[1]


lu_p = standard_primitive("lu", _lu_shape_rule, _lu_dtype_rule, multiple_results=True)
lowering.register(lu_p, _lu_lowering)


# ----- qr ---------------------------------------------------------------------------------------

def qr(x, *, full_matrices=True):
    """QR decomposition: returns `(q, r)` with `q @ r == x`, q orthonormal columns, r upper triangular.

    For x of shape (m, n) and k = min(m, n): q is (m, m) and r (m, n) when `full_matrices`, else
    q is (m, k) and r (k, n). Computed with LAPACK geqrf then orgqr (ungqr for complex), so signs
    follow LAPACK (r's diagonal may be negative), as in JAX.
    Example: `q, r = lax.linalg.qr(jnp.ones((3, 2)), full_matrices=False)`.
    """
    q, r = qr_p.bind(x, full_matrices=bool(full_matrices))
    return q, r


def _qr_shape_rule(x, *, full_matrices):
    _check_matrix("qr", x, square=False)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    k = m if full_matrices else min(m, n)
    return batch + (m, k), batch + (k, n)


def _qr_dtype_rule(x, **_):
    check_dtype_accepted("qr", x.dtype, FLOAT_OR_COMPLEX)
    return x.dtype, x.dtype


def _qr_lowering(ctx, x, *, full_matrices):
    b, aval = ctx.b, ctx.avals_in[0]
    q_aval, r_aval = ctx.avals_out
    m, n = aval.shape[-2:]
    batch = aval.shape[:-2]
    k = min(m, n)
    if aval.size == 0:
        q = _eye(b, q_aval) if q_aval.size else lowering.full_like(b, 0, q_aval)
        return [q, lowering.full_like(b, 0, r_aval)]
    geqrf = custom_calls.lapack_target("geqrf", aval.dtype, "qr")
    orgqr = custom_calls.lapack_target("ungqr" if dtypes.is_complex(aval.dtype) else "orgqr", aval.dtype, "qr")
    tau_aval = ShapedArray(batch + (k,), aval.dtype)
    packed, tau = _custom_call(b, geqrf, [x], [aval, tau_aval], {}, [_layout(aval.ndim)],
                               [_layout(aval.ndim), _layout(tau_aval.ndim, False)])
    # orgqr expands the reflectors stored below the diagonal into q's columns: give it exactly
    # q's column count (drop extra columns when n > q's, zero-pad when full q is wider than n)
    q_cols = q_aval.shape[-1]
    reflectors, refl_aval = packed, aval
    if q_cols < n:
        reflectors = _slice(b, packed, aval, batch + (m, q_cols))
    elif q_cols > n:
        reflectors = _pad_high(b, packed, aval, batch + (m, q_cols))
    refl_aval = aval.update(shape=batch + (m, q_cols))
    (q,) = _custom_call(b, orgqr, [reflectors, tau], [q_aval], {},
                        [_layout(refl_aval.ndim), _layout(tau_aval.ndim, False)], [_layout(q_aval.ndim)])
    r = _triangle(b, packed, aval, lower=False)
    if r_aval.shape != aval.shape:
        r = _slice(b, r, aval, r_aval.shape)
    return [q, r]


qr_p = standard_primitive("qr", _qr_shape_rule, _qr_dtype_rule, multiple_results=True)
lowering.register(qr_p, _qr_lowering)


# ----- eigh -------------------------------------------------------------------------------------

def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True):
    """Eigendecomposition of Hermitian matrices: returns `(v, w)` with `x @ v == v * w`.

    `w` holds the (real) eigenvalues in ascending order, `v[..., :, i]` the unit eigenvector of
    `w[..., i]`. Without `symmetrize_input`, only the `lower` (or upper) triangle of x is read.
    A decomposition that does not converge gives NaN, as in JAX. LAPACK (syevd/heevd) already sorts
    the eigenvalues, so `sort_eigenvalues` is accepted for JAX compatibility only.
    Example: `v, w = lax.linalg.eigh(jnp.array([[2., 1.], [1., 2.]]))`; w is `[1., 3.]`.
    """
    del sort_eigenvalues  # LAPACK's order is already ascending
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(x, lower=bool(lower))
    return v, w


def _eigh_shape_rule(x, *, lower):
    _check_matrix("eigh", x)
    return x.shape, x.shape[:-1]


def _eigh_dtype_rule(x, **_):
    check_dtype_accepted("eigh", x.dtype, FLOAT_OR_COMPLEX)
    return x.dtype, _real_dtype(x.dtype)


def _eigh_lowering(ctx, x, *, lower):
    b, aval = ctx.b, ctx.avals_in[0]
    v_aval, w_aval = ctx.avals_out
    if aval.size == 0:
        return [lowering.full_like(b, 0, v_aval), lowering.full_like(b, 0, w_aval)]
    routine = "heevd" if dtypes.is_complex(aval.dtype) else "syevd"
    target = custom_calls.lapack_target(routine, aval.dtype, "eigh")
    batch = aval.shape[:-2]
    v, w, info = _custom_call(
        b, target, [x], [v_aval, w_aval, ShapedArray(batch, np.int32)],
        {"uplo": _char("L" if lower else "U"), "mode": _char("V")}, [_layout(aval.ndim)],
        [_layout(aval.ndim), _layout(w_aval.ndim, False), _layout(len(batch), False)])
    return [_nan_where_failed(b, info, batch, v, v_aval), _nan_where_failed(b, info, batch, w, w_aval)]


eigh_p = standard_primitive("eigh", _eigh_shape_rule, _eigh_dtype_rule, multiple_results=True)
lowering.register(eigh_p, _eigh_lowering)


# ----- svd --------------------------------------------------------------------------------------

def svd(x, *, full_matrices=True, compute_uv=True):
    """Singular value decomposition: `(u, s, vh)` with `u * s @ vh == x`, or just `s`.

    `s` is real, non-negative and descending. For x of shape (m, n) and k = min(m, n): u is (m, m)
    and vh (n, n) when `full_matrices`, else (m, k) and (k, n). LAPACK gesdd; failure gives NaN.
    Example: `u, s, vh = lax.linalg.svd(jnp.eye(3), full_matrices=False)`.
    """
    outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    if compute_uv:
        s, u, vh = outs
        return u, s, vh
    return outs[0]


def _svd_shapes(shape, full_matrices):
    m, n = shape[-2:]
    batch, k = shape[:-2], min(m, n)
    if full_matrices:
        return batch + (k,), batch + (m, m), batch + (n, n)
    return batch + (k,), batch + (m, k), batch + (k, n)


def _svd_shape_rule(x, *, full_matrices, compute_uv):
    _check_matrix("svd", x, square=False)
    shapes = _svd_shapes(x.shape, full_matrices)
    return shapes if compute_uv else shapes[:1]


def _svd_dtype_rule(x, *, full_matrices, compute_uv):
    check_dtype_accepted("svd", x.dtype, FLOAT_OR_COMPLEX)
    real = _real_dtype(x.dtype)
    return (real, x.dtype, x.dtype) if compute_uv else (real,)


def _svd_lowering(ctx, x, *, full_matrices, compute_uv):
    b, aval = ctx.b, ctx.avals_in[0]
    s_aval = ctx.avals_out[0]
    s_shape, u_shape, vt_shape = _svd_shapes(aval.shape, full_matrices)
    u_aval, vt_aval = aval.update(shape=u_shape), aval.update(shape=vt_shape)
    if aval.size == 0:
        outs = [lowering.full_like(b, 0, s_aval)]
        if compute_uv:
            # the non-empty factor of an empty matrix is an identity (full) or is itself empty
            outs += [_eye(b, a) if a.size else lowering.full_like(b, 0, a) for a in (u_aval, vt_aval)]
        return outs
    target = custom_calls.lapack_target("gesdd", aval.dtype, "svd")
    batch = aval.shape[:-2]
    mode = "A" if full_matrices else "S"
    if not compute_uv:
        mode = "N"
    nd = aval.ndim
    _, s, u, vt, info = _custom_call(
        b, target, [x], [aval, s_aval, u_aval, vt_aval, ShapedArray(batch, np.int32)], {"mode": _char(mode)},
        [_layout(nd)], [_layout(nd), _layout(s_aval.ndim, False), _layout(nd), _layout(nd),
                        _layout(len(batch), False)])
    outs = [_nan_where_failed(b, info, batch, s, s_aval)]
    if compute_uv:
        outs += [_nan_where_failed(b, info, batch, u, u_aval), _nan_where_failed(b, info, batch, vt, vt_aval)]
    return outs


svd_p = standard_primitive("svd", _svd_shape_rule, _svd_dtype_rule, multiple_results=True)
lowering.register(svd_p, _svd_lowering)


# ----- triangular_solve -------------------------------------------------------------------------

def triangular_solve(a, b, *, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                     unit_diagonal=False):
    """Solve op(a) @ x == b (`left_side`) or x @ op(a) == b for x, with `a` triangular.

    op(a) is a, a^T (`transpose_a`), conj(a) (`conjugate_a`) or a^H (both). Only the `lower` (or
    upper) triangle of `a` is read; `unit_diagonal` assumes ones on its diagonal. a is (..., n, n)
    and b (..., n, k) for `left_side`, else (..., k, n), with equal batch dimensions.
    Example: `lax.linalg.triangular_solve(jnp.eye(2) * 2, jnp.ones((2, 1)), left_side=True, lower=True)`.
    """
    return triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                   transpose_a=bool(transpose_a), conjugate_a=bool(conjugate_a),
                                   unit_diagonal=bool(unit_diagonal))


def _triangular_solve_shape_rule(a, b, *, left_side, **_):
    if a.ndim < 2 or b.ndim < 2:
        raise TypeError(f"triangular_solve requires a and b to have at least 2 dimensions, got shapes "
                        f"{a.shape} and {b.shape}.")
    if a.shape[-1] != a.shape[-2]:
        raise TypeError(f"triangular_solve requires a to be square in its last two dimensions, got "
                        f"a.shape {a.shape}.")
    if a.shape[:-2] != b.shape[:-2]:
        raise TypeError(f"triangular_solve requires a and b to have equal batch dimensions, got shapes "
                        f"{a.shape} and {b.shape}.")
    common = -2 if left_side else -1
    if a.shape[-1] != b.shape[common]:
        side = "rows" if left_side else "columns"
        raise TypeError(f"triangular_solve with left_side={left_side} requires b's {side} to match a's size "
                        f"{a.shape[-1]}, got shapes {a.shape} and {b.shape}.")
    return b.shape


def _triangular_solve_dtype_rule(a, b, **_):
    check_dtype_accepted("triangular_solve", a.dtype, FLOAT_OR_COMPLEX, 0)
    if a.dtype != b.dtype:
        raise TypeError(f"triangular_solve requires a and b to have the same dtype, got "
                        f"{dtypes.short_name(a.dtype)} and {dtypes.short_name(b.dtype)}.")
    return b.dtype


def _triangular_solve_lowering(ctx, a, rhs, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    b = ctx.b
    a_aval, b_aval = ctx.avals_in
    if b_aval.size == 0:
        return lowering.full_like(b, 0, b_aval)
    target = custom_calls.lapack_target("trsm", a_aval.dtype, "triangular_solve")
    complex_ = dtypes.is_complex(a_aval.dtype)
    trans = "N"
    if transpose_a:
        trans = "C" if conjugate_a and complex_ else "T"
    elif conjugate_a:
        a = _conj(b, a, a_aval)
    config = {"side": _char("L" if left_side else "R"), "uplo": _char("L" if lower else "U"),
              "trans_x": _char(trans), "diag": _char("U" if unit_diagonal else "N")}
    (out,) = _custom_call(b, target, [a, rhs], [b_aval], config,
                          [_layout(a_aval.ndim), _layout(b_aval.ndim)],
                          [_layout(b_aval.ndim)])
    return out


triangular_solve_p = standard_primitive("triangular_solve", _triangular_solve_shape_rule,
                                        _triangular_solve_dtype_rule)
lowering.register(triangular_solve_p, _triangular_solve_lowering)

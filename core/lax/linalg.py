"""Linear-algebra primitives (JAX's `lax.linalg`): cholesky, lu, qr, eigh, eig, svd, triangular_solve, schur.

Each lowers to jaxlib's CPU LAPACK kernels, called as typed-FFI custom calls
(`core/runtime/custom_calls.py` registers them on first use). The contract every block shares:

* Operands are matrices in the two trailing dimensions; leading dimensions are a batch, which the
  kernels loop over. LAPACK is column-major, so each call declares column-major layouts for the
  matrix dimensions (`dense<[r-2, r-1, r-3, ..., 0]>`, minor to major) and XLA transposes around it.
* A kernel reports failure per matrix in an `info` output; as in JAX, results of a failed matrix
  become NaN (cholesky of a matrix that is not positive definite, a non-converged eigh or svd).
* Empty matrices (a zero dimension) never reach LAPACK: the lowering builds the trivial answer.
* Batching (vmap) uses the same leading batch dimensions: a batch axis among them stays put, one
  inside the matrix dimensions moves to the front.
* Derivatives follow JAX's rules: every primitive has a jvp rule written with lax operations (so
  it differentiates again), and triangular_solve, linear in b, a transpose rule. cholesky and
  eigh differentiate along the Hermitian part of the tangent; lu's pivots and permutation carry
  no tangent; qr with full_matrices and more rows than columns, and svd with full_matrices and
  a rectangular input, raise NotImplementedError as in JAX. schur has no derivative (as in JAX).

Supported dtypes: float32, float64 (with x64), complex64, complex128.
"""
import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import lowering
from ..interpreters.lowering import i64_array
from ..runtime import custom_calls
from ..interpreters import ad, batching
from ._base import FLOAT_OR_COMPLEX, aval_of, check_dtype_accepted, defjvp2, standard_primitive

__all__ = ["cholesky", "lu", "qr", "eigh", "eig", "svd", "triangular_solve", "schur", "symmetrize"]


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


# ----- helpers shared by the differentiation rules ------------------------------------------------
# The rules compute with lax operations, so they differentiate again (any order) and, under
# linearize, stage a tangent program made only of operations that transpose: matrix products with
# primal factors, transposes, conj, products with constant masks, sums and triangular solves.

def _mT(x):
    from .structural import transpose
    nd = aval_of(x).ndim
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _conj_if_complex(x):
    if not dtypes.is_complex(aval_of(x).dtype):
        return x
    from .elementwise import conj
    return conj(x)


def _mH(x):
    return _mT(_conj_if_complex(x))


def _mm(a, b):
    """a @ b over the trailing matrices (equal batch dimensions)."""
    from .dot import dot_general
    nb = aval_of(a).ndim - 2
    batch = tuple(range(nb))
    return dot_general(a, b, (((nb + 1,), (nb,)), (batch, batch)))


def _const(matrix, batch, dtype):
    """A constant matrix repeated over the batch dimensions, as a NumPy array (static shapes)."""
    matrix = np.asarray(matrix, dtype)
    return np.broadcast_to(matrix, tuple(batch) + matrix.shape)


def _tril(x, k=0):
    """numpy.tril over the trailing matrices, as a product with a constant 0/1 mask (linear in x)."""
    from .elementwise import mul
    aval = aval_of(x)
    m, n = aval.shape[-2:]
    return mul(x, _const(np.tri(m, n, k), aval.shape[:-2], aval.dtype))


def _triu(x, k=0):
    from .elementwise import mul
    aval = aval_of(x)
    m, n = aval.shape[-2:]
    return mul(x, _const(1 - np.tri(m, n, k - 1), aval.shape[:-2], aval.dtype))


def _diagonal(x):
    """The diagonals of square trailing matrices, shape (..., n): masked, then summed over columns."""
    from .elementwise import mul
    from .reductions import reduce_sum
    aval = aval_of(x)
    n = aval.shape[-1]
    return reduce_sum(mul(x, _const(np.eye(n), aval.shape[:-2], aval.dtype)), (aval.ndim - 1,))


def _spread(v, rows):
    """Vectors v (..., k) as matrices (..., rows, k) with v repeated down the rows: [i, j] = v[j]."""
    from .structural import broadcast_in_dim
    aval = aval_of(v)
    nb = aval.ndim - 1
    return broadcast_in_dim(v, aval.shape[:-1] + (rows, aval.shape[-1]), tuple(range(nb)) + (nb + 1,))


def _spread_cols(v, cols):
    """Vectors v (..., k) as matrices (..., k, cols): [i, j] = v[i]."""
    from .structural import broadcast_in_dim
    aval = aval_of(v)
    nb = aval.ndim - 1
    return broadcast_in_dim(v, aval.shape + (cols,), tuple(range(nb + 1)))


def _safe_reciprocal_offdiag(d):
    """1 / d off the diagonal and 0 on it, for square matrices d whose diagonal is zero: adding the
    identity first keeps 1/0 from ever being formed there."""
    from .elementwise import add, div, sub
    from .structural import full_like
    aval = aval_of(d)
    eye = _const(np.eye(aval.shape[-1]), aval.shape[:-2], aval.dtype)
    return sub(div(full_like(d, 1), add(d, eye)), eye)


def _as_dtype(x, dtype):
    from .structural import convert_element_type
    return x if aval_of(x).dtype == dtype else convert_element_type(x, dtype)


def _real_part(x):
    if not dtypes.is_complex(aval_of(x).dtype):
        return x
    from .elementwise import real
    return real(x)


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


# ----- helper shared by the batching rules -------------------------------------------------------

def _leading_batch_rule(prim):
    """The batching rule of a one-operand primitive that maps over the leading dimensions of its
    operand (all but the trailing two) and gives every output those same leading dimensions."""
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        if d >= aval_of(x).ndim - 2:
            x, d = batching.moveaxis(x, d, 0), 0
        out = prim.bind(x, **params)
        return (out, [d] * len(out)) if prim.multiple_results else (out, d)
    return rule


def _check_algorithm(name, param, value, supported):
    """`value` must be None or one of the enum members named `supported` (JAX's enums, or their
    names): the algorithm LAPACK runs here on CPU."""
    if value is None or getattr(value, "name", value) in supported:
        return
    raise ValueError(f"{name}: {param}={value!r} is not available here (CPU LAPACK); use None or "
                     f"{' / '.join(supported)}.")


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


def _cholesky_jvp(primals, tangents):
    # A = L L^H gives L^-1 dA L^-H = L^-1 dL + (L^-1 dL)^H with L^-1 dL lower triangular (real
    # diagonal), so dL = L Phi(L^-1 dA L^-H), Phi = the lower triangle with its diagonal halved.
    # dA is symmetrized first, as in JAX: only Hermitian perturbations keep A in the domain.
    from .elementwise import mul
    (x,), (dx,) = primals, tangents
    factor = cholesky_p.bind(x)
    dx = symmetrize(ad.instantiate_zeros(dx))
    aval = aval_of(x)
    n = aval.shape[-1]
    dx_linv_h = triangular_solve(factor, dx, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
    inner = triangular_solve(factor, dx_linv_h, left_side=True, lower=True)
    phi = mul(inner, _const(np.tri(n) - 0.5 * np.eye(n), aval.shape[:-2], aval.dtype))
    return factor, _mm(factor, phi)


ad.jvp_rules[cholesky_p] = _cholesky_jvp
batching.batching_rules[cholesky_p] = _leading_batch_rule(cholesky_p)


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

    Each iteration reads O(1) elements per matrix: perm[..., i] and pivots[..., i] are dynamic
    slices at the loop counter (the same position in every matrix of a batch); perm[..., j] at
    j = pivots[..., i] is a dynamic slice (one matrix) or a batched gather. The writes are dynamic
    updates (one matrix) or, at the per-matrix j, a one-hot select. XLA's CPU backend compiles
    such a small loop into one kernel; that measured faster than a loop-free pointer doubling
    over the swaps (several small kernels), and reading with masked sums over the whole
    permutation (what we had) cost 1.3 us more per 16x16 solve.
    """
    batch, k = piv_aval.shape[:-1], piv_aval.shape[-1]
    i32 = np.int32
    perm_aval = ShapedArray(batch + (m,), i32)
    column = ShapedArray(batch + (1,), i32)
    scalar = ShapedArray((), i32)
    nb = len(batch)
    perm0 = _iota(b, perm_aval.shape, nb)
    i0 = b.constant(0, i32, ())

    def cond(cb, i, perm, piv):
        limit = cb.constant(k, i32, ())
        return lowering.compare(cb, i, limit, "LT", scalar)

    def at_counter(bb, vec, i):
        """vec[..., i:i+1]: the same position in every matrix of the batch."""
        zeros = [bb.constant(0, i32, ())] * nb
        return bb.op("stablehlo.dynamic_slice", [vec] + zeros + [i], [column],
                     {"slice_sizes": i64_array(batch + (1,))})

    def body(bb, i, perm, piv):
        j = at_counter(bb, piv, i)
        at_i = at_counter(bb, perm, i)
        zeros = [bb.constant(0, i32, ())] * nb
        if nb:
            dn = (f"#stablehlo.gather<offset_dims = [], collapsed_slice_dims = [{nb}], "
                  f"operand_batching_dims = {lowering.int_list(range(nb))}, "
                  f"start_indices_batching_dims = {lowering.int_list(range(nb))}, "
                  f"start_index_map = [{nb}], index_vector_dim = {nb}>")
            at_j = bb.op("stablehlo.gather", [perm, j], [ShapedArray(batch, i32)],
                         {"dimension_numbers": dn, "indices_are_sorted": "false",
                          "slice_sizes": i64_array([1] * (nb + 1))})
            at_j = bb.op("stablehlo.reshape", [at_j], [column])
            perm = bb.op("stablehlo.dynamic_update_slice", [perm, at_j] + zeros + [i], [perm_aval])
            # position pivots[i] differs between matrices: a one-hot select writes it
            hit = lowering.compare(bb, _iota(bb, perm_aval.shape, nb),
                                   bb.op("stablehlo.broadcast_in_dim", [j], [perm_aval],
                                         {"broadcast_dimensions": i64_array(range(nb + 1))}),
                                   "EQ", perm_aval)
            spread = bb.op("stablehlo.broadcast_in_dim", [at_i], [perm_aval],
                           {"broadcast_dimensions": i64_array(range(nb + 1))})
            perm = _select(bb, hit, spread, perm, perm_aval)
        else:
            j = bb.op("stablehlo.reshape", [j], [scalar])
            at_j = bb.op("stablehlo.dynamic_slice", [perm, j], [column], {"slice_sizes": i64_array([1])})
            perm = bb.op("stablehlo.dynamic_update_slice", [perm, at_j, i], [perm_aval])
            perm = bb.op("stablehlo.dynamic_update_slice", [perm, at_i, j], [perm_aval])
        one = bb.constant(1, i32, ())
        return [bb.op("stablehlo.add", [i, one], [scalar]), perm, piv]

    avals = [scalar, perm_aval, piv_aval]
    outs = b.op("stablehlo.while", [i0, perm0, pivots], avals,
                regions=[b.region(avals, cond), b.region(avals, body)])
    return outs[1]


lu_p = standard_primitive("lu", _lu_shape_rule, _lu_dtype_rule, multiple_results=True)
lowering.register(lu_p, _lu_lowering)


def _lu_jvp(primals, tangents):
    # P A = L U (L: m x k unit lower, U: k x n upper, k = min(m, n)). Completing L to m x m and U to
    # n x n with identity blocks, X = L^-1 P dA U^-1 splits into dL = L tril(X, -1) and
    # dU = triu(X) U. Pivots and permutation are integers: no tangent.
    from .elementwise import add, eq
    from .structural import broadcast_in_dim, broadcasted_iota, convert_element_type
    (x,), (dx,) = primals, tangents
    packed, pivots, perm = lu_p.bind(x)
    aval = aval_of(x)
    batch, (m, n) = aval.shape[:-2], aval.shape[-2:]
    k, nb = min(m, n), len(batch)
    dtype = aval.dtype
    shape = batch + (m, m)
    p = convert_element_type(eq(broadcast_in_dim(perm, shape, tuple(range(nb + 1))),
                                broadcasted_iota(np.int32, shape, nb + 1)), dtype)
    p_dx = _mm(p, ad.instantiate_zeros(dx))
    # embedding products stand in for slicing and padding (their transposes are products too)
    l_full = add(_mm(_tril(packed, -1), _const(np.eye(n, m), batch, dtype)), _const(np.eye(m), batch, dtype))
    u_full = add(_mm(_const(np.eye(n, m), batch, dtype), _triu(packed)),
                 _const(np.diag([0.0] * k + [1.0] * (n - k)), batch, dtype))
    la = triangular_solve(l_full, p_dx, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(u_full, la, left_side=False, lower=False)
    d_packed = add(_mm(l_full, _tril(lau, -1)), _mm(_triu(lau), u_full))
    no_tangent = [ad.Zero(ad.tangent_aval(aval_of(i))) for i in (pivots, perm)]
    return [packed, pivots, perm], [d_packed, *no_tangent]


ad.jvp_rules[lu_p] = _lu_jvp
batching.batching_rules[lu_p] = _leading_batch_rule(lu_p)


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


def _qr_tall_tangents(q, r, dx):
    """dq, dr for x = q r with x (m, n), m >= n, q (m, n), r (n, n) (j-towns' derivation, as JAX):
    with C = q^H dx r^-1, q^H dq = Omega is skew-Hermitian with Omega's strict lower part equal
    to C's, and dr = (C - Omega) r."""
    from .elementwise import add, mul, sub
    aval = aval_of(r)
    dx_rinv = triangular_solve(r, dx, left_side=False, lower=False)
    c = _mm(_mH(q), dx_rinv)
    low = _tril(c, -1)
    omega = sub(low, _mH(low))
    if dtypes.is_complex(aval.dtype):
        # the imaginary part of C's diagonal also belongs to Omega: i imag(C_ii) = (C - C^*)_ii / 2
        eye_half = _const(0.5 * np.eye(aval.shape[-1]), aval.shape[:-2], aval.dtype)
        omega = add(omega, mul(sub(c, _conj_if_complex(c)), eye_half))
    dq = add(_mm(q, sub(omega, c)), dx_rinv)
    dr = _mm(sub(c, omega), r)
    return dq, dr


def _qr_jvp(primals, tangents, *, full_matrices):
    from .elementwise import add
    (x,), (dx,) = primals, tangents
    aval = aval_of(x)
    batch, (m, n) = aval.shape[:-2], aval.shape[-2:]
    if full_matrices and m > n:
        raise NotImplementedError(
            f"Unimplemented case of QR decomposition derivative: full_matrices=True with more rows than "
            f"columns (shape {aval.shape}), as in JAX. Use full_matrices=False (jnp.linalg.qr's default "
            "mode='reduced').")
    q, r = qr_p.bind(x, full_matrices=full_matrices)
    dx = ad.instantiate_zeros(dx)
    if m >= n:
        dq, dr = _qr_tall_tangents(q, r, dx)
        return [q, r], [dq, dr]
    # wide: the first m columns X1 = q R1 decide q; then r = q^H x gives dr = dq^H x + q^H dx
    first = _const(np.eye(n, m), batch, aval.dtype)
    dq, _ = _qr_tall_tangents(q, _mm(r, first), _mm(dx, first))
    dr = add(_mm(_mH(dq), x), _mm(_mH(q), dx))
    return [q, r], [dq, dr]


ad.jvp_rules[qr_p] = _qr_jvp
batching.batching_rules[qr_p] = _leading_batch_rule(qr_p)


# ----- eigh -------------------------------------------------------------------------------------

def eigh(x, *, lower=True, symmetrize_input=True, sort_eigenvalues=True, implementation=None):
    """Eigendecomposition of Hermitian matrices: returns `(v, w)` with `x @ v == v * w`.

    `w` holds the (real) eigenvalues in ascending order, `v[..., :, i]` the unit eigenvector of
    `w[..., i]`. Without `symmetrize_input`, only the `lower` (or upper) triangle of x is read.
    A decomposition that does not converge gives NaN, as in JAX. LAPACK (syevd/heevd) already sorts
    the eigenvalues, so `sort_eigenvalues` is accepted for JAX compatibility only.
    Example: `v, w = lax.linalg.eigh(jnp.array([[2., 1.], [1., 2.]]))`; w is `[1., 3.]`.
    """
    del sort_eigenvalues  # LAPACK's order is already ascending
    _check_algorithm("eigh", "implementation", implementation, ("QR",))
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


def _eigh_jvp(primals, tangents, *, lower):
    # With A = V diag(w) V^H and S = V^H dA V: dw = real(diag(S)), dV = V (F o S) with
    # F_ij = 1 / (w_j - w_i) off the diagonal and 0 on it (degenerate eigenvalues give inf, as JAX).
    from .elementwise import mul, sub
    (x,), (dx,) = primals, tangents
    v, w = eigh_p.bind(x, lower=lower)
    aval = aval_of(x)
    n = aval.shape[-1]
    dx = symmetrize(ad.instantiate_zeros(dx))
    wc = _as_dtype(w, aval.dtype)
    f = _safe_reciprocal_offdiag(sub(_spread(wc, n), _spread_cols(wc, n)))
    s = _mm(_mm(_mH(v), dx), v)
    return [v, w], [_mm(v, mul(f, s)), _real_part(_diagonal(s))]


ad.jvp_rules[eigh_p] = _eigh_jvp
batching.batching_rules[eigh_p] = _leading_batch_rule(eigh_p)


# ----- svd --------------------------------------------------------------------------------------

def svd(x, *, full_matrices=True, compute_uv=True, algorithm=None):
    """Singular value decomposition: `(u, s, vh)` with `u * s @ vh == x`, or just `s`.

    `s` is real, non-negative and descending. For x of shape (m, n) and k = min(m, n): u is (m, m)
    and vh (n, n) when `full_matrices`, else (m, k) and (k, n). LAPACK gesdd; failure gives NaN.
    Example: `u, s, vh = lax.linalg.svd(jnp.eye(3), full_matrices=False)`.
    """
    _check_algorithm("svd", "algorithm", algorithm, ("DEFAULT", "DIVIDE_AND_CONQUER"))
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


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv):
    # JAX's rule (reduced factors). With dS = U^H dA V: ds = real(diag(dS)); the factors' tangents
    # solve the Sylvester-like equations with F_ij = 1 / (s_j^2 - s_i^2); the components of dA
    # outside the spans of U (m > n) or V (n > m) add to dU or dV directly.
    from .elementwise import add, div, eq, mul, sub
    from .structural import full_like
    (x,), (dx,) = primals, tangents
    aval = aval_of(x)
    batch, (m, n) = aval.shape[:-2], aval.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            f"Singular value decomposition JVP not implemented for full matrices (shape {aval.shape}), as "
            "in JAX. Use full_matrices=False.")
    s, u, vt = svd_p.bind(x, full_matrices=False, compute_uv=True)
    dx = ad.instantiate_zeros(dx)
    uh, v = _mH(u), _mH(vt)
    ds_mat = _mm(_mm(uh, dx), v)
    ds = _real_part(_diagonal(ds_mat))
    if not compute_uv:
        return [s], [ds]
    k = min(m, n)
    dtype = aval.dtype
    sc = _as_dtype(s, dtype)
    s_j, s_i = _spread(sc, k), _spread_cols(sc, k)
    f = _safe_reciprocal_offdiag(mul(add(s_j, s_i), sub(s_j, s_i)))
    ds_s = mul(s_j, ds_mat)     # dS diag(s)
    s_ds = mul(s_i, ds_mat)     # diag(s) dS
    zero = _as_dtype(eq(s, full_like(s, 0)), aval_of(s).dtype)
    s_inv = _as_dtype(sub(div(full_like(s, 1), add(s, zero)), zero), dtype)
    s_inv_mat = mul(_spread(s_inv, k), _const(np.eye(k), batch, dtype))
    half = _const(np.full((k, k), 0.5), batch, dtype)
    du_dv_diag = mul(mul(sub(ds_mat, _mH(ds_mat)), s_inv_mat), half)
    du = _mm(u, add(mul(f, add(ds_s, _mH(ds_s))), du_dv_diag))
    dv = _mm(v, mul(f, add(s_ds, _mH(s_ds))))
    inv_row = div(full_like(sc, 1), sc)
    if m > n:
        dx_v = _mm(dx, v)
        du = add(du, mul(sub(dx_v, _mm(u, _mm(uh, dx_v))), _spread(inv_row, m)))
    if n > m:
        dxh_u = _mm(_mH(dx), u)
        dv = add(dv, mul(sub(dxh_u, _mm(v, _mm(vt, dxh_u))), _spread(inv_row, n)))
    return [s, u, vt], [ds, du, _mH(dv)]


ad.jvp_rules[svd_p] = _svd_jvp
batching.batching_rules[svd_p] = _leading_batch_rule(svd_p)


# ----- eig --------------------------------------------------------------------------------------

def eig(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, enable_eigvec_derivs=False,
        implementation=None, use_magma=None):
    """Eigendecomposition of general (non-symmetric) square matrices, as `jax.lax.linalg.eig`:
    returns the list `[w, vl, vr]` (vl and vr only when asked for), all complex (complex64 for
    float32 or complex64 input, complex128 for 64-bit input).

    `x @ vr[..., :, j] == w[..., j] * vr[..., :, j]` and `vl[..., :, j]^H @ x == w[..., j] *
    vl[..., :, j]^H`; each eigenvector has unit 2-norm and its largest component real (LAPACK
    geev's normalisation). Eigenvalues come in LAPACK's order (not sorted). CPU only (LAPACK), as
    in JAX; a decomposition that fails gives NaN. Derivatives: of the eigenvalues only
    (`eigvals`); differentiating eigenvectors raises NotImplementedError.

    Example:
        >>> w, vr = lax.linalg.eig(jnp.array([[0., 1.], [-1., 0.]]), compute_left_eigenvectors=False)
        >>> w
        Array([0.+1.j, 0.-1.j], dtype=complex64)
    """
    del use_magma  # a GPU option of JAX's; LAPACK here
    if implementation not in (None, "lapack", "LAPACK") and str(implementation).rsplit(".", 1)[-1] != "LAPACK":
        raise ValueError(f"eig: only the LAPACK implementation exists here (CPU), got implementation="
                         f"{implementation!r}.")
    return list(eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                           compute_right_eigenvectors=bool(compute_right_eigenvectors),
                           enable_eigvec_derivs=bool(enable_eigvec_derivs)))


def _complex_dtype(dtype):
    return np.dtype(np.complex128) if np.dtype(dtype) in (np.float64, np.complex128) else np.dtype(np.complex64)


def _eig_shape_rule(x, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    _check_matrix("eig", x)
    return (x.shape[:-1],) + (x.shape,) * (compute_left_eigenvectors + compute_right_eigenvectors)


def _eig_dtype_rule(x, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    check_dtype_accepted("eig", x.dtype, FLOAT_OR_COMPLEX)
    return (_complex_dtype(x.dtype),) * (1 + compute_left_eigenvectors + compute_right_eigenvectors)


def _eig_lowering(ctx, x, *, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs):
    b, aval = ctx.b, ctx.avals_in[0]
    w_aval = ctx.avals_out[0]
    v_aval = aval.update(dtype=w_aval.dtype)
    wanted = [compute_left_eigenvectors, compute_right_eigenvectors]
    if aval.size == 0:
        return [lowering.full_like(b, 0, a) for a in ctx.avals_out]
    target = custom_calls.lapack_target("geev", aval.dtype, "eig")
    batch, nd = aval.shape[:-2], aval.ndim
    real = not dtypes.is_complex(aval.dtype)
    # jaxlib's geev kernel: real input gives the eigenvalues as (real parts, imaginary parts) and
    # the eigenvectors already unpacked into complex columns; complex input gives complex w
    w_parts = [aval.update(shape=w_aval.shape)] * 2 if real else [w_aval]
    results = w_parts + [v_aval, v_aval, ShapedArray(batch, np.int32)]
    outs = _custom_call(
        b, target, [x], results,
        {"compute_left": _char("V" if compute_left_eigenvectors else "N"),
         "compute_right": _char("V" if compute_right_eigenvectors else "N")},
        [_layout(nd)],
        [_layout(nd - 1, False)] * len(w_parts) + [_layout(nd), _layout(nd), _layout(len(batch), False)])
    *w, vl, vr, info = outs
    w = b.op("stablehlo.complex", w, [w_aval]) if real else w[0]
    result = [_nan_where_failed(b, info, batch, w, w_aval)]
    result += [_nan_where_failed(b, info, batch, v, v_aval) for v, keep in zip((vl, vr), wanted) if keep]
    return result


eig_p = standard_primitive("eig", _eig_shape_rule, _eig_dtype_rule, multiple_results=True)
lowering.register(eig_p, _eig_lowering)


def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs):
    # First-order perturbation of a simple eigenvalue: with right and left eigenvectors
    # A v_j = w_j v_j and u_j^H A = w_j u_j^H, dw_j = (u_j^H dA v_j) / (u_j^H v_j): linear in dA.
    from .elementwise import div, mul
    from .reductions import reduce_sum
    if compute_left_eigenvectors or compute_right_eigenvectors:
        raise NotImplementedError(
            "eig: derivatives of non-symmetric eigenvectors are not implemented (JAX has them only under "
            "enable_eigvec_derivs=True, valid for distinct eigenvalues). Differentiate the eigenvalues instead: "
            "lax.linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False) or "
            "jnp.linalg.eigvals.")
    (x,), (dx,) = primals, tangents
    w, vl, vr = eig_p.bind(x, compute_left_eigenvectors=True, compute_right_eigenvectors=True,
                           enable_eigvec_derivs=enable_eigvec_derivs)
    dtype = aval_of(w).dtype
    rows = aval_of(x).ndim - 2
    ul = _conj_if_complex(vl)
    dx = _as_dtype(ad.instantiate_zeros(dx), dtype)
    numerator = reduce_sum(mul(ul, _mm(dx, vr)), (rows,))
    denominator = reduce_sum(mul(ul, vr), (rows,))
    return [w], [div(numerator, denominator)]


ad.jvp_rules[eig_p] = _eig_jvp
batching.batching_rules[eig_p] = _leading_batch_rule(eig_p)


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


def _triangular_solve_jvp_a(da, x, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    # op(a) x = b gives op(a) dx = -op(da) x (x op(a) = b: dx op(a) = -x op(da)); only the triangle
    # the solve reads carries a derivative (the strict one with a unit diagonal).
    from .elementwise import neg
    k = -1 if unit_diagonal else 0
    da = _tril(da, k) if lower else _triu(da, -k)
    if conjugate_a:
        da = _conj_if_complex(da)
    if transpose_a:
        da = _mT(da)
    rhs = _mm(da, x) if left_side else _mm(x, da)
    return neg(triangular_solve(a, rhs, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal))


def _triangular_solve_jvp_b(db, x, a, b, **params):
    return triangular_solve(a, db, **params)


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    # x = op(a)^-1 b is linear in b; its transpose (no conjugation) applies op(a)^-T, which is the
    # same solve with transpose_a flipped (conj(a)^T = a^H, (a^H)^T = conj(a)).
    if ad.is_undefined(a):
        raise ValueError("triangular_solve is linear in b only; it cannot be transposed in a.")
    ct_b = triangular_solve(a, ct, left_side=left_side, lower=lower, transpose_a=not transpose_a,
                            conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return [None, ct_b]


defjvp2(triangular_solve_p, _triangular_solve_jvp_a, _triangular_solve_jvp_b)
ad.transpose_rules[triangular_solve_p] = _triangular_solve_transpose


def _triangular_solve_batch_rule(vals, dims, **params):
    from .structural import reshape
    (a, b), (da, db) = vals, dims
    a_nd = aval_of(a).ndim
    if da is None:
        # Only b is batched: the solve treats b's columns (left_side) or rows (right side)
        # independently, so the examples become extra columns/rows, [..., n, B*k] / [..., B*k, n],
        # and the single a is never copied.
        left = params["left_side"]
        shape = list(aval_of(b).shape)
        size = shape[db]
        # batched b is (..., n, k) / (..., k, n); put the batch axis right before the free axis
        pos = len(shape) - 2 if left else len(shape) - 3
        b = batching.moveaxis(b, db, pos)
        shape = list(aval_of(b).shape)
        folded = shape[:pos] + [size * shape[pos + 1]] + shape[pos + 2:]
        out = triangular_solve_p.bind(a, reshape(b, tuple(folded)), **params)
        return reshape(out, tuple(shape)), pos
    # a is batched: the batch becomes a leading dimension of both operands (b broadcast if needed)
    bdim = da if da < a_nd - 2 and db in (None, da) else 0
    size = batching.batch_size(vals, dims)
    a = batching.moveaxis(a, da, bdim)
    b = batching.move_bdim(b, db, bdim, size)
    return triangular_solve_p.bind(a, b, **params), bdim


batching.batching_rules[triangular_solve_p] = _triangular_solve_batch_rule


# ----- schur ------------------------------------------------------------------------------------

def schur(x, *, compute_schur_vectors=True):
    """The Schur decomposition of square matrices: `(t, q)` with `x == q @ t @ q^H`, q unitary and
    t upper triangular (complex input) or quasi-upper triangular with 2x2 blocks for complex
    eigenvalue pairs (real input); just `(t,)` without `compute_schur_vectors`. LAPACK gees, CPU
    only; a failed decomposition gives NaN. No derivative, as in JAX.
    Example: `t, q = lax.linalg.schur(jnp.array([[1., 2.], [0., 3.]]))`; `t` is the input here.
    """
    return schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors))


def _schur_shape_rule(x, *, compute_schur_vectors):
    _check_matrix("schur", x)
    return (x.shape, x.shape) if compute_schur_vectors else (x.shape,)


def _schur_dtype_rule(x, *, compute_schur_vectors):
    check_dtype_accepted("schur", x.dtype, FLOAT_OR_COMPLEX)
    return (x.dtype, x.dtype) if compute_schur_vectors else (x.dtype,)


def _schur_lowering(ctx, x, *, compute_schur_vectors):
    b, aval = ctx.b, ctx.avals_in[0]
    if aval.size == 0:
        return [lowering.full_like(b, 0, out) for out in ctx.avals_out]
    target = custom_calls.lapack_target("gees", aval.dtype, "schur")
    batch = aval.shape[:-2]
    info_aval = ShapedArray(batch, np.int32)
    eig_aval = ShapedArray(aval.shape[:-1], aval.dtype)
    # gees returns the eigenvalues (real and imaginary parts for real input) and the count of
    # selected ones besides the factors; we use only the factors and info
    eigs = [eig_aval, eig_aval] if not dtypes.is_complex(aval.dtype) else [eig_aval]
    results = [aval, aval] + eigs + [info_aval, info_aval]
    layouts = ([_layout(aval.ndim)] * 2 + [_layout(eig_aval.ndim, False)] * len(eigs)
               + [_layout(len(batch), False)] * 2)
    outs = _custom_call(b, target, [x], results, {"mode": _char("V" if compute_schur_vectors else "N"),
                                                  "sort": _char("N")}, [_layout(aval.ndim)], layouts)
    info = outs[-1]
    factors = [_nan_where_failed(b, info, batch, outs[0], aval)]
    if compute_schur_vectors:
        factors.append(_nan_where_failed(b, info, batch, outs[1], aval))
    return factors


schur_p = standard_primitive("schur", _schur_shape_rule, _schur_dtype_rule, multiple_results=True)
lowering.register(schur_p, _schur_lowering)
batching.batching_rules[schur_p] = _leading_batch_rule(schur_p)


def _schur_jvp(primals, tangents, **_):
    # JAX defines no derivative of the Schur factors either (they are not smooth where eigenvalues
    # cross); say so instead of silently giving zero tangents
    raise NotImplementedError("schur has no derivative (as in JAX); functions built on it (scipy.linalg.sqrtm, "
                              "logm) cannot be differentiated.")


ad.jvp_rules[schur_p] = _schur_jvp


# ----- the rest of jax.lax.linalg, in their own modules (they use the helpers above) -------------

from .linalg_tridiagonal import *  # noqa: E402,F401,F403
from .linalg_householder import *  # noqa: E402,F401,F403
from .linalg_compositions import *  # noqa: E402,F401,F403
from . import linalg_compositions as _compositions, linalg_householder as _householder  # noqa: E402
from . import linalg_tridiagonal as _tridiagonal  # noqa: E402

__all__ += _tridiagonal.__all__ + _householder.__all__ + _compositions.__all__

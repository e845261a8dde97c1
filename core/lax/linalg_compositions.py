"""The rest of `jax.lax.linalg`: `lu_pivots_to_permutation`, `cholesky_update`,
`symmetric_product`, `qdwh` and the algorithm enums.

`lu_pivots_to_permutation` is a primitive lowered by the while loop `lu` already emits for its
permutation. `cholesky_update` and `symmetric_product` are primitives as in JAX (so jaxprs show
them), but each is defined by a composition of lax operations (`_composite`): its lowering
inlines the traced composition, its jvp differentiates the composition (JAX gives these two no
derivative; the composition's derivative comes free), and its batching moves the batch axis of
every operand to the front, which the composition handles as a leading batch dimension. `qdwh`
is a plain function, as in JAX.
"""
import enum

import numpy as np

from .. import dtypes
from ..interpreters import ad, batching, lowering
from ..interpreters.staging import trace_to_jaxpr
from ._base import FLOAT, FLOAT_OR_COMPLEX, INT, aval_of, check_dtype_accepted, standard_primitive
from .linalg import _check_matrix, _mH, _mm, _pivots_to_permutation, cholesky, qr, triangular_solve
from .linalg_householder import _batch_all_at_front

__all__ = ["lu_pivots_to_permutation", "cholesky_update", "symmetric_product", "qdwh", "EigImplementation",
           "EighImplementation", "SvdAlgorithm", "lu_pivots_to_permutation_p", "cholesky_update_p",
           "symmetric_product_p"]


class EigImplementation(enum.Enum):
    """Algorithms for `eig` (JAX's names). Only LAPACK exists here (CPU)."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Algorithms for `eigh` (JAX's names). Here eigh is always LAPACK syevd/heevd, JAX's QR choice on CPU."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Algorithms for `svd` (JAX's names). Here svd is always LAPACK gesdd (divide and conquer)."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


# ----- primitives defined by a composition -------------------------------------------------------

def _composite(name, impl, shape_rule, dtype_rule):
    """A one-output primitive computed by `impl(*operands, **params)` (lax operations that accept
    leading batch dimensions): lowered by inlining the traced composition, differentiated through
    it, batched with every batch axis at the front."""
    prim = standard_primitive(name, shape_rule, dtype_rule)

    def lowering_rule(ctx, *args, **params):
        closed = trace_to_jaxpr(lambda *xs: [impl(*xs, **params)], list(ctx.avals_in), name, "lowering")
        consts = [ctx.b.constant(np.asarray(c), aval_of(c).dtype, aval_of(c).shape) for c in closed.consts]
        return lowering.lower_jaxpr_into(ctx.b, closed.jaxpr, consts + list(args))[0]

    def jvp_rule(primals, tangents, **params):
        (out,), (out_t,) = ad.jvp_flat(lambda *xs: [impl(*xs, **params)], list(primals), list(tangents))
        return out, out_t

    lowering.register(prim, lowering_rule)
    ad.jvp_rules[prim] = jvp_rule
    batching.batching_rules[prim] = _batch_all_at_front(prim)
    return prim


# ----- lu_pivots_to_permutation -----------------------------------------------------------------

def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation that LU's row swaps make of `0..permutation_size-1` (as `jax.lax.linalg`).

    `pivots` (..., k) int32, k <= permutation_size: row i was swapped with row pivots[i], in
    order (what `lu` returns). Example: `lu_pivots_to_permutation(jnp.array([2, 2], jnp.int32), 3)`
    swaps 0<->2, then 1<->2, giving `[2, 0, 1]`.

        >>> lax.linalg.lu_pivots_to_permutation(jnp.array([2, 2], jnp.int32), 3)
        Array([2, 0, 1], dtype=int32)
    """
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


def _pivots_shape_rule(pivots, *, permutation_size):
    if pivots.ndim < 1:
        raise TypeError(f"lu_pivots_to_permutation requires pivots of shape (..., k), got {pivots.str_short()}.")
    if permutation_size < pivots.shape[-1]:
        raise TypeError(f"lu_pivots_to_permutation: permutation_size ({permutation_size}) must be at least the "
                        f"number of pivots ({pivots.shape[-1]}).")
    return pivots.shape[:-1] + (permutation_size,)


def _pivots_dtype_rule(pivots, *, permutation_size):
    if pivots.dtype != np.int32:
        check_dtype_accepted("lu_pivots_to_permutation", pivots.dtype, INT)
        raise TypeError(f"lu_pivots_to_permutation requires int32 pivots, got {pivots.str_short()}; convert them "
                        "with `.astype(jnp.int32)`.")
    return np.dtype(np.int32)


def _pivots_lowering(ctx, pivots, *, permutation_size):
    piv_aval = ctx.avals_in[0]
    if piv_aval.shape[-1] == 0 or ctx.avals_out[0].size == 0:
        from .linalg import _iota
        out = ctx.avals_out[0]
        return _iota(ctx.b, out.shape, out.ndim - 1)
    return _pivots_to_permutation(ctx.b, pivots, piv_aval, permutation_size)


lu_pivots_to_permutation_p = standard_primitive("lu_pivots_to_permutation", _pivots_shape_rule, _pivots_dtype_rule)
lowering.register(lu_pivots_to_permutation_p, _pivots_lowering)
batching.batching_rules[lu_pivots_to_permutation_p] = _batch_all_at_front(lu_pivots_to_permutation_p)
ad.nondifferentiable.add(lu_pivots_to_permutation_p)


# ----- cholesky_update --------------------------------------------------------------------------

def cholesky_update(r_matrix, w_vector):
    """Rank-1 update of a Cholesky factor in O(n^2) (as `jax.lax.linalg.cholesky_update`).

    Given upper triangular R with A = R^T R and a vector w, returns the upper triangular R' with
    R'^T R' = A + w w^T, by one Givens rotation per row (each zeroes one entry of w against R's
    diagonal, keeping it positive). Real dtypes, as in JAX; leading dimensions are a batch.

    Example:
        >>> lax.linalg.cholesky_update(jnp.eye(2) * 3., jnp.array([4., 0.]))   # 9 + 16 = 25
        Array([[5., 0.],
               [0., 3.]], dtype=float32)
    """
    return cholesky_update_p.bind(r_matrix, w_vector)


def _cholesky_update_shape_rule(r, w):
    _check_matrix("cholesky_update", r)
    if w.shape != r.shape[:-1]:
        raise TypeError(f"cholesky_update takes a square matrix (..., n, n) and a vector (..., n) of the same size, "
                        f"got shapes {r.shape} and {w.shape}.")
    return r.shape


def _cholesky_update_dtype_rule(r, w):
    check_dtype_accepted("cholesky_update", r.dtype, FLOAT, 0)
    if r.dtype != w.dtype:
        raise TypeError(f"cholesky_update requires r_matrix and w_vector of one dtype, got "
                        f"{dtypes.short_name(r.dtype)} and {dtypes.short_name(w.dtype)}.")
    return r.dtype


def _cholesky_update_impl(r, w):
    from .control_flow import fori_loop
    from .elementwise import abs as abs_, add, div, eq, max as max_, mul, select_n, sqrt, sub
    from .structural import broadcast_in_dim, dynamic_slice, dynamic_update_slice, full, reshape
    shape = aval_of(r).shape
    batch, n = shape[:-2], shape[-1]
    nb = len(batch)
    dtype = aval_of(r).dtype
    zero_idx = [np.int32(0)] * nb

    def rows_at(k):
        return broadcast_in_dim(k, batch + (n,), tuple(range(nb)))

    def body(k, carry):
        r, w = carry
        row = reshape(dynamic_slice(r, zero_idx + [k, np.int32(0)], batch + (1, n)), batch + (n,))
        x = reshape(dynamic_slice(row, zero_idx + [k], batch + (1,)), batch)
        y = reshape(dynamic_slice(w, zero_idx + [k], batch + (1,)), batch)
        # h = hypot(x, y) without overflow; (c, s) rotate (x, y) onto (h, 0); h = 0 leaves both alone
        scale = max_(abs_(x), abs_(y))
        none = eq(scale, full(batch, 0, dtype))
        one = full(batch, 1, dtype)
        safe = select_n(none, scale, one)
        xs, ys = div(x, safe), div(y, safe)
        h = mul(safe, sqrt(add(mul(xs, xs), mul(ys, ys))))
        h_safe = select_n(none, h, one)
        c = select_n(none, div(x, h_safe), one)
        s = select_n(none, div(y, h_safe), full(batch, 0, dtype))
        c, s = rows_at(c), rows_at(s)
        new_row = add(mul(c, row), mul(s, w))
        new_w = sub(mul(c, w), mul(s, row))
        r = dynamic_update_slice(r, reshape(new_row, batch + (1, n)), zero_idx + [k, np.int32(0)])
        return r, new_w

    r, _ = fori_loop(0, n, body, (r, w))
    return r


cholesky_update_p = _composite("cholesky_update", _cholesky_update_impl, _cholesky_update_shape_rule,
                               _cholesky_update_dtype_rule)


# ----- symmetric_product ------------------------------------------------------------------------

def symmetric_product(a_matrix, c_matrix, *, alpha=1., beta=0., symmetrize_output=False):
    """alpha * A @ A^T + beta * C for A (..., m, n) and symmetric C (..., m, m) (as `jax.lax.linalg`).

    JAX guarantees only the lower triangle of the result (GPU kernels write no more);
    `symmetrize_output` mirrors the strict lower triangle into the upper one. Here the whole
    product is computed. Real dtypes, as in JAX.

    Example:
        >>> lax.linalg.symmetric_product(jnp.array([[1., 2.]]), jnp.array([[1.]]), alpha=2., beta=3.)
        Array([[13.]], dtype=float32)
    """
    out = symmetric_product_p.bind(a_matrix, c_matrix, alpha=float(alpha), beta=float(beta))
    if symmetrize_output:
        from .elementwise import add
        from .linalg import _mT, _tril
        out = add(_tril(out), _mT(_tril(out, -1)))
    return out


def _symmetric_product_shape_rule(a, c, **_):
    _check_matrix("symmetric_product", a, square=False)
    _check_matrix("symmetric_product", c)
    if a.shape[:-1] != c.shape[:-1]:
        raise TypeError(f"symmetric_product expects a matrix of shape (..., m, n) and a square matrix of shape "
                        f"(..., m, m), got shapes {a.shape} and {c.shape}.")
    return c.shape


def _symmetric_product_dtype_rule(a, c, **_):
    check_dtype_accepted("symmetric_product", a.dtype, FLOAT, 0)
    if a.dtype != c.dtype:
        raise TypeError(f"symmetric_product requires a_matrix and c_matrix of one dtype, got "
                        f"{dtypes.short_name(a.dtype)} and {dtypes.short_name(c.dtype)}.")
    return c.dtype


def _symmetric_product_impl(a, c, *, alpha, beta):
    from .dot import dot_general
    from .elementwise import add, mul
    from .precision import Precision
    nb = aval_of(a).ndim - 2
    batch = tuple(range(nb))
    dtype = aval_of(a).dtype
    aat = dot_general(a, a, (((nb + 1,), (nb + 1,)), (batch, batch)), precision=Precision.HIGHEST)
    return add(mul(np.asarray(alpha, dtype), aat), mul(np.asarray(beta, dtype), c))


symmetric_product_p = _composite("symmetric_product", _symmetric_product_impl, _symmetric_product_shape_rule,
                                 _symmetric_product_dtype_rule)


# ----- qdwh -------------------------------------------------------------------------------------

def _halley_schedule(lower, max_iterations, tol):
    """The dynamically weighted Halley coefficients (a, b, c) for a matrix whose singular values lie
    in [lower, 1] (Nakatsukasa, Bai and Gygi 2010): each step maps [l, 1] into [l', 1], l' given by
    the rational function of the step, until l is within `tol` of 1."""
    steps, l = [], lower
    while l + tol < 1 and len(steps) < max_iterations:
        l2 = l * l
        gamma = (4 * (1 - l2) / (l2 * l2)) ** (1 / 3)
        root = (1 + gamma) ** 0.5
        a = root + 0.5 * (8 - 4 * gamma + 8 * (2 - l2) / (l2 * root)) ** 0.5
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        steps.append((a, b, c))
        l = l * (a + b * l2) / (1 + c * l2)
    return steps


def _qdwh_step(u, a, b, c):
    """One weighted Halley step U -> (b/c) U + (a - b/c) U (I + c U^H U)^-1. Far from convergence
    (large c) the inverse is formed from the QR factors of [sqrt(c) U; I], which stays accurate when
    I + c U^H U is badly conditioned; otherwise from its Cholesky factor."""
    from .elementwise import add, mul
    from .structural import concatenate, slice_in_dim
    aval = aval_of(u)
    m, n = aval.shape
    dtype = aval.dtype
    eye = np.eye(n, dtype=dtype)
    e = b / c
    if c > 100:
        q, _ = qr(concatenate([mul(u, np.asarray(c ** 0.5, dtype)), eye], 0), full_matrices=False)
        q1, q2 = slice_in_dim(q, 0, m, axis=0), slice_in_dim(q, m, m + n, axis=0)
        update = mul(_mm(q1, _mH(q2)), np.asarray((a - e) / c ** 0.5, dtype))
    else:
        z = add(mul(_mm(_mH(u), u), np.asarray(c, dtype)), eye)
        factor = cholesky(z, symmetrize_input=False)
        # U Z^-1 = U W^-H W^-1 with Z = W W^H: two triangular solves from the right
        y = triangular_solve(factor, u, left_side=False, lower=True, transpose_a=True, conjugate_a=True)
        y = triangular_solve(factor, y, left_side=False, lower=True)
        update = mul(y, np.asarray(a - e, dtype))
    return add(mul(u, np.asarray(e, dtype)), update)


def _frobenius(x):
    from .elementwise import abs as abs_, mul, sqrt
    from .reductions import reduce_sum
    mag = abs_(x)
    return sqrt(reduce_sum(mul(mag, mag), tuple(range(aval_of(x).ndim))))


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """Polar decomposition x = u @ h by the QR-based dynamically weighted Halley iteration (QDWH).

    x is one (m, n) matrix, m >= n, of full rank; u has orthonormal columns and h is Hermitian
    positive semi-definite. Returns `(u, h, num_iters, is_converged)`: iterations stop after
    `max_iterations` (default 10) or once successive iterates differ by less than
    (5 eps)^(1/3) in the Frobenius norm. `is_hermitian` is accepted and unused, as in JAX;
    `dynamic_shape` (JAX's padded inputs) is not supported. Not differentiable (a while loop).
    Compiled as one program per shape, dtype and settings (as JAX's, which is jitted).

    Example:
        >>> u, h, k, ok = lax.linalg.qdwh(jnp.array([[2., 0.], [0., -3.]]))
        >>> u.round(4), h.round(4), bool(ok)
        (Array([[ 1.,  0.],
               [ 0., -1.]], dtype=float32), Array([[2., 0.],
               [0., 3.]], dtype=float32), True)
    """
    del is_hermitian
    if dynamic_shape is not None:
        raise NotImplementedError("qdwh: dynamic_shape (a padded input) is not supported; pass the unpadded matrix.")
    aval = aval_of(x)
    if aval.ndim != 2:
        raise TypeError(f"qdwh requires one matrix of shape (m, n), got {aval.str_short()}.")
    check_dtype_accepted("qdwh", aval.dtype, FLOAT_OR_COMPLEX)
    m, n = aval.shape
    if m < n:
        raise ValueError(f"qdwh: the input matrix of shape (m, n) must have m >= n, got {aval.shape}.")
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    eps = None if eps is None else float(eps)
    if "jit" not in _qdwh_compiled:
        from ..api import jit
        _qdwh_compiled["jit"] = jit(_qdwh, static_argnums=(1, 2))
    return _qdwh_compiled["jit"](x, max_iterations, eps)


_qdwh_compiled = {}


def _qdwh(x, max_iterations, eps):
    from .control_flow import while_loop
    from .elementwise import add, and_, eq, gt, lt, mul, not_, rsqrt, select_n, sub
    from .structural import convert_element_type
    from .reductions import reduce_max, reduce_sum
    from .elementwise import abs as abs_
    aval = aval_of(x)
    dtype = aval.dtype
    real = dtypes.finfo(dtype).dtype if dtypes.is_complex(dtype) else dtype
    eps = float(dtypes.finfo(dtype).eps) if eps is None else eps
    tol_l = 5 * eps
    tol_norm = tol_l ** (1 / 3)

    # 1 / sqrt(|x|_1 |x|_inf) <= 1 / |x|_2: scaled so, every singular value of u is at most 1
    mag = abs_(x)
    one_norm = reduce_max(reduce_sum(mag, (0,)), (0,))
    inf_norm = reduce_max(reduce_sum(mag, (1,)), (0,))
    zero = eq(one_norm, np.zeros((), real))
    scale = select_n(zero, mul(rsqrt(one_norm), rsqrt(inf_norm)), np.ones((), real))
    u = mul(x, convert_element_type(scale, dtype))

    not_converged = np.array(True)
    schedule = _halley_schedule(eps, max_iterations, tol_l)
    for a, b, c in schedule:
        previous = u
        u = _qdwh_step(u, a, b, c)
        not_converged = gt(_frobenius(sub(u, previous)), np.asarray(tol_norm, real))

    def keep_going(state):
        k, _, going = state
        return and_(going, lt(k, np.int32(max_iterations)))

    def halley(state):
        k, u, _ = state
        new = _qdwh_step(u, 3.0, 1.0, 3.0)   # the weights' limit as l -> 1: Halley's iteration
        return add(k, np.int32(1)), new, gt(_frobenius(sub(new, u)), np.asarray(tol_norm, real))

    num_iters, u, not_converged = while_loop(keep_going, halley, (np.int32(len(schedule)), u, not_converged))
    # one Newton-Schulz step polishes the orthogonality of u
    u = sub(mul(u, np.asarray(1.5, dtype)), mul(_mm(u, _mm(_mH(u), u)), np.asarray(0.5, dtype)))
    h = _mm(_mH(u), x)
    h = mul(add(h, _mH(h)), np.asarray(0.5, dtype))
    return u, h, num_iters, not_(not_converged)


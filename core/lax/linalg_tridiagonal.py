"""Tridiagonal matrices in `lax.linalg`: `tridiagonal_solve` (LAPACK gtsv) and `tridiagonal`
(the reduction of a Hermitian matrix to tridiagonal form, LAPACK sytrd/hetrd).

The shared contract of `core/lax/linalg.py` holds (leading batch dimensions, column-major matrix
layouts for the kernels, NaN where a kernel reports failure). `tridiagonal_solve` is linear in b
and is differentiated as JAX does: A x = b gives dx = A^-1 (db - dA x), with dA x a product of
the three tangent diagonals with x (no matrix is formed), and its transpose in b is a solve with
A^T, whose diagonals are A's off-diagonals shifted by one. `tridiagonal` has no derivative (as
in JAX).
"""
import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import ad, batching, lowering
from ..runtime import custom_calls
from ._base import FLOAT_OR_COMPLEX, aval_of, check_dtype_accepted, standard_primitive
from .linalg import _char, _check_matrix, _custom_call, _layout, _leading_batch_rule, _nan_where_failed, _real_dtype

__all__ = ["tridiagonal_solve", "tridiagonal", "tridiagonal_solve_p", "tridiagonal_p"]


# ----- tridiagonal_solve ------------------------------------------------------------------------

def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """Solve the tridiagonal system A x = b (as `jax.lax.linalg.tridiagonal_solve`).

    A is given by its diagonals, each of shape (..., m): `dl[i] = A[i, i-1]` (dl[0] unused, 0 by
    convention), `d[i] = A[i, i]` and `du[i] = A[i, i+1]` (du[m-1] unused); b is (..., m, n).
    LAPACK gtsv (LU with partial pivoting); a singular A gives NaN, or, with `perturb_singular`,
    a finite answer from perturbing tiny pivots (useful for inverse iteration). Differentiable
    in all four operands; vmaps and jits.

    Example:
        >>> dl, d, du = jnp.array([0., 1.]), jnp.array([2., 2.]), jnp.array([1., 0.])
        >>> lax.linalg.tridiagonal_solve(dl, d, du, jnp.array([[3.], [3.]]))
        Array([[1.],
               [1.]], dtype=float32)
    """
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))


def _tridiagonal_solve_shape_rule(dl, d, du, b, **_):
    if not (dl.shape == d.shape == du.shape):
        raise TypeError(f"tridiagonal_solve requires that all diagonal arguments have the same shape, got dl "
                        f"{dl.str_short()}, d {d.str_short()} and du {du.str_short()}.")
    if d.ndim < 1 or b.ndim != d.ndim + 1 or b.shape[:-1] != d.shape:
        raise TypeError(f"tridiagonal_solve requires b of shape (..., m, n) whose leading ndim-1 dimensions equal "
                        f"the diagonals' shape (..., m), got b {b.str_short()} and diagonals {d.str_short()}.")
    return b.shape


def _tridiagonal_solve_dtype_rule(dl, d, du, b, **_):
    check_dtype_accepted("tridiagonal_solve", b.dtype, FLOAT_OR_COMPLEX, 3)
    if not (dl.dtype == d.dtype == du.dtype == b.dtype):
        raise TypeError(f"tridiagonal_solve requires dl, d, du and b to have the same dtype, got "
                        f"{', '.join(dtypes.short_name(a.dtype) for a in (dl, d, du, b))}.")
    return b.dtype


def _tridiagonal_solve_lowering(ctx, dl, d, du, rhs, *, perturb_singular):
    b = ctx.b
    diag_aval, b_aval = ctx.avals_in[0], ctx.avals_in[3]
    if b_aval.size == 0:
        return lowering.full_like(b, 0, b_aval)
    vec, mat = _layout(diag_aval.ndim, False), _layout(b_aval.ndim)
    if perturb_singular:
        target = "tridiagonal_solve_perturbed_ffi"
        custom_calls.lapack_target("gtsv", b_aval.dtype, "tridiagonal_solve")  # checks dtype and platform
        (out,) = _custom_call(b, target, [dl, d, du, rhs], [b_aval], {}, [vec] * 3 + [mat], [mat])
        return out
    target = custom_calls.lapack_target("gtsv", b_aval.dtype, "tridiagonal_solve")
    batch = b_aval.shape[:-2]
    # gtsv overwrites the diagonals with its factorization and b with x; info > 0: singular
    *_, out, info = _custom_call(b, target, [dl, d, du, rhs], [diag_aval] * 3 + [b_aval, ShapedArray(batch, np.int32)],
                                 {}, [vec] * 3 + [mat], [vec] * 3 + [mat, _layout(len(batch), False)])
    return _nan_where_failed(b, info, batch, out, b_aval)


tridiagonal_solve_p = standard_primitive("tridiagonal_solve", _tridiagonal_solve_shape_rule,
                                         _tridiagonal_solve_dtype_rule)
lowering.register(tridiagonal_solve_p, _tridiagonal_solve_lowering)


def _shift_down(v, axis):
    """v moved one place down `axis` (first entry 0, last dropped): out[i] = v[i-1]."""
    from .structural import pad
    nd = aval_of(v).ndim
    config = [(0, 0, 0)] * nd
    config[axis] = (1, -1, 0)
    return pad(v, np.zeros((), aval_of(v).dtype), config)


def _shift_up(v, axis):
    """out[i] = v[i+1], last entry 0."""
    from .structural import pad
    nd = aval_of(v).ndim
    config = [(0, 0, 0)] * nd
    config[axis] = (-1, 1, 0)
    return pad(v, np.zeros((), aval_of(v).dtype), config)


def _tridiagonal_product(dl, d, du, x):
    """A x for A given by its diagonals (..., m) and x (..., m, n): dl[i] x[i-1] + d[i] x[i] + du[i] x[i+1]."""
    from .elementwise import add, mul
    from .structural import broadcast_in_dim
    shape = aval_of(x).shape
    rows = len(shape) - 2
    col = tuple(range(rows + 1))

    def spread(v):
        return broadcast_in_dim(v, shape, col)

    lower = mul(spread(dl), _shift_down(x, rows))
    upper = mul(spread(du), _shift_up(x, rows))
    return add(add(lower, mul(spread(d), x)), upper)


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    # A x = b  =>  dx = A^-1 (db - dA x)
    from .elementwise import sub
    *diags, _ = primals
    *diags_t, b_t = tangents
    x = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    rhs = ad.instantiate_zeros(b_t)
    if any(type(t) is not ad.Zero for t in diags_t):
        rhs = sub(rhs, _tridiagonal_product(*[ad.instantiate_zeros(t) for t in diags_t], x))
    return x, tridiagonal_solve_p.bind(*diags, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    # A^T has subdiagonal du shifted down one place and superdiagonal dl shifted up one place
    if any(ad.is_undefined(v) for v in (dl, d, du)):
        raise NotImplementedError("tridiagonal_solve is linear in b only; it cannot be transposed in the diagonals.")
    axis = aval_of(d).ndim - 1
    ct_b = tridiagonal_solve_p.bind(_shift_down(du, axis), d, _shift_up(dl, axis), ad.instantiate_zeros(ct),
                                    perturb_singular=perturb_singular)
    return [None, None, None, ct_b]


def _tridiagonal_solve_batch_rule(vals, dims, *, perturb_singular):
    from .structural import reshape
    dl, d, du, b = vals
    ddl, dd, ddu, db = dims
    if ddl is None and dd is None and ddu is None:
        # one matrix for every example: the examples become extra columns of b
        b = batching.moveaxis(b, db, aval_of(b).ndim - 2)
        shape = aval_of(b).shape
        folded = shape[:-2] + (shape[-2] * shape[-1],)
        out = tridiagonal_solve_p.bind(dl, d, du, reshape(b, folded), perturb_singular=perturb_singular)
        return reshape(out, shape), len(shape) - 2
    size = batching.batch_size(vals, dims)
    vals = [batching.bdim_at_front(v, dim, size) for v, dim in zip(vals, dims, strict=True)]
    return tridiagonal_solve_p.bind(*vals, perturb_singular=perturb_singular), 0


ad.jvp_rules[tridiagonal_solve_p] = _tridiagonal_solve_jvp
ad.transpose_rules[tridiagonal_solve_p] = _tridiagonal_solve_transpose
batching.batching_rules[tridiagonal_solve_p] = _tridiagonal_solve_batch_rule


# ----- tridiagonal ------------------------------------------------------------------------------

def tridiagonal(a, *, lower=True):
    """Reduce Hermitian matrices to tridiagonal form: `(arr, d, e, taus)` (as `jax.lax.linalg`).

    Q^H A Q = T with T real symmetric tridiagonal: `d` (..., n) is its diagonal and `e`
    (..., n-1) its off-diagonal (real dtype). `arr` holds T's diagonals plus the Householder
    reflectors whose product is Q (below the subdiagonal with `lower`, else above the
    superdiagonal), `taus` (..., n-1) their scale factors; only the `lower` (or upper) triangle
    of `a` is read. LAPACK sytrd/hetrd, CPU only; failure gives NaN; no derivative (as in JAX).

    Example:
        >>> arr, d, e, taus = lax.linalg.tridiagonal(jnp.array([[2., 1.], [1., 3.]]))
        >>> d, e
        (Array([2., 3.], dtype=float32), Array([1.], dtype=float32))
    """
    return tuple(tridiagonal_p.bind(a, lower=bool(lower)))


def _tridiagonal_shape_rule(a, *, lower):
    _check_matrix("tridiagonal", a)
    n = a.shape[-1]
    if n == 0:
        raise TypeError(f"tridiagonal requires a non-empty square matrix, got shape {a.shape}.")
    batch = a.shape[:-2]
    return a.shape, batch + (n,), batch + (n - 1,), batch + (n - 1,)


def _tridiagonal_dtype_rule(a, *, lower):
    check_dtype_accepted("tridiagonal", a.dtype, FLOAT_OR_COMPLEX)
    real = _real_dtype(a.dtype)
    return a.dtype, real, real, a.dtype


def _tridiagonal_lowering(ctx, a, *, lower):
    b, aval = ctx.b, ctx.avals_in[0]
    routine = "hetrd" if dtypes.is_complex(aval.dtype) else "sytrd"
    target = custom_calls.lapack_target(routine, aval.dtype, "tridiagonal")
    batch = aval.shape[:-2]
    vec = _layout(aval.ndim - 1, False)
    outs = _custom_call(b, target, [a], list(ctx.avals_out) + [ShapedArray(batch, np.int32)],
                        {"uplo": _char("L" if lower else "U")}, [_layout(aval.ndim)],
                        [_layout(aval.ndim), vec, vec, vec, _layout(len(batch), False)])
    *results, info = outs
    return [_nan_where_failed(b, info, batch, r, o) for r, o in zip(results, ctx.avals_out, strict=True)]


tridiagonal_p = standard_primitive("tridiagonal", _tridiagonal_shape_rule, _tridiagonal_dtype_rule,
                                   multiple_results=True)
lowering.register(tridiagonal_p, _tridiagonal_lowering)
batching.batching_rules[tridiagonal_p] = _leading_batch_rule(tridiagonal_p)


def _tridiagonal_jvp(primals, tangents, **_):
    raise NotImplementedError("tridiagonal has no derivative (as in JAX); lax.linalg.eigh differentiates the "
                              "eigendecomposition it is usually a step of.")


ad.jvp_rules[tridiagonal_p] = _tridiagonal_jvp

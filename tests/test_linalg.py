"""lax.linalg primitives (LAPACK custom calls) and core.numpy.linalg against NumPy float64.

Factorizations are checked by their defining identities (L L^H = A, Q R = A with orthonormal Q,
U S V^H = A, A v = w v, P L U = A) since their factors are unique only up to signs/phases.
"""
import numpy as np
import pytest

import core.numpy as jnp
from core import test_util as tu
from core.lax import linalg as lax_linalg
from core.numpy import linalg as LA

F32, F64, C64 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64)
# LAPACK in float32 loses a few ulps per operation on these small, well-conditioned matrices
TOL = {F32: 2e-5, C64: 2e-5, F64: 1e-12}


def _rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _hpd(rng, shape, dtype):
    """A Hermitian positive-definite (well conditioned) matrix batch."""
    x = _rand(rng, shape, dtype).astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)
    n = shape[-1]
    return (x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)).astype(dtype)


def _H(x):
    return np.conj(np.swapaxes(x, -1, -2))


def _close(actual, expected, dtype, scale=1.0):
    tol = TOL[np.dtype(dtype)] * scale
    tu.assert_allclose(actual, expected, dtype, atol=tol, rtol=tol)


SQUARE = [(3, 3), (2, 4, 4), (1, 1), (0, 0), (2, 0, 0)]
RECT = [(4, 3), (3, 5), (2, 3, 2), (0, 3), (3, 0)]
DTYPES = [F32, C64]


# ----- lax.linalg ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dtype", tu.sample_cases(tu.product(SQUARE, DTYPES), "cholesky", 5))
def test_cholesky_reconstructs(rng, shape, dtype):
    a = _hpd(rng, shape, dtype)
    factor = np.asarray(lax_linalg.cholesky(jnp.asarray(a)))
    assert factor.shape == shape and factor.dtype == dtype
    np.testing.assert_array_equal(np.triu(factor, 1), 0)
    _close(factor @ _H(factor), a, dtype, scale=10)


def test_cholesky_reads_lower_triangle_and_fails_with_nan(rng):
    a = _hpd(rng, (2, 3, 3), F32)
    lower_only = np.tril(a) + np.triu(np.full((3, 3), 100.0, np.float32), 1)
    factor = np.asarray(lax_linalg.cholesky(jnp.asarray(lower_only), symmetrize_input=False))
    _close(factor, np.linalg.cholesky(a.astype(np.float64)), F32, scale=10)
    bad = a.copy()
    bad[1] = -bad[1]  # negative definite: LAPACK reports failure for this matrix only
    out = np.asarray(lax_linalg.cholesky(jnp.asarray(bad)))
    assert np.isnan(out[1]).all() and not np.isnan(out[0]).any()


@pytest.mark.parametrize("shape,dtype", tu.sample_cases(tu.product(SQUARE + RECT, DTYPES), "lu", 6))
def test_lu_reconstructs(rng, shape, dtype):
    a = _rand(rng, shape, dtype)
    lu, pivots, perm = (np.asarray(t) for t in lax_linalg.lu(jnp.asarray(a)))
    m, n = shape[-2:]
    k = min(m, n)
    assert pivots.shape == shape[:-2] + (k,) and perm.shape == shape[:-2] + (m,)
    assert pivots.dtype == perm.dtype == np.int32
    lower = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
    upper = np.triu(lu)[..., :k, :]
    _close(lower @ upper, np.take_along_axis(a, perm[..., None].astype(np.intp), -2), dtype, scale=10)
    # the permutation is the pivots' row swaps applied in order (an independent loop)
    for idx in np.ndindex(shape[:-2]):
        expected = np.arange(m)
        for i, p in enumerate(pivots[idx]):
            expected[[i, p]] = expected[[p, i]]
        np.testing.assert_array_equal(perm[idx], expected)


def test_lu_pivots_follow_partial_pivoting():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    lu, pivots, perm = lax_linalg.lu(jnp.asarray(a))
    np.testing.assert_array_equal(np.asarray(pivots), [1, 1])
    np.testing.assert_array_equal(np.asarray(perm), [1, 0])
    tu.assert_allclose(lu, [[3.0, 4.0], [1 / 3, 2 - 4 / 3]], F32, atol=1e-6)


def _swaps_applied(pivots, m):
    """The loop the lu lowering must agree with: row i <-> row pivots[i], in order."""
    perm = np.arange(m)
    for i, p in enumerate(pivots):
        perm[[i, p]] = perm[[p, i]]
    return perm


def _with_row_order(rng, order, n):
    """A matrix whose partial pivoting picks its rows in `order`: A[order] = L U with |L| < 1
    below a unit diagonal, so step i always finds LU's row i largest in column i."""
    m = len(order)
    lower = np.tril(rng.uniform(-0.9, 0.9, (m, n)), -1) + np.eye(m, n)
    upper = np.triu(rng.uniform(-1, 1, (n, n))) + 4 * np.eye(n)
    a = np.empty((m, n))
    a[np.asarray(order)] = lower @ upper
    return a.astype(np.float32)


def test_lu_permutation_follows_long_swap_chains(rng):
    # a cyclic shift makes every swap move the row the previous swap moved (pivots i+1): the
    # longest dependence chain; the lowering's loop body must carry each swap to the next
    n = 17
    shift = list(range(1, n)) + [0]
    lu, pivots, perm = lax_linalg.lu(jnp.asarray(_with_row_order(rng, shift, n)))
    np.testing.assert_array_equal(np.asarray(pivots), list(range(1, n)) + [n - 1])
    np.testing.assert_array_equal(np.asarray(perm), shift)
    # a batch, each matrix with its own order (the batched loop body), and a tall matrix whose
    # rows below the last pivot are placed by the swaps alone
    orders = [list(range(1, 9)) + [0], list(range(8, -1, -1)), list(rng.permutation(9))]
    batch = np.stack([_with_row_order(rng, o, 9) for o in orders])
    _, pivots, perm = (np.asarray(t) for t in lax_linalg.lu(jnp.asarray(batch)))
    for o, p, q in zip(orders, pivots, perm, strict=True):
        np.testing.assert_array_equal(q, o)
        np.testing.assert_array_equal(q, _swaps_applied(p, 9))
    tall = _with_row_order(rng, [6, 0, 5, 1, 4, 2, 3], 4)
    _, pivots, perm = (np.asarray(t) for t in lax_linalg.lu(jnp.asarray(tall)))
    np.testing.assert_array_equal(perm[:4], [6, 0, 5, 1])
    np.testing.assert_array_equal(perm, _swaps_applied(pivots, 7))


@pytest.mark.parametrize("shape,dtype,full", tu.sample_cases(tu.product(SQUARE + RECT, DTYPES, [True, False]), "qr", 8))
def test_qr_reconstructs(rng, shape, dtype, full):
    a = _rand(rng, shape, dtype)
    q, r = (np.asarray(t) for t in lax_linalg.qr(jnp.asarray(a), full_matrices=full))
    m, n = shape[-2:]
    k = m if full else min(m, n)
    assert q.shape == shape[:-2] + (m, k) and r.shape == shape[:-2] + (k, n)
    np.testing.assert_array_equal(np.tril(r, -1), 0)
    _close(q @ r, a, dtype, scale=10)
    _close(_H(q) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), dtype, scale=10)


@pytest.mark.parametrize("shape,dtype", tu.sample_cases(tu.product(SQUARE, DTYPES), "eigh", 5))
def test_eigh_ascending_and_reconstructs(rng, shape, dtype):
    a = _hpd(rng, shape, dtype) - 2 * np.eye(shape[-1], dtype=dtype)  # mixed-sign eigenvalues
    v, w = (np.asarray(t) for t in lax_linalg.eigh(jnp.asarray(a)))
    assert w.dtype == np.float32 and v.dtype == dtype
    _close(w, np.linalg.eigvalsh(a.astype(np.complex128 if dtype.kind == "c" else np.float64)), dtype, scale=10)
    assert (np.diff(w, axis=-1) >= 0).all()
    _close(a @ v, v * w[..., None, :], dtype, scale=20)
    _close(_H(v) @ v, np.broadcast_to(np.eye(shape[-1]), v.shape), dtype, scale=10)


def test_eigh_upper_triangle_without_symmetrize(rng):
    a = _hpd(rng, (3, 3), F32)
    junk = np.triu(a) + np.tril(np.full((3, 3), -50.0, np.float32), -1)
    _, w = lax_linalg.eigh(jnp.asarray(junk), lower=False, symmetrize_input=False)
    _close(w, np.linalg.eigvalsh(a.astype(np.float64)), F32, scale=10)


@pytest.mark.parametrize("shape,dtype,full", tu.sample_cases(tu.product(SQUARE + RECT, DTYPES, [True, False]), "svd", 8))
def test_svd_reconstructs(rng, shape, dtype, full):
    a = _rand(rng, shape, dtype)
    u, s, vh = (np.asarray(t) for t in lax_linalg.svd(jnp.asarray(a), full_matrices=full))
    m, n = shape[-2:]
    k = min(m, n)
    assert s.shape == shape[:-2] + (k,) and s.dtype == np.float32
    assert u.shape == shape[:-2] + ((m, m) if full else (m, k))
    assert vh.shape == shape[:-2] + ((n, n) if full else (k, n))
    expected = np.linalg.svd(a.astype(np.complex128 if dtype.kind == "c" else np.float64), compute_uv=False)
    _close(s, expected, dtype, scale=10)
    _close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype, scale=10)
    _close(_H(u) @ u, np.broadcast_to(np.eye(u.shape[-1]), u.shape[:-2] + (u.shape[-1],) * 2), dtype, scale=10)
    s_only = lax_linalg.svd(jnp.asarray(a), compute_uv=False)
    _close(s_only, expected, dtype, scale=10)


@pytest.mark.parametrize("left,lower,transpose,conjugate,unit", tu.sample_cases(
    tu.product([True, False], [True, False], [True, False], [True, False], [True, False]), "trsm", 6))
def test_triangular_solve_options(rng, left, lower, transpose, conjugate, unit):
    dtype = C64
    a = _rand(rng, (2, 3, 3), dtype) + 4 * np.eye(3, dtype=dtype)
    b = _rand(rng, (2, 3, 2) if left else (2, 2, 3), dtype)
    x = np.asarray(lax_linalg.triangular_solve(jnp.asarray(a), jnp.asarray(b), left_side=left, lower=lower,
                                               transpose_a=transpose, conjugate_a=conjugate, unit_diagonal=unit))
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        t = t * (1 - np.eye(3)) + np.eye(3)  # the kernel must not read the stored diagonal
    op = np.swapaxes(t, -1, -2) if transpose else t
    op = np.conj(op) if conjugate else op
    _close(op @ x if left else x @ op, b, dtype, scale=10)


def test_float64_decompositions(rng, x64):
    a = _rand(rng, (2, 4, 4), F64)
    spd = _hpd(rng, (4, 4), F64)
    factor = np.asarray(lax_linalg.cholesky(jnp.asarray(spd)))
    assert factor.dtype == F64
    _close(factor @ factor.T, spd, F64, scale=10)
    q, r = (np.asarray(t) for t in lax_linalg.qr(jnp.asarray(a)))
    _close(q @ r, a, F64, scale=10)
    u, s, vh = (np.asarray(t) for t in lax_linalg.svd(jnp.asarray(a)))
    _close(u * s[..., None, :] @ vh, a, F64, scale=10)
    v, w = (np.asarray(t) for t in lax_linalg.eigh(jnp.asarray(spd)))
    _close(w, np.linalg.eigvalsh(spd), F64, scale=10)
    _close(LA.det(jnp.asarray(a)), np.linalg.det(a), F64, scale=10)
    _close(LA.solve(jnp.asarray(a), jnp.asarray(a[0, 0])), np.linalg.solve(a, a[0, 0]), F64, scale=100)


def test_lax_linalg_errors():
    with pytest.raises(TypeError, match=r"cholesky requires square matrices .*got shape \(3, 4\)"):
        lax_linalg.cholesky(jnp.ones((3, 4)), symmetrize_input=False)
    with pytest.raises(TypeError, match=r"eigh requires an operand with at least 2 dimensions.*\(3,\)"):
        lax_linalg.eigh(jnp.ones(3), symmetrize_input=False)
    with pytest.raises(TypeError, match=r"lu does not accept dtype i32"):
        lax_linalg.lu(jnp.ones((2, 2), jnp.int32))
    with pytest.raises(TypeError, match=r"triangular_solve requires a and b to have equal batch dimensions, "
                                        r"got shapes \(2, 3, 3\) and \(3, 3, 1\)"):
        lax_linalg.triangular_solve(jnp.ones((2, 3, 3)), jnp.ones((3, 3, 1)), left_side=True)
    with pytest.raises(TypeError, match=r"left_side=True requires b's rows to match a's size 3"):
        lax_linalg.triangular_solve(jnp.ones((3, 3)), jnp.ones((4, 1)), left_side=True)
    with pytest.raises(NotImplementedError, match=r"float32, float64, complex64 and complex128.*float16"):
        lax_linalg.qr(jnp.ones((2, 2), jnp.float16))


# ----- core.numpy.linalg --------------------------------------------------------------------------

BATCHED = [(3, 3), (2, 4, 4), (0, 0)]


@pytest.mark.parametrize("shape", BATCHED)
def test_det_slogdet_inv(rng, shape):
    a = _rand(rng, shape, F32)
    a64 = a.astype(np.float64)
    _close(LA.det(jnp.asarray(a)), np.linalg.det(a64), F32, scale=10)
    sign, logdet = LA.slogdet(jnp.asarray(a))
    esign, elogdet = np.linalg.slogdet(a64)
    _close(sign, esign, F32)
    _close(logdet, elogdet, F32, scale=10)
    _close(LA.inv(jnp.asarray(a)), np.linalg.inv(a64), F32, scale=50)


def test_det_of_singular_and_complex(rng):
    singular = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    assert float(LA.det(jnp.asarray(singular))) == 0.0
    sign, logdet = LA.slogdet(jnp.asarray(singular))
    assert float(sign) == 0.0 and float(logdet) == -np.inf
    c = _rand(rng, (3, 3), C64)
    _close(LA.det(jnp.asarray(c)), np.linalg.det(c.astype(np.complex128)), C64, scale=10)
    sign, logdet = LA.slogdet(jnp.asarray(c))
    esign, elogdet = np.linalg.slogdet(c.astype(np.complex128))
    _close(sign, esign, C64, scale=10)
    _close(logdet, elogdet, C64, scale=10)


def test_solve_matrix_vector_and_broadcast(rng):
    a = _rand(rng, (2, 3, 3), F32) + 3 * np.eye(3, dtype=np.float32)
    b = _rand(rng, (3, 2), F32)
    _close(LA.solve(jnp.asarray(a), jnp.asarray(b)), np.linalg.solve(a.astype(np.float64), b), F32, scale=10)
    v = _rand(rng, (3,), F32)
    _close(LA.solve(jnp.asarray(a[0]), jnp.asarray(v)), np.linalg.solve(a[0].astype(np.float64), v), F32, scale=10)
    ints = LA.solve(jnp.asarray(np.array([[2, 0], [0, 4]])), jnp.asarray(np.array([1, 1])))
    assert ints.dtype == np.float32
    tu.assert_allclose(ints, [0.5, 0.25], F32)


def test_cholesky_qr_eigh_svd_wrappers(rng):
    spd = _hpd(rng, (2, 3, 3), F32)
    low = np.asarray(LA.cholesky(jnp.asarray(spd)))
    up = np.asarray(LA.cholesky(jnp.asarray(spd), upper=True))
    _close(low, np.linalg.cholesky(spd.astype(np.float64)), F32, scale=10)
    _close(up, np.swapaxes(low, -1, -2), F32)
    a = _rand(rng, (4, 3), F32)
    q, r = LA.qr(jnp.asarray(a))
    assert q.shape == (4, 3) and r.shape == (3, 3)
    qc, rc = LA.qr(jnp.asarray(a), mode="complete")
    assert qc.shape == (4, 4) and rc.shape == (4, 3)
    _close(np.asarray(qc) @ np.asarray(rc), a, F32, scale=10)
    _close(np.abs(np.asarray(LA.qr(jnp.asarray(a), mode="r"))), np.abs(np.linalg.qr(a.astype(np.float64), mode="r")), F32, scale=10)
    res = LA.eigh(jnp.asarray(spd))
    _close(res.eigenvalues, np.linalg.eigvalsh(spd.astype(np.float64)), F32, scale=10)
    _close(LA.eigvalsh(jnp.asarray(spd)), np.linalg.eigvalsh(spd.astype(np.float64)), F32, scale=10)
    u, s, vh = LA.svd(jnp.asarray(a), full_matrices=False)
    _close(np.asarray(u) * np.asarray(s) @ np.asarray(vh), a, F32, scale=10)
    _close(LA.svdvals(jnp.asarray(a)), np.linalg.svd(a.astype(np.float64), compute_uv=False), F32, scale=10)


VECTOR_ORDS = [None, 1, 2, np.inf, -np.inf, 0, 3, -1]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]


@pytest.mark.parametrize("ord_", VECTOR_ORDS)
def test_vector_norms(rng, ord_):
    x = _rand(rng, (3, 4), F32)
    x[0, 1] = 0.0  # a zero entry: ord=0 counts it out, negative ords see 1/0 = inf
    with np.errstate(divide="ignore"):
        expected = np.linalg.norm(x.astype(np.float64), ord=ord_, axis=1)
        expected_v = np.linalg.vector_norm(x.astype(np.float64), ord=2 if ord_ is None else ord_, axis=0, keepdims=True)
    _close(LA.norm(jnp.asarray(x), ord=ord_, axis=1), expected, F32, scale=5)
    _close(LA.vector_norm(jnp.asarray(x), ord=2 if ord_ is None else ord_, axis=0, keepdims=True), expected_v, F32, scale=5)


@pytest.mark.parametrize("ord_", MATRIX_ORDS)
def test_matrix_norms(rng, ord_):
    x = _rand(rng, (3, 2, 4), C64)
    x64 = x.astype(np.complex128)
    out = LA.norm(jnp.asarray(x), ord=ord_, axis=(2, 0), keepdims=True)
    assert out.dtype == np.float32
    _close(out, np.linalg.norm(x64, ord=ord_, axis=(2, 0), keepdims=True), C64, scale=10)
    if ord_ is not None:
        _close(LA.matrix_norm(jnp.asarray(x), ord=ord_), np.linalg.matrix_norm(x64, ord=ord_), C64, scale=10)


def test_norm_defaults():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    _close(LA.norm(jnp.asarray(x)), np.linalg.norm(x), F32)
    _close(LA.norm(jnp.asarray(x), keepdims=True), np.linalg.norm(x, keepdims=True), F32)
    _close(LA.norm(jnp.asarray(x), ord=1), np.linalg.norm(x, ord=1), F32)
    _close(LA.vector_norm(jnp.asarray(x)), np.linalg.vector_norm(x), F32)


def test_rank_pinv_lstsq(rng):
    low_rank = (_rand(rng, (5, 2), F32) @ _rand(rng, (2, 4), F32)).astype(np.float32)
    assert int(LA.matrix_rank(jnp.asarray(low_rank))) == 2
    assert int(LA.matrix_rank(jnp.asarray(np.zeros(3, np.float32)))) == 0
    assert int(LA.matrix_rank(jnp.asarray(np.eye(3, dtype=np.float32)), tol=0.5)) == 3
    _close(LA.pinv(jnp.asarray(low_rank)), np.linalg.pinv(low_rank.astype(np.float64), rcond=1e-5), F32, scale=50)
    a = _rand(rng, (6, 3), F32)
    b = _rand(rng, (6, 2), F32)
    x, resid, rank, s = LA.lstsq(jnp.asarray(a), jnp.asarray(b))
    ex, eresid, erank, es = np.linalg.lstsq(a.astype(np.float64), b.astype(np.float64), rcond=None)
    _close(x, ex, F32, scale=10)
    _close(resid, eresid, F32, scale=50)
    assert int(rank) == erank
    _close(s, es, F32, scale=10)


def test_matrix_power_multi_dot_cond(rng):
    a = _rand(rng, (2, 3, 3), F32) + 3 * np.eye(3, dtype=np.float32)
    a64 = a.astype(np.float64)
    for n in (0, 1, 5, -2):
        _close(LA.matrix_power(jnp.asarray(a), n), np.linalg.matrix_power(a64, n), F32, scale=100)
    mats = [_rand(rng, (3,), F32), _rand(rng, (3, 4), F32), _rand(rng, (4, 2), F32), _rand(rng, (2,), F32)]
    _close(LA.multi_dot([jnp.asarray(m) for m in mats]), np.linalg.multi_dot([m.astype(np.float64) for m in mats]), F32, scale=10)
    for p in (None, 2, -2, 1, np.inf, "fro"):
        _close(LA.cond(jnp.asarray(a), p), np.linalg.cond(a64, p), F32, scale=100)


def test_array_api_helpers(rng):
    x = _rand(rng, (2, 3, 4), F32)
    y = _rand(rng, (4,), F32)
    _close(LA.trace(jnp.asarray(x), offset=1), np.linalg.trace(x.astype(np.float64), offset=1), F32)
    _close(LA.diagonal(jnp.asarray(x), offset=-1), np.linalg.diagonal(x, offset=-1), F32)
    _close(LA.vecdot(jnp.asarray(x), jnp.asarray(y)), np.linalg.vecdot(x.astype(np.float64), y), F32, scale=5)
    c = _rand(rng, (3,), C64)
    _close(LA.vecdot(jnp.asarray(c), jnp.asarray(c)), np.vdot(c, c), C64, scale=5)
    v = _rand(rng, (2, 3), F32)
    _close(LA.cross(jnp.asarray(v), jnp.asarray(v[::-1])), np.linalg.cross(v, v[::-1]), F32, scale=5)
    _close(LA.outer(jnp.asarray(y), jnp.asarray(y[:2])), np.outer(y, y[:2]), F32)
    _close(LA.matmul(jnp.asarray(x), jnp.asarray(y)), np.linalg.matmul(x.astype(np.float64), y), F32, scale=5)
    assert LA.matrix_transpose(jnp.asarray(x)).shape == (2, 4, 3)
    assert int(LA.trace(jnp.asarray(np.eye(3, dtype=np.int8)))) == 3


def test_numpy_linalg_errors():
    for fn in (LA.inv, LA.det, LA.cholesky, LA.slogdet, LA.eigh):
        with pytest.raises(ValueError, match=r"must be a square matrix.*got shape \(3, 4\)"):
            fn(jnp.ones((3, 4)))
    with pytest.raises(ValueError, match=r"solve: b must have shape \(3,\) or \(\.\.\., 3, k\) to match a of shape "
                                         r"\(3, 3\); got b of shape \(4,\)"):
        LA.solve(jnp.ones((3, 3)), jnp.ones(4))
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting"):
        LA.solve(jnp.ones((2, 3, 3)), jnp.ones((4, 3, 1)))
    with pytest.raises(ValueError, match=r"Invalid order 'bad' for vector norm"):
        LA.norm(jnp.ones(3), ord="bad")
    with pytest.raises(ValueError, match=r"improper number of dimensions.*\(2, 2, 2\)"):
        LA.norm(jnp.ones((2, 2, 2)), ord=2)
    with pytest.raises(ValueError, match=r"qr: unsupported mode 'full'"):
        LA.qr(jnp.ones((2, 2)), mode="full")
    with pytest.raises(ValueError, match=r"cross: both inputs must have size 3"):
        LA.cross(jnp.ones(2), jnp.ones(2))
    with pytest.raises(TypeError, match=r"matrix_power: exponent must be an integer"):
        LA.matrix_power(jnp.eye(2), 1.5)

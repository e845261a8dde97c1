"""The rest of jax.lax.linalg: tridiagonal_solve (+ derivatives), tridiagonal, hessenberg,
householder_product, ormqr, lu_pivots_to_permutation, cholesky_update, symmetric_product, qdwh
and the algorithm enums, against SciPy/NumPy in float64 (and float32 / complex where the kernel
differs by dtype)."""
import numpy as np
import pytest
import scipy.linalg as sl

import core
import core.numpy as jnp
from core import lax
from core import test_util as tu

L = lax.linalg


def _tridiag(rng, m, dtype=np.float64):
    dl, d, du = rng.standard_normal((3, m)).astype(dtype)
    dl[0], du[-1] = 0, 0
    return dl, d, du


def _dense(dl, d, du):
    return np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_tridiagonal_solve_matches_solve_banded(rng, dtype):
    dl, d, du = (v.astype(dtype) for v in _tridiag(rng, 6))
    if dtype == np.complex64:
        d = d + 1j * rng.standard_normal(6).astype(np.float32)
    b = rng.standard_normal((6, 2)).astype(dtype)
    banded = np.stack([np.r_[0, du[:-1]], d, np.r_[dl[1:], 0]]).astype(np.complex128)
    expected = sl.solve_banded((1, 1), banded, b.astype(np.complex128))
    out = L.tridiagonal_solve(dl, d, du, b)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, expected, rtol=2e-4, atol=2e-5)
    # perturb_singular: the same answer for a regular matrix, finite for a singular one
    np.testing.assert_allclose(L.tridiagonal_solve(dl, d, du, b, perturb_singular=True), expected, rtol=2e-4,
                               atol=2e-5)
    zero = np.zeros(6, dtype)
    assert np.isnan(np.asarray(L.tridiagonal_solve(zero, zero, zero, b))).all()
    assert np.isfinite(np.asarray(L.tridiagonal_solve(zero, zero + 1e-30, zero, b, perturb_singular=True))).all()


def test_tridiagonal_solve_derivatives(rng, x64):
    dl, d, du = _tridiag(rng, 4)
    d = d + 4.0   # well conditioned
    b = rng.standard_normal((4, 2))
    tu.check_grads(L.tridiagonal_solve, (dl, d, du, b), order=1)
    # and the reverse-mode gradient in b is the solve with A^T, in the diagonals -(A^-T w) x^T on the band
    w = rng.standard_normal((4, 2))
    grads = core.grad(lambda *a: jnp.sum(w * L.tridiagonal_solve(*a)), argnums=(0, 1, 2, 3))(dl, d, du, b)
    a = _dense(dl, d, du)
    lam = np.linalg.solve(a.T, w)
    full = -lam @ np.linalg.solve(a, b).T
    np.testing.assert_allclose(grads[3], lam, rtol=1e-10)
    np.testing.assert_allclose(grads[1], np.diag(full), rtol=1e-10)
    np.testing.assert_allclose(grads[0][1:], np.diag(full, -1), rtol=1e-10)
    np.testing.assert_allclose(grads[2][:-1], np.diag(full, 1), rtol=1e-10)


def test_tridiagonal_solve_errors():
    with pytest.raises(TypeError, match="same shape"):
        L.tridiagonal_solve(jnp.zeros(3), jnp.zeros(4), jnp.zeros(3), jnp.zeros((3, 1)))
    with pytest.raises(TypeError, match=r"b of shape \(..., m, n\).*f32\[3\]"):
        L.tridiagonal_solve(jnp.zeros(3), jnp.zeros(3), jnp.zeros(3), jnp.zeros(3))


@pytest.mark.parametrize("dtype,lower", [(np.float64, True), (np.complex128, False)])
def test_tridiagonal_reduction(rng, x64, dtype, lower):
    n = 5
    a = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if dtype == np.complex128 else 0)
    a = (a + a.conj().T).astype(dtype)
    arr, d, e, taus = L.tridiagonal(a, lower=lower)
    assert d.dtype == e.dtype == np.float64 and taus.dtype == dtype and arr.shape == a.shape
    t = np.diag(np.asarray(d)) + np.diag(np.asarray(e), 1) + np.diag(np.asarray(e), -1)
    np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(a), rtol=1e-12, atol=1e-12)
    # the diagonals are also stored in arr (LAPACK's packing)
    np.testing.assert_allclose(np.diag(arr), d, rtol=1e-14)
    np.testing.assert_allclose(np.abs(np.diag(arr, -1 if lower else 1)), np.abs(e), rtol=1e-14)


def test_hessenberg_and_householder_product(rng, x64):
    n = 5
    a = rng.standard_normal((n, n))
    arr, taus = L.hessenberg(a)
    h_ref, q_ref = sl.hessenberg(a, calc_q=True)   # LAPACK gehrd + orghr: the same reflectors
    np.testing.assert_allclose(np.triu(arr, -1), h_ref, rtol=1e-12, atol=1e-12)
    # Q = diag(1, householder_product of the reflectors below the subdiagonal)
    q = np.eye(n)
    q[1:, 1:] = L.householder_product(np.asarray(arr)[1:, :-1], taus)
    np.testing.assert_allclose(q, q_ref, atol=1e-12)
    np.testing.assert_allclose(q.T @ a @ q, h_ref, atol=1e-12)
    # householder_product of geqrf's reflectors is the reduced Q of qr
    m = rng.standard_normal((6, 3))
    (raw, tau), _ = sl.qr(m, mode="raw")
    np.testing.assert_allclose(L.householder_product(raw, tau), sl.qr(m, mode="economic")[0], atol=1e-12)
    with pytest.raises(NotImplementedError, match="hessenberg has no derivative"):
        core.grad(lambda a: L.hessenberg(a)[0].sum())(a)
    with pytest.raises(TypeError, match="at least as many rows as columns"):
        L.householder_product(jnp.zeros((2, 3)), jnp.zeros(2))


@pytest.mark.parametrize("left,transpose", [(True, False), (True, True), (False, False), (False, True)])
def test_ormqr_matches_q_products(rng, x64, left, transpose):
    m = rng.standard_normal((5, 3)) + 1j * rng.standard_normal((5, 3))
    (raw, tau), _ = sl.qr(m, mode="raw")
    q = sl.qr(m)[0]
    op = q.conj().T if transpose else q
    c = rng.standard_normal((5, 2) if left else (2, 5))
    out = L.ormqr(raw, tau, c.astype(np.complex128), left=left, transpose=transpose)
    np.testing.assert_allclose(out, op @ c if left else c @ op, atol=1e-12)


def test_lu_pivots_to_permutation():
    # hand-derived: swaps 0<->2 then 1<->2 of (0, 1, 2, 3)
    np.testing.assert_array_equal(L.lu_pivots_to_permutation(np.array([2, 2], np.int32), 4), [2, 0, 1, 3])
    a = np.random.default_rng(1).standard_normal((2, 4, 4)).astype(np.float32)
    _, pivots, perm = L.lu(a)
    np.testing.assert_array_equal(L.lu_pivots_to_permutation(pivots, 4), perm)
    with pytest.raises(TypeError, match="permutation_size .1. must be at least the number of pivots .2."):
        L.lu_pivots_to_permutation(np.array([0, 1], np.int32), 1)


def test_cholesky_update_and_symmetric_product(rng, x64):
    a = rng.standard_normal((4, 4))
    a = a @ a.T + 4 * np.eye(4)
    w = rng.standard_normal(4)
    r = np.linalg.cholesky(a).T
    np.testing.assert_allclose(L.cholesky_update(r, w), np.linalg.cholesky(a + np.outer(w, w)).T, rtol=1e-12,
                               atol=1e-12)
    # the composition's derivative: R'^T R' = a + w w^T changes by w dw^T + dw w^T
    dw = rng.standard_normal(4)
    new, d_new = core.jvp(lambda w: L.cholesky_update(r, w), (w,), (dw,))
    np.testing.assert_allclose(new.T @ d_new + d_new.T @ new, np.outer(w, dw) + np.outer(dw, w), atol=1e-12)
    x, c = rng.standard_normal((3, 2)), rng.standard_normal((3, 3))
    out = L.symmetric_product(x, c, alpha=2.0, beta=0.5)
    np.testing.assert_allclose(out, 2 * x @ x.T + 0.5 * c, rtol=1e-12)
    sym = L.symmetric_product(x, c, alpha=2.0, beta=0.5, symmetrize_output=True)
    low = np.tril(2 * x @ x.T + 0.5 * c)
    np.testing.assert_allclose(sym, low + np.tril(low, -1).T, rtol=1e-12)
    with pytest.raises(TypeError, match=r"symmetric_product expects.*\(3, 2\) and \(2, 2\)"):
        L.symmetric_product(x, np.eye(2))


@pytest.mark.parametrize("shape,dtype", [((5, 3), np.complex128)])
def test_qdwh_polar_decomposition(rng, x64, shape, dtype):
    x = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype == np.complex128 else 0)
    u, h, num_iters, converged = L.qdwh(x.astype(dtype))
    u_ref, h_ref = sl.polar(x)
    assert bool(converged) and 0 < int(num_iters) <= 10
    np.testing.assert_allclose(u, u_ref, atol=1e-10)
    np.testing.assert_allclose(h, h_ref, atol=1e-10)
    with pytest.raises(ValueError, match="m >= n"):
        L.qdwh(np.zeros((2, 3)))


def test_algorithm_enums():
    assert {e.name for e in L.EigImplementation} == {"CUSOLVER", "MAGMA", "LAPACK"}
    assert L.EighImplementation.QR.value == "qr" and L.SvdAlgorithm.POLAR.value == "polar"
    x = np.diag([1.0, 2.0]).astype(np.float32)
    np.testing.assert_allclose(L.eigh(x, implementation=L.EighImplementation.QR)[1], [1, 2])
    np.testing.assert_allclose(L.svd(x, algorithm=L.SvdAlgorithm.DEFAULT)[1], [2, 1])
    w = L.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False,
              implementation=L.EigImplementation.LAPACK)[0]
    np.testing.assert_allclose(np.sort(np.real(w)), [1, 2])
    with pytest.raises(ValueError, match="svd: algorithm=.*JACOBI.*not available here"):
        L.svd(x, algorithm=L.SvdAlgorithm.JACOBI)

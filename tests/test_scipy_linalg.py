"""core.scipy.linalg against scipy.linalg (float64 oracle), derivatives against finite differences,
and each function under jit.

Factorizations are compared where they are unique (LAPACK's choices are the same ones SciPy
makes, so signs agree for lu, qr and cholesky); eigenvectors and singular vectors are compared
through what they reconstruct.
"""
import re

import numpy as np
import pytest
import scipy.linalg as sl

import core
import core.numpy as jnp
from core import test_util as tu
from core.scipy import linalg as csl
from jax_port import port  # tests/ is on sys.path

pytestmark = pytest.mark.usefixtures("x64")


def _spd(rng, n, batch=(), complex_=False):
    x = rng.standard_normal(batch + (n, n))
    if complex_:
        x = x + 1j * rng.standard_normal(batch + (n, n))
    return x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)


def _triangular(rng, n, lower, batch=(), complex_=False):
    x = rng.standard_normal(batch + (n, n))
    if complex_:
        x = x + 1j * rng.standard_normal(batch + (n, n))
    x = x + 4 * np.eye(n)  # a dominant diagonal: well conditioned
    return np.tril(x) if lower else np.triu(x)


def close(actual, expected, tol=1e-10):
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


# ----- Cholesky -----------------------------------------------------------------------------------

@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("complex_", [False, True])
def test_cholesky_reads_only_its_triangle(rng, lower, complex_):
    a = _spd(rng, 4, complex_=complex_)
    # garbage in the triangle that is not read: SciPy ignores it, and so must we
    junk = np.triu(rng.standard_normal((4, 4)), 1)
    given = a + (junk if lower else junk.T)
    out = csl.cholesky(given, lower=lower)
    close(out, sl.cholesky(given, lower=lower))
    c, low = csl.cho_factor(given, lower=lower)
    assert low is lower
    close(c, sl.cholesky(given, lower=lower))  # the other triangle is zero (JAX), not left as found


def test_cholesky_of_indefinite_matrix_is_nan():
    out = np.asarray(csl.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]])))
    assert np.isnan(out).all()


@pytest.mark.parametrize("lower", [False, True])
def test_cho_solve_vector_matrix_and_batch(rng, lower):
    a = _spd(rng, 3)
    factor = csl.cho_factor(a, lower=lower)
    b = rng.standard_normal(3)
    close(csl.cho_solve(factor, b), sl.cho_solve(sl.cho_factor(a, lower=lower), b))
    bm = rng.standard_normal((3, 2))
    close(csl.cho_solve(factor, bm), np.linalg.solve(a, bm))
    # a stack of factors against one right-hand side: the batch broadcasts
    stack = _spd(rng, 3, (2,))
    close(csl.cho_solve(csl.cho_factor(stack, lower=lower), bm), np.linalg.solve(stack, bm))


# ----- triangular solves --------------------------------------------------------------------------

@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve_triangular(rng, trans, lower):
    a = _triangular(rng, 4, lower, complex_=True)
    a_junk = a + (np.triu(np.ones((4, 4)), 1) if lower else np.tril(np.ones((4, 4)), -1))  # not read
    b = rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))
    close(csl.solve_triangular(a_junk, b, trans=trans, lower=lower),
          sl.solve_triangular(a_junk, b, trans=trans, lower=lower))
    close(csl.solve_triangular(a_junk, b[:, 0], trans=trans, lower=lower, unit_diagonal=True),
          sl.solve_triangular(a_junk, b[:, 0], trans=trans, lower=lower, unit_diagonal=True))


def test_solve_triangular_batch_broadcasts(rng):
    a = _triangular(rng, 3, True, (2,))
    b = rng.standard_normal((3, 4))
    expected = np.stack([sl.solve_triangular(a[i], b, lower=True) for i in range(2)])
    close(csl.solve_triangular(a, b, lower=True), expected)


def test_solve_triangular_errors_name_the_problem():
    with pytest.raises(ValueError, match=re.escape("solve_triangular: `trans` must be 0 ('N'), 1 ('T') or 2 ('C'); "
                                                   "got 3")):
        csl.solve_triangular(np.eye(2), np.ones(2), trans=3)
    with pytest.raises(ValueError, match=re.escape("solve_triangular: `b` must have shape (..., 2, k) to match `a` "
                                                   "float64[2, 2]; got float64[3, 1]")):
        csl.solve_triangular(np.eye(2), np.ones((3, 1)))
    with pytest.raises(ValueError, match=re.escape("must be a square matrix or a stack of them, shape (..., n, n); "
                                                   "got float64[2, 3]")):
        csl.solve_triangular(np.ones((2, 3)), np.ones(2))


# ----- LU -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
def test_lu_matches_scipy(rng, shape):
    a = rng.standard_normal(shape)
    p, l, u = csl.lu(a)
    ep, el, eu = sl.lu(a)
    close(p, ep)
    close(l, el)
    close(u, eu)
    pl, u2 = csl.lu(a, permute_l=True)
    epl, _ = sl.lu(a, permute_l=True)
    close(pl, epl)
    close(u2, eu)


def test_lu_batch(rng):
    a = rng.standard_normal((2, 3, 3))
    p, l, u = csl.lu(a)
    close(p @ l @ u, a)
    for i in range(2):
        close(u[i], sl.lu(a[i])[2])


def test_lu_factor_and_solve(rng):
    a = rng.standard_normal((5, 5))
    lu, piv = csl.lu_factor(a)
    elu, epiv = sl.lu_factor(a)
    close(lu, elu)
    assert piv.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(piv), epiv)
    b = rng.standard_normal((5, 2)) + 1j * rng.standard_normal((5, 2))
    for trans in (0, 1, 2):
        close(csl.lu_solve((lu, piv), b, trans=trans), sl.lu_solve((elu, epiv), b, trans=trans))
        close(csl.lu_solve((lu, piv), b[:, 1], trans=trans), sl.lu_solve((elu, epiv), b[:, 1], trans=trans))


def test_lu_solve_batch(rng):
    a = rng.standard_normal((3, 4, 4))
    b = rng.standard_normal((3, 4))  # one dimension fewer than lu: a stack of vectors
    factors = csl.lu_factor(a)
    close(csl.lu_solve(factors, b), np.stack([np.linalg.solve(a[i], b[i]) for i in range(3)]))
    bm = rng.standard_normal((1, 4, 2))  # as many dimensions as lu: matrices, the batch broadcasts
    close(csl.lu_solve(factors, bm, trans=1), np.stack([np.linalg.solve(a[i].T, bm[0]) for i in range(3)]))


# ----- QR, SVD, eigh ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3)])
@pytest.mark.parametrize("mode", ["full", "economic", "r"])
def test_qr_matches_scipy(rng, shape, mode):
    a = rng.standard_normal(shape)
    out = csl.qr(a, mode=mode)
    expected = sl.qr(a, mode=mode)
    assert type(out) is tuple and len(out) == len(expected)
    for x, e in zip(out, expected):
        close(x, e)


def test_qr_unsupported_modes():
    with pytest.raises(ValueError, match="qr: `mode` must be 'full', 'r' or 'economic'"):
        csl.qr(np.eye(2), mode="raw")
    with pytest.raises(NotImplementedError, match="pivoting"):
        csl.qr(np.eye(2), pivoting=True)


@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_matches_scipy(rng, full_matrices):
    a = rng.standard_normal((4, 3))
    u, s, vh = csl.svd(a, full_matrices=full_matrices)
    eu, es, evh = sl.svd(a, full_matrices=full_matrices)
    close(s, es)
    assert u.shape == eu.shape and vh.shape == evh.shape
    close((np.asarray(u)[:, :3] * np.asarray(s)) @ np.asarray(vh)[:3], a)
    close(csl.svd(a, compute_uv=False), es)


def test_eigh_matches_scipy(rng):
    a = _spd(rng, 4, complex_=True) - 6 * np.eye(4)
    w, v = csl.eigh(a)
    ew = sl.eigh(a, eigvals_only=True)
    close(w, ew)
    close(np.asarray(v) @ np.diag(ew) @ np.conj(np.asarray(v).T), a)
    close(csl.eigh(a, eigvals_only=True), ew)
    close(csl.eigh(a, eigvals_only=True, subset_by_index=(1, 2)), ew[1:3])


@pytest.mark.parametrize("type_", [1, 2, 3])
def test_generalized_eigh_matches_scipy(rng, type_):
    a = _spd(rng, 3) - 4 * np.eye(3)
    b = _spd(rng, 3)
    w, v = csl.eigh(a, b, type=type_)
    ew, ev = sl.eigh(a, b, type=type_)
    close(w, ew, 1e-9)
    # eigenvectors are unique up to sign (distinct eigenvalues) under the same normalization
    v, ev = np.asarray(v), ev
    close(v * np.sign(v[0]), ev * np.sign(ev[0]), 1e-9)


# ----- general solve, inverse, determinant --------------------------------------------------------

@pytest.mark.parametrize("assume_a", ["gen", "sym", "her", "pos"])
def test_solve_matches_scipy(rng, assume_a):
    a = _spd(rng, 4)
    b = rng.standard_normal((4, 2))
    close(csl.solve(a, b, assume_a=assume_a), sl.solve(a, b, assume_a=assume_a))
    close(csl.solve(a, b[:, 0], assume_a=assume_a), sl.solve(a, b[:, 0], assume_a=assume_a))


@pytest.mark.parametrize("lower", [False, True])
def test_solve_pos_reads_only_its_triangle(rng, lower):
    a = _spd(rng, 3)
    junk = np.triu(rng.standard_normal((3, 3)), 1)
    given = a + (junk.T if not lower else junk)  # junk lands in the triangle that is not read
    b = rng.standard_normal(3)
    close(csl.solve(given, b, assume_a="pos", lower=lower), sl.solve(given, b, assume_a="pos", lower=lower))


def test_solve_rejects_unknown_assume_a():
    with pytest.raises(ValueError, match=re.escape("solve: `assume_a` must be one of ('gen', 'sym', 'her', 'pos'); "
                                                   "got 'banded'")):
        csl.solve(np.eye(2), np.ones(2), assume_a="banded")


def test_inv_and_det(rng):
    a = rng.standard_normal((2, 3, 3))
    close(csl.inv(a), sl.inv(a))
    close(csl.det(a), np.linalg.det(a))


# ----- expm ---------------------------------------------------------------------------------------

# 1-norms that pick each Pade degree (3, 5, 7, 9, 13 in float64) and then need squarings
@pytest.mark.parametrize("norm", [0.01, 0.2, 0.9, 2.0, 5.0, 40.0])
def test_expm_matches_scipy(rng, norm):
    a = rng.standard_normal((4, 4))
    a *= norm / np.abs(a).sum(0).max()
    close(csl.expm(a), sl.expm(a), 1e-12 * max(1.0, np.exp(norm)))


def test_expm_float32(rng):
    a = rng.standard_normal((3, 3)).astype(np.float32)
    for scale in (0.1, 1.0, 3.0, 10.0):  # each float32 degree (3, 5, 7) and squarings
        out = csl.expm(scale * a)
        assert out.dtype == np.float32
        expected = sl.expm(scale * a.astype(np.float64))
        np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-5, atol=2e-5 * np.abs(expected).max())


def test_expm_complex_batch_and_upper_triangular(rng):
    a = rng.standard_normal((2, 3, 3)) + 1j * rng.standard_normal((2, 3, 3))
    close(csl.expm(a), np.stack([sl.expm(x) for x in a]))
    t = np.triu(rng.standard_normal((4, 4)))
    close(csl.expm(t, upper_triangular=True), sl.expm(t))


def test_expm_beyond_max_squarings_is_nan():
    a = np.array([[1e3, 0.0], [0.0, 1.0]])  # needs 8 squarings
    assert np.isnan(np.asarray(csl.expm(a, max_squarings=4))).all()
    # a 1-norm of 20 needs 2 squarings; JAX's count (1) left 4e-8 relative error in float64
    out = csl.expm(np.array([[2.0, 0.0], [0.0, 1.0]]) * 10, max_squarings=4)
    np.testing.assert_allclose(np.asarray(out), np.diag(np.exp([20.0, 10.0])), rtol=1e-13)


# ----- Schur, sqrtm, logm ------------------------------------------------------------------------

@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur_matches_scipy(rng, output):
    a = rng.standard_normal((4, 4))
    t, z = csl.schur(a, output=output)
    et, ez = sl.schur(a, output=output)
    assert np.asarray(t).dtype == et.dtype
    close(t, et)  # the same LAPACK routine: the same factors
    close(z, ez)
    close(np.asarray(z) @ np.asarray(t) @ np.conj(np.asarray(z).T), a)


def test_schur_batch_vmap_and_failure_modes(rng):
    a = rng.standard_normal((3, 3, 3))
    t, z = csl.schur(a)
    tv, zv = core.vmap(csl.schur)(a)
    for i in range(3):
        et, ez = sl.schur(a[i])
        close(t[i], et)
        close(tv[i], et)
        close(zv[i], ez)
    with pytest.raises(ValueError, match="schur: `output` must be 'real' or 'complex'; got 'quasi'"):
        csl.schur(a, output="quasi")
    # no derivative, as in JAX
    with pytest.raises(NotImplementedError, match=re.escape("schur has no derivative (as in JAX); functions built "
                                                            "on it (scipy.linalg.sqrtm, logm) cannot be")):
        core.grad(lambda a: jnp.sum(jnp.abs(csl.sqrtm(a))))(a[0])


# well conditioned, ill-scaled, complex, non-normal; the last two have negative real eigenvalues
MATRIX_FUNCTION_CASES = {
    "general": lambda rng: rng.standard_normal((4, 4)) + 2 * np.eye(4),
    "shifted": lambda rng: rng.standard_normal((5, 5)) + 5 * np.eye(5),
    "complex": lambda rng: rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)),
    "large": lambda rng: 100 * rng.standard_normal((3, 3)) + 300 * np.eye(3),
    "non_normal": lambda rng: np.array([[1.0, 1e3], [0.0, 2.0]]),
    "negative": lambda rng: -np.eye(2) + np.triu(np.ones((2, 2)), 1),
    "random": lambda rng: rng.standard_normal((4, 4)),
}


@pytest.mark.parametrize("case", sorted(MATRIX_FUNCTION_CASES))
def test_sqrtm_and_logm_match_scipy(rng, case):
    a = MATRIX_FUNCTION_CASES[case](rng)
    root, log = np.asarray(csl.sqrtm(a)), np.asarray(csl.logm(a))
    assert root.dtype == np.complex128 and log.dtype == np.complex128  # always complex, as JAX's sqrtm
    scale = np.abs(a).max()
    close(root @ root / scale, a / scale, 1e-12)
    close(sl.expm(log) / scale, a / scale, 1e-12)
    eigenvalues = np.linalg.eigvals(a)
    if np.any((np.abs(eigenvalues.imag) < 1e-9) & (eigenvalues.real < 0)):
        # no principal root or logarithm (an eigenvalue on the branch cut): SciPy's choice of
        # +-i for it comes from the sign of a zero, so only the defining identities are checked
        return
    expected_root, expected_log = sl.sqrtm(a), sl.logm(a)
    close(root / np.abs(expected_root).max(), expected_root / np.abs(expected_root).max(), 1e-12)
    close(log / np.abs(expected_log).max(), expected_log / np.abs(expected_log).max(), 1e-12)


def test_matrix_functions_float32_batch_and_jit(rng):
    a = (rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
    root = csl.sqrtm(a)
    log = core.jit(csl.logm)(a)
    assert root.dtype == np.complex64 and log.dtype == np.complex64
    for i in range(2):
        np.testing.assert_allclose(np.asarray(root[i]), sl.sqrtm(a[i].astype(np.float64)), atol=2e-5)
        np.testing.assert_allclose(np.asarray(log[i]), sl.logm(a[i].astype(np.float64)), atol=2e-5)
    close(core.jit(csl.sqrtm)(a.astype(np.float64)), csl.sqrtm(a.astype(np.float64)), 1e-13)
    assert np.isnan(np.asarray(csl.logm(np.zeros((2, 2))))).all()  # a singular matrix has no logarithm
    with pytest.raises(NotImplementedError, match="sqrtm: only blocksize=1 is implemented"):
        csl.sqrtm(np.eye(2), blocksize=2)


# ----- building matrices --------------------------------------------------------------------------

def test_block_diag_matches_scipy():
    parts = [np.array([[1, 2], [3, 4]]), np.array([5.5]), 7, np.ones((0, 2)), np.arange(6).reshape(3, 2)]
    out = csl.block_diag(*parts)
    expected = sl.block_diag(*parts)
    assert out.dtype == np.float64
    close(out, expected)
    close(csl.block_diag(), sl.block_diag())
    with pytest.raises(ValueError, match=re.escape("block_diag: arguments must have at most 2 dimensions; argument 1 "
                                                   "is float32[1, 1, 1]")):
        csl.block_diag(np.eye(2), np.ones((1, 1, 1), np.float32))


def test_toeplitz_matches_scipy(rng):
    c = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    r = rng.standard_normal(3)
    close(csl.toeplitz(c, r), sl.toeplitz(c, r))
    close(csl.toeplitz(c), sl.toeplitz(c))
    close(csl.toeplitz(np.arange(3)), sl.toeplitz(np.arange(3)))
    # batched, as JAX: (..., m) and (..., n) give (..., m, n)
    cb, rb = rng.standard_normal((2, 3)), rng.standard_normal((2, 5))
    close(csl.toeplitz(cb, rb), np.stack([sl.toeplitz(cb[i], rb[i]) for i in range(2)]))


# ----- derivatives --------------------------------------------------------------------------------

def _sym(x):
    return (x + jnp.swapaxes(x, -1, -2)) / 2


GRADIENT_CASES = {
    # Hermitian-input functions are checked along symmetric perturbations (their domain)
    "cholesky": (lambda x: csl.cholesky(_sym(x) + 4 * jnp.eye(3)), [(3, 3)]),
    "cho_solve": (lambda x, b: csl.cho_solve(csl.cho_factor(_sym(x) + 4 * jnp.eye(3), lower=True), b),
                  [(3, 3), (3, 2)]),
    "solve_triangular": (lambda a, b: csl.solve_triangular(a + 4 * jnp.eye(3), b, trans=1), [(3, 3), (3,)]),
    "lu": (lambda a: csl.lu(a + 4 * jnp.eye(3))[1:], [(3, 3)]),
    "lu_solve": (lambda a, b: csl.lu_solve(csl.lu_factor(a + 4 * jnp.eye(3)), b, trans=2), [(3, 3), (3, 2)]),
    "qr": (lambda a: csl.qr(a, mode="economic"), [(4, 3)]),
    "eigh": (lambda a: csl.eigh(_sym(a) + jnp.diag(jnp.array([0.0, 3.0, 6.0])), eigvals_only=True), [(3, 3)]),
    "eigh_generalized": (lambda a, b: csl.eigh(_sym(a) + jnp.diag(jnp.array([0.0, 3.0, 6.0])),
                                               _sym(b) + 4 * jnp.eye(3), eigvals_only=True), [(3, 3), (3, 3)]),
    "svd": (lambda a: csl.svd(a + jnp.diag(jnp.array([0.0, 3.0, 6.0])), compute_uv=False), [(3, 3)]),
    "inv": (lambda a: csl.inv(a + 4 * jnp.eye(3)), [(3, 3)]),
    "det": (csl.det, [(3, 3)]),
    "solve": (lambda a, b: csl.solve(a + 4 * jnp.eye(3), b), [(3, 3), (3,)]),
    "solve_pos": (lambda a, b: csl.solve(_sym(a) + 4 * jnp.eye(3), b, assume_a="pos"), [(3, 3), (3, 2)]),
    "expm": (lambda a: csl.expm(6 * a), [(3, 3)]),  # a 1-norm near 10: degree 13 and squarings
    "toeplitz": (lambda c, r: csl.toeplitz(c, r), [(3,), (4,)]),
    "block_diag": (lambda a, b: csl.block_diag(a, b), [(2, 2), (1, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradients_match_finite_differences(rng, name):
    fn, shapes = GRADIENT_CASES[name]
    args = tuple(0.5 * rng.standard_normal(s) for s in shapes)
    # under jit: one compile per derivative program instead of one per eager operation
    tu.check_grads(core.jit(fn), args, order=1, atol=1e-6, rtol=1e-6)


def test_solve_pos_gradient_is_that_of_the_full_matrix(rng):
    # as JAX's custom_linear_solve: d/da of sum(g * a^-1 b) is -(a^-T g) x^T for the full a (both
    # triangles), although the value reads only one triangle
    a = _spd(rng, 3)
    b = rng.standard_normal(3)
    g = rng.standard_normal(3)
    grad = core.grad(lambda a: jnp.sum(g * csl.solve(a, b, assume_a="pos")))(a)
    x = np.linalg.solve(a, b)
    close(grad, -np.outer(np.linalg.solve(a.T, g), x))


# ----- jit ----------------------------------------------------------------------------------------

JIT_CASES = {
    "cholesky": (lambda a: csl.cholesky(a, lower=True), "spd"),
    "cho_solve": (lambda a, b: csl.cho_solve(csl.cho_factor(a), b), "spd", "vec"),
    "solve_triangular": (lambda a, b: csl.solve_triangular(a, b, trans="T", unit_diagonal=True), "gen", "vec"),
    "lu": (csl.lu, "gen"),
    "lu_factor": (csl.lu_factor, "gen"),
    "lu_solve": (lambda a, b: csl.lu_solve(csl.lu_factor(a), b, trans=1), "gen", "vec"),
    "qr": (lambda a: csl.qr(a, mode="economic"), "gen"),
    "svd": (csl.svd, "gen"),
    "eigh": (csl.eigh, "spd"),
    "eigh_generalized": (lambda a, b: csl.eigh(a, b + 4 * jnp.eye(3)), "gen", "spd"),
    "inv": (csl.inv, "gen"),
    "det": (csl.det, "gen"),
    "solve": (lambda a, b: csl.solve(a, b, assume_a="pos"), "spd", "vec"),
    "expm": (csl.expm, "gen"),
    "block_diag": (lambda a, b: csl.block_diag(a, b), "gen", "vec"),
    "toeplitz": (csl.toeplitz, "vec", "vec"),
    "schur": (csl.schur, "gen"),
}


@pytest.mark.parametrize("name", sorted(JIT_CASES))
def test_under_jit_equals_eager(rng, name):
    fn, *kinds = JIT_CASES[name]
    make = {"spd": lambda: _spd(rng, 3), "gen": lambda: rng.standard_normal((3, 3)),
            "vec": lambda: rng.standard_normal(3)}
    args = [make[k]() for k in kinds]
    eager = fn(*args)
    jitted = core.jit(fn)(*args)
    for x, e in zip(core.tree_util.tree_leaves(jitted), core.tree_util.tree_leaves(eager)):
        close(x, e, 1e-12)


# ----- a program written against jax.scipy.linalg ------------------------------------------------

PROGRAM = '''
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl


@jax.jit
def kalman_like(a, q, h, r, y):
    # a discretized linear system: transition expm(a), a covariance, a gain, a log-likelihood term
    f = jsl.expm(0.1 * a)
    p = f @ q @ f.T + jnp.eye(a.shape[0])
    s = h @ p @ h.T + r
    c, lower = jsl.cho_factor(s, lower=True)
    gain = jsl.cho_solve((c, lower), h @ p).T
    logdet = 2.0 * jnp.sum(jnp.log(jnp.diag(c)))
    innovation = jsl.solve_triangular(c, y, lower=True)
    lu_piv = jsl.lu_factor(p)
    back = jsl.lu_solve(lu_piv, gain @ y)
    w = jsl.eigh(p, eigvals_only=True)
    t = jsl.toeplitz(jnp.array([1.0, 0.5, 0.25]))
    blocks = jsl.block_diag(t, jnp.array([[2.0]]))
    return gain, logdet, innovation, back, w, blocks, jsl.det(p), jsl.inv(s), jsl.sqrtm(p), jsl.logm(s)


grad_logdet = jax.grad(lambda a, q, h, r: jnp.linalg.slogdet(jsl.solve(
    h @ jsl.expm(0.1 * a) @ q @ jsl.expm(0.1 * a).T @ h.T + r, jnp.eye(r.shape[0]), assume_a="pos"))[1])
'''


def test_jax_style_program_matches_scipy(rng):
    namespace = {}
    exec(compile(port(PROGRAM), "<jax-style program>", "exec"), namespace)
    n, k = 4, 2
    a = rng.standard_normal((n, n))
    q = _spd(rng, n)
    h = rng.standard_normal((k, n))
    r = _spd(rng, k)
    y = rng.standard_normal(k)
    gain, logdet, innovation, back, w, blocks, det_p, inv_s, root_p, log_s = namespace["kalman_like"](a, q, h, r, y)

    f = sl.expm(0.1 * a)
    p = f @ q @ f.T + np.eye(n)
    s = h @ p @ h.T + r
    c = sl.cholesky(s, lower=True)
    e_gain = sl.cho_solve((c, True), h @ p).T
    close(gain, e_gain, 1e-9)
    close(logdet, np.linalg.slogdet(s)[1], 1e-9)
    close(innovation, sl.solve_triangular(c, y, lower=True), 1e-9)
    close(back, sl.lu_solve(sl.lu_factor(p), e_gain @ y), 1e-9)
    close(w, sl.eigh(p, eigvals_only=True), 1e-9)
    close(blocks, sl.block_diag(sl.toeplitz([1.0, 0.5, 0.25]), [[2.0]]))
    close(det_p, sl.det(p), 1e-9)
    close(inv_s, sl.inv(s), 1e-9)
    close(root_p, sl.sqrtm(p), 1e-9)
    close(log_s, sl.logm(s), 1e-9)

    # d/da of log det(s(a)^-1), s(a) = h expm(0.1 a) q expm(0.1 a)^T h^T + r, by central differences
    def oracle(a):
        fa = sl.expm(0.1 * a)
        return np.linalg.slogdet(np.linalg.inv(h @ fa @ q @ fa.T @ h.T + r))[1]
    eps = 1e-6
    fd = np.zeros_like(a)
    for i in range(n):
        for j in range(n):
            d = np.zeros_like(a)
            d[i, j] = eps
            fd[i, j] = (oracle(a + d) - oracle(a - d)) / (2 * eps)
    close(namespace["grad_logdet"](a, q, h, r), fd, 1e-6)

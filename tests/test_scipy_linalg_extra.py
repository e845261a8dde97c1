"""The rest of jax.scipy.linalg 0.10.2 (issue 16): special matrices, hessenberg, qr_multiply,
polar, rsf2csf, funm, expm_frechet, solve_sylvester and eigh_tridiagonal against scipy.linalg in
float64; derivatives against finite differences of SciPy; one program written against jax.

Special matrices built from integers are compared exactly. Each case is small and the loops'
programs are compiled once per signature (the suite's time is bounded by compiles).
"""
import re

import numpy as np
import pytest
import scipy.linalg as sl

import core
import core.numpy as jnp
from core.scipy import linalg as csl
from jax_port import port  # tests/ is on sys.path

pytestmark = pytest.mark.usefixtures("x64")


def close(actual, expected, tol=1e-12):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


def exactly(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_array_equal(actual, expected)


def central_difference(f, x, direction, eps=1e-6):
    return (f(x + eps * direction) - f(x - eps * direction)) / (2 * eps)


# ----- matrices given by their size ---------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 4, 9])
def test_sized_matrices_equal_scipy_exactly(n):
    exactly(csl.hilbert(n), sl.hilbert(n))
    exactly(csl.invhilbert(n), sl.invhilbert(n, exact=True).astype(np.float64) if n else np.zeros((0, 0)))
    for kind in (None, "lower", "upper"):
        exactly(csl.pascal(n, kind), sl.pascal(n, kind or "symmetric").astype(np.float64))
        exactly(csl.invpascal(n, kind), sl.invpascal(n, kind or "symmetric").astype(np.float64))
    if n:
        exactly(csl.helmert(n), sl.helmert(n))
        exactly(csl.helmert(n, full=True), sl.helmert(n, full=True))


def test_pascal_is_exact_where_jax_is_not():
    # jax 0.10.2's pascal(3) (exp of lgamma differences, always float32): 0.99999905 on its corners
    jax_pascal3 = np.array([[0.99999905, 0.99999905, 0.99999905], [0.99999905, 1.9999981, 2.9999986],
                            [0.99999905, 2.9999986, 6.0]], np.float32)
    assert not np.array_equal(jax_pascal3, sl.pascal(3))
    ours = csl.pascal(3)
    assert ours.dtype == np.float64  # the default float dtype (x64 on here)
    exactly(ours, sl.pascal(3))
    # invhilbert's entries reach 1e16 at n = 13 and stay the correctly rounded integers
    exactly(csl.invhilbert(13), np.array(sl.invhilbert(13, exact=True).astype(object), np.float64))


def test_sized_matrices_dtypes_follow_the_default_types():
    core.config.update("enable_x64", False)
    try:
        assert csl.hilbert(2).dtype == csl.pascal(2).dtype == csl.helmert(2).dtype == np.float32
        assert csl.hadamard(2).dtype == np.int32 and csl.dft(2).dtype == np.complex64
    finally:
        core.config.update("enable_x64", True)
    assert csl.hadamard(4, dtype=np.float32).dtype == np.float32
    assert csl.dft(2, dtype=np.complex64).dtype == np.complex64


@pytest.mark.parametrize("n", [1, 2, 8])
def test_hadamard_equals_scipy(n):
    exactly(csl.hadamard(n), sl.hadamard(n))


@pytest.mark.parametrize("n", [1, 5, 12])
@pytest.mark.parametrize("scale", [None, "sqrtn", "n"])
def test_dft_is_the_fft_matrix(rng, n, scale):
    w = np.asarray(csl.dft(n, scale))
    close(w, sl.dft(n, scale), 1e-14)  # SciPy takes powers of one root: its entries drift a little
    x = rng.standard_normal(n)
    norm = {None: "backward", "sqrtn": "ortho", "n": "forward"}[scale]
    close(w @ x, np.fft.fft(x, norm=norm), 1e-13)
    # each entry is the correctly rounded root of unity exp(-2 pi i (jk mod n) / n)
    k = np.arange(n)
    exact = np.exp(-2j * np.pi * ((k[:, None] * k[None, :]) % n) / n)
    exactly(w, exact / {None: 1, "sqrtn": np.sqrt(n), "n": n}[scale])


def test_sized_matrix_errors_name_the_problem():
    with pytest.raises(ValueError, match=re.escape("hadamard: `n` must be a positive power of 2; got 6")):
        csl.hadamard(6)
    with pytest.raises(ValueError, match=re.escape("dft: `scale` must be None, 'sqrtn' or 'n'; got 'ortho'")):
        csl.dft(3, "ortho")
    with pytest.raises(ValueError, match=re.escape("dft: `dtype` must be a complex dtype; got float64")):
        csl.dft(3, dtype=np.float64)
    with pytest.raises(ValueError, match=re.escape("pascal: `kind` must be one of ('symmetric', 'lower', 'upper') "
                                                   "(or None); got 'diag'")):
        csl.pascal(3, "diag")
    with pytest.raises(ValueError, match=re.escape("helmert: `n` must be a positive integer; got 0")):
        csl.helmert(0)


# ----- matrices built from vectors ----------------------------------------------------------------

def test_vector_built_matrices_equal_scipy_exactly(rng):
    a = rng.integers(-9, 10, 5)
    b = rng.integers(-9, 10, 3)
    exactly(csl.circulant(a), sl.circulant(a))
    exactly(csl.hankel(a), sl.hankel(a))
    exactly(csl.hankel(a, b), sl.hankel(a, b))
    exactly(csl.hankel(b, a), sl.hankel(b, a))
    exactly(csl.fiedler(a), sl.fiedler(a))
    exactly(csl.leslie(a, a[1:]), sl.leslie(a, a[1:]))
    for n in (3, 7):  # fewer and more columns than a has entries
        for mode in ("full", "same", "valid"):
            exactly(csl.convolution_matrix(a, n, mode), sl.convolution_matrix(a, n, mode))
            v = rng.integers(-9, 10, n)
            exactly(csl.convolution_matrix(a, n, mode) @ v, np.convolve(a, v, mode))


@pytest.mark.parametrize("size", [1, 2, 7])  # (the batch test below has size 4)
def test_companions_equal_scipy(rng, size):
    a = rng.standard_normal(size)
    expected = sl.fiedler_companion(a) if size > 1 else np.zeros((0, 0))
    # one rounding (a_k / a_0; XLA may divide by multiplying with the reciprocal: 1 ulp)
    close(csl.fiedler_companion(a), expected, 4e-16)
    if size > 1:
        close(csl.companion(a), sl.companion(a), 4e-16)
        # both have the polynomial's roots as eigenvalues
        roots = np.sort_complex(np.roots(a))
        close(np.sort_complex(np.linalg.eigvals(np.asarray(csl.fiedler_companion(a)))), roots, 1e-8)


def test_vector_built_matrices_batch(rng):
    # leading dimensions are a batch, broadcast between the two arguments (as in JAX)
    c = rng.standard_normal((2, 3, 4))
    r = rng.standard_normal(5)
    close(csl.hankel(c, r), np.stack([[sl.hankel(c[i, j], r) for j in range(3)] for i in range(2)]))
    close(csl.circulant(c), sl.circulant(c))
    close(csl.fiedler(c), sl.fiedler(c))
    close(csl.companion(c), sl.companion(c), 4e-16)
    close(csl.fiedler_companion(c), sl.fiedler_companion(c), 4e-16)
    close(csl.convolution_matrix(c, 3, "same"), sl.convolution_matrix(c, 3, "same"))
    close(csl.leslie(c, r[:3]), np.stack([[sl.leslie(c[i, j], r[:3]) for j in range(3)] for i in range(2)]))


def test_vector_built_matrix_errors_name_the_problem():
    with pytest.raises(ValueError, match=re.escape("leslie: `f` must have shape (..., n) with n >= 2 and `s` shape "
                                                   "(..., n - 1); got f float64[3] and s float64[3]")):
        csl.leslie(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match=re.escape("companion: `a` must hold at least 2 coefficients along its last "
                                                   "axis; got float64[1]")):
        csl.companion(np.ones(1))
    with pytest.raises(ValueError, match=re.escape("convolution_matrix: `mode` must be one of ('full', 'same', "
                                                   "'valid'); got 'wrap'")):
        csl.convolution_matrix(np.ones(3), 2, "wrap")
    with pytest.raises(ValueError, match=re.escape("convolution_matrix: `n` must be a positive integer; got 0")):
        csl.convolution_matrix(np.ones(3), 0)
    with pytest.raises(ValueError, match=re.escape("hankel: `c` must have at least 1 dimension (a vector or a stack "
                                                   "of them); got the scalar float64[]")):
        csl.hankel(np.float64(1.0))


# ----- hessenberg, qr_multiply ----------------------------------------------------------------------

def test_hessenberg_matches_scipy(rng):
    a = rng.standard_normal((5, 5))
    exactly(csl.hessenberg(a), sl.hessenberg(a))  # the same LAPACK gehrd and orgqr
    h, q = csl.hessenberg(a, calc_q=True)
    eh, eq = sl.hessenberg(a, calc_q=True)
    close(h, eh)
    close(q, eq)
    # a complex batch: each matrix as SciPy's, and q h q^H reconstructs it
    ac = rng.standard_normal((2, 4, 4)) + 1j * rng.standard_normal((2, 4, 4))
    h, q = csl.hessenberg(ac, calc_q=True)
    close(h, np.stack([sl.hessenberg(x) for x in ac]))
    close(q @ h @ np.conj(np.swapaxes(q, -1, -2)), ac)
    assert not np.any(np.tril(np.asarray(h), -2))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5)])
@pytest.mark.parametrize("mode", ["left", "right"])
def test_qr_multiply_matches_scipy(rng, shape, mode):
    a = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    m, k = shape[0], min(shape)
    c = rng.standard_normal((k, 2) if mode == "left" else (2, m))
    for conjugate in (False, True):
        out, r = csl.qr_multiply(a, c, mode=mode, conjugate=conjugate)
        e_out, e_r = sl.qr_multiply(a, c, mode=mode, conjugate=conjugate)
        close(out, e_out)
        close(r, e_r)
    vector = c[:, 0] if mode == "left" else c[0]
    out, r = csl.qr_multiply(a, vector, mode=mode)
    close(out, sl.qr_multiply(a, vector, mode=mode)[0])


def test_qr_multiply_errors_name_the_problem():
    with pytest.raises(ValueError, match=re.escape("qr_multiply: for mode='right' `c` must have m = 4 columns to "
                                                   "multiply q (4, 3) of `a` float64[4, 3]; got float64[2, 3]")):
        csl.qr_multiply(np.ones((4, 3)), np.ones((2, 3)))
    with pytest.raises(NotImplementedError, match="pivoting=True"):
        csl.qr_multiply(np.ones((4, 3)), np.ones((2, 4)), pivoting=True)


# ----- polar ----------------------------------------------------------------------------------------

# qdwh on a wide matrix goes through its conjugate transpose: both sides' formulas run
@pytest.mark.parametrize("method, shape", [("qdwh", (3, 4)), ("svd", (3, 3)), ("svd", (4, 3))])
def test_polar_both_sides_match_scipy(rng, method, shape):
    a = rng.standard_normal(shape)
    for side in ("right", "left"):
        u, p = csl.polar(a, side, method=method)
        eu, ep = sl.polar(a, side)
        close(u, eu, 1e-11)
        close(p, ep, 1e-11)
        close(u @ p if side == "right" else p @ u, a, 1e-11)


def test_polar_batch_and_complex(rng):
    a = rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))
    u, p = csl.polar(a, method="svd")
    for i in range(2):
        eu, ep = sl.polar(a[i])
        close(u[i], eu, 1e-11)
        close(p[i], ep, 1e-11)


def test_polar_derivatives_match_finite_differences(rng):
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    w_u, w_p = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))

    def loss(a):
        u, p = csl.polar(a, method="svd")
        return jnp.sum(w_u * u) + jnp.sum(w_p * p)

    def oracle(a):
        u, p = sl.polar(a)
        return np.sum(w_u * u) + np.sum(w_p * p)

    # method="svd" (differentiable both ways, as in JAX; qdwh's while loop has forward mode only)
    grad = np.asarray(core.grad(loss)(a))
    for _ in range(2):
        direction = rng.standard_normal((3, 3))
        close(np.sum(grad * direction), central_difference(oracle, a, direction), 1e-7)


def test_polar_errors_name_the_problem():
    with pytest.raises(ValueError, match=re.escape("polar: `side` must be 'right' or 'left'; got 'up'")):
        csl.polar(np.eye(2), "up")
    with pytest.raises(ValueError, match=re.escape("polar: `method` must be one of ('qdwh', 'svd'); got 'newton'")):
        csl.polar(np.eye(2), method="newton")


# ----- rsf2csf, funm --------------------------------------------------------------------------------

def test_rsf2csf_matches_scipy(rng):
    # 4x4 real matrices with complex eigenvalue pairs (2x2 blocks in the real Schur form)
    a = rng.standard_normal((2, 4, 4))
    real_forms = [sl.schur(x) for x in a]
    t, z = csl.rsf2csf(np.stack([f[0] for f in real_forms]), np.stack([f[1] for f in real_forms]))
    for i, (rt, rz) in enumerate(real_forms):
        et, ez = sl.rsf2csf(rt, rz)
        close(t[i], et, 1e-12)
        close(z[i], ez, 1e-12)
        close(z[i] @ t[i] @ np.conj(z[i]).T, a[i], 1e-12)
    assert t.dtype == np.complex128 and not np.any(np.tril(np.asarray(t), -1))


def test_funm_matches_scipy_on_a_diagonalizable_matrix(rng):
    # distinct eigenvalues, some complex: Parlett's recurrence divides by their differences
    a = rng.standard_normal((4, 4))
    f, err = csl.funm(a, lambda x: jnp.sin(x) + 2 * jnp.cos(x), disp=False)
    e_f, e_err = sl.funm(a, lambda x: np.sin(x) + 2 * np.cos(x), disp=False)
    close(f, e_f, 1e-11)
    close(err, e_err, 1e-6)
    # through the eigendecomposition: V f(D) V^-1
    w, v = np.linalg.eig(a)
    close(f, v @ np.diag(np.sin(w) + 2 * np.cos(w)) @ np.linalg.inv(v), 1e-11)
    # func runs eagerly, so a NumPy function works too (it failed when funm was one jitted program)
    close(csl.funm(a, np.exp), sl.expm(a), 1e-11)


# ----- expm_frechet ---------------------------------------------------------------------------------

def test_expm_frechet_matches_scipy_and_differences_of_expm(rng):
    a = rng.standard_normal((3, 3))
    e = rng.standard_normal((3, 3))
    # one vjp gives the values and (below) the gradient, from one compiled program each way
    (value, derivative), pullback = core.vjp(lambda a: csl.expm_frechet(a, e), a)
    e_value, e_derivative = sl.expm_frechet(a, e)
    close(value, e_value, 1e-12)
    close(derivative, e_derivative, 1e-12)
    close(derivative, central_difference(sl.expm, a, e), 1e-8)
    # differentiable: d/da of sum(w * L(a, e)) against differences of SciPy's
    w = rng.standard_normal((3, 3))
    (grad,) = pullback((np.zeros((3, 3)), w))
    grad = np.asarray(grad)
    direction = rng.standard_normal((3, 3))
    oracle = lambda a: np.sum(w * sl.expm_frechet(a, e, compute_expm=False))  # noqa: E731
    close(np.sum(grad * direction), central_difference(oracle, a, direction), 1e-7)


def test_expm_frechet_errors_name_the_problem():
    with pytest.raises(ValueError, match=re.escape("expm_frechet: `A` and `E` must have the same shape; got A "
                                                   "float64[2, 2] and E float64[3, 3]")):
        csl.expm_frechet(np.eye(2), np.eye(3))


# ----- solve_sylvester ------------------------------------------------------------------------------

def _sylvester_problem(rng, batch=()):
    a = rng.standard_normal(batch + (4, 4))
    b = rng.standard_normal((3, 3)) + 2 * np.eye(3)
    c = rng.standard_normal(batch + (4, 3))
    return a, b, c


def test_solve_sylvester_matches_scipy_and_solves(rng):
    a, b, c = _sylvester_problem(rng, (2,))
    x = csl.solve_sylvester(a, b, c)
    assert x.dtype == np.float64
    for i in range(2):
        close(x[i], sl.solve_sylvester(a[i], b, c[i]), 1e-11)
        close(a[i] @ x[i] + x[i] @ b, c[i], 1e-11)
    # the eigendecomposition method (diagonalizable A and B), on complex input
    ac = a[0] + 1j * rng.standard_normal((4, 4))
    close(csl.solve_sylvester(ac, b, c[0], method="eigen"), sl.solve_sylvester(ac, b, c[0]), 1e-10)


def test_solve_sylvester_is_nan_where_a_and_minus_b_share_an_eigenvalue():
    out = np.asarray(csl.solve_sylvester(np.diag([1.0, 2.0]), np.diag([-2.0, 5.0]), np.ones((2, 2))))
    assert np.isnan(out).all()


def test_solve_sylvester_gradients_match_finite_differences(rng):
    a, b, c = _sylvester_problem(rng)
    w = rng.standard_normal((4, 3))
    grads = core.grad(lambda a, b, c: jnp.sum(w * jnp.sin(csl.solve_sylvester(a, b, c))), argnums=(0, 1, 2))(a, b, c)
    args = [a, b, c]
    for i, grad in enumerate(grads):
        direction = rng.standard_normal(args[i].shape)

        def oracle(x, i=i):
            moved = list(args)
            moved[i] = x
            return np.sum(w * np.sin(sl.solve_sylvester(*moved)))
        close(np.sum(np.asarray(grad) * direction), central_difference(oracle, args[i], direction), 1e-7)


def test_solve_sylvester_errors_name_the_problem():
    with pytest.raises(ValueError, match=re.escape("solve_sylvester: A (..., m, m), B (..., n, n) and C (..., m, n) "
                                                   "must agree; got A float64[2, 2], B float64[3, 3] and C "
                                                   "float64[3, 3]")):
        csl.solve_sylvester(np.eye(2), np.eye(3), np.ones((3, 3)))
    with pytest.raises(ValueError, match=re.escape("solve_sylvester: `method` must be one of ('schur', 'eigen'); "
                                                   "got 'qz'")):
        csl.solve_sylvester(np.eye(2), np.eye(2), np.ones((2, 2)), method="qz")


# ----- eigh_tridiagonal -----------------------------------------------------------------------------

def test_eigh_tridiagonal_eigenvalues_match_scipy(rng):
    d, e = rng.standard_normal(7), rng.standard_normal(6)
    close(csl.eigh_tridiagonal(d, e, eigvals_only=True), sl.eigh_tridiagonal(d, e, eigvals_only=True), 1e-13)
    close(csl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(2, 4)),
          sl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(2, 4)), 1e-13)
    close(csl.eigh_tridiagonal(d[:1], e[:0], eigvals_only=True), d[:1])


def test_eigh_tridiagonal_eigenvectors(rng):
    d, e = rng.standard_normal(7), rng.standard_normal(6)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    w, v = csl.eigh_tridiagonal(d, e)
    ew, ev = sl.eigh_tridiagonal(d, e)
    close(w, ew, 1e-13)
    close(np.abs(v), np.abs(ev), 1e-10)  # distinct eigenvalues: unique up to sign
    close(t @ v, v * w, 1e-12)
    # a cluster (the same eigenvalue four times, two 1e-14 apart): still an orthonormal basis
    d, e = np.ones(7), np.zeros(6)
    e[2] = 1e-14
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    w, v = csl.eigh_tridiagonal(d, e)
    close(v.T @ v, np.eye(7), 1e-12)
    close(t @ v, v * w, 1e-12)


def test_eigh_tridiagonal_hermitian_complex(rng):
    d, e = rng.standard_normal(7), rng.standard_normal(6) + 1j * rng.standard_normal(6)
    t = np.diag(d) + np.diag(e, 1) + np.diag(np.conj(e), -1)
    w, v = csl.eigh_tridiagonal(d + 0j, e)
    close(w, np.linalg.eigvalsh(t), 1e-13)
    close(t @ v, v * w, 1e-12)
    close(np.conj(v).T @ v, np.eye(7), 1e-12)


def test_eigh_tridiagonal_errors_name_the_problem():
    with pytest.raises(NotImplementedError, match=re.escape("select='v'")):
        csl.eigh_tridiagonal(np.ones(3), np.ones(2), select="v", select_range=(0.0, 1.0))
    with pytest.raises(ValueError, match=re.escape("eigh_tridiagonal: select_range must be (lo, hi) with 0 <= lo <= "
                                                   "hi < 3; got (1, 3)")):
        csl.eigh_tridiagonal(np.ones(3), np.ones(2), select="i", select_range=(1, 3))
    with pytest.raises(ValueError, match=re.escape("eigh_tridiagonal: `d` must have shape (n,) and `e` shape (n - 1,); "
                                                   "got d float64[3] and e float64[3]")):
        csl.eigh_tridiagonal(np.ones(3), np.ones(3))


# ----- a program written against jax.scipy.linalg ------------------------------------------------

PROGRAM = '''
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl


@jax.jit
def structured(poly, d, e, a, b, c):
    # a polynomial's companion forms, a Sylvester equation, polar, Hessenberg and QR factors, a spectrum
    comp = jsl.companion(poly)
    fied = jsl.fiedler_companion(poly)
    x = jsl.solve_sylvester(a, b, c)
    u, p = jsl.polar(a, method="svd")
    h, q = jsl.hessenberg(a, calc_q=True)
    qtc, r = jsl.qr_multiply(a, c.T, mode="right")
    w = jsl.eigh_tridiagonal(d, e, eigvals_only=True)
    mixed = jsl.circulant(d) + jsl.hankel(d) + jsl.toeplitz(d) + jsl.pascal(d.shape[0]) @ jsl.invpascal(d.shape[0])
    return comp, fied, x, u @ p, q @ h @ q.T, qtc, r, w, mixed + jnp.abs(jsl.dft(d.shape[0])) * jsl.hilbert(4)
'''


def test_jax_style_program_matches_scipy(rng):
    namespace = {}
    exec(compile(port(PROGRAM), "<jax-style program>", "exec"), namespace)
    poly = rng.standard_normal(5)
    d, e = rng.standard_normal(4), rng.standard_normal(3)
    a = rng.standard_normal((4, 4))
    b = rng.standard_normal((3, 3)) + 2 * np.eye(3)
    c = rng.standard_normal((4, 3))
    out = namespace["structured"](poly, d, e, a, b, c)
    comp, fied, x, up, qhq, qtc, r, w, mixed = out
    close(comp, sl.companion(poly), 1e-15)
    close(fied, sl.fiedler_companion(poly), 1e-15)
    close(x, sl.solve_sylvester(a, b, c), 1e-11)
    close(up, a, 1e-12)
    close(qhq, a, 1e-12)
    e_qtc, e_r = sl.qr_multiply(a, c.T, mode="right")
    close(qtc, e_qtc)
    close(r, e_r)
    close(w, sl.eigh_tridiagonal(d, e, eigvals_only=True), 1e-13)
    close(mixed, sl.circulant(d) + sl.hankel(d) + sl.toeplitz(d) + np.eye(4) + sl.hilbert(4))


def test_every_jax_scipy_linalg_name_is_present():
    import numpy_coverage  # tests/ is on sys.path, as for conftest
    present, missing = numpy_coverage.scipy_coverage("linalg")["jax"]
    assert not missing and len(present) == 40, missing

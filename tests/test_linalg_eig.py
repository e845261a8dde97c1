"""jnp.linalg.eig / eigvals and lax.linalg.eig (non-symmetric eigendecomposition, LAPACK geev).

Oracles: numpy.linalg.eigvals in float64 (eigenvalues compared after sorting), the defining
equations A v = w v and u^H A = w u^H with unit-norm vectors, a Python loop for vmap, hand-derived
gradients (d/dA sum(w^2) = d/dA trace(A^2) = 2 A^T) and central finite differences.
"""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax


def _sorted(w):
    w = np.asarray(w)
    return w[np.lexsort((w.imag.round(6), w.real.round(6)))]


def _matrix(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


@pytest.mark.parametrize("dtype,out_dtype,tol", [(np.float32, np.complex64, 1e-4), (np.complex64, np.complex64, 1e-4)])
def test_eig_matches_numpy_float32(rng, dtype, out_dtype, tol):
    a = _matrix(rng, (5, 5), dtype)
    w, v = jnp.linalg.eig(a)
    assert w.dtype == out_dtype and v.dtype == out_dtype and w.shape == (5,) and v.shape == (5, 5)
    a64 = a.astype(np.complex128)
    np.testing.assert_allclose(_sorted(w), _sorted(np.linalg.eigvals(a64)), rtol=tol, atol=tol)
    w, v = np.asarray(w, np.complex128), np.asarray(v, np.complex128)
    np.testing.assert_allclose(a64 @ v, v * w, atol=tol * 10)
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), np.ones(5), rtol=tol)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_eig_matches_numpy_float64(rng, x64, dtype):
    a = _matrix(rng, (6, 6), dtype)
    w, vl, vr = lax.linalg.eig(jnp.asarray(a))
    assert w.dtype == np.complex128
    np.testing.assert_allclose(_sorted(w), _sorted(np.linalg.eigvals(a)), rtol=1e-10, atol=1e-10)
    w, vl, vr = (np.asarray(t) for t in (w, vl, vr))
    np.testing.assert_allclose(a @ vr, vr * w, atol=1e-10)
    np.testing.assert_allclose(vl.conj().T @ a, w[:, None] * vl.conj().T, atol=1e-10)
    # LAPACK's normalisation: unit norm, largest component real
    big = vr[np.argmax(np.abs(vr), axis=0), np.arange(6)]
    np.testing.assert_allclose(big.imag, 0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(vr, axis=0), 1, rtol=1e-12)


def test_eigvals_of_a_rotation_are_plus_minus_i():
    # hand-derived: [[c, -s], [s, c]] has eigenvalues c +- i s
    c, s = np.cos(0.3), np.sin(0.3)
    w = jnp.linalg.eigvals(jnp.array([[c, -s], [s, c]]))
    np.testing.assert_allclose(_sorted(w), [c - 1j * s, c + 1j * s], rtol=1e-6)


def test_batched_jit_and_vmap_agree_with_a_loop(rng):
    a = _matrix(rng, (3, 4, 4), np.float32)
    w_batch = np.asarray(jnp.linalg.eigvals(a))
    w_jit = np.asarray(core.jit(jnp.linalg.eigvals)(a))
    w_vmap = np.asarray(core.vmap(jnp.linalg.eigvals)(jnp.asarray(a)))
    for i in range(3):
        expected = np.asarray(jnp.linalg.eigvals(a[i]))
        np.testing.assert_array_equal(w_batch[i], expected)
        np.testing.assert_array_equal(w_vmap[i], expected)
        np.testing.assert_array_equal(w_jit[i], expected)
    c = _matrix(rng, (4, 2, 4), np.float32)
    w, v = core.vmap(jnp.linalg.eig, in_axes=1)(jnp.asarray(c))  # batch axis between the matrix dims
    for i in range(2):
        np.testing.assert_allclose(c[:, i] @ np.asarray(v[i]), np.asarray(v[i]) * np.asarray(w[i]), atol=1e-4)


def test_eigvals_gradient_hand_derived(rng, x64):
    a = rng.standard_normal((4, 4))
    g = core.grad(lambda a: jnp.real(jnp.sum(jnp.linalg.eigvals(a) ** 2)))(jnp.asarray(a))
    np.testing.assert_allclose(np.asarray(g), 2 * a.T, rtol=1e-8, atol=1e-10)


def test_eigvals_gradient_finite_differences(rng, x64):
    a = rng.standard_normal((4, 4))

    def f(a):  # order-independent: real(trace(expm(a)))
        return jnp.sum(jnp.real(jnp.exp(jnp.linalg.eigvals(a))))

    g = np.asarray(core.grad(f)(jnp.asarray(a)))
    eps, fd = 1e-6, np.zeros_like(a)
    for i in range(4):
        for j in range(4):
            d = np.zeros_like(a)
            d[i, j] = eps
            fd[i, j] = (float(f(jnp.asarray(a + d))) - float(f(jnp.asarray(a - d)))) / (2 * eps)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def test_complex_input_gradient_through_jvp(x64):
    # jvp of w = eigvals(A) along dA: sum(dw) = trace(dA) (hand-derived), for complex A too
    a = np.array([[1.0 + 1j, 2.0], [0.5j, -1.0]])
    da = np.array([[0.3, -1j], [2.0, 0.7 + 0.2j]])
    _, dw = core.jvp(jnp.linalg.eigvals, (jnp.asarray(a),), (jnp.asarray(da),))
    np.testing.assert_allclose(np.sum(np.asarray(dw)), np.trace(da), rtol=1e-10)


def test_eigenvector_derivatives_raise():
    with pytest.raises(NotImplementedError, match="eigenvectors are not implemented"):
        core.grad(lambda a: jnp.real(jnp.linalg.eig(a)[1]).sum())(jnp.eye(2))


def test_errors_and_edge_cases():
    with pytest.raises(ValueError, match=r"eig: argument must be a square matrix.*\(2, 3\)"):
        jnp.linalg.eig(jnp.ones((2, 3)))
    w, v = jnp.linalg.eig(jnp.zeros((0, 0)))
    assert w.shape == (0,) and v.shape == (0, 0) and w.dtype == np.complex64
    w = jnp.linalg.eigvals(np.array([[2, 0], [0, 5]]))  # integers promote to float, then complex
    assert w.dtype == np.complex64
    np.testing.assert_allclose(_sorted(w), [2, 5])
    with pytest.raises(ValueError, match="only the LAPACK implementation"):
        lax.linalg.eig(jnp.eye(2), implementation="magma")


def test_jax_style_program(rng):
    """Written with jax names, only the imports rewritten."""
    import core as jax
    import core.numpy as jnp  # noqa: F811

    @jax.jit
    def spectral_radius(a):
        return jnp.max(jnp.abs(jnp.linalg.eigvals(a)))

    a = rng.standard_normal((5, 5)).astype(np.float32)
    np.testing.assert_allclose(float(spectral_radius(a)), np.max(np.abs(np.linalg.eigvals(a))), rtol=1e-5)
    w, v = jnp.linalg.eig(a)
    np.testing.assert_allclose(np.asarray(a @ v), np.asarray(v * w), atol=1e-4)

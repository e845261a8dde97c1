"""core.lax's incomplete gamma and beta functions (igamma, igammac, igamma_grad_a, random_gamma_grad,
betainc) against scipy.special in float64, their derivatives against SciPy's densities and central
differences of SciPy's functions, under jit and vmap, and lax's argument errors."""
import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as st

import core
import core.numpy as jnp
import core.scipy.special as jsp
from core import lax
from core import test_util as tu

# shape parameters from small to large, x on both sides of a (series and continued-fraction regions)
A = np.array([0.3, 0.5, 1.0, 2.0, 2.0, 7.5, 30.0, 120.0])
X = np.array([0.05, 2.0, 1.0, 0.5, 6.0, 5.0, 40.0, 110.0])


def test_igamma_and_igammac_match_scipy(x64):
    np.testing.assert_allclose(lax.igamma(A, X), sp.gammainc(A, X), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(lax.igammac(A, X), sp.gammaincc(A, X), rtol=1e-12, atol=1e-15)
    # SciPy's edges: x = 0, x = inf, a = 0 (the limit), negative or NaN arguments
    a = np.array([2.0, 2.0, 0.0, -1.0, 2.0, np.nan])
    x = np.array([0.0, np.inf, 1.5, 1.0, -1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(lax.igamma(a, x)), sp.gammainc(a, x))
    np.testing.assert_array_equal(np.asarray(lax.igammac(a, x)), sp.gammaincc(a, x))


def test_betainc_matches_scipy(x64):
    a = np.array([0.5, 2.0, 2.0, 10.0, 0.2, 50.0, 3.0, 3.0])
    b = np.array([0.5, 3.0, 0.7, 1.5, 4.0, 60.0, 3.0, 3.0])
    x = np.array([0.2, 0.4, 0.95, 0.8, 0.01, 0.45, 0.0, 1.0])
    np.testing.assert_allclose(lax.betainc(a, b, x), sp.betainc(a, b, x), rtol=1e-12, atol=1e-15)


def test_one_implementation_with_core_scipy_special(x64):
    np.testing.assert_array_equal(np.asarray(lax.igamma(A, X)), np.asarray(jsp.gammainc(A, X)))
    np.testing.assert_array_equal(np.asarray(lax.igammac(A, X)), np.asarray(jsp.gammaincc(A, X)))
    b, x = A + 1, X / (X.max() + 1)
    np.testing.assert_array_equal(np.asarray(lax.betainc(A, b, x)), np.asarray(jsp.betainc(A, b, x)))


def _central(f, a, h=1e-6):
    return (f(a + h) - f(a - h)) / (2 * h)


def test_igamma_grad_a_is_the_derivative_in_a(x64):
    expected = _central(lambda a: sp.gammainc(a, X), A)
    np.testing.assert_allclose(lax.igamma_grad_a(A, X), expected, rtol=1e-6, atol=1e-9)


def test_random_gamma_grad_is_the_implicit_derivative_of_a_gamma_sample(x64):
    # a sample x = F^-1(q; a) with its quantile q fixed: dx/da by central differences of SciPy's inverse
    q = sp.gammainc(A, X)
    expected = _central(lambda a: sp.gammaincinv(a, q), A)
    np.testing.assert_allclose(lax.random_gamma_grad(A, X), expected, rtol=1e-5)
    assert float(lax.random_gamma_grad(2.0, 0.0)) == 0.0


def test_derivatives_against_scipy_densities_and_finite_differences(x64):
    a, x = A[:6], X[:6]
    grad_a = core.vmap(core.grad(lax.igamma, 0))(a, x)
    grad_x = core.vmap(core.grad(lax.igamma, 1))(a, x)
    np.testing.assert_allclose(grad_a, _central(lambda a_: sp.gammainc(a_, x), a), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(grad_x, st.gamma.pdf(x, a), rtol=1e-12)
    gc_a, gc_x = core.vmap(core.grad(lax.igammac, (0, 1)))(a, x)
    np.testing.assert_allclose(gc_a, -_central(lambda a_: sp.gammainc(a_, x), a), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gc_x, -st.gamma.pdf(x, a), rtol=1e-12)
    # betainc: in x the beta density (as JAX); in a and b too here
    ab, bb, xb = np.array([2.0, 0.7]), np.array([3.0, 5.0]), np.array([0.4, 0.1])
    ga, gb, gx = core.vmap(core.grad(lax.betainc, (0, 1, 2)))(ab, bb, xb)
    np.testing.assert_allclose(gx, st.beta.pdf(xb, ab, bb), rtol=1e-12)
    np.testing.assert_allclose(ga, _central(lambda v: sp.betainc(v, bb, xb), ab), rtol=1e-6)
    np.testing.assert_allclose(gb, _central(lambda v: sp.betainc(ab, v, xb), bb), rtol=1e-6)
    tu.check_grads(lax.igamma, (a, x), order=1, modes=("fwd", "rev"))
    tu.check_grads(lax.betainc, (ab, bb, xb), order=1, modes=("fwd", "rev"))


def test_under_jit_and_float32():
    a, x = A.astype(np.float32), X.astype(np.float32)
    out = core.jit(lambda a, x: (lax.igamma(a, x), lax.igammac(a, x), lax.random_gamma_grad(a, x)))(a, x)
    assert all(o.dtype == np.float32 for o in out)
    np.testing.assert_allclose(out[0], sp.gammainc(A, X), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], sp.gammaincc(A, X), rtol=5e-5, atol=1e-6)
    q = sp.gammainc(A, X)
    np.testing.assert_allclose(out[2], _central(lambda a_: sp.gammaincinv(a_, q), A), rtol=2e-3)
    # a Python scalar takes the array operand's dtype, and rank 0 broadcasts, as in lax
    out = lax.igamma(2.0, jnp.full(3, 3.0, np.float32))
    assert out.dtype == np.float32 and out.shape == (3,)
    np.testing.assert_allclose(out, np.full(3, sp.gammainc(2.0, 3.0)), rtol=2e-6)


def test_errors_name_the_operands(x64):
    with pytest.raises(TypeError, match=r"lax.igamma needs operands of one shape \(or rank 0\) and one dtype .* "
                                        r"got a: float64\[3\], x: float64\[2\]"):
        lax.igamma(jnp.ones(3), jnp.ones(2))
    with pytest.raises(TypeError, match=r"lax.betainc needs operands .* b: float64\[2\]"):
        lax.betainc(np.ones(2, np.float32), np.ones(2), np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"lax.igammac takes floating-point arrays, got a: int32\[2\]"):
        lax.igammac(np.ones(2, np.int32), np.ones(2, np.int32))


def test_jax_style_program_poisson_cdf_from_igammac(x64):
    # P(N <= k) for N ~ Poisson(mu) is Q(k + 1, mu): written with `jax.lax` names, ported by the import
    from core import lax as jlax  # `from jax import lax as jlax`

    def poisson_cdf(k, mu):
        return jlax.igammac(k + 1.0, mu)

    k, mu = np.arange(6.0), np.full(6, 2.5)
    np.testing.assert_allclose(core.jit(poisson_cdf)(k, mu), st.poisson.cdf(k, 2.5), rtol=1e-12)

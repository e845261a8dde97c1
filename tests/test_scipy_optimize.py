"""core.scipy.optimize.minimize (BFGS) against scipy.optimize.minimize's answers, the line search
against the strong Wolfe conditions evaluated in NumPy, jit and vmap, and a program written
against jax.scipy.optimize."""
import re

import numpy as np
import pytest
import scipy.optimize as so

import core
import core.numpy as jnp
from core.scipy.optimize import OptimizeResults, minimize
from core.scipy.optimize.line_search import line_search
from jax_port import port  # tests/ is on sys.path


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


ROSEN_STARTS = [np.array([-1.2, 1.0]), np.array([1.3, 0.7, 0.8, 1.9, 1.2])]


@pytest.mark.parametrize("x0", ROSEN_STARTS, ids=["2d", "5d"])
def test_rosenbrock_matches_scipy(x64, x0):
    res = core.jit(lambda x: minimize(rosen, x, method="BFGS"))(x0)
    expected = so.minimize(so.rosen, x0, jac=so.rosen_der, method="BFGS")
    assert isinstance(res, OptimizeResults)
    assert bool(res.success) and int(res.status) == 0
    assert expected.success
    np.testing.assert_allclose(np.asarray(res.x), expected.x, atol=2e-6)
    np.testing.assert_allclose(np.asarray(res.x), np.ones_like(x0), atol=1e-6)
    assert float(res.fun) < 1e-12
    assert np.abs(np.asarray(res.jac)).max() < 1e-5  # the default gtol, max-abs norm
    np.testing.assert_allclose(np.asarray(res.jac), so.rosen_der(np.asarray(res.x)), rtol=1e-9, atol=1e-12)
    # the iteration counts are of the same order as SciPy's (a different line search)
    assert 0 < int(res.nit) <= 2 * expected.nit and int(res.nfev) >= int(res.nit)
    assert res.hess_inv.shape == (x0.size, x0.size)


def test_rosenbrock_float32():
    res = minimize(rosen, ROSEN_STARTS[0].astype(np.float32), method="BFGS")
    assert res.x.dtype == np.float32
    assert bool(res.success)
    np.testing.assert_allclose(np.asarray(res.x), [1.0, 1.0], atol=1e-4)


def test_quadratic_matches_scipy_and_the_exact_minimum(x64, rng):
    m = rng.standard_normal((4, 4))
    a = m @ m.T + np.eye(4)
    b = rng.standard_normal(4)

    def quadratic(x, a, b):
        return 0.5 * x @ a @ x - b @ x

    res = minimize(quadratic, np.zeros(4), args=(a, b), method="BFGS", options={"gtol": 1e-10})
    expected = so.minimize(quadratic, np.zeros(4), args=(a, b), jac=lambda x, a, b: a @ x - b, method="BFGS",
                           options={"gtol": 1e-10})
    exact = np.linalg.solve(a, b)
    assert bool(res.success)
    np.testing.assert_allclose(np.asarray(res.x), exact, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.asarray(res.x), expected.x, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(float(res.fun), -0.5 * b @ exact, rtol=1e-12)
    # the inverse-Hessian estimate approaches a^-1 (BFGS recovers it on a quadratic)
    np.testing.assert_allclose(np.asarray(res.hess_inv), np.linalg.inv(a), atol=0.05 * np.abs(np.linalg.inv(a)).max())


def test_options_tol_and_maxiter(x64):
    x0 = ROSEN_STARTS[0]
    capped = minimize(rosen, x0, options={"maxiter": 3})
    assert int(capped.nit) == 3 and int(capped.status) == 1 and not bool(capped.success)
    loose = minimize(rosen, x0, tol=1e-2)  # as SciPy: tol is the gradient tolerance
    assert bool(loose.success) and np.abs(np.asarray(loose.jac)).max() < 1e-2
    assert int(loose.nit) < int(minimize(rosen, x0).nit)
    two_norm = minimize(rosen, x0, options={"norm": 2, "gtol": 1e-7})
    assert np.linalg.norm(np.asarray(two_norm.jac)) < 1e-7


def test_matrix_x0_is_optimized_flat(x64):
    target = np.arange(6.0).reshape(2, 3)
    res = minimize(lambda x: jnp.sum((x - target) ** 2 * jnp.arange(1.0, 7.0).reshape(2, 3)), np.zeros((2, 3)))
    assert res.x.shape == (2, 3) and res.jac.shape == (2, 3) and res.hess_inv.shape == (6, 6)
    np.testing.assert_allclose(np.asarray(res.x), target, atol=1e-8)


def test_vmap_over_starting_points(x64):
    starts = np.array([[-1.2, 1.0], [2.0, 2.0], [0.0, 0.0]])
    batched = core.vmap(lambda x: minimize(rosen, x).x)(starts)
    for x0, x in zip(starts, np.asarray(batched)):
        np.testing.assert_allclose(x, np.asarray(minimize(rosen, x0).x), rtol=1e-12)
        np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-6)


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match=re.escape("minimize: `args` must be a tuple of extra arguments to fun; "
                                                  "got float")):
        minimize(lambda x, c: jnp.sum(x * c), np.zeros(2), args=1.0)
    with pytest.raises(ValueError, match=re.escape("minimize: method 'Nelder-Mead' is not implemented; "
                                                   "use method='BFGS'")):
        minimize(rosen, np.zeros(2), method="Nelder-Mead")
    with pytest.raises(TypeError, match=re.escape("minimize: unknown BFGS option(s) ['maxfun']")):
        minimize(rosen, np.zeros(2), options={"maxfun": 10})
    with pytest.raises(TypeError, match=re.escape("minimize: fun must return a scalar; it returned shape (2,)")):
        minimize(lambda x: x ** 2, np.zeros(2))


# ----- the line search ----------------------------------------------------------------------------

def _wolfe(f, grad, x, p, a, c1=1e-4, c2=0.9):
    slope0 = grad(x) @ p
    return (f(x + a * p) <= f(x) + c1 * a * slope0, abs(grad(x + a * p) @ p) <= c2 * abs(slope0))


@pytest.mark.parametrize("scale", [1e-5, 1e-3, 1.0, 30.0])  # long steps to find, short ones, a zoom
@pytest.mark.parametrize("x0", ROSEN_STARTS, ids=["2d", "5d"])
def test_line_search_meets_strong_wolfe(x64, x0, scale):
    p = -scale * so.rosen_der(x0)
    res = core.jit(lambda x, p: line_search(rosen, x, p))(x0, p)
    assert not bool(res.failed) and int(res.status) == 0
    a = float(res.a_k)
    assert a > 0
    assert all(_wolfe(so.rosen, so.rosen_der, x0, p, a))
    np.testing.assert_allclose(float(res.f_k), so.rosen(x0 + a * p), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(res.g_k), so.rosen_der(x0 + a * p), rtol=1e-12)


def test_line_search_reports_failure_along_an_ascent_direction(x64):
    x0 = ROSEN_STARTS[0]
    res = line_search(rosen, x0, so.rosen_der(x0), maxiter=8)
    assert bool(res.failed) and int(res.status) in (1, 3)
    assert float(res.a_k) == 0.0 and float(res.f_k) == so.rosen(x0)  # no step is taken


# ----- a program written against jax.scipy.optimize ----------------------------------------------

PROGRAM = '''
import jax
import jax.numpy as jnp
import jax.scipy.optimize as jso


def negative_log_likelihood(w, features, labels):
    logits = features @ w
    return jnp.mean(jnp.logaddexp(0.0, logits) - labels * logits) + 0.05 * jnp.sum(w ** 2)


@jax.jit
def fit(features, labels):
    result = jso.minimize(negative_log_likelihood, jnp.zeros(features.shape[1]), args=(features, labels),
                          method="BFGS")
    return result.x, result.fun, result.success
'''


def test_jax_style_program_matches_scipy(x64, rng):
    namespace = {}
    exec(compile(port(PROGRAM), "<jax-style program>", "exec"), namespace)
    features = rng.standard_normal((40, 3))
    labels = (features @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.standard_normal(40) > 0).astype(np.float64)
    w, fun, success = namespace["fit"](features, labels)

    def nll(w):
        logits = features @ w
        return np.mean(np.logaddexp(0.0, logits) - labels * logits) + 0.05 * np.sum(w ** 2)

    def nll_grad(w):
        return features.T @ (1 / (1 + np.exp(-(features @ w))) - labels) / len(labels) + 0.1 * w

    expected = so.minimize(nll, np.zeros(3), jac=nll_grad, method="BFGS")
    assert bool(success) and expected.success
    np.testing.assert_allclose(np.asarray(w), expected.x, atol=1e-5)
    np.testing.assert_allclose(float(fun), expected.fun, rtol=1e-9)

"""lax.custom_linear_solve and lax.custom_root: values against NumPy in float64, derivatives
against central differences and the closed forms of the implicit function theorem, and the
property that makes them worth having: derivatives never go through the solver's iterations (the
solvers below are while loops, which reverse mode cannot differentiate)."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core import test_util as tu

pytestmark = pytest.mark.usefixtures("x64")


def _spd(rng, n):
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n)


def _cg(matvec, b, iters=30):
    """Conjugate gradients as a while loop: not reverse-differentiable here, so a gradient that
    works proves it did not go through these iterations."""
    def cond(state):
        k, _, r, _ = state
        return (k < iters) & (jnp.vdot(r, r) > 1e-28)

    def body(state):
        k, x, r, p = state
        ap = matvec(p)
        alpha = jnp.vdot(r, r) / jnp.vdot(p, ap)
        x, r_new = x + alpha * p, r - alpha * ap
        p = r_new + jnp.vdot(r_new, r_new) / jnp.vdot(r, r) * p
        return k + 1, x, r_new, p

    return lax.while_loop(cond, body, (0, jnp.zeros_like(b), b, b))[1]


def _solve_cg(a, b):
    return lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: _cg(mv, r), symmetric=True)


def _solve_general(a, b):
    return lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: jnp.linalg.solve(a, r),
                                   transpose_solve=lambda vm, r: jnp.linalg.solve(a.T, r))


def test_custom_linear_solve_value_and_implicit_gradients(rng):
    a, b = _spd(rng, 4), rng.standard_normal(4)
    x = _solve_cg(jnp.asarray(a), jnp.asarray(b))
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10)
    # d/db sum(w * A^-1 b) = A^-T w; d/dA = -(A^-T w) x^T (the implicit derivatives)
    w = rng.standard_normal(4)
    ga, gb = core.grad(lambda a, b: jnp.sum(jnp.asarray(w) * _solve_cg(a, b)), argnums=(0, 1))(a, b)
    lam = np.linalg.solve(a.T, w)
    np.testing.assert_allclose(gb, lam, rtol=1e-9)
    np.testing.assert_allclose(ga, -np.outer(lam, np.linalg.solve(a, b)), rtol=1e-9)


def test_custom_linear_solve_derivatives_match_finite_differences(rng):
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)   # not symmetric: needs the transposed matvec
    b = rng.standard_normal(3)
    tu.check_grads(_solve_general, (a, b), order=2)


def test_custom_linear_solve_without_transpose_solve_does_forward_mode_only(rng):
    a, b = _spd(rng, 3), rng.standard_normal(3)
    solve = lambda a, b: lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: _cg(mv, r))  # noqa: E731
    tu.check_grads(solve, (a, b), order=1, modes=("fwd",))
    with pytest.raises(TypeError, match="transpose_solve is required for reverse-mode"):
        core.grad(lambda b: solve(a, b).sum())(b)


def test_custom_linear_solve_pytrees_has_aux_jit_and_vmap(rng):
    a1, a2 = np.diag(rng.uniform(1, 2, 3)), _spd(rng, 2)
    b = {"u": rng.standard_normal(3), "v": rng.standard_normal(2)}

    def solve(a1, a2, b):
        def matvec(x):
            return {"u": a1 @ x["u"], "v": a2 @ x["v"]}

        def solve_fn(mv, r):
            return {"u": r["u"] / jnp.diag(a1), "v": jnp.linalg.solve(a2, r["v"])}, jnp.int32(7)
        return lax.custom_linear_solve(matvec, b, solve_fn, symmetric=True, has_aux=True)

    (x, aux) = core.jit(solve)(a1, a2, b)
    assert int(aux) == 7
    np.testing.assert_allclose(x["u"], b["u"] / np.diag(a1), rtol=1e-12)
    np.testing.assert_allclose(x["v"], np.linalg.solve(a2, b["v"]), rtol=1e-12)
    g = core.grad(lambda b: jnp.sum(solve(a1, a2, b)[0]["v"] ** 2))(b)
    np.testing.assert_allclose(g["v"], 2 * np.linalg.solve(a2.T, np.linalg.solve(a2, b["v"])), rtol=1e-10)
    np.testing.assert_allclose(g["u"], 0.0)
    # vmap over a batch of matrices and right-hand sides against a Python loop, and vmap of grad
    mats, rhs = np.stack([_spd(rng, 3) for _ in range(3)]), rng.standard_normal((3, 3))
    out = core.vmap(_solve_cg)(mats, rhs)
    np.testing.assert_allclose(out, np.stack([np.linalg.solve(m, r) for m, r in zip(mats, rhs)]), rtol=1e-9)
    out = core.vmap(_solve_cg, in_axes=(None, 0))(mats[0], rhs)
    np.testing.assert_allclose(out, np.linalg.solve(mats[0], rhs.T).T, rtol=1e-9)
    grads = core.jit(core.vmap(core.grad(lambda a, b: _solve_cg(a, b).sum())))(mats, rhs)
    expected = [-np.outer(np.linalg.solve(m.T, np.ones(3)), np.linalg.solve(m, r)) for m, r in zip(mats, rhs)]
    np.testing.assert_allclose(grads, np.stack(expected), rtol=1e-9)


def test_custom_linear_solve_checks_what_the_functions_return():
    b = jnp.ones(3)
    with pytest.raises(ValueError, match=r"matvec\(\) output shapes must match b"):
        lax.custom_linear_solve(lambda v: v[:2], b, lambda mv, r: r)
    with pytest.raises(TypeError, match=r"solve\(\) output pytree structure must match b"):
        lax.custom_linear_solve(lambda v: v, b, lambda mv, r: (r, r))
    with pytest.raises(TypeError, match=r"b must hold float or complex arrays.*i64\[3\]"):
        lax.custom_linear_solve(lambda v: v, jnp.arange(3), lambda mv, r: r)


# ----- custom_root ------------------------------------------------------------------------------

def _newton_scalar(f, x0):
    return lax.while_loop(lambda x: jnp.abs(f(x)) > 1e-13,
                          lambda x: x - f(x) / core.grad(f)(x), x0)


def _cube_root(a):
    return lax.custom_root(lambda x: x ** 3 - a, 1.0, _newton_scalar, lambda g, y: y / g(1.0))


def test_custom_root_scalar_value_and_derivatives():
    a = np.float64(5.0)
    np.testing.assert_allclose(_cube_root(a), 5.0 ** (1 / 3), rtol=1e-12)
    # x(a) = a^(1/3): x' = x / (3a), x'' = -2x / (9a^2)
    x = 5.0 ** (1 / 3)
    np.testing.assert_allclose(core.grad(_cube_root)(a), x / (3 * a), rtol=1e-10)
    np.testing.assert_allclose(core.jit(core.grad(core.grad(_cube_root)))(a), -2 * x / (9 * a * a), rtol=1e-8)
    out = core.vmap(core.grad(_cube_root))(jnp.array([1.0, 8.0, 27.0]))
    np.testing.assert_allclose(out, [1 / 3, 2 / 24, 3 / 81], rtol=1e-10)


def test_custom_root_of_a_system_with_aux(rng):
    # f(x; p) = A x + 0.1 x^3 - p, solved by Newton with jacobians; dx/dp = (A + 0.3 diag(x^2))^-1
    a = _spd(rng, 3)
    p = rng.standard_normal(3)

    def root(a, p):
        f = lambda x: a @ x + 0.1 * x ** 3 - p  # noqa: E731

        def newton(f, x0):
            step = lambda i, x: x - jnp.linalg.solve(a + 0.3 * jnp.diag(x ** 2), f(x))  # noqa: E731
            x = lax.fori_loop(0, 12, step, x0)
            return x, jnp.linalg.norm(f(x))

        tangent_solve = lambda g, y: jnp.linalg.solve(core.jacfwd(g)(y), y)  # noqa: E731
        return lax.custom_root(f, jnp.zeros(3), newton, tangent_solve, has_aux=True)

    x, residual = core.jit(root)(a, p)
    assert float(residual) < 1e-12
    np.testing.assert_allclose(a @ x + 0.1 * np.asarray(x) ** 3, p, atol=1e-12)
    w = rng.standard_normal(3)
    g = core.jit(core.grad(lambda p: jnp.vdot(w, root(a, p)[0])))(p)
    np.testing.assert_allclose(g, np.linalg.solve((a + 0.3 * np.diag(np.asarray(x) ** 2)).T, w), rtol=1e-9)
    with pytest.raises(TypeError, match=r"custom_root: solve\(\) output pytree structure must match initial_guess"):
        lax.custom_root(lambda x: x, jnp.zeros(3), lambda f, x: (x, x), lambda g, y: y)

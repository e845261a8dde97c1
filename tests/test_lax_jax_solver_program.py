"""A JAX program built on lax.custom_linear_solve and lax.custom_root, ported by changing only its
imports, checked against NumPy in float64. The three import lines below replace
    import jax
    import jax.numpy as jnp
    from jax import lax
and nothing else in the program section was changed."""
import numpy as np

import core as jax
import core.numpy as jnp
from core import lax

# ----- the program, as written for JAX -----------------------------------------------------------


def conjugate_gradient(matvec, b, iters=50):
    def body(state):
        k, x, r, p, rr = state
        ap = matvec(p)
        alpha = rr / jnp.vdot(p, ap)
        x = x + alpha * p
        r = r - alpha * ap
        rr_new = jnp.vdot(r, r)
        return k + 1, x, r, r + (rr_new / rr) * p, rr_new

    def cond(state):
        k, _, _, _, rr = state
        return (k < iters) & (rr > 1e-12)

    return lax.while_loop(cond, body, (0, jnp.zeros_like(b), b, b, jnp.vdot(b, b)))[1]


def ridge(a, y, lam):
    """argmin_x |a x - y|^2 + lam |x|^2, by CG on the normal equations, differentiated implicitly."""
    matvec = lambda x: a.T @ (a @ x) + lam * x  # noqa: E731
    return lax.custom_linear_solve(matvec, a.T @ y, lambda mv, b: conjugate_gradient(mv, b), symmetric=True)


def cubic_root(c):
    """t with t^3 + t = c (elementwise), by Newton's method, differentiated implicitly."""
    f = lambda t: t ** 3 + t - c  # noqa: E731
    slope = lambda g, t: jax.jvp(g, (t,), (jnp.ones_like(t),))[1]  # noqa: E731  (f is elementwise)

    def newton(f, t0):
        return lax.fori_loop(0, 30, lambda i, t: t - f(t) / slope(f, t), t0)

    return lax.custom_root(f, jnp.zeros_like(c), newton, lambda g, y: y / g(jnp.ones_like(y)))


@jax.jit
def objective(a, y, lam, c):
    x = ridge(a, y, lam)
    return jnp.sum(x ** 2) + jnp.sum(cubic_root(c))


# ----- the checks --------------------------------------------------------------------------------


def test_ported_solver_program_values_and_gradients():
    rng = np.random.default_rng(0)
    a, y = rng.standard_normal((6, 3)), rng.standard_normal(6)
    lam, c = 0.5, np.array([2.0, 10.0])
    args = (a.astype(np.float32), y.astype(np.float32), np.float32(lam), c.astype(np.float32))

    m = a.T @ a + lam * np.eye(3)
    x = np.linalg.solve(m, a.T @ y)
    t = np.array([np.real(r[np.abs(np.imag(r)) < 1e-9][0]) for r in (np.roots([1, 0, 1, -ci]) for ci in c)])
    np.testing.assert_allclose(objective(*args), x @ x + t.sum(), rtol=1e-5)

    g_a, g_y, g_lam, g_c = jax.grad(objective, argnums=(0, 1, 2, 3))(*args)
    # d|x|^2 = 2 x . dx with m dx = da^T y - (da^T a + a^T da) x - dlam x
    w = np.linalg.solve(m, 2 * x)
    np.testing.assert_allclose(g_lam, -w @ x, rtol=1e-4)
    np.testing.assert_allclose(g_y, a @ w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g_a, np.outer(y, w) - np.outer(a @ w, x) - np.outer(a @ x, w), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(g_c, 1 / (3 * t ** 2 + 1), rtol=1e-5)

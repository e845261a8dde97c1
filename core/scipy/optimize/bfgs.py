"""BFGS, as `jax.scipy.optimize`'s (and Nocedal and Wright's algorithm 6.1): a quasi-Newton method
that keeps an estimate of the inverse Hessian, updated from each step and change of gradient, and
steps along -H g with a strong-Wolfe line search. One `lax.while_loop`, so it runs under jit."""
from typing import NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...autodiff import value_and_grad
from .line_search import line_search

__all__ = ["minimize_bfgs", "BFGSResults"]


class BFGSResults(NamedTuple):
    """The state and outcome of `minimize_bfgs`: `converged` (gradient norm below gtol), `failed`
    (a line search found no step), `k` iterations, `nfev`/`ngev`/`nhev` evaluations, the iterate
    `x_k`, its value `f_k` and gradient `g_k`, the inverse-Hessian estimate `H_k`, the previous
    value `old_old_fval`, and `status` (0 converged, 1 out of iterations, 2 + the line search's
    status when it failed) and `line_search_status`."""
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


def _norm(g, ord):
    return jnp.linalg.norm(g, ord=ord)


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimize `fun` (a real scalar function of a 1-D array) from `x0` by BFGS, as
    `jax.scipy.optimize.minimize(method="BFGS")` does: stop when the `norm` (default max-abs) of
    the gradient is below `gtol`, after `maxiter` iterations (default 200 per variable), or when a
    line search fails. Returns `BFGSResults`.

    Example:
        >>> from core.scipy.optimize.bfgs import minimize_bfgs
        >>> res = minimize_bfgs(lambda x: jnp.sum((x - jnp.array([1.0, 2.0])) ** 2), jnp.zeros(2))
        >>> jnp.round(res.x_k, 4), res.status
        (Array([1., 2.], dtype=float32), Array(0, dtype=int32))
    """
    x0 = jnp.asarray(x0)
    n = x0.shape[0]
    if maxiter is None:
        maxiter = 200 * n
    f0, g0 = value_and_grad(fun)(x0)
    eye = jnp.eye(n, dtype=x0.dtype)
    state = BFGSResults(converged=_norm(g0, norm) < gtol, failed=jnp.array(False), k=jnp.zeros((), np.int32),
                        nfev=jnp.ones((), np.int32), ngev=jnp.ones((), np.int32), nhev=jnp.zeros((), np.int32),
                        x_k=x0, f_k=f0, g_k=g0, H_k=eye,
                        # SciPy's first step guess: as if the last step had decreased f by |g|/2
                        old_old_fval=f0 + jnp.linalg.norm(g0) / 2,
                        status=jnp.zeros((), np.int32), line_search_status=jnp.zeros((), np.int32))

    def running(s):
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def step(s):
        p = -(s.H_k @ s.g_k)
        ls = line_search(fun, s.x_k, p, old_fval=s.f_k, old_old_fval=s.old_old_fval, gfk=s.g_k,
                         maxiter=line_search_maxiter)
        dx = ls.a_k.astype(p.dtype) * p
        dg = ls.g_k - s.g_k
        rho = 1.0 / jnp.real(jnp.vdot(dg, dx))
        # H+ = (I - rho dx dg^T) H (I - rho dg dx^T) + rho dx dx^T; skipped when dg.dx = 0
        w = eye - rho * jnp.outer(dx, dg)
        h = w @ s.H_k @ w.T + rho * jnp.outer(dx, dx)
        h = jnp.where(jnp.isfinite(rho), h, s.H_k)
        return s._replace(converged=_norm(ls.g_k, norm) < gtol, failed=ls.failed, k=s.k + 1,
                          nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, x_k=s.x_k + dx, f_k=ls.f_k,
                          g_k=ls.g_k, H_k=h, old_old_fval=s.f_k, line_search_status=ls.status)

    state = lax.while_loop(running, step, state)
    status = jnp.where(state.converged, 0,
                       jnp.where(state.k == maxiter, 1, jnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status.astype(np.int32))

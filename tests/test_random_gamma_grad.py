"""The gradient of core.random's gamma samples in their shape parameter: the implicit
reparameterization gradient d x / d a at a fixed quantile u = P(a, x) (lax.random_gamma_grad), as
jax.random.gamma defines it, not the derivative of the rejection sampler. Oracles: central differences
of SciPy's inverse incomplete gamma function at fixed u (float64), mpmath where the samples underflow,
exact moments for beta / dirichlet and a closed-form ELBO gradient for a JAX-style program."""
import mpmath
import numpy as np
import pytest
import scipy.special as sp

import core
import core.numpy as jnp
from core import lax
from core import random


def _implicit_grad_oracle(a, x, h_rel=1e-6):
    """d/da F^-1(u; a) at u = F(x; a), by central differences of scipy's gammaincinv (float64).
    Truncation error O(h^2), rounding ~1e-16 / h_rel relative: about 1e-10 in all, far below
    the 1e-6 tolerances used with it (the inverse itself is accurate to ~1e-13)."""
    u = sp.gammainc(a, x)
    h = h_rel * a
    return (sp.gammaincinv(a + h, u) - sp.gammaincinv(a - h, u)) / (2 * h)


def _log_quantile_grad_mpmath(a, log_x, h=1e-20):
    """d log x / d a at fixed u for samples far below the float range, in 60-digit arithmetic:
    solve P(a +- h, x) = u for log x by Newton's method on log P, then a central difference."""
    mpmath.mp.dps = 60
    a, log_x = mpmath.mpf(a), mpmath.mpf(log_x)
    log_p = lambda a_, lx: mpmath.log(mpmath.gammainc(a_, 0, mpmath.exp(lx), regularized=True))  # noqa: E731
    target = log_p(a, log_x)

    def solve(a_):
        lx = log_x
        for _ in range(30):
            f = log_p(a_, lx) - target
            lx -= f / mpmath.diff(lambda t: log_p(a_, t), lx)
        return lx

    return float((solve(a + h) - solve(a - h)) / (2 * h))


def test_gamma_grad_is_the_implicit_gradient_float64(x64):
    # forward mode through loggamma (one compiled program) gives log x and d log x / da; gamma's
    # x = exp(log x) and dx/da = x d log x / da. Shape parameters from 2e-4 (where log x reaches -1e3
    # and below and x underflows float64; JAX substitutes the smallest float for x there and loses
    # the gradient) to 300, 6 samples each.
    key = random.PRNGKey(3)
    a_values = [2e-4, 0.05, 0.3, 1.0, 2.5, 20.0, 300.0]
    a = jnp.asarray(np.repeat(a_values, 6))
    log_x, d_log_x = core.jit(lambda a: core.jvp(lambda a: random.loggamma(key, a), (a,), (jnp.ones_like(a),)))(a)
    log_x, d_log_x = np.asarray(log_x), np.asarray(d_log_x)
    tiny = np.asarray(a) == 2e-4
    assert (log_x[tiny] < -745).any()  # at least one sample below the denormals
    # there: 60-digit mpmath; 1e-9 because the x -> 0 limit used below the float range is exact to O(x)
    expected = [_log_quantile_grad_mpmath(2e-4, lx) for lx in log_x[tiny]]
    np.testing.assert_allclose(d_log_x[tiny], expected, rtol=1e-9)
    x, a_rest = np.exp(log_x[~tiny]), np.asarray(a)[~tiny]
    np.testing.assert_allclose(x * d_log_x[~tiny], _implicit_grad_oracle(a_rest, x), rtol=1e-6)


def _mc_check(estimates, exact):
    """Monte Carlo estimates (one per independent batch) agree with `exact` within 5 standard
    errors of their mean (deterministic keys: this either always or never passes)."""
    estimates = np.asarray(estimates, np.float64)
    se = estimates.std(0, ddof=1) / np.sqrt(len(estimates))
    assert np.all(np.abs(estimates.mean(0) - exact) < 5 * se + 1e-12), (estimates.mean(0), exact, se)


def test_beta_and_dirichlet_grads_are_unbiased():
    # float32, reverse mode, under jit and vmap over keys
    # E[B] = a / (a + b), so E[dB/da] = b / (a + b)^2 and E[dB/db] = -a / (a + b)^2; Dirichlet's
    # first component likewise (mean alpha_0 / sum(alpha)). The rejection sampler's derivative was biased.
    a, b, alpha, n = 0.7, 2.0, jnp.array([0.5, 1.5, 3.0]), 1000

    def means(a, b, alpha, k):
        k1, k2 = random.split(k)
        return jnp.mean(random.beta(k1, a, b, (n,))), jnp.mean(random.dirichlet(k2, alpha, (n,))[:, 0])

    def grads(k):  # one program for both samplers' gradients
        g_beta = core.grad(lambda a, b: means(a, b, alpha, k)[0], (0, 1))(a, b)
        return jnp.stack(g_beta), core.grad(lambda al: means(a, b, al, k)[1])(alpha)

    g_beta, g_dir = core.jit(core.vmap(grads))(random.split(random.PRNGKey(5), 8))
    _mc_check(g_beta, [b / (a + b) ** 2, -a / (a + b) ** 2])
    s = 5.0
    _mc_check(g_dir, [1 / s - 0.5 / s ** 2, -0.5 / s ** 2, -0.5 / s ** 2])


def test_jax_style_reparameterized_elbo():
    # A JAX program (Poisson counts, Gamma prior on the rate, Gamma variational posterior fitted by
    # a reparameterized ELBO gradient), rewritten only in its imports:
    #   import jax; import jax.numpy as jnp; from jax import random
    #   from jax.scipy.special import gammaln, digamma
    import core as jax
    import core.numpy as jnp
    from core import random
    from core.scipy.special import digamma, gammaln

    y = jnp.array([3.0, 5.0, 2.0, 4.0, 6.0])
    a0, b0, n_samples = 2.0, 0.5, 2000

    def log_joint(lam):
        log_lik = jnp.sum(y * jnp.log(lam) - lam - gammaln(y + 1.0))
        log_prior = a0 * jnp.log(b0) - gammaln(a0) + (a0 - 1.0) * jnp.log(lam) - b0 * lam
        return log_lik + log_prior

    def elbo(params, key):
        alpha, beta = jnp.exp(params["log_alpha"]), jnp.exp(params["log_beta"])
        lam = jax.vmap(lambda k: random.gamma(k, alpha))(random.split(key, n_samples)) / beta
        entropy = alpha - jnp.log(beta) + gammaln(alpha) + (1.0 - alpha) * digamma(alpha)
        return jnp.mean(jax.vmap(log_joint)(lam)) + entropy

    params = {"log_alpha": jnp.array(1.5), "log_beta": jnp.array(-0.5)}
    grad_fn = jax.jit(jax.grad(elbo))
    keys = random.split(random.PRNGKey(0), 6)
    est = [[float(g["log_alpha"]), float(g["log_beta"])] for g in (grad_fn(params, k) for k in keys)]

    # the exact ELBO (E[lam] = alpha / beta, E[log lam] = digamma(alpha) - log beta), differentiated
    # by hand in (log alpha, log beta), in float64
    al, be = np.exp(1.5), np.exp(-0.5)
    s, n = float(np.sum(y)), 5
    c = s + a0 - 1.0  # coefficient of E[log lam]
    d_alpha = (c * sp.polygamma(1, al) - (n + b0) / be + 1.0 + sp.digamma(al)
               - sp.digamma(al) + (1.0 - al) * sp.polygamma(1, al))
    d_beta = -c / be + (n + b0) * al / be ** 2 - 1.0 / be
    exact = [d_alpha * al, d_beta * be]
    _mc_check(est, exact)
    # and the estimate is close in absolute terms too (the standard error here is ~0.05)
    np.testing.assert_allclose(np.mean(est, 0), exact, atol=0.3)

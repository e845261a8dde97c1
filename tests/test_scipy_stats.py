"""core.scipy.stats against scipy.stats (float64 oracle) over parameter grids with edge values
(the support's boundaries, out of support, invalid parameters), under jit, through gradients, and
one JAX-style program rewritten only in its imports."""

import numpy as np
import pytest
import scipy.stats as st

import core
import core.numpy as jnp
from core.scipy import stats

# the SciPy oracle warns on the infinite and invalid edge arguments it is given on purpose
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _close(actual, expected, rtol=1e-12, atol=1e-300):
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected, np.float64),
                                   rtol=rtol, atol=atol, equal_nan=True)


# x values that hit the usual edges: below, at and above a support's ends, large magnitudes, inf
X = np.array([-np.inf, -40.0, -3.0, -1.0, -0.3, 0.0, 1e-8, 0.25, 0.5, 1.0, 1.7, 6.0, 45.0, np.inf])
Q = np.array([-0.1, 0.0, 1e-12, 0.01, 0.3, 0.5, 0.9, 1 - 1e-9, 1.0, 1.2])
LOC_SCALE = [(0.0, 1.0), (0.7, 2.5), (-1.0, 0.4), (0.0, -1.0), (0.0, 0.0)]

# module -> (functions on x, quantile functions on q)
CONTINUOUS = {
    "norm": (["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], ["ppf", "isf"]),
    "expon": (["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], ["ppf"]),
    "laplace": (["logpdf", "pdf", "cdf"], []),
    "logistic": (["logpdf", "pdf", "cdf", "sf"], ["ppf", "isf"]),
    "cauchy": (["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"], ["ppf", "isf"]),
    "uniform": (["logpdf", "pdf", "cdf"], ["ppf"]),
}


@pytest.mark.parametrize("name", sorted(CONTINUOUS))
def test_location_scale_families(x64, name):
    on_x, on_q = CONTINUOUS[name]
    for loc, scale in LOC_SCALE:
        for fn in on_x:
            ours = getattr(getattr(stats, name), fn)(X, loc, scale)
            theirs = getattr(getattr(st, name), fn)(X, loc, scale)
            _check(ours, theirs, f"{name}.{fn}(loc={loc}, scale={scale})")
        for fn in on_q:
            ours = getattr(getattr(stats, name), fn)(Q, loc, scale)
            theirs = getattr(getattr(st, name), fn)(Q, loc, scale)
            _check(ours, theirs, f"{name}.{fn}(loc={loc}, scale={scale})")


def _check(ours, theirs, what, rtol=1e-12):
    ours = np.asarray(ours, np.float64)
    assert ours.shape == np.shape(theirs), what
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-300, equal_nan=True, err_msg=what)


def test_shape_families(x64):
    x = np.array([-1.0, 0.0, 1e-6, 0.2, 0.5, 0.9, 1.0, 1.5, 3.0, 20.0, np.inf])
    for a, b in [(0.5, 0.5), (1.0, 1.0), (2.0, 5.0), (7.5, 1.3), (1.0, 3.0)]:
        for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
            _check(getattr(stats.beta, fn)(x, a, b), getattr(st.beta, fn)(x, a, b), f"beta.{fn}({a}, {b})", 5e-11)
            _check(getattr(stats.beta, fn)(x, a, b, -0.5, 2.0), getattr(st.beta, fn)(x, a, b, -0.5, 2.0),
                   f"beta.{fn}({a}, {b}, loc, scale)", 5e-11)
    for a in (0.3, 1.0, 2.0, 9.5, 60.0):
        for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
            _check(getattr(stats.gamma, fn)(x, a), getattr(st.gamma, fn)(x, a), f"gamma.{fn}({a})", 1e-11)
            _check(getattr(stats.gamma, fn)(x, a, 0.1, 3.0), getattr(st.gamma, fn)(x, a, 0.1, 3.0),
                   f"gamma.{fn}({a}, loc, scale)", 1e-11)
            _check(getattr(stats.chi2, fn)(x, 2 * a), getattr(st.chi2, fn)(x, 2 * a), f"chi2.{fn}({2 * a})", 1e-11)
    for df in (0.7, 1.0, 3.0, 30.0, 1e6):
        for fn in ("logpdf", "pdf"):
            _check(getattr(stats.t, fn)(x, df, 0.3, 1.7), getattr(st.t, fn)(x, df, 0.3, 1.7), f"t.{fn}({df})", 1e-11)


def test_invalid_shape_parameters_give_nan(x64):
    _check(stats.beta.logpdf(0.5, -1.0, 2.0), np.nan, "beta a < 0")
    _check(stats.gamma.cdf(1.0, 0.0), np.nan, "gamma a == 0")
    _check(stats.t.pdf(0.5, -2.0), np.nan, "t df < 0")
    _check(stats.chi2.logsf(1.0, 2.0, 0.0, -1.0), np.nan, "chi2 scale < 0")


def test_discrete(x64):
    k = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 7.0, 40.0])
    for mu in (0.0, 0.3, 3.0, 25.0, -1.0):
        for fn in ("logpmf", "pmf", "cdf"):
            _check(getattr(stats.poisson, fn)(k, mu), getattr(st.poisson, fn)(k, mu), f"poisson.{fn}({mu})", 1e-11)
            _check(getattr(stats.poisson, fn)(k, mu, 2), getattr(st.poisson, fn)(k, mu, 2), f"poisson.{fn}(loc)", 1e-11)
    for p in (0.0, 0.3, 1.0, 1.5):
        for fn in ("logpmf", "pmf"):
            _check(getattr(stats.bernoulli, fn)(k, p), getattr(st.bernoulli, fn)(k, p), f"bernoulli.{fn}({p})")
            _check(getattr(stats.bernoulli, fn)(k, p, 1), getattr(st.bernoulli, fn)(k, p, 1), f"bernoulli.{fn}(loc)")
        _check(stats.bernoulli.cdf(k, p), st.bernoulli.cdf(k, p), f"bernoulli.cdf({p})")
        _check(stats.bernoulli.ppf(Q, p), st.bernoulli.ppf(Q, p), f"bernoulli.ppf({p})")
        for n in (0, 1, 5, 40):
            for fn in ("logpmf", "pmf"):
                _check(getattr(stats.binom, fn)(k, n, p), getattr(st.binom, fn)(k, n, p), f"binom.{fn}({n}, {p})",
                       1e-11)
    _check(stats.binom.pmf(k, 7, 0.2, 1), st.binom.pmf(k, 7, 0.2, 1), "binom.pmf(loc)", 1e-11)


def test_poisson_entropy(x64):
    mu = np.array([0.0, 1e-3, 0.5, 3.0, 40.0, 399.0, 401.0, 5e3])
    _check(stats.poisson.entropy(mu), st.poisson.entropy(mu), "poisson.entropy", 1e-10)
    # (SciPy's own value is wrong this far out: 2.77); the expansion's first terms, by hand
    _check(stats.poisson.entropy(1e6), 0.5 * np.log(2 * np.pi * np.e * 1e6) - 1 / 12e6, "poisson.entropy(1e6)", 1e-13)
    _check(stats.poisson.entropy(-1.0), np.nan, "poisson.entropy(mu < 0)")


def test_dirichlet(x64):
    alpha = np.array([0.7, 2.0, 3.5])
    x = np.array([[0.2, 0.1, 0.6], [0.3, 0.3, 0.05], [0.5, 0.6, 0.35]])
    _check(stats.dirichlet.logpdf(x, alpha), st.dirichlet.logpdf(x, alpha), "dirichlet.logpdf", 1e-12)
    _check(stats.dirichlet.pdf(x[:2], alpha), st.dirichlet.pdf(x[:2], alpha), "dirichlet.pdf (K - 1)", 1e-12)
    # on the simplex's edge (alpha_i = 1 at x_i = 0) and off it (negative, or not summing to 1)
    _check(stats.dirichlet.logpdf(np.array([0.0, 0.3, 0.7]), np.array([1.0, 2.0, 3.0])),
           st.dirichlet.logpdf(np.array([0.0, 0.3, 0.7]), np.array([1.0, 2.0, 3.0])), "dirichlet edge")
    assert float(stats.dirichlet.logpdf(np.array([0.2, 0.3, 0.6]), alpha)) == -np.inf
    assert float(stats.dirichlet.logpdf(np.array([-0.1, 0.5, 0.6]), alpha)) == -np.inf
    with pytest.raises(ValueError, match=r"dirichlet.logpdf: x must have 3 \(or 2\) components"):
        stats.dirichlet.logpdf(np.ones((4,)) / 4, alpha)


def test_multivariate_normal(x64, rng):
    n = 3
    m = rng.normal(size=(n, n))
    cov = m @ m.T + n * np.eye(n)
    mean = rng.normal(size=n)
    x = rng.normal(size=(4, n))
    _check(stats.multivariate_normal.logpdf(x, mean, cov), st.multivariate_normal.logpdf(x, mean, cov),
           "mvn.logpdf", 1e-12)
    _check(stats.multivariate_normal.pdf(x[0], mean, cov), st.multivariate_normal.pdf(x[0], mean, cov), "mvn.pdf")
    _check(stats.multivariate_normal.logpdf(x, mean, 2.0), st.multivariate_normal.logpdf(x, mean, 2.0 * np.eye(n)),
           "mvn isotropic", 1e-12)
    _check(stats.multivariate_normal.logpdf(0.5, 0.1, 2.0), st.norm.logpdf(0.5, 0.1, np.sqrt(2.0)), "mvn scalar")
    # a batch of covariances broadcast against a batch of points
    covs = np.stack([cov, 2 * cov])
    expected = [st.multivariate_normal.logpdf(x[:2][i], mean, covs[i]) for i in range(2)]
    _check(stats.multivariate_normal.logpdf(x[:2], mean, covs), expected, "mvn batched cov", 1e-12)
    with pytest.raises(NotImplementedError, match="allow_singular"):
        stats.multivariate_normal.logpdf(x, mean, cov, allow_singular=True)
    with pytest.raises(ValueError, match=r"cov must be a scalar or \(\.\.\., 3, 3\)"):
        stats.multivariate_normal.logpdf(x, mean, np.ones(3))


def test_float32_and_promotion():
    out = stats.norm.logpdf(jnp.arange(3), 1, 2)  # int arguments promote to the default float
    assert out.dtype == np.float32
    _close(out, st.norm.logpdf(np.arange(3), 1, 2), rtol=1e-6)
    x = np.array([0.1, 0.5, 2.0, 7.0], np.float32)
    _close(stats.gamma.cdf(x, np.float32(2.5)), st.gamma.cdf(x, 2.5), rtol=2e-6)
    _close(stats.beta.sf(x / 8, np.float32(2.0), np.float32(3.0)), st.beta.sf(x / 8, 2.0, 3.0), rtol=2e-6)
    _close(stats.poisson.logpmf(jnp.array([0, 3, 9]), np.float32(4.0)), st.poisson.logpmf([0, 3, 9], 4.0), rtol=2e-6)


def test_jit_and_vmap():
    f = core.jit(lambda x, a, s: stats.gamma.logcdf(x, a, scale=s) + stats.norm.logsf(x, 0.5, s))
    x = np.array([0.3, 1.0, 4.0], np.float32)
    _close(f(x, 2.0, 1.5), st.gamma.logcdf(x, 2.0, scale=1.5) + st.norm.logsf(x, 0.5, 1.5), rtol=3e-6)
    per_row = core.vmap(stats.t.logpdf, in_axes=(0, None))(x, 4.0)
    _close(per_row, st.t.logpdf(x, 4.0), rtol=2e-6)


def test_gradients(x64):
    # d/dx of a cdf is its pdf; d/dloc of norm.logpdf is (x - loc) / scale^2
    x = np.array([0.2, 1.3, 4.0])
    _close(core.vmap(core.grad(stats.gamma.cdf), (0, None))(x, 2.5), st.gamma.pdf(x, 2.5), rtol=1e-12)
    _close(core.vmap(core.grad(stats.beta.cdf), (0, None, None))(x / 5, 2.0, 3.5), st.beta.pdf(x / 5, 2.0, 3.5),
           rtol=1e-12)
    _close(core.vmap(core.grad(stats.chi2.sf), (0, None))(x, 3.0), -st.chi2.pdf(x, 3.0), rtol=1e-12)
    _close(core.grad(stats.norm.logpdf, argnums=1)(1.3, 0.4, 2.0), (1.3 - 0.4) / 4.0, rtol=1e-14)
    h = 1e-5
    fd = (st.poisson.cdf(3, 2.0 + h) - st.poisson.cdf(3, 2.0 - h)) / (2 * h)
    _close(core.grad(stats.poisson.cdf, argnums=1)(3.0, 2.0), fd, rtol=1e-7)


def test_jax_style_maximum_likelihood_fit(x64):
    # Written as a JAX program; only these import lines differ from it:
    #   import jax; import jax.numpy as jnp; from jax.scipy.stats import norm
    import core as jax
    import core.numpy as jnp
    from core.scipy.stats import norm

    data = np.random.default_rng(0).normal(3.0, 2.0, size=200)

    def nll(params, xs):
        loc, log_scale = params
        return -jnp.mean(norm.logpdf(xs, loc, jnp.exp(log_scale)))

    @jax.jit
    def step(params, xs):
        g = jax.grad(nll)(params, xs)
        return params - 0.5 * g

    params = jnp.array([0.0, 0.0])
    for _ in range(300):
        params = step(params, data)
    loc, log_scale = np.asarray(params)
    # the maximum-likelihood estimates in closed form: the mean and the (biased) standard deviation
    _close(loc, data.mean(), rtol=1e-8)
    _close(np.exp(log_scale), data.std(), rtol=1e-8)
    _close(nll(params, data), -st.norm.logpdf(data, data.mean(), data.std()).mean(), rtol=1e-12)

"""core/random_distributions.py: jax.random's remaining samplers. Closed-form ones and poisson
against numbers recorded from jax 0.10.2 (jax_threefry_partitionable=False, key PRNGKey(42)); every
sampler by distribution over 20,000 draws with fixed keys (Kolmogorov-Smirnov against scipy.stats
for continuous laws, chi-square on the counts for discrete ones, so the tests are deterministic);
shapes, dtypes, parameter broadcasting, and agreement under jit and vmap."""
import numpy as np
import pytest
import scipy.stats

import core
import core.numpy as jnp
from core import random, test_util as tu

K = random.PRNGKey(42)
N = 20000

# jax.random with jax_threefry_partitionable=False, K = PRNGKey(42)
GOLDEN = [
    ("lognormal(K, 0.5, (3,))", lambda: random.lognormal(K, 0.5, (3,)),
     [1.0979751348495483, 0.5271209478378296, 0.4585634469985962]),
    ("rayleigh(K, 2.0, (3,))", lambda: random.rayleigh(K, 2.0, (3,)),
     [2.1068923473358154, 4.2904582023620605, 4.7517852783203125]),
    ("maxwell(K, (3,))", lambda: random.maxwell(K, (3,)), [1.0472691059112549, 1.6044248342514038, 0.8468769192695618]),
    ("weibull_min(K, 2.0, 1.5, (3,))", lambda: random.weibull_min(K, 2.0, 1.5, (3,)),
     [1.7997750043869019, 0.44664719700813293, 0.31094321608543396]),
    ("pareto(K, 3.0, (3,))", lambda: random.pareto(K, 3.0, (3,)), [1.3291659355163574, 1.0358048677444458, 1.0206443071365356]),
    ("geometric(K, 0.25, (4,))", lambda: random.geometric(K, 0.25, (4,)), [2, 1, 10, 10]),
    ("triangular(K, -1.0, 0.3, 2.0, (3,))", lambda: random.triangular(K, -1.0, 0.3, 2.0, (3,)),
     [0.5262755155563354, -0.37500637769699097, -0.5184417366981506]),
    ("wald(K, 2.0, (3,))", lambda: random.wald(K, 2.0, (3,)), [0.8394919633865356, 0.5606870651245117, 0.36150169372558594]),
    ("poisson(K, 3.0, (4,))", lambda: random.poisson(K, 3.0, (4,)), [3, 3, 3, 2]),
    ("poisson(K, 40.0, (4,))", lambda: random.poisson(K, 40.0, (4,)), [33, 45, 35, 47]),
]


@pytest.mark.parametrize("name,fn,expected", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_numbers_match_jax(name, fn, expected):
    out = np.asarray(fn())
    np.testing.assert_array_equal(out, np.asarray(expected, out.dtype))


def test_double_sided_maxwell_matches_jax_to_an_ulp():
    out = np.asarray(random.double_sided_maxwell(K, 1.0, 2.0, (3,)))
    np.testing.assert_allclose(out, [3.872711658477783, -1.6279571056365967, 2.402751922607422], rtol=3e-7)


def _ks(x, dist, name):
    x = np.asarray(x, np.float64)
    assert x.shape == (N,) and np.isfinite(x).all(), name
    p = scipy.stats.kstest(x, dist.cdf).pvalue
    assert p > 1e-3, f"{name}: Kolmogorov-Smirnov p-value {p}"


CONTINUOUS = [
    ("lognormal", lambda k: random.lognormal(k, 0.5, (N,)), scipy.stats.lognorm(0.5)),
    ("rayleigh", lambda k: random.rayleigh(k, 2.0, (N,)), scipy.stats.rayleigh(scale=2.0)),
    ("maxwell", lambda k: random.maxwell(k, (N,)), scipy.stats.maxwell()),
    ("weibull_min", lambda k: random.weibull_min(k, 2.0, 1.5, (N,)), scipy.stats.weibull_min(1.5, scale=2.0)),
    ("pareto", lambda k: random.pareto(k, 3.0, (N,)), scipy.stats.pareto(3.0)),
    ("triangular", lambda k: random.triangular(k, -1.0, 0.3, 2.0, (N,)),
     scipy.stats.triang(1.3 / 3, loc=-1.0, scale=3.0)),
    ("wald", lambda k: random.wald(k, 2.0, (N,)), scipy.stats.invgauss(2.0)),
    ("t", lambda k: random.t(k, 5.0, (N,)), scipy.stats.t(5.0)),
    ("t_small_df", lambda k: random.t(k, 0.8, (N,)), scipy.stats.t(0.8)),
    ("chisquare", lambda k: random.chisquare(k, 3.0, (N,)), scipy.stats.chi2(3.0)),
    ("f", lambda k: random.f(k, 5.0, 10.0, (N,)), scipy.stats.f(5.0, 10.0)),
    ("generalized_normal", lambda k: random.generalized_normal(k, 1.5, (N,)), scipy.stats.gennorm(1.5)),
    ("double_sided_maxwell", lambda k: (random.double_sided_maxwell(k, 1.0, 2.0, (N,)) - 1.0) / 2.0,
     None),  # |x| is Maxwell, the sign symmetric: checked below
]


@pytest.mark.parametrize("name,sample,dist", CONTINUOUS, ids=[c[0] for c in CONTINUOUS])
def test_continuous_laws(name, sample, dist):
    x = sample(random.PRNGKey(tu.seed_for(name)))
    if dist is None:
        x = np.asarray(x, np.float64)
        _ks(np.abs(x), scipy.stats.maxwell(), name)
        assert abs((x > 0).mean() - 0.5) < 5 * 0.5 / np.sqrt(N)
        return
    _ks(x, dist, name)


def test_ball_is_uniform_in_the_ball():
    for p in (2.0, 1.0):
        x = np.asarray(random.ball(random.PRNGKey(tu.seed_for(f"ball{p}")), 3, p, (N,)), np.float64)
        assert x.shape == (N, 3)
        r = np.sum(np.abs(x) ** p, -1) ** (1 / p)
        assert r.max() <= 1.0 + 1e-6
        # uniform in a d-dimensional ball: the radius has CDF r^d (for any p-norm ball)
        _ks(r, scipy.stats.powerlaw(3), f"ball radius p={p}")
    # p = 2: the direction is uniform, so each coordinate is symmetric with mean 0
    assert np.abs(x.mean(0)).max() < 0.03


def _chi2_counts(x, dist, name):
    """Chi-square test of integer samples against a frozen scipy.stats discrete law: one bin per
    value whose expected count is at least 5, the tails pooled into the first and last bins."""
    x = np.asarray(x).astype(np.int64)
    values = np.arange(int(dist.ppf(1e-9)), int(dist.isf(1e-9)) + 2)
    keep = values[N * dist.pmf(values) >= 5]
    lo, hi = keep[0], keep[-1]
    expected = N * np.concatenate([[dist.cdf(lo)], dist.pmf(keep[1:-1]), [dist.sf(hi - 1)]])
    observed = np.concatenate([[np.sum(x <= lo)], [np.sum(x == v) for v in keep[1:-1]], [np.sum(x >= hi)]])
    assert observed.sum() == N and abs(expected.sum() - N) < 1e-6 * N, name
    p = scipy.stats.chisquare(observed, expected).pvalue
    assert p > 1e-3, f"{name}: chi-square p-value {p}"


@pytest.mark.parametrize("lam", [0.7, 4.0, 9.99, 25.0, 300.0])
def test_poisson_law(lam):
    x = random.poisson(random.PRNGKey(tu.seed_for(f"poisson{lam}")), lam, (N,))
    assert x.dtype == jnp.int32 and x.shape == (N,)
    _chi2_counts(x, scipy.stats.poisson(lam), f"poisson({lam})")


@pytest.mark.parametrize("n,p", [(5, 0.3), (20, 0.9), (100, 0.4), (1000, 0.02), (60, 0.5)])
def test_binomial_law(n, p):
    x = random.binomial(random.PRNGKey(tu.seed_for(f"binomial{n},{p}")), float(n), p, (N,))
    assert x.dtype == jnp.float32
    x = np.asarray(x)
    assert (x == np.round(x)).all() and x.min() >= 0 and x.max() <= n
    _chi2_counts(x, scipy.stats.binom(n, p), f"binomial({n}, {p})")


def test_geometric_law():
    x = random.geometric(random.PRNGKey(5), 0.25, (N,))
    assert x.dtype == jnp.int32
    _chi2_counts(x, scipy.stats.geom(0.25), "geometric")


def test_multinomial_counts():
    probs = np.array([0.2, 0.3, 0.5])
    x = np.asarray(random.multinomial(random.PRNGKey(7), 12.0, jnp.asarray(probs), shape=(N, 3)))
    assert x.shape == (N, 3) and x.dtype == np.float32
    np.testing.assert_array_equal(x.sum(-1), 12.0)
    # each category's marginal is Binomial(12, p_i)
    for i, p in enumerate(probs):
        _chi2_counts(x[:, i], scipy.stats.binom(12, p), f"multinomial marginal {i}")
    # covariance of two categories is -n p_i p_j
    cov = np.cov(x[:, 0], x[:, 1])[0, 1]
    assert abs(cov - (-12 * 0.2 * 0.3)) < 5 * 0.05


def test_edge_values():
    np.testing.assert_array_equal(np.asarray(random.poisson(K, jnp.array([0.0, 0.0]))), [0, 0])
    np.testing.assert_array_equal(np.asarray(random.binomial(K, jnp.array([0.0, 7.0, 7.0]),
                                                             jnp.array([0.5, 0.0, 1.0]))), [0.0, 0.0, 7.0])
    assert np.isnan(np.asarray(random.binomial(K, 5.0, 1.5)))


def test_shapes_dtypes_and_broadcasting():
    key = random.PRNGKey(0)
    assert random.t(key, jnp.array([2.0, 3.0, 4.0])).shape == (3,)
    assert random.f(key, jnp.ones((2, 1)), jnp.ones(3)).shape == (2, 3)
    assert random.triangular(key, 0.0, jnp.array([0.2, 0.5]), 1.0, (4, 2)).shape == (4, 2)
    assert random.double_sided_maxwell(key, jnp.zeros(2), 1.0, (3,)).shape == (3, 2)
    assert random.ball(key, 4, shape=(2,)).shape == (2, 4)
    assert random.multinomial(key, jnp.array([3.0, 5.0]), jnp.array([0.5, 0.5])).shape == (2, 2)
    assert random.lognormal(key, shape=(2,), dtype=jnp.float16).dtype == jnp.float16
    assert random.poisson(key, 2.0, (2,), dtype=jnp.int16).dtype == jnp.int16
    assert random.chisquare(key, 2.0).shape == ()
    with pytest.raises(ValueError, match=r"chisquare parameter shapes must be broadcast-compatible"):
        random.chisquare(key, jnp.ones(3), (2,))
    with pytest.raises(TypeError, match=r"poisson: dtype must be an integer dtype, got float32"):
        random.poisson(key, 2.0, dtype=jnp.float32)
    with pytest.raises(ValueError, match=r"multinomial: shape \(4, 2\) must end with the number of categories 3"):
        random.multinomial(key, 3.0, jnp.ones(3) / 3, shape=(4, 2))


def test_jit_and_vmap_agree_with_eager():
    keys = random.split(random.PRNGKey(11), 3)

    def draw(key):
        return (random.poisson(key, jnp.array([2.0, 30.0])), random.binomial(key, 40.0, jnp.array([0.1, 0.7])),
                random.t(key, 3.0, (2,)), random.wald(key, 1.5, (2,)))

    eager = [draw(k) for k in keys]
    jitted = core.jit(draw)(keys[0])
    batched = core.vmap(draw)(keys)
    for a, b in zip(eager[0], jitted, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    for i in range(3):
        for a, b in zip(eager[i], batched, strict=True):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b[i]), rtol=1e-6)

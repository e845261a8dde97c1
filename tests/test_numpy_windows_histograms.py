"""Window functions, histogram_bin_edges, histogram2d, histogramdd and unwrap against NumPy in float64
(and float32), derivatives against finite differences, and jitted runs."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning", "kaiser"])
@pytest.mark.parametrize("M", [0, 1, 2, 5, 8])
def test_windows_match_numpy(name, M):
    extra = (2.5,) if name == "kaiser" else ()
    out = getattr(jnp, name)(M, *extra)
    assert out.dtype == np.float32 and out.shape == (max(M, 0),)
    tu.assert_allclose(out, getattr(np, name)(M, *extra), np.float32, atol=2e-6, rtol=2e-6)


def test_windows_float64_and_kaiser_beta_gradient(x64):
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        out = getattr(jnp, name)(7)
        assert out.dtype == np.float64
        tu.assert_allclose(out, getattr(np, name)(7), np.float64, atol=1e-15, rtol=1e-14)
    tu.assert_allclose(jnp.kaiser(6, 4.0), np.kaiser(6, 4.0), np.float64, atol=1e-13, rtol=1e-13)
    tu.check_grads(lambda b: jnp.kaiser(6, b), (np.array(3.0),), order=1)
    with pytest.raises(TypeError, match="M must be a static integer"):
        jnp.hamming(2.5)


UNWRAP = [
    (lambda r: np.cumsum(r.uniform(-3, 3, 8)) % (2 * np.pi) - np.pi, {}),
    (lambda r: np.cumsum(r.uniform(-4, 4, (2, 6)), axis=1) % (2 * np.pi), {"axis": 1}),
    (lambda r: np.cumsum(r.uniform(-4, 4, (5, 2)), axis=0) % (2 * np.pi), {"axis": 0, "discont": 4.0}),
    (lambda r: np.cumsum(r.uniform(-5, 5, 7)) % 6.0, {"period": 6.0}),
    (lambda r: np.array([0.0, 3.0, 6.0, -3.0]), {"period": 6.0}),
]


@pytest.mark.parametrize("case", range(len(UNWRAP)))
def test_unwrap_matches_numpy(rng, x64, case):
    build, kwargs = UNWRAP[case]
    p = build(rng)
    tu.assert_allclose(jnp.unwrap(p, **kwargs), np.unwrap(p, **kwargs), np.float64, atol=1e-12, rtol=1e-12)
    p32 = p.astype(np.float32)
    out = jnp.unwrap(p32.astype(np.float32), **kwargs)
    tu.assert_allclose(out, np.unwrap(p32.astype(np.float64), **kwargs), np.float64, atol=1e-4, rtol=1e-5)
    if case < 4:  # away from the exact-boundary jumps, unwrap is piecewise the identity plus constants
        tu.check_grads(lambda q: jnp.unwrap(q, **kwargs), (p,), order=1)


HIST = [
    (lambda r: (r.standard_normal((20, 2)),), {"bins": 3}),
    (lambda r: (r.standard_normal((20, 3)),), {"bins": [2, 3, 4]}),
    (lambda r: (r.standard_normal((20, 2)),), {"bins": [np.array([-3.0, -1.0, 0.0, 2.0]), 2]}),
    (lambda r: (r.standard_normal((20, 2)),), {"bins": 4, "range": [(-1.0, 1.0), (0.0, 2.0)]}),
    (lambda r: (r.standard_normal((20, 2)),), {"bins": 3, "weights": np.linspace(0.1, 1.0, 20)}),
    (lambda r: (r.standard_normal((20, 2)),), {"bins": 3, "density": True}),
    (lambda r: (r.standard_normal(10),), {"bins": 4}),
]


@pytest.mark.parametrize("case", range(len(HIST)))
def test_histogramdd_matches_numpy(rng, case):
    build, kwargs = HIST[case]
    (sample,) = build(rng)
    sample = sample.astype(np.float32)
    kw = {k: (v.astype(np.float32) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()}
    hist, edges = jnp.histogramdd(sample, **kw)
    ehist, eedges = np.histogramdd(sample.astype(np.float64), **kwargs)
    tu.assert_allclose(hist, ehist, np.float32, atol=1e-5, rtol=1e-5)
    assert len(edges) == len(eedges)
    for e, ee in zip(edges, eedges):
        tu.assert_allclose(e, ee, np.float32, atol=1e-6, rtol=1e-6)


def test_histogram2d_and_bin_edges_match_numpy(rng):
    x, y = rng.standard_normal(15).astype(np.float32), rng.standard_normal(15).astype(np.float32)
    w = rng.uniform(0, 1, 15).astype(np.float32)
    for bins in (3, [2, 4], np.array([-2.0, 0.0, 2.0], np.float32), [np.array([-2.0, 0.0, 2.0], np.float32), 3]):
        out = jnp.histogram2d(x, y, bins=bins, weights=w)
        expected = np.histogram2d(x.astype(np.float64), y.astype(np.float64), bins=bins, weights=w)
        for o, e in zip(out, expected):
            tu.assert_allclose(o, e, np.float32, atol=1e-5, rtol=1e-5)
    for bins, rng_ in ((4, None), (3, (-1.0, 1.0)), (np.array([-1.0, 0.0, 3.0], np.float32), None)):
        tu.assert_allclose(jnp.histogram_bin_edges(x, bins, rng_), np.histogram_bin_edges(x.astype(np.float64), bins, rng_),
                           np.float32, atol=1e-6, rtol=1e-6)


def test_under_jit():
    f = core.jit(lambda s, w: (jnp.histogramdd(s, bins=3, range=[(-2.0, 2.0), (-2.0, 2.0)], weights=w)[0],
                               jnp.unwrap(s[:, 0] * 3.0), jnp.kaiser(4, w[0])))
    rng = np.random.default_rng(0)
    s, w = rng.standard_normal((12, 2)).astype(np.float32), rng.uniform(1, 2, 12).astype(np.float32)
    h, u, k = f(s, w)
    tu.assert_allclose(h, np.histogramdd(s, bins=3, range=[(-2, 2), (-2, 2)], weights=w)[0], np.float32,
                       atol=1e-5, rtol=1e-5)
    tu.assert_allclose(u, np.unwrap(s[:, 0].astype(np.float64) * 3.0), np.float32, atol=1e-4, rtol=1e-5)
    tu.assert_allclose(k, np.kaiser(4, float(w[0])), np.float32, atol=1e-5, rtol=1e-5)


def test_histogram_keeps_the_maximum_when_the_last_edge_rounds_down():
    # regression: in float32, lo + (hi - lo) is -0.2190001 here, below hi = -0.219, and the maximum
    # fell outside every bin; NumPy's last edge is exactly hi (as its linspace makes it)
    a = np.array([-2.325, -0.219, -1.246, -0.732], np.float32)
    h, e = jnp.histogram(a, bins=2)
    eh, ee = np.histogram(a, bins=2)
    np.testing.assert_array_equal(np.asarray(h), eh)
    assert float(e[-1]) == float(a.max())
    hd, _ = jnp.histogramdd(np.stack([a, a], axis=1), bins=2)
    assert float(jnp.sum(hd)) == 4.0

"""core.scipy.special against scipy.special (float64 oracle) and hand-derived edge values."""

import numpy as np
import pytest
import scipy.special as ss

import core.numpy as jnp
from core import test_util as tu
from core.scipy import special


# name -> (scipy oracle, input range, extra tolerance for float32 or None); our function is
# special.<name>, looked up when the test runs (so the under-jit run, tests/jit_harness.py, can wrap it)
UNARY = {
    "expit": (ss.expit, (-8, 8), None),
    "logit": (ss.logit, (0.01, 0.99), None),
    "erf": (ss.erf, (-3, 3), None),
    "erfc": (ss.erfc, (-3, 5), None),
    "erfinv": (ss.erfinv, (-0.99, 0.99), None),
    # XLA's lgamma/digamma are accurate to a few ulps except near their zeros
    "gammaln": (ss.gammaln, (0.1, 10), 2e-5),
    "digamma": (ss.digamma, (0.1, 10), 2e-5),
    "ndtr": (ss.ndtr, (-6, 6), None),
    "ndtri": (ss.ndtri, (0.001, 0.999), 2e-6),
    "log_ndtr": (ss.log_ndtr, (-30, 8), 1e-5),
    "entr": (ss.entr, (0.0, 3.0), None),
}
SHAPES = [(), (5,), (2, 3), (0,)]


@pytest.mark.parametrize("name,shape", tu.sample_cases(tu.product(sorted(UNARY), SHAPES), "special_unary", n=22))
def test_unary_matches_scipy(rng, name, shape):
    oracle, (lo, hi), tol = UNARY[name]
    fn = getattr(special, name)
    x = rng.uniform(lo, hi, size=shape).astype(np.float32)
    out = fn(jnp.asarray(x))
    assert out.dtype == np.float32 and out.shape == shape
    tu.assert_allclose(out, oracle(x.astype(np.float64)), np.float32, atol=tol, rtol=tol)


@pytest.mark.parametrize("name", ["erf", "ndtr", "ndtri", "log_ndtr", "gammaln"])
def test_unary_float64(x64, rng, name):
    oracle, (lo, hi), _ = UNARY[name]
    fn = getattr(special, name)
    x = rng.uniform(lo, hi, size=(7,))
    out = fn(jnp.asarray(x))
    assert out.dtype == np.float64
    # f64 transcendental kernels and our Halley / series steps: ~1e-13 relative
    tu.assert_allclose(out, oracle(x), np.float64, atol=1e-12, rtol=1e-12)


def test_integer_inputs_promote_to_float():
    out = special.expit(jnp.array([0, 1]))
    assert out.dtype == np.float32
    tu.assert_allclose(out, ss.expit([0.0, 1.0]), np.float32)
    assert special.gammaln(3).dtype == np.float32


def test_tails_and_edges():
    tu.assert_allclose(special.ndtri(jnp.array([0.0, 1.0, 1e-30, 1 - 1e-7, 0.5, -0.1], np.float32)),
                       ss.ndtri(np.array([0.0, 1.0, 1e-30, np.float32(1 - 1e-7), 0.5, -0.1])), np.float32,
                       rtol=2e-6)
    x = np.array([-40.0, -15.0, -10.5, -9.5, 0.0, 5.5, 12.0], np.float32)
    tu.assert_allclose(special.log_ndtr(jnp.asarray(x)), ss.log_ndtr(x.astype(np.float64)), np.float32, rtol=1e-5)
    tu.assert_allclose(special.ndtr(jnp.array([-20.0, 20.0])), ss.ndtr([-20.0, 20.0]), np.float32, rtol=1e-5)
    tu.assert_allclose(special.logit(jnp.array([0.0, 1.0])), [-np.inf, np.inf], np.float32)
    tu.assert_allclose(special.entr(jnp.array([0.0, -1.0, np.nan, 1.0])), [0.0, -np.inf, np.nan, 0.0], np.float32)


BINARY = {
    "xlogy": ss.xlogy,
    "xlog1py": ss.xlog1py,
    "betaln": ss.betaln,
}


@pytest.mark.parametrize("name,shapes", tu.product(sorted(BINARY), [((), ()), ((2, 3), (3,)), ((4,), ())]))
def test_binary_matches_scipy(rng, name, shapes):
    oracle = BINARY[name]
    fn = getattr(special, name)
    x = rng.uniform(0.1, 4, size=shapes[0]).astype(np.float32)
    y = rng.uniform(0.1, 4, size=shapes[1]).astype(np.float32)
    out = fn(jnp.asarray(x), jnp.asarray(y))
    assert out.shape == np.broadcast_shapes(shapes[0], shapes[1]) and out.dtype == np.float32
    tu.assert_allclose(out, oracle(x.astype(np.float64), y.astype(np.float64)), np.float32, rtol=1e-5, atol=1e-5)


def test_xlogy_zero_conventions():
    x = jnp.array([0.0, 0.0, 0.0, 2.0])
    y = jnp.array([0.0, 3.0, np.inf, 0.0])
    tu.assert_allclose(special.xlogy(x, y), ss.xlogy(np.asarray(x), np.asarray(y)), np.float32)
    tu.assert_allclose(special.xlogy(x, y), [0.0, 0.0, 0.0, -np.inf], np.float32)
    tu.assert_allclose(special.xlog1py(jnp.array([0.0, 1.0]), jnp.array([-1.0, -1.0])), [0.0, -np.inf], np.float32)
    nan = jnp.array([np.nan])
    tu.assert_allclose(special.xlogy(0.0, nan), [np.nan], np.float32)  # NaN propagates, as in SciPy
    tu.assert_allclose(special.xlog1py(0.0, nan), [np.nan], np.float32)


def _logsumexp_oracle(a, axis=None, b=None, keepdims=False):
    """log(sum(b * exp(a))) in float64 by the max-shift formula, and its sign."""
    a = np.asarray(a, np.float64)
    b = np.ones_like(a) if b is None else np.broadcast_to(np.asarray(b, np.float64), a.shape)
    m = np.max(a, axis=axis, keepdims=True) if a.size else np.zeros([1] * a.ndim)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        s = np.sum(b * np.exp(a - m), axis=axis, keepdims=True)
        out = np.log(np.abs(s)) + m
    if not keepdims:
        out, s = (np.squeeze(v, axis=axis) if axis is not None else v.reshape(()) for v in (out, s))
    return out, np.sign(s)


@pytest.mark.parametrize("shape,axis,keepdims", [((), None, False), ((5,), None, False), ((2, 3), 1, False),
                                                 ((2, 3), 0, True), ((2, 3, 4), (0, 2), False), ((0, 3), 1, False),
                                                 ((2, 3), -1, True)])
def test_logsumexp(rng, shape, axis, keepdims):
    a = rng.uniform(-5, 5, size=shape).astype(np.float32)
    out = special.logsumexp(jnp.asarray(a), axis=axis, keepdims=keepdims)
    expected, _ = _logsumexp_oracle(a, axis, keepdims=keepdims)
    assert out.dtype == np.float32
    tu.assert_allclose(out, expected, np.float32, rtol=1e-6, atol=1e-6)


def test_logsumexp_with_b_and_sign():
    a = jnp.array([[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]])
    b = jnp.array([1.0, -2.0, 0.5])
    out, sign = special.logsumexp(a, axis=1, b=b, return_sign=True)
    expected, expected_sign = _logsumexp_oracle(np.asarray(a), 1, np.asarray(b))
    tu.assert_allclose(out, expected, np.float32, rtol=1e-6)
    tu.assert_allclose(sign, expected_sign, np.float32)
    assert np.asarray(expected_sign).tolist() == [-1.0, 1.0]
    # a negative sum without return_sign is NaN, as in SciPy
    tu.assert_allclose(special.logsumexp(a, axis=1, b=b), [np.nan, expected[1]], np.float32, rtol=1e-6)


def test_logsumexp_infinities():
    a = jnp.array([[-np.inf, -np.inf], [np.inf, 0.0], [-np.inf, 1.0]])
    tu.assert_allclose(special.logsumexp(a, axis=1), [-np.inf, np.inf, 1.0], np.float32)


def test_softmax_and_log_softmax(rng):
    x = rng.uniform(-5, 5, size=(3, 4)).astype(np.float32)
    x64 = x.astype(np.float64)
    for axis in (-1, 0):
        e = np.exp(x64 - x64.max(axis, keepdims=True))
        expected = e / e.sum(axis, keepdims=True)
        tu.assert_allclose(special.softmax(jnp.asarray(x), axis=axis), expected, np.float32, rtol=1e-6, atol=1e-7)
        tu.assert_allclose(special.log_softmax(jnp.asarray(x), axis=axis), np.log(expected), np.float32,
                           rtol=1e-6, atol=1e-6)
    big = jnp.array([1000.0, 1000.0])  # no overflow thanks to the max shift
    tu.assert_allclose(special.softmax(big), [0.5, 0.5], np.float32)


def test_errors():
    with pytest.raises(TypeError, match=r"logsumexp requires ndarray or scalar arguments, but got list"):
        special.logsumexp([1.0, 2.0])
    with pytest.raises(ValueError, match=r"axis 2 is out of bounds for array of dimension 2"):
        special.logsumexp(jnp.ones((2, 2)), axis=2)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting"):
        special.xlogy(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError, match=r"softmax requires ndarray or scalar arguments"):
        special.softmax((1.0, 2.0))

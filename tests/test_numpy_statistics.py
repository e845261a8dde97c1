"""cov and corrcoef against NumPy in float64 (and float32): rowvar, y, bias, ddof, fweights and
aweights, complex and integer inputs, derivatives against finite differences, and a jitted run."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu

AW = np.array([0.5, 1.5, 1.0, 0.2, 2.0])

# (builder(rng) -> (m, y), kwargs)
CASES = [
    (lambda r: (r.standard_normal((3, 5)), None), {}),
    (lambda r: (r.standard_normal(6), None), {}),
    (lambda r: (r.standard_normal((5, 2)), None), {"rowvar": False}),
    (lambda r: (r.standard_normal((2, 4)), r.standard_normal(4)), {}),
    (lambda r: (r.standard_normal((4, 2)), r.standard_normal((4, 1))), {"rowvar": False}),
    (lambda r: (r.standard_normal((2, 5)), None), {"bias": True}),
    (lambda r: (r.standard_normal((2, 5)), None), {"ddof": 2}),
    (lambda r: (r.standard_normal((2, 5)), None), {"fweights": np.array([1, 2, 0, 3, 1], np.int32)}),
    (lambda r: (r.standard_normal((2, 5)), None), {"aweights": AW}),
    (lambda r: (r.standard_normal((2, 5)), None), {"fweights": np.array([1, 2, 1, 3, 1], np.int32),
                                                   "aweights": AW, "ddof": 1}),
    (lambda r: (r.standard_normal((2, 5)), None), {"aweights": AW, "bias": True}),
]


def _oracle_kwargs(kwargs, corr):
    return {k: v for k, v in kwargs.items() if k in ("rowvar",)} if corr else kwargs


@pytest.mark.parametrize("corr", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_numpy_float32(rng, corr, case):
    build, kwargs = CASES[case]
    m, y = build(rng)
    kwargs = _oracle_kwargs(kwargs, corr)
    m32 = m.astype(np.float32)
    y32 = None if y is None else y.astype(np.float32)
    fn = "corrcoef" if corr else "cov"
    out = getattr(jnp, fn)(m32, y32, **kwargs)
    expected = getattr(np, fn)(m32.astype(np.float64), None if y is None else y32.astype(np.float64), **kwargs)
    assert out.dtype == np.float32
    tu.assert_allclose(out, expected, np.float32, atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("corr", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_float64_and_gradients(rng, x64, corr, case):
    build, kwargs = CASES[case]
    m, y = build(rng)
    kwargs = _oracle_kwargs(kwargs, corr)
    fn = "corrcoef" if corr else "cov"
    tu.assert_allclose(getattr(jnp, fn)(m, y, **kwargs), getattr(np, fn)(m, y, **kwargs), np.float64,
                       atol=1e-12, rtol=1e-12)
    if corr and m.ndim == 1 and y is None:
        return  # the 1x1 correlation is the constant 1
    args = (m,) if y is None else (m, y)
    aw = kwargs.get("aweights")
    if aw is not None:  # the derivative in the analytic weights too
        rest = {k: v for k, v in kwargs.items() if k != "aweights"}
        tu.check_grads(lambda m_, a_: getattr(jnp, fn)(m_, None, aweights=a_, **rest), (m, aw), order=1)
    else:
        tu.check_grads(lambda *a: getattr(jnp, fn)(*a, **kwargs), args, order=1)


def test_complex_and_integer_inputs(rng, x64):
    z = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    for fn in ("cov", "corrcoef"):
        out = getattr(jnp, fn)(z)
        assert out.dtype == np.complex128
        tu.assert_allclose(out, getattr(np, fn)(z), np.complex128, atol=1e-12, rtol=1e-12)
    ints = np.array([[1, 2, 4], [3, 0, 1]], np.int32)
    out = jnp.cov(ints)
    assert out.dtype == np.float64
    tu.assert_allclose(out, np.cov(ints), np.float64, atol=1e-12, rtol=1e-12)


def test_under_jit():
    f = core.jit(lambda m, a: (jnp.cov(m, aweights=a), jnp.corrcoef(m)))
    m = np.array([[0.0, 1.0, 3.0, 2.0], [1.0, -1.0, 0.5, 2.0], [2.0, 0.0, 1.0, 1.0]], np.float32)
    a = np.array([1.0, 0.5, 2.0, 1.0], np.float32)
    c, r = f(m, a)
    tu.assert_allclose(c, np.cov(m.astype(np.float64), aweights=a), np.float32, atol=1e-5, rtol=1e-5)
    tu.assert_allclose(r, np.corrcoef(m.astype(np.float64)), np.float32, atol=1e-5, rtol=1e-5)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"more than 2 dimensions \(shape \(2, 2, 2\)\)"):
        jnp.cov(jnp.ones((2, 2, 2)))
    with pytest.raises(ValueError, match=r"aweights must be 1-D with one weight per observation \(3\)"):
        jnp.cov(jnp.ones((2, 3)), aweights=jnp.ones(2))
    with pytest.raises(TypeError, match="fweights must be integers"):
        jnp.cov(jnp.ones((2, 3)), fweights=jnp.ones(3))

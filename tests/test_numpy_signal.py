"""convolve and correlate against NumPy in float64 (and float32, int32, complex64) for every mode and
both length orders, their derivatives against finite differences, and a jitted run."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu

LENGTHS = [(5, 3), (3, 5), (4, 4), (1, 3), (6, 1), (5, 2)]
MODES = ["full", "same", "valid"]


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,m", LENGTHS)
def test_matches_numpy_float32(rng, name, mode, n, m):
    a, v = rng.standard_normal(n).astype(np.float32), rng.standard_normal(m).astype(np.float32)
    out = getattr(jnp, name)(a, v, mode=mode)
    assert out.dtype == np.float32
    tu.assert_allclose(out, getattr(np, name)(a.astype(np.float64), v.astype(np.float64), mode=mode), np.float32,
                       atol=1e-5, rtol=1e-5)


CASES = tu.product(["convolve", "correlate"], MODES, [(5, 3), (2, 4)])


@pytest.mark.parametrize("name,mode,nm", CASES)
def test_float64_complex_and_gradients(rng, x64, name, mode, nm):
    n, m = nm
    a, v = rng.standard_normal(n), rng.standard_normal(m)
    tu.assert_allclose(getattr(jnp, name)(a, v, mode=mode), getattr(np, name)(a, v, mode=mode), np.float64,
                       atol=1e-13, rtol=1e-13)
    az = a + 1j * rng.standard_normal(n)
    vz = v + 1j * rng.standard_normal(m)
    out = getattr(jnp, name)(az, vz, mode=mode)
    assert out.dtype == np.complex128
    tu.assert_allclose(out, getattr(np, name)(az, vz, mode=mode), np.complex128, atol=1e-13, rtol=1e-13)
    tu.check_grads(lambda x, y: getattr(jnp, name)(x, y, mode=mode), (a, v), order=2)


def test_integer_inputs_stay_integer():
    a, v = np.array([1, 2, 3, 4], np.int32), np.array([2, -1], np.int32)
    for name, default in (("convolve", "full"), ("correlate", "valid")):
        out = getattr(jnp, name)(a, v)
        assert out.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(out), getattr(np, name)(a, v, mode=default))


def test_under_jit():
    f = core.jit(lambda a, v: (jnp.convolve(a, v, mode="same"), jnp.correlate(a, v)))
    a, v = np.array([1.0, -2.0, 3.0, 0.5], np.float32), np.array([0.5, 1.0, 2.0], np.float32)
    c, r = f(a, v)
    tu.assert_allclose(c, np.convolve(a, v, mode="same"), np.float32, atol=1e-6, rtol=1e-6)
    tu.assert_allclose(r, np.correlate(a, v), np.float32, atol=1e-6, rtol=1e-6)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match=r"only supports 1-dimensional inputs, got shapes \(2, 2\)"):
        jnp.convolve(jnp.ones((2, 2)), jnp.ones(2))
    with pytest.raises(ValueError, match="cannot be empty"):
        jnp.correlate(jnp.ones(0), jnp.ones(2))
    with pytest.raises(ValueError, match="mode must be one of"):
        jnp.convolve(jnp.ones(3), jnp.ones(2), mode="circular")

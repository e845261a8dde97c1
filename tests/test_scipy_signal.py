"""core.scipy.signal against scipy.signal (float64 and complex128 oracles), derivatives against
finite differences, jit, and a program written against jax.scipy.signal."""
import re

import numpy as np
import pytest
import scipy.signal as ss

import core
import core.numpy as jnp
from core import test_util as tu
from core.scipy import signal as cs
from jax_port import port  # tests/ is on sys.path

pytestmark = pytest.mark.usefixtures("x64")

MODES = ["full", "same", "valid"]
# (in1 shape, in2 shape): either order of sizes, odd and even kernels, equal shapes
SHAPES_1D = [((7,), (3,)), ((3,), (7,)), ((6,), (4,)), ((5,), (5,))]
SHAPES_2D = [((5, 6), (3, 2)), ((3, 2), (5, 6)), ((4, 4), (4, 4)), ((6, 4), (2, 4))]


def _rand(rng, shape, complex_):
    x = rng.standard_normal(shape)
    return x + 1j * rng.standard_normal(shape) if complex_ else x


def close(actual, expected, tol=1e-10):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", SHAPES_1D)
def test_1d_matches_scipy(rng, name, mode, shapes):
    a, b = (_rand(rng, s, True) for s in shapes)
    close(getattr(cs, name)(a, b, mode=mode), getattr(ss, name)(a, b, mode=mode, method="direct"))


@pytest.mark.parametrize("name", ["convolve", "correlate", "convolve2d", "correlate2d"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", SHAPES_2D)
def test_2d_matches_scipy(rng, name, mode, shapes):
    a, b = (_rand(rng, s, name.startswith("correlate")) for s in shapes)
    close(getattr(cs, name)(a, b, mode=mode), getattr(ss, name)(a, b, mode=mode))


@pytest.mark.parametrize("mode", MODES)
def test_3d_matches_scipy(rng, mode):
    a, b = rng.standard_normal((4, 3, 5)), rng.standard_normal((2, 3, 2))
    close(cs.convolve(a, b, mode=mode), ss.convolve(a, b, mode=mode, method="direct"))
    close(cs.correlate(b, a, mode=mode), ss.correlate(b, a, mode=mode, method="direct"))


def test_methods_and_dtypes(rng):
    a, b = rng.integers(-5, 5, 6), rng.integers(-5, 5, 3)
    for method in ("auto", "direct", "fft"):
        out = cs.convolve(a, b, method=method)
        assert out.dtype == np.int64  # integers stay integer, as in JAX
        np.testing.assert_array_equal(np.asarray(out), ss.convolve(a, b, method="direct"))
    out = cs.correlate2d(np.ones((2, 2), np.float32), np.ones((1, 1), np.int32))
    assert out.dtype == np.float32
    close(cs.convolve(np.float64(2.0), np.float64(3.0)), 6.0)  # 0-d inputs, as SciPy


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match=re.escape("convolve: `mode` must be one of ('full', 'same', 'valid'); "
                                                   "got 'circular'")):
        cs.convolve(np.ones(3), np.ones(2), mode="circular")
    with pytest.raises(ValueError, match=re.escape("correlate: `method` must be one of ('auto', 'direct', 'fft')")):
        cs.correlate(np.ones(3), np.ones(2), method="overlap-add")
    with pytest.raises(ValueError, match=re.escape("convolve: in1 and in2 must have the same number of dimensions; "
                                                   "got float64[3] and float64[2, 2]")):
        cs.convolve(np.ones(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match=re.escape("one input must be at least as large as the other in every "
                                                   "dimension; got float64[3, 1] and float64[1, 3]")):
        cs.convolve(np.ones((3, 1)), np.ones((1, 3)))
    with pytest.raises(ValueError, match=re.escape("inputs cannot be empty; got float64[0] and float64[2]")):
        cs.correlate(np.ones(0), np.ones(2))
    with pytest.raises(NotImplementedError, match="only boundary='fill' with fillvalue=0"):
        cs.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap")
    with pytest.raises(ValueError, match=re.escape("correlate2d: inputs must be 2-dimensional; got shapes (3,)")):
        cs.correlate2d(np.ones(3), np.ones(2))


@pytest.mark.parametrize("name,shapes,mode", [("convolve", ((5,), (3,)), "same"),
                                              ("correlate", ((2, 3), (3, 4)), "full"),
                                              ("convolve2d", ((4, 3), (2, 2)), "valid"),
                                              ("correlate2d", ((3, 3), (2, 3)), "same")])
def test_gradients_match_finite_differences(rng, name, shapes, mode):
    fn = getattr(cs, name)
    args = tuple(rng.standard_normal(s) for s in shapes)
    tu.check_grads(core.jit(lambda a, b: fn(a, b, mode=mode)), args, order=2, atol=1e-7, rtol=1e-7)


@pytest.mark.parametrize("name", ["convolve", "correlate", "convolve2d", "correlate2d"])
def test_under_jit_equals_scipy(rng, name):
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((3, 2))
    for mode in MODES:
        close(core.jit(lambda a, b: getattr(cs, name)(a, b, mode=mode))(a, b), getattr(ss, name)(a, b, mode=mode))


PROGRAM = '''
import jax
import jax.numpy as jnp
import jax.scipy.signal as jss


@jax.jit
def features(image, signal):
    sobel = jnp.array([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])
    gx = jss.convolve2d(image, sobel, mode="same")
    gy = jss.correlate2d(image, sobel.T, mode="valid")
    blur = jss.convolve(image[None], jnp.ones((1, 2, 2)) / 4, mode="valid")[0]
    smooth = jss.convolve(signal, jnp.ones(5) / 5, mode="same")
    lags = jss.correlate(signal, signal[:4], mode="full")
    return gx, gy, blur, smooth, lags


energy_grad = jax.grad(lambda image: jnp.sum(jss.convolve2d(image, jnp.array([[1.0, -1.0]]), mode="valid") ** 2))
'''


def test_jax_style_program_matches_scipy(rng):
    namespace = {}
    exec(compile(port(PROGRAM), "<jax-style program>", "exec"), namespace)
    image, signal = rng.standard_normal((6, 7)), rng.standard_normal(12)
    gx, gy, blur, smooth, lags = namespace["features"](image, signal)
    sobel = np.array([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]])
    close(gx, ss.convolve2d(image, sobel, mode="same"))
    close(gy, ss.correlate2d(image, sobel.T, mode="valid"))
    close(blur, ss.convolve(image[None], np.ones((1, 2, 2)) / 4, mode="valid")[0])
    close(smooth, ss.convolve(signal, np.ones(5) / 5, mode="same"))
    close(lags, ss.correlate(signal, signal[:4], mode="full"))
    # d/dx sum((x[:, 1:] - x[:, :-1])^2), by hand: 2 (d_j - d_{j+1}) with d the horizontal differences
    d = image[:, 1:] - image[:, :-1]  # convolve2d with [[1, -1]] 'valid': x[:, j+1] - x[:, j]
    expected = np.zeros_like(image)
    expected[:, 1:] += 2 * d
    expected[:, :-1] -= 2 * d
    close(namespace["energy_grad"](image), expected)

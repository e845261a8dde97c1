"""Issue 16 acceptance for item 1: a small program written against `jax` / `jax.numpy`, rewritten
only in its imports, runs on core.numpy's new functions (signal smoothing, a polynomial fit,
derivatives, integrals, statistics, comparisons, index tricks) and gives NumPy's values."""

import numpy as np

from jax_port import port  # tests/ is on sys.path

PROGRAM = '''
import jax
import jax.numpy as jnp


@jax.jit
def analyse(t, y):
    window = jnp.hanning(7)
    smooth = jnp.convolve(y, window / window.sum(), mode="same")
    coeffs = jnp.polyfit(t, smooth, 2)
    fitted = jnp.polyval(coeffs, t)
    slope = jnp.gradient(fitted, t)
    area = jnp.trapezoid(smooth, t)
    corr = jnp.corrcoef(jnp.r_["0,2", smooth, y])[0, 1]
    resampled = jnp.interp(jnp.linspace(0.0, 1.0, 5), t, smooth)
    steps = jnp.diff(jnp.digitize(y, jnp.array([-0.5, 0.0, 0.5])))
    close = jnp.allclose(fitted, smooth, atol=0.5)
    return coeffs, slope, area, corr, resampled, steps, close


grad_area = jax.grad(lambda y, t: jnp.trapezoid(jnp.convolve(y, jnp.ones(3) / 3, mode="same"), t))
'''


def test_jax_style_program_matches_numpy(x64):
    namespace = {}
    exec(compile(port(PROGRAM), "<jax-style program>", "exec"), namespace)
    rng = np.random.default_rng(16)
    t = np.sort(rng.uniform(0.0, 1.0, 24))
    t[0], t[-1] = 0.0, 1.0
    y = np.sin(3 * t) + 0.2 * rng.standard_normal(24)
    coeffs, slope, area, corr, resampled, steps, close = namespace["analyse"](t, y)

    window = np.hanning(7)
    smooth = np.convolve(y, window / window.sum(), mode="same")
    e_coeffs = np.polyfit(t, smooth, 2)
    fitted = np.polyval(e_coeffs, t)
    np.testing.assert_allclose(np.asarray(coeffs), e_coeffs, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(np.asarray(slope), np.gradient(fitted, t), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(float(area), np.trapezoid(smooth, t), rtol=1e-12)
    np.testing.assert_allclose(float(corr), np.corrcoef(smooth, y)[0, 1], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(resampled), np.interp(np.linspace(0, 1, 5), t, smooth), rtol=1e-12)
    np.testing.assert_array_equal(np.asarray(steps), np.diff(np.digitize(y, [-0.5, 0.0, 0.5])))
    assert bool(close) == bool(np.allclose(fitted, smooth, atol=0.5))

    # d/dy of the integral of a 3-point moving average: the transpose of that linear map applied to 1s
    g = np.asarray(namespace["grad_area"](y, t))
    weights = np.zeros(24)
    dt = np.diff(t)
    weights[:-1] += dt / 2
    weights[1:] += dt / 2
    expected = np.convolve(weights, np.ones(3) / 3, mode="same")  # the kernel is symmetric
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-14)

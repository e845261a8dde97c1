"""nn.initializers: shapes and dtypes, sample statistics of large draws against the target mean and
standard deviation (fans computed by hand here), orthogonality, determinism and errors."""
import math

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import random
from core.nn import initializers as I  # the implementation (nn.initializers re-exports it)

KEY = random.PRNGKey(0)
N = (128, 512)  # 65536 samples: the sample std is within about 0.3% of the true one (1 sigma)


def _draw(init, shape=N, key=KEY, dtype=None):
    out = init(key, shape) if dtype is None else init(key, shape, dtype)
    return np.asarray(out).astype(np.float64)


def _assert_moments(x, mean, std, what=""):
    n = x.size
    # 5 standard errors: the mean's is std / sqrt(n), the std's about std / sqrt(2 n)
    assert abs(x.mean() - mean) < 5 * std / math.sqrt(n) + 1e-12, f"{what}: mean {x.mean()} vs {mean}"
    assert abs(x.std() - std) < 5 * std / math.sqrt(2 * n), f"{what}: std {x.std()} vs {std}"


ALL = {
    "zeros": I.zeros, "ones": I.ones, "constant": I.constant(-7.0), "normal": I.normal(),
    "uniform": I.uniform(), "truncated_normal": I.truncated_normal(), "glorot_normal": I.glorot_normal(),
    "glorot_uniform": I.glorot_uniform(), "he_normal": I.he_normal(), "he_uniform": I.he_uniform(),
    "lecun_normal": I.lecun_normal(), "lecun_uniform": I.lecun_uniform(), "orthogonal": I.orthogonal(),
    "variance_scaling": I.variance_scaling(0.5, "fan_out", "normal"),
}


@pytest.mark.parametrize("name", sorted(ALL))
def test_shapes_and_dtypes(name):
    init = ALL[name]
    out = init(KEY, (3, 5))
    assert out.shape == (3, 5) and out.dtype == np.float32
    out = init(KEY, (2, 2, 3, 4), jnp.bfloat16)
    assert out.shape == (2, 2, 3, 4) and out.dtype == jnp.bfloat16
    assert np.all(np.isfinite(np.asarray(out).astype(np.float32)))


def test_default_dtype_is_float64_under_x64(x64):
    assert I.glorot_normal()(KEY, (3, 4)).dtype == np.float64
    assert I.zeros(None, (2,)).dtype == np.float64
    assert I.normal(dtype=jnp.float16)(KEY, (2,)).dtype == np.float16  # the constructor's default


def test_constants():
    np.testing.assert_array_equal(np.asarray(I.zeros(KEY, (2, 3))), np.zeros((2, 3)))
    np.testing.assert_array_equal(np.asarray(I.ones(None, (4,), jnp.float16)), np.ones(4))
    np.testing.assert_array_equal(np.asarray(I.constant(-7)(KEY, (2,))), [-7.0, -7.0])


def test_normal_uniform_truncated_statistics():
    _assert_moments(_draw(I.normal(0.5)), 0.0, 0.5, "normal")
    u = _draw(I.uniform(2.0))
    assert u.min() >= 0.0 and u.max() < 2.0  # JAX's uniform initializer is on [0, scale)
    _assert_moments(u, 1.0, 2.0 / math.sqrt(12), "uniform")
    t = _draw(I.truncated_normal(0.5))
    assert np.abs(t).max() < 1.0  # cut at two (untruncated) standard deviations
    # no variance correction here: the std is that of N(0, 1) on (-2, 2), 0.8796, times stddev
    _assert_moments(t, 0.0, 0.87962566103423978 * 0.5, "truncated_normal")


def _truncnorm_std(a):
    # the standard deviation of N(0, 1) restricted to (-a, a), from its density: independent of
    # the 0.8796... constant in the module
    phi = math.exp(-a * a / 2) / math.sqrt(2 * math.pi)
    mass = math.erf(a / math.sqrt(2))
    return math.sqrt(1 - 2 * a * phi / mass)


def test_truncation_constant():
    assert abs(_truncnorm_std(2.0) - I._TRUNCATED_NORMAL_STDDEV) < 1e-12


@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg"])
def test_variance_scaling_conv_kernel(mode, distribution):
    # an HWIO conv kernel (3, 3, 8, 16): receptive field 9, fan_in = 9 * 8 = 72, fan_out = 9 * 16 = 144
    shape, scale = (3, 3, 8, 16), 2.0
    n = {"fan_in": 72.0, "fan_out": 144.0, "fan_avg": 108.0}[mode]
    std = math.sqrt(scale / n)
    # a bigger draw: 16 draws of the kernel, each the statistics of the same distribution
    keys = random.split(KEY, 16)
    init = I.variance_scaling(scale, mode, distribution)
    x = np.stack([_draw(init, shape, keys[i]) for i in range(16)])
    _assert_moments(x, 0.0, std, f"{mode} {distribution}")
    bound = {"truncated_normal": 2 * std / 0.87962566103423978, "normal": np.inf,
             "uniform": math.sqrt(3) * std}[distribution]
    assert np.abs(x).max() <= bound * (1 + 1e-6)


def test_named_initializers_use_the_documented_variance():
    # Dense (fan_in=128, fan_out=512); a wide shape so fan_in != fan_out shows
    shape = N
    cases = {"glorot_normal": 2 / (128 + 512), "glorot_uniform": 2 / (128 + 512), "he_normal": 2 / 128,
             "he_uniform": 2 / 128, "lecun_normal": 1 / 128, "lecun_uniform": 1 / 128}
    for name, variance in cases.items():
        _assert_moments(_draw(getattr(I, name)(), shape), 0.0, math.sqrt(variance), name)
    assert I.xavier_normal is I.glorot_normal and I.xavier_uniform is I.glorot_uniform
    assert I.kaiming_normal is I.he_normal and I.kaiming_uniform is I.he_uniform


def test_compute_fans_axes():
    assert I._compute_fans((5, 7)) == (5, 7)
    assert I._compute_fans((3, 3, 8, 16)) == (72, 144)
    # an OIHW kernel (16, 8, 3, 3) names its axes
    assert I._compute_fans((16, 8, 3, 3), in_axis=1, out_axis=0) == (72, 144)
    assert I._compute_fans((4, 3, 5, 6), in_axis=(1, 2), out_axis=-1, batch_axis=0) == (15, 6)
    std = _draw(I.he_normal(in_axis=1, out_axis=0), (64, 32, 3, 3)).std()
    assert abs(std - math.sqrt(2 / (32 * 9))) < 0.02 * std


def _assert_orthonormal_columns(m, scale=1.0):
    np.testing.assert_allclose(m.T @ m, scale ** 2 * np.eye(m.shape[1]), atol=2e-5)


@pytest.mark.parametrize("shape,column_axis", [((6, 6), -1), ((8, 3), -1), ((3, 8), -1),
                                               ((3, 3, 4, 8), -1), ((5, 2, 3), 0)])
def test_orthogonal(shape, column_axis):
    q = _draw(I.orthogonal(scale=1.0, column_axis=column_axis), shape)
    assert q.shape == shape
    m = np.moveaxis(q, column_axis, -1).reshape(-1, shape[column_axis])  # columns on the last axis
    if m.shape[0] >= m.shape[1]:
        _assert_orthonormal_columns(m)  # tall: Q^T Q = I
    else:
        _assert_orthonormal_columns(m.T)  # wide: the rows are orthonormal, Q Q^T = I


def test_orthogonal_scale_and_determinism():
    a = _draw(I.orthogonal(scale=2.0), (5, 5))
    _assert_orthonormal_columns(a, scale=2.0)
    np.testing.assert_array_equal(a, _draw(I.orthogonal(scale=2.0), (5, 5)))


@pytest.mark.parametrize("name", ["normal", "uniform", "glorot_uniform", "he_normal", "orthogonal"])
def test_same_key_same_values_other_key_other_values(name):
    init = ALL[name]
    a, b = _draw(init, (3, 5)), _draw(init, (3, 5))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, _draw(init, (3, 5), key=random.PRNGKey(1)))


def test_initializers_under_jit():
    init = I.glorot_uniform()
    jitted = core.jit(lambda k: init(k, (3, 5)))
    np.testing.assert_allclose(np.asarray(jitted(KEY)), np.asarray(init(KEY, (3, 5))), rtol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match=r"at least 2 dimensions .* got shape \(5,\)"):
        I.glorot_normal()(KEY, (5,))
    with pytest.raises(ValueError, match=r"invalid mode for variance scaling initializer: 'fan_sum'"):
        I.variance_scaling(1.0, "fan_sum", "normal")
    with pytest.raises(ValueError, match=r"invalid distribution for variance scaling initializer: 'cauchy'"):
        I.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match=r"in_axis 3 is out of bounds for a weight shape \(2, 3\)"):
        I.variance_scaling(1.0, "fan_in", "normal", in_axis=3)(KEY, (2, 3))
    with pytest.raises(ValueError, match=r"orthogonal initializer requires at least a 2D shape, got shape \(4,\)"):
        I.orthogonal()(KEY, (4,))
    with pytest.raises(TypeError, match=r"real floating-point arrays, got dtype int32"):
        I.normal()(KEY, (2, 2), jnp.int32)

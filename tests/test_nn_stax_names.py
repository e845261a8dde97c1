"""nn/stax_names.py and stax's public list: every name `jax.example_libraries.stax` exports (recorded
below from jax 0.10.2) exists in `nn`; its helper aliases are the initializers and functions they
name, checked against hand-computed values; `elementwise` and `shape_dependent` behave as stax's.
Also the issue 16 item 5 program for stax: a stax network written with stax's names, rewritten only
in its imports, against a NumPy float64 forward pass."""
import math

import numpy as np

import core.numpy as jnp
import nn
from core import random
from jax_port import port  # tests/ is on sys.path

# sorted(n for n in dir(jax.example_libraries.stax) if not n.startswith("_")), minus the modules and
# typing names it imports (functools, jnp, lax, math, random)
STAX_PUBLIC = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout", "Elu", "Exp",
    "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv", "GeneralConvTranspose", "Identity",
    "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh",
    "elementwise", "elu", "gelu", "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax",
    "normal", "ones", "parallel", "randn", "relu", "selu", "serial", "shape_dependent", "sigmoid", "softmax",
    "softplus", "standardize", "zeros"]


def test_nn_has_every_stax_public_name():
    assert [n for n in STAX_PUBLIC if not hasattr(nn, n)] == []


def test_aliases_are_the_named_helpers():
    assert nn.glorot is nn.glorot_normal is nn.initializers.glorot_normal
    assert nn.randn is nn.normal is nn.initializers.normal
    assert nn.logsoftmax is nn.log_softmax
    assert nn.ones is nn.initializers.ones and nn.zeros is nn.initializers.zeros


def test_ones_and_zeros_are_initializers_taking_key_shape_dtype():
    key = random.PRNGKey(3)
    np.testing.assert_array_equal(np.asarray(nn.zeros(key, (2, 3))), np.zeros((2, 3)))
    o = nn.ones(key, (4,), jnp.float16)
    assert o.dtype == jnp.float16 and o.shape == (4,)
    np.testing.assert_array_equal(np.asarray(o), np.ones(4))


def test_logsoftmax_hand_values():
    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])
    expected = x - np.log(np.exp(x).sum(-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(nn.logsoftmax(jnp.asarray(x, jnp.float32))), expected, rtol=1e-6)
    # row of zeros: every entry is -log(3)
    np.testing.assert_allclose(np.asarray(nn.logsoftmax(jnp.zeros(3))), [-math.log(3)] * 3, rtol=1e-6)


def test_randn_and_glorot_draws():
    key = random.PRNGKey(0)
    # randn(stddev) scales a standard normal draw of the same key
    np.testing.assert_allclose(np.asarray(nn.randn(0.5)(key, (5,))), 0.5 * np.asarray(random.normal(key, (5,))),
                               rtol=1e-6)
    assert nn.randn()(key, (3,)).dtype == jnp.float32
    # glorot on (200, 300): a normal truncated at 2 sigma, rescaled so the variance is 2 / (200 + 300)
    w = np.asarray(nn.glorot()(key, (200, 300)), np.float64)
    std = math.sqrt(2.0 / 500)
    assert abs(w.mean()) < 3 * std / math.sqrt(w.size)
    assert abs(w.std() / std - 1) < 0.01
    assert np.abs(w).max() <= 2 * std / 0.87962566103423978 * (1 + 1e-6)
    # in_axis / out_axis pick the fans: (3, 200, 300) with in_axis=-1, out_axis=-2 has fan_in 300, fan_out 200
    # and receptive field 3, so the variance is 2 / (3 * 500)
    w2 = np.asarray(nn.glorot(in_axis=-1, out_axis=-2)(key, (3, 200, 300)), np.float64)
    assert abs(w2.std() / math.sqrt(2.0 / 1500) - 1) < 0.01


def test_elementwise_and_shape_dependent_as_stax():
    init_fun, apply_fun = nn.elementwise(nn.leaky_relu, negative_slope=0.2)
    out_shape, params = init_fun(random.PRNGKey(0), (-1, 3))
    assert out_shape == (-1, 3) and params == ()
    np.testing.assert_allclose(np.asarray(apply_fun(params, jnp.array([-2.0, 0.0, 1.5]))), [-0.4, 0.0, 1.5])
    # shape_dependent builds the layer from the input shape: a Dense keeping the feature count
    init_fun, apply_fun = nn.shape_dependent(lambda s: nn.Dense(s[-1], W_init=nn.ones, b_init=nn.zeros))
    out_shape, (W, b) = init_fun(random.PRNGKey(0), (-1, 4))
    assert out_shape == (-1, 4) and W.shape == (4, 4)
    np.testing.assert_array_equal(np.asarray(apply_fun((W, b), jnp.arange(8.0).reshape(2, 4))),
                                  [[6.0] * 4, [22.0] * 4])


PROGRAM = '''
import jax
import jax.numpy as jnp
from jax import random
from jax.example_libraries import stax

init_fun, predict = stax.serial(
    stax.Dense(8, W_init=stax.glorot(), b_init=stax.randn(0.1)),
    stax.elementwise(stax.leaky_relu, negative_slope=0.1),
    stax.Dense(3, W_init=stax.glorot(), b_init=stax.zeros),
    stax.shape_dependent(lambda shape: stax.Identity),
    stax.elementwise(stax.logsoftmax, axis=-1),
)


def make(seed, in_dim):
    out_shape, params = init_fun(random.PRNGKey(seed), (-1, in_dim))
    return out_shape, params, jax.jit(predict)
'''


def test_stax_style_program_matches_numpy():
    namespace = {}
    exec(compile(port(PROGRAM), "<stax-style program>", "exec"), namespace)
    out_shape, params, predict = namespace["make"](0, 5)
    assert out_shape == (-1, 3)
    (W1, b1), (), (W2, b2), (), () = params
    np.testing.assert_array_equal(np.asarray(b2), np.zeros(3))
    x = np.linspace(-1.0, 1.0, 10).reshape(2, 5)
    h = x @ np.asarray(W1, np.float64) + np.asarray(b1, np.float64)
    h = np.where(h >= 0, h, 0.1 * h)
    z = h @ np.asarray(W2, np.float64) + np.asarray(b2, np.float64)
    expected = z - np.log(np.exp(z).sum(-1, keepdims=True))
    np.testing.assert_allclose(np.asarray(predict(params, jnp.asarray(x, jnp.float32))), expected, rtol=1e-5,
                               atol=1e-6)

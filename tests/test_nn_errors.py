"""Layers and optimizers name themselves in shape errors (issue 17, item 8): the layer and its
position in the combinator, the shape it expected and the one it got; an int given as an input
shape; the tree path of a gradient leaf whose shape is not its parameter's."""
import re

import numpy as np
import pytest

import core
import core.numpy as jnp
import nn
import optim
from core import random

KEY = random.PRNGKey(0)


def _params(layer, input_shape):
    return layer.init_fun(KEY, input_shape)[1]


# ----- the position of the failing layer -----------------------------------------------------------------

def test_dense_in_serial_names_its_position_and_both_shapes():
    net = nn.serial(nn.Relu, nn.Dense(4), nn.Relu)
    params = _params(net, (-1, 3))
    with pytest.raises(ValueError) as info:
        net.apply_fun(params, jnp.ones((2, 5)))
    message = str(info.value)
    assert message.startswith("In layer 2 (Dense(4)) of serial: Dense(4) expected inputs of shape (..., 3)"), message
    assert "got inputs of type float32[2,5]" in message


def test_the_position_is_given_under_jit_and_in_nested_combinators():
    net = nn.serial(nn.Dense(3), nn.serial(nn.Relu, nn.Dense(4)), nn.Relu)
    params = _params(net, (-1, 2))
    params[1][1] = _params(nn.Dense(4), (-1, 5))   # made for 5 features; it gets 3
    for apply in (net.apply_fun, core.jit(net.apply_fun)):
        with pytest.raises(ValueError, match=r"^In layer 2 \(Dense\(4\)\) of serial, inside layer 2 \(serial\) of "
                                             r"serial: Dense\(4\) expected inputs of shape \(\.\.\., 5\).*got inputs "
                                             r"of type float32\[2,3\]"):
            apply(params, jnp.ones((2, 2)))


def test_the_position_is_given_for_stateful_serial_and_parallel():
    net = nn.serial(nn.Dense(3), nn.BatchNorm(axis=(0,)), nn.Dense(2))
    params = _params(net, (-1, 4))
    state = net.init_state((-1, 4))
    with pytest.raises(ValueError, match=r"^In layer 1 \(Dense\(3\)\) of serial: Dense\(3\) expected inputs of shape "
                                         r"\(\.\.\., 4\)"):
        net.apply_fun(params, jnp.ones((2, 6)), state=state)

    par = nn.parallel(nn.Dense(2), nn.Dense(3))
    params = _params(par, [(-1, 4), (-1, 5)])
    with pytest.raises(ValueError, match=r"^In layer 2 \(Dense\(3\)\) of parallel: Dense\(3\) expected inputs of "
                                         r"shape \(\.\.\., 5\).*float32\[2,4\]"):
        par.apply_fun(params, [jnp.ones((2, 4)), jnp.ones((2, 4))])


def test_fan_in_layers_name_the_mismatched_input():
    net = nn.serial(nn.FanOut(2), nn.parallel(nn.Dense(3), nn.Dense(4)), nn.FanInSum)
    with pytest.raises(ValueError, match=r"^In layer 3 \(FanInSum\) of serial: FanInSum: all inputs must have the "
                                         r"same shape, but input 2 is \(-1, 4\) and input 1 is \(-1, 3\)"):
        net.init_fun(KEY, (-1, 2))
    with pytest.raises(ValueError, match=r"FanInSum: .*input 2 is float32\[2,4\] and input 1 is float32\[2,3\]"):
        nn.FanInSum.apply_fun((), [jnp.ones((2, 3)), jnp.ones((2, 4))])
    with pytest.raises(ValueError, match=r"FanInConcat\(\): all inputs must have the same shape except along axis "
                                         r"-1, but input 2 is float32\[3,3\] and input 1 is float32\[2,3\]"):
        nn.FanInConcat().apply_fun((), [jnp.ones((2, 3)), jnp.ones((3, 3))])
    np.testing.assert_array_equal(np.asarray(nn.FanInConcat().apply_fun((), [jnp.ones((2, 3)), jnp.ones((2, 1))])),
                                  np.ones((2, 4)))


def test_serial_with_params_of_the_wrong_length():
    net = nn.serial(nn.Dense(3), nn.Relu)
    with pytest.raises(ValueError, match=r"serial of 2 layers needs params with one entry per layer .*got 1 entries"):
        net.apply_fun([_params(nn.Dense(3), (-1, 2))], jnp.ones((1, 2)))


# ----- an int where a shape belongs ----------------------------------------------------------------------

@pytest.mark.parametrize("layer", [nn.Dense(3), nn.serial(nn.Dense(3), nn.Relu), nn.Relu, nn.LayerNorm(),
                                   nn.BatchNorm(axis=(0,))], ids=lambda lyr: lyr.name)
def test_an_int_input_shape_is_explained(layer):
    with pytest.raises(TypeError, match=r"input_shape must be a shape, a tuple of ints .*got the int 5\. "
                                        r"Pass \(5,\) .* or \(-1, 5\)"):
        layer.init_fun(KEY, 5)
    if nn.is_stateful(layer):
        with pytest.raises(TypeError, match=r"init_state's input_shape must be a shape.*\(-1, 5\)"):
            layer.init_state(5)
    assert layer.init_fun(KEY, (-1, 5))[0][-1] in (3, 5)


# ----- each layer checks its inputs against its params ----------------------------------------------------

@pytest.mark.parametrize("layer, made_for, given, pattern", [
    (nn.Conv(4, (3, 3)), (-1, 8, 8, 3), (1, 8, 8, 2),
     r"^Conv\(4, \(3, 3\)\) expected inputs of shape \(N, H, W, 3\) \(3 input channels.*float32\[1,8,8,2\]"),
    (nn.Conv(4, (3, 3)), (-1, 8, 8, 3), (8, 8, 3),
     r"^Conv\(4, \(3, 3\)\) expected inputs of rank 4 \(layout NHWC\), got inputs of type float32\[8,8,3\]"),
    (nn.GeneralConv(("NCHW", "OIHW", "NCHW"), 2, (3, 3)), (-1, 3, 6, 6), (1, 4, 6, 6),
     r"expected inputs of shape \(N, 3, H, W\)"),
    (nn.ConvTranspose(2, (2, 2)), (-1, 4, 4, 3), (1, 4, 4, 5), r"^ConvTranspose.*\(N, H, W, 3\).*float32\[1,4,4,5\]"),
    (nn.BatchNorm(), (-1, 4, 4, 3), (2, 4, 4, 5),
     r"^BatchNorm expected inputs whose feature axes .* have shape \(3,\).*float32\[2,4,4,5\], where they have shape "
     r"\(5,\)"),
    (nn.LayerNorm(), (-1, 4), (2, 5), r"^LayerNorm expected inputs whose normalized axes .* shape \(4,\).*\(5,\)"),
    (nn.GroupNorm(2), (-1, 4), (2, 6), r"^GroupNorm\(2\) expected inputs whose channels .* shape \(4,\).*\(6,\)"),
    (nn.MultiHeadAttention(2), (-1, 4, 8), (2, 4, 6),
     r"^MultiHeadAttention\(2\) \(queries\) expected inputs of shape \(batch, seq, 8\).*float32\[2,4,6\]"),
    (nn.LSTM(3), (-1, 4, 8), (2, 4, 6), r"^LSTM\(3\) expected inputs of shape \(batch, time, 8\).*float32\[2,4,6\]"),
    (nn.GRU(3), (-1, 4, 8), (2, 4, 6), r"^GRU\(3\) expected inputs of shape \(batch, time, 8\)"),
])
def test_layers_check_their_inputs_at_apply_time(layer, made_for, given, pattern):
    params = _params(layer, made_for)
    with pytest.raises(ValueError, match=pattern):
        layer.apply_fun(params, jnp.ones(given))
    good = tuple(2 if d == -1 else d for d in made_for)
    assert layer.apply_fun(params, jnp.ones(good)).shape[0] == 2   # the check lets matching inputs through


def test_attention_checks_keys_and_values_separately():
    mha = nn.MultiHeadAttention(2)
    params = _params(mha, [(-1, 4, 8), (-1, 5, 6)])
    with pytest.raises(ValueError, match=r"\(keys and values\) expected inputs of shape \(batch, seq, 6\).*"
                                         r"float32\[2,5,8\]"):
        mha.apply_fun(params, (jnp.ones((2, 4, 8)), jnp.ones((2, 5, 8))))
    assert mha.apply_fun(params, (jnp.ones((2, 4, 8)), jnp.ones((2, 5, 6)))).shape == (2, 4, 8)


# ----- optimizers name the parameter whose gradient has the wrong shape ---------------------------------

@pytest.mark.parametrize("make", [lambda: optim.sgd(0.1), lambda: optim.adam(1e-3),
                                  lambda: optim.accumulate_gradients(optim.sgd(0.1), 2),
                                  lambda: optim.skip_nonfinite(optim.momentum(0.1, 0.9))])
def test_a_gradient_of_the_wrong_shape_names_its_path_and_both_shapes(make):
    init, update, get_params = make()
    state = init({"w": jnp.ones((3, 2)), "b": [jnp.zeros(2)]})
    with pytest.raises(ValueError, match=r"gradient for the parameter \['w'\] has shape \(2, 3\), but the parameter "
                                         r"has shape \(3, 2\)"):
        update(0, {"w": jnp.ones((2, 3)), "b": [jnp.zeros(2)]}, state)
    expected = re.escape("parameter ['b'][0] has shape (1,), but the parameter has shape (2,)")
    with pytest.raises(ValueError, match=expected):
        core.jit(update)(0, {"w": jnp.ones((3, 2)), "b": [jnp.zeros(1)]}, state)
    state = update(0, {"w": jnp.ones((3, 2)), "b": [jnp.zeros(2)]}, state)
    assert get_params(state)["w"].shape == (3, 2)

"""nn.normalization: BatchNorm (train and eval mode, running statistics as explicit state, under
jit and under vmap with an axis_name), LayerNorm and GroupNorm, against NumPy float64 references."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import random
from core import test_util as tu
from nn import base
from nn.normalization import BatchNorm, GroupNorm, LayerNorm

KEY = random.key(0)


def _concrete(shape, batch):
    return tuple(batch if d == -1 else d for d in shape)


def _init(layer, input_shape, rng, dtype=np.float32):
    """`(output_shape, (beta, gamma))` as `init_fun` predicts them, with random values (so that the
    affine part is tested too). init_fun runs under eval_shape: its random key split would compile
    per shape; the default values are checked in test_default_init."""
    box = {}

    def params_of(key):
        box["out_shape"], params = layer.init_fun(key, input_shape)
        return params

    beta, gamma = core.eval_shape(params_of, KEY)
    return box["out_shape"], (rng.normal(size=beta.shape).astype(dtype),
                              rng.uniform(0.5, 2.0, size=gamma.shape).astype(dtype))


# ----- NumPy references (float64) ----------------------------------------------------------------

def _np_normalize(x, mean, var, beta, gamma, eps):
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def _np_batch_stats(x, axes):
    mean = x.mean(axis=axes, keepdims=True)
    return mean, ((x - mean) ** 2).mean(axis=axes, keepdims=True)   # biased variance


def _np_group_norm(x, beta, gamma, groups, eps):
    out = np.empty_like(x)
    size = x.shape[-1] // groups
    for n in range(x.shape[0]):
        for g in range(groups):
            block = x[n, ..., g * size:(g + 1) * size]
            out[n, ..., g * size:(g + 1) * size] = (block - block.mean()) / np.sqrt(block.var() + eps)
    return out * gamma + beta


# ----- shapes -------------------------------------------------------------------------------------

SHAPE_CASES = [
    ("BatchNorm", lambda: BatchNorm(), (-1, 4, 4, 3), (3,)),
    ("BatchNorm", lambda: BatchNorm(axis=(0,)), (-1, 5), (5,)),
    ("LayerNorm", lambda: LayerNorm(), (-1, 5), (5,)),
    ("LayerNorm", lambda: LayerNorm(axis=(-2, -1)), (-1, 3, 4), (3, 4)),
    ("GroupNorm", lambda: GroupNorm(num_groups=2), (-1, 4), (4,)),
    ("GroupNorm", lambda: GroupNorm(num_groups=3), (-1, 2, 3, 6), (6,)),
]


@pytest.mark.parametrize("name,make,input_shape,param_shape", SHAPE_CASES)
def test_init_predicts_apply_shape(name, make, input_shape, param_shape, rng):
    layer = make()
    out_shape, (beta, gamma) = _init(layer, input_shape, rng)
    assert beta.shape == gamma.shape == param_shape
    x = rng.normal(size=_concrete(input_shape, 3)).astype(np.float32)
    y = core.jit(layer.apply_fun)((beta, gamma), x)
    assert y.shape == _concrete(out_shape, 3)
    assert base.is_stateful(layer) == (name == "BatchNorm")


# ----- BatchNorm ----------------------------------------------------------------------------------

def test_batchnorm_train_values(rng):
    # variance far from 1 and a large epsilon: sqrt(var + eps) vs var + eps (stax's 2018 bug) or
    # sqrt(var) + eps all give visibly different values
    bn = BatchNorm(epsilon=0.3)
    _, params = _init(bn, (-1, 2, 2, 3), rng)
    x = rng.normal(1.5, 3.0, size=(5, 2, 2, 3)).astype(np.float32)
    y = core.jit(bn.apply_fun)(params, x)
    mean, var = _np_batch_stats(tu.wide(x), (0, 1, 2))
    tu.assert_allclose(y, _np_normalize(tu.wide(x), mean, var, *map(tu.wide, params), 0.3), np.float32,
                       atol=1e-5, rtol=1e-5)


def test_batchnorm_center_scale_flags(rng):
    bn = BatchNorm(axis=(0,), center=False, scale=False)
    _, params = _init(bn, (-1, 3), rng)   # ignored by the flags
    x = rng.normal(size=(6, 3)).astype(np.float32)
    mean, var = _np_batch_stats(tu.wide(x), (0,))
    tu.assert_allclose(core.jit(bn.apply_fun)(params, x), (tu.wide(x) - mean) / np.sqrt(var + 1e-5), np.float32,
                       atol=1e-5, rtol=1e-5)


def test_batchnorm_running_stats_three_jitted_steps_then_eval(rng):
    momentum, eps = 0.9, 1e-5
    bn = BatchNorm(axis=(0, 1), momentum=momentum, epsilon=eps)
    _, params = _init(bn, (-1, 3, 4), rng)
    state = bn.init_state((-1, 3, 4))
    np.testing.assert_array_equal(state["mean"], np.zeros(4))
    np.testing.assert_array_equal(state["var"], np.ones(4))

    train_step = core.jit(lambda p, x, s: bn.apply_fun(p, x, state=s, mode="train"))
    evaluate = core.jit(lambda p, x, s: bn.apply_fun(p, x, state=s, mode="eval"))
    run_mean, run_var = np.zeros(4), np.ones(4)
    for step in range(3):
        x = rng.normal(step - 1.0, 1.0 + step, size=(4, 3, 4)).astype(np.float32)
        y, new_state = train_step(params, x, state)
        assert core.tree_structure(new_state) == core.tree_structure(state)
        assert new_state["mean"].dtype == state["mean"].dtype
        mean, var = _np_batch_stats(tu.wide(x), (0, 1))
        tu.assert_allclose(y, _np_normalize(tu.wide(x), mean, var, *map(tu.wide, params), eps), np.float32,
                           atol=2e-5, rtol=2e-5)
        run_mean = momentum * run_mean + (1 - momentum) * mean.reshape(4)
        run_var = momentum * run_var + (1 - momentum) * var.reshape(4)
        tu.assert_allclose(new_state["mean"], run_mean, np.float32, atol=1e-5, rtol=1e-5)
        tu.assert_allclose(new_state["var"], run_var, np.float32, atol=1e-5, rtol=1e-5)
        state = new_state

    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    y, same_state = evaluate(params, x, state)
    tu.assert_allclose(y, _np_normalize(tu.wide(x), run_mean, run_var, *map(tu.wide, params), eps), np.float32,
                       atol=2e-5, rtol=2e-5)
    for k in ("mean", "var"):
        np.testing.assert_array_equal(np.asarray(same_state[k]), np.asarray(state[k]))
    # without state=, train mode keeps stax's signature: just the outputs
    assert isinstance(core.jit(lambda p, x: bn.apply_fun(p, x))(params, x), core.Array)


def test_batchnorm_default_init_and_apply_with_state(rng):
    # the real init: beta zeros, gamma ones (stax's defaults)
    bn = BatchNorm(axis=(0,))
    out_shape, params = bn.init_fun(KEY, (-1, 2))
    assert out_shape == (-1, 2)
    np.testing.assert_array_equal(np.asarray(params[0]), np.zeros(2))
    np.testing.assert_array_equal(np.asarray(params[1]), np.ones(2))
    state = base.init_state(bn, (-1, 2))
    x = rng.normal(size=(3, 2)).astype(np.float32)
    y, new_state = base.apply_with_state(bn, params, x, state, mode="eval")
    tu.assert_allclose(y, tu.wide(x) / np.sqrt(1 + 1e-5), np.float32)
    assert new_state is state


def test_batchnorm_eval_without_state_raises(rng):
    bn = BatchNorm(axis=(0,))
    _, params = _init(bn, (-1, 2), rng)
    with pytest.raises(ValueError, match=r"mode='eval'.*running statistics.*state=state"):
        bn.apply_fun(params, np.ones((3, 2), np.float32), mode="eval")


def test_batchnorm_bad_mode_and_state_errors(rng):
    bn = BatchNorm(axis=(0,))
    _, params = _init(bn, (-1, 2), rng)
    x = np.ones((3, 2), np.float32)
    with pytest.raises(ValueError, match=r"BatchNorm: mode must be 'train' or 'eval', got 'test'"):
        bn.apply_fun(params, x, mode="test")
    with pytest.raises(ValueError, match=r"state\['mean'\] has shape \(3,\).*feature shape \(2,\)"):
        bn.apply_fun(params, x, state={"mean": np.zeros(3, np.float32), "var": np.ones(3, np.float32)})
    with pytest.raises(TypeError, match=r"state must be a dict with keys 'mean' and 'var'"):
        bn.apply_fun(params, x, state=(np.zeros(2), np.ones(2)))
    with pytest.raises(ValueError, match=r"feature dimensions .* must be known"):
        bn.init_fun(KEY, (4, -1))
    with pytest.raises(ValueError, match=r"axis 3 is out of range for inputs of rank 2"):
        BatchNorm(axis=(0, 3)).init_fun(KEY, (-1, 2))


def test_batchnorm_axis_name_gives_cross_replica_statistics(rng):
    # 2 "devices" x 4 examples each; with axis_name the stats are those of all 8 examples
    momentum = 0.8
    bn_sync = BatchNorm(axis=(0,), momentum=momentum, axis_name="i")
    bn_local = BatchNorm(axis=(0,), momentum=momentum)
    _, params = _init(bn_sync, (-1, 3), rng)
    state = bn_sync.init_state((-1, 3))
    shards = rng.normal(size=(2, 4, 3)).astype(np.float32) * np.array([[[1.0]], [[3.0]]], np.float32)

    def replica(x, s):
        return bn_sync.apply_fun(params, x, state=s)

    y, new_state = core.jit(core.vmap(replica, in_axes=(0, None), axis_name="i"))(shards, state)
    y_full, state_full = core.jit(lambda x, s: bn_local.apply_fun(params, x, state=s))(shards.reshape(8, 3), state)
    tu.assert_allclose(y, np.asarray(y_full).reshape(2, 4, 3), np.float32, atol=1e-5, rtol=1e-5)
    for k in ("mean", "var"):
        for lane in range(2):   # every replica holds the same, global, running statistics
            tu.assert_allclose(new_state[k][lane], state_full[k], np.float32, atol=1e-6, rtol=1e-6)

    # the oracle itself: without axis_name each replica uses its own shard's statistics
    mean, var = _np_batch_stats(tu.wide(shards), (1,))
    expected_local = _np_normalize(tu.wide(shards), mean, var, *map(tu.wide, params), 1e-5)
    y_local = core.vmap(lambda x: bn_local.apply_fun(params, x))(shards)
    tu.assert_allclose(y_local, expected_local, np.float32, atol=1e-5, rtol=1e-5)
    assert not np.allclose(np.asarray(y_local), np.asarray(y), atol=1e-2)


def test_batchnorm_grad_through_jitted_train_step(rng):
    # the state is an output next to the loss: has_aux carries it out of value_and_grad
    bn = BatchNorm(axis=(0,), momentum=0.5)
    _, params = _init(bn, (-1, 2), rng)
    state = bn.init_state((-1, 2))
    x = rng.normal(size=(4, 2)).astype(np.float32)

    def loss(p, x, s):
        y, s = bn.apply_fun(p, x, state=s)
        return jnp.sum(y * jnp.arange(1.0, 5.0)[:, None]), s

    (value, new_state), grads = core.jit(core.value_and_grad(loss, has_aux=True))(params, x, state)
    w = np.arange(1.0, 5.0)[:, None]
    mean, var = _np_batch_stats(tu.wide(x), (0,))
    x_hat = (tu.wide(x) - mean) / np.sqrt(var + 1e-5)
    tu.assert_allclose(value, np.sum(w * (x_hat * tu.wide(params[1]) + tu.wide(params[0]))), np.float32,
                       atol=1e-5, rtol=1e-5)
    tu.assert_allclose(grads[0], (w * np.ones_like(x_hat)).sum(0), np.float32, atol=1e-5, rtol=1e-5)  # d/dbeta
    tu.assert_allclose(grads[1], (w * x_hat).sum(0), np.float32, atol=1e-5, rtol=1e-5)                # d/dgamma
    tu.assert_allclose(new_state["mean"], 0.5 * mean.reshape(2), np.float32, atol=1e-6, rtol=1e-6)


# ----- LayerNorm and GroupNorm --------------------------------------------------------------------

@pytest.mark.parametrize("axis,shape", [(-1, (3, 5)), ((-2, -1), (2, 3, 4))])
def test_layernorm_values(axis, shape, rng):
    ln = LayerNorm(axis=axis, epsilon=0.1)
    _, params = _init(ln, (-1,) + shape[1:], rng)
    x = rng.normal(2.0, 3.0, size=shape).astype(np.float32)
    mean, var = _np_batch_stats(tu.wide(x), axis)
    expected = _np_normalize(tu.wide(x), mean, var, *map(tu.wide, params), 0.1)
    tu.assert_allclose(core.jit(ln.apply_fun)(params, x), expected, np.float32, atol=1e-5, rtol=1e-5)
    # no batch coupling: vmap over examples agrees with the batched call
    tu.assert_allclose(core.vmap(ln.apply_fun, in_axes=(None, 0))(params, x), expected, np.float32,
                       atol=1e-5, rtol=1e-5)


def test_layernorm_check_grads(x64, rng):
    ln = LayerNorm(epsilon=0.1)
    _, params = _init(ln, (-1, 4), rng, np.float64)
    x = rng.normal(size=(3, 4))
    tu.check_grads(ln.apply_fun, (params, x), order=1)


def test_groupnorm_values(rng):
    gn = GroupNorm(num_groups=2, epsilon=0.1)
    _, params = _init(gn, (-1, 3, 2, 6), rng)
    x = rng.normal(1.0, 2.0, size=(2, 3, 2, 6)).astype(np.float32)
    expected = _np_group_norm(tu.wide(x), *map(tu.wide, params), 2, 0.1)
    tu.assert_allclose(core.jit(gn.apply_fun)(params, x), expected, np.float32, atol=1e-5, rtol=1e-5)


def test_norm_errors():
    with pytest.raises(ValueError, match=r"GroupNorm: the number of channels \(5\) must be a multiple of "
                                         r"num_groups \(2\)"):
        GroupNorm(num_groups=2).init_fun(KEY, (-1, 5))
    with pytest.raises(ValueError, match=r"LayerNorm: axis 2 is out of range for inputs of rank 2"):
        LayerNorm(axis=2).init_fun(KEY, (-1, 5))
    with pytest.raises(ValueError, match=r"LayerNorm: the normalized dimensions .* must be known"):
        LayerNorm(axis=0).init_fun(KEY, (-1, 5))


# ----- through serial -------------------------------------------------------------------------------

def test_batchnorm_state_and_mode_through_serial_under_jit(rng):
    from nn.combinators import serial
    from nn.layers import Dense, Relu
    momentum = 0.5
    net = serial(Dense(3), BatchNorm(axis=(0,), momentum=momentum), Relu)
    shapes = core.eval_shape(lambda k: net.init_fun(k, (-1, 2))[1], KEY)
    params = core.tree_map(lambda s: rng.normal(size=s.shape).astype(np.float32), shapes)
    state = net.init_state((-1, 2))
    assert state[0] is None and state[2] is None and set(state[1]) == {"mean", "var"}
    W, b = map(tu.wide, params[0])
    beta, gamma = map(tu.wide, params[1])

    step = core.jit(lambda p, x, s: net.apply_fun(p, x, state=s, mode="train"))
    x = rng.normal(size=(5, 2)).astype(np.float32)
    y, new_state = step(params, x, state)
    h = tu.wide(x) @ W + b
    mean, var = _np_batch_stats(h, (0,))
    tu.assert_allclose(y, np.maximum(_np_normalize(h, mean, var, beta, gamma, 1e-5), 0), np.float32,
                       atol=1e-5, rtol=1e-5)
    run_mean = (1 - momentum) * mean.reshape(3)
    run_var = momentum + (1 - momentum) * var.reshape(3)
    tu.assert_allclose(new_state[1]["mean"], run_mean, np.float32, atol=1e-5, rtol=1e-5)
    tu.assert_allclose(new_state[1]["var"], run_var, np.float32, atol=1e-5, rtol=1e-5)

    x = rng.normal(size=(2, 2)).astype(np.float32)
    y, _ = core.jit(lambda p, x, s: net.apply_fun(p, x, state=s, mode="eval"))(params, x, new_state)
    h = tu.wide(x) @ W + b
    tu.assert_allclose(y, np.maximum(_np_normalize(h, run_mean, run_var, beta, gamma, 1e-5), 0), np.float32,
                       atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match=r"mode='eval'.*state=state"):
        net.apply_fun(params, x, mode="eval")

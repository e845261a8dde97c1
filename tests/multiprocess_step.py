"""The data-parallel training step of tests/test_multiprocess.py: the same model, data and step
in the worker processes (pmap over every device of every process) and in the test (one device)."""
import numpy as np

import core
import core.numpy as jnp
from core import lax, random
import nn
import optim

PER_DEVICE_BATCH = 4


def _setup(n_devices):
    init_fun, apply_fun = nn.serial(nn.Dense(8), nn.Tanh, nn.Dense(3), nn.LogSoftmax)
    _, params = init_fun(random.key(0), (-1, 5))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n_devices * PER_DEVICE_BATCH, 5)).astype(np.float32)
    y = rng.integers(0, 3, n_devices * PER_DEVICE_BATCH).astype(np.int32)
    return apply_fun, params, optim.sgd(0.5), x, y


def _loss(apply_fun, params, x, y):
    logp = apply_fun(params, x)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


def single_step_result(n_devices):
    """The parameters after one SGD step on the whole global batch, on one device."""
    apply_fun, params, opt, x, y = _setup(n_devices)
    state = opt.init_fn(params)
    grads = core.grad(lambda p: _loss(apply_fun, p, x, y))(params)
    return core.tree_leaves(opt.params_fn(opt.update_fn(0, grads, state)))


def parallel_step_result(process_index, n_devices, n_local):
    """The same step under pmap: this process feeds its own devices' slices of the global batch."""
    apply_fun, params, opt, x, y = _setup(n_devices)

    def step(state, x, y):
        grads = core.grad(lambda p: _loss(apply_fun, p, x, y))(opt.params_fn(state))
        return opt.update_fn(0, lax.pmean(grads, "batch"), state)

    lo = process_index * n_local * PER_DEVICE_BATCH
    hi = lo + n_local * PER_DEVICE_BATCH
    xs = x[lo:hi].reshape(n_local, PER_DEVICE_BATCH, 5)
    ys = y[lo:hi].reshape(n_local, PER_DEVICE_BATCH)
    new_state = core.pmap(step, axis_name="batch")(core.replicate(opt.init_fn(params)), xs, ys)
    return core.tree_leaves(core.unreplicate(opt.params_fn(new_state)))

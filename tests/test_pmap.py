"""pmap (issue 6): one replica per device, against NumPy over the stacked inputs and against
single-device computations of the global batch. The test session has 8 CPU devices
(tests/conftest.py); a pmap over k slices runs on the first k."""
import importlib

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax, random
from core.runtime import replicated
import nn
import optim

pmap_module = importlib.import_module("core.pmap")

DEVICE_COUNTS = (1, 2, 4, 8)


def _x(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_session_has_eight_devices():
    assert core.local_device_count() == 8 and core.device_count() == 8
    assert core.process_count() == 1 and core.process_index() == 0


@pytest.mark.parametrize("n", DEVICE_COUNTS)
def test_pmap_elementwise_runs_one_slice_per_device(rng, n):
    x = _x(rng, n, 3)
    out = core.pmap(lambda v: jnp.sin(v) * 2.0 + 1.0)(x)
    assert isinstance(out, core.ShardedArray) and out.shape == (n, 3)
    assert out.shard_devices == core.local_devices()[:n]
    np.testing.assert_allclose(np.asarray(out), np.sin(x.astype(np.float64)) * 2 + 1, rtol=1e-6, atol=1e-6)
    for i, shard in enumerate(out.addressable_shards):
        assert shard.device == core.local_devices()[i]
        np.testing.assert_allclose(np.asarray(shard), np.asarray(out)[i])


def test_in_axes_out_axes_and_pytrees(rng):
    x, w = _x(rng, 3, 2), _x(rng, 3)
    tree = {"a": _x(rng, 2, 3), "b": (_x(rng, 2),)}
    f = core.pmap(lambda xs, w, t: (xs * w, t["a"].sum() + t["b"][0]), in_axes=(1, None, 0), out_axes=(1, 0))
    y, z = f(x, w, tree)
    np.testing.assert_allclose(np.asarray(y), x * w[:, None], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(z), tree["a"].sum(1) + tree["b"][0], rtol=1e-5)
    # keyword arguments are mapped over axis 0
    kw = core.pmap(lambda a, *, b: a - b)(x.T, b=x.T * 2)
    np.testing.assert_allclose(np.asarray(kw), -x.T)
    # out_axes=None returns the (device-invariant) value once
    total = core.pmap(lambda v: lax.psum(v, "i"), axis_name="i", out_axes=None)(x.T)
    assert not isinstance(total, core.ShardedArray)
    np.testing.assert_allclose(np.asarray(total), x.sum(1), rtol=1e-6)


def test_static_broadcasted_argnums_positional_and_keyword_error(rng):
    calls = []

    def f(x, power):
        calls.append(power)
        return x ** power

    g = core.pmap(f, static_broadcasted_argnums=1)
    x = _x(rng, 2, 3)
    np.testing.assert_allclose(np.asarray(g(x, 3)), x ** 3, rtol=1e-5)
    g(x, 3)
    assert calls == [3]  # traced once for this signature
    with pytest.raises(ValueError, match=r"static_broadcasted_argnums=\(1,\) but was called with only 1 positional "
                                         r"argument. All static broadcasted arguments must be passed positionally"):
        g(x, power=3)
    with pytest.raises(ValueError, match="not hashable"):
        g(x, [3])


def test_compiled_once_per_signature_and_outputs_feed_the_next_call_in_place(rng, monkeypatch):
    traces = []

    def f(v):
        traces.append(v.shape)
        return v + 1.0

    g = core.pmap(f)
    x = _x(rng, 2, 5)
    y = g(x)
    before = pmap_module._executables.misses
    copies = []
    real_put = replicated.put_shards
    monkeypatch.setattr(replicated, "put_shards", lambda *a: copies.append(1) or real_put(*a))
    z = g(y)
    w = g(z)
    assert traces == [(5,)] and pmap_module._executables.misses == before
    assert copies == []  # a ShardedArray over the same devices is passed as it is
    np.testing.assert_allclose(np.asarray(w), x + 3.0, rtol=1e-6)
    g(_x(rng, 2, 6))  # a new per-device shape traces and compiles anew
    assert traces == [(5,), (6,)]


def test_sharded_array_behaves_like_an_array(rng):
    x = _x(rng, 4, 3)
    y = core.pmap(lambda v: v * 2.0)(x)
    np.testing.assert_allclose(np.asarray(y[1:3]), 2 * x[1:3])
    np.testing.assert_allclose(np.asarray(y[-1]), 2 * x[-1])
    np.testing.assert_allclose(np.asarray(y + 1), 2 * x + 1, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(core.jit(jnp.sum)(y)), 2 * x.sum(), rtol=1e-5)
    assert y[2].device == core.local_devices()[2]
    assert y.devices() == set(core.local_devices()[:4])
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 4"):
        y[4]
    assert y.block_until_ready() is y
    assert repr(y).startswith("Array(")


def _loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


@pytest.mark.parametrize("n", (2, 4))
def test_pmap_of_grad_and_grad_of_pmap_match_the_global_batch(rng, n):
    w, x = _x(rng, 5, 3), _x(rng, n, 4, 5)
    global_grad = np.asarray(core.grad(_loss)(w, x.reshape(-1, 5)))
    per_device = core.pmap(core.grad(_loss), in_axes=(None, 0))(w, x)
    np.testing.assert_allclose(np.asarray(per_device).sum(0), global_grad, rtol=1e-4, atol=1e-5)

    def total(w, x):
        return jnp.sum(core.pmap(_loss, in_axes=(None, 0))(w, x))
    np.testing.assert_allclose(np.asarray(core.grad(total)(w, x)), global_grad, rtol=1e-4, atol=1e-5)
    gx = core.grad(total, argnums=1)(w, x)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(core.grad(_loss, argnums=1)(w, x.reshape(-1, 5))).reshape(
        x.shape), rtol=1e-4, atol=1e-5)


def test_grad_of_pmap_through_collectives_against_finite_differences(rng):
    x = _x(rng, 4, 3)

    def f(w):
        # psum, pmean and an unmapped (out_axes=None) output on the way
        y = core.pmap(lambda v, w: lax.pmean(jnp.sin(v * w), "i") * lax.psum(v, "i"), axis_name="i",
                      in_axes=(0, None), out_axes=None)(x, w)
        return jnp.sum(y)
    core.test_util.check_grads(f, (np.float32(0.7),), order=2, modes=("rev",), atol=2e-2, rtol=2e-2)
    w = 0.7
    expected = sum(np.sum(np.cos(x * w) * x, 0) / 4 * x.sum(0))
    np.testing.assert_allclose(float(core.grad(f)(np.float32(w))), expected, rtol=1e-4)


def test_jvp_of_pmap(rng):
    x, t = _x(rng, 2, 3), _x(rng, 2, 3)
    y, ty = core.jvp(core.pmap(lambda v: jnp.exp(v) * v), (x,), (t,))
    np.testing.assert_allclose(np.asarray(y), np.exp(x) * x, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ty), (np.exp(x) * x + np.exp(x)) * t, rtol=1e-5, atol=1e-6)


def test_vmap_of_pmap_and_pmap_of_vmap_and_jit_inside(rng):
    xb = _x(rng, 3, 2, 4)
    staged = core.make_jaxpr(core.vmap(core.pmap(jnp.sin)))(xb)
    # the batch axis goes just after the device axis, and the program stays one pmap
    assert [e.primitive.name for e in staged.jaxpr.eqns] == ["transpose", "pmap", "transpose"]
    out = core.vmap(core.pmap(lambda v: jnp.sum(v ** 2) + lax.axis_index("i"), axis_name="i"))(xb)
    np.testing.assert_allclose(np.asarray(out), (xb ** 2).sum(-1) + np.arange(2), rtol=1e-5)
    # a vmap axis and a pmap axis in one collective
    both = core.pmap(core.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")(xb.transpose(1, 0, 2))
    np.testing.assert_allclose(np.asarray(both), np.broadcast_to(xb.sum((0, 1)), (2, 3, 4)), rtol=1e-5)
    jitted = core.pmap(core.jit(lambda v: lax.pmax(jnp.cos(v), "i")), axis_name="i")(xb[0])
    np.testing.assert_allclose(np.asarray(jitted), np.broadcast_to(np.cos(xb[0]).max(0), (2, 4)), rtol=1e-6)


def test_pmap_inside_jit_is_a_clear_error(rng):
    f = core.jit(lambda v: core.pmap(jnp.sin)(v))
    with pytest.raises(NotImplementedError, match="pmap of sin inside jit or inside another pmap is not supported"):
        f(_x(rng, 2, 3))


def test_leading_axis_larger_than_the_device_count_says_both_numbers(rng):
    with pytest.raises(ValueError, match=r"requires 16 logical devices, but only 8 XLA devices are available "
                                         r"\(num_replicas=16\).*axis 0 of argument v with shape \(16, 3\)"):
        core.pmap(lambda v: v)(_x(rng, 16, 3))


def test_mapped_size_must_match_the_given_devices(rng):
    f = core.pmap(lambda v: v, devices=core.local_devices()[:2])
    with pytest.raises(ValueError, match=r"mapped axis has size 3.*must equal the number of devices it runs on \(2"):
        f(_x(rng, 3, 1))
    np.testing.assert_allclose(np.asarray(f(np.ones((2, 1)))), np.ones((2, 1)))


def test_unreplicated_parameters_are_detected_and_explained(rng):
    params = {"w": _x(rng, 5, 3)}
    step = core.pmap(lambda p, x: x @ p["w"])
    with pytest.raises(ValueError, match=r"(?s)inconsistent sizes.*argument p\['w'\].*core.replicate\(params\)"):
        step(params, _x(rng, 8, 2, 5))
    out = step(core.replicate(params), _x(rng, 8, 2, 5))
    assert out.shape == (8, 2, 3)


def test_unknown_axis_name_lists_the_bound_names(rng):
    with pytest.raises(NameError, match=r"unbound axis name: 'j'. The axis names bound here are \['i'\]"):
        core.pmap(lambda v: lax.psum(v, "j"), axis_name="i")(_x(rng, 2, 3))


def test_device_put_sharded_replicated_and_replicate_unreplicate(rng):
    devs = core.local_devices()[:2]
    a, b = _x(rng, 3), _x(rng, 3)
    s = core.device_put_sharded([{"x": a}, {"x": b}], devs)["x"]
    assert isinstance(s, core.ShardedArray) and s.shard_devices == devs
    np.testing.assert_allclose(np.asarray(s), np.stack([a, b]))
    r = core.device_put_replicated(jnp.asarray(a), devs)
    np.testing.assert_allclose(np.asarray(r), np.stack([a, a]))
    tree = {"w": jnp.asarray(a), "b": (jnp.zeros(2),)}
    rep = core.replicate(tree)
    assert rep["w"].shape == (8, 3) and rep["b"][0].shape == (8, 2)
    back = core.unreplicate(rep)
    np.testing.assert_allclose(np.asarray(back["w"]), a)
    with pytest.raises(ValueError, match="one shard per device: got 1 shards for 2 devices"):
        core.device_put_sharded([a], devs)
    with pytest.raises(ValueError, match=r"leaf 0 of shard 1 is float32\[4\], but in shard 0 it is float32\[3\]"):
        core.device_put_sharded([a, np.zeros(4, np.float32)], devs)
    with pytest.raises(ValueError, match="leading device axis"):
        core.unreplicate({"s": jnp.float32(1.0)})


def test_donated_arguments_are_reused_and_deleted(rng):
    x = core.device_put_sharded([np.ones(3, np.float32), np.zeros(3, np.float32)], core.local_devices()[:2])
    y = core.pmap(lambda v: v * 3.0, donate_argnums=0)(x)
    np.testing.assert_allclose(np.asarray(y), [[3, 3, 3], [0, 0, 0]])
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)


def _mlp():
    return nn.serial(nn.Dense(16), nn.Relu, nn.Dense(4), nn.LogSoftmax)


def _xent(apply_fun, params, batch):
    x, y = batch
    logp = apply_fun(params, x)
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


@pytest.mark.parametrize("n", (2, 4))
def test_data_parallel_mlp_step_equals_the_single_device_step(rng, n):
    init_fun, apply_fun = _mlp()
    _, params = init_fun(random.key(0), (-1, 6))
    opt = optim.adam(1e-2)
    state = opt.init_fn(params)
    x = _x(rng, 8 * n, 6)
    y = rng.integers(0, 4, 8 * n).astype(np.int32)

    def single_step(state, batch):
        grads = core.grad(lambda p: _xent(apply_fun, p, batch))(opt.params_fn(state))
        return opt.update_fn(0, grads, state)

    def parallel_step(state, batch):
        grads = core.grad(lambda p: _xent(apply_fun, p, batch))(opt.params_fn(state))
        return opt.update_fn(0, lax.pmean(grads, "batch"), state)

    expected = opt.params_fn(core.jit(single_step)(state, (x, y)))
    sharded = (x.reshape(n, 8, 6), y.reshape(n, 8))
    new_state = core.pmap(parallel_step, axis_name="batch")(core.replicate(state, core.local_devices()[:n]), sharded)
    got = core.unreplicate(opt.params_fn(new_state))
    for g, e in zip(core.tree_leaves(got), core.tree_leaves(expected), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5, atol=2e-6)
    # every replica holds the same parameters
    for leaf in core.tree_leaves(opt.params_fn(new_state)):
        arr = np.asarray(leaf)
        np.testing.assert_array_equal(arr, np.broadcast_to(arr[0], arr.shape))


def test_batchnorm_under_pmap_normalizes_with_global_batch_statistics(rng):
    bn = nn.BatchNorm(axis=(0,), axis_name="i")
    _, params = bn.init_fun(random.key(1), (-1, 3))
    state = bn.init_state((-1, 3))
    x = _x(rng, 4, 5, 3) * 3 + 1
    y, new_state = core.pmap(lambda p, v, s: bn.apply_fun(p, v, state=s), axis_name="i",
                             in_axes=(None, 0, None))(params, x, state)
    flat = x.reshape(-1, 3).astype(np.float64)
    expected = (flat - flat.mean(0)) / np.sqrt(flat.var(0) + 1e-5)
    np.testing.assert_allclose(np.asarray(y).reshape(-1, 3), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(new_state["mean"])[0], 0.01 * flat.mean(0), rtol=1e-4, atol=1e-6)


def test_a_pmapped_training_loop_traces_and_compiles_once(rng):
    traces = []

    def step(w, x):
        traces.append(1)
        g = core.grad(lambda w: jnp.sum((x @ w) ** 2))(w)
        return w - 0.01 * lax.pmean(g, "d")

    f = core.pmap(step, axis_name="d")
    w = core.replicate(jnp.ones((3, 2)), core.local_devices()[:2])
    x = _x(rng, 2, 4, 3)
    w = f(w, x)
    compiled = pmap_module._executables.misses
    for _ in range(300):
        w = f(w, x)
    assert traces == [1] and pmap_module._executables.misses == compiled
    np.testing.assert_array_equal(np.asarray(w)[0], np.asarray(w)[1])


def test_a_tracer_leaked_from_pmap_is_reported(rng):
    leaked = []

    def f(v):
        leaked.append(v * 2.0)
        return v

    with core.checking_leaks():
        with pytest.raises(Exception, match=r"Leaked trace of f"):
            core.pmap(f)(_x(rng, 2, 3))


def test_python_scalar_and_numpy_arguments_take_the_fast_path(rng, monkeypatch):
    traces = []

    def step(i, w, x):
        traces.append(1)
        return w + i * x

    f = core.pmap(step, in_axes=(None, 0, 0))
    w, x = core.replicate(jnp.zeros(3), core.local_devices()[:2]), _x(rng, 2, 3)
    w = f(0, w, x)
    entries = len(f._fast)
    for i in range(1, 50):
        w = f(i, w, x)
    assert traces == [1] and len(f._fast) == entries == 1
    np.testing.assert_allclose(np.asarray(w), sum(range(50)) * x, rtol=1e-5)
    f(1.5, w, x)  # a float is another signature
    assert len(traces) == 2


def test_pmap_executables_are_bounded_and_cleared_with_the_other_caches(rng):
    f = core.pmap(lambda v: v - 1.0)
    f(_x(rng, 2, 3))
    f(_x(rng, 2, 3))
    assert len(f._fast) == 1 and len(f._cache) == 1
    assert "pmap" in core.cache_info() and core.cache_info()["pmap"]["size"] >= 1
    assert pmap_module._executables.maxsize == 512
    core.clear_caches()
    assert core.cache_info()["pmap"]["size"] == 0 and not f._fast and not f._cache
    np.testing.assert_allclose(np.asarray(core.pmap(lambda v: v - 1.0)(np.ones((2, 3)))), np.zeros((2, 3)))

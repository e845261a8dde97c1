"""optim/utils.py: norms and clipping against NumPy float64, the skip_nonfinite and
accumulate_gradients wrappers under jit against NumPy runs of the same optimizer, and
optimizer_state_to_arrays / optimizer_state_from_arrays round trips through json and np.savez (exact: structures, types,
dtypes and values)."""
import collections
import doctest
import io
import json
from typing import NamedTuple

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu
from core.tree_util import tree_flatten, tree_leaves, tree_structure
from optim import utils
from optim.base import OptimizerState, optimizer
from optim.schedules import make_schedule
from optim.utils import (AccumulateGradientsState, SkipNonfiniteState, accumulate_gradients, clip_grads,
                         l2_norm, optimizer_state_to_arrays, register_state_type, skip_nonfinite,
                         optimizer_state_from_arrays)


# ----- small optimizers: one per kind of per-array state ------------------------------------------

class HeavyBallState(NamedTuple):
    x: object
    velocity: object


@optimizer
def heavy_ball(step_size, mass):
    """Polyak's heavy ball, with a NamedTuple state: v <- mass * v + g; x <- x - step_size(i) * v."""
    step_size = make_schedule(step_size)

    def init(x0):
        return HeavyBallState(x0, jnp.zeros_like(x0))

    def update(i, g, state):
        velocity = mass * state.velocity + g
        return HeavyBallState(state.x - step_size(i) * velocity, velocity)

    return init, update, lambda state: state.x


@optimizer
def adagrad_tuple(step_size):
    """AdaGrad with a plain tuple state (x, sum of squared gradients)."""
    def init(x0):
        return (x0, jnp.zeros_like(x0))

    def update(i, g, state):
        x, g_sq = state
        g_sq = g_sq + g * g
        return (x - step_size * g / (jnp.sqrt(g_sq) + 1e-7), g_sq)

    return init, update, lambda state: state[0]


@optimizer
def decaying_sgd(step_size):
    """SGD with a bare array state and the step size step_size / (1 + i), so the step matters."""
    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size / (1 + i) * g

    return init, update, lambda x: x


def _np_heavy_ball(x, grads_and_steps, step_size, mass):
    x = np.asarray(x, np.float64)
    v = np.zeros_like(x)
    for g, i in grads_and_steps:
        v = mass * v + g
        x = x - (step_size(i) if callable(step_size) else step_size) * v
    return x


def _params(rng):
    return {"w": rng.standard_normal((2, 3)).astype(np.float32),
            "layers": [(rng.standard_normal(3).astype(np.float32), None), np.float32(0.5)],
            "empty": np.zeros((0,), np.float32)}


def _to_core(tree):
    return core.tree_map(jnp.asarray, tree)


def _like(tree, rng, scale=1.0):
    return core.tree_map(lambda x: jnp.asarray((scale * rng.standard_normal(np.shape(x))).astype(np.float32)), tree)


def _assert_trees_identical(a, b):
    leaves_a, def_a = tree_flatten(a)
    leaves_b, def_b = tree_flatten(b)
    assert def_a == def_b
    for x, y in zip(leaves_a, leaves_b, strict=True):
        assert type(x) is type(y)
        x_np, y_np = np.asarray(x), np.asarray(y)
        assert x_np.dtype == y_np.dtype and x_np.shape == y_np.shape
        np.testing.assert_array_equal(x_np, y_np)


# ----- l2_norm / clip_grads ------------------------------------------------------------------------

def test_l2_norm_of_a_tree(rng):
    tree = {"a": [rng.standard_normal((2, 3)), None], "b": (rng.standard_normal(4), np.float64(-1.5))}
    expected = np.sqrt(sum(np.sum(np.square(x)) for x in tree_leaves(tree)))
    core_tree = core.tree_map(lambda x: jnp.asarray(np.float32(x)), tree)
    tu.assert_allclose(l2_norm(core_tree), expected, np.float32)
    tu.assert_allclose(core.jit(l2_norm)(core_tree), expected, np.float32)
    assert float(l2_norm({"w": jnp.array([3.0, 4.0]), "z": jnp.zeros((0, 2))})) == 5.0
    assert float(l2_norm({})) == 0.0


@pytest.mark.parametrize("max_norm", [1.0, 5.0, 20.0])
def test_clip_grads_scales_to_the_global_norm(rng, max_norm):
    tree = {"a": rng.standard_normal((2, 3)).astype(np.float32), "b": [rng.standard_normal(4).astype(np.float32)]}
    norm = np.sqrt(sum(np.sum(np.square(np.float64(x))) for x in tree_leaves(tree)))
    assert 1.0 < norm < 20.0  # so max_norm 1 clips and 20 leaves the tree alone
    scale = 1.0 if norm < max_norm else max_norm / norm
    for clip in (clip_grads, core.jit(clip_grads, static_argnums=1)):
        out = clip(_to_core(tree), max_norm)
        assert tree_structure(out) == tree_structure(tree)
        for got, x in zip(tree_leaves(out), tree_leaves(tree), strict=True):
            tu.assert_allclose(got, np.float64(x) * scale, np.float32)
        tu.assert_allclose(l2_norm(out), min(norm, max_norm), np.float32)


# ----- skip_nonfinite ------------------------------------------------------------------------------

def test_skip_nonfinite_under_jit(rng):
    params = {"w": rng.standard_normal((2, 3)).astype(np.float32), "b": rng.standard_normal(3).astype(np.float32)}
    grads = [_like(params, rng) for _ in range(5)]
    grads[1] = {"w": grads[1]["w"].at[0, 1].set(np.nan), "b": grads[1]["b"]}
    grads[2] = {"w": grads[2]["w"], "b": grads[2]["b"].at[2].set(-np.inf)}
    opt = skip_nonfinite(heavy_ball(lambda i: 0.1 / (1 + i), 0.9))
    step = core.jit(opt.update_fn)
    state = opt.init_fn(_to_core(params))
    skipped, consecutive = [], []
    for i, g in enumerate(grads):
        before = state
        state = step(np.int32(i), g, state)
        assert isinstance(state, SkipNonfiniteState)
        skipped.append(int(state.num_skipped))
        consecutive.append(int(state.consecutive_skipped))
        if i in (1, 2):  # nothing of the inner state moves, bit for bit
            _assert_trees_identical(state.inner_state, before.inner_state)
    assert skipped == [0, 1, 2, 2, 2]
    assert consecutive == [0, 1, 2, 0, 0]
    assert state.num_skipped.dtype == np.int32
    applied = [0, 3, 4]  # the step index is forwarded unchanged
    for name in params:
        expected = _np_heavy_ball(params[name], [(np.asarray(grads[i][name], np.float64), i) for i in applied],
                                  lambda i: 0.1 / (1 + i), 0.9)
        tu.assert_allclose(opt.params_fn(state)[name], expected, np.float32, atol=1e-6)


def test_skip_nonfinite_eager_matches_jit():
    opt = skip_nonfinite(adagrad_tuple(0.5))
    params = {"w": jnp.array([1.0, -2.0])}
    eager = opt.init_fn(params)
    jitted = opt.init_fn(params)
    for i, g in enumerate([jnp.array([1.0, 1.0]), jnp.array([np.nan, 1.0]), jnp.array([2.0, -1.0])]):
        eager = opt.update_fn(i, {"w": g}, eager)
        jitted = core.jit(opt.update_fn)(i, {"w": g}, jitted)
    assert tree_structure(eager) == tree_structure(jitted)
    for a, b in zip(tree_leaves(eager), tree_leaves(jitted), strict=True):
        tu.assert_allclose(a, np.asarray(b), np.asarray(b).dtype)
    # AdaGrad by hand over the two finite gradients: g_sq = [5, 2]
    w = np.array([1.0, -2.0]) - 0.5 * np.array([1.0, 1.0]) / (np.sqrt([1.0, 1.0]) + 1e-7)
    w = w - 0.5 * np.array([2.0, -1.0]) / (np.sqrt([5.0, 2.0]) + 1e-7)
    tu.assert_allclose(opt.params_fn(eager)["w"], w, np.float32)
    assert int(eager.num_skipped) == 1 and int(eager.consecutive_skipped) == 0


def test_skip_nonfinite_rejects_a_mismatched_gradient_tree():
    opt = skip_nonfinite(decaying_sgd(0.1))
    state = opt.init_fn({"w": jnp.ones(2)})
    with pytest.raises(TypeError, match=r"gradient tree that did not match the parameter tree"):
        opt.update_fn(0, {"v": jnp.ones(2)}, state)


# ----- accumulate_gradients ------------------------------------------------------------------------

def test_accumulate_gradients_averages_every_k_under_jit(rng):
    params = {"w": rng.standard_normal(3).astype(np.float32), "b": rng.standard_normal((2, 2)).astype(np.float32)}
    grads = [_like(params, rng) for _ in range(6)]
    opt = accumulate_gradients(decaying_sgd(0.3), every_k=3)
    step = core.jit(opt.update_fn)
    state = opt.init_fn(_to_core(params))
    expected = {k: np.float64(v) for k, v in params.items()}
    for call, g in enumerate(grads):
        state = step(np.int32(1000 + call), g, state)  # the caller's step is not the inner step
        assert isinstance(state, AccumulateGradientsState)
        assert int(state.micro_step) == (call + 1) % 3
        assert int(state.num_updates) == (call + 1) // 3
        if call % 3 == 2:
            inner_step = call // 3
            for k in params:
                mean = np.mean([np.float64(grads[j][k]) for j in range(call - 2, call + 1)], axis=0)
                expected[k] = expected[k] - 0.3 / (1 + inner_step) * mean
                tu.assert_allclose(state.grad_sum[k], np.zeros(params[k].shape), np.float32)
        else:
            for k in params:
                partial = sum(np.float64(grads[j][k]) for j in range(call - call % 3, call + 1))
                tu.assert_allclose(state.grad_sum[k], partial, np.float32)
        for k in params:
            tu.assert_allclose(opt.params_fn(state)[k], expected[k], np.float32, atol=1e-6)


def test_accumulate_gradients_eager_matches_jit_with_a_namedtuple_state():
    opt = accumulate_gradients(heavy_ball(0.1, 0.5), every_k=2)
    grads = [jnp.array([1.0, 2.0]), jnp.array([3.0, -2.0]), jnp.array([0.5, 0.5]), jnp.array([1.5, 0.5])]
    eager = opt.init_fn(jnp.array([0.0, 1.0]))
    jitted = eager
    for i, g in enumerate(grads):
        eager = opt.update_fn(i, g, eager)
        jitted = core.jit(opt.update_fn)(i, g, jitted)
    assert tree_structure(eager) == tree_structure(jitted)
    for a, b in zip(tree_leaves(eager), tree_leaves(jitted), strict=True):
        tu.assert_allclose(a, np.asarray(b), np.asarray(b).dtype)
    expected = _np_heavy_ball([0.0, 1.0], [(np.array([2.0, 0.0]), 0), (np.array([1.0, 0.5]), 1)], 0.1, 0.5)
    tu.assert_allclose(opt.params_fn(eager), expected, np.float32)


def test_accumulate_gradients_every_1_is_the_inner_optimizer():
    inner = heavy_ball(0.1, 0.9)
    opt = accumulate_gradients(inner, every_k=1)
    s, t = opt.init_fn(jnp.array([1.0])), inner.init_fn(jnp.array([1.0]))
    for i, g in enumerate([2.0, -1.0]):
        s = opt.update_fn(i, jnp.array([g]), s)
        t = inner.update_fn(i, jnp.array([g]), t)
    tu.assert_allclose(opt.params_fn(s), np.asarray(inner.params_fn(t)), np.float32)


def test_skip_nonfinite_around_accumulate_gradients_keeps_nan_out_of_the_sum():
    opt = skip_nonfinite(accumulate_gradients(decaying_sgd(1.0), every_k=2))
    step = core.jit(opt.update_fn)
    state = opt.init_fn(jnp.array([0.0, 0.0]))
    for i, g in enumerate([[1.0, 2.0], [np.nan, 0.0], [3.0, 4.0]]):
        state = step(np.int32(i), jnp.array(g, np.float32), state)
    tu.assert_allclose(opt.params_fn(state), np.array([-2.0, -3.0]), np.float32)
    assert int(state.num_skipped) == 1 and int(state.inner_state.num_updates) == 1


def test_accumulate_gradients_errors():
    for bad in (0, -2, 2.5, True, "3"):
        with pytest.raises(ValueError, match=r"accumulate_gradients requires a positive integer every_k, got every_k="):
            accumulate_gradients(decaying_sgd(0.1), bad)
    opt = accumulate_gradients(decaying_sgd(0.1), 2)
    state = opt.init_fn({"w": jnp.ones(2)})
    with pytest.raises(TypeError, match=r"did not match the parameter tree structure .*parameter tree "
                                        r"PyTreeDef\(\{'w': \*\}\) and grad tree PyTreeDef\(\[\*\]\)"):
        opt.update_fn(0, [jnp.ones(2)], state)


# ----- pack / unpack -------------------------------------------------------------------------------

def _roundtrip(state):
    """pack -> json text and an .npz file in memory -> unpack."""
    arrays, structure = optimizer_state_to_arrays(state)
    assert all(isinstance(a, np.ndarray) for a in arrays)
    text = json.dumps(structure)
    buf = io.BytesIO()
    np.savez(buf, *arrays)
    buf.seek(0)
    with np.load(buf) as npz:
        loaded = [npz[f"arr_{i}"] for i in range(len(npz.files))]
    return optimizer_state_from_arrays(loaded, json.loads(text))


@pytest.mark.parametrize("make_opt", [lambda: heavy_ball(0.1, 0.9), lambda: adagrad_tuple(0.2),
                                      lambda: decaying_sgd(0.5)], ids=["namedtuple", "tuple", "bare_array"])
def test_pack_unpack_roundtrip_then_update(rng, make_opt):
    opt = make_opt()
    params = _params(rng)
    step = core.jit(opt.update_fn)
    state = opt.init_fn(_to_core(params))
    for i in range(2):
        state = step(np.int32(i), _like(params, rng), state)
    back = _roundtrip(state)
    assert isinstance(back, OptimizerState)
    assert back.tree_def == state.tree_def and back.subtree_defs == state.subtree_defs
    _assert_trees_identical(back, state)
    g = _like(params, rng)
    _assert_trees_identical(opt.params_fn(step(np.int32(2), g, back)), opt.params_fn(step(np.int32(2), g, state)))
    _assert_trees_identical(opt.params_fn(back), opt.params_fn(state))


def test_pack_structure_is_plain_json_data(rng):
    state = heavy_ball(0.1, 0.9).init_fn({"w": jnp.ones((2,)), "b": [jnp.zeros(()), None]})
    arrays, structure = optimizer_state_to_arrays(state)
    assert json.loads(json.dumps(structure)) == structure
    tree = structure["tree"]
    assert tree["node"] == "optimizer_state"
    assert tree["params"] == {"node": "dict", "keys": ["b", "w"], "children": [
        {"node": "list", "children": [{"node": "param"}, {"node": "None"}]}, {"node": "param"}]}
    first = tree["states"][0]
    assert first["node"] == "namedtuple" and first["fields"] == ["x", "velocity"]
    assert first["type"].endswith(":HeavyBallState")
    assert [a.shape for a in arrays] == [(), (), (2,), (2,)]


def test_pack_unpack_wrapper_states(rng):
    opt = skip_nonfinite(accumulate_gradients(heavy_ball(0.1, 0.9), every_k=2))
    params = _params(rng)
    step = core.jit(opt.update_fn)
    state = opt.init_fn(_to_core(params))
    for i in range(3):
        state = step(np.int32(i), _like(params, rng), state)
    back = _roundtrip(state)
    assert type(back) is SkipNonfiniteState and type(back.inner_state) is AccumulateGradientsState
    _assert_trees_identical(back, state)
    g = _like(params, rng)
    _assert_trees_identical(step(np.int32(3), g, back), step(np.int32(3), g, state))


def test_pack_unpack_keeps_leaf_types_and_dtypes():
    @optimizer
    def mixed():
        def init(x0):
            return {"bf16": x0.astype(jnp.bfloat16), "f16": x0.astype(jnp.float16), "count": jnp.zeros((), jnp.int32),
                    "mask": x0 > 0, "shape": tuple(x0.shape), "scale": 0.1, "flag": True,
                    "host": np.arange(3, dtype=np.int64), "host_scalar": np.float32(2.5), "none": None}
        return init, lambda i, g, s: s, lambda s: s["f16"]

    state = mixed().init_fn([jnp.array([1.5, -2.25, 3.0]), jnp.zeros((2, 0))])
    back = _roundtrip(state)
    _assert_trees_identical(back, state)
    per_array = core.tree_util.tree_unflatten(back.subtree_defs[0], back.packed_state[0])
    assert per_array["shape"] == (3,) and type(per_array["shape"][0]) is int
    assert per_array["bf16"].dtype == jnp.bfloat16 and isinstance(per_array["bf16"], core.Array)
    assert type(per_array["host"]) is np.ndarray and per_array["host"].dtype == np.int64
    assert type(per_array["host_scalar"]) is np.float32 and per_array["scale"] == 0.1


def test_unpack_finds_local_namedtuples_only_when_registered():
    class LocalState(NamedTuple):
        x: object
        n: object

    @optimizer
    def local_opt():
        return (lambda x0: LocalState(x0, jnp.zeros((), jnp.int32)),
                lambda i, g, s: LocalState(s.x - g, s.n + 1), lambda s: s.x)

    opt = local_opt()
    state = opt.update_fn(0, jnp.ones(2), opt.init_fn(jnp.zeros(2)))
    arrays, structure = optimizer_state_to_arrays(state)
    with pytest.raises(TypeError, match=r"cannot find the NamedTuple type '.*LocalState' \(fields \['x', 'n'\]\).*"
                                        r"register_state_type"):
        optimizer_state_from_arrays(arrays, structure)
    assert register_state_type(LocalState) is LocalState
    back = optimizer_state_from_arrays(arrays, json.loads(json.dumps(structure)))
    _assert_trees_identical(back, state)
    _assert_trees_identical(opt.update_fn(1, jnp.ones(2), back), opt.update_fn(1, jnp.ones(2), state))


def test_unpack_errors(rng):
    state = heavy_ball(0.1, 0.9).init_fn({"w": jnp.ones((2,))})
    arrays, structure = optimizer_state_to_arrays(state)
    with pytest.raises(ValueError, match=r"refers to array 1, but only 1 arrays were given"):
        optimizer_state_from_arrays(arrays[:1], structure)
    with pytest.raises(ValueError, match=r"array 0 has shape \(3,\), the structure expects \(2,\)"):
        optimizer_state_from_arrays([np.ones(3, np.float32), arrays[1]], structure)
    with pytest.raises(ValueError, match=r"array 0 has dtype int32, the structure expects float32"):
        optimizer_state_from_arrays([np.ones(2, np.int32), arrays[1]], structure)
    with pytest.raises(ValueError, match=r"expects the structure returned by optimizer_state_to_arrays"):
        optimizer_state_from_arrays(arrays, {"tree": structure["tree"]})
    renamed = json.loads(json.dumps(structure))
    renamed["tree"]["states"][0]["fields"] = ["x", "momentum"]
    with pytest.raises(TypeError, match=r"found the NamedTuple type '.*HeavyBallState' with fields "
                                        r"\['x', 'velocity'\], but the saved state has fields \['x', 'momentum'\]"):
        optimizer_state_from_arrays(arrays, renamed)


def test_pack_errors_name_the_node():
    params = {"layers": collections.OrderedDict(a=jnp.ones(2))}
    state = decaying_sgd(0.1).init_fn(params)
    with pytest.raises(TypeError, match=r"cannot describe the pytree node type collections.OrderedDict at "
                                        r"opt_state.tree_def\['layers'\]: only dict, list, tuple, None and NamedTuple"):
        optimizer_state_to_arrays(state)
    with pytest.raises(TypeError, match=r"only save dict keys that are str or int, got key \(1, 2\) of type tuple"):
        optimizer_state_to_arrays(decaying_sgd(0.1).init_fn({(1, 2): jnp.ones(2)}))
    with pytest.raises(TypeError, match=r"register_state_type expects a NamedTuple type, got <class 'dict'>"):
        register_state_type(dict)


def test_pack_inside_jit_is_an_error():
    opt = decaying_sgd(0.1)
    with pytest.raises(TypeError, match=r"cannot turn the leaf at opt_state.packed_state\[0\] .*into a NumPy "
                                        r"array; pack a concrete state, outside jit"):
        core.jit(lambda p: optimizer_state_to_arrays(opt.init_fn(p))[0][0])(jnp.ones(2))


ALL_OPTIMIZERS = ["sgd", "momentum", "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamw", "adamax",
                  "sm3", "lamb", "lion"]


@pytest.mark.parametrize("name", ALL_OPTIMIZERS)
def test_pack_unpack_every_optimizer(rng, name):
    from optim import optimizers
    params = _params(rng)
    make = getattr(optimizers, name)
    for opt in ((make(0.01, 0.9),) if name in ("momentum", "nesterov") else (make(0.01),)):
        step = core.jit(opt.update_fn)
        state = opt.init_fn(_to_core(params))
        for i in range(2):
            state = step(np.int32(i), _like(params, rng), state)
        back = _roundtrip(state)
        _assert_trees_identical(back, state)
        g = _like(params, rng)
        _assert_trees_identical(step(np.int32(2), g, back), step(np.int32(2), g, state))


def test_module_docstrings_run():
    result = doctest.testmod(utils)
    assert result.attempted > 0 and result.failed == 0

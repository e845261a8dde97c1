"""jit's pytree fast path (core/api.py, `_JitFunction._tree_call`): a call whose arguments are
pytrees of Arrays, donated or not, runs a remembered executable without the general path's
flattening, trace-cache lookup and dispatch. These tests count the general path's lookups and
check that every answer (values, output structure, donation, errors) is the general path's."""
import numpy as np
import pytest

import core
import core.numpy as jnp
import optim
from core import api
from core.tree_util import tree_leaves, tree_structure


@pytest.fixture
def lookups(monkeypatch):
    """Counts the general path's trace-cache lookups."""
    counter = {"n": 0}
    original = api._JitFunction._lookup

    def counting(self, args, kwargs):
        counter["n"] += 1
        return original(self, args, kwargs)

    monkeypatch.setattr(api._JitFunction, "_lookup", counting)
    return counter


def _state(scale=1.0):
    return {"w": jnp.arange(6.0).reshape(2, 3) * scale, "b": (jnp.ones(3), None), "step": jnp.array(0)}


def _update(state, batch):
    w = state["w"] + batch["x"].sum() * state["b"][0]
    return {"w": w, "b": (state["b"][0] * 2.0, None), "step": state["step"] + 1}, {"loss": jnp.sum(w)}


def _reference(state, x):
    w = np.asarray(state["w"]) + np.asarray(x).sum() * np.asarray(state["b"][0])
    return w, np.asarray(state["b"][0]) * 2.0, int(state["step"]) + 1


def test_repeated_calls_with_pytrees_skip_the_general_path(lookups):
    step = core.jit(_update)
    state = _state()
    for i in range(5):
        x = jnp.full((4,), float(i))
        expected = _reference(state, x)
        state, metrics = step(state, {"x": x})
        np.testing.assert_array_equal(np.asarray(state["w"]), expected[0])
        np.testing.assert_array_equal(np.asarray(state["b"][0]), expected[1])
        assert int(state["step"]) == expected[2]
        assert state["b"][1] is None
        assert float(metrics["loss"]) == pytest.approx(expected[0].sum())
    # the first call traces, the second remembers nothing new, the rest are served fast
    assert lookups["n"] == 1
    assert tree_structure(state) == tree_structure(_state())


def test_donated_state_is_deleted_and_the_result_equals_the_undonated_one(lookups):
    plain, donating = core.jit(_update), core.jit(_update, donate_argnums=0)
    a, b = _state(), _state()
    for i in range(4):
        x = jnp.full((4,), float(i))
        a, _ = plain(a, {"x": x})
        old = b
        b, _ = donating(b, {"x": x})
        assert all(leaf.is_deleted() for leaf in tree_leaves(old))   # donated, as on the general path
    for u, v in zip(tree_leaves(a), tree_leaves(b)):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))
    assert lookups["n"] == 2   # one trace per function


def test_donating_a_deleted_array_is_the_general_paths_error(lookups):
    step = core.jit(_update, donate_argnums=0)
    state = _state()
    x = {"x": jnp.ones(4)}
    step(_state(), x)            # remember the signature
    step(state, x)               # donates `state`
    with pytest.raises(RuntimeError, match="deleted|donated"):
        step(state, x)


def test_a_cached_buffer_is_never_donated_away(lookups):
    """`jnp.zeros(())` may be a cached scalar: the fast path leaves it to the general path, which
    donates a copy (docs/design.md, "Donation and shared buffers")."""
    step = core.jit(lambda s: {"v": s["v"] + 1.0}, donate_argnums=0)
    step({"v": jnp.array(5.0)})            # remember
    cached = core.array.scalar_array(0.0)
    assert core.array.is_cached_buffer(cached._buf)
    out = step({"v": cached})
    assert float(out["v"]) == 1.0
    assert not cached.is_deleted() and float(cached) == 0.0


def test_the_same_buffer_twice_with_donation_is_an_error(lookups):
    step = core.jit(lambda s, t: {"v": s["v"] + t}, donate_argnums=0)
    step({"v": jnp.ones(3)}, jnp.ones(3))   # remember
    x = jnp.ones(3)
    with pytest.raises(RuntimeError, match="passed both as a donated"):
        step({"v": x}, x)


def test_optimizer_states_take_the_fast_path(lookups):
    """A custom pytree node (optim's OptimizerState) flattens in C++ as in tree_util."""
    init, update, get_params = optim.adam(0.1)
    step = core.jit(lambda i, s: update(i, get_params(s), s), donate_argnums=1)
    general = core.jit(lambda i, s: update(i, get_params(s), s), donate_argnums=1)
    general._tree_fast = None   # this one always takes the general path
    s, r = (init({"w": jnp.ones((2, 2)), "b": jnp.zeros(2)}) for _ in range(2))
    for i in range(4):
        s = step(jnp.array(i), s)
        r = general(jnp.array(i), r)
    for u, v in zip(tree_leaves(get_params(s)), tree_leaves(get_params(r))):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))
    assert lookups["n"] == 1 + 4


def test_what_the_key_does_not_cover_takes_the_general_path(lookups):
    step = core.jit(_update)
    step(_state(), {"x": jnp.ones(4)})
    n = lookups["n"]
    step(_state(), {"x": np.ones(4, np.float32)})      # a NumPy leaf
    step(_state(), {"x": core.device_put(jnp.ones(4), core.devices()[0])})   # a committed Array
    assert lookups["n"] == n + 2
    out, _ = step(_state(), {"x": jnp.ones((4,), jnp.int32)})   # another dtype: a new trace
    assert out["w"].dtype == jnp.float32


def test_a_config_change_forgets_the_remembered_executables(lookups):
    step = core.jit(_update)
    step(_state(), {"x": jnp.ones(4)})
    step(_state(), {"x": jnp.ones(4)})
    n = lookups["n"]
    with core.disable_jit():
        out, _ = step(_state(), {"x": jnp.ones(4)})
    assert lookups["n"] == n                   # disable_jit runs the function itself
    core.config.update("debug_nans", True)
    try:
        step(_state(), {"x": jnp.ones(4)})
    finally:
        core.config.update("debug_nans", False)
    assert lookups["n"] == n + 1               # debug_nans: never the fast path
    step(_state(), {"x": jnp.ones(4)})         # a new config token: remembered again
    step(_state(), {"x": jnp.ones(4)})
    assert lookups["n"] == n + 2


def test_outputs_built_in_c_are_the_arrays_python_builds():
    """The fast paths wrap output buffers with `_jitfast.wrap_arrays` when the extension has it:
    each Array has the buffer, the aval, no host copy, no device commitment and the fast-path key
    that `Array(buf, aval)` gives, and behaves the same."""
    from core.array import Array
    x = jnp.arange(3.0)
    bufs = [(x + 1)._buf, (x * 2)._buf]
    avals = [x.aval, x.aval]
    built, reference = api._wrap_arrays(bufs, avals), [Array(b, av) for b, av in zip(bufs, avals)]
    for a, r in zip(built, reference):
        assert type(a) is Array and a._buf is r._buf and a.aval is r.aval
        assert a._npy is None and a._device is None and not a.committed and a._fkey == r._fkey
        np.testing.assert_array_equal(np.asarray(a), np.asarray(r))
    if getattr(api, "_jitfast", None) is not None and hasattr(api._jitfast, "wrap_arrays"):
        assert api._wrap_arrays is api._jitfast.wrap_arrays
        with pytest.raises(ValueError, match="fewer avals than buffers"):
            api._wrap_arrays(bufs, avals[:1])

"""optim/base.py: minmax's `unpack_optimizer_state` / `pack_optimizer_state` pair. The marked tree is
the parameter tree with a `JoinPoint(per-array state)` at each parameter leaf (as minmax documents);
pack inverts it exactly (structures and leaves), the packed state keeps training to the values of a
NumPy float64 run, and the marked tree survives pickle. Also the issue 16 item 5 program for optim: a
minmax-style program, rewritten only in its imports."""
import pickle

import numpy as np
import pytest

import core
import core.numpy as jnp
from core.tree_util import tree_flatten, tree_leaves, tree_structure
from optim import JoinPoint, MomentumState, OptimizerState, adam, momentum, pack_optimizer_state, \
    unpack_optimizer_state
from optim.utils import skip_nonfinite
from jax_port import port  # tests/ is on sys.path


def _params():
    return {"w": jnp.array([[1.0, -2.0], [0.5, 3.0]]), "layers": [jnp.array([0.25, -0.75]), None],
            "b": jnp.array(1.5)}


def _assert_identical(a, b):
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb, strict=True):
        assert np.asarray(x).dtype == np.asarray(y).dtype
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_unpacked_state_is_the_parameter_tree_with_join_points():
    params = _params()
    state = momentum(0.1, 0.9).init_fn(params)
    marked = unpack_optimizer_state(state)
    marks, treedef = tree_flatten(marked)
    # JoinPoint is a leaf to tree_util, and the marked tree has the parameters' structure
    assert treedef == tree_structure(params) and len(marks) == 3
    assert all(type(m) is JoinPoint for m in marks)
    assert set(marked) == {"w", "layers", "b"} and marked["layers"][1] is None
    w_state = marked["w"].subtree
    assert type(w_state) is MomentumState
    np.testing.assert_array_equal(np.asarray(w_state.x), [[1.0, -2.0], [0.5, 3.0]])
    np.testing.assert_array_equal(np.asarray(w_state.velocity), np.zeros((2, 2)))
    (same,) = marked["b"]  # iterable like minmax's JoinPoint
    assert float(same.x) == 1.5


def test_pack_inverts_unpack_and_training_continues():
    init, update, get_params = momentum(0.1, 0.9)
    grad = core.jit(core.grad(lambda p: sum(jnp.sum(x * x) for x in tree_leaves(p))))
    step = core.jit(lambda i, s: update(i, grad(get_params(s)), s))
    state = step(0, step(0, init(_params())))
    back = pack_optimizer_state(unpack_optimizer_state(state))
    assert isinstance(back, OptimizerState)
    assert back.tree_def == state.tree_def and back.subtree_defs == state.subtree_defs
    _assert_identical(back, state)
    # the jitted step accepts the packed state without retracing to a new structure
    _assert_identical(get_params(step(2, back)), get_params(step(2, state)))
    # NumPy float64 oracle: 3 momentum steps on sum(x^2) (gradient 2x): v = 0.9 v + g, x -= 0.1 v
    x, v = np.array([0.25, -0.75]), np.zeros(2)
    for _ in range(3):
        v = 0.9 * v + 2 * x
        x = x - 0.1 * v
    np.testing.assert_allclose(np.asarray(get_params(step(2, back))["layers"][0]), x, rtol=1e-6)


def test_marked_tree_survives_pickle():
    init, update, get_params = adam(0.05)
    state = update(0, {"w": jnp.ones(3)}, init({"w": jnp.array([1.0, 2.0, 3.0])}))
    restored = pack_optimizer_state(pickle.loads(pickle.dumps(unpack_optimizer_state(state))))
    _assert_identical(restored, state)
    _assert_identical(update(1, {"w": jnp.ones(3)}, restored), update(1, {"w": jnp.ones(3)}, state))


def test_errors_name_the_problem():
    wrapped = skip_nonfinite(momentum(0.1, 0.9)).init_fn({"w": jnp.ones(2)})
    with pytest.raises(TypeError, match=r"unpack_optimizer_state expects an OptimizerState .*got "
                                        r"SkipNonfiniteState.*unpack that field"):
        unpack_optimizer_state(wrapped)
    marked = unpack_optimizer_state(wrapped.inner_state)
    marked["v"] = jnp.zeros(2)
    with pytest.raises(TypeError, match=r"every leaf is a JoinPoint .*the leaf at \['v'\] is a Array"):
        pack_optimizer_state(marked)


PROGRAM = '''
import pickle

import jax
import jax.numpy as jnp
from jax.example_libraries import optimizers


def loss(params, x, y):
    w, b = params
    return jnp.mean((x @ w + b - y) ** 2)


opt_init, opt_update, get_params = optimizers.momentum(step_size=0.1, mass=0.9)


@jax.jit
def step(i, opt_state, x, y):
    return opt_update(i, jax.grad(loss)(get_params(opt_state), x, y), opt_state)


def train(params, x, y, steps, checkpoint_at):
    opt_state = opt_init(params)
    for i in range(steps):
        if i == checkpoint_at:   # save and restore, as a minmax user does with pickle
            blob = pickle.dumps(optimizers.unpack_optimizer_state(opt_state))
            opt_state = optimizers.pack_optimizer_state(pickle.loads(blob))
        opt_state = step(i, opt_state, x, y)
    return get_params(opt_state)
'''


def test_minmax_style_program_with_checkpoint_matches_numpy():
    namespace = {}
    exec(compile(port(PROGRAM), "<minmax-style program>", "exec"), namespace)
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], np.float32)
    y = np.array([1.0, -1.0, 0.5], np.float32)
    w, b = namespace["train"]((jnp.zeros(2), jnp.array(0.0)), jnp.asarray(x), jnp.asarray(y), 5, checkpoint_at=2)
    # NumPy float64 oracle: momentum on the mean squared error
    pw, pb, vw, vb = np.zeros(2), 0.0, np.zeros(2), 0.0
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    for _ in range(5):
        r = x64 @ pw + pb - y64
        gw, gb = 2 * x64.T @ r / 3, 2 * r.mean()
        vw, vb = 0.9 * vw + gw, 0.9 * vb + gb
        pw, pb = pw - 0.1 * vw, pb - 0.1 * vb
    np.testing.assert_allclose(np.asarray(w), pw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(b), pb, rtol=1e-5, atol=1e-6)

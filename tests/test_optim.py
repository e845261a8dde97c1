"""optim/optimizers.py against NumPy float64 implementations of each published update (written
here, independently of the code under test), the contract invariants of optim/base.py
(`get_params(init(p)) == p`, a fixed state structure, docs/reliability.md F23/F24), and convergence on a
quadratic, eagerly and under jit."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core import test_util as tu
from core.tree_util import tree_leaves, tree_map, tree_structure, tree_unflatten
from optim import optimizer
from optim import optimizers as opt

F32 = np.float32


# ----- NumPy oracles: one (init, update) pair per optimizer, on float64 arrays ----------------------
# State is a dict; `i` is the 0-based step; `t = i + 1` in bias corrections (JAX's convention).

def np_sgd(lr):
    return (lambda x: {"x": x},
            lambda i, g, s: {"x": s["x"] - lr(i) * g})


def np_momentum(lr, mass):
    def update(i, g, s):
        v = mass * s["v"] + g
        return {"x": s["x"] - lr(i) * v, "v": v}
    return (lambda x: {"x": x, "v": np.zeros_like(x)}), update


def np_nesterov(lr, mass):
    def update(i, g, s):
        v = mass * s["v"] + g
        return {"x": s["x"] - lr(i) * (g + mass * v), "v": v}
    return (lambda x: {"x": x, "v": np.zeros_like(x)}), update


def np_adagrad(lr, momentum=0.9):
    def update(i, g, s):
        G = s["G"] + g * g
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = np.where(G > 0, g / np.sqrt(G), 0.0)
        m = momentum * s["m"] + (1 - momentum) * scaled
        return {"x": s["x"] - lr(i) * m, "G": G, "m": m}
    return (lambda x: {"x": x, "G": np.zeros_like(x), "m": np.zeros_like(x)}), update


def np_rmsprop(lr, gamma=0.9, eps=1e-8):
    def update(i, g, s):
        r = gamma * s["r"] + (1 - gamma) * g * g
        return {"x": s["x"] - lr(i) * g / np.sqrt(r + eps), "r": r}
    return (lambda x: {"x": x, "r": np.zeros_like(x)}), update


def np_rmsprop_momentum(lr, gamma=0.9, eps=1e-8, momentum=0.9):
    def update(i, g, s):
        r = gamma * s["r"] + (1 - gamma) * g * g
        mom = momentum * s["mom"] + lr(i) * g / np.sqrt(r + eps)
        return {"x": s["x"] - mom, "r": r, "mom": mom}
    return (lambda x: {"x": x, "r": np.zeros_like(x), "mom": np.zeros_like(x)}), update


def _np_adam_direction(i, g, s, b1, b2, eps):
    t = i + 1
    m = b1 * s["m"] + (1 - b1) * g
    v = b2 * s["v"] + (1 - b2) * g * g
    return m, v, (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)


def np_adam(lr, b1=0.9, b2=0.999, eps=1e-8):
    def update(i, g, s):
        m, v, d = _np_adam_direction(i, g, s, b1, b2, eps)
        return {"x": s["x"] - lr(i) * d, "m": m, "v": v}
    return (lambda x: {"x": x, "m": np.zeros_like(x), "v": np.zeros_like(x)}), update


def np_adamw(lr, b1=0.9, b2=0.999, eps=1e-8, weight_decay=1e-2):
    def update(i, g, s):
        m, v, d = _np_adam_direction(i, g, s, b1, b2, eps)
        return {"x": s["x"] - lr(i) * d - lr(i) * weight_decay * s["x"], "m": m, "v": v}
    return (lambda x: {"x": x, "m": np.zeros_like(x), "v": np.zeros_like(x)}), update


def np_adamax(lr, b1=0.9, b2=0.999, eps=1e-8):
    def update(i, g, s):
        m = b1 * s["m"] + (1 - b1) * g
        u = np.maximum(b2 * s["u"], np.abs(g))
        return {"x": s["x"] - lr(i) / (1 - b1 ** (i + 1)) * m / (u + eps), "m": m, "u": u}
    return (lambda x: {"x": x, "m": np.zeros_like(x), "u": np.zeros_like(x)}), update


def np_sm3(lr, momentum=0.9):
    # Written with explicit index loops (the paper's cover sets: one row/column/... per accumulator
    # entry), so it shares no vectorised trick with the implementation.
    def init(x):
        return {"x": x, "m": np.zeros_like(x), "vs": [np.zeros(n) for n in (x.shape or (1,))]}

    def update(i, g, s):
        g1 = g.reshape(g.shape or (1,))
        nu = np.empty_like(g1)
        for idx in np.ndindex(g1.shape):
            nu[idx] = min(v[k] for v, k in zip(s["vs"], idx)) + g1[idx] ** 2
        vs = [np.full(n, -np.inf) for n in g1.shape]
        for idx in np.ndindex(g1.shape):
            for r, k in enumerate(idx):
                vs[r][k] = max(vs[r][k], nu[idx])
        scaled = np.where(nu > 0, g1 / np.sqrt(np.where(nu > 0, nu, 1.0)), 0.0).reshape(g.shape)
        m = momentum * s["m"] + (1 - momentum) * scaled
        return {"x": s["x"] - lr(i) * m, "m": m, "vs": vs}
    return init, update


def np_lamb(lr, b1=0.9, b2=0.999, eps=1e-6, weight_decay=0.0):
    def update(i, g, s):
        m, v, d = _np_adam_direction(i, g, s, b1, b2, eps)
        r = d + weight_decay * s["x"]
        wn, rn = np.linalg.norm(s["x"].ravel()), np.linalg.norm(r.ravel())
        ratio = wn / rn if (wn > 0 and rn > 0) else 1.0
        return {"x": s["x"] - lr(i) * ratio * r, "m": m, "v": v}
    return (lambda x: {"x": x, "m": np.zeros_like(x), "v": np.zeros_like(x)}), update


def np_lion(lr, b1=0.9, b2=0.99, weight_decay=0.0):
    def update(i, g, s):
        c = b1 * s["m"] + (1 - b1) * g
        x = s["x"] - lr(i) * (np.sign(c) + weight_decay * s["x"])
        return {"x": x, "m": b2 * s["m"] + (1 - b2) * g}
    return (lambda x: {"x": x, "m": np.zeros_like(x)}), update


# (name, our constructor, oracle, positional args, keyword args, convergence settings)
# The value test uses non-default hyperparameters where a default would hide a swapped argument.
CASES = [
    ("sgd", opt.sgd, np_sgd, (0.1,), {}, dict(lr=0.1, steps=100)),
    ("momentum", opt.momentum, np_momentum, (0.1, 0.8), {}, dict(lr=0.05, args=(0.9,), steps=200)),
    ("nesterov", opt.nesterov, np_nesterov, (0.1, 0.8), {}, dict(lr=0.05, args=(0.9,), steps=200)),
    ("adagrad", opt.adagrad, np_adagrad, (0.1,), dict(momentum=0.7), dict(lr=1.0, steps=300)),
    ("rmsprop", opt.rmsprop, np_rmsprop, (0.01,), dict(gamma=0.8, eps=1e-6), dict(lr=0.02, steps=300)),
    ("rmsprop_momentum", opt.rmsprop_momentum, np_rmsprop_momentum, (0.01,),
     dict(gamma=0.8, eps=1e-6, momentum=0.7), dict(lr=0.005, steps=300)),
    ("adam", opt.adam, np_adam, (0.01,), dict(b1=0.8, b2=0.99, eps=1e-6), dict(lr=0.05, steps=300)),
    ("adamw", opt.adamw, np_adamw, (0.01,), dict(b1=0.8, b2=0.99, eps=1e-6, weight_decay=0.1),
     dict(lr=0.05, steps=300)),
    ("adamax", opt.adamax, np_adamax, (0.01,), dict(b1=0.8, b2=0.99, eps=1e-6), dict(lr=0.05, steps=300)),
    ("sm3", opt.sm3, np_sm3, (0.1,), dict(momentum=0.7), dict(lr=1.0, steps=300)),
    ("lamb", opt.lamb, np_lamb, (0.01,), dict(b1=0.8, b2=0.99, eps=1e-5, weight_decay=0.1),
     dict(lr=0.01, steps=300, same_sign=True)),
    ("lion", opt.lion, np_lion, (0.01,), dict(b1=0.8, b2=0.95, weight_decay=0.1), dict(lr=0.01, steps=300)),
]
IDS = [c[0] for c in CASES]


def _params(rng):
    return {"w": rng.uniform(-1, 1, (3, 2)).astype(F32), "b": rng.uniform(-1, 1, (2,)).astype(F32),
            "s": np.asarray(rng.uniform(-1, 1), F32)}


def _grads(rng, params, k):
    gs = [tree_map(lambda p: rng.uniform(-2, 2, np.shape(p)).astype(F32), params) for _ in range(k)]
    gs[0]["w"][0, 0] = 0.0  # a zero first gradient: Adagrad/SM3 must not divide by zero there
    return gs


def _np_run(np_maker, args, kwargs, params, grads, schedule=None):
    lr = schedule if schedule is not None else (lambda i, c=args[0]: c)
    init, update = np_maker(lr, *args[1:], **kwargs)
    out = {}
    for name, p in params.items():
        s = init(np.asarray(p, np.float64))
        for i, g in enumerate(grads):
            s = update(i, np.asarray(g[name], np.float64), s)
        out[name] = s["x"]
    return out


def _assert_params_close(actual, expected, name):
    assert set(actual) == set(expected)
    for k in expected:
        tu.assert_allclose(actual[k], expected[k], F32, err_msg=f"{name}: leaf {k}")


@pytest.mark.parametrize("name,maker,np_maker,args,kwargs,conv", CASES, ids=IDS)
def test_three_updates_match_numpy_eager_and_jit(name, maker, np_maker, args, kwargs, conv, rng):
    params = _params(rng)
    grads = _grads(rng, params, 3)
    expected = _np_run(np_maker, args, kwargs, params, grads)
    init, update, get_params = maker(*args, **kwargs)
    jit_update = core.jit(update)

    eager_state = jit_state = init(params)
    for i, g in enumerate(grads):
        eager_state = update(i, g, eager_state)
        jit_state = jit_update(i, g, jit_state)
    _assert_params_close(get_params(eager_state), expected, name + " eager")
    _assert_params_close(get_params(jit_state), expected, name + " jit")
    assert tree_structure(eager_state) == tree_structure(jit_state) == tree_structure(init(params))
    assert eager_state.subtree_defs == jit_state.subtree_defs


@pytest.mark.parametrize("name,maker,np_maker,args,kwargs,conv", CASES, ids=IDS)
def test_get_params_of_init_is_identity(name, maker, np_maker, args, kwargs, conv, rng):
    params = _params(rng)
    params["nested"] = (jnp.asarray(np.arange(3, dtype=F32)), [jnp.asarray(F32(2.5))])
    init, _, get_params = maker(*args, **kwargs)
    state = init(params)
    out = get_params(state)
    assert tree_structure(out) == tree_structure(params)
    for a, b in zip(tree_leaves(out), tree_leaves(params), strict=True):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    # The per-array state is a NamedTuple with named fields, the parameter first.
    per_array = tree_unflatten(state.subtree_defs[0], state.packed_state[0])
    assert per_array._fields[0] == "x" and per_array.x is tree_leaves(params)[0]


def _quadratic(target):
    def loss(p):
        return sum(jnp.sum(jnp.square(p[k] - target[k])) for k in target)
    return loss


@pytest.mark.parametrize("name,maker,np_maker,args,kwargs,conv", CASES, ids=IDS)
def test_converges_on_quadratic_eager_and_jit(name, maker, np_maker, args, kwargs, conv, rng):
    params = _params(rng)
    if conv.get("same_sign"):
        # LAMB's step is relative to ||x|| (the trust ratio), so a parameter crossing zero shrinks
        # its own steps geometrically: keep each parameter away from zero and on the target's side.
        params = tree_map(lambda p: (np.sign(p) * (0.5 + np.abs(p))).astype(F32), params)
        target = tree_map(lambda p: (p * rng.uniform(0.5, 1.5, np.shape(p))).astype(F32), params)
    else:
        target = tree_map(lambda p: (p + rng.uniform(-1, 1, np.shape(p))).astype(F32), params)
    loss = _quadratic(target)
    grad_loss = core.grad(loss)
    init, update, get_params = maker(conv["lr"], *conv.get("args", ()))
    steps = conv["steps"]

    def body(i, state):
        return update(i, grad_loss(get_params(state)), state)

    run = core.jit(lambda state: lax.fori_loop(0, steps, body, state))
    final = run(init(params))
    final_loss = float(loss(get_params(final)))
    assert final_loss < 1e-2, f"{name}: loss {final_loss} after {steps} jitted steps"

    # Eagerly, a few steps only (each eager op dispatches separately): the loss goes down and the
    # state has the structure the jitted run produced.
    state = init(params)
    for i in range(3):
        state = body(i, state)
    assert float(loss(get_params(state))) < float(loss(params))
    assert tree_structure(state) == tree_structure(final)
    assert state.subtree_defs == final.subtree_defs


def test_mismatched_gradient_tree_raises_F23():
    init, update, _ = opt.adam(0.1)
    state = init({"w": jnp.zeros(2), "b": jnp.zeros(())})
    with pytest.raises(TypeError, match=r"gradient tree that did not match the parameter tree.*grad tree"):
        update(0, {"w": jnp.zeros(2)}, state)
    with pytest.raises(TypeError, match=r"did not match the parameter tree"):
        update(0, [jnp.zeros(2), jnp.zeros(())], state)


def test_custom_optimizer_changing_state_structure_raises_F24():
    @optimizer
    def growing(step_size):
        def init(x):
            return (x, jnp.zeros_like(x))

        def update(i, g, state):
            x, m = state
            return (x - step_size * g, m, m)  # one field too many
        return init, update, lambda state: state[0]

    init, update, _ = growing(0.1)
    state = init({"w": jnp.ones(2)})
    with pytest.raises(TypeError, match=r"produced an output structure that did not match its input structure"):
        update(0, {"w": jnp.ones(2)}, state)


def test_schedule_as_step_size(rng):
    params = _params(rng)
    grads = _grads(rng, params, 3)

    def schedule(i):
        return 0.1 * 0.5 ** i  # works on Python ints and on traced step counts alike

    for maker, np_maker, kwargs in [(opt.sgd, np_sgd, {}), (opt.adam, np_adam, dict(b1=0.8))]:
        expected = _np_run(np_maker, (None,), kwargs, params, grads, schedule=schedule)
        init, update, get_params = maker(schedule, **kwargs)
        jit_update = core.jit(update)
        eager_state = jit_state = init(params)
        for i, g in enumerate(grads):
            eager_state = update(i, g, eager_state)
            jit_state = jit_update(i, g, jit_state)
        _assert_params_close(get_params(eager_state), expected, "schedule eager")
        _assert_params_close(get_params(jit_state), expected, "schedule jit")


def test_sm3_keeps_one_accumulator_per_dimension():
    init, update, get_params = opt.sm3(0.1)
    params = {"t": jnp.ones((2, 3, 4)), "s": jnp.asarray(F32(1.0))}
    state = update(0, tree_map(jnp.ones_like, params), init(params))
    by_name = dict(zip(sorted(params), state.packed_state))  # dict leaves flatten in sorted key order
    sizes = [np.shape(leaf) for leaf in by_name["t"][2:]]
    assert sizes == [(2,), (3,), (4,)]
    assert [np.shape(leaf) for leaf in by_name["s"][2:]] == [(1,)]
    # All-ones gradients: nu = 1 everywhere, so m = (1 - 0.9) * 1 and x = 1 - 0.1 * 0.1.
    tu.assert_allclose(get_params(state)["t"], np.full((2, 3, 4), 0.99), F32)


def test_docstring_examples_run():
    # docs/design.md, Testing: the examples in the docstrings are executed and their printed values checked.
    import doctest

    import optim.optimizers

    result = doctest.testmod(optim.optimizers, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted >= 12 and result.failed == 0, result

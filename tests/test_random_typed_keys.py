"""core/prng_keys.py and core/random.py: typed PRNG keys (`random.key`) as JAX's new-style keys:
shape () and dtype key<fry> over uint32[..., 2] data, the same numbers as raw PRNGKey keys, shape
operations on key axes, errors for arithmetic, and keys flowing through jit, vmap, scan, cond, pmap,
pytrees and the key-reuse checker. Ends with the issue 16 item 5 program for random, written with
jax names and checked against numbers recorded from jax 0.10.2 (jax_threefry_partitionable=False)."""

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import dtypes, lax, random, tree_util
from core.errors import KeyReuseError
from core.tree_util import tree_leaves, tree_map, tree_structure
from jax_port import port  # tests/ is on sys.path


def _words(keys):
    return np.asarray(random.key_data(keys))


def test_key_is_a_typed_scalar_over_prngkey_data():
    k = random.key(42)
    assert k.shape == () and k.ndim == 0 and k.size == 1
    assert str(k.dtype) == "key<fry>" and k.dtype == random.key_dtype()
    assert jnp.issubdtype(k.dtype, dtypes.prng_key) and jnp.issubdtype(k.dtype, dtypes.extended)
    assert not jnp.issubdtype(k.dtype, jnp.integer) and not jnp.issubdtype(jnp.uint32, dtypes.prng_key)
    np.testing.assert_array_equal(_words(k), [0, 42])
    assert random.key_data(k).dtype == jnp.uint32
    assert random.key_impl(k) == "threefry2x32" and random.key_impl(random.PRNGKey(0)) == "threefry2x32"
    # PRNGKey keeps returning raw uint32[2]
    raw = random.PRNGKey(42)
    assert raw.shape == (2,) and raw.dtype == jnp.uint32


def test_split_fold_in_and_wrap_keep_the_kind():
    k, raw = random.key(7), random.PRNGKey(7)
    ks = random.split(k, 3)
    assert ks.shape == (3,) and ks.dtype == k.dtype and random.split(raw, 3).shape == (3, 2)
    np.testing.assert_array_equal(_words(ks), np.asarray(random.split(raw, 3)))
    assert random.split(k, (2, 3)).shape == (2, 3)
    assert random.fold_in(k, 5).shape == ()
    np.testing.assert_array_equal(_words(random.fold_in(k, 5)), np.asarray(random.fold_in(raw, 5)))
    wrapped = random.wrap_key_data(random.split(raw, 4))
    assert wrapped.shape == (4,) and str(wrapped.dtype) == "key<fry>"
    np.testing.assert_array_equal(_words(wrapped), np.asarray(random.split(raw, 4)))
    a, b = random.split(k)  # unpacks like a length-2 array
    assert a.shape == () and (a == ks[0]) is not None
    with pytest.raises(TypeError, match=r"wrap_key_data: the argument is already a typed key array"):
        random.wrap_key_data(k)
    with pytest.raises(ValueError, match=r"unknown PRNG implementation 'rbg'"):
        random.key(0, impl="rbg")


SAMPLERS = [
    lambda k: random.uniform(k, (3,)), lambda k: random.normal(k, (2, 2)), lambda k: random.bits(k, (3,)),
    lambda k: random.randint(k, (3,), 0, 10), lambda k: random.bernoulli(k, 0.3, (4,)),
    lambda k: random.categorical(k, jnp.zeros(5), shape=(3,)), lambda k: random.permutation(k, 6),
    lambda k: random.choice(k, 10, (3,), replace=False), lambda k: random.gamma(k, 2.0, (3,)),
    lambda k: random.beta(k, 2.0, 3.0, (2,)), lambda k: random.dirichlet(k, jnp.ones(3)),
    lambda k: random.truncated_normal(k, -1.0, 1.0, (3,)), lambda k: random.gumbel(k, (3,)),
    lambda k: random.multivariate_normal(k, jnp.zeros(2), jnp.eye(2)), lambda k: random.orthogonal(k, 3),
    lambda k: random.rademacher(k, (3,)), lambda k: random.t(k, 3.0, (2,)), lambda k: random.poisson(k, 4.0, (3,)),
    lambda k: random.binomial(k, 10.0, 0.3, (3,)), lambda k: random.ball(k, 2, shape=(2,)),
    lambda k: random.multinomial(k, 5.0, jnp.array([0.5, 0.5])), lambda k: random.laplace(k, (2,)),
]


@pytest.mark.parametrize("i", range(len(SAMPLERS)))
def test_every_sampler_gives_the_same_bits_for_key_and_prngkey(i):
    typed, raw = SAMPLERS[i](random.key(3)), SAMPLERS[i](random.PRNGKey(3))
    np.testing.assert_array_equal(np.asarray(typed), np.asarray(raw))


def test_shape_operations_act_on_key_axes():
    ks = random.split(random.key(0), 6)
    data = _words(ks)
    grid = ks.reshape(2, 3)
    assert grid.shape == (2, 3) and jnp.reshape(ks, (3, -1)).shape == (3, 2)
    np.testing.assert_array_equal(_words(grid), data.reshape(2, 3, 2))
    np.testing.assert_array_equal(_words(grid[1, ::2]), data.reshape(2, 3, 2)[1, ::2])
    np.testing.assert_array_equal(_words(grid[..., 0]), data.reshape(2, 3, 2)[:, 0])
    np.testing.assert_array_equal(_words(grid.T), data.reshape(2, 3, 2).transpose(1, 0, 2))
    assert grid.ravel().shape == (6,) and grid[None].squeeze().shape == (2, 3)
    cat = jnp.concatenate([ks[:2], ks[4:]])
    np.testing.assert_array_equal(_words(cat), np.concatenate([data[:2], data[4:]]))
    assert jnp.concatenate([grid, grid], axis=1).shape == (2, 6)
    st = jnp.stack([ks[0], ks[5]])
    np.testing.assert_array_equal(_words(st), data[[0, 5]])
    assert jnp.stack([ks, ks], axis=1).shape == (6, 2)
    np.testing.assert_array_equal(np.asarray(ks == ks), [True] * 6)
    assert not bool(ks[0] == ks[1]) and bool(ks[0] != ks[1])
    with pytest.raises(TypeError, match=r"cannot mix PRNG key arrays with other arrays"):
        jnp.concatenate([ks, jnp.zeros((2, 2), jnp.uint32)])


@pytest.mark.parametrize("expr", ["k + 1", "1 + k", "k * k", "-k", "k < k", "k // 2", "k.astype(jnp.uint32)",
                                  "float(k)"])
def test_arithmetic_on_keys_raises_type_error(expr):
    k = random.key(0)
    with pytest.raises(TypeError, match=r"not defined on PRNG key arrays \(dtype key<fry>, shape \(\)\).*key_data"):
        eval(expr)


def test_keys_are_not_numpy_arrays():
    k = random.key(0)
    with pytest.raises(TypeError, match=r"no NumPy form; use np.asarray\(random.key_data\(keys\)\)"):
        np.asarray(k)
    with pytest.raises(TypeError):
        jnp.add(k, 1)
    with pytest.raises(ValueError, match=r"normal accepts a single key, but was given a key array of shape \(3,\)"):
        random.normal(random.split(k, 3))


def test_typed_keys_through_jit_vmap_scan_cond_pmap_and_pytrees():
    k = random.key(1)
    raw = random.PRNGKey(1)

    @core.jit
    def step(key):
        key, sub = random.split(key)
        return key, random.normal(sub, (2,))

    new_key, x = step(k)
    assert new_key.shape == () and str(new_key.dtype) == "key<fry>"
    raw_key, raw_x = step(raw)
    np.testing.assert_array_equal(_words(new_key), np.asarray(raw_key))
    np.testing.assert_array_equal(np.asarray(x), np.asarray(raw_x))
    # vmap over a batch of keys, with keys as outputs too
    keys = random.split(k, 3)
    out_keys, xs = core.vmap(step)(keys)
    assert out_keys.shape == (3,) and xs.shape == (3, 2)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(xs[i]), np.asarray(step(keys[i])[1]))
    # scan with a key carry, and keys as xs
    key_out, ys = lax.scan(lambda c, _: step(c), k, None, length=3)
    loop_key, loop_ys = k, []
    for _ in range(3):
        loop_key, y = step(loop_key)
        loop_ys.append(np.asarray(y))
    np.testing.assert_array_equal(np.asarray(ys), np.stack(loop_ys))
    np.testing.assert_array_equal(_words(key_out), _words(loop_key))
    _, us = lax.scan(lambda c, kk: (c, random.uniform(kk)), 0.0, keys)
    np.testing.assert_array_equal(np.asarray(us), [float(random.uniform(keys[i])) for i in range(3)])
    # cond returning keys from both branches
    chosen = lax.cond(False, lambda kk: random.split(kk)[0], lambda kk: random.fold_in(kk, 2), k)
    np.testing.assert_array_equal(_words(chosen), _words(random.fold_in(k, 2)))
    # pmap over one key per device
    n = core.device_count()
    per_device = core.pmap(lambda kk: random.normal(kk, (2,)))(random.split(k, n))
    np.testing.assert_array_equal(np.asarray(per_device[0]), np.asarray(random.normal(random.split(k, n)[0], (2,))))
    # pytrees: keys inside containers pass through tree_map and jit
    tree = {"a": k, "b": [keys, jnp.ones(2)]}
    back = core.jit(lambda t: t)(tree)
    assert back["a"].shape == () and back["b"][0].shape == (3,)
    assert [leaf.shape for leaf in tree_leaves(tree)] == [(), (3,), (2,)]  # a key array is one leaf, as in JAX
    assert tree_map(lambda x: x, tree)["b"][0].dtype == k.dtype


def test_key_reuse_checker_sees_typed_keys():
    core.config.update("debug_key_reuse", True)
    try:
        k = random.key(0)
        random.normal(k)
        with pytest.raises(KeyReuseError):
            random.uniform(k)
        ks = random.split(random.key(1), 2)
        random.normal(ks[0])
        with pytest.raises(KeyReuseError):
            random.normal(ks[0])
        random.normal(ks[1])  # the other key is fresh

        @core.jit
        def twice(key):
            return random.normal(key) + random.normal(key)

        with pytest.raises(KeyReuseError):
            twice(random.key(2))
        k3 = random.key(3)
        c = random.clone(k3)
        assert c.dtype == k3.dtype
        random.normal(k3)
        random.normal(c)  # an intended reuse
    finally:
        core.config.update("debug_key_reuse", False)


# ----- a key array is ONE pytree leaf (issue 16 item 7): tree_util, transformations, jnp -----

def test_a_key_array_is_one_leaf_of_its_key_shape():
    k, ks = random.key(0), random.split(random.key(1), 3)
    assert tree_leaves(k) == [k] and tree_util.treedef_is_strict_leaf(tree_structure(k))
    tree = {"b": ks, "a": [k, jnp.ones(2)], "c": None}
    leaves = tree_leaves(tree)
    assert [type(x).__name__ for x in leaves] == ["KeyArray", "Array", "KeyArray"] and leaves[2] is ks
    assert tree_structure(tree) == tree_structure({"b": 0, "a": [0, 0], "c": None})
    assert tree_map(lambda x: x.shape, tree) == {"b": (3,), "a": [(), (2,)], "c": None}
    assert tree_map(lambda x: str(x.dtype), tree)["b"] == "key<fry>"
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(tree)[0]]
    assert paths == ["['a'][0]", "['a'][1]", "['b']"]
    # transformations trace the data: the physical view has the same leaves, in order, one to one
    data, phys = tree_util.physical_flatten(tree)
    assert [x.shape for x in data] == [(2,), (2,), (3, 2)] and data[2] is ks._base
    assert tree_util.logical_structure(phys) == tree_structure(tree)
    assert tree_util.typed_leaf_mask(phys) == [True, False, True]
    back = tree_util.tree_unflatten(phys, data)
    assert back["b"].dtype == ks.dtype and np.array_equal(_words(back["b"]), _words(ks))


def test_isinstance_core_array_holds_for_keys_eager_and_traced():
    k = random.key(0)
    seen = []

    def check(key, x=1.0):
        seen.append(isinstance(key, core.Array) and isinstance(key, jnp.ndarray))
        return x * 2.0

    check(k)
    core.jit(check)(k)
    core.vmap(check)(random.split(k, 2))
    core.grad(check, argnums=1)(k, 1.0)
    lax.scan(lambda c, kk: (c, check(kk)), 0.0, random.split(k, 2))
    assert seen == [True] * 5 and not isinstance(_words(k), core.Array)


def test_keys_as_jit_arguments_and_results_take_the_tree_fast_path(monkeypatch):
    from core import api
    lookups = []
    original = api._JitFunction._lookup
    monkeypatch.setattr(api._JitFunction, "_lookup", lambda self, a, kw: lookups.append(1) or original(self, a, kw))

    @core.jit
    def step(state):
        key, sub = random.split(state["key"])
        return {"key": key, "x": state["x"] + random.uniform(sub, (2,))}

    state, loop = {"key": random.key(4), "x": jnp.zeros(2)}, {"key": random.key(4), "x": np.zeros(2, np.float32)}
    for _ in range(3):
        state = step(state)
        key, sub = random.split(loop["key"])
        loop = {"key": key, "x": loop["x"] + np.asarray(random.uniform(sub, (2,)))}
        assert str(state["key"].dtype) == "key<fry>" and state["key"].shape == ()
        np.testing.assert_array_equal(_words(state["key"]), _words(loop["key"]))
        np.testing.assert_allclose(np.asarray(state["x"]), loop["x"], rtol=1e-6)
    assert len(lookups) == 1  # traced once, then served by the pytree fast path


def test_vmap_axes_count_key_axes():
    ks = random.split(random.key(2), 6).reshape(2, 3)
    data = _words(ks)
    one_fold, one_split = core.jit(lambda k: random.fold_in(k, 1)), core.jit(lambda k: random.split(k, 4))
    key_at = lambda *index: random.wrap_key_data(jnp.asarray(data[index]))  # noqa: E731
    # in_axes=-1 maps the last KEY axis (not the data axis): lanes are ks[:, j]
    got = core.jit(core.vmap(core.vmap(lambda k: random.fold_in(k, 1)), in_axes=-1))(ks)
    assert got.shape == (3, 2) and str(got.dtype) == "key<fry>"
    for i in range(2):
        for j in range(3):
            np.testing.assert_array_equal(_words(got)[j, i], _words(one_fold(key_at(i, j))))
    # out_axes=-1 puts the mapped axis last among the key axes: out[:, i] is split(ks[0, i], 4)
    out = core.jit(core.vmap(lambda k: random.split(k, 4), out_axes=-1))(ks[0])
    assert out.shape == (4, 3) and str(out.dtype) == "key<fry>"
    for i in range(3):
        np.testing.assert_array_equal(_words(out)[:, i], _words(one_split(key_at(0, i))))
    with pytest.raises(ValueError, match=r"map its argument k along axis 1, which implies that its rank should be "
                                         r"at least 2, but is only 1 \(its shape is \(3,\)\)"):
        core.vmap(lambda k: k, in_axes=1)(ks[0])
    with pytest.raises(ValueError, match=r"out_axes=2 is out of range for output 0, a PRNG key array of rank 1 per "
                                         r"example"):
        core.vmap(lambda k: k.reshape(1), out_axes=2)(ks[0])


def test_eval_shape_of_keys_gives_the_key_shape_and_dtype():
    out = core.eval_shape(lambda k: (random.split(k, 3), random.uniform(k, (2,))), random.key(0))
    assert (out[0].shape, str(out[0].dtype)) == ((3,), "key<fry>") and out[1].shape == (2,)


def test_keys_through_while_loop_and_cond_carries():
    def body(c):
        i, key, total = c
        key, sub = random.split(key)
        return i + 1, key, total + random.uniform(sub)

    i, key, total = lax.while_loop(lambda c: c[0] < 3, body, (0, random.key(5), 0.0))
    loop = (0, random.key(5), 0.0)
    for _ in range(3):
        loop = body(loop)
    assert int(i) == 3 and str(key.dtype) == "key<fry>"
    np.testing.assert_array_equal(_words(key), _words(loop[1]))
    np.testing.assert_allclose(float(total), float(loop[2]), rtol=1e-6)
    picked = core.jit(lambda p, a, b: lax.cond(p, lambda x, y: x, lambda x, y: y, a, b))(True, key, loop[1])
    assert picked.shape == () and np.array_equal(_words(picked), _words(key))


def test_grad_treats_key_arguments_as_not_differentiable():
    k = random.key(6)
    u = float(random.uniform(k))
    loss = lambda t: t["w"] * random.uniform(t["k"])  # noqa: E731
    g = core.grad(loss, allow_int=True)({"w": 2.0, "k": k})
    assert float(g["w"]) == u and g["k"].dtype == dtypes.float0 and g["k"].shape == ()  # float0 of the KEY shape
    assert float(core.grad(lambda w, key: w * random.uniform(key))(2.0, k)) == u
    with pytest.raises(TypeError, match=r"grad requires real- or complex-valued inputs .* but got key<fry>"):
        core.grad(loss)({"w": 2.0, "k": k})
    # jvp / vjp: a key's tangent and cotangent are float0 of its shape, as in JAX
    ks = random.split(k, 3)
    _, t = core.jvp(lambda kk: random.split(kk[0], 2), (ks,), (np.zeros((3,), dtypes.float0),))
    assert t.dtype == dtypes.float0 and t.shape == (2,)
    y, pullback = core.vjp(lambda w, kk: (w * random.uniform(kk[1]), kk), 3.0, ks)
    gw, gk = pullback((1.0, np.zeros((3,), dtypes.float0)))
    assert y[1].shape == (3,) and float(gw) == float(random.uniform(ks[1])) and gk.shape == (3,)


def test_pmap_maps_keys_over_devices():
    ks = random.split(random.key(7), 2)
    out_keys, xs = core.pmap(lambda k: (random.split(k, 3), random.uniform(k, (2,))))(ks)
    assert out_keys.shape == (2, 3) and str(out_keys.dtype) == "key<fry>"
    for i in range(2):
        np.testing.assert_array_equal(_words(out_keys[i]), _words(random.split(ks[i], 3)))
        np.testing.assert_array_equal(np.asarray(xs[i]), np.asarray(random.uniform(ks[i], (2,))))


KEY_DATA = np.arange(2 * 3 * 2, dtype=np.uint32).reshape(2, 3, 2) * 7919
COND = np.array([[True, False, True], [False, False, True]])
# (jnp/lax expression on keys K (and K2), the same operation on their data D (and D2, NumPy)
SHAPE_OPS = [
    ("jnp.take(K, jnp.array([2, 0]), axis=1)", lambda D, D2: np.take(D, [2, 0], axis=1)),
    ("jnp.take(K, jnp.array([4, 1]))", lambda D, D2: D.reshape(-1, 2)[[4, 1]]),
    ("K.take(jnp.array([1]), axis=0)", lambda D, D2: D[[1]]),
    ("jnp.where(COND, K, K2)", lambda D, D2: np.where(COND[..., None], D, D2)),
    ("lax.select(COND, K, K2)", lambda D, D2: np.where(COND[..., None], D, D2)),
    ("jnp.select([COND], [K], K2)", lambda D, D2: np.where(COND[..., None], D, D2)),
    ("jnp.broadcast_to(K[0], (4, 3))", lambda D, D2: np.broadcast_to(D[0], (4, 3, 2))),
    ("jnp.squeeze(K[:, :1], -1)", lambda D, D2: D[:, 0]),
    ("jnp.expand_dims(K, -1)", lambda D, D2: D[:, :, None]),
    ("jnp.swapaxes(K, 0, -1)", lambda D, D2: D.transpose(1, 0, 2)),
    ("jnp.moveaxis(K, -1, 0)", lambda D, D2: D.transpose(1, 0, 2)),
    ("jnp.transpose(K)", lambda D, D2: D.transpose(1, 0, 2)),
    ("K.T", lambda D, D2: D.transpose(1, 0, 2)),
    ("jnp.copy(K)", lambda D, D2: D),
    ("jnp.ravel(K)", lambda D, D2: D.reshape(6, 2)),
    ("K.flatten()", lambda D, D2: D.reshape(6, 2)),
    ("jnp.flip(K, -1)", lambda D, D2: D[:, ::-1]),
    ("jnp.split(K, 3, axis=-1)[2]", lambda D, D2: D[:, 2:]),
    ("lax.dynamic_slice(K, (1, 1), (1, 2))", lambda D, D2: D[1:2, 1:3]),
]


@pytest.mark.parametrize("expr, on_data", SHAPE_OPS, ids=[e for e, _ in SHAPE_OPS])
def test_jnp_shape_functions_act_on_key_axes(expr, on_data):
    keys, keys2 = random.wrap_key_data(jnp.asarray(KEY_DATA)), random.wrap_key_data(jnp.asarray(KEY_DATA + 1))
    env = {"K": keys, "K2": keys2, "COND": COND, "jnp": jnp, "lax": lax}
    out = eval(expr, env)
    assert str(out.dtype) == "key<fry>"
    np.testing.assert_array_equal(_words(out), on_data(KEY_DATA, KEY_DATA + 1))


def test_jnp_shape_functions_on_traced_keys_and_errors():
    keys = random.wrap_key_data(jnp.asarray(KEY_DATA))
    f = core.jit(lambda k, i: (jnp.take(k, i, axis=1), lax.dynamic_slice(k, (i, 0), (1, 2)), jnp.moveaxis(k, 0, -1)))
    taken, sliced, moved = f(keys, 1)
    np.testing.assert_array_equal(_words(taken), KEY_DATA[:, 1])
    np.testing.assert_array_equal(_words(sliced), KEY_DATA[1:2, :2])
    np.testing.assert_array_equal(_words(moved), KEY_DATA.transpose(1, 0, 2))
    with pytest.raises(TypeError, match=r"where: cannot mix PRNG key arrays with other values \(got key<fry>\[2, 3\], "
                                        r"uint32\[2, 3, 2\]\)"):
        jnp.where(COND, keys, jnp.asarray(KEY_DATA))
    with pytest.raises(TypeError, match=r"not defined on PRNG key arrays"):
        core.jit(lambda k: k + 1)(keys)


PROGRAM = '''
import jax
import jax.numpy as jnp
from jax import random


def init(key, sizes):
    keys = random.split(key, len(sizes) - 1)
    return [random.normal(k, (m, n)) / jnp.sqrt(m) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


@jax.jit
def perturb(key, params):
    keys = random.split(key, len(params))
    return [p + 0.01 * random.normal(k, p.shape) for k, p in zip(keys, params)]


def run(seed):
    key = random.key(seed)
    key, init_key = random.split(key)
    params = init(init_key, [3, 4, 2])

    def body(carry, step_key):
        params = perturb(step_key, carry)
        return params, random.poisson(random.fold_in(step_key, 1), 3.0, (2,))

    params, counts = jax.lax.scan(body, params, random.split(key, 4))
    batch = jax.vmap(lambda k: random.uniform(k, (2,)))(random.split(random.fold_in(key, 7), 3))
    both = jnp.concatenate([random.split(key, 2), random.split(init_key, 1)])
    return params, counts, batch, random.key_data(both), jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
'''


# run(5) under jax 0.10.2 with jax_threefry_partitionable=False
JAX_RUN_5 = {
    "w0": [[0.16356904804706573, -0.19827386736869812, -0.5465285181999207, 0.12838789820671082],
           [0.048319898545742035, 0.32271942496299744, 0.8472342491149902, 0.48352161049842834],
           [-0.9293123483657837, 0.46355652809143066, 0.590995728969574, -0.2971791923046112]],
    "w1": [[-0.5871294736862183, 0.33497682213783264], [0.38155630230903625, -0.6629254817962646],
           [-0.4762565493583679, 0.8437460660934448], [0.29378747940063477, 0.40086787939071655]],
    "counts": [[4, 1], [3, 3], [3, 1], [3, 3]],
    "batch": [[0.2424238920211792, 0.985725998878479], [0.15712642669677734, 0.03200984001159668],
              [0.7050164937973022, 0.7629110813140869]],
    "words": [[2515626613, 1405579907], [3718552407, 3488017191], [1755886010, 2064357722]],
}


def test_jax_style_program_with_typed_keys_matches_jax():
    namespace = {}
    exec(compile(port(PROGRAM), "<jax-style random program>", "exec"), namespace)
    (w0, w1), counts, batch, words, is_key = namespace["run"](5)
    assert bool(is_key)
    np.testing.assert_allclose(np.asarray(w0), JAX_RUN_5["w0"], rtol=2e-6)
    np.testing.assert_allclose(np.asarray(w1), JAX_RUN_5["w1"], rtol=2e-6)
    np.testing.assert_array_equal(np.asarray(counts), JAX_RUN_5["counts"])
    np.testing.assert_array_equal(np.asarray(batch), JAX_RUN_5["batch"])
    np.testing.assert_array_equal(np.asarray(words), JAX_RUN_5["words"])

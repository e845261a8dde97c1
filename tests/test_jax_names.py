"""JAX's names for the pieces programs reach for (issue 16): `core.nn` as `jax.nn`, the config
options and environment variables as JAX spells them, tracers as `Array`s, `core.tree`,
`ravel_pytree`, `core.ops.segment_*` and the small top-level context managers and callbacks.

Each area has a small JAX-style program written with `jax` names and ported by changing only its
imports (the `import ... as jax` lines), checked against NumPy in float64.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import core
import core.numpy as jnp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----- item 4: core.nn as jax.nn -------------------------------------------------------------

def test_core_nn_is_the_one_implementation_nn_reexports():
    import nn
    for name in ("relu", "gelu", "softmax", "log_softmax", "one_hot", "logsumexp", "standardize",
                 "sigmoid", "silu", "softplus", "log_sigmoid", "elu", "leaky_relu", "selu", "relu6"):
        assert getattr(core.nn, name) is getattr(nn, name) is getattr(nn.functions, name), name
    assert core.nn.initializers.glorot_normal is nn.initializers.glorot_normal
    assert "initializers" in core.nn.__all__


def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


# jax.nn's other activations against float64 NumPy formulas written independently of ours
MORE_ACTIVATIONS = {
    "celu": lambda x: np.where(x > 0, x, np.exp(x) - 1),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "mish": lambda x: x * np.tanh(np.log1p(np.exp(x))),
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.piecewise(x, [x <= -1, x >= 1], [0.0, lambda v: v, lambda v: (v + 1) ** 2 / 4]),
    "tanh": np.tanh,
    "identity": lambda x: x,
}


@pytest.mark.parametrize("name", sorted(MORE_ACTIVATIONS))
def test_more_jax_nn_activations_against_numpy_with_gradients(name):
    from core.test_util import check_grads
    import nn
    fn = getattr(core.nn, name)
    assert getattr(nn, name) is fn and name in core.nn.__all__
    # points away from the kinks (-3, -1, 0, 1, 3), where finite differences straddle two pieces
    x = np.array([-4.2, -2.5, -1.7, -0.6, -0.2, 0.3, 0.8, 1.6, 2.2, 3.9])
    np.testing.assert_allclose(np.asarray(fn(jnp.asarray(x, jnp.float32))), MORE_ACTIVATIONS[name](x),
                               rtol=2e-6, atol=1e-6)
    # integers promote to the default float, except through identity (as JAX's, which returns x)
    assert fn(jnp.asarray(x, jnp.float32)).dtype == jnp.float32
    assert fn(jnp.arange(3)).dtype == (jnp.int32 if name == "identity" else jnp.float32)
    check_grads(fn, (x.astype(np.float32),), order=1)


def test_glu_splits_the_axis_into_value_and_gate():
    x = np.arange(12.0).reshape(2, 6) / 5 - 1
    want = x[:, :3] * _np_sigmoid(x[:, 3:])
    np.testing.assert_allclose(np.asarray(core.nn.glu(jnp.asarray(x, jnp.float32))), want, rtol=1e-6)
    want0 = x.T[:3] * _np_sigmoid(x.T[3:])
    np.testing.assert_allclose(np.asarray(core.nn.glu(jnp.asarray(x.T, jnp.float32), axis=0)), want0, rtol=1e-6)
    with pytest.raises(ValueError, match=r"glu: axis -1 of x \(float32\[2, 3\]\) must have an even size"):
        core.nn.glu(jnp.ones((2, 3)))


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_jax_style_mlp_program_ported_by_imports():
    # A two-layer classifier as a JAX user writes it; only the imports were rewritten
    # (`import jax` -> `import core as jax`, `import jax.numpy as jnp` -> `import core.numpy as jnp`).
    import core as jax
    import core.numpy as jnp

    def init(key, sizes):
        keys = jax.random.split(key, len(sizes))
        init_w = jax.nn.initializers.glorot_normal()
        return [(init_w(k, (m, n)), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]

    def forward(params, x):
        (w1, b1), (w2, b2) = params
        h = jax.nn.gelu(x @ w1 + b1, approximate=False)
        h = jax.nn.standardize(h, axis=-1)
        return jax.nn.log_softmax(h @ w2 + b2)

    def loss(params, x, y):
        return -jnp.mean(jnp.sum(forward(params, x) * jax.nn.one_hot(y, 3), axis=-1))

    params = init(jax.random.PRNGKey(0), [4, 5, 3])
    x = jnp.asarray(np.linspace(-1.0, 1.0, 8, dtype=np.float32).reshape(2, 4))
    y = jnp.asarray([0, 2])
    value = jax.jit(loss)(params, x, y)
    probs = jax.nn.softmax(forward(params, x))
    lse = jax.nn.logsumexp(x, axis=-1)
    act = jax.nn.relu(x) + jax.nn.sigmoid(x) + jax.nn.silu(x)

    # the NumPy oracle, float64
    from math import erf
    (w1, b1), (w2, b2) = [(np.asarray(w, np.float64), np.asarray(b, np.float64)) for w, b in params]
    xn = np.asarray(x, np.float64)
    pre = xn @ w1 + b1
    h = pre * 0.5 * (1 + np.vectorize(erf)(pre / np.sqrt(2)))
    h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5)
    logits = h @ w2 + b2
    logp = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1, keepdims=True)) \
        - logits.max(-1, keepdims=True)
    want = -np.mean(logp[np.arange(2), [0, 2]])
    np.testing.assert_allclose(float(value), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(probs), _np_softmax(logits), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(lse), np.log(np.exp(xn).sum(-1)), rtol=1e-6)
    sig = 1 / (1 + np.exp(-xn))
    np.testing.assert_allclose(np.asarray(act), np.maximum(xn, 0) + sig + xn * sig, rtol=1e-6)
    # glorot_normal's scale: variance 2 / (fan_in + fan_out), truncated normal: a loose bound
    assert params[0][0].shape == (4, 5) and params[0][0].dtype == jnp.float32


# ----- item 5: config options and environment variables as JAX spells them -------------------

JAX_OPTIONS = ["jax_enable_x64", "jax_disable_jit", "jax_debug_nans", "jax_debug_infs",
               "jax_numpy_rank_promotion", "jax_numpy_dtype_promotion", "jax_debug_key_reuse",
               "jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs",
               "jax_compilation_cache_max_size", "jax_check_tracer_leaks", "jax_platforms"]


@pytest.mark.parametrize("jax_name", JAX_OPTIONS)
def test_every_jax_option_name_is_an_alias_of_ours(jax_name):
    from core.config import Config
    cfg = Config()  # a private instance: the process's flags stay as they are
    ours = jax_name[len("jax_"):]
    assert cfg.read(jax_name) == cfg.read(ours) == getattr(cfg, jax_name)
    new = {bool: lambda v: not v, str: lambda v: {"allow": "raise", "standard": "strict"}.get(v, v),
           float: lambda v: v + 1.5, int: lambda v: v + 7, type(None): lambda v: None}[type(cfg.read(ours))]
    value = new(cfg.read(ours))
    if ours == "compilation_cache_dir":
        value = "/tmp/purenn-test-cache-alias"
    if ours == "platforms":
        value = "gpu" if cfg.read(ours) == "cpu" else "cpu"
    cfg.update(jax_name, value)
    assert cfg.read(ours) == value and cfg.read(jax_name) == value and getattr(cfg, jax_name) == value


def test_unknown_jax_option_names_the_known_ones():
    from core.config import Config
    with pytest.raises(AttributeError, match="jax_no_such_option.*enable_x64"):
        Config().update("jax_no_such_option", True)
    with pytest.raises(ValueError, match="numpy_rank_promotion"):
        Config().update("jax_numpy_rank_promotion", "sometimes")
    with pytest.raises(ValueError, match="unknown platform.*tpu"):
        Config().update("jax_platforms", "tpu")


def test_disable_jit_alias_keeps_the_thread_local_context_manager():
    calls = []

    def f(x):
        calls.append(type(x))
        return x + 1.0

    g = core.jit(f)
    g(1.0)
    n = len(calls)
    try:
        core.config.update("jax_disable_jit", True)
        assert float(g(1.0)) == 2.0
        assert len(calls) == n + 1 and calls[-1] is float  # ran op by op on the Python value, untraced
    finally:
        core.config.update("jax_disable_jit", False)
    with core.disable_jit():
        assert core.config.disable_jit and core.config.read("jax_disable_jit")
    assert not core.config.read("jax_disable_jit")


def test_parse_flags_with_absl_reads_jax_flags_from_argv():
    from core.config import Config
    cfg = Config()
    cfg.parse_flags_with_absl(["prog", "--jax_enable_x64", "--nojax_debug_nans", "--unrelated=3",
                               "--jax_numpy_rank_promotion=warn", "positional",
                               "--jax_persistent_cache_min_compile_time_secs=2.5"])
    assert cfg.enable_x64 is True and cfg.debug_nans is False
    assert cfg.numpy_rank_promotion == "warn" and cfg.persistent_cache_min_compile_time_secs == 2.5
    with pytest.raises(ValueError, match="jax_debug_infs takes true or false"):
        cfg.parse_flags_with_absl(["prog", "--jax_debug_infs=maybe"])
    assert callable(core.config.config_with_absl) and callable(core.config.parse_flags_with_absl)


def _run(code, **env):
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("PURENN_", "JAX_")) and k != "XLA_FLAGS"}
    environ.update(env, PYTHONPATH=ROOT, PURENN_PLATFORM="cpu")
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environ, cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_jax_environment_variables_and_xla_flags_device_count():
    code = """
        import core
        print(core.config.enable_x64, core.config.debug_nans, core.numpy.ones(2).dtype, core.device_count())
    """
    assert _run(code, JAX_ENABLE_X64="1", JAX_DEBUG_NANS="true",
                XLA_FLAGS="--xla_force_host_platform_device_count=3") == ["True", "True", "float64", "3"]
    # ours wins when both are set
    assert _run(code, JAX_ENABLE_X64="1", PURENN_ENABLE_X64="0", PURENN_NUM_CPU_DEVICES="2",
                XLA_FLAGS="--xla_force_host_platform_device_count=3") == ["False", "False", "float32", "2"]


def test_config_with_absl_defines_jax_flags_that_update_the_config():
    pytest.importorskip("absl")
    code = """
        import core
        from absl import flags
        core.config.config_with_absl()
        flags.FLAGS(["prog", "--jax_numpy_rank_promotion=raise", "--jax_debug_infs"])
        print(core.config.numpy_rank_promotion, core.config.debug_infs, core.config.enable_x64)
    """
    assert _run(code) == ["raise", "True", "False"]


def test_jax_style_x64_program_ported_by_imports():
    # jax.config.update("jax_enable_x64", True) as the first thing a float64 program does
    import core as jax
    import core.numpy as jnp
    try:
        jax.config.update("jax_enable_x64", True)
        x = jnp.linspace(0.0, 1.0, 5)
        y = jax.jit(lambda x: jnp.sum(jnp.exp(x) / 3.0))(x)
        assert x.dtype == jnp.float64 and y.dtype == jnp.float64
        np.testing.assert_allclose(float(y), np.sum(np.exp(np.linspace(0.0, 1.0, 5)) / 3.0), rtol=1e-14)
    finally:
        jax.config.update("jax_enable_x64", False)
    assert jnp.linspace(0.0, 1.0, 5).dtype == jnp.float32


# ----- item 6: tracers are Arrays; __version__, distributed, test_util -----------------------

def _seen_types(transform, f, x):
    seen = []

    def probe(x):
        seen.append((isinstance(x, core.Array), isinstance(x, jnp.ndarray), type(x).__name__))
        return f(x)
    transform(probe)(x)
    return seen


@pytest.mark.parametrize("name", ["grad", "jit", "vmap", "pmap", "jvp", "eager"])
def test_tracers_are_instances_of_array_under_every_transformation(name):
    x = jnp.ones((1, 2)) if name in ("vmap", "pmap") else jnp.float32(1.5)
    f = lambda x: jnp.sum(x * x)  # noqa: E731
    transform = {"grad": core.grad, "jit": core.jit, "vmap": core.vmap, "pmap": core.pmap,
                 "jvp": lambda g: (lambda x: core.jvp(g, (x,), (x,))), "eager": lambda g: g}[name]
    seen = _seen_types(transform, f, x)
    assert seen and all(a and b for a, b, _ in seen), seen
    if name != "eager":
        assert all(t != "Array" for _, _, t in seen), seen  # a tracer, not a concrete array


def test_array_type_is_abstract_and_concrete_checks_still_exclude_tracers():
    from core.array import Array as DeviceArray
    x = jnp.arange(3.0)
    assert type(x) is DeviceArray and isinstance(x, core.Array) and issubclass(DeviceArray, core.Array)
    assert not isinstance(np.ones(3), core.Array) and not isinstance(1.0, jnp.ndarray)
    # the concrete class stays exact: core's code that needs a device buffer does not take a tracer
    core.jit(lambda t: (isinstance(t, core.Array) and not isinstance(t, DeviceArray)) or 1 / 0)(x)
    # core.Array(buf, aval) still builds a concrete array
    y = core.Array(x._buf, x.aval)
    assert type(y) is DeviceArray and np.array_equal(np.asarray(y), [0.0, 1.0, 2.0])
    assert repr(type(x).__name__) == "'Array'"


def test_version_distributed_and_test_util_after_a_bare_import():
    code = """
        import core
        print(core.__version__, core.distributed.__name__, core.test_util.__name__, core.nn.__name__)
    """
    version, *mods = _run(code)
    assert mods == ["core.distributed", "core.test_util", "core.nn"]
    assert version == core.__version__ and tuple(map(int, version.split("."))) == core.__version_info__


def test_jax_style_program_dispatching_on_array_ported_by_imports():
    # a helper that accepts arrays or Python lists, as JAX code often checks `isinstance(x, jax.Array)`
    import core as jax
    import core.numpy as jnp

    def as_array(x):
        return x if isinstance(x, jax.Array) else jnp.asarray(x, dtype=jnp.float32)

    def loss(w, x):
        return jnp.sum(jnp.tanh(as_array(w) * as_array(x)) ** 2)

    w = np.array([0.5, -1.0, 0.25])
    x = [1.0, 2.0, 3.0]
    g = jax.jit(jax.grad(loss))(jnp.asarray(w, dtype=jnp.float32), x)
    per_row = jax.vmap(lambda w: loss(w, x))(jnp.asarray(np.stack([w, 2 * w]), dtype=jnp.float32))
    t = np.tanh(w * np.array(x))
    np.testing.assert_allclose(np.asarray(g), 2 * t * (1 - t ** 2) * np.array(x), rtol=1e-5)
    want_rows = [np.sum(np.tanh(v * np.array(x)) ** 2) for v in (w, 2 * w)]
    np.testing.assert_allclose(np.asarray(per_row), want_rows, rtol=1e-6)


# ----- item 8: core.tree, ravel_pytree, segment ops, compile-time eval, named_scope, pure_callback

def test_core_tree_is_jax_tree():
    tu = core.tree_util
    pairs = {"map": tu.tree_map, "leaves": tu.tree_leaves, "structure": tu.tree_structure,
             "flatten": tu.tree_flatten, "unflatten": tu.tree_unflatten, "reduce": tu.tree_reduce,
             "all": tu.tree_all, "transpose": tu.tree_transpose, "map_with_path": tu.tree_map_with_path,
             "flatten_with_path": tu.tree_flatten_with_path, "leaves_with_path": tu.tree_leaves_with_path}
    for name, fn in pairs.items():
        assert getattr(core.tree, name) is fn, name
    t = {"b": (1, 2), "a": [3]}
    assert core.tree.map(lambda x, y: x * 10 + y, t, t) == {"b": (11, 22), "a": [33]}
    assert core.tree.leaves(t) == [3, 1, 2] and core.tree.reduce(lambda a, b: a + b, t) == 6
    leaves, treedef = core.tree.flatten(t)
    assert core.tree.unflatten(treedef, [7, 8, 9]) == {"a": [7], "b": (8, 9)}
    assert core.tree.structure(t) == treedef and core.tree.all({"x": True, "y": (1, 2)})
    assert not core.tree.all([True, 0])
    outer, inner = core.tree.structure([0, 0]), core.tree.structure((0, 0, 0))
    assert core.tree.transpose(outer, inner, [(1, 2, 3), (4, 5, 6)]) == ([1, 4], [2, 5], [3, 6])
    paths = [core.tree_util.keystr(p) for p, _ in core.tree.flatten_with_path(t)[0]]
    assert paths == ["['a'][0]", "['b'][0]", "['b'][1]"]
    assert core.tree.map_with_path(lambda p, x: len(p) * x, t) == {"a": [6], "b": (2, 4)}


def test_ravel_pytree_round_trip_dtypes_and_errors():
    from core.flatten_util import ravel_pytree
    tree = {"w": np.arange(6.0).reshape(2, 3), "b": np.array([7.0, 8.0]), "i": np.array([1, 2], np.int32)}
    flat, unravel = ravel_pytree(tree)
    # leaf order is tree_flatten's (sorted dict keys); int32 and float32 promote to float32
    np.testing.assert_array_equal(np.asarray(flat), np.concatenate([[7.0, 8.0], [1.0, 2.0], np.arange(6.0)]))
    assert flat.dtype == jnp.float32
    back = unravel(flat * 2)
    assert back["i"].dtype == jnp.int32 and back["w"].shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(back["w"]), 2 * tree["w"])
    np.testing.assert_array_equal(np.asarray(back["i"]), [2, 4])
    with pytest.raises(ValueError, match=r"shape \(10,\), got shape \(9,\)"):
        unravel(jnp.zeros(9))
    with pytest.raises(TypeError, match="dtype float32.*got int32"):
        unravel(jnp.zeros(10, jnp.int32))
    empty, unravel_empty = ravel_pytree(())
    assert empty.shape == (0,) and unravel_empty(empty) == ()
    # under jit, both directions
    out = core.jit(lambda t: ravel_pytree(t)[1](ravel_pytree(t)[0] + 1.0))({"a": jnp.ones(2)})
    np.testing.assert_array_equal(np.asarray(out["a"]), [2.0, 2.0])


def test_ravel_pytree_gradients_flow_both_ways():
    from core.flatten_util import ravel_pytree
    params = {"a": jnp.array([1.0, -2.0]), "b": jnp.array(3.0)}
    # d/dp sum(ravel(p)^3) = 3 p^2, per leaf
    g = core.grad(lambda p: jnp.sum(ravel_pytree(p)[0] ** 3))(params)
    np.testing.assert_allclose(np.asarray(g["a"]), [3.0, 12.0])
    np.testing.assert_allclose(float(g["b"]), 27.0)
    flat, unravel = ravel_pytree(params)
    # d/dv of a["a"][1] * b through unravel: nonzero only at those two positions
    gv = core.grad(lambda v: unravel(v)["a"][1] * unravel(v)["b"])(flat)
    np.testing.assert_allclose(np.asarray(gv), [0.0, 3.0, -2.0])


def _np_segment(data, ids, n, op, identity):
    out = np.full((n,) + data.shape[1:], identity, np.float64)
    for row, k in zip(data, ids):
        if 0 <= k < n:
            out[k] = op(out[k], row)
    return out


SEGMENT_OPS = [("segment_sum", np.add, 0.0), ("segment_prod", np.multiply, 1.0),
               ("segment_max", np.maximum, -np.inf), ("segment_min", np.minimum, np.inf)]


@pytest.mark.parametrize("name,op,identity", SEGMENT_OPS)
def test_segment_ops_against_a_numpy_loop(name, op, identity):
    rng = np.random.default_rng(0)
    data = rng.normal(size=(7, 2))
    ids = np.array([0, 3, 3, -1, 0, 5, 1])  # -1 and 5 are out of range (4 segments): dropped; 2 is empty
    fn = getattr(core.ops, name)
    want = _np_segment(data, ids, 4, op, identity)
    got = fn(jnp.asarray(data, jnp.float32), jnp.asarray(ids), num_segments=4)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
    jitted = core.jit(lambda d, i: fn(d, i, 4, indices_are_sorted=False, unique_indices=False))
    np.testing.assert_allclose(np.asarray(jitted(jnp.asarray(data, jnp.float32), jnp.asarray(ids))), want, rtol=1e-6)
    # without num_segments, from concrete ids: max(ids) + 1 = 6 segments
    assert fn(jnp.asarray(data, jnp.float32), jnp.asarray(ids)).shape == (6, 2)


def test_segment_ops_integers_errors_and_gradients():
    ints = core.ops.segment_max(jnp.array([4, 9, 2]), jnp.array([1, 1, 2]), 4)
    assert ints.dtype == jnp.int32
    np.testing.assert_array_equal(np.asarray(ints), [np.iinfo(np.int32).min, 9, 2, np.iinfo(np.int32).min])
    with pytest.raises(TypeError, match="num_segments is needed under a transformation"):
        core.jit(lambda d, i: core.ops.segment_sum(d, i))(jnp.ones(3), jnp.array([0, 1, 1]))
    with pytest.raises(ValueError, match=r"leading axis must match.*float32\[3\].*int32\[2\]"):
        core.ops.segment_sum(jnp.ones(3), jnp.array([0, 1]), 2)
    ids = jnp.array([0, 0, 1, 2, 2])
    x = jnp.array([1.0, 3.0, 2.0, 5.0, 4.0])
    w = jnp.array([1.0, 2.0, 3.0])
    # d/dx sum(w * segment_sum(x)) = w[ids]; d/dx sum(w * segment_max(x)) = w at each segment's argmax
    np.testing.assert_allclose(np.asarray(core.grad(lambda x: jnp.sum(w * core.ops.segment_sum(x, ids, 3)))(x)),
                               [1.0, 1.0, 2.0, 3.0, 3.0])
    np.testing.assert_allclose(np.asarray(core.grad(lambda x: jnp.sum(w * core.ops.segment_max(x, ids, 3)))(x)),
                               [0.0, 1.0, 2.0, 3.0, 0.0])
    np.testing.assert_allclose(np.asarray(core.grad(lambda x: jnp.sum(w * core.ops.segment_min(x, ids, 3)))(x)),
                               [1.0, 0.0, 2.0, 0.0, 3.0])


def test_ensure_compile_time_eval_gives_concrete_values_inside_jit():
    from core.array import Array as DeviceArray
    seen = {}

    @core.jit
    def f(x):
        with core.ensure_compile_time_eval():
            y = jnp.sin(jnp.float32(3.0))
            positive = y > 0  # concrete: Python control flow may branch on it
            staged = x * y  # an operation on the traced argument is still staged
        seen.update(y=type(y), staged=type(staged))
        return staged if positive else -staged
    out = f(jnp.float32(2.0))
    assert seen["y"] is DeviceArray and seen["staged"] is not DeviceArray
    np.testing.assert_allclose(float(out), 2.0 * np.sin(3.0), rtol=1e-6)
    # outside a transformation it changes nothing
    with core.ensure_compile_time_eval():
        assert float(core.grad(lambda x: x * x)(3.0)) == 6.0


def test_named_scope_is_a_checked_no_op():
    def f(x):
        with core.named_scope("layer1"):
            return jnp.tanh(x) * 2
    np.testing.assert_allclose(np.asarray(core.jit(f)(jnp.array([0.5]))), 2 * np.tanh([0.5]), rtol=1e-6)
    assert str(core.make_jaxpr(f)(1.0)) == str(core.make_jaxpr(lambda x: jnp.tanh(x) * 2)(1.0))
    with pytest.raises(TypeError, match="named_scope: the name must be a string, got int 3"):
        with core.named_scope(3):
            pass


def _host_stats(x, scale):
    return {"sin": np.sin(x) * scale, "n": np.array(x.size, np.int32)}


def _stats_spec(x):
    return {"sin": core.ShapeDtypeStruct(x.shape, x.dtype), "n": core.ShapeDtypeStruct((), jnp.int32)}


def test_pure_callback_eager_jit_and_errors():
    x = jnp.arange(3.0)
    for fn in (lambda x: core.pure_callback(_host_stats, _stats_spec(x), x, 2.0),
               core.jit(lambda x: core.pure_callback(_host_stats, _stats_spec(x), x, scale=2.0))):
        out = fn(x)
        np.testing.assert_allclose(np.asarray(out["sin"]), 2 * np.sin(np.arange(3.0)), rtol=1e-6)
        assert int(out["n"]) == 3 and out["n"].dtype == jnp.int32 and out["n"].shape == ()
    # staged as one pure_callback equation, not run while tracing
    jaxpr = str(core.make_jaxpr(lambda x: core.pure_callback(_host_stats, _stats_spec(x), x, 2.0))(x))
    assert jaxpr.count("pure_callback") == 1
    bad = core.ShapeDtypeStruct((2,), jnp.float32)
    with pytest.raises(Exception, match=r"returned result 0 of shape \(3,\).*f32\[2\]"):
        core.pure_callback(np.sin, bad, x)
    with pytest.raises(ValueError, match="cannot be differentiated.*custom_jvp"):
        core.grad(lambda x: jnp.sum(core.pure_callback(np.sin, core.ShapeDtypeStruct((3,), jnp.float32), x)))(x)
    with pytest.raises(NotImplementedError, match="vmap_method=.*sequential"):
        core.vmap(lambda x: core.pure_callback(np.sin, core.ShapeDtypeStruct((), jnp.float32), x))(x)


def test_jax_style_program_with_top_level_pieces_ported_by_imports():
    # Graph pooling as JAX code writes it; only the imports were rewritten
    # (`import jax` -> `import core as jax`, `from jax.flatten_util import ...` -> `from core.flatten_util ...`).
    import core as jax
    import core.numpy as jnp
    from core.flatten_util import ravel_pytree

    def host_norm(v):
        return np.linalg.norm(v).astype(np.float32)

    def pool(params, feats, graph_ids):
        with jax.named_scope("pool"):
            with jax.ensure_compile_time_eval():
                n_graphs = 3
            h = jnp.tanh(feats @ params["w"])
            summed = jax.ops.segment_sum(h, graph_ids, num_segments=n_graphs)
            biggest = jax.ops.segment_max(h, graph_ids, num_segments=n_graphs)
        return summed + biggest

    params = {"w": jnp.asarray(np.linspace(-1, 1, 6).reshape(3, 2), jnp.float32)}
    feats = jnp.asarray(np.linspace(0.0, 2.0, 15).reshape(5, 3), jnp.float32)
    ids = jnp.array([0, 0, 1, 2, 2])
    out = jax.jit(pool)(params, feats, ids)
    grads = jax.grad(lambda p: jnp.sum(pool(p, feats, ids) ** 2))(params)
    flat, unravel = ravel_pytree(jax.tree.map(lambda g: g * 0.5, grads))
    norm = jax.jit(lambda v: jax.pure_callback(host_norm, jax.ShapeDtypeStruct((), jnp.float32), v))(flat)

    h = np.tanh(np.asarray(feats, np.float64) @ np.asarray(params["w"], np.float64))
    idn = np.asarray(ids)
    want = np.stack([h[idn == k].sum(0) + h[idn == k].max(0) for k in range(3)])
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5)
    # the gradient by hand: d sum(out^2)/dh = 2 out[k] (1 + [h is its segment's max]), then through tanh
    dh = np.stack([2 * want[k] * (1 + (h[i] == h[idn == k].max(0))) for i, k in enumerate(idn)])
    dw = np.asarray(feats, np.float64).T @ (dh * (1 - h ** 2))
    np.testing.assert_allclose(np.asarray(grads["w"]), dw, rtol=1e-4)
    np.testing.assert_allclose(float(norm), np.linalg.norm(0.5 * dw), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(unravel(flat)["w"]), 0.5 * dw, rtol=1e-4)

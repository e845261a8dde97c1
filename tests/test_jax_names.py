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

"""jit, make_jaxpr, eval_shape, disable_jit: equality with eager, trace/compile counts, static
arguments, closures, the jaxpr printer and type checker, and the tracing errors F1-F8."""
import functools
import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import api, errors, lax, random
from core.ir import check_jaxpr, JaxprTypeError


def _loss(params, x):
    return jnp.mean(jnp.tanh(x @ params["w"] + params["b"]) ** 2)


# The composition matrix (docs/design.md, Testing): one function per primitive family.
FUNCTIONS = {
    "elementwise": lambda x: jnp.sin(x) * jnp.exp(-x) + jnp.sqrt(jnp.abs(x)) - 2.0 * x,
    "compare_select": lambda x: jnp.where(x > 0.5, x, -x) + (x >= 0.2).astype(jnp.float32),
    "reductions": lambda x: jnp.stack([x.sum(0), x.max(0), x.min(0), x.mean(0), jnp.argmax(x, 0).astype(jnp.float32)]),
    "cumulative": lambda x: jnp.cumsum(x, axis=1) - jnp.cumprod(x, axis=0),
    "shape_ops": lambda x: jnp.concatenate([x.T.reshape(-1), jnp.flip(x, 0)[1:, ::2].ravel(), jnp.pad(x, 1).ravel()]),
    "indexing": lambda x: x[jnp.array([2, 0, 1])][:, 1] + x[1:, -1],
    "scatter": lambda x: x.at[0, jnp.array([1, 1, 2])].add(5.0).at[:, 0].set(-1.0),
    "dot": lambda x: x @ x.T + jnp.einsum("ij,ij->i", x, x)[:, None],
    "sort": lambda x: jnp.sort(x, axis=1) + jnp.argsort(x[:, 0]).astype(jnp.float32)[:, None],
    "conv": lambda x: lax.conv_general_dilated(x[None, None], jnp.ones((1, 1, 2, 2)), (1, 1), "SAME")[0, 0],
    "linalg": lambda x: jnp.linalg.inv(x[:3, :3] @ x[:3, :3].T + 3 * jnp.eye(3)),
    "fft": lambda x: jnp.abs(jnp.fft.rfft(x, axis=1)),
    "random": lambda x: x + random.normal(random.PRNGKey(0), x.shape),
    "dynamic_slice": lambda x: lax.dynamic_slice(x, (jnp.array(1), jnp.array(0)), (2, 2)),
    "mlp_loss": lambda x: _loss({"w": x[:4, :3], "b": x[0, :3]}, x[:, :4]),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_composition_matrix_jit_agrees_with_eager(rng, name):
    f = FUNCTIONS[name]
    x = jnp.asarray(rng.uniform(0.1, 1.0, (4, 5)).astype(np.float32))
    expected = np.asarray(f(x))
    np.testing.assert_allclose(np.asarray(core.jit(f)(x)), expected, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(np.asarray(core.jit(core.jit(f))(x)), expected, rtol=2e-5, atol=2e-5)
    check_jaxpr(core.make_jaxpr(f)(x).jaxpr)


def test_one_trace_and_one_compile_per_signature():
    traces = []

    @core.jit
    def f(x, y):
        traces.append(1)
        return x * y + 1.0

    x = jnp.ones(3)
    core.clear_caches()
    for _ in range(5):
        f(x, x)
    assert len(traces) == 1
    assert core.cache_info()["eager"]["misses"] == 1  # one compile (later calls take jit's fast path)
    f(x, 2.0)  # a weakly typed Python scalar is another signature
    f(x.astype(jnp.float16), x.astype(jnp.float16))
    f(x, 3.0)  # same weak f32[] signature as 2.0: no retrace
    assert len(traces) == 3


def test_pytrees_keywords_and_outputs():
    @core.jit
    def f(params, x, *, scale):
        return {"loss": _loss(params, x) * scale, "pair": (x.sum(), params["b"])}

    params = {"w": jnp.ones((2, 3)), "b": jnp.arange(3.0)}
    x = jnp.ones((4, 2))
    out = f(params, x, scale=2.0)
    assert set(out) == {"loss", "pair"} and isinstance(out["pair"], tuple)
    np.testing.assert_allclose(float(out["loss"]), 2.0 * float(_loss(params, x)), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(out["pair"][1]), [0.0, 1.0, 2.0])


def test_static_arguments_by_position_and_name():
    calls = []

    def f(x, n, mode="sum"):
        calls.append((n, mode))
        y = x
        for _ in range(n):  # n is a concrete Python int
            y = y * 2.0
        return y.sum() if mode == "sum" else y

    g = core.jit(f, static_argnums=1, static_argnames="mode")
    x = jnp.ones(2)
    assert float(g(x, 3)) == 16.0
    np.testing.assert_array_equal(np.asarray(g(x, 1, mode="id")), [2.0, 2.0])
    assert float(g(x, 3)) == 16.0
    assert calls == [(3, "sum"), (1, "id")]


def test_unhashable_static_argument_is_a_clear_error():  # F7
    g = core.jit(lambda x, shape: x.reshape(shape), static_argnums=1)
    with pytest.raises(ValueError, match=r"Non-hashable static arguments are not supported.*Static argument "
                                         r"\(index 1\) of type <class 'list'> for function <lambda> is non-hashable"):
        g(jnp.ones(4), [2, 2])
    assert g(jnp.ones(4), (2, 2)).shape == (2, 2)


@pytest.mark.parametrize("bad", ["a string", object()])
def test_non_array_argument_is_a_clear_error(bad):  # F8
    def f(x, y):
        return x
    with pytest.raises(TypeError, match=r"Argument 'y' of type <class '(str|object)'> is not a valid purenn type"):
        core.jit(f)(jnp.ones(2), bad)


def test_boolean_conversion_of_a_tracer():  # F1
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    with pytest.raises(errors.TracerBoolConversionError,
                       match=r"(?s)Attempted boolean conversion of traced array with shape bool\[\].*tracing the "
                             r"function f for jit.*test_jit.py:\d+.*lax.cond or jnp.where.*static_argnums"):
        core.jit(f)(jnp.ones(3))


def test_boolean_conversion_names_the_argument():
    def g(x):
        return x if x else -x
    with pytest.raises(errors.ConcretizationTypeError, match=r"the value of the argument x"):
        core.jit(g)(1.0)


def test_index_and_array_conversion_of_a_tracer():  # F3, F4
    with pytest.raises(errors.TracerIntegerConversionError, match=r"__index__\(\) method was called on traced array "
                                                                   r"with shape i32\[\]"):
        core.jit(lambda i: [1, 2, 3][i])(1)
    with pytest.raises(errors.TracerArrayConversionError, match=r"__array__\(\) was called on traced array with "
                                                                 r"shape f32\[3\]"):
        core.jit(lambda x: np.sin(np.asarray(x)))(jnp.ones(3))


def test_leaked_tracer_is_detected():  # F5
    leaked = []

    @core.jit
    def f(x):
        y = x * 2.0
        leaked.append(y)
        return y

    f(jnp.ones(3))
    with pytest.raises(errors.UnexpectedTracerError, match=r"type f32\[3\] escaped the scope.*tracing f for jit"):
        core.jit(lambda z: z + leaked[0])(jnp.ones(3))


def test_closed_over_arrays_become_arguments_not_literals():
    big = jnp.asarray(np.arange(1000, dtype=np.float32))

    def f(x):
        return x + big + 1.0

    closed = core.make_jaxpr(f)(jnp.ones(1000))
    assert len(closed.jaxpr.constvars) == 1 and closed.consts[0] is big
    text = core.jit(f).lower(jnp.ones(1000)).as_text()
    assert "tensor<1000xf32>, %1: tensor<1000xf32>" in text  # the constant is the first argument
    assert text.count("stablehlo.constant") == 1  # only the scalar 1.0 is inline
    np.testing.assert_array_equal(np.asarray(core.jit(f)(jnp.ones(1000))), np.arange(1000) + 2.0)


def test_nested_jit_closing_over_an_outer_tracer():
    @core.jit
    def outer(x):
        @core.jit
        def inner(y):
            return y * x
        return inner(3.0) + inner(x)

    np.testing.assert_allclose(np.asarray(outer(jnp.arange(3.0))), 3 * np.arange(3.0) + np.arange(3.0) ** 2)
    jaxpr = core.make_jaxpr(outer.fun)(jnp.arange(3.0))
    assert [e.primitive.name for e in jaxpr.eqns].count("jit") == 2


def test_make_jaxpr_prints_in_jax_format():
    text = str(core.make_jaxpr(lambda x: jnp.log(x) * 2.0)(1.0))
    assert text == "{ lambda ; a:f32[]. let\n    b:f32[] = log a\n    c:f32[] = mul b 2.0:f32[]\n  in (c,) }"
    closed, shape = core.make_jaxpr(lambda x: (x, x.sum()), return_shape=True)(jnp.ones((2, 3)))
    assert shape[1] == core.ShapeDtypeStruct((), jnp.float32) and shape[0].shape == (2, 3)
    assert re.search(r"reduce_sum\[axes=\(0, 1\)\]", str(closed))


def test_check_jaxpr_catches_a_corrupted_program():
    closed = core.make_jaxpr(lambda x: jnp.sin(x) + 1.0)(jnp.ones(3))
    check_jaxpr(closed.jaxpr)
    closed.jaxpr.eqns.reverse()  # now a variable is used before it is defined
    with pytest.raises(JaxprTypeError, match="used before it is defined"):
        check_jaxpr(closed.jaxpr)


def test_eval_shape_runs_nothing():
    out = core.eval_shape(lambda p, x: {"y": x @ p, "n": x.shape[0]}, jnp.ones((3, 5)),
                          core.ShapeDtypeStruct((7, 3), jnp.float32))
    assert out["y"] == core.ShapeDtypeStruct((7, 5), jnp.float32)


def test_disable_jit_runs_python_every_call():
    calls = []

    @core.jit
    def f(x):
        calls.append(1)
        return x + 1

    with core.disable_jit():
        f(jnp.ones(2))
        f(jnp.ones(2))
    assert len(calls) == 2 and not core.config.disable_jit


def test_lower_and_compile():
    f = core.jit(lambda x: jnp.tanh(x).sum())
    lowered = f.lower(jnp.ones(4))
    assert "stablehlo.tanh" in lowered.as_text() and "func.func public @main" in lowered.as_text()
    compiled = lowered.compile()
    np.testing.assert_allclose(float(compiled(jnp.ones(4))), 4 * np.tanh(1.0), rtol=1e-6)
    assert compiled.memory_stats().output_size_in_bytes == 4


def test_recompilation_warning_names_what_changed():  # docs/reliability.md S2
    f = core.jit(lambda x: x.sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in range(1, 8):
            f(jnp.ones(n))
    with pytest.warns(RuntimeWarning, match=r"more than 8 different signatures.*x: f32\[8\] -> f32\[9\]"):
        f(jnp.ones(8))
        f(jnp.ones(9))


def test_trace_cache_is_bounded():
    f = core.jit(lambda x: x * 2, max_cached_signatures=3)
    for n in range(1, 6):
        f(jnp.ones(n))
    assert len(f._cache) == 3


def test_jit_as_a_method_decorator_with_static_self():
    class Model:
        scale = 3.0

        @functools.partial(core.jit, static_argnums=0)
        def __call__(self, x):
            return x * self.scale

    np.testing.assert_array_equal(np.asarray(Model()(jnp.ones(2))), [3.0, 3.0])
    with pytest.raises(TypeError, match=r"Argument 'self' of type .*Model'> is not a valid purenn type.*static_argnums"):
        core.jit(Model.__call__)(Model(), jnp.ones(2))


def test_cache_counts_traces_and_compiles_per_signature():
    traces = []

    def f(x):
        traces.append(x.shape)
        return jnp.tanh(x) * 3.0

    g = core.jit(f)
    x4, y4, x5 = jnp.ones(4), jnp.zeros(4), jnp.ones(5)
    core.clear_caches()
    g(x4)
    assert len(traces) == 1 and core.cache_info()["eager"]["misses"] == 1
    g(y4)  # same signature: 0 traces, 0 compiles
    assert len(traces) == 1 and core.cache_info()["eager"]["misses"] == 1
    g(x5)  # a new shape: exactly one of each
    assert len(traces) == 2 and core.cache_info()["eager"]["misses"] == 2


def test_ten_thousand_jitted_closures_stay_within_the_cache_bounds():  # docs/reliability.md S3
    x = jnp.ones(3)
    core.clear_caches()
    for i in range(10_000):
        scale = float(i % 7)
        out = core.jit(lambda v: v * scale + 1.0)(x)  # a new function object every time
    info = core.cache_info()["eager"]
    assert float(out[0]) == (9_999 % 7) + 1.0
    # structurally equal programs are interned: only the 7 distinct literals compile
    assert info["misses"] == 7 and info["size"] <= info["maxsize"]


_CLOSURES_RSS_PROBE = r"""
import gc, json
import core, core.numpy as jnp
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
x = jnp.ones(3)
for i in range(100):  # warm: the 7 programs compiled, allocator pools grown
    core.jit(lambda v: v * float(i % 7) + 1.0)(x)
gc.collect()
before = rss_mb()
for i in range(10_000):
    scale = float(i % 7)
    out = core.jit(lambda v: v * scale + 1.0)(x)
gc.collect()
print(json.dumps({"growth_mb": rss_mb() - before}))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads the resident set from /proc")
def test_ten_thousand_jitted_closures_keep_the_resident_set_flat():  # docs/reliability.md S3
    # In a fresh process, so that other tests' memory does not count. Measured: +1.2 MB. Each dropped
    # closure's jit object (its traces, its fast-path table) must go with it; 1 KB kept per closure
    # would already be +10 MB.
    env = {**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    out = subprocess.run([sys.executable, "-c", _CLOSURES_RSS_PROBE], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    growth = json.loads(out.stdout.strip().splitlines()[-1])["growth_mb"]
    assert growth < 10, growth


def test_fast_path_respects_disable_jit_config_and_new_signatures():
    calls = []

    @core.jit
    def f(x):
        calls.append(1)
        return x * 2.0

    x = jnp.ones(3)
    f(x)
    f(x)  # fast path
    assert len(calls) == 1
    with core.disable_jit():
        f(x)
    assert len(calls) == 2  # ran as Python
    np.testing.assert_array_equal(np.asarray(f(x.astype(jnp.float16))), [2.0, 2.0, 2.0])
    assert len(calls) == 3  # a new dtype traced anew
    core.config.update("enable_x64", True)
    try:
        assert f(jnp.ones(3)).dtype == np.float64  # the config is part of the signature
    finally:
        core.config.update("enable_x64", False)
    core.clear_caches()
    f(x)
    assert len(calls) == 5  # clear_caches forgets jitted functions' traces too


class _PythonFastPathJit(api._JitFunction):
    __call__ = api._python_call


FAST_PATHS = ["c", "python"]


def _jit_on(impl, fun):
    """core.jit(fun) with the fast path `impl`: the C extension (core/_jitfast.c; skipped when it
    is not built) or the Python one it mirrors (api._python_call)."""
    f = core.jit(fun)
    if impl == "c":
        if api._jitfast is None:
            pytest.skip("core._jitfast is not built here")
        assert type(f).__call__ is not api._python_call
    else:
        f.__class__ = _PythonFastPathJit
    return f


@pytest.mark.parametrize("impl", FAST_PATHS)
@pytest.mark.parametrize("nargs", [1, 2, 3])
def test_fast_path_sees_debug_nans_turned_on(nargs, impl):
    f = _jit_on(impl, lambda *xs: jnp.log(sum(xs)))  # 1, 2 and 3 arguments: the fast path's key forms
    xs = [jnp.ones(3)] * nargs
    bad = [-x for x in xs]
    f(*xs)  # the signature is now on the fast path, where a NaN passes unchecked
    assert np.isnan(np.asarray(f(*bad))).all()
    core.config.update("debug_nans", True)
    try:
        np.testing.assert_allclose(np.asarray(f(*xs)), np.log(nargs))
        with pytest.raises(FloatingPointError, match="log"):
            f(*bad)
    finally:
        core.config.update("debug_nans", False)
    assert np.isnan(np.asarray(f(*bad))).all()  # and back on the fast path, unchecked


@pytest.mark.parametrize("impl", FAST_PATHS)
@pytest.mark.parametrize("nargs", [0, 1, 2, 3, 4, 5])
def test_fast_path_every_arity_with_mixed_argument_kinds(nargs, impl):
    # Each arity has its own spelled-out key on the fast path; a non-Array argument (a Python
    # number, a NumPy array) or a committed Array in any position must fall back, not misfire.
    if nargs == 0:
        f = _jit_on(impl, lambda: jnp.arange(3.0) * 2.0)
        for _ in range(3):
            np.testing.assert_allclose(np.asarray(f()), [0.0, 2.0, 4.0])
        return
    f = _jit_on(impl, lambda *xs: sum(x * (i + 1) for i, x in enumerate(xs)))
    base = [np.arange(3, dtype=np.float32) + i for i in range(nargs)]
    expected = sum(b * (i + 1) for i, b in enumerate(base))
    arrays = [jnp.asarray(b) for b in base]
    for _ in range(3):  # the second and third calls take the fast path
        np.testing.assert_allclose(np.asarray(f(*arrays)), expected)
    committed = core.device_put(arrays[-1], core.devices()[0])
    for other in (base[-1], committed):
        mixed = arrays[:-1] + [other]
        np.testing.assert_allclose(np.asarray(f(*mixed)), expected)
    np.testing.assert_allclose(np.asarray(f(*arrays[:-1], 2.0)), expected - base[-1] * nargs + 2.0 * nargs)
    np.testing.assert_allclose(np.asarray(f(*arrays)), expected)

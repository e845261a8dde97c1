"""Issue 3 leftovers: the tracer leak checker (docs/reliability.md F5, F6, E3), `jit(backend=)`,
`lax.map(batch_size=)` and the older `lax.cond` calling forms."""
import gc
import re

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import errors, lax, test_util as tu

LEAKED = None  # the global the leak tests store tracers in


class _Holder:
    pass


@pytest.fixture(autouse=True)
def _no_leftover_tracers():
    global LEAKED
    yield
    LEAKED = None
    gc.collect()


# ----- leak checker (F6): errors at the moment the traced function returns ---------------------------

def test_leak_through_a_global_under_jit_names_the_tracer_and_its_line():
    def f(x):
        global LEAKED
        y = jnp.sin(x)  # the leaked value's line
        LEAKED = y
        return y * 2.0

    with core.checking_leaks():
        with pytest.raises(errors.LeakedTracerError) as info:
            core.jit(f)(jnp.ones(3))
    msg = str(info.value)
    line = f.__code__.co_firstlineno + 2
    assert msg.startswith("Leaked trace of f (traced for jit). Leaked tracer(s):\n"), msg
    assert re.search(rf"JaxprTracer f32\[3\], created at .*test_issue3_leftovers\.py:{line} \(f\); referred to "
                     r"by the global 'LEAKED' of module \S*test_issue3_leftovers", msg), msg
    assert "false positives" in msg


def test_leak_through_a_list_and_an_argument_under_make_jaxpr():
    store = []

    def g(x, y):
        store.append(y)  # an argument, not a computed value
        store.append(x + y)
        return x

    with core.checking_leaks():
        with pytest.raises(Exception, match=r"^Leaked trace of g") as info:
            core.make_jaxpr(g)(1.0, jnp.ones(2))
    msg = str(info.value)
    assert re.search(r"JaxprTracer f32\[2\], the value of the argument y; referred to by a list", msg), msg
    assert re.search(r"JaxprTracer f32\[2\], created at .*test_issue3_leftovers\.py:\d+ \(g\); referred to by a "
                     "list", msg), msg


def test_leak_through_an_object_attribute():
    holder = _Holder()

    def h(x):
        holder.value = x * 3.0
        return x

    with core.checking_leaks():
        with pytest.raises(errors.LeakedTracerError, match=r"referred to by the attribute 'value' of a _Holder "
                                                           r"object"):
            core.jit(h)(2.0)


def test_leak_inside_scan_and_while_bodies():
    store = []

    def body(c, x):
        store.append(c)
        return c + x, c

    with core.checking_leaks():
        with pytest.raises(errors.LeakedTracerError, match=r"^Leaked trace of body \(traced for scan body\)\. "
                                                           r"Leaked tracer\(s\):\n  JaxprTracer f32\[\], argument 0 "
                                                           r"of the traced function; referred to by a list"):
            lax.scan(body, 0.0, jnp.arange(3.0))

        def step(i):
            store.append(i * 2)
            return i + 1

        with pytest.raises(errors.LeakedTracerError, match=r"Leaked trace of step \(traced for while_loop body\)"):
            core.jit(lambda n: lax.while_loop(lambda i: i < n, step, 0))(5)


def test_config_flag_works_like_the_context_manager_and_is_part_of_the_trace_key():
    def f(x):
        global LEAKED
        LEAKED = x + 1.0
        return x

    jf = core.jit(f)
    jf(1.0)  # flag off: traced and cached with no error
    core.config.update("check_tracer_leaks", True)
    try:
        # the cached trace is not reused with the flag on, so the leak is seen
        with pytest.raises(errors.LeakedTracerError, match="Leaked trace of f"):
            jf(1.0)
    finally:
        core.config.update("check_tracer_leaks", False)
    assert core.config.check_tracer_leaks is False


def test_no_false_positives():
    def mlp(w, x):
        h = jnp.tanh(x @ w)
        return jnp.sum(h * h)

    def returns_its_tracers(x, y):
        z = x * y
        return x, (z, [y, z]), {"again": x}

    def with_control_flow(x):
        c = lax.cond(jnp.sum(x) > 0, lambda v: v * 2.0, lambda v: -v, x)
        s = lax.fori_loop(0, 3, lambda i, a: a + c, jnp.zeros_like(x))
        return lax.map(jnp.sin, s, batch_size=2), core.jit(lambda v: v + c)(x)

    w, x = jnp.ones((3, 4)), jnp.ones((2, 3))
    with core.checking_leaks():
        assert float(core.jit(mlp)(w, x)) == pytest.approx(8 * np.tanh(3.0) ** 2, rel=1e-6)
        out = core.jit(returns_its_tracers)(jnp.ones(2), 3.0)
        tu.assert_allclose(out[1][0], np.full(2, 3.0), np.float32)
        core.make_jaxpr(returns_its_tracers)(1.0, 2.0)
        ms, add = core.jit(with_control_flow)(jnp.arange(5.0))
        tu.assert_allclose(ms, np.sin(6.0 * np.arange(5.0)), np.float32)
        tu.assert_allclose(add, 3.0 * np.arange(5.0), np.float32)


def test_flag_off_no_error_at_return_but_later_use_raises():
    store = []

    def f(x):
        y = x * 2.0
        store.append(y)
        return y

    assert core.config.check_tracer_leaks is False
    core.jit(f)(1.0)  # the leak itself goes unnoticed
    with pytest.raises(errors.UnexpectedTracerError, match=r"escaped the scope of the transformation.*tracing f"):
        core.jit(lambda v: v + store[0])(1.0)
    # with the flag on, the leaked tracer is the one reported, even though unrelated tracers exist
    with core.checking_leaks():
        with pytest.raises(errors.LeakedTracerError):
            core.jit(f)(1.0)
    assert core.config.check_tracer_leaks is False


# ----- jit(backend=) --------------------------------------------------------------------------------

def test_jit_backend_runs_on_that_backends_default_device():
    x = np.arange(6.0, dtype=np.float32)
    for backend in (None, core.default_backend(), core.default_backend().upper()):
        f = core.jit(lambda v: v * v + 1.0, backend=backend)
        out = f(jnp.asarray(x))
        tu.assert_allclose(out, x * x + 1.0, np.float32)
        assert out.device == core.devices()[0]
        assert "stablehlo.multiply" in f.lower(x).as_text()
    g = core.jit(backend=core.default_backend())(lambda v: v - 1.0)  # decorator form
    tu.assert_allclose(g(x), x - 1.0, np.float32)


def test_jit_backend_errors():
    available = re.escape(repr(sorted({core.default_backend(), core.devices()[0].platform})))
    with pytest.raises(ValueError, match=rf"Unknown backend 'tpu' for jit; the available backends are {available}"):
        core.jit(lambda v: v, backend="tpu")
    with pytest.raises(ValueError, match=r"Unknown backend 'nope'"):
        core.jit(backend="nope")  # the decorator form checks at once too
    with pytest.raises(ValueError, match=r"can't specify both a device and a backend for jit, got device=.* and "
                                         r"backend='cpu'"):
        core.jit(lambda v: v, device=core.devices()[0], backend="cpu")


# ----- lax.map(batch_size=) ---------------------------------------------------------------------------

def _np_map(f, xs):
    return np.stack([f(x) for x in xs]) if len(xs) else np.zeros((0,) + np.shape(f(np.zeros(xs.shape[1:]))))


@pytest.mark.parametrize("length,batch_size", [(6, 2), (6, 6), (7, 3), (7, 1), (3, 10), (0, 2)])
def test_map_batch_size_against_a_numpy_loop(rng, length, batch_size):
    xs = tu.rand(rng, (length, 3), np.float32)
    seen = []

    def f(v):
        seen.append(v.shape)  # each call gets one slice, as without batch_size
        return {"s": jnp.sum(jnp.sin(v)), "v": v * 2.0}

    out = lax.map(f, jnp.asarray(xs), batch_size=batch_size)
    assert set(seen) <= {(3,)}
    tu.assert_allclose(out["s"], _np_map(lambda v: np.sum(np.sin(np.float64(v))), xs), np.float32)
    tu.assert_allclose(out["v"], xs.astype(np.float64) * 2.0, np.float32)
    assert out["s"].shape == (length,) and out["v"].shape == (length, 3)
    jitted = core.jit(lambda x: lax.map(lambda v: v @ v, x, batch_size=batch_size))(xs)
    tu.assert_allclose(jitted, _np_map(lambda v: v.astype(np.float64) @ v, xs), np.float32)


def test_map_batch_size_with_pytree_inputs_matches_unbatched():
    xs = (jnp.arange(10.0), jnp.arange(20).reshape(10, 2))
    f = lambda t: t[0] * t[1][0] + t[1][1]
    tu.assert_allclose(lax.map(f, xs, batch_size=4), np.asarray(lax.map(f, xs)), np.float32)


def test_map_batch_size_errors():
    for bad in (0, -2):
        with pytest.raises(ValueError, match=rf"lax.map: batch_size must be a positive integer, got {bad}\."):
            lax.map(jnp.sin, jnp.ones(4), batch_size=bad)
    with pytest.raises(ValueError, match=r"different leading axis sizes: \[3, 4\]"):
        lax.map(lambda t: t[0], (jnp.ones(3), jnp.ones(4)), batch_size=2)


# ----- lax.cond: operand= and the five-argument form -------------------------------------------------

def test_cond_operand_keyword():
    x = jnp.asarray(np.array([1.0, -2.0], np.float32))
    f = lambda p, x: lax.cond(p, lambda v: v * 10.0, lambda v: v - 1.0, operand=x)
    g = lambda p, d: lax.cond(p, lambda d: d["a"] + d["b"], lambda d: d["a"] * d["b"], operand=d)
    for h in (f, core.jit(f)):
        tu.assert_allclose(h(True, x), np.array([10.0, -20.0]), np.float32)
        tu.assert_allclose(h(False, x), np.array([0.0, -3.0]), np.float32)
    d = {"a": jnp.ones(2), "b": x}
    tu.assert_allclose(core.jit(g)(False, d), np.array([1.0, -2.0]), np.float32)
    tu.assert_allclose(g(True, d), np.array([2.0, -1.0]), np.float32)


def test_cond_operand_keyword_with_positional_operands_is_an_error():
    with pytest.raises(TypeError, match=r"if the 'operand' keyword is passed then no operands can be passed "
                                        "positionally"):
        lax.cond(True, lambda v: v, lambda v: v, 1.0, operand=2.0)


def test_cond_five_argument_form():
    # cond(pred, true_operand, true_fun, false_operand, false_fun): each branch gets its own operand
    f = lambda p, a, b: lax.cond(p, a, lambda a: a * 2.0, b, lambda b: jnp.sum(b))
    a, b = jnp.asarray(np.float32(3.0)), jnp.arange(4.0)
    for h in (f, core.jit(f)):
        assert float(h(True, a, b)) == 6.0
        assert float(h(False, a, b)) == 6.0 and float(h(False, a, b + 1.0)) == 10.0

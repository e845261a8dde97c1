"""debug_nans / debug_infs (docs/reliability.md F30-F32, F35) and core.debug.print / callback, eagerly
and inside jit (where they run through an XLA host callback at execution time)."""
import contextlib

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import debugging as debug
from core import lax


@contextlib.contextmanager
def flag(name, value=True):
    previous = core.config.read(name)
    core.config.update(name, value)
    try:
        yield
    finally:
        core.config.update(name, previous)


# ----- debug_nans / debug_infs ----------------------------------------------------------------------

def test_eager_nan_names_the_primitive():  # F30
    with flag("debug_nans"):
        with pytest.raises(FloatingPointError, match=r"^invalid value \(nan\) encountered in div$"):
            jnp.zeros(3) / 0.0
        np.testing.assert_array_equal(np.asarray(jnp.ones(3) / 2.0), [0.5] * 3)  # valid values pass
        np.testing.assert_array_equal(np.asarray(jnp.arange(3) // 1), [0, 1, 2])  # ints are not checked
    assert np.isnan(np.asarray(jnp.zeros(1) / 0.0)).all()  # flag off: NaN passes silently


def _nan_in_the_middle(x):
    y = jnp.exp(x)
    z = jnp.log(x - 2.0)  # NaN for x < 2: the first invalid value
    return y * z + 1.0


def test_jit_nan_is_traced_to_the_first_primitive_and_its_line():  # F30, E2
    f = core.jit(_nan_in_the_middle)
    with flag("debug_nans"):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log at .*test_debugging.py:"
                                                     r"\d+ \(_nan_in_the_middle\).*re-running jit\(_nan_in_the_middle\)"
                                                     r" op by op"):
            f(jnp.ones(3))


def test_jit_nan_inside_a_nested_jit_names_the_inner_primitive():
    inner = core.jit(lambda x: jnp.sqrt(x) * 2.0)
    outer = core.jit(lambda x: inner(x - 5.0) + 1.0)
    with flag("debug_nans"):
        with pytest.raises(FloatingPointError, match=r"encountered in sqrt at .*test_debugging.py.*jit\(<lambda>\)"):
            outer(jnp.ones(2))


def test_no_nan_in_the_de_optimized_function():  # F31
    with flag("debug_nans"):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in jit\(identity\)\. "
                                                     r"Because debug_nans is set, the de-optimized function.*did not "
                                                     r"produce invalid values.*removing the jit decorator"):

            def identity(x):
                return x
            core.jit(identity)(jnp.array([1.0, np.nan]))


def test_debug_infs():  # F32
    with flag("debug_infs"):
        with pytest.raises(FloatingPointError, match=r"^invalid value \(inf\) encountered in div$"):
            jnp.ones(2) / 0.0
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in exp at .*test_debugging"):
            core.jit(lambda x: jnp.exp(x) - 1.0)(jnp.full(2, 100.0))
        assert np.isnan(np.asarray(jnp.zeros(1) / 0.0)).all()  # only Inf is checked
    with flag("debug_nans"):
        assert np.isinf(np.asarray(jnp.ones(1) / 0.0)).all()  # only NaN is checked


def test_failures_do_not_poison_the_caches():  # F35
    traces = []

    @core.jit
    def f(x):
        traces.append(1)
        return jnp.log(x) * 2.0

    with flag("debug_nans"):
        for _ in range(2):
            with pytest.raises(FloatingPointError, match="encountered in log"):
                f(-jnp.ones(3))
        np.testing.assert_allclose(np.asarray(f(jnp.ones(3) * np.e)), [2.0] * 3, rtol=1e-6)
    assert np.isnan(np.asarray(f(-jnp.ones(3)))).all()  # off again: the cached program runs unchecked
    assert len(traces) == 1


def test_nan_check_under_control_of_complex_outputs():
    with flag("debug_nans"):
        z = lax.complex(jnp.zeros(2), jnp.zeros(2))
        with pytest.raises(FloatingPointError, match=r"encountered in div"):
            z / 0.0


# ----- debug.print and debug.callback --------------------------------------------------------------

def test_callback_eagerly_gets_numpy_values():
    seen = []
    debug.callback(lambda a, b, *, c: seen.append((a, b, c)), jnp.arange(3), 2.5, c={"k": jnp.ones(2) > 0})
    (a, b, c), = seen
    assert isinstance(a, np.ndarray) and a.tolist() == [0, 1, 2] and float(b) == 2.5
    assert c["k"].dtype == np.bool_ and c["k"].all()


def test_callback_runs_at_every_execution_inside_jit():
    seen, traces = [], []

    @core.jit
    def f(x, scale):
        traces.append(1)
        y = x * scale
        debug.callback(lambda v, tree: seen.append((v.copy(), tree["n"].copy(), tree["flags"].copy())),
                       y, {"n": jnp.sum(y).astype(jnp.int32), "flags": y > 2})
        return y + 1.0

    for s in (1.0, 2.0, 3.0):
        np.testing.assert_array_equal(np.asarray(f(jnp.arange(3.0), s)), np.arange(3.0) * s + 1)
    assert len(traces) == 1 and len(seen) == 3
    for (v, n, flags), s in zip(seen, (1.0, 2.0, 3.0), strict=True):
        np.testing.assert_array_equal(v, np.arange(3.0) * s)
        assert n == int(3 * s) and flags.tolist() == [x > 2 for x in np.arange(3.0) * s]


def test_debug_print_formats_runtime_values(capsys):
    @core.jit
    def f(x):
        debug.print("x = {x}, total {}", x.sum(), x=x)
        return x * 2

    f(jnp.arange(3.0))
    f(jnp.arange(3.0) + 1)
    debug.print("eager {} and {}", jnp.arange(2), 7)
    assert capsys.readouterr().out.splitlines() == ["x = [0. 1. 2.], total 3.0", "x = [1. 2. 3.], total 6.0",
                                                    "eager [0 1] and 7"]


def test_callback_is_an_equation_that_is_kept_and_in_nested_jit(capsys):
    def f(x):
        debug.print("inner {}", x)
        return x + 1.0

    jaxpr = core.make_jaxpr(f)(1.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["debug_callback", "add"]
    assert jaxpr.eqns[0].outvars == [] and debug.debug_callback_p.has_side_effect
    out = core.jit(lambda x: core.jit(f)(x) * 2.0)(2.0)
    assert float(out) == 6.0 and capsys.readouterr().out == "inner 2.0\n"


def test_callback_in_lowered_and_compiled_program(capsys):
    f = core.jit(lambda x: (debug.print("v={}", x), x * 3.0)[1])
    lowered = f.lower(jnp.ones(2))
    assert "xla_ffi_python_cpu_callback" in lowered.as_text() and "has_side_effect = true" in lowered.as_text()
    np.testing.assert_array_equal(np.asarray(lowered.compile()(jnp.ones(2))), [3.0, 3.0])
    assert capsys.readouterr().out == "v=[1. 1.]\n"


def test_callback_errors():
    with pytest.raises(TypeError, match=r"core.debug.callback expects a callable, got 3"):
        debug.callback(3, jnp.ones(2))
    with pytest.raises(TypeError, match=r"core.debug.print expects a format string first"):
        debug.print(jnp.ones(2))

    def boom(v):
        raise ValueError("bad value in callback")

    with pytest.raises(RuntimeError, match=r"(?s)CpuCallback error calling callback.*ValueError: bad value in callback"):
        core.jit(lambda x: (debug.callback(boom, x), x)[1])(jnp.ones(2))

"""Donation (F29), named_call, xla_computation, default_backend, jit(device=...), and traceback
filtering at the API boundary (F12)."""
import os
import traceback
import warnings

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core.api import named_call, xla_computation
from core.traceback_util import UnfilteredStackTrace

from test_runtime import run_python

CORE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "core") + os.sep


# ----- donation --------------------------------------------------------------------------------------

def test_donated_argument_is_aliased_and_deleted():
    f = core.jit(lambda x, y: x * 2.0 + y, donate_argnums=0)
    x, y = jnp.arange(10.0), jnp.ones(10)
    assert "tf.aliasing_output = 0 : i32" in f.lower(x, y).as_text()
    out = f(x, y)
    np.testing.assert_array_equal(np.asarray(out), np.arange(10.0) * 2 + 1)
    assert x.is_deleted() and not y.is_deleted() and not out.is_deleted()
    with pytest.raises(RuntimeError, match=r"^Array has been deleted with shape=f32\[10\]\."):
        x + 1.0
    with pytest.raises(RuntimeError, match=r"^Array has been deleted with shape=f32\[10\]\."):
        f(x, y)
    with pytest.raises(RuntimeError, match=r"deleted"):  # reading the host value (jaxlib's message)
        np.asarray(x)


def test_donating_a_pytree_argument():
    f = core.jit(lambda p, g: {"w": p["w"] - 0.1 * g, "b": p["b"] - 0.1}, donate_argnums=(0,))
    p = {"w": jnp.ones((2, 3)), "b": jnp.zeros(3)}
    out = f(p, jnp.ones((2, 3)))
    np.testing.assert_allclose(np.asarray(out["w"]), np.full((2, 3), 0.9), rtol=1e-6)
    assert p["w"].is_deleted() and p["b"].is_deleted()


def test_donating_the_same_array_twice_is_an_error():  # F29
    x = jnp.ones(4)
    both = core.jit(lambda a, b: (a + b, a - b), donate_argnums=(0, 1))
    with pytest.raises(RuntimeError, match=r"the same Array \(f32\[4\]\) is donated twice"):
        both(x, x)
    one = core.jit(lambda a, b: a + b, donate_argnums=0)
    with pytest.raises(RuntimeError, match=r"passed both as a donated argument and as another argument"):
        one(x, x)
    assert not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(one(x, jnp.ones(4))), [2.0] * 4)


def test_unusable_donation_warns_and_keeps_the_buffer():  # F29
    f = core.jit(lambda x: x.sum(), donate_argnums=0)
    x = jnp.ones(3)
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: f32\[3\]"):
        assert float(f(x)) == 3.0
    assert not x.is_deleted()


# ----- named_call, xla_computation, default_backend, device ---------------------------------------

def test_named_call_names_the_staged_function():
    layer = named_call(lambda x: jnp.tanh(x) * 2.0, name="layer")
    jaxpr = core.make_jaxpr(lambda x: layer(x) + 1.0)(1.0)
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit", "add"]
    assert jaxpr.eqns[0].params["name"] == "layer"
    assert "jit[name=layer jaxpr={ lambda ; " in str(jaxpr)
    np.testing.assert_allclose(float(layer(0.5)), 2 * np.tanh(0.5), rtol=1e-6)  # eagerly: just runs
    np.testing.assert_allclose(float(core.jit(lambda x: layer(x) + 1.0)(0.5)), 2 * np.tanh(0.5) + 1, rtol=1e-6)
    with pytest.raises(TypeError, match="named_call expects a callable"):
        named_call(3, name="x")


def test_xla_computation_gives_the_stablehlo_text():
    comp = xla_computation(lambda x, y: jnp.sin(x) * y)(jnp.ones(3), 2.0)
    text = comp.as_hlo_text()
    assert text == comp.as_text() and text.startswith("module @jit__lambda_")
    assert '"stablehlo.sine"' in text and "func.func public @main(%0: tensor<3xf32>, %1: tensor<f32>)" in text
    assert [e.primitive.name for e in comp.jaxpr.eqns][::2] == ["sin", "mul"]  # a weak-type convert between


def test_default_backend():
    assert core.default_backend() in ("cpu", "gpu")
    assert core.default_backend() == ("cpu" if core.devices()[0].platform == "cpu" else "gpu")


def test_jit_on_a_chosen_device():
    result = run_python("""
        import core, core.numpy as jnp
        d0, d1 = core.devices()
        f = core.jit(lambda x, y: x * 2.0 + y, device=d1)
        out = f(jnp.arange(3.0), 1.0)
        assert out.device == d1 and out.committed, out.device
        assert out.tolist() == [1.0, 3.0, 5.0]
        assert core.jit(lambda x: x + 1.0)(jnp.ones(2)).device == d0
        print("ok")
    """, PURENN_NUM_CPU_DEVICES="2")
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]


# ----- traceback filtering ---------------------------------------------------------------------------

def _user_fn(x):
    return lax.add(x, jnp.ones(4))


def _frames(tb):
    return traceback.extract_tb(tb)


@pytest.mark.parametrize("entry", ["jit", "nested_jit", "make_jaxpr", "eval_shape"])
def test_internal_frames_are_filtered(entry):  # F12
    calls = {
        "jit": lambda: core.jit(_user_fn)(jnp.ones(3)),
        "nested_jit": lambda: core.jit(lambda x: core.jit(_user_fn)(x) * 2.0)(jnp.ones(3)),
        "make_jaxpr": lambda: core.make_jaxpr(_user_fn)(jnp.ones(3)),
        "eval_shape": lambda: core.eval_shape(_user_fn, jnp.ones(3)),
    }
    with pytest.raises(TypeError) as info:
        calls[entry]()
    e = info.value
    assert str(e) == "add got incompatible shapes for broadcasting: (3,), (4,)."  # type and message unchanged
    frames = _frames(e.__traceback__)
    assert "_user_fn" in [f.name for f in frames]
    assert not [f for f in frames if f.filename.startswith(CORE_DIR)]
    assert isinstance(e.__cause__, UnfilteredStackTrace)
    full = _frames(e.__cause__.__traceback__)
    assert any(f.filename.startswith(CORE_DIR) for f in full) and "_user_fn" in [f.name for f in full]


def test_filtering_switched_off_by_the_environment():
    result = run_python("""
        import traceback, core, core.numpy as jnp
        from core import lax
        def user_fn(x):
            return lax.add(x, jnp.ones(4))
        try:
            core.jit(user_fn)(jnp.ones(3))
        except TypeError as e:
            names = [f.filename for f in traceback.extract_tb(e.__traceback__)]
            print(any("/core/" in n for n in names), e.__cause__ is None)
    """, PURENN_TRACEBACK_FILTERING="off")
    assert result.stdout.split() == ["True", "True"], result.stderr[-2000:]


def test_errors_of_later_calls_are_still_filtered():
    f = core.jit(_user_fn)
    for _ in range(2):
        with pytest.raises(TypeError) as info:
            f(jnp.ones(3))
        assert not [fr for fr in _frames(info.value.__traceback__) if fr.filename.startswith(CORE_DIR)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(np.asarray(f(jnp.ones(4))), [2.0] * 4)

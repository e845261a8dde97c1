"""The pure_callback primitive under vmap (core/callbacks.py): each `vmap_method` against a NumPy
oracle, with the host function's calls and their operand shapes checked, eagerly and under jit,
and nested vmaps."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core.callbacks import pure_callback_p  # noqa: F401  (the primitive these tests batch)

SCALAR = core.ShapeDtypeStruct((), jnp.float32)


def _recording_dot(shapes):
    def host_dot(a, b):
        shapes.append((np.shape(a), np.shape(b)))
        return np.sum(a * b, axis=-1)
    return host_dot


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_each_vmap_method_calls_the_host_as_jax_does(method, jit):
    shapes = []
    host_dot = _recording_dot(shapes)
    a = np.arange(6.0).reshape(2, 3)
    b = np.array([1.0, -1.0, 2.0])
    f = core.vmap(lambda a: core.pure_callback(host_dot, SCALAR, a, b, vmap_method=method))
    f = core.jit(f) if jit else f
    np.testing.assert_allclose(np.asarray(f(jnp.asarray(a, jnp.float32))), a @ b, rtol=1e-6)
    want = {"sequential": [((3,), (3,))] * 2, "expand_dims": [((2, 3), (1, 3))],
            "broadcast_all": [((2, 3), (2, 3))]}[method]
    assert shapes == want


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
def test_nested_vmaps_with_different_batched_operands(method):
    shapes = []
    host_dot = _recording_dot(shapes)
    a = np.arange(6.0).reshape(2, 3)   # mapped by the inner vmap
    b = np.arange(12.0).reshape(4, 3)  # mapped by the outer vmap
    inner = core.vmap(lambda x, y: core.pure_callback(host_dot, SCALAR, x, y, vmap_method=method), (0, None))
    out = core.jit(core.vmap(inner, (None, 0)))(jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32))
    np.testing.assert_allclose(np.asarray(out), b @ a.T, rtol=1e-6)  # out[j, i] = a[i] . b[j]
    want = {"sequential": [((3,), (3,))] * 8, "expand_dims": [((1, 2, 3), (4, 1, 3))],
            "broadcast_all": [((4, 2, 3), (4, 2, 3))]}[method]
    assert shapes == want


def test_vectorized_host_result_of_the_wrong_shape_is_reported():
    f = core.jit(core.vmap(lambda a: core.pure_callback(lambda a: np.sum(a), SCALAR, a, vmap_method="expand_dims")))
    with pytest.raises(Exception, match=r"returned result 0 of shape \(\).*f32\[2\]"):
        f(jnp.ones((2, 3)))

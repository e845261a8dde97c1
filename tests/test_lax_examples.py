"""The pattern every primitive test follows: the primitive against a float64 NumPy oracle, over
sampled (shape, dtype) cases from test_util's groups."""
import numpy as np
import pytest

import core.numpy as jnp
from core import lax, test_util as tu


@pytest.mark.parametrize("shape,dtype", tu.sample_cases(tu.product(tu.ALL_SHAPES, tu.NUMBER_DTYPES), "add"))
def test_add_matches_numpy(rng, shape, dtype):
    x, y = tu.rand(rng, shape, dtype), tu.rand(rng, shape, dtype)
    out = lax.add(jnp.asarray(x), jnp.asarray(y))
    assert out.dtype == np.dtype(dtype) and out.shape == shape
    expected = x.astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64) + y
    if np.dtype(dtype).kind in "iu":
        expected = (x + y)  # wraps like the device does
    tu.assert_allclose(out, expected, dtype)


def test_lax_add_shape_errors():
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: \(3,\), \(4,\)"):
        lax.add(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError, match=r"add: arrays must have same number of dimensions, got \(3,\), \(3, 4\)"):
        lax.add(jnp.ones(3), jnp.ones((3, 4)))


def test_lax_add_dtype_error_points_to_jnp():
    with pytest.raises(TypeError, match=r"lax.add requires arguments to have the same dtypes, got f32, i32.*jnp.add"):
        lax.add(jnp.ones(3), jnp.ones(3, jnp.int32))


def test_reduce_sum_matches_numpy(rng):
    x = tu.rand(rng, (2, 3, 4), np.float32)
    tu.assert_allclose(lax.reduce_sum(jnp.asarray(x), (0, 2)), x.astype(np.float64).sum((0, 2)), np.float32, atol=1e-5)


def test_lax_rank0_operands_broadcast_and_scalars_take_the_array_dtype():
    x = jnp.asarray(np.array([1.0, 2.0, 3.0], np.float16))
    out = lax.add(x, 2.0)
    assert out.dtype == np.float16 and out.shape == (3,)
    np.testing.assert_array_equal(np.asarray(out), [3.0, 4.0, 5.0])
    out = lax.mul(jnp.asarray(np.float32(2.0)), jnp.ones((2, 2)))
    np.testing.assert_array_equal(np.asarray(out), np.full((2, 2), 2.0))

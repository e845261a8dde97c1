"""core.Array: the NumPy-like surface, immutability, conversions and repr."""
import copy
import pickle

import numpy as np
import pytest

import core
import core.numpy as jnp


def test_basic_attributes():
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert x.shape == (2, 3) and x.dtype == np.float32 and x.ndim == 2 and x.size == 6
    assert len(x) == 2 and x.itemsize == 4 and x.nbytes == 24
    assert isinstance(x, core.Array) and isinstance(x, jnp.ndarray)


def test_repr_is_numpy_like():
    assert repr(jnp.array([1.0, 2.0])) == "Array([1., 2.], dtype=float32)"
    assert repr(jnp.array(2.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(jnp.array([[1, 2], [3, 4]], dtype=jnp.int8)) == "Array([[1, 2],\n       [3, 4]], dtype=int8)"
    assert str(jnp.array([1.0, 2.0])) == "[1. 2.]"
    assert repr(jnp.zeros((0, 2))) == "Array([], shape=(0, 2), dtype=float32)"
    assert repr(jnp.zeros((0,), jnp.int32)) == "Array([], dtype=int32)"


def test_conversions():
    x = jnp.array([[1.5, 2.0]])
    np.testing.assert_array_equal(np.asarray(x), [[1.5, 2.0]])
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert x.tolist() == [[1.5, 2.0]]
    assert jnp.array(3).item() == 3 and isinstance(jnp.array(3).item(), int)
    assert float(jnp.array([2.5])) == 2.5 and int(jnp.array(7)) == 7
    assert complex(jnp.array(1 + 2j)) == 1 + 2j
    assert [1, 2, 3][jnp.array(1)] == 2  # __index__
    assert f"{jnp.array(1.25):.1f}" == "1.2"


def test_iteration_yields_rows():
    rows = list(jnp.asarray(np.arange(6).reshape(3, 2)))
    assert len(rows) == 3 and all(isinstance(r, core.Array) for r in rows)
    np.testing.assert_array_equal(np.asarray(rows[2]), [4, 5])
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(jnp.array(1.0))


def test_truth_value_rules():
    assert bool(jnp.array([True]))
    with pytest.raises(ValueError, match=r"truth value of an array with shape \(2,\) is ambiguous"):
        bool(jnp.array([1, 2]))
    with pytest.raises(TypeError, match="only size-1 arrays"):
        float(jnp.ones(3))
    with pytest.raises(TypeError, match="only integer arrays can be used as an index"):
        [1, 2][jnp.array(1.0)]
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(jnp.array(1.0))


def test_arrays_are_immutable_and_unhashable():
    x = jnp.zeros(3)
    with pytest.raises(TypeError, match=r"does not support item assignment.*x.at\[idx\].set\(value\)"):
        x[0] = 1.0
    with pytest.raises(TypeError, match="unhashable type: 'Array'"):
        hash(x)


def test_copy_and_pickle_keep_value_and_weak_type():
    x = jnp.array(1.5)
    for y in (copy.copy(x), copy.deepcopy(x)):  # as in JAX, a new Array with its own buffer
        assert y is not x and y.weak_type and float(y) == 1.5
    y = pickle.loads(pickle.dumps(x))
    assert y.weak_type and float(y) == 1.5


def test_operators_match_numpy(rng):
    a = rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
    b = rng.uniform(0.5, 2, (3,)).astype(np.float32)
    x, y = jnp.asarray(a), jnp.asarray(b)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    cases = [(x + y, a64 + b64), (x - y, a64 - b64), (x * y, a64 * b64), (x / y, a64 / b64),
             (2.0 - x, 2.0 - a64), (x ** 2, a64 ** 2), (-x, -a64), (abs(-x), a64), (x // y, a64 // b64),
             (x % y, np.mod(a64, b64)), (x @ a.T, a64 @ a64.T)]
    for got, want in cases:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(x < y), a < b)
    np.testing.assert_array_equal(np.asarray(x >= 1.0), a >= 1.0)
    np.testing.assert_array_equal(np.asarray(x == x), np.ones((2, 3), bool))
    i, j = jnp.array([1, 6, 3]), jnp.array([3, 3, 1])
    np.testing.assert_array_equal(np.asarray((i & j, i | j, i ^ j, ~i, i << 1, i >> 1)),
                                  [[1, 2, 1], [3, 7, 3], [2, 5, 2], [-2, -7, -4], [2, 12, 6], [0, 3, 1]])


def test_methods_match_numpy(rng):
    a = rng.normal(size=(3, 4)).astype(np.float32)
    x = jnp.asarray(a)
    np.testing.assert_allclose(np.asarray(x.sum()), a.sum(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(x.mean(axis=0)), a.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(x.max(axis=1)), a.max(1))
    assert int(x.argmax()) == int(a.argmax())
    np.testing.assert_array_equal(np.asarray(x.reshape(4, 3)), a.reshape(4, 3))
    np.testing.assert_array_equal(np.asarray(x.reshape((2, 6))), a.reshape(2, 6))
    np.testing.assert_array_equal(np.asarray(x.T), a.T)
    np.testing.assert_array_equal(np.asarray(x.astype(jnp.int32)), a.astype(np.int32))
    np.testing.assert_array_equal(np.asarray(x.clip(-0.5, 0.5)), a.clip(-0.5, 0.5))
    np.testing.assert_array_equal(np.asarray(x.round()), np.round(a))
    np.testing.assert_array_equal(np.asarray(x[1:, ::2]), a[1:, ::2])
    np.testing.assert_array_equal(np.asarray(x.at[0, 1].set(9.0)), np.where(
        (np.arange(3)[:, None] == 0) & (np.arange(4) == 1), 9.0, a))
    assert x.devices() == {core.devices()[0]}


def test_amax_amin_are_max_min(rng):
    a = rng.normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.amax(jnp.asarray(a), axis=0)), np.amax(a, axis=0))
    np.testing.assert_array_equal(np.asarray(jnp.amin(jnp.asarray(a), axis=1, keepdims=True)),
                                  np.amin(a, axis=1, keepdims=True))


def test_reading_a_deleted_array_names_it():
    x = jnp.ones(10)
    x.delete()
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[10\]"):
        np.asarray(x)
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=f32\[10\]"):
        x.block_until_ready()

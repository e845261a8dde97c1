"""Static values are cache keys by type and value (issue 17 item 3).

`1`, `1.0` and `True` are equal in Python (and hash alike), yet they trace different programs:
`jnp.full((2,), n)` is int32, float32 and bool. jit's trace cache (both dispatch paths), pmap's
`static_broadcasted_argnums` and primitive parameters (the eager dispatch cache, jaxpr interning)
must keep them apart, and likewise 0.0 and -0.0.
"""
import numpy as np
import pytest

import core
import core.numpy as jnp


def _full_of(n):
    return jnp.full((2,), n)


@pytest.mark.parametrize("by", ["position", "name"])
def test_jit_static_argument_is_keyed_by_type(by):
    if by == "position":
        f = core.jit(_full_of, static_argnums=0)
        call = f
    else:
        f = core.jit(_full_of, static_argnames="n")
        call = lambda n: f(n=n)  # noqa: E731
    # each in both orders of first use: whichever comes first must not serve the others
    for order in ([1, 1.0, True], [True, 1.0, 1]):
        core.clear_caches()
        got = {repr(v): call(v) for v in order}
        assert got["1"].dtype == np.int32 and np.asarray(got["1"]).tolist() == [1, 1]
        assert got["1.0"].dtype == np.float32 and np.asarray(got["1.0"]).tolist() == [1.0, 1.0]
        assert got["True"].dtype == np.bool_ and np.asarray(got["True"]).tolist() == [True, True]


def test_equal_static_arguments_of_one_type_still_share_a_trace():
    traces = []

    def f(n):
        traces.append(n)
        return jnp.full((2,), n)

    g = core.jit(f, static_argnums=0)
    g(2)
    g(2)
    g(2.0)
    g(2.0)
    assert traces == [2, 2.0]


def test_static_tuples_are_keyed_element_by_element():
    f = core.jit(lambda x, fill: x * 0 + jnp.full((2,), fill[0]), static_argnums=1)
    x = jnp.zeros(2, dtype=jnp.int32)
    assert f(x, (1,)).dtype == np.int32
    assert f(x, (1.5,)).dtype == np.float32
    assert f(x, (1.0,)).dtype == np.float32  # not the (1,) trace
    assert f(x, (True,)).dtype == np.int32  # bool + int32 array: int32, from its own trace
    np.testing.assert_array_equal(np.asarray(f(x, (1.0,))), [1.0, 1.0])


def test_static_zero_and_negative_zero_are_different_arguments():
    f = core.jit(lambda z: jnp.full((1,), z), static_argnums=0)
    assert not np.signbit(np.asarray(f(0.0)))[0]
    assert np.signbit(np.asarray(f(-0.0)))[0]


def test_pmap_static_broadcasted_argument_is_keyed_by_type():
    n_dev = min(2, core.local_device_count())
    f = core.pmap(lambda x, n: x * 0 + jnp.full(x.shape, n), static_broadcasted_argnums=1)
    x = np.zeros((n_dev, 3), np.int32)
    outs = {repr(v): f(x, v) for v in (1, 1.0, True)}
    assert outs["1"].dtype == np.int32
    assert outs["1.0"].dtype == np.float32
    assert outs["True"].dtype == np.int32  # int32 array * 0 + bool: int32 (a separate trace all the same)
    np.testing.assert_array_equal(np.asarray(outs["1.0"]), np.ones((n_dev, 3)))
    g = core.pmap(lambda x, n: jnp.full(x.shape, n), static_broadcasted_argnums=1)
    assert [g(x, v).dtype for v in (True, 1, 1.0)] == [np.bool_, np.int32, np.float32]


def test_eager_primitive_parameters_zero_and_negative_zero_do_not_share_an_executable():
    # gather's fill value is a parameter of the primitive: keyed (dispatch cache, interning) by bits
    x = jnp.asarray(np.arange(3, dtype=np.float32))
    out_of_bounds = jnp.asarray(np.array([[5]], np.int32))
    pos = x.at[out_of_bounds].get(mode="fill", fill_value=0.0)
    neg = x.at[out_of_bounds].get(mode="fill", fill_value=-0.0)
    assert not np.signbit(np.asarray(pos)).any()
    assert np.signbit(np.asarray(neg)).all()
    jitted = core.jit(lambda v: v.at[out_of_bounds].get(mode="fill", fill_value=-0.0))
    assert np.signbit(np.asarray(jitted(x))).all()


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
def test_gather_fill_values_of_different_python_types(dtype):
    # 1, 1.0 and True as fill values of an int or float array: each converted to the array's dtype
    x = jnp.asarray(np.arange(3, dtype=dtype))
    idx = jnp.asarray(np.array([[1], [7]], np.int32))
    for fill in (1, 1.0, True, 2.5):
        out = x.at[idx].get(mode="fill", fill_value=fill)
        assert out.dtype == dtype
        np.testing.assert_array_equal(np.asarray(out), [[1], [np.asarray(fill).astype(dtype)]])

"""core.numpy creation functions against NumPy (values, shapes, dtypes with JAX's rules)."""
import ml_dtypes
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu
from core.trace import Tracer


def _check(out, expected, dtype=None, **tol):
    expected = np.asarray(expected)
    dtype = np.dtype(dtype if dtype is not None else expected.dtype)
    assert out.dtype == dtype, (out.dtype, dtype)
    assert out.shape == expected.shape, (out.shape, expected.shape)
    tu.assert_allclose(out, expected, dtype, **tol)


# ----- array / asarray ------------------------------------------------------------------------

def test_array_nested_lists_and_dtype_inference():
    _check(jnp.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]], np.int32))
    _check(jnp.array([1, 2.5]), np.array([1, 2.5], np.float32))
    _check(jnp.array([True, False]), np.array([True, False]))
    _check(jnp.array([]), np.zeros(0, np.float32))
    # NumPy would give float64 -> float32; JAX's lattice keeps the float16 leaf's dtype
    _check(jnp.array([np.float16(1), 2.0]), np.array([1, 2], np.float16))
    mixed = jnp.array([jnp.ones(2, jnp.int8), [3, 4], np.array([5, 6], np.int8)])
    _check(mixed, np.array([[1, 1], [3, 4], [5, 6]], np.int8))
    _check(jnp.array([jnp.ones(2), [1, 2]], dtype=jnp.int32), np.array([[1, 1], [1, 2]], np.int32))


def test_array_scalars_ndmin_copy():
    x = jnp.array(3.0)
    assert x.weak_type and x.dtype == np.float32 and x.shape == ()
    assert not jnp.array(True).weak_type
    assert jnp.array(3.0, ndmin=2).shape == (1, 1)
    assert jnp.array(np.ones((2, 3)), ndmin=1).shape == (2, 3)
    a = jnp.ones(3)
    _check(jnp.array(a, copy=False), np.ones(3, np.float32))
    assert jnp.asarray(a) is a
    _check(jnp.asarray(a, dtype=jnp.int32), np.ones(3, np.int32))
    with pytest.raises(TypeError, match="purenn only supports number and bool dtypes"):
        jnp.array(np.array(["a"]))


def test_array_of_tracers_uses_stack():
    class FakeTracer(Tracer):  # only the structure matters: `array` must route tracer lists through stack
        pass
    assert jnp.creation._contains_tracer([1, [FakeTracer.__new__(FakeTracer)]])
    assert not jnp.creation._contains_tracer([1, [2.0, jnp.ones(2)]])


# ----- zeros ones full empty and *_like ---------------------------------------------------------

@pytest.mark.parametrize("shape,dtype", tu.sample_cases(tu.product(tu.ALL_SHAPES, tu.ALL_DTYPES), "creation.fill", 6))
def test_zeros_ones_full(shape, dtype):
    _check(jnp.zeros(shape, dtype), np.zeros(shape, dtype))
    _check(jnp.ones(shape, dtype), np.ones(shape, dtype))
    _check(jnp.empty(shape, dtype), np.zeros(shape, dtype))
    _check(jnp.full(shape, 1, dtype), np.full(shape, 1, dtype))


def test_full_dtypes_and_broadcasting():
    out = jnp.full((2, 3), 1.5)
    _check(out, np.full((2, 3), 1.5, np.float32))
    assert out.weak_type  # a Python scalar fill stays weak, as in JAX
    assert not jnp.zeros(3).weak_type and jnp.zeros(3).dtype == np.float32
    _check(jnp.full((2, 3), jnp.array([1, 2, 3])), np.full((2, 3), [1, 2, 3], np.int32))
    _check(jnp.full(2, np.float16(3)), np.full(2, 3, np.float16))
    with pytest.raises(ValueError, match="negative dimensions are not allowed"):
        jnp.zeros((2, -1))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        jnp.full((2, 3), jnp.array([1, 2]))


def test_like_functions(rng):
    x = tu.rand(rng, (2, 3), np.int16)
    xj = jnp.asarray(x)
    _check(jnp.zeros_like(xj), np.zeros_like(x))
    _check(jnp.ones_like(xj, dtype=jnp.float32), np.ones_like(x, np.float32))
    _check(jnp.empty_like(xj, shape=(4,)), np.zeros(4, np.int16))
    _check(jnp.full_like(xj, 7), np.full_like(x, 7))
    _check(jnp.full_like(xj, jnp.array([1, 2, 3])), np.full_like(x, [1, 2, 3]))
    _check(jnp.full_like(np.ones(2, np.uint8), 3, shape=(2, 2)), np.full((2, 2), 3, np.uint8))
    assert jnp.zeros_like(jnp.full(2, 1.0)).weak_type
    with pytest.raises(TypeError, match="zeros_like requires ndarray or scalar arguments.*jnp.asarray"):
        jnp.zeros_like([1, 2])


# ----- arange linspace logspace geomspace ----------------------------------------------------------

@pytest.mark.parametrize("args,kwargs", [((5,), {}), ((0., 1., .1), {}), ((2, 10, 3), {}), ((5.5,), {}),
                                         ((10, 2, -2), {}), ((3,), {"dtype": np.float32}), ((0, 5, 2), {"dtype": np.int8}),
                                         ((1, 1), {}), ((-3,), {}), ((0, 1, 0.25), {"dtype": ml_dtypes.bfloat16})])
def test_arange(args, kwargs):
    out = jnp.arange(*args, **kwargs)
    expected_dtype = kwargs.get("dtype") or (np.float32 if any(isinstance(a, float) for a in args) else np.int32)
    _check(out, np.arange(*args, dtype=kwargs.get("dtype")).astype(expected_dtype), expected_dtype)


def test_arange_jax_dtype_rules_and_errors():
    assert jnp.arange(5).dtype == np.int32
    assert jnp.arange(0., 1., .1).dtype == np.float32 and jnp.arange(0., 1., .1).shape == (10,)
    assert jnp.arange(jnp.array(4)).shape == (4,)
    with pytest.raises(ValueError, match="arguments must be scalars"):
        jnp.arange(np.array([1, 2]))
    with pytest.raises(TypeError, match="complex"):
        jnp.arange(1j)


@pytest.mark.parametrize("start,stop,num,endpoint", [(0., 1., 5, True), (0., 1., 5, False), (2, 10, 7, True),
                                                     (-1., 3., 1, True), (-1., 3., 1, False), (0., 1., 0, True),
                                                     (5., -5., 11, True)])
def test_linspace(start, stop, num, endpoint):
    out, step = jnp.linspace(start, stop, num, endpoint=endpoint, retstep=True)
    exp, exp_step = np.linspace(start, stop, num, endpoint=endpoint, retstep=True)
    _check(out, exp, np.float32)
    if num > 1 or not endpoint:
        tu.assert_allclose(step, exp_step, np.float32)
    if num > 1 and endpoint:  # the endpoints are exact
        assert float(out[0]) == start and float(out[-1]) == stop


def test_linspace_arrays_axis_and_int_dtype():
    start, stop = np.array([0., 1.]), np.array([[2., 5.], [4., 9.], [1., 1.]])
    for axis in (0, 1, -1):
        _check(jnp.linspace(jnp.asarray(start), jnp.asarray(stop), 4, axis=axis),
               np.linspace(start, stop, 4, axis=axis), np.float32)
    _check(jnp.linspace(0, 10, 4, dtype=jnp.int32), np.linspace(0, 10, 4, dtype=np.int32))
    _check(jnp.linspace(-5, 0, 4, dtype=jnp.int32), np.floor(np.linspace(-5, 0, 4)).astype(np.int32))
    with pytest.raises(ValueError, match="Number of samples, -1, must be non-negative"):
        jnp.linspace(0., 1., -1)
    with pytest.raises(np.exceptions.AxisError, match="axis 3 is out of bounds for array of dimension 2"):
        jnp.linspace(jnp.zeros(2), jnp.ones(2), 3, axis=3)


@pytest.mark.parametrize("start,stop,num,endpoint,base", [(0., 2., 3, True, 10.), (1., 3., 4, False, 2.),
                                                          (-1., 1., 5, True, np.e), (0., 1., 0, True, 10.)])
def test_logspace(start, stop, num, endpoint, base):
    _check(jnp.logspace(start, stop, num, endpoint=endpoint, base=base),
           np.logspace(start, stop, num, endpoint=endpoint, base=base), np.float32, rtol=1e-5, atol=0)


@pytest.mark.parametrize("start,stop,num,endpoint", [(1., 1000., 4, True), (-1., -16., 5, True), (2., 64., 6, False),
                                                     (3., 5., 1, True), (1., 8., 0, True)])
def test_geomspace(start, stop, num, endpoint):
    out = jnp.geomspace(start, stop, num, endpoint=endpoint)
    # float32 log/exp round trip: a few ulps
    _check(out, np.geomspace(start, stop, num, endpoint=endpoint), np.float32, rtol=1e-5, atol=0)
    if num > 1 and endpoint:
        assert float(out[0]) == start and float(out[-1]) == stop
    _check(jnp.geomspace(np.array([1., 2.]), np.array([100., 8.]), 3, axis=1),
           np.geomspace(np.array([1., 2.]), np.array([100., 8.]), 3, axis=1), np.float32, rtol=1e-5, atol=0)


# ----- eye identity tri tril triu diag diagflat ----------------------------------------------------------

@pytest.mark.parametrize("N,M,k", [(3, None, 0), (2, 4, 1), (4, 2, -1), (3, 3, 5), (0, 2, 0), (1, None, 0)])
def test_eye_tri(N, M, k):
    _check(jnp.eye(N, M, k), np.eye(N, M, k, np.float32))
    _check(jnp.eye(N, M, k, dtype=jnp.int8), np.eye(N, M, k, np.int8))
    _check(jnp.tri(N, M, k), np.tri(N, M, k, np.float32))
    _check(jnp.tri(N, M, k, dtype=bool), np.tri(N, M, k, bool))


def test_identity():
    _check(jnp.identity(3), np.identity(3, np.float32))
    _check(jnp.identity(2, jnp.int32), np.identity(2, np.int32))


@pytest.mark.parametrize("shape,k", [((3, 3), 0), ((3, 4), 1), ((4, 3), -2), ((2, 3, 4), 0), ((2, 2), 5), ((0, 3), 0)])
def test_tril_triu(rng, shape, k):
    x = tu.rand(rng, shape, np.float32)
    _check(jnp.tril(jnp.asarray(x), k), np.tril(x, k))
    _check(jnp.triu(jnp.asarray(x), k), np.triu(x, k))


def test_tril_error():
    with pytest.raises(ValueError, match=r"tril: input array must be at least 2-d, got shape \(3,\)"):
        jnp.tril(jnp.ones(3))


@pytest.mark.parametrize("shape,k", [((3,), 0), ((3,), 2), ((3,), -1), ((0,), 1), ((1,), 0),
                                     ((3, 4), 0), ((3, 4), 2), ((4, 3), -1), ((3, 4), 5), ((3, 4), -4), ((2, 2), -1)])
def test_diag(rng, shape, k):
    x = tu.rand(rng, shape, np.int32)
    _check(jnp.diag(jnp.asarray(x), k), np.diag(x, k))


def test_diagflat_and_diag_error(rng):
    x = tu.rand(rng, (2, 2), np.float32)
    _check(jnp.diagflat(jnp.asarray(x), 1), np.diagflat(x, 1))
    _check(jnp.diagflat(jnp.asarray(x), -2), np.diagflat(x, -2))
    with pytest.raises(ValueError, match="diag: input must be 1-d or 2-d"):
        jnp.diag(jnp.ones((2, 2, 2)))


# ----- meshgrid indices fromfunction copy frombuffer ------------------------------------------------------

@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_meshgrid(indexing, sparse, n):
    xs = [np.arange(k + 2, dtype=np.float32) * (k + 1) for k in range(n)]
    outs = jnp.meshgrid(*map(jnp.asarray, xs), indexing=indexing, sparse=sparse)
    exps = np.meshgrid(*xs, indexing=indexing, sparse=sparse)
    assert len(outs) == len(exps)
    for o, e in zip(outs, exps):
        _check(o, e)


def test_meshgrid_errors():
    with pytest.raises(ValueError, match="Valid values for indexing are 'xy' and 'ij'"):
        jnp.meshgrid(jnp.ones(2), indexing="ji")
    with pytest.raises(ValueError, match=r"meshgrid: arguments must be 1-d, got shape \(2, 2\)"):
        jnp.meshgrid(jnp.ones((2, 2)))


@pytest.mark.parametrize("dims", [(2, 3), (4,), (), (2, 0, 1)])
def test_indices(dims):
    _check(jnp.indices(dims), np.indices(dims).astype(np.int32))
    for o, e in zip(jnp.indices(dims, sparse=True), np.indices(dims, sparse=True)):
        _check(o, e.astype(np.int32))
    _check(jnp.indices(dims, dtype=jnp.float32), np.indices(dims).astype(np.float32))


def test_fromfunction_copy_frombuffer():
    _check(jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=jnp.int32),
           np.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=np.int32))
    _check(jnp.fromfunction(lambda i: i, (3,)), np.arange(3, dtype=np.float32))
    _check(jnp.copy(jnp.ones(2, jnp.int8)), np.ones(2, np.int8))
    _check(jnp.copy(np.arange(3)), np.arange(3).astype(np.int32))
    buf = np.array([1.5, -2.0], np.float32).tobytes()
    _check(jnp.frombuffer(buf, dtype=jnp.float32), np.array([1.5, -2.0], np.float32))
    _check(jnp.frombuffer(b"\x01\x02\x03", dtype=jnp.uint8, count=2, offset=1), np.array([2, 3], np.uint8))


def test_x64_request_warns():
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in zeros is not available"):
        out = jnp.zeros(2, np.float64)
    assert out.dtype == np.float32


def test_device_argument():
    out = jnp.zeros(2, device=core.devices()[0]) if hasattr(core, "devices") else jnp.zeros(2)
    _check(out, np.zeros(2, np.float32))

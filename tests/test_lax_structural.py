"""lax structural primitives and helpers against NumPy oracles (values, shapes, dtypes, errors)."""
import ml_dtypes
import numpy as np
import pytest

import core.numpy as jnp
from core import lax, test_util as tu
from core.lax import structural
from core.trace import Primitive

SHAPE_DTYPE = tu.product(tu.ALL_SHAPES, tu.ALL_DTYPES)


def _arr(rng, shape, dtype):
    x = tu.rand(rng, shape, dtype)
    return x, jnp.asarray(x)


def _assert_same(out, expected, dtype):
    assert out.dtype == np.dtype(dtype), (out.dtype, dtype)
    assert out.shape == expected.shape, (out.shape, expected.shape)
    np.testing.assert_array_equal(np.asarray(out), expected)


# ----- convert_element_type -------------------------------------------------------------------

CONVERSIONS = [
    (np.float32, np.int32, [1.7, -1.7, 0.5, -0.5, 100.9]),   # truncation toward zero
    (np.float32, np.uint8, [0.2, 3.9, 255.0]),
    (np.int32, np.bool_, [0, 1, -3, 7]),
    (np.float32, np.bool_, [0.0, -0.0, 0.1, np.nan]),
    (np.bool_, np.float32, [True, False]),
    (np.bool_, np.int8, [True, False]),
    (np.int32, np.float32, [1, -5, 2 ** 24 + 1]),
    (np.complex64, np.float32, [1 + 2j, -3.5 - 1j]),           # takes the real part
    (np.complex64, np.int32, [2.7 + 9j, -3.5 - 1j]),
    (np.complex64, np.bool_, [0 + 1j, 0 + 0j, 1 + 0j]),         # as JAX: the real part != 0
    (np.float32, np.complex64, [1.5, -2.0]),
    (np.float32, ml_dtypes.bfloat16, [1.00390625, 1.01171875, 3.14159, 1e30, -7.3e-3]),  # round to nearest even
    (np.float32, np.float16, [1.00048828125, 65519.0, 65520.0, 6e-8, 0.1]),
    (ml_dtypes.bfloat16, np.float16, [1.5, -0.0078125]),
    (np.int32, np.int8, [127, 128, -129, 300]),                 # wraps (two's complement)
    (np.uint32, np.int32, [0, 2 ** 31 + 5]),
]


@pytest.mark.parametrize("src,dst,values", CONVERSIONS)
def test_convert_element_type_matrix(src, dst, values):
    x = np.array(values, dtype=src)
    out = lax.convert_element_type(jnp.asarray(x), dst)
    if np.dtype(src).kind == "c" and np.dtype(dst).kind != "c":
        expected = x.real.astype(dst) if np.dtype(dst) != np.bool_ else (x.real != 0)
    elif np.dtype(dst) == np.bool_:
        expected = x != 0
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            expected = x.astype(dst)
    assert out.dtype == np.dtype(dst) and out.shape == x.shape
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_convert_element_type_weak_type_and_noop():
    x = jnp.asarray(np.ones(3, np.float32))
    assert lax.convert_element_type(x, np.float32) is x
    y = lax.convert_element_type(x, np.float32, weak_type=True)
    assert y.weak_type and y.dtype == np.float32


# ----- bitcast_convert_type -------------------------------------------------------------------

@pytest.mark.parametrize("src,dst,shape", [
    (np.float32, np.int32, (2, 3)), (np.int32, np.float32, ()), (np.float32, np.uint8, (3,)),
    (np.int16, np.float32, (4, 2)), (np.float16, ml_dtypes.bfloat16, (0, 2)), (np.int8, np.uint8, (5,)),
])
def test_bitcast_convert_type(rng, src, dst, shape):
    x, xj = _arr(rng, shape, src)
    out = lax.bitcast_convert_type(xj, dst)
    ratio = np.dtype(dst).itemsize / np.dtype(src).itemsize
    if ratio < 1:
        expected = x.reshape(shape + (1,)).view(dst).reshape(shape + (int(1 / ratio),))
    elif ratio > 1:
        expected = np.ascontiguousarray(x).view(dst).reshape(shape[:-1])
    else:
        expected = x.view(dst)
    _assert_same(out, expected, dst)


def test_bitcast_convert_type_errors():
    with pytest.raises(TypeError, match=r"bitcast_convert_type from i16 to f32 requires the operand's last "
                                        r"dimension to be 2, got shape \(3,\)"):
        lax.bitcast_convert_type(jnp.asarray(np.zeros(3, np.int16)), np.float32)
    with pytest.raises(TypeError, match="bitcast_convert_type does not accept bool"):
        lax.bitcast_convert_type(jnp.asarray(np.zeros(3, bool)), np.uint8)


# ----- iota -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8, ml_dtypes.bfloat16, np.complex64])
def test_iota(dtype):
    out = lax.iota(dtype, 5)
    _assert_same(out, np.arange(5).astype(dtype), dtype)
    assert lax.iota(dtype, 0).shape == (0,)


@pytest.mark.parametrize("shape,dim", [((2, 3), 0), ((2, 3), 1), ((4,), 0), ((2, 0, 3), 2), ((1, 2, 3), 1)])
def test_broadcasted_iota(shape, dim):
    out = lax.broadcasted_iota(np.int32, shape, dim)
    expected = np.broadcast_to(np.arange(shape[dim]).reshape([-1 if i == dim else 1 for i in range(len(shape))]),
                               shape).astype(np.int32)
    _assert_same(out, expected, np.int32)


def test_iota_errors():
    with pytest.raises(TypeError, match=r"iota dimension must be in range \[0, 2\), got dimension=2"):
        lax.broadcasted_iota(np.int32, (2, 3), 2)
    with pytest.raises(TypeError, match="iota does not accept dtype bool"):
        lax.iota(np.bool_, 3)


# ----- squeeze / expand_dims ------------------------------------------------------------------

@pytest.mark.parametrize("shape,dims", [((1, 3, 1), (0, 2)), ((1, 3, 1), (-1,)), ((1,), (0,)), ((2, 1, 0), (1,)),
                                        ((1, 1), (0, 1)), ((3,), ())])
def test_squeeze(rng, shape, dims):
    x, xj = _arr(rng, shape, np.float32)
    _assert_same(lax.squeeze(xj, dims), np.squeeze(x, dims), np.float32)


def test_squeeze_errors():
    with pytest.raises(ValueError, match=r"cannot select an axis to squeeze out which has size not equal to one, "
                                         r"got shape=\(2, 3\) and dimensions=\(0,\)"):
        lax.squeeze(jnp.ones((2, 3)), (0,))
    with pytest.raises(ValueError, match="squeeze: dimension 2 is out of bounds for an array of rank 2"):
        lax.squeeze(jnp.ones((1, 3)), (2,))


@pytest.mark.parametrize("shape,dims", [((3,), (0,)), ((3,), (0, 2)), ((2, 3), (-1,)), ((), (0, 1)), ((0, 2), (1,))])
def test_expand_dims(rng, shape, dims):
    x, xj = _arr(rng, shape, np.int32)
    _assert_same(lax.expand_dims(xj, dims), np.expand_dims(x, dims), np.int32)


def test_expand_dims_errors():
    with pytest.raises(ValueError, match="expand_dims: dimension 3 is out of bounds for a result of rank 2"):
        lax.expand_dims(jnp.ones(3), (3,))
    with pytest.raises(ValueError, match="repeated dimension"):
        lax.expand_dims(jnp.ones(3), (0, -3))


# ----- transpose / rev ------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dtype", tu.sample_cases(SHAPE_DTYPE, "transpose", 6))
def test_transpose(rng, shape, dtype):
    x, xj = _arr(rng, shape, dtype)
    perm = tuple(reversed(range(len(shape))))
    _assert_same(lax.transpose(xj, perm), np.transpose(x, perm), dtype)


def test_transpose_3d_and_identity(rng):
    x, xj = _arr(rng, (2, 3, 4), np.float32)
    _assert_same(lax.transpose(xj, (1, 2, 0)), np.transpose(x, (1, 2, 0)), np.float32)
    assert lax.transpose(xj, (0, 1, 2)) is xj
    with pytest.raises(TypeError, match=r"transpose permutation isn't a permutation of operand dimensions, got "
                                        r"permutation \(0, 0, 1\) for operand shape \(2, 3, 4\)"):
        lax.transpose(xj, (0, 0, 1))


@pytest.mark.parametrize("shape,dtype", tu.sample_cases(SHAPE_DTYPE, "rev", 6))
def test_rev(rng, shape, dtype):
    x, xj = _arr(rng, shape, dtype)
    dims = tuple(range(0, len(shape), 2))
    _assert_same(lax.rev(xj, dims), np.flip(x, dims) if dims else x, dtype)


def test_rev_errors():
    with pytest.raises(TypeError, match="rev dimensions must be unique"):
        lax.rev(jnp.ones((2, 3)), (0, 0))
    with pytest.raises(TypeError, match=r"rev dimensions must all be in range \[0, 2\)"):
        lax.rev(jnp.ones((2, 3)), (2,))


# ----- pad ------------------------------------------------------------------------------------

def _pad_oracle(x, value, config):
    """Interior padding by scattering into a filled array, then edges by np.pad and slicing."""
    for axis, (lo, hi, interior) in enumerate(config):
        d = x.shape[axis]
        size = d + max(d - 1, 0) * interior
        shape = list(x.shape)
        shape[axis] = size
        out = np.full(shape, value, x.dtype)
        idx = [np.s_[:]] * x.ndim
        idx[axis] = np.s_[::interior + 1]
        out[tuple(idx)] = x
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=value)
        idx = [np.s_[:]] * x.ndim
        idx[axis] = np.s_[max(-lo, 0):out.shape[axis] - max(-hi, 0)]
        x = out[tuple(idx)]
    return x


PAD_CASES = [((3,), [(1, 2, 0)]), ((3,), [(0, 0, 2)]), ((4,), [(-1, -2, 0)]), ((3,), [(-2, 1, 1)]),
             ((2, 3), [(1, 0, 1), (0, -1, 2)]), ((), []), ((0, 2), [(1, 1, 3), (0, 0, 0)]), ((2, 1, 3), [(0, 1, 0)] * 3)]


@pytest.mark.parametrize("shape,config", PAD_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_pad(rng, shape, config, dtype):
    x, xj = _arr(rng, shape, dtype)
    value = dtype(7)
    out = lax.pad(xj, jnp.asarray(value), config)
    _assert_same(out, _pad_oracle(x, value, config), dtype)


def test_pad_python_scalar_and_errors():
    out = lax.pad(jnp.asarray(np.array([1, 2], np.int32)), 0, [(1, 2, 1)])
    _assert_same(out, np.array([0, 1, 0, 2, 0, 0], np.int32), np.int32)
    with pytest.raises(TypeError, match=r"pad: len\(padding_config\) must equal operand.ndim"):
        lax.pad(jnp.ones((2, 3)), 0.0, [(1, 1, 0)])
    with pytest.raises(TypeError, match="pad interior padding must be non-negative"):
        lax.pad(jnp.ones(3), 0.0, [(0, 0, -1)])
    with pytest.raises(TypeError, match=r"dimension sizes after padding must be non-negative, got \(-1,\)"):
        lax.pad(jnp.ones(3), 0.0, [(-2, -2, 0)])
    with pytest.raises(TypeError, match="pad padding_value must be a scalar"):
        lax.pad(jnp.ones(3), jnp.ones(2), [(0, 0, 0)])
    with pytest.raises(TypeError, match="lax.pad requires arguments to have the same dtypes, got f32, i32"):
        lax.pad(jnp.ones(3), jnp.asarray(np.int32(0)), [(0, 0, 0)])


# ----- concatenate ----------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,dim", [([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1), (2, 0)], 1), ([(3,)], 0),
                                        ([(0,), (0,)], 0), ([(1, 2, 3)] * 3, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.bool_, np.uint32])
def test_concatenate(rng, shapes, dim, dtype):
    xs = [tu.rand(rng, s, dtype) for s in shapes]
    out = lax.concatenate([jnp.asarray(x) for x in xs], dim)
    _assert_same(out, np.concatenate(xs, dim), dtype)


def test_concatenate_errors():
    with pytest.raises(TypeError, match=r"Cannot concatenate arrays with different numbers of dimensions: got "
                                        r"\(3,\), \(3, 4\)"):
        lax.concatenate([jnp.ones(3), jnp.ones((3, 4))], 0)
    with pytest.raises(TypeError, match=r"differ in dimensions other than the one being concatenated: "
                                        r"concatenating along dimension 0 for shapes \(3, 4\), \(3, 5\)"):
        lax.concatenate([jnp.ones((3, 4)), jnp.ones((3, 5))], 0)
    with pytest.raises(TypeError, match=r"concatenate dimension out of bounds: dimension 1 for shapes \(3,\), \(3,\)"):
        lax.concatenate([jnp.ones(3), jnp.ones(3)], 1)
    with pytest.raises(TypeError, match="concatenate dimension out of bounds"):
        lax.concatenate([jnp.ones(3)], 1)
    with pytest.raises(TypeError, match="lax.concatenate requires arguments to have the same dtypes, got f32, i32"):
        lax.concatenate([jnp.ones(3), jnp.ones(3, jnp.int32)], 0)
    with pytest.raises(TypeError, match="non-empty"):
        lax.concatenate([], 0)


# ----- slice ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,start,limit,strides", [
    ((10,), (1,), (8,), (3,)), ((10,), (2,), (2,), None), ((4, 5), (1, 0), (3, 5), (1, 2)),
    ((2, 3, 4), (0, 1, 1), (2, 3, 4), (2, 1, 3)), ((), (), (), None), ((0, 3), (0, 1), (0, 3), None)])
def test_slice(rng, shape, start, limit, strides):
    x, xj = _arr(rng, shape, np.int16)
    st = strides or (1,) * len(shape)
    expected = x[tuple(np.s_[a:b:c] for a, b, c in zip(start, limit, st))]
    _assert_same(lax.slice(xj, start, limit, strides), expected, np.int16)


def test_slice_errors():
    x = jnp.ones((4, 5))
    with pytest.raises(TypeError, match=r"slice limit_indices must be less than or equal to operand shape, got "
                                        r"limit_indices \(5, 5\) for operand shape \(4, 5\)"):
        lax.slice(x, (0, 0), (5, 5))
    with pytest.raises(TypeError, match="slice limit_indices must be greater than or equal to start_indices"):
        lax.slice(x, (3, 0), (2, 5))
    with pytest.raises(TypeError, match="slice start_indices must be non-negative"):
        lax.slice(x, (-1, 0), (2, 5))
    with pytest.raises(TypeError, match=r"slice strides must be positive, got \(0, 1\)"):
        lax.slice(x, (0, 0), (2, 5), (0, 1))
    with pytest.raises(TypeError, match="must have length equal to the operand's rank 2"):
        lax.slice(x, (0,), (2,))


# ----- dynamic_slice / dynamic_update_slice ---------------------------------------------------------

def _clamped_starts(shape, starts, sizes):
    out = []
    for d, s, n in zip(shape, starts, sizes):
        s = s + d if s < 0 else s
        out.append(min(max(s, 0), d - n))
    return out


DYN_CASES = [((5,), (3,), (3,)), ((5,), (-1,), (2,)), ((5,), (-9,), (2,)), ((5,), (9,), (0,)),
             ((4, 6), (1, 4), (2, 3)), ((4, 6), (-2, 100), (4, 1)), ((), (), ()), ((0, 3), (0, 2), (0, 2))]


@pytest.mark.parametrize("shape,starts,sizes", DYN_CASES)
@pytest.mark.parametrize("index_kind", ["int", "int32", "mixed"])
def test_dynamic_slice(rng, shape, starts, sizes, index_kind):
    x, xj = _arr(rng, shape, np.float32)
    if index_kind == "int32":
        idx = [jnp.asarray(np.int32(s)) for s in starts]
    elif index_kind == "mixed":
        idx = [jnp.asarray(np.int8(s)) if i % 2 == 0 else s for i, s in enumerate(starts)]
    else:
        idx = list(starts)
    c = _clamped_starts(shape, starts, sizes)
    expected = x[tuple(np.s_[a:a + n] for a, n in zip(c, sizes))]
    _assert_same(lax.dynamic_slice(xj, idx, sizes), expected, np.float32)


@pytest.mark.parametrize("shape,starts,sizes", DYN_CASES)
def test_dynamic_update_slice(rng, shape, starts, sizes):
    x, xj = _arr(rng, shape, np.int32)
    u = tu.rand(rng, sizes, np.int32) + 100
    c = _clamped_starts(shape, starts, sizes)
    expected = x.copy()
    expected[tuple(np.s_[a:a + n] for a, n in zip(c, sizes))] = u
    idx = [jnp.asarray(np.int32(s)) for s in starts]
    _assert_same(lax.dynamic_update_slice(xj, jnp.asarray(u), idx), expected, np.int32)


def test_dynamic_slice_errors():
    x = jnp.ones((4, 5))
    with pytest.raises(TypeError, match="dynamic_slice: the number of start_indices must equal the operand's rank 2"):
        lax.dynamic_slice(x, (0,), (1, 1))
    with pytest.raises(TypeError, match=r"dynamic_slice slice_sizes must be non-negative and at most the operand "
                                        r"shape, got slice_sizes \(5, 1\) for operand shape \(4, 5\)"):
        lax.dynamic_slice(x, (0, 0), (5, 1))
    with pytest.raises(TypeError, match=r"start_indices must be scalar integers, got an index of type f32\[\]"):
        lax.dynamic_slice(x, (jnp.asarray(np.float32(0)), 0), (1, 1))
    with pytest.raises(TypeError, match=r"dynamic_update_slice update shape must be smaller than operand shape, "
                                        r"got update shape \(5, 1\) for operand shape \(4, 5\)"):
        lax.dynamic_update_slice(x, jnp.ones((5, 1)), (0, 0))
    with pytest.raises(TypeError, match="dynamic_update_slice: update rank"):
        lax.dynamic_update_slice(x, jnp.ones(5), (0, 0))
    with pytest.raises(TypeError, match="lax.dynamic_update_slice requires arguments to have the same dtypes"):
        lax.dynamic_update_slice(x, jnp.ones((1, 1), jnp.int32), (0, 0))


# ----- stop_gradient ----------------------------------------------------------------------------

def test_stop_gradient_is_identity_primitive(rng):
    x, xj = _arr(rng, (2, 3), np.float32)
    assert isinstance(structural.stop_gradient_p, Primitive) and structural.stop_gradient_p.name == "stop_gradient"
    out = lax.stop_gradient({"a": xj, "b": (jnp.asarray(np.arange(3, dtype=np.int32)), 2.0)})
    _assert_same(out["a"], x, np.float32)
    ints = out["b"][0]
    np.testing.assert_array_equal(np.asarray(ints), np.arange(3))
    assert float(out["b"][1]) == 2.0


# ----- derived helpers --------------------------------------------------------------------------

def test_full_and_full_like(rng):
    out = lax.full((2, 3), 1.5)
    _assert_same(out, np.full((2, 3), 1.5, np.float32), np.float32)
    assert out.weak_type
    out = lax.full(3, 2, np.int8)
    _assert_same(out, np.full(3, 2, np.int8), np.int8)
    assert not out.weak_type
    out = lax.full((), jnp.asarray(np.float16(3)))
    _assert_same(out, np.array(3, np.float16), np.float16)
    assert lax.full((2,), True).dtype == np.bool_ and not lax.full((2,), True).weak_type
    x, xj = _arr(rng, (2, 2), np.int16)
    _assert_same(lax.full_like(xj, 3), np.full_like(x, 3), np.int16)
    _assert_same(lax.full_like(xj, 3, np.float32, (4,)), np.full(4, 3, np.float32), np.float32)
    _assert_same(lax.zeros_like_array(xj), np.zeros_like(x), np.int16)
    assert lax.full_like(lax.full((2,), 1.0), 0).weak_type
    with pytest.raises(TypeError, match=r"full must be called with scalar fill_value, got fill_value.shape \(2,\)"):
        lax.full((2, 2), jnp.ones(2))


@pytest.mark.parametrize("start,stop,expected", [(1, None, (2, 12)), (0, 2, (6, 4)), (-2, None, (2, 12)),
                                                 (1, 1, (2, 1, 3, 4)), (0, 3, (24,))])
def test_collapse(rng, start, stop, expected):
    x, xj = _arr(rng, (2, 3, 4), np.float32)
    _assert_same(lax.collapse(xj, start, stop), x.reshape(expected), np.float32)


def test_in_dim_helpers(rng):
    x, xj = _arr(rng, (3, 5), np.float32)
    _assert_same(lax.slice_in_dim(xj, 1, -1, axis=1), x[:, 1:-1], np.float32)
    _assert_same(lax.slice_in_dim(xj, None, None, 2, axis=-1), x[:, ::2], np.float32)
    _assert_same(lax.index_in_dim(xj, -1, 0), x[-1:], np.float32)
    _assert_same(lax.index_in_dim(xj, 2, 1, keepdims=False), x[:, 2], np.float32)
    _assert_same(lax.dynamic_slice_in_dim(xj, jnp.asarray(np.int32(3)), 3, axis=1), x[:, 2:5], np.float32)
    _assert_same(lax.dynamic_index_in_dim(xj, 1, 0, keepdims=False), x[1], np.float32)
    _assert_same(lax.dynamic_index_in_dim(xj, -1, 1), x[:, 4:], np.float32)
    u = np.full((3, 2), 9.0, np.float32)
    expected = x.copy()
    expected[:, 1:3] = u
    _assert_same(lax.dynamic_update_slice_in_dim(xj, jnp.asarray(u), 1, axis=1), expected, np.float32)
    expected = x.copy()
    expected[2] = 5.0
    _assert_same(lax.dynamic_update_index_in_dim(xj, jnp.full(5, 5.0), 2, 0), expected, np.float32)
    _assert_same(lax.dynamic_update_index_in_dim(xj, jnp.full((1, 5), 5.0), 2, 0), expected, np.float32)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        lax.index_in_dim(xj, 3)
    with pytest.raises(ValueError, match="slice_in_dim: axis 2 is out of bounds for an operand of rank 2"):
        lax.slice_in_dim(xj, 0, 1, axis=2)


# ----- broadcast_in_dim (docs/reliability.md F16) and reshape ----------------------------------------

@pytest.mark.parametrize("shape,out_shape,dims", [((3,), (2, 3), (1,)), ((3, 1), (3, 4), (0, 1)), ((), (2, 2), ()),
                                                  ((1,), (0, 4), (1,)), ((2, 1), (2, 5, 3), (0, 2))])
def test_broadcast_in_dim(rng, shape, out_shape, dims):
    x, xj = _arr(rng, shape, np.uint8)
    expanded = x.reshape([shape[dims.index(i)] if i in dims else 1 for i in range(len(out_shape))])
    _assert_same(lax.broadcast_in_dim(xj, out_shape, dims), np.broadcast_to(expanded, out_shape), np.uint8)


def test_broadcast_in_dim_errors():
    x = jnp.ones((3,))
    with pytest.raises(TypeError, match="broadcast_dimensions must have length equal to operand ndim"):
        lax.broadcast_in_dim(x, (2, 3), ())
    with pytest.raises(TypeError, match="target broadcast shape must have equal or higher rank"):
        lax.broadcast_in_dim(jnp.ones((2, 3)), (3,), (0, 1))
    with pytest.raises(TypeError, match=r"broadcast_dimensions must be in range \[0, 2\)"):
        lax.broadcast_in_dim(x, (2, 3), (2,))
    with pytest.raises(TypeError, match="broadcast_dimensions must be strictly increasing"):
        lax.broadcast_in_dim(jnp.ones((3, 3)), (3, 3), (1, 0))
    with pytest.raises(TypeError, match="operand dimension sizes must either be 1, or be equal to their corresponding "
                                        "dimensions in the target broadcast shape"):
        lax.broadcast_in_dim(x, (2, 4), (1,))


def test_reshape_with_dimensions_and_errors(rng):
    x, xj = _arr(rng, (2, 3), np.float32)
    _assert_same(lax.reshape(xj, (3, 2), dimensions=(1, 0)), x.T.reshape(3, 2), np.float32)
    _assert_same(lax.broadcast(xj, (4,)), np.broadcast_to(x, (4, 2, 3)), np.float32)
    with pytest.raises(TypeError, match=r"reshape total size must be unchanged, got new_sizes \(4,\) for shape \(2, 3\)"):
        lax.reshape(xj, (4,))

"""core.numpy shape manipulation against NumPy (values, shapes, dtypes, error messages)."""
import numpy as np
import pytest

import core.numpy as jnp
from core import test_util as tu

AxisError = np.exceptions.AxisError


def _check(out, expected, dtype=None):
    expected = np.asarray(expected)
    dtype = np.dtype(dtype if dtype is not None else expected.dtype)
    assert out.dtype == dtype, (out.dtype, dtype)
    assert out.shape == expected.shape, (out.shape, expected.shape)
    tu.assert_allclose(out, expected, dtype)


def _rand(rng, shape, dtype=np.float32):
    x = tu.rand(rng, shape, dtype)
    return x, jnp.asarray(x)


# ----- reshape ravel transpose ------------------------------------------------------------------

@pytest.mark.parametrize("shape,new", [((2, 3), (3, 2)), ((2, 3), (-1,)), ((2, 3), (1, -1, 2)), ((), (1, 1)),
                                       ((4,), ()), ((0, 3), (3, -1)), ((0, 3), (0,)), ((2, 2), 4)])
def test_reshape(rng, shape, new):
    if new == () and shape == (4,):
        shape = (1,)
    x, xj = _rand(rng, shape, np.int32)
    _check(jnp.reshape(xj, new), np.reshape(x, new))
    _check(jnp.reshape(xj, shape=new), np.reshape(x, new))
    _check(jnp.reshape(xj, newshape=new), np.reshape(x, new))
    _check(xj.reshape(new), x.reshape(new))
    if isinstance(new, tuple) and len(new) > 1:
        _check(xj.reshape(*new), x.reshape(*new))


def test_reshape_errors():
    x = jnp.ones((2, 3))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(2, 3\) \(size 6\) into shape \(4,\) \(size 4\)"):
        jnp.reshape(x, (4,))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(2, 3\) \(size 6\) into shape \(4, -1\)"):
        x.reshape(4, -1)
    with pytest.raises(ValueError, match="can only specify one unknown dimension"):
        jnp.reshape(x, (-1, -1))
    with pytest.raises(ValueError, match="order='K' is not permitted for reshaping"):
        jnp.reshape(x, (6,), order="K")
    with pytest.raises(ValueError, match="order must be one of 'C', 'F', 'A' or 'K', got order='X'"):
        jnp.reshape(x, (6,), order="X")
    with pytest.raises(TypeError, match="reshape requires ndarray or scalar arguments.*jnp.asarray"):
        jnp.reshape([1, 2], (2,))


@pytest.mark.parametrize("shape", tu.ALL_SHAPES)
def test_ravel_transpose(rng, shape):
    x, xj = _rand(rng, shape)
    _check(jnp.ravel(xj), np.ravel(x))
    _check(xj.flatten() if hasattr(xj, "flatten") else jnp.ravel(xj), x.flatten())
    _check(jnp.transpose(xj), np.transpose(x))
    _check(xj.T, x.T)


def test_transpose_axes_and_methods(rng):
    x, xj = _rand(rng, (2, 3, 4))
    _check(jnp.transpose(xj, (1, -1, 0)), np.transpose(x, (1, -1, 0)))
    _check(jnp.permute_dims(xj, (2, 0, 1)), np.permute_dims(x, (2, 0, 1)))
    _check(xj.transpose(1, 0, 2), x.transpose(1, 0, 2))
    _check(xj.transpose((2, 1, 0)), x.transpose((2, 1, 0)))
    _check(xj.transpose(), x.transpose())
    _check(jnp.matrix_transpose(xj), np.matrix_transpose(x))
    _check(xj.mT, x.mT)
    with pytest.raises(ValueError, match=r"axes \(0, 0, 1\) don't match array of dimension 3"):
        jnp.transpose(xj, (0, 0, 1))
    with pytest.raises(AxisError, match="axis 3 is out of bounds for array of dimension 3"):
        jnp.transpose(xj, (0, 1, 3))
    with pytest.raises(ValueError, match="x must be at least two-dimensional for matrix_transpose; got ndim=1"):
        jnp.matrix_transpose(jnp.ones(3))


def test_swapaxes_moveaxis_rollaxis(rng):
    x, xj = _rand(rng, (2, 3, 4, 5))
    _check(jnp.swapaxes(xj, 0, -1), np.swapaxes(x, 0, -1))
    _check(xj.swapaxes(1, 2), x.swapaxes(1, 2))
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (-1, -2)), ((3, 0), (1, 2)), (2, 2)]:
        _check(jnp.moveaxis(xj, src, dst), np.moveaxis(x, src, dst))
    for axis, start in [(3, 0), (1, 4), (2, 1), (0, 2), (-1, -3)]:
        _check(jnp.rollaxis(xj, axis, start), np.rollaxis(x, axis, start))
    with pytest.raises(AxisError, match="swapaxes: axis 4 is out of bounds for array of dimension 4"):
        jnp.swapaxes(xj, 4, 0)
    with pytest.raises(ValueError, match="same number of elements"):
        jnp.moveaxis(xj, (0, 1), (0,))


# ----- expand_dims squeeze broadcasting -----------------------------------------------------------

@pytest.mark.parametrize("shape,axis", [((3,), 0), ((3,), -1), ((2, 3), (0, 3)), ((), (0, -1)), ((0, 2), 1)])
def test_expand_dims(rng, shape, axis):
    x, xj = _rand(rng, shape, np.int8)
    _check(jnp.expand_dims(xj, axis), np.expand_dims(x, axis))


@pytest.mark.parametrize("shape,axis", [((1, 3, 1), None), ((1, 3, 1), 0), ((1, 3, 1), (0, -1)), ((), None),
                                        ((1,), 0), ((0, 1), 1), ((2, 3), None)])
def test_squeeze(rng, shape, axis):
    x, xj = _rand(rng, shape, np.bool_)
    _check(jnp.squeeze(xj, axis), np.squeeze(x, axis))
    _check(xj.squeeze(axis), x.squeeze(axis))


def test_squeeze_and_expand_dims_errors():
    with pytest.raises(ValueError, match=r"cannot select an axis to squeeze out which has size not equal to one, "
                                         r"got shape=\(2, 3\) and dimensions=\(0,\)"):
        jnp.squeeze(jnp.ones((2, 3)), 0)
    with pytest.raises(AxisError, match="squeeze: axis 2 is out of bounds for array of dimension 2"):
        jnp.squeeze(jnp.ones((1, 1)), 2)
    with pytest.raises(AxisError, match="expand_dims: axis 3 is out of bounds for array of dimension 3"):
        jnp.expand_dims(jnp.ones((2, 3)), 3)


@pytest.mark.parametrize("shape,target", [((3,), (2, 3)), ((3, 1), (3, 4)), ((), (2, 2)), ((1,), (0,)), ((2, 1), (5, 2, 3))])
def test_broadcast_to(rng, shape, target):
    x, xj = _rand(rng, shape, np.uint8)
    _check(jnp.broadcast_to(xj, target), np.broadcast_to(x, target))


def test_broadcast_arrays_shapes_and_errors(rng):
    a, aj = _rand(rng, (3, 1))
    b, bj = _rand(rng, (4,), np.int32)
    for o, e in zip(jnp.broadcast_arrays(aj, bj, 2.0), np.broadcast_arrays(a, b, np.float32(2.0))):
        assert o.shape == e.shape
        tu.assert_allclose(o, e, o.dtype)
    assert jnp.broadcast_arrays(aj, bj)[1].dtype == np.int32
    assert jnp.broadcast_shapes((3, 1), (4,), 1) == np.broadcast_shapes((3, 1), (4,), 1) == (3, 4)
    assert jnp.broadcast_shapes() == ()
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(3, 1\), \(4, 1\)\]"):
        jnp.broadcast_shapes((3, 1), (4, 1))
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: \(3,\) and requested shape \(4,\)"):
        jnp.broadcast_to(jnp.ones(3), (4,))
    with pytest.raises(ValueError, match=r"Cannot broadcast to shape with fewer dimensions: arr_shape=\(2, 3\) shape=\(3,\)"):
        jnp.broadcast_to(jnp.ones((2, 3)), (3,))


# ----- joining ------------------------------------------------------------------------------------

def test_concatenate(rng):
    a, aj = _rand(rng, (2, 3))
    b, bj = _rand(rng, (4, 3), np.int32)
    c, cj = _rand(rng, (0, 3), np.float16)
    _check(jnp.concatenate([aj, bj, cj]), np.concatenate([a, b.astype(np.float32), c.astype(np.float32)]))
    _check(jnp.concatenate([bj, bj], axis=-1), np.concatenate([b, b], -1))
    _check(jnp.concatenate([aj, bj], axis=None), np.concatenate([a, b.astype(np.float32)], None))
    _check(jnp.concatenate((bj, bj), dtype=jnp.int8), np.concatenate([b, b]).astype(np.int8))
    _check(jnp.concatenate([bj, b]), np.concatenate([b, b]))
    _check(jnp.concatenate(jnp.asarray(b)), np.concatenate(b))
    _check(jnp.concat([aj, aj], axis=1), np.concatenate([a, a], 1))
    _check(jnp.append(bj, bj, axis=0), np.append(b, b, 0))
    _check(jnp.append(bj, 5), np.append(b, 5).astype(np.int32))


def test_concatenate_errors():
    with pytest.raises(TypeError, match=r"Cannot concatenate arrays with different numbers of dimensions: got \(3,\), \(3, 4\)"):
        jnp.concatenate([jnp.ones(3), jnp.ones((3, 4))])
    with pytest.raises(TypeError, match=r"concatenating along dimension 0 for shapes \(3, 4\), \(3, 5\)"):
        jnp.concatenate([jnp.ones((3, 4)), jnp.ones((3, 5))])
    with pytest.raises(ValueError, match="Zero-dimensional arrays cannot be concatenated"):
        jnp.concatenate([jnp.ones(()), jnp.ones(())])
    with pytest.raises(ValueError, match="Need at least one array to concatenate"):
        jnp.concatenate([])
    with pytest.raises(AxisError, match="concatenate: axis 2 is out of bounds for array of dimension 2"):
        jnp.concatenate([jnp.ones((2, 2))] * 2, axis=2)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0, 2)])
def test_stack_family(rng, shape):
    xs = [tu.rand(rng, shape, np.float32) for _ in range(3)]
    js = [jnp.asarray(x) for x in xs]
    for axis in range(-len(shape) - 1, len(shape) + 1):
        _check(jnp.stack(js, axis), np.stack(xs, axis))
    for name in ("hstack", "vstack", "dstack", "column_stack"):
        if name == "column_stack" and len(shape) > 2:
            continue
        _check(getattr(jnp, name)(js), getattr(np, name)(xs))
    _check(jnp.row_stack(js), np.vstack(xs))


def test_stack_errors_and_dtype():
    with pytest.raises(ValueError, match="All input arrays must have the same shape"):
        jnp.stack([jnp.ones(2), jnp.ones(3)])
    with pytest.raises(AxisError, match="stack: axis 2 is out of bounds for array of dimension 2"):
        jnp.stack([jnp.ones(2), jnp.ones(2)], axis=2)
    _check(jnp.stack([jnp.ones(2, jnp.int8), jnp.ones(2, jnp.uint8)]), np.ones((2, 2), np.int16))
    _check(jnp.stack([jnp.ones(2), jnp.ones(2)], dtype=jnp.int32), np.ones((2, 2), np.int32))


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_atleast(rng, shape):
    x, xj = _rand(rng, shape)
    for name in ("atleast_1d", "atleast_2d", "atleast_3d"):
        _check(getattr(jnp, name)(xj), getattr(np, name)(x))
        outs = getattr(jnp, name)(xj, 1.0)
        assert [o.shape for o in outs] == [e.shape for e in getattr(np, name)(x, 1.0)]


def test_block(rng):
    a, aj = _rand(rng, (2, 2))
    b, bj = _rand(rng, (2, 1), np.int32)
    c, cj = _rand(rng, (1, 3))
    _check(jnp.block([[aj, bj], [cj]]), np.block([[a, b.astype(np.float32)], [c]]))
    _check(jnp.block([aj, aj]), np.block([a, a]))
    _check(jnp.block([1.0, jnp.ones(2)]), np.block([1.0, np.ones(2, np.float32)]).astype(np.float32))
    _check(jnp.block(aj), np.block(a))
    with pytest.raises(ValueError, match="list depths are mismatched"):
        jnp.block([[aj], aj])


# ----- splitting ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,ios,axis", [((6,), 3, 0), ((6,), [1, 4], 0), ((4, 6), 2, 1), ((4, 6), [-2, 10], 1),
                                            ((0, 3), 3, 1), ((6,), [4, 1], 0), ((6,), np.array([2]), 0)])
def test_split(rng, shape, ios, axis):
    x, xj = _rand(rng, shape, np.int16)
    for name in ("split", "array_split"):
        outs = getattr(jnp, name)(xj, ios, axis)
        exps = getattr(np, name)(x, ios, axis)
        assert len(outs) == len(exps)
        for o, e in zip(outs, exps):
            _check(o, e)


def test_array_split_unequal_and_errors(rng):
    x, xj = _rand(rng, (7, 4, 6))
    for o, e in zip(jnp.array_split(xj, 3), np.array_split(x, 3)):
        _check(o, e)
    for name, ios in (("hsplit", 2), ("vsplit", [3]), ("dsplit", 3)):
        for o, e in zip(getattr(jnp, name)(xj, ios), getattr(np, name)(x, ios)):
            _check(o, e)
    for o, e in zip(jnp.hsplit(jnp.arange(4), 2), np.hsplit(np.arange(4, dtype=np.int32), 2)):
        _check(o, e)
    with pytest.raises(ValueError, match="array split does not result in an equal division"):
        jnp.split(xj, 3)
    with pytest.raises(ValueError, match="vsplit only works on arrays of 2 or more dimensions"):
        jnp.vsplit(jnp.ones(3), 3)
    with pytest.raises(AxisError, match="axis 3 is out of bounds"):
        jnp.split(xj, 1, axis=3)


def test_unstack(rng):
    x, xj = _rand(rng, (2, 3))
    for axis in (0, 1, -1):
        outs = jnp.unstack(xj, axis=axis)
        assert isinstance(outs, tuple) and len(outs) == x.shape[axis]
        for i, o in enumerate(outs):
            _check(o, np.take(x, i, axis))
    with pytest.raises(ValueError, match="Unstack requires arrays with rank > 0"):
        jnp.unstack(jnp.ones(()))


# ----- repetition ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,reps", [((2,), 2), ((2, 3), (2, 1)), ((2,), (2, 3)), ((), 3), ((2, 3), 0),
                                        ((0, 2), (2, 2)), ((1, 2, 3), (2, 1, 1, 2))])
def test_tile(rng, shape, reps):
    x, xj = _rand(rng, shape, np.int32)
    _check(jnp.tile(xj, reps), np.tile(x, reps))


@pytest.mark.parametrize("shape,repeats,axis", [((3,), 2, None), ((2, 3), 2, 1), ((2, 3), [1, 0, 3], 1), ((2, 3), [2], 0),
                                                ((2, 3), np.array([0, 0]), 0), ((), 3, None), ((0, 2), 2, 0),
                                                ((4,), [1, 1, 2, 2], 0), ((2, 2), [1, 2, 3, 4], None)])
def test_repeat(rng, shape, repeats, axis):
    x, xj = _rand(rng, shape)
    _check(jnp.repeat(xj, repeats, axis), np.repeat(x, repeats, axis))
    _check(xj.repeat(repeats, axis), np.repeat(x, repeats, axis))


def test_repeat_total_length_and_errors():
    x = jnp.array([1, 2, 3])
    _check(jnp.repeat(x, 2, total_repeat_length=4), np.array([1, 1, 2, 2], np.int32))
    _check(jnp.repeat(x, [1, 0, 1], total_repeat_length=5), np.array([1, 3, 3, 3, 3], np.int32))
    with pytest.raises(ValueError, match="repeats has 2 entries, but axis 0 has size 3"):
        jnp.repeat(x, [1, 2])
    with pytest.raises(ValueError, match="negative repeats"):
        jnp.repeat(x, -1)


@pytest.mark.parametrize("shape,new", [((3,), 5), ((2, 3), (4, 2)), ((3,), (0,)), ((0,), (2,)), ((4,), 2)])
def test_resize(rng, shape, new):
    x, xj = _rand(rng, shape, np.int32)
    expected = np.resize(x, new) if x.size else np.zeros(new, np.int32)  # np.resize of an empty array fills zeros
    _check(jnp.resize(xj, new), expected)


# ----- flips rotations rolls ------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 3, 4), (0, 2)])
def test_flips(rng, shape):
    x, xj = _rand(rng, shape, np.uint32)
    _check(jnp.flip(xj), np.flip(x))
    _check(jnp.flip(xj, 0), np.flip(x, 0))
    _check(jnp.flip(xj, (-1,)), np.flip(x, (-1,)))
    _check(jnp.flipud(xj), np.flipud(x))
    if len(shape) >= 2:
        _check(jnp.fliplr(xj), np.fliplr(x))
        for k in range(-1, 5):
            _check(jnp.rot90(xj, k), np.rot90(x, k))
            _check(jnp.rot90(xj, k, axes=(1, 0)), np.rot90(x, k, axes=(1, 0)))
    if len(shape) == 3:
        _check(jnp.rot90(xj, 1, axes=(0, 2)), np.rot90(x, 1, axes=(0, 2)))


def test_flip_errors():
    with pytest.raises(ValueError, match="fliplr requires an array of at least 2 dimensions"):
        jnp.fliplr(jnp.ones(3))
    with pytest.raises(ValueError, match="rot90: axes must be different"):
        jnp.rot90(jnp.ones((2, 2)), axes=(0, 0))
    with pytest.raises(AxisError, match="flip: axis 1 is out of bounds for array of dimension 1"):
        jnp.flip(jnp.ones(3), 1)


@pytest.mark.parametrize("shape,shift,axis", [((5,), 2, None), ((5,), -7, 0), ((2, 3), 1, None), ((2, 3), 4, 1),
                                              ((2, 3), (1, 2), (0, 1)), ((2, 3), 1, (0, 1)), ((0, 3), 1, 0), ((), 3, None),
                                              ((3, 4), (1, -1), 1)])
def test_roll(rng, shape, shift, axis):
    x, xj = _rand(rng, shape, np.int32)
    _check(jnp.roll(xj, shift, axis), np.roll(x, shift, axis))


def test_roll_array_shift(rng):
    x, xj = _rand(rng, (3, 5), np.float32)
    for s in (-6, -1, 0, 2, 12):
        _check(jnp.roll(xj, jnp.asarray(np.int32(s)), 1), np.roll(x, s, 1))
    _check(jnp.roll(xj, jnp.asarray(np.array([1, -2], np.int32)), (0, 1)), np.roll(x, (1, -2), (0, 1)))


# ----- pad ----------------------------------------------------------------------------------------

# widths beyond the axis size (repeated reflection/wrapping), a size-1 axis, and unequal sides
PAD_SHAPES = [((3,), (1, 5)), ((4, 2), ((7, 9), (1, 0))), ((1,), 3)]


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum", "mean",
                                  "linear_ramp", "empty"])
@pytest.mark.parametrize("shape,width", PAD_SHAPES)
def test_pad_modes(rng, mode, shape, width):
    x, xj = _rand(rng, shape, np.float32)
    out = jnp.pad(xj, width, mode=mode)
    expected = np.pad(x, width, mode="constant" if mode == "empty" else mode)
    assert out.shape == expected.shape and out.dtype == np.float32
    # mean and linear_ramp do arithmetic in float32
    tu.assert_allclose(out, expected, np.float32, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("mode,kwargs", [("constant", {"constant_values": 7}), ("constant", {"constant_values": ((1, 2), (3, 4))}),
                                         ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"}),
                                         ("mean", {"stat_length": 2}), ("maximum", {"stat_length": ((1, 2), (3, 1))}),
                                         ("linear_ramp", {"end_values": (5, -3)}), ("mean", {})])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_pad_kwargs(rng, mode, kwargs, dtype):
    x, xj = _rand(rng, (3, 4), dtype)
    width = ((2, 5), (1, 2))
    _check(jnp.pad(xj, width, mode=mode, **kwargs), np.pad(x, width, mode=mode, **kwargs))


def test_pad_errors():
    with pytest.raises(ValueError, match="Unimplemented padding mode 'foo'"):
        jnp.pad(jnp.ones(3), 1, mode="foo")
    with pytest.raises(ValueError, match="pad_width must be non-negative"):
        jnp.pad(jnp.ones(3), -1)
    with pytest.raises(ValueError, match="can't extend empty axis 0"):
        jnp.pad(jnp.ones(0), 1, mode="reflect")
    with pytest.raises(ValueError, match="unsupported keyword arguments for mode 'edge'"):
        jnp.pad(jnp.ones(3), 1, mode="edge", constant_values=1)
    with pytest.raises(ValueError, match=r"cannot be broadcast to \(ndim, 2\)"):
        jnp.pad(jnp.ones((2, 2)), ((1, 2, 3),))


# ----- delete insert trim_zeros -------------------------------------------------------------------

@pytest.mark.parametrize("shape,obj,axis", [((5,), [0, 2], None), ((5,), -1, 0), ((3, 4), slice(1, None, 2), 1),
                                            ((3, 4), np.array([True, False, True]), 0), ((3, 4), [], 1), ((2, 3), [0, 1], 0),
                                            ((2, 3), [1, 1, 5], None)])
def test_delete(rng, shape, obj, axis):
    x, xj = _rand(rng, shape, np.int32)
    _check(jnp.delete(xj, obj, axis), np.delete(x, obj, axis))


@pytest.mark.parametrize("shape,obj,values,axis", [((2,), 1, 9, None), ((4,), [1, 1, 3], [7, 8, 9], None), ((4,), 4, [1, 2], 0),
                                                   ((2, 3), 1, 5, 1), ((2, 3), 1, [1, 2], 1), ((2, 3), [1], [[1], [2]], 1),
                                                   ((2, 3), -1, [[1, 2, 3]], 0), ((2, 3), [2, 0], 0, 1), ((2, 2), slice(0, 2), 9, 0),
                                                   ((3,), [], [], 0)])
def test_insert(rng, shape, obj, values, axis):
    x, xj = _rand(rng, shape, np.int32)
    _check(jnp.insert(xj, obj, values, axis), np.insert(x, obj, values, axis))


def test_delete_insert_errors():
    with pytest.raises(IndexError, match="delete: index out of bounds for axis 0 with size 3"):
        jnp.delete(jnp.ones(3), 3)
    with pytest.raises(IndexError, match="insert: index out of bounds for axis 0 with size 3"):
        jnp.insert(jnp.ones(3), 5, 1.0)


@pytest.mark.parametrize("values,trim", [([0, 0, 1, 2, 0], "fb"), ([0, 0, 1, 2, 0], "f"), ([0, 1, 0], "b"),
                                         ([0, 0], "fb"), ([], "fb"), ([3, 0, 4], "fb")])
def test_trim_zeros(values, trim):
    x = np.array(values, np.int32)
    _check(jnp.trim_zeros(jnp.asarray(x), trim), np.trim_zeros(x, trim))


# ----- astype and view ------------------------------------------------------------------------------

def test_astype(rng):
    x, xj = _rand(rng, (2, 3), np.float32)
    _check(jnp.astype(xj, jnp.int32), x.astype(np.int32))
    _check(xj.astype(jnp.float16), x.astype(np.float16))
    c = np.array([1j, 0, 2 + 0j, -1 - 1j], np.complex64)
    # complex -> bool tests both parts (NumPy's x != 0), unlike lax.convert_element_type
    _check(jnp.astype(jnp.asarray(c), bool), c != 0)
    _check(jnp.astype(jnp.asarray(c), jnp.float32), c.real)
    _check(jnp.asarray(c).astype(jnp.int32), c.real.astype(np.int32))


@pytest.mark.parametrize("src,dst,shape", [(np.float32, np.int32, (2, 3)), (np.float32, np.uint16, (3,)),
                                           (np.int8, np.float32, (2, 8)), (np.uint8, np.bool_, (4,)),
                                           (np.bool_, np.int8, (3,)), (np.float16, np.int16, ()), (np.int32, np.int32, (2,))])
def test_view(rng, src, dst, shape):
    x = tu.rand(rng, shape, src)
    if np.dtype(dst) == np.bool_:
        x = (x % 2).astype(src)  # NumPy's bool view of other bytes is not canonical
    _check(jnp.asarray(x).view(dst), x.view(dst))


def test_view_error():
    with pytest.raises(ValueError, match="last axis \\(3\\) must be divisible by 4"):
        jnp.ones(3, jnp.int8).view(jnp.float32)

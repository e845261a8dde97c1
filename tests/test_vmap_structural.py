"""vmap of the structural primitives (core/lax/structural.py) against a loop over examples.

`tu.check_vmap` compares `vmap(f)` with `f` applied to each example and stacked, for batch sizes
10 and 0 and every position of the batch axis (docs/reliability.md N5). Primitives covered, by name:
convert_element_type_p broadcast_in_dim_p reshape_p bitcast_convert_type_p squeeze_p transpose_p
rev_p pad_p concatenate_p slice_p dynamic_slice_p dynamic_update_slice_p stop_gradient_p copy_p, and
iota_p, which has no operands and so is never batched (it is applied directly under vmap).
"""
import numpy as np
import pytest

import core
from core import lax
from core import test_util as tu

B = 10  # examples per stacked operand, as check_vmap expects


def _floats(rng, shape):
    return tu.rand(rng, (B,) + shape, np.float32)


def _starts(rng, low, high, dtype=np.int32):
    """One start index per example, including negative and out-of-bounds ones (clamped)."""
    return rng.integers(low, high, size=(B,)).astype(dtype)


# ----- convert_element_type / stop_gradient ------------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 4), ()])
def test_convert_element_type(rng, shape):
    tu.check_vmap(lambda x: lax.convert_element_type(x, np.int32), [_floats(rng, shape)])


def test_stop_gradient(rng):
    tu.check_vmap(lambda x: lax.stop_gradient(x) * 2.0, [_floats(rng, (3, 2))])


def test_copy(rng):
    from core.lax.structural import copy_p
    tu.check_vmap(lambda x: copy_p.bind(x) * 2.0, [_floats(rng, (3, 2))])


# ----- bitcast_convert_type ------------------------------------------------------------------------

BITCASTS = [
    (np.float32, np.int32, (3, 4)),   # same width
    (np.float32, np.int32, ()),
    (np.float32, np.uint16, (3,)),    # narrower: a trailing dimension of 2 appears
    (np.float32, np.uint16, ()),
    (np.int32, np.int8, (2, 3)),      # narrower by 4
    (np.uint16, np.float32, (3, 2)),  # wider: the trailing dimension is consumed
    (np.int8, np.int32, (4,)),        # wider, per-example result is 0-d
]


@pytest.mark.parametrize("src,dst,shape", BITCASTS)
def test_bitcast_convert_type(rng, src, dst, shape):
    if np.dtype(src) == np.float32:
        x = _floats(rng, shape)
    elif np.dtype(src) == np.int32:
        x = rng.integers(-2 ** 31, 2 ** 31, size=(B,) + shape).astype(np.int32)
    else:
        # narrow pieces of float32 values, so that widening gives back finite floats
        wide = _floats(rng, shape[:-1]) if np.dtype(dst) == np.float32 else _floats(rng, shape[:-1]).view(dst)
        x = wide.view(src).reshape((B,) + shape)
    tu.check_vmap(lambda x: lax.bitcast_convert_type(x, dst), [x])


# ----- broadcast_in_dim / reshape / squeeze / transpose / rev ------------------------------------

@pytest.mark.parametrize("shape,out_shape,dims", [
    ((3,), (2, 3, 4), (1,)),
    ((3, 1), (3, 4), (0, 1)),    # a size-1 dimension expanded
    ((), (2, 3), ()),
    ((0,), (2, 0), (1,)),
])
def test_broadcast_in_dim(rng, shape, out_shape, dims):
    tu.check_vmap(lambda x: lax.broadcast_in_dim(x, out_shape, dims), [_floats(rng, shape)])


@pytest.mark.parametrize("shape,new_sizes,dimensions", [
    ((2, 3, 4), (6, 4), None),
    ((2, 3), (3, 2), (1, 0)),    # `dimensions` permutes first
    ((), (1, 1), None),
    ((0, 3), (3, 0), None),
])
def test_reshape(rng, shape, new_sizes, dimensions):
    tu.check_vmap(lambda x: lax.reshape(x, new_sizes, dimensions), [_floats(rng, shape)])


@pytest.mark.parametrize("shape,dims", [((1, 3, 1), (0, 2)), ((2, 1), (-1,)), ((1,), (0,))])
def test_squeeze(rng, shape, dims):
    tu.check_vmap(lambda x: lax.squeeze(x, dims), [_floats(rng, shape)])


@pytest.mark.parametrize("shape,perm", [((2, 3, 4), (2, 0, 1)), ((2, 3), (1, 0)), ((0, 2), (1, 0))])
def test_transpose(rng, shape, perm):
    tu.check_vmap(lambda x: lax.transpose(x, perm), [_floats(rng, shape)])


@pytest.mark.parametrize("shape,dims", [((3, 4), (0,)), ((2, 3, 4), (0, 2))])
def test_rev(rng, shape, dims):
    tu.check_vmap(lambda x: lax.rev(x, dims), [_floats(rng, shape)])


# ----- pad -------------------------------------------------------------------------------------------

PAD_CASES = [  # (per-example shape, padding_config, batch sizes)
    ((3, 4), ((1, 2, 1), (0, -1, 0)), (10, 0)),  # interior padding and a negative (cutting) edge
    ((2,), ((-1, 3, 2),), (10,)),
    ((), (), (10, 0)),
    ((0,), ((1, 1, 0),), (10,)),
]


@pytest.mark.parametrize("shape,config,sizes", PAD_CASES)
def test_pad(rng, shape, config, sizes):
    # the padding value is an operand too: batched (one per example) or not, in every combination
    tu.check_vmap(lambda x, v: lax.pad(x, v, config), [_floats(rng, shape), _floats(rng, ())], sizes=sizes)


def test_pad_int_batched_value(rng):
    # the select between padded operand and padding value must keep integer dtypes exact
    x = tu.rand(rng, (B, 3), np.int32)
    v = rng.integers(-100, 100, size=(B,)).astype(np.int32)
    tu.check_vmap(lambda x, v: lax.pad(x, v, [(2, 1, 1)]), [x, v], sizes=(10,))


# ----- concatenate / slice -------------------------------------------------------------------------

def test_concatenate(rng):
    args = [_floats(rng, (2, 3)), _floats(rng, (1, 3)), _floats(rng, (4, 3))]
    tu.check_vmap(lambda a, b, c: lax.concatenate([a, b, c], 0), args)


def test_concatenate_last_dim_with_empty(rng):
    args = [_floats(rng, (2, 1)), _floats(rng, (2, 0)), _floats(rng, (2, 2))]
    tu.check_vmap(lambda a, b, c: lax.concatenate([a, b, c], 1), args, sizes=(10,))


@pytest.mark.parametrize("shape,start,limit,strides", [
    ((5, 6), (1, 0), (4, 6), (2, 3)),
    ((4,), (1,), (3,), None),
    ((3, 2), (3, 0), (3, 2), None),  # an empty slice
])
def test_slice(rng, shape, start, limit, strides):
    tu.check_vmap(lambda x: lax.slice(x, start, limit, strides), [_floats(rng, shape)])


# ----- dynamic_slice / dynamic_update_slice ---------------------------------------------------------
# check_vmap batches each operand alone (the operand alone takes the no-gather path; an index alone
# or with the operand takes the gather/scatter path) and all together. The starts include negative
# values (counted from the end) and out-of-bounds ones (clamped), as the unbatched primitive does.

def test_dynamic_slice(rng):
    args = [_floats(rng, (5, 6)), _starts(rng, -8, 8), _starts(rng, -9, 9)]
    tu.check_vmap(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)), args)


def test_dynamic_slice_1d_and_empty_window(rng):
    args = [_floats(rng, (7,)), _starts(rng, -10, 10)]
    tu.check_vmap(lambda x, i: lax.dynamic_slice(x, (i,), (3,)), args)
    tu.check_vmap(lambda x, i: lax.dynamic_slice(x, (i,), (0,)), args, sizes=(10,))


def test_dynamic_slice_unsigned_indices(rng):
    # unsigned starts are never "from the end", only clamped
    args = [_floats(rng, (6, 2)), _starts(rng, 0, 9, np.uint8)]
    tu.check_vmap(lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)), args, sizes=(10,))


def test_dynamic_slice_scalar_operand(rng):
    tu.check_vmap(lambda x: lax.dynamic_slice(x, (), ()), [_floats(rng, ())], sizes=(10,))


def test_dynamic_update_slice(rng):
    args = [_floats(rng, (5, 6)), _floats(rng, (2, 3)), _starts(rng, -8, 8), _starts(rng, -9, 9)]
    tu.check_vmap(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)), args)


def test_dynamic_update_slice_1d(rng):
    args = [_floats(rng, (6,)), _floats(rng, (4,)), _starts(rng, -9, 9)]
    tu.check_vmap(lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)), args, sizes=(10,))


def test_dynamic_update_slice_scalar_operand(rng):
    tu.check_vmap(lambda x, u: lax.dynamic_update_slice(x, u, ()), [_floats(rng, ()), _floats(rng, ())],
                  sizes=(10,))


def test_dynamic_ops_batched_starts_hand_values():
    # hand-derived: start -1 is 3 (from the end), then clamped to 2 so the window of 2 fits in 4
    x = np.arange(4, dtype=np.float32)
    out = core.vmap(lambda i: lax.dynamic_slice(x, (i,), (2,)))(np.array([0, -1, 9, -9], np.int32))
    np.testing.assert_array_equal(np.asarray(out), [[0, 1], [2, 3], [2, 3], [0, 1]])
    out = core.vmap(lambda i: lax.dynamic_update_slice(x, np.ones(2, np.float32) * 9, (i,)))(
        np.array([1, -1], np.int32))
    np.testing.assert_array_equal(np.asarray(out), [[0, 9, 9, 3], [0, 1, 9, 9]])


# ----- iota: no operands, applied directly --------------------------------------------------------

def test_iota_inside_vmap(rng):
    tu.check_vmap(lambda x: x * lax.broadcasted_iota(np.float32, (2, 3), 1), [_floats(rng, (2, 3))])


# ----- compositions ---------------------------------------------------------------------------------

def _window(x, i):
    y = lax.pad(x, 0.5, [(1, 1, 0), (0, 0, 1)])
    y = lax.dynamic_slice(y, (i, i), (3, 3))
    return lax.concatenate([lax.rev(y, (0,)), lax.transpose(y, (1, 0))], 1)


def test_jit_of_vmap(rng):
    x, i = _floats(rng, (4, 3)), _starts(rng, -3, 4)
    expected = np.stack([np.asarray(_window(x[k], i[k])) for k in range(B)])
    got = core.jit(core.vmap(_window))(x, i)
    tu.assert_allclose(got, expected, np.float32)


def test_vmap_of_vmap(rng):
    x = tu.rand(rng, (5, 3, 4, 3), np.float32)
    i = rng.integers(-3, 4, size=(5, 3)).astype(np.int32)
    got = core.vmap(core.vmap(_window), in_axes=(1, 1))(x, i)
    expected = np.stack([np.stack([np.asarray(_window(x[b, a], i[b, a])) for b in range(5)])
                         for a in range(3)])
    tu.assert_allclose(got, expected, np.float32)


def test_vmap_of_grad(rng):
    def loss(x, i):
        return lax.reduce_sum(_window(x, i) ** 2, (0, 1))
    x, i = _floats(rng, (4, 3)), _starts(rng, -3, 4)
    got = core.jit(core.vmap(core.grad(loss)))(x, i)  # jit: one compile instead of one per primitive
    per_example = core.jit(core.grad(loss))
    expected = np.stack([np.asarray(per_example(x[k], i[k])) for k in range(B)])
    tu.assert_allclose(got, expected, np.float32)

"""NumPy indexing (`x[idx]`, `x.at[idx]`) and core.numpy's index functions against NumPy.

Where JAX deliberately differs (out-of-bounds reads clamp, out-of-bounds writes are dropped), the
oracle is NumPy applied to explicitly clipped indices, or a NumPy loop that skips them.
"""
import numpy as np
import pytest

import core.numpy as jnp
from core import test_util as tu
from core.array import to_array
from core.numpy import indexing
from core.trace import EvalTrace, Trace, Tracer, set_current_trace

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


class _AbstractTracer(Tracer):
    __slots__ = ("_aval",)

    def __init__(self, trace, aval):
        self._trace, self._aval = trace, aval

    aval = property(lambda self: self._aval)


class _ShapeTrace(Trace):
    """Abstract evaluation only: checks that a function is built from primitives and static
    shapes (what jit and vmap will need), without the tracing machinery of later issues."""

    def process_primitive(self, prim, args, params):
        avals = [a.aval if isinstance(a, Tracer) else to_array(a).aval for a in args]
        out = prim.abstract_eval(*avals, **params)
        if prim.multiple_results:
            return [_AbstractTracer(self, o) for o in out]
        return _AbstractTracer(self, out)


def shape_eval(fn, *avals):
    trace = _ShapeTrace()
    with set_current_trace(trace):
        out = fn(*[_AbstractTracer(trace, a) for a in avals])
    return out


def aval(shape, dtype):
    from core.avals import ShapedArray
    return ShapedArray(shape, np.dtype(dtype))


class _CountingTrace(EvalTrace):
    def __init__(self):
        self.names = []

    def process_primitive(self, prim, args, params):
        self.names.append(prim.name)
        return super().process_primitive(prim, args, params)


# ----- x[idx] ------------------------------------------------------------------------------------

S = slice
BASIC = [1, -1, S(1, 3), S(None, None, -1), (S(None, None, 2), None), (Ellipsis, 0), (0, S(None), -2),
         (S(4, 0, -3), S(None), S(1, None, 2)), (None, Ellipsis, None), (S(5, 9),), (S(-100, 100),),
         (S(2, 2), 1), (1, 2, 3), (Ellipsis,), (), (S(None, None, -2), Ellipsis, S(3, None, -1))]
ADVANCED = [[0, 2], (np.array([[0], [1]]), S(1, 3)), (np.array([0, 2]), S(None), np.array([1, 3])),
            (0, S(None), [1, 3]), (S(None), [1, 3], None), ([0, 1], None, [0, 1]), (S(None, None, -1), [0, -1]),
            (S(None, None, -2), [0, -1], S(4, 0, -3)), (np.array(1), np.array([[0], [3]])),
            ([[0, 1], [2, 2]], Ellipsis, [4, 0]), (S(1, 1), [0, 1]), (np.zeros(0, np.int32),),
            (Ellipsis, [4, 0, 4]), (np.array([True, False, True]),), (S(None), X[0, :, 0] > 7),
            (X[:, :, 0] > 20,), (X > 30,), True, False, (S(None), True), ([0, 1], S(None), True),
            ([True, False, True], 1), (S(None), [], 1)]


@pytest.mark.parametrize("idx", BASIC + ADVANCED, ids=repr)
def test_getitem_matches_numpy(idx):
    out = jnp.asarray(X)[idx]
    expected = X[idx]
    assert out.shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(out), expected)


@pytest.mark.parametrize("idx", [(np.array([0, 2]), S(None), np.array([1, 3])), [[1], [2]], (1, [0, -1, 2])],
                         ids=repr)
def test_getitem_with_device_index_arrays(idx):
    dev = tuple(jnp.asarray(np.asarray(i)) if isinstance(i, (list, np.ndarray)) else i
                for i in (idx if isinstance(idx, tuple) else (idx,)))
    np.testing.assert_array_equal(np.asarray(jnp.asarray(X)[dev]), X[idx])


@pytest.mark.parametrize("shape,dtype", tu.sample_cases(
    tu.product([(), (0,), (3, 0), (4,)], [np.float32, np.int8, np.bool_, np.complex64]), "getitem_shapes", n=6))
def test_getitem_edge_shapes(rng, shape, dtype):
    x = tu.rand(rng, shape, dtype)
    idxs = [(), Ellipsis, None, (Ellipsis, None)]
    if shape:
        idxs += [S(None, None, -1), [0] * (shape[0] > 0), S(1, None)]
    for idx in idxs:
        out = jnp.asarray(x)[idx]
        assert out.shape == x[idx].shape, idx
        np.testing.assert_array_equal(np.asarray(out), x[idx])


def test_getitem_out_of_bounds_clamps():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(x[7]), X[2])
    np.testing.assert_array_equal(np.asarray(x[-9]), X[0])
    np.testing.assert_array_equal(np.asarray(x[1, 10, -7]), X[1, 3, 0])
    idx = np.array([-9, -1, 0, 5, 2])
    clipped = np.clip(np.where(idx < 0, idx + 3, idx), 0, 2)
    np.testing.assert_array_equal(np.asarray(x[idx]), X[clipped])
    np.testing.assert_array_equal(np.asarray(x[jnp.asarray(idx)]), X[clipped])
    cols = np.clip(np.where(idx + 1 < 0, idx + 5, idx + 1), 0, 3)
    np.testing.assert_array_equal(np.asarray(x[:, idx + 1, 0]), X[:, cols, 0])


def test_getitem_basic_index_is_one_or_two_primitives():
    x = jnp.asarray(X)
    for idx, most in ((0, 2), (S(1, 3), 1), ((Ellipsis, 0), 2), (S(None, None, -1), 1), (S(None), 0)):
        trace = _CountingTrace()
        with set_current_trace(trace):
            x[idx]
        assert len(trace.names) <= most, (idx, trace.names)
    trace = _CountingTrace()
    with set_current_trace(trace):
        x[[0, 2], 1]
    assert trace.names.count("gather") == 1


def test_getitem_errors():
    x = jnp.asarray(X)
    with pytest.raises(TypeError, match=r"Indexer must have integer or boolean type, got indexer with type float32"):
        x[np.array([0.0, 1.0], np.float32)]
    with pytest.raises(TypeError, match=r"type float"):
        x[jnp.asarray(np.array([1.0]))]
    with pytest.raises(TypeError, match=r"Indexing mode not supported.*str"):
        x["a"]
    with pytest.raises(IndexError, match=r"Too many indices: array is 3-dimensional, but 4 were indexed"):
        x[0, 0, 0, 0]
    with pytest.raises(IndexError, match=r"an index can only have a single ellipsis"):
        x[..., 0, ...]
    with pytest.raises(IndexError, match=r"shape mismatch: indexing arrays could not be broadcast together with "
                                         r"shapes \(2,\) \(3,\)"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match=r"boolean index did not match"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match=r"index 0 is out of bounds for axis 0 with size 0"):
        jnp.zeros((0, 3))[0]
    with pytest.raises(ValueError, match=r"slice step cannot be zero"):
        x[::0]


def test_item_assignment_points_to_at():
    x = jnp.asarray(X)
    with pytest.raises(TypeError, match=r"does not support item assignment.*x\.at\[idx\]\.set"):
        x[0] = 1


def test_traced_indices():
    x_aval = aval((3, 4, 5), np.float32)
    out = shape_eval(lambda x, i: x[i, :, 1], x_aval, aval((2, 6), np.int32))
    assert out.shape == (2, 6, 4)
    out = shape_eval(lambda x, i: x.at[i].add(1.0), x_aval, aval((7,), np.int32))
    assert out.shape == (3, 4, 5) and out.dtype == np.float32
    out = shape_eval(lambda x: x[1:, ::-2, None], x_aval)
    assert out.shape == (2, 2, 1, 5)
    with pytest.raises(TypeError, match=r"Array boolean indices must be concrete.*jnp\.where.*size="):
        shape_eval(lambda x, m: x[m], x_aval, aval((3,), np.bool_))
    with pytest.raises(indexing.NonConcreteBooleanIndexError):
        shape_eval(lambda m: jnp.nonzero(m), aval((3,), np.bool_))
    outs = shape_eval(lambda m: jnp.nonzero(m, size=4), aval((3, 2), np.float32))
    assert [o.shape for o in outs] == [(4,), (4,)]
    with pytest.raises(TypeError, match=r"Slice entries must be static.*dynamic_slice"):
        shape_eval(lambda x, i: x[i:], x_aval, aval((), np.int32))


# ----- x.at[idx] ---------------------------------------------------------------------------------

def np_update_at(x, idx, values, ufunc):
    """NumPy's unbuffered in-place ufunc.at: repeated indices accumulate."""
    out = x.copy()
    ufunc.at(out, idx, values)
    return out


AT_CASES = [(1, None), ([0, 0, 2], None), ((S(None), [1, 1, 3]), None), ((0, S(1, 3)), None),
            ((S(None, None, -1), 2), None), ((np.array([[0], [2]]), S(None), [4, 4]), None), ((Ellipsis, 0), None)]


@pytest.mark.parametrize("op,ufunc", [("add", np.add), ("multiply", np.multiply), ("min", np.minimum),
                                      ("max", np.maximum), ("subtract", np.subtract)])
@pytest.mark.parametrize("idx", [c[0] for c in AT_CASES], ids=repr)
def test_at_accumulating_ops_match_ufunc_at(rng, op, ufunc, idx):
    x = tu.rand(rng, (3, 4, 5), np.float32)
    shape = np.empty((3, 4, 5))[idx].shape
    v = tu.rand(rng, shape, np.float32)
    out = getattr(jnp.asarray(x).at[idx], op)(jnp.asarray(v))
    tu.assert_allclose(out, np_update_at(x, idx, v, ufunc), np.float32, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, tu.dtypes.bfloat16])
def test_at_set_matches_numpy_and_keeps_dtype(rng, dtype):
    x = tu.rand(rng, (4, 3), dtype)
    idx = (np.array([2, 0]), S(None, None, -1))
    v = tu.rand(rng, (2, 3), dtype)
    expected = x.copy()
    expected[idx] = v
    out = jnp.asarray(x).at[idx].set(jnp.asarray(v))
    assert out.dtype == np.dtype(dtype)
    tu.assert_allclose(out, expected, dtype)


def test_at_values_broadcast_and_cast():
    x = jnp.asarray(np.zeros((3, 4), np.int32))
    out = x.at[1:].set(7.9)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [[0] * 4, [7] * 4, [7] * 4])
    out = x.at[:, 1].add(jnp.asarray(np.array([1, 2, 3], np.int32)))
    np.testing.assert_array_equal(np.asarray(out)[:, 1], [1, 2, 3])
    out = x.at[None, 0].set(jnp.asarray(np.arange(4, dtype=np.int32)))
    np.testing.assert_array_equal(np.asarray(out)[0], np.arange(4))
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: \(3,\) and requested shape \(4,\)"):
        x.at[0].set(jnp.asarray(np.ones(3, np.int32)))


def test_at_out_of_bounds_modes():
    x = np.arange(5, dtype=np.float32)
    jx = jnp.asarray(x)
    np.testing.assert_array_equal(np.asarray(jx.at[[1, 7, -1, -9]].set(100.)), [0, 100, 2, 3, 100])  # dropped
    np.testing.assert_array_equal(np.asarray(jx.at[9].add(1., mode="drop")), x)
    np.testing.assert_array_equal(np.asarray(jx.at[9].add(1., mode="clip")), [0, 1, 2, 3, 5])
    np.testing.assert_array_equal(np.asarray(jx.at[jnp.asarray(np.array([9, -1]))].set(-1.)), [0, 1, 2, 3, -1])
    np.testing.assert_array_equal(np.asarray(jx.at[[0, 9, -9]].get()), [0, 4, 0])  # clamped
    out = np.asarray(jx.at[[0, 9, -1, -9]].get(mode="fill"))
    np.testing.assert_array_equal(out[[0, 2]], [0, 4])
    assert np.isnan(out[[1, 3]]).all()
    np.testing.assert_array_equal(np.asarray(jx.at[7].get(mode="fill", fill_value=-2.)), -2.)
    ix = jnp.asarray(np.arange(5, dtype=np.int32))
    assert int(ix.at[7].get(mode="fill")) == np.iinfo(np.int32).min


def test_at_divide_power_apply():
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    jx = jnp.asarray(x)
    tu.assert_allclose(jx.at[[0, 0], 1].divide(2.), np.where(np.arange(6).reshape(2, 3) == 1, x / 4, x), np.float32)
    ix = jnp.asarray(np.array([5, 7, 9], np.int32))
    out = ix.at[1].divide(2)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), [5, 3, 9])
    out = jx.at[1, :2].apply(lambda v: v * 10.)
    np.testing.assert_array_equal(np.asarray(out), [[1, 2, 3], [40, 50, 6]])
    np.testing.assert_array_equal(np.asarray(jx.at[0].mul(2.)), [[2, 4, 6], [4, 5, 6]])
    tu.assert_allclose(jx.at[:, 2].power(2.), np.where(np.arange(6).reshape(2, 3) % 3 == 2, x ** 2, x), np.float32)


# ----- index functions ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", [None, "fill", "clip", "wrap"])
@pytest.mark.parametrize("axis", [None, 0, -1])
def test_take(mode, axis):
    x = X[0]
    idx = np.array([[0, 3], [-1, 7], [-9, 2]])
    out = jnp.take(jnp.asarray(x), jnp.asarray(idx), axis=axis, mode=mode)
    n = x.size if axis is None else x.shape[axis]
    if mode == "wrap":
        expected = np.take(x, idx, axis=axis, mode="wrap")
    elif mode == "clip":  # JAX's clip does not wrap negative indices first
        expected = np.take(x, np.clip(idx, 0, n - 1), axis=axis)
    else:  # negative indices count from the end; out of bounds reads a NaN slot appended to x
        norm = np.where(idx < 0, idx + n, idx)
        src = x.reshape(-1) if axis is None else x
        ax = 0 if axis is None else axis
        pad = np.full(tuple(1 if d == ax % src.ndim else s for d, s in enumerate(src.shape)), np.nan, np.float32)
        ext = np.concatenate([src, pad], axis=ax)
        expected = np.take(ext, np.where((norm >= 0) & (norm < n), norm, n), axis=ax)
    tu.assert_allclose(out, expected, np.float32)


def test_take_errors():
    x = jnp.asarray(X)
    with pytest.raises(TypeError, match=r"take: indices must have an integer dtype, got float32"):
        jnp.take(x, np.array([1.0], np.float32))
    with pytest.raises(NotImplementedError, match=r"'raise' mode to jnp.take"):
        jnp.take(x, np.array([1]), mode="raise")
    with pytest.raises(TypeError, match=r"take requires ndarray or scalar arguments.*jnp.asarray"):
        jnp.take(x, [1, 2])


def test_take_along_axis_and_put_along_axis(rng):
    x = tu.rand(rng, (3, 4), np.float32)
    idx = np.argsort(x, axis=1)
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(jnp.asarray(x), jnp.asarray(idx), axis=1)),
                                  np.take_along_axis(x, idx, axis=1))
    idx0 = np.array([[2, 0, 1, -1]])  # broadcasts over columns; -1 counts from the end
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(jnp.asarray(x), idx0, axis=0)),
                                  np.take_along_axis(x, np.where(idx0 < 0, idx0 + 3, idx0), axis=0))
    flat = np.array([11, 0, 5])
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(jnp.asarray(x), flat, axis=None)),
                                  np.take_along_axis(x, flat, axis=None))
    out = np.asarray(jnp.take_along_axis(jnp.asarray(x), np.array([[0, 9]]), axis=1))
    assert out.shape == (3, 2) and (out[:, 0] == x[:, 0]).all() and np.isnan(out[:, 1]).all()
    expected = x.copy()
    np.put_along_axis(expected, np.array([[0], [3], [1]]), 9., axis=1)
    out = jnp.put_along_axis(jnp.asarray(x), np.array([[0], [3], [1]]), 9., axis=1, inplace=False)
    np.testing.assert_array_equal(np.asarray(out), expected)
    with pytest.raises(ValueError, match=r"indices and arr must have the same number of dimensions; 1 vs. 2"):
        jnp.take_along_axis(jnp.asarray(x), np.array([0]), axis=1)
    with pytest.raises(ValueError, match=r"cannot modify arrays in-place.*inplace=False"):
        jnp.put_along_axis(jnp.asarray(x), np.array([[0]]), 1., axis=1)


def test_where_three_args_promotes_and_broadcasts(rng):
    c = rng.random((3, 1)) < 0.5
    x = tu.rand(rng, (4,), np.int32)
    y = tu.rand(rng, (3, 4), np.float16)
    out = jnp.where(jnp.asarray(c), jnp.asarray(x), jnp.asarray(y))
    assert out.dtype == np.float16 and out.shape == (3, 4)
    tu.assert_allclose(out, np.where(c, x, y), np.float16)
    out = jnp.where(jnp.asarray(np.array([1, 0, 2])), 1.5, jnp.asarray(np.zeros(3, np.float16)))
    assert out.dtype == np.float16  # the Python scalar is weak
    np.testing.assert_array_equal(np.asarray(out), [1.5, 0, 1.5])
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(3,\), \(4,\), \(\)\]"):
        jnp.where(jnp.asarray(np.ones(3, bool)), jnp.asarray(np.ones(4)), 0.)
    with pytest.raises(ValueError, match=r"Either both or neither of the x and y arguments"):
        jnp.where(jnp.asarray(np.ones(3, bool)), 1.)


def test_where_one_arg_and_nonzero(rng):
    a = rng.integers(-1, 2, size=(3, 4)).astype(np.int32)
    for got, want in zip(jnp.where(jnp.asarray(a)), np.nonzero(a), strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
        assert got.dtype == np.int32
    k = np.count_nonzero(a)
    for size in (k + 2, max(k - 1, 0)):
        got = jnp.nonzero(jnp.asarray(a), size=size, fill_value=-1)
        for g, w in zip(got, np.nonzero(a), strict=True):
            expected = np.full(size, -1)
            expected[:min(size, k)] = w[:size]
            np.testing.assert_array_equal(np.asarray(g), expected)
    got = jnp.nonzero(jnp.asarray(np.array([0, 3, 0, 5j], np.complex64)), size=3, fill_value=(7,))
    np.testing.assert_array_equal(np.asarray(got[0]), [1, 3, 7])
    got = jnp.nonzero(jnp.asarray(np.zeros((0, 2))), size=2)
    np.testing.assert_array_equal(np.asarray(got[1]), [0, 0])
    with pytest.raises(ValueError, match=r"Calling nonzero on 0d arrays is not allowed"):
        jnp.nonzero(jnp.asarray(np.float32(1)))


def test_select(rng):
    x = tu.rand(rng, (5,), np.float32)
    conds = [x < -1, x > 1]
    out = jnp.select([jnp.asarray(c) for c in conds], [jnp.asarray(x), 2], -7)
    tu.assert_allclose(out, np.select(conds, [x, 2], -7), np.float32)
    with pytest.raises(ValueError, match=r"list of cases must be same length as list of conditions"):
        jnp.select([jnp.asarray(conds[0])], [1, 2])
    with pytest.raises(ValueError, match=r"empty condition list"):
        jnp.select([], [])
    with pytest.raises(TypeError, match=r"invalid entry 0 in condlist: should be boolean ndarray"):
        jnp.select([jnp.asarray(x)], [x])


def test_argwhere_flatnonzero_extract_compress(rng):
    a = rng.integers(0, 2, size=(3, 4)).astype(np.int32)
    np.testing.assert_array_equal(np.asarray(jnp.argwhere(jnp.asarray(a))), np.argwhere(a))
    out = jnp.argwhere(jnp.asarray(a), size=20, fill_value=-1)
    assert out.shape == (20, 2)
    np.testing.assert_array_equal(np.asarray(out)[:np.count_nonzero(a)], np.argwhere(a))
    assert jnp.argwhere(jnp.asarray(np.int32(3))).shape == np.argwhere(np.int32(3)).shape
    np.testing.assert_array_equal(np.asarray(jnp.flatnonzero(jnp.asarray(a))), np.flatnonzero(a))
    x = tu.rand(rng, (3, 4), np.float32)
    np.testing.assert_array_equal(np.asarray(jnp.extract(jnp.asarray(a), jnp.asarray(x))), np.extract(a, x))
    out = np.asarray(jnp.extract(jnp.asarray(a), jnp.asarray(x), size=12, fill_value=-1.))
    n = np.count_nonzero(a)
    np.testing.assert_array_equal(out, np.concatenate([np.extract(a, x), np.full(12 - n, -1.)]))
    cond = np.array([True, False, True])
    np.testing.assert_array_equal(np.asarray(jnp.compress(jnp.asarray(cond), jnp.asarray(x), axis=0)),
                                  np.compress(cond, x, axis=0))
    np.testing.assert_array_equal(np.asarray(jnp.compress(jnp.asarray(cond[:2]), jnp.asarray(x), axis=1)),
                                  np.compress(cond[:2], x, axis=1))
    out = jnp.compress(jnp.asarray(cond), jnp.asarray(x), axis=0, size=3, fill_value=0.)
    np.testing.assert_array_equal(np.asarray(out), np.concatenate([x[[0, 2]], np.zeros((1, 4))]))
    with pytest.raises(IndexError, match=r"out of bounds for axis 0 with size 3"):
        jnp.compress(jnp.asarray(np.array([0, 0, 0, 1], bool)), jnp.asarray(x), axis=0)


def test_choose():
    a = np.array([[0, 2], [1, 3]])
    choices = [np.arange(4).reshape(2, 2), np.array([10, 20]), np.float32(-1.5)]
    for mode in ("clip", "wrap"):
        np.testing.assert_array_equal(np.asarray(jnp.choose(jnp.asarray(a), choices, mode=mode)),
                                      np.choose(a, choices, mode=mode))
    ok = np.array([[2, 0], [1, 1]])
    np.testing.assert_array_equal(np.asarray(jnp.choose(ok, choices)), np.choose(ok, choices))
    with pytest.raises(ValueError, match=r"invalid entry in choice array"):
        jnp.choose(jnp.asarray(a), choices)


def test_index_construction_functions():
    def eq(got, want):
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(np.asarray(g), w)

    eq(jnp.diag_indices(3), np.diag_indices(3))
    eq(jnp.diag_indices(2, 3), np.diag_indices(2, 3))
    eq(jnp.diag_indices_from(jnp.zeros((2, 2, 2))), np.diag_indices_from(np.zeros((2, 2, 2))))
    for k in (-1, 0, 2):
        eq(jnp.tril_indices(4, k), np.tril_indices(4, k))
        eq(jnp.triu_indices(3, k, 5), np.triu_indices(3, k, 5))
        eq(jnp.tril_indices_from(jnp.zeros((3, 5)), k), np.tril_indices_from(np.zeros((3, 5)), k))
        eq(jnp.triu_indices_from(jnp.zeros((4, 2)), k), np.triu_indices_from(np.zeros((4, 2)), k))
    eq(jnp.ix_(np.array([0, 2]), [True, False, True, True], jnp.asarray(np.array([4]))),
       np.ix_(np.array([0, 2]), [True, False, True, True], np.array([4])))
    np.testing.assert_array_equal(np.asarray(jnp.asarray(X)[jnp.ix_([0, 2], [1, 3], [4])]),
                                  X[np.ix_([0, 2], [1, 3], [4])])
    with pytest.raises(ValueError, match=r"All dimensions of input must be of equal length"):
        jnp.diag_indices_from(jnp.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"input array must be 2-d"):
        jnp.tril_indices_from(jnp.zeros(3))
    with pytest.raises(ValueError, match=r"Cross index must be 1 dimensional"):
        jnp.ix_(np.zeros((2, 2), np.int32))


def test_unravel_and_ravel_multi_index():
    shape = (3, 4, 2)
    idx = np.array([0, 5, 23, 17, -1, 30, -40])
    norm = np.clip(np.where(idx < 0, idx + 24, idx), 0, 23)  # JAX clamps; NumPy would raise
    for got, want in zip(jnp.unravel_index(jnp.asarray(idx), shape), np.unravel_index(norm, shape), strict=True):
        np.testing.assert_array_equal(np.asarray(got), want)
    coords = (np.array([0, 2, 1]), np.array([3, 0, 1]), np.array([1, 1, 0]))
    for order in ("C", "F"):
        np.testing.assert_array_equal(np.asarray(jnp.ravel_multi_index(coords, shape, order=order)),
                                      np.ravel_multi_index(coords, shape, order=order))
    bad = (np.array([4, -1]), np.array([1, 9]), np.array([0, 3]))
    for mode in ("clip", "wrap"):
        np.testing.assert_array_equal(np.asarray(jnp.ravel_multi_index(bad, shape, mode=mode)),
                                      np.ravel_multi_index(bad, shape, mode=mode))
    with pytest.raises(ValueError, match=r"invalid entry in coordinates array"):
        jnp.ravel_multi_index(bad, shape)
    with pytest.raises(ValueError, match=r"multi_index must be a sequence of length 3"):
        jnp.ravel_multi_index(coords[:2], shape)


def test_private_names_are_not_exported():
    assert "_rewriting_take" not in indexing.__all__ and "_IndexUpdateHelper" not in indexing.__all__
    assert jnp._rewriting_take is indexing._rewriting_take

"""lax.gather and the lax.scatter family against hand-written NumPy loops that follow XLA's
definitions (index vectors in the last dimension of the index array, as in JAX)."""
import numpy as np
import pytest

import core.numpy as jnp
from core import test_util as tu
from core.lax import slicing as lax_slicing
from core.lax.slicing import GatherDimensionNumbers as GDN, GatherScatterMode, ScatterDimensionNumbers as SDN


def _full_start(operand_shape, index_vec, index_map, batch_idx, operand_batching, indices_batching):
    start = [0] * len(operand_shape)
    for k, d in enumerate(index_map):
        start[d] = int(index_vec[k])
    for od, sd in zip(operand_batching, indices_batching, strict=True):
        start[od] = batch_idx[sd]
    return start


def np_gather(operand, indices, dn, slice_sizes, mode="clip", fill_value=None):
    """XLA gather, one output window at a time."""
    batch_shape = indices.shape[:-1]
    window_dims = [d for d in range(operand.ndim)
                   if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    out_rank = len(dn.offset_dims) + len(batch_shape)
    out_shape = [0] * out_rank
    batch_pos = [i for i in range(out_rank) if i not in dn.offset_dims]
    for p, s in zip(batch_pos, batch_shape, strict=True):
        out_shape[p] = s
    for p, d in zip(dn.offset_dims, window_dims, strict=True):
        out_shape[p] = slice_sizes[d]
    out = np.zeros(out_shape, operand.dtype)
    for b in np.ndindex(*batch_shape):
        start = _full_start(operand.shape, indices[b], dn.start_index_map, b, dn.operand_batching_dims,
                            dn.start_indices_batching_dims)
        in_bounds = all(0 <= start[d] <= operand.shape[d] - slice_sizes[d] for d in dn.start_index_map)
        start = [min(max(s, 0), operand.shape[d] - slice_sizes[d]) for d, s in enumerate(start)]
        for w in np.ndindex(*[slice_sizes[d] for d in window_dims]):
            src = list(start)
            for d, o in zip(window_dims, w, strict=True):
                src[d] += o
            dst = [0] * out_rank
            for p, v in zip(batch_pos, b, strict=True):
                dst[p] = v
            for p, v in zip(dn.offset_dims, w, strict=True):
                dst[p] = v
            value = operand[tuple(src)]
            if mode == "fill" and not in_bounds:
                value = fill_value
            out[tuple(dst)] = value
    return out


def np_scatter(operand, indices, updates, dn, combine, mode="drop"):
    """XLA scatter: each update window combined into the operand, in order (so repeated indices
    accumulate like np.add.at); windows not wholly in bounds are skipped unless mode='clip'."""
    out = operand.copy()
    window_dims = [d for d in range(operand.ndim)
                   if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    scatter_pos = [i for i in range(updates.ndim) if i not in dn.update_window_dims]
    sizes = [1] * operand.ndim
    for d, u in zip(window_dims, dn.update_window_dims, strict=True):
        sizes[d] = updates.shape[u]
    for b in np.ndindex(*indices.shape[:-1]):
        start = _full_start(operand.shape, indices[b], dn.scatter_dims_to_operand_dims, b,
                            dn.operand_batching_dims, dn.scatter_indices_batching_dims)
        if mode == "clip":
            start = [min(max(s, 0), operand.shape[d] - sizes[d]) for d, s in enumerate(start)]
        elif not all(0 <= start[d] <= operand.shape[d] - sizes[d] for d in range(operand.ndim)):
            continue
        for w in np.ndindex(*[sizes[d] for d in window_dims]):
            dst = list(start)
            for d, o in zip(window_dims, w, strict=True):
                dst[d] += o
            src = [0] * updates.ndim
            for p, v in zip(scatter_pos, b, strict=True):
                src[p] = v
            for p, v in zip(dn.update_window_dims, w, strict=True):
                src[p] = v
            out[tuple(dst)] = combine(out[tuple(dst)], updates[tuple(src)])
    return out


# (operand shape, indices, dimension numbers, slice sizes): XLA's usual shapes of gather
GATHER_CASES = {
    "rows": ((3, 4), [[2], [0], [1]], GDN((1,), (0,), (0,)), (1, 4)),
    "points": ((3, 4), [[2, 1], [0, 3], [1, 1], [2, 0]], GDN((), (0, 1), (0, 1)), (1, 1)),
    "windows": ((5, 6), [[1, 2], [3, 0]], GDN((1, 2), (), (0, 1)), (2, 3)),
    "permuted_map": ((5, 6), [[1, 2], [3, 0]], GDN((1, 2), (), (1, 0)), (2, 3)),
    "offset_first": ((4, 3), [[[1], [2]], [[0], [3]]], GDN((0,), (1,), (1,)), (4, 1)),
    "batching": ((2, 3, 4), [[[1], [2], [0]], [[0], [0], [2]]],
                 GDN((2,), (1,), (1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,)), (1, 1, 4)),
    "empty_indices": ((3, 4), np.zeros((0, 1), np.int32), GDN((1,), (0,), (0,)), (1, 4)),
    "scalar_batch": ((3, 4), [1, 2], GDN((), (0, 1), (0, 1)), (1, 1)),
}


@pytest.mark.parametrize("case,dtype", tu.sample_cases(
    tu.product(list(GATHER_CASES), [np.float32, np.int32, np.bool_, np.uint8, np.float16]), "gather", n=10)
    + [("batching", np.float32), ("points", np.int32)])
def test_gather_matches_loop(rng, case, dtype):
    shape, idx, dn, sizes = GATHER_CASES[case]
    x = tu.rand(rng, shape, dtype)
    idx = np.asarray(idx, np.int32)
    out = lax_slicing.gather(jnp.asarray(x), jnp.asarray(idx), dn, sizes)
    expected = np_gather(x, idx, dn, sizes)
    assert out.dtype == np.dtype(dtype)
    tu.assert_allclose(out, expected, dtype)


@pytest.mark.parametrize("mode", ["clip", "fill", None])
def test_gather_out_of_bounds_modes(rng, mode):
    x = tu.rand(rng, (5, 6), np.float32)
    idx = np.array([[1, 2], [4, 0], [-1, 3], [2, 5], [7, -4]], np.int32)  # windows (2, 3)
    dn = GDN((1, 2), (), (0, 1))
    out = lax_slicing.gather(jnp.asarray(x), jnp.asarray(idx), dn, (2, 3), mode=mode)
    # None is PROMISE_IN_BOUNDS: XLA clamps, which is also what CLIP does
    expected = np_gather(x, idx, dn, (2, 3), mode="fill" if mode == "fill" else "clip", fill_value=np.nan)
    tu.assert_allclose(out, expected, np.float32)
    if mode == "fill":
        assert np.isnan(np.asarray(out)[1:]).all() and not np.isnan(np.asarray(out)[0]).any()


@pytest.mark.parametrize("dtype,expected", [(np.int32, np.iinfo(np.int32).min), (np.uint8, 255), (np.bool_, True),
                                            (np.float16, np.nan)])
def test_gather_default_fill_values(dtype, expected):
    x = jnp.asarray(np.zeros(3, dtype))
    out = lax_slicing.gather(x, jnp.asarray(np.array([[5], [0]], np.int32)), GDN((), (0,), (0,)), (1,), mode="fill")
    np.testing.assert_array_equal(np.asarray(out), np.array([expected, 0], dtype))


def test_gather_explicit_fill_value_and_unsigned_indices():
    x = jnp.asarray(np.arange(4, dtype=np.int32))
    idx = jnp.asarray(np.array([[3], [4], [200]], np.uint8))
    out = lax_slicing.gather(x, idx, GDN((), (0,), (0,)), (1,), mode="fill", fill_value=-7)
    np.testing.assert_array_equal(np.asarray(out), [3, -7, -7])
    out = lax_slicing.gather(x, idx, GDN((), (0,), (0,)), (1,), mode=GatherScatterMode.CLIP)
    np.testing.assert_array_equal(np.asarray(out), [3, 3, 3])


SCATTER_CASES = {
    # operand shape, indices, updates shape, dimension numbers
    "rows": ((4, 3), [[1], [3], [1]], (3, 3), SDN((1,), (0,), (0,))),
    "points": ((3, 4), [[0, 1], [2, 3], [0, 1], [1, 0]], (4,), SDN((), (0, 1), (0, 1))),
    "windows": ((5, 6), [[1, 2], [3, 3], [4, 0]], (3, 2, 3), SDN((1, 2), (), (0, 1))),
    "batching": ((2, 4), [[[1], [1]], [[3], [0]]], (2, 2),
                 SDN((), (1,), (1,), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))),
}

_COMBINE = {"scatter": lambda old, new: new, "scatter_add": lambda old, new: old + new,
            "scatter_mul": lambda old, new: old * new, "scatter_min": min, "scatter_max": max}


@pytest.mark.parametrize("fn,case,dtype", tu.sample_cases(
    tu.product(list(_COMBINE), list(SCATTER_CASES), [np.float32, np.int32, np.int8]), "scatter", n=12)
    + [("scatter_add", "windows", np.float32), ("scatter_max", "batching", np.int32)])
def test_scatter_family_matches_loop(rng, fn, case, dtype):
    shape, idx, upd_shape, dn = SCATTER_CASES[case]
    idx = np.asarray(idx, np.int32)
    if fn == "scatter":  # with repeated indices which update wins is unspecified: make them unique
        flat = idx.reshape(-1, idx.shape[-1])
        _, first = np.unique(flat, axis=0, return_index=True)
        keep = np.zeros(len(flat), bool)
        keep[first] = True
        if case == "batching":
            idx, upd_shape = np.array([[[1], [2]], [[3], [0]]], np.int32), upd_shape
        elif not keep.all():
            idx = flat[np.sort(first)].reshape((-1,) + idx.shape[1:])
            upd_shape = (idx.shape[0],) + upd_shape[1:]
    x = tu.rand(rng, shape, dtype)
    u = tu.rand(rng, upd_shape, dtype)
    out = getattr(lax_slicing, fn)(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(u), dn)
    expected = np_scatter(x, idx, u, dn, _COMBINE[fn])
    assert out.dtype == np.dtype(dtype) and out.shape == x.shape
    tu.assert_allclose(out, expected, dtype, atol=1e-5, rtol=1e-5)  # repeated adds may reassociate


@pytest.mark.parametrize("mode", ["drop", "clip", None, "promise_in_bounds"])
def test_scatter_out_of_bounds_modes(rng, mode):
    x = tu.rand(rng, (4, 3), np.float32)
    idx = np.array([[1], [4], [-1], [9]], np.int32)
    u = tu.rand(rng, (4, 3), np.float32)
    dn = SDN((1,), (0,), (0,))
    out = lax_slicing.scatter_add(jnp.asarray(x), jnp.asarray(idx), jnp.asarray(u), dn, mode=mode)
    expected = np_scatter(x, idx, u, dn, _COMBINE["scatter_add"], mode="clip" if mode == "clip" else "drop")
    tu.assert_allclose(out, expected, np.float32)


def test_scatter_bool_combiners():
    x = jnp.asarray(np.array([True, False, False]))
    idx = jnp.asarray(np.array([[1], [2]], np.int32))
    u = jnp.asarray(np.array([True, False]))
    dn = SDN((), (0,), (0,))
    np.testing.assert_array_equal(np.asarray(lax_slicing.scatter_add(x, idx, u, dn)), [True, True, False])
    np.testing.assert_array_equal(np.asarray(lax_slicing.scatter_mul(x, idx, u, dn)), [True, False, False])


def test_mode_from_any():
    assert GatherScatterMode.from_any("clip") is GatherScatterMode.CLIP
    for s in ("fill", "drop", None):
        assert GatherScatterMode.from_any(s) is GatherScatterMode.FILL_OR_DROP
    assert GatherScatterMode.from_any("promise_in_bounds") is GatherScatterMode.PROMISE_IN_BOUNDS
    assert GatherScatterMode.from_any(GatherScatterMode.CLIP) is GatherScatterMode.CLIP
    with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
        GatherScatterMode.from_any("wrap")


def test_fill_value_param_is_cache_friendly():
    """NaN fill values must compare equal as parameters, or every call would recompile."""
    from core.dispatch import eager_cache
    x = jnp.asarray(np.arange(3, dtype=np.float32))
    idx = jnp.asarray(np.array([[4]], np.int32))
    lax_slicing.gather(x, idx, GDN((), (0,), (0,)), (1,), mode="fill", fill_value=float("nan"))
    misses = eager_cache.misses
    out = lax_slicing.gather(x, idx, GDN((), (0,), (0,)), (1,), mode="fill", fill_value=float("nan"))
    assert np.isnan(np.asarray(out)).all()
    assert eager_cache.misses == misses


GATHER_ERRORS = [
    ((3, 4), (2, 1), GDN((2,), (0,), (0,)), (1, 4), r"gather: offset_dims must be in range \[0, 2\) \(the "
                                                        r"output rank\), got offset_dims=\(2,\)"),
    ((3, 4), (2, 1), GDN((1,), (0,), (0,)), (1,), r"gather: slice_sizes must have one entry per operand dimension"),
    ((3, 4), (2, 2), GDN((1,), (0,), (0,)), (1, 4), r"gather: start_index_map must have one entry per index "
                                                        r"vector component.*\(2, 2\)"),
    ((3, 4), (2, 1), GDN((1,), (0,), (0,)), (2, 4), r"gather: slice_sizes in collapsed_slice_dims must be at most 1"),
    ((3, 4), (2, 1), GDN((1,), (0,), (0,)), (1, 5), r"gather: slice_sizes must be in range \[0, operand shape\]"),
    ((3, 4), (2, 2), GDN((), (1, 0), (0, 1)), (1, 1), r"gather: collapsed_slice_dims must be sorted, got "
                                                          r"collapsed_slice_dims=\(1, 0\)"),
    ((3, 4), (2, 1), GDN((1,), (0,), (3,)), (1, 4), r"gather: start_index_map must be in range \[0, 2\)"),
    ((3, 4), (2, 1), GDN((1, 2), (0,), (0,)), (1, 4), r"gather: offset_dims must have one entry per slice dimension"),
    ((3, 4), (), GDN((1,), (0,), (0,)), (1, 4), r"gather: start_indices must have rank >= 1"),
]


@pytest.mark.parametrize("shape,idx_shape,dn,sizes,msg", GATHER_ERRORS)
def test_gather_shape_errors(shape, idx_shape, dn, sizes, msg):
    with pytest.raises(TypeError, match=msg):
        lax_slicing.gather(jnp.zeros(shape), jnp.zeros(idx_shape, jnp.int32), dn, sizes)


def test_gather_index_dtype_error():
    with pytest.raises(TypeError, match=r"gather: indices must have an integer dtype, got f32"):
        lax_slicing.gather(jnp.zeros((3,)), jnp.zeros((2, 1)), GDN((), (0,), (0,)), (1,))


def test_scatter_errors():
    dn = SDN((1,), (0,), (0,))
    x, idx = jnp.zeros((4, 3)), jnp.zeros((2, 1), jnp.int32)
    with pytest.raises(TypeError, match=r"scatter_add: the scatter dimensions of updates \(5,\) must equal the "
                                        r"batch shape of scatter_indices \(2,\)"):
        lax_slicing.scatter_add(x, idx, jnp.zeros((5, 3)), dn)
    with pytest.raises(TypeError, match=r"scatter: operand and updates must have the same dtype, got f32 and i32"):
        lax_slicing.scatter(x, idx, jnp.zeros((2, 3), jnp.int32), dn)
    with pytest.raises(TypeError, match=r"scatter_max: updates window dimension 1 \(size 4\) must not exceed "
                                        r"operand dimension 1 \(size 3\)"):
        lax_slicing.scatter_max(x, idx, jnp.zeros((2, 4)), dn)
    with pytest.raises(TypeError, match=r"scatter_min: updates must have rank"):
        lax_slicing.scatter_min(x, idx, jnp.zeros((2, 3, 1)), dn)
    with pytest.raises(TypeError, match=r"scatter_mul: update_window_dims, inserted_window_dims and "
                                        r"operand_batching_dims must together have one entry per operand dimension"):
        lax_slicing.scatter_mul(x, idx, jnp.zeros((2,)), SDN((), (0,), (0,)))
    with pytest.raises(TypeError, match=r"scatter: scatter_indices must have an integer dtype|indices must have an "
                                        r"integer dtype, got f32"):
        lax_slicing.scatter(x, jnp.zeros((2, 1)), jnp.zeros((2, 3)), dn)


def test_exported_from_core_lax():
    from core import lax
    from core.traceback_util import unwrap_boundary  # core.lax exports functions as API entry points
    for name in ("gather", "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max",
                 "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "index_take"):
        assert unwrap_boundary(getattr(lax, name)) is getattr(lax_slicing, name)


def test_loop_oracles_agree_with_numpy():
    """The oracles themselves: a row gather is fancy indexing, a point scatter-add is np.add.at."""
    x = np.arange(12.).reshape(3, 4)
    np.testing.assert_array_equal(np_gather(x, np.array([[2], [0]]), GDN((1,), (0,), (0,)), (1, 4)), x[[2, 0]])
    expected = x.copy()
    np.add.at(expected, ([0, 0, 2], [1, 1, 3]), [1., 2., 3.])
    got = np_scatter(x, np.array([[0, 1], [0, 1], [2, 3]]), np.array([1., 2., 3.]), SDN((), (0, 1), (0, 1)),
                     _COMBINE["scatter_add"])
    np.testing.assert_array_equal(got, expected)


def test_index_take(rng):
    x = tu.rand(rng, (3, 4, 2), np.float32)
    i0, i2 = np.array([2, 0, 1, 5]), np.array([1, 1, 0, 0])
    out = lax_slicing.index_take(jnp.asarray(x), (jnp.asarray(i0), jnp.asarray(i2)), (0, 2))
    np.testing.assert_array_equal(np.asarray(out), x[np.clip(i0, 0, 2), :, i2])  # clamped, as gathers do
    out = lax_slicing.index_take(jnp.asarray(x), (jnp.asarray(i2),), (2,))
    np.testing.assert_array_equal(np.asarray(out), np.moveaxis(x[:, :, i2], 2, 0))
    with pytest.raises(TypeError, match=r"index_take: needs one index array per axis"):
        lax_slicing.index_take(jnp.asarray(x), (jnp.asarray(i0),), (0, 1))

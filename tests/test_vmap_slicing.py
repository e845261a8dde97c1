"""vmap of gather and the scatter family (gather_p, scatter_p, scatter_add_p, scatter_mul_p,
scatter_min_p, scatter_max_p) against a loop over examples (docs/reliability.md N5), for batch sizes
10 and 0 and every placement of the batch axis, plus the user-level paths `x[idx]` and
`x.at[idx].add(v)`."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax, test_util as tu
from core.lax.slicing import GatherDimensionNumbers as GDN, ScatterDimensionNumbers as SDN

B = 10  # examples stacked on axis 0 of every test operand


def _normal(rng, *shape):
    return rng.standard_normal((B,) + shape).astype(np.float32)


def _ints(rng, lo, hi, *shape):
    return rng.integers(lo, hi, (B,) + shape).astype(np.int32)


def _unique_rows(rng, n, k):
    """Per example, k distinct indices in [0, n) as (k, 1) index vectors."""
    return np.stack([rng.permutation(n)[:k] for _ in range(B)]).astype(np.int32)[..., None]


def _with_pairs(lane_ndims):
    """tu.batching_cases plus every pair of operands batched (the rest not), front and back:
    for three operands these are the mixed cases (operand + indices, indices + updates, ...)
    that the default cases skip."""
    cases = tu.batching_cases(lane_ndims)
    n = len(lane_ndims)
    for size in (B,):  # the empty batch goes through the same code: the default cases cover it
        for i in range(n):
            for j in range(i + 1, n):
                for front in (True, False):
                    axes = tuple((0 if front else lane_ndims[k]) if k in (i, j) else None for k in range(n))
                    cases.append((axes, size))
    return list(dict.fromkeys(cases))


# ----- gather_p ------------------------------------------------------------------------------------

def test_gather_take_axis0():
    rng = np.random.default_rng(0)
    x, idx = _normal(rng, 5, 3), _ints(rng, 0, 5, 4, 1)
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    tu.check_vmap(lambda x, i: lax.gather(x, i, dn, (1, 3)), [x, idx])


def test_gather_take_axis1_clip_out_of_bounds():
    rng = np.random.default_rng(1)
    x, idx = _normal(rng, 3, 5), _ints(rng, -3, 8, 4, 1)
    dn = GDN(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,))
    tu.check_vmap(lambda x, i: lax.gather(x, i, dn, (3, 1), mode="clip"), [x, idx])


def test_gather_point_pairs():
    # x[i, j] for six (i, j) pairs per example
    rng = np.random.default_rng(2)
    x = _normal(rng, 4, 5)
    idx = np.stack([_ints(rng, 0, 4, 6), _ints(rng, 0, 5, 6)], -1)
    dn = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
    tu.check_vmap(lambda x, i: lax.gather(x, i, dn, (1, 1)), [x, idx])


def test_gather_single_point_scalar_output():
    # one index vector per example: the per-example output is 0-d
    rng = np.random.default_rng(3)
    x = _normal(rng, 4, 5)
    idx = np.stack([_ints(rng, 0, 4), _ints(rng, 0, 5)], -1)
    dn = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
    tu.check_vmap(lambda x, i: lax.gather(x, i, dn, (1, 1)), [x, idx])


@pytest.mark.parametrize("fill_value", [None, -7.0])
def test_gather_fill_out_of_bounds_windows(fill_value):
    # windows of 2 rows: start 5 is out of bounds for 6 rows, as are the negative ones
    rng = np.random.default_rng(4)
    x, idx = _normal(rng, 6, 4), _ints(rng, -2, 7, 3, 1)
    assert ((idx < 0) | (idx > 4)).any() and ((idx >= 0) & (idx <= 4)).any()
    dn = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0,))
    tu.check_vmap(lambda x, i: lax.gather(x, i, dn, (2, 4), mode="fill", fill_value=fill_value), [x, idx])


def test_gather_size0_shapes():
    rng = np.random.default_rng(5)
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    x, idx = _normal(rng, 5, 3), _ints(rng, 0, 5, 0, 1)  # no index vectors
    tu.check_vmap(lambda x, i: lax.gather(x, i, dn, (1, 3)), [x, idx])
    x, idx = _normal(rng, 5, 0), _ints(rng, 0, 5, 4, 1)  # empty windows
    tu.check_vmap(lambda x, i: lax.gather(x, i, dn, (1, 0)), [x, idx])


def test_gather_with_its_own_batching_dims():
    # per example, row r of x is indexed by row r of idx; the vmapped batch must pair up in front
    # of or behind that existing batching pair depending on where the operand's batch axis goes
    rng = np.random.default_rng(6)
    x, idx = _normal(rng, 3, 5), _ints(rng, 0, 5, 3, 2, 1)
    dn = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,),
             start_indices_batching_dims=(0,))
    f = lambda x, i: lax.gather(x, i, dn, (1, 1))
    tu.check_vmap(f, [x, idx], cases=_with_pairs([2, 3]) + [((1, 2), B), ((2, 1), B), ((1, 0), B)])


# ----- scatter family ----------------------------------------------------------------------------

ROWS = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
COLS = SDN(update_window_dims=(0,), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,))
POINTS = SDN(update_window_dims=(), inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1))
SCALARS = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))


def _small_ints(rng, *shape):
    """Integer-valued floats (exact sums and products in any order) in {-2, -1, 1, 2}."""
    return rng.choice(np.array([-2, -1, 1, 2], np.float32), (B,) + shape)


def test_scatter_unique_rows_and_dropped_out_of_bounds():
    rng = np.random.default_rng(10)
    x, u = _normal(rng, 5, 3), _normal(rng, 3, 3)
    idx = _unique_rows(rng, 5, 3)
    f = lambda x, i, u: lax.scatter(x, i, u, ROWS, unique_indices=True)
    tu.check_vmap(f, [x, idx, u], cases=_with_pairs([2, 2, 2]))
    # out-of-bounds rows (unique, so the winner is defined): dropped, in every example
    idx = np.stack([rng.permutation(np.arange(-3, 9))[:3] for _ in range(B)]).astype(np.int32)[..., None]
    assert ((idx < 0) | (idx > 4)).any()
    tu.check_vmap(lambda x, i, u: lax.scatter(x, i, u, ROWS), [x, idx, u])


def test_scatter_clip_columns():
    rng = np.random.default_rng(11)
    x, u = _normal(rng, 3, 6), _normal(rng, 3, 3)
    # distinct after clamping to [0, 5]
    idx = np.stack([np.array([-4, 2, 9])[rng.permutation(3)] for _ in range(B)]).astype(np.int32)[:, :, None]
    tu.check_vmap(lambda x, i, u: lax.scatter(x, i, u, COLS, mode="clip"), [x, idx, u])


def test_scatter_add_duplicate_rows():
    rng = np.random.default_rng(12)
    x, u, idx = _small_ints(rng, 4, 3), _small_ints(rng, 6, 3), _ints(rng, 0, 3, 6, 1)
    f = lambda x, i, u: lax.scatter_add(x, i, u, ROWS)
    tu.check_vmap(f, [x, idx, u], cases=_with_pairs([2, 2, 2]))


def test_scatter_add_points_out_of_bounds_dropped():
    rng = np.random.default_rng(13)
    x, u = _small_ints(rng, 3, 4), _small_ints(rng, 8)
    idx = np.stack([_ints(rng, -1, 4, 8), _ints(rng, 0, 5, 8)], -1)  # duplicates and out-of-bounds
    f = lambda x, i, u: lax.scatter_add(x, i, u, POINTS)
    tu.check_vmap(f, [x, idx, u])
    tu.check_vmap(lambda x, i, u: lax.scatter_add(x, i, u, POINTS, mode="clip"), [x, idx, u])


def test_scatter_add_scalar_windows_and_size0():
    rng = np.random.default_rng(14)
    x, u, idx = _small_ints(rng, 4), _small_ints(rng, 5), _ints(rng, 0, 4, 5, 1)
    f = lambda x, i, u: lax.scatter_add(x, i, u, SCALARS)
    tu.check_vmap(f, [x, idx, u], cases=_with_pairs([1, 2, 1]))
    # no updates at all
    x, u, idx = _small_ints(rng, 4, 3), _small_ints(rng, 0, 3), _ints(rng, 0, 4, 0, 1)
    tu.check_vmap(lambda x, i, u: lax.scatter_add(x, i, u, ROWS), [x, idx, u])


def test_scatter_mul_duplicates():
    rng = np.random.default_rng(15)
    x, u, idx = _small_ints(rng, 4, 3), _small_ints(rng, 6, 3), _ints(rng, 0, 3, 6, 1)
    tu.check_vmap(lambda x, i, u: lax.scatter_mul(x, i, u, ROWS), [x, idx, u])
    idx = _ints(rng, -2, 6, 6, 1)  # out-of-bounds rows dropped
    tu.check_vmap(lambda x, i, u: lax.scatter_mul(x, i, u, ROWS), [x, idx, u])


@pytest.mark.parametrize("name", ["scatter_min", "scatter_max"])
def test_scatter_min_max(name):
    rng = np.random.default_rng(16)
    op = getattr(lax, name)
    x, u = _normal(rng, 3, 4), _normal(rng, 8)
    idx = np.stack([_ints(rng, -1, 4, 8), _ints(rng, 0, 5, 8)], -1)  # duplicates and out-of-bounds
    tu.check_vmap(lambda x, i, u: op(x, i, u, POINTS), [x, idx, u], cases=_with_pairs([2, 2, 1]))
    x, u, idx = _normal(rng, 5, 3), _normal(rng, 6, 3), _ints(rng, 0, 5, 6, 1)
    tu.check_vmap(lambda x, i, u: op(x, i, u, ROWS), [x, idx, u])


def test_scatter_add_with_its_own_batching_dims():
    rng = np.random.default_rng(17)
    x, u, idx = _small_ints(rng, 3, 5), _small_ints(rng, 3, 4), _ints(rng, 0, 5, 3, 4, 1)
    dn = SDN(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
             operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
    f = lambda x, i, u: lax.scatter_add(x, i, u, dn)
    tu.check_vmap(f, [x, idx, u], cases=_with_pairs([2, 3, 2]) + [((1, 2, 1), B), ((2, 1, 2), B)])


def test_unique_indices_stays_valid():
    # the batched scatter keeps unique_indices=True: the per-example indices are distinct and the
    # batch never makes two examples write to one element
    rng = np.random.default_rng(18)
    x, u, idx = _normal(rng, 5, 3), _normal(rng, 3, 3), _unique_rows(rng, 5, 3)
    f = lambda x, i, u: lax.scatter(x, i, u, ROWS, unique_indices=True)
    jaxpr = core.make_jaxpr(core.vmap(f, in_axes=(None, 0, None)))(x[0], idx, u[0])
    scatters = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scatter"]
    assert len(scatters) == 1 and scatters[0].params["unique_indices"] is True
    assert scatters[0].params["dimension_numbers"].operand_batching_dims == (0,)


# ----- compositions ----------------------------------------------------------------------------------

def test_jit_of_vmap_and_vmap_of_vmap():
    rng = np.random.default_rng(20)
    x, idx, u = _small_ints(rng, 5, 3), _ints(rng, 0, 5, 4, 1), _small_ints(rng, 4, 3)
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))

    def f(x, i, u):
        return lax.gather(lax.scatter_add(x, i, u, ROWS), i, dn, (1, 3))

    loop = np.stack([np.asarray(f(x[k], idx[k], u[k])) for k in range(B)])
    tu.assert_allclose(core.jit(core.vmap(f))(x, idx, u), loop)
    tu.assert_allclose(core.jit(core.vmap(f, in_axes=(1, 0, 2), out_axes=1))(
        np.moveaxis(x, 0, 1), idx, np.moveaxis(u, 0, 2)), np.moveaxis(loop, 0, 1))
    # vmap of vmap: a (2, 5) grid of examples, the inner batch on different axes per operand
    xs, ids, us = (a.reshape((2, 5) + a.shape[1:]) for a in (x, idx, u))
    inner = core.vmap(f, in_axes=(0, None, 1))
    got = core.vmap(inner, in_axes=(0, 0, 0))(xs, ids[:, 0], np.moveaxis(us, 1, 2))
    expected = np.stack([np.stack([np.asarray(f(xs[a, b], ids[a, 0], us[a, b])) for b in range(5)])
                         for a in range(2)])
    tu.assert_allclose(got, expected)


def test_vmap_of_grad_and_grad_of_vmap_through_gather():
    rng = np.random.default_rng(21)
    x, idx = _normal(rng, 5, 3), _ints(rng, 0, 5, 6, 1)  # repeated rows: their gradients add up
    dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))

    def loss(x, i):
        return lax.reduce_sum(lax.mul(lax.gather(x, i, dn, (1, 3)), lax.gather(x, i, dn, (1, 3))), (0, 1))

    def grad_oracle(x, i):  # d/dx sum(x[i]**2) = 2 x * (times each row is picked)
        counts = np.bincount(i[:, 0], minlength=5).astype(np.float64)
        return 2 * x.astype(np.float64) * counts[:, None]

    expected = np.stack([grad_oracle(x[k], idx[k]) for k in range(B)])
    tu.assert_allclose(core.vmap(core.grad(loss))(x, idx), expected)
    total = lambda x, i: lax.reduce_sum(core.vmap(loss)(x, i), (0,))
    tu.assert_allclose(core.grad(total)(x, idx), expected)


# ----- the user-level path: core.numpy indexing ----------------------------------------------------

def test_numpy_indexing_get():
    rng = np.random.default_rng(30)
    x, i, j = _normal(rng, 5, 4), _ints(rng, -5, 5, 3), _ints(rng, 0, 4, 3)
    tu.check_vmap(lambda x, i: x[i], [x, i])
    tu.check_vmap(lambda x, i, j: x[i, j], [x, i, j])


def test_numpy_indexing_at_add():
    rng = np.random.default_rng(31)
    x, i, v = _small_ints(rng, 5, 4), _ints(rng, -5, 5, 6), _small_ints(rng, 6, 4)
    tu.check_vmap(lambda x, i, v: jnp.asarray(x).at[i].add(v), [x, i, v])

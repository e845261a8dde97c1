"""`lax.ragged_dot`, `lax.ragged_dot_general` and `lax.RaggedDotDimensionNumbers` against a NumPy
loop over the groups in float64, with gradients against the hand-derived ones and finite
differences."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax


def _np_ragged_dot(lhs, rhs, group_sizes):
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.result_type(lhs, rhs))
    start = 0
    for i, size in enumerate(group_sizes):
        out[start:start + size] = lhs[start:start + size] @ rhs[i]
        start += size
    return out


# zero-size groups, rows after the last group (sum < m) and a last group cut short (sum > m)
GROUPS = [[2, 0, 4], [7, 0, 0], [1, 1, 1], [3, 5, 4]]


@pytest.mark.parametrize("group_sizes", GROUPS)
def test_ragged_dot_matches_a_numpy_loop_over_groups(x64, rng, group_sizes):
    lhs, rhs = rng.standard_normal((7, 3)), rng.standard_normal((3, 3, 4))
    gs = np.array(group_sizes, np.int32)
    got = core.jit(lax.ragged_dot)(lhs, rhs, gs)  # one program for every group_sizes
    assert got.dtype == np.float64 and got.shape == (7, 4)
    np.testing.assert_allclose(got, _np_ragged_dot(lhs, rhs, gs), rtol=1e-13, atol=1e-13)


def test_ragged_dot_gradients_match_hand_derived_and_finite_differences(x64, rng):
    lhs, rhs = rng.standard_normal((6, 3)), rng.standard_normal((3, 3, 2))
    w = rng.standard_normal((6, 2))
    gs = np.array([2, 1, 2], np.int32)  # the last row belongs to no group
    loss = core.jit(lambda a, b: jnp.sum(lax.ragged_dot(a, b, gs) * w))
    g_lhs, g_rhs = core.grad(loss, argnums=(0, 1))(lhs, rhs)
    want_lhs, want_rhs = np.zeros_like(lhs), np.zeros_like(rhs)
    start = 0
    for i, size in enumerate(gs):
        rows = slice(start, start + size)
        want_lhs[rows] = w[rows] @ rhs[i].T
        want_rhs[i] = lhs[rows].T @ w[rows]
        start += size
    np.testing.assert_allclose(g_lhs, want_lhs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g_rhs, want_rhs, rtol=1e-12, atol=1e-12)
    # finite differences along one random direction of each argument
    da, db, eps = rng.standard_normal(lhs.shape), rng.standard_normal(rhs.shape), 1e-6
    fd = (float(loss(lhs + eps * da, rhs + eps * db)) - float(loss(lhs - eps * da, rhs - eps * db))) / (2 * eps)
    np.testing.assert_allclose(np.sum(g_lhs * da) + np.sum(g_rhs * db), fd, rtol=1e-7)
    # forward mode agrees with reverse mode
    _, t = core.jvp(loss, (lhs, rhs), (da, db))
    np.testing.assert_allclose(t, fd, rtol=1e-7)


def test_ragged_contracting_mode_gives_one_product_per_group(x64, rng):
    # lhs (m, k) ragged along k, rhs (k, n): result (g, m, n), group i contracting its own part of k
    lhs, rhs = rng.standard_normal((2, 6)), rng.standard_normal((6, 3))
    gs = np.array([1, 3, 0], np.int32)
    dn = lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), lhs_ragged_dimensions=[1], rhs_group_dimensions=[])
    f = core.jit(lambda a, b: lax.ragged_dot_general(a, b, gs, dn))
    bounds = np.concatenate([[0], np.cumsum(gs)])
    want = np.stack([lhs[:, s:e] @ rhs[s:e] for s, e in zip(bounds[:-1], bounds[1:])])
    np.testing.assert_allclose(f(lhs, rhs), want, rtol=1e-13, atol=1e-13)
    # the gradient of the rhs of ragged_dot is this mode; check both operands' gradients
    w = rng.standard_normal(want.shape)
    g_lhs, g_rhs = core.grad(lambda a, b: jnp.sum(f(a, b) * w), argnums=(0, 1))(lhs, rhs)
    want_lhs, want_rhs = np.zeros_like(lhs), np.zeros_like(rhs)
    for i, (s, e) in enumerate(zip(bounds[:-1], bounds[1:])):
        want_lhs[:, s:e] = w[i] @ rhs[s:e].T
        want_rhs[s:e] = lhs[:, s:e].T @ w[i]
    np.testing.assert_allclose(g_lhs, want_lhs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(g_rhs, want_rhs, rtol=1e-12, atol=1e-12)


def test_batched_group_sizes_and_batch_mode(x64, rng):
    # non-contracting with a batch dimension: lhs (b, m, k), rhs (g, b, k, n), group_sizes (b, g)
    lhs, rhs = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 2, 3, 4))
    gs = np.array([[2, 3], [4, 0]], np.int32)
    dn = lax.RaggedDotDimensionNumbers((([2], [2]), ([0], [1])), [1], [0])
    got = lax.ragged_dot_general(lhs, rhs, gs, dn)
    want = np.stack([_np_ragged_dot(lhs[b], rhs[:, b], gs[b]) for b in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)
    # ragged along a batch dimension: a plain dot_general
    dn = lax.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [0], [])
    got = lax.ragged_dot_general(lhs, rhs[0], np.array([1, 1], np.int32), dn)
    np.testing.assert_allclose(got, np.einsum("bmk,bkn->bmn", lhs, rhs[0]), rtol=1e-13)


def test_preferred_element_type_precision_and_errors(rng):
    lhs = rng.integers(-5, 5, (4, 3)).astype(np.int8)
    rhs = rng.integers(-5, 5, (2, 3, 2)).astype(np.int8)
    gs = np.array([3, 1], np.int32)
    got = lax.ragged_dot(lhs, rhs, gs, preferred_element_type=np.int32, precision=lax.Precision.HIGHEST)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, _np_ragged_dot(lhs.astype(np.int32), rhs.astype(np.int32), gs))
    f = np.ones((4, 3), np.float32)
    with pytest.raises(NotImplementedError, match="group_offset is not implemented"):
        lax.ragged_dot(f, np.ones((2, 3, 2), np.float32), gs, group_offset=np.array([0], np.int32))
    with pytest.raises(TypeError, match=r"group_sizes must be integers, got float32\[2\]"):
        lax.ragged_dot(f, np.ones((2, 3, 2), np.float32), gs.astype(np.float32))
    with pytest.raises(TypeError, match=r"group_sizes must have shape \(3,\)"):
        lax.ragged_dot(f, np.ones((3, 3, 2), np.float32), gs)
    with pytest.raises(TypeError, match="exactly one lhs ragged dimension"):
        lax.ragged_dot_general(f, f.T, gs, lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [], []))

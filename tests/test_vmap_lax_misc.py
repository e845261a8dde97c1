"""vmap of the jax.lax names added by the laxmisc work (random bits, ragged dot, split/tile/mulhi,
scatter_sub/scatter_apply, sharding constraints), each against a Python loop over the examples."""
import numpy as np

import core
import core.numpy as jnp
from core import lax


def _loop(f, *args):
    """f applied to each example (leading axis) of `args`, the results stacked: vmap's oracle."""
    outs = [f(*(a[i] for a in args)) for i in range(len(args[0]))]
    if isinstance(outs[0], (tuple, list)):
        return tuple(np.stack([np.asarray(o[j]) for o in outs]) for j in range(len(outs[0])))
    return np.stack([np.asarray(o) for o in outs])


def test_rng_bit_generator_under_vmap_equals_a_loop_over_keys():
    keys = np.array([[0, 0, 0, 42], [1, 2, 3, 4], [9, 9, 9, 9]], np.uint32)
    f = lambda k: lax.rng_bit_generator(k, (2, 3), np.uint8, lax.RandomAlgorithm.RNG_THREE_FRY)  # noqa: E731
    got = core.vmap(f)(keys)
    for g, w in zip(got, _loop(f, keys), strict=True):
        np.testing.assert_array_equal(g, w)
    # keys batched along axis 1, under jit
    got = core.jit(core.vmap(f, in_axes=1))(keys.T.copy())
    np.testing.assert_array_equal(got[1], _loop(f, keys)[1])


def test_rng_uniform_under_vmap_respects_each_examples_bounds():
    lo = np.array([0.0, 10.0, -5.0], np.float32)
    out = np.asarray(core.vmap(lambda a: lax.rng_uniform(a, a + 1.0, (200,)))(lo))
    assert out.shape == (3, 200)
    assert np.all(out >= lo[:, None]) and np.all(out < lo[:, None] + 1)


def test_ragged_dot_under_vmap_with_per_example_group_sizes(rng):
    lhs = rng.standard_normal((3, 5, 2)).astype(np.float32)
    rhs = rng.standard_normal((2, 2, 4)).astype(np.float32)
    gs = np.array([[2, 3], [5, 0], [1, 2]], np.int32)
    f = lambda a, g: lax.ragged_dot(a, rhs, g)  # noqa: E731
    np.testing.assert_allclose(core.vmap(f)(lhs, gs), _loop(f, lhs, gs), rtol=1e-6, atol=1e-6)


def test_split_stack_unstack_tile_under_vmap_equal_a_loop(rng):
    a = rng.standard_normal((4, 4, 4)).astype(np.float32)  # every axis may be the batch axis
    for axis in (0, 1, 2):  # the batch axis before, inside and after the operation's axis
        f = lambda x: lax.split(x, (1, 3), axis=0)[1]  # noqa: E731
        np.testing.assert_array_equal(core.vmap(f, in_axes=axis)(a), _loop(f, np.moveaxis(a, axis, 0)))
        g = lambda x: lax.unstack(x, axis=1)  # noqa: E731
        for got, want in zip(core.vmap(g, in_axes=axis)(a), _loop(g, np.moveaxis(a, axis, 0)), strict=True):
            np.testing.assert_array_equal(got, want)
        h = lambda x: lax.tile(x, (2, 3))  # noqa: E731
        np.testing.assert_array_equal(core.vmap(h, in_axes=axis)(a), _loop(h, np.moveaxis(a, axis, 0)))
    # stack with one operand batched and one not
    s = lambda x, y: lax.stack([x, y], axis=1)  # noqa: E731
    b = a[0]
    np.testing.assert_array_equal(core.vmap(s, in_axes=(0, None))(a, b), _loop(lambda x: s(x, b), a))


def test_mulhi_scatter_sub_scatter_apply_and_sharding_constraint_under_vmap(rng):
    x = rng.integers(0, 2**32, (3, 4), dtype=np.uint32)
    np.testing.assert_array_equal(core.vmap(lax.mulhi)(x, x[::-1]), _loop(lax.mulhi, x, x[::-1]))
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    ops = rng.standard_normal((3, 5)).astype(np.float32)
    idx = np.array([[[1], [1]], [[0], [4]], [[2], [3]]])
    upd = rng.standard_normal((3, 2)).astype(np.float32)
    f = lambda o, i, u: lax.scatter_sub(o, i, u, dn)  # noqa: E731
    np.testing.assert_allclose(core.vmap(f)(ops, idx, upd), _loop(f, ops, idx, upd), rtol=1e-6)
    g = lambda o, i: lax.scatter_apply(o, i, lambda v: v * 2.0 + 1.0, dn, update_shape=(2,))  # noqa: E731
    np.testing.assert_allclose(core.vmap(g)(ops, idx), _loop(g, ops, idx), rtol=1e-6)
    h = lambda o: lax.with_sharding_constraint(o * 2, "x")  # noqa: E731
    np.testing.assert_array_equal(core.vmap(h, in_axes=1)(ops), _loop(h, ops.T))
    assert lax.sharding_constraint_p in [e.primitive for e in core.make_jaxpr(core.vmap(h))(ops).eqns]


def test_total_order_comparisons_under_vmap():
    x = np.array([[-0.0, np.nan], [0.0, 1.0], [np.inf, -np.nan]], np.float32)
    for prim in (lax.eq_to_p, lax.le_to_p, lax.lt_to_p):
        f = lambda v: prim.bind(v, np.float32(0.0))  # noqa: E731
        np.testing.assert_array_equal(core.vmap(f, in_axes=1)(x), _loop(f, x.T))

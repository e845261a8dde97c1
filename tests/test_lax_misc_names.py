"""The rest of jax.lax's names (issue 16 item 3, the laxmisc part): split/stack/unstack/tile and
mulhi as one primitive each, scatter_sub_p, scatter_apply, with_sharding_constraint, composite and
conv_general_dilated_local, against NumPy in float64, NumPy loops and hand-derived gradients."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax

DN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))


def _primitives(f, *args):
    return [e.primitive.name for e in core.make_jaxpr(f)(*args).eqns]


# ----- split, stack, unstack, tile as primitives -----------------------------------------------

def test_split_stack_unstack_tile_are_one_equation_each_and_match_numpy(x64, rng):
    a = rng.standard_normal((4, 3))
    assert _primitives(lambda x: lax.split(x, (1, 3)), a) == ["split"]
    assert _primitives(lambda x: lax.stack([x, x], 2), a) == ["stack"]
    assert _primitives(lambda x: lax.unstack(x, 1), a) == ["unstack"]
    assert _primitives(lambda x: lax.tile(x, (2, 1)), a) == ["tile"]
    assert lax.split_p is core.lax.split_stack.split_p and lax.tile_p.name == "tile"
    f = core.jit(lambda x: (lax.split(x, (1, 0, 2), axis=1), lax.stack([x, 2 * x], axis=-1), lax.unstack(x, -1),
                            lax.tile(x, (2, 3))))
    pieces, stacked, rows, tiled = f(a)
    for p, r in zip(pieces, np.split(a, [1, 1], axis=1), strict=True):
        np.testing.assert_array_equal(p, r)
    np.testing.assert_array_equal(stacked, np.stack([a, 2 * a], axis=-1))
    for r, w in zip(rows, np.moveaxis(a, -1, 0), strict=True):
        np.testing.assert_array_equal(r, w)
    np.testing.assert_array_equal(tiled, np.tile(a, (2, 3)))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for an operand of rank 2"):
        lax.unstack(a, 2)
    with pytest.raises(TypeError, match=r"one shape and dtype, got f64\[4, 3\], f64\[3\]"):
        lax.stack([a, a[0]])


def test_split_stack_unstack_tile_gradients_are_hand_derived(x64, rng):
    a = rng.standard_normal((4, 3))
    w1, w2, w3 = rng.standard_normal((4, 2)), rng.standard_normal((3, 4, 2)), rng.standard_normal((8, 6))

    def loss(x):
        first, second = lax.split(x, (1, 2), axis=1)
        stacked = lax.stack(lax.unstack(x, axis=1), axis=0)  # (3, 4): x transposed
        return (jnp.sum(second * w1) + jnp.sum(stacked[:, :, None] * w2) + jnp.sum(lax.tile(x, (2, 2)) * w3)
                + jnp.sum(first))

    want = np.zeros_like(a)
    want[:, 1:] += w1
    want += w2.sum(axis=2).T
    want += w3.reshape(2, 4, 2, 3).sum(axis=(0, 2))
    want[:, :1] += 1
    np.testing.assert_allclose(core.grad(loss)(a), want, rtol=1e-13)
    np.testing.assert_allclose(core.jit(core.grad(loss))(a), want, rtol=1e-13)
    # forward mode: the jvp is the function of the tangent (all four are linear)
    t = rng.standard_normal(a.shape)
    _, jt = core.jvp(lambda x: lax.tile(lax.stack(lax.split(x, (2, 2)), 0), (1, 2, 1)), (a,), (t,))
    np.testing.assert_allclose(jt, np.tile(t.reshape(2, 2, 3), (1, 2, 1)), rtol=1e-13)


def test_mulhi_is_one_equation():
    assert _primitives(lax.mulhi, np.uint32(3), np.uint32(5)) == ["mulhi"]
    x = np.array([0xFFFFFFFF, 7, 0x80000000], np.uint32)
    np.testing.assert_array_equal(core.jit(lax.mulhi)(x, np.uint32(0xFFFFFFFF)),
                                  [(int(v) * 0xFFFFFFFF) >> 32 for v in x])


# ----- scatter_sub and scatter_apply ------------------------------------------------------------

def test_scatter_sub_is_its_own_primitive_with_gradients(x64, rng):
    x = rng.standard_normal(5)
    idx = np.array([[1], [4], [1], [9]])  # a repeated index and one out of bounds (dropped)
    upd = rng.standard_normal(4)
    assert _primitives(lambda o, u: lax.scatter_sub(o, idx, u, DN), x, upd) == ["scatter_sub"]
    want = x.copy()
    np.subtract.at(want, idx[:3, 0], upd[:3])
    np.testing.assert_allclose(lax.scatter_sub(x, idx, upd, DN), want, rtol=1e-15)
    w = rng.standard_normal(5)
    g_x, g_u = core.grad(lambda o, u: jnp.sum(lax.scatter_sub(o, idx, u, DN) * w), argnums=(0, 1))(x, upd)
    np.testing.assert_allclose(g_x, w)
    np.testing.assert_allclose(g_u, [-w[1], -w[4], -w[1], 0.0])
    _, t = core.jvp(lambda u: lax.scatter_sub(x, idx, u, DN), (upd,), (np.ones(4),))
    np.testing.assert_allclose(t, [0, -2, 0, 0, -1])
    with pytest.raises(TypeError, match="scatter_sub does not accept dtype bool"):
        lax.scatter_sub(np.zeros(3, bool), np.array([[0]]), np.ones(1, bool), DN)


def test_scatter_apply_applies_the_function_once_per_write(rng):
    x = rng.standard_normal(6).astype(np.float32)
    idx = np.array([[0], [3], [3], [3], [8]])  # 3 written three times; 8 out of bounds

    def square_plus_one(v):
        return v * v + 1.0

    want = x.astype(np.float64).copy()
    for i in idx[:, 0]:
        if i < 6:
            want[i] = want[i] ** 2 + 1
    got = lax.scatter_apply(x, idx, square_plus_one, DN, update_shape=(5,))
    np.testing.assert_allclose(got, want, rtol=1e-5)
    jitted = core.jit(lambda v: lax.scatter_apply(v, idx, square_plus_one, DN, update_shape=(5,)))
    np.testing.assert_allclose(jitted(x), want, rtol=1e-5)
    assert _primitives(lambda v: lax.scatter_apply(v, idx, square_plus_one, DN, update_shape=(5,)), x) == \
        ["broadcast_in_dim", "scatter_apply"]
    # mode='clip' clamps the out-of-bounds index onto the last element
    clipped = lax.scatter_apply(np.zeros(3, np.int32), np.array([[5], [2]]), lambda v: v + 1, DN, update_shape=(2,),
                                mode="clip")
    np.testing.assert_array_equal(clipped, [0, 0, 2])
    with pytest.raises(NotImplementedError, match="scatter_apply has no derivative"):
        core.grad(lambda v: jnp.sum(lax.scatter_apply(v, idx, jnp.sin, DN, update_shape=(5,))))(x)
    with pytest.raises(TypeError, match="func must not close over arrays"):
        lax.scatter_apply(x, idx, lambda v: v + jnp.asarray(x)[0:1].sum(), DN, update_shape=(5,))


# ----- sharding constraint and composite ---------------------------------------------------------

def test_with_sharding_constraint_is_the_identity_on_values_and_derivatives(rng):
    tree = {"a": rng.standard_normal((2, 3)).astype(np.float32), "b": np.arange(3)}
    out = lax.with_sharding_constraint(tree, ("data", None))
    np.testing.assert_array_equal(out["a"], tree["a"])
    np.testing.assert_array_equal(out["b"], tree["b"])
    jaxpr = core.make_jaxpr(lambda x: lax.with_sharding_constraint(x, ["data"]))(tree["a"])
    assert [e.primitive for e in jaxpr.eqns] == [lax.sharding_constraint_p]
    assert jaxpr.eqns[0].params["sharding"] == "['data']"
    g = core.grad(lambda x: jnp.sum(lax.with_sharding_constraint(x * x, None)))(tree["a"])
    np.testing.assert_allclose(g, 2 * tree["a"], rtol=1e-6)


def test_composite_runs_its_decomposition_as_one_named_call(rng):
    def scaled_tanh(x, *, scale=1.0):
        return jnp.tanh(x) * scale

    op = lax.composite(scaled_tanh, name="my.scaled_tanh")
    x = rng.standard_normal(4).astype(np.float32)
    np.testing.assert_allclose(op(x, scale=3.0), np.tanh(x.astype(np.float64)) * 3, rtol=1e-6)
    jaxpr = core.make_jaxpr(lambda v: op(v, scale=2.0) + 1)(x)
    assert jaxpr.eqns[0].primitive.name == "jit" and str(jaxpr.eqns[0].params["name"]) == "my.scaled_tanh"
    f = core.jit(lambda v: op(v, scale=2.0))
    f(x), f(x + 1)
    g = core.grad(lambda v: jnp.sum(op(v, scale=2.0)))(x)
    np.testing.assert_allclose(g, 2 / np.cosh(x.astype(np.float64)) ** 2, rtol=1e-5)
    assert op.composite_name == "my.scaled_tanh" and op.__name__ == "scaled_tanh"


# ----- conv_general_dilated_local ---------------------------------------------------------------

# jax 0.10.2: lax.conv_general_dilated_local(x, w, (1, 2), "SAME", (2, 2), rhs_dilation=(1, 2),
# dimension_numbers=("NHWC", "HWIO", "NHWC")) with the x and w of the test below
JAX_LOCAL = [[[[3, 2], [1, -2], [1, -1]], [[-11, 7], [7, 4], [-5, -1]], [[-3, -18], [4, 17], [3, -4]],
              [[2, 10], [-16, -16], [10, 2]]],
             [[[3, -1], [-9, 4], [5, 7]], [[-3, -1], [0, -2], [1, 2]], [[0, 3], [0, 0], [3, 0]],
              [[3, -4], [0, 3], [-4, 1]]]]


def test_conv_general_dilated_local_matches_jax_and_a_numpy_loop(x64, rng):
    x = (np.arange(2 * 4 * 5 * 3) % 7 - 3).astype(np.float32).reshape(2, 4, 5, 3)
    w = (np.arange(4 * 3 * 12 * 2) % 5 - 2).astype(np.float32).reshape(4, 3, 12, 2)
    got = lax.conv_general_dilated_local(x, w, (1, 2), "SAME", (2, 2), rhs_dilation=(1, 2),
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_array_equal(got, JAX_LOCAL)
    # NCHW / OIHW, strided and padded: out[n, o, i, j] = sum_c,a,b xp[n, c, i*s + a, j*s + b] w[o, c*4 + a*2 + b, i, j]
    x = rng.standard_normal((2, 3, 5, 6))
    w = rng.standard_normal((4, 12, 3, 3))
    pads = ((1, 0), (0, 1))
    xp = np.pad(x, ((0, 0), (0, 0)) + pads)
    want = np.zeros((2, 4, 3, 3))
    for i in range(3):
        for j in range(3):
            window = xp[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].reshape(2, 12)
            want[:, :, i, j] = window @ w[:, :, i, j].T
    f = lambda a, b: lax.conv_general_dilated_local(a, b, (2, 2), pads, (2, 2))  # noqa: E731
    np.testing.assert_allclose(f(x, w), want, rtol=1e-12)
    # the derivative in w at position (i, j) is the window there (the function is linear in w)
    cot = rng.standard_normal(want.shape)
    g_w = core.grad(lambda b: jnp.sum(f(x, b) * cot))(w)
    want_w = np.einsum("noij,nkij->okij", cot,
                       np.stack([np.stack([xp[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].reshape(2, 12)
                                           for j in range(3)], -1) for i in range(3)], -2))
    np.testing.assert_allclose(g_w, want_w, rtol=1e-12)


# ----- total-order comparison primitives ---------------------------------------------------------

def _total_order_key(x):
    """IEEE totalOrder as a signed integer key (the oracle): negative floats' bits reversed."""
    bits = x.view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF) - 1, bits)


def test_total_order_comparisons_follow_ieee_total_order():
    x = np.array([-0.0, 0.0, np.nan, -np.nan, 1.0, -np.inf, np.inf, 3.0], np.float32)
    a, b = np.meshgrid(x, x)
    ka, kb = _total_order_key(a), _total_order_key(b)
    np.testing.assert_array_equal(lax.lt_to_p.bind(a, b), ka < kb)
    np.testing.assert_array_equal(lax.le_to_p.bind(a, b), ka <= kb)
    np.testing.assert_array_equal(lax.eq_to_p.bind(a, b), ka == kb)
    assert bool(lax.lt_to_p.bind(np.float32(-0.0), np.float32(0.0)))  # where lax.lt says False
    i = np.array([-3, 0, 2], np.int32)
    np.testing.assert_array_equal(lax.le_to_p.bind(i, np.int32(0)), [True, True, False])
    assert core.grad(lambda v: jnp.where(lax.lt_to_p.bind(v, 1.0), v, 0.0))(0.5) == 1.0

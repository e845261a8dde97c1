"""The jax.lax names added for issue 16 (item 3): special functions, compositions, compiler
controls and the exported primitives, against NumPy/SciPy in float64, Python integers and finite
differences."""
import numpy as np
import pytest
import scipy.special as sp

import core
import core.numpy as jnp
from core import lax


def _fd(f, x, eps=1e-3):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


# ----- special functions ---------------------------------------------------------------------

def test_bessel_i0e_i1e_match_scipy_over_both_branches(x64):
    x = np.concatenate([-np.geomspace(1e-3, 300, 40), [0.0], np.geomspace(1e-3, 300, 40), [19.9, 20.0, 20.1]])
    np.testing.assert_allclose(lax.bessel_i0e(x), sp.i0e(x), rtol=1e-13, atol=0)
    np.testing.assert_allclose(lax.bessel_i1e(x), sp.i1e(x), rtol=1e-12, atol=1e-300)
    x32 = x.astype(np.float32)
    np.testing.assert_allclose(lax.bessel_i0e(x32), sp.i0e(x32.astype(np.float64)), rtol=2e-6)
    assert lax.bessel_i0e(x32).dtype == np.float32


def test_bessel_derivatives_match_scipy_identities(x64):
    # i0e' = i1e - sign(x) i0e; i1e' = i0e - i1e (sign(x) + 1/x), 1/2 at 0
    x = np.array([-25.0, -3.0, -0.5, 0.5, 2.0, 9.0, 25.0])
    g0 = core.vmap(core.grad(lax.bessel_i0e))(x)
    np.testing.assert_allclose(g0, sp.i1e(x) - np.sign(x) * sp.i0e(x), rtol=1e-10)
    g1 = core.vmap(core.grad(lax.bessel_i1e))(x)
    np.testing.assert_allclose(g1, sp.i0e(x) - sp.i1e(x) * (np.sign(x) + 1 / x), rtol=1e-10)
    assert float(core.grad(lax.bessel_i1e)(0.0)) == 0.5
    assert np.isfinite(core.grad(lax.bessel_i0e)(0.0))


def test_polygamma_and_zeta_match_scipy(x64):
    m = np.array([0.0, 1.0, 2.0, 3.0, 1.0])
    x = np.array([0.7, 2.5, 3.0, 10.0, 0.1])
    np.testing.assert_allclose(lax.polygamma(m, x), sp.polygamma(m.astype(int), x), rtol=1e-10)
    s = np.array([2.0, 3.5, 1.5, 6.0])
    q = np.array([1.0, 0.5, 4.0, 2.0])
    np.testing.assert_allclose(lax.zeta(s, q), sp.zeta(s, q), rtol=1e-10)
    # derivatives where JAX defines them: polygamma in x, zeta in q
    gx = core.vmap(core.grad(lax.polygamma, argnums=1))(m, x)
    np.testing.assert_allclose(gx, sp.polygamma(m.astype(int) + 1, x), rtol=1e-9)
    gq = core.vmap(core.grad(lax.zeta, argnums=1))(s, q)
    np.testing.assert_allclose(gq, _fd(lambda v: sp.zeta(s, v), q, 1e-6), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="polygamma with respect to its order"):
        core.grad(lax.polygamma)(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="zeta with respect to x"):
        core.grad(lax.zeta)(2.0, 1.0)


# ----- compositions ----------------------------------------------------------------------------

def test_split_stack_unstack_tile_against_numpy(rng):
    a = rng.standard_normal((5, 3)).astype(np.float32)
    pieces = lax.split(a, (1, 0, 4), axis=0)
    for p, r in zip(pieces, np.split(a, [1, 1]), strict=True):
        np.testing.assert_array_equal(p, r)
    np.testing.assert_array_equal(lax.split(a, (2, 1), axis=-1)[1], a[:, 2:])
    with pytest.raises(ValueError, match=r"sizes \(2, 2\) must .* add up to the size 5"):
        lax.split(a, (2, 2))
    np.testing.assert_array_equal(lax.stack([a, 2 * a], axis=-1), np.stack([a, 2 * a], axis=-1))
    for r, u in zip(np.moveaxis(a, 1, 0), lax.unstack(a, axis=1), strict=True):
        np.testing.assert_array_equal(u, r)
    np.testing.assert_array_equal(lax.tile(a, (2, 3)), np.tile(a, (2, 3)))
    np.testing.assert_array_equal(lax.tile(a, (0, 1)), np.tile(a, (0, 1)))
    # through grad: stack then unstack is the identity
    g = core.grad(lambda x: jnp.sum(lax.unstack(lax.stack([x, x * 3.0]))[1] * lax.tile(x, (1, 1))))(a)
    np.testing.assert_allclose(g, 6 * a, rtol=1e-6)


def test_broadcast_shapes_and_broadcast_like():
    assert lax.broadcast_shapes((2, 1, 4), (3, 1), ()) == np.broadcast_shapes((2, 1, 4), (3, 1), ())
    with pytest.raises(ValueError, match="Incompatible shapes"):
        lax.broadcast_shapes((2,), (3,))
    out = lax.broadcast_like(jnp.array([1, 2], jnp.int8), jnp.zeros((3, 2)))
    assert out.dtype == np.int8
    np.testing.assert_array_equal(out, np.broadcast_to(np.array([1, 2]), (3, 2)))


def test_scatter_sub_accumulates_repeated_indices(rng):
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    x = rng.standard_normal(4).astype(np.float32)
    idx = np.array([[1], [3], [1]])
    upd = np.array([1.0, 2.0, 4.0], np.float32)
    ref = x.astype(np.float64).copy()
    np.subtract.at(ref, idx[:, 0], upd)
    np.testing.assert_allclose(lax.scatter_sub(x, idx, upd, dn), ref, rtol=1e-6)
    g = core.grad(lambda u: jnp.sum(lax.scatter_sub(x, idx, u, dn) * jnp.arange(4.0)))(upd)
    np.testing.assert_allclose(g, -np.array([1.0, 3.0, 1.0]))


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint32, np.int32, np.int16])
def test_mulhi_is_the_high_half_of_the_exact_product(dtype):
    info = np.iinfo(dtype)
    bits = info.bits
    vals = np.array([info.min, info.min + 1, -7 if info.min else 7, -1 if info.min else 1, 0, 1, 3, 100 % info.max,
                     info.max // 3, info.max - 1, info.max], dtype)
    x, y = np.meshgrid(vals, vals)
    x, y = x.ravel(), y.ravel()
    ref = np.array([(int(a) * int(b)) >> bits for a, b in zip(x, y)])  # Python ints: exact
    ref = ref.astype(np.int64) & ((1 << bits) - 1)  # as the dtype's bit pattern
    out = np.asarray(lax.mulhi(x, y)).astype(np.int64) & ((1 << bits) - 1)
    np.testing.assert_array_equal(out, ref)


def test_mulhi_64_bit(x64):
    x = np.array([2**63 - 1, -(2**63), -5, 12345678901234], np.int64)
    y = np.array([2**62 + 3, 3, -(2**40), -987654321], np.int64)
    ref = np.array([(int(a) * int(b)) >> 64 for a, b in zip(x, y)], np.int64)
    np.testing.assert_array_equal(lax.mulhi(x, y), ref)
    u = np.array([2**64 - 1, 2**33], np.uint64)
    np.testing.assert_array_equal(lax.mulhi(u, u), np.array([(int(a) * int(a)) >> 64 for a in u], np.uint64))


def test_approx_max_min_k_are_exact_top_k(rng):
    x = rng.standard_normal((3, 7)).astype(np.float32)
    vals, idx = lax.approx_max_k(x, 3)
    order = np.argsort(-x, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(vals, np.take_along_axis(x, order, 1))
    vals, idx = lax.approx_min_k(x, 2, reduction_dimension=0)
    order = np.argsort(x, axis=0, kind="stable")[:2]
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(vals, np.take_along_axis(x, order, 0))
    with pytest.raises(ValueError, match="approx_min_k: operand must be a floating type"):
        lax.approx_min_k(np.array([5, 0, 255, 7], np.uint8), 2)  # as JAX
    g = core.grad(lambda v: jnp.sum(lax.approx_max_k(v, 2)[0] * jnp.array([1.0, 10.0])))(x[0])
    ref = np.zeros(7)
    ref[np.argsort(-x[0], kind="stable")[:2]] = [1.0, 10.0]
    np.testing.assert_array_equal(g, ref)


def test_conv_general_dilated_patches_against_loop(rng):
    x = rng.standard_normal((2, 3, 5, 4)).astype(np.float32)
    out = lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID")
    assert out.shape == (2, 3 * 6, 4, 2)
    ref = np.zeros((2, 18, 4, 2), np.float32)
    for c in range(3):
        for i in range(2):
            for j in range(3):
                ref[:, c * 6 + i * 3 + j] = x[:, c, i:i + 4, j:j + 2]
    np.testing.assert_array_equal(out, ref)
    nhwc = lax.conv_general_dilated_patches(np.moveaxis(x, 1, -1), (2, 3), (1, 1), "VALID",
                                            dimension_numbers=("NHWC", "OIHW", "NHWC"))
    np.testing.assert_array_equal(nhwc, np.moveaxis(ref, 1, -1))


def test_shape_tuples_agree_with_the_operations():
    lhs, rhs = (2, 3, 9, 8), (4, 3, 3, 2)
    out = lax.conv_general_dilated(jnp.zeros(lhs), jnp.zeros(rhs), (2, 1), "SAME")
    assert lax.conv_general_shape_tuple(lhs, rhs, (2, 1), "SAME", None) == out.shape
    pads = lax.padtype_to_pads(lhs[2:], rhs[2:], (2, 1), "SAME")
    assert lax.conv_shape_tuple(lhs, rhs, (2, 1), pads) == out.shape
    x = jnp.zeros((5, 7))
    pooled = lax.reduce_window(x, 0.0, lax.add, (2, 3), (2, 2), [(1, 0), (0, 2)])
    assert lax.reduce_window_shape_tuple((5, 7), (2, 3), (2, 2), [(1, 0), (0, 2)]) == pooled.shape
    assert lax.conv_shape_tuple(lhs, rhs, (2, 1), "SAME") == out.shape
    for padding in ("SAME", "VALID", [(1, 2)]):
        y = lax.conv_transpose(jnp.zeros((1, 5, 3)), jnp.zeros((3, 3, 2)), (2,), padding)
        assert lax.conv_transpose_shape_tuple((1, 5, 3), (3, 3, 2), (2,), padding, ("NHC", "HIO", "NHC")) == y.shape


def test_dtype_and_empty():
    assert lax.dtype(1.0) == np.float32 and lax.dtype(np.int8(1)) == np.int8 and lax.dtype(jnp.ones(2, "bfloat16")) \
        == jnp.bfloat16
    e = lax.empty((2, 3), np.int16)
    assert e.shape == (2, 3) and e.dtype == np.int16


def test_pshuffle_and_pswapaxes_under_vmap():
    x = np.arange(4.0)
    out = core.vmap(lambda v: lax.pshuffle(v, "i", [2, 3, 1, 0]), axis_name="i")(x)
    np.testing.assert_array_equal(out, x[[2, 3, 1, 0]])
    with pytest.raises(ValueError, match="permutation"):
        core.vmap(lambda v: lax.pshuffle(v, "i", [0, 0, 1, 2]), axis_name="i")(x)
    m = np.arange(12.0).reshape(3, 4)[:, :3]  # (axis size 3, 3)
    swapped = core.vmap(lambda row: lax.pswapaxes(row, "i", 0), axis_name="i")(m)
    np.testing.assert_array_equal(swapped, m.T)


# ----- compiler controls ---------------------------------------------------------------------

def test_optimization_barrier_is_identity_under_every_transformation():
    x = jnp.array([0.5, 1.5])

    def f(v):
        a, b = lax.optimization_barrier((jnp.sin(v), 2))
        return jnp.sum(a * v) * b

    np.testing.assert_allclose(f(x), 2 * np.sum(np.sin([0.5, 1.5]) * [0.5, 1.5]), rtol=1e-6)
    g = core.jit(core.grad(f))
    np.testing.assert_allclose(g(x), 2 * (np.cos([0.5, 1.5]) * [0.5, 1.5] + np.sin([0.5, 1.5])), rtol=1e-6)
    assert core.jit(core.grad(f)).lower(x).as_text().count("stablehlo.optimization_barrier") == 2
    np.testing.assert_allclose(core.vmap(f)(jnp.stack([x, x])), [f(x), f(x)], rtol=1e-6)
    assert lax.optimization_barrier(()) == ()


def test_reduce_precision_rounds_to_the_narrow_format():
    x = np.array([1.0, 1.0 + 2**-11, 1.0 + 3 * 2**-11, 65504.0, 65520.0, 1e-8, -2.5], np.float32)
    with np.errstate(over="ignore"):  # 65520 overflows float16 to inf, as it must
        as_f16 = x.astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(lax.reduce_precision(x, 5, 10), as_f16)
    bf = lax.reduce_precision(x, 8, 7)
    np.testing.assert_array_equal(bf, np.asarray(jnp.asarray(x).astype(jnp.bfloat16).astype(np.float32)))
    assert float(core.grad(lambda v: lax.reduce_precision(v * 3.0, 8, 7))(1.0)) == 3.0
    with pytest.raises(TypeError, match="reduce_precision does not accept dtype i32"):
        lax.reduce_precision(np.arange(3, dtype=np.int32), 5, 10)


def test_platform_dependent_picks_the_running_platform():
    platform = core.default_backend()
    picked = lax.platform_dependent(3.0, cpu=lambda v: v + 1, cuda=lambda v: v + 2, default=lambda v: v)
    assert picked == (4.0 if platform == "cpu" else 5.0)
    assert lax.platform_dependent(3.0, tpu=lambda v: 0.0, default=lambda v: -v) == -3.0
    with pytest.raises(NotImplementedError, match="no default"):
        lax.platform_dependent(1.0, tpu=lambda v: v)
    with pytest.raises(ValueError, match="unknown platform"):
        lax.platform_dependent(1.0, cpux=lambda v: v)


def test_primitives_are_exported_under_jax_names():
    from core.trace import Primitive
    for name in ("add_p", "dot_general_p", "conv_general_dilated_p", "reduce_sum_p", "scan_p", "while_p",
                 "psum_p", "sort_p", "top_k_p", "optimization_barrier_p", "reduce_precision_p", "zeta_p"):
        assert isinstance(getattr(lax, name), Primitive), name
    assert lax.add_p.name == "add"
    eqn_prims = {e.primitive for e in core.make_jaxpr(lambda x: x @ x + 1.0)(jnp.ones((2, 2))).jaxpr.eqns}
    assert lax.dot_general_p in eqn_prims and lax.add_p in eqn_prims
    assert not hasattr(lax, "cholesky_p") and isinstance(lax.linalg.cholesky_p, Primitive)

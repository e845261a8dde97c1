"""r_, c_, s_, index_exp, mgrid, ogrid and fill_diagonal against NumPy (values, shapes, dtypes under
JAX's x64-off promotion), fill_diagonal's derivative, and a jitted run."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu

A = np.array([1.5, -2.0, 3.0])
B = np.array([[1.0, 2.0], [3.0, 4.0]])
I2 = np.array([7, 8], np.int32)

# each entry: a function of the module (jnp or np) giving the indexed expression
CONCAT = [
    lambda m: m.r_[A, 0.5, A],
    lambda m: m.r_[I2, 0, 4:7, I2],
    lambda m: m.r_[0:1:5j],
    lambda m: m.r_[-1:1:0.5],
    lambda m: m.r_[B, B],
    lambda m: m.r_["-1", B, B],
    lambda m: m.r_["0,2", A, A],
    lambda m: m.r_["0,2,0", A, A],
    lambda m: m.r_["1,3,1", B, B],
    lambda m: m.c_[A, A],
    lambda m: m.c_[B, B],
    lambda m: m.c_[A[:2], B, I2],
    lambda m: m.c_[A, 0:3],
]


@pytest.mark.parametrize("case", range(len(CONCAT)))
def test_r_and_c_match_numpy(case):
    expected = CONCAT[case](np)
    out = CONCAT[case](jnp)
    # float64 NumPy arrays become float32 with x64 off; integers stay int32
    dtype = np.float32 if expected.dtype.kind == "f" else np.int32
    assert out.dtype == dtype, (out.dtype, expected.dtype)
    tu.assert_allclose(out, expected, dtype, atol=1e-6, rtol=1e-6)


GRIDS = [
    lambda m: m.mgrid[0:3],
    lambda m: m.mgrid[0:3, 0:4:2],
    lambda m: m.mgrid[-1:1:5j, 0:2],
    lambda m: m.mgrid[0:1:0.25, 2:3:3j, 0:2],
    lambda m: m.mgrid[5:0:-2],
]


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("case", range(len(GRIDS)))
def test_mgrid_and_ogrid_match_numpy(case, sparse):
    build = GRIDS[case]
    if sparse:
        expected = build(type("M", (), {"mgrid": np.ogrid}))
        out = build(type("M", (), {"mgrid": jnp.ogrid}))
    else:
        expected, out = build(np), build(jnp)
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    out = out if isinstance(out, (list, tuple)) else [out]
    assert len(out) == len(expected)
    for o, e in zip(out, expected):
        e = np.asarray(e)
        dtype = np.float32 if e.dtype.kind == "f" else np.int32
        assert o.dtype == dtype and o.shape == e.shape, (o.dtype, o.shape, e.dtype, e.shape)
        tu.assert_allclose(o, e, dtype, atol=1e-6, rtol=1e-6)


def test_s_and_index_exp_equal_numpy():
    for key in [(slice(1, 3),), (Ellipsis, None, 2), (slice(None, None, -1), 0)]:
        assert jnp.s_[key] == np.s_[key] and jnp.index_exp[key] == np.index_exp[key]
    assert jnp.s_[1:3] == np.s_[1:3] and jnp.index_exp[1:3] == np.index_exp[1:3]
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x)[jnp.s_[::2, 1:]]), x[np.s_[::2, 1:]])


FILL = [((3, 3), 5.0, False), ((2, 4), np.array([1.0, 2.0]), False), ((5, 2), 9.0, False), ((5, 2), 9.0, True),
        ((7, 3), np.array([1.0, 2.0, 3.0]), True), ((2, 2, 2), -1.0, False), ((3, 3, 3), np.array([4.0, 5.0]), False),
        ((3, 3), np.array([[1.0, 2.0], [3.0, 4.0]]), False)]


@pytest.mark.parametrize("case", range(len(FILL)))
def test_fill_diagonal_matches_numpy(rng, case):
    shape, val, wrap = FILL[case]
    a = rng.standard_normal(shape).astype(np.float32)
    out = jnp.fill_diagonal(a, val, wrap, inplace=False)
    expected = a.copy()
    np.fill_diagonal(expected, val, wrap)
    assert out.dtype == np.float32
    tu.assert_allclose(out, expected, np.float32)


def test_fill_diagonal_gradient_jit_and_inplace_error(x64):
    a, v = np.arange(9.0).reshape(3, 3), np.array([1.0, -2.0, 0.5])
    tu.check_grads(lambda a_, v_: jnp.fill_diagonal(a_, v_, inplace=False), (a, v), order=1)
    out = core.jit(lambda a_, v_: jnp.fill_diagonal(a_, v_, inplace=False))(a, v)
    expected = a.copy()
    np.fill_diagonal(expected, v)
    tu.assert_allclose(out, expected, np.float64)
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(a, 1.0)
    with pytest.raises(ValueError, match=r"equal length, got shape \(2, 3, 2\)"):
        jnp.fill_diagonal(np.zeros((2, 3, 2)), 1.0, inplace=False)


def test_r_and_c_under_jit_and_errors():
    f = core.jit(lambda x, y: (jnp.r_[x, 0.0, y], jnp.c_[x, y]))
    x, y = np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32)
    r, c = f(x, y)
    tu.assert_allclose(r, np.r_[x, 0.0, y], np.float32)
    tu.assert_allclose(c, np.c_[x, y], np.float32)
    with pytest.raises(NotImplementedError, match="numpy.matrix"):
        jnp.r_["r", x, y]
    with pytest.raises(ValueError, match="directive must come first"):
        jnp.r_[x, "0", y]


PUT = [((5,), [0, 2], [9.0, 8.0], None), ((2, 3), [1, 4, 5], [1.0], None), ((5,), [-1, 7, 1], [3.0, 4.0, 5.0], "clip"),
       ((5,), [-1, 7, 1], [3.0, 4.0, 5.0], "wrap"), ((4,), [-1, 2], [6.0, 7.0], None)]


@pytest.mark.parametrize("case", range(len(PUT)))
def test_put_matches_numpy(rng, case):
    shape, ind, v, mode = PUT[case]
    a = rng.standard_normal(shape).astype(np.float32)
    ind = np.array(ind, np.int32)
    out = jnp.put(a, ind, np.array(v, np.float32), mode=mode, inplace=False)
    expected = a.copy()
    np.put(expected, ind, v, mode="raise" if mode is None else mode)
    tu.assert_allclose(out, expected, np.float32)


def test_put_drops_out_of_bounds_as_jax_and_refuses_inplace():
    out = jnp.put(jnp.zeros(3), jnp.array([1, 5]), jnp.array([2.0, 3.0]), inplace=False)
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, 0.0])
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.put(jnp.zeros(3), jnp.array([1]), 1.0)
    jitted = core.jit(lambda a, i, v: jnp.put(a, i, v, inplace=False))(np.zeros(3, np.float32), np.array([2], np.int32),
                                                                          np.array([4.0], np.float32))
    np.testing.assert_array_equal(np.asarray(jitted), [0.0, 0.0, 4.0])


PACK = [((11,), None, "big"), ((3, 10), 1, "big"), ((9, 2), 0, "little"), ((2, 3, 4), -1, "little"), ((0,), None, "big")]


@pytest.mark.parametrize("case", range(len(PACK)))
def test_packbits_and_unpackbits_match_numpy(rng, case):
    shape, axis, order = PACK[case]
    bits = rng.integers(0, 2, shape).astype(np.uint8)
    packed = jnp.packbits(bits, axis=axis, bitorder=order)
    expected = np.packbits(bits, axis=axis, bitorder=order)
    assert packed.dtype == np.uint8
    np.testing.assert_array_equal(np.asarray(packed), expected)
    for count in (None, 3, -2, 20):
        if count is not None and axis is None and bits.size == 0:
            continue
        out = jnp.unpackbits(expected, axis=axis, count=count, bitorder=order)
        np.testing.assert_array_equal(np.asarray(out), np.unpackbits(expected, axis=axis, count=count, bitorder=order))
    np.testing.assert_array_equal(np.asarray(jnp.packbits(bits.astype(bool), axis=axis, bitorder=order)), expected)


@pytest.mark.parametrize("vals", [np.array([-1.0, -2.0]), np.array([5.0]), np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])])
def test_place_matches_numpy_and_runs_under_jit(rng, vals):
    a = rng.standard_normal((2, 3)).astype(np.float32)
    mask = a > 0
    out = jnp.place(a, mask, vals, inplace=False)
    expected = a.copy()
    np.place(expected, mask, vals.astype(np.float32))
    tu.assert_allclose(out, expected, np.float32)
    jitted = core.jit(lambda a_, m_: jnp.place(a_, m_, vals, inplace=False))(a, mask)
    tu.assert_allclose(jitted, expected, np.float32)


@pytest.mark.parametrize("fn,k", [("triu", 0), ("triu", 1), ("tril", -1), ("tril", 0)])
def test_mask_indices_matches_numpy(fn, k):
    i, j = jnp.mask_indices(4, getattr(jnp, fn), k)
    ei, ej = np.mask_indices(4, getattr(np, fn), k)
    np.testing.assert_array_equal(np.asarray(i), ei)
    np.testing.assert_array_equal(np.asarray(j), ej)


def test_sort_complex_matches_numpy(rng, x64):
    for a in (rng.integers(0, 5, 6).astype(np.int32), rng.standard_normal(5).astype(np.float32),
              rng.standard_normal((2, 4)), np.array([1 + 2j, 1 + 1j, 0 + 5j, 1 - 1j])):
        out = jnp.sort_complex(a)
        expected = np.sort_complex(a)
        assert out.dtype == (np.complex64 if a.dtype == np.float32 else np.complex128), (a.dtype, out.dtype)
        np.testing.assert_array_equal(np.asarray(out), expected.astype(out.dtype))

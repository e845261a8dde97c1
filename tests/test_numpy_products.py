"""core.numpy products (dot, vdot, vecdot, inner, outer, matmul, tensordot, einsum, kron, trace,
diagonal, cross) against NumPy in float64 (int64 for integers)."""
import sys
import warnings

import numpy as np
import pytest

import core.numpy as jnp
from core import dtypes, test_util as tu

F32, BF16, I32, I8, BOOL, C64 = (np.dtype(np.float32), dtypes.bfloat16, np.dtype(np.int32), np.dtype(np.int8),
                                 np.dtype(np.bool_), np.dtype(np.complex64))


def _wide(x):
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return x
    return x.astype({"i": np.int64, "u": np.int64, "c": np.complex128}.get(x.dtype.kind, np.float64))


def _check(out, expected, dtype):
    dtype = np.dtype(dtype)
    if dtype == BF16:  # sums of several rounded bf16 products
        tu.assert_allclose(out, expected, dtype, atol=5e-2, rtol=5e-2)
    elif dtype.kind in "fc":
        tu.assert_allclose(out, expected, dtype, atol=1e-5, rtol=1e-5)
    else:
        tu.assert_allclose(out, expected, dtype)


# ----- matmul --------------------------------------------------------------------------------

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 1, 2, 3), (4, 3, 6)),
                 ((2, 1, 3), (3,)), ((3,), (2, 3, 4)), ((2, 2, 3), (1, 3, 2)), ((4, 1, 1, 2, 3), (5, 1, 3, 2)),
                 ((0, 2, 3), (3, 4)), ((2, 0), (0, 3))]


@pytest.mark.parametrize("shapes,dtype", tu.sample_cases(
    tu.product(MATMUL_SHAPES, [F32, BF16, I32, BOOL, C64]), "jnp.matmul", n=12))
def test_matmul_broadcasting(rng, shapes, dtype):
    a, b = tu.rand(rng, shapes[0], dtype), tu.rand(rng, shapes[1], dtype)
    out = jnp.matmul(jnp.asarray(a), jnp.asarray(b))
    assert out.dtype == np.dtype(dtype)
    expected = np.matmul(_wide(a).astype(np.int64), _wide(b).astype(np.int64)) > 0 if dtype == BOOL else \
        np.matmul(_wide(a), _wide(b))
    _check(out, expected, dtype)


@pytest.mark.parametrize("shapes", MATMUL_SHAPES[4:9])
def test_matmul_float32_all_broadcast_patterns(rng, shapes):
    a, b = tu.rand(rng, shapes[0], F32), tu.rand(rng, shapes[1], F32)
    _check(jnp.asarray(a) @ jnp.asarray(b), np.matmul(_wide(a), _wide(b)), F32)


def test_matmul_promotes_and_prefers(rng):
    a, b = tu.rand(rng, (2, 3), I8), tu.rand(rng, (3,), F32)
    out = jnp.matmul(a, jnp.asarray(b))
    assert out.dtype == F32
    _check(out, _wide(a) @ _wide(b), F32)
    x = rng.integers(-128, 128, size=(2, 40)).astype(np.int8)
    out = jnp.matmul(x, x.T, preferred_element_type=jnp.int32)
    assert out.dtype == I32
    np.testing.assert_array_equal(np.asarray(out), _wide(x) @ _wide(x).T)


def test_matmul_errors():
    with pytest.raises(ValueError, match=r"matmul: Input operand 0 does not have enough dimensions"):
        jnp.matmul(jnp.ones(()), jnp.ones(3))
    with pytest.raises(ValueError, match=r"Incompatible shapes for matmul arguments: \(2, 2, 3\) and \(3, 3, 4\)"):
        jnp.matmul(jnp.ones((2, 2, 3)), jnp.ones((3, 3, 4)))
    with pytest.raises(TypeError, match=r"dot_general requires contracting dimensions to have the same shape, got "
                                        r"\(3,\) and \(4,\)"):
        jnp.matmul(jnp.ones((2, 3)), jnp.ones((4, 5)))
    with pytest.raises(TypeError, match=r"matmul requires ndarray or scalar arguments, but got list.*jnp.asarray"):
        jnp.matmul([1.0, 2.0], jnp.ones(2))


# ----- dot, vdot, vecdot, inner, outer, tensordot --------------------------------------------

DOT_SHAPES = [((), (3,)), ((2, 3), ()), ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
              ((2, 3, 4), (5, 4, 6)), ((0, 3), (3, 2)), ((2, 0), (0,))]


@pytest.mark.parametrize("shapes,dtype", tu.sample_cases(
    tu.product(DOT_SHAPES, [F32, I32, C64]), "jnp.dot", n=10))
def test_dot_matches_numpy(rng, shapes, dtype):
    a, b = tu.rand(rng, shapes[0], dtype), tu.rand(rng, shapes[1], dtype)
    out = jnp.dot(jnp.asarray(a), jnp.asarray(b))
    _check(out, np.dot(_wide(a), _wide(b)), dtype)


@pytest.mark.parametrize("shapes", [((), ()), ((3,), (3,)), ((2, 3), (4, 3)), ((2, 1, 3), (3,)), ((0, 3), (2, 3))])
def test_inner_outer(rng, shapes):
    a, b = tu.rand(rng, shapes[0], F32), tu.rand(rng, shapes[1], F32)
    _check(jnp.inner(jnp.asarray(a), jnp.asarray(b)), np.inner(_wide(a), _wide(b)), F32)
    _check(jnp.outer(jnp.asarray(a), jnp.asarray(b)), np.outer(_wide(a), _wide(b)), F32)


def test_vdot_conjugates_and_flattens(rng):
    a, b = tu.rand(rng, (2, 3), C64), tu.rand(rng, (3, 2), C64)
    _check(jnp.vdot(jnp.asarray(a), jnp.asarray(b)), np.vdot(_wide(a), _wide(b)), C64)
    x = tu.rand(rng, (4,), I32)
    _check(jnp.vdot(x, jnp.asarray(x)), np.vdot(_wide(x), _wide(x)), I32)


@pytest.mark.parametrize("sa,sb,axis", [((4, 3), (3,), -1), ((2, 1, 3), (4, 3), -1), ((3, 2), (3, 1), 0)])
def test_vecdot(rng, sa, sb, axis):
    a, b = tu.rand(rng, sa, C64), tu.rand(rng, sb, C64)
    _check(jnp.vecdot(jnp.asarray(a), jnp.asarray(b), axis=axis), np.vecdot(_wide(a), _wide(b), axis=axis), C64)


def test_vecdot_errors():
    with pytest.raises(ValueError, match=r"vecdot: axis -1 of the operands must have equal sizes"):
        jnp.vecdot(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match=r"vecdot: input operands must have at least one dimension"):
        jnp.vecdot(jnp.ones(()), jnp.ones(4))


@pytest.mark.parametrize("sa,sb,axes", [
    ((2, 3, 4), (3, 4, 5), 2), ((2, 3), (4, 5), 0), ((3, 4, 2), (2, 5, 3), ([0, 2], [2, 0])),
    ((3, 4), (4, 2), (1, 0)), ((2, 3), (3, 2), ([-1], [0])),
])
def test_tensordot(rng, sa, sb, axes):
    a, b = tu.rand(rng, sa, F32), tu.rand(rng, sb, F32)
    _check(jnp.tensordot(jnp.asarray(a), jnp.asarray(b), axes), np.tensordot(_wide(a), _wide(b), axes), F32)


def test_tensordot_errors():
    with pytest.raises(TypeError, match=r"tensordot requires axes lists to have equal length"):
        jnp.tensordot(jnp.ones((2, 3)), jnp.ones((3, 2)), ([0, 1], [1]))
    with pytest.raises(TypeError, match=r"tensordot: number of contracted axes must be between 0 and the smaller "
                                        r"rank 2"):
        jnp.tensordot(jnp.ones((2, 3)), jnp.ones((3, 2)), 3)
    with pytest.raises(TypeError, match=r"tensordot axes argument must be an int or a pair"):
        jnp.tensordot(jnp.ones((2, 3)), jnp.ones((3, 2)), "x")


# ----- einsum --------------------------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii", [(3, 3)]),
    ("ii->i", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("iji->j", [(3, 2, 3)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i...->...", [(3, 2, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]),
    ("ij,jk", [(2, 1), (3, 4)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 2), (2, 4), (4, 1)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ijk,jl->ilk", [(2, 3, 4), (3, 0)]),
    ("i,i", [(0,), (0,)]),
    (",ij->ij", [(), (2, 2)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES)
def test_einsum_float32(rng, spec, shapes):
    ops = [tu.rand(rng, s, F32) for s in shapes]
    out = jnp.einsum(spec, *[jnp.asarray(o) for o in ops])
    assert out.dtype == F32
    _check(out, np.einsum(spec, *[_wide(o) for o in ops]), F32)


@pytest.mark.parametrize("case,dtype", tu.sample_cases(
    tu.product([0, 2, 3, 5, 7, 12, 16], [I32, BOOL, BF16, C64]), "jnp.einsum dtypes", n=8))
def test_einsum_dtypes(rng, case, dtype):
    spec, shapes = EINSUM_CASES[case]
    ops = [tu.rand(rng, s, dtype) for s in shapes]
    out = jnp.einsum(spec, *[jnp.asarray(o) for o in ops])
    assert out.dtype == np.dtype(dtype)
    _check(out, np.einsum(spec, *[_wide(o) for o in ops]), dtype)


def test_einsum_preferred_and_promotion(rng):
    x = rng.integers(-128, 128, size=(3, 30)).astype(np.int8)
    y = rng.integers(-128, 128, size=(30, 4)).astype(np.int8)
    z = rng.integers(-128, 128, size=(4,)).astype(np.int8)
    out = jnp.einsum("ij,jk,k->i", x, y, z, preferred_element_type=jnp.int32)
    assert out.dtype == I32
    np.testing.assert_array_equal(np.asarray(out), np.einsum("ij,jk,k->i", _wide(x), _wide(y), _wide(z)))
    out = jnp.einsum("ii", x[:, :3], preferred_element_type=jnp.int32)  # one operand: a sum, widened first
    assert out.dtype == I32 and int(out) == int(np.trace(_wide(x[:, :3])))
    a, b = tu.rand(rng, (2, 3), I32), tu.rand(rng, (3,), F32)
    out = jnp.einsum("ij,j->i", a, b, optimize=True)
    assert out.dtype == F32
    _check(out, _wide(a) @ _wide(b), F32)


@pytest.mark.eager_only  # counts dispatched primitives; a jitted call traces once per signature
@pytest.mark.parametrize("spec,shapes,n_dots", [
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], 2), ("ii", [(3, 3)], 0), ("ab,bc,cd,de->ae", EINSUM_CASES[15][1], 3),
    ("ij,ij->i", [(3, 4), (3, 4)], 1),
])
def test_einsum_is_one_dot_general_per_pairwise_step(monkeypatch, spec, shapes, n_dots):
    # core.lax.dot is the function (as in JAX), so reach the module through sys.modules
    prim = sys.modules["core.lax.dot"].dot_general_p
    calls = []
    original = prim.bind
    monkeypatch.setattr(prim, "bind", lambda *a, **k: calls.append(k) or original(*a, **k))
    jnp.einsum(spec, *[jnp.ones(s) for s in shapes])
    assert len(calls) == n_dots


def test_einsum_interleaved_form(rng):
    a, b = tu.rand(rng, (2, 3), F32), tu.rand(rng, (3, 4), F32)
    _check(jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), _wide(a) @ _wide(b), F32)
    _check(jnp.einsum(a, [Ellipsis, 1], b, [1, 2]), _wide(a) @ _wide(b), F32)


def test_einsum_path_format():
    a, b, c = np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))
    path, desc = jnp.einsum_path("ij,jk,kl->il", a, b, c)
    assert path[0] == "einsum_path" and len(path) == 3
    assert all(isinstance(p, tuple) and len(p) == 2 for p in path[1:])
    assert "ij,jk,kl->il" in desc
    # a greedy order contracts the cheap pair first: (3x4)(4x5) before touching the rest is not
    # required, but (2x3)(3x4) -> 2x4 is the smallest intermediate here
    assert path[1] == (0, 1)


EINSUM_ERRORS = [
    ("ij,jk->ik", [(2, 3), (4, 5)], r"size of subscript 'j' does not match: 3 vs 4"),
    ("ij->k", [(2, 3)], r"output subscript 'k' never appears in an input"),
    ("ij->ii", [(2, 2)], r"output subscript 'i' appears more than once"),
    ("ij", [(2, 3, 4)], r"operand subscripts 'ij' name 2 dimensions, but the operand has shape \(2, 3, 4\)"),
    ("ij,jk", [(2, 3)], r"name 2 operands, but 1 were given"),
    ("ii->i", [(2, 3)], r"size of subscript 'i' does not match: 2 vs 3"),
    ("ii->i", [(1, 3)], r"repeated subscript 'i' needs equal dimensions, got 1 and 3"),
    ("...i->i", [(2, 3)], r"no '...' to place them"),
    ("i1->i", [(2, 3)], r"invalid subscript '1'"),
]


@pytest.mark.parametrize("spec,shapes,msg", EINSUM_ERRORS)
def test_einsum_errors(spec, shapes, msg):
    with pytest.raises(ValueError, match=msg):
        jnp.einsum(spec, *[jnp.ones(s) for s in shapes])


# ----- kron, diagonal, trace, cross ------------------------------------------------------------

@pytest.mark.parametrize("sa,sb,dtype", [
    ((2, 3), (2, 2), F32), ((3,), (2, 2), I32), ((), (3,), F32), ((2, 0), (3, 1), F32),
])
def test_kron(rng, sa, sb, dtype):
    a, b = tu.rand(rng, sa, dtype), tu.rand(rng, sb, dtype)
    _check(jnp.kron(jnp.asarray(a), jnp.asarray(b)), np.kron(_wide(a), _wide(b)), dtype)


@pytest.mark.parametrize("shape,offset,axis1,axis2", [
    ((3, 3), 0, 0, 1), ((3, 4), 1, 0, 1), ((4, 3), -2, 0, 1), ((3, 4, 5), 2, 0, 2), ((3, 4, 5), -1, 2, 1),
    ((2, 3), 5, 0, 1), ((2, 3), -3, 0, 1), ((0, 3), 0, 0, 1), ((2, 3, 3), 0, -2, -1),
])
def test_diagonal_and_trace(rng, shape, offset, axis1, axis2):
    x = tu.rand(rng, shape, F32)
    out = jnp.diagonal(jnp.asarray(x), offset, axis1, axis2)
    np.testing.assert_array_equal(np.asarray(out), np.diagonal(x, offset, axis1, axis2))
    _check(jnp.trace(jnp.asarray(x), offset, axis1, axis2), np.trace(_wide(x), offset, axis1, axis2), F32)


def test_trace_dtypes_and_method():
    x = np.arange(9, dtype=np.int8).reshape(3, 3)
    out = jnp.trace(x)
    assert out.dtype == I32 and int(out) == 12
    assert jnp.trace(x, dtype=jnp.float32).dtype == F32
    b = np.eye(3, dtype=bool)
    assert jnp.trace(b).dtype == I32 and int(jnp.trace(b)) == 3
    np.testing.assert_array_equal(np.asarray(jnp.asarray(x).diagonal(1)), np.diagonal(x, 1))


def test_diagonal_errors():
    with pytest.raises(ValueError, match=r"diagonal requires an array of at least two dimensions, got shape \(3,\)"):
        jnp.diagonal(jnp.ones(3))
    with pytest.raises(ValueError, match=r"axis1 and axis2 cannot be the same"):
        jnp.diagonal(jnp.ones((3, 3)), 0, 1, -1)
    with pytest.raises(ValueError, match=r"axis 2 is out of bounds for array of dimension 2"):
        jnp.diagonal(jnp.ones((3, 3)), 0, 0, 2)


@pytest.mark.parametrize("sa,sb,kw", [
    ((4, 3), (3,), {}), ((3, 4), (4, 3), {"axisa": 0, "axisc": 0}), ((2, 3), (2, 2), {}), ((2, 2), (3,), {}),
    ((5, 2), (5, 2), {}), ((3, 2), (3, 2), {"axis": 0}), ((2, 1, 3), (4, 3), {"axisc": 1}),
])
def test_cross(rng, sa, sb, kw):
    a, b = tu.rand(rng, sa, F32), tu.rand(rng, sb, F32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2 deprecates 2-vectors; JAX keeps them
        expected = np.cross(_wide(a), _wide(b), **kw)
    _check(jnp.cross(jnp.asarray(a), jnp.asarray(b), **kw), expected, F32)


def test_cross_errors():
    with pytest.raises(ValueError, match=r"incompatible dimensions for cross product \(dimension must be 2 or 3\), "
                                         r"got 4 and 3"):
        jnp.cross(jnp.ones(4), jnp.ones(3))
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting"):
        jnp.cross(jnp.ones((2, 3)), jnp.ones((4, 3)))


def test_array_dot_method_and_operator(rng):
    a, b = tu.rand(rng, (2, 3), F32), tu.rand(rng, (3, 2), F32)
    _check(jnp.asarray(a).dot(b), _wide(a) @ _wide(b), F32)
    _check(b @ jnp.asarray(a), _wide(b) @ _wide(a), F32)


def test_matmul_size_one_batch_dim_against_a_matrix():
    # regression: a size-1 batch dimension on one side with none on the other was mapped to the
    # missing side (a bad transpose permutation)
    a = np.arange(6, dtype=np.float32).reshape(1, 3, 2)
    b = np.arange(16, dtype=np.float32).reshape(2, 8)
    np.testing.assert_allclose(np.asarray(jnp.matmul(a, b)), np.matmul(a, b))
    np.testing.assert_allclose(np.asarray(jnp.matmul(b.T, a.transpose(0, 2, 1))), np.matmul(b.T, a.transpose(0, 2, 1)))
    np.testing.assert_allclose(np.asarray(jnp.matmul(np.ones((1, 1, 3, 2), np.float32), np.ones((4, 2, 5), np.float32))),
                               np.matmul(np.ones((1, 1, 3, 2)), np.ones((4, 2, 5))))

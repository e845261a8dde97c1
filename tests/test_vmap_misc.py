"""vmap of the sorting, fft, linalg and PRNG primitives against loops over examples.

Primitives covered (named for the registry test): sort_p, top_k_p, fft_p, cholesky_p, lu_p, qr_p,
eigh_p, svd_p, triangular_solve_p, schur_p, threefry2x32_p, mul_add_p, random_consume_p, random_clone_p. Every `tu.check_vmap` call runs batch
sizes 10 and 0 with the batch axis at every position of every operand. The factors of qr, eigh and
svd are unique only up to signs, so they are checked per example by their defining identities
(reconstruction, orthonormality) rather than compared with a loop.
"""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import key_reuse, lax, random
from core import test_util as tu
from core.lax import linalg as lax_linalg
from core.lax.prng import mul_add, random_clone_p, random_consume_p

F32 = np.dtype(np.float32)
# LAPACK and FFTs in float32 on these small, well-conditioned inputs: a few ulps per operation
TOL = dict(atol=2e-5, rtol=2e-5)


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(F32)


def _c64(rng, shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def _ties(rng, shape):
    """Floats with many repeated values, so that stability and secondary keys matter."""
    return rng.integers(0, 3, shape).astype(F32)


def _spd(rng, shape):
    x = rng.standard_normal(shape)
    n = shape[-1]
    return (x @ np.swapaxes(x, -1, -2) + n * np.eye(n)).astype(F32)


def _lower_triangular(rng, shape):
    """Well-conditioned lower-triangular matrices (a dominant diagonal)."""
    n = shape[-1]
    return (np.tril(rng.standard_normal(shape)) + 3 * np.eye(n)).astype(F32)


# ----- sorting -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dimension", [((5,), 0), ((3, 4), 0), ((3, 0), 1)])
def test_sort_one_operand(rng, shape, dimension):
    x = _f32(rng, (10,) + shape)
    x[0, ...] = np.nan if x[0].size else 0  # NaNs sort last, in every lane
    tu.check_vmap(lambda x: lax.sort(x, dimension=dimension), [x])


@pytest.mark.parametrize("shape,dimension,num_keys,is_stable", [((6,), 0, 1, True), ((3, 4), 0, 2, True),
                                                                  ((3, 4), 1, 1, True)])
def test_sort_several_operands(rng, shape, dimension, num_keys, is_stable):
    # three operands, some of them unbatched in most cases: they are broadcast to the batch
    args = [_ties(rng, (10,) + shape), _ties(rng, (10,) + shape), _f32(rng, (10,) + shape)]
    tu.check_vmap(lambda *ops: lax.sort(ops, dimension=dimension, num_keys=num_keys, is_stable=is_stable), args)


@pytest.mark.parametrize("shape,k", [((6,), 3), ((3, 5), 5), ((2, 0), 0)])
def test_top_k(rng, shape, k):
    tu.check_vmap(lambda x: lax.top_k(x, k), [_ties(rng, (10,) + shape)])


# ----- fft -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("fft_type,shape,lengths", [("FFT", (8,), (8,)), ("RFFT", (3, 8), (8,)),
                                                     ("IRFFT", (2, 4, 3), (4, 4))])
def test_fft(rng, fft_type, shape, lengths):
    x = _f32(rng, (10,) + shape) if fft_type == "RFFT" else _c64(rng, (10,) + shape)
    tu.check_vmap(lambda x: lax.fft(x, fft_type, lengths), [x], **TOL)


# ----- linalg: unique results, compared with the loop ----------------------------------------------

@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_cholesky(rng, shape):
    tu.check_vmap(lax_linalg.cholesky, [_spd(rng, (10,) + shape)], **TOL)


@pytest.mark.parametrize("shape", [(3, 3), (4, 3)])
def test_lu(rng, shape):
    tu.check_vmap(lax_linalg.lu, [_f32(rng, (10,) + shape)], **TOL)


@pytest.mark.parametrize("a_shape,b_shape,params", [
    ((3, 3), (3, 2), dict(left_side=True, lower=True)),
    ((3, 3), (2, 3), dict(left_side=False, lower=True, transpose_a=True)),
    ((2, 3, 3), (2, 3, 4), dict(left_side=True, lower=True, unit_diagonal=True)),
])
def test_triangular_solve(rng, a_shape, b_shape, params):
    # b batched alone folds the examples into b's free dimension; a batched alone broadcasts b
    a = _lower_triangular(rng, (10,) + a_shape)
    b = _f32(rng, (10,) + b_shape)
    tu.check_vmap(lambda a, b: lax_linalg.triangular_solve(a, b, **params), [a, b], **TOL)


def test_triangular_solve_folding_keeps_a_unbatched(rng):
    # the fold of a batched b into its columns must not copy a: the solve sees the single a
    a = _lower_triangular(rng, (3, 3))
    bs = _f32(rng, (5, 3, 2))
    jaxpr = core.make_jaxpr(core.vmap(lambda b: lax_linalg.triangular_solve(a, b, left_side=True, lower=True)))(bs)
    solve = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "triangular_solve"]
    assert len(solve) == 1
    assert [v.aval.shape for v in solve[0].invars] == [(3, 3), (3, 10)]


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_eigh_eigenvalues(rng, shape):
    tu.check_vmap(lambda x: lax_linalg.eigh(x)[1], [_spd(rng, (10,) + shape)], **TOL)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_schur(rng, shape):
    # LAPACK's Schur factors are a deterministic function of each matrix: equal to the loop's
    tu.check_vmap(lax_linalg.schur, [_f32(rng, (10,) + shape)], **TOL)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
def test_svd_singular_values(rng, shape):
    tu.check_vmap(lambda x: lax_linalg.svd(x, compute_uv=False), [_f32(rng, (10,) + shape)], **TOL)


# ----- linalg: factors unique up to signs, checked by identities per example -----------------------

def _check_factors(fun, stacked, check_example):
    """vmap(fun) at every batch placement and sizes 10 and 0; each example's outputs (batch axis
    at 0, as out_axes=0 puts it) must satisfy `check_example(x, *outs)`, and the shapes must be
    the loop's."""
    for (ax,), size in tu.batching_cases([stacked.ndim - 1]):
        outs = core.vmap(fun, in_axes=(ax,))(np.moveaxis(stacked[:size], 0, ax))
        lane_shapes = [o.shape for o in core.eval_shape(fun, stacked[0])]
        assert [o.shape for o in outs] == [(size,) + s for s in lane_shapes], (ax, size)
        outs = [np.asarray(o, np.float64) for o in outs]
        for k in range(size):
            check_example(stacked[k].astype(np.float64), *[o[k] for o in outs])


def _close(actual, expected):
    np.testing.assert_allclose(actual, expected, atol=1e-4, rtol=1e-4)


def _orthonormal_columns(q):
    _close(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2))


@pytest.mark.parametrize("shape,full_matrices", [((4, 3), False), ((3, 3), True), ((2, 3, 4), True)])
def test_qr(rng, shape, full_matrices):
    def check(x, q, r):
        _orthonormal_columns(q)
        np.testing.assert_array_equal(np.tril(r, -1), 0)
        _close(q @ r, x)
    _check_factors(lambda x: lax_linalg.qr(x, full_matrices=full_matrices), _f32(rng, (10,) + shape), check)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4)])
def test_eigh_vectors(rng, shape):
    def check(x, v, w):
        _orthonormal_columns(v)
        _close(x @ v, v * w[..., None, :])
        _close(w, np.linalg.eigvalsh(x))
    _check_factors(lax_linalg.eigh, _spd(rng, (10,) + shape), check)


@pytest.mark.parametrize("shape,full_matrices", [((4, 3), False), ((3, 3), True)])
def test_svd_vectors(rng, shape, full_matrices):
    def check(x, u, s, vh):
        _orthonormal_columns(u)
        _orthonormal_columns(np.swapaxes(vh, -1, -2))
        _close(u[..., :, :s.shape[-1]] * s[..., None, :] @ vh[..., :s.shape[-1], :], x)
        _close(s, np.linalg.svd(x, compute_uv=False))
    _check_factors(lambda x: lax_linalg.svd(x, full_matrices=full_matrices), _f32(rng, (10,) + shape), check)


# ----- PRNG primitives -----------------------------------------------------------------------------

def _words(rng, shape):
    return rng.integers(0, 2**32, shape, dtype=np.uint32)


@pytest.mark.parametrize("shapes", [
    [(), (), (4,), (4,)],            # the usual call: scalar key words, counter arrays
    [(3,), (), (2, 3), (2, 1)],      # mixed ranks, aligned from the right
])
def test_threefry2x32(rng, shapes):
    args = [_words(rng, (10,) + s) for s in shapes]
    tu.check_vmap(lax.threefry2x32, args)


@pytest.mark.parametrize("shapes", [[(3,), (), ()], [(2, 3), (2, 3), (2, 3)]])
def test_mul_add(rng, shapes):
    tu.check_vmap(mul_add, [_f32(rng, (10,) + s) for s in shapes], **TOL)


def test_key_reuse_markers(rng):
    # the key-reuse checker's markers (core/key_reuse.py; its own tests are in test_key_reuse.py)
    # are the identity on keys, so batched as the identity, also with the batch axis last
    keys = _words(rng, (10, 3, 2))
    site = key_reuse.Site(None, ())
    tu.check_vmap(lambda k: random_consume_p.bind(k, name="random.normal", site=site, shared=False), [keys])
    tu.check_vmap(random_clone_p.bind, [keys])


# ----- core.random end to end ----------------------------------------------------------------------

def test_random_normal_with_batched_keys():
    keys = random.split(random.PRNGKey(0), 5)
    got = core.vmap(lambda k: random.normal(k, (3,)))(keys)
    expected = np.stack([np.asarray(random.normal(keys[i], (3,))) for i in range(5)])
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_random_uniform_with_unbatched_key():
    key = random.PRNGKey(1)
    xs = np.arange(4, dtype=F32)
    got = core.vmap(lambda x: random.uniform(key, ()) + x)(xs)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(random.uniform(key, ())) + xs)


def test_random_split_and_bits_with_batched_keys():
    keys = random.split(random.PRNGKey(2), 4)
    got = core.vmap(lambda k: random.bits(random.split(k, 3)[1], (2,)))(keys)
    expected = np.stack([np.asarray(random.bits(random.split(keys[i], 3)[1], (2,))) for i in range(4)])
    np.testing.assert_array_equal(np.asarray(got), expected)


# ----- compositions --------------------------------------------------------------------------------

def test_jit_of_vmap(rng):
    x = _c64(rng, (6, 2, 8))
    f = core.jit(core.vmap(lambda x: lax.fft(x, "FFT", (8,)), in_axes=1))
    tu.assert_allclose(np.asarray(f(x)), np.fft.fft(np.moveaxis(x, 1, 0).astype(np.complex128)), np.complex64,
                       **TOL)


def test_vmap_of_vmap(rng):
    x = _ties(rng, (3, 4, 5))
    vals, idxs = core.vmap(core.vmap(lambda r: lax.top_k(r, 2), in_axes=1), in_axes=0)(x)
    expected_idx = np.argsort(-np.swapaxes(x, 1, 2), axis=-1, kind="stable")[..., :2]
    np.testing.assert_array_equal(np.asarray(idxs), expected_idx)
    np.testing.assert_array_equal(np.asarray(vals), np.take_along_axis(np.swapaxes(x, 1, 2), expected_idx, -1))


def test_vmap_of_grad_through_triangular_solve(rng):
    # d/db sum(a^-1 b) = a^-T 1: per example, with each example's own a
    a = _lower_triangular(rng, (4, 3, 3))
    b = _f32(rng, (4, 3, 2))

    def loss(a, b):
        return jnp.sum(lax_linalg.triangular_solve(a, b, left_side=True, lower=True))

    got = core.vmap(core.grad(loss, argnums=1))(a, b)
    expected = np.stack([np.linalg.solve(a[i].T.astype(np.float64), np.ones((3, 2))) for i in range(4)])
    tu.assert_allclose(np.asarray(got), expected, F32, **TOL)


def test_grad_of_vmap_cholesky(rng):
    # the gradient of the summed per-example objective is each example's own gradient
    a = _spd(rng, (3, 3, 3))

    def loss(x):
        return jnp.sum(lax_linalg.cholesky(x))

    got = core.grad(lambda xs: jnp.sum(core.vmap(loss)(xs)))(a)
    expected = np.stack([np.asarray(core.grad(loss)(a[i])) for i in range(3)])
    tu.assert_allclose(np.asarray(got), expected, F32, **TOL)

"""vmap of the primitives added for jax.lax's solvers and the rest of lax.linalg, against a Python
loop over the examples: each case batches some operands (at axis 0 or 1) and not others."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax

L = lax.linalg
B = 3  # examples


def _spd(rng, *shape):
    m = rng.standard_normal(shape + shape[-1:])
    return m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])


def _cases(rng):
    f32 = np.float32
    dl, d, du = rng.standard_normal((3, B, 4)).astype(f32)
    d += 4
    qr_raw, tau = np.linalg.qr(rng.standard_normal((B, 4, 3)), mode="raw")   # (B, 3, 4): reflectors transposed
    raw, tau = np.swapaxes(qr_raw, -1, -2).astype(f32), tau.astype(f32)
    pivots = np.asarray(L.lu(rng.standard_normal((B, 4, 4)).astype(f32))[1])

    def cg_solve(a, b):
        return lax.custom_linear_solve(lambda v: a @ v, b, lambda mv, r: jnp.linalg.solve(a, r), symmetric=True)

    return {
        # name: (function, args, in_axes)
        "linear_solve": (cg_solve, (_spd(rng, B, 3).astype(f32), rng.standard_normal((3, B)).astype(f32)), (0, 1)),
        "linear_solve_b_only": (cg_solve, (_spd(rng, 3).astype(f32), rng.standard_normal((B, 3)).astype(f32)),
                                (None, 0)),
        "tridiagonal_solve": (L.tridiagonal_solve, (dl, d, du, rng.standard_normal((B, 4, 2)).astype(f32)),
                              (0, 0, 0, 0)),
        "tridiagonal_solve_b_only": (L.tridiagonal_solve, (dl[0], d[0], du[0],
                                                           rng.standard_normal((4, B, 2)).astype(f32)),
                                     (None, None, None, 1)),
        "tridiagonal": (L.tridiagonal, (_spd(rng, B, 4).astype(f32),), (0,)),
        "hessenberg": (L.hessenberg, (rng.standard_normal((B, 4, 4)).astype(f32),), (0,)),
        "householder_product": (L.householder_product, (raw, tau[0].astype(f32)), (0, None)),
        "ormqr": (L.ormqr, (raw, tau.astype(f32), rng.standard_normal((4, 2)).astype(f32)), (0, 0, None)),
        "lu_pivots_to_permutation": (lambda p: L.lu_pivots_to_permutation(p, 5), (pivots,), (0,)),
        "cholesky_update": (L.cholesky_update, (np.linalg.cholesky(_spd(rng, 4)).T.astype(f32),
                                                rng.standard_normal((B, 4)).astype(f32)), (None, 0)),
        "symmetric_product": (lambda a, c: L.symmetric_product(a, c, alpha=2.0, beta=3.0),
                              (rng.standard_normal((B, 3, 2)).astype(f32), np.eye(3, dtype=f32)), (0, None)),
    }


NAMES = ["linear_solve", "linear_solve_b_only", "tridiagonal_solve", "tridiagonal_solve_b_only", "tridiagonal",
         "hessenberg", "householder_product", "ormqr", "lu_pivots_to_permutation", "cholesky_update",
         "symmetric_product"]


@pytest.mark.parametrize("name", NAMES)
def test_vmap_matches_a_loop(name):
    fun, args, in_axes = _cases(np.random.default_rng(0))[name]
    out = core.vmap(fun, in_axes=in_axes)(*args)

    def example(i):
        return fun(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)])

    looped = [example(i) for i in range(B)]
    flat_out = out if isinstance(out, (tuple, list)) else (out,)
    flat_loop = [x if isinstance(x, (tuple, list)) else (x,) for x in looped]
    for k, got in enumerate(flat_out):
        np.testing.assert_allclose(got, np.stack([np.asarray(x[k]) for x in flat_loop]), rtol=2e-5, atol=2e-5)

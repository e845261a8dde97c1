"""vmap of the primitives added for jax.lax's names and linalg.eig, against loops over examples.

Primitives covered (named for the registry test): "polygamma", "zeta", "bessel_i1e",
"optimization_barrier", "reduce_precision", "eig". `tu.check_vmap` runs batch sizes 10 and 0 with
the batch axis at every position of every operand. eig's eigenvectors are unique only up to a
phase, so eig is compared through its eigenvalues and the residual of A v = w v.
"""
import numpy as np
import pytest

import core.numpy as jnp
from core import lax
from core import test_util as tu
from core.lax import linalg as lax_linalg

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("name, fun, args", [
    ("polygamma", lambda m, x: lax.polygamma(m, x),
     [np.full((10, 3), 1.0, np.float32), RNG.uniform(0.5, 3.0, (10, 3)).astype(np.float32)]),
    ("zeta", lambda x, q: lax.zeta(x, q),
     [RNG.uniform(1.5, 4.0, (10, 3)).astype(np.float32), RNG.uniform(0.5, 3.0, (10, 3)).astype(np.float32)]),
    ("bessel_i1e", lambda x: lax.bessel_i1e(x), [RNG.normal(size=(10, 4)).astype(np.float32)]),
    ("optimization_barrier", lambda x, y: lax.optimization_barrier((x * 2.0, y + 1.0)),
     [RNG.normal(size=(10, 3)).astype(np.float32), RNG.normal(size=(10, 2)).astype(np.float32)]),
    ("reduce_precision", lambda x: lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10),
     [RNG.normal(size=(10, 4)).astype(np.float32) * 100]),
])
def test_vmap_equals_the_loop(name, fun, args):
    tu.check_vmap(fun, args, atol=1e-6, rtol=1e-5, err_msg=name)


def test_vmap_of_eig_per_example():
    a = RNG.normal(size=(6, 4, 4))
    w, v = core_vmap_eig(a)
    for k in range(6):
        np.testing.assert_allclose(np.sort_complex(np.asarray(w[k])), np.sort_complex(np.linalg.eigvals(a[k])),
                                   rtol=1e-4, atol=1e-4, err_msg="eig")
        np.testing.assert_allclose(a[k] @ np.asarray(v[k]), np.asarray(v[k]) * np.asarray(w[k])[None, :],
                                   atol=1e-4)


def core_vmap_eig(a):
    import core
    return core.vmap(lambda m: lax_linalg.eig(m, compute_left_eigenvectors=False))(jnp.asarray(a, jnp.float32))

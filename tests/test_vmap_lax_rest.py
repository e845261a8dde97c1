"""vmap of the primitives of jax.lax's last names (tests/test_lax_rest_names.py tests the rest):
each batched result equals a Python loop over the examples."""
import numpy as np

import core
import core.numpy as jnp
from core import lax
from core.tokens import Token


def _loop(f, xs):
    return np.stack([np.asarray(f(x)) for x in xs])


def test_vmap_of_bessel_i0e_stage_and_dce_sink_equals_a_loop(rng):
    xs = rng.uniform(-12, 12, (3, 4)).astype(np.float32)

    def f(x):
        lax.dce_sink(x)                      # dce_sink_p: no output, its batching rule passes the lane through
        return lax.bessel_i0e(lax.stage(x)) * 2.0  # bessel_i0e_p and stage_p, batch axis kept where it is
    for in_axes in (0, 1):
        batched = core.vmap(f, in_axes=in_axes)(jnp.asarray(xs if in_axes == 0 else xs.T))
        np.testing.assert_allclose(batched, _loop(f, xs), rtol=1e-6)


def test_vmap_of_create_token_and_after_all():
    t = lax.create_token()

    def f(x, tok):
        return x + 1, lax.after_all(tok, lax.create_token())
    y, tok = core.vmap(f, in_axes=(0, None))(jnp.arange(3.0), t)
    assert type(tok) is Token
    np.testing.assert_array_equal(y, _loop(lambda x: f(x, t)[0], np.arange(3.0)))

"""Bessel functions of the first kind of integer orders 0..v at once: `bessel_jn`.

Miller's backward recurrence, as JAX computes them: start from j_(N+1) = 0, j_N = 1 at
N = `n_iter`, run j_(k-1) = (2k / z) j_k - j_(k+1) down to k = 1 (the recurrence is stable in this
direction), and normalize with the identity J_0 + 2 (J_2 + J_4 + ...) = 1. The values are rescaled
whenever they grow past 1e10, so neither float32 nor float64 overflows. Accurate while n_iter is
well above |z| and v (for the default 50: |z| up to ~25); differentiable by autodiff of the loop.
"""
import operator

from .. import lax
from .. import numpy as jnp
from ._util import inexact_args, library_jit

_RESCALE_ABOVE = 1e10


def _jn_value(z, v, n_iter):
    zero = z == 0
    zs = jnp.where(zero, 1.0, z)
    orders = jnp.arange(v + 1, dtype=z.dtype).reshape((v + 1,) + (1,) * z.ndim)

    def step(i, carry):
        j_next, j_k, norm, kept = carry  # j_(k+1), j_k, the running J_0 + 2 sum J_even, orders <= v
        k = lax.convert_element_type(n_iter - i, z.dtype)
        j_prev = 2 * k / zs * j_k - j_next  # j_(k-1)
        km1 = k - 1
        norm = norm + jnp.where((jnp.fmod(km1, 2.0) == 0) & (km1 > 0), 2 * j_prev, 0.0)
        norm = norm + jnp.where(km1 == 0, j_prev, 0.0)
        kept = jnp.where(orders == km1, j_prev, kept)
        big = jnp.abs(j_prev) > _RESCALE_ABOVE
        scale = jnp.where(big, 1 / jnp.where(big, jnp.abs(j_prev), 1.0), 1.0)
        return j_k * scale, j_prev * scale, norm * scale, kept * scale

    init = (jnp.zeros_like(z), jnp.ones_like(z), jnp.zeros_like(z),
            jnp.zeros((v + 1,) + z.shape, z.dtype))
    # orders above n_iter are not reached: they stay 0, as the recurrence's start implies
    _, _, norm, kept = lax.fori_loop(0, n_iter, step, init)
    out = kept / norm
    at_zero = jnp.where(orders == 0, 1.0, 0.0).astype(z.dtype)
    return jnp.where(zero, at_zero, out)


_jn = library_jit(_jn_value, static_argnums=(1, 2))


def bessel_jn(z, *, v, n_iter=50):
    """The Bessel functions J_0(z), ..., J_v(z) of the first kind, stacked along a new leading
    axis (shape `(v + 1,) + z.shape`), as `jax.scipy.special.bessel_jn`: Miller's backward
    recurrence from order `n_iter` (static ints), accurate while n_iter is well above |z| and v.
    Differentiable in z.

    >>> print(np.round(np.asarray(bessel_jn(jnp.array([1.0]), v=1)), 4))
    [[0.7652]
     [0.4401]]
    """
    try:
        v, n_iter = operator.index(v), operator.index(n_iter)
    except TypeError:
        raise TypeError(f"bessel_jn: v and n_iter must be static integers, got v={v!r}, n_iter={n_iter!r}.") from None
    if v < 0 or n_iter < 1:
        raise ValueError(f"bessel_jn: v must be >= 0 and n_iter >= 1, got v={v}, n_iter={n_iter}.")
    z, = inexact_args("bessel_jn", z)
    return _jn(z, v, n_iter)

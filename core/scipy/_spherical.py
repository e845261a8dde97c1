"""Spherical harmonics `sph_harm_y` (SciPy's argument order and conventions: degree n, order m,
polar angle theta, azimuth phi; the Condon-Shortley phase included).

Y_n^m(theta, phi) = Pbar_n^|m|(cos theta) e^(i |m| phi) for m >= 0, and Y_n^-|m| = (-1)^m conj(Y_n^|m|),
where Pbar_n^m are the associated Legendre functions normalized over the sphere. Each element runs
its own recurrences, two loops of n_max steps that leave the elements they do not concern unchanged:
first along the diagonal, Pbar_m^m = (-1)^m sqrt((2m + 1)!! / (4 pi (2m)!!)) sin^m theta, one factor
-sqrt((2k + 1) / (2k)) sin theta per step k <= |m|; then up in degree,
Pbar_l^m = a_l (cos theta Pbar_(l-1)^m - Pbar_(l-2)^m / a_(l-1)), a_l = sqrt((4 l^2 - 1) / (l^2 - m^2)),
for |m| < l <= n. Normalized values neither overflow nor underflow early, and the degree recurrence is
stable (forward in l). Cost: O(n_max) per element (JAX tabulates all (n_max + 1)^2 values per point).
Differentiable in theta and phi by autodiff of the loops (every coefficient is finite on both sides of
each select, so no NaN reaches a gradient).
"""
import numpy as np

from .. import dtypes
from .. import lax
from .. import numpy as jnp
from ..lax._base import aval_of
from ..numpy._util import broadcast_to_common_shape, check_arraylike, promote_args_inexact
from ..trace import Tracer
from ._util import library_jit


def _legendre_normalized(n, am, cos_t, sin_t, n_max):
    """Pbar_n^am(cos theta) per element, for 0 <= am <= n <= n_max (all arrays of one shape)."""
    dt = cos_t.dtype
    amf = lax.convert_element_type(am, dt)
    nf = lax.convert_element_type(n, dt)

    def diagonal(i, p):
        k = lax.convert_element_type(i, dt)
        factor = -jnp.sqrt((2 * k + 1) / (2 * k)) * sin_t
        return jnp.where(k <= amf, p * factor, p)

    p_mm = lax.fori_loop(1, n_max + 1, diagonal, jnp.full_like(cos_t, float(0.5 / np.sqrt(np.pi))))

    def upward(i, carry):
        prev2, prev1, a_prev = carry
        l = lax.convert_element_type(i, dt)
        active = (l > amf) & (l <= nf)
        # l^2 - m^2 stands in as 1 where the step is inactive, so every coefficient stays finite
        a = jnp.sqrt((4 * l * l - 1) / jnp.where(active, l * l - amf * amf, 1.0))
        new = a * (cos_t * prev1 - prev2 / a_prev)
        return jnp.where(active, prev1, prev2), jnp.where(active, new, prev1), jnp.where(active, a, a_prev)

    # a_prev = inf before the first step, so that Pbar_(m-1)^m (= 0) drops out of it
    start = (jnp.zeros_like(cos_t), p_mm, jnp.full_like(cos_t, np.inf))
    return lax.fori_loop(1, n_max + 1, upward, start)[1]


def _sph_harm_value(n, m, theta, phi, n_max):
    # as JAX: above n_max, the degree and the Legendre function's order are clipped to n_max, while
    # the phase e^(i |m| phi) and the sign keep the order given
    am = jnp.abs(m)
    p = _legendre_normalized(jnp.clip(n, 0, n_max), jnp.minimum(am, n_max), jnp.cos(theta), jnp.sin(theta), n_max)
    angle = lax.convert_element_type(am, theta.dtype) * phi
    y = lax.complex(p * jnp.cos(angle), p * jnp.sin(angle))
    # negative orders: Y_n^-m = (-1)^m conj(Y_n^m)
    sign = jnp.where(am % 2 == 1, -1.0, 1.0).astype(theta.dtype)
    negative = lax.complex(sign * y.real, -sign * y.imag)
    return jnp.where(m < 0, negative, y)


_sph_harm = library_jit(_sph_harm_value, static_argnums=(4,))


def _integer_operand(name, arg_name, v):
    v = jnp.asarray(v)
    if not dtypes.issubdtype(v.dtype, np.integer):
        raise TypeError(f"sph_harm_y: {arg_name} must have an integer dtype, got "
                        f"{dtypes.short_name(v.dtype)}{list(v.shape)}; pass integers (e.g. n.astype(int))")
    return v


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic Y_n^m(theta, phi) of degree n and order m (|m| <= n) at polar angle
    theta and azimuth phi, as `scipy.special.sph_harm_y` (orthonormal over the sphere, with the
    Condon-Shortley phase). Arguments broadcast together; the result is complex (complex64 for
    float32 angles). As in JAX, `n_max` is the static largest degree (taken from a concrete `n` when
    omitted; degrees and orders above it are clipped to it), and `diff_n` (SciPy's derivatives) is
    not supported beyond 0. Differentiable in theta and phi.

    >>> y = sph_harm_y(jnp.array([1]), jnp.array([0]), 0.0, 0.0)   # sqrt(3 / (4 pi))
    >>> print(round(float(y.real[0]), 6))
    0.488603
    """
    if diff_n not in (None, 0):
        raise NotImplementedError(f"sph_harm_y: diff_n={diff_n!r} (derivatives of the harmonic) is not supported, "
                                  "as in JAX; differentiate with core.grad or core.jacfwd in theta and phi instead")
    n = _integer_operand("sph_harm_y", "n", n)
    m = _integer_operand("sph_harm_y", "m", m)
    check_arraylike("sph_harm_y", theta, phi)
    theta, phi = promote_args_inexact("sph_harm_y", theta, phi)
    if dtypes.is_complex(theta.dtype):
        raise TypeError(f"sph_harm_y: theta and phi must be real angles, got {dtypes.short_name(theta.dtype)}"
                        f"{list(aval_of(theta).shape)}")
    if n_max is None:
        if isinstance(n, Tracer):
            raise TypeError("sph_harm_y: n_max must be given (a Python int, the largest degree) when n is traced, "
                            "as under jit or vmap: the recurrences' length is static")
        n_max = int(np.max(np.asarray(n))) if np.size(np.asarray(n)) else 0
    if not isinstance(n_max, (int, np.integer)) or isinstance(n_max, bool) or n_max < 0:
        raise TypeError(f"sph_harm_y: n_max must be a non-negative Python int, got {n_max!r}")
    n, m, theta, phi = broadcast_to_common_shape(n, m, theta, phi)
    return _sph_harm(n, m, theta, phi, int(n_max))

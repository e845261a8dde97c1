"""The standard right-skewed Gumbel distribution's functions of z = (x - loc) / scale, shared by
`gumbel_r` and `gumbel_l` (the left-skewed one is the right one's mirror image: its cdf at z is the
right one's sf at -z).

Where exp(-z) saturates a result (z below -10 makes exp(-exp(-z)) exactly 0 in any float), z is
clamped first, so that the result keeps its value and its derivative stays 0 instead of 0 * inf.
"""
from ... import numpy as jnp
from ._util import log1mexp

_SATURATED_BELOW = -10.0
# above this z, exp(-z) < 2.1e-9 and log(1 - exp(-exp(-z))) = -z - exp(-z) / 2 to double precision
_TAIL_ABOVE = 20.0


def logpdf(z):
    return -z - jnp.exp(-z)


def logcdf(z):
    return -jnp.exp(-z)


def cdf(z):
    return jnp.exp(-jnp.exp(-jnp.maximum(z, _SATURATED_BELOW)))


def sf(z):
    return -jnp.expm1(-jnp.exp(-jnp.maximum(z, _SATURATED_BELOW)))


def logsf(z):
    # log(1 - exp(-t)) with t = exp(-z); for large z, t underflows long before the result does
    # (logsf(800) is -800), so there the series -z - t/2 takes over
    tail = z > _TAIL_ABOVE
    zt = jnp.where(tail, z, _TAIL_ABOVE)
    zm = jnp.where(tail, 0.0, jnp.maximum(z, _SATURATED_BELOW))
    return jnp.where(tail, -zt - 0.5 * jnp.exp(-zt), log1mexp(jnp.exp(-zm)))


def ppf(q):
    """-log(-log q): -inf at 0, inf at 1."""
    return -jnp.log(-jnp.log(q))


def ppf_of_sf(s):
    """The z whose sf is s: -log(-log1p(-s)) (accurate for small s)."""
    return -jnp.log(-jnp.log1p(-s))


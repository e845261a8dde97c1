"""`mulhi`: the high half of the double-width product of two integers, as JAX's `mulhi_p`.

StableHLO has no such op; the lowering is the product assembled from half-width pieces (so 32-
and 64-bit operands need no wider type), inlined as one equation's code.
"""
import numpy as np

from ..interpreters import lowering
from ._base import INT, aval_of, defnondiff, elementwise_args, lower_fun, naryop

__all__ = ["mulhi"]


def mulhi(x, y):
    """Elementwise the high half of the full (double-width) product of integers `x` and `y`,
    signed or unsigned as their dtype (`(x * y) >> bits` computed without overflow).

    >>> lax.mulhi(jnp.uint32(0xFFFFFFFF), jnp.uint32(2))
    Array(1, dtype=uint32)
    """
    return mulhi_p.bind(*elementwise_args(x, y))


def _mulhi_from_halves(x, y):
    from .elementwise import add, bitwise_and, lt, mul, select_n, shift_right_logical, sub
    from .structural import bitcast_convert_type, broadcast_in_dim, full
    ax, ay = aval_of(x), aval_of(y)
    shape = ax.shape or ay.shape  # one may be a scalar
    x, y = (broadcast_in_dim(v, shape, ()) if not a.shape and shape else v for v, a in ((x, ax), (y, ay)))
    bits = ax.dtype.itemsize * 8
    signed = ax.dtype.kind == "i"
    udt = np.dtype(f"uint{bits}")
    ux = bitcast_convert_type(x, udt) if signed else x
    uy = bitcast_convert_type(y, udt) if signed else y
    half = bits // 2
    mask = np.array((1 << half) - 1, udt)
    h = np.array(half, udt)
    x_lo, x_hi = bitwise_and(ux, mask), shift_right_logical(ux, h)
    y_lo, y_hi = bitwise_and(uy, mask), shift_right_logical(uy, h)
    lo_lo, hi_lo, lo_hi, hi_hi = mul(x_lo, y_lo), mul(x_hi, y_lo), mul(x_lo, y_hi), mul(x_hi, y_hi)
    cross = add(add(shift_right_logical(lo_lo, h), bitwise_and(hi_lo, mask)), lo_hi)
    hi = add(add(hi_hi, shift_right_logical(hi_lo, h)), shift_right_logical(cross, h))
    if not signed:
        return hi
    # signed: subtract y where x < 0 and x where y < 0 (two's complement, modulo 2**bits)
    zeros = full(shape, 0, udt)
    hi = sub(hi, select_n(lt(x, np.array(0, ax.dtype)), zeros, uy))
    hi = sub(hi, select_n(lt(y, np.array(0, ax.dtype)), zeros, ux))
    return bitcast_convert_type(hi, ax.dtype)


mulhi_p = naryop("mulhi", INT)
lowering.register(mulhi_p, lower_fun(_mulhi_from_halves))
defnondiff(mulhi_p)  # integers: no derivative

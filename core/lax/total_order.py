"""JAX's total-order comparisons `eq_to_p`, `le_to_p` and `lt_to_p` (primitives only, as in
jax.lax, where sort's comparator uses them). For floats they compare in IEEE 754's totalOrder
(StableHLO's TOTALORDER): -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN, so NaNs compare
equal to NaNs of the same sign and bits, and -0.0 is less than +0.0; for integers and booleans they
are the ordinary comparisons.
"""
from .. import dtypes
from ..interpreters import lowering
from ._base import ANY, BOOL, FLOAT, INT, defnondiff, naryop

__all__ = []  # JAX exports only the primitives (lax/__init__ exports every `*_p`)


def _total_order_comparison(name, direction, accepted):
    def rule(ctx, x, y):
        out = ctx.avals_out[0]
        ax, ay = ctx.avals_in
        x = lowering.broadcast_to(ctx.b, x, ax, out.update(dtype=ax.dtype))
        y = lowering.broadcast_to(ctx.b, y, ay, out.update(dtype=ay.dtype))
        kind = "TOTALORDER" if dtypes.is_inexact(ax.dtype) else lowering.compare_type(ax.dtype)
        return ctx.b.op("stablehlo.compare", [x, y], [out],
                        {"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                         "compare_type": f"#stablehlo<comparison_type {kind}>"})
    prim = naryop(name, accepted, result_dtype=lambda _: dtypes.bool_)
    lowering.register(prim, rule)
    defnondiff(prim)
    return prim


eq_to_p = _total_order_comparison("eq_to", "EQ", ANY)
le_to_p = _total_order_comparison("le_to", "LE", INT + FLOAT + BOOL)
lt_to_p = _total_order_comparison("lt_to", "LT", INT + FLOAT + BOOL)

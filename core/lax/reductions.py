"""Reductions over axes: sum, prod, max, min, and, or, xor; argmax/argmin; cumulative ops; windows.

Every monoid reduction lowers to one `stablehlo.reduce` whose init value is the monoid's identity
for the dtype (`identity(kind, dtype)`), so reducing a size-0 axis gives the identity, as in JAX.
Cumulative ops lower to `stablehlo.reduce_window` with a window as long as the axis, padded on one
side (XLA's own formulation); window reductions (pooling) to `stablehlo.reduce_window`.
"""
import math

import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import ad, batching, lowering
from ..interpreters.lowering import i64_array
from ._base import (INT_OR_BOOL, NUMBER, REAL, BOOL, FLOAT, aval_of, check_dtype_accepted, deflinear, defnondiff,
                    standard_primitive)

__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
           "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp",
           "reduce_window", "reduce_window_sum", "reduce_window_max", "reduce_window_min", "reduce",
           "padtype_to_pads"]


def identity(kind, dtype):
    """The identity of monoid `kind` ('add', 'mul', 'max', 'min', 'and', 'or', 'xor') in `dtype`."""
    dtype = np.dtype(dtype)
    if kind in ("add", "or", "xor"):
        return False if dtype == dtypes.bool_ else 0
    if kind == "mul":
        return True if dtype == dtypes.bool_ else 1
    if kind == "and":
        return True if dtype == dtypes.bool_ else -1 if dtype.kind == "i" else np.iinfo(dtype).max
    if dtype == dtypes.bool_:
        return kind == "min"
    if dtypes.is_complex(dtype):
        # lexicographic order: both parts at the far end, so no complex number comes before it
        inf = -np.inf if kind == "max" else np.inf
        return complex(inf, inf)
    if dtypes.is_float(dtype):
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


_HLO_OPS = {"add": "stablehlo.add", "mul": "stablehlo.multiply", "max": "stablehlo.maximum",
            "min": "stablehlo.minimum", "and": "stablehlo.and", "or": "stablehlo.or", "xor": "stablehlo.xor"}


# stablehlo's complex maximum/minimum ignore the imaginary part on ties: reductions choose with
# NumPy's lexicographic, NaN-propagating order instead
_COMPLEX_DIRECTION = {"stablehlo.maximum": "GT", "stablehlo.minimum": "LT"}


def _reduced_shape(name, operand, axes):
    axes = tuple(axes)
    if any(a < 0 or a >= operand.ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{name}: axes {axes} are out of range or repeated for an operand of shape "
                         f"{operand.shape}")
    return tuple(d for i, d in enumerate(operand.shape) if i not in axes)


def reduction_lowering(hlo_op, identity):
    """Lower a reduction to `stablehlo.reduce` with a body applying `hlo_op`; `identity(dtype)` is
    the init value."""
    def rule(ctx, x, *, axes):
        aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
        scalar = aval_out.update(shape=())
        init = ctx.b.constant(identity(aval_in.dtype), aval_in.dtype, ())

        def body(b, acc, v):
            if hlo_op in _COMPLEX_DIRECTION and dtypes.is_complex(scalar.dtype):
                from .elementwise import complex_minmax_select
                return complex_minmax_select(b, acc, v, _COMPLEX_DIRECTION[hlo_op], scalar)
            return b.op(hlo_op, [acc, v], [scalar])

        region = ctx.b.region([scalar, scalar], body)
        return ctx.b.op("stablehlo.reduce", [x, init], [aval_out], {"dimensions": i64_array(axes)},
                        regions=[region])
    return rule


def _monoid_reduction(name, kind, accepted):
    """A reduction primitive over `axes` for monoid `kind`, keeping the operand's dtype."""
    def dtype_rule(operand, *, axes):
        check_dtype_accepted(name, operand.dtype, accepted)
        return operand.dtype

    def shape_rule(operand, *, axes):
        return _reduced_shape(name, operand, axes)

    prim = standard_primitive(name, shape_rule, dtype_rule, lambda operand, **_: operand.weak_type)
    lowering.register(prim, reduction_lowering(_HLO_OPS[kind], lambda dt: identity(kind, dt)))
    return prim


def _axes(axes):
    return tuple(int(a) for a in axes)


def _mul(x, y):
    from .elementwise import mul
    return mul(x, y)


def _shift(x, d, axis, reverse, fill):
    """`x` moved `d` places along `axis` (towards higher indices, lower when `reverse`), the vacated
    places holding `fill`: the "previous element" of a running reduction."""
    from .structural import pad
    n = aval_of(x).ndim
    edge = (-d, d, 0) if reverse else (d, -d, 0)
    return pad(x, fill, [edge if i == axis else (0, 0, 0) for i in range(n)])


def _batch_reducer(prim):
    """Batching rule for a primitive reducing its operand over `axes` (other params pass through):
    the batch axis just becomes one more kept axis. Each per-example axis moves past the batch
    axis, and the batch axis itself moves left by the reduced axes before it; no transpose."""
    def rule(vals, dims, *, axes, **params):
        (x,), (d,) = vals, dims
        batched_axes = tuple(a + (a >= d) for a in axes)
        return prim.bind(x, axes=batched_axes, **params), d - sum(a < d for a in axes)
    return rule


def _batch_cumulative(prim):
    """Batching rule for a running reduction along `axis`: the other axes, the batch axis among
    them, are independent, so only `axis` shifts past the batch axis."""
    def rule(vals, dims, *, axis, reverse):
        (x,), (d,) = vals, dims
        return prim.bind(x, axis=axis + (axis >= d), reverse=reverse), d
    return rule


def _batch_window(prim):
    """Batching rule for a window reduction: the batch axis gets a window of 1 with stride 1, no
    padding and no dilation, so each example is reduced on its own, in place."""
    def rule(vals, dims, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        (x,), (d,) = vals, dims

        def ins(params, one):
            return params[:d] + (one,) + params[d:]
        return _window_bind(prim, x, window_dimensions=ins(window_dimensions, 1),
                            window_strides=ins(window_strides, 1), padding=ins(padding, (0, 0)),
                            base_dilation=ins(base_dilation, 1), window_dilation=ins(window_dilation, 1)), d
    return rule


# ----- reduce_sum ----------------------------------------------------------------------------

def reduce_sum(operand, axes):
    """Sum `operand` over `axes` (a tuple of non-negative ints).

    Example: `lax.reduce_sum(jnp.ones((2, 3)), (1,))` is `[3., 3.]`.
    """
    return reduce_sum_p.bind(operand, axes=_axes(axes))


reduce_sum_p = _monoid_reduction("reduce_sum", "add", NUMBER)


def _reduce_sum_transpose(ct, operand, *, axes):
    shape = operand.aval.shape
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    from .structural import broadcast_in_dim
    return [broadcast_in_dim(ct, shape, kept)]


deflinear(reduce_sum_p, _reduce_sum_transpose)
batching.batching_rules[reduce_sum_p] = _batch_reducer(reduce_sum_p)


# ----- reduce_prod ---------------------------------------------------------------------------

def reduce_prod(operand, axes):
    """Multiply the elements of `operand` over `axes`; an empty axis gives 1.

    Example: `lax.reduce_prod(jnp.array([[1., 2.], [3., 4.]]), (1,))` is `[2., 12.]`.
    """
    return reduce_prod_p.bind(operand, axes=_axes(axes))


reduce_prod_p = _monoid_reduction("reduce_prod", "mul", NUMBER)


def _reduce_prod_jvp(primals, tangents, *, axes):
    # d prod(x) = sum_i t_i * prod_{j != i} x_j. The products "of all others" come from exclusive
    # running products from both ends, so zeros in x need no special case (dividing prod(x) by
    # x_i would give 0/0 there).
    x, = primals
    t, = tangents
    ans = reduce_prod_p.bind(x, axes=axes)
    if not axes:
        return ans, t
    aval = aval_of(x)
    others = _products_of_others(x, aval, axes)
    return ans, reduce_sum(_mul(t, others), axes)


def _products_of_others(x, aval, axes):
    """For each element of `x`, the product of the other elements of its reduction group."""
    from .structural import reshape, transpose
    kept = tuple(d for d in range(aval.ndim) if d not in axes)
    perm = tuple(axes) + kept
    n = math.prod(aval.shape[a] for a in axes)
    if n == 0 or aval.size == 0:
        return x
    flat = reshape(transpose(x, perm), (n, aval.size // n))
    before = _shift(cumprod(flat, 0), 1, 0, False, 1)
    after = _shift(cumprod(flat, 0, reverse=True), 1, 0, True, 1)
    others = reshape(_mul(before, after), tuple(aval.shape[d] for d in perm))
    inverse = tuple(int(i) for i in np.argsort(perm))
    return transpose(others, inverse)


ad.jvp_rules[reduce_prod_p] = _reduce_prod_jvp
batching.batching_rules[reduce_prod_p] = _batch_reducer(reduce_prod_p)


# ----- reduce_max ----------------------------------------------------------------------------

def reduce_max(operand, axes):
    """The maximum of `operand` over `axes`; NaN propagates; an empty axis gives the dtype's lowest
    value (-inf, iinfo.min or False).

    Example: `lax.reduce_max(jnp.array([[1, 5], [7, 2]]), (0,))` is `[7, 5]`.
    """
    return reduce_max_p.bind(operand, axes=_axes(axes))


reduce_max_p = _monoid_reduction("reduce_max", "max", NUMBER + BOOL)


def _reduce_chooser_jvp(prim):
    """jvp of reduce_max / reduce_min (JAX's rule): the tangent is the mean of the tangents at the
    positions equal to the result, so ties share it evenly."""
    def rule(primals, tangents, *, axes):
        from .elementwise import div, eq
        from .structural import broadcast_in_dim, convert_element_type
        x, = primals
        t, = tangents
        ans = prim.bind(x, axes=axes)
        aval = aval_of(x)
        kept = tuple(d for d in range(aval.ndim) if d not in axes)
        at_ans = convert_element_type(eq(x, broadcast_in_dim(ans, aval.shape, kept)), aval.dtype)
        counts = broadcast_in_dim(reduce_sum(at_ans, axes), aval.shape, kept)
        return ans, reduce_sum(_mul(t, div(at_ans, counts)), axes)
    return rule


ad.jvp_rules[reduce_max_p] = _reduce_chooser_jvp(reduce_max_p)
batching.batching_rules[reduce_max_p] = _batch_reducer(reduce_max_p)


# ----- reduce_min ----------------------------------------------------------------------------

def reduce_min(operand, axes):
    """The minimum of `operand` over `axes`; NaN propagates; an empty axis gives the dtype's highest
    value (+inf, iinfo.max or True).

    Example: `lax.reduce_min(jnp.array([[1, 5], [7, 2]]), (1,))` is `[1, 2]`.
    """
    return reduce_min_p.bind(operand, axes=_axes(axes))


reduce_min_p = _monoid_reduction("reduce_min", "min", NUMBER + BOOL)
ad.jvp_rules[reduce_min_p] = _reduce_chooser_jvp(reduce_min_p)
batching.batching_rules[reduce_min_p] = _batch_reducer(reduce_min_p)


# ----- reduce_and / reduce_or / reduce_xor ---------------------------------------------------

def reduce_and(operand, axes):
    """Logical (bool) or bitwise (int) AND over `axes`; an empty axis gives True / all bits set.

    Example: `lax.reduce_and(jnp.array([True, False]), (0,))` is `False`.
    """
    return reduce_and_p.bind(operand, axes=_axes(axes))


reduce_and_p = _monoid_reduction("reduce_and", "and", INT_OR_BOOL)


def reduce_or(operand, axes):
    """Logical (bool) or bitwise (int) OR over `axes`; an empty axis gives False / 0.

    Example: `lax.reduce_or(jnp.array([True, False]), (0,))` is `True`.
    """
    return reduce_or_p.bind(operand, axes=_axes(axes))


reduce_or_p = _monoid_reduction("reduce_or", "or", INT_OR_BOOL)


def reduce_xor(operand, axes):
    """Logical (bool) or bitwise (int) XOR over `axes`; an empty axis gives False / 0.

    Example: `lax.reduce_xor(jnp.array([True, True, True]), (0,))` is `True`.
    """
    return reduce_xor_p.bind(operand, axes=_axes(axes))


reduce_xor_p = _monoid_reduction("reduce_xor", "xor", INT_OR_BOOL)
defnondiff(reduce_and_p, reduce_or_p, reduce_xor_p)  # integer and bool outputs
batching.batching_rules[reduce_and_p] = _batch_reducer(reduce_and_p)
batching.batching_rules[reduce_or_p] = _batch_reducer(reduce_or_p)
batching.batching_rules[reduce_xor_p] = _batch_reducer(reduce_xor_p)


# ----- argmax / argmin -----------------------------------------------------------------------

def argmax(operand, axis, index_dtype):
    """The index of the largest element along `axis`, as `index_dtype`; the first one on ties,
    and NaN counts as the largest value (as `numpy.argmax`). An empty axis gives 0.

    Example: `lax.argmax(jnp.array([1., 3., 3.]), 0, jnp.int32)` is `1`.
    """
    return argmax_p.bind(operand, axes=(int(axis),), index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """The index of the smallest element along `axis`, as `index_dtype`; the first one on ties,
    and NaN counts as the smallest value (as `numpy.argmin`). An empty axis gives 0.

    Example: `lax.argmin(jnp.array([2., 1., 1.]), 0, jnp.int32)` is `1`.
    """
    return argmin_p.bind(operand, axes=(int(axis),), index_dtype=dtypes.canonicalize_dtype(index_dtype))


def _argminmax_primitive(name, direction, kind):
    def shape_rule(operand, *, axes, index_dtype):
        if len(axes) != 1:
            raise ValueError(f"{name} takes exactly one axis, got axes {axes}")
        return _reduced_shape(name, operand, axes)

    def dtype_rule(operand, *, axes, index_dtype):
        check_dtype_accepted(name, operand.dtype, NUMBER + BOOL)
        if not dtypes.is_int(index_dtype):
            raise TypeError(f"{name}: index_dtype must be an integer type, got {index_dtype}")
        return index_dtype

    def lower(ctx, x, *, axes, index_dtype):
        b = ctx.b
        aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
        dt = aval_in.dtype
        iota = b.op("stablehlo.iota", [], [aval_in.update(dtype=index_dtype)],
                    {"iota_dimension": f"{axes[0]} : i64"})
        init_v = b.constant(identity(kind, dt), dt, ())
        init_i = b.constant(0, index_dtype, ())
        sv, si = ShapedArray((), dt), ShapedArray((), index_dtype)

        def body(r, av, ai, bv, bi):
            # Keep (av, ai) over (bv, bi) when av is strictly better, or NaN while bv is not, or they
            # tie (equal, or both NaN) and ai comes first: an order-independent "first winner".
            if dtypes.is_complex(dt):
                better, same = _complex_better_same(r, av, bv, direction, sv)
            elif dtypes.is_float(dt):
                better = lowering.compare(r, av, bv, direction, sv)
                a_nan = lowering.compare(r, av, av, "NE", sv)
                b_nan = lowering.compare(r, bv, bv, "NE", sv)
                b_num = r.op("stablehlo.not", [b_nan], [sv.update(dtype=dtypes.bool_)])
                better = _or(r, better, _and(r, a_nan, b_num))
                same = _or(r, lowering.compare(r, av, bv, "EQ", sv), _and(r, a_nan, b_nan))
            else:
                better = lowering.compare(r, av, bv, direction, sv)
                same = lowering.compare(r, av, bv, "EQ", sv)
            first = lowering.compare(r, ai, bi, "LT", si)
            keep_a = _or(r, better, _and(r, same, first))
            return [r.op("stablehlo.select", [keep_a, av, bv], [sv]),
                    r.op("stablehlo.select", [keep_a, ai, bi], [si])]

        region = b.region([sv, si, sv, si], body)
        outs = b.op("stablehlo.reduce", [x, iota, init_v, init_i],
                    [aval_out.update(dtype=dt), aval_out], {"dimensions": i64_array(axes)}, regions=[region])
        return outs[1]

    prim = standard_primitive(name, shape_rule, dtype_rule)
    lowering.register(prim, lower)
    return prim


def _complex_better_same(b, av, bv, direction, sv):
    """argmax/argmin's choice for complex values: `av` strictly better in NumPy's lexicographic order
    or NaN (either part) while `bv` is not; `same` when equal or both NaN."""
    from .elementwise import _real_dtype, complex_isnan, complex_wins
    part = sv.update(dtype=_real_dtype(sv.dtype))
    ra, ia = b.op("stablehlo.real", [av], [part]), b.op("stablehlo.imag", [av], [part])
    rb, ib = b.op("stablehlo.real", [bv], [part]), b.op("stablehlo.imag", [bv], [part])
    a_nan, b_nan = complex_isnan(b, ra, ia, part), complex_isnan(b, rb, ib, part)
    b_num = b.op("stablehlo.not", [b_nan], [b.type_of(b_nan)])
    better = _or(b, complex_wins(b, (ra, ia), (rb, ib), direction, part), a_nan)
    better = _and(b, better, b_num)  # (a NaN beats a number; nothing beats a NaN)
    equal = _and(b, lowering.compare(b, ra, rb, "EQ", part), lowering.compare(b, ia, ib, "EQ", part))
    return better, _or(b, equal, _and(b, a_nan, b_nan))


def _and(b, x, y):
    return b.op("stablehlo.and", [x, y], [b.type_of(x)])


def _or(b, x, y):
    return b.op("stablehlo.or", [x, y], [b.type_of(x)])


argmax_p = _argminmax_primitive("argmax", "GT", "max")
argmin_p = _argminmax_primitive("argmin", "LT", "min")
defnondiff(argmax_p, argmin_p)
batching.batching_rules[argmax_p] = _batch_reducer(argmax_p)  # its one axis is `axes=(axis,)`
batching.batching_rules[argmin_p] = _batch_reducer(argmin_p)


# ----- reduce_window -------------------------------------------------------------------------

def padtype_to_pads(in_shape, window_shape, window_strides, padding):
    """Explicit (low, high) pads for 'VALID' (none) or 'SAME' (output size ceil(n / stride), the
    extra pad on the high side), as `lax.padtype_to_pads`."""
    if not isinstance(padding, str):
        return tuple((int(lo), int(hi)) for lo, hi in padding)
    mode = padding.upper()
    if mode == "VALID":
        return ((0, 0),) * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"Unknown padding type: {padding!r}; expected 'SAME', 'SAME_LOWER', 'VALID' "
                         "or a sequence of (low, high) pairs.")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides, strict=True):
        out = -(-n // s)
        total = max(0, (out - 1) * s + w - n)
        lo = total // 2 if mode == "SAME" else total - total // 2
        pads.append((lo, total - lo))
    return tuple(pads)


def _window_params(name, operand_shape, window_dimensions, window_strides, padding, base_dilation,
                   window_dilation):
    n = len(operand_shape)
    window_dimensions = tuple(int(d) for d in window_dimensions)
    window_strides = tuple(int(s) for s in window_strides)
    base_dilation = (1,) * n if base_dilation is None else tuple(int(d) for d in base_dilation)
    window_dilation = (1,) * n if window_dilation is None else tuple(int(d) for d in window_dilation)
    for what, v in (("window_dimensions", window_dimensions), ("window_strides", window_strides),
                    ("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if len(v) != n:
            raise TypeError(f"{name}: {what} must have one entry per operand dimension; got {what} {v} for "
                            f"an operand of shape {tuple(operand_shape)}.")
    if isinstance(padding, str):
        # as JAX: 'SAME' sizes the output from the undilated operand and the dilated window
        dilated_w = tuple((w - 1) * wd + 1 for w, wd in zip(window_dimensions, window_dilation))
        padding = padtype_to_pads(operand_shape, dilated_w, window_strides, padding)
    else:
        padding = tuple((int(lo), int(hi)) for lo, hi in padding)
        if len(padding) != n:
            raise TypeError(f"{name}: padding must have one (low, high) pair per operand dimension; got "
                            f"{padding} for an operand of shape {tuple(operand_shape)}.")
    return window_dimensions, window_strides, padding, base_dilation, window_dilation


def _reduce_window_shape_rule(name, operand, window_dimensions, window_strides, padding, base_dilation,
                              window_dilation):
    out = []
    for d, w, s, (lo, hi), bd, wd in zip(operand.shape, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation, strict=True):
        if w < 1 or s < 1 or bd < 1 or wd < 1:
            raise TypeError(f"{name}: window dimensions, strides and dilations must be positive; got "
                            f"window_dimensions {window_dimensions}, window_strides {window_strides}, "
                            f"base_dilation {base_dilation}, window_dilation {window_dilation}.")
        size = ((d - 1) * bd + 1 if d else 0) + lo + hi
        win = (w - 1) * wd + 1
        out.append(0 if size < win else (size - win) // s + 1)
    return tuple(out)


def _reduce_window_hlo(b, x, init, aval_out, hlo_op, dtype, window_dimensions, window_strides, padding,
                       base_dilation, window_dilation, body=None):
    """Emit `stablehlo.reduce_window` of one operand with a scalar body applying `hlo_op` (or `body`)."""
    scalar = ShapedArray((), dtype)
    if body is None:
        def body(r, acc, v):
            return r.op(hlo_op, [acc, v], [scalar])
    region = b.region([scalar, scalar], body)
    n = len(window_dimensions)
    attrs = {"window_dimensions": i64_array(window_dimensions),
             "window_strides": i64_array(window_strides),
             "base_dilations": i64_array(base_dilation),
             "window_dilations": i64_array(window_dilation)}
    if n:
        pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
        attrs["padding"] = f"dense<[{pads}]> : tensor<{n}x2xi64>"
    return b.op("stablehlo.reduce_window", [x, init], [aval_out], attrs, regions=[region])


def _reduce_window_primitive(name, kind, accepted):
    """A JAX-style `reduce_window_<kind>_p`: the monoid's identity is the init (and padding) value."""
    def shape_rule(operand, **p):
        return _reduce_window_shape_rule(name, operand, **p)

    def dtype_rule(operand, **p):
        check_dtype_accepted(name, operand.dtype, accepted)
        return operand.dtype

    def lower(ctx, x, **p):
        dt = ctx.avals_in[0].dtype
        init = ctx.b.constant(identity(kind, dt), dt, ())
        return _reduce_window_hlo(ctx.b, x, init, ctx.avals_out[0], _HLO_OPS[kind], dt, **p)

    prim = standard_primitive(name, shape_rule, dtype_rule, lambda operand, **_: operand.weak_type)
    lowering.register(prim, lower)
    return prim


def _bind_window(prim, operand, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    params = _window_params(prim.name, aval_of(operand).shape, window_dimensions, window_strides, padding,
                            base_dilation, window_dilation)
    names = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")
    return _window_bind(prim, operand, **dict(zip(names, params, strict=True)))


def reduce_window_sum(operand, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None):
    """Sum over sliding windows (sum pooling); padding counts as 0.

    Example: `lax.reduce_window_sum(jnp.arange(4.), (2,), (1,), 'VALID')` is `[1., 3., 5.]`.
    """
    return _bind_window(reduce_window_sum_p, operand, window_dimensions, window_strides, padding,
                        base_dilation, window_dilation)


reduce_window_sum_p = _reduce_window_primitive("reduce_window_sum", "add", NUMBER)


def _window_bind(prim, x, **params):
    """`prim.bind(x, **params)` for rules, with any negative padding realized as a slice of the
    output instead: XLA's simplifier can crash (a RET_CHECK abort, not an error) on reduce_window
    with negative padding. Padding the low side by whole strides more shifts the outputs by whole
    positions; a larger high side only adds trailing outputs."""
    padding, strides = params["padding"], params["window_strides"]
    if all(lo >= 0 and hi >= 0 for lo, hi in padding):
        return prim.bind(x, **params)
    from .structural import slice as lax_slice
    out_shape = _reduce_window_shape_rule(prim.name, aval_of(x), **params)
    new_padding, starts = [], []
    for (lo, hi), st in zip(padding, strides, strict=True):
        extra = -(lo // st) * st if lo < 0 else 0
        new_padding.append((lo + extra, max(hi, 0)))
        starts.append(extra // st)
    out = prim.bind(x, **dict(params, padding=tuple(new_padding)))
    return lax_slice(out, tuple(starts), tuple(b + n for b, n in zip(starts, out_shape, strict=True)))


def _reduce_window_sum_transpose(ct, operand, *, window_dimensions, window_strides, padding, base_dilation,
                                 window_dilation):
    # out[o] = sum_w xp[o*s + w*wd] (xp: the dilated, padded operand), so operand element i (at
    # p = lo + i*bd in xp) receives sum_w ctD[p - w*wd], ctD being ct dilated by the stride. That is
    # again a window sum: of ct base-dilated by s, strided by bd, with the window read backwards
    # (all ones, so only the offset (W-1)*wd changes). Negative padding crops, as in XLA.
    aval = operand.aval
    ct_shape = aval_of(ct).shape
    if aval.size == 0 or math.prod(ct_shape) == 0:
        from .structural import full
        return [full(aval.shape, 0, aval.dtype)]
    pads = []
    for n, o, w, s, (lo, _), bd, wd in zip(aval.shape, ct_shape, window_dimensions, window_strides, padding,
                                           base_dilation, window_dilation, strict=True):
        pads.append(((w - 1) * wd - lo, (n - 1) * bd - (o - 1) * s + lo))
    return [_window_bind(reduce_window_sum_p, ct, window_dimensions=window_dimensions,
                         window_strides=base_dilation, padding=tuple(pads), base_dilation=window_strides,
                         window_dilation=window_dilation)]


deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)
batching.batching_rules[reduce_window_sum_p] = _batch_window(reduce_window_sum_p)


def reduce_window_max(operand, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None):
    """Maximum over sliding windows (max pooling); padding counts as -inf (the dtype's lowest).

    Example: `lax.reduce_window_max(jnp.array([1., 3., 2.]), (2,), (1,), 'VALID')` is `[3., 3.]`.
    """
    return _bind_window(reduce_window_max_p, operand, window_dimensions, window_strides, padding,
                        base_dilation, window_dilation)


reduce_window_max_p = _reduce_window_primitive("reduce_window_max", "max", REAL + BOOL)


def _reduce_window_chooser_jvp(prim):
    """jvp of reduce_window_max / min: each output takes the tangent at the first position of its
    window (in row-major window order) holding the result.

    Built from existing primitives rather than XLA's select-and-gather: for each of the K =
    prod(window_dimensions) window offsets, a window-1 reduce_window reads that offset's element of
    every window (padding reads as the identity for x and 0 for the tangent). Cost: K strided
    reads of x and of the tangent plus K compares and selects, each the size of the output:
    O(K * output size) work and memory traffic, linear in K (fine for pooling windows)."""
    def rule(primals, tangents, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        from .elementwise import and_, eq, not_, select_n
        from .structural import full_like
        x, = primals
        t, = tangents
        params = dict(window_dimensions=window_dimensions, window_strides=window_strides, padding=padding,
                      base_dilation=base_dilation, window_dilation=window_dilation)
        ans = prim.bind(x, **params)
        out_aval = aval_of(ans)
        t_out = full_like(ans, 0)
        if out_aval.size == 0:
            return ans, t_out
        ones = (1,) * len(window_dimensions)
        found = None
        for offset in np.ndindex(*window_dimensions):
            view = dict(window_dimensions=ones, window_strides=window_strides, base_dilation=base_dilation,
                        window_dilation=ones,
                        padding=tuple((lo - k * wd, (o - 1) * s + 1 - ((n - 1) * bd + 1 if n else 0) - lo + k * wd)
                                      for k, wd, o, s, (lo, _), n, bd in
                                      zip(offset, window_dilation, out_aval.shape, window_strides, padding,
                                          aval_of(x).shape, base_dilation, strict=True)))
            hit = eq(_window_bind(prim, x, **view), ans)
            if found is not None:
                hit = and_(hit, not_(found))
            t_out = select_n(hit, t_out, _window_bind(reduce_window_sum_p, t, **view))
            found = hit if found is None else _or_lax(found, hit)
        return ans, t_out
    return rule


def _or_lax(x, y):
    from .elementwise import or_
    return or_(x, y)


ad.jvp_rules[reduce_window_max_p] = _reduce_window_chooser_jvp(reduce_window_max_p)
batching.batching_rules[reduce_window_max_p] = _batch_window(reduce_window_max_p)


def reduce_window_min(operand, window_dimensions, window_strides, padding, base_dilation=None,
                      window_dilation=None):
    """Minimum over sliding windows; padding counts as +inf (the dtype's highest).

    Example: `lax.reduce_window_min(jnp.array([1., 3., 2.]), (2,), (1,), 'VALID')` is `[1., 2.]`.
    """
    return _bind_window(reduce_window_min_p, operand, window_dimensions, window_strides, padding,
                        base_dilation, window_dilation)


reduce_window_min_p = _reduce_window_primitive("reduce_window_min", "min", REAL + BOOL)
ad.jvp_rules[reduce_window_min_p] = _reduce_window_chooser_jvp(reduce_window_min_p)
batching.batching_rules[reduce_window_min_p] = _batch_window(reduce_window_min_p)


def _monoid_kind(computation):
    """'add', 'mul', 'max', ... for a lax binary function, or None."""
    from .. import lax
    for kind, names in (("add", ("add",)), ("mul", ("mul",)), ("max", ("max",)), ("min", ("min",)),
                        ("and", ("bitwise_and", "and_")), ("or", ("bitwise_or", "or_")),
                        ("xor", ("bitwise_xor", "xor"))):
        for n in names:
            if getattr(lax, n, None) is not None and computation is getattr(lax, n):
                return kind
    return None


def _concrete_scalar(x):
    """The Python value of a concrete scalar init value, or None when it is traced."""
    from ..trace import Tracer
    if isinstance(x, Tracer):
        return None
    v = np.asarray(x)
    return v.item() if v.ndim == 0 else None


def _is_identity(kind, init, dtype):
    v = _concrete_scalar(init)
    if v is None:
        return False
    ident = identity(kind, dtype)
    if np.dtype(dtype).kind in "iu" and kind == "and":
        return int(v) == int(np.array(ident).astype(dtype))
    return v == ident


def reduce_window(operand, init_value, computation, window_dimensions, window_strides, padding,
                  base_dilation=None, window_dilation=None):
    """Reduce sliding windows of `operand` with `computation` in (lax.add, lax.max, lax.min),
    starting from `init_value`, which (as in XLA) also fills the padding.

    `padding` is 'SAME', 'VALID' or a sequence of (low, high) pairs. Example, 2x2 max pooling:
    `lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), 'VALID')`.
    """
    kind = _monoid_kind(computation)
    prims = {"add": reduce_window_sum_p, "max": reduce_window_max_p, "min": reduce_window_min_p}
    if kind not in prims:
        raise NotImplementedError("reduce_window supports computation in (lax.add, lax.max, lax.min); got "
                                  f"{computation!r}.")
    dtype = aval_of(operand).dtype
    out = _bind_window(prims[kind], operand, window_dimensions, window_strides, padding, base_dilation,
                       window_dilation)
    if _is_identity(kind, init_value, dtype):
        return out
    from .structural import broadcast_in_dim, convert_element_type
    init = convert_element_type(init_value, dtype)
    init = broadcast_in_dim(init, aval_of(out).shape, ())
    if kind != "add":
        # max and min are idempotent: padding filled with init changes nothing beyond init itself
        return computation(out, init)
    # a sum counts init once, plus once for every padding (or dilation) slot inside each window
    from .elementwise import add, mul, sub
    ones = broadcast_in_dim(convert_element_type(1, dtype), aval_of(operand).shape, ())
    real = _bind_window(reduce_window_sum_p, ones, window_dimensions, window_strides, padding,
                        base_dilation, window_dilation)
    slots = convert_element_type(1 + math.prod(int(w) for w in window_dimensions), dtype)
    slots = broadcast_in_dim(slots, aval_of(out).shape, ())
    return add(out, mul(init, sub(slots, real)))


# ----- reduce (generic, for monoid computations) ---------------------------------------------

_REDUCE_PRIMS = {"add": "reduce_sum", "mul": "reduce_prod", "max": "reduce_max", "min": "reduce_min",
                 "and": "reduce_and", "or": "reduce_or", "xor": "reduce_xor"}


def reduce(operands, init_values, computation, dimensions):
    """Reduce `operands` (an array or a tuple of arrays) over `dimensions` with `computation`,
    starting from `init_values` (one scalar per operand, the computation's identity). The monoids
    lax.add, lax.mul, lax.max, lax.min and lax.bitwise_and/or/xor use their own reductions; any
    other (associative) computation, taking and returning one scalar per operand (tuples when
    there are several operands), binds `reduce_p`.

    Example: `lax.reduce(x, 0., lax.add, (0,))` is `lax.reduce_sum(x, (0,))`, and
    `lax.reduce(x, 0., lambda a, b: a + b, (0,))` computes the same through `reduce_p`.
    """
    single = not isinstance(operands, (tuple, list))
    ops = (operands,) if single else tuple(operands)
    inits = (init_values,) if single or not isinstance(init_values, (tuple, list)) else tuple(init_values)
    if len(ops) != len(inits):
        raise TypeError(f"reduce: got {len(ops)} operands but {len(inits)} init values; pass one init value "
                        "per operand.")
    kind = _monoid_kind(computation)
    if kind is None:
        from .reduce_general import reduce_general
        outs = reduce_general(ops, inits, computation, dimensions)
        return outs[0] if single else tuple(outs)
    fn = globals()[_REDUCE_PRIMS[kind]]
    outs = []
    for x, init in zip(ops, inits, strict=True):
        dtype = aval_of(x).dtype
        if kind in ("max", "min") and dtype == dtypes.bool_:
            kind_fn = reduce_and if (kind == "min") else reduce_or
            out = kind_fn(x, dimensions)
        else:
            out = fn(x, dimensions)
        if not _is_identity(kind, init, dtype):
            from .structural import broadcast_in_dim, convert_element_type
            init = broadcast_in_dim(convert_element_type(init, dtype), aval_of(out).shape, ())
            out = computation(out, init)
        outs.append(out)
    return outs[0] if single else tuple(outs)


# ----- cumulative reductions -----------------------------------------------------------------

def _cumulative_primitive(name, kind, accepted, body=None):
    """`name(operand, axis=0, reverse=False)`: running reduction along `axis`, lowered to a
    reduce_window whose window spans the whole axis, padded by length-1 on the leading side."""
    def shape_rule(operand, *, axis, reverse):
        if not 0 <= axis < max(operand.ndim, 1) or operand.ndim == 0:
            raise ValueError(f"{name}: axis {axis} is out of bounds for an operand of shape {operand.shape}")
        return operand.shape

    def dtype_rule(operand, *, axis, reverse):
        check_dtype_accepted(name, operand.dtype, accepted)
        return operand.dtype

    def lower(ctx, x, *, axis, reverse):
        aval = ctx.avals_in[0]
        n = aval.shape[axis]
        if n == 0:
            return x
        window = tuple(n if i == axis else 1 for i in range(aval.ndim))
        pad = tuple(((0, n - 1) if reverse else (n - 1, 0)) if i == axis else (0, 0) for i in range(aval.ndim))
        ones = (1,) * aval.ndim
        init = ctx.b.constant(identity(kind, aval.dtype), aval.dtype, ())
        return _reduce_window_hlo(ctx.b, x, init, ctx.avals_out[0], _HLO_OPS.get(kind), aval.dtype,
                                  window, ones, pad, ones, ones, body=body)

    prim = standard_primitive(name, shape_rule, dtype_rule, lambda operand, **_: operand.weak_type)
    lowering.register(prim, lower)
    return prim


def _cum_bind(prim, operand, axis, reverse):
    ndim = aval_of(operand).ndim
    axis = int(axis)
    if ndim and -ndim <= axis < 0:
        axis += ndim
    return prim.bind(operand, axis=axis, reverse=bool(reverse))


def cumsum(operand, axis=0, reverse=False):
    """Running sum along `axis` (from the end when `reverse`).

    Example: `lax.cumsum(jnp.array([1, 2, 3]))` is `[1, 3, 6]`; with reverse=True, `[6, 5, 3]`.
    """
    return _cum_bind(cumsum_p, operand, axis, reverse)


cumsum_p = _cumulative_primitive("cumsum", "add", NUMBER)
deflinear(cumsum_p, lambda ct, operand, *, axis, reverse: [cumsum(ct, axis, not reverse)])
batching.batching_rules[cumsum_p] = _batch_cumulative(cumsum_p)


def _cumulative_jvp(prim, kind, combine):
    """jvp of a running reduction from its associative-scan form (as JAX derives it): a
    Hillis-Steele scan of (value, tangent) pairs, log2(n) levels each combining every element with
    the one 2^k places earlier; `combine(a, ta, b, tb) -> (value, tangent)` is linear in the
    tangents. The primal output is the primitive's own; the scan only supplies the tangent.
    Cost: O(n log n) elementwise work along the axis."""
    def rule(primals, tangents, *, axis, reverse):
        x, = primals
        t, = tangents
        ans = prim.bind(x, axis=axis, reverse=reverse)
        n = aval_of(x).shape[axis]
        y, ty = x, t
        d = 1
        while d < n:
            prev, t_prev = _shift(y, d, axis, reverse, identity(kind, aval_of(x).dtype)), _shift(ty, d, axis, reverse, 0)
            y, ty = combine(prev, t_prev, y, ty)
            d *= 2
        return ans, ty
    ad.jvp_rules[prim] = rule


def cumprod(operand, axis=0, reverse=False):
    """Running product along `axis`. Example: `lax.cumprod(jnp.array([1, 2, 3]))` is `[1, 2, 6]`."""
    return _cum_bind(cumprod_p, operand, axis, reverse)


cumprod_p = _cumulative_primitive("cumprod", "mul", NUMBER)


def _prod_combine(a, ta, b, tb):
    from .elementwise import add
    return _mul(a, b), add(_mul(ta, b), _mul(a, tb))


_cumulative_jvp(cumprod_p, "mul", _prod_combine)
batching.batching_rules[cumprod_p] = _batch_cumulative(cumprod_p)


def cummax(operand, axis=0, reverse=False):
    """Running maximum along `axis`. Example: `lax.cummax(jnp.array([1, 3, 2]))` is `[1, 3, 3]`."""
    return _cum_bind(cummax_p, operand, axis, reverse)


cummax_p = _cumulative_primitive("cummax", "max", REAL + BOOL)


def _chooser_combine(which):
    """Combine for running max / min: the tangent of the winner; on ties half of each, as the jvp
    of lax.max (JAX's convention)."""
    def combine(a, ta, b, tb):
        from . import elementwise as ew
        from .structural import full_like
        better = ew.gt if which == "max" else ew.lt
        w_a = ew.select_n(better(a, b), ew.select_n(ew.eq(a, b), full_like(a, 0), full_like(a, 0.5)),
                          full_like(a, 1))
        w_b = ew.sub(full_like(a, 1), w_a)
        value = ew.max(a, b) if which == "max" else ew.min(a, b)
        add = ew.add
        return value, add(_mul(ta, w_a), _mul(tb, w_b))
    return combine


_cumulative_jvp(cummax_p, "max", _chooser_combine("max"))
batching.batching_rules[cummax_p] = _batch_cumulative(cummax_p)


def cummin(operand, axis=0, reverse=False):
    """Running minimum along `axis`. Example: `lax.cummin(jnp.array([3, 1, 2]))` is `[3, 1, 1]`."""
    return _cum_bind(cummin_p, operand, axis, reverse)


cummin_p = _cumulative_primitive("cummin", "min", REAL + BOOL)
_cumulative_jvp(cummin_p, "min", _chooser_combine("min"))
batching.batching_rules[cummin_p] = _batch_cumulative(cummin_p)


def _logaddexp_body(r, a, b):
    """log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)), exact for infinities (where a - b is NaN)."""
    t = r.type_of(a)
    m = r.op("stablehlo.maximum", [a, b], [t])
    d = r.op("stablehlo.subtract", [a, b], [t])
    d = r.op("stablehlo.negate", [r.op("stablehlo.abs", [d], [t])], [t])
    s = r.op("stablehlo.add", [m, r.op("stablehlo.log_plus_one", [r.op("stablehlo.exponential", [d], [t])], [t])], [t])
    dtype = _DTYPE_OF_TYPE[t]
    scalar = ShapedArray((), dtype)
    is_inf = lowering.compare(r, r.op("stablehlo.abs", [m], [t]), r.constant(np.inf, dtype, ()), "EQ", scalar)
    return r.op("stablehlo.select", [is_inf, m, s], [t])


_DTYPE_OF_TYPE = {lowering.tensor_type((), d): d for d in (dtypes.float16, dtypes.bfloat16, dtypes.float32,
                                                          dtypes.float64)}


def cumlogsumexp(operand, axis=0, reverse=False):
    """Running log(sum(exp(x))) along `axis`, computed stably.

    Example: `lax.cumlogsumexp(jnp.zeros(3))` is `[0., log 2, log 3]`.
    """
    return _cum_bind(cumlogsumexp_p, operand, axis, reverse)


cumlogsumexp_p = _cumulative_primitive("cumlogsumexp", "max", FLOAT, body=_logaddexp_body)


def _logaddexp_combine(a, ta, b, tb):
    # c = log(e^a + e^b); dc = e^(a-c) ta + e^(b-c) tb, weights <= 1 so nothing overflows. Where
    # c = -inf (both inputs -inf, e.g. the scan's fill) the weights would be NaN: use 0.
    from .elementwise import abs, add, eq, exp, log1p, max, neg, select_n, sub
    from .structural import full_like
    m = max(a, b)
    c = add(m, log1p(exp(neg(abs(sub(a, b))))))
    c = select_n(eq(abs(m), full_like(m, np.inf)), c, m)
    empty = eq(c, full_like(c, -np.inf))
    safe_c = select_n(empty, c, full_like(c, 0))
    zero = full_like(c, 0)
    w_a = select_n(empty, exp(sub(a, safe_c)), zero)
    w_b = select_n(empty, exp(sub(b, safe_c)), zero)
    return c, add(_mul(ta, w_a), _mul(tb, w_b))


_cumulative_jvp(cumlogsumexp_p, "max", _logaddexp_combine)
batching.batching_rules[cumlogsumexp_p] = _batch_cumulative(cumlogsumexp_p)

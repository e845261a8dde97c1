"""Contractions: `dot_general` and the wrappers built on it (`dot`, `batch_matmul`).

`dot_general(lhs, rhs, ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)))` multiplies
and sums over the contracting dimensions, pairs the batch dimensions, and returns dimensions in
the order: batch, then lhs free dimensions, then rhs free dimensions (JAX's convention).
"""
import numpy as np

from .. import dtypes
from ..interpreters import batching, lowering
from ._base import ANY, aval_of, check_dtype_accepted, defbilinear, dtype_kind, standard_primitive
from .precision import algorithm_lowering, canonicalize_precision, is_algorithm, precision_attr

__all__ = ["dot_general", "dot", "batch_matmul"]


# ----- dot_general ---------------------------------------------------------------------------

def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """General dot product: contract `lhs` and `rhs` over paired dimensions, batch over others.

    `dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`, each a
    sequence of axes. The result has the batch dimensions, then the free (neither batch nor
    contracting) dimensions of `lhs`, then those of `rhs`. Operands must share a dtype; the
    result has that dtype, or `preferred_element_type` (e.g. int8 operands accumulating to int32,
    bfloat16 to float32). `precision` (a `lax.Precision`, its name, or a pair for (lhs, rhs); None:
    the config's `default_matmul_precision`) becomes the program's `precision_config`.

    Example: a batched matrix product of (B, M, K) and (B, K, N) is
    `lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,))))`, of shape (B, M, N).
    """
    precision = canonicalize_precision(precision, "dot_general", allow_algorithm=True)
    (lc, rc), (lb, rb) = dimension_numbers
    dims = ((_axes(lc), _axes(rc)), (_axes(lb), _axes(rb)))
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dims, precision=precision,
                              preferred_element_type=preferred_element_type)


def _axes(seq):
    if isinstance(seq, (int, np.integer)):
        return (int(seq),)
    return tuple(int(a) for a in seq)


def _dot_general_shape_rule(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    for name, aval, axes in (("lhs batch", lhs, lb), ("rhs batch", rhs, rb),
                             ("lhs contracting", lhs, lc), ("rhs contracting", rhs, rc)):
        if any(a < 0 or a >= aval.ndim for a in axes):
            raise TypeError(f"dot_general requires {name} dimensions to be in range [0, {aval.ndim}) for an "
                            f"operand of shape {aval.shape}, got {name.split()[1]} dimensions {axes}.")
        if len(set(axes)) != len(axes):
            raise TypeError(f"dot_general requires {name} dimensions to be distinct, got {axes}.")
    if len(lb) != len(rb):
        raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
                        f"same length, got {lb} and {rb}.")
    if len(lc) != len(rc):
        raise TypeError("dot_general requires lhs contracting dimensions and rhs contracting dimensions to "
                        f"have the same length, got {lc} and {rc}.")
    for side, b, c in (("lhs", lb, lc), ("rhs", rb, rc)):
        if set(b) & set(c):
            raise TypeError(f"dot_general requires {side} batch dimensions and {side} contracting dimensions "
                            f"to be disjoint, got {side}_batch {b} and {side}_contracting {c}.")
    lb_shape = tuple(lhs.shape[a] for a in lb)
    rb_shape = tuple(rhs.shape[a] for a in rb)
    if lb_shape != rb_shape:
        raise TypeError(f"dot_general requires batch dimensions to have the same shape, got {lb_shape} and "
                        f"{rb_shape}.")
    lc_shape = tuple(lhs.shape[a] for a in lc)
    rc_shape = tuple(rhs.shape[a] for a in rc)
    if lc_shape != rc_shape:
        raise TypeError(f"dot_general requires contracting dimensions to have the same shape, got {lc_shape} "
                        f"and {rc_shape}.")
    lhs_free = tuple(d for i, d in enumerate(lhs.shape) if i not in lb and i not in lc)
    rhs_free = tuple(d for i, d in enumerate(rhs.shape) if i not in rb and i not in rc)
    return lb_shape + lhs_free + rhs_free


# (operand kind -> result kinds allowed for preferred_element_type), as JAX allows them
_PREFERRED_KINDS = {"b": "biuf", "i": "iuf", "u": "iuf", "f": "f", "c": "c"}


def _dot_general_dtype_rule(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    for i, a in enumerate((lhs, rhs)):
        check_dtype_accepted("dot_general", a.dtype, ANY, i)
    if lhs.dtype != rhs.dtype:
        raise TypeError("dot_general requires operands of the same dtype, got "
                        f"{dtypes.short_name(lhs.dtype)} and {dtypes.short_name(rhs.dtype)}. "
                        "(Tip: jnp.matmul, jnp.dot and jnp.einsum promote dtypes automatically.)")
    if preferred_element_type is None:
        return lhs.dtype
    if dtype_kind(preferred_element_type) not in _PREFERRED_KINDS[dtype_kind(lhs.dtype)]:
        raise TypeError(f"dot_general: preferred_element_type {dtypes.short_name(preferred_element_type)} is "
                        f"incompatible with operands of dtype {dtypes.short_name(lhs.dtype)}; compatible "
                        "pairs are (integer or bool, integer or floating), (floating, floating) and "
                        "(complex, complex).")
    return preferred_element_type


def _dot_general_weak_type_rule(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    return preferred_element_type is None and lhs.weak_type and rhs.weak_type


def _dot_general_lowering(ctx, x, y, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    aval_out = ctx.avals_out[0]
    lhs_aval, rhs_aval = ctx.avals_in
    out_dtype = aval_out.dtype
    # StableHLO dots may widen (int8 x int8 -> int32, bf16 x bf16 -> f32) natively. XLA has no
    # portable boolean dot, so booleans run as int32 (0/1 products; a sum > 0 means true).
    compute = dtypes.int32 if out_dtype == dtypes.bool_ else out_dtype
    if compute != out_dtype or (lhs_aval.dtype == dtypes.bool_):
        x = ctx.b.op("stablehlo.convert", [x], [lhs_aval.update(dtype=compute)])
        y = ctx.b.op("stablehlo.convert", [y], [rhs_aval.update(dtype=compute)])
    attr = ("#stablehlo.dot<"
            f"lhs_batching_dimensions = [{', '.join(map(str, lb))}], "
            f"rhs_batching_dimensions = [{', '.join(map(str, rb))}], "
            f"lhs_contracting_dimensions = [{', '.join(map(str, lc))}], "
            f"rhs_contracting_dimensions = [{', '.join(map(str, rc))}]>")
    attrs = {"dot_dimension_numbers": attr}
    if is_algorithm(precision):
        # StableHLO's `algorithm`: operands in the storage type the algorithm takes, the product
        # in its accumulation type, then the result's dtype
        storage, acc, attrs["algorithm"] = algorithm_lowering(precision, lhs_aval.dtype, rhs_aval.dtype)
        if storage is not None and storage != lhs_aval.dtype:
            x = ctx.b.op("stablehlo.convert", [x], [lhs_aval.update(dtype=storage)])
            y = ctx.b.op("stablehlo.convert", [y], [rhs_aval.update(dtype=storage)])
        out = ctx.b.op("stablehlo.dot_general", [x, y], [aval_out.update(dtype=acc)], attrs)
        return out if acc == out_dtype else ctx.b.op("stablehlo.convert", [out], [aval_out])
    if precision is not None:
        attrs["precision_config"] = precision_attr(precision)
    out = ctx.b.op("stablehlo.dot_general", [x, y], [aval_out.update(dtype=compute)], attrs)
    if compute == out_dtype:
        return out
    zero = lowering.full_like(ctx.b, 0, aval_out.update(dtype=compute))
    return lowering.compare(ctx.b, out, zero, "NE", aval_out.update(dtype=compute))


dot_general_p = standard_primitive("dot_general", _dot_general_shape_rule, _dot_general_dtype_rule,
                                   _dot_general_weak_type_rule)
lowering.register(dot_general_p, _dot_general_lowering)


# Differentiation: dot_general is bilinear. The cotangent of one operand contracts the output
# cotangent with the other operand over the *other operand's free dimensions* (pairing the batch
# dimensions again), which yields the operand's dimensions in the order (batch, own free, own
# contracting in the other operand's axis order); a transpose restores the operand's own order.
# As in JAX, there is no conjugation for complex operands.

def _dot_general_transpose_operand(ct, other, operand_aval, own_dims, other_dims, ct_other_free_start,
                                   precisions):
    """Cotangent of the operand with dimensions `own_dims = (contracting, batch)`, given the other
    operand and its `other_dims`; `ct_other_free_start` is where the other operand's free
    dimensions begin among the output's (after batch, and after the operand's own free ones when
    the operand is lhs). `precisions` is (own, other) or None: the other operand keeps its
    precision, and the cotangent takes the one of the operand it stands in for."""
    from .structural import convert_element_type, transpose
    own_c, own_b = own_dims
    other_c, other_b = other_dims
    nbatch = len(own_b)
    own_free = [a for a in range(operand_aval.ndim) if a not in own_b and a not in own_c]
    other_free = [a for a in range(aval_of(other).ndim) if a not in other_b and a not in other_c]
    ct_other_free = tuple(range(ct_other_free_start, ct_other_free_start + len(other_free)))
    # dot_general takes one operand dtype: compute in the cotangent's dtype (e.g. the float32 of
    # preferred_element_type for bfloat16 operands), then return to the operand's dtype.
    ct_dtype = aval_of(ct).dtype
    if aval_of(other).dtype != ct_dtype:
        other = convert_element_type(other, ct_dtype)
    # the axis of the operand that each result axis stands for, with ct first or the other first
    kept_other = sorted(a for a in other_c)  # the other operand's remaining axes, ascending
    from_other = [own_c[other_c.index(a)] for a in kept_other]
    src = list(own_b) + own_free + from_other
    if src != sorted(src) and list(own_b) + from_other + own_free == sorted(src):
        # the other operand first gives the operand's axis order directly: no transpose to run
        # (for x @ w, w's cotangent is dot(x^T, ct) rather than dot(ct^T, x)^T)
        src = list(own_b) + from_other + own_free
        res = dot_general(other, ct, ((tuple(other_free), ct_other_free), (tuple(other_b), tuple(range(nbatch)))),
                          precision=_swapped(precisions))
    else:
        res = dot_general(ct, other, ((ct_other_free, tuple(other_free)), (tuple(range(nbatch)), tuple(other_b))),
                          precision=precisions)
    perm = tuple(int(i) for i in np.argsort(src))
    if perm != tuple(range(len(perm))):
        res = transpose(res, perm)
    if aval_of(res).dtype != operand_aval.dtype:
        res = convert_element_type(res, operand_aval.dtype)
    return res


def _dot_general_transpose_lhs(ct, x, y, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    x_aval = x.aval
    n_lhs_free = x_aval.ndim - len(lb) - len(lc)
    return _dot_general_transpose_operand(ct, y, x_aval, (lc, lb), (rc, rb), len(lb) + n_lhs_free, precision)


def _dot_general_transpose_rhs(ct, x, y, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    return _dot_general_transpose_operand(ct, x, y.aval, (rc, rb), (lc, lb), len(lb), _swapped(precision))


def _swapped(precision):
    """The precision with the operands' roles exchanged: a (lhs, rhs) pair reversed; None and a dot
    algorithm (the same for both operands) unchanged."""
    return precision[::-1] if isinstance(precision, tuple) and not is_algorithm(precision) else precision


defbilinear(dot_general_p, _dot_general_transpose_lhs, _dot_general_transpose_rhs)


# Batching: the vmapped axis is folded into the contraction itself, never looped over, and never
# moved (XLA picks the layouts): with both operands batched it becomes a new, leading pair of batch
# dimensions (the output has batch dimensions first, so it lands at 0); with one operand batched
# it is one more free dimension of that operand, whose output position follows from the output
# order (batch, lhs free, rhs free). So vmap of x @ W is one big matmul, and vmap of the outer
# product in the weight gradient is one batched dot_general.

def _bump(axes, bdim):
    """Per-example `axes` as axes of the operand with the batch axis inserted at `bdim`."""
    return tuple(a + (a >= bdim) for a in axes)


def _dot_general_batch_rule(vals, dims, *, dimension_numbers, precision, preferred_element_type):
    (lhs, rhs), (lbd, rbd) = vals, dims
    (lc, rc), (lb, rb) = dimension_numbers
    if lbd is not None and rbd is not None:
        lb, rb = (lbd,) + _bump(lb, lbd), (rbd,) + _bump(rb, rbd)
        lc, rc = _bump(lc, lbd), _bump(rc, rbd)
        out_dim = 0
    elif lbd is not None:
        lb, lc = _bump(lb, lbd), _bump(lc, lbd)
        lhs_free = [a for a in range(aval_of(lhs).ndim) if a not in lb and a not in lc]
        out_dim = len(lb) + lhs_free.index(lbd)
    else:
        rb, rc = _bump(rb, rbd), _bump(rc, rbd)
        rhs_free = [a for a in range(aval_of(rhs).ndim) if a not in rb and a not in rc]
        n_lhs_free = aval_of(lhs).ndim - len(lb) - len(lc)
        out_dim = len(lb) + n_lhs_free + rhs_free.index(rbd)
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)), precision=precision,
                             preferred_element_type=preferred_element_type)
    return out, out_dim


batching.batching_rules[dot_general_p] = _dot_general_batch_rule


# ----- wrappers ------------------------------------------------------------------------------

def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix products as `jax.lax.dot`: vector.vector -> scalar, matrix.vector -> vector,
    vector.matrix -> vector, matrix.matrix -> matrix. Contracts the last axis of `lhs` with the
    first axis of `rhs`; operands must be 1-D or 2-D and share a dtype.

    Example: `lax.dot(jnp.ones((2, 3)), jnp.ones(3))` is `[3., 3.]`.
    """
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise TypeError(f"dot requires 1-D or 2-D operands (use dot_general for others), got shapes {la.shape} "
                        f"and {ra.shape}.")
    if la.shape[-1] != ra.shape[0]:
        raise TypeError(f"Incompatible shapes for dot: got {la.shape} and {ra.shape}.")
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision=precision,
                       preferred_element_type=preferred_element_type)


def batch_matmul(lhs, rhs, precision=None, preferred_element_type=None):
    """Batched matrix product of operands of equal rank >= 2: leading dimensions are batch
    dimensions (equal sizes), then (M, K) @ (K, N) -> (M, N).

    Example: `lax.batch_matmul(jnp.ones((4, 2, 3)), jnp.ones((4, 3, 5)))` has shape (4, 2, 5).
    """
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.ndim < 2 or la.ndim != ra.ndim:
        raise ValueError(f"batch_matmul requires operands of equal rank >= 2, got shapes {la.shape} and "
                         f"{ra.shape}.")
    batch = tuple(range(la.ndim - 2))
    return dot_general(lhs, rhs, (((la.ndim - 1,), (ra.ndim - 2,)), (batch, batch)), precision=precision,
                       preferred_element_type=preferred_element_type)

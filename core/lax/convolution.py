"""Convolutions: `conv_general_dilated` and its wrappers, in JAX's `lax` conventions.

Layouts are described by `ConvDimensionNumbers(lhs_spec, rhs_spec, out_spec)`: each spec lists
array axes as (batch or out-feature, feature or in-feature, spatial...), e.g. NCHW has lhs_spec
(0, 1, 2, 3) and NHWC has (0, 3, 1, 2). Strings like ('NHWC', 'HWIO', 'NHWC') are converted by
`conv_dimension_numbers`; the spatial order is the one the rhs spec lists. The result of a
convolution, per spatial dimension, has size floor((dilated_in + pad_lo + pad_hi - dilated_k) /
stride) + 1 (0 when the window does not fit), where dilated_n = (n - 1) * dilation + 1.
"""
import collections

import numpy as np

from .. import dtypes
from ..interpreters import batching, lowering
from ..interpreters.lowering import i64_array
from ._base import ANY, aval_of, check_dtype_accepted, defbilinear, dtype_kind, standard_primitive
from .dot import _PREFERRED_KINDS
from .precision import canonicalize_precision, precision_attr
from .reductions import padtype_to_pads  # shared with reduce_window: one definition of 'SAME'

__all__ = ["conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose",
           "ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_permutations"]


class ConvDimensionNumbers(collections.namedtuple("ConvDimensionNumbers", ["lhs_spec", "rhs_spec", "out_spec"])):
    """Axis roles of a convolution's operands: lhs_spec = (batch, feature, spatial...), rhs_spec =
    (out feature, in feature, spatial...), out_spec = (batch, feature, spatial...)."""


def conv_general_permutations(dimension_numbers):
    """The `ConvDimensionNumbers` specs of three layout strings such as ('NCHW', 'OIHW', 'NCHW')."""
    lhs_str, rhs_str, out_str = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for s, (a, b), what in zip(dimension_numbers, pairs, ("lhs", "rhs", "out"), strict=True):
        if s.count(a) != 1 or s.count(b) != 1:
            raise TypeError(f"conv_general_dilated {what} spec must contain exactly one '{a}' and one '{b}', "
                            f"got {s!r}.")
        if len(set(s)) != len(s):
            raise TypeError(f"conv_general_dilated {what} spec must not repeat a letter, got {s!r}.")
    if not len(lhs_str) == len(rhs_str) == len(out_str):
        raise TypeError(f"conv_general_dilated specs must all have the same length, got {dimension_numbers}.")
    spatial = set(rhs_str) - {"O", "I"}
    if set(lhs_str) - {"N", "C"} != spatial or set(out_str) - {"N", "C"} != spatial:
        raise TypeError("conv_general_dilated spatial dimension letters must be the same in all specs, "
                        f"got {dimension_numbers}.")

    def perm(s, pair):
        order = [c for c in rhs_str if c not in ("O", "I")]
        return (s.index(pair[0]), s.index(pair[1])) + tuple(s.index(c) for c in order)

    return ConvDimensionNumbers(perm(lhs_str, pairs[0]), perm(rhs_str, pairs[1]), perm(out_str, pairs[2]))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers):
    """Normalize `dimension_numbers` (None, a `ConvDimensionNumbers` or three layout strings) for
    operands of the given shapes. None means NC..., OI..., NC... (JAX's default)."""
    ndim = len(lhs_shape)
    if ndim != len(rhs_shape):
        raise TypeError("conv_general_dilated lhs and rhs must have the same number of dimensions, got "
                        f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
    if dimension_numbers is None:
        spec = tuple(range(ndim))
        return ConvDimensionNumbers(spec, spec, spec)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        dn = ConvDimensionNumbers(*(tuple(int(a) for a in s) for s in dimension_numbers))
    elif len(dimension_numbers) == 3 and all(isinstance(s, str) for s in dimension_numbers):
        dn = conv_general_permutations(dimension_numbers)
    else:
        dn = ConvDimensionNumbers(*(tuple(int(a) for a in s) for s in dimension_numbers))
    for s in dn:
        if sorted(s) != list(range(ndim)):
            raise TypeError(f"conv_general_dilated dimension_numbers {tuple(dn)} do not describe operands of rank "
                            f"{ndim}.")
    return dn


def _dilate(n, d):
    return 0 if n == 0 else (n - 1) * d + 1


# ----- conv_general_dilated ------------------------------------------------------------------

def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                         dimension_numbers=None, feature_group_count=1, batch_group_count=1, precision=None,
                         preferred_element_type=None):
    """General n-d convolution (cross-correlation, as in JAX and XLA: the kernel is not flipped).

    `padding` is 'SAME', 'SAME_LOWER', 'VALID' or one (low, high) pair per spatial dimension;
    `lhs_dilation` inserts lhs_dilation - 1 zeros between input elements (a transposed
    convolution), `rhs_dilation` spreads the kernel (atrous convolution). `feature_group_count`
    splits the input features into groups each with its own kernels (depthwise when equal to the
    input features); `batch_group_count` does the same over the batch. `precision` (a
    `lax.Precision`, its name, or an (lhs, rhs) pair) becomes the program's `precision_config`.

    Example: NHWC images (8, 32, 32, 3) and HWIO kernels (3, 3, 3, 16) with
    `dimension_numbers=('NHWC', 'HWIO', 'NHWC')`, strides (1, 1) and 'SAME' give (8, 32, 32, 16).
    """
    precision = canonicalize_precision(precision, "conv_general_dilated")
    la, ra = aval_of(lhs), aval_of(rhs)
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nspatial = la.ndim - 2
    if nspatial < 1:
        raise TypeError(f"conv_general_dilated requires operands of rank >= 3 (batch, feature and at least one "
                        f"spatial dimension), got shapes {la.shape} and {ra.shape}.")
    lhs_dilation = (1,) * nspatial if lhs_dilation is None else tuple(int(d) for d in lhs_dilation)
    rhs_dilation = (1,) * nspatial if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    window_strides = tuple(int(s) for s in window_strides)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("String padding is not implemented for transposed convolution (lhs_dilation > 1). "
                             "Give explicit (low, high) pairs, or use conv_transpose.")
        in_spatial = [la.shape[a] for a in dn.lhs_spec[2:]]
        k_spatial = [_dilate(ra.shape[a], d) for a, d in zip(dn.rhs_spec[2:], rhs_dilation, strict=True)]
        if len(window_strides) != nspatial:
            raise TypeError(f"conv_general_dilated window_strides must have one entry per spatial dimension "
                            f"({nspatial}), got {window_strides}.")
        padding = padtype_to_pads(in_spatial, k_spatial, window_strides, padding)
    else:
        padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    if preferred_element_type is not None:
        preferred_element_type = dtypes.canonicalize_dtype(preferred_element_type)
    lhs, lhs_dilation = _explicit_lhs_dilation(lhs, rhs, lhs_dilation, dn)
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation, dimension_numbers=dn, feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count), precision=precision,
        preferred_element_type=preferred_element_type)


def _conv_shape_rule(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                     feature_group_count, batch_group_count, precision, preferred_element_type):
    name = "conv_general_dilated"
    if lhs.ndim != rhs.ndim:
        raise TypeError(f"{name} lhs and rhs must have the same number of dimensions, got {lhs.shape} and "
                        f"{rhs.shape}.")
    nspatial = lhs.ndim - 2
    for what, v in (("window_strides", window_strides), ("padding", padding), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation)):
        if len(v) != nspatial:
            raise TypeError(f"{name} {what} must have one entry per spatial dimension ({nspatial}), got {v}.")
    for what, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation)):
        if any(s < 1 for s in v):
            raise TypeError(f"{name} {what} must be positive, got {v}.")
    if feature_group_count < 1 or batch_group_count < 1:
        raise TypeError(f"{name} feature_group_count and batch_group_count must be positive, got "
                        f"{feature_group_count} and {batch_group_count}.")
    if feature_group_count > 1 and batch_group_count > 1:
        raise TypeError(f"{name}: at most one of feature_group_count and batch_group_count may be > 1, got "
                        f"{feature_group_count} and {batch_group_count}.")
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    batch, in_feat = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    out_feat, k_in_feat = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    if in_feat % feature_group_count:
        raise TypeError(f"{name} feature_group_count must divide the lhs feature dimension size, but "
                        f"{feature_group_count} does not divide {in_feat}.")
    if in_feat // feature_group_count != k_in_feat:
        raise TypeError(f"{name} lhs feature dimension size divided by feature_group_count must equal the rhs "
                        f"input feature dimension size, but {in_feat} // {feature_group_count} != {k_in_feat} "
                        f"(lhs shape {lhs.shape}, rhs shape {rhs.shape}).")
    if out_feat % feature_group_count:
        raise TypeError(f"{name} rhs output feature dimension size must be a multiple of feature_group_count, but "
                        f"{out_feat} is not a multiple of {feature_group_count}.")
    if batch % batch_group_count:
        raise TypeError(f"{name} lhs batch dimension size must be a multiple of batch_group_count, but {batch} is "
                        f"not a multiple of {batch_group_count}.")
    if out_feat % batch_group_count:
        raise TypeError(f"{name} rhs output feature dimension size must be a multiple of batch_group_count, but "
                        f"{out_feat} is not a multiple of {batch_group_count}.")
    spatial = []
    for i in range(nspatial):
        n = _dilate(lhs.shape[lhs_spec[2 + i]], lhs_dilation[i]) + padding[i][0] + padding[i][1]
        k = _dilate(rhs.shape[rhs_spec[2 + i]], rhs_dilation[i])
        spatial.append(max(0, (n - k) // window_strides[i] + 1) if n >= k else 0)
    out = [0] * lhs.ndim
    out[out_spec[0]] = batch // batch_group_count
    out[out_spec[1]] = out_feat
    for i, d in enumerate(spatial):
        out[out_spec[2 + i]] = d
    return tuple(out)


def _conv_dtype_rule(lhs, rhs, *, preferred_element_type, **_):
    for i, a in enumerate((lhs, rhs)):
        check_dtype_accepted("conv_general_dilated", a.dtype, ANY, i)
    if lhs.dtype != rhs.dtype:
        raise TypeError("conv_general_dilated requires operands of the same dtype, got "
                        f"{dtypes.short_name(lhs.dtype)} and {dtypes.short_name(rhs.dtype)}.")
    if preferred_element_type is None:
        return lhs.dtype
    if dtype_kind(preferred_element_type) not in _PREFERRED_KINDS[dtype_kind(lhs.dtype)]:
        raise TypeError(f"conv_general_dilated: preferred_element_type {dtypes.short_name(preferred_element_type)} "
                        f"is incompatible with operands of dtype {dtypes.short_name(lhs.dtype)}.")
    return preferred_element_type


def _conv_dimension_attr(dn):
    def labels(spec, first, second):
        out = [""] * len(spec)
        out[spec[0]], out[spec[1]] = first, second
        for i, a in enumerate(spec[2:]):
            out[a] = str(i)
        return "[" + ", ".join(out) + "]"
    lhs_spec, rhs_spec, out_spec = dn
    return (f"#stablehlo.conv<{labels(lhs_spec, 'b', 'f')}x{labels(rhs_spec, 'o', 'i')}->"
            f"{labels(out_spec, 'b', 'f')}>")


def _conv_lowering(ctx, x, y, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                   feature_group_count, batch_group_count, precision, preferred_element_type):
    aval_out = ctx.avals_out[0]
    lhs_aval, rhs_aval = ctx.avals_in
    # As for dot_general: widening conv types are native; booleans compute as int32.
    compute = dtypes.int32 if aval_out.dtype == dtypes.bool_ else aval_out.dtype
    if lhs_aval.dtype == dtypes.bool_:
        x = ctx.b.op("stablehlo.convert", [x], [lhs_aval.update(dtype=compute)])
        y = ctx.b.op("stablehlo.convert", [y], [rhs_aval.update(dtype=compute)])
    pad = ", ".join(f"[{lo}, {hi}]" for lo, hi in padding)
    attrs = {
        "window_strides": i64_array(window_strides),
        "padding": f"dense<[{pad}]> : tensor<{len(padding)}x2xi64>",
        "lhs_dilation": i64_array(lhs_dilation),
        "rhs_dilation": i64_array(rhs_dilation),
        "dimension_numbers": _conv_dimension_attr(dimension_numbers),
        "feature_group_count": f"{feature_group_count} : i64",
        "batch_group_count": f"{batch_group_count} : i64",
    }
    if precision is not None:
        attrs["precision_config"] = precision_attr(precision)
    out = ctx.b.op("stablehlo.convolution", [x, y], [aval_out.update(dtype=compute)], attrs)
    if compute == aval_out.dtype:
        return out
    zero = lowering.full_like(ctx.b, 0, aval_out.update(dtype=compute))
    return lowering.compare(ctx.b, out, zero, "NE", aval_out.update(dtype=compute))


conv_general_dilated_p = standard_primitive("conv_general_dilated", _conv_shape_rule, _conv_dtype_rule)
lowering.register(conv_general_dilated_p, _conv_lowering)


# Differentiation: the convolution is bilinear. Per spatial dimension, with d(n, s) the dilated
# size (n - 1) * s + 1, lo the low padding, K the dilated kernel size and ld the lhs dilation:
#  - lhs cotangent: a convolution of the cotangent, dilated by window_strides, with the spatially
#    reversed kernel (its in/out feature roles swapped), strided by lhs_dilation so that only
#    real (undilated) input positions are produced, padded by (K - 1 - lo) below and so that
#    exactly d(in, ld) + K - 1 positions are covered.
#  - rhs cotangent: a convolution of lhs (batch and feature roles swapped: the batch is
#    contracted) with the cotangent as kernel, dilated by window_strides, strided by
#    rhs_dilation, keeping the low padding and padding above just enough for the last window.
# Feature groups of the forward become batch groups of the rhs cotangent's convolution and vice
# versa; for the lhs cotangent the kernel's group axis moves from its out-feature to its
# in-feature dimension. As in JAX, no conjugation for complex operands.

def _split_axis(x, axis, major):
    """`x` with dimension `axis` split into (major, rest), major-first."""
    from .structural import reshape
    shape = aval_of(x).shape
    return reshape(x, shape[:axis] + (major, shape[axis] // major) + shape[axis + 1:])


def _merge_axis_into(x, src, dst):
    """`x` with dimension `src` merged into dimension `dst` as its major part; `dst` counts the
    dimensions of `x` without `src`."""
    from .structural import reshape, transpose
    shape = aval_of(x).shape
    rest = [a for a in range(len(shape)) if a != src]
    perm = rest[:dst] + [src] + rest[dst:]
    if perm != list(range(len(shape))):
        x = transpose(x, tuple(perm))
    new_shape = [shape[a] for a in rest]
    new_shape[dst] *= shape[src]
    return reshape(x, tuple(new_shape))


def _swap_roles(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _as_dtype(x, dtype):
    from .structural import convert_element_type
    return x if aval_of(x).dtype == dtype else convert_element_type(x, dtype)


def _transpose_conv(lhs, rhs, *, lhs_dilation, padding, dimension_numbers, **params):
    """The convolutions of the transposes (the wrapper avoids XLA's crash on some of them, which
    second derivatives of strided convolutions produce: see `_explicit_lhs_dilation`)."""
    return conv_general_dilated(lhs, rhs, lhs_dilation=lhs_dilation, padding=padding,
                                dimension_numbers=dimension_numbers, **params)


def _explicit_lhs_dilation(lhs, rhs, lhs_dilation, dn):
    """jaxlib 0.10's XLA aborts the process (a failed check in its algebraic simplifier, which
    swaps the operands of a convolution whose kernel is spatially larger than its input) on such
    convolutions with lhs_dilation > 1. There the dilation is done with interior padding instead.
    Returns the (maybe padded) lhs and the lhs_dilation left to the convolution."""
    from .structural import pad
    lhs_shape, rhs_shape = aval_of(lhs).shape, aval_of(rhs).shape
    if len(lhs_dilation) != len(dn.lhs_spec) - 2 or not any(d > 1 for d in lhs_dilation):
        return lhs, lhs_dilation
    in_size = int(np.prod([lhs_shape[a] for a in dn.lhs_spec[2:]]))
    k_size = int(np.prod([rhs_shape[a] for a in dn.rhs_spec[2:]]))
    if k_size < in_size:
        return lhs, lhs_dilation
    config = [(0, 0, 0)] * len(lhs_shape)
    for a, d in zip(dn.lhs_spec[2:], lhs_dilation, strict=True):
        config[a] = (0, 0, d - 1) if lhs_shape[a] > 0 else (0, 0, 0)
    return pad(lhs, 0, config), (1,) * len(lhs_dilation)


def _conv_transpose_lhs(ct, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                        feature_group_count, batch_group_count, precision, preferred_element_type):
    from .structural import rev
    lhs_aval = lhs.aval
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    ct_shape = aval_of(ct).shape
    rhs = _as_dtype(rhs, aval_of(ct).dtype)  # one operand dtype: compute in the cotangent's
    rhs_shape = aval_of(rhs).shape
    groups = 1
    if feature_group_count > 1 or batch_group_count > 1:
        # kernel out features (group, per-group) -> the group joins the in-feature dimension
        groups = max(feature_group_count, batch_group_count)
        rhs = _merge_axis_into(_split_axis(rhs, rhs_spec[0], groups), rhs_spec[0], rhs_spec[1])
    pads = []
    for i in range(len(window_strides)):
        n_in = _dilate(lhs_aval.shape[lhs_spec[2 + i]], lhs_dilation[i])
        k = _dilate(rhs_shape[rhs_spec[2 + i]], rhs_dilation[i])
        n_out = _dilate(ct_shape[out_spec[2 + i]], window_strides[i])
        lo = k - 1 - padding[i][0]
        pads.append((lo, n_in + k - 1 - n_out - lo))
    out = _transpose_conv(
        ct, rev(rhs, tuple(rhs_spec[2:])), window_strides=lhs_dilation, padding=tuple(pads),
        lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap_roles(rhs_spec), lhs_spec),
        feature_group_count=groups, precision=precision)
    if batch_group_count > 1:
        # features (batch group, in feature) -> the group goes back into the batch dimension
        out = _merge_axis_into(_split_axis(out, lhs_spec[1], batch_group_count), lhs_spec[1], lhs_spec[0])
    return _as_dtype(out, lhs_aval.dtype)


def _conv_transpose_rhs(ct, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                        feature_group_count, batch_group_count, precision, preferred_element_type):
    rhs_aval = rhs.aval
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs = _as_dtype(lhs, aval_of(ct).dtype)
    lhs_shape, ct_shape = aval_of(lhs).shape, aval_of(ct).shape
    pads = []
    for i in range(len(window_strides)):
        n_in = _dilate(lhs_shape[lhs_spec[2 + i]], lhs_dilation[i])
        k = _dilate(rhs_aval.shape[rhs_spec[2 + i]], rhs_dilation[i])
        n_out = _dilate(ct_shape[out_spec[2 + i]], window_strides[i])
        lo = padding[i][0]
        pads.append((lo, n_out - n_in + k - 1 - lo))
    params = dict(window_strides=rhs_dilation, padding=tuple(pads), lhs_dilation=lhs_dilation,
                  rhs_dilation=window_strides,
                  dimension_numbers=ConvDimensionNumbers(_swap_roles(lhs_spec), _swap_roles(out_spec),
                                                         _swap_roles(rhs_spec)),
                  feature_group_count=batch_group_count, batch_group_count=feature_group_count,
                  precision=precision)
    n = lhs_shape[lhs_spec[0]]
    if feature_group_count == 1 and batch_group_count == 1 and n >= 2 * _KERNEL_CT_CHUNK:
        # Summed over chunks of the batch: see _KERNEL_CT_CHUNK.
        from .elementwise import add
        from .structural import slice_in_dim
        size = max(_KERNEL_CT_CHUNK, -(-n // _MAX_KERNEL_CT_CHUNKS))
        out = None
        for start in range(0, n, size):
            stop = min(start + size, n)
            part = _transpose_conv(slice_in_dim(lhs, start, stop, axis=lhs_spec[0]),
                                   slice_in_dim(ct, start, stop, axis=out_spec[0]), **params)
            out = part if out is None else add(out, part)
    else:
        out = _transpose_conv(lhs, ct, **params)
    return _as_dtype(out, rhs_aval.dtype)


# The kernel cotangent contracts over the whole batch (the batch becomes the contracted feature
# dimension of its convolution). jaxlib 0.10's XLA CPU runs that one convolution up to 3.5x
# slower than the same work as one convolution per chunk of 8 images, summed (measured for
# batches of 32-128 images from 7x7 to 56x56: 1.2-3.5x faster, or equal within the noise; see
# bench/RESULTS.md, issue 7). Each chunk is one more convolution to compile (about 0.1 s each),
# hence the cap on their number: larger batches get larger chunks.
_KERNEL_CT_CHUNK = 8
_MAX_KERNEL_CT_CHUNKS = 16


defbilinear(conv_general_dilated_p, _conv_transpose_lhs, _conv_transpose_rhs)


# Batching: the vmapped axis (size B) is folded into a dimension the convolution already has, one
# reshape in and one out, as JAX does:
#  - lhs batched: into the lhs batch dimension (B * N images), split again from the output batch;
#  - rhs batched: into the kernel's out-feature dimension (B * O kernels), split from the output
#    features;
#  - both: B more feature groups (lhs features B * C, kernel out features B * O), so each example
#    convolves only its own images with its own kernels; with batch groups instead, B more batch
#    groups.
# Groups are the major part of their dimension (feature groups of the lhs features and kernel out
# features, batch groups of the lhs batch), so where a dimension is grouped the vmapped axis goes
# inside each group: (group, B, per-group) keeps every group contiguous.

def _merge_batch_into(x, bdim, dim, groups=1):
    """`x`, batched along `bdim`, with its batch axis merged into its per-example dimension `dim`:
    as the major part, or with `groups` > 1 just inside each of the `groups` major groups."""
    from .structural import reshape, transpose
    shape = aval_of(x).shape
    lane_axes = [a for a in range(len(shape)) if a != bdim]
    ax = lane_axes[dim]
    merged = [shape[a] for a in lane_axes]
    merged[dim] *= shape[bdim]
    if groups == 1:
        order = lane_axes[:dim] + [bdim] + lane_axes[dim:]
    else:
        x = _split_axis(x, ax, groups)  # dimension `ax` becomes (groups, per-group) at ax, ax + 1

        def pos(a):
            return a if a < ax else a + 1
        order = [pos(a) for a in lane_axes[:dim]] + [ax, pos(bdim), ax + 1] + [pos(a) for a in lane_axes[dim + 1:]]
    if order != sorted(order):
        x = transpose(x, tuple(order))
    return reshape(x, tuple(merged))


def _split_batch_out_of(x, dim, size, groups=1):
    """Undo `_merge_batch_into` on a result: dimension `dim` of `x` holds (size, rest) -- or, with
    `groups` > 1, (groups, size, per-group) -- and becomes a batch axis of `size` at `dim`
    followed by the rest at `dim + 1`."""
    from .structural import reshape, transpose
    if groups == 1:
        return _split_axis(x, dim, size)
    shape = aval_of(x).shape
    per_group = shape[dim] // (groups * size)
    x = reshape(x, shape[:dim] + (groups, size, per_group) + shape[dim + 1:])
    order = list(range(len(shape) + 2))
    order[dim], order[dim + 1] = dim + 1, dim
    x = transpose(x, tuple(order))
    return reshape(x, shape[:dim] + (size, groups * per_group) + shape[dim + 1:])


def _conv_batch_rule(vals, dims, **params):
    (lhs, rhs), (lbd, rbd) = vals, dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    size = batching.batch_size(vals, dims)
    if size == 0:  # B = 0 groups are not a convolution XLA accepts; the result is empty anyway
        return _conv_empty_batch(lhs, rhs, lbd, rbd, params), 0
    if lbd is not None and rbd is not None:
        if bgc > 1:
            lhs, bgc = _merge_batch_into(lhs, lbd, lhs_spec[0]), bgc * size
        else:
            lhs, fgc = _merge_batch_into(lhs, lbd, lhs_spec[1]), fgc * size
        rhs = _merge_batch_into(rhs, rbd, rhs_spec[0])
        out = conv_general_dilated_p.bind(lhs, rhs, **dict(params, feature_group_count=fgc,
                                                           batch_group_count=bgc))
        return _split_axis(out, out_spec[1], size), out_spec[1]
    if lbd is not None:
        out = conv_general_dilated_p.bind(_merge_batch_into(lhs, lbd, lhs_spec[0], bgc), rhs, **params)
        return _split_axis(out, out_spec[0], size), out_spec[0]
    groups = max(fgc, bgc)
    out = conv_general_dilated_p.bind(lhs, _merge_batch_into(rhs, rbd, rhs_spec[0], groups), **params)
    return _split_batch_out_of(out, out_spec[1], size, groups), out_spec[1]


def _conv_empty_batch(lhs, rhs, lbd, rbd, params):
    from .structural import full
    lanes = []
    for x, d in ((lhs, lbd), (rhs, rbd)):
        aval = aval_of(x)
        lanes.append(aval if d is None else aval.update(shape=aval.shape[:d] + aval.shape[d + 1:]))
    shape = _conv_shape_rule(*lanes, **params)
    return full((0,) + shape, 0, _conv_dtype_rule(*lanes, **params))


batching.batching_rules[conv_general_dilated_p] = _conv_batch_rule


# ----- wrappers ------------------------------------------------------------------------------

def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
    """Convolution of NC... inputs with OI... kernels, no dilation (as `jax.lax.conv`).

    Example: `lax.conv(jnp.ones((1, 1, 5, 5)), jnp.ones((2, 1, 3, 3)), (1, 1), 'VALID')` has shape
    (1, 2, 3, 3), every element 9.
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, precision=None,
                              preferred_element_type=None):
    """Convolution of NC... inputs with OI... kernels with explicit dilations (as JAX's)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, precision=precision,
                                preferred_element_type=preferred_element_type)


def _conv_transpose_pads(k, s, padding):
    # Padding of the stride-dilated input, as JAX's conv_transpose defines it: 'SAME' gives
    # in * s outputs, 'VALID' gives in * s + max(k - s, 0) (the full transposed output).
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    else:
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    return low, total - low


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None, transpose_kernel=False,
                   precision=None, preferred_element_type=None):
    """Transposed convolution, as JAX defines it: a stride-1 convolution of `lhs` dilated by
    `strides` (zeros inserted between elements). `padding` is 'SAME' (output = input * stride),
    'VALID' (output = input * stride + max(dilated kernel - stride, 0)) or explicit pairs. With
    `transpose_kernel=True` the kernel's spatial axes are flipped and its in/out feature axes
    swapped, which makes this the gradient of `conv_general_dilated` with respect to its input.
    Default layouts are NHC/HIO, NHWC/HWIO and NHWDC/HWDIO.

    Example: `lax.conv_transpose(jnp.ones((1, 4, 3)), jnp.ones((3, 3, 2)), (2,), 'SAME')` has
    shape (1, 8, 2).
    """
    la, ra = aval_of(lhs), aval_of(rhs)
    if la.ndim != ra.ndim or la.ndim < 3:
        raise TypeError(f"conv_transpose requires operands of equal rank >= 3, got shapes {la.shape} and {ra.shape}.")
    nspatial = la.ndim - 2
    if dimension_numbers is None:
        defaults = {1: ("NHC", "HIO", "NHC"), 2: ("NHWC", "HWIO", "NHWC"),
                    3: ("NHWDC", "HWDIO", "NHWDC")}
        if nspatial not in defaults:
            raise ValueError(f"conv_transpose has no default dimension_numbers for rank {la.ndim}; pass them.")
        dimension_numbers = defaults[nspatial]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    rhs_dilation = (1,) * nspatial if rhs_dilation is None else tuple(int(d) for d in rhs_dilation)
    strides = tuple(int(s) for s in strides)
    if isinstance(padding, str):
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"conv_transpose padding must be 'SAME', 'VALID' or explicit pairs, got {padding!r}.")
        k_spatial = [_dilate(ra.shape[a], d) for a, d in zip(dn.rhs_spec[2:], rhs_dilation, strict=True)]
        pads = tuple(_conv_transpose_pads(k, s, padding) for k, s in zip(k_spatial, strides, strict=True))
    else:
        pads = padding
    if transpose_kernel:
        from .. import lax  # the package: rev and transpose live in sibling modules
        rhs = lax.rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ra.ndim))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = lax.transpose(rhs, tuple(perm))
    return conv_general_dilated(lhs, rhs, (1,) * nspatial, pads, lhs_dilation=strides, rhs_dilation=rhs_dilation,
                                dimension_numbers=dn, precision=precision,
                                preferred_element_type=preferred_element_type)

"""`jax.lax` names that are compositions of other lax functions: no primitive of their own, so
every transformation handles them through their parts.

Shapes: `broadcast_shapes`, `broadcast_like`, `conv_shape_tuple`, `conv_general_shape_tuple`,
`conv_transpose_shape_tuple`, `reduce_window_shape_tuple`. Arrays: `approx_max_k`,
`approx_min_k` (exact here), the patches of `conv_general_dilated_patches`, the
unshared convolution `conv_general_dilated_local`, `dtype`, `shape_as_value`, the block-scaled
`scaled_dot`. Collectives: `pshuffle`, `pswapaxes`.
"""
import typing
from collections.abc import Sequence

import numpy as np

from .. import dtypes
from ._base import aval_of
from .convolution import ConvDimensionNumbers, _conv_shape_rule, _dilate, conv_dimension_numbers, conv_general_dilated
from .elementwise import neg
from .parallel import all_to_all, ppermute
from .precision import Precision
from .reductions import padtype_to_pads
from .sorting import top_k
from .structural import broadcast_in_dim, full, transpose

__all__ = ["empty", "broadcast_shapes", "broadcast_like",
           "approx_max_k", "approx_min_k", "conv_shape_tuple", "conv_general_shape_tuple",
           "conv_transpose_shape_tuple", "reduce_window_shape_tuple", "conv_general_dilated_patches",
           "conv_general_dilated_local", "dtype",
           "pshuffle", "pswapaxes", "shape_as_value", "scaled_dot", "ConvGeneralDilatedDimensionNumbers", "DotDimensionNumbers", "PrecisionLike"]

# JAX's names of argument types, for annotations
ConvGeneralDilatedDimensionNumbers = typing.Union[None, ConvDimensionNumbers, tuple[str, str, str]]
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]
PrecisionLike = typing.Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision]]


# ----- shapes ------------------------------------------------------------------------------------

def broadcast_shapes(*shapes):
    """The NumPy broadcast of `shapes` (sizes equal or 1, aligned from the right), as a tuple.

    >>> lax.broadcast_shapes((3, 1), (4,))
    (3, 4)
    """
    shapes = [tuple(int(d) for d in s) for s in shapes]
    if not shapes:
        return ()
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        sizes = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0}
        big = sizes - {1}
        if len(big) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
        out.append(big.pop() if big else 1)
    return tuple(out)


def broadcast_like(arr, like_arr):
    """`arr` broadcast (NumPy rules) to the shape of `like_arr`, keeping `arr`'s dtype.

    >>> lax.broadcast_like(jnp.array([1., 2.]), jnp.zeros((3, 2))).shape
    (3, 2)
    """
    a, target = aval_of(arr), aval_of(like_arr).shape
    if broadcast_shapes(a.shape, target) != tuple(target):
        raise ValueError(f"broadcast_like: shape {a.shape} does not broadcast to {target}.")
    return broadcast_in_dim(arr, target, tuple(range(len(target) - a.ndim, len(target))))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of `conv_general_dilated` for these operand shapes (no dilation).

    >>> lax.conv_general_shape_tuple((1, 5, 5, 3), (3, 3, 3, 8), (1, 1), "SAME", ("NHWC", "HWIO", "NHWC"))
    (1, 5, 5, 8)
    """
    from ..avals import ShapedArray
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    nspatial = len(lhs_shape) - 2
    in_spatial = [lhs_shape[a] for a in dn.lhs_spec[2:]]
    k_spatial = [rhs_shape[a] for a in dn.rhs_spec[2:]]
    pads = padtype_to_pads(in_spatial, k_spatial, tuple(window_strides), padding)
    f32 = dtypes.float32
    return _conv_shape_rule(ShapedArray(tuple(lhs_shape), f32), ShapedArray(tuple(rhs_shape), f32),
                            window_strides=tuple(window_strides), padding=tuple(pads),
                            lhs_dilation=(1,) * nspatial, rhs_dilation=(1,) * nspatial, dimension_numbers=dn,
                            feature_group_count=1, batch_group_count=1, precision=None,
                            preferred_element_type=None)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
    """The output shape of a convolution of NC... `lhs_shape` with OI... `rhs_shape` given `pads`
    ('SAME', 'VALID' or (low, high) per spatial dimension).

    >>> lax.conv_shape_tuple((2, 3, 8), (4, 3, 3), (2,), [(1, 1)])
    (2, 4, 4)
    """
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], tuple(strides), pads)
    spatial = tuple(max(0, (n + lo + hi - k) // s + 1)
                    for n, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads, strict=True))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + spatial


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of `conv_transpose` for these operand shapes: per spatial dimension
    (n - 1) * stride - k + 2 + low + high, with `padding` the pads of the stride-dilated input
    ('SAME', 'VALID' or explicit pairs), as JAX's helper computes it.

    >>> lax.conv_transpose_shape_tuple((1, 4, 3), (3, 3, 2), (2,), "SAME", ("NHC", "HIO", "NHC"))
    (1, 8, 2)
    """
    from .convolution import _conv_transpose_pads
    dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    in_spatial = [lhs_shape[a] for a in dn.lhs_spec[2:]]
    k_spatial = [rhs_shape[a] for a in dn.rhs_spec[2:]]
    if isinstance(padding, str):
        padding = [_conv_transpose_pads(k, s, padding) for k, s in zip(k_spatial, window_strides, strict=True)]
    spatial = [(n - 1) * s - k + 2 + lo + hi
               for n, k, s, (lo, hi) in zip(in_spatial, k_spatial, window_strides, padding, strict=True)]
    out = [0] * len(lhs_shape)
    out[dn.out_spec[0]] = lhs_shape[dn.lhs_spec[0]]
    out[dn.out_spec[1]] = rhs_shape[dn.rhs_spec[0]]
    for i, d in enumerate(spatial):
        out[dn.out_spec[2 + i]] = d
    return tuple(out)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation=None,
                              window_dilation=None):
    """The output shape of `reduce_window` with explicit (low, high) `padding`.

    >>> lax.reduce_window_shape_tuple((4, 6), (2, 2), (2, 2), [(0, 0), (0, 0)])
    (2, 3)
    """
    n = len(operand_shape)
    base_dilation = (1,) * n if base_dilation is None else base_dilation
    window_dilation = (1,) * n if window_dilation is None else window_dilation
    out = []
    for d, w, s, (lo, hi), bd, wd in zip(operand_shape, window_dimensions, window_strides, padding, base_dilation,
                                         window_dilation, strict=True):
        size = _dilate(d, bd) + lo + hi
        k = _dilate(w, wd)
        out.append(0 if size < k else (size - k) // s + 1)
    return tuple(out)


def dtype(x):
    """The dtype an array made from `x` would have (an array, a NumPy or Python scalar, or a
    dtype), canonicalized as JAX's (float64 becomes float32 unless x64 is on).

    >>> lax.dtype(1.0), lax.dtype(jnp.int8(3))
    (dtype('float32'), dtype('int8'))
    """
    return dtypes.dtype(x)


# ----- arrays ------------------------------------------------------------------------------------

def empty(shape, dtype, *, out_sharding=None):
    """An array of `shape` and `dtype` whose contents a program must not rely on; as JAX's, it
    holds zeros.

    >>> lax.empty((2,), jnp.float32).shape
    (2,)
    """
    return full(shape, 0, dtype)


def _approx_k(name, operand, k, reduction_dimension, recall_target, aggregate_to_topk, largest):
    aval = aval_of(operand)
    dim = int(reduction_dimension) + (aval.ndim if int(reduction_dimension) < 0 else 0)
    if not 0 <= dim < aval.ndim:
        raise ValueError(f"{name}: reduction_dimension {reduction_dimension} is out of bounds for an operand of "
                         f"shape {aval.shape}.")
    if aval.dtype.kind != "f" and aval.dtype != dtypes.bfloat16:
        raise ValueError(f"{name}: operand must be a floating type (as in JAX), got {dtypes.short_name(aval.dtype)}.")
    if not 0 < recall_target <= 1:
        raise ValueError(f"{name}: recall_target must be in (0, 1], got {recall_target}.")
    last = aval.ndim - 1
    x = operand if dim == last else transpose(operand, tuple(a for a in range(aval.ndim) if a != dim) + (dim,))
    # the exact top-k meets every recall target; the smallest k are the top k of the negation
    if largest:
        vals, idx = top_k(x, k)
    else:
        vals, idx = top_k(neg(x), k)
        vals = neg(vals)
    if dim != last:
        perm = list(range(aval.ndim - 1))
        perm.insert(dim, last)
        vals, idx = transpose(vals, tuple(perm)), transpose(idx, tuple(perm))
    return [vals, idx]  # a list, as JAX's


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The `k` largest values along `reduction_dimension` and their int32 indices, largest first.
    JAX's TPU algorithm trades recall for speed; here (as JAX on CPU and GPU) the result is exact,
    which meets any `recall_target`.

    >>> lax.approx_max_k(jnp.array([[1., 5., 3.], [4., 0., 2.]]), 2)[0].tolist()
    [[5.0, 3.0], [4.0, 2.0]]
    """
    return _approx_k("approx_max_k", operand, k, reduction_dimension, recall_target, aggregate_to_topk, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95, reduction_input_size_override=-1,
                 aggregate_to_topk=True):
    """The `k` smallest values along `reduction_dimension` and their int32 indices, smallest first
    (exact; see `approx_max_k`).

    >>> lax.approx_min_k(jnp.array([3., 1., 2.]), 2)[1].tolist()
    [1, 2]
    """
    return _approx_k("approx_min_k", operand, k, reduction_dimension, recall_target, aggregate_to_topk, False)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None, preferred_element_type=None):
    """The patches a convolution with a kernel of spatial shape `filter_shape` would see: the
    output has, at each position, C * prod(filter_shape) features ordered (channel, then the
    window position in row-major order over `filter_shape`), laid out as `dimension_numbers`' output
    says. One convolution with a one-hot kernel and C feature groups, as JAX computes it.

    >>> lax.conv_general_dilated_patches(jnp.arange(4.).reshape(1, 1, 4), (2,), (1,), "VALID")[0].tolist()
    [[0.0, 1.0, 2.0], [1.0, 2.0, 3.0]]
    """
    la = aval_of(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    dn = conv_dimension_numbers(la.shape, (1, 1) + filter_shape, dimension_numbers)
    channels = la.shape[dn.lhs_spec[1]]
    size = int(np.prod(filter_shape))
    # kernel[c * size + s, 0, window...] = 1 where window's flat position is s (OI... layout)
    eye = np.eye(size, dtype=la.dtype).reshape((size, 1) + filter_shape)
    kernel = np.tile(eye, (channels,) + (1,) * (1 + len(filter_shape)))
    # from OI<spatial> to the layout rhs_spec describes
    perm = [0] * kernel.ndim
    for role, axis in enumerate(dn.rhs_spec):
        perm[axis] = role
    kernel = np.transpose(kernel, perm)
    return conv_general_dilated(lhs, kernel, window_strides, padding, lhs_dilation=lhs_dilation,
                                rhs_dilation=rhs_dilation, dimension_numbers=dn, feature_group_count=channels,
                                precision=precision, preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None, rhs_dilation=None,
                               dimension_numbers=None, precision=None):
    """An unshared (locally connected) convolution: like `conv_general_dilated`, but each output
    position has its own kernel. `rhs` has the output's spatial sizes where a convolution kernel
    has the window's, and its I dimension holds C * prod(filter_shape) inputs ordered as
    `conv_general_dilated_patches` orders them (channel, then the window position); e.g. with
    ('NCHW', 'OIHW', 'NCHW'), rhs is (O, C * fh * fw, out_h, out_w). The patches of `lhs` are
    contracted with `rhs` position by position; `precision` may be a pair (patches, product).

    >>> x = jnp.arange(4.).reshape(1, 1, 4)
    >>> w = jnp.array([[[1., 0., 0.], [0., 1., 10.]]])  # O=1, I=2 (a window of 2), 3 positions
    >>> lax.conv_general_dilated_local(x, w, (1,), "VALID", (2,), dimension_numbers=("NCH", "OIH", "NCH")).tolist()
    [[[0.0, 2.0, 30.0]]]
    """
    from .dot import dot_general
    from .precision import canonicalize_precision
    la = aval_of(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    canonical = canonicalize_precision(precision, "conv_general_dilated_local")
    patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding, lhs_dilation=lhs_dilation,
                                           rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
                                           precision=None if canonical is None else canonical[0])
    dn = conv_dimension_numbers(la.shape, (1, 1) + filter_shape, dimension_numbers)
    # contract the patch features with rhs's I dimension, pairing the spatial dimensions as batch
    # dimensions (in the patches' order, which dot_general puts first in its output)
    spatial = sorted(range(len(filter_shape)), key=lambda i: dn.out_spec[2 + i])
    patch_batch = tuple(dn.out_spec[2 + i] for i in spatial)
    rhs_batch = tuple(dn.rhs_spec[2 + i] for i in spatial)
    out = dot_general(patches, rhs, (((dn.out_spec[1],), (dn.rhs_spec[1],)), (patch_batch, rhs_batch)),
                      precision=precision)
    # (spatial..., N, O) -> the output layout
    src = list(patch_batch) + [dn.out_spec[0], dn.out_spec[1]]
    return transpose(out, tuple(int(i) for i in np.argsort(src)))


# ----- collectives -------------------------------------------------------------------------------

def pshuffle(x, axis_name, perm):
    """Collective: member i of the axis receives the value of member `perm[i]` (`perm` is a
    permutation of range(axis size)), as JAX's `pshuffle` (a `ppermute`).
    """
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"pshuffle: perm must be a permutation of range({len(perm)}), got {perm}.")
    return ppermute(x, axis_name, [(src, dst) for dst, src in enumerate(perm)])


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Collective: swap the named axis with positional axis `axis` of `x` (whose size must be the
    axis size), as JAX's `pswapaxes` (an `all_to_all` splitting and concatenating `axis`).
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def shape_as_value(shape):
    """`shape` as an integer array, as `jax.lax.shape_as_value`: int32 (int64 when a dimension
    needs it) NumPy values; the empty shape gives an int32[0] Array, as in JAX. (JAX's symbolic
    dimensions become traced values; purenn's shapes are always concrete.)

    >>> lax.shape_as_value((2, 3))
    array([2, 3], dtype=int32)
    """
    dims = tuple(int(d) for d in shape)
    dtype = np.int32 if all(-2 ** 31 <= d < 2 ** 31 for d in dims) else np.int64
    if not dims:
        return full((0,), 0, np.int32)
    return np.asarray(dims, dtype=dtype)


# ----- scaled_dot --------------------------------------------------------------------------------

def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None, preferred_element_type=None):
    """The block-scaled dot product `dot_general(lhs * lhs_scale, rhs * rhs_scale)`, as
    `jax.lax.scaled_dot`: each scale has its operand's shape except along the contracting
    dimensions, where it is smaller by a whole factor (the block, or subchannel, size) and each
    scale value applies to one block of that many consecutive elements. A missing scale is 1.
    `dimension_numbers` defaults to contracting the last dimension of `lhs` with the second-to-last
    of `rhs`, batching over the leading ones (rank >= 2). The result has `preferred_element_type`
    (bfloat16, the default, or float32), computed in float32 and rounded once (JAX rounds the scaled
    operands too). purenn has no float8 dtypes, so operands and scales are floating types of its own;
    unlike JAX's, it is differentiable (through its parts).

    >>> lax.scaled_dot(jnp.ones((1, 4)), jnp.ones((4, 1)), lhs_scale=jnp.array([[1., 2.]]),
    ...                preferred_element_type=jnp.float32)
    Array([[6.]], dtype=float32)
    """
    from .dot import dot_general
    from .elementwise import mul
    from .structural import convert_element_type, reshape
    lhs_aval, rhs_aval = aval_of(lhs), aval_of(rhs)
    if dimension_numbers is None:
        if lhs_aval.ndim < 2:
            raise TypeError(f"scaled_dot does not support rank-0 and rank-1 operands without dimension_numbers; got "
                            f"lhs {lhs_aval.str_short()}.")
        n = lhs_aval.ndim
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lc, rc), batch = dimension_numbers
    lc, rc = tuple(int(a) for a in lc), tuple(int(a) for a in rc)
    out_dtype = np.dtype(dtypes.bfloat16 if preferred_element_type is None else preferred_element_type)
    if out_dtype not in (np.dtype(dtypes.bfloat16), np.dtype(np.float32)):
        raise TypeError(f"scaled_dot: preferred_element_type must be bfloat16 or float32, got {out_dtype.name}.")

    def scaled(name, x, aval, scale, contracting):
        for what, a in ((name, aval),) + (((name + "_scale", aval_of(scale)),) if scale is not None else ()):
            if not dtypes.issubdtype(a.dtype, np.floating):
                raise TypeError(f"scaled_dot: {what} must be a floating array (purenn has no float8 types), got "
                                f"{a.str_short()}.")
        x = convert_element_type(x, np.float32)
        if scale is None:
            return x
        s_aval = aval_of(scale)
        if s_aval.ndim != aval.ndim:
            raise TypeError(f"scaled_dot: {name}_scale must have the rank of {name}, got {s_aval.str_short()} for "
                            f"{name} {aval.str_short()}.")
        expanded, dims = [], []
        for i, (d, sd) in enumerate(zip(aval.shape, s_aval.shape)):
            if i in contracting:
                if sd == 0 or d % sd:
                    raise TypeError(f"scaled_dot: dimension {i} of {name} ({d}) must be a whole multiple of that of "
                                    f"{name}_scale ({sd}); shapes {aval.str_short()} and {s_aval.str_short()}.")
                dims.append(len(expanded))
                expanded += [sd, d // sd]
            else:
                if sd != d:
                    raise TypeError(f"scaled_dot: {name}_scale must match {name} outside the contracting dimensions, "
                                    f"got {s_aval.str_short()} for {name} {aval.str_short()} (dimension {i}).")
                dims.append(len(expanded))
                expanded.append(d)
        s = convert_element_type(scale, np.float32)
        s = reshape(broadcast_in_dim(s, tuple(expanded), tuple(dims)), aval.shape)  # each value over its block
        return mul(x, s)

    out = dot_general(scaled("lhs", lhs, lhs_aval, lhs_scale, lc), scaled("rhs", rhs, rhs_aval, rhs_scale, rc),
                      ((lc, rc), batch), preferred_element_type=np.float32)
    return convert_element_type(out, out_dtype)

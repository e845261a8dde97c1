"""`core.image`: resizing and resampling images, as `jax.image`.

Every method except nearest is separable resampling with a kernel: for each dimension that changes
size, a weight matrix W (input size m, output size n) is built and the image is contracted with it
along that dimension (`x' = tensordot(x, W)`). Pixels are half-centred: output pixel i samples the
input at `(i + 0.5) / scale - translation / scale - 0.5`. When downsampling with `antialias=True`
the kernel is stretched by 1/scale, so every input pixel contributes (a low-pass filter), as in JAX
and TensorFlow. Each column of W is normalised to sum to 1, and an output pixel that samples
outside the input gets weight 0 (black), unless the method pads edges (cubic-pytorch without
antialiasing). The weights are built from `core.numpy` operations, so `scale` and `translation`
of `scale_and_translate` may be traced, and everything differentiates.

Example:
    >>> core.image.resize(jnp.array([0., 1., 2., 3.]), (8,), "linear")
    Array([0.  , 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.  ], dtype=float32)
"""
import enum
import operator

import numpy as np

from . import dtypes
from . import numpy as jnp
from .numpy._util import promote_dtypes_inexact

__all__ = ["resize", "scale_and_translate", "ResizeMethod"]


class ResizeMethod(enum.Enum):
    """The resampling methods (strings name them too: see `from_string`)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s):
        """The method a string names: 'nearest', 'linear' ('bilinear', 'trilinear', 'triangle'),
        'lanczos3', 'lanczos5', 'cubic' ('bicubic', 'tricubic'), 'cubic-pytorch'
        ('bicubic-pytorch') or 'area'.

        Example: `ResizeMethod.from_string("bilinear")` is `ResizeMethod.LINEAR`.
        """
        method = _NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"; the methods are {sorted(_NAMES)}.')
        return method


_NAMES = {"nearest": ResizeMethod.NEAREST, "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
          "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR, "lanczos3": ResizeMethod.LANCZOS3,
          "lanczos5": ResizeMethod.LANCZOS5, "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC,
          "tricubic": ResizeMethod.CUBIC, "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
          "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "area": ResizeMethod.AREA}


# ----- kernels: weight as a function of the distance x >= 0 (in input pixels) ---------------------

def _triangle(x):
    return jnp.maximum(0.0, 1.0 - jnp.abs(x))


def _keys_cubic(x):
    # Keys' cubic convolution kernel with a = -0.5
    near = ((1.5 * x - 2.5) * x) * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, far, near))


def _opencv_cubic(x):
    # the same family with a = -0.75 (OpenCV's and PyTorch's bicubic)
    a = -0.75
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, far, near))


def _lanczos(radius):
    def kernel(x):
        # sinc(x) sinc(x / radius), with the removable singularity at 0 taken as 1
        safe = jnp.where(x != 0, np.pi ** 2 * x ** 2, 1.0)
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius) / safe
        return jnp.where(x > radius, 0.0, jnp.where(x > 1e-3, y, 1.0))
    return kernel


_AREA = object()  # the area "kernel" is an overlap of intervals, computed apart
_KERNELS = {ResizeMethod.LINEAR: (1, _triangle), ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
            ResizeMethod.LANCZOS5: (5, _lanczos(5.0)), ResizeMethod.CUBIC: (2, _keys_cubic),
            ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic), ResizeMethod.AREA: (1, _AREA)}


def _weight_matrix(m, n, scale, translation, kernel, antialias, edge_padding, radius, dtype):
    """W of shape (m, n): output pixel j = sum_i W[i, j] * input pixel i, along one dimension."""
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    outputs = jnp.arange(n, dtype=dtype)
    sample = (outputs + 0.5) * inv_scale - translation * inv_scale - 0.5  # where output j samples
    # with edge padding (only without antialiasing), kernel taps reach `radius` pixels past the
    # edges; they are folded onto the edge pixels below
    k = radius if edge_padding else 0
    taps = jnp.arange(-k, m + k, dtype=dtype)
    if kernel is _AREA:
        left = outputs * inv_scale - translation * inv_scale
        right = left + inv_scale
        pixels = jnp.arange(m, dtype=dtype)
        weights = jnp.maximum(0.0, jnp.minimum(right[None, :], pixels[:, None] + 1.0)
                              - jnp.maximum(left[None, :], pixels[:, None]))
    else:
        weights = kernel(jnp.abs(sample[None, :] - taps[:, None]) / kernel_scale)
    if edge_padding:
        rows = np.clip(np.arange(-k, m + k), 0, m - 1)
        weights = jnp.zeros((m, n), weights.dtype).at[rows].add(weights)
    total = jnp.sum(weights, axis=0, keepdims=True)
    # a column whose weights (nearly) cancel gives 0 rather than a huge normalised value
    usable = jnp.abs(total) > 1000.0 * float(np.finfo(np.float32).eps)
    weights = jnp.where(usable, weights / jnp.where(total != 0, total, 1.0), 0.0)
    if not edge_padding:
        inside = (sample >= -0.5) & (sample <= m - 0.5)
        weights = jnp.where(inside[None, :], weights, 0.0)
    return weights


def _resample(x, shape, spatial_dims, scales, translations, method, antialias, precision):
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    dtype = dtypes.result_type(*scales, *translations) if scales else x.dtype
    for d, scale, translation in zip(spatial_dims, scales, translations, strict=True):
        w = _weight_matrix(x.shape[d], shape[d], scale, translation, kernel, antialias, edge_padding, radius,
                           dtype).astype(x.dtype)
        x = jnp.moveaxis(jnp.tensordot(x, w, axes=([d], [0]), precision=precision), -1, d)
    return x


def _check(name, image, shape, method):
    if not hasattr(image, "ndim"):
        image = jnp.asarray(image)
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a sequence of ints, got {shape!r}") from None
    if len(shape) != image.ndim:
        raise ValueError(f"{name}: shape must have one entry per dimension of the image (batch and channel "
                         f"dimensions included, unchanged); got shape {shape} for an image of shape "
                         f"{tuple(image.shape)}.")
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: shape must have non-negative sizes, got {shape}.")
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"{name}: method must be a ResizeMethod or its name, got {method!r}.")
    return image, shape, method


def _resize_nearest(x, shape):
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m == n:
            continue
        # output pixel i takes input pixel floor((i + 0.5) * m / n), computed in float32 as JAX does
        index = np.floor(((np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m)
                          / np.float32(n)).astype(np.float32)).astype(np.int32)
        x = jnp.take(x, index, axis=d)
    return x


def resize(image, shape, method, antialias=True, precision=None):
    """Resize `image` to `shape` (one entry per dimension: batch and channel dimensions are given
    unchanged), as `jax.image.resize`.

    `method`: 'nearest' (keeps the dtype), 'linear'/'bilinear', 'cubic'/'bicubic' (Keys),
    'cubic-pytorch', 'lanczos3', 'lanczos5', 'area', or a `ResizeMethod`; the others give a float
    result. With `antialias` (default), downsampling low-pass filters first (the kernel is widened
    by the shrink factor); it changes nothing when upsampling. Differentiable in `image`.

    Example:
        >>> core.image.resize(jnp.array([[1., 2.], [3., 4.]]), (2, 4), "nearest")
        Array([[1., 1., 2., 2.],
               [3., 3., 4., 4.]], dtype=float32)
    """
    image, shape, method = _check("resize", image, shape, method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    (image,) = promote_dtypes_inexact(image)
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    dims = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    # Python floats, as JAX's: the weights are computed in the default float type
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _resample(image, shape, dims, scales, [0.0] * len(dims), method, antialias, precision)


def scale_and_translate(image, shape, spatial_dims, scale, translation, method, antialias=True, precision=None):
    """Resample `image` to `shape`, mapping input location x (half-centred pixels) to output
    location `x * scale + translation` along each of `spatial_dims`, as
    `jax.image.scale_and_translate`. Output pixels that fall outside the input are 0. `scale` and
    `translation` are sequences (or arrays) with one entry per spatial dimension, and may be traced.

    `method` is any of `resize`'s except 'nearest'. To imitate PyTorch's `align_corners=True`
    for input size m and output size n, use `scale = (n - 1) / (m - 1)` and
    `translation = 0.5 - scale / 2`.

    Example:
        >>> core.image.scale_and_translate(jnp.array([1., 2., 3., 4.]), (4,), (0,), [1.0], [1.0], "linear")
        Array([0., 1., 2., 3.], dtype=float32)
    """
    image, shape, method = _check("scale_and_translate", image, shape, method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate: nearest-neighbour resampling is not supported (as in JAX); use "
                         "resize(..., 'nearest') or method='linear'.")
    spatial_dims = tuple(d + image.ndim if d < 0 else d for d in spatial_dims)
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    (image,) = promote_dtypes_inexact(image)
    scale, translation = promote_dtypes_inexact(jnp.asarray(scale), jnp.asarray(translation))
    if scale.shape != (len(spatial_dims),) or translation.shape != (len(spatial_dims),):
        raise ValueError(f"scale_and_translate: scale and translation need one entry per spatial dimension "
                         f"({len(spatial_dims)}), got shapes {tuple(scale.shape)} and {tuple(translation.shape)}.")
    scales = [scale[i] for i in range(len(spatial_dims))]
    translations = [translation[i] for i in range(len(spatial_dims))]
    return _resample(image, shape, spatial_dims, scales, translations, method, antialias, precision)

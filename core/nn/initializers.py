"""Parameter initializers: `core.nn.initializers`, as `jax.nn.initializers` (re-exported by `nn`).

The contract. An initializer is a function `init(key, shape, dtype=<default>) -> array` that
returns an array of exactly `shape` and `dtype`, a pure function of `key` (the same key gives the
same array). `zeros` and `ones` are initializers themselves and ignore the key; the others are
built by a constructor that fixes their hyperparameters (`normal(stddev=0.1)`), and every
constructor also takes the default `dtype` (None: float32, or float64 with x64 on).

Fans. For a weight array the variance-scaling family reads the fan-in and fan-out from the shape:
`in_axis` (default -2) holds the inputs, `out_axis` (default -1) the outputs, `batch_axis` axes are
ignored, and every other axis is the receptive field of a convolution kernel, which multiplies
both fans. A Dense kernel (in, out) has fan_in = in; a 2-D conv kernel (kh, kw, in, out) in HWIO
layout has fan_in = kh * kw * in and fan_out = kh * kw * out.

Example:
    >>> w = glorot_normal()(random.PRNGKey(0), (784, 512))
    >>> b = zeros(None, (512,))
"""
import math
import operator

import numpy as np

import core
import core.numpy as jnp
from core import random

__all__ = ["zeros", "ones", "constant", "normal", "uniform", "truncated_normal", "variance_scaling",
           "glorot_normal", "glorot_uniform", "xavier_normal", "xavier_uniform", "he_normal", "he_uniform",
           "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "orthogonal"]

# the standard deviation of a standard normal truncated to (-2, 2): dividing by it makes the
# truncated samples' standard deviation the target one
_TRUNCATED_NORMAL_STDDEV = 0.87962566103423978


def _dtype(dtype):
    dtype = core.dtypes.default_float_dtype() if dtype is None else core.dtypes.canonicalize_dtype(dtype)
    if not jnp.issubdtype(dtype, jnp.floating):
        raise TypeError(f"initializers produce real floating-point arrays, got dtype {np.dtype(dtype).name}. "
                        "Pass a float dtype such as jnp.float32.")
    return dtype


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    return tuple(operator.index(d) for d in shape)


# ----- constants ----------------------------------------------------------------------------

def zeros(key, shape, dtype=None):
    """An array of zeros; the key is ignored. Example: `zeros(key, (2, 3))`."""
    return jnp.zeros(_shape(shape), _dtype(dtype))


def ones(key, shape, dtype=None):
    """An array of ones; the key is ignored. Example: `ones(key, (3,))`."""
    return jnp.ones(_shape(shape), _dtype(dtype))


def constant(value, dtype=None):
    """An initializer filling arrays with `value`. Example: `constant(-7.0)(key, (2, 3))`."""
    def init(key, shape, dtype=dtype):
        return jnp.full(_shape(shape), value, _dtype(dtype))
    return init


# ----- plain distributions ------------------------------------------------------------------

def normal(stddev=1e-2, dtype=None):
    """An initializer drawing from N(0, stddev^2). Example: `normal(0.1)(key, (4, 4))`."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.normal(key, _shape(shape), dtype) * jnp.asarray(stddev, dtype)
    return init


def uniform(scale=1e-2, dtype=None):
    """An initializer drawing uniformly from [0, scale) (JAX's meaning: not centred at 0).
    Example: `uniform(1.0)(key, (4,))`."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.uniform(key, _shape(shape), dtype) * jnp.asarray(scale, dtype)
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
    """An initializer drawing from N(0, stddev^2) truncated to (lower * stddev, upper * stddev).
    `stddev` is that of the untruncated normal: unlike `variance_scaling`, no correction is applied,
    so the samples' standard deviation is smaller (0.88 * stddev for the default bounds). Example:
    `truncated_normal(0.02)(key, (8, 8))`."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, _shape(shape), dtype) * jnp.asarray(stddev, dtype)
    return init


# ----- variance scaling ---------------------------------------------------------------------

def _axis_size(shape, axes, what):
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    for a in axes:
        if not -len(shape) <= a < len(shape):
            raise ValueError(f"variance_scaling: {what} {a} is out of bounds for a weight shape {shape}.")
    return math.prod(shape[a] for a in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the input and output sizes times the receptive field, the product of the
    axes that are none of in_axis, out_axis and batch_axis."""
    if len(shape) < 2:
        raise ValueError(f"variance_scaling needs a weight shape of at least 2 dimensions (inputs and "
                         f"outputs) to compute its fans, got shape {shape}. Use normal()/zeros for "
                         "biases, or pass in_axis/out_axis for a different layout.")
    in_size = _axis_size(shape, in_axis, "in_axis")
    out_size = _axis_size(shape, out_axis, "out_axis")
    batch_size = _axis_size(shape, batch_axis, "batch_axis")
    receptive_field = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field, out_size * receptive_field


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """An initializer whose samples have mean 0 and variance `scale / n`, with n the fan-in
    (mode="fan_in"), the fan-out ("fan_out") or their average ("fan_avg"); see the module docstring
    for how fans are read from the shape. `distribution` is "truncated_normal" (a normal cut at two
    standard deviations and rescaled by 1 / 0.8796 so the variance is still scale / n), "normal",
    or "uniform" (on [-sqrt(3 scale / n), sqrt(3 scale / n)]). This family generalises Glorot and
    Bengio (2010) and He et al. (2015, arXiv:1502.01852). Example:
    `variance_scaling(2.0, "fan_in", "normal")(key, (3, 3, 16, 32))`."""
    if mode not in ("fan_in", "fan_out", "fan_avg"):
        raise ValueError(f"invalid mode for variance scaling initializer: {mode!r}; expected one of "
                         "'fan_in', 'fan_out', 'fan_avg'.")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution!r}; "
                         "expected one of 'truncated_normal', 'normal', 'uniform'.")

    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        shape = _shape(shape)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[mode]
        variance = scale / n
        if distribution == "truncated_normal":
            stddev = math.sqrt(variance) / _TRUNCATED_NORMAL_STDDEV
            return random.truncated_normal(key, -2.0, 2.0, shape, dtype) * jnp.asarray(stddev, dtype)
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.asarray(math.sqrt(variance), dtype)
        # uniform on [-a, a) has variance a^2 / 3
        return random.uniform(key, shape, dtype, -1.0, 1.0) * jnp.asarray(math.sqrt(3 * variance), dtype)
    return init


def glorot_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """Glorot (Xavier) uniform: `variance_scaling(1.0, "fan_avg", "uniform")` (Glorot and Bengio,
    2010, AISTATS). Example: `glorot_uniform()(key, (64, 32))`."""
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """Glorot (Xavier) normal: `variance_scaling(1.0, "fan_avg", "truncated_normal")` (Glorot and
    Bengio, 2010, AISTATS). Example: `glorot_normal()(key, (64, 32))`."""
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def lecun_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """LeCun uniform: `variance_scaling(1.0, "fan_in", "uniform")` (LeCun et al., 1998, "Efficient
    BackProp"). Example: `lecun_uniform()(key, (64, 32))`."""
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """LeCun normal: `variance_scaling(1.0, "fan_in", "truncated_normal")`, the initializer SELU
    networks assume (Klambauer et al., 2017, arXiv:1706.02515). Example: `lecun_normal()(key, (64, 32))`."""
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


def he_uniform(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """He (Kaiming) uniform: `variance_scaling(2.0, "fan_in", "uniform")` (He et al., 2015,
    arXiv:1502.01852). Example: `he_uniform()(key, (3, 3, 1, 32))`."""
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    """He (Kaiming) normal: `variance_scaling(2.0, "fan_in", "truncated_normal")` (He et al., 2015,
    arXiv:1502.01852). Example: `he_normal()(key, (3, 3, 1, 32))`."""
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


# ----- orthogonal ---------------------------------------------------------------------------

def orthogonal(scale=1.0, column_axis=-1, dtype=None):
    """An initializer of `scale` times a random (Haar-distributed) orthogonal matrix (Saxe et al.,
    2013, arXiv:1312.6120). The array is viewed as a matrix whose columns lie along `column_axis`
    and whose rows are all the other axes flattened; of rows and columns, the smaller set is
    orthonormal (Q^T Q = I for a tall matrix, Q Q^T = I for a wide one). Half-precision dtypes are
    drawn in float32 and rounded. Example:
    `orthogonal()(key, (4, 3))` has orthonormal columns."""
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        shape = _shape(shape)
        if len(shape) < 2:
            raise ValueError(f"orthogonal initializer requires at least a 2D shape, got shape {shape}.")
        if not -len(shape) <= column_axis < len(shape):
            raise ValueError(f"orthogonal: column_axis {column_axis} is out of bounds for shape {shape}.")
        n_cols = shape[column_axis]
        other = tuple(d for i, d in enumerate(shape) if i != column_axis % len(shape))
        n_rows = math.prod(other)
        # random.orthogonal(key, n, m=m) is n x m with orthonormal columns when n >= m and rows
        # otherwise: exactly the matrix we need, columns along the last axis
        # LAPACK's QR has no half-precision kernels: draw in float32, then round
        work = dtype if np.dtype(dtype).itemsize >= 4 else jnp.float32
        q = random.orthogonal(key, n_rows, dtype=work, m=n_cols).astype(dtype)
        q = jnp.moveaxis(jnp.reshape(q, other + (n_cols,)), -1, column_axis)
        return q * jnp.asarray(scale, dtype)
    return init

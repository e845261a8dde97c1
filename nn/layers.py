"""Stateless layers, in `jax.example_libraries.stax`'s conventions (see `nn/base.py` for the contract).

Every constructor returns a `Layer` (a NamedTuple `(init_fun, apply_fun)` that unpacks like stax's
pair) carrying a `name` attribute, e.g. "Dense(10)", that `nn.summary` prints. Parameterless
layers are values, not constructors, exactly as in stax: `serial(Dense(10), Relu, Flatten)`.
Inputs are batched (NHWC images for `Conv`); -1 in an input shape marks the unknown batch size.

Example:
    >>> init_fun, apply_fun = Dense(3)
    >>> out_shape, params = init_fun(random.PRNGKey(0), (-1, 5))    # out_shape == (-1, 3)
    >>> apply_fun(params, jnp.ones((2, 5))).shape
    (2, 3)
"""
import math

import numpy as np

import core.numpy as jnp
from core import lax, random

from . import functions as F
from .base import Layer, check_input_size, describe_array, named
from .initializers import glorot_normal, normal

__all__ = ["Dense", "GeneralConv", "Conv", "Conv1D", "GeneralConvTranspose", "ConvTranspose", "Conv1DTranspose",
           "MaxPool", "AvgPool", "SumPool", "Flatten", "Identity", "Dropout", "elementwise", "Relu", "Gelu", "Elu",
           "LeakyRelu", "Selu", "Sigmoid", "Tanh", "Softplus", "Silu", "LogSoftmax", "Softmax", "Exp"]


def _named(lyr, name):
    return named(lyr, name)


def _describe(name, *args, **kwargs):
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items() if v is not None]
    return f"{name}({', '.join(parts)})"


# ----- Dense -----------------------------------------------------------------------------------------

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """Fully connected layer: `inputs @ W + b` over the last axis.

    W has shape (in_dim, out_dim) (stax's default init: Glorot normal), b shape (out_dim,)
    (N(0, 0.01**2)). Example: `Dense(10)` maps (-1, 784) inputs to (-1, 10).
    """
    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        in_dim = np.shape(W)[0]
        check_input_size(name, inputs, -1, in_dim, f"(..., {in_dim})", "features on the last axis")
        return jnp.dot(inputs, W) + b

    name = _describe("Dense", out_dim)
    return _named(Layer(init_fun, apply_fun), name)


# ----- convolutions ----------------------------------------------------------------------------------

def _window_out(n, k, s, lo, hi):
    size = n + lo + hi
    return 0 if size < k else (size - k) // s + 1


def _conv_output_shape(input_shape, out_chan, filter_shape, dimension_numbers, strides, padding, rhs_dilation,
                       transpose=False):
    # filter_shape lists the kernel's spatial sizes in the order the rhs spec names them, as stax
    dn = lax.conv_general_permutations(dimension_numbers)
    in_sp = [input_shape[a] for a in dn.lhs_spec[2:]]
    k_sp = [(k - 1) * d + 1 for k, d in zip(filter_shape, rhs_dilation, strict=True)]
    if transpose:
        # lax.conv_transpose: 'SAME' gives in * s, 'VALID' in * s + max(k - s, 0), explicit pads
        # apply to the stride-dilated input
        if padding == "SAME":
            out_sp = [n * s for n, s in zip(in_sp, strides, strict=True)]
        elif padding == "VALID":
            out_sp = [n * s + max(k - s, 0) for n, k, s in zip(in_sp, k_sp, strides, strict=True)]
        else:
            out_sp = [_window_out((n - 1) * s + 1, k, 1, lo, hi)
                      for n, k, s, (lo, hi) in zip(in_sp, k_sp, strides, padding, strict=True)]
    else:
        pads = lax.padtype_to_pads(in_sp, k_sp, strides, padding)
        out_sp = [_window_out(n, k, s, lo, hi) for n, k, s, (lo, hi) in zip(in_sp, k_sp, strides, pads, strict=True)]
    out = [None] * len(input_shape)
    out[dn.out_spec[0]] = input_shape[dn.lhs_spec[0]]
    out[dn.out_spec[1]] = out_chan
    for a, n in zip(dn.out_spec[2:], out_sp, strict=True):
        out[a] = n
    return tuple(out)


def _conv_layer(name, dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init, rhs_dilation,
                feature_group_count, transpose):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides or one)
    rhs_dilation = tuple(rhs_dilation or one)
    groups = int(feature_group_count)
    if out_chan % groups:
        raise ValueError(f"{name}: out_chan ({out_chan}) must be divisible by feature_group_count ({groups}).")
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        in_chan = input_shape[lhs_spec.index("C")]
        if in_chan % groups:
            raise ValueError(f"{name}: the input's {in_chan} channels (input shape {tuple(input_shape)}) are not "
                             f"divisible by feature_group_count ({groups}).")
        spatial = iter(filter_shape)
        kernel_shape = tuple(out_chan if c == "O" else in_chan // groups if c == "I" else next(spatial)
                             for c in rhs_spec)
        output_shape = _conv_output_shape(tuple(input_shape), out_chan, tuple(filter_shape), dimension_numbers,
                                          strides, padding, rhs_dilation, transpose)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        _check_conv_inputs(desc, inputs, W, lhs_spec, rhs_spec, groups)
        if transpose:
            out = lax.conv_transpose(inputs, W, strides, padding, rhs_dilation=rhs_dilation,
                                     dimension_numbers=dimension_numbers)
        else:
            out = lax.conv_general_dilated(inputs, W, strides, padding, one, rhs_dilation,
                                           dimension_numbers=dimension_numbers, feature_group_count=groups)
        return out + b

    desc = _describe(name, out_chan, tuple(filter_shape), strides=None if strides == one else strides,
                     padding=None if padding == "VALID" else padding,
                     rhs_dilation=None if rhs_dilation == one else rhs_dilation,
                     feature_group_count=None if groups == 1 else groups)
    return _named(Layer(init_fun, apply_fun), desc)


def _check_conv_inputs(name, inputs, W, lhs_spec, rhs_spec, groups):
    """The inputs' rank and channels against the layout and the kernel the params hold."""
    shape = np.shape(inputs)
    if len(shape) != len(lhs_spec):
        raise ValueError(f"{name} expected inputs of rank {len(lhs_spec)} (layout {lhs_spec}), got inputs of type "
                         f"{describe_array(inputs)}.")
    in_chan = np.shape(W)[rhs_spec.index("I")] * groups
    pattern = "(" + ", ".join(str(in_chan) if c == "C" else c for c in lhs_spec) + ")"
    check_input_size(name, inputs, lhs_spec.index("C"), in_chan, pattern, f"input channels (axis C of {lhs_spec})")


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                b_init=normal(1e-6), *, rhs_dilation=None, feature_group_count=1):
    """Convolution with layouts given as three strings, e.g. ('NHWC', 'HWIO', 'NHWC') (as stax).

    `filter_shape` lists the kernel's spatial sizes in the order the kernel spec names them;
    `padding` is 'VALID', 'SAME' or (low, high) pairs. The default W_init is Glorot normal with
    fans from the kernel's I and O axes, b_init N(0, 1e-12). Beyond stax: `rhs_dilation` (atrous
    convolution) and `feature_group_count` (grouped/depthwise: input channels split into groups,
    the kernel's I axis is in_chan / groups).
    Example: `GeneralConv(('NCHW', 'OIHW', 'NCHW'), 8, (3, 3))` maps (-1, 3, 32, 32) to (-1, 8, 30, 30).
    """
    return _conv_layer("GeneralConv", dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
                       rhs_dilation, feature_group_count, transpose=False)


def Conv(out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=normal(1e-6), *,
         rhs_dilation=None, feature_group_count=1):
    """2-d convolution on NHWC inputs with HWIO kernels (`GeneralConv` with stax's Conv layouts).

    Example: `Conv(32, (3, 3), padding='SAME')` maps (-1, 28, 28, 1) to (-1, 28, 28, 32).
    """
    return _conv_layer("Conv", ("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding, W_init, b_init,
                       rhs_dilation, feature_group_count, transpose=False)


def Conv1D(out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=normal(1e-6), *,
           rhs_dilation=None, feature_group_count=1):
    """1-d convolution on NHC (batch, length, channels) inputs with HIO kernels.

    Example: `Conv1D(4, (3,))` maps (-1, 10, 2) to (-1, 8, 4).
    """
    return _conv_layer("Conv1D", ("NHC", "HIO", "NHC"), out_chan, filter_shape, strides, padding, W_init, b_init,
                       rhs_dilation, feature_group_count, transpose=False)


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                         b_init=normal(1e-6), *, rhs_dilation=None):
    """Transposed convolution with `lax.conv_transpose` (as stax: the kernel is not flipped, so
    this equals the textbook scatter-add transposed convolution with a spatially flipped kernel).

    'SAME' gives spatial sizes in * stride, 'VALID' in * stride + max(kernel - stride, 0).
    Example: `GeneralConvTranspose(('NHWC', 'HWIO', 'NHWC'), 4, (3, 3), (2, 2), 'SAME')` maps
    (-1, 5, 5, 2) to (-1, 10, 10, 4).
    """
    return _conv_layer("GeneralConvTranspose", dimension_numbers, out_chan, filter_shape, strides, padding, W_init,
                       b_init, rhs_dilation, 1, transpose=True)


def ConvTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=normal(1e-6), *,
                  rhs_dilation=None):
    """2-d transposed convolution, NHWC inputs and HWIO kernels (see `GeneralConvTranspose`).

    Example: `ConvTranspose(8, (2, 2), (2, 2))` maps (-1, 7, 7, 3) to (-1, 14, 14, 8).
    """
    return _conv_layer("ConvTranspose", ("NHWC", "HWIO", "NHWC"), out_chan, filter_shape, strides, padding, W_init,
                       b_init, rhs_dilation, 1, transpose=True)


def Conv1DTranspose(out_chan, filter_shape, strides=None, padding="VALID", W_init=None, b_init=normal(1e-6), *,
                    rhs_dilation=None):
    """1-d transposed convolution, NHC inputs and HIO kernels (see `GeneralConvTranspose`).

    Example: `Conv1DTranspose(2, (3,), (2,))` maps (-1, 4, 1) to (-1, 9, 2).
    """
    return _conv_layer("Conv1DTranspose", ("NHC", "HIO", "NHC"), out_chan, filter_shape, strides, padding, W_init,
                       b_init, rhs_dilation, 1, transpose=True)


# ----- pooling ---------------------------------------------------------------------------------------

def _pool_geometry(name, window_shape, strides, padding, spec, ndim):
    # stax gives window and strides for the spatial axes only; N and C get windows of 1
    window_shape = tuple(window_shape)
    nsp = len(window_shape)
    strides = tuple(strides or (1,) * nsp)
    if len(strides) != nsp:
        raise ValueError(f"{name}: strides {strides} must have one entry per window dimension {window_shape}.")
    if ndim != nsp + 2:
        raise ValueError(f"{name}: a window of {nsp} spatial dimensions {window_shape} needs inputs of rank "
                         f"{nsp + 2} (batch, spatial..., channels), got rank {ndim}.")
    non_spatial = (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))
    spatial_axes = tuple(a for a in range(ndim) if a not in non_spatial)
    if not isinstance(padding, str):
        padding = tuple(tuple(p) for p in padding)
        if len(padding) == ndim:   # stax-style: a pair for every axis
            padding = tuple(padding[a] for a in spatial_axes)
        if len(padding) != nsp:
            raise ValueError(f"{name}: padding {padding} must have one (low, high) pair per spatial dimension.")
    return window_shape, strides, padding, spatial_axes


def _pooling_layer(name, kind, doc):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        def geometry(input_shape):
            w, s, pad, axes = _pool_geometry(name, window_shape, strides, padding, spec, len(input_shape))
            in_sp = [input_shape[a] for a in axes]
            pads = lax.padtype_to_pads(in_sp, w, s, pad)
            return w, s, pads, axes

        def init_fun(rng, input_shape):
            w, s, pads, axes = geometry(tuple(input_shape))
            out = list(input_shape)
            for a, k, st, (lo, hi) in zip(axes, w, s, pads, strict=True):
                out[a] = _window_out(input_shape[a], k, st, lo, hi)
            return tuple(out), ()

        def apply_fun(params, inputs, **kwargs):
            w, s, pads, axes = geometry(inputs.shape)
            ndim = inputs.ndim
            win, st, pd = [1] * ndim, [1] * ndim, [(0, 0)] * ndim
            for a, k, stride, p in zip(axes, w, s, pads, strict=True):
                win[a], st[a], pd[a] = k, stride, p
            if kind == "max":
                return lax.reduce_window_max(inputs, tuple(win), tuple(st), tuple(pd))
            out = lax.reduce_window_sum(inputs, tuple(win), tuple(st), tuple(pd))
            if kind == "sum":
                return out
            # as stax: divide by the number of real (non-padding) elements in each window; the
            # counts are static, so a NumPy constant
            counts = np.ones((), np.float64)
            shape = [1] * ndim
            for a, k, stride, (lo, hi) in zip(axes, w, s, pads, strict=True):
                n = inputs.shape[a]
                starts = np.arange(_window_out(n, k, stride, lo, hi)) * stride - lo
                per_axis = np.minimum(starts + k, n) - np.maximum(starts, 0)
                shape[a] = per_axis.size
                counts = counts[..., None] * per_axis
            counts = counts.reshape(shape)
            return out / jnp.asarray(counts, inputs.dtype)

        return _named(Layer(init_fun, apply_fun),
                      _describe(name, tuple(window_shape), strides=strides,
                                padding=None if padding == "VALID" else padding, spec=spec))

    PoolingLayer.__name__ = PoolingLayer.__qualname__ = name
    PoolingLayer.__doc__ = doc
    return PoolingLayer


MaxPool = _pooling_layer("MaxPool", "max", """Max pooling over spatial windows (padding never wins).

    `window_shape` and `strides` (default 1) cover the spatial axes only; inputs are NHWC unless
    `spec` (e.g. 'NCHW') says where N and C are. `padding`: 'VALID', 'SAME' or (low, high) pairs.
    Example: `MaxPool((2, 2), (2, 2))` maps (-1, 28, 28, 32) to (-1, 14, 14, 32).
    """)
SumPool = _pooling_layer("SumPool", "sum", """Sum pooling over spatial windows (padding counts as 0).

    Arguments as `MaxPool`. Example: `SumPool((2, 2))` maps (-1, 5, 5, 3) to (-1, 4, 4, 3).
    """)
AvgPool = _pooling_layer("AvgPool", "avg", """Average pooling over spatial windows.

    As stax, each window's sum is divided by the number of REAL input elements in it: padding is
    excluded from the count (with 'SAME' padding, an edge window of 2 real elements out of 3 is
    their mean, not their sum / 3). Arguments as `MaxPool`.
    Example: `AvgPool((2, 2), (2, 2), 'SAME')` maps (-1, 5, 5, 3) to (-1, 3, 3, 3).
    """)


# ----- shape and identity layers ---------------------------------------------------------------------

def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return _named(Layer(init_fun, apply_fun), "Flatten")


Flatten = _flatten()
Flatten.__doc__ = "Flatten all but the leading (batch) axis: (-1, 7, 7, 64) -> (-1, 3136). A layer, not a constructor."


def _identity():
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return inputs

    return _named(Layer(init_fun, apply_fun), "Identity")


Identity = _identity()


# ----- Dropout ---------------------------------------------------------------------------------------

def Dropout(rate, mode="train"):
    """Dropout (Srivastava et al., 2014, JMLR 15): in "train" mode zero each input with probability
    1 - rate and scale the survivors by 1 / rate; in "eval" mode, the identity.

    !!! `rate` is the KEEP probability, as in stax (`Dropout(0.9)` keeps 90% of the units), the
    opposite of PyTorch's and Keras's `p`/`rate`. !!!

    `mode` set here is the default; `apply_fun(params, x, rng=key, mode="eval")` overrides it at
    apply time (combinators pass `mode` through). Train mode needs `rng=`; the mask depends only on
    it, so the same key gives the same mask.
    Example: `Dropout(0.5)[1]((), x, rng=random.PRNGKey(0))` zeroes about half of `x`, doubling the rest.
    """
    if isinstance(rate, (int, float)):
        rate = float(rate)   # bernoulli needs a float probability; Dropout(1) is valid
        if not 0 < rate <= 1:
            raise ValueError(f"Dropout rate is the keep probability (stax's convention) and must be in (0, 1], "
                             f"got {rate}. To drop a fraction p of the units, use Dropout(1 - p).")
    if mode not in ("train", "eval"):
        raise ValueError(f"Dropout mode must be 'train' or 'eval', got {mode!r}.")
    default_mode = mode

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        mode = kwargs.get("mode", default_mode)
        if mode == "eval":
            return inputs
        if mode != "train":
            raise ValueError(f"Dropout mode must be 'train' or 'eval', got {mode!r}.")
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError("Dropout in train mode needs a PRNG key: call apply_fun(params, inputs, rng=key) "
                             "with key from core.random.PRNGKey, or pass mode='eval'.")
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / jnp.asarray(rate, inputs.dtype), jnp.zeros((), inputs.dtype))

    return _named(Layer(init_fun, apply_fun), _describe("Dropout", rate, mode=None if mode == "train" else mode))


# ----- elementwise layers ----------------------------------------------------------------------------

def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying `fun(inputs, **fun_kwargs)` (as stax's `elementwise`).

    Example: `elementwise(jnp.tanh)` is `Tanh`; `elementwise(leaky_relu, negative_slope=0.2)`.
    """
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return _named(Layer(init_fun, apply_fun), getattr(fun, "__name__", "elementwise"))


def _act(fun, name, **kw):
    return _named(elementwise(fun, **kw), name)


Relu = _act(F.relu, "Relu")
Gelu = _act(F.gelu, "Gelu")
Elu = _act(F.elu, "Elu")
LeakyRelu = _act(F.leaky_relu, "LeakyRelu")
Selu = _act(F.selu, "Selu")
Sigmoid = _act(F.sigmoid, "Sigmoid")
Tanh = _act(jnp.tanh, "Tanh")
Softplus = _act(F.softplus, "Softplus")
Silu = _act(F.silu, "Silu")
Exp = _act(jnp.exp, "Exp")
LogSoftmax = _act(F.log_softmax, "LogSoftmax", axis=-1)
Softmax = _act(F.softmax, "Softmax", axis=-1)

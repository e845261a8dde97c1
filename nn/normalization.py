"""Normalization layers (BatchNorm, LayerNorm, GroupNorm) and Embedding.

Layers follow the contract of `nn/base.py`: `init_fun(rng, input_shape) -> (output_shape,
params)`, `apply_fun(params, inputs, **kwargs)`. Inputs are channels-last (NHWC, as stax). The
affine parameters are the tuple `(beta, gamma)`, as in stax, and are created even when
`center=False` or `scale=False` (the flag only decides whether the layer uses them).

BatchNorm is the one stateful layer here: its running mean and variance are explicit state
(`layer.init_state(input_shape)`), passed in and returned by `apply_fun(..., state=, mode=)`.
"""
import numpy as np

import core.numpy as jnp
from core import lax, random
from core.per_example import batch_coupled

from .base import Layer, describe_array, named
from .initializers import normal, ones, zeros

__all__ = ["BatchNorm", "LayerNorm", "GroupNorm", "Embedding"]

_MODES = ("train", "eval")


def _named(lyr, name):
    """Record the layer's display name (`nn.summary` and errors show it)."""
    return named(lyr, name)


def _check_param_shape(layer, x, axes_shape, param_shape, what):
    """The inputs' normalized (or feature) axes against the shape the affine params were made for."""
    if tuple(axes_shape) != tuple(param_shape):
        raise ValueError(f"{layer} expected inputs whose {what} have shape {tuple(param_shape)} (the shape its "
                         f"params were made for), got inputs of type {describe_array(x)}, where they have shape "
                         f"{tuple(axes_shape)}. Make the params for these inputs with init_fun(rng, input_shape) "
                         "of their shape, or check the layer before this one.")


def _axes(axis, ndim, layer):
    """`axis` (an int or a tuple of ints, negatives from the end) as sorted non-negative ints."""
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"{layer}: axis {a} is out of range for inputs of rank {ndim}.")
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{layer}: repeated axis in {axis}.")
    return tuple(sorted(out))


def _check_mode(mode, layer):
    if mode not in _MODES:
        raise ValueError(f"{layer}: mode must be 'train' or 'eval', got {mode!r}.")


def _affine(x, beta, gamma, keep, center, scale):
    """`gamma * x + beta` with the parameters placed along the axes in `keep` of `x`."""
    shape = tuple(x.shape[i] if i in keep else 1 for i in range(x.ndim))
    if scale:
        x = x * jnp.reshape(gamma, shape)
    if center:
        x = x + jnp.reshape(beta, shape)
    return x


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones,
              momentum=0.99, axis_name=None):
    """Batch normalization (Ioffe & Szegedy 2015, "Batch Normalization: Accelerating Deep Network
    Training by Reducing Internal Covariate Shift", arXiv:1502.03167), stateful.

    With the batch statistics over `axis` (default `(0, 1, 2)`: batch and spatial axes of NHWC),

        mean = E[x],  var = E[(x - mean)^2]          (biased variance: divide by n)
        y = gamma * (x - mean) * rsqrt(var + epsilon) + beta

    Mode "train" (the default) normalizes with the batch's statistics; with `axis_name` they are
    averaged over that named mapped axis (`lax.pmean`), so replicas under `vmap(...,
    axis_name=)` or `pmap` normalize with the statistics of the whole global batch (shards of
    equal size). Given `state=` it returns `(y, new_state)` with the exponential moving averages

        running_mean <- momentum * running_mean + (1 - momentum) * mean
        running_var  <- momentum * running_var  + (1 - momentum) * var

    Mode "eval" normalizes with `state`'s running statistics and returns the state unchanged; it
    needs `state=`. The variance is the biased one in both places, as in Flax's BatchNorm (same
    `momentum` convention, default 0.99); PyTorch normalizes with the biased variance too but
    stores the unbiased one (times n / (n - 1)) in its running average, and its `momentum=0.1`
    is our `1 - momentum`. The state is `{"mean": zeros, "var": ones}` over the feature axes
    (those not in `axis`); params are `(beta, gamma)` of the same shape.

    Example:
        >>> bn = BatchNorm(axis=(0,))
        >>> _, params = bn.init_fun(random.key(0), (-1, 3))
        >>> state = bn.init_state((-1, 3))
        >>> x = jnp.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
        >>> y, state = bn.apply_fun(params, x, state=state)             # train: batch stats
        >>> y, _ = bn.apply_fun(params, x, state=state, mode="eval")    # running stats
    """
    def feature_shape(input_shape):
        axes = _axes(axis, len(input_shape), "BatchNorm")
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        if any(d < 0 for d in shape):
            raise ValueError(f"BatchNorm: the feature dimensions (those not in axis={axis}) must be known, got "
                             f"input_shape {tuple(input_shape)}; -1 may only mark normalized axes.")
        return shape

    def init_fun(rng, input_shape):
        shape = feature_shape(input_shape)
        k1, k2 = random.split(rng)
        return tuple(input_shape), (beta_init(k1, shape), gamma_init(k2, shape))

    def init_state(input_shape):
        shape = feature_shape(input_shape)
        return {"mean": jnp.zeros(shape), "var": jnp.ones(shape)}

    def apply_fun(params, x, state=None, mode="train", **kwargs):
        _check_mode(mode, "BatchNorm")
        beta, gamma = params
        axes = _axes(axis, x.ndim, "BatchNorm")
        keep = tuple(i for i in range(x.ndim) if i not in axes)
        _check_param_shape("BatchNorm", x, [x.shape[i] for i in keep], np.shape(beta),
                           f"feature axes (those not in axis={axis})")
        if state is not None:
            _check_state(state, tuple(x.shape[i] for i in keep))
        if mode == "eval":
            if state is None:
                raise ValueError("BatchNorm in mode='eval' normalizes with the running statistics, which live "
                                 "in the layer's state: call apply_fun(params, x, state=state, mode='eval') with "
                                 "state from layer.init_state(input_shape), updated by train-mode calls.")
            mean, var = state["mean"], state["var"]
        else:
            # marked, so per-example transformations refuse it rather than normalize each example alone
            mean = batch_coupled(jnp.mean(x, axis=axes), "BatchNorm in train mode")
            if axis_name is not None:
                mean = lax.pmean(mean, axis_name)
            centered = x - _expand(mean, x.ndim, keep)
            var = jnp.mean(lax.square(centered), axis=axes)
            if axis_name is not None:
                var = lax.pmean(var, axis_name)
        x_hat = (x - _expand(mean, x.ndim, keep)) * lax.rsqrt(_expand(var, x.ndim, keep) + epsilon)
        y = _affine(x_hat, beta, gamma, keep, center, scale)
        if state is None:
            return y
        if mode == "eval":
            return y, state
        # the running averages are bookkeeping, not part of the differentiated computation
        mean, var = lax.stop_gradient(mean), lax.stop_gradient(var)
        running_mean = momentum * state["mean"] + (1 - momentum) * mean
        running_var = momentum * state["var"] + (1 - momentum) * var
        new_state = {"mean": running_mean.astype(state["mean"].dtype),
                     "var": running_var.astype(state["var"].dtype)}
        return y, new_state

    return _named(Layer(init_fun, apply_fun, init_state), "BatchNorm")


def _expand(stat, ndim, keep):
    """A statistic over the kept axes, reshaped to broadcast against an input of rank `ndim`."""
    return jnp.reshape(stat, tuple(stat.shape[keep.index(i)] if i in keep else 1 for i in range(ndim)))


def _check_state(state, shape):
    if not isinstance(state, dict) or set(state) != {"mean", "var"}:
        raise TypeError(f"BatchNorm: state must be a dict with keys 'mean' and 'var' (from "
                        f"layer.init_state(input_shape)), got {type(state).__name__} "
                        f"{sorted(state) if isinstance(state, dict) else ''}.")
    for name in ("mean", "var"):
        got = tuple(jnp.shape(state[name]))
        if got != shape:
            raise ValueError(f"BatchNorm: state[{name!r}] has shape {got}, but these inputs have feature "
                             f"shape {shape}; build the state with layer.init_state for these inputs.")


def LayerNorm(axis=-1, epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones):
    """Layer normalization (Ba, Kiros & Hinton 2016, "Layer Normalization", arXiv:1607.06450).

    Each example is normalized over `axis` (default the last, the features), independently of
    the others: `y = gamma * (x - E[x]) * rsqrt(Var[x] + epsilon) + beta`, mean and (biased)
    variance over `axis`. `gamma` and `beta` have the shape of the normalized axes. Stateless;
    negative `axis` values keep it rank-agnostic, so `vmap(apply_fun)` over examples works.

    Example:
        >>> ln = LayerNorm()
        >>> out_shape, params = ln.init_fun(random.key(0), (-1, 5, 8))
        >>> [p.shape for p in params]                                    # (beta, gamma)
        [(8,), (8,)]
        >>> y = ln.apply_fun(params, jnp.ones((2, 5, 8)))
    """
    def init_fun(rng, input_shape):
        axes = _axes(axis, len(input_shape), "LayerNorm")
        shape = tuple(input_shape[i] for i in axes)
        if any(d < 0 for d in shape):
            raise ValueError(f"LayerNorm: the normalized dimensions (axis={axis}) must be known, got "
                             f"input_shape {tuple(input_shape)}.")
        k1, k2 = random.split(rng)
        return tuple(input_shape), (beta_init(k1, shape), gamma_init(k2, shape))

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        axes = _axes(axis, x.ndim, "LayerNorm")
        _check_param_shape("LayerNorm", x, [x.shape[i] for i in axes], np.shape(gamma),
                           f"normalized axes (axis={axis})")
        mean = jnp.mean(x, axis=axes, keepdims=True)
        var = jnp.mean(lax.square(x - mean), axis=axes, keepdims=True)
        x_hat = (x - mean) * lax.rsqrt(var + epsilon)
        return _affine(x_hat, beta, gamma, axes, center, scale)

    return _named(Layer(init_fun, apply_fun), "LayerNorm")


def GroupNorm(num_groups=32, epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones):
    """Group normalization (Wu & He 2018, "Group Normalization", arXiv:1803.08494).

    Channels-last inputs `(batch, ..., C)`: the C channels are split into `num_groups` groups of
    C / num_groups consecutive channels, and each example is normalized with the mean and
    (biased) variance of each group over its spatial positions and channels:
    `y = gamma * (x - mean_g) * rsqrt(var_g + epsilon) + beta`, with `gamma`, `beta` per channel
    (shape `(C,)`). Stateless; num_groups=1 is LayerNorm over all non-batch axes, num_groups=C
    instance normalization.

    Example:
        >>> gn = GroupNorm(num_groups=2)
        >>> out_shape, params = gn.init_fun(random.key(0), (-1, 4, 4, 6))   # 2 groups of 3 channels
        >>> y = gn.apply_fun(params, jnp.ones((2, 4, 4, 6)))
    """
    def init_fun(rng, input_shape):
        if len(input_shape) < 2:
            raise ValueError(f"GroupNorm: inputs must be (batch, ..., channels), got input_shape "
                             f"{tuple(input_shape)}.")
        channels = input_shape[-1]
        if channels < 0 or channels % num_groups:
            raise ValueError(f"GroupNorm: the number of channels ({channels}) must be a multiple of "
                             f"num_groups ({num_groups}).")
        k1, k2 = random.split(rng)
        return tuple(input_shape), (beta_init(k1, (channels,)), gamma_init(k2, (channels,)))

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        if x.ndim < 2:
            raise ValueError(f"GroupNorm({num_groups}): inputs must be (batch, ..., channels), got inputs of type "
                             f"{describe_array(x)}.")
        channels = x.shape[-1]
        _check_param_shape(f"GroupNorm({num_groups})", x, [channels], np.shape(gamma), "channels (last axis)")
        if channels % num_groups:
            raise ValueError(f"GroupNorm: the number of channels ({channels}) must be a multiple of "
                             f"num_groups ({num_groups}).")
        grouped = jnp.reshape(x, x.shape[:-1] + (num_groups, channels // num_groups))
        # every axis but the batch (0) and the group (-2) one
        axes = tuple(range(1, grouped.ndim - 2)) + (grouped.ndim - 1,)
        mean = jnp.mean(grouped, axis=axes, keepdims=True)
        var = jnp.mean(lax.square(grouped - mean), axis=axes, keepdims=True)
        x_hat = jnp.reshape((grouped - mean) * lax.rsqrt(var + epsilon), x.shape)
        return _affine(x_hat, beta, gamma, (x.ndim - 1,), center, scale)

    return _named(Layer(init_fun, apply_fun), f"GroupNorm({num_groups})")


def Embedding(vocab_size, features, embedding_init=normal(1.0)):
    """A lookup table: integer ids of any shape -> vectors, `table[ids]` (`jnp.take` along axis 0).

    Params are the table, `(vocab_size, features)`, drawn from N(0, 1) by default (PyTorch's
    `nn.Embedding` default). Output shape: `ids.shape + (features,)`. As `jnp.take` in JAX, an id
    outside `[-vocab_size, vocab_size)` gives NaN rows (no error can be raised inside a program);
    negative ids count from the end.

    Example:
        >>> emb = Embedding(100, 16)
        >>> out_shape, table = emb.init_fun(random.key(0), (-1, 12))
        >>> vectors = emb.apply_fun(table, jnp.zeros((2, 12), jnp.int32))
        >>> out_shape, vectors.shape
        ((-1, 12, 16), (2, 12, 16))
    """
    def init_fun(rng, input_shape):
        return tuple(input_shape) + (features,), embedding_init(rng, (vocab_size, features))

    def apply_fun(params, ids, **kwargs):
        ids = jnp.asarray(ids)
        if np.dtype(ids.dtype).kind not in "iu":
            raise TypeError(f"Embedding: ids must be integers, got dtype {ids.dtype}; cast them with "
                            f"ids.astype(jnp.int32).")
        return jnp.take(params, ids, axis=0)

    return _named(Layer(init_fun, apply_fun), f"Embedding({vocab_size}, {features})")

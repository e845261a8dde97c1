"""Attention: `dot_product_attention` and the `MultiHeadAttention` layer.

Layout (as `jax.nn.dot_product_attention` and Flax): queries `(..., q_len, heads, depth)`, keys
and values `(..., k_len, heads, depth)`; a mask is boolean, True where a query may attend to a
key, and broadcasts against the attention weights `(..., heads, q_len, k_len)`.
"""
import math

import numpy as np

import core.numpy as jnp
from core import lax, random

from .base import Layer, check_input_size
from .initializers import glorot_normal, zeros
from .normalization import _named

__all__ = ["dot_product_attention", "MultiHeadAttention"]


def _softmax(logits, axis):
    # shifting by the max keeps exp from overflowing; it cancels in the ratio
    shifted = logits - lax.stop_gradient(jnp.max(logits, axis=axis, keepdims=True))
    e = jnp.exp(shifted)
    return e / jnp.sum(e, axis=axis, keepdims=True)


def dot_product_attention(query, key, value, mask=None):
    """Scaled dot-product attention (Vaswani et al. 2017, "Attention Is All You Need",
    arXiv:1706.03762): `softmax(q k^T / sqrt(depth)) v` per head.

    `query` is `(..., q_len, heads, depth)`, `key` `(..., k_len, heads, depth)`, `value`
    `(..., k_len, heads, v_depth)`; the result is `(..., q_len, heads, v_depth)`. `mask`, boolean
    and broadcastable to `(..., heads, q_len, k_len)`, keeps the pairs where it is True: the
    others get the most negative finite logit, so a query with no key to attend to spreads its
    weight evenly over all keys (as Flax) rather than producing NaN.

    Example:
        >>> q = k = v = jnp.ones((2, 5, 4, 8))                        # batch 2, 5 steps, 4 heads
        >>> causal = jnp.tril(jnp.ones((5, 5), bool))
        >>> dot_product_attention(q, k, v, mask=causal).shape
        (2, 5, 4, 8)
    """
    query, key, value = jnp.asarray(query), jnp.asarray(key), jnp.asarray(value)
    for name, a in (("query", query), ("key", key), ("value", value)):
        if a.ndim < 3:
            raise TypeError(f"dot_product_attention: {name} must be (..., length, heads, depth), got shape "
                            f"{tuple(a.shape)}.")
    if query.shape[-1] != key.shape[-1] or query.shape[-2] != key.shape[-2]:
        raise TypeError(f"dot_product_attention: query and key must have the same heads and depth, got shapes "
                        f"{tuple(query.shape)} and {tuple(key.shape)}.")
    if key.shape[-3] != value.shape[-3] or key.shape[-2] != value.shape[-2]:
        raise TypeError(f"dot_product_attention: key and value must have the same length and heads, got shapes "
                        f"{tuple(key.shape)} and {tuple(value.shape)}.")
    # scaling q (not the logits) costs q_len * depth multiplies instead of q_len * k_len
    query = query / math.sqrt(query.shape[-1])
    logits = jnp.einsum("...qhd,...khd->...hqk", query, key)
    if mask is not None:
        mask = jnp.asarray(mask)
        if mask.dtype != np.dtype(bool):
            raise TypeError(f"dot_product_attention: mask must be boolean (True = attend), got dtype {mask.dtype}; "
                            f"use mask.astype(bool) or a comparison.")
        logits = jnp.where(mask, logits, jnp.finfo(logits.dtype).min)
    weights = _softmax(logits, axis=-1)
    return jnp.einsum("...hqk,...khd->...qhd", weights, value)


def MultiHeadAttention(num_heads, qkv_features=None, out_features=None, head_dim=None, use_bias=True,
                       kernel_init=glorot_normal(), bias_init=zeros):
    """Multi-head attention (Vaswani et al. 2017, "Attention Is All You Need", arXiv:1706.03762).

    `input_shape` is one shape `(batch, seq, features)` (self-attention: queries, keys and values
    all come from the inputs) or a pair `(query_shape, key_value_shape)`, with apply inputs
    `(queries, keys_values)` to match. Per head h:

        q_h = x_q W_q^h + b_q^h,  k_h = x_kv W_k^h + b_k^h,  v_h = x_kv W_v^h + b_v^h
        head_h = softmax(q_h k_h^T / sqrt(head_dim) [masked]) v_h
        out = concat_h(head_h) W_o + b_o

    `qkv_features` (default: the query features) is heads * head_dim; give either it or
    `head_dim`. `out_features` defaults to the query features. `apply_fun(params, inputs,
    mask=None)`: `mask` boolean, broadcastable to `(batch, heads, q_len, k_len)`, True = attend.
    Params: `{"query", "key", "value", "out"}`, each a `(kernel, bias)` pair with 2-D kernels
    (`(features, heads * head_dim)`, and `(heads * head_dim, out_features)` for "out"); with
    `use_bias=False` the biases are still made (the params keep one layout) but not used.

    Example:
        >>> mha = MultiHeadAttention(num_heads=4, qkv_features=32)
        >>> out_shape, params = mha.init_fun(random.key(0), (-1, 10, 16))
        >>> x = jnp.ones((2, 10, 16))
        >>> y = mha.apply_fun(params, x, mask=jnp.tril(jnp.ones((10, 10), bool)))
        >>> out_shape, y.shape
        ((-1, 10, 16), (2, 10, 16))
    """
    def sizes(q_features):
        if head_dim is not None and qkv_features is not None and qkv_features != num_heads * head_dim:
            raise ValueError(f"MultiHeadAttention: qkv_features ({qkv_features}) must equal num_heads * head_dim "
                             f"({num_heads} * {head_dim}); give one of them.")
        total = num_heads * head_dim if head_dim is not None else (qkv_features or q_features)
        if total % num_heads:
            raise ValueError(f"MultiHeadAttention: qkv_features ({total}) must be a multiple of num_heads "
                             f"({num_heads}).")
        return total, total // num_heads

    def init_fun(rng, input_shape):
        if len(input_shape) == 2 and all(isinstance(s, (tuple, list)) for s in input_shape):
            q_shape, kv_shape = (tuple(s) for s in input_shape)
        else:
            q_shape = kv_shape = tuple(input_shape)
        if len(q_shape) < 2 or len(kv_shape) < 2:
            raise ValueError(f"MultiHeadAttention: inputs must be (batch, seq, features), got input_shape "
                             f"{input_shape}.")
        total, _ = sizes(q_shape[-1])
        out = out_features or q_shape[-1]
        keys = random.split(rng, 8)
        params = {}
        for i, (name, fan_in, fan_out) in enumerate((("query", q_shape[-1], total), ("key", kv_shape[-1], total),
                                                     ("value", kv_shape[-1], total), ("out", total, out))):
            params[name] = (kernel_init(keys[2 * i], (fan_in, fan_out)), bias_init(keys[2 * i + 1], (fan_out,)))
        return q_shape[:-1] + (out,), params

    def project(x, kernel_bias, split_heads):
        kernel, bias = kernel_bias
        y = jnp.dot(x, kernel)
        if use_bias:
            y = y + bias
        if split_heads:
            y = jnp.reshape(y, y.shape[:-1] + (num_heads, y.shape[-1] // num_heads))
        return y

    def apply_fun(params, inputs, mask=None, **kwargs):
        name = f"MultiHeadAttention({num_heads})"
        if isinstance(inputs, (tuple, list)):
            if len(inputs) != 2:
                raise ValueError(f"{name}: inputs must be one array (self-attention) or a pair (queries, "
                                 f"keys_values), got a {type(inputs).__name__} of {len(inputs)}.")
            x_q, x_kv = inputs
        else:
            x_q = x_kv = inputs
        for what, x, kernel in (("queries", x_q, params["query"][0]), ("keys and values", x_kv, params["key"][0])):
            n = np.shape(kernel)[0]
            check_input_size(f"{name} ({what})", x, -1, n, f"(batch, seq, {n})", "features on the last axis")
        sizes(x_q.shape[-1])
        q = project(x_q, params["query"], True)
        k = project(x_kv, params["key"], True)
        v = project(x_kv, params["value"], True)
        heads = dot_product_attention(q, k, v, mask=mask)
        concat = jnp.reshape(heads, heads.shape[:-2] + (heads.shape[-2] * heads.shape[-1],))
        return project(concat, params["out"], False)

    return _named(Layer(init_fun, apply_fun), f"MultiHeadAttention({num_heads})")

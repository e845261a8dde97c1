"""Recurrent layers: SimpleRNN, LSTM and GRU, each a `lax.scan` over the time axis.

Inputs are `(batch, time, features)` (any number of leading axes: the time axis is the one
before the features), outputs `(batch, time, hidden)`: the hidden state at every step. The
initial state is zeros. The input projections `x_t W` of all steps are computed at once before
the loop; only the recurrent terms `h_{t-1} U` run inside it. Params are dicts of named arrays:
`W` (input kernel, `(features, gates * hidden)`), `U` (recurrent kernel, `(hidden, gates *
hidden)`, orthogonal blocks by default) and `b` (bias, zeros by default), the gates concatenated
in the order listed in each layer's docstring.
"""
import core.numpy as jnp
from core import lax, random

from .base import Layer, check_input_size
from .initializers import glorot_normal, zeros
from .normalization import _named

__all__ = ["SimpleRNN", "LSTM", "GRU"]


def _orthogonal_blocks(key, shape, dtype=None):
    """`(hidden, gates * hidden)`: one random orthogonal `hidden x hidden` block per gate (Saxe et
    al. 2014), so that repeated multiplication by each block neither grows nor shrinks a state."""
    hidden, total = shape
    if total % hidden:
        raise ValueError(f"recurrent kernel shape {shape}: the columns must be a multiple of the rows.")
    blocks = random.orthogonal(key, hidden, (total // hidden,), dtype)   # (gates, hidden, hidden)
    return jnp.reshape(jnp.moveaxis(blocks, 0, 1), (hidden, total))


def _recurrent_layer(name, hidden, gates, cell, W_init, U_init, b_init, carries=1):
    """A Layer scanning `cell(U, carry, xw_t) -> carry` over time, `xw_t = x_t W + b`. The carry
    is a tuple of `carries` arrays whose first is h_t (LSTM's is (h, c)); the outputs are the h_t."""
    def init_fun(rng, input_shape):
        if len(input_shape) < 2 or input_shape[-1] < 0:
            raise ValueError(f"{name}: inputs must be (batch, time, features) with known features, got "
                             f"input_shape {tuple(input_shape)}.")
        k1, k2, k3 = random.split(rng, 3)
        params = {"W": W_init(k1, (input_shape[-1], gates * hidden)),
                  "U": U_init(k2, (hidden, gates * hidden)),
                  "b": b_init(k3, (gates * hidden,))}
        return tuple(input_shape[:-1]) + (hidden,), params

    def apply_fun(params, x, **kwargs):
        if x.ndim < 2:
            raise TypeError(f"{name}: inputs must be (..., time, features), got shape {tuple(x.shape)}.")
        n = params["W"].shape[0]
        check_input_size(f"{name}({hidden})", x, -1, n, f"(batch, time, {n})", "features on the last axis")
        xw = jnp.dot(x, params["W"]) + params["b"]
        xw_by_time = jnp.moveaxis(xw, -2, 0)
        h0 = jnp.zeros(xw.shape[:-2] + (hidden,), xw.dtype)
        def step(carry, xw_t):
            carry = cell(params["U"], carry, xw_t)
            return carry, carry[0]

        _, hs = lax.scan(step, (h0,) * carries, xw_by_time)
        return jnp.moveaxis(hs, 0, -2)

    return _named(Layer(init_fun, apply_fun), f"{name}({hidden})")


def SimpleRNN(hidden, activation=jnp.tanh, W_init=glorot_normal(), U_init=_orthogonal_blocks, b_init=zeros):
    """The Elman recurrent network (Elman 1990, "Finding Structure in Time", Cognitive Science 14):

        h_t = activation(x_t W + h_{t-1} U + b),   h_0 = 0

    Input `(batch, time, features)`, output `(batch, time, hidden)` (every h_t).

    Example:
        >>> rnn = SimpleRNN(8)
        >>> out_shape, params = rnn.init_fun(random.key(0), (-1, 5, 3))
        >>> hs = rnn.apply_fun(params, jnp.ones((2, 5, 3)))
        >>> out_shape, hs.shape
        ((-1, 5, 8), (2, 5, 8))
    """
    def cell(U, carry, xw_t):
        (h_prev,) = carry
        return (activation(xw_t + jnp.dot(h_prev, U)),)

    return _recurrent_layer("SimpleRNN", hidden, 1, cell, W_init, U_init, b_init)


def LSTM(hidden, W_init=glorot_normal(), U_init=_orthogonal_blocks, b_init=zeros):
    """Long short-term memory (Hochreiter & Schmidhuber 1997, "Long Short-Term Memory", Neural
    Computation 9(8)) with the forget gate of Gers, Schmidhuber & Cummins 2000 ("Learning to
    Forget", Neural Computation 12(10)). Gates in the order i, f, g, o:

        i_t = sigmoid(x_t W_i + h_{t-1} U_i + b_i)      input gate
        f_t = sigmoid(x_t W_f + h_{t-1} U_f + b_f)      forget gate
        g_t = tanh(x_t W_g + h_{t-1} U_g + b_g)         candidate cell
        o_t = sigmoid(x_t W_o + h_{t-1} U_o + b_o)      output gate
        c_t = f_t * c_{t-1} + i_t * g_t
        h_t = o_t * tanh(c_t),                          h_0 = c_0 = 0

    Input `(batch, time, features)`, output `(batch, time, hidden)` (every h_t). The bias starts
    at zero (pass `b_init` for a forget-gate bias of 1, as Jozefowicz et al. 2015 suggest).

    Example:
        >>> lstm = LSTM(8)
        >>> out_shape, params = lstm.init_fun(random.key(0), (-1, 5, 3))
        >>> hs = lstm.apply_fun(params, jnp.ones((2, 5, 3)))
        >>> out_shape, hs.shape
        ((-1, 5, 8), (2, 5, 8))
    """
    def cell(U, carry, xw_t):
        h_prev, c_prev = carry
        z_i, z_f, z_g, z_o = jnp.split(xw_t + jnp.dot(h_prev, U), 4, axis=-1)
        i, f, g, o = lax.logistic(z_i), lax.logistic(z_f), jnp.tanh(z_g), lax.logistic(z_o)
        c = f * c_prev + i * g
        h = o * jnp.tanh(c)
        return h, c

    return _recurrent_layer("LSTM", hidden, 4, cell, W_init, U_init, b_init, carries=2)


def GRU(hidden, W_init=glorot_normal(), U_init=_orthogonal_blocks, b_init=zeros):
    """Gated recurrent unit (Cho et al. 2014, "Learning Phrase Representations using RNN
    Encoder-Decoder for Statistical Machine Translation", arXiv:1406.1078), as in the paper: the
    reset gate multiplies the previous state before its recurrent matrix. Gates in the order r, z, n:

        r_t = sigmoid(x_t W_r + h_{t-1} U_r + b_r)            reset gate
        z_t = sigmoid(x_t W_z + h_{t-1} U_z + b_z)            update gate
        n_t = tanh(x_t W_n + (r_t * h_{t-1}) U_n + b_n)       candidate state
        h_t = z_t * h_{t-1} + (1 - z_t) * n_t,                h_0 = 0

    (PyTorch and cuDNN apply r_t after the matrix, r_t * (h_{t-1} U_n + b'_n); a different model.)
    Input `(batch, time, features)`, output `(batch, time, hidden)` (every h_t).

    Example:
        >>> gru = GRU(8)
        >>> out_shape, params = gru.init_fun(random.key(0), (-1, 5, 3))
        >>> hs = gru.apply_fun(params, jnp.ones((2, 5, 3)))
        >>> out_shape, hs.shape
        ((-1, 5, 8), (2, 5, 8))
    """
    def cell(U, carry, xw_t):
        (h_prev,) = carry
        xw_r, xw_z, xw_n = jnp.split(xw_t, 3, axis=-1)
        U_r, U_z, U_n = jnp.split(U, 3, axis=-1)
        r = lax.logistic(xw_r + jnp.dot(h_prev, U_r))
        z = lax.logistic(xw_z + jnp.dot(h_prev, U_z))
        n = jnp.tanh(xw_n + jnp.dot(r * h_prev, U_n))
        return (z * h_prev + (1 - z) * n,)

    return _recurrent_layer("GRU", hidden, 3, cell, W_init, U_init, b_init)

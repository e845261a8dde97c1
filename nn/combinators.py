"""Combinators: layers made of layers, as stax's, carrying state when a sublayer does.

`serial` chains layers, `parallel` applies one layer per input of a list, `FanOut` copies an
input, `FanInSum` / `FanInConcat` merge a list, `shape_dependent` builds a layer from the input
shape. Without `state=` their apply functions are exactly stax's (a key `rng` is split into one
key per sublayer; every other kwarg, `mode` included, reaches every sublayer). A combinator is
stateful iff one of its sublayers is (`nn.base.is_stateful`); then `init_state(input_shape)` is
the tuple of the sublayers' states (None for stateless ones) and `apply_fun(params, x,
state=states, **kw)` returns `(outputs, new_states)`:

    >>> from nn import serial, Dense, BatchNorm, Relu
    >>> key, x = random.key(0), jnp.ones((4, 8))
    >>> net = serial(Dense(16), BatchNorm(axis=(0,)), Relu, Dense(10))
    >>> out_shape, params = net.init_fun(key, (-1, 8))
    >>> state = net.init_state((-1, 8))                      # (None, bn_state, None, None)
    >>> [s is None for s in state]
    [True, False, True, True]
    >>> logits, state = net.apply_fun(params, x, state=state, rng=key, mode="train")
    >>> logits.shape
    (4, 10)
"""
import core
import numpy as np
from core import random

from .base import Layer, apply_with_state, init_state, is_stateful

__all__ = ["serial", "parallel", "FanOut", "FanInSum", "FanInConcat", "shape_dependent", "output_shape",
           "abstract_init"]

_NO_STATE = object()   # `state=None` is a value; absence needs its own marker


def _named(lyr, name, sublayers=(), flow=None):
    object.__setattr__(lyr, "name", name)
    object.__setattr__(lyr, "sublayers", tuple(sublayers))
    object.__setattr__(lyr, "flow", flow)
    return lyr


def output_shape(lyr, input_shape):
    """The output shape `lyr.init_fun` predicts for `input_shape`, without making parameters (the
    init is only traced, under `core.eval_shape`, so no computation runs).

    Example: `output_shape(Dense(3), (-1, 5))` is `(-1, 3)`.
    """
    return abstract_init(lyr, input_shape)[0]


def abstract_init(lyr, input_shape):
    """`(output_shape, params)` of `lyr.init_fun(key, input_shape)` with the params as
    `ShapeDtypeStruct`s: the init is traced by `core.eval_shape`, not run.

    Example: `abstract_init(Dense(3), (-1, 5))` is `((-1, 3), (ShapeDtypeStruct((5, 3), float32),
    ShapeDtypeStruct((3,), float32)))`.
    """
    box = {}

    def init(key):
        box["shape"], params = lyr[0](key, input_shape)
        return params

    params = core.eval_shape(init, core.ShapeDtypeStruct((2,), np.uint32))
    return box["shape"], params


def _as_layers(layers):
    # stax-style (init_fun, apply_fun) pairs become Layers, so apply_with_state can call them
    return tuple(lyr if isinstance(lyr, Layer) else Layer(*lyr) for lyr in layers)


def _split(rng, n):
    if rng is None:
        return (None,) * n
    keys = random.split(rng, n)
    return tuple(keys[i] for i in range(n))


def serial(*layers):
    """Compose layers in sequence: each one's output is the next one's input (as stax).

    Params are the list of the sublayers' params; init splits its key once per layer, apply splits
    `rng` into one key per layer. Stateful iff a sublayer is (see the module docstring).
    Example: `serial(Dense(512), Relu, Dense(10), LogSoftmax)`.
    """
    layers = _as_layers(layers)
    nlayers = len(layers)
    init_funs, apply_funs = zip(*((lyr[0], lyr[1]) for lyr in layers), strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            keys = random.split(rng)
            rng, layer_rng = keys[0], keys[1]
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        state = kwargs.pop("state", _NO_STATE)
        rngs = _split(kwargs.pop("rng", None), nlayers)
        if state is _NO_STATE:
            for fun, param, r in zip(apply_funs, params, rngs, strict=True):
                inputs = fun(param, inputs, rng=r, **kwargs)
            return inputs
        states = (None,) * nlayers if state is None else state
        new_states = []
        for lyr, param, s, r in zip(layers, params, states, rngs, strict=True):
            inputs, s = apply_with_state(lyr, param, inputs, s, rng=r, **kwargs)
            new_states.append(s)
        return inputs, tuple(new_states)

    def init_state_fun(input_shape):
        # shapes are threaded only as far as the last stateful layer needs them
        last = max(i for i, lyr in enumerate(layers) if is_stateful(lyr))
        states = []
        for i, lyr in enumerate(layers):
            states.append(init_state(lyr, input_shape))
            if i < last:
                input_shape = output_shape(lyr, input_shape)
        return tuple(states)

    stateful = any(is_stateful(lyr) for lyr in layers)
    return _named(Layer(init_fun, apply_fun, init_state_fun if stateful else None), "serial", layers, "serial")


def parallel(*layers):
    """Apply the i-th layer to the i-th input of a sequence of inputs (as stax): input shapes and
    outputs are sequences of the same length as `layers`; params are the tuple of theirs.
    Example: `serial(FanOut(2), parallel(Dense(3), Identity), FanInConcat())`.
    """
    layers = _as_layers(layers)
    nlayers = len(layers)
    init_funs, apply_funs = zip(*((lyr[0], lyr[1]) for lyr in layers), strict=True) if layers else ((), ())

    def _check(what, seq):
        if len(seq) != nlayers:
            raise ValueError(f"parallel of {nlayers} layers needs {nlayers} {what}, got {len(seq)}.")

    def init_fun(rng, input_shape):
        _check("input shapes", input_shape)
        rngs = _split(rng, nlayers)
        results = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape, strict=True)]
        return tuple(shape for shape, _ in results), tuple(param for _, param in results)

    def apply_fun(params, inputs, **kwargs):
        _check("inputs", inputs)
        state = kwargs.pop("state", _NO_STATE)
        rngs = _split(kwargs.pop("rng", None), nlayers)
        if state is _NO_STATE:
            return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs, strict=True)]
        states = (None,) * nlayers if state is None else state
        outs, new_states = [], []
        for lyr, p, x, s, r in zip(layers, params, inputs, states, rngs, strict=True):
            out, s = apply_with_state(lyr, p, x, s, rng=r, **kwargs)
            outs.append(out)
            new_states.append(s)
        return outs, tuple(new_states)

    def init_state_fun(input_shape):
        _check("input shapes", input_shape)
        return tuple(init_state(lyr, shape) for lyr, shape in zip(layers, input_shape, strict=True))

    stateful = any(is_stateful(lyr) for lyr in layers)
    return _named(Layer(init_fun, apply_fun, init_state_fun if stateful else None), "parallel", layers, "parallel")


def FanOut(num):
    """`num` copies of the input, as a list (for `parallel`). Example: `FanOut(2)` maps (-1, 4) to
    [(-1, 4), (-1, 4)]."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return _named(Layer(init_fun, apply_fun), f"FanOut({num})")


def _fan_in_sum():
    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        return sum(inputs[1:], inputs[0])

    return _named(Layer(init_fun, apply_fun), "FanInSum")


FanInSum = _fan_in_sum()
FanInSum.__doc__ = "Sum a list of same-shaped inputs (a layer, not a constructor): [(-1, 4), (-1, 4)] -> (-1, 4)."


def FanInConcat(axis=-1):
    """Concatenate a list of inputs along `axis`. Example: `FanInConcat()` maps [(-1, 3), (-1, 4)]
    to (-1, 7)."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        return core.numpy.concatenate(inputs, axis)

    return _named(Layer(init_fun, apply_fun), f"FanInConcat({axis})" if axis != -1 else "FanInConcat()")


def shape_dependent(make_layer):
    """A layer built by `make_layer(input_shape)` when the shape is known (as stax): init calls it
    with the init's input shape, apply with the inputs' shape, so it must give layers with the
    same params structure for both (e.g. not depend on the batch size). The layers it makes must
    be stateless.
    Example: `shape_dependent(lambda s: Dense(s[-1]))` keeps the feature size.
    """
    def _make(input_shape):
        lyr = make_layer(tuple(input_shape))
        if is_stateful(lyr):
            raise ValueError("shape_dependent: make_layer returned a stateful layer; its state cannot be created "
                             "before the input shape is known. Build that layer directly instead.")
        return lyr

    def init_fun(rng, input_shape):
        return _make(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return _make(inputs.shape)[1](params, inputs, **kwargs)

    return _named(Layer(init_fun, apply_fun), "shape_dependent")

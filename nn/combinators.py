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

from .base import Layer, add_layer_context, apply_with_state, describe_array, init_state, is_stateful, named

__all__ = ["serial", "parallel", "FanOut", "FanInSum", "FanInConcat", "shape_dependent", "output_shape",
           "abstract_init"]

_NO_STATE = object()   # `state=None` is a value; absence needs its own marker


def _named(lyr, name, sublayers=(), flow=None):
    return named(lyr, name, sublayers, flow)


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


def _check_params(combinator, params, n):
    if not isinstance(params, (list, tuple)) or len(params) != n:
        got = f"{len(params)} entries" if isinstance(params, (list, tuple)) else f"a {type(params).__name__}"
        raise ValueError(f"{combinator} of {n} layers needs params with one entry per layer (a sequence of {n}, as "
                         f"its init_fun returns), got {got}.")


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

    # Each sublayer call sits in a `try` (free until an error leaves it) that puts the sublayer's
    # position in the error: "In layer 2 (Dense(4)) of serial: ...".
    def init_fun(rng, input_shape):
        params = []
        for i, init in enumerate(init_funs):
            keys = random.split(rng)
            rng, layer_rng = keys[0], keys[1]
            try:
                input_shape, param = init(layer_rng, input_shape)
            except Exception as e:
                add_layer_context(e, i + 1, layers[i], "serial")
                raise
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        state = kwargs.pop("state", _NO_STATE)
        rngs = _split(kwargs.pop("rng", None), nlayers)
        _check_params("serial", params, nlayers)
        if state is _NO_STATE:
            for i, (fun, param, r) in enumerate(zip(apply_funs, params, rngs, strict=True)):
                try:
                    inputs = fun(param, inputs, rng=r, **kwargs)
                except Exception as e:
                    add_layer_context(e, i + 1, layers[i], "serial")
                    raise
            return inputs
        states = (None,) * nlayers if state is None else state
        new_states = []
        for i, (lyr, param, s, r) in enumerate(zip(layers, params, states, rngs, strict=True)):
            try:
                inputs, s = apply_with_state(lyr, param, inputs, s, rng=r, **kwargs)
            except Exception as e:
                add_layer_context(e, i + 1, lyr, "serial")
                raise
            new_states.append(s)
        return inputs, tuple(new_states)

    def init_state_fun(input_shape):
        # shapes are threaded only as far as the last stateful layer needs them
        last = max(i for i, lyr in enumerate(layers) if is_stateful(lyr))
        states = []
        for i, lyr in enumerate(layers):
            try:
                states.append(init_state(lyr, input_shape))
                if i < last:
                    input_shape = output_shape(lyr, input_shape)
            except Exception as e:
                add_layer_context(e, i + 1, lyr, "serial")
                raise
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
        results = []
        for i, (init, r, shape) in enumerate(zip(init_funs, rngs, input_shape, strict=True)):
            try:
                results.append(init(r, shape))
            except Exception as e:
                add_layer_context(e, i + 1, layers[i], "parallel")
                raise
        return tuple(shape for shape, _ in results), tuple(param for _, param in results)

    def apply_fun(params, inputs, **kwargs):
        _check("inputs", inputs)
        _check_params("parallel", params, nlayers)
        state = kwargs.pop("state", _NO_STATE)
        rngs = _split(kwargs.pop("rng", None), nlayers)
        states = (None,) * nlayers if state is _NO_STATE or state is None else state
        outs, new_states = [], []
        for i, (lyr, p, x, s, r) in enumerate(zip(layers, params, inputs, states, rngs, strict=True)):
            try:
                if state is _NO_STATE:
                    out = lyr.apply_fun(p, x, rng=r, **kwargs)
                else:
                    out, s = apply_with_state(lyr, p, x, s, rng=r, **kwargs)
            except Exception as e:
                add_layer_context(e, i + 1, lyr, "parallel")
                raise
            outs.append(out)
            new_states.append(s)
        return outs if state is _NO_STATE else (outs, tuple(new_states))

    def init_state_fun(input_shape):
        _check("input shapes", input_shape)
        states = []
        for i, (lyr, shape) in enumerate(zip(layers, input_shape, strict=True)):
            try:
                states.append(init_state(lyr, shape))
            except Exception as e:
                add_layer_context(e, i + 1, lyr, "parallel")
                raise
        return tuple(states)

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


def _check_fan_in(name, items, shape_of, axis=None):
    """Inputs (or input shapes) of a fan-in layer: a non-empty sequence whose shapes agree (except
    along `axis`, for a concatenation)."""
    if not isinstance(items, (list, tuple)) or not items or isinstance(items[0], (int, np.integer)):
        raise TypeError(f"{name} takes a list of inputs (e.g. from FanOut and parallel), got {type(items).__name__}"
                        + (f" {items!r}" if isinstance(items, tuple) else "") + ".")
    first = tuple(shape_of(items[0]))
    for i, item in enumerate(items[1:], start=2):
        shape = tuple(shape_of(item))
        if axis is None:
            same = shape == first
        else:
            ax = axis % max(len(first), 1)
            same = len(shape) == len(first) and all(a == b for d, (a, b) in enumerate(zip(shape, first)) if d != ax)
        if not same:
            rule = "the same shape" if axis is None else f"the same shape except along axis {axis}"
            got = describe_array(item) if hasattr(item, "shape") else str(shape)
            want = describe_array(items[0]) if hasattr(items[0], "shape") else str(first)
            raise ValueError(f"{name}: all inputs must have {rule}, but input {i} is {got} and input 1 is {want}.")


def _fan_in_sum():
    def init_fun(rng, input_shape):
        _check_fan_in("FanInSum", input_shape, tuple)
        return input_shape[0], ()

    def apply_fun(params, inputs, **kwargs):
        _check_fan_in("FanInSum", inputs, np.shape)
        return sum(inputs[1:], inputs[0])

    return _named(Layer(init_fun, apply_fun), "FanInSum")


FanInSum = _fan_in_sum()
FanInSum.__doc__ = "Sum a list of same-shaped inputs (a layer, not a constructor): [(-1, 4), (-1, 4)] -> (-1, 4)."


def FanInConcat(axis=-1):
    """Concatenate a list of inputs along `axis`. Example: `FanInConcat()` maps [(-1, 3), (-1, 4)]
    to (-1, 7)."""
    def init_fun(rng, input_shape):
        _check_fan_in(name, input_shape, tuple, axis)
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, **kwargs):
        _check_fan_in(name, inputs, np.shape, axis)
        return core.numpy.concatenate(inputs, axis)

    name = f"FanInConcat({axis})" if axis != -1 else "FanInConcat()"

    return _named(Layer(init_fun, apply_fun), name)


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

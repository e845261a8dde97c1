"""The layer contract (mirrors `jax.example_libraries.stax`, so a stax program ports by changing its
imports), and how layers carry state.

A layer is a pair `(init_fun, apply_fun)`:

    output_shape, params = init_fun(rng, input_shape)   # -1 marks an unknown (batch) dimension
    outputs = apply_fun(params, inputs, **kwargs)

`kwargs` are passed through combinators to every layer, which takes what it needs and ignores the
rest: `rng` (a `core.random` key; layers that draw randomness, such as Dropout, split their own),
and `mode`, "train" (the default) or "eval". Layer constructors are CamelCase (`Dense(10)`),
plain array functions snake_case (`relu`). A layer is a `Layer`, a NamedTuple of the two functions
that unpacks like stax's tuple.

State. Some layers keep values that are not trained by gradients (BatchNorm's running mean and
variance). They are stateful: their `Layer` also has `init_state(input_shape) -> state`, a pytree of
arrays. State is passed and returned explicitly, never hidden in params (an optimizer would decay
or update it):

    state = layer.init_state(input_shape)
    outputs, state = apply_fun(params, inputs, state=state, mode="train")   # state updated
    outputs, _ = apply_fun(params, inputs, state=state, mode="eval")        # state used, unchanged

Called without `state=`, every layer returns just `outputs` (stax's signature): a stateful layer
then works from the current batch in "train" mode and raises in "eval" mode, which needs the state.
Combinators are stateful when a sublayer is; their state is the tuple of their sublayers' states
(None for stateless ones), so the state tree mirrors the layer structure. All of it is pure: it
composes with jit, vmap and pmap, and a layer computing batch statistics takes `axis_name=` to
average them across devices (or vmapped examples) with `lax.pmean`.

Errors. A layer names itself in its errors ("Dense(4) expected inputs with 3 features ..."), and a
combinator adds the position of the sublayer that failed ("In layer 2 (Dense(4)) of serial: ..."),
so a shape mismatch deep in a network says where it is. The helpers for both live here.
"""
from collections import namedtuple

import numpy as np

__all__ = ["Layer", "layer", "is_stateful", "init_state", "apply_with_state"]


class Layer(namedtuple("Layer", ["init_fun", "apply_fun"])):
    """A layer: `(init_fun, apply_fun)`, plus `init_state` (None for stateless layers)."""
    init_state = None

    def __new__(cls, init_fun, apply_fun, init_state=None):
        self = super().__new__(cls, init_fun, apply_fun)
        if init_state is not None:
            object.__setattr__(self, "init_state", init_state)
        return self


def layer(init_fun, apply_fun, init_state=None):
    """Make a `Layer` from its functions (`init_state` for stateful layers)."""
    return Layer(init_fun, apply_fun, init_state)


def is_stateful(lyr):
    """Whether a layer (a `Layer` or a stax-style pair) keeps state."""
    return getattr(lyr, "init_state", None) is not None


def init_state(lyr, input_shape):
    """The initial state of `lyr` for inputs of `input_shape` (None for a stateless layer)."""
    return lyr.init_state(input_shape) if is_stateful(lyr) else None


def apply_with_state(lyr, params, inputs, state, **kwargs):
    """Apply any layer in the stateful convention: returns `(outputs, new_state)`; a stateless
    layer's state stays None. Combinators use this to call their sublayers."""
    if is_stateful(lyr):
        return lyr.apply_fun(params, inputs, state=state, **kwargs)
    return lyr.apply_fun(params, inputs, **kwargs), None


# ----- names and errors ------------------------------------------------------------------------------

def named(lyr, name, sublayers=(), flow=None):
    """`lyr` carrying its display name (e.g. "Dense(10)", shown by `nn.summary` and in errors), and
    for combinators their sublayers and how data flows through them ("serial" / "parallel").

    Its `init_fun` (and `init_state`) check that `input_shape` is a shape, not an int, first.
    """
    init_fun, apply_fun = lyr
    state_fun = lyr.init_state
    if not getattr(init_fun, "_checks_input_shape", False):
        init_fun = _checking_input_shape(init_fun, lyr, "init_fun")
    if state_fun is not None and not getattr(state_fun, "_checks_input_shape", False):
        state_fun = _checking_input_shape(state_fun, lyr, "init_state")
    out = Layer(init_fun, apply_fun, state_fun)
    object.__setattr__(out, "name", name)
    object.__setattr__(out, "sublayers", tuple(sublayers))
    object.__setattr__(out, "flow", flow)
    # the checks read the name from the layer that holds them (it may be renamed later)
    init_fun._layer = out
    if state_fun is not None:
        state_fun._layer = out
    return out


def layer_name(lyr):
    """The display name of a layer ("layer" for a bare stax-style pair)."""
    return getattr(lyr, "name", None) or "layer"


def _checking_input_shape(fun, lyr, what):
    def checked(*args, **kwargs):
        input_shape = kwargs["input_shape"] if "input_shape" in kwargs else args[-1] if args else None
        if isinstance(input_shape, (int, np.integer)) and not isinstance(input_shape, bool):
            n = int(input_shape)
            raise TypeError(
                f"{layer_name(checked._layer)}: {what}'s input_shape must be a shape, a tuple of ints (-1 marks "
                f"an unknown batch size), got the int {n}. Pass ({n},) for inputs of shape ({n},), or (-1, {n}) "
                f"for a batch of inputs with {n} features.")
        return fun(*args, **kwargs)
    checked._checks_input_shape = True
    checked._layer = lyr
    checked.__name__ = getattr(fun, "__name__", what)
    checked.__doc__ = getattr(fun, "__doc__", None)
    checked.__wrapped__ = fun
    return checked


def describe_array(x):
    """`float32[2,5]`: the dtype and shape of an array-like, for error messages."""
    shape = np.shape(x)
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        dtype = np.asarray(x).dtype
    return f"{np.dtype(dtype).name}[{','.join(str(d) for d in shape)}]"


def check_input_size(lyr_name, inputs, axis, expected, pattern, what):
    """Raise a ValueError unless `inputs` has size `expected` along `axis`: `what` names that axis
    ("features on the last axis", "channels"), `pattern` is the expected input shape ("(..., 3)")."""
    shape = np.shape(inputs)
    if len(shape) > (axis if axis >= 0 else -axis - 1) and shape[axis] == expected:
        return
    raise ValueError(
        f"{lyr_name} expected inputs of shape {pattern} ({expected} {what}, the size its params were made for), "
        f"got inputs of type {describe_array(inputs)}. Make the params for these inputs with init_fun(rng, "
        "input_shape) of their shape, or check the layer before this one.")


def add_layer_context(e, position, sublayer, combinator):
    """Say in `e`'s message which sublayer of a combinator raised it: "In layer 2 (Dense(4)) of
    serial: ...". Nested combinators add their own position after it. The message is changed in
    place (type and traceback stay) when it is a plain one-string message; otherwise a note is added."""
    where = f"layer {position} ({layer_name(sublayer)}) of {combinator}"
    path = getattr(e, "_purenn_layer_path", None)
    if path is None:
        if len(e.args) != 1 or not isinstance(e.args[0], str) or type(e).__str__ is not BaseException.__str__:
            e.add_note(f"(raised in {where})")
            return
        e._purenn_layer_message = e.args[0]
        path = e._purenn_layer_path = []
    path.append(where)
    e.args = (f"In {path[0]}" + "".join(f", inside {p}" for p in path[1:]) + f": {e._purenn_layer_message}",)

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
"""
from collections import namedtuple

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

"""Names in a config, made into things: `nn` models (a preset or a list of layers), losses,
metrics, `optim` optimizers and step-size schedules.

Every builder takes plain values and raises `RegistryError(key, message)` naming the config key
it was given (`model.layers[2].Conv`), so the loop can add the file and line. Nothing here knows
about YAML.

    >>> layer = build_model({"preset": "mlp", "args": {"hidden": [8]}}, num_classes=3)
    >>> nn.output_shape(layer, (-1, 4))
    (-1, 3)
"""
import difflib
import inspect

import core.numpy as jnp
import nn
import optim

__all__ = ["RegistryError", "PRESETS", "LAYERS", "build_model", "per_example_loss", "metric_fns",
           "build_schedule", "build_optimizer"]


class RegistryError(ValueError):
    """A config value names something that does not exist or cannot be built. `key` is the dotted
    config key (with list positions, `model.layers[2]`) it came from."""

    def __init__(self, key, message):
        super().__init__(f"{key}: {message}")
        self.key, self.message = key, message


def _did_you_mean(name, choices):
    close = difflib.get_close_matches(str(name), list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; choose from {', '.join(sorted(choices))}"


def _call(key, fn, args, what):
    """Call `fn(**args)` (or `fn(*args)` for a list, `fn(args)` for a scalar), turning a bad
    signature into a RegistryError that names the key and the accepted arguments."""
    if args is None:
        pos, kw = (), {}
    elif isinstance(args, dict):
        pos, kw = (), {k: _tuples(v) for k, v in args.items()}
    elif isinstance(args, (list, tuple)):
        pos, kw = tuple(_tuples(a) for a in args), {}
    else:
        pos, kw = (_tuples(args),), {}
    try:
        inspect.signature(fn).bind(*pos, **kw)
    except TypeError as e:
        params = ", ".join(str(p) for p in inspect.signature(fn).parameters.values())
        raise RegistryError(key, f"bad arguments for {what}: {e}; it takes ({params})") from None
    try:
        return fn(*pos, **kw)
    except (TypeError, ValueError) as e:
        raise RegistryError(key, f"{what}: {e}") from None


def _tuples(v):
    # YAML has no tuples; shapes, strides and windows are tuples in nn
    return tuple(_tuples(x) for x in v) if isinstance(v, list) else v


# ----- models ------------------------------------------------------------------------------------

def mlp(num_classes, hidden=(128, 128), activation="Relu", dropout=0.0, axis_name=None):
    """Flatten, then `Dense(h)` + activation (+ Dropout) per hidden width, then `Dense(num_classes)`."""
    act = _activation(activation)
    layers = [nn.Flatten]
    for h in hidden:
        layers += [nn.Dense(h), act] + ([nn.Dropout(1.0 - dropout)] if dropout else [])  # stax: rate = keep
    return nn.serial(*layers, nn.Dense(num_classes))


def convnet(num_classes, channels=(16, 32), hidden=64, axis_name=None):
    """The seeds' stax convnet: 3x3 SAME convolutions with ReLU, a 2x2 max pool, a hidden Dense
    layer, then the class scores (8x8x1 -> 8x8x16 -> 8x8x32 -> 4x4x32 -> 64 -> classes)."""
    layers = []
    for c in channels:
        layers += [nn.Conv(c, (3, 3), padding="SAME"), nn.Relu]
    return nn.serial(*layers, nn.MaxPool((2, 2), strides=(2, 2)), nn.Flatten,
                     nn.Dense(hidden), nn.Relu, nn.Dense(num_classes))


def resnet_small(num_classes, channels=16, blocks=2, bn_momentum=0.9, axis_name=None):
    """A small residual network (He et al. 2016, arXiv:1512.03385): a 3x3 stem, `blocks` basic
    blocks `x + BN(Conv(Relu(BN(Conv(x)))))` followed by ReLU, global average pooling, a Dense
    classifier. BatchNorm averages its batch statistics over `axis_name` under pmap; its running
    averages use `bn_momentum` 0.9 (PyTorch's default), not 0.99, so that the short runs of small
    datasets end with running statistics that have forgotten their initial values."""
    def bn():
        return nn.BatchNorm(axis=(0, 1, 2), momentum=bn_momentum, axis_name=axis_name)

    def block():
        residual = nn.serial(nn.Conv(channels, (3, 3), padding="SAME"), bn(), nn.Relu,
                             nn.Conv(channels, (3, 3), padding="SAME"), bn())
        return nn.serial(nn.FanOut(2), nn.parallel(residual, nn.Identity), nn.FanInSum, nn.Relu)

    return nn.serial(nn.Conv(channels, (3, 3), padding="SAME"), bn(), nn.Relu,
                     *[block() for _ in range(blocks)],
                     _global_avg_pool(), nn.Dense(num_classes))


def transformer_small(num_classes, vocab_size=32, d_model=32, num_heads=4, num_layers=2, mlp_dim=64,
                      max_len=512, axis_name=None):
    """A small encoder classifier over token sequences (Vaswani et al. 2017, pre-LayerNorm
    blocks): token embedding plus a learned position embedding, `num_layers` blocks of
    `x + MHA(LN(x))` and `x + MLP(LN(x))`, mean over positions, a Dense classifier."""
    def residual(*layers):
        return nn.serial(nn.FanOut(2), nn.parallel(nn.serial(*layers), nn.Identity), nn.FanInSum)

    blocks = []
    for _ in range(num_layers):
        blocks.append(residual(nn.LayerNorm(), nn.MultiHeadAttention(num_heads)))
        blocks.append(residual(nn.LayerNorm(), nn.Dense(mlp_dim), nn.Gelu, nn.Dense(d_model)))
    return nn.serial(nn.Embedding(vocab_size, d_model), _position_embedding(max_len), *blocks,
                     nn.LayerNorm(), _mean_over_positions(), nn.Dense(num_classes))


def _global_avg_pool():
    def init_fun(rng, input_shape):
        return (input_shape[0], input_shape[-1]), ()

    def apply_fun(params, x, **kwargs):
        return jnp.mean(x, axis=(1, 2))
    return nn.layer(init_fun, apply_fun)


def _mean_over_positions():
    def init_fun(rng, input_shape):
        return (input_shape[0], input_shape[-1]), ()

    def apply_fun(params, x, **kwargs):
        return jnp.mean(x, axis=1)
    return nn.layer(init_fun, apply_fun)


def _position_embedding(max_len):
    """Adds a learned vector per position (inputs `(batch, seq, features)`, seq <= max_len)."""
    def init_fun(rng, input_shape):
        seq, features = input_shape[1], input_shape[2]
        if seq > max_len:
            raise ValueError(f"position embedding: sequences of length {seq} exceed max_len={max_len}")
        return tuple(input_shape), nn.initializers.normal(0.02)(rng, (seq, features))

    def apply_fun(params, x, **kwargs):
        return x + params
    return nn.layer(init_fun, apply_fun)


PRESETS = {"mlp": mlp, "convnet": convnet, "resnet_small": resnet_small, "transformer_small": transformer_small}

# the layer names a `model.layers` list may use: nn's layer constructors and constant layers
_LAYER_CONSTANTS = ("Flatten", "Identity", "Relu", "Gelu", "Elu", "LeakyRelu", "Selu", "Sigmoid", "Tanh",
                    "Softplus", "Silu", "Exp", "LogSoftmax", "Softmax", "FanInSum", "FanInConcat")
_LAYER_CONSTRUCTORS = ("Dense", "Conv", "Conv1D", "GeneralConv", "ConvTranspose", "Conv1DTranspose", "MaxPool",
                       "AvgPool", "SumPool", "Dropout", "BatchNorm", "LayerNorm", "GroupNorm", "Embedding",
                       "MultiHeadAttention", "FanOut", "FanInConcat")
_COMBINATORS = {"serial": nn.serial, "parallel": nn.parallel}
LAYERS = sorted(set(_LAYER_CONSTANTS) | set(_LAYER_CONSTRUCTORS) | set(_COMBINATORS))


def _activation(name):
    if name not in _LAYER_CONSTANTS or not hasattr(nn, name):
        raise ValueError(f"unknown activation {name!r}{_did_you_mean(name, _LAYER_CONSTANTS)}")
    return getattr(nn, name)


def _build_layer(spec, key, axis_name):
    """One entry of a `model.layers` list: a name (`Relu`), or a one-key mapping from a name to
    its arguments (a mapping of keywords, a list of positional arguments or one scalar)."""
    if isinstance(spec, str):
        name, args, bare = spec, None, True
    elif isinstance(spec, dict) and len(spec) == 1:
        (name, args), bare = next(iter(spec.items())), False
    else:
        raise RegistryError(key, f"a layer is a name (Relu) or a one-key mapping ({{Dense: {{out_dim: 10}}}}), "
                                 f"got {spec!r}")
    if name not in LAYERS:
        raise RegistryError(key, f"unknown layer {name!r}{_did_you_mean(name, LAYERS)}")
    key = f"{key}.{name}"
    if name in _COMBINATORS:
        if not isinstance(args, list):
            raise RegistryError(key, f"{name} takes a list of layers, got {args!r}")
        return _COMBINATORS[name](*[_build_layer(s, f"{key}[{i}]", axis_name) for i, s in enumerate(args)])
    if name in _LAYER_CONSTANTS and (bare or args is None) and name != "FanInConcat":
        return getattr(nn, name)
    if name in _LAYER_CONSTANTS and name not in _LAYER_CONSTRUCTORS:
        raise RegistryError(key, f"{name} takes no arguments; write it as a plain name")
    if name == "FanInConcat" and bare:
        return nn.FanInConcat()
    if name == "BatchNorm" and axis_name is not None:
        args = dict(args or {})
        args.setdefault("axis_name", axis_name)
    return _call(key, getattr(nn, name), args, name)


def build_model(model, num_classes, axis_name=None):
    """The `nn` layer a `model` config section describes: `{"preset": name, "args": {...}}` or
    `{"layers": [...]}`. Presets get `num_classes`; a layer list must end in its own classifier.
    `axis_name` is the pmap axis BatchNorm averages its statistics over (None on one device)."""
    if model.get("layers") is not None:
        layers = model["layers"]
        if not isinstance(layers, list) or not layers:
            raise RegistryError("model.layers", f"must be a non-empty list of layers, got {layers!r}")
        return nn.serial(*[_build_layer(s, f"model.layers[{i}]", axis_name) for i, s in enumerate(layers)])
    name = model.get("preset")
    if name not in PRESETS:
        raise RegistryError("model.preset", f"unknown preset {name!r}{_did_you_mean(name, PRESETS)}")
    args = dict(model.get("args") or {})
    for reserved in ("num_classes", "axis_name"):
        if reserved in args:
            raise RegistryError(f"model.args.{reserved}", "is set by the trainer (from the data and run.devices)")
    return _call("model.args", PRESETS[name], {"num_classes": num_classes, "axis_name": axis_name, **args},
                 f"preset {name}")


# ----- losses and metrics ------------------------------------------------------------------------

def per_example_loss(loss):
    """`f(outputs, labels) -> float[batch]` for the `loss` config section (name and
    label_smoothing); the trainer takes the masked mean."""
    name = loss["name"]
    if name == "softmax_cross_entropy":
        smoothing = loss.get("label_smoothing", 0.0)
        return lambda out, y: nn.softmax_cross_entropy(out, y, label_smoothing=smoothing, reduction="none")
    if name == "mean_squared_error":
        return lambda out, y: jnp.mean(jnp.square(out - nn.one_hot(y, out.shape[-1])), axis=-1)
    if name == "sigmoid_binary_cross_entropy":
        return lambda out, y: jnp.mean(
            nn.sigmoid_binary_cross_entropy(out, nn.one_hot(y, out.shape[-1]), reduction="none"), axis=-1)
    raise RegistryError("loss.name", f"unknown loss {name!r}")


def _top_k_correct(k):
    def correct(out, y):
        # the label's score beats all but fewer than k others (ties count for the label)
        label_score = jnp.take_along_axis(out, y[:, None].astype(jnp.int32), axis=-1)
        return (jnp.sum(out > label_score, axis=-1) < k).astype(jnp.float32)
    return correct


def metric_fns(names):
    """`{name: f(outputs, labels) -> float[batch]}` for the metric names of the config:
    `accuracy` and `top_k:<k>` (logged as `top_<k>_accuracy`), one value per example."""
    fns = {}
    for i, name in enumerate(names):
        if name == "accuracy":
            fns["accuracy"] = lambda out, y: (jnp.argmax(out, axis=-1) == y).astype(jnp.float32)
        elif isinstance(name, str) and name.startswith("top_k:") and name[6:].isdigit() and int(name[6:]) >= 1:
            fns[f"top_{int(name[6:])}_accuracy"] = _top_k_correct(int(name[6:]))
        else:
            raise RegistryError(f"metrics[{i}]", f"unknown metric {name!r}; choose accuracy or top_k:<k>")
    return fns


# ----- optimizers and schedules ------------------------------------------------------------------

def build_schedule(opt, total_steps):
    """The step-size schedule of the `optimizer` config section: `learning_rate` is the peak (or
    initial) value; decay lengths default to the run's `total_steps`."""
    lr, name, args = opt["learning_rate"], opt.get("schedule", "constant"), dict(opt.get("schedule_args") or {})
    warmup = opt.get("warmup_steps", 0)
    if name == "constant":
        sched = optim.constant(lr) if not args else _call("optimizer.schedule_args", optim.constant, args, name)
    elif name == "cosine_decay":
        args.setdefault("decay_steps", max(total_steps - warmup, 1))
        sched = _call("optimizer.schedule_args", optim.cosine_decay, {"step_size": lr, **args}, name)
    elif name == "warmup_cosine_decay":
        args.setdefault("decay_steps", total_steps)
        args.setdefault("warmup_steps", warmup)
        return _call("optimizer.schedule_args", optim.warmup_cosine_decay, {"peak": lr, **args}, name)
    elif name == "exponential_decay":
        args.setdefault("decay_steps", max(total_steps, 1))
        args.setdefault("decay_rate", 0.1)
        sched = _call("optimizer.schedule_args", optim.exponential_decay, {"step_size": lr, **args}, name)
    elif name == "piecewise_constant":
        sched = _call("optimizer.schedule_args", optim.piecewise_constant, args, name)
    elif name == "linear_schedule":
        args.setdefault("end_value", 0.0)
        args.setdefault("transition_steps", max(total_steps - warmup, 1))
        sched = _call("optimizer.schedule_args", optim.linear_schedule, {"init_value": lr, **args}, name)
    else:
        raise RegistryError("optimizer.schedule", f"unknown schedule {name!r}")
    if warmup:
        ramp = optim.linear_schedule(0.0, lr, warmup)
        return optim.join_schedules([ramp, sched], [warmup])
    return sched


_OPTIMIZERS = ("sgd", "momentum", "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamw",
               "adamax", "sm3", "lamb", "lion")


def build_optimizer(opt, total_steps):
    """`(optimizer, schedule)` for the `optimizer` config section: the `optim` optimizer by name,
    with the schedule as its step size and `args` as its other arguments, wrapped in
    `optim.accumulate_gradients` when `accumulate_steps > 1`."""
    name = opt["name"]
    if name not in _OPTIMIZERS:
        raise RegistryError("optimizer.name", f"unknown optimizer {name!r}{_did_you_mean(name, _OPTIMIZERS)}")
    schedule = build_schedule(opt, total_steps)
    optimizer = _call("optimizer.args", getattr(optim, name), {"step_size": schedule, **(opt.get("args") or {})},
                      f"optimizer {name}")
    if opt.get("accumulate_steps", 1) > 1:
        optimizer = optim.accumulate_gradients(optimizer, every_k=opt["accumulate_steps"])
    return optimizer, schedule

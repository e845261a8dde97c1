"""The trainer's configuration: one schema, strict YAML loading, merging, overrides, validation.

`SCHEMA` below declares every key (type, default, range or choices, one line of help); `train
--help`, `--print-config`, the defaults and the validation all come from it. A config is built in
four steps, each reporting problems as `ConfigError("file:line: key.path: problem")`:

1. read each YAML file with `_Loader`, a SafeLoader subclass that records the file and line of
   every key, rejects duplicate keys and every tag, and reads `1e-3`-style numbers as floats
   (PyYAML's YAML 1.1 resolver reads them as strings; no user means the string "1e-3");
2. merge the files left to right (mappings merge, everything else replaces);
3. apply Hydra-style overrides: `a.b=v` sets, `+a.b=v` adds, `~a.b` deletes (restoring the
   default); `v` is read as a YAML value with the same number rule;
4. validate everything against the schema, then the rules that tie keys together (batch size
   divisible by the device count, exactly one of model.preset / model.layers, ...), and fill in
   the defaults. Validation reports ALL the problems it finds, one per line (the first is also in
   the error's `.key`, `.where` and `.message`); the cross-key rules run only once every key is
   valid on its own.

Words YAML 1.1 reads as booleans (`yes/no/on/off`, `true/false`) are booleans only for bool keys:
a str key given `NO` is an error that says to quote it, never the value False; a key with choices
takes such a word only when it is exactly one of the choices (`progress: off`, unambiguous).

    >>> cfg = config_from_dict({"data": {"batch_size": 64}}, overrides=["optimizer.learning_rate=3e-4"])
    >>> cfg.data.batch_size, cfg["optimizer"]["learning_rate"], cfg.where("optimizer.learning_rate")
    (64, 0.0003, "override 'optimizer.learning_rate=3e-4'")
"""
from __future__ import annotations

import copy
import dataclasses
import difflib
import hashlib
import json
import math
import numbers
import os
import re
from collections.abc import Mapping

import yaml

__all__ = ["Config", "ConfigError", "Field", "SCHEMA", "load_config", "config_from_dict", "dump_yaml",
           "help_text", "model_hash", "model_key_diff"]


# ------------------------------------------------------------------------------------------ errors

class ConfigError(Exception):
    """A bad config: `str(e)` is `where: key: message` (one line per problem found).

    `.message`, `.key` (dotted path, or None) and `.where` ("file:line", "override '...'",
    "default", or None) describe the first problem; `.errors` lists every problem, first included.

        >>> print(ConfigError("must be > 0, got 0.0", key="optimizer.learning_rate", where="x.yaml:7"))
        x.yaml:7: optimizer.learning_rate: must be > 0, got 0.0
    """

    def __init__(self, message, key=None, where=None, *, others=()):
        super().__init__(message)
        self.message, self.key, self.where = message, key, where
        self.others = tuple(others)

    @property
    def errors(self):
        return (self,) + self.others

    def _line(self):
        return ": ".join(str(part) for part in (self.where, self.key, self.message) if part is not None)

    def __str__(self):
        return "\n".join(error._line() for error in self.errors)


def _raise_all(errors):
    if errors:
        first = errors[0]
        raise ConfigError(first.message, first.key, first.where, others=errors[1:])


# ------------------------------------------------------------------------------------------ schema

OPTIMIZERS = ("sgd", "momentum", "nesterov", "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamw",
              "adamax", "sm3", "lamb", "lion")  # optim/optimizers.py (a test keeps the two in step)
SCHEDULES = ("constant", "cosine_decay", "warmup_cosine_decay", "exponential_decay", "piecewise_constant",
             "linear_schedule")
DATASETS = ("digits", "mnist", "fashion_mnist", "npz", "synthetic_classification", "synthetic_sequence")
DATASETS_WITH_PATH = ("mnist", "fashion_mnist", "npz")
SAMPLING = ("poisson", "shuffle")                          # optim.privacy.SAMPLING_MODES
DP_METHODS = ("auto", "ghost", "materialize", "vmap")      # core.clipped_grad's methods


@dataclasses.dataclass(frozen=True)
class Field:
    """One config key. `kind` is bool, int, float, str, choice, mapping or list (the last two are
    free-form: checked only for plain data here, their contents by the registry) or metrics."""
    path: str
    kind: str
    default: object
    help: str
    nullable: bool = False
    choices: tuple = ()
    ge: float | None = None
    gt: float | None = None
    lt: float | None = None

    @property
    def section(self):
        return self.path.split(".")[0]

    @property
    def name(self):
        return self.path.split(".")[-1]

    def describe(self):
        """The expected type in words, as help and error messages print it."""
        if self.kind == "choice":
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        elif self.kind == "metrics":
            text = "list of metric names ('accuracy' or 'top_k:<k>')"
        else:
            text = self.kind + _range_text(self)
        return text + (" or null" if self.nullable else "")


def _range_text(field):
    low = (f"[{field.ge:g}" if field.ge is not None else f"({field.gt:g}" if field.gt is not None else None)
    if field.lt is not None:
        return f" in {low}, {field.lt:g})"
    if field.ge is not None:
        return f" >= {field.ge:g}"
    if field.gt is not None:
        return f" > {field.gt:g}"
    return ""


def _fields(section, *rows):
    return tuple(Field(f"{section}.{name}", kind, default, help, **kw) for name, kind, default, help, kw in rows)


def _k(**kw):
    return kw


SCHEMA = (
    *_fields(
        "run",
        ("name", "str", "digits_mlp", "name of the run; the default workdir is runs/<name>", {}),
        ("workdir", "str", None, "directory for checkpoints, logs and config.yaml (null: runs/<run.name>)",
         _k(nullable=True)),
        ("seed", "int", 0, "seed of the parameter init, the data order, augmentation and dropout", _k(ge=0)),
        ("devices", "int", 1, "devices to train on, data parallel (batch sizes must divide evenly)", _k(ge=1)),
        ("epochs", "int", 20, "passes over the training set (ignored when run.steps is set)", _k(ge=1)),
        ("steps", "int", None, "total training steps; when set, it overrides run.epochs", _k(ge=1, nullable=True)),
        ("log_every", "int", 50, "steps between logged train scalars and progress lines", _k(ge=1)),
        ("progress", "choice", "auto", "progress display (auto: a bar on a terminal, lines otherwise)",
         _k(choices=("auto", "bar", "lines", "off"))),
        ("on_nonfinite", "choice", "stop", "on a non-finite loss: stop (exit code 3) or skip the step",
         _k(choices=("stop", "skip"))),
        ("max_consecutive_nonfinite", "int", 10, "with on_nonfinite: skip, stop after this many skips in a row",
         _k(ge=1)),
        ("histograms", "bool", False, "log parameter histograms to TensorBoard at each evaluation", {}),
        ("compilation_cache", "bool", True, "keep compiled steps in the persistent compilation cache", {}),
    ),
    *_fields(
        "data",
        ("name", "choice", "digits", "dataset", _k(choices=DATASETS)),
        ("path", "str", None, "file or directory to read (required for mnist, fashion_mnist and npz)",
         _k(nullable=True)),
        ("batch_size", "int", 32, "training examples per step, over all devices (divisible by run.devices)",
         _k(ge=1)),
        ("eval_batch_size", "int", None, "evaluation batch size (null: data.batch_size; divisible by run.devices)",
         _k(ge=1, nullable=True)),
        ("validation_fraction", "float", 0.1, "fraction of the training set held out for validation",
         _k(ge=0, lt=1)),
        ("test_fraction", "float", 0.25, "fraction held out as the test split (digits and synthetic only)",
         _k(gt=0, lt=1)),
        ("normalize", "choice", "scale", "input normalization: none, scale to [0, 1], or standardize",
         _k(choices=("none", "scale", "standardize"))),
        ("augment", "choice", "none", "training augmentation: none, or random shifts of images",
         _k(choices=("none", "shift"))),
        ("shuffle", "bool", True, "shuffle the training set every epoch", {}),
        ("prefetch", "int", 2, "batches prepared ahead by the background thread (0: none)", _k(ge=0)),
        ("num_train", "int", 2048, "training examples (synthetic datasets only)", _k(ge=1)),
        ("num_test", "int", 512, "test examples (synthetic datasets only)", _k(ge=1)),
        ("num_classes", "int", 10, "classes (synthetic datasets only)", _k(ge=2)),
        ("seq_len", "int", 16, "sequence length (synthetic_sequence only)", _k(ge=1)),
        ("vocab_size", "int", 32, "vocabulary size (synthetic_sequence only)", _k(ge=2)),
        ("input_dim", "int", 20, "input features (synthetic_classification only)", _k(ge=1)),
    ),
    *_fields(
        "model",
        ("preset", "choice", "mlp", "a named architecture, configured by model.args (null when model.layers is set)",
         _k(choices=("mlp", "convnet", "resnet_small", "transformer_small"), nullable=True)),
        ("args", "mapping", {}, "keyword arguments of the preset, e.g. {hidden: [128, 128]}", {}),
        ("layers", "list", None, "the network as a list of layers, e.g. [Flatten, {Dense: {out_dim: 10}}]",
         _k(nullable=True)),
    ),
    *_fields(
        "loss",
        ("name", "choice", "softmax_cross_entropy", "loss function",
         _k(choices=("softmax_cross_entropy", "mean_squared_error", "sigmoid_binary_cross_entropy"))),
        ("label_smoothing", "float", 0.0, "label smoothing of the targets", _k(ge=0, lt=1)),
    ),
    Field("metrics", "metrics", ["accuracy"], "metrics logged besides the loss, e.g. [accuracy, top_k:3]"),
    *_fields(
        "optimizer",
        ("name", "choice", "adam", "optimizer from optim", _k(choices=OPTIMIZERS)),
        ("learning_rate", "float", 1.0e-3, "base learning rate (the schedule's peak or start)", _k(gt=0)),
        ("args", "mapping", {}, "other keyword arguments of the optimizer, e.g. {b1: 0.9}", {}),
        ("schedule", "choice", "constant", "learning-rate schedule from optim.schedules", _k(choices=SCHEDULES)),
        ("schedule_args", "mapping", {}, "keyword arguments of the schedule", {}),
        ("warmup_steps", "int", 0, "steps of linear warmup", _k(ge=0)),
        ("grad_clip_norm", "float", None, "clip gradients to this global norm (null: no clipping)",
         _k(gt=0, nullable=True)),
        ("weight_decay", "float", 0.0, "decoupled weight decay", _k(ge=0)),
        ("accumulate_steps", "int", 1, "micro-batches whose gradients are averaged per update", _k(ge=1)),
        ("ema_decay", "float", None, "decay of an exponential moving average of the parameters (null: none)",
         _k(gt=0, lt=1, nullable=True)),
    ),
    *_fields(
        "eval",
        ("every", "int", 0, "steps between evaluations (0: at the end of every epoch)", _k(ge=0)),
        ("split", "choice", "validation", "split evaluated during training", _k(choices=("validation", "test"))),
        ("at_end", "bool", True, "evaluate on the test split at the end of training", {}),
    ),
    *_fields(
        "checkpoint",
        ("every", "int", 500, "steps between checkpoints (null: only at the end and when stopped)",
         _k(ge=1, nullable=True)),
        ("keep", "int", 3, "newest checkpoints kept", _k(ge=1)),
        ("keep_best_metric", "str", None, "also keep the best checkpoint by this eval metric: eval/loss, "
         "eval/accuracy, eval/top_<k>_accuracy",
         _k(nullable=True)),
        ("keep_best_mode", "choice", "max", "whether the best value of keep_best_metric is the max or the min",
         _k(choices=("max", "min"))),
    ),
    # DP-SGD (issue 15): read by train/dp.py; docs/design.md, "DP-SGD and privacy accounting"
    *_fields(
        "dp",
        ("enabled", "bool", False, "train with DP-SGD: clipped per-example gradients plus Gaussian noise", {}),
        ("l2_norm_clip", "float", 1.0, "clip each example's gradient to this L2 norm (C)", _k(gt=0)),
        ("noise_multiplier", "float", None, "noise std / l2_norm_clip (sigma); exactly one of this and "
         "dp.target_epsilon when enabled", _k(ge=0, nullable=True)),
        ("target_epsilon", "float", None, "choose the smallest sigma whose epsilon after the whole run is at most "
         "this (by dp.accountant)", _k(gt=0, nullable=True)),
        ("delta", "float", 1.0e-5, "delta of the (epsilon, delta) guarantee; must be below 1 / training examples",
         _k(gt=0, lt=1)),
        ("sampling", "choice", "poisson", "batches: poisson (each example with probability batch_size / N, the "
         "accounted law) or shuffle (accounted as poisson, a heuristic)", _k(choices=SAMPLING)),
        ("method", "choice", "auto", "how per-example norms are found (core.clipped_grad): auto, ghost, "
         "materialize or vmap", _k(choices=DP_METHODS)),
        ("physical_batch_size", "int", None, "compute the batch in chunks of this many examples (a virtual batch; "
         "null: all at once)", _k(ge=1, nullable=True)),
        ("accountant", "choice", "rdp", "the epsilon shown in the progress line (rdp or pld; both are logged)",
         _k(choices=("rdp", "pld"))),
    ),
)

FIELDS = {field.path: field for field in SCHEMA}
TOP_LEVEL = tuple(dict.fromkeys(field.section for field in SCHEMA))  # run, data, ..., checkpoint
SECTIONS = {name: {f.name: f for f in SCHEMA if f.section == name and f.path != name}
            for name in TOP_LEVEL if name not in FIELDS}
# the keys that decide the model and the data: a checkpoint refuses to resume when these change
HASHED = tuple(f.path for f in SCHEMA
               if f.section in ("model", "data", "loss", "metrics") and f.path != "data.prefetch")


# ------------------------------------------------------------------------------- value formatting

def _type_name(value):
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "mapping"
    return type(value).__name__


def _got(value):
    """`value (type)` for messages, short."""
    if isinstance(value, _YamlBool):
        return f"{value.value} (bool; YAML 1.1 reads unquoted {value.text} as a boolean)"
    if value is None:
        return "null"
    text = repr(_plain_copy(value))
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({_type_name(value)})"


def _dotted(path):
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _parse_dotted(key):
    parts = []
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", key):
        parts.append(int(index) if index else name)
    return tuple(parts)


def _suggest(word, options):
    """"did you mean 'x'?" for the closest of `options` (ignoring case), or None."""
    by_lower = {str(o).lower(): str(o) for o in options}
    match = difflib.get_close_matches(str(word).lower(), list(by_lower), n=1, cutoff=0.6)
    return f"did you mean {by_lower[match[0]]!r}?" if match else None


# ------------------------------------------------------------------------------------ YAML reading

class _YamlBool:
    """A boolean as YAML read it, with its text (`NO`, `on`, ...): bool keys take `.value`, every
    other key reports the word and says to quote it. Unwrapped before a Config is built."""
    __slots__ = ("value", "text")

    def __init__(self, value, text):
        self.value, self.text = value, text

    def __repr__(self):
        return repr(self.value)


_NUMBER_WITH_EXPONENT = re.compile(r"""^(?:[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+
                                      |[-+]?\.[0-9][0-9_]*[eE][-+]?[0-9]+)$""", re.X)
# timestamps stay strings (no date objects in a config); `<<` merge keys and `=` are plain strings
_DROPPED_RESOLVERS = {"tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"}
_MAX_NODES = 20000  # aliases can make a short file expand exponentially
_MAX_DEPTH = 64


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses every explicit tag (`!!python/object`, `!foo`, even `!!str`)."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        tag = getattr(event, "tag", None)
        if tag is not None and not isinstance(event, yaml.AliasEvent):
            mark = event.start_mark
            raise ConfigError(f"YAML tags are not allowed (found {tag!r}); write plain values",
                              where=self.label or f"{self.source}:{mark.line + 1}:{mark.column + 1}")
        return super().compose_node(parent, index)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag not in _DROPPED_RESOLVERS]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _NUMBER_WITH_EXPONENT, list("-+0123456789."))


class _Dumper(yaml.SafeDumper):
    """Writes what `_Loader` reads back unchanged: a string like "1e-3" is quoted."""

    def ignore_aliases(self, data):
        return True


_Dumper.add_implicit_resolver("tag:yaml.org,2002:float", _NUMBER_WITH_EXPONENT, list("-+0123456789."))


def _read_yaml(text, source, root=(), label=None):
    """Parse one YAML document into plain values and `{path: where}` for every key and list item
    under `root`. Locations are `source:line` (files) or `label` (overrides)."""
    loader = _Loader(text)
    loader.source, loader.label = source, label
    try:
        node = loader.get_single_node()
        locs = {}
        count = [0]

        def where(node):
            return label if label is not None else f"{source}:{node.start_mark.line + 1}"

        def convert(node, path):
            count[0] += 1
            if count[0] > _MAX_NODES or len(path) - len(root) > _MAX_DEPTH:
                raise ConfigError(f"more than {_MAX_NODES} values or {_MAX_DEPTH} levels (aliases?); "
                                  "a config is small", where=where(node))
            if isinstance(node, yaml.ScalarNode):
                value = loader.construct_object(node)
                return _YamlBool(value, node.value) if isinstance(value, bool) else value
            if isinstance(node, yaml.SequenceNode):
                items = []
                for index, child in enumerate(node.value):
                    locs[path + (index,)] = where(child)
                    items.append(convert(child, path + (index,)))
                return items
            out, lines = {}, {}
            for key_node, value_node in node.value:
                key = loader.construct_object(key_node) if isinstance(key_node, yaml.ScalarNode) else None
                line = key_node.start_mark.line + 1
                if not isinstance(key, str):
                    shown = _got(_YamlBool(key, key_node.value) if isinstance(key, bool) else key)
                    raise ConfigError(f"mapping keys must be strings, got {shown}"
                                      + (" (quote it)" if isinstance(key_node, yaml.ScalarNode) else ""),
                                      _dotted(path) or None, where(key_node))
                if key == "<<" and key_node.style is None:
                    raise ConfigError("YAML merge keys ('<<') are not supported; put shared settings in a "
                                      "file listed first (files merge left to right)", _dotted(path) or None,
                                      where(key_node))
                if key in lines:
                    both = f" (lines {lines[key]} and {line})" if label is None else ""
                    raise ConfigError(f"duplicate key {key!r}{both}",
                                      _dotted(path + (key,)), where(key_node))
                lines[key] = line
                locs[path + (key,)] = where(key_node)
                out[key] = convert(value_node, path + (key,))
            return out

        value = None if node is None else convert(node, root)
        return value, locs
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        place = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark is not None and label is None else label or source
        problem = " ".join(p for p in (e.context, e.problem) if p)
        raise ConfigError(f"invalid YAML: {problem}", where=place) from None
    except yaml.YAMLError as e:
        raise ConfigError(f"invalid YAML: {e}", where=label or source) from None
    finally:
        loader.dispose()


def _read_file(path):
    source = os.fspath(path)
    try:
        with open(source, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ConfigError(f"no such config file (looked for {os.path.abspath(source)})", where=source) from None
    except OSError as e:
        raise ConfigError(f"cannot read the config file: {e.strerror or e}", where=source) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"not UTF-8 text (byte {e.start})", where=source) from None
    value, locs = _read_yaml(text, source)
    if value is None:
        return {}, {}
    if not isinstance(value, dict):
        raise ConfigError(f"a config file is a mapping of sections (run:, data:, ...), got {_got(value)}",
                          where=f"{source}:1")
    return value, locs


# ------------------------------------------------------------------------------------ merging

_MISSING = object()


def _merge(tree, locs, path, value, new_locs):
    """Put `value` at `path` in `tree`: a mapping merges into a mapping key by key, anything else
    replaces what was there (lists replace). Locations of replaced values are dropped and
    `new_locs` (the new value's, keyed by absolute path) added."""
    replaced = set()

    def put(container, key, value, at):
        old = container.get(key, _MISSING)
        if isinstance(old, dict) and isinstance(value, dict):
            for k, v in value.items():
                put(old, k, v, at + (k,))
        else:
            container[key] = value
            replaced.add(at)

    if path:
        put(_container(tree, path[:-1]), path[-1], value, path)
    else:
        for k, v in value.items():
            put(tree, k, v, (k,))
    for p in [p for p in locs if any(p[:i] in replaced for i in range(1, len(p) + 1))]:
        del locs[p]
    locs.update(new_locs)


def _container(tree, path):
    """The mapping at `path`, created (or a null replaced by {}) along the way."""
    node = tree
    for key in path:
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        node = child
    return node


def _lookup(tree, path):
    node = tree
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return _MISSING
        node = node[key]
    return node


# ------------------------------------------------------------------------------------ overrides

_OVERRIDE = re.compile(r"^(?P<op>[+~]?)(?P<key>[^=]*)(?:=(?P<value>.*))?$", re.S)
_KEY_PART = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def _parse_override(text):
    """(op, path, value text or None, label) of one override; op is 'set', 'add' or 'delete'."""
    label = f"override {text!r}"
    if not isinstance(text, str):
        raise ConfigError(f"an override is a string like 'data.batch_size=64', got {_got(text)}", where=label)
    match = _OVERRIDE.match(text)
    op = {"": "set", "+": "add", "~": "delete"}[match["op"]]
    key, value = match["key"], match["value"]
    parts = key.split(".")
    if text.startswith(("++", "+~", "~+", "~~")):
        problem = "one prefix at most: +key=value adds, ~key deletes"
    elif not key or not all(_KEY_PART.match(p) for p in parts):
        problem = "expected key=value, +key=value or ~key with a dotted key like data.batch_size"
    elif op == "delete" and value is not None:
        problem = "~key deletes the key and takes no value (write ~" + key + ")"
    elif op != "delete" and value is None:
        problem = f"no '=' (write {match['op']}{key}=VALUE, or ~{key} to delete it)"
    elif op != "delete" and value.strip() == "":
        problem = f"no value after '=' (write {key}=null for null, {key}='' for an empty string)"
    else:
        return op, tuple(parts), value, label
    raise ConfigError(f"malformed override: {problem}", where=label)


def _schema_target(path, label):
    """The schema field (or section name) an override path names, and the rest of the path that
    goes into a free-form mapping; unknown keys raise with a suggestion."""
    top = path[0]
    if top not in TOP_LEVEL:
        raise _unknown_key_error((top,), TOP_LEVEL, label)
    if top in FIELDS:
        field, rest = FIELDS[top], path[1:]
    elif len(path) == 1:
        return top, ()
    else:
        fields = SECTIONS[top]
        if path[1] not in fields:
            raise _unknown_key_error(path[:2], fields, label)
        field, rest = fields[path[1]], path[2:]
    if rest and field.kind != "mapping":
        raise ConfigError(f"{field.path} ({field.describe()}) is not a mapping: it has no key {rest[0]!r}"
                          + (f" (set the whole list: {field.path}=[...])" if field.kind in ("list", "metrics") else ""),
                          _dotted(path), label)
    return field, rest


def _unknown_key_error(path, valid, where):
    section = _dotted(path[:-1])
    hint = _suggest(path[-1], valid)
    listing = f"valid keys: {', '.join(valid)}"
    if section:
        message = f"unknown key in {section}; " + (hint or listing)
    else:
        message = "unknown section; " + (hint or f"valid sections: {', '.join(valid)}")
    return ConfigError(message, _dotted(path), where)


def _apply_override(tree, locs, text):
    op, path, value_text, label = _parse_override(text)
    target, rest = _schema_target(path, label)
    key = _dotted(path)
    existing = _lookup(tree, path)
    for i in range(1, len(path)):
        parent = _lookup(tree, path[:i])
        if parent is not _MISSING and parent is not None and not isinstance(parent, dict):
            raise ConfigError(f"{_dotted(path[:i])} is {_got(parent)} (set at {locs.get(path[:i], 'default')}), "
                              "not a mapping", key, label)
    if op == "delete":
        if existing is _MISSING:
            near = _lookup(tree, path[:-1])
            hint = _suggest(path[-1], near) if isinstance(near, dict) else None
            raise ConfigError("is not set in the config, so there is nothing to delete"
                              + (f"; {hint}" if hint else " (it has its default)"), key, label)
        del _container(tree, path[:-1])[path[-1]]
        for p in [p for p in locs if p[:len(path)] == path]:
            del locs[p]
        return
    if op == "set" and rest and existing is _MISSING:
        near = _lookup(tree, path[:-1])
        hint = _suggest(path[-1], near) if isinstance(near, dict) else None
        raise ConfigError(f"is not set in the config; {hint + ' Or add' if hint else 'add'} it with "
                          f"'+{key}={value_text}'", key, label)
    if op == "add" and existing is not _MISSING:
        raise ConfigError(f"is already set at {locs.get(path, 'an earlier override')}; change it with "
                          f"'{key}={value_text}' (no '+')", key, label)
    value, new_locs = _read_yaml(value_text, label, root=path, label=label)
    new_locs[path] = label
    if not rest and isinstance(target, str) and value is not None and not isinstance(value, dict):
        raise ConfigError(f"is a section: set its keys ({target}.KEY=VALUE) or give a mapping "
                          f"({target}={{KEY: VALUE}}), got {_got(value)}", key, label)
    _merge(tree, locs, path, value, new_locs)


# ------------------------------------------------------------------------------------ validation

def _plain_copy(value):
    """A deep copy as plain data (YAML's booleans unwrapped, tuples as lists)."""
    if isinstance(value, _YamlBool):
        return value.value
    if isinstance(value, dict):
        return {k: _plain_copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_copy(v) for v in value]
    return value


def _check_plain(value, path, err):
    """Free-form values must be data a YAML file could hold: str, int, float, bool, null, lists,
    mappings with string keys (they are dumped, hashed and passed on as keyword arguments)."""
    if isinstance(value, _YamlBool):
        return value.value
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        if not math.isfinite(value):
            err(path, f"must be finite, got {value!r}")
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_check_plain(v, path + (i,), err) for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                err(path, f"mapping keys must be strings, got {_got(k)}")
                continue
            out[k] = _check_plain(v, path + (k,), err)
        return out
    err(path, f"expected plain data (str, number, bool, null, list or mapping), got {_got(value)}")
    return None


_TOP_K = re.compile(r"^top_k:([0-9]+)$")


def _logged_metric_name(name):
    """The name a metric is logged under (the registry's): top_k:3 -> top_3_accuracy."""
    match = _TOP_K.match(name)
    return f"top_{int(match[1])}_accuracy" if match else name


def _check_field(field, value, path, err):
    """The value normalized (int as float for float keys, booleans unwrapped), or None after
    reporting a problem through `err(path, message)`."""
    if value is None and field.nullable:
        return None

    def wrong(extra=""):
        err(path, f"expected {field.describe()}, got {_got(value)}{extra}")

    kind = field.kind
    if kind == "bool":
        if isinstance(value, _YamlBool):
            return value.value
        if isinstance(value, bool):
            return value
        return wrong()
    if isinstance(value, _YamlBool) and kind == "choice" and value.text in field.choices:
        return value.text  # `progress: off` can only mean the choice 'off' (never False)
    if isinstance(value, _YamlBool) and kind in ("str", "choice"):
        return wrong(f"; quote it ('{value.text}') for the string")
    if isinstance(value, (bool, _YamlBool)):
        return wrong()
    if kind == "int":
        if not isinstance(value, numbers.Integral):
            whole = isinstance(value, numbers.Real) and float(value).is_integer()
            return wrong(f"; write {int(value)} (no decimal point) for an int" if whole else "")
        return _check_range(field, int(value), path, err)
    if kind == "float":
        if not isinstance(value, numbers.Real):
            return wrong()
        if not math.isfinite(value):
            return err(path, f"must be finite, got {value!r}")
        return _check_range(field, float(value), path, err)
    if kind == "str":
        if not isinstance(value, str):
            return wrong("; quote it for a string" if isinstance(value, numbers.Real) else "")
        if not value.strip():
            return err(path, "must not be empty")
        return value
    if kind == "choice":
        if not isinstance(value, str) or value not in field.choices:
            hint = _suggest(value, field.choices) if isinstance(value, str) else None
            return wrong(f"; {hint}" if hint else "")
        return value
    if kind == "mapping":
        if not isinstance(value, Mapping):
            return wrong()
        return _check_plain(value, path, err)
    if kind == "list":
        if not isinstance(value, (list, tuple)):
            return wrong()
        if not value:
            return err(path, "must not be empty (null for none)")
        return _check_plain(value, path, err)
    assert kind == "metrics", kind
    if not isinstance(value, (list, tuple)):
        return wrong()
    names, seen = [], {}
    for index, item in enumerate(value):
        at = path + (index,)
        if not isinstance(item, str):
            err(at, "expected a metric name ('accuracy' or 'top_k:<k>'), got " + _got(item)
                + ("; quote it" if isinstance(item, _YamlBool) else ""))
        elif item != "accuracy" and not (_TOP_K.match(item) and int(_TOP_K.match(item)[1]) >= 1):
            hint = _suggest(item, ("accuracy", "top_k:3"))
            err(at, f"unknown metric {item!r}; expected 'accuracy' or 'top_k:<k>' with k >= 1 (e.g. 'top_k:5')"
                + (f"; {hint}" if hint else ""))
        elif item in seen:
            err(at, f"{item!r} is listed twice (items {seen[item]} and {index})")
        else:
            seen[item] = index
            names.append(item)
    return names


def _check_range(field, value, path, err):
    ok = ((field.ge is None or value >= field.ge) and (field.gt is None or value > field.gt)
          and (field.lt is None or value < field.lt))
    if not ok:
        return err(path, f"must be{_range_text(field)}, got {value!r}")
    return value


def _where(locs, path):
    """Where the value at `path` was set: its own location; for a value inside a key's list or
    mapping, its nearest located ancestor's (up to the key); for a section or mapping filled key by
    key, its first located descendant's; else "default"."""
    key_depth = 1 if path and (path[0] in FIELDS or len(path) == 1) else 2
    for i in range(len(path), min(key_depth, len(path)) - 1, -1):
        if path[:i] in locs:
            return locs[path[:i]]
    for p, place in locs.items():
        if p[:len(path)] == path:
            return place
    return "default"


def _validate(tree, locs):
    """Every key checked against SCHEMA, then the rules between keys; the values with the
    defaults filled in. Raises ConfigError listing every problem."""
    errors = []

    def where(path):
        return _where(locs, path)

    def err(path, message):
        errors.append(ConfigError(message, _dotted(path), where(path)))

    # checked in the order the keys were written, so the messages follow the file; defaults after
    given_values = {}
    for top, given in tree.items():
        if top not in TOP_LEVEL:
            errors.append(_unknown_key_error((top,), TOP_LEVEL, where((top,))))
        elif top in FIELDS:
            given_values[top] = _check_field(FIELDS[top], given, (top,), err)
        elif given is not None and not isinstance(given, Mapping):
            err((top,), f"expected a mapping of {top} settings, got {_got(given)}")
        else:
            fields, section = SECTIONS[top], {}
            for key, value in (given or {}).items():
                if key in fields:
                    section[key] = _check_field(fields[key], value, (top, key), err)
                else:
                    errors.append(_unknown_key_error((top, key), fields, where((top, key))))
            given_values[top] = section
    values = {}
    for top in TOP_LEVEL:
        if top in FIELDS:
            values[top] = given_values[top] if top in given_values else copy.deepcopy(FIELDS[top].default)
        else:
            section = given_values.get(top, {})
            values[top] = {name: section[name] if name in section else copy.deepcopy(field.default)
                           for name, field in SECTIONS[top].items()}
    _raise_all(errors)
    _check_together(values, locs, where, err)
    _raise_all(errors)
    run, data = values["run"], values["data"]
    if run["workdir"] is None:
        run["workdir"] = os.path.join("runs", run["name"])
    if data["eval_batch_size"] is None:
        data["eval_batch_size"] = data["batch_size"]
    return values


def _check_together(values, locs, where, err):
    """The rules that tie keys together; each message names every key involved and where it was set."""
    run, data, model = values["run"], values["data"], values["model"]

    def at(*path):
        place = where(path)
        return "the default" if place == "default" else f"set at {place}"

    devices = run["devices"]
    for key in ("batch_size", "eval_batch_size"):
        size = data[key]
        if size is not None and size % devices:
            err(("data", key), f"{size} is not divisible by run.devices = {devices} ({at('run', 'devices')}): "
                "every device gets an equal share of a batch")
    if model["layers"] is not None:
        if model["preset"] is not None:
            if ("model", "preset") in locs:
                err(("model", "layers"), f"model.layers and model.preset are both set (model.preset: "
                    f"{model['preset']}, {at('model', 'preset')}); set model.preset: null to use the layers")
            else:
                model["preset"] = None  # the default preset gives way to explicit layers
        # model.args is left alone (unused with layers): files merge mappings, so a later file
        # that switches to layers could not empty the args an earlier one set
    elif model["preset"] is None:
        err(("model", "preset"), "is null and model.layers is not set: set one of them")
    name, path = data["name"], data["path"]
    if name in DATASETS_WITH_PATH:
        if path is None:
            what = "the .npz file" if name == "npz" else "the file or directory"
            err(("data", "path"), f"is required for data.name: {name} ({at('data', 'name')}): {what} to read")
        elif not (os.path.isfile(path) if name == "npz" else os.path.exists(path)):
            what = "is not a file" if os.path.exists(path) else "does not exist"
            err(("data", "path"), f"{path!r} {what} (looked for {os.path.abspath(path)})")
    elif path is not None:
        err(("data", "path"), f"is only read for data.name {', '.join(DATASETS_WITH_PATH)}, but data.name is "
            f"{name!r} ({at('data', 'name')}); remove data.path")
    if values["eval"]["split"] == "validation" and data["validation_fraction"] == 0:
        err(("eval", "split"), "is 'validation' but data.validation_fraction is 0 "
            f"({at('data', 'validation_fraction')}), "
            "so there is no validation set: set eval.split: test or data.validation_fraction > 0")
    best = values["checkpoint"]["keep_best_metric"]
    if best is not None:
        known = ["eval/loss"] + [f"eval/{_logged_metric_name(m)}" for m in values["metrics"]]
        if best not in known:
            hint = _suggest(best, known)
            err(("checkpoint", "keep_best_metric"), f"{best!r} is not an eval metric of this run (metrics: "
                f"{at('metrics')}); expected one of {', '.join(repr(k) for k in known)}"
                + (f"; {hint}" if hint else ""))
    _check_dp(values, at, err)


def _check_dp(values, at, err):
    """The dp section's rules between keys, only when DP-SGD is enabled (a disabled section's keys
    are inert, so `dp.enabled=true` alone can switch a prepared config on). The rule that needs
    the data (delta below 1 / training examples) is checked once the data is loaded (train/dp.py)."""
    dp = values["dp"]
    if not dp["enabled"]:
        return
    sigma, target = dp["noise_multiplier"], dp["target_epsilon"]
    if sigma is not None and target is not None:
        err(("dp", "noise_multiplier"), f"and dp.target_epsilon are both set (dp.target_epsilon: {target:g}, "
            f"{at('dp', 'target_epsilon')}); set exactly one: a fixed noise multiplier, or a target epsilon from "
            "which the trainer chooses it")
    elif sigma is None and target is None:
        err(("dp", "enabled"), "is true but neither dp.noise_multiplier nor dp.target_epsilon is set; set exactly "
            "one (e.g. dp.noise_multiplier: 1.0, or dp.target_epsilon: 3.0)")
    devices = values["run"]["devices"]
    if devices > 1:
        err(("dp", "enabled"), f"DP-SGD trains on one device, but run.devices is {devices} ({at('run', 'devices')}); "
            "set run.devices: 1")


# ------------------------------------------------------------------------------------ the Config

class _Section(Mapping):
    """Read-only view of one level of a config; attribute and item access. Free-form values
    (model.args, model.layers, lists) come back as fresh plain copies, so changing what you got
    cannot change the config."""

    def __init__(self, values, path):
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_path", path)

    def __getitem__(self, key):
        value = self._values[key]
        if isinstance(value, dict) and not self._path and key in SECTIONS:
            return _Section(value, (key,))
        return copy.deepcopy(value) if isinstance(value, (dict, list)) else value

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            hint = _suggest(name, self._values)
            raise AttributeError(f"config has no key {_dotted(self._path + (name,))!r}"
                                 + (f"; {hint}" if hint else "")) from None

    def __setattr__(self, name, value):
        raise AttributeError("a Config is read-only: change it with an override (key=value) or build a new one "
                             "with config_from_dict")

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def to_dict(self):
        """Plain nested dicts and lists (a deep copy)."""
        return copy.deepcopy(self._values)

    def __repr__(self):
        return f"{type(self).__name__}({self._values!r})"


class Config(_Section):
    """A validated config: every key of SCHEMA, defaults filled in; read-only.

        >>> cfg = config_from_dict({"run": {"epochs": 3}})
        >>> cfg.run.epochs, cfg["data"]["batch_size"], cfg.where("run.epochs"), cfg.where("data.batch_size")
        (3, 32, '<dict>', 'default')
        >>> print(cfg.error("data.batch_size", "is larger than the training set (10 examples)"))
        default: data.batch_size: is larger than the training set (10 examples)
    """

    def __init__(self, values, locs):
        super().__init__(values, ())
        object.__setattr__(self, "_locs", dict(locs))

    def where(self, key):
        """Where `key` (dotted, e.g. "data.batch_size" or "metrics[1]") got its value: "file:line",
        "override '...'", the source given to config_from_dict, or "default"."""
        path = _parse_dotted(key)
        if not path or (path[0] not in TOP_LEVEL):
            raise KeyError(f"unknown config key {key!r}" + (f"; {_suggest(path[0], TOP_LEVEL)}" if path else ""))
        if path[0] in SECTIONS and len(path) > 1 and path[1] not in SECTIONS[path[0]]:
            hint = _suggest(path[1], SECTIONS[path[0]])
            raise KeyError(f"unknown config key {key!r}" + (f"; {hint}" if hint else ""))
        return _where(self._locs, path)

    def error(self, key, message):
        """A ConfigError for a problem found after loading (the caller raises it), located where
        `key` was set: `cfg.error("data.batch_size", "is larger than ...")`."""
        return ConfigError(message, key, self.where(key))


def _build(tree, locs, overrides):
    if isinstance(overrides, str):
        overrides = [overrides]
    for text in overrides:
        _apply_override(tree, locs, text)
    return Config(_validate(tree, locs), locs)


def load_config(paths, overrides=()):
    """Load YAML config files merged left to right (mappings merge, lists and values replace),
    apply `overrides` ("a.b=v", "+a.b=v", "~a.b"), validate, and return a Config.

        >>> load_config([], overrides=["data.batch_size=64", "run.devices=2"]).data.batch_size
        64
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    tree, locs = {}, {}
    for path in paths:
        value, new_locs = _read_file(path)
        _merge(tree, locs, (), value, new_locs)
    return _build(tree, locs, overrides)


def config_from_dict(d, source="<dict>", overrides=()):
    """A Config from nested dicts (as `train.fit({...})` takes), validated like a file; every key
    given is located at `source`.

        >>> config_from_dict({"optimizer": {"name": "sgd", "learning_rate": 1}}).optimizer.learning_rate
        1.0
    """
    if isinstance(d, Config):
        d = d.to_dict()
    if d is None:
        d = {}
    if not isinstance(d, Mapping):
        raise ConfigError(f"a config is a mapping of sections (run, data, ...), got {_got(d)}", where=source)
    errors = []
    tree = _check_plain(d, (), lambda path, message: errors.append(ConfigError(message, _dotted(path) or None, source)))
    _raise_all(errors)
    locs = {}

    def locate(value, path):
        if isinstance(value, dict):
            for k, v in value.items():
                locs[path + (k,)] = source
                locate(v, path + (k,))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                locs[path + (i,)] = source
                locate(v, path + (i,))

    locate(tree, ())
    return _build(tree, locs, overrides)


# ------------------------------------------------------------------------------- output, hashing

def dump_yaml(cfg):
    """The resolved config as YAML (every key, defaults filled in); `load_config` reads it back to
    the same config (the trainer writes it to the workdir as config.yaml).

        >>> print(dump_yaml(config_from_dict({})).splitlines()[1:4])
        ['run:', '  name: digits_mlp', '  workdir: runs/digits_mlp']
    """
    lines = ["# The resolved training config: every key, defaults filled in (`train --help` explains each)."]
    for top, value in cfg.to_dict().items():
        if top in SECTIONS:  # sections in block style, one key a line; small collections inline
            lines.append(f"{top}:")
            for key, item in value.items():
                lines.extend("  " + line for line in _dump_one(key, item).splitlines())
        else:
            lines.extend(_dump_one(top, value).splitlines())
    return "\n".join(lines) + "\n"


def _dump_one(key, value):
    if not isinstance(value, (dict, list)) or not value:
        return f"{key}: {_yaml_inline(value)}"
    return yaml.dump({key: value}, Dumper=_Dumper, sort_keys=False, default_flow_style=None,
                     allow_unicode=True, width=100)


def help_text():
    """Every config key: dotted path, type, default and one line of help (`train --help`).

        >>> print(help_text().splitlines()[3])
          run.name: str = digits_mlp
    """
    lines = ["Config keys (in YAML: a section, then its keys; on the command line: section.key=value).", ""]
    section = None
    for field in SCHEMA:
        if field.section != section and field.path != field.section:
            section = field.section
            lines.append(f"{section}:")
        elif field.path == field.section:
            section = None
        indent = "  " if section else ""
        lines.append(f"{indent}{field.path}: {field.describe()} = {_yaml_inline(field.default)}")
        lines.append(f"{indent}      {field.help}")
    return "\n".join(lines)


def _yaml_inline(value):
    text = yaml.dump(value, Dumper=_Dumper, default_flow_style=True, width=10**6, allow_unicode=True).strip()
    return text[:-4].strip() if text.endswith("\n...") else text


def _hashed_values(d):
    out = {}
    for path in HASHED:
        out[path] = _lookup(d, tuple(path.split(".")))
    return out


def model_hash(cfg):
    """SHA-256 (hex) over the keys that decide the model and the data (HASHED: model.*, data.*
    except prefetch, loss.*, metrics), stored in checkpoints so a resume with another model is
    refused. Takes a Config or its to_dict().

        >>> model_hash(config_from_dict({})) == model_hash(config_from_dict({"run": {"epochs": 99}}))
        True
    """
    d = cfg.to_dict() if isinstance(cfg, Config) else cfg
    values = {k: (None if v is _MISSING else v) for k, v in _hashed_values(d).items()}
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def model_key_diff(old_dict, new_cfg):
    """The dotted keys among those hashed whose values differ between `old_dict` (a config's
    to_dict(), e.g. from a checkpoint) and `new_cfg`; free-form mappings are compared key by key.

        >>> old = config_from_dict({}).to_dict()
        >>> model_key_diff(old, config_from_dict({"model": {"args": {"hidden": [64]}}, "run": {"seed": 1}}))
        ['model.args.hidden']
    """
    old = old_dict.to_dict() if isinstance(old_dict, Config) else old_dict
    new = new_cfg.to_dict() if isinstance(new_cfg, Config) else new_cfg
    diffs = []

    def same(a, b):
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)

    def compare(a, b, path):
        if isinstance(a, dict) and isinstance(b, dict):
            for key in list(a) + [k for k in b if k not in a]:
                compare(a.get(key, _MISSING), b.get(key, _MISSING), path + "." + key)
        elif a is _MISSING or b is _MISSING or not same(a, b):
            diffs.append(path)

    old_values, new_values = _hashed_values(old), _hashed_values(new)
    for path in HASHED:
        compare(old_values[path], new_values[path], path)
    return diffs

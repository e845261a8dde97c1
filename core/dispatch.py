"""Eager execution: a primitive applied to concrete arrays compiles once per (primitive, params,
input avals, device) into a one-operation program and runs it (docs/design.md, Primitives and dispatch).

Two debugging aids hang off this path and cost nothing while off: with `debug_nans` /
`debug_infs` set, every output is checked for NaN / Inf after it is computed (a primitive with a
rule in `nan_rerun_rules`, such as `jit`, is then re-run op by op to find the equation that made
it); and an execution that fails because an operand was donated (deleted) is reported as such.
"""
import collections
import os
import re
import threading
import warnings

import numpy as np

from . import dtypes
from .array import Array, to_array
from .tokens import Token, abstract_token
from .config import config as _config
from .trace import _state as _trace_state, EvalTrace
from .interpreters import lowering
from .runtime import executable as _executable
from .runtime import client as _client

_flags = _config.__dict__  # the flags are plain instance attributes: a dict read is the cheapest check


# ----- the fast path -------------------------------------------------------------------------------
# An eager application whose arguments are all uncommitted Arrays, seen before under the current
# config, runs its remembered executable straight away: no avals, no LRU, no abstract evaluation.
# Each primitive keeps its own table (`Primitive._eager_fast`), keyed on the arguments' `_fkey`s
# (interned ids of their avals, weak type included) and the params in call order:
#   one argument and no params: its `_fkey` (an int); otherwise the tuple
#   (fkey_0, ..., fkey_n-1, name_0, value_0, name_1, value_1, ...).
# An entry is (token, execute, handlers, out_avals, out_fkeys, multiple_results), valid while
# `token` is `config._jit_fast_token`: None while debug_nans/debug_infs, disable_jit or a per-thread
# override is on, and a new object after every config change, so nothing remembered before
# key-reuse checking was turned on runs while it is on (entries are not remembered while it is).
# The lookup is written twice: in C as `Primitive.bind` (core/_jitfast.c) and in Python at the
# top of `apply_primitive`, the fallback and the reference. `eager_fast_limit` bounds the entries of
# all tables together, oldest out first.

eager_fast_limit = 4096
_fast_order = collections.OrderedDict()  # (primitive, key) -> None, in the order remembered
_fast_lock = threading.Lock()
_fast_hits = [0]  # served by the Python path (the C path counts its own)
_count_execution = _executable.count_execution

try:
    if os.environ.get("PURENN_PURE_PYTHON_JIT", "") == "1":
        raise ImportError("PURENN_PURE_PYTHON_JIT=1")
    from . import _jitfast
    if not hasattr(_jitfast, "configure_eager"):  # an extension built before the eager path
        raise ImportError("core._jitfast has no eager fast path")
except ImportError:
    _jitfast = None


def _fast_key(args, params):
    """The key of this application in its primitive's `_eager_fast`, or None if it does not qualify."""
    if len(args) == 1 and not params:
        a = args[0]
        return a._fkey if type(a) is Array else None  # `_fkey` is None when committed
    key = []
    for a in args:
        if type(a) is not Array or a._fkey is None:
            return None
        key.append(a._fkey)
    for item in params.items():
        key.extend(item)
    return tuple(key)


def _remember_fast(prim, args, params, token, exe, out_avals):
    """Keep `exe` for the fast path under this application's key, if it qualifies."""
    if token is None or _flags["debug_key_reuse"] or not isinstance(prim._eager_fast, dict):
        return
    key = _fast_key(args, params)
    if key is None:
        return
    try:
        hash(key)
    except TypeError:
        return
    entry = (token, exe.loaded.execute_sharded, exe.handlers, tuple(out_avals),
             tuple(a.type_id for a in out_avals), bool(prim.multiple_results))
    with _fast_lock:
        prim._eager_fast[key] = entry
        _fast_order[(prim, key)] = None
        _fast_order.move_to_end((prim, key))
        while len(_fast_order) > eager_fast_limit:
            (p, k), _ = _fast_order.popitem(last=False)
            p._eager_fast.pop(k, None)


def _clear_fast():
    with _fast_lock:
        for p, k in _fast_order:
            p._eager_fast.pop(k, None)
        _fast_order.clear()
        _fast_hits[0] = 0
        if _jitfast is not None:
            _jitfast.reset_eager_hits()


class _EagerCache(_executable.ExecutableCache):
    """The eager executables (LRU), whose counters also report the fast path: `hits` counts both,
    `fast_hits` the fast path's alone, `fast_size` its remembered entries."""

    def clear(self):
        super().clear()
        _clear_fast()

    def info(self):
        info = super().info()
        fast = _fast_hits[0] + (_jitfast.eager_hits() if _jitfast is not None else 0)
        info["hits"] += fast
        info["fast_hits"] = fast
        info["fast_size"] = len(_fast_order)
        return info


eager_cache = _executable.register_cache("eager", _EagerCache(maxsize=4096))

# prim -> rule(args, params, kind): re-runs a primitive that holds a program op by op with the
# NaN/Inf checks on, raising the precise error; it returns if the re-run finds nothing.
nan_rerun_rules = {}


def apply_primitive(prim, args, params):
    fast = prim._eager_fast
    if fast:
        try:
            entry = fast.get(_fast_key(args, params))
        except TypeError:  # an unhashable param: reported below as it always was
            entry = None
        if entry is not None and entry[0] is _flags["_jit_fast_token"]:
            _, execute, handlers, out_avals, out_fkeys, multiple = entry
            try:
                outs = execute([a._buf for a in args]).consume_with_handlers(handlers)
            except RuntimeError:
                _raise_if_deleted(args)
                raise
            _count_execution()
            _fast_hits[0] += 1
            if multiple:
                return [Array(b, a) for b, a in zip(outs, out_avals, strict=True)]
            return Array(outs[0], out_avals[0])
    return _apply_slow(prim, args, params)


def _apply_slow(prim, args, params):
    token = _flags["_jit_fast_token"]  # read first: a config change while this runs must not be labelled current
    avals = []
    bufs = []
    device = None
    for a in args:
        if type(a) is not Array:
            if type(a) is Token:  # no buffer: made inside the program (_TokenProgram)
                avals.append(abstract_token)
                bufs.append(None)
                continue
            a = to_array(a)
        avals.append(a.aval)
        bufs.append(a._buf)
        if a._device is not None:
            device = a._device
    # Params are compared with `==`: a primitive's wrapper gives each param one canonical Python
    # type, so that equal params mean the same program (1, 1.0 and True are equal; a float that a
    # user passes, such as gather's fill value, is a bit-compared float so that 0.0 != -0.0).
    # Typing every param here instead would cost ~0.1-0.7 us per eager call.
    key = (prim, tuple(avals), tuple(params.items()), device)
    entry = eager_cache.get(key)
    if entry is None:
        entry = _compile_primitive(prim, key[1], params, device)
        eager_cache.put(key, entry)
    exe, out_avals = entry
    if type(exe) is _TokenProgram:
        return exe.run(prim, args, bufs, device)
    if device is not None:
        bufs = _move_to([a if type(a) is Array else to_array(a) for a in args], device)
    try:
        outs = exe(bufs)
    except RuntimeError:
        _raise_if_deleted(args)
        raise
    if prim.multiple_results:
        result = [Array(b, a, device) for b, a in zip(outs, out_avals, strict=True)]
        if _flags["check_outputs"]:
            check_invalid_values(prim, args, params, result)
    else:
        result = Array(outs[0], out_avals[0], device)
        if _flags["check_outputs"]:
            check_invalid_values(prim, args, params, [result])
    if device is None and token is not None:
        _remember_fast(prim, args, params, token, exe, out_avals)
    return result


def executable_for(prim, avals, params, device=None):
    """The cached `(executable, out_avals)` that applying `prim` to `avals` runs (compiled on a miss)."""
    key = (prim, tuple(avals), tuple(params.items()), device)
    entry = eager_cache.get(key)
    if entry is None:
        entry = _compile_primitive(prim, key[1], params, device)
        eager_cache.put(key, entry)
    return entry


def _compile_primitive(prim, avals, params, device):
    out = prim.abstract_eval(*avals, **params)
    out_avals = tuple(out) if prim.multiple_results else (out,)
    if abstract_token in avals or abstract_token in out_avals:
        return _TokenProgram(prim, avals, out_avals, params, device), out_avals
    text, callbacks = lower_to_module(
        _module_name(prim, params), list(avals), list(out_avals),
        lambda f: lowering.lower_equation(f, prim, f.args, list(avals), list(out_avals), params),
        params.get("donated_invars"))
    return _compile_text(text, out_avals, device, callbacks), out_avals


def _compile_text(text, out_avals, device, callbacks):
    device = device or _client.backend().default_device
    if callbacks:
        return _executable.compile_module_with_callbacks(text, out_avals, device, callbacks)
    return _executable.compile_module(text, out_avals, device)


class _TokenProgram:
    """The executable of an application with token operands or results (core/tokens.py): tokens
    never cross a program boundary, so the compiled `main` takes only the array operands (each
    token operand is a `stablehlo.create_token` inside) and returns only the array results; `run`
    puts a fresh `Token` where each token result was. With no array result nothing is compiled or
    run (`create_token()`, `after_all(t)` eagerly): a token holds no data."""

    def __init__(self, prim, avals, out_avals, params, device):
        self.is_token_in = [a == abstract_token for a in avals]
        self.is_token_out = [a == abstract_token for a in out_avals]
        self.exe = None
        array_outs = [a for a in out_avals if a != abstract_token]
        if not array_outs:
            return
        array_ins = [a for a in avals if a != abstract_token]
        donated = params.get("donated_invars")
        if donated:
            donated = [d for d, t in zip(donated, self.is_token_in) if not t]

        def emit(f):
            given = iter(f.args)
            ins = [f.op("stablehlo.create_token", [], [lowering.TOKEN_TYPE]) if t else next(given)
                   for t in self.is_token_in]
            outs = lowering.lower_equation(f, prim, ins, list(avals), list(out_avals), params)
            return [v for v, t in zip(outs, self.is_token_out) if not t]
        text, callbacks = lower_to_module(_module_name(prim, params), array_ins, array_outs, emit, donated)
        self.exe = _compile_text(text, tuple(array_outs), device, callbacks)
        self.array_avals = array_outs

    def run(self, prim, args, bufs, device):
        arrays = iter(())
        if self.exe is not None:
            if device is not None:
                bufs = _move_to([a if type(a) is Array else to_array(a) for a, t in zip(args, self.is_token_in)
                                 if not t], device)
            else:
                bufs = [b for b, t in zip(bufs, self.is_token_in) if not t]
            try:
                outs = self.exe(bufs)
            except RuntimeError:
                _raise_if_deleted(args)
                raise
            arrays = iter([Array(b, a, device) for b, a in zip(outs, self.array_avals, strict=True)])
        results = [Token() if t else next(arrays) for t in self.is_token_out]
        return results if prim.multiple_results else results[0]


def _module_name(prim, params):
    """The module's name: `jit_<function>` for a jitted program (as JAX names it, and as
    `Lowered.as_text()` does), so that profiles, compiler logs and HLO dumps name the user's
    function; `eager_<primitive>` for one primitive."""
    name = params.get("name")
    if prim.name == "jit" and isinstance(name, str):
        return "jit_" + name
    return "eager_" + prim.name


def lower_to_module(name, in_avals, out_avals, emit, donated=None, num_replicas=None, axis_env=None):
    """The StableHLO text of a module whose `main(in_avals)` is emitted by `emit(builder)` (which
    returns the output values), and the Python host callbacks its lowering rules registered.

    `donated` (a bool per input, or None) marks inputs whose buffers the program may reuse: each
    is aliased to an output of the same type (`tf.aliasing_output`, what XLA's input/output
    aliasing reads); a donated input no output can take is reported in a warning and not donated.
    `num_replicas` makes it a replicated module (pmap) whose replicas span the named axes `axis_env`.
    """
    attributes = {"mhlo.num_replicas": f"{num_replicas} : i32", "mhlo.num_partitions": "1 : i32"} \
        if num_replicas else None
    m = lowering.ModuleBuilder(re.sub(r"[^A-Za-z0-9_]", "_", name), attributes, axis_env)
    f = m.func("main", in_avals)
    f.ret(emit(f))
    text = m.text()
    if donated and any(donated):
        text = _alias_donated_inputs(text, f, in_avals, out_avals, donated)
    return text, tuple(getattr(m, "host_callbacks", ()))


def _alias_donated_inputs(text, f, in_avals, out_avals, donated):
    free = list(range(len(out_avals)))
    params, unusable = [], []
    for arg, aval, is_donated in zip(f.args, in_avals, donated, strict=True):
        attr = ""
        if is_donated:
            match = next((j for j in free if out_avals[j].shape == aval.shape
                          and out_avals[j].dtype == aval.dtype), None)
            if match is None:
                unusable.append(aval.str_short())
            else:
                free.remove(match)
                attr = f" {{tf.aliasing_output = {match} : i32}}"
        params.append(f"{arg}: {f.type_of(arg)}{attr}")
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}. Donation reuses an "
                      "argument's buffer for an output of the same shape and dtype; no output matched.",
                      UserWarning, stacklevel=2)
    header = ", ".join(f"{a}: {f.type_of(a)}" for a in f.args)
    return text.replace(f"@main({header})", f"@main({', '.join(params)})", 1)


def _raise_if_deleted(args):
    """Execution failed: say so plainly if it is because an operand's buffer was donated."""
    for a in args:
        if type(a) is Array and a._buf.is_deleted():
            raise RuntimeError(f"Array has been deleted with shape={a.aval.str_short()}. It was donated to a "
                               "jitted function (donate_argnums) or deleted with .delete(); use the function's "
                               "result instead, or stop donating it.") from None


def check_invalid_values(prim, args, params, results):
    """With debug_nans/debug_infs on: raise FloatingPointError if an inexact result holds a NaN/Inf."""
    kind = None
    for r in results:
        if not dtypes.is_inexact(r.aval.dtype) or r.aval.size == 0:
            continue
        value = np.asarray(r)
        if _config.debug_nans and np.isnan(value).any():
            kind = "nan"
            break
        if _config.debug_infs and np.isinf(value).any():
            kind = "inf"
            break
    if kind is None:
        return
    rerun = nan_rerun_rules.get(prim)
    if rerun is None:
        raise FloatingPointError(f"invalid value ({kind}) encountered in {prim.name}")
    rerun(args, params, kind)  # raises naming the first equation that produced it
    raise FloatingPointError(
        f"invalid value ({kind}) encountered in {prim.name}({params.get('name', '')}). Because "
        f"debug_{kind}s is set, the de-optimized function (the function as if the jit decorator were "
        "removed) was re-run op by op to find the operation that produced it, but it did not produce "
        "invalid values during its execution. The invalid value may come from XLA's optimizations of the "
        "compiled program, or it was already in an argument that the function returns unchanged. It may "
        "be possible to avoid it by removing the jit decorator, at the cost of speed.")


def _move_to(args, device):
    """Operands follow the first committed operand; two different committed devices are an error."""
    from .array import asarray_device
    bufs = []
    for a in args:
        if a._device is None:
            if device != _client.backend().default_device:
                a = asarray_device(a._value(), weak_type=a.aval.weak_type, device=device)
        elif a._device != device:
            raise ValueError(f"Received incompatible devices for an eager operation: {a._device} and {device}. "
                             "Move the arrays to one device with core.device_put(x, device).")
        bufs.append(a._buf)
    return bufs


if _jitfast is not None:
    _jitfast.configure_eager(_trace_state, EvalTrace, _flags, Array, _raise_if_deleted,
                             _executable.collect_garbage, _executable.EXECUTIONS_PER_COLLECT)

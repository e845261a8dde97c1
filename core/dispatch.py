"""Eager execution: a primitive applied to concrete arrays compiles once per (primitive, params,
input avals, device) into a one-operation program and runs it (DESIGN.md decision 4)."""
from .array import Array, to_array
from .interpreters import lowering
from .runtime import executable as _executable
from .runtime import client as _client

eager_cache = _executable.register_cache("eager", _executable.ExecutableCache(maxsize=4096))


def apply_primitive(prim, args, params):
    avals = []
    bufs = []
    device = None
    for a in args:
        if type(a) is not Array:
            a = to_array(a)
        avals.append(a.aval)
        bufs.append(a._buf)
        if a._device is not None:
            device = a._device
    key = (prim, tuple(avals), tuple(params.items()), device)
    entry = eager_cache.get(key)
    if entry is None:
        entry = _compile_primitive(prim, key[1], params, device)
        eager_cache.put(key, entry)
    exe, out_avals = entry
    if device is not None:
        bufs = _move_to([a if type(a) is Array else to_array(a) for a in args], device)
    outs = exe(bufs)
    if prim.multiple_results:
        return [Array(b, a, device) for b, a in zip(outs, out_avals, strict=True)]
    return Array(outs[0], out_avals[0], device)


def _compile_primitive(prim, avals, params, device):
    out = prim.abstract_eval(*avals, **params)
    out_avals = tuple(out) if prim.multiple_results else (out,)
    text = lowering.lower_primitive(prim, list(avals), list(out_avals), params)
    exe = _executable.compile_module(text, out_avals, device or _client.backend().default_device)
    return exe, out_avals


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

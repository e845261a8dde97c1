"""`pmap`: run a function on several devices at once, one slice of the mapped axis per device.

`pmap(f)` traces `f` once per signature with per-device argument types (the mapped axis removed)
and the axis name bound, so collectives (`lax.psum(x, name)`, ...) can be used in it. The traced
program is applied as one `pmap` primitive holding the jaxpr. Eagerly that primitive lowers the
program to a replicated StableHLO module (one replica per device; collectives become
`stablehlo.all_reduce` and friends over the replicas), compiles it once, and runs it on the
devices; its results are `ShardedArray`s. Under other transformations it is transformed like `jit`:

- jvp: the program's jvp, as one pmap again;
- linearize/grad: the program split into a known pmap (which also returns per-device residuals)
  and an unknown one that takes them;
- transpose: the transposed program as one pmap; the cotangent of an unmapped (broadcast) input
  is summed over the devices inside it (`psum`);
- vmap: the program batched, the batch axis just after the device axis.

A pmap nested in `jit` or in another pmap is not compiled (one replicated level per program).
Across processes (`core.distributed.initialize`) the same program spans every process's devices;
each process passes and gets back only the slices of its own devices.
"""
import functools
import threading
import weakref

import numpy as np

from . import dispatch, traceback_util
from .array import Array, to_array
from .avals import ShapedArray
from .config import config
from .interpreters import ad, batching, lowering, partial_eval
from .interpreters.evaluation import eval_jaxpr
from .interpreters.staging import trace_to_jaxpr
from .ir import consts_as_args, intern as intern_jaxpr
from .runtime import client as _client
from .runtime import executable as _executable_cache
from .runtime import replicated as _replicated
from .sharded import ShardedArray
from .trace import EvalTrace, Primitive, Tracer, set_current_trace
from .trace import _state as _trace_state
from .tree_util import physical_flatten, tree_flatten, tree_unflatten, typed_leaf_mask
from . import batching_api as _axes
from .api import _static_key

__all__ = ["pmap"]


class _AnonymousAxis:
    """The axis of a pmap given no axis_name: bound (so transposes can sum over it) but not nameable."""
    __slots__ = ()

    def __repr__(self):
        return "<unnamed pmap axis>"


class PmapPrimitive(Primitive):
    """`bind` runs the program on the devices when applied to concrete values."""

    def bind(self, *args, **params):
        if _trace_state.trace.__class__ is EvalTrace:
            return _pmap_impl(*args, **params)
        return _trace_state.trace.process_primitive(self, args, params)


pmap_p = PmapPrimitive("pmap", multiple_results=True)


def _n_local(devices):
    pid = _client.process_index()
    return sum(d.process_index == pid for d in devices)


def _axis(params):
    return batching.AxisData(params["axis_name"], len(params["devices"]))


def _pmap_abstract_eval(*avals, name, jaxpr, axis_name, devices, in_axes, out_axes, donated_invars=None):
    n = _n_local(devices)
    for i, (a, e, ax) in enumerate(zip(avals, jaxpr.in_avals, in_axes, strict=True)):
        per_device = a.shape[1:] if ax == 0 else a.shape
        if (ax == 0 and (not a.shape or a.shape[0] != n)) or per_device != e.shape or a.dtype != e.dtype:
            raise TypeError(f"pmap-compiled {name} was traced for per-device input {i} of type {e.str_short()} "
                            f"({'mapped over' if ax == 0 else 'broadcast to'} {n} devices) but applied to "
                            f"{a.str_short()}.")
    return [ShapedArray((n, *a.shape), a.dtype, a.weak_type) if ax == 0 else a
            for a, ax in zip(jaxpr.out_avals, out_axes, strict=True)]


pmap_p.def_abstract_eval(_pmap_abstract_eval)


def _pmap_lowering(ctx, *args, name, **params):
    raise NotImplementedError(
        f"pmap of {name} inside jit or inside another pmap is not supported: a program has one replicated level. "
        "Call the pmapped function outside jit (pmap compiles its function already), or use vmap for the inner "
        "mapping.")


lowering.register(pmap_p, _pmap_lowering)


# ----- running on the devices --------------------------------------------------------------------

# bounded like the other executable caches, and emptied by core.clear_caches()
_executables = _executable_cache.register_cache("pmap", _executable_cache.ExecutableCache(maxsize=512))


def _executable_for(params):
    key = tuple(params.items())
    exe = _executables.get(key)
    if exe is None:
        exe = _compile(**params)
        _executables.put(key, exe)
    return exe


def _compile(name, jaxpr, axis_name, devices, in_axes, out_axes, donated_invars=None):
    program = jaxpr.jaxpr
    text, callbacks = dispatch.lower_to_module(
        f"pmap_{name}", jaxpr.in_avals, jaxpr.out_avals,
        lambda f: lowering.lower_jaxpr_into(f, program, f.args), donated_invars,
        num_replicas=len(devices), axis_env={axis_name: len(devices)})
    if callbacks:
        raise NotImplementedError(f"pmap of {name}: host callbacks (debug.callback, debug.print) inside pmap are "
                                  "not supported yet; call them outside the pmapped function.")
    return _replicated.compile_replicated(text, jaxpr.out_avals, devices)


def _span_of(x, ax, aval, exe):
    """Argument `x` as the spanning array the executable takes: a ShardedArray over the same
    devices is passed as it is; anything else is copied from the host, split along axis 0 when
    mapped, whole to every device when broadcast."""
    local = exe.local_devices
    if ax == 0 and type(x) is ShardedArray and x._shard_aval.shape == aval.shape and x._shard_aval.dtype == aval.dtype:
        if x._span_devices == exe.devices:
            return x._span
        if tuple(x.shard_devices) == local:
            return _replicated.assemble(aval, exe.devices, _replicated.shards_of(x._span))
    if isinstance(x, Array):
        value = x._value()
    else:
        value = np.asarray(x, dtype=aval.dtype)
    if value.dtype != aval.dtype:
        value = value.astype(aval.dtype)
    parts = list(value) if ax == 0 else [value] * len(local)
    return _replicated.put_shards(parts, aval, exe.devices, local)


def _pmap_impl(*args, **params):
    return _run(_executable_for(params), params, args)


def _run(exe, params, args):
    jaxpr = params["jaxpr"]
    spans = [_span_of(x, ax, a, exe) for x, ax, a in zip(args, params["in_axes"], jaxpr.in_avals, strict=True)]
    try:
        outs = exe(spans)
    except RuntimeError:
        dispatch._raise_if_deleted([x for x in args if isinstance(x, Array)])
        raise
    default = _client.backend().default_device
    n_local = len(exe.local_devices)
    results = []
    for span, aval, ax in zip(outs, jaxpr.out_avals, params["out_axes"], strict=True):
        if ax == 0:
            results.append(ShardedArray(span, aval, exe.devices, n_local))
        else:  # the same on every device: the first local device's copy
            shard = _replicated.shards_of(span)[0]
            device = _replicated.device_of(shard)
            results.append(Array(shard, aval, None if device == default else device))
    return results


# ----- transformation rules ------------------------------------------------------------------------

def _pmap_jvp(primals, tangents, **params):
    jaxpr = params["jaxpr"]
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    with batching.binding_axis(_axis(params)):
        jvp_closed, out_nonzeros = ad.jvp_jaxpr(jaxpr, nonzeros, instantiate=False)
    program, consts = consts_as_args(jvp_closed)
    in_axes, out_axes = params["in_axes"], params["out_axes"]
    new = {**params, "jaxpr": program, "donated_invars": None,
           "in_axes": (None,) * len(consts) + in_axes + tuple(a for a, nz in zip(in_axes, nonzeros) if nz),
           "out_axes": out_axes + tuple(a for a, nz in zip(out_axes, out_nonzeros) if nz)}
    outs = pmap_p.bind(*consts, *primals, *[t for t in tangents if type(t) is not ad.Zero], **new)
    n = len(jaxpr.out_avals)
    tangents_out = iter(outs[n:])
    out_avals = _pmap_abstract_eval(*[p.aval if hasattr(p, "aval") else to_array(p).aval for p in primals], **params)
    return outs[:n], [next(tangents_out) if nz else ad.Zero(ad.tangent_aval(a))
                      for nz, a in zip(out_nonzeros, out_avals, strict=True)]


def _pmap_partial_eval(trace, args, params):
    unknowns = [trace.is_unknown(a) for a in args]
    with batching.binding_axis(_axis(params)):
        known, unknown, out_unknowns, num_res = partial_eval.partial_eval_jaxpr(params["jaxpr"], unknowns)
    known, consts = consts_as_args(known)
    in_axes, out_axes = params["in_axes"], params["out_axes"]
    known_params = {**params, "jaxpr": known, "donated_invars": None,
                    "in_axes": (None,) * len(consts) + tuple(a for a, u in zip(in_axes, unknowns) if not u),
                    "out_axes": tuple(a for a, u in zip(out_axes, out_unknowns) if not u) + (0,) * num_res}
    with set_current_trace(trace.parent):
        known_outs = pmap_p.bind(*consts, *[a for a, u in zip(args, unknowns) if not u], **known_params)
    n_known = len(known_outs) - num_res
    residuals = known_outs[n_known:]  # each device's own residuals, stacked along the device axis
    unknown_params = {**params, "jaxpr": unknown, "donated_invars": None,
                      "in_axes": (0,) * num_res + tuple(a for a, u in zip(in_axes, unknowns) if u),
                      "out_axes": tuple(a for a, u in zip(out_axes, out_unknowns) if u)}
    unknown_outs = trace.stage(pmap_p, [*residuals, *[a for a, u in zip(args, unknowns) if u]], unknown_params)
    known_iter, unknown_iter = iter(known_outs[:n_known]), iter(unknown_outs)
    return [next(unknown_iter) if u else next(known_iter) for u in out_unknowns]


def _pmap_transpose(cts, *args, **params):
    jaxpr, in_axes, out_axes = params["jaxpr"], params["in_axes"], params["out_axes"]
    linear = [ad.is_undefined(a) for a in args]
    axis = _axis(params)
    with batching.binding_axis(axis):
        transposed = ad.transpose_jaxpr(jaxpr, linear)
    # an input broadcast to every device got a cotangent on each: its cotangent is their sum
    summed = [ax is None for ax, lin in zip(in_axes, linear) if lin]
    if any(summed):
        transposed = _sum_outputs_over_axis(transposed, summed, axis)
    program, consts = consts_as_args(transposed)
    ct_in = []
    for ct, aval, ax in zip(cts, jaxpr.out_avals, out_axes, strict=True):
        ct = ad.instantiate_zeros(ct)
        if ax is None:  # an output read from one device stands for every device's equal copy
            ct = ct * np.array(1.0 / len(params["devices"]), dtype=aval.dtype)
        ct_in.append(ct)
    new = {**params, "jaxpr": program, "donated_invars": None,
           "in_axes": (None,) * len(consts) + tuple(a for a, lin in zip(in_axes, linear) if not lin)
           + tuple(out_axes),
           "out_axes": tuple(None if s else 0 for s in summed)}
    outs = iter(pmap_p.bind(*consts, *[a for a, lin in zip(args, linear) if not lin], *ct_in, **new))
    return [next(outs) if lin else None for lin in linear]


def _sum_outputs_over_axis(closed, which, axis):
    from .lax.parallel import psum_p

    def summed(*xs):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *xs)
        return [psum_p.bind(o, axis_name=(axis.name,)) if s else o for o, s in zip(outs, which, strict=True)]
    with batching.binding_axis(axis):
        return intern_jaxpr(trace_to_jaxpr(summed, closed.in_avals, "transpose", "transpose"))


def _pmap_batch(axis, vals, dims, **params):
    jaxpr, in_axes, out_axes = params["jaxpr"], params["in_axes"], params["out_axes"]
    n_out = len(jaxpr.out_avals)
    if all(d is None for d in dims) and not batching.jaxpr_uses_axis(jaxpr, axis.name):
        return pmap_p.bind(*vals, **params), [None] * n_out
    moved, per_device_dims = [], []
    for x, d, ax in zip(vals, dims, in_axes, strict=True):
        if d is not None and ax == 0:  # the batch axis goes just after the device axis
            x = batching.moveaxis(x, d, 1)
            d = 0
        moved.append(x)
        per_device_dims.append(d)
    with batching.binding_axis(_axis(params)):
        batched, _ = batching.batch_jaxpr(jaxpr, axis, per_device_dims, [0] * n_out)
    program, consts = consts_as_args(batched)
    new = {**params, "jaxpr": program, "in_axes": (None,) * len(consts) + in_axes,
           "donated_invars": None if params.get("donated_invars") is None
           else (False,) * len(consts) + tuple(params["donated_invars"])}
    outs = pmap_p.bind(*consts, *moved, **new)
    return outs, [1 if ax == 0 else 0 for ax in out_axes]


ad.jvp_rules[pmap_p] = _pmap_jvp
ad.transpose_rules[pmap_p] = _pmap_transpose
partial_eval.partial_eval_rules[pmap_p] = _pmap_partial_eval
batching.axis_batching_rules[pmap_p] = _pmap_batch


# ----- the user-facing function --------------------------------------------------------------------

def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None,
         backend=None, axis_size=None, donate_argnums=()):
    """Run `fun` on several devices at once: `pmap(f)(xs)` applies `f` to slice i of `xs` on device
    i (the slices of the mapped axis, one per device), in one compiled replicated program.

    `in_axes`/`out_axes` say which axis of each argument/output is mapped, as in `vmap` (None: the
    whole argument goes to every device; for an output, it is the same on every device and returned
    once). `axis_name` names the device axis for collectives (`lax.psum(x, axis_name)` sums over
    devices). Arguments in `static_broadcasted_argnums` are hashable Python values baked into the
    program (passed positionally). `devices` picks the devices (default: the first k local devices
    for a mapped axis of size k; with several processes, every device of every process).
    `donate_argnums` lets the program reuse those arguments' buffers. Outputs are ShardedArrays,
    which the next pmap call uses in place.

    Example:
        >>> f = pmap(lambda x: x / lax.psum(x, "i"), axis_name="i")
        >>> f(jnp.array([1.0, 3.0]))  # on 2 devices
        Array([0.25, 0.75], dtype=float32)
    """
    if not callable(fun):
        raise TypeError(f"pmap: the function to map must be callable, got {fun!r}.")
    if backend is not None:
        from .api import _check_backend
        _check_backend(backend, None)
    return _PmapFunction(fun, axis_name, in_axes, out_axes, static_broadcasted_argnums, devices, axis_size,
                         donate_argnums)


_MAX_SIGNATURES = 64  # traces (and fast-path entries) kept per pmapped function
_live_pmap_functions = weakref.WeakSet()
# Guards the registry and every pmapped function's caches while they change (calls may come from
# several threads); held around the dict operations only, never while tracing or compiling.
_cache_lock = threading.RLock()


def clear_pmap_caches():
    """Forget every pmapped function's traces and fast-path executables (`core.clear_caches`)."""
    with _cache_lock:
        for f in list(_live_pmap_functions):
            f._cache.clear()
            if f._fast is not None:
                f._fast.clear()


def _bounded_put(cache, key, value):
    """`cache[key] = value`, the oldest entries out beyond `_MAX_SIGNATURES` (under `_cache_lock`)."""
    with _cache_lock:
        cache[key] = value
        while len(cache) > _MAX_SIGNATURES:
            cache.pop(next(iter(cache)))


class _PmapFunction:
    def __init__(self, fun, axis_name, in_axes, out_axes, static_argnums, devices, axis_size, donate_argnums):
        self.fun = fun
        self.fun_name = getattr(fun, "__name__", None) or type(fun).__name__
        from .api import _Name
        self._name_param = _Name(self.fun_name)
        functools.update_wrapper(self, fun, updated=())
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        _axes._check_axes_spec(in_axes, "in_axes", "pmap")
        _axes._check_axes_spec(out_axes, "out_axes", "pmap")
        self.in_axes, self.out_axes = in_axes, out_axes
        self.axis_name = _AnonymousAxis() if axis_name is None else axis_name
        self.static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        self.donate_argnums = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums)
        self.devices = None if devices is None else tuple(devices)
        if self.devices is not None and not self.devices:
            raise ValueError("pmap: devices must be None or a non-empty list of devices.")
        self.axis_size = axis_size
        self._cache = {}
        # the fast path's entries: only for plain signatures (no static arguments)
        self._fast = None if self.static_argnums else {}
        with _cache_lock:
            _live_pmap_functions.add(self)

    def __repr__(self):
        return f"<pmapped function {self.fun_name}>"

    def __call__(self, *args, **kwargs):
        try:
            return self._call(args, kwargs)
        except Exception as e:
            traceback_util.filter_exception(e)
            raise

    def _call(self, args, kwargs):
        # Fast path: eager, a signature seen before, every leaf an array: straight to the executable
        fast = self._fast
        if fast is not None and _trace_state.trace.__class__ is EvalTrace and not batching.bound_axis_names():
            leaves, in_tree = physical_flatten((args, kwargs))
            try:
                entry = fast.get((in_tree, config._trace_key, *map(_fast_signature, leaves)))
            except AttributeError:  # a leaf that is not an array
                entry = None
            if entry is not None:
                exe, params, consts, out_tree = entry
                return tree_unflatten(out_tree, _run(exe, params, (*consts, *leaves)))
        n_args = len(args)
        static = sorted({i if i >= 0 else n_args + i for i in self.static_argnums})
        if self.static_argnums and (not static or static[-1] >= n_args or static[0] < 0):
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={self.static_argnums} but was called with only "
                f"{n_args} positional argument{'s' if n_args != 1 else ''}. All static broadcasted arguments must "
                "be passed positionally.")
        static_vals = []
        for i in static:
            try:
                hash(args[i])
            except TypeError:
                raise ValueError(f"pmap: static argument {i} of {self.fun_name} (type {type(args[i]).__name__}) is "
                                 "not hashable; static arguments must be hashable (pass a tuple, not a list).") from None
            static_vals.append((i, args[i]))
        dyn_args = [a for i, a in enumerate(args) if i not in static]
        in_axes = self.in_axes
        if isinstance(in_axes, tuple):
            if len(in_axes) == n_args and static:
                in_axes = tuple(a for i, a in enumerate(in_axes) if i not in static)
            if len(in_axes) != len(dyn_args):
                raise ValueError(f"pmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                                 f"positional arguments passed to the function, but got len(in_axes)="
                                 f"{len(self.in_axes)}, len(args)={n_args}.")
        # a typed key (one leaf of shape S) is traced as its data, S + (2,): axes are checked and made
        # non-negative on the leaves the user sees (as vmap's, core/batching_api.py)
        leaves, in_tree = physical_flatten((tuple(dyn_args), kwargs))
        axes = _axes._flat_in_axes(in_axes, tuple(dyn_args), kwargs)
        raw = leaves
        leaves = [x if isinstance(x, (Array, Tracer)) else _axes._as_operand(x, self.fun_name) for x in leaves]
        axes = [_axes._normalize_axis(ax, x, i, in_tree, self.fun, "pmap") for i, (ax, x) in
                enumerate(zip(axes, _axes._logical_leaves((tuple(dyn_args), kwargs), leaves)))]
        size = self._mapped_size(leaves, axes, in_tree)
        devices = self._devices_for(size, leaves, axes, in_tree)
        leaves = [x if ax in (0, None) else _moveaxis_to_front(x, ax) for x, ax in zip(leaves, axes)]
        flat_axes = tuple(None if ax is None else 0 for ax in axes)
        per_device = tuple(_per_device_aval(x, ax) for x, ax in zip(leaves, flat_axes))
        # static values are keyed by type and value (1, 1.0 and True trace different programs)
        key = (in_tree, per_device, flat_axes, _static_key(tuple(static_vals)), devices, config.trace_key(),
               batching.axis_env_key())
        entry = self._cache.get(key)
        if entry is None:  # bounded, oldest first out (as jit's cache)
            entry = self._trace(in_tree, per_device, static_vals, n_args, devices)
            _bounded_put(self._cache, key, entry)
        program, consts, out_tree, out_axes = entry
        params = {"name": self._name_param, "jaxpr": program, "axis_name": self.axis_name, "devices": devices,
                  "in_axes": (None,) * len(consts) + flat_axes,
                  "out_axes": tuple(None if ax is None else 0 for ax in out_axes)}
        if self.donate_argnums:
            params["donated_invars"] = self._donated(args, static, len(consts))
        eager = _trace_state.trace.__class__ is EvalTrace and not batching.bound_axis_names() \
            and all(ax in (0, None) for ax in axes)
        # eagerly, host values (NumPy arrays, Python scalars) go to the devices as they are
        outs = pmap_p.bind(*consts, *(raw if eager else leaves), **params)
        if self._fast is not None and eager and all(ax in (0, None) for ax in out_axes):
            self._remember_fast(raw, in_tree, params, consts, out_tree)
        outs = [o if ax in (0, None) else _moveaxis_from_front(o, ax) for o, ax in zip(outs, out_axes)]
        return tree_unflatten(out_tree, outs)

    def _remember_fast(self, leaves, in_tree, params, consts, out_tree):
        try:
            key = (in_tree, config.trace_key(), *map(_fast_signature, leaves))
        except AttributeError:
            return
        _bounded_put(self._fast, key, (_executable_for(params), params, tuple(consts), out_tree))

    def _mapped_size(self, leaves, axes, in_tree):
        try:
            return _axes._mapped_size(leaves, axes, in_tree, self.axis_size, self.fun, "pmap")
        except ValueError as e:
            hint = _unreplicated_hint(leaves, axes, in_tree, self.fun)
            if hint:
                raise ValueError(f"{e}\n{hint}") from None
            raise

    def _devices_for(self, size, leaves, axes, in_tree):
        """The devices the replicas run on, checked against the mapped axis size (F27)."""
        multi = _client.process_count() > 1
        if self.devices is not None:
            devices = self.devices
        elif multi:
            devices = tuple(sorted(_client.devices(), key=lambda d: (d.process_index, d.id)))
        else:
            local = _client.local_devices()
            if size > len(local):
                raise ValueError(
                    f"compiling computation that requires {size} logical devices, but only {len(local)} XLA devices "
                    f"are available (num_replicas={size}): pmap maps its mapped axis (size {size}"
                    f"{_first_mapped(leaves, axes, in_tree, self.fun)}) onto one device each. Reshape the data to a "
                    f"leading axis of at most {len(local)} (e.g. x.reshape({len(local)}, -1, ...)), or start with "
                    f"more devices (PURENN_NUM_CPU_DEVICES={size} on CPU).")
            devices = tuple(local[:size])
        n_local = _n_local(devices)
        if size != n_local:
            where = (f"the {len(devices)} devices given" if self.devices is not None
                     else f"the {n_local} local devices of this process")
            raise ValueError(
                f"pmap of {self.fun_name}: the mapped axis has size {size}{_first_mapped(leaves, axes, in_tree, self.fun)}"
                f", but it must equal the number of devices it runs on ({n_local}: {where}). Give each device one "
                f"slice: reshape to a leading axis of {n_local}.")
        return devices

    def _trace(self, in_tree, per_device, static_vals, n_args, devices):
        static_pos = dict(static_vals)
        store = {}

        def flat_fun(*tracers):
            d_args, d_kwargs = tree_unflatten(in_tree, list(tracers))
            it = iter(d_args)
            full = [static_pos[i] if i in static_pos else next(it) for i in range(n_args)]
            out = self.fun(*full, **d_kwargs)
            out_leaves, store["tree"] = physical_flatten(out)
            return [_axes._as_operand(x, self.fun_name, output=True) for x in out_leaves]

        with batching.binding_axis(batching.AxisData(self.axis_name, len(devices))):
            closed = trace_to_jaxpr(flat_fun, list(per_device), self.fun_name, "pmap")
        program, consts = consts_as_args(closed)
        skeleton = tree_unflatten(store["tree"], [object()] * len(closed.out_avals))
        out_axes = _axes._broadcast_prefix(self.out_axes, skeleton, "out_axes", self.fun_name, "pmap")
        out_axes = [_axes._typed_out_axis(ax, a.ndim - 1 if key else None, i, self.fun_name, "pmap")
                    for i, (ax, a, key) in enumerate(zip(out_axes, closed.out_avals, typed_leaf_mask(store["tree"])))]
        out_axes = [None if ax is None else int(ax) % (a.ndim + 1)
                    for ax, a in zip(out_axes, closed.out_avals)]
        return program, consts, store["tree"], tuple(out_axes)

    def _donated(self, args, static, n_consts):
        mask = [False] * n_consts
        donate = {i if i >= 0 else len(args) + i for i in self.donate_argnums}
        for i, a in enumerate(args):
            if i not in static:
                mask.extend([i in donate] * len(tree_flatten(a)[0]))
        return tuple(mask)


_SCALARS = (int, float, bool, complex)


def _fast_signature(x):
    """What the fast path keys an argument leaf on: its type (aval) for arrays, shape and dtype
    for NumPy values, the type of a Python scalar (a step counter is one); AttributeError for
    anything else, which takes the full path."""
    t = type(x)
    if t is np.ndarray or isinstance(x, np.generic):
        return (x.shape, x.dtype)
    if t in _SCALARS:
        return t
    return x.aval if isinstance(x, Array) else x.no_fast_path


def _per_device_aval(x, ax):
    aval = x.aval if isinstance(x, (Array, Tracer)) else to_array(x).aval
    if ax == 0:
        return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type)
    return aval


def _moveaxis_to_front(x, ax):
    from . import numpy as jnp
    return jnp.moveaxis(x, ax, 0)


def _moveaxis_from_front(x, ax):
    from . import numpy as jnp
    return jnp.moveaxis(x, 0, ax)


def _first_mapped(leaves, axes, in_tree, fun):
    for i, ax in enumerate(axes):
        if ax is not None:
            return f", from axis {ax} of {_axes._leaf_description(i, in_tree, fun)} with shape {tuple(leaves[i].shape)}"
    return ""


def _unreplicated_hint(leaves, axes, in_tree, fun):
    """When mapped sizes disagree and some arguments' leading axis equals the local device count,
    the others are probably a parameter tree that was never replicated: say how to fix it."""
    n = _client.local_device_count()
    mapped = [(i, leaves[i].shape[ax]) for i, ax in enumerate(axes) if ax is not None]
    if not any(s == n for _, s in mapped):
        return None
    odd = [i for i, s in mapped if s != n]
    names = sorted({_axes._leaf_description(i, in_tree, fun).split("[")[0] for i in odd})
    return (f"pmap maps each argument's leading axis over the {n} devices, but {', '.join(names)} "
            f"{'has' if len(names) == 1 else 'have'} other leading sizes. If that is a parameter tree meant to be the "
            "same on every device, replicate it first (core.replicate(params), which adds the device axis), or pass "
            "it with in_axes=None to broadcast it.")


traceback_util.register_boundary(_PmapFunction.__call__)

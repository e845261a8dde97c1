"""User-facing transformations: `jit`, `make_jaxpr`, `eval_shape`, `disable_jit`, `named_call`,
`xla_computation`.

`jit(f)` traces `f` once per signature (input tree, avals with weak types, static arguments,
config) into a jaxpr, and applies it as a single `jit` primitive: eagerly that compiles the whole
program into one executable (cached with the other eager executables); under another trace (an
enclosing jit, later grad/vmap) the same primitive is recorded or transformed like any other.
Python side effects in `f` therefore run only while tracing, once per new signature.

`jit(f, donate_argnums=...)` lets the program reuse donated argument buffers for outputs of the same
shape and dtype (XLA input/output aliasing); a donated Array is deleted by the call (a buffer the
scalar-operand cache holds is never given away: a copy is donated instead). With
`debug_nans`/`debug_infs` set, a jitted call whose result holds a NaN/Inf is re-run op by op
(`nan_rerun_rules`) so the error names the first primitive that produced it. Errors leaving
`jit`, `make_jaxpr` and `eval_shape` have purenn's internal frames removed (`traceback_util`).
"""
import collections
import contextlib
import functools
import inspect
import operator
import os
import threading
import warnings
import weakref

import numpy as np

from . import dispatch, dtypes, key_reuse, traceback_util
from .array import Array, _scalar_cache_keys, asarray_device, copy_array, device_put, is_cached_buffer
from .avals import ShapedArray, ShapeDtypeStruct
from .config import config
from .interpreters import ad, batching, lowering, partial_eval
from .interpreters.staging import trace_to_jaxpr
from .ir import consts_as_args, Var
from .runtime import executable as _executable
from .trace import EvalTrace, Primitive, Tracer, current_trace
from .tokens import Token, abstract_token, is_token
from .trace import _state as _trace_state
from .tree_util import (fast_registry, logical_structure, physical_flatten, physical_flatten_with_path, tree_flatten,
                        tree_unflatten, typed_leaf_mask)

__all__ = ["jit", "make_jaxpr", "eval_shape", "disable_jit", "named_call", "xla_computation"]

RECOMPILE_WARNING_THRESHOLD = 8


# ----- the jit primitive ---------------------------------------------------------------------

jit_p = Primitive("jit", multiple_results=True)


class _Name(str):
    """A function name as a primitive parameter: printed bare (`jit[name=f ...]`), as JAX does."""
    __slots__ = ()

    def __repr__(self):
        return str(self)


def _jit_abstract_eval(*avals, name, jaxpr, donated_invars=None):
    expected = jaxpr.in_avals
    if len(avals) != len(expected) or any(a.shape != e.shape or a.dtype != e.dtype for a, e in zip(avals, expected)):
        raise TypeError(f"jit-compiled {name} was traced for {[e.str_short() for e in expected]} but applied "
                        f"to {[a.str_short() for a in avals]}")
    return jaxpr.out_avals


def _jit_lowering(ctx, *args, name, jaxpr, donated_invars=None):
    return lowering.lower_jaxpr_into(ctx.b, jaxpr.jaxpr, args)


def _jit_nan_rerun(args, params, kind):
    """debug_nans/debug_infs: run the program's equations one by one, eagerly, with the checks on,
    so the error names the first one that produced the invalid value and where it was written."""
    closed = params["jaxpr"]
    eval_jaxpr_checked(closed.jaxpr, list(closed.consts) + list(args), params["name"])


def eval_jaxpr_checked(jaxpr, in_values, fun_name):
    """Evaluate `jaxpr` (constvars then invars bound to `in_values`) equation by equation through
    `bind`; a FloatingPointError from an equation is re-raised with its primitive and source line."""
    env = {}
    for v, x in zip(jaxpr.constvars + jaxpr.invars, in_values, strict=True):
        env[v] = x

    def read(atom):
        if isinstance(atom, Var):
            return env[atom]
        return asarray_device(atom.val, atom.aval.dtype, atom.aval.weak_type)

    for eqn in jaxpr.eqns:
        try:
            outs = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
        except FloatingPointError as e:
            if getattr(e, "_purenn_located", False):
                raise
            where = f" at {eqn.source_info}" if eqn.source_info else ""
            err = FloatingPointError(f"{e}{where}, found by re-running jit({fun_name}) op by op because "
                                     f"debug_nans/debug_infs is set.")
            err._purenn_located = True
            raise err from None
        if not eqn.primitive.multiple_results:
            outs = [outs]
        for v, x in zip(eqn.outvars, outs, strict=True):
            env[v] = x
    return [read(v) for v in jaxpr.outvars]


def _jit_jvp(primals, tangents, *, name, jaxpr, donated_invars=None):
    # the jvp program is one jit call again: grad(jit(f)) stays compiled
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(jaxpr, nonzeros, instantiate=False)
    program, consts = consts_as_args(jvp_closed)
    outs = jit_p.bind(*consts, *primals, *[t for t in tangents if type(t) is not ad.Zero], name=name,
                      jaxpr=program)
    n = len(jaxpr.out_avals)
    tangents_out = iter(outs[n:])
    return outs[:n], [next(tangents_out) if nz else ad.Zero(ad.tangent_aval(a))
                      for nz, a in zip(out_nonzeros, jaxpr.out_avals, strict=True)]


def _jit_partial_eval(trace, args, params):
    return partial_eval.partial_eval_call(trace, jit_p, args, params, donated_invars=None)


def _jit_transpose(cts, *args, name, jaxpr, donated_invars=None):
    linear = [ad.is_undefined(a) for a in args]
    program, consts = consts_as_args(ad.transpose_jaxpr(jaxpr, linear))
    cts = [ad.instantiate_zeros(ct) for ct in cts]
    outs = iter(jit_p.bind(*consts, *[a for a in args if not ad.is_undefined(a)], *cts, name=name, jaxpr=program))
    return [next(outs) if lin else None for lin in linear]


def _jit_batch(axis, vals, dims, *, name, jaxpr, donated_invars=None):
    # vmap(jit(f)) stays one compiled call: the held program is batched and bound as jit again
    n_out = len(jaxpr.out_avals)
    if all(d is None for d in dims) and not batching.jaxpr_uses_axis(jaxpr, axis.name):
        params = {"name": name, "jaxpr": jaxpr}
        if donated_invars is not None:
            params["donated_invars"] = donated_invars
        return jit_p.bind(*vals, **params), [None] * n_out
    batched, out_dims = batching.batch_jaxpr(jaxpr, axis, dims, [None] * n_out)
    program, consts = consts_as_args(batched)
    params = {"name": name, "jaxpr": program}
    if donated_invars is not None:
        params["donated_invars"] = (False,) * len(consts) + tuple(donated_invars)
    return jit_p.bind(*consts, *vals, **params), list(out_dims)


jit_p.def_abstract_eval(_jit_abstract_eval)
lowering.register(jit_p, _jit_lowering)
dispatch.nan_rerun_rules[jit_p] = _jit_nan_rerun
ad.jvp_rules[jit_p] = _jit_jvp
ad.transpose_rules[jit_p] = _jit_transpose
partial_eval.partial_eval_rules[jit_p] = _jit_partial_eval
batching.axis_batching_rules[jit_p] = _jit_batch


_consts_as_args = consts_as_args


# ----- argument handling ------------------------------------------------------------------------

def _arg_aval(x, describe):
    """The abstract value a jitted function sees for argument leaf `x` (F8 for non-array types)."""
    if isinstance(x, (Array, Tracer)):
        return x.aval
    t = type(x)
    if t is Token:
        return abstract_token
    if t in (bool, int, float, complex):
        return ShapedArray((), dtypes.scalar_type_default(t), t is not bool)
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype not in dtypes._SUPPORTED_SET and x.dtype.kind not in "biufc":
            raise TypeError(f"Argument {describe()} of type {type(x)} with dtype {x.dtype} is not a valid "
                            "purenn type: only number and bool arrays can be traced.")
        return ShapedArray(np.shape(x), dtypes.canonicalize_dtype(x.dtype), False)
    raise TypeError(f"Argument {describe()} of type {type(x)} is not a valid purenn type. Pass arrays, "
                    "scalars or pytrees of them; mark other arguments static with static_argnums or "
                    "static_argnames.")


def _check_hashable(value, describe, fun_name):
    try:
        hash(value)
    except TypeError:
        raise ValueError(f"Non-hashable static arguments are not supported, as this can lead to unexpected "
                         f"cache-misses. Static argument {describe} of type {type(value)} for function "
                         f"{fun_name} is non-hashable. Pass a tuple instead of a list, or make the value "
                         "hashable.") from None


def _fun_name(fun):
    return getattr(fun, "__name__", None) or type(fun).__name__


def _describe_signature(avals, names):
    return ", ".join(f"{n}: {a.str_short()}{' (weak)' if a.weak_type else ''}" for n, a in zip(names, avals))


def _static_key(value):
    """A static argument (or a tuple of `(position or name, value)` pairs of them) as part of a cache
    key: its type and its value. Equal values of different types trace different programs
    (`jnp.full((2,), n)` is int32 for 1, float32 for 1.0, bool for True), and so do 0.0 and -0.0,
    so floats are keyed by their bits (which also makes a NaN argument hit its own entry). Tuples,
    named tuples included, are keyed element by element; other values by type and `==`, as JAX."""
    t = type(value)
    if t is float:
        return t, value.hex()
    if t is complex:
        return t, value.real.hex(), value.imag.hex()
    if isinstance(value, tuple):
        return t, tuple(map(_static_key, value))
    if isinstance(value, (np.floating, np.complexfloating)):
        return t, value.tobytes()
    return t, value


# ----- jit ----------------------------------------------------------------------------------------

_live_jit_functions = weakref.WeakSet()
# Guards the registry above and every jitted function's two caches (`_cache`, `_fast`) while they
# change: jitted functions are called from several threads, and an LRU's lookup-then-move or
# insert-then-evict is not atomic. Held only around the dict operations, never while tracing or
# compiling (a traced function may call its own jitted self).
_cache_lock = threading.RLock()
_fast_key_of = operator.attrgetter("_fkey")
_buf_of = operator.attrgetter("_buf")
_new_array = Array.__new__
_MISS = object()   # `_tree_call`'s "not served here"
_CACHED_BUFFER_IDS = _scalar_cache_keys.keys()   # a live view of the ids of the scalar cache's buffers
_count_execution = _executable.count_execution  # empties jaxlib's release queue now and then
_flags = config.__dict__


def _may_remember(values):
    """Whether a signature whose program inputs are `values` may be kept for a fast path: traced
    outside any transformation, key-reuse checking off (every call must reach the check,
    core/key_reuse.py), every input an uncommitted Array."""
    if _trace_state.trace.__class__ is not EvalTrace or batching.axis_env_key() or config.debug_key_reuse:
        return False
    return all(type(v) is Array and v._device is None for v in values)


def _wrap_arrays(bufs, avals):
    """A program's output buffers as uncommitted Arrays (built in C when the extension is there:
    `_jitfast.wrap_arrays`)."""
    return [Array(b, av) for b, av in zip(bufs, avals)]


def _finish_outputs(out_tree, outs, out_avals):
    """The fast path's results (jaxlib arrays) as Arrays, in the function's output structure."""
    return tree_unflatten(out_tree, _wrap_arrays(outs, out_avals))


try:  # jit's fast path in C (core/_jitfast.c), built at install time where there is a compiler
    if os.environ.get("PURENN_PURE_PYTHON_JIT", "") == "1":
        raise ImportError("PURENN_PURE_PYTHON_JIT=1")
    from . import _jitfast
    _jitfast.configure(_trace_state, EvalTrace, _flags, Array, _finish_outputs)
    _wrap_arrays = getattr(_jitfast, "wrap_arrays", _wrap_arrays)   # an extension built before it lacks it
    _JitBase = _jitfast.JitBase
except ImportError:
    _jitfast = None
    _JitBase = object


def clear_jit_caches():
    """Forget every jitted function's traces and fast-path executables (`core.clear_caches`)."""
    with _cache_lock:
        for f in list(_live_jit_functions):
            f._cache.clear()
            if f._fast is not None:
                f._fast.clear()


def _check_backend(backend, device):
    """`jit`'s `backend` argument, validated: None or the name of the running client's platform."""
    if backend is None:
        return None
    if device is not None:
        raise ValueError(f"can't specify both a device and a backend for jit, got device={device} and "
                         f"backend={backend!r}.")
    from .runtime import backend as _runtime_backend, default_backend
    available = sorted({default_backend(), _runtime_backend().platform})
    if not isinstance(backend, str) or backend.lower() not in available:
        raise ValueError(f"Unknown backend {backend!r} for jit; the available backends are {available}.")
    # the client's default device is where uncommitted programs compile and run already, so the
    # fast dispatch path stays on (no committed placement needed)
    return backend.lower()


class _JitFunction(_JitBase):
    """The callable that `jit` returns. It owns its trace cache (bounded, LRU), so a jitted
    closure made in a loop does not grow any global cache without bound."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, device, backend, max_cached):
        self.fun = fun
        self.fun_name = _fun_name(fun)
        self._name_param = _Name(self.fun_name)
        functools.update_wrapper(self, fun, updated=())
        try:
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self.static_argnums = tuple(static_argnums or ())
        self.static_argnames = tuple(static_argnames or ())
        self._infer_static_names()
        self.donate_argnums = (donate_argnums,) if isinstance(donate_argnums, int) else tuple(donate_argnums or ())
        self.device = device
        self.backend = _check_backend(backend, device)
        self._cache = collections.OrderedDict()
        # the fast path's executables; only for plain signatures (no static, donated or placed args)
        self._fast = None if (self.static_argnums or self.static_argnames or self.donate_argnums
                              or device is not None) else {}
        # the pytree fast path's (`_tree_call`): arguments that are pytrees of Arrays, donated or not
        self._tree_fast = None if (self.static_argnums or self.static_argnames or device is not None
                                   or fast_registry is None) else {}
        with _cache_lock:
            _live_jit_functions.add(self)
        self._max_cached = max_cached
        self._last_signature = None
        self._warned = False

    def _infer_static_names(self):
        """Static arguments may be named by position or by name; each implies the other (as in JAX)."""
        if self._signature is None:
            return
        params = list(self._signature.parameters.values())
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        nums, names = set(self.static_argnums), set(self.static_argnames)
        for i in list(nums):
            j = i if i >= 0 else len(positional) + i
            if 0 <= j < len(positional) and positional[j].kind == positional[j].POSITIONAL_OR_KEYWORD:
                names.add(positional[j].name)
        for i, p in enumerate(positional):
            if p.name in names:
                nums.add(i)
        self.static_argnums = tuple(sorted(nums))
        self.static_argnames = tuple(sorted(names))

    # -- tracing --------------------------------------------------------------------------------
    def _split(self, args, kwargs):
        n = len(args)
        static_pos = {i if i >= 0 else n + i for i in self.static_argnums}
        dyn_args, static_args = [], []
        for i, a in enumerate(args):
            if i in static_pos:
                _check_hashable(a, f"(index {i})", self.fun_name)
                static_args.append((i, a))
            else:
                dyn_args.append(a)
        dyn_kwargs, static_kwargs = {}, []
        for k, v in kwargs.items():
            if k in self.static_argnames:
                _check_hashable(v, f"'{k}'", self.fun_name)
                static_kwargs.append((k, v))
            else:
                dyn_kwargs[k] = v
        return dyn_args, dyn_kwargs, tuple(static_args), tuple(sorted(static_kwargs))

    def _arg_names(self, n_args, dyn_kwargs, in_tree):
        """A readable name per flat argument leaf (for errors and recompilation warnings)."""
        names = []
        params = list(self._signature.parameters) if self._signature else []
        static_pos = set(self.static_argnums)
        positional_names = [params[i] if i < len(params) else f"args[{i}]" for i in range(n_args + len(static_pos))
                            if i not in static_pos]
        for i, name in enumerate(positional_names[:n_args]):
            names.append(name)
        names.extend(dyn_kwargs)
        return names

    def _trace(self, dyn_args, dyn_kwargs, static_args, static_kwargs, flat_avals, in_tree, leaf_names):
        static_pos = dict(static_args)
        n_total = len(dyn_args) + len(static_args)
        out_store = {}

        def flat_fun(*tracers):
            d_args, d_kwargs = tree_unflatten(in_tree, list(tracers))
            it = iter(d_args)
            full_args = [static_pos[i] if i in static_pos else next(it) for i in range(n_total)]
            out = self.fun(*full_args, **d_kwargs, **dict(static_kwargs))
            flat_out, out_tree = physical_flatten(out)  # a typed key's data (core/tree_util.py)
            for leaf in flat_out:
                if not isinstance(leaf, (Array, Tracer, Token, np.ndarray, np.generic, bool, int, float, complex)):
                    raise TypeError(f"{self.fun_name} returned a value of type {type(leaf)} inside jit; a "
                                    "jitted function must return arrays, scalars or pytrees of them.")
            out_store["tree"] = out_tree
            return flat_out

        closed = trace_to_jaxpr(flat_fun, flat_avals, self.fun_name, "jit", leaf_names)
        return closed, out_store["tree"]

    def _lookup(self, args, kwargs):
        dyn_args, dyn_kwargs, static_args, static_kwargs = self._split(args, kwargs)
        flat, in_tree = physical_flatten((tuple(dyn_args), dyn_kwargs))
        leaf_names = None

        def describe_leaf(i):
            nonlocal leaf_names
            if leaf_names is None:
                leaf_names = self._leaf_names(dyn_args, dyn_kwargs)
            return repr(leaf_names[i]) if i < len(leaf_names) else f"#{i}"

        avals = tuple(_arg_aval(x, lambda i=i: describe_leaf(i)) for i, x in enumerate(flat))
        # static values are keyed by type and value: f(1), f(1.0), f(True) trace different programs
        key = (in_tree, avals, _static_key(static_args), _static_key(static_kwargs), config.trace_key(),
               batching.axis_env_key())
        with _cache_lock:
            entry = self._cache.get(key)
            if entry is not None:
                self._cache.move_to_end(key)
        if entry is None:
            if leaf_names is None:
                leaf_names = self._leaf_names(dyn_args, dyn_kwargs)
            self._note_new_signature(key, leaf_names, (static_args, static_kwargs))
            closed, out_tree = self._trace(dyn_args, dyn_kwargs, static_args, static_kwargs, list(avals), in_tree,
                                           leaf_names)
            program, consts = _consts_as_args(closed)
            entry = (closed, program, consts, out_tree)
            with _cache_lock:
                self._cache[key] = entry
                while len(self._cache) > self._max_cached:
                    self._cache.popitem(last=False)
        return entry, flat

    def _leaf_names(self, dyn_args, dyn_kwargs):
        """'x', 'params['w']', ... for each flat argument leaf, from the function's parameter names."""
        from .tree_util import keystr
        params = [p for p in (self._signature.parameters if self._signature else [])]
        static_pos = set(self.static_argnums)
        dyn_names = [p for i, p in enumerate(params) if i not in static_pos]
        names = []
        for i, a in enumerate(dyn_args):
            base = dyn_names[i] if i < len(dyn_names) else f"args[{i}]"
            for path, _ in physical_flatten_with_path(a)[0]:
                names.append(base + keystr(path))
        for k, v in dyn_kwargs.items():
            for path, _ in physical_flatten_with_path(v)[0]:
                names.append(k + keystr(path))
        return names

    def _note_new_signature(self, key, leaf_names, statics):
        """Warn once when this function has compiled too many signatures, naming what changed."""
        previous = self._last_signature
        self._last_signature = (key, leaf_names, statics)
        if len(self._cache) < RECOMPILE_WARNING_THRESHOLD or self._warned or previous is None:
            return
        self._warned = True
        old_key, old_names, old_statics = previous
        changes = []
        if old_key[0] != key[0]:
            changes.append(f"the argument structure changed from {old_key[0]} to {key[0]}")
        else:
            for name, a, b in zip(leaf_names, old_key[1], key[1]):
                if a != b:
                    changes.append(f"{name}: {a.str_short()}{' (weak)' if a.weak_type else ''} -> "
                                   f"{b.str_short()}{' (weak)' if b.weak_type else ''}")
        if old_key[2:4] != key[2:4]:
            changes.append(f"static arguments changed from {old_statics} to {statics}")
        if old_key[4] != key[4]:
            changes.append("configuration changed")
        if old_key[5] != key[5]:
            changes.append(f"the enclosing vmap axes changed from {old_key[5]} to {key[5]}")
        code = getattr(self.fun, "__code__", None)
        where = f" ({code.co_filename}:{code.co_firstlineno})" if code else ""
        warnings.warn(
            f"jit-compiled function {self.fun_name}{where} has been traced for more than "
            f"{RECOMPILE_WARNING_THRESHOLD} different signatures; each one compiles anew. The last "
            f"change: {'; '.join(changes) or 'unknown'}. Keep shapes fixed (pad ragged batches), pass "
            "Python numbers as arrays of a fixed dtype, or mark genuinely static values with static_argnums.",
            RuntimeWarning, stacklevel=4)

    # -- calling --------------------------------------------------------------------------------
    # A call is `_jitfast.JitBase`'s C fast path when the extension is built, else `_python_call`
    # (installed as __call__ below the class); both end in `_call_slow` for anything but a
    # remembered signature.
    def _call_slow(self, *args, **kwargs):
        """Every call the fast path does not serve: trace or look up, compile, run."""
        # The `try` is free until an error leaves it, when purenn's frames are cut from its
        # traceback (F12).
        try:
            # the config this call is traced under; taken first so that a config change made by
            # another thread while this one traces cannot label the result as current
            token = _flags["_jit_fast_token"]
            if config.disable_jit:  # this thread's value (disable_jit() is thread-local)
                return self.fun(*args, **kwargs)
            tree_fast = self._tree_fast
            if tree_fast is not None and token is not None and not kwargs \
                    and _trace_state.trace.__class__ is EvalTrace:
                out = self._tree_call(tree_fast, token, args)
                if out is not _MISS:
                    return out
            if config.debug_key_reuse:  # the program is checked when it runs (core/key_reuse.py)
                key_reuse.install_eager_check()
            (closed, program, consts, out_tree), flat = self._lookup(args, kwargs)
            if self._fast is not None and not kwargs and token is not None \
                    and all(type(a) is Array for a in args):
                self._remember_fast(args, program, consts, out_tree, token)
            elif tree_fast is not None and not kwargs and token is not None:
                self._remember_tree(args, flat, program, consts, out_tree, token)
            if self.device is not None:
                consts, flat = device_put(list(consts), self.device), device_put(flat, self.device)
            if self.donate_argnums:
                donated, flat = self._donated_invars(args, consts, flat)
                outs = jit_p.bind(*consts, *flat, name=self._name_param, jaxpr=program, donated_invars=donated)
            else:
                outs = jit_p.bind(*consts, *flat, name=self._name_param, jaxpr=program)
            return tree_unflatten(out_tree, outs)
        except Exception as e:
            traceback_util.filter_exception(e)
            raise

    def _remember_fast(self, args, program, consts, out_tree, token):
        """Keep the executable of this signature for the fast path, when it qualifies, under the
        config `token` it was traced under. Not while key-reuse checking is on: every call must
        reach the check (core/key_reuse.py) then."""
        values = list(consts) + list(args)
        if not _may_remember(values):
            return
        exe, out_avals = dispatch.executable_for(jit_p, tuple(v.aval for v in values),
                                                 {"name": self._name_param, "jaxpr": program})
        if abstract_token in out_avals:  # a token result is made by `dispatch`, not by the executable
            return
        key = tuple(a.aval.type_id for a in args)
        if len(key) == 1:
            key = key[0]  # as __call__ looks one-argument signatures up
        single = out_tree == tree_flatten(0)[1]
        entry = (token, exe.loaded.execute_sharded, exe.handlers, [c._buf for c in consts], out_avals,
                 None if single else out_tree)
        with _cache_lock:
            self._fast[key] = entry
            while len(self._fast) > self._max_cached:
                self._fast.pop(next(iter(self._fast)))

    # The pytree fast path. `_fast` above serves calls whose arguments are Arrays themselves and
    # none is donated; a training step `step(state, batch)` with the state donated is neither, and
    # the general path (flatten in Python, key the trace cache on every leaf's aval, work out the
    # donated leaves, dispatch through `jit_p`) cost it ~100 us a call for a 24-leaf state: a third
    # of the digits MLP's step. Here the arguments are flattened by jaxlib's C++ pytree registry
    # (tree_util.fast_registry) and keyed on (structure, each leaf's `_fkey`); a remembered
    # signature runs its executable directly. Whatever the key does not settle (a donated buffer
    # that a cache holds or that appears twice, a deleted buffer) goes the general way, which
    # handles it and raises its errors.
    def _tree_call(self, tree_fast, token, args):
        leaves, treedef = fast_registry.flatten(args)
        try:
            fkeys = tuple([x._fkey for x in leaves])
            entry = tree_fast.get((treedef, fkeys))
        except (AttributeError, TypeError):  # a leaf that is not an Array; unhashable aux data
            return _MISS
        if entry is None or entry[0] is not token or None in fkeys:  # None: a committed Array
            return _MISS
        _, execute, handlers, const_bufs, out_avals, out_treedef, donated = entry
        bufs = [x._buf for x in leaves]
        if donated:
            ids = list(map(id, bufs))
            # set operations in C first; the exact check only when a buffer's id is in the cache's
            if len(set(ids)) < len(ids) or not _CACHED_BUFFER_IDS.isdisjoint(ids) \
                    and any(is_cached_buffer(bufs[i]) for i in donated):
                return _MISS
        try:
            outs = execute(const_bufs + bufs if const_bufs else bufs).consume_with_handlers(handlers)
        except RuntimeError:  # e.g. a deleted (donated) argument: the general path names it
            return _MISS
        _count_execution()
        return out_treedef.unflatten(_wrap_arrays(outs, out_avals))

    def _remember_tree(self, args, flat, program, consts, out_tree, token):
        """Keep this signature for `_tree_call`, when it qualifies (as `_remember_fast`'s do) and
        the C++ registry flattens the arguments and the outputs exactly as tree_util does."""
        if not _may_remember(list(consts) + list(flat)):
            return
        try:
            leaves, treedef = fast_registry.flatten(args)
            n_out = out_tree.num_leaves
            out_leaves, out_treedef = fast_registry.flatten(tree_unflatten(out_tree, list(range(n_out))))
            key = (treedef, tuple(x._fkey for x in leaves))
            hash(key), hash(out_treedef)
        except Exception:  # noqa: BLE001 -- a structure the C++ registry cannot key: no fast path
            return
        if len(leaves) != len(flat) or any(a is not b for a, b in zip(leaves, flat)) \
                or out_leaves != list(range(n_out)):
            return
        params = {"name": self._name_param, "jaxpr": program}
        donated = ()
        if self.donate_argnums:  # the same params, so the same executable, as `_call_slow`'s bind
            params["donated_invars"] = mask = self._donated_invars(args, consts, flat)[0]
            donated = tuple(i - len(consts) for i, m in enumerate(mask) if m)
        exe, out_avals = dispatch.executable_for(jit_p, tuple(v.aval for v in list(consts) + list(flat)), params)
        if abstract_token in out_avals:  # as in `_remember_fast`
            return
        entry = (token, exe.loaded.execute_sharded, exe.handlers, [c._buf for c in consts], out_avals, out_treedef,
                 donated)
        with _cache_lock:
            self._tree_fast[key] = entry
            while len(self._tree_fast) > self._max_cached:
                self._tree_fast.pop(next(iter(self._tree_fast)))

    def _donated_invars(self, args, consts, flat):
        """A bool per program input (the Array leaves of the arguments in `donate_argnums`), and
        `flat` to pass instead: a donated Array whose buffer a cache holds is replaced by a copy,
        so that the cache's buffer is never deleted (docs/design.md, "Donation and shared
        buffers"). Donating one buffer twice, or as a donated and a kept argument, is an error
        (F29); buffers are compared, not Array objects (`device_put` to an array's own device
        gives a second Array of the same buffer)."""
        n = len(args)
        donate = {i if i >= 0 else n + i for i in self.donate_argnums}
        static = {i if i >= 0 else n + i for i in self.static_argnums}
        mask = [False] * len(consts)
        for i, a in enumerate(args):
            if i not in static:
                mask.extend([i in donate] * len(tree_flatten(a)[0]))
        mask.extend([False] * (len(consts) + len(flat) - len(mask)))
        values = list(consts) + list(flat)
        mask = [m and type(x) is Array for m, x in zip(mask, values, strict=True)]
        values = [copy_array(x) if m and is_cached_buffer(x._buf) else x for m, x in zip(mask, values)]
        donated_bufs = {}
        for m, x in zip(mask, values):
            if m:
                if id(x._buf) in donated_bufs:
                    raise RuntimeError(f"{self.fun_name}: the same Array ({x.aval.str_short()}) is donated twice; "
                                       "a buffer can be donated once per call.")
                donated_bufs[id(x._buf)] = x
        for m, x in zip(mask, values):
            if not m and type(x) is Array and id(x._buf) in donated_bufs:
                raise RuntimeError(f"{self.fun_name}: an Array ({x.aval.str_short()}) is passed both as a donated "
                                   "argument and as another argument (or closed over); the donated buffer would be "
                                   "reused while still read. Pass a copy, or do not donate it.")
        return tuple(mask), values[len(consts):]

    @traceback_util.api_boundary
    def trace(self, *args, **kwargs):
        """The traced program for these arguments (a ClosedJaxpr)."""
        return self._lookup(args, kwargs)[0][0]

    @traceback_util.api_boundary
    def lower(self, *args, **kwargs):
        """Lower for these arguments: `.as_text()` is the StableHLO module, `.compile()` compiles it."""
        (closed, program, consts, out_tree), flat = self._lookup(args, kwargs)
        donated = self._donated_invars(args, consts, flat)[0] if self.donate_argnums else None
        return Lowered(self, closed, program, consts, out_tree, donated)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self):
        return f"<jitted function {self.fun_name}>"


def _python_call(self, *args, **kwargs):
    """jit's fast path in Python, the same steps as the C one (core/_jitfast.c): flat, uncommitted
    Array arguments, called outside any trace, a signature seen before under the current config:
    straight to the executable (no flattening, no primitive dispatch). Used when the extension is
    not built, and by the tests as the reference for the C path."""
    fast = self._fast
    if fast is not None and not kwargs and _trace_state.trace.__class__ is EvalTrace:
        try:  # the key: each argument's `_fkey` (its aval's type id; None when committed)
            # The common arities spelled out: a third of the cost of the general form.
            if len(args) == 2:
                a0, a1 = args
                entry = fast.get((a0._fkey, a1._fkey))
                bufs = [a0._buf, a1._buf]
            elif len(args) == 1:
                a0, = args
                entry = fast.get(a0._fkey)
                bufs = [a0._buf]
            elif len(args) == 3:
                a0, a1, a2 = args
                entry = fast.get((a0._fkey, a1._fkey, a2._fkey))
                bufs = [a0._buf, a1._buf, a2._buf]
            else:
                entry = fast.get(tuple(map(_fast_key_of, args)))
                bufs = list(map(_buf_of, args))
        except AttributeError:  # an argument that is not an Array
            entry = None
        # Remembered under the current config (no change since; debug checks and disable_jit off)
        if entry is not None and entry[0] is _flags["_jit_fast_token"]:
            _, execute, handlers, const_bufs, out_avals, out_tree = entry
            outs = execute(const_bufs + bufs if const_bufs else bufs).consume_with_handlers(handlers)
            _count_execution()
            if out_tree is None:  # a single array output, built as Array.__init__ would (~100 ns less)
                out = _new_array(Array)
                out._buf, out.aval, out._npy, out._device, out._fkey = outs[0], out_avals[0], None, None, \
                    out_avals[0].type_id
                return out
            return _finish_outputs(out_tree, outs, out_avals)
    try:  # this frame is the entry point here: errors must leave it filtered (F12)
        return self._call_slow(*args, **kwargs)
    except Exception as e:
        traceback_util.filter_exception(e)
        raise


if _JitBase is object:
    _JitFunction.__call__ = _python_call


class Lowered:
    """A jitted function lowered for one signature."""

    def __init__(self, jitted, closed, program, consts, out_tree, donated=None):
        self._jitted, self.jaxpr, self._program, self._consts, self._out_tree = jitted, closed, program, consts, out_tree
        self._donated = donated

    def _module(self):
        jaxpr = self._program.jaxpr
        in_avals = [v.aval for v in jaxpr.constvars + jaxpr.invars]
        return dispatch.lower_to_module(f"jit_{self._jitted.fun_name}", in_avals, jaxpr.out_avals,
                                        lambda f: lowering.lower_jaxpr_into(f, jaxpr, f.args), self._donated)

    def as_text(self):
        """The StableHLO module, as text."""
        return self._module()[0]

    def cost_analysis(self):
        """XLA's cost estimates of the program as lowered (before XLA optimizes it), as JAX's
        `Lowered.cost_analysis()`: a dict with 'flops', 'bytes accessed' (all operands and
        results), 'bytes accessed<i>{}' per operand, 'bytes accessedout{}' and more. Nothing is
        compiled. `compile().cost_analysis()` gives the estimates of the optimized program.

        Example:
            >>> lowered = jit(lambda a, b: a @ b).lower(jnp.ones((4, 5)), jnp.ones((5, 6)))
            >>> lowered.cost_analysis()["flops"]  # 2 * 4 * 5 * 6
            240.0
        """
        return _executable.module_cost_analysis(self.as_text())

    def compile(self):
        avals = list(self._program.in_avals) + list(self._program.out_avals)
        if abstract_token in avals:  # tokens never cross a program boundary (core/tokens.py): dispatch runs it
            return _TokenCompiled(self)
        text, callbacks = self._module()
        device = self._jitted.device
        if callbacks:
            exe = _executable.compile_module_with_callbacks(text, self._program.out_avals, device, callbacks)
        else:
            exe = _executable.compile_module(text, self._program.out_avals, device)
        return Compiled(exe, self._consts, self._out_tree, self._program.in_avals, self._donated)


class _TokenCompiled:
    """`Lowered.compile()` of a program with token arguments or results: called through
    `core/dispatch.py`, which makes the tokens inside the program and returns fresh ones."""

    def __init__(self, lowered):
        self._lowered = lowered

    def __call__(self, *args, **kwargs):
        low = self._lowered
        flat, _ = physical_flatten((args, kwargs))
        for x, expected in zip(flat, low._program.in_avals[len(low._consts):], strict=True):
            if _arg_aval(x, lambda: "") != expected and (is_token(x) or expected == abstract_token):
                raise TypeError(f"Compiled function expects {expected.str_short()}, got {_arg_aval(x, str).str_short()}")
        outs = jit_p.bind(*low._consts, *flat, name=low._jitted._name_param, jaxpr=low._program)
        return tree_unflatten(low._out_tree, outs)


class Compiled:
    """An executable for one signature; call it with arguments of that signature."""

    def __init__(self, exe, consts, out_tree, in_avals, donated=None):
        self._exe, self._consts, self._out_tree, self._in_avals = exe, consts, out_tree, in_avals
        self._donated = donated

    def __call__(self, *args, **kwargs):
        from .array import to_array
        flat, _ = physical_flatten((args, kwargs))
        arrays = [to_array(x) for x in list(self._consts) + flat]
        for a, expected in zip(arrays, self._in_avals, strict=True):
            if a.aval.shape != expected.shape or a.aval.dtype != expected.dtype:
                raise TypeError(f"Compiled function expects {expected.str_short()}, got {a.aval.str_short()}")
        if self._donated:  # never a cached buffer (a Python scalar argument is one): donate a copy
            arrays = [copy_array(a) if d and is_cached_buffer(a._buf) else a
                      for a, d in zip(arrays, self._donated, strict=True)]
        outs = self._exe([a._buf for a in arrays])
        return tree_unflatten(self._out_tree, [Array(b, a) for b, a in zip(outs, self._exe.out_avals, strict=True)])

    def memory_stats(self):
        """Same as `memory_analysis()` (purenn's older name)."""
        return self._exe.memory_stats()

    def memory_analysis(self):
        """XLA's memory analysis of the compiled program, as JAX's `Compiled.memory_analysis()`:
        jaxlib's `CompiledMemoryStats`, with the bytes of the arguments (`argument_size_in_bytes`),
        the outputs (`output_size_in_bytes`), the temporaries (`temp_size_in_bytes`), outputs that
        alias donated arguments (`alias_size_in_bytes`), the generated code, and their host-memory
        counterparts.

        Example:
            >>> compiled = jit(lambda a: a * 2.0).lower(jnp.ones((4, 5))).compile()
            >>> compiled.memory_analysis().argument_size_in_bytes  # 20 float32s
            80
        """
        return self._exe.memory_stats()

    def cost_analysis(self):
        """XLA's cost estimates of the compiled (optimized) program, as JAX's
        `Compiled.cost_analysis()`: a dict with 'flops', 'bytes accessed', 'bytes accessed<i>{}'
        per operand, 'bytes accessedout{}', 'utilization<i>{}' and more, as XLA reports them.

        Example:
            >>> compiled = jit(lambda a, b: a @ b).lower(jnp.ones((4, 5)), jnp.ones((5, 6))).compile()
            >>> compiled.cost_analysis()["flops"]  # 2 * 4 * 5 * 6
            240.0
        """
        return self._exe.cost_analysis()

    def as_text(self):
        return self._exe.text


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), device=None, backend=None,
        max_cached_signatures=64):
    """Compile `fun` with XLA: traced once per signature, then run as one executable.

    Use as `jit(f)` or as a decorator (`@jit`, `@partial(jit, static_argnums=1)`). Arguments are
    pytrees of arrays; `static_argnums`/`static_argnames` name arguments whose (hashable) values
    are baked into the program. Side effects in `fun` run only while tracing. `device` commits the
    program and its results to one device; `backend` names a platform ('cpu', or whatever
    `default_backend()` returns) whose default device runs it (not both; an unavailable backend is a
    ValueError). purenn runs one XLA client, so `backend` can only name its platform.

    Example:
        >>> f = jit(lambda x, y: jnp.sin(x) * y)
        >>> f(jnp.ones(3), 2.0)
        Array([1.6829419, 1.6829419, 1.6829419], dtype=float32)
    """
    _check_backend(backend, device)
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, device=device, backend=backend,
                                 max_cached_signatures=max_cached_signatures)
    if not callable(fun):
        raise TypeError(f"jit expects a callable, got {fun!r} of type {type(fun)}")
    return _JitFunction(fun, static_argnums, static_argnames, donate_argnums, device, backend, max_cached_signatures)


def make_jaxpr(fun, static_argnums=(), return_shape=False):
    """A function that returns the jaxpr of `fun` for given example arguments.

    Example:
        >>> print(make_jaxpr(lambda x: jnp.log(x) * 2.0)(1.0))
        { lambda ; a:f32[]. let
            b:f32[] = log a
            c:f32[] = mul b 2.0:f32[]
          in (c,) }
    """
    jitted = _JitFunction(fun, static_argnums, (), (), None, None, 1)

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def make(*args, **kwargs):
        (closed, program, consts, out_tree), _ = jitted._lookup(args, kwargs)
        if return_shape:
            return closed, _shape_structs(out_tree, closed.out_avals)
        return closed
    return make


@traceback_util.api_boundary
def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes `fun(*args, **kwargs)` would return, as ShapeDtypeStructs, without
    running it. Arguments may be arrays or ShapeDtypeStructs.

    Example: `eval_shape(jnp.matmul, ShapeDtypeStruct((2, 3), jnp.float32), jnp.ones((3, 4)))`.
    """
    flat, in_tree = physical_flatten((args, kwargs), is_leaf=lambda x: isinstance(x, ShapeDtypeStruct))
    avals = [ShapedArray(x.shape, x.dtype, x.weak_type) if isinstance(x, ShapeDtypeStruct)
             else _arg_aval(x, lambda i=i: f"#{i}") for i, x in enumerate(flat)]
    out_store = {}

    def flat_fun(*tracers):
        a, k = tree_unflatten(in_tree, list(tracers))
        flat_out, out_store["tree"] = physical_flatten(fun(*a, **k))
        return flat_out

    closed = trace_to_jaxpr(flat_fun, avals, _fun_name(fun), "eval_shape")
    return _shape_structs(out_store["tree"], closed.out_avals)


def _shape_structs(out_tree, out_avals):
    """The outputs of the physical tree `out_tree` as ShapeDtypeStructs; a typed key's is of its key
    shape and dtype (`key<fry>`), as JAX gives, not of its data's."""
    from .prng_keys import KEY_DTYPE
    structs = []
    for a, key in zip(out_avals, typed_leaf_mask(out_tree), strict=True):
        struct = ShapeDtypeStruct(a.shape[:-1] if key else a.shape, a.dtype, a.weak_type)
        if key:
            struct.dtype = KEY_DTYPE  # not a NumPy dtype, so set past the constructor's np.dtype()
        structs.append(struct)
    return tree_unflatten(logical_structure(out_tree), structs)


@contextlib.contextmanager
def disable_jit(disable=True):
    """Within this block, jitted functions run op by op (Python side effects run every call), in
    the current thread only: other threads keep running their jitted functions compiled, as in JAX
    (`config.update("disable_jit", True)` is the global switch).

    Example: `with disable_jit(): f(x)` lets you print values or use a debugger inside `f`.
    """
    with config._override("disable_jit", bool(disable)):
        yield


traceback_util.register_boundary(_JitFunction._call_slow)
traceback_util.register_boundary(_python_call)


def named_call(fun, *, name=None):
    """`fun`, named `name` in staged programs: under `jit` or `make_jaxpr` it is recorded as one
    `jit[name=...]` equation holding its own jaxpr (so it shows up by name in printed programs and
    compiled HLO); called eagerly it simply runs.

    Example:
        >>> layer = named_call(lambda x: jnp.tanh(x) * 2.0, name="layer")
        >>> print(make_jaxpr(layer)(1.0))
        { lambda ; a:f32[]. let
            e:f32[] = jit[name=layer jaxpr={ lambda ; b:f32[]. let
                    c:f32[] = tanh b
                    d:f32[] = mul c 2.0:f32[]
                  in (d,) }] a
          in (e,) }
    """
    if not callable(fun):
        raise TypeError(f"named_call expects a callable, got {fun!r} of type {type(fun)}")
    staged = _JitFunction(fun, (), (), (), None, None, 8)
    if name is not None:
        staged.fun_name = str(name)
        staged._name_param = _Name(name)

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def named(*args, **kwargs):
        if type(current_trace()) is EvalTrace:
            return fun(*args, **kwargs)
        return staged(*args, **kwargs)
    return named


class XlaComputation:
    """The program `xla_computation` built: `as_hlo_text()` and `as_text()` give its StableHLO
    module (the text purenn hands to XLA's compiler)."""

    def __init__(self, lowered):
        self._lowered = lowered
        self.jaxpr = lowered.jaxpr

    def as_hlo_text(self):
        return self._lowered.as_text()

    def as_text(self):
        return self._lowered.as_text()

    def __repr__(self):
        return f"<XlaComputation of {self._lowered._jitted.fun_name}>"


def xla_computation(fun, static_argnums=()):
    """A function that returns the compiled form of `fun` for given example arguments, as an
    object with `.as_hlo_text()` (the StableHLO module) and the traced `.jaxpr`.

    Example:
        >>> print(xla_computation(lambda x: jnp.sin(x) * 2.0)(1.0).as_hlo_text())
        module @jit__lambda_ {
          func.func public @main(%0: tensor<f32>) -> (tensor<f32>) {
            %1 = "stablehlo.sine"(%0) : (tensor<f32>) -> tensor<f32>
        ...
    """
    jitted = _JitFunction(fun, static_argnums, (), (), None, None, 1)

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def build(*args, **kwargs):
        return XlaComputation(jitted.lower(*args, **kwargs))
    return build

"""The staging trace: runs a Python function on tracers and records every primitive application
as an equation of a jaxpr (what `jit` and `make_jaxpr` build on).

Values the function closes over (concrete Arrays, or tracers of an enclosing trace) become
`constvars`; 0-d concrete values become inline `Literal`s. A trace is *alive* while its function
runs; a tracer of a finished trace that reaches a primitive is a leak (`UnexpectedTracerError`).
"""
import gc
import os
import sys
import traceback
import types
import weakref

import numpy as np

from .. import errors
from ..array import Array, to_array
from ..config import config
from ..ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from ..trace import Trace, Tracer, set_current_trace

_CORE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class JaxprTracer(Tracer):
    """A value of a function being staged: its abstract value and the variable that names it."""
    __slots__ = ("_aval", "var", "created_at")

    def __init__(self, trace, aval, var, created_at=None):
        self._trace = trace
        self._aval = aval
        self.var = var
        self.created_at = created_at

    @property
    def aval(self):
        return self._aval

    def _context(self):
        t = self._trace
        where = f" while tracing the function {t.fun_name}" + (f" for {t.purpose}" if t.purpose else "")
        return where

    def __bool__(self):
        raise errors.TracerBoolConversionError(
            f"Attempted boolean conversion of traced array with shape {self.aval.str_short()}.{self._context()}"
            f"{_origin(self)}. The value is not known at trace time. Use lax.cond or jnp.where for a "
            "value-dependent choice, or mark the argument static (static_argnums / static_argnames).")

    def __index__(self):
        raise errors.TracerIntegerConversionError(
            f"The __index__() method was called on traced array with shape {self.aval.str_short()}."
            f"{self._context()}{_origin(self)}. Use lax.dynamic_slice / jnp.take for indexing by a traced "
            "value, or mark the argument static (static_argnums).")

    def __int__(self):
        raise errors.ConcretizationTypeError(
            f"int() was called on traced array with shape {self.aval.str_short()}.{self._context()}{_origin(self)}. "
            "Mark the argument static (static_argnums) if its value must be known at trace time.")

    __float__ = __complex__ = __int__

    def __array__(self, dtype=None, copy=None):
        raise errors.TracerArrayConversionError(
            f"The numpy.ndarray conversion method __array__() was called on traced array with shape "
            f"{self.aval.str_short()}.{self._context()}{_origin(self)}. Use core.numpy (jnp) functions inside "
            "transformed functions instead of numpy functions.")

    def __hash__(self):
        raise TypeError(f"unhashable type: traced array {self.aval.str_short()}")

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{self._trace.purpose or 'staging'}>"


def _origin(tracer):
    if tracer.var is not None and tracer.var in tracer._trace.invar_names:
        return f" (the value of the argument {tracer._trace.invar_names[tracer.var]})"
    if tracer.created_at:
        return f" (created at {tracer.created_at})"
    return ""


def user_frame():
    """'file:line (function)' of the innermost stack frame outside purenn's core."""
    for frame in reversed(traceback.extract_stack()):
        if not frame.filename.startswith(_CORE_DIR):
            return f"{frame.filename}:{frame.lineno} ({frame.name})"
    return None


class StagingTrace(Trace):
    """Records the primitives applied to its tracers into a jaxpr."""

    def __init__(self, fun_name="<fun>", purpose=None):
        self.fun_name = fun_name
        self.purpose = purpose
        self.eqns = []
        self.invars = []
        self.invar_names = {}
        self.constvars = []
        self.consts = []
        self._const_ids = {}
        self.alive = True
        # weak references to this trace's tracers, kept only under checking_leaks (no cost when off)
        self._leak_refs = [] if config.check_tracer_leaks else None

    def new_arg(self, aval, name=None):
        var = Var(aval)
        self.invars.append(var)
        if name is not None:
            self.invar_names[var] = name
        return JaxprTracer(self, aval, var)

    def to_atom(self, x):
        """The IR atom (Var or Literal) that stands for operand `x` in this trace."""
        if isinstance(x, JaxprTracer) and x._trace is self:
            return x.var
        if isinstance(x, Tracer):
            if not getattr(x._trace, "alive", True):
                raise errors.UnexpectedTracerError(
                    f"Encountered an unexpected tracer: an intermediate value with type {x.aval.str_short()} "
                    f"escaped the scope of the transformation that created it (tracing {x._trace.fun_name}"
                    f"{' for ' + x._trace.purpose if x._trace.purpose else ''}){_origin(x)}. Values must "
                    "flow out of a transformed function through its return value, not through globals, "
                    "lists or attributes.")
            return self._const(x)  # a value of an enclosing trace: closed over
        if type(x) is not Array:
            x = to_array(x)
        if x.aval.ndim == 0:
            return Literal(np.asarray(x._value()), x.aval)
        return self._const(x)

    def _const(self, x):
        var = self._const_ids.get(id(x))
        if var is None:
            var = self._const_ids[id(x)] = Var(x.aval)
            self.constvars.append(var)
            self.consts.append(x)
        return var

    def process_primitive(self, prim, args, params):
        if not self.alive:
            raise errors.UnexpectedTracerError(f"the trace of {self.fun_name} has already finished")
        invars = [self.to_atom(a) for a in args]
        out = prim.abstract_eval(*[v.aval for v in invars], **params)
        out_avals = list(out) if prim.multiple_results else [out]
        where = None
        outs = [JaxprTracer(self, a, Var(a)) for a in out_avals]
        if outs:
            where = user_frame()
            for t in outs:
                t.created_at = where
            if self._leak_refs is not None:
                self._leak_refs.extend(weakref.ref(t) for t in outs)
        self.eqns.append(JaxprEqn(prim, invars, [t.var for t in outs], params, where))
        return outs if prim.multiple_results else outs[0]

    def to_jaxpr(self, out_values):
        """The closed jaxpr of the traced function with outputs `out_values` (tracers or constants)."""
        outvars = [self.to_atom(v) for v in out_values]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns)
        return ClosedJaxpr(jaxpr, self.consts)


def trace_to_jaxpr(fun, in_avals, fun_name=None, purpose=None, arg_names=None):
    """Trace `fun(*tracers)` (flat arguments and results) into a ClosedJaxpr.

    Returns `(closed_jaxpr, out_tree_info)` where the second item is whatever `fun` returned
    besides its flat outputs (fun returns a list of output values).
    """
    trace = StagingTrace(fun_name or getattr(fun, "__name__", "<fun>"), purpose)
    names = arg_names or [None] * len(in_avals)
    tracers = [trace.new_arg(a, n) for a, n in zip(in_avals, names, strict=True)]
    refs = trace._leak_refs
    if refs is not None:
        refs.extend(weakref.ref(t) for t in tracers)
    try:
        with set_current_trace(trace):
            outs = fun(*tracers)
        closed = trace.to_jaxpr(outs)
    finally:
        trace.alive = False
    if refs is not None:
        del outs, tracers  # the trace's own references do not count as leaks
        check_leaks(trace, refs)
    return closed


def check_leaks(trace, tracer_refs):
    """Raise `LeakedTracerError` if a tracer of `trace` is still alive after the traced function
    returned. `tracer_refs` are weak references to every tracer the trace created; the caller drops
    its own references (arguments, outputs) first. Shared by every trace kind that checks leaks.
    """
    if all(r() is None for r in tracer_refs):
        return
    gc.collect()  # tracers held only by reference cycles (e.g. finished frames) are not leaks
    alive = [t for t in (r() for r in tracer_refs) if t is not None]
    if not alive:
        return
    lines = []
    for t in alive:
        if isinstance(t, JaxprTracer):
            origin = _origin(t)
            if origin:
                where = origin[2:-1]  # " (created at ...)" without its parentheses
            elif t.var in getattr(trace, "invars", ()):
                where = f"argument {trace.invars.index(t.var)} of the traced function"
            else:
                where = "created at an unknown place"
        else:
            created = getattr(t, "created_at", None)
            where = f"created at {created}" if created else "created at an unknown place"
        held = _referrers(t, alive)
        lines.append(f"  {type(t).__name__} {t.aval.str_short()}, {where}"
                     + (f"; referred to by {', '.join(held)}" if held else ""))
    purpose = getattr(trace, "purpose", None)
    del alive, t
    raise errors.LeakedTracerError(
        f"Leaked trace of {getattr(trace, 'fun_name', '<fun>')}{' (traced for ' + purpose + ')' if purpose else ''}. "
        "Leaked tracer(s):\n" + "\n".join(lines) + "\nA value computed while tracing must leave the function "
        "through its return value; storing it in a global, a list or an attribute leaks it. This check "
        "(checking_leaks / check_tracer_leaks) can report false positives: anything that holds a reference "
        "for a moment after the function returns (a debugger, a saved traceback, another thread) counts.")


def _referrers(tracer, exclude):
    """A few readable descriptions of what still refers to `tracer` (for the leak report). No
    closures here: a cell holding `tracer` would show up as a referrer itself."""
    own = (check_leaks.__code__, _referrers.__code__)
    modules = {id(m.__dict__): m.__name__ for m in list(sys.modules.values()) if hasattr(m, "__dict__")}
    found = []
    for r in gc.get_referrers(tracer):
        if r is exclude or (isinstance(r, types.FrameType) and r.f_code in own):
            continue
        if isinstance(r, types.FrameType):
            found.append(f"a local variable of {r.f_code.co_name}")
        elif isinstance(r, list):
            found.append("a list")
        elif isinstance(r, tuple):
            found.append("a tuple")
        elif isinstance(r, dict):
            key = _key_of(r, tracer)
            found.append(f"the global {key!r} of module {modules[id(r)]}" if id(r) in modules
                         else f"a dict (key {key!r})")
        else:
            key = None if isinstance(r, type) else _key_of(getattr(r, "__dict__", {}), tracer)
            found.append(f"the attribute {key!r} of a {type(r).__name__} object" if key is not None
                         else f"a {type(r).__name__} object")
        if len(found) == 3:
            break
    return found


def _key_of(mapping, value):
    for k, v in mapping.items():
        if v is value:
            return k
    return None

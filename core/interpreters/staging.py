"""The staging trace: runs a Python function on tracers and records every primitive application
as an equation of a jaxpr (what `jit` and `make_jaxpr` build on).

Values the function closes over (concrete Arrays, or tracers of an enclosing trace) become
`constvars`; 0-d concrete values become inline `Literal`s. A trace is *alive* while its function
runs; a tracer of a finished trace that reaches a primitive is a leak (`UnexpectedTracerError`).
"""
import gc
import sys
import types
import weakref

import numpy as np

from .. import errors
from ..array import Array, to_array
from ..config import config
from ..tokens import Token
from ..ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, _Names, _pp_eqn
from ..trace import Trace, Tracer, escaped_tracer_error, set_current_trace
from ..traceback_util import _file_is_internal, user_source_info


class JaxprTracer(Tracer):
    """A value of a function being staged: its abstract value and the variable that names it."""
    __slots__ = ("_aval", "var")

    def __init__(self, trace, aval, var, created_at=None):
        self._trace = trace
        self._aval = aval
        self.var = var
        self.created_at = created_at

    @property
    def aval(self):
        return self._aval

    # Python needs a concrete value: each conversion names itself and says where the value came from.
    def __bool__(self):
        self._check_alive()
        raise errors.TracerBoolConversionError(
            f"Attempted boolean conversion of traced array with shape {self.aval.str_short()}."
            f"{self.concretization_context()}\nUse lax.cond or jnp.where for a value-dependent choice, "
            "or mark the argument static (static_argnums / static_argnames).")

    def __index__(self):
        self._check_alive()
        raise errors.TracerIntegerConversionError(
            f"The __index__() method was called on traced array with shape {self.aval.str_short()}."
            f"{self.concretization_context()}\nUse lax.dynamic_slice / jnp.take for indexing by a traced "
            "value, or mark the argument static (static_argnums).")

    def _scalar_conversion(self, fun):
        self._check_alive()
        raise errors.ConcretizationTypeError(
            f"{fun}() was called on traced array with shape {self.aval.str_short()}."
            f"{self.concretization_context()}\nMark the argument static (static_argnums) if its value must be "
            f"known at trace time; to change the dtype of a traced value use x.astype(...) instead of {fun}().")

    def __int__(self):
        self._scalar_conversion("int")

    def __float__(self):
        self._scalar_conversion("float")

    def __complex__(self):
        self._scalar_conversion("complex")

    def __array__(self, dtype=None, copy=None):
        self._check_alive()
        raise errors.TracerArrayConversionError(
            f"The numpy.ndarray conversion method __array__() was called on traced array with shape "
            f"{self.aval.str_short()}.{self.concretization_context()}\nUse core.numpy (jnp) functions inside "
            "transformed functions instead of numpy functions.")

    def __hash__(self):
        raise TypeError(f"unhashable type: traced array {self.aval.str_short()}")

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{self._trace.purpose or 'staging'}>"

    def _check_alive(self):
        if not self._trace.alive:
            raise escaped_tracer_error(self)

    def concretization_context(self):
        """Sentences for an error about this value's concreteness: the function being traced (and
        its definition's file:line) and what the value depends on (the arguments, or the operations
        on constants that it comes from)."""
        trace = self._trace
        where = _traced_function_source(trace)
        text = (f"\nThe error occurred while tracing the function {trace.fun_name}"
                + (f" for {trace.purpose}" if trace.purpose else "")
                + (f" (defined at {where})" if where else "") + ".")
        args, origins = _progenitors(self)
        if args:
            plural = "s" if len(args) > 1 else ""
            listed = args[0] if len(args) == 1 else ", ".join(args[:-1]) + " and " + args[-1]
            return text + (f" This value is not known while tracing because it depends on the value{plural} "
                           f"of the argument{plural} {listed}.")
        if origins:
            names = _Names()  # one naming for all, so the listed operations' variables stay apart
            lines = [f"  operation {_pp_eqn(eqn, names)}\n    from line {eqn.source_info or 'unknown'}"
                     for eqn in origins[:_MAX_ORIGINS]]
            more = "\n\nAdditional originating lines are not shown." if len(origins) > _MAX_ORIGINS else ""
            return text + (" This value does not depend on the function's arguments, but it was computed by "
                           "traced operations (inside a transformation every operation is staged, even on "
                           "constants). It comes from these operations:\n\n" + "\n\n".join(lines) + more)
        return text


_MAX_ORIGINS = 5


def _argument_description(trace, var, position):
    name = trace.invar_names.get(var)
    return name if name is not None else f"#{position} (flattened)"


def _progenitors(tracer):
    """What a value of a staging trace depends on: `(argument names, originating equations)`.

    Walks the trace's equations backwards from the value. Arguments of enclosing staging traces
    that reach it through closed-over tracers count too ("y of g"). The originating equations are
    those of the value's history whose inputs are only constants and literals, in program order.
    """
    trace, active = tracer._trace, {tracer.var}
    computed = set(trace.invars)
    for eqn in trace.eqns:
        computed.update(eqn.outvars)
    origins = []
    for eqn in reversed(trace.eqns):
        if not any(v in active for v in eqn.outvars):
            continue
        active.difference_update(eqn.outvars)
        ins = [v for v in eqn.invars if isinstance(v, Var)]
        active.update(ins)
        if not any(v in computed for v in ins):
            origins.append(eqn)
    origins.reverse()
    args = [_argument_description(trace, v, i) for i, v in enumerate(trace.invars) if v in active]
    for var, const in zip(trace.constvars, trace.consts):
        if var in active and isinstance(const, JaxprTracer) and const._trace.alive and const._trace is not trace:
            outer_args, outer_origins = _progenitors(const)
            args += [f"{a} of {const._trace.fun_name}" for a in outer_args]
            origins += [e for e in outer_origins if e not in origins]
    return args, origins


def _traced_function_source(trace):
    """'file:line' where the user's function that `trace` is tracing was defined, found on the
    stack (the outermost frame outside core/ above `trace_to_jaxpr`'s frame for `trace`)."""
    frame, candidate = sys._getframe(1), None
    while frame is not None:
        if frame.f_code is trace_to_jaxpr.__code__:
            if frame.f_locals.get("trace") is trace:
                break
        elif not _file_is_internal(frame.f_code.co_filename):
            candidate = frame.f_code
        frame = frame.f_back
    if frame is None or candidate is None:
        return None
    return f"{candidate.co_filename}:{candidate.co_firstlineno}"


def _origin(tracer):
    if tracer.var is not None and tracer.var in tracer._trace.invar_names:
        return f" (the value of the argument {tracer._trace.invar_names[tracer.var]})"
    if tracer.created_at:
        return f" (created at {tracer.created_at})"
    return ""


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
                raise escaped_tracer_error(x)
            return self._const(x)  # a value of an enclosing trace: closed over
        if type(x) is Token:  # a closed-over token: an argument of the program, as an array would be
            return self._const(x)
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
            raise errors.UnexpectedTracerError(
                f"The trace of {self.fun_name}{' for ' + self.purpose if self.purpose else ''} has already "
                "finished, but an operation was applied under it: a function that captured this trace's values "
                "ran after the transformation returned. Values must leave a transformed function through its "
                "return value.")
        invars = [self.to_atom(a) for a in args]
        out = prim.abstract_eval(*[v.aval for v in invars], **params)
        out_avals = list(out) if prim.multiple_results else [out]
        where = user_source_info()
        outs = [JaxprTracer(self, a, Var(a), where) for a in out_avals]
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

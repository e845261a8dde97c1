"""Primitives and context-based dispatch.

Every operation is a `Primitive` applied with `bind`. `bind` hands the application to the
*current trace*, a context rather than a numbered level (Autodidax 2): the eval trace runs it
eagerly on the device; the staging, jvp and batching traces added by later issues record or
transform it. A transformation sets the current trace for the extent of the function it traces.
"""
import contextlib
import os
import threading

try:  # Primitive.bind's eager fast path in C (core/_jitfast.c); without it, dispatch.apply_primitive's
    if os.environ.get("PURENN_PURE_PYTHON_JIT", "") == "1":  # lookup in Python is the same path
        raise ImportError("PURENN_PURE_PYTHON_JIT=1")
    from ._jitfast import PrimitiveBase as _PrimitiveBase
except ImportError:
    _PrimitiveBase = object

__all__ = ["Primitive", "Trace", "EvalTrace", "Tracer", "current_trace", "set_current_trace",
           "escaped_tracer_error"]


class Primitive(_PrimitiveBase):
    """A named operation. Rules live in the interpreters' tables, keyed by the primitive object;
    the shape and dtype rule lives on the primitive itself (`abstract_eval`).

    `_eager_fast` holds the executables of this primitive's eager applications, by argument types
    and params (filled and read by core/dispatch.py). `bind` is `_bind_slow` below when the C
    extension is not built; with it, `bind` is the C base's, which runs a remembered executable
    for qualifying eager calls and calls `_bind_slow` for everything else."""
    multiple_results = False

    def __init__(self, name, multiple_results=False):
        self.name = name
        self.multiple_results = multiple_results
        self.abstract_eval = None
        self._eager_fast = {}

    def _bind_slow(self, *args, **params):
        trace = _state.trace
        if trace.__class__ is EvalTrace:  # the eager hot path skips one call
            return _apply_primitive(self, args, params)
        return trace.process_primitive(self, args, params)

    if _PrimitiveBase is object:
        bind = _bind_slow

    def def_abstract_eval(self, rule):
        self.abstract_eval = rule
        return rule

    def __repr__(self):
        return self.name


class Trace:
    """An interpreter: decides what applying a primitive to its values means.

    Transformation traces also carry `fun_name` (the function they transform), `purpose` (the
    transformation, as users call it: "jit", "vmap", "grad", ...) and `alive` (False once the
    function has returned), which errors about their values report.
    """

    def process_primitive(self, prim, args, params):
        raise NotImplementedError


class EvalTrace(Trace):
    """Eager evaluation: a primitive applied to concrete arrays compiles once and runs."""

    def process_primitive(self, prim, args, params):
        return _apply_primitive(prim, args, params)

    def __repr__(self):
        return "EvalTrace"


class Tracer:
    """A value being traced: it belongs to a trace and has an abstract value (`aval`).

    Tracers get the same NumPy-style methods and operators as `core.Array` (installed by
    `core.numpy`), so user code cannot tell them apart while it is transformed.
    """
    # created_at: the user's source line of the operation that made the value (a
    # traceback_util.SourceInfo, or None for arguments), for errors about a value used too late
    __slots__ = ("_trace", "created_at", "__weakref__")
    __array_priority__ = 100

    @property
    def aval(self):
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def concretization_context(self):
        """Sentences for errors about this value's concreteness: the transformation and what the
        value depends on (each tracer kind says what it knows)."""
        return ""

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]


class _TraceState(threading.local):
    def __init__(self):
        self.trace = EvalTrace()


_state = _TraceState()


def current_trace():
    return _state.trace


@contextlib.contextmanager
def set_current_trace(trace):
    """Make `trace` current for the duration of the block."""
    previous = _state.trace
    _state.trace = trace
    try:
        yield trace
    finally:
        _state.trace = previous


def _describe_trace(trace):
    purpose = getattr(trace, "purpose", None)
    name = getattr(trace, "fun_name", None) or "<fun>"
    return f"tracing {name} for {purpose}" if purpose else f"tracing {name}"


def escaped_tracer_error(tracer):
    """The `UnexpectedTracerError` for `tracer` used where its trace no longer applies: after the
    transformation that made it returned (it leaked through a global, a list or an attribute), or
    outside that transformation. Says where the value was made and by which transformation."""
    from . import errors
    trace = tracer._trace
    try:
        kind = tracer.aval.str_short()
    except Exception:  # the description must not fail while reporting another failure
        kind = "?"
    created = getattr(tracer, "created_at", None)
    arg_name = getattr(trace, "invar_names", {}).get(getattr(tracer, "var", None))
    if created is not None:
        origin = f" It was created at {created}."
    elif arg_name is not None:
        origin = f" It is the argument {arg_name} of {getattr(trace, 'fun_name', '<fun>')}."
    else:
        origin = ""
    if getattr(trace, "alive", True):
        what = (f"is used outside the transformation that is tracing it ({_describe_trace(trace)}, still "
                "running), where a concrete array is needed")
    else:
        what = (f"escaped the scope of the transformation that created it ({_describe_trace(trace)}): it leaked, "
                "and is used after that transformation finished")
    return errors.UnexpectedTracerError(
        f"Encountered an unexpected tracer: an intermediate value with type {kind} {what}.{origin} Values must "
        "leave a transformed function through its return value; storing them in a global, a list or an "
        "attribute leaks them. To find the leak where it happens, run the transformation under "
        "core.checking_leaks().")


def _apply_primitive(prim, args, params):
    from .dispatch import apply_primitive  # dispatch imports the Array type, which imports this module
    global _apply_primitive
    _apply_primitive = apply_primitive
    return apply_primitive(prim, args, params)

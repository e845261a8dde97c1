"""Primitives and context-based dispatch.

Every operation is a `Primitive` applied with `bind`. `bind` hands the application to the
*current trace*, a context rather than a numbered level (Autodidax 2): the eval trace runs it
eagerly on the device; the staging, jvp and batching traces added by later issues record or
transform it. A transformation sets the current trace for the extent of the function it traces.
"""
import contextlib
import threading

__all__ = ["Primitive", "Trace", "EvalTrace", "Tracer", "current_trace", "set_current_trace"]


class Primitive:
    """A named operation. Rules live in the interpreters' tables, keyed by the primitive object;
    the shape and dtype rule lives on the primitive itself (`abstract_eval`)."""
    multiple_results = False

    def __init__(self, name, multiple_results=False):
        self.name = name
        self.multiple_results = multiple_results
        self.abstract_eval = None

    def bind(self, *args, **params):
        trace = _state.trace
        if trace.__class__ is EvalTrace:  # the eager hot path skips one call
            return _apply_primitive(self, args, params)
        return trace.process_primitive(self, args, params)

    def def_abstract_eval(self, rule):
        self.abstract_eval = rule
        return rule

    def __repr__(self):
        return self.name


class Trace:
    """An interpreter: decides what applying a primitive to its values means."""

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
    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 100

    @property
    def aval(self):
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

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


def _apply_primitive(prim, args, params):
    from .dispatch import apply_primitive  # dispatch imports the Array type, which imports this module
    global _apply_primitive
    _apply_primitive = apply_primitive
    return apply_primitive(prim, args, params)

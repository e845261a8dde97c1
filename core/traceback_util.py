"""Tracebacks without purenn's internal frames (docs/reliability.md F12), and the user's source
line of an operation.

An error raised inside a public function of purenn (a `core.numpy` or `core.lax` function, a
transformation such as `jit`, `vmap` or `grad`, a control-flow primitive such as `lax.scan`)
passes through many frames of `core/` between the user's call and the place that failed, and
around the user's own function when purenn calls it back (a scan body, a vmapped function). When
the error leaves the outermost public entry point, its traceback is cut down to the frames outside
`core/`; the full one stays attached as the `__cause__` of the error, an `UnfilteredStackTrace`,
so Python prints it first ("The above exception was the direct cause of ...").

The error's type and message are unchanged. `PURENN_TRACEBACK_FILTERING=off` keeps tracebacks
whole (read when an error happens, so it can be set at any time).

Contract for entry points: every public function of `core`'s namespaces is one (the package
`__init__` modules call `boundaries_for_namespace` on their names), and a function that a
transformation returns (`grad(f)`, `vmap(f)`) is decorated with `api_boundary`. On a hot path
where one more Python call layer costs too much, an entry point catches `Exception` in its own
frame and calls `filter_exception(e)` before a bare `raise` (register it with `register_boundary`).
Only the outermost entry point on the stack filters.
"""
import functools
import os
import sys
import types

__all__ = ["UnfilteredStackTrace", "api_boundary", "filter_exception", "register_boundary",
           "filtering_enabled", "boundaries_for_namespace", "boundaries_for_methods", "unwrap_boundary",
           "SourceInfo",
           "user_source_info"]

_CORE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_boundary_codes = set()
_boundary_of = {}   # public function -> its entry-point wrapper (one per function, however often exported)


class UnfilteredStackTrace(Exception):
    """The complete traceback of the error that this one caused, with purenn's internal frames.

    purenn removes its own frames from tracebacks of errors that leave its API (the error above
    shows only your code). Set PURENN_TRACEBACK_FILTERING=off to see whole tracebacks directly.
    """


def filtering_enabled():
    return os.environ.get("PURENN_TRACEBACK_FILTERING", "on").strip().lower() not in ("off", "0", "false", "no")


def _is_internal(frame):
    return _file_is_internal(frame.f_code.co_filename)


_internal_files = {}  # co_filename -> whether it lies in core/ (one entry per source file)


def _file_is_internal(filename):
    internal = _internal_files.get(filename)
    if internal is None:
        internal = _internal_files[filename] = filename.startswith(_CORE_DIR)
    return internal


# ----- the user's source line ------------------------------------------------------------------------

class SourceInfo:
    """Where an operation was applied: the innermost frame outside `core/` at that moment.

    Keeps the code object and the line number only (no frame, so nothing else stays alive), and
    prints as 'file:line (function)'.
    """
    __slots__ = ("code", "lineno")

    def __init__(self, code, lineno):
        self.code = code
        self.lineno = lineno

    @property
    def filename(self):
        return self.code.co_filename

    @property
    def function(self):
        return self.code.co_name

    def __str__(self):
        return f"{self.code.co_filename}:{self.lineno} ({self.code.co_name})"

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, SourceInfo) and (self.code, self.lineno) == (other.code, other.lineno)

    def __hash__(self):
        return hash((self.code, self.lineno))


def user_source_info():
    """The `SourceInfo` of the innermost stack frame outside purenn's core (None if there is none).

    Called once per recorded operation while tracing, so it walks frames directly (about a
    microsecond) instead of building a traceback.
    """
    frame = sys._getframe(1)
    internal = _internal_files
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        inside = internal.get(filename)
        if inside is None:
            inside = _file_is_internal(filename)
        if not inside:
            return SourceInfo(code, frame.f_lineno)
        frame = frame.f_back
    return None


def _filtered(tb):
    """A new traceback chain holding only the entries of `tb` outside core/."""
    kept = []
    while tb is not None:
        if not _is_internal(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    new = None
    for entry in reversed(kept):
        new = types.TracebackType(new, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return new


def _under_another_boundary(frame):
    """Whether an enclosing frame (outside the one that caught the error) is an API entry point:
    then only that outermost one filters, so the chained traceback is complete."""
    frame = frame.f_back
    while frame is not None:
        if frame.f_code in _boundary_codes:
            return True
        frame = frame.f_back
    return False


def filter_exception(e):
    """Cut `e.__traceback__` down to user frames and chain the full one as `__cause__`.

    Call it in an `except` block of a registered entry point, then re-raise with a bare `raise`.
    Does nothing when filtering is off, for an exception already filtered, or when an enclosing
    entry point will do it.
    """
    if getattr(e, "_purenn_filtered", False) or not filtering_enabled():
        return
    if _under_another_boundary(sys._getframe(1)):
        return
    tb = e.__traceback__
    unfiltered = UnfilteredStackTrace(
        "The full traceback, with purenn's internal frames, of the error below "
        "(set PURENN_TRACEBACK_FILTERING=off to see it in place).")
    unfiltered = unfiltered.with_traceback(tb)
    unfiltered.__cause__ = e.__cause__
    unfiltered.__context__ = e.__context__
    unfiltered.__suppress_context__ = e.__suppress_context__
    e.__cause__ = unfiltered
    e.__suppress_context__ = True
    e._purenn_filtered = True
    e.__traceback__ = _filtered(tb)


def register_boundary(fun):
    """Mark `fun` (a function that calls `filter_exception` itself) as an API entry point."""
    _boundary_codes.add(getattr(fun, "__func__", fun).__code__)
    return fun


def api_boundary(fun):
    """Decorator for a public entry point: errors leaving it show only the user's frames.

    Example:
        >>> @api_boundary
        ... def public(x):
        ...     return x + 1
        >>> public(1)
        2
    """
    @functools.wraps(fun)
    def entry_point(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise

    entry_point._purenn_boundary = True
    return entry_point


_boundary_codes.add(api_boundary(lambda: None).__code__)  # every wrapper shares entry_point's code


def unwrap_boundary(fun):
    """The function an `api_boundary` wrapper calls (`fun` itself if it is not one): for code
    inside `core` that looks a public function up by name and calls it on a hot path."""
    return fun.__wrapped__ if getattr(fun, "_purenn_boundary", False) else fun


def boundaries_for_namespace(namespace, module_name=None):
    """Make every public function of `namespace` (a package's `globals()`) an API entry point.

    Functions defined in `core` and named without a leading underscore are replaced by their
    `api_boundary` wrapper; classes, constants, modules and functions from elsewhere stay as they
    are. The wrapper is named after its place in `module_name` (the package), so that pickle finds
    it there. Code inside `core` that imported a function from its defining submodule keeps the
    plain one; code that looks it up on the package when it runs calls the wrapper (about 80 ns
    per nested call, and only the outermost entry point on the stack filters).
    """
    module_name = module_name or namespace.get("__name__")
    for name, value in list(namespace.items()):
        if name.startswith("_") or type(value) is not types.FunctionType:
            continue
        if getattr(value, "_purenn_boundary", False) or value.__code__ in _boundary_codes:
            continue
        module = value.__module__ or ""
        if module != "core" and not module.startswith("core."):
            continue
        wrapper = _boundary_of.get(value)
        if wrapper is None:  # one wrapper per function, however many namespaces export it
            wrapper = _boundary_of[value] = api_boundary(value)
            if module_name and value.__qualname__ == name:
                wrapper.__module__ = module_name
        namespace[name] = wrapper


def boundaries_for_methods(cls):
    """Make the public methods of `cls` (a helper class users call into, such as the one behind
    `x.at[i]`) API entry points."""
    for name, value in list(vars(cls).items()):
        if name.startswith("_") or type(value) is not types.FunctionType:
            continue
        if not getattr(value, "_purenn_boundary", False):
            setattr(cls, name, api_boundary(value))
    return cls

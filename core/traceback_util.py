"""Tracebacks without purenn's internal frames (docs/reliability.md F12).

An error raised while a function is traced or run by `jit`, `make_jaxpr` or `eval_shape` passes
through a dozen frames of `core/` between the user's call and the user's code that failed. When
it leaves the outermost API entry point, its traceback is cut down to the frames outside `core/`;
the full one stays attached as the `__cause__` of the error, an `UnfilteredStackTrace`, so
Python prints it first ("The above exception was the direct cause of ...").

The error's type and message are unchanged. `PURENN_TRACEBACK_FILTERING=off` keeps tracebacks
whole (read when an error happens, so it can be set at any time).

Contract for entry points: decorate them with `api_boundary`, or, on a hot path where one more
Python call layer costs too much, catch `Exception` in the entry point's own frame and call
`filter_exception(e)` before a bare `raise` (register the function with `register_boundary`).
"""
import functools
import os
import sys
import types

__all__ = ["UnfilteredStackTrace", "api_boundary", "filter_exception", "register_boundary",
           "filtering_enabled"]

_CORE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_boundary_codes = set()


class UnfilteredStackTrace(Exception):
    """The complete traceback of the error that this one caused, with purenn's internal frames.

    purenn removes its own frames from tracebacks of errors that leave its API (the error above
    shows only your code). Set PURENN_TRACEBACK_FILTERING=off to see whole tracebacks directly.
    """


def filtering_enabled():
    return os.environ.get("PURENN_TRACEBACK_FILTERING", "on").strip().lower() not in ("off", "0", "false", "no")


def _is_internal(frame):
    return frame.f_code.co_filename.startswith(_CORE_DIR)


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
    """Decorator for a public entry point: errors leaving it show only the user's frames."""

    @functools.wraps(fun)
    def entry_point(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_exception(e)
            raise

    _boundary_codes.add(entry_point.__code__)
    return entry_point

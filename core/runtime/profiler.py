"""jaxlib's profiler, for `core.profiler`: sessions, trace annotations and the device heap profile.

A `ProfilerSession` collects, while it runs, XLA's own events (compiler passes, executable runs,
the CPU thunks of each program and, on GPU, kernels), the Python functions called (jaxlib's Python
tracer) and every open `TraceMe`; `stop_and_export(log_dir)` writes them under
`log_dir/plugins/profile/<timestamp>/` as `<host>.xplane.pb` (TensorBoard's profile plugin) and
`<host>.trace.json.gz` (Chrome trace-event JSON, which Perfetto opens).
"""
from jaxlib import _profiler

from .client import backend

ProfileOptions = _profiler.ProfileOptions
TraceMe = _profiler.TraceMe


def start_session(options):
    """A running `ProfilerSession`. The backend is created first, so that its devices' tracers
    are registered when the session starts."""
    backend()
    return _profiler.ProfilerSession(options)


def heap_profile():
    """The live device buffers and executables of the client, as a pprof protocol buffer (bytes)."""
    return backend().client.heap_profile()

"""`core.profiler`: traces a user can open in TensorBoard or Perfetto, as `jax.profiler`.

`start_trace(log_dir)` ... `stop_trace()` (or `with trace(log_dir):`) records what runs in between:
XLA's compiles (each pass, named after the program: `jit_<function>`), every program run and its
operations, Python function calls, and the `TraceAnnotation`s the program opens. `stop_trace`
writes, under `log_dir/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/`:

* `<host>.xplane.pb`: the profile for TensorBoard (`tensorboard --logdir log_dir`, with the
  `tensorboard-plugin-profile` package; the Profile tab), and
* `<host>.trace.json.gz`: the same events as Chrome trace-event JSON, which https://ui.perfetto.dev
  or chrome://tracing open directly;
* with `create_perfetto_trace=True` also `perfetto_trace.json.gz` (the JSON without its metadata
  field, which Perfetto rejects), as JAX writes it.

Only one trace runs at a time (a second `start_trace` is a RuntimeError), as in JAX.
`device_memory_profile()` is a snapshot of the live device buffers in pprof format.

Example:
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as log_dir:
    ...     with core.profiler.trace(log_dir):
    ...         with core.profiler.TraceAnnotation("my_step"):
    ...             y = core.jit(lambda x: x * 2.0)(jnp.ones(3)).block_until_ready()
    ...     len(core.profiler.trace_files(log_dir)) > 0
    True
"""
import contextlib
import functools
import gzip
import json
import os
import threading

from .runtime import profiler as _runtime

__all__ = ["start_trace", "stop_trace", "trace", "TraceAnnotation", "StepTraceAnnotation", "annotate_function",
           "device_memory_profile", "save_device_memory_profile", "ProfileOptions", "trace_files"]

ProfileOptions = _runtime.ProfileOptions


class _State:
    """The running trace (at most one per process) and where it will be written."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.session = None
        self.log_dir = None
        self.perfetto_trace = False
        self.perfetto_link = False


_state = _State()


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
    """Start recording a profile that `stop_trace()` writes under `log_dir` (see the module's
    docstring for the files). `create_perfetto_trace=True` also writes `perfetto_trace.json.gz`;
    `create_perfetto_link=True` writes it too and prints where it is (JAX instead serves it to
    ui.perfetto.dev and waits for the browser; here you open the file in the page yourself).
    `profiler_options`: a `ProfileOptions` (e.g. `host_tracer_level`, `python_tracer_level`).

    Example: `core.profiler.start_trace("/tmp/prof"); step(); core.profiler.stop_trace()`.
    """
    if not isinstance(log_dir, (str, os.PathLike)):
        raise TypeError(f"start_trace: log_dir must be a directory path (str or os.PathLike), got "
                        f"{type(log_dir).__name__}.")
    if profiler_options is not None and not isinstance(profiler_options, ProfileOptions):
        raise TypeError(f"start_trace: profiler_options must be a core.profiler.ProfileOptions, got "
                        f"{type(profiler_options).__name__}.")
    with _state.lock:
        if _state.session is not None:
            raise RuntimeError(f"start_trace: a profile is already being recorded (into {_state.log_dir}); only "
                               "one may run at a time. Call core.profiler.stop_trace() first.")
        _state.session = _runtime.start_session(profiler_options or ProfileOptions())
        _state.log_dir = os.fspath(log_dir)
        _state.perfetto_trace = bool(create_perfetto_trace or create_perfetto_link)
        _state.perfetto_link = bool(create_perfetto_link)


def stop_trace():
    """Stop the trace `start_trace` began and write it under its `log_dir`.

    Raises RuntimeError when no trace is running. Example: see `start_trace`.
    """
    with _state.lock:
        session, log_dir = _state.session, _state.log_dir
        if session is None:
            raise RuntimeError("stop_trace: no profile is being recorded; call core.profiler.start_trace(log_dir) "
                               "first.")
        perfetto_trace, perfetto_link = _state.perfetto_trace, _state.perfetto_link
        _state.reset()
        os.makedirs(log_dir, exist_ok=True)
        session.stop_and_export(log_dir)
    if perfetto_trace:
        path = _write_perfetto_trace(log_dir)
        if perfetto_link:
            print(f"Perfetto trace written to {path}: open https://ui.perfetto.dev and choose 'Open trace file'.")


def trace_files(log_dir):
    """The files of the most recent trace written under `log_dir`, as full paths (sorted); [] if none.

    Example: `core.profiler.trace_files("/tmp/prof")` lists `.../vm.trace.json.gz` and `.../vm.xplane.pb`.
    """
    root = os.path.join(os.fspath(log_dir), "plugins", "profile")
    if not os.path.isdir(root):
        return []
    runs = [os.path.join(root, d) for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))]
    if not runs:
        return []
    latest = max(runs, key=os.path.getmtime)
    return sorted(os.path.join(latest, f) for f in os.listdir(latest))


def _write_perfetto_trace(log_dir):
    """Write `perfetto_trace.json.gz` next to the latest `.trace.json.gz`: the same events without
    the top-level `metadata` field, which Perfetto's JSON importer rejects."""
    traces = [f for f in trace_files(log_dir)
              if f.endswith(".trace.json.gz") and os.path.basename(f) != "perfetto_trace.json.gz"]
    if len(traces) != 1:
        raise RuntimeError(f"stop_trace: expected one .trace.json.gz under {log_dir}, found {traces}")
    with gzip.open(traces[0], "rb") as f:
        events = json.load(f)
    events.pop("metadata", None)
    path = os.path.join(os.path.dirname(traces[0]), "perfetto_trace.json.gz")
    with gzip.open(path, "wb") as f:
        f.write(json.dumps(events).encode("utf-8"))
    return path


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False, profiler_options=None):
    """Record a profile of the block into `log_dir` (`start_trace` on entry, `stop_trace` on exit,
    also when the block raises).

    Example: see the module's docstring.
    """
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation(_runtime.TraceMe):
    """A context manager that marks its block as an event named `name` on the trace's timeline
    (keyword arguments become the event's arguments). It costs next to nothing when no trace runs.

    Example:
        >>> with core.profiler.TraceAnnotation("load_batch", size=32):
        ...     batch = jnp.ones((32, 4))
    """


class StepTraceAnnotation(TraceAnnotation):
    """A `TraceAnnotation` that marks one training step (TensorBoard's step-time analysis groups
    events by these); pass the step number as `step_num`.

    Example:
        >>> for step in range(2):
        ...     with core.profiler.StepTraceAnnotation("train", step_num=step):
        ...         pass
    """

    def __init__(self, name, **kwargs):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    """Decorate `func` so each call is a `TraceAnnotation` named `name` (default: its qualified
    name); extra keyword arguments become the event's arguments (use with functools.partial).

    Example:
        >>> @core.profiler.annotate_function
        ... def preprocess(x):
        ...     return x / 255.0
        >>> preprocess(jnp.ones(2))
        Array([0.00392157, 0.00392157], dtype=float32)
    """
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


def device_memory_profile(backend=None):
    """A snapshot of the device memory in use (live buffers and executables), as a gzipped `pprof`
    protocol buffer (bytes), as `jax.profiler.device_memory_profile`; view it with
    `pprof --web file.prof`. `backend` must be None or the platform in use (one client here).

    Example: `open("mem.prof", "wb").write(core.profiler.device_memory_profile())`.
    """
    if backend is not None:
        from .runtime.client import default_backend
        if backend != default_backend():
            raise ValueError(f"device_memory_profile: backend {backend!r} is not available; purenn runs one "
                             f"backend, {default_backend()!r}.")
    return gzip.compress(_runtime.heap_profile())


def save_device_memory_profile(filename, backend=None):
    """Write `device_memory_profile(backend)` to `filename`.

    Example: `core.profiler.save_device_memory_profile("mem.prof")`.
    """
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)

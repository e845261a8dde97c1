"""core.profiler: traces written to disk that name what ran, annotations, the device memory profile.

Oracle: the written files themselves (Chrome trace-event JSON, read back with gzip + json): the
events of a traced jitted call carry its module name `jit_<function>`, and annotations appear as
events with their names and arguments.
"""
import gzip
import json
import os

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import profiler


def _events(log_dir):
    """The trace events of the latest trace under log_dir (from `<host>.trace.json.gz`)."""
    files = profiler.trace_files(log_dir)
    (path,) = [f for f in files if f.endswith(".trace.json.gz") and not os.path.basename(f).startswith("perfetto")]
    assert os.path.getsize(path) > 0
    with gzip.open(path, "rb") as f:
        return json.load(f)["traceEvents"]


def _named(events, name):
    return [e for e in events if e.get("name") == name]


def test_trace_of_a_jitted_call_names_the_program(tmp_path):
    def my_dense_layer(w, x):
        return jnp.tanh(x @ w)

    f = core.jit(my_dense_layer)
    w, x = jnp.ones((16, 8)), jnp.ones((4, 16))
    f(w, x).block_until_ready()  # compiled before the trace: only the run is recorded
    with profiler.trace(tmp_path):
        f(w, x).block_until_ready()
    files = profiler.trace_files(tmp_path)
    assert any(p.endswith(".xplane.pb") and os.path.getsize(p) > 0 for p in files)  # TensorBoard's file
    runs = [e for e in _events(tmp_path) if e.get("args", {}).get("hlo_module") == "jit_my_dense_layer"]
    assert runs, "no event of the program's run names its module"


def test_annotations_are_events_with_their_arguments(tmp_path):
    @profiler.annotate_function
    def preprocess(x):
        return x * 2.0

    with profiler.trace(tmp_path):
        for step in range(2):
            with profiler.StepTraceAnnotation("train_step", step_num=step):
                with profiler.TraceAnnotation("load", batch=8):
                    preprocess(jnp.ones(3))
    events = _events(tmp_path)
    steps = _named(events, "train_step")
    assert sorted(e["args"]["step_num"] for e in steps) == ["0", "1"]
    assert [e["args"]["batch"] for e in _named(events, "load")] == ["8", "8"]
    assert len([e for e in events if e.get("name", "").endswith("preprocess")]) >= 2


def test_annotate_function_keeps_the_function_and_takes_a_name():
    from functools import partial

    @partial(profiler.annotate_function, name="scale")
    def double(x):
        """Doubles."""
        return x * 2

    assert double.__name__ == "double" and double.__doc__ == "Doubles."
    assert double(3) == 6


def test_one_trace_at_a_time_and_stop_needs_a_start(tmp_path):
    with pytest.raises(RuntimeError, match="no profile is being recorded"):
        profiler.stop_trace()
    profiler.start_trace(tmp_path / "a")
    try:
        with pytest.raises(RuntimeError, match="already being recorded"):
            profiler.start_trace(tmp_path / "b")
    finally:
        profiler.stop_trace()
    assert profiler.trace_files(tmp_path / "a")
    assert profiler.trace_files(tmp_path / "b") == []
    with pytest.raises(TypeError, match="log_dir must be a directory path"):
        profiler.start_trace(3)


def test_trace_is_written_when_the_block_raises(tmp_path):
    with pytest.raises(ValueError, match="boom"):
        with profiler.trace(tmp_path):
            with profiler.TraceAnnotation("before_the_error"):
                jnp.ones(2).block_until_ready()
            raise ValueError("boom")
    assert _named(_events(tmp_path), "before_the_error")
    profiler.start_trace(tmp_path / "again")  # the failed block left no trace running
    profiler.stop_trace()


def test_perfetto_trace_has_the_events_and_no_metadata(tmp_path):
    with profiler.trace(tmp_path, create_perfetto_trace=True):
        with profiler.TraceAnnotation("marker"):
            pass
    (path,) = [f for f in profiler.trace_files(tmp_path) if os.path.basename(f) == "perfetto_trace.json.gz"]
    with gzip.open(path, "rb") as f:
        data = json.load(f)
    assert "metadata" not in data
    assert _named(data["traceEvents"], "marker")


def test_device_memory_profile_is_a_gzipped_pprof(tmp_path):
    keep = jnp.arange(1000.0)  # a live buffer
    profile = profiler.device_memory_profile()
    assert profile[:2] == b"\x1f\x8b"  # gzip
    raw = gzip.decompress(profile)
    assert len(raw) > 0
    path = tmp_path / "mem.prof"
    profiler.save_device_memory_profile(str(path))
    assert gzip.decompress(path.read_bytes())[:1] == raw[:1]
    with pytest.raises(ValueError, match="not available"):
        profiler.device_memory_profile(backend="tpu")
    del keep


def test_jax_style_program(tmp_path):
    """Written with jax names, only the imports rewritten."""
    import core as jax
    import core.numpy as jnp  # noqa: F811

    @jax.jit
    def train_step(w, x):
        return w - 0.1 * jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)

    w, x = jnp.ones((4, 3)), jnp.ones((2, 4))
    jax.profiler.start_trace(str(tmp_path))
    for step in range(2):
        with jax.profiler.StepTraceAnnotation("train", step_num=step):
            w = train_step(w, x)
    w.block_until_ready()
    jax.profiler.stop_trace()
    events = _events(tmp_path)
    assert len(_named(events, "train")) == 2
    assert any(e.get("args", {}).get("hlo_module") == "jit_train_step" for e in events)
    assert np.all(np.isfinite(np.asarray(w)))

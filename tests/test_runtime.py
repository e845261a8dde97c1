"""Every runtime entry point: devices, transfers, executable caches, multiple CPU devices."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import core
import core.numpy as jnp
from core.runtime import executable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_python(code, **env):
    full_env = dict(os.environ, PYTHONPATH=ROOT, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env, capture_output=True,
                          text=True, timeout=120)


def test_devices_and_backend():
    devs = core.devices()
    assert len(devs) == core.device_count() == core.local_device_count() >= 1
    assert core.local_devices() == devs
    assert core.default_backend() == "cpu"
    assert core.process_index() == 0 and core.process_count() == 1


def test_device_put_and_get_round_trip_a_pytree():
    tree = {"a": np.arange(3, dtype=np.float32), "b": (np.ones((2, 2), np.int32), 2.5)}
    on_device = core.device_put(tree)
    assert isinstance(on_device["a"], core.Array) and isinstance(on_device["b"][1], core.Array)
    back = core.device_get(on_device)
    assert isinstance(back["a"], np.ndarray)
    np.testing.assert_array_equal(back["a"], tree["a"])
    np.testing.assert_array_equal(back["b"][0], tree["b"][0])
    assert back["b"][1] == 2.5


def test_device_put_commits_to_the_named_device():
    dev = core.devices()[0]
    x = core.device_put(np.ones(3, np.float32), dev)
    assert x.committed and x.devices() == {dev}
    assert not jnp.ones(3).committed


def test_host_array_mutation_does_not_reach_the_device_array():
    host = np.arange(4, dtype=np.float32)
    arr = jnp.asarray(host)
    host[0] = 100.0
    np.testing.assert_array_equal(np.asarray(arr), [0, 1, 2, 3])


def test_block_until_ready_returns_its_argument():
    tree = [jnp.ones(2), (jnp.zeros(3),)]
    assert core.block_until_ready(tree) is tree
    x = jnp.ones(2)
    assert x.block_until_ready() is x


def test_eager_cache_counts_one_compile_per_signature():
    core.clear_caches()
    x = jnp.asarray(np.arange(5, dtype=np.float32))
    for _ in range(3):
        x * x
    info = core.cache_info()["eager"]
    assert info["misses"] == 1 and info["hits"] == 2 and info["size"] == 1
    x.astype(jnp.int32) * x.astype(jnp.int32)  # a new dtype is a new signature
    assert core.cache_info()["eager"]["size"] > 1
    core.clear_caches()
    assert core.cache_info()["eager"] == {"hits": 0, "misses": 0, "size": 0, "maxsize": 4096,
                                          "fast_hits": 0, "fast_size": 0}  # the fast path's share (dispatch.py)


def test_executable_cache_is_bounded_lru():
    cache = executable.ExecutableCache(maxsize=2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert len(cache) == 2


def test_compiled_executable_reports_memory_stats():
    from core.avals import ShapedArray
    aval = ShapedArray((4,), np.float32)
    text = """module @m {
  func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32>) {
    %0 = "stablehlo.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%0) : (tensor<4xf32>) -> ()
  }
}"""
    exe = core.runtime.compile_module(text, [aval])
    (out,) = exe([jnp.arange(4.0)._buf]) if hasattr(jnp, "arange") else exe([jnp.ones(4)._buf])
    assert exe.memory_stats().output_size_in_bytes == 16
    assert np.asarray(core.Array(out, aval)).shape == (4,)


def test_jax_import_fails_fast_when_jax_is_absent():
    if any(type(f).__name__ == "_JaxAbsentFinder" for f in sys.meta_path) is False:
        pytest.skip("jax is installed in this environment; the fast failure is only set up when it is absent")
    assert "jax" not in sys.modules
    with pytest.raises(ModuleNotFoundError, match="No module named 'jax'"):
        import jax  # noqa: F401
    np.asarray(jnp.ones(3) * 2)  # a host read, the path on which jaxlib tries the import


def test_scipy_still_works_in_the_same_process():
    # scipy's array-API helpers inspect sys.modules["jax"]; purenn must not leave a stub there
    scipy_special = pytest.importorskip("scipy.special")
    assert scipy_special.logsumexp(np.array([0.0, 0.0])) == pytest.approx(np.log(2.0))


def test_several_cpu_devices_from_the_environment():
    result = run_python("""
        import numpy as np, core, core.numpy as jnp
        devs = core.devices()
        assert core.device_count() == 3, devs
        x = core.device_put(np.arange(3, dtype=np.float32), devs[2])
        y = x + x
        assert y.devices() == {devs[2]}, y.devices()
        z = y * jnp.ones(3)  # an uncommitted operand follows the committed one
        assert z.devices() == {devs[2]}, z.devices()
        other = core.device_put(np.ones(3, np.float32), devs[1])
        try:
            x + other
        except ValueError as e:
            assert "incompatible devices" in str(e), e
        else:
            raise AssertionError("no error for operands committed to different devices")
        print("ok", np.asarray(y).tolist())
    """, PURENN_NUM_CPU_DEVICES="3")
    assert result.returncode == 0, result.stderr[-2000:]
    assert "ok [0.0, 2.0, 4.0]" in result.stdout


def test_bad_device_count_environment_is_a_clear_error():
    result = run_python("import core; core.devices()", PURENN_NUM_CPU_DEVICES="zero")
    assert result.returncode != 0
    assert "PURENN_NUM_CPU_DEVICES must be a positive integer, got 'zero'" in result.stderr


def test_executions_leave_nothing_behind():
    # jaxlib queues the Python references it releases on its own threads until collect_garbage()
    # runs; core empties the queue on every run of Python's GC, as jax does. Without that, each
    # execution kept ~72 bytes (measured), so this loop would keep ~1.4 MB.
    import gc
    import tracemalloc

    f = core.jit(lambda v: v * 2.0 + 1.0)
    x = jnp.ones(8)
    for _ in range(200):
        f(x), jnp.sin(x)  # the jit fast path and an eager primitive
    gc.collect()
    tracemalloc.start(1)
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(10_000):
            f(x), jnp.sin(x)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    growth = sum(d.size_diff for d in after.compare_to(before, "filename"))
    assert growth < 8 * 20_000, growth  # under 8 bytes per execution

"""The persistent compilation cache (core/runtime/compilation_cache.py): entries written and read
back across processes, corrupt entries and unusable directories reported and survived, atomic
writes, the compile-time threshold, and config validation."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import core
import core.numpy as jnp
from core.runtime import compilation_cache

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def cache_dir(tmp_path):
    """The cache on, in a fresh directory, with every program written; the in-memory caches and
    the counters cleared before and after so that each compile is visible."""
    directory = tmp_path / "xla-cache"
    core.clear_caches()
    core.config.update("compilation_cache_dir", str(directory))
    core.config.update("persistent_cache_min_compile_time_secs", 0.0)
    try:
        yield directory
    finally:
        core.config.update("compilation_cache_dir", None)
        core.config.update("persistent_cache_min_compile_time_secs", 0.0)
        core.clear_caches()


def _stats():
    return core.cache_info()["persistent"]


def _entries(directory):
    return sorted(p for p in os.listdir(directory) if p.endswith(".xla"))


def _poly(x):
    return jnp.tanh(x) * 3.0 + x * x


def test_entries_are_written_then_loaded_instead_of_compiled(cache_dir):
    x = np.linspace(-2, 2, 7).astype(np.float32)
    expected = np.tanh(x.astype(np.float64)) * 3.0 + x.astype(np.float64) ** 2
    f = core.jit(_poly)
    np.testing.assert_allclose(np.asarray(f(x)), expected, rtol=1e-6)
    first = _stats()
    assert first["hits"] == 0 and first["misses"] >= 1 and first["writes"] == first["misses"]
    assert len(_entries(cache_dir)) == first["writes"]
    core.clear_caches()  # forget every in-memory executable: the next call must come from disk
    np.testing.assert_allclose(np.asarray(f(x)), expected, rtol=1e-6)
    second = _stats()
    assert second["misses"] == 0 and second["hits"] >= 1 and second["writes"] == 0
    # a different program gets its own entry
    core.jit(lambda x: _poly(x) + 1.0)(x)
    assert len(_entries(cache_dir)) > first["writes"]


def test_a_second_process_loads_what_the_first_wrote(tmp_path):
    script = (
        "import json, numpy as np, core, core.numpy as jnp\n"
        "f = core.jit(lambda x: jnp.sin(x) @ x.T)\n"
        "y = np.asarray(f(jnp.arange(12.0).reshape(3, 4)))\n"
        "print(json.dumps({'y': y.tolist(), 'stats': core.cache_info()['persistent']}))\n")
    env = {**os.environ, "PYTHONPATH": REPO, "PURENN_COMPILATION_CACHE_DIR": str(tmp_path / "c"),
           "PURENN_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0"}
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-3000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    x = np.arange(12.0).reshape(3, 4)
    for r in runs:
        np.testing.assert_allclose(r["y"], np.sin(x) @ x.T, rtol=1e-5)
    assert runs[0]["stats"]["hits"] == 0 and runs[0]["stats"]["writes"] >= 1
    assert runs[1]["stats"]["misses"] == 0 and runs[1]["stats"]["hits"] == runs[0]["stats"]["writes"]


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_a_corrupt_entry_is_reported_removed_and_rewritten(cache_dir, damage):
    f = core.jit(lambda x: x * 2.0 + 1.0)
    x = np.arange(5, dtype=np.float32)
    f(x)
    names = _entries(cache_dir)
    for name in names:
        path = cache_dir / name
        data = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "flip":
            path.write_bytes(data[:-10] + bytes(b ^ 0xFF for b in data[-10:]))
        else:
            path.write_bytes(b"not an executable at all")
    core.clear_caches()
    with pytest.warns(RuntimeWarning, match="could not be loaded") as caught:
        np.testing.assert_allclose(np.asarray(f(x)), x * 2.0 + 1.0)
    assert any(str(cache_dir) in str(w.message) for w in caught)  # names the file
    stats = _stats()
    assert stats["errors"] >= 1 and stats["hits"] == 0 and stats["writes"] >= 1
    core.clear_caches()  # the rewritten entries are whole again
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(np.asarray(f(x)), x * 2.0 + 1.0)
    assert _stats()["hits"] >= 1 and _stats()["errors"] == 0


def test_an_unusable_directory_is_reported_and_compiling_goes_on(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    core.clear_caches()
    core.config.update("compilation_cache_dir", str(blocker / "cache"))
    try:
        with pytest.warns(RuntimeWarning, match="cannot be created"):
            out = core.jit(lambda x: x - 3.0)(np.ones(4, np.float32))
        np.testing.assert_allclose(np.asarray(out), -2.0)
        assert _stats()["writes"] == 0
    finally:
        core.config.update("compilation_cache_dir", None)
        core.clear_caches()


def test_a_failed_write_leaves_no_entry_and_no_temporary(cache_dir, monkeypatch):
    def failing_replace(src, dst):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(compilation_cache.os, "replace", failing_replace)
    with pytest.warns(RuntimeWarning, match="could not write"):
        out = core.jit(lambda x: x * 5.0)(np.ones(3, np.float32))
    np.testing.assert_allclose(np.asarray(out), 5.0)
    assert os.listdir(cache_dir) == []  # neither an entry nor a leftover temporary file
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reported once; the directory is off for this process
        core.jit(lambda x: x * 6.0)(np.ones(3, np.float32))
    assert os.listdir(cache_dir) == []


def test_an_entry_from_another_cpu_is_not_loaded(cache_dir, monkeypatch):
    f = core.jit(lambda x: x * 3.0 - 1.0)
    x = np.ones(3, np.float32)
    f(x)
    core.clear_caches()
    # The same directory seen from a machine with other instruction-set flags: the entries are
    # keyed on the host CPU, so nothing is loaded and the programs compile (and are written) anew.
    monkeypatch.setitem(compilation_cache._host, "cpu", "another-cpu")
    np.testing.assert_allclose(np.asarray(f(x)), 2.0)
    assert _stats()["hits"] == 0 and _stats()["writes"] >= 1


def _dir_size(directory):
    return sum(os.path.getsize(directory / n) for n in _entries(directory))


def test_the_directory_stays_within_its_size_limit_least_recently_used_out_first(cache_dir):
    # Distinct programs: each bakes its own literal in.
    fs = [core.jit(lambda x, k=k: x * float(k) + float(k) / 2) for k in range(12)]
    x = np.ones(4, np.float32)
    np.testing.assert_allclose(np.asarray(fs[0](x)), 0.0)
    entry = max(os.path.getsize(cache_dir / n) for n in _entries(cache_dir))
    limit = 5 * entry
    core.config.update("compilation_cache_max_size", limit)
    try:
        for k in range(1, 6):
            np.testing.assert_allclose(np.asarray(fs[k](x)), 1.5 * k)
            assert _dir_size(cache_dir) <= limit
        # fs[0] and fs[1] are gone; fs[2]'s entry is now the oldest. Age every entry explicitly (file
        # systems differ in timestamp resolution), then use fs[2]'s entry again: a hit marks it as
        # recently used, so the next evictions take the others first.
        now = os.stat(cache_dir).st_mtime
        for i, name in enumerate(_entries(cache_dir)):
            os.utime(cache_dir / name, (now - 1000 + i, now - 1000 + i))
        core.clear_caches()
        np.testing.assert_allclose(np.asarray(fs[2](x)), 3.0)
        assert _stats()["hits"] == 1
        kept = [n for n in _entries(cache_dir) if os.stat(cache_dir / n).st_mtime > now - 500]
        assert len(kept) == 1
        before = set(_entries(cache_dir))
        for k in (6, 7):  # the second of these overflows the limit: two entries go
            np.testing.assert_allclose(np.asarray(fs[k](x)), 1.5 * k)
            assert _dir_size(cache_dir) <= limit
        assert _stats()["evictions"] == 2
        evicted = before - set(_entries(cache_dir))
        assert len(evicted) == 2 and kept[0] not in evicted  # the recently used entry stayed
        for k in range(8, 12):
            np.testing.assert_allclose(np.asarray(fs[k](x)), 1.5 * k)
            assert _dir_size(cache_dir) <= limit
    finally:
        core.config.update("compilation_cache_max_size", 1 << 30)


def test_programs_below_the_compile_time_threshold_are_not_written(cache_dir):
    core.config.update("persistent_cache_min_compile_time_secs", 3600.0)
    core.jit(lambda x: x / 7.0)(np.ones(3, np.float32))
    assert _stats()["misses"] >= 1 and _stats()["writes"] == 0
    assert _entries(cache_dir) == []


def test_each_write_gives_the_freed_heap_back_and_works_without_malloc_trim(cache_dir, monkeypatch):
    """Serializing an executable leaves megabytes of freed C heap that glibc keeps; every entry
    written is followed by one `malloc_trim(0)`, and where there is none (not glibc) compiling
    and caching go on as before."""
    calls = []
    monkeypatch.setitem(compilation_cache._host, "trim", lambda pad: calls.append(pad) or 1)
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(core.jit(_poly)(x)), np.tanh(x) * 3.0 + x * x, rtol=1e-6)
    assert _stats()["writes"] >= 1 and calls == [0] * _stats()["writes"]
    monkeypatch.setitem(compilation_cache._host, "trim", None)
    y = core.jit(lambda v: v * 5.0)(x)
    np.testing.assert_array_equal(np.asarray(y), x * 5.0)
    assert len(calls) == _stats()["writes"] - 1     # the second program was written, untrimmed
    # the real lookup finds glibc's function here (the test machines run Linux with glibc)
    monkeypatch.delitem(compilation_cache._host, "trim")
    if sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION"):
        assert compilation_cache._malloc_trim() is not None


def test_entries_are_private_to_the_user(cache_dir):
    core.jit(lambda x: x + 0.5)(np.ones(2, np.float32))
    assert _entries(cache_dir)
    assert (os.stat(cache_dir).st_mode & 0o077) == 0
    for name in _entries(cache_dir):
        assert (os.stat(cache_dir / name).st_mode & 0o077) == 0


def test_pmap_programs_are_cached_too(cache_dir):
    n = core.local_device_count()
    f = core.pmap(lambda v: v * 2.0, axis_name="i")
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    np.testing.assert_allclose(np.asarray(f(x)), x * 2.0)
    writes = _stats()["writes"]
    assert writes >= 1
    core.clear_caches()
    np.testing.assert_allclose(np.asarray(f(x)), x * 2.0)
    assert _stats()["hits"] >= 1 and _stats()["misses"] == 0


@pytest.mark.parametrize("name,value,error", [
    ("compilation_cache_dir", 3, TypeError),
    ("persistent_cache_min_compile_time_secs", -1.0, ValueError),
    ("persistent_cache_min_compile_time_secs", "1", ValueError),
    ("compilation_cache_max_size", -2, ValueError),
    ("compilation_cache_max_size", 1.5, ValueError),
])
def test_config_values_are_checked(name, value, error):
    with pytest.raises(error, match=name):
        core.config.update(name, value)

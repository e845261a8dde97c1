"""Thread safety (issue 17 items 2, 4 and 13).

- The XLA client starts once, under a lock, however many threads need it first (it used to be
  built once per racing thread, after which every execution failed with "Buffer passed to
  Execute() ... is on device cpu:0, but replica is assigned to device cpu:0").
- Lazily built globals (the executable caches, jitted functions' trace caches, the aval type ids)
  stay consistent under concurrent use.
- `disable_jit()` and `checking_leaks()` apply to the calling thread only, as in JAX;
  `config.update` stays global.
"""
import collections
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import avals, errors
from core.avals import ShapedArray
from core.runtime.executable import ExecutableCache

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run_threads(target, n, *args):
    """Run `target(i, *args)` in `n` threads started together; re-raise the first error."""
    errors_seen = []

    def run(i):
        try:
            target(i, *args)
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors_seen.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    if errors_seen:
        raise errors_seen[0]


# ----- start-up from a fresh process ----------------------------------------------------------------

_FRESH_PROCESS = r"""
import json, sys, threading
import numpy as np
import core, core.numpy as jnp
from core.runtime import client

made = []
original = client._make_client
def counting_make_client():
    made.append(1)
    return original()
client._make_client = counting_make_client
assert client._state["backend"] is None, "importing core must not start the backend"

f = core.jit(lambda x, y: jnp.sin(x) * y + 1.0)
start = threading.Barrier(4)
results, failures = {}, []

def work(i):
    try:
        start.wait()
        first = jnp.ones(8) * 2.0  # every thread's first call needs the backend at once
        x = jnp.asarray(np.arange(8, dtype=np.float32) + i)
        y = jnp.asarray(np.full(8, 0.5, np.float32))
        out = None
        for _ in range(1000):
            out = f(x, y)
        results[i] = (np.asarray(first).tolist(), np.asarray(out).tolist())
    except Exception as e:
        failures.append(repr(e))

threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads: t.start()
for t in threads: t.join()
after = np.asarray(jnp.ones(8) * 2.0).tolist()  # the process still works afterwards
print(json.dumps({"clients": len(made), "failures": failures[:3], "results": {str(k): v for k, v in results.items()},
                  "after": after}))
"""


def test_jit_from_four_threads_in_a_fresh_process_starts_the_backend_once():
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "PURENN_NUM_CPU_DEVICES": "1"}
    proc = subprocess.run([sys.executable, "-c", _FRESH_PROCESS], env=env, capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["failures"] == []
    assert report["clients"] == 1
    assert report["after"] == [2.0] * 8
    assert sorted(report["results"]) == ["0", "1", "2", "3"]
    for i, (first, out) in report["results"].items():
        x = np.arange(8, dtype=np.float32) + int(i)
        assert first == [2.0] * 8
        np.testing.assert_allclose(out, np.sin(x.astype(np.float64)) * 0.5 + 1.0, rtol=1e-6, atol=1e-6)


# ----- caches under concurrent use ------------------------------------------------------------------

class _SlowGetOrderedDict(collections.OrderedDict):
    """An OrderedDict whose `get` lets other threads run just after the lookup: the window in which
    an unlocked LRU (lookup, then `move_to_end`) loses its entry to another thread's eviction."""

    def get(self, key, default=None):
        value = super().get(key, default)
        time.sleep(0.0002)
        return value


class _SlowLenDict(dict):
    """A dict whose `len` lets other threads run: the window between counting and storing in which
    two threads would hand out the same "next" id."""

    def __len__(self):
        n = super().__len__()
        time.sleep(0.0002)
        return n


def test_aval_type_ids_stay_unique_when_new_types_appear_in_several_threads(monkeypatch):
    # jit's fast path keys on these ids: two types sharing one would run the wrong executable
    original = avals._type_ids
    slow = _SlowLenDict(original)
    monkeypatch.setattr(avals, "_type_ids", slow)
    base = 1_000_003 + os.getpid() % 1000  # shapes no other test has used
    seen = [dict() for _ in range(4)]

    def make(i):
        for k in range(10):
            shape = (base, i, k)  # each thread its own new types, all at once
            seen[i][shape] = ShapedArray(shape, np.float32).type_id

    try:
        _run_threads(make, 4)
    finally:
        original.update(slow)  # keep the ids handed out meanwhile
    ids = {}
    for per_thread in seen:
        for shape, type_id in per_thread.items():
            assert ids.setdefault(shape, type_id) == type_id  # one id per type
    assert len(set(ids.values())) == len(ids) == 40  # and different types never share one


def test_executable_cache_survives_concurrent_lookups_and_evictions():
    cache = ExecutableCache(maxsize=2)
    cache._entries = _SlowGetOrderedDict()

    def hammer(i):
        for k in range(60):
            key = (i + k) % 4
            if cache.get(key) is None:
                cache.put(key, ("entry", key))

    _run_threads(hammer, 4)  # used to fail: KeyError from move_to_end of an entry just evicted
    assert len(cache) <= 2
    for key in range(4):
        assert cache.get(key) in (None, ("entry", key))


def test_one_jitted_function_called_from_threads_with_many_signatures():
    # more signatures than the function keeps: its trace cache and fast-path dict evict all along,
    # while other threads look entries up (static arguments: the trace cache's own lookup path)
    f = core.jit(lambda x, n: x * n + 1.0, static_argnums=1, max_cached_signatures=2)
    f._cache = _SlowGetOrderedDict()
    x = jnp.asarray(np.arange(3, dtype=np.float32))

    def call(i):
        for k in range(30):
            n = (i + k) % 4
            np.testing.assert_array_equal(np.asarray(f(x, n)), np.arange(3) * n + 1.0)

    _run_threads(call, 4)
    assert len(f._cache) <= 2


# ----- thread-local context managers -----------------------------------------------------------------

def _in_thread_while(manager, body):
    """Start a thread that enters `manager()` and waits; run `body()` here meanwhile; then let the
    thread leave. Returns what the thread saw of `core.config` inside the block."""
    inside, release, seen = threading.Event(), threading.Event(), {}

    def hold():
        with manager():
            seen["disable_jit"] = core.config.disable_jit
            seen["check_tracer_leaks"] = core.config.check_tracer_leaks
            inside.set()
            release.wait(60)

    t = threading.Thread(target=hold)
    t.start()
    assert inside.wait(60)
    try:
        body()
    finally:
        release.set()
        t.join(60)
    return seen


def test_disable_jit_in_one_thread_leaves_other_threads_compiled():
    runs = []

    @core.jit
    def f(x):
        runs.append(threading.current_thread().name)  # a Python side effect: runs when traced
        return x * 3.0

    x = jnp.ones(4)
    f(x)
    assert len(runs) == 1

    def main_thread_calls():
        assert core.config.disable_jit is False
        for _ in range(5):
            np.testing.assert_array_equal(np.asarray(f(x)), [3.0] * 4)
        assert len(runs) == 1  # compiled: the body did not run again

    seen = _in_thread_while(core.disable_jit, main_thread_calls)
    assert seen["disable_jit"] is True
    assert core.config.disable_jit is False
    f(x)
    assert len(runs) == 1  # and the fast path serves it again afterwards


def test_disable_jit_runs_python_in_its_own_thread_while_others_stay_compiled():
    runs = []

    @core.jit
    def f(x):
        runs.append(threading.current_thread().name)
        return x + 1.0

    x = jnp.zeros(2)
    f(x)
    in_block = threading.Event()
    done = threading.Event()

    def debugging_thread():
        with core.disable_jit():
            for _ in range(3):
                f(x)  # runs the Python body each time
            in_block.set()
            done.wait(60)

    t = threading.Thread(target=debugging_thread, name="debugger")
    t.start()
    assert in_block.wait(60)
    try:
        for _ in range(3):
            np.testing.assert_array_equal(np.asarray(f(x)), [1.0, 1.0])
    finally:
        done.set()
        t.join(60)
    assert runs == ["MainThread", "debugger", "debugger", "debugger"]


def test_checking_leaks_in_one_thread_does_not_check_other_threads():
    store = []

    def leaky(x):
        y = x * 2.0
        store.append(y)
        return y

    def main_thread_traces():
        assert core.config.check_tracer_leaks is False
        core.jit(leaky)(1.0)  # not checked here: the flag is the other thread's
        store.clear()

    seen = _in_thread_while(core.checking_leaks, main_thread_traces)
    assert seen["check_tracer_leaks"] is True

    # ... while in the thread that set it, the same leak is reported
    caught = []

    def checked():
        with core.checking_leaks():
            try:
                core.jit(leaky)(2.0)
            except errors.LeakedTracerError as e:
                caught.append(e)
            finally:
                store.clear()

    t = threading.Thread(target=checked)
    t.start()
    t.join(60)
    assert len(caught) == 1 and "leaky" in str(caught[0])


def test_config_update_is_global_across_threads():
    seen = []
    core.config.update("disable_jit", True)
    try:
        t = threading.Thread(target=lambda: seen.append(core.config.disable_jit))
        t.start()
        t.join(60)
    finally:
        core.config.update("disable_jit", False)
    assert seen == [True]

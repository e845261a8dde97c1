"""Where the time of the two host-fetch latency rows goes (issue 18), layer by layer, in one process.

`bench/run.py` times whole rows, each peer in its own process; on a shared 2-core machine the wall
clock of one round can double from one second to the next, so a ratio of two processes is mostly
the load of the moment. This script times the layers of one row inside one process, in alternating
rounds, and reports process CPU time (time the process was not given the CPU is not counted) next
to the wall clock:

    .venv/bin/python bench/latency_layers.py small                        # purenn: call, block, fetch
    bench/.venv-jax/bin/python bench/latency_layers.py small --peer jax   # the same layers for jax
    .venv/bin/python bench/latency_layers.py runtime512       # the (512, 512) multiply, decomposed

`small` is the `fetch_fresh_small` row: f = jit((a*b + a) - b) on (8,) float32 arrays rotating over a
pool of 16; `call` is f(x, y), `block` adds `.block_until_ready()`, `fetch` is `np.asarray(f(x, y))`.

`runtime512` (purenn's interpreter only; it drives jaxlib directly) runs the program of the
`fetch_fresh_512` row, h = a * 2 on (512, 512) float32, with the same StableHLO compiled four ways:
on a client with asynchronous dispatch (what jax and purenn use) or a synchronous one, and with
XLA's parallel task assignment splitting the loop fusion in two (`outer_dimension_partitions`, its
choice on 2 CPUs) or not (compiled while the process is pinned to one CPU, which is how XLA counts
the CPUs it may use). NumPy's `a * 2` runs beside them.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _library(peer):
    """(jit, asarray) of `peer`: 'purenn' (this checkout) or 'jax' (run with the jax venv)."""
    if peer == "jax":
        import jax
        import jax.numpy as jnp
        return jax.jit, jnp.asarray
    if REPO_ROOT not in sys.path:
        sys.path.insert(0, REPO_ROOT)
    import core
    import core.numpy as jnp
    return core.jit, jnp.asarray


def time_alternating(variants, rounds, inner):
    """{name: (cpu_us, wall_us) lists per call}: every round runs each variant `inner` times, in
    turn, with the cyclic GC off; the first call of each (compiles, warms caches) is not timed."""
    for run in variants.values():
        run(max(1, inner // 10))
    out = {k: ([], []) for k in variants}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            for k, run in variants.items():
                c, t = time.process_time(), time.perf_counter()
                run(inner)
                out[k][1].append((time.perf_counter() - t) / inner * 1e6)
                out[k][0].append((time.process_time() - c) / inner * 1e6)
    finally:
        if enabled:
            gc.enable()
    return out


def small_variants(jit, asarray, pool_size=16):
    rng = np.random.default_rng(0)
    pool = [(asarray(a), asarray(b)) for a, b in zip(rng.standard_normal((pool_size, 8), dtype=np.float32),
                                                    rng.standard_normal((pool_size, 8), dtype=np.float32))]
    f = jit(lambda a, b: (a * b + a) - b)
    m = pool_size - 1

    def call(n):
        for i in range(n):
            f(*pool[i & m])

    def block(n):
        for i in range(n):
            f(*pool[i & m]).block_until_ready()

    def fetch(n):
        for i in range(n):
            np.asarray(f(*pool[i & m]))
    return {"call": call, "block": block, "fetch": fetch}


def runtime512_variants(n=512):
    import core
    import core.numpy as jnp
    from core.avals import ShapedArray
    from core.runtime.client import _xla, xc
    host = np.random.default_rng(0).random((4, n, n), dtype=np.float32)
    text = core.jit(lambda a: a * 2).lower(jnp.asarray(host[0])).as_text()
    aval = ShapedArray((n, n), np.float32)
    cpus = os.sched_getaffinity(0)

    def pin(to):
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), to)
            except OSError:  # a thread that has ended since the listing
                pass

    def variant(client, split):
        dev = client.local_devices()[0]
        options = xc.CompileOptions()
        options.device_assignment = xc.DeviceAssignment.create(np.array([[dev.id]]))
        if not split:
            pin({min(cpus)})
        try:
            loaded = client.compile_and_load(text, _xla.DeviceList((dev,)), options)
        finally:
            pin(cpus)
        optimized = loaded.hlo_modules()[0].to_string()
        if ("outer_dimension_partitions" in optimized) != split:
            raise RuntimeError("XLA did not partition the fusion as asked; the comparison would be void")
        sharding = _xla.SingleDeviceSharding(dev)
        bufs = [_xla.batched_device_put(aval, sharding, [h], [dev], True, False,
                                        _xla.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL, True) for h in host]
        handlers = [_xla.array_result_handler(aval, sharding, True, True)]

        def run(k):
            for i in range(k):
                loaded.execute_sharded([bufs[i & 3]]).consume_with_handlers(handlers)[0].block_until_ready()
        return run

    asynchronous, synchronous = xc.make_cpu_client(asynchronous=True), xc.make_cpu_client(asynchronous=False)

    def numpy_mul(k):
        for i in range(k):
            host[i & 3] * 2
    return {"async, split in 2": variant(asynchronous, True), "async, 1 task": variant(asynchronous, False),
            "sync, split in 2": variant(synchronous, True), "sync, 1 task": variant(synchronous, False),
            "numpy a * 2": numpy_mul}


def report(name, results):
    lines = []
    for k, (cpu, wall) in results.items():
        cpu, wall = sorted(cpu), sorted(wall)
        lines.append(f"{name:7s} {k:18s} cpu us/call: min {cpu[0]:8.2f} median {cpu[len(cpu) // 2]:8.2f}   "
                     f"wall: min {wall[0]:8.2f} median {wall[len(wall) // 2]:8.2f}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("what", choices=("small", "runtime512"))
    p.add_argument("--peer", choices=("purenn", "jax"), default="purenn")
    p.add_argument("--rounds", type=int, default=11)
    p.add_argument("--inner", type=int, default=None, help="calls per round (default 5000 small, 200 runtime512)")
    a = p.parse_args(argv)
    if a.what == "runtime512" and a.peer != "purenn":
        p.error("runtime512 drives jaxlib through purenn's runtime: run it with purenn's interpreter")
    jit, asarray = _library(a.peer)
    if a.what == "small":
        results = time_alternating(small_variants(jit, asarray), a.rounds, a.inner or 5000)
    else:
        results = time_alternating(runtime512_variants(), a.rounds, a.inner or 200)
    print(report(a.peer, results))


if __name__ == "__main__":
    main()

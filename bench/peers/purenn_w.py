"""purenn peer: ``core.numpy`` (eager) and ``core.jit``, through the public API only.

Run with the framework's own interpreter; the repository root is put on
sys.path here (the runner also sets PYTHONPATH):

    .venv/bin/python bench/peers/purenn_w.py WORKLOAD

If ``core`` cannot be imported or a workload fails, the error is reported in
the JSON line (``"ok": false``) instead of crashing the runner.
"""

from __future__ import annotations

import os
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(_HERE))
sys.path.insert(0, _HERE)
if REPO_ROOT not in sys.path:
    sys.path.insert(0, REPO_ROOT)
import _harness  # noqa: E402


def versions():
    import numpy

    out = {"numpy": numpy.__version__}
    try:
        import core

        out["purenn"] = str(getattr(core, "__version__", "unversioned"))
    except Exception as e:  # reported, not fatal
        out["purenn"] = f"import failed: {type(e).__name__}"
    try:
        import jaxlib

        out["jaxlib"] = str(getattr(jaxlib, "__version__", "unknown"))
    except Exception:
        pass
    try:
        rev = subprocess.run(
            ["git", "-C", REPO_ROOT, "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, timeout=10,
        )
        out["git"] = rev.stdout.strip() or "no commit"
    except Exception:
        pass
    return out


def build(name):
    import core  # noqa: F401  (the framework; fails loudly if not importable)
    import core.numpy as jnp
    import workloads as W

    inputs = W.make_inputs_np(name)

    if name in ("eager_add_small", "eager_add_small_sync"):
        x = jnp.asarray(inputs[0])
        y = jnp.ones((W.SMALL_N,), dtype=jnp.float32)

        if name == "eager_add_small":
            def body(n):
                z = x
                for _ in range(n):
                    z = x + y
                z.block_until_ready()
        else:
            def body(n):
                for _ in range(n):
                    (x + y).block_until_ready()

        return body, lambda: x + y

    if name == "eager_chain10":
        x = jnp.asarray(inputs[0])

        def chain(y):
            y = y * 1.0001
            y = y + 0.5
            y = jnp.sin(y)
            y = y * 0.5
            y = y + 0.25
            y = jnp.exp(y)
            y = y * 0.999
            y = y - 0.5
            y = jnp.sin(y)
            y = y + 1.0
            return y

        def body(n):
            y = x
            for _ in range(n):
                y = chain(x)
            y.block_until_ready()

        return body, lambda: chain(x)

    if name == "matmul_2048":
        a = jnp.asarray(inputs[0])
        b = jnp.asarray(inputs[1])

        def body(n):
            for _ in range(n):
                c = jnp.matmul(a, b)
            c.block_until_ready()

        return body, lambda: jnp.matmul(a, b)

    if name == "axpy_5000":
        x = jnp.asarray(inputs[0])

        def f(x):
            return x * x + x * 2.0

        def body(n):
            for _ in range(n):
                z = f(x)
            z.block_until_ready()

        return body, lambda: f(x)

    if name == "axpy_5000_jit":
        x = jnp.asarray(inputs[0])
        f_jit = core.jit(lambda x: x * x + x * 2.0)

        def body(n):
            for _ in range(n):
                z = f_jit(x)
            z.block_until_ready()

        return body, lambda: f_jit(x)

    if name in ("jit_dispatch_3op", "jit_dispatch_3op_sync"):
        x = jnp.asarray(inputs[0])
        y = jnp.asarray(inputs[1])
        f3 = core.jit(lambda x, y: jnp.sin(x) * y + 1.0)

        if name == "jit_dispatch_3op":
            def body(n):
                z = x
                for _ in range(n):
                    z = f3(x, y)
                z.block_until_ready()
        else:
            def body(n):
                for _ in range(n):
                    f3(x, y).block_until_ready()

        return body, lambda: f3(x, y)

    if name == "trace_compile_mlp20":
        import time

        x = jnp.asarray(inputs[0])
        params = [(jnp.asarray(w), jnp.asarray(b))
                  for w, b in zip(inputs[1::2], inputs[2::2])]
        for a in (x, *[t for p in params for t in p]):
            a.block_until_ready()

        def make_mlp():
            # A new function object every time: nothing keyed on it can hit.
            def mlp(params, x):
                h = x
                for w, b in params:
                    h = jnp.tanh(jnp.matmul(h, w) + b)
                return h
            return core.jit(mlp)

        def body(n):
            total = 0.0
            for _ in range(n):
                # purenn interns structurally equal programs, so a fresh
                # function alone would reuse the executable: drop the
                # executable caches (outside timing) to force a compile.
                core.clear_caches()
                f = make_mlp()
                t0 = time.perf_counter()
                out = f(params, x)
                out.block_until_ready()
                total += time.perf_counter() - t0
                misses = core.cache_info()["eager"]["misses"]
                if misses < 1:
                    raise RuntimeError("trace_compile_mlp20: the call did not "
                                       "compile (executable cache hit)")
            return total

        return body, lambda: make_mlp()(params, x)

    raise KeyError(name)


if __name__ == "__main__":
    sys.exit(_harness.main("purenn", build, versions))

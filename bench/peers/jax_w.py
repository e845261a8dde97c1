"""jax oracle peer: eager jax.numpy (no jit). Run with bench/.venv-jax/bin/python.

    bench/.venv-jax/bin/python bench/peers/jax_w.py WORKLOAD
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _harness  # noqa: E402


def versions():
    import jax
    import jaxlib
    import numpy

    return {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
            "numpy": numpy.__version__,
            "devices": ",".join(str(d) for d in jax.devices())}


def build(name):
    import jax.numpy as jnp
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

    raise KeyError(name)


if __name__ == "__main__":
    sys.exit(_harness.main("jax", build, versions))

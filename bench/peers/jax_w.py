"""jax oracle peer: eager jax.numpy, and jax.jit for the jit workloads.
Run with bench/.venv-jax/bin/python.

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


def _training_setup(name, inputs, convnet):
    """The network and loss of the training workloads (the mlp_adam_step MLP, or the convnet),
    and the initial parameters: stax's own init gives the parameter tree, whose leaves are then
    replaced by the shared NumPy draw (same shapes, checked), so every peer starts from identical
    parameters."""
    import jax
    import jax.numpy as jnp
    from jax.example_libraries import stax
    import workloads as W

    if not convnet:
        init_fun, apply_fun = stax.serial(
            stax.Dense(W.TRAIN_HIDDEN), stax.Relu, stax.Dense(W.TRAIN_HIDDEN), stax.Relu,
            stax.Dense(W.TRAIN_CLASSES))

        def loss(params, batch):
            # softmax cross-entropy with integer labels (jax has no library one)
            xb, yb = batch
            logp = jax.nn.log_softmax(apply_fun(params, xb))
            return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(yb, W.TRAIN_CLASSES), axis=1))
    else:
        init_fun, apply_fun = stax.serial(
            stax.Conv(W.CONV_CH[0], (3, 3), padding="SAME"), stax.Relu,
            stax.Conv(W.CONV_CH[1], (3, 3), padding="SAME"), stax.Relu,
            stax.MaxPool((2, 2)), stax.Flatten, stax.Dense(W.CONV_DENSE), stax.Relu,
            stax.Dense(W.TRAIN_CLASSES), stax.LogSoftmax)

        def loss(params, batch):
            xb, yb = batch
            logp = apply_fun(params, xb)
            return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(yb, W.TRAIN_CLASSES), axis=1))

    _, init_params = init_fun(jax.random.PRNGKey(0), (-1, *inputs[0].shape[1:]))
    leaves, tree = jax.tree_util.tree_flatten(init_params)
    shapes = [tuple(a.shape) for a in leaves]
    if shapes != [a.shape for a in inputs[2:]]:
        raise RuntimeError(f"{name}: stax's parameter shapes {shapes} differ from the "
                           f"shared ones {[a.shape for a in inputs[2:]]}")
    return loss, jax.tree_util.tree_unflatten(tree, [jnp.asarray(a) for a in inputs[2:]])


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

    if name == "axpy_5000_jit":
        import jax

        x = jnp.asarray(inputs[0])
        f_jit = jax.jit(lambda x: x * x + x * 2.0)

        def body(n):
            for _ in range(n):
                z = f_jit(x)
            z.block_until_ready()

        return body, lambda: f_jit(x)

    if name in ("jit_dispatch_3op", "jit_dispatch_3op_sync"):
        import jax

        x = jnp.asarray(inputs[0])
        y = jnp.asarray(inputs[1])
        f3 = jax.jit(lambda x, y: jnp.sin(x) * y + 1.0)

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

    if name in ("fetch_fresh_small", "fetch_scalar_small", "jit_call_block_pool",
                "block_tree_ready"):
        import jax
        import jax.numpy as jnp
        import numpy as np

        pool = [(jnp.asarray(a), jnp.asarray(b)) for a, b in zip(*inputs)]
        f = jax.jit(lambda a, b: (a * b + a) - b)
        fs = jax.jit(lambda a, b: ((a * b + a) - b).sum())
        m = len(pool) - 1  # a power of two minus one

        if name == "fetch_fresh_small":
            def body(n):
                for i in range(n):
                    x, y = pool[i & m]
                    np.asarray(f(x, y))
            return body, lambda: np.asarray(f(*pool[0]))
        if name == "fetch_scalar_small":
            def body(n):
                for i in range(n):
                    x, y = pool[i & m]
                    float(fs(x, y))
            return body, lambda: float(fs(*pool[0]))
        if name == "jit_call_block_pool":
            def body(n):
                for i in range(n):
                    x, y = pool[i & m]
                    jax.block_until_ready(f(x, y))
            return body, lambda: f(*pool[0])
        tree = {"a": pool[0][0], "b": [pool[0][1], pool[1][0]]}
        jax.block_until_ready(tree)

        def body(n):
            for _ in range(n):
                jax.block_until_ready(tree)
        return body, lambda: [tree["a"], tree["b"][0], tree["b"][1]]

    if name == "eager_add_block_pool":
        import jax
        import jax.numpy as jnp

        pool = [(jnp.asarray(a), jnp.asarray(b)) for a, b in zip(*inputs)]
        m = len(pool) - 1  # a power of two minus one

        def body(n):
            for i in range(n):
                x, y = pool[i & m]
                jax.block_until_ready(x + y)
        return body, lambda: pool[0][0] + pool[0][1]

    if name == "eager_chain10_block_pool":
        import jax
        import jax.numpy as jnp

        pool = [jnp.asarray(a) for a in inputs[0]]
        m = len(pool) - 1

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
            for i in range(n):
                jax.block_until_ready(chain(pool[i & m]))
        return body, lambda: chain(pool[0])

    if name == "fetch_fresh_512":
        import jax
        import jax.numpy as jnp
        import numpy as np

        pool = [jnp.asarray(a) for a in inputs[0]]
        h = jax.jit(lambda a: a * 2)

        def body(n):
            for i in range(n):
                np.asarray(h(pool[i & 3]))
        return body, lambda: np.asarray(h(pool[0]))

    if name == "trace_compile_mlp20":
        import time

        import jax
        import jax.monitoring

        # No persistent (on-disk) compilation cache, whatever the environment says.
        jax.config.update("jax_enable_compilation_cache", False)
        x = jnp.asarray(inputs[0])
        params = [(jnp.asarray(w), jnp.asarray(b))
                  for w, b in zip(inputs[1::2], inputs[2::2])]
        jax.block_until_ready((x, params))

        compiles = [0]

        def on_event(event, duration, **kwargs):
            if event == "/jax/core/compile/backend_compile_duration":
                compiles[0] += 1

        jax.monitoring.register_event_duration_secs_listener(on_event)

        def make_mlp():
            # A new function object every time: nothing keyed on it can hit.
            def mlp(params, x):
                h = x
                for w, b in params:
                    h = jnp.tanh(jnp.matmul(h, w) + b)
                return h
            return jax.jit(mlp)

        def body(n):
            total = 0.0
            for _ in range(n):
                # Drop every in-memory tracing/lowering/compilation cache
                # (outside timing), as purenn's peer does with core.clear_caches().
                jax.clear_caches()
                f = make_mlp()
                before = compiles[0]
                t0 = time.perf_counter()
                out = f(params, x)
                out.block_until_ready()
                total += time.perf_counter() - t0
                if compiles[0] == before:
                    raise RuntimeError("trace_compile_mlp20: the call did not "
                                       "compile (executable cache hit)")
            return total

        return body, lambda: make_mlp()(params, x)

    if name in ("grad_mlp_eager", "grad_mlp_jit", "grad_mlp_trace_compile"):
        import time

        import jax
        import jax.monitoring
        import numpy as np

        # No persistent (on-disk) compilation cache, whatever the environment says.
        jax.config.update("jax_enable_compilation_cache", False)

        x, y = jnp.asarray(inputs[0]), jnp.asarray(inputs[1])
        params = dict(zip(("W1", "b1", "W2", "b2"), (jnp.asarray(a) for a in inputs[2:])))
        jax.block_until_ready((x, y, params))

        def make_loss():
            # A new function object every time: nothing keyed on it can hit.
            def loss(params, x, y):
                h = jnp.maximum(jnp.matmul(x, params["W1"]) + params["b1"], 0.0)
                logits = jnp.matmul(h, params["W2"]) + params["b2"]
                m = jnp.max(logits, axis=1, keepdims=True)
                lse = jnp.log(jnp.sum(jnp.exp(logits - m), axis=1)) + m[:, 0]
                onehot = (y[:, None] == jnp.arange(W.GRAD_CLASSES)).astype(jnp.float32)
                return jnp.mean(lse - jnp.sum(onehot * logits, axis=1))
            return loss

        def flat(g):
            return np.concatenate([np.ravel(np.asarray(g[k])) for k in sorted(g)])

        if name == "grad_mlp_trace_compile":
            compiles = [0]

            def on_event(event, duration, **kwargs):
                if event == "/jax/core/compile/backend_compile_duration":
                    compiles[0] += 1

            jax.monitoring.register_event_duration_secs_listener(on_event)

            def body(n):
                total = 0.0
                for _ in range(n):
                    # Drop every in-memory tracing/lowering/compilation cache
                    # (outside timing), as purenn's peer does.
                    jax.clear_caches()
                    g = jax.jit(jax.grad(make_loss()))
                    before = compiles[0]
                    t0 = time.perf_counter()
                    out = g(params, x, y)
                    out["W1"].block_until_ready()
                    total += time.perf_counter() - t0
                    if compiles[0] == before:
                        raise RuntimeError("grad_mlp_trace_compile: the call did "
                                           "not compile (executable cache hit)")
                return total

            return body, lambda: flat(jax.jit(jax.grad(make_loss()))(params, x, y))

        # grad_mlp_eager: jax.grad without jit, op by op.
        g = jax.grad(make_loss())
        if name == "grad_mlp_jit":
            g = jax.jit(g)

        def body(n):
            for _ in range(n):
                out = g(params, x, y)
            out["W1"].block_until_ready()

        return body, lambda: flat(g(params, x, y))

    if name == "newton_step_jit":
        import jax

        a = jnp.asarray(inputs[0])
        x = jnp.asarray(inputs[1])

        def objective(x, a):
            return jnp.sum(jnp.log(1.0 + jnp.exp(jnp.matmul(a, x)))) + 0.5 * jnp.sum(x * x)

        hess = jax.jacfwd(jax.jacrev(objective))
        grad_f = jax.grad(objective)
        step = jax.jit(lambda x, a: x - jnp.linalg.solve(hess(x, a), grad_f(x, a)))

        def body(n):
            for _ in range(n):
                z = step(x, a)
            z.block_until_ready()

        return body, lambda: step(x, a)

    if name in ("per_example_grads_vmap", "per_example_grads_loop"):
        import jax
        import numpy as np

        x, y = jnp.asarray(inputs[0]), jnp.asarray(inputs[1])
        params = dict(zip(("W1", "b1", "W2", "b2"), (jnp.asarray(a) for a in inputs[2:])))
        jax.block_until_ready((x, y, params))

        def loss(params, x, y):
            # The grad_mlp_* loss for ONE example: x (784,), y a scalar label.
            h = jnp.maximum(jnp.matmul(x, params["W1"]) + params["b1"], 0.0)
            logits = jnp.matmul(h, params["W2"]) + params["b2"]
            m = jnp.max(logits)
            lse = jnp.log(jnp.sum(jnp.exp(logits - m))) + m
            onehot = (y == jnp.arange(W.GRAD_CLASSES)).astype(jnp.float32)
            return lse - jnp.sum(onehot * logits)

        if name == "per_example_grads_vmap":
            pex = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))

            def body(n):
                for _ in range(n):
                    out = pex(params, x, y)
                out["W1"].block_until_ready()

            def result():
                g = pex(params, x, y)
                return np.concatenate([np.ravel(np.asarray(g[k])) for k in sorted(g)])

            return body, result

        # The loop: the examples arrive as separate arrays (split outside timing).
        g1 = jax.jit(jax.grad(loss))
        xs = [x[i] for i in range(W.PEX_BATCH)]
        ys = [y[i] for i in range(W.PEX_BATCH)]
        jax.block_until_ready((xs, ys))

        def body(n):
            for _ in range(n):
                for xi, yi in zip(xs, ys):
                    out = g1(params, xi, yi)
            out["W1"].block_until_ready()

        def result():
            gs = [g1(params, xi, yi) for xi, yi in zip(xs, ys)]
            return np.concatenate([np.ravel(np.stack([np.asarray(g[k]) for g in gs]))
                                   for k in sorted(gs[0])])

        return body, result

    if name in ("vmap_matvec_jit", "matvec_batched_jit"):
        import jax

        w, xs = jnp.asarray(inputs[0]), jnp.asarray(inputs[1])
        if name == "vmap_matvec_jit":
            matvec = jax.jit(jax.vmap(lambda w, x: jnp.matmul(w, x), in_axes=(None, 0)))
        else:
            matvec = jax.jit(lambda w, xs: jnp.matmul(xs, w.T))

        def body(n):
            for _ in range(n):
                z = matvec(w, xs)
            z.block_until_ready()

        return body, lambda: matvec(w, xs)

    if name in ("mlp_adam_step", "convnet_step"):
        import jax
        from jax.example_libraries import optimizers

        x, y = jnp.asarray(inputs[0]), jnp.asarray(inputs[1])
        loss, params0 = _training_setup(name, inputs, convnet=name == "convnet_step")
        opt_init, opt_update, get_params = optimizers.adam(W.TRAIN_LR)

        @jax.jit
        def train_step(i, opt_state, batch):
            value, grads = jax.value_and_grad(loss)(get_params(opt_state), batch)
            return opt_update(i, grads, opt_state), value

        state = [opt_init(params0), 0]
        jax.block_until_ready((x, y, state[0]))

        def body(n):
            opt_state, i = state
            for _ in range(n):
                opt_state, value = train_step(i, opt_state, (x, y))
                i += 1
            value.block_until_ready()
            state[:] = [opt_state, i]

        def result():
            # The loss after one step from the shared initial parameters.
            s1, _ = train_step(0, opt_init(params0), (x, y))
            return train_step(1, s1, (x, y))[1]

        return body, result

    if name in ("pmap_mlp_step_2dev", "mlp_step_global_1dev"):
        import jax
        import numpy as np
        from jax.example_libraries import optimizers
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        # The device count comes from Workload.env (XLA_FLAGS, read when jax
        # starts its CPU backend): a silent fallback to one device would time
        # the wrong thing.
        n_dev = W.PMAP_DEVICES if name == "pmap_mlp_step_2dev" else 1
        got = jax.local_device_count()
        if got != n_dev:
            raise RuntimeError(f"{name} needs {n_dev} CPU device(s) (XLA_FLAGS="
                               f"--xla_force_host_platform_device_count={n_dev} before "
                               f"importing jax), got {got}")
        loss, params0 = _training_setup(name, inputs, convnet=False)
        opt_init, opt_update, get_params = optimizers.adam(W.TRAIN_LR)

        if n_dev == 1:
            @jax.jit
            def train_step(i, opt_state, batch):
                value, grads = jax.value_and_grad(loss)(get_params(opt_state), batch)
                return opt_update(i, grads, opt_state), value

            batch = (jnp.asarray(inputs[0]), jnp.asarray(inputs[1]))

            def initial_state():
                return opt_init(params0)

            def global_loss(value):
                return value
        else:
            def dp_step(i, opt_state, batch):
                value, grads = jax.value_and_grad(loss)(get_params(opt_state), batch)
                return opt_update(i, jax.lax.pmean(grads, "batch"), opt_state), value

            train_step = jax.pmap(dp_step, axis_name="batch", in_axes=(None, 0, 0))
            # jax 0.10 removed device_put_replicated/device_put_sharded; their
            # replacement: arrays with a leading device axis, sharded along it
            # over a 1-D mesh of the devices. jax's pmap (jit + shard_map) uses
            # exactly this sharding, mesh axis named after axis_name, so its
            # inputs match without resharding.
            devices = jax.local_devices()[:n_dev]
            along = NamedSharding(Mesh(np.array(devices), ("batch",)), PartitionSpec("batch"))
            per = W.PMAP_GLOBAL_BATCH // n_dev
            batch = jax.device_put(
                (inputs[0].reshape(n_dev, per, *inputs[0].shape[1:]),
                 inputs[1].reshape(n_dev, per)), along)

            def initial_state():
                return jax.tree_util.tree_map(
                    lambda a: jax.device_put(np.broadcast_to(np.asarray(a), (n_dev, *a.shape)), along),
                    opt_init(params0))

            def global_loss(value):
                # Equal shards, mean losses: the global loss is their mean.
                return np.mean(np.asarray(value, dtype=np.float64))

        state = [initial_state(), 0]
        jax.block_until_ready((batch, state[0]))

        def body(n):
            opt_state, i = state
            for _ in range(n):
                opt_state, value = train_step(i, opt_state, batch)
                i += 1
            value.block_until_ready()
            state[:] = [opt_state, i]

        def result():
            # The global loss after one step from the shared initial parameters.
            s1, _ = train_step(0, initial_state(), batch)
            return global_loss(train_step(1, s1, batch)[1])

        return body, result

    raise KeyError(name)


if __name__ == "__main__":
    sys.exit(_harness.main("jax", build, versions))

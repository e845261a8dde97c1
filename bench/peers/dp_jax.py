"""jax worker of bench/dp_clipping.py (issue 15): (d) clipping of per-example gradients from
jax.vmap(jax.grad), and jax's non-private gradient as a reference, each one jax.jit program, the
same models and parameters as purenn (bench/peers/_dp_common.py). Run with the jax oracle venv:

    bench/.venv-jax/bin/python bench/peers/dp_jax.py --model mlp --batch 256 --variants d,ref
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _dp_common as common  # noqa: E402

import numpy as np  # noqa: E402

VARIANTS = {"ref": "jax non-private", "d": "(d) jax vmap(grad) clipping"}


def main():
    args = common.parse_args()
    import jax
    import jax.numpy as jnp

    flat, x_np, labels = common.make_data(args.model, args.batch)
    y_np = np.eye(10, dtype=np.float32)[labels]
    conv = args.model == "convnet"

    def apply(p, x):   # x: a batch
        if not conv:
            h = jax.nn.relu(x @ p[0] + p[1])
            h = jax.nn.relu(h @ p[2] + p[3])
            return h @ p[4] + p[5]
        dn = ("NHWC", "HWIO", "NHWC")
        h = jax.lax.conv_general_dilated(x, p[0], (1, 1), "SAME", dimension_numbers=dn) + p[1]
        h = jax.nn.relu(h)
        h = jax.nn.relu(jax.lax.conv_general_dilated(h, p[2], (1, 1), "SAME", dimension_numbers=dn) + p[3])
        h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 1, 1, 1), "VALID")
        h = h.reshape(h.shape[0], -1)
        h = jax.nn.relu(h @ p[4] + p[5])
        return h @ p[6] + p[7]

    def loss_one(p, x, y):
        return -jnp.sum(jax.nn.log_softmax(apply(p, x[None])[0]) * y)

    def loss_batch(p, x, y):
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(apply(p, x)) * y, axis=-1))

    C = args.clip

    def clipped(p, x, y):
        g = jax.vmap(jax.grad(loss_one), in_axes=(None, 0, 0))(p, x, y)
        sq = sum(jnp.sum(jnp.reshape(v * v, (v.shape[0], -1)), axis=1) for v in g)
        c = jnp.minimum(1.0, C / jnp.sqrt(sq))
        return [jnp.tensordot(c, v, axes=1) for v in g]

    params = [jax.device_put(a) for a in flat]
    x, y = jax.device_put(x_np), jax.device_put(y_np)

    def build(key):
        fn = {"ref": jax.grad(loss_batch), "d": clipped}[key]
        compiled = jax.jit(fn).lower(params, x, y).compile()
        ma = compiled.memory_analysis()
        xla = {k: int(getattr(ma, k + "_size_in_bytes")) for k in ("temp", "argument", "output")}
        return (lambda: compiled(params, x, y)), jax.block_until_ready, \
            (lambda g: [np.asarray(v) for v in g]), xla

    def versions():
        import jaxlib
        return {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "backend": jax.default_backend()}

    common.run_variants("jax", args, build, versions)


if __name__ == "__main__":
    main()

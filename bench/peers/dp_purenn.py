"""purenn worker of bench/dp_clipping.py (issue 15): (a) non-private, (b) vmap clipping, (c) ghost
clipping (book-keeping, or a second pullback), each one jitted program. Run by the orchestrator:

    PYTHONPATH=. .venv/bin/python bench/peers/dp_purenn.py --model mlp --batch 256 --variants a,b,c_bk,c_2nd
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import _dp_common as common  # noqa: E402

import numpy as np  # noqa: E402

VARIANTS = {"a": "(a) non-private", "b": "(b) vmap clipping", "c_bk": "(c) ghost, book-keeping",
            "c_2nd": "(c) ghost, 2nd pullback"}


def model_and_loss(model_name):
    """The stax model, the one-example loss and the batch loss (mean), as bench/dp_clipping.py has
    always defined them."""
    import core.numpy as jnp
    import nn
    if model_name == "mlp":
        model = nn.serial(nn.Dense(512), nn.Relu, nn.Dense(512), nn.Relu, nn.Dense(10))
    else:
        model = nn.serial(nn.Conv(32, (3, 3), padding="SAME"), nn.Relu, nn.Conv(64, (3, 3), padding="SAME"),
                          nn.Relu, nn.MaxPool((2, 2)), nn.Flatten, nn.Dense(128), nn.Relu, nn.Dense(10))
    conv = model_name == "convnet"

    def loss_one(p, x, y):
        logits = model.apply_fun(p, x[None])[0] if conv else model.apply_fun(p, x)
        return -jnp.sum(nn.log_softmax(logits) * y)

    def loss_batch(p, x, y):
        return -jnp.mean(jnp.sum(nn.log_softmax(model.apply_fun(p, x)) * y, axis=-1))
    return model, loss_one, loss_batch


def to_stax(model_name, flat):
    """The flat parameter list (purenn layout) as the stax model's nested params."""
    if model_name == "mlp":
        W1, b1, W2, b2, W3, b3 = flat
        return [(W1, b1), (), (W2, b2), (), (W3, b3)]
    K1, c1, K2, c2, W3, b3, W4, b4 = flat
    return [(K1, c1.reshape(1, 1, 1, -1)), (), (K2, c2.reshape(1, 1, 1, -1)), (), (), (), (W3, b3), (), (W4, b4)]


def step_fn(key, model_name, clip):
    import core
    _, loss_one, loss_batch = model_and_loss(model_name)
    if key == "a":
        return core.grad(loss_batch)
    if key == "b":
        return lambda p, x, y: core.clipped_grad(loss_one, clip, method="vmap")(p, x, y)[0]
    method = "auto" if model_name == "convnet" else "ghost"
    return lambda p, x, y: core.clipped_grad(loss_one, clip, method=method, bookkeeping=key == "c_bk")(p, x, y)[0]


def xla_stats(compiled):
    st = compiled.memory_stats()
    return {k: int(getattr(st, k + "_size_in_bytes")) for k in ("temp", "argument", "output")}


def main():
    args = common.parse_args()
    import core

    flat, x, labels = common.make_data(args.model, args.batch)
    y = np.eye(10, dtype=np.float32)[labels]
    params, x, y = core.device_put((to_stax(args.model, flat), x, y))

    def build(key):
        jitted = core.jit(step_fn(key, args.model, args.clip))
        compiled = jitted.lower(params, x, y).compile()

        def to_numpy(g):
            return [np.asarray(v) for v in core.tree_leaves(g)]
        return (lambda: compiled(params, x, y)), core.block_until_ready, to_numpy, xla_stats(compiled)

    def versions():
        return {"purenn": "worktree", "backend": core.default_backend()}

    common.run_variants("purenn", args, build, versions)


if __name__ == "__main__":
    main()

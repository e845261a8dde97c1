"""Step time and XLA memory of per-example clipping against a non-private step (issue 15).

The 784-512-512-10 ReLU MLP at batch 256, or the bench's convnet (Conv 32, Conv 64, MaxPool,
Dense 128, Dense 10 on 28x28x1 images), float32, one jitted program each:
  (a) non-private: the gradient of the batch's mean loss;
  (b) vmap: every per-example gradient materialized by vmap(grad), clipped, summed;
  (c) ghost / auto: per-example norms by the ghost-norm rules (auto: Gram or materialized per
      layer, whichever is cheaper), then the clipped sum by a second pullback (reweighted), or
      book-kept from the first pass (bookkeeping=True).

    .venv/bin/python bench/dp_clipping.py [--model mlp|convnet] [--batch 256] [--repeats 20] [--skip-vmap]

Prints one line per variant: median and best step time over rounds that interleave the variants
(on a shared machine the best is the steadier figure), its ratio to (a), and the compiled
program's temporary memory (XLA's buffer assignment, `Compiled.memory_stats()`), a proxy for peak
memory.
"""
import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import core  # noqa: E402
import core.numpy as jnp  # noqa: E402
import nn  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--model", choices=("mlp", "convnet"), default="mlp")
    parser.add_argument("--skip-vmap", action="store_true", help="leave out (b) (B copies of the parameters)")
    args = parser.parse_args(argv)

    if args.model == "mlp":
        model = nn.serial(nn.Dense(512), nn.Relu, nn.Dense(512), nn.Relu, nn.Dense(10))
        example_shape = (784,)
        title = "MLP 784-512-512-10"
    else:
        model = nn.serial(nn.Conv(32, (3, 3), padding="SAME"), nn.Relu, nn.Conv(64, (3, 3), padding="SAME"),
                          nn.Relu, nn.MaxPool((2, 2)), nn.Flatten, nn.Dense(128), nn.Relu, nn.Dense(10))
        example_shape = (28, 28, 1)
        title = "convnet Conv32-Conv64-MaxPool-Dense128-Dense10 on 28x28x1"
    rng = np.random.default_rng(0)
    _, shapes = nn.abstract_init(model, (-1,) + example_shape)
    params = core.tree_map(lambda s: (rng.normal(size=s.shape) / np.sqrt(np.prod(s.shape[:-1]) or 1))
                           .astype(np.float32), shapes)
    x = rng.normal(size=(args.batch,) + example_shape).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, args.batch)]
    conv = args.model == "convnet"

    def loss_one(p, x, y):
        logits = model.apply_fun(p, x[None])[0] if conv else model.apply_fun(p, x)
        return -jnp.sum(nn.log_softmax(logits) * y)

    def loss_batch(p, x, y):
        return -jnp.mean(jnp.sum(nn.log_softmax(model.apply_fun(p, x)) * y, axis=-1))

    C = args.clip
    variants = {"(a) non-private grad": lambda p, x, y: core.grad(loss_batch)(p, x, y)}
    if not args.skip_vmap:
        variants["(b) vmap clipping"] = lambda p, x, y: core.clipped_grad(loss_one, C, method="vmap")(p, x, y)[0]
    for method in ("auto",) if conv else ("ghost",):
        for bk in (False, True):
            variants[f"(c) {method}, {'book-keeping' if bk else '2nd pullback'}"] = (
                lambda p, x, y, method=method, bk=bk: core.clipped_grad(loss_one, C, method=method,
                                                                         bookkeeping=bk)(p, x, y)[0])
    params, x, y = core.device_put((params, x, y))
    print(f"{title}, batch {args.batch}, float32, {core.default_backend()}, {args.repeats} timed steps each")
    if conv:
        print(core.ghost_plan(loss_one)(params, x, y))
    compiled = {}
    for name, fn in variants.items():
        jitted = core.jit(fn)
        stats = jitted.lower(params, x, y).compile().memory_stats()
        core.block_until_ready(jitted(params, x, y))   # compile and warm up
        compiled[name] = (jitted, getattr(stats, "temp_size_in_bytes", None))
    # rounds interleave the variants, so a change of machine load hits them all alike
    times = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, (jitted, _) in compiled.items():
            t = time.perf_counter()
            core.block_until_ready(jitted(params, x, y))
            times[name].append(time.perf_counter() - t)
    base = min(times[next(iter(times))])
    for name, (_, temp) in compiled.items():
        med, best = statistics.median(times[name]), min(times[name])
        mem = f"{temp / 2**20:7.1f} MiB temp" if temp is not None else "temp n/a"
        print(f"  {name:26s} median {med * 1e3:8.2f} ms  best {best * 1e3:8.2f} ms  {best / base:5.2f}x (a) "
              f"best  {mem}")


if __name__ == "__main__":
    main()

"""The hand-written jitted training loop that bench/trainer.py sets beside `train` (issue 14).

The same model, optimizer, schedule, loss, data split, batch order and augmentation as the
trainer builds from a config (through `train.config`, `train.registry` and `train.data`), and the
same initial parameters, but none of the trainer's machinery: one jitted step
`(i, opt_state, x, y, mask) -> (opt_state, loss)` with the optimizer state donated, batches built
in the loop's own thread (no prefetch), no metrics fetched, no logging, no checkpoints, no
non-finite guard. It is the floor the trainer's steps/s is held against.

    python bench/peers/train_loop_purenn.py throughput configs/digits_mlp.yaml --steps 3000
    python bench/peers/train_loop_purenn.py accuracy configs/digits_mlp.yaml --target 0.97
    python bench/peers/train_loop_purenn.py export configs/digits_mlp.yaml --out /tmp/digits.npz

`throughput` prints one JSON line: steady-state steps/s over steps 2..N (the clock starts after
the first step has compiled and finished, and stops after `block_until_ready` on the last step's
state), the same over steps 51..N, the process's CPU time per step over steps 51..N (all
threads: `time.process_time`), and `time_to_first_step` (seconds since the process started). `accuracy` prints one line
`ready` when everything is built, then after every epoch a line `epoch E test_accuracy A` (the
whole test split in one jitted call), then a JSON line. `export` writes the digits split, the
per-epoch batch orders and the MLP's initial parameters to an .npz for the PyTorch peer.
Run with the project's interpreter and the repository on PYTHONPATH (bench/trainer.py does).
"""
import argparse
import json
import os
import sys
import time

import numpy as np

import core
import core.numpy as jnp
from core import random
from core.tree_util import tree_flatten

from train import config as config_lib
from train import data as data_lib
from train import registry
from train.logs import seconds_since_process_start


class Setup:
    """What the trainer would build from `config_path` (plus overrides), built the same way."""

    def __init__(self, config_path, overrides=(), steps=None):
        cfg = config_lib.load_config([config_path], list(overrides))
        d = cfg.data
        self.cfg = cfg
        self.data = data_lib.load_data(
            d.name, d.path, seed=0, validation_fraction=d.validation_fraction, test_fraction=d.test_fraction,
            normalize=d.normalize, num_train=d.num_train, num_test=d.num_test, num_classes=d.num_classes,
            seq_len=d.seq_len, vocab_size=d.vocab_size, input_dim=d.input_dim)
        self.batch_size, self.augment, self.seed = d.batch_size, d.augment, cfg.run.seed
        self.batches_per_epoch = data_lib.num_batches(len(self.data.train.y), self.batch_size)
        self.total_steps = steps or cfg.run.steps or cfg.run.epochs * self.batches_per_epoch
        self.model = registry.build_model(cfg.model.to_dict(), self.data.num_classes)
        self.loss = registry.per_example_loss(cfg.loss.to_dict())
        self.optimizer, _ = registry.build_optimizer(cfg.optimizer.to_dict(), self.total_steps)
        self.input_shape = (-1,) + tuple(self.data.input_shape)
        # the trainer's initialization (train/step.py): split the seed's key, init with the first half
        init_key, _ = random.split(random.PRNGKey(self.seed))
        _, self.params = self.model.init_fun(init_key, self.input_shape)

    def epoch_batches(self, epoch):
        return data_lib.batches(self.data.train, self.batch_size, seed=self.seed, epoch=epoch, augment=self.augment)


def make_step(setup):
    opt_init, opt_update, get_params = setup.optimizer
    apply_fun, per_example = setup.model.apply_fun, setup.loss

    def loss(params, x, y, mask):
        return jnp.sum(per_example(apply_fun(params, x), y) * mask) / jnp.maximum(jnp.sum(mask), 1.0)

    def step(i, opt_state, x, y, mask):
        value, grads = core.value_and_grad(loss)(get_params(opt_state), x, y, mask)
        return opt_update(i, grads, opt_state), value

    def accuracy(params, x, y):
        return jnp.mean((jnp.argmax(apply_fun(params, x), axis=-1) == y).astype(jnp.float32))

    return opt_init, core.jit(step, donate_argnums=(1,)), core.jit(accuracy), get_params


def throughput(setup, cpu_from=50):
    opt_init, step, _, _ = make_step(setup)
    opt_state = opt_init(setup.params)
    total, i, epoch = setup.total_steps, 0, 0
    t0 = c0 = None
    while i < total:
        for _, b in setup.epoch_batches(epoch):
            opt_state, loss = step(i, opt_state, b["x"], b["y"], b["mask"])
            i += 1
            if t0 is None:   # the first step compiles: start the clock once it has finished
                core.block_until_ready(opt_state)
                first = seconds_since_process_start()
                t0 = time.perf_counter()
            if i == cpu_from:   # CPU time and a second clock from here, as bench/trainer.py reads train's
                core.block_until_ready(opt_state)
                c0, w0 = time.process_time(), time.perf_counter()
            if i == total:
                break
        epoch += 1
    core.block_until_ready(opt_state)
    end, cpu = time.perf_counter(), time.process_time() - c0
    return {"ok": True, "steps": total, "steps_per_second": (total - 1) / (end - t0),
            "window_steps_per_second": (total - cpu_from) / (end - w0),
            "cpu_ms_per_step": 1e3 * cpu / (total - cpu_from), "time_to_first_step": first,
            "final_loss": float(loss)}


def accuracy_run(setup, target):
    opt_init, step, accuracy, get_params = make_step(setup)
    opt_state = opt_init(setup.params)
    test_x, test_y = core.device_put(setup.data.test.x), core.device_put(setup.data.test.y)
    print("ready", flush=True)
    epochs = -(-setup.total_steps // setup.batches_per_epoch)
    i, history, reached = 0, [], None
    for epoch in range(epochs):
        for _, b in setup.epoch_batches(epoch):
            opt_state, _ = step(i, opt_state, b["x"], b["y"], b["mask"])
            i += 1
        acc = float(accuracy(get_params(opt_state), test_x, test_y))
        print(f"epoch {epoch + 1} test_accuracy {acc:.6f}", flush=True)
        history.append(acc)
        if reached is None and acc >= target:
            reached = epoch + 1
    return {"ok": True, "epochs": epochs, "test_accuracy": history, "epochs_to_target": reached}


def export(setup, out):
    """The arrays the PyTorch peer trains on, so both see the same split, order and init."""
    n = len(setup.data.train.y)
    epochs = -(-setup.total_steps // setup.batches_per_epoch)
    orders = np.stack([np.random.default_rng([setup.seed, e]).permutation(n) for e in range(epochs)])
    leaves, _ = tree_flatten(setup.params)
    arrays = {"train_x": setup.data.train.x, "train_y": setup.data.train.y, "test_x": setup.data.test.x,
              "test_y": setup.data.test.y, "orders": orders}
    # nn.Dense keeps (W[in, out], b[out]) per layer, in order
    arrays.update({f"param_{k}": np.asarray(v) for k, v in enumerate(leaves)})
    meta = {"batch_size": setup.batch_size, "total_steps": setup.total_steps, "epochs": epochs,
            "learning_rate": setup.cfg.optimizer.learning_rate, "schedule": setup.cfg.optimizer.schedule,
            "optimizer": setup.cfg.optimizer.name, "model": setup.cfg.model.to_dict()}
    np.savez(out, meta=np.array(json.dumps(meta)), **arrays)
    return {"ok": True, "out": out, "meta": meta}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("throughput", "accuracy", "export"))
    ap.add_argument("config")
    ap.add_argument("overrides", nargs="*", help="KEY=VALUE overrides, as for train")
    ap.add_argument("--steps", type=int, default=None, help="total steps (default: the config's)")
    ap.add_argument("--target", type=float, default=0.97, help="test accuracy to reach (accuracy mode)")
    ap.add_argument("--out", help="the .npz to write (export mode)")
    args = ap.parse_args(argv)
    try:
        setup = Setup(args.config, args.overrides, args.steps)
        if args.mode == "throughput":
            result = throughput(setup)
        elif args.mode == "accuracy":
            result = accuracy_run(setup, args.target)
        else:
            result = export(setup, args.out)
    except Exception as e:  # noqa: BLE001 -- reported to the runner as one JSON line
        result = {"ok": False, "error": f"{type(e).__name__}: {e}"}
    result["rss_self_kb"] = _vm_hwm_kb()
    print(json.dumps(result), flush=True)
    return 0 if result["ok"] else 1


def _vm_hwm_kb():
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


if __name__ == "__main__":
    sys.exit(main())

"""A training run in its steady state: the step functions trace once, also pmapped over two
devices (docs/reliability.md S1), and after warm-up neither the process's resident memory nor
the number of live device buffers grows (S4).

The memory test runs 2,000 steps in a fresh process (`PURENN_TEST_LONG_STEPS=10000` for the
10,000 of S4); resident memory is read from /proc/self/statm at step 500 and at the end.
"""
import json
import os
import subprocess
import sys


import train
from train import loop as loop_lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LONG_STEPS = int(os.environ.get("PURENN_TEST_LONG_STEPS", "2000"))
WARM_STEPS = 500


def tiny_config(workdir, **sections):
    """80 synthetic examples in batches of 12 (7 per epoch, the last one ragged: 8 real examples
    and 4 of padding), a small MLP, SGD."""
    cfg = {
        "run": {"workdir": str(workdir), "steps": 21, "log_every": 1, "progress": "off",
                "compilation_cache": False},
        "data": {"name": "synthetic_classification", "num_train": 100, "num_test": 40, "input_dim": 6,
                 "num_classes": 3, "batch_size": 12, "validation_fraction": 0.2, "prefetch": 2},
        "model": {"preset": "mlp", "args": {"hidden": [16]}},
        "optimizer": {"name": "sgd", "learning_rate": 0.1},
        "eval": {"every": 0},
        "checkpoint": {"every": 4, "keep": 2},
    }
    for name, values in sections.items():
        cfg[name] = {**cfg.get(name, {}), **values}
    return cfg


def test_pmapped_steps_trace_once_over_epochs_with_ragged_batches_S1(tmp_path, monkeypatch):
    """S1 under pmap: three epochs on two devices, each epoch ending in a padded batch, an
    evaluation per epoch (whose last batch is ragged too), checkpoints: the train step and the
    eval step are each traced once and compiled once."""
    seen = []
    original = loop_lib.make_steps

    def spy(*args, **kwargs):
        fns = original(*args, **kwargs)
        seen.append(fns)
        return fns
    monkeypatch.setattr(loop_lib, "make_steps", spy)
    result = train.fit(tiny_config(tmp_path, run={"devices": 2}, data={"eval_batch_size": 8}))
    assert result.steps == 21
    (fns,) = seen
    assert fns.trace_counts == {"train": 1, "eval": 1}
    assert len(fns.train_step._cache) == 1 and len(fns.eval_step._cache) == 1
    # the evaluations (20 validation examples in batches of 8: the last one ragged) and the steps ran
    with open(tmp_path / "metrics.jsonl") as f:
        records = [json.loads(line) for line in f]
    assert [r["step"] for r in records if "eval/loss" in r] == [7, 14, 21]
    assert [r["step"] for r in records if "train/loss" in r] == list(range(1, 22))


MEASURE = r"""
import gc, json, os, sys
import train
from train import loop
from core.runtime.client import backend

steps, warm = int(sys.argv[2]), int(sys.argv[3])
marks = {}
original = loop._Loop._after_step

def after_step(self):
    original(self)
    if self.step >= warm and (self.step % 50 == 0 or self.step == steps):
        gc.collect()
        with open("/proc/self/statm") as f:
            rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        marks[self.step] = {"rss": rss, "live_arrays": len(backend().client.live_arrays())}

loop._Loop._after_step = after_step
train.fit(json.loads(sys.argv[1]), resume="never")
print("MARKS " + json.dumps(marks))
"""


def test_memory_and_live_buffers_stay_flat_after_warm_up_S4(tmp_path):
    """S4: 2,000 steps of a small MLP through `train.fit`, with what a real run does on the way
    (logging every 100 steps, an evaluation every 250, checkpoints every 500 with old ones
    deleted, the prefetch thread): from step 500 to the end, resident memory grows by at most
    10 MB and the number of live device arrays does not grow. (Live arrays are counted by the
    XLA client under core.runtime; core has no public count.) The count is taken every 50 steps:
    it moves with the batches the prefetch thread has put on the device and not yet handed over,
    so the test compares the highest count of the last 250 steps with the highest of the first
    250 after warm-up; a leak of one array per 100 steps would add 15."""
    cfg = tiny_config(tmp_path / "w", run={"steps": LONG_STEPS, "log_every": 100, "compilation_cache": False},
                      eval={"every": 250}, checkpoint={"every": 500, "keep": 2})
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-c", MEASURE, json.dumps(cfg), str(LONG_STEPS), str(WARM_STEPS)],
                          env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    marks = json.loads(proc.stdout.split("MARKS ")[-1])
    warm, end = marks[str(WARM_STEPS)], marks[str(LONG_STEPS)]
    growth_mb = (end["rss"] - warm["rss"]) / 2**20
    print(f"S4: resident memory {warm['rss'] / 2**20:.1f} MB at step {WARM_STEPS}, {end['rss'] / 2**20:.1f} MB "
          f"at step {LONG_STEPS} ({growth_mb:+.2f} MB); live arrays {warm['live_arrays']} -> {end['live_arrays']}")
    assert growth_mb <= 10, marks
    counts = [(int(k), v["live_arrays"]) for k, v in marks.items()]
    first = max(c for k, c in counts if k <= WARM_STEPS + 250)
    last = max(c for k, c in counts if k >= LONG_STEPS - 250)
    assert last <= first, marks

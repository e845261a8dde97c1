"""What the per-example clipping workers (bench/dp_clipping.py, issue 15) share: NumPy and the
standard library only, so each library's own interpreter can import it.

The models (purenn's layout: Dense weights (in, out), convolution kernels HWIO on NHWC images):

* mlp: Dense 784-512, ReLU, Dense 512-512, ReLU, Dense 512-10 on (784,) inputs;
* convnet: Conv 3x3x1x32 SAME, ReLU, Conv 3x3x32x64 SAME, ReLU, MaxPool 2x2 with stride 1 (stax's
  default), Flatten (27*27*64 = 46,656), Dense 46656-128, ReLU, Dense 128-10 on 28x28x1 images.

The loss of one example is the cross-entropy of its logits with a one-hot label; every clipped
variant computes sum_i min(1, C / ||g_i||) g_i, the non-private one the gradient of the mean loss.

Peak memory of a step: after warm-up (compiles done), `gc.collect()`, `malloc_trim(0)` and a
reset of the process's peak RSS (writing 5 to /proc/self/clear_refs sets VmHWM to VmRSS); the
timed steps run; the figure is VmHWM - VmRSS(before the steps): the most resident memory the
steps added above what the process held between steps (parameters, inputs, compiled programs).
"""
import ctypes
import gc
import json
import sys
import time

import numpy as np

MODELS = ("mlp", "convnet")
CONV_FLAT = 27 * 27 * 64


def param_shapes(model):
    """The parameters as a flat list of (name, shape), purenn's layout and order."""
    if model == "mlp":
        return [("W1", (784, 512)), ("b1", (512,)), ("W2", (512, 512)), ("b2", (512,)), ("W3", (512, 10)),
                ("b3", (10,))]
    return [("K1", (3, 3, 1, 32)), ("c1", (32,)), ("K2", (3, 3, 32, 64)), ("c2", (64,)), ("W3", (CONV_FLAT, 128)),
            ("b3", (128,)), ("W4", (128, 10)), ("b4", (10,))]


def example_shape(model):
    return (784,) if model == "mlp" else (28, 28, 1)


def make_data(model, batch, seed=0):
    """(params, x, labels): float32 parameters scaled by 1/sqrt(fan-in), inputs N(0, 1), int labels."""
    rng = np.random.default_rng(seed)
    params = []
    for _, shape in param_shapes(model):
        fan_in = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
        params.append((rng.normal(size=shape) / np.sqrt(fan_in)).astype(np.float32))
    x = rng.normal(size=(batch,) + example_shape(model)).astype(np.float32)
    labels = rng.integers(0, 10, batch).astype(np.int64)
    return params, x, labels


def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _trim():
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass


def measure(step, steps, sync=lambda out: out):
    """Time `steps` calls of `step()` (each synchronized with `sync`) and take their peak RSS above
    the memory held between steps. Returns (seconds per step, peak delta bytes)."""
    sync(step())   # warm: compile caches, allocator
    _trim()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        can_reset = True
    except OSError:
        can_reset = False
    base = _status_kib("VmRSS")
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        sync(step())
        times.append(time.perf_counter() - t)
    peak = _status_kib("VmHWM") - base if can_reset else None
    return times, None if peak is None else peak * 1024


def checksum(leaves):
    """sum |g| over all leaves in float64: independent of each library's layout of the parameters."""
    return float(sum(np.abs(np.asarray(g, np.float64)).sum() for g in leaves))


def emit(obj):
    sys.stdout.flush()
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def parse_args(argv=None):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=MODELS, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--variants", required=True, help="comma-separated variant keys")
    return ap.parse_args(argv)


def run_variants(peer, args, build, versions):
    """For each variant key: `build(key)` -> (step, sync, to_numpy, xla_stats or None); time it,
    record memory and the checksum of one step's result; one JSON line on stdout."""
    out = {"peer": peer, "model": args.model, "batch": args.batch, "versions": versions(), "variants": {}}
    for key in args.variants.split(","):
        rec = {}
        try:
            step, sync, to_numpy, xla = build(key)
            times, peak = measure(step, args.steps, sync)
            rec.update(ok=True, times=times, rss_peak=peak, xla=xla, checksum=checksum(to_numpy(step())))
        except Exception as e:  # noqa: BLE001 - a failing variant must not hide the others
            rec.update(ok=False, error=f"{type(e).__name__}: {e}"[:400])
        out["variants"][key] = rec
        _trim()
    emit(out)

"""Shared timing harness for the peer scripts (stdlib only).

A peer script calls ``main(peer, build, versions)`` where

* ``build(workload_name)`` imports its library, builds the inputs and returns
  ``(body, result)``: ``body(n)`` runs ``n`` iterations and blocks at the end
  (for a ``self_timed`` workload it also returns the seconds it timed itself,
  leaving per-iteration setup out);
  ``result()`` computes one iteration and returns it as something
  ``numpy.asarray`` accepts (used only for the checksum, outside timing);
* ``versions()`` returns a ``{library: version}`` dict.

The script prints exactly one JSON line on stdout (the last line), whether it
succeeded or not, so the runner never has to guess:

    {"peer": ..., "workload": ..., "ok": true, "unit": ..., "value": ...,
     "samples": [...], "inner": n, "checksum": ..., "versions": {...}}
    {"peer": ..., "workload": ..., "ok": false, "error": "ImportError: ..."}
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import traceback

_BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _BENCH_DIR not in sys.path:
    sys.path.insert(0, _BENCH_DIR)

import workloads as W  # noqa: E402  (bench/workloads.py)


def _timed(body, n: int, self_timed: bool = False) -> float:
    t0 = time.perf_counter()
    ret = body(n)
    t = time.perf_counter() - t0
    if self_timed:
        if not isinstance(ret, float):
            raise TypeError("a self_timed workload's body(n) must return the "
                            f"seconds it measured, got {type(ret).__name__}")
        return ret
    return t


def measure(body, wl: "W.Workload", samples: int | None = None,
            target_s: float | None = None, max_inner: int = 1 << 22):
    """Warm up, calibrate the inner count, return (inner, [sec/iter, ...])."""
    samples = wl.samples if samples is None else samples
    target_s = wl.target_s if target_s is None else target_s
    self_timed = wl.self_timed

    # Warm-up: compile caches, allocator, thread pools. Outside timing.
    body(max(1, wl.warmup))

    if wl.inner > 0:
        inner = wl.inner
    else:
        # Calibrate n so that one sample lasts about target_s.
        n = 1
        while True:
            t = _timed(body, n, self_timed)
            if t >= target_s / 4 or n >= max_inner:
                break
            n = min(max_inner, n * 4)
        inner = max(1, min(max_inner, int(round(n * target_s / max(t, 1e-9)))))

    per_iter = []
    gc_was_enabled = gc.isenabled()
    try:
        for _ in range(samples):
            gc.collect()
            gc.disable()
            try:
                per_iter.append(_timed(body, inner, self_timed) / inner)
            finally:
                if gc_was_enabled:
                    gc.enable()
    finally:
        if gc_was_enabled:
            gc.enable()
    return inner, per_iter


def checksum(value) -> float:
    """float64 sum of |result|: cheap, order-insensitive enough to compare peers."""
    import numpy as np

    arr = np.asarray(value, dtype=np.float64)
    return float(np.abs(arr).sum())


def _emit(obj: dict) -> None:
    sys.stdout.flush()
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main(peer: str, build, versions, argv=None) -> int:
    ap = argparse.ArgumentParser(description=f"{peer} benchmark peer")
    ap.add_argument("workload", help=", ".join(W.WORKLOADS))
    ap.add_argument("--samples", type=int, default=None,
                    help="timed samples (default: per workload)")
    ap.add_argument("--target-s", type=float, default=None,
                    help="approx. seconds per sample (default: per workload)")
    args = ap.parse_args(argv)

    out = {"peer": peer, "workload": args.workload, "ok": False,
           "python": sys.version.split()[0]}
    try:
        wl = W.get(args.workload)
        out["unit"] = wl.unit
    except KeyError as e:
        out["error"] = str(e.args[0] if e.args else e)
        _emit(out)
        return 2

    try:
        out["versions"] = versions()
    except Exception as e:  # versions are informative only
        out["versions"] = {"error": f"{type(e).__name__}: {e}"}

    stage = "import/setup"
    try:
        if peer not in wl.peers:
            raise NotImplementedError(
                f"{args.workload} is not run for {peer}: "
                f"{wl.na_note or 'not applicable'}")
        body, result = build(args.workload)
        stage = "run"
        inner, per_iter = measure(body, wl, args.samples, args.target_s)
        values = [wl.from_seconds(s) for s in per_iter]
        med_s = statistics.median(per_iter)
        out.update(
            ok=True,
            value=wl.from_seconds(med_s),
            median_s_per_iter=med_s,
            samples=values,
            inner=inner,
        )
        stage = "checksum"
        try:
            out["checksum"] = checksum(result())
        except Exception as e:  # a bad checksum must not hide the timing
            out["checksum_error"] = f"{type(e).__name__}: {e}"
    except BaseException as e:  # noqa: BLE001 - report anything, never crash silently
        if isinstance(e, KeyboardInterrupt):
            raise
        msg = f"{type(e).__name__}: {e}".strip()
        out["ok"] = False
        out["error"] = f"{stage}: {msg}"
        out["traceback"] = traceback.format_exc(limit=6)
    _emit(out)
    return 0 if out["ok"] else 1

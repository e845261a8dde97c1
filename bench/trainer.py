#!/usr/bin/env python3
"""The trainer's figures (issue 14): `train` against a hand-written jitted loop and PyTorch,
each run a fresh process, peers alternating in rounds, written as the section
"## Trainer (issue 14)" of a results file.

    python bench/trainer.py                              # all four parts, 3 rounds -> bench/RESULTS.md
    python bench/trainer.py --rounds 5 --only throughput --out /tmp/trainer.md

The parts (`--only`):

throughput   steady-state steps/s and peak resident memory of `train` on configs/digits_mlp.yaml
             and configs/digits_convnet.yaml (run.steps fixed, default logging, checkpoints every
             500 steps, prefetch 2; no evaluation before the last step) against
             bench/peers/train_loop_purenn.py (the same model, optimizer, schedule, data, batch
             order and initial parameters in a bare jitted loop); `train` with its bundled
             per-epoch validation is shown beside them, for information.
first_step   seconds from the process start to the end of the first train step, with the
             persistent compilation cache cold (a fresh XDG_CACHE_HOME) and then warm (the same
             directory again).
accuracy     seconds and epochs until the digits MLP reaches the target test accuracy (evaluated
             after every epoch): `train`, the hand loop, and an eager PyTorch loop on the same
             arrays, batch order and initial parameters (bench/peers/train_loop_torch.py).
full         the bundled configs' full runs over several seeds: test accuracy against the
             acceptance targets.

How each figure is measured is written into the report itself (`METHOD` below). Stdlib only;
the peers run under the project's interpreter (`.venv/bin/python`, or BENCH_PURENN_PYTHON) and
bench/.venv-torch (BENCH_TORCH_PYTHON; `bash bench/setup_oracles.sh torch`).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)
if BENCH_DIR not in sys.path:
    sys.path.insert(0, BENCH_DIR)

import run as bench_run  # noqa: E402  (machine description, git revision, load average)

PARTS = ("throughput", "first_step", "accuracy", "full")
CONFIGS = {"mlp": "configs/digits_mlp.yaml", "convnet": "configs/digits_convnet.yaml"}
TARGETS = {"steps_ratio": 0.97, "rss_ratio": 1.1, "accuracy": {"mlp": 0.97, "convnet": 0.985}}
SECTION_TITLE = "## Trainer (issue 14)"
BEGIN = "<!-- bench/trainer.py: begin (this section is replaced when bench/trainer.py runs again) -->"
END = "<!-- bench/trainer.py: end -->"


def purenn_python():
    return os.environ.get("BENCH_PURENN_PYTHON", os.path.join(REPO_ROOT, ".venv", "bin", "python"))


def torch_python():
    return os.environ.get("BENCH_TORCH_PYTHON", os.path.join(BENCH_DIR, ".venv-torch", "bin", "python"))


# ----- one process -------------------------------------------------------------------------------

def launch(cmd, *, env=None, drop_env=(), timeout=900.0):
    """Run `cmd` (cwd: the repository root) to its end and return what it did: `rc`, `lines`
    (each stdout line as `(t, text, cpu)`: the seconds since the launch at which the runner read
    it, and the process's CPU seconds so far, all threads, from /proc), `stderr`, `wall` seconds,
    `cpu` seconds in all, and `maxrss_kb`, the peak resident memory of that one process
    (os.wait4's rusage, so no other child counts)."""
    full_env = dict(os.environ)
    for k in drop_env:
        full_env.pop(k, None)
    full_env.update(env or {})
    lines = []
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=full_env, stdout=subprocess.PIPE, stderr=err)
        except OSError as e:
            return {"rc": None, "lines": [], "stderr": f"could not start {cmd[0]}: {e}", "wall": 0.0,
                    "cpu": None, "maxrss_kb": None}

        def read():
            for raw in iter(proc.stdout.readline, b""):
                t = time.perf_counter() - t0
                lines.append((t, raw.decode("utf-8", "replace").rstrip("\n"), cpu_seconds(proc.pid)))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        reader.join(10)
        proc.stdout.close()
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    rc = proc.returncode
    if rc < 0 and wall >= timeout:
        stderr += f"\ntimed out after {timeout:g} s"
    return {"rc": rc, "lines": lines, "stderr": stderr, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "maxrss_kb": usage.ru_maxrss}


def cpu_seconds(pid):
    """User + system CPU seconds of process `pid` so far (all its threads), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime, stime: fields 14, 15
    except (OSError, ValueError, IndexError):
        return None


def last_json(lines):
    for _, line, _ in reversed(lines):
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                return obj
    return None


def failure(proc, what):
    tail = (proc["stderr"].strip().splitlines() or [l for _, l, _ in proc["lines"]] or ["no output"])[-1]
    return {"ok": False, "error": f"{what}: exit {proc['rc']}: {bench_run._short(tail, 200)}"}


def read_jsonl(workdir):
    path = os.path.join(workdir, "metrics.jsonl")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


class Scratch:
    """Temporary workdirs and cache directories for one benchmark run, removed at the end."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="purenn-trainer-bench-")
        self.count = 0

    def new(self, name):
        self.count += 1
        path = os.path.join(self.root, f"{self.count:03d}-{name}")
        os.makedirs(path)
        return path

    def close(self):
        shutil.rmtree(self.root, ignore_errors=True)


def run_trainer(scratch, config, overrides, *, cache_dir, timeout):
    """`python -m train CONFIG OVERRIDES` in a fresh workdir, XDG_CACHE_HOME=cache_dir."""
    workdir = scratch.new("train")
    cmd = [purenn_python(), "-m", "train", config, *overrides, "--workdir", workdir, "--resume", "never"]
    proc = launch(cmd, env={"PYTHONPATH": REPO_ROOT, "XDG_CACHE_HOME": cache_dir}, timeout=timeout)
    if proc["rc"] != 0:
        return failure(proc, "train"), proc, []
    return {"ok": True}, proc, read_jsonl(workdir)


def run_loop(mode, config, args, *, timeout):
    cmd = [purenn_python(), os.path.join(BENCH_DIR, "peers", "train_loop_purenn.py"), mode, config, *args]
    proc = launch(cmd, env={"PYTHONPATH": REPO_ROOT}, timeout=timeout)
    res = last_json(proc["lines"])
    if proc["rc"] != 0 or not res or not res.get("ok"):
        return (res if res and res.get("error") else failure(proc, f"loop {mode}")), proc
    return res, proc


# ----- part 1: steady-state steps/s and peak memory -------------------------------------------------

CPU_FROM = 50   # CPU time per step is taken over steps 51..N (train's first progress line is at step 50)
_PROGRESS_LINE = re.compile(r"^step\s+(\d+)/(\d+) \|")


def progress_window(lines, start, end):
    """Steps/s and CPU milliseconds per step between `train`'s progress lines for steps `start`
    and `end` (when the runner read each line, and the process's CPU time then), or None."""
    at = {}
    for t, line, cpu in lines:
        m = _PROGRESS_LINE.match(line)
        if m and int(m.group(1)) in (start, end) and cpu is not None:
            at[int(m.group(1))] = (t, cpu)
    if start not in at or end not in at or at[end][0] <= at[start][0]:
        return None
    n = end - start
    return {"steps_per_second": n / (at[end][0] - at[start][0]),
            "cpu_ms_per_step": 1e3 * (at[end][1] - at[start][1]) / n}


def throughput_round(scratch, name, steps, order, timeout):
    """One round for one config: each peer once, in `order`. Returns {peer: result}."""
    config = CONFIGS[name]
    out = {}
    for peer in order:
        load1 = bench_run._load1()
        if peer == "loop":
            res, proc = run_loop("throughput", config, ["--steps", str(steps)], timeout=timeout)
            if res.get("ok"):
                res = {"ok": True, "steps_per_second": res["steps_per_second"],
                       "window_steps_per_second": res["window_steps_per_second"],
                       "cpu_ms_per_step": res["cpu_ms_per_step"], "time_to_first_step": res["time_to_first_step"]}
        else:
            # a cold cache for every run, so that `train` compiles as the loop does (peak memory
            # counts the compiler); `train+eval` keeps the bundled per-epoch validation
            overrides = [f"run.steps={steps}"]
            if peer == "train":
                overrides += [f"eval.every={steps}", "eval.at_end=false"]
            res, proc, records = run_trainer(scratch, config, overrides, cache_dir=scratch.new("cache"),
                                             timeout=timeout)
            if res.get("ok"):
                last = [r for r in records if "steps_per_second" in r and r["step"] == steps]
                first = [r for r in records if "time_to_first_step" in r]
                window = progress_window(proc["lines"], CPU_FROM, steps)
                if not last or not window:
                    res = {"ok": False, "error": f"no steps_per_second record at step {steps} in metrics.jsonl, or "
                                                 f"no progress lines for steps {CPU_FROM} and {steps}"}
                else:
                    res = {"ok": True, "steps_per_second": last[-1]["steps_per_second"],
                           "time_to_first_step": first[0]["time_to_first_step"] if first else None,
                           "compile_seconds": first[0].get("compile_seconds") if first else None,
                           "cpu_ms_per_step": window and window["cpu_ms_per_step"],
                           "window_steps_per_second": window and window["steps_per_second"]}
        res.update(maxrss_kb=proc["maxrss_kb"], wall=proc["wall"], load1_before=load1)
        out[peer] = res
        log(f"throughput {name} {peer}: " + (f"{f_num(res.get('window_steps_per_second'))} steps/s (51..N), "
                                             f"{f_num(res.get('cpu_ms_per_step'), 3)} CPU ms/step, "
                                             f"{res['maxrss_kb'] / 1024:.0f} MiB" if res.get("ok")
                                             else f"FAILED {res['error']}"))
    return out


# ----- part 2: time to the first step, cold and warm cache ---------------------------------------------

def first_step_round(scratch, name, timeout):
    cache = scratch.new("cache")
    out = {}
    for state in ("cold", "warm"):
        load1 = bench_run._load1()
        res, proc, records = run_trainer(scratch, CONFIGS[name], ["run.steps=1", "eval.at_end=false"],
                                         cache_dir=cache, timeout=timeout)
        if res.get("ok"):
            first = [r for r in records if "time_to_first_step" in r]
            if not first:
                res = {"ok": False, "error": "no time_to_first_step record in metrics.jsonl"}
            else:
                res = {"ok": True, "time_to_first_step": first[0]["time_to_first_step"],
                       "compile_seconds": first[0]["compile_seconds"],
                       # when the runner read "compiling the train step ...": import, data and
                       # set-up done, measured from outside
                       "to_compile_line": next((t for t, l, _ in proc["lines"] if l.startswith("compiling")), None)}
        res.update(maxrss_kb=proc["maxrss_kb"], wall=proc["wall"], load1_before=load1)
        out[state] = res
        log(f"first_step {name} {state}: " + (f"{res['time_to_first_step']:.2f} s to the first step "
                                              f"(compile {res['compile_seconds']:.2f} s)" if res.get("ok")
                                              else f"FAILED {res['error']}"))
    return out


# ----- part 3: time to the target test accuracy ---------------------------------------------------------

_TRAIN_EVAL_LINE = re.compile(r"^step (\d+): test: .*\baccuracy ([0-9.]+)")
_TRAIN_START_LINE = re.compile(r"^training: .*; (\d+) steps on")


def parse_trainer_accuracy(lines, records, epochs):
    """(seconds since launch of the "training:" line, [(epoch, accuracy, seconds since launch)])
    from `train`'s stdout with eval.split=test; accuracies come from metrics.jsonl (exact), the
    times from the stdout line that announced each evaluation."""
    ready, total, evals = None, None, []
    exact = {r["step"]: r["eval/accuracy"] for r in records if "eval/accuracy" in r}
    for t, line, _ in lines:
        m = _TRAIN_START_LINE.match(line)
        if m and ready is None:
            ready, total = t, int(m.group(1))
            continue
        m = _TRAIN_EVAL_LINE.match(line)
        if m:
            step = int(m.group(1))
            evals.append((step, exact.get(step, float(m.group(2))), t))
    if total is None:
        raise ValueError("no 'training: ... N steps on' line in train's output")
    per_epoch = total // epochs
    return ready, [(-(-step // per_epoch), acc, t) for step, acc, t in evals]


_PEER_EPOCH_LINE = re.compile(r"^epoch (\d+) test_accuracy ([0-9.]+)")


def parse_peer_accuracy(lines):
    ready = next((t for t, l, _ in lines if l == "ready"), None)
    evals = []
    for t, line, _ in lines:
        m = _PEER_EPOCH_LINE.match(line)
        if m:
            evals.append((int(m.group(1)), float(m.group(2)), t))
    return ready, evals


def time_to_target(ready, evals, target):
    for epoch, acc, t in evals:
        if acc >= target:
            return {"epochs": epoch, "seconds_from_start": t, "seconds_from_ready": t - ready}
    return None


def accuracy_round(scratch, npz, peers, target, timeout):
    config, epochs = CONFIGS["mlp"], 20
    out = {}
    for peer in peers:
        load1 = bench_run._load1()
        try:
            if peer == "train":
                res, proc, records = run_trainer(scratch, config, ["eval.split=test", "eval.at_end=false"],
                                                 cache_dir=scratch.new("cache"), timeout=timeout)
                if res.get("ok"):
                    ready, evals = parse_trainer_accuracy(proc["lines"], records, epochs)
            elif peer == "loop":
                res, proc = run_loop("accuracy", config, ["--target", str(target)], timeout=timeout)
                if res.get("ok"):
                    ready, evals = parse_peer_accuracy(proc["lines"])
            else:
                threads = peer.split("-")[1]
                cmd = [torch_python(), os.path.join(BENCH_DIR, "peers", "train_loop_torch.py"), npz,
                       "--threads", threads, "--target", str(target)]
                proc = launch(cmd, drop_env=("PYTHONPATH",), timeout=timeout)
                res = last_json(proc["lines"])
                if proc["rc"] != 0 or not res or not res.get("ok"):
                    res = res if res and res.get("error") else failure(proc, peer)
                else:
                    version = f"{res.get('torch')}, {res.get('threads')} thread(s)"
                    ready, evals = parse_peer_accuracy(proc["lines"])
            if res.get("ok"):
                if ready is None or not evals:
                    raise ValueError(f"{peer}: no 'ready' line or no evaluations in its output")
                reached = time_to_target(ready, evals, target)
                res = {"ok": True, "reached": reached, "final_accuracy": evals[-1][1], "epochs_run": len(evals),
                       "accuracies": [a for _, a, _ in evals]}
                if peer.startswith("torch"):
                    res["version"] = version
        except ValueError as e:
            res = {"ok": False, "error": str(e)}
        res.update(maxrss_kb=proc["maxrss_kb"], wall=proc["wall"], load1_before=load1)
        out[peer] = res
        if res.get("ok") and res["reached"]:
            r = res["reached"]
            log(f"accuracy {peer}: {target:.0%} after {r['epochs']} epochs, {r['seconds_from_start']:.1f} s from "
                f"the start ({r['seconds_from_ready']:.1f} s from ready)")
        else:
            log(f"accuracy {peer}: " + ("target not reached" if res.get("ok") else f"FAILED {res['error']}"))
    return out


def export_digits(scratch, timeout):
    npz = os.path.join(scratch.new("data"), "digits_mlp.npz")
    res, _ = run_loop("export", CONFIGS["mlp"], ["--out", npz], timeout=timeout)
    if not res.get("ok"):
        raise RuntimeError(f"exporting the digits arrays for the torch peer failed: {res.get('error')}")
    return npz


# ----- part 4: full runs of the bundled configs ---------------------------------------------------------

def full_run(scratch, name, seed, cache_dir, timeout):
    load1 = bench_run._load1()
    res, proc, records = run_trainer(scratch, CONFIGS[name], ["--seed", str(seed)], cache_dir=cache_dir,
                                     timeout=timeout)
    if res.get("ok"):
        test = [r["test/accuracy"] for r in records if "test/accuracy" in r]
        val = [r["eval/accuracy"] for r in records if "eval/accuracy" in r]
        res = {"ok": True, "test_accuracy": test[-1] if test else None, "validation_accuracy": val[-1] if val else None,
               "steps": max(r["step"] for r in records)}
    res.update(wall=proc["wall"], cpu=proc["cpu"], load1_before=load1, seed=seed)
    log(f"full {name} seed {seed}: " + (f"test accuracy {res['test_accuracy']:.4f}" if res.get("ok")
                                        else f"FAILED {res['error']}"))
    return res


# ----- aggregation and the report ------------------------------------------------------------------

def values(results, key):
    return [r[key] for r in results if r.get("ok") and r.get(key) is not None]


def med(xs):
    return statistics.median(xs) if xs else None


def spread(xs):
    """(max - min) / median of the rounds, as a percentage: how much the rounds disagree."""
    return 100.0 * (max(xs) - min(xs)) / statistics.median(xs) if len(xs) > 1 and statistics.median(xs) else None


def f_num(v, digits=1):
    return "—" if v is None else f"{v:.{digits}f}"


def f_range(xs, digits=1):
    return "—" if not xs else f"{min(xs):.{digits}f} – {max(xs):.{digits}f}"


def f_pct(v):
    return "—" if v is None else f"{v:.0f} %"


def verdict(ok):
    return "—" if ok is None else ("**met**" if ok else "**missed**")


def failures(results):
    errs = [r["error"] for r in results if not r.get("ok")]
    return f"{len(errs)} failed: {bench_run._short(errs[0], 120)}" if errs else ""


METHOD = {
    "throughput": (
        "Each round runs, in a rotating order, `train CONFIG run.steps=N eval.every=N eval.at_end=false` "
        "(default logging every 50 steps to TensorBoard, metrics.jsonl and progress lines, checkpoints "
        "every 500 steps, prefetch 2; the evaluation at step N comes after the last rate is taken), "
        "`train CONFIG run.steps=N` (the bundled per-epoch validation; for information), and "
        "`bench/peers/train_loop_purenn.py throughput CONFIG --steps N`. The first step (which compiles) "
        "never counts. Steps/s over steps 51..N, the headline: for `train` between the moments the runner "
        "receives its progress lines for steps 50 and N (each printed once that step's metrics are on the "
        "host), for the loop from `block_until_ready` after step 50 to `block_until_ready` on the last "
        "state. This leaves out one more one-time cost of `train`: at step 50 it traces and compiles the "
        "small program that stacks the interval's metrics (~0.1 s, up to ~0.4 s under load). Steps/s over "
        "steps 2..N, which includes it, is `train`'s own `steps_per_second` at step N in metrics.jsonl and "
        "the loop's timing of the same span. Because wall-clock rates on this shared machine swing by up "
        "to 2x from one process to the next, the process's CPU time per step (all threads) over steps "
        "51..N is shown too (for `train` read from /proc when the runner receives those two progress "
        "lines, for the loop with `time.process_time()`). For the MLP it repeats within ~10 % across "
        "rounds, so its ratio (loop CPU / `train` CPU) is the steadier estimate of the throughput ratio on "
        "an idle machine; for the convnet it spreads ~20 % (XLA runs the convolutions on a thread pool "
        "whose spin-waiting grows with the load). It charges the prefetch thread's work to `train`, "
        "though that thread overlaps the step when a core is free. Every `train` run gets an empty compilation cache, so it compiles as the "
        "loop does and peak memory compares like with like; peak memory is the process's own "
        "`ru_maxrss` (os.wait4). Ratios are of the medians over rounds."),
    "first_step": (
        "`train CONFIG run.steps=1 eval.at_end=false` twice in a fresh `XDG_CACHE_HOME`: cold (empty "
        "cache), then warm (the cache the cold run filled). `time_to_first_step` is the trainer's own "
        "record in metrics.jsonl (seconds since the process started, from /proc, to the end of the first "
        "step: interpreter and imports, data, model, init, trace, compile or cache load, the step), "
        "`compile_seconds` the first step call alone. \"Set-up seen from outside\" is when the runner read "
        "the line `compiling the train step ...` (everything before the first step call). The hand loop's "
        "time to its first step (no persistent cache) comes from the throughput part."),
    "accuracy": (
        "The digits MLP (64-128-128-10, Adam 1e-3 with cosine decay over 20 epochs, batch 32, the trainer's "
        "split of 1,212 training and 450 test examples), evaluated on the test split after every epoch. "
        "All peers start from the same initial parameters and visit the batches in the same order (the "
        "arrays, the orders and the parameters are exported by `train_loop_purenn.py export` for PyTorch). "
        "`train configs/digits_mlp.yaml eval.split=test eval.at_end=false` with an empty compilation cache "
        "(so it compiles, like the hand loop); the hand loop (one jitted call over the test split per "
        "epoch); PyTorch 2.13 eager (`torch.set_num_threads` as named). Times are when the runner read the "
        "line reporting the first epoch at or above the target: from the process launch, and from the "
        "peer's `ready` line (`training: ...` for `train`), i.e. without imports and data loading but "
        "with compiling."),
    "full": (
        "The bundled configs as shipped, `train CONFIG --seed S`, test accuracy at the end (metrics.jsonl "
        "`test/accuracy`), against the issue's targets."),
}


def render(results, meta):
    m = meta["machine"]
    lines = [SECTION_TITLE, "", BEGIN, "",
             "Generated by `bench/trainer.py`; re-run it instead of editing (bench/README.md).", "",
             f"- **Command:** `{meta['command']}`",
             f"- **Date:** {meta['date']} (took {meta['duration_s']:.0f} s)",
             f"- **Machine:** {m['nproc']} CPUs, {m['cpu']}" + (f", {m['mem']} RAM" if m.get("mem") else "")
             + f", {m['os']}",
             f"- **Load average** (1/5/15 min) before: {meta['load_before']}; after: {meta['load_after']}; "
             f"1-min load before each measured process: median {f_num(meta['load_median'])}, "
             f"highest {f_num(meta['load_max'])}",
             f"- **purenn revision:** {meta['git']}; torch: {meta.get('torch') or 'not run'}",
             f"- **Rounds:** {meta['rounds']}, peers alternating in a rotating order, each run a fresh "
             "process; figure = median over rounds, range = min – max over rounds",
             ""]
    if meta["load_max"] and meta["load_max"] > (m.get("nproc_usable") or m["nproc"]):
        lines += [f"> **Noise:** the 1-minute load reached {meta['load_max']:.1f} on {m['nproc']} CPUs: other "
                  "work competed for the CPUs throughout. Read the ratios (peers measured in the same rounds), "
                  "not the absolute numbers, and mind the spread columns.", ""]
    if "throughput" in results:
        lines += render_throughput(results["throughput"], meta)
    if "first_step" in results:
        lines += render_first_step(results["first_step"], results.get("throughput"))
    if "accuracy" in results:
        lines += render_accuracy(results["accuracy"], meta)
    if "full" in results:
        lines += render_full(results["full"])
    lines += [END, ""]
    return "\n".join(lines)


def render_throughput(res, meta):
    lines = ["### Steady-state steps/s and peak memory: `train` against a hand-written jitted loop", "",
             METHOD["throughput"], "",
             "| config | steps | peer | steps/s 51..N (median) | range | spread | vs loop | steps/s 2..N | vs loop "
             "| CPU ms/step (median) | range | vs loop (loop / peer) | peak RSS, MiB | vs loop | note |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    verdicts = []
    names = {"train": "`train`", "loop": "hand loop", "train+eval": "`train`, per-epoch validation"}
    for name, per_round in res.items():
        by_peer = {p: [r[p] for r in per_round if p in r] for p in ("train", "loop", "train+eval")}
        keys = ("window_steps_per_second", "steps_per_second", "cpu_ms_per_step", "maxrss_kb")
        loop = {k: med(values(by_peer["loop"], k)) for k in keys}
        for peer in ("train", "loop", "train+eval"):
            rs = by_peer[peer]
            win, sps, cpu, rss = (values(rs, k) for k in keys)
            ratio = {k: (med(xs) / loop[k] if xs and loop[k] else None) for k, xs in zip(keys, (win, sps, cpu, rss))}
            if ratio["cpu_ms_per_step"]:
                ratio["cpu_ms_per_step"] = 1 / ratio["cpu_ms_per_step"]       # loop CPU / peer CPU
            r = {k: ("1" if peer == "loop" else f_num(v, 3)) for k, v in ratio.items()}
            lines.append(f"| {name} | {meta['steps'][name]} | {names[peer]} | {f_num(med(win))} | {f_range(win)} | "
                         f"{f_pct(spread(win))} | {r['window_steps_per_second']} | {f_num(med(sps))} | "
                         f"{r['steps_per_second']} | {f_num(med(cpu), 3)} | {f_range(cpu, 3)} | "
                         f"{r['cpu_ms_per_step']} | {f_num(med(rss) / 1024 if rss else None, 0)} | "
                         f"{r['maxrss_kb']} | {failures(rs)} |")
            if peer == "train":
                verdicts.append((name, ratio))
    lines += ["", "Targets (issue 14): `train` at least "
              f"{TARGETS['steps_ratio']:.0%} of the loop's steps/s, peak memory at most "
              f"{TARGETS['rss_ratio']:g}x the loop's.", ""]
    for name, ratio in verdicts:
        ok = (lambda r: None if r is None else r >= TARGETS["steps_ratio"])
        win, sps, cpu, rss = (ratio[k] for k in ("window_steps_per_second", "steps_per_second", "cpu_ms_per_step",
                                                  "maxrss_kb"))
        lines.append(f"- {name}: steps/s {f_num(win, 3)} of the loop's over steps 51..N {verdict(ok(win))} "
                     f"({f_num(sps, 3)} over steps 2..N; from CPU time per step: {f_num(cpu, 3)} {verdict(ok(cpu))}); "
                     f"peak memory {f_num(rss, 3)}x the loop's "
                     f"{verdict(None if rss is None else rss <= TARGETS['rss_ratio'])}")
    return lines + [""]


def render_first_step(res, throughput):
    lines = ["### Time to the first step: compilation cache cold and warm", "", METHOD["first_step"], "",
             "| config | cache | time to first step, s (median) | range | compile_seconds (median) | "
             "set-up seen from outside, s | peak RSS (MiB) | note |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, per_round in res.items():
        for state in ("cold", "warm"):
            rs = [r[state] for r in per_round if state in r]
            ttfs = values(rs, "time_to_first_step")
            rss = values(rs, "maxrss_kb")
            lines.append(f"| {name} | {state} | {f_num(med(ttfs), 2)} | {f_range(ttfs, 2)} | "
                         f"{f_num(med(values(rs, 'compile_seconds')), 2)} | "
                         f"{f_num(med(values(rs, 'to_compile_line')), 2)} | "
                         f"{f_num(med(rss) / 1024 if rss else None, 0)} | {failures(rs)} |")
        if throughput and name in throughput:
            loop = [r["loop"] for r in throughput[name] if "loop" in r]
            ttfs = values(loop, "time_to_first_step")
            lines.append(f"| {name} | hand loop, no cache | {f_num(med(ttfs), 2)} | {f_range(ttfs, 2)} | — | — | — | |")
    return lines + [""]


def render_accuracy(res, meta):
    target = meta["target"]
    lines = [f"### Time to {target:.0%} test accuracy: digits MLP, `train` against a hand loop and PyTorch", "",
             METHOD["accuracy"], "",
             f"| peer | epochs to {target:.0%} (per round) | s from launch (median) | range | "
             "s from ready (median) | range | test accuracy after 20 epochs | note |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    names = {"train": "`train`", "loop": "hand jitted loop"}
    for peer in meta["accuracy_peers"]:
        rs = [r[peer] for r in res if peer in r]
        ok = [r for r in rs if r.get("ok")]
        reached = [r["reached"] for r in ok if r["reached"]]
        start = [x["seconds_from_start"] for x in reached]
        ready = [x["seconds_from_ready"] for x in reached]
        epochs = ", ".join(str(r["reached"]["epochs"]) if r["reached"] else "never" for r in ok)
        final = med([r["final_accuracy"] for r in ok])
        shown = names.get(peer) or f"PyTorch eager, {peer.split('-')[1]} thread(s)"
        lines.append(f"| {shown} | {epochs or '—'} | {f_num(med(start), 2)} | {f_range(start, 2)} | "
                     f"{f_num(med(ready), 2)} | {f_range(ready, 2)} | {f_num(final, 4)} | {failures(rs)} |")
    return lines + [""]


def render_full(res):
    lines = ["### Full runs of the bundled configs", "", METHOD["full"], "",
             "| config | target | seed | test accuracy | validation accuracy | steps | wall, s | |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, runs in res.items():
        target = TARGETS["accuracy"][name]
        for r in runs:
            if r.get("ok"):
                lines.append(f"| {CONFIGS[name]} | {target:.1%} | {r['seed']} | {r['test_accuracy']:.4f} | "
                             f"{f_num(r['validation_accuracy'], 4)} | {r['steps']} | {r['wall']:.1f} | "
                             f"{verdict(r['test_accuracy'] >= target)} |")
            else:
                lines.append(f"| {CONFIGS[name]} | {target:.1%} | {r['seed']} | failed | | | | {r['error']} |")
    return lines + [""]


def write_section(path, section):
    """Put `section` into the file at `path`: replace the previous one (between BEGIN and END,
    from its title on), or append it. In a bench/run.py results file the section goes below
    run.py's notes marker, which is added before it if missing, so a run.py re-run keeps it."""
    try:
        with open(path, encoding="utf-8") as f:
            old = f.read()
    except FileNotFoundError:
        old = ""
    begin, end = old.find(BEGIN), old.find(END)
    if begin >= 0 and end > begin:
        title = old.rfind(SECTION_TITLE, 0, begin)
        start = title if title >= 0 else begin
        new = old[:start] + section.rstrip("\n") + old[end + len(END):]
    else:
        new = old.rstrip("\n")
        if new and "Generated by `bench/run.py`" in new and bench_run.NOTES_MARKER not in new:
            new += "\n\n" + bench_run.NOTES_MARKER
        new = (new + "\n\n" if new else "") + section
    if not new.endswith("\n"):
        new += "\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)


# ----- main -------------------------------------------------------------------------------------------

def log(msg):
    print(f"[trainer-bench] {msg}", file=sys.stderr, flush=True)


def rotate(items, r):
    r %= len(items)
    return items[r:] + items[:r]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="rounds per part (default 3)")
    ap.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS), help="parts to run (default all)")
    ap.add_argument("--out", default=os.path.join("bench", "RESULTS.md"),
                    help="file whose 'Trainer (issue 14)' section is written (default bench/RESULTS.md)")
    ap.add_argument("--json", metavar="PATH", help="also write every raw result as JSON")
    ap.add_argument("--configs", nargs="+", choices=list(CONFIGS), default=list(CONFIGS),
                    help="configs of the throughput, first_step and full parts (default both)")
    ap.add_argument("--mlp-steps", type=int, default=3000, help="run.steps for the MLP throughput runs")
    ap.add_argument("--convnet-steps", type=int, default=1500, help="run.steps for the convnet throughput runs")
    ap.add_argument("--target", type=float, default=0.97, help="test accuracy for the accuracy part (default 0.97)")
    ap.add_argument("--torch-threads", type=int, nargs="*", default=[2, 1],
                    help="PyTorch thread counts to run in the accuracy part (default 2 1; none: no torch)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="seeds of the full runs")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before one process is killed")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    if not os.access(purenn_python(), os.X_OK):
        ap.error(f"the project's interpreter {purenn_python()} is missing (set BENCH_PURENN_PYTHON)")
    torch_peers = [f"torch-{n}" for n in args.torch_threads]
    if "accuracy" in args.only and torch_peers and not os.access(torch_python(), os.X_OK):
        log(f"torch: {torch_python()} missing, skipped; run `bash bench/setup_oracles.sh torch`")
        torch_peers = []

    env = [f"{k}={shlex.quote(os.environ[k])}" for k in ("BENCH_PURENN_PYTHON", "BENCH_TORCH_PYTHON") if k in os.environ]
    command = shlex.join(getattr(sys, "orig_argv", [sys.executable, *sys.argv]))
    command = " ".join(env + [command])
    t_start, load_before = time.perf_counter(), bench_run.loadavg()
    scratch = Scratch()
    results = {}
    steps = {"mlp": args.mlp_steps, "convnet": args.convnet_steps}
    accuracy_peers = ["train", "loop"] + torch_peers
    try:
        if "throughput" in args.only:
            results["throughput"] = {name: [] for name in args.configs}
            for r in range(args.rounds):
                for name in args.configs:
                    order = rotate(["train", "loop", "train+eval"], r)
                    results["throughput"][name].append(throughput_round(scratch, name, steps[name], order,
                                                                        args.timeout))
        if "first_step" in args.only:
            results["first_step"] = {name: [first_step_round(scratch, name, args.timeout)
                                            for _ in range(args.rounds)] for name in args.configs}
        if "accuracy" in args.only:
            npz = export_digits(scratch, args.timeout) if torch_peers else None
            results["accuracy"] = [accuracy_round(scratch, npz, rotate(accuracy_peers, r), args.target, args.timeout)
                                   for r in range(args.rounds)]
        if "full" in args.only:
            cache = scratch.new("cache")
            results["full"] = {name: [full_run(scratch, name, s, cache, args.timeout) for s in args.seeds]
                               for name in args.configs}
    finally:
        scratch.close()

    loads = [r["load1_before"] for r in _all_results(results)]
    meta = {"command": command, "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
            "duration_s": time.perf_counter() - t_start, "machine": bench_run.machine_info(),
            "load_before": load_before, "load_after": bench_run.loadavg(), "load_median": med(loads),
            "load_max": max(loads) if loads else None, "git": bench_run.git_rev(), "rounds": args.rounds,
            "steps": steps, "target": args.target, "accuracy_peers": accuracy_peers,
            "torch": _torch_version(results)}
    write_section(args.out, render(results, meta))
    log(f"wrote the section '{SECTION_TITLE[3:]}' of {args.out}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
        log(f"wrote {args.json}")
    return 0


def _all_results(results):
    """Every per-process result dict, whatever part it came from."""
    def walk(x):
        if isinstance(x, dict) and "load1_before" in x:
            yield x
        elif isinstance(x, dict):
            for v in x.values():
                yield from walk(v)
        elif isinstance(x, list):
            for v in x:
                yield from walk(v)
    return list(walk(results))


def _torch_version(results):
    seen = sorted({r[k]["version"].split(",")[0] for r in results.get("accuracy", ()) for k in r
                   if k.startswith("torch") and r[k].get("version")})
    return ", ".join(seen) or None


if __name__ == "__main__":
    sys.exit(main())

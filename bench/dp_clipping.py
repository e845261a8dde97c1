"""Per-example clipping side by side (issue 15): purenn, jax, Opacus and torch.func, one process
per library per round, rounds alternating the order of the libraries.

The 784-512-512-10 ReLU MLP and the bench's convnet (Conv 32, Conv 64, MaxPool 2x2 stride 1, Dense
128, Dense 10 on 28x28x1; bench/peers/_dp_common.py), float32, batch 256, clip C = 1, CPU:
  (a) purenn non-private: the gradient of the batch's mean loss;
  (b) purenn vmap clipping: every per-example gradient by vmap(grad), clipped, summed;
  (c) purenn ghost clipping: ghost norms (the convnet: 'auto', Gram or materialized per layer),
      the clipped sum book-kept from the first pass, or by a second pullback;
  (d) jax 0.10.2, jax.vmap(jax.grad) clipping (and jax's non-private gradient as a reference);
  (e) Opacus with grad_sample_mode="ghost" and with its default hooks;
  (f) torch.func vmap(grad) clipping (and torch's non-private gradient as a reference).
Every variant stops at the clipped sum (no noise, no update); bench/peers/dp_*.py say exactly
what each step runs. The variants that materialize every per-example gradient ((b), (d), Opacus
hooks, (f)) need 6-12 GiB on the convnet at batch 256 (its Dense layer has 6M weights), too much
for a machine shared by several people, so on the convnet they run at a smaller batch
(--conv-small-batch, 64), beside every other variant at that batch as well.

    .venv/bin/python bench/dp_clipping.py [--models mlp,convnet] [--rounds 3] [--steps 5]
    .venv/bin/python bench/dp_clipping.py --fit-mib 512        # item: largest batch in a budget

torch runs with one OpenMP thread (--torch-threads): on a loaded 2-core machine its spinning
threads made two threads 5-20x slower than one; the XLA libraries use their own thread pools.

Per variant: each round's figure is the median of its timed steps; the table gives the median
and the best over rounds and the ratio to (a) of the same round (per round, then the median), so
a change of load between rounds hits numerator and denominator alike. Memory: "XLA" is the
compiled program's temp + argument + output buffers (`memory_stats()`, no run needed; purenn and
jax only); "RSS peak" is the most resident memory the timed steps added above what the process
held between steps (every library; bench/peers/_dp_common.py). `--fit-mib` finds, by bisection on
the compiled memory stats of purenn's (b) and (c) (nothing runs), the largest batch whose XLA
temp + argument + output memory fits the budget.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PEERS = os.path.join(HERE, "peers")
sys.path.insert(0, PEERS)

LABELS = {
    "purenn": {"a": "(a) purenn non-private", "b": "(b) purenn vmap clipping", "c_bk": "(c) purenn ghost, book-keeping",
               "c_2nd": "(c) purenn ghost, 2nd pullback"},
    "jax": {"ref": "jax non-private (ref.)", "d": "(d) jax vmap(grad) clipping"},
    "torch": {"ref": "torch non-private (ref.)", "e_ghost": "(e) Opacus ghost", "e_hooks": "(e) Opacus hooks",
              "f": "(f) torch.func vmap(grad) clipping"},
}
MATERIALIZING = {"purenn": ("b",), "jax": ("d",), "torch": ("e_hooks", "f")}


def interpreters():
    """The interpreters of the three libraries, overridable by BENCH_<LIB>_PYTHON as in bench/run.py."""
    def py(name, default):
        return os.environ.get(f"BENCH_{name.upper()}_PYTHON", default)
    return {"purenn": py("purenn", sys.executable),
            "jax": py("jax", os.path.join(HERE, ".venv-jax", "bin", "python")),
            "torch": py("torch", os.path.join(HERE, ".venv-torch", "bin", "python"))}


def run_worker(peer, python, model, batch, variants, steps, clip, timeout, torch_threads=None):
    env = dict(os.environ)
    if peer == "torch" and torch_threads:
        env["OMP_NUM_THREADS"] = str(torch_threads)
    if peer == "purenn":
        env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH", "")) if p)
    else:
        env.pop("PYTHONPATH", None)
        env["JAX_PLATFORMS"] = "cpu"
    cmd = [python, os.path.join(PEERS, f"dp_{peer}.py"), "--model", model, "--batch", str(batch), "--clip", str(clip),
           "--steps", str(steps), "--variants", ",".join(variants)]
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {v: {"ok": False, "error": f"timed out after {timeout} s"} for v in variants}
    for line in reversed(proc.stdout.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)["variants"]
    err = " ".join((proc.stderr or proc.stdout).split())[-300:]
    return {v: {"ok": False, "error": f"exit {proc.returncode}: {err}"} for v in variants}


def jobs_for(model, batch, small_batch, peers):
    """(batch, peer, variants) of one round for `model`."""
    jobs = []
    for b in (batch,) if model == "mlp" else (batch, small_batch):
        for peer in peers:
            keys = list(LABELS[peer])
            if model == "convnet" and b == batch and b > small_batch:
                keys = [k for k in keys if k not in MATERIALIZING[peer]]
            jobs.append((b, peer, keys))
    return jobs


def loadavg():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def mib(x):
    return "-" if x is None else f"{x / 2**20:,.1f}"


def report(model, batch, results, rounds):
    """Markdown table of one (model, batch): results[(peer, key)] = list of per-round records."""
    base = results.get(("purenn", "a"))
    lines = [f"**{model}, batch {batch}** ({rounds} rounds)", "",
             "| variant | median ms | best ms | x (a) per round | x (a) | XLA MiB (temp+arg+out) | RSS peak MiB | checksum |",
             "|---|---|---|---|---|---|---|---|"]
    for (peer, key), recs in results.items():
        ok = [r for r in recs if r.get("ok")]
        if not ok:
            err = next((r.get("error") for r in recs if r.get("error")), "not run")
            lines.append(f"| {LABELS[peer][key]} | failed: {err[:120]} | | | | | | |")
            continue
        per_round = [statistics.median(r["times"]) for r in ok]
        ratios = []
        if base is not None:
            for r, b in zip(recs, base):
                if r.get("ok") and b.get("ok"):
                    ratios.append(statistics.median(r["times"]) / statistics.median(b["times"]))
        xla = ok[0].get("xla")
        xla_s = "-" if not xla else f"{mib(xla['temp'] + xla['argument'] + xla['output'])} (temp {mib(xla['temp'])})"
        rss = [r["rss_peak"] for r in ok if r.get("rss_peak") is not None]
        lines.append(
            f"| {LABELS[peer][key]} | {statistics.median(per_round) * 1e3:,.1f} | {min(per_round) * 1e3:,.1f} | "
            f"{' '.join(f'{x:.2f}' for x in ratios)} | {statistics.median(ratios):.2f} | {xla_s} | "
            f"{mib(statistics.median(rss)) if rss else '-'} | {ok[0]['checksum']:.6g} |" if ratios else
            f"| {LABELS[peer][key]} | {statistics.median(per_round) * 1e3:,.1f} | {min(per_round) * 1e3:,.1f} | - | - | "
            f"{xla_s} | {mib(statistics.median(rss)) if rss else '-'} | {ok[0]['checksum']:.6g} |")
    return "\n".join(lines)


def side_by_side(args):
    py = interpreters()
    peers = [p for p in ("purenn", "jax", "torch") if p not in args.skip]
    for p in peers:
        if not os.path.exists(py[p]):
            sys.exit(f"dp_clipping: no interpreter for {p} at {py[p]}: run `bash bench/setup_oracles.sh`.")
    out = [f"Command: `{' '.join(['python', 'bench/dp_clipping.py'] + (args.argv or []))}`; "
           f"load average at start {loadavg()}, {os.cpu_count()} CPUs."]
    for model in args.models.split(","):
        jobs = jobs_for(model, args.batch, args.conv_small_batch, peers)
        results = {}
        for r in range(args.rounds):
            # rotate which library goes first, so none always runs on a warmer or quieter machine
            order = jobs[r % len(jobs):] + jobs[:r % len(jobs)]
            for b, peer, keys in order:
                t = time.time()
                got = run_worker(peer, py[peer], model, b, keys, args.steps, args.clip, args.timeout,
                                 args.torch_threads)
                print(f"[round {r + 1}] {model} batch {b} {peer}: {time.time() - t:.0f} s, load {loadavg()}",
                      file=sys.stderr)
                for k in keys:
                    results.setdefault(b, {}).setdefault((peer, k), []).append(got.get(k, {"ok": False}))
        for b in sorted(results, reverse=True):
            ordered = {pk: results[b][pk] for pk in sorted(results[b], key=lambda pk: LABELS[pk[0]][pk[1]])}
            out.append(report(model, b, ordered, args.rounds))
    out.append(f"Load average at end {loadavg()}.")
    text = "\n\n".join(out)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


# ----- the largest batch that fits a budget (compiled memory stats, nothing runs) --------------

def fit_batches(args):
    import numpy as np

    # this checkout's core (as the workers get it through PYTHONPATH), not the one an editable
    # install of another checkout puts on the path
    sys.path.insert(0, ROOT)
    import core
    import dp_purenn
    import _dp_common as common
    budget = args.fit_mib * 2**20
    lines = [f"Largest batch whose compiled XLA memory (temp + argument + output) fits {args.fit_mib} MiB "
             "(bisection on `memory_stats()` of purenn's jitted step; nothing runs):", "",
             "| model | variant | largest batch | MiB at that batch | x (b) |", "|---|---|---|---|---|"]
    for model in args.models.split(","):
        flat = [np.zeros(s, np.float32) for _, s in common.param_shapes(model)]
        params = dp_purenn.to_stax(model, flat)
        found = {}
        for key in ("b", "c_bk", "a"):
            fn = dp_purenn.step_fn(key, model, args.clip)

            def size(batch):
                # lowering needs arrays; zeros of the batch's shape (only their types matter)
                x = np.zeros((batch,) + common.example_shape(model), np.float32)
                y = np.zeros((batch, 10), np.float32)
                st = core.jit(fn).lower(params, x, y).compile().memory_stats()
                return st.temp_size_in_bytes + st.argument_size_in_bytes + st.output_size_in_bytes
            lo, hi = 0, 1
            cache = {}
            while True:   # grow until over budget
                cache[hi] = size(hi)
                if cache[hi] > budget:
                    break
                lo, hi = hi, hi * 2
            while hi - lo > max(1, lo // 64):   # to within ~1.5 %
                mid = (lo + hi) // 2
                cache[mid] = size(mid)
                lo, hi = (mid, hi) if cache[mid] <= budget else (lo, mid)
            found[key] = (lo, cache.get(lo))
            print(f"  {model} {key}: {lo} ({len(cache)} compiles)", file=sys.stderr)
        for key, (n, used) in found.items():
            ratio = n / found["b"][0] if found["b"][0] else float("inf")
            lines.append(f"| {model} | {LABELS['purenn'][key]} | {n:,} | {mib(used)} | {ratio:.1f} |")
    print("\n".join(lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="mlp,convnet")
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--conv-small-batch", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=5, help="timed steps per variant per round")
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--skip", default="", help="comma-separated libraries to leave out (purenn, jax, torch)")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--torch-threads", type=int, default=1,
                    help="torch's OpenMP threads (0: its default). Its threads spin at barriers: on 2 cores "
                         "shared with other work, 2 threads made its steps 5-20x slower than 1")
    ap.add_argument("--out", help="also write the tables to this file")
    ap.add_argument("--fit-mib", type=float, help="find the largest batch fitting this XLA budget instead")
    args = ap.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    args.skip = [s for s in args.skip.split(",") if s]
    if args.fit_mib:
        fit_batches(args)
    else:
        side_by_side(args)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Benchmark runner: purenn against its oracles (jax, torch), each in its own process.

    python bench/run.py [--rounds N] [--only NAME ...] [--peers P ...] [--out bench/RESULTS.md]

For every workload, the peers are run in alternating rounds
(purenn, jax, torch, purenn, jax, torch, ...), each run a fresh subprocess
under that peer's own interpreter:

    purenn  .venv/bin/python (repository root on sys.path)
    jax     bench/.venv-jax/bin/python
    torch   bench/.venv-torch/bin/python

Each subprocess reports the median of its own timed samples (one "round
median"); the figure quoted for a peer is the median of its round medians.
A peer whose interpreter is missing is skipped with a note; a peer that a
workload does not apply to (workloads.Workload.peers: e.g. torch for the jit
workloads) is not run and shown as "n/a"; a peer that fails
(import error, exception, timeout, garbage output) is recorded as
"failed: <error>" instead of stopping the run. Results go to a Markdown file
(default bench/RESULTS.md).

Stdlib only: it runs under any Python >= 3.9.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)
if BENCH_DIR not in sys.path:
    sys.path.insert(0, BENCH_DIR)

import workloads as W  # noqa: E402

BASELINE = "purenn"
PEER_ORDER = ("purenn", "jax", "torch")


@dataclass
class Peer:
    name: str
    python: str          # interpreter path
    script: str          # peer script path
    env: dict = field(default_factory=dict)      # extra environment variables
    drop_env: tuple = ()                         # variables removed from the env
    install_hint: str = ""

    def available(self) -> bool:
        return os.path.isfile(self.python) and os.access(self.python, os.X_OK)


def default_peers() -> dict:
    """The three peers, with interpreters overridable by BENCH_<PEER>_PYTHON."""
    def py(name, default):
        return os.environ.get(f"BENCH_{name.upper()}_PYTHON", default)

    peers_dir = os.path.join(BENCH_DIR, "peers")
    pythonpath = os.pathsep.join(
        p for p in (REPO_ROOT, os.environ.get("PYTHONPATH", "")) if p)
    return {
        "purenn": Peer(
            "purenn", py("purenn", os.path.join(REPO_ROOT, ".venv", "bin", "python")),
            os.path.join(peers_dir, "purenn_w.py"),
            env={"PYTHONPATH": pythonpath},
            install_hint="create the project venv (.venv) first",
        ),
        "jax": Peer(
            "jax", py("jax", os.path.join(BENCH_DIR, ".venv-jax", "bin", "python")),
            os.path.join(peers_dir, "jax_w.py"),
            env={"JAX_PLATFORMS": "cpu"}, drop_env=("PYTHONPATH",),
            install_hint="run `make bench-setup` (bash bench/setup_oracles.sh)",
        ),
        "torch": Peer(
            "torch", py("torch", os.path.join(BENCH_DIR, ".venv-torch", "bin", "python")),
            os.path.join(peers_dir, "torch_w.py"),
            drop_env=("PYTHONPATH",),
            install_hint="run `make bench-setup` (bash bench/setup_oracles.sh)",
        ),
    }


# --------------------------------------------------------------------------
# running one peer process

def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def parse_peer_output(stdout: str):
    """The last stdout line that parses as a JSON object, or None."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                return obj
    return None


def run_peer(peer: Peer, workload: str, timeout: float, extra_args=()) -> dict:
    """Run one peer process for one workload; always returns a result dict.

    Success: {"ok": True, "value": ..., ...the peer's JSON...}
    Failure: {"ok": False, "error": "..."}
    """
    env = dict(os.environ)
    for k in peer.drop_env:
        env.pop(k, None)
    env.update(peer.env)
    # The workload's own variables last: they must win (e.g. the device count,
    # which the library reads once at import).
    wl = W.WORKLOADS.get(workload)
    if wl is not None:
        env.update(wl.env)
    cmd = [peer.python, peer.script, workload, *extra_args]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"timed out after {timeout:g} s"}
    except OSError as e:
        return {"ok": False, "error": f"could not start {peer.python}: {e}"}
    wall = time.perf_counter() - t0

    obj = parse_peer_output(proc.stdout)
    if obj is None:
        tail = (proc.stderr.strip().splitlines() or proc.stdout.strip().splitlines()
                or ["no output"])[-1]
        return {"ok": False,
                "error": f"exit {proc.returncode}, no JSON result: {_short(tail)}"}
    obj["process_wall_s"] = wall
    if obj.get("ok") and isinstance(obj.get("value"), (int, float)):
        return obj
    obj["ok"] = False
    obj["error"] = _short(obj.get("error") or f"exit {proc.returncode}")
    return obj


# --------------------------------------------------------------------------
# aggregation

@dataclass
class PeerSummary:
    peer: str
    status: str                 # "ok", "failed", "skipped", "n/a"
    note: str = ""
    median: float | None = None
    lo: float | None = None     # min of round medians
    hi: float | None = None     # max of round medians
    rounds_ok: int = 0
    rounds: int = 0
    round_values: list = field(default_factory=list)
    versions: dict = field(default_factory=dict)
    checksum: float | None = None


def summarize(peer: str, runs: list) -> PeerSummary:
    """Median of per-round medians, or the first failure if no round succeeded."""
    ok = [r for r in runs if r.get("ok")]
    s = PeerSummary(peer=peer, status="ok", rounds=len(runs), rounds_ok=len(ok))
    if not ok:
        s.status = "failed"
        errs = [r.get("error", "unknown error") for r in runs]
        s.note = errs[0] if errs else "no runs"
        return s
    vals = [float(r["value"]) for r in ok]
    s.round_values = vals
    s.median = statistics.median(vals)
    s.lo, s.hi = min(vals), max(vals)
    s.versions = ok[-1].get("versions") or {}
    sums = [r["checksum"] for r in ok if isinstance(r.get("checksum"), (int, float))]
    s.checksum = sums[-1] if sums else None
    if len(ok) < len(runs):
        bad = [r.get("error", "?") for r in runs if not r.get("ok")]
        s.note = f"{len(runs) - len(ok)} round(s) failed: {_short(bad[0], 120)}"
    return s


def ratio(a: PeerSummary | None, b: PeerSummary | None):
    if a is None or b is None or a.median is None or b.median is None or b.median == 0:
        return None
    return a.median / b.median


def checksum_note(summaries: dict, rel_tol: float = 1e-3) -> str:
    """Flag peers whose result checksum differs from the others' (not a test)."""
    sums = {p: s.checksum for p, s in summaries.items() if s.checksum is not None}
    if len(sums) < 2:
        return ""
    ref = statistics.median(sums.values())
    bad = [p for p, v in sums.items()
           if abs(v - ref) > rel_tol * max(abs(ref), 1e-12)]
    if bad:
        shown = ", ".join(f"{p}={v:.6g}" for p, v in sums.items())
        return (f"**checksum mismatch** ({', '.join(bad)} differ by more than "
                f"{rel_tol:g} relative): {shown}")
    return f"checksums agree (sum of |result|, {len(sums)} peers, rel. tol. {rel_tol:g})"


# --------------------------------------------------------------------------
# machine description

def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info() -> dict:
    info = {"cpu": cpu_model(), "nproc": os.cpu_count()}
    try:
        info["nproc_usable"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    kb = int(line.split()[1])
                    info["mem"] = f"{kb / 1024 / 1024:.1f} GiB"
                    break
    except (OSError, ValueError):
        pass
    info["os"] = f"{platform.system()} {platform.release()}"
    info["python"] = platform.python_version()
    return info


def git_rev() -> str:
    try:
        r = subprocess.run(["git", "-C", REPO_ROOT, "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True, timeout=10)
        rev = r.stdout.strip()
        if not rev:
            return "no commit yet"
        d = subprocess.run(["git", "-C", REPO_ROOT, "status", "--porcelain",
                            "--untracked-files=no"],
                           capture_output=True, text=True, timeout=10)
        return rev + (" (dirty)" if d.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def display_path(path: str) -> str:
    """Repository-relative path when inside the repository, else as given."""
    ap = os.path.abspath(path)
    if ap == REPO_ROOT or ap.startswith(REPO_ROOT + os.sep):
        return os.path.relpath(ap, REPO_ROOT)
    return path


def _load1() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0


def loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


# --------------------------------------------------------------------------
# report

def fmt(v, unit: str) -> str:
    if v is None:
        return "—"
    if unit == "GFLOP/s":
        return f"{v:.1f}"
    if v >= 100:
        return f"{v:.1f}"
    if v >= 10:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_ratio(r) -> str:
    return "—" if r is None else f"{r:.2f}×"


def status_cell(s: PeerSummary) -> str:
    if s.status == "skipped":
        return f"skipped: {s.note}"
    if s.status == "n/a":
        return f"n/a: {s.note}" if s.note else "n/a"
    if s.status == "failed":
        return f"failed: {s.note}"
    return ""


def versions_line(s: PeerSummary) -> str:
    keep = {k: v for k, v in s.versions.items() if k not in ("error",)}
    return ", ".join(f"{k} {v}" for k, v in keep.items()) or "—"


def load_warning(meta: dict) -> list:
    """A warning line when other work was competing for the CPUs."""
    nproc = meta["machine"].get("nproc_usable") or meta["machine"].get("nproc") or 1
    worst = meta.get("max_load1", 0.0)
    if worst > nproc:
        return ["", f"> **Warning:** the 1-minute load average reached {worst:.1f} "
                f"on {nproc} CPUs during this run: other processes were competing "
                "for the CPUs, so absolute numbers (and, less so, ratios) are "
                "unreliable. Re-run on a quieter machine before drawing conclusions."]
    return []


def render(results: dict, peers: list, meta: dict) -> str:
    """results: {workload: {peer: PeerSummary}} -> Markdown text."""
    m = meta["machine"]
    lines = [
        "# purenn benchmark results",
        "",
        "Generated by `bench/run.py`; do not edit by hand, re-run instead "
        "(see bench/README.md).",
        "",
        f"- **Command:** `{meta['command']}` (in `{meta['cwd']}`)",
        f"- **Date:** {meta['date']} (took {meta['duration_s']:.0f} s)",
        f"- **Machine:** {m['nproc']} CPUs"
        + (f" ({m['nproc_usable']} usable)" if m.get("nproc_usable") not in
           (None, m["nproc"]) else "")
        + f", {m['cpu']}"
        + (f", {m['mem']} RAM" if m.get("mem") else "")
        + f", {m['os']}",
        f"- **Load average** (1/5/15 min) before: {meta['load_before']}; "
        f"after: {meta['load_after']}; highest 1-min load seen before a "
        f"measurement: {meta.get('max_load1', 0.0):.2f}",
        f"- **purenn revision:** {meta['git']}",
        f"- **Rounds:** {meta['rounds']} per workload, peers alternating "
        f"({' → '.join(peers)}), each run a fresh process; figure = median of the "
        "per-round medians, range = min–max of the per-round medians",
        *load_warning(meta),
        "",
        "Noise policy: this is a shared, noisy 2-core-class machine; differences "
        "within ±30 % are not significant. Quote the ratios, not the absolute "
        "numbers. Ratios are purenn / peer: for time units (µs, ms) **> 1 means "
        "purenn is slower**; for rates (GFLOP/s, ex/s) **< 1 means purenn is slower**.",
        "",
        "## Library versions",
        "",
        "| peer | interpreter | versions |",
        "| --- | --- | --- |",
    ]
    for p in peers:
        vers = {}
        for wl in results.values():
            s = wl.get(p)
            if s and s.versions:
                vers = s.versions
                break
        shown = PeerSummary(p, "ok", versions=vers)
        lines.append(f"| {p} | `{meta['interpreters'].get(p, '?')}` | "
                     f"{versions_line(shown)} |")

    # summary table
    lines += ["", "## Summary", ""]
    head = ["workload", "unit"] + peers
    others = [p for p in peers if p != BASELINE]
    if BASELINE in peers:
        head += [f"{BASELINE}/{p}" for p in others]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("| " + " | ".join("---" for _ in head) + " |")
    for name, per_peer in results.items():
        wl = W.get(name)
        row = [f"`{name}`", wl.unit_short + (" ↑" if wl.higher_is_better else " ↓")]
        for p in peers:
            s = per_peer[p]
            row.append(fmt(s.median, wl.unit) if s.status == "ok" else s.status)
        if BASELINE in peers:
            row += [fmt_ratio(ratio(per_peer[BASELINE], per_peer[p])) for p in others]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "↓ lower is better, ↑ higher is better; n/a: the workload "
              "is not run for that peer (see its section).", ""]
    lines += jit_vs_eager_lines(results, peers)

    # one table per workload
    for name, per_peer in results.items():
        wl = W.get(name)
        better = "higher is better" if wl.higher_is_better else "lower is better"
        lines += [f"## `{name}`", "", wl.description + ".", "",
                  f"Unit: {wl.unit_label} ({better}).", ""]
        lines.append(f"| peer | median | range over rounds | rounds ok | "
                     f"{BASELINE} / peer | note |")
        lines.append("| --- | --- | --- | --- | --- | --- |")
        base = per_peer.get(BASELINE)
        for p in peers:
            s = per_peer[p]
            rng = (f"{fmt(s.lo, wl.unit)} – {fmt(s.hi, wl.unit)}"
                   if s.status == "ok" else "—")
            rr = fmt_ratio(ratio(base, s)) if p != BASELINE else (
                "1.00×" if s.status == "ok" else "—")
            note = status_cell(s) or s.note
            lines.append(
                f"| {p} | {fmt(s.median, wl.unit)} | {rng} | "
                f"{'—' if s.status == 'n/a' else f'{s.rounds_ok}/{s.rounds}'} | "
                f"{rr} | {note.replace('|', '/')} |")
        cn = checksum_note(per_peer)
        if cn:
            lines += ["", cn]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def jit_vs_eager_lines(results: dict, peers: list) -> list:
    """A table of eager/jit time per peer, for each jit workload whose eager
    counterpart (Workload.eager_counterpart) is in the same report."""
    pairs = [(name, W.get(name).eager_counterpart) for name in results
             if W.get(name).eager_counterpart in results]
    if not pairs:
        return []
    lines = ["## jit vs eager", "",
             "The same computation eager and under jit, per peer, from the rows "
             "above: speed-up = eager time / jit time (> 1: jit is faster).", "",
             "| jit workload | eager workload | peer | eager | jit | speed-up |",
             "| --- | --- | --- | --- | --- | --- |"]
    for jit_name, eager_name in pairs:
        wl = W.get(jit_name)

        def cell(s):
            return (f"{fmt(s.median, wl.unit)} {wl.unit_short}"
                    if s.status == "ok" else s.status)

        for p in peers:
            e, j = results[eager_name].get(p), results[jit_name].get(p)
            if (e is None or j is None or "n/a" in (e.status, j.status)
                    or "ok" not in (e.status, j.status)):
                continue
            lines.append(f"| `{jit_name}` | `{eager_name}` | {p} | {cell(e)} | "
                         f"{cell(j)} | {fmt_ratio(ratio(e, j))} |")
    return lines + [""]


# --------------------------------------------------------------------------
# main

NOTES_MARKER = "<!-- Hand-written notes below this line are kept when bench/run.py rewrites the file. -->"


def kept_notes(path):
    """The hand-written analyses at the end of an existing results file (from NOTES_MARKER on),
    so a re-run replaces the generated tables but not the notes that explain them."""
    try:
        with open(path, encoding="utf-8") as f:
            old = f.read()
    except OSError:
        return ""
    at = old.find(NOTES_MARKER)
    return "" if at < 0 else "\n" + old[at:]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Time purenn against jax and torch, each peer in its own "
                    "process, in alternating rounds; write a Markdown report.")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds per workload (default 5)")
    ap.add_argument("--only", nargs="+", metavar="NAME", default=None,
                    help=f"workloads to run (default all: {', '.join(W.WORKLOADS)})")
    ap.add_argument("--peers", nargs="+", metavar="PEER", default=list(PEER_ORDER),
                    choices=list(PEER_ORDER), help="peers to run (default all)")
    ap.add_argument("--out", default=os.path.join("bench", "RESULTS.md"),
                    help="Markdown output (default bench/RESULTS.md)")
    ap.add_argument("--json", default=None, metavar="PATH",
                    help="also dump every raw per-round result as JSON")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds before one peer process is killed (default 600)")
    ap.add_argument("--samples", type=int, default=None,
                    help="override timed samples per process (default per workload)")
    args = ap.parse_args(argv)

    if args.rounds < 1:
        ap.error("--rounds must be >= 1")
    names = args.only or list(W.WORKLOADS)
    unknown = [n for n in names if n not in W.WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s): {', '.join(unknown)}; "
                 f"known: {', '.join(W.WORKLOADS)}")
    peer_names = [p for p in PEER_ORDER if p in args.peers]

    all_peers = default_peers()
    peers = {p: all_peers[p] for p in peer_names}
    extra = ("--samples", str(args.samples)) if args.samples else ()

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    missing = {p: pr for p, pr in peers.items() if not pr.available()}
    for p, pr in missing.items():
        log(f"[bench] {p}: not installed ({pr.python} missing) - skipped; "
            f"{pr.install_hint}")

    command = shlex.join(getattr(sys, "orig_argv", [sys.executable, *sys.argv]))
    t_start = time.perf_counter()
    load_before = loadavg()
    max_load = [_load1()]
    raw: dict = {}
    results: dict = {}
    for name in names:
        wl = W.get(name)
        runs = {p: [] for p in peer_names}
        for r in range(args.rounds):
            for p in peer_names:
                if p in missing or p not in wl.peers:
                    continue
                load1 = _load1()
                max_load[0] = max(max_load[0], load1)
                res = run_peer(peers[p], name, args.timeout, extra)
                res["load1_before"] = load1
                runs[p].append(res)
                if res.get("ok"):
                    log(f"[bench] {name} round {r + 1}/{args.rounds} {p}: "
                        f"{res['value']:.4g} {W.get(name).unit_short}")
                else:
                    log(f"[bench] {name} round {r + 1}/{args.rounds} {p}: "
                        f"FAILED {res.get('error')}")
        raw[name] = runs
        per_peer = {}
        for p in peer_names:
            if p not in wl.peers:
                per_peer[p] = PeerSummary(p, "n/a", note=wl.na_note)
            elif p in missing:
                per_peer[p] = PeerSummary(
                    p, "skipped",
                    note=f"not installed ({display_path(peers[p].python)}"
                         f" missing; {peers[p].install_hint})")
            else:
                per_peer[p] = summarize(p, runs[p])
        results[name] = per_peer

    meta = {
        "command": command,
        "cwd": os.getcwd(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "duration_s": time.perf_counter() - t_start,
        "machine": machine_info(),
        "load_before": load_before,
        "load_after": loadavg(),
        "max_load1": max(max_load[0], _load1()),
        "git": git_rev(),
        "rounds": args.rounds,
        "interpreters": {p: display_path(pr.python) for p, pr in peers.items()},
    }
    text = render(results, peer_names, meta)
    out = args.out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    text += kept_notes(out)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    log(f"[bench] wrote {out}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "runs": raw}, f, indent=1)
        log(f"[bench] wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

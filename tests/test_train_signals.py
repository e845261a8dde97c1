"""The `train` command under signals, kill -9 and a disabled network, as a user's scheduler meets
it: real processes (`python -m train` with a tiny config), real signals, the checkpoints and
event files read back afterwards (docs/reliability.md T2, T6, T7, S0d).

Determinism. A test sends a signal right after reading a given line of the child's output. The
child's stdout and stderr share one pipe shrunk to one page (4096 bytes) and read a byte at a
time, so the child can never be more than ~60 progress lines (steps) ahead of what the test has
read: a signal sent after the line of step k lands before step k + 60, whatever the machine's
load, and the runs are long enough that it always lands before the end. Each run's exit code
and committed checkpoints are then exact, not likely.

Every interrupted run is run again with the same command; it resumes and its final parameters
equal an uninterrupted run's bit for bit. The learning rate is constant, so the state after 40
steps does not depend on the run's total, and a 40-step run is compared with the uninterrupted
80-step run's checkpoint 40.

`PURENN_TEST_KILL_TRIALS=20` runs the kill -9 test with 20 kills instead of 3, and
`PURENN_TEST_SIGNAL_TRIALS=N` repeats each signal case N times.
"""
import fcntl
import io
import json
import os
import random
import select
import signal
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
import yaml

import core
import train
from train import config as config_lib
from train import loop as loop_lib
from train.checkpoint import Checkpointer, CheckpointWarning

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals, F_SETPIPE_SZ")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HANG_S = 240            # a child silent this long has hung: the test fails (a liveness bound, not a timing)
PIPE_BYTES = 4096       # the child's output pipe: it blocks once this much is unread
EXIT_PREEMPTED = 75
KILL_TRIALS = int(os.environ.get("PURENN_TEST_KILL_TRIALS", "3"))
SIGNAL_TRIALS = int(os.environ.get("PURENN_TEST_SIGNAL_TRIALS", "1"))


def base_config(**sections):
    """80 steps of a small MLP on 80 synthetic examples, batches of 12 (7 per epoch, the last
    one ragged), a constant learning rate, a progress line every step, an evaluation at the end
    of every epoch, checkpoints every 4 steps, all kept."""
    cfg = {
        "run": {"steps": 80, "log_every": 1, "progress": "lines", "compilation_cache": True},
        "data": {"name": "synthetic_classification", "num_train": 100, "num_test": 40, "input_dim": 6,
                 "num_classes": 3, "batch_size": 12, "validation_fraction": 0.2, "prefetch": 2},
        "model": {"preset": "mlp", "args": {"hidden": [16]}},
        "optimizer": {"name": "adam", "learning_rate": 0.01},
        "eval": {"every": 0},
        "checkpoint": {"every": 4, "keep": 1000},
    }
    for name, values in sections.items():
        cfg[name] = {**cfg.get(name, {}), **values}
    return cfg


def write_config(path, cfg):
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


# ----- a child process whose output is read line by line ------------------------------------------

NO_NETWORK = r"""
import socket, sys
attempts = []
def refuse(what, args):
    attempts.append(f"{what}{args!r}")
    raise OSError(f"the network is disabled in this test: {what}{args!r}")
class NoSocket(socket.socket):
    def __init__(self, *args, **kwargs):
        refuse("socket.socket", args)
socket.socket = NoSocket
socket.create_connection = lambda *a, **k: refuse("socket.create_connection", a)
socket.getaddrinfo = lambda *a, **k: refuse("socket.getaddrinfo", a)
try:
    from train.cli import main
    code = main(sys.argv[1:])
finally:
    print(f"network attempts: {attempts}", flush=True)
sys.exit(code)
"""


class Child:
    """`python -m train ARGS` (or `python -c CODE ARGS`) with stdout and stderr on one small pipe.

    `wait_for(pattern)` reads lines until one contains `pattern` and returns it; `finish()` reads
    the rest and returns the exit code. `lines` holds everything read so far."""

    def __init__(self, args, env, code=None):
        read_end, write_end = os.pipe()
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        if fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ) > PIPE_BYTES:   # pages larger than 4 KiB
            os.close(read_end)
            os.close(write_end)
            pytest.skip(f"a pipe cannot be shrunk to {PIPE_BYTES} bytes here, so a child could run ahead")
        cmd = [sys.executable] + (["-c", code] if code else ["-m", "train"]) + list(args)
        self.proc = subprocess.Popen(cmd, stdout=write_end, stderr=write_end, stdin=subprocess.DEVNULL,
                                     env=env, cwd=ROOT)
        os.close(write_end)
        self.fd, self.lines, self._partial = read_end, [], b""

    @property
    def pid(self):
        return self.proc.pid

    def _readline(self):
        """The next line, or None at the end of the output. One byte per read: bytes the test
        has not looked at stay in the pipe, where they hold the child back."""
        while True:
            ready, _, _ = select.select([self.fd], [], [], HANG_S)
            if not ready:
                self.proc.kill()
                pytest.fail(f"the train process printed nothing for {HANG_S} s (hung?); its output:\n"
                            + self.output())
            byte = os.read(self.fd, 1)
            if not byte:
                if self._partial:
                    line, self._partial = self._partial, b""
                    return line.decode(errors="replace")
                return None
            if byte == b"\n":
                line, self._partial = self._partial, b""
                self.lines.append(line.decode(errors="replace"))
                return self.lines[-1]
            self._partial += byte

    def drain_for(self, seconds):
        """Read whatever the child prints during `seconds` (so it never blocks on the pipe)."""
        deadline = time.monotonic() + seconds
        while self.proc.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready and self._readline() is None:
                return

    def wait_for(self, pattern):
        while True:
            line = self._readline()
            if line is None:
                self.proc.wait()
                pytest.fail(f"the train process ended (exit code {self.proc.returncode}) before printing "
                            f"{pattern!r}; its output:\n{self.output()}")
            if pattern in line:
                return line

    def finish(self):
        while self._readline() is not None:
            pass
        os.close(self.fd)
        return self.proc.wait(timeout=HANG_S)

    def output(self):
        return "\n".join(self.lines)

    def signal(self, signum):
        os.kill(self.proc.pid, signum)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """This checkout's packages, and a compilation cache shared by the module's runs (so only
    the first run of a config compiles)."""
    cache = tmp_path_factory.mktemp("xdg_cache")
    return dict(os.environ, PYTHONPATH=ROOT, XDG_CACHE_HOME=str(cache), PYTHONUNBUFFERED="1")


def run_to_end(args, env, code=None):
    child = Child(args, env, code)
    rc = child.finish()
    return rc, child.output()


# ----- checkpoints, read back ---------------------------------------------------------------------

def committed_steps(workdir):
    return Checkpointer(os.path.join(workdir, "checkpoints"), keep=None).steps()


def arrays(workdir, step):
    """The raw arrays of checkpoint `step` (NumPy's own reader), keyed by leaf path."""
    path = os.path.join(workdir, "checkpoints", str(step), "arrays.npz")
    with np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def assert_same_bits(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, k
        assert a[k].tobytes() == b[k].tobytes(), f"{k} differs"


_templates = {}


def template(cfg):
    """The train-state template for `cfg`, from the trainer's own `make_steps` (shapes only)."""
    key = json.dumps({k: cfg[k] for k in ("data", "model", "optimizer")}, sort_keys=True)
    if key not in _templates:
        run = loop_lib._Run(config_lib.config_from_dict(cfg), io.StringIO(), loop_lib._SignalFlag())
        _templates[key] = core.eval_shape(lambda: run.steps.init_state(0))
    return _templates[key]


def assert_newest_restores(workdir, cfg):
    """The newest committed checkpoint restores into the trainer's template, with no corrupt
    checkpoint skipped on the way; returns its step."""
    ckpt = Checkpointer(os.path.join(workdir, "checkpoints"), keep=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CheckpointWarning)
        found = ckpt.restore_latest(template(cfg))
    assert found is not None, f"no committed checkpoint in {workdir}"
    step, tree, meta = found
    assert int(tree["step"]) == step == meta["step"]
    return step, meta


def stopped_step(output, signame="SIGTERM"):
    for line in output.splitlines():
        if line.startswith(f"Stopped by {signame} at step "):
            return int(line.split(" at step ")[1].split(";")[0])
    raise AssertionError(f"no 'Stopped by {signame}' line in the output:\n{output}")


def expected_committed(s, every=4):
    """T7, as Orbax's preemption test states it: the periodic steps up to s, and s itself."""
    return set(range(every, s + 1, every)) | {s}


# ----- the uninterrupted reference run, with the network disabled ------------------------------------

@pytest.fixture(scope="module")
def reference(tmp_path_factory, env):
    """The uninterrupted 80-step run (checkpoints at 20, 40, 60, 80), run with `socket.socket`,
    `create_connection` and `getaddrinfo` raising: (workdir, exit code, output)."""
    tmp = tmp_path_factory.mktemp("reference")
    cfg = write_config(tmp / "c.yaml", base_config(checkpoint={"every": 20}))
    rc, out = run_to_end([cfg, "--workdir", str(tmp / "w")], env, code=NO_NETWORK)
    return str(tmp / "w"), rc, out


def test_trains_with_the_network_disabled_S0d(reference):
    """S0d: a run completes with sockets disabled, and nothing even tried to open one (an
    attempt that the code caught and ignored would still be listed)."""
    workdir, rc, out = reference
    assert rc == 0, out
    assert "Done: 80 steps" in out
    assert "network attempts: []" in out, out
    assert committed_steps(workdir) == [20, 40, 60, 80]


def resume_and_compare(args, env, workdir, reference, cfg, final=80):
    """Run the same command again: it resumes, completes, and ends bit for bit where the
    uninterrupted run did."""
    rc, out = run_to_end(args, env)
    assert rc == 0, out
    assert "resuming at step" in out
    assert f"Done: {final} steps" in out
    assert committed_steps(workdir)[-1] == final
    assert_same_bits(arrays(workdir, final), arrays(reference[0], final))
    return out


# ----- SIGTERM: during the first compile, during evaluation, mid-epoch (T7) --------------------------

@pytest.mark.parametrize("trial", range(SIGNAL_TRIALS))
def test_sigterm_during_the_first_compile_commits_step_1_T7(tmp_path, env, trial):
    """T7: SIGTERM while the train step compiles (sent at once after "compiling the train step",
    with an empty compilation cache, so the compile is real). The step finishes, checkpoint 1
    is committed and restores, the exit code is 75. (Resuming from step 1 is tested in
    tests/test_train_loop.py; the other cases here run the command again.)"""
    cfg = base_config()
    args = [write_config(tmp_path / "c.yaml", cfg), "--workdir", str(tmp_path / "w")]
    cold = dict(env, XDG_CACHE_HOME=str(tmp_path / "cold_cache"))
    child = Child(args, cold)
    child.wait_for("compiling the train step")
    child.signal(signal.SIGTERM)
    rc = child.finish()
    assert rc == EXIT_PREEMPTED, child.output()
    assert stopped_step(child.output()) == 1          # the compile takes far longer than a signal's delivery
    assert committed_steps(tmp_path / "w") == [1]
    step, meta = assert_newest_restores(tmp_path / "w", cfg)
    assert step == 1 and meta["data_position"] == {"epoch": 0, "index": 1, "seed": 0}


@pytest.mark.parametrize("trial", range(SIGNAL_TRIALS))
def test_sigterm_mid_epoch_commits_periodic_steps_and_the_current_one_T7(tmp_path, env, reference, trial):
    """T7 (Orbax's check): with checkpoints every 4 steps and SIGTERM arriving at step s, the
    committed steps are exactly the multiples of 4 up to s and s; the newest restores; exit 75;
    the same command resumes and ends bit for bit where the uninterrupted run does."""
    cfg = base_config()
    args = [write_config(tmp_path / "c.yaml", cfg), "--workdir", str(tmp_path / "w")]
    child = Child(args, env)
    child.wait_for(f"step {random.Random(trial).randint(2, 10):>2}/80")
    child.signal(signal.SIGTERM)
    rc = child.finish()
    assert rc == EXIT_PREEMPTED, child.output()
    s = stopped_step(child.output())
    assert set(committed_steps(tmp_path / "w")) == expected_committed(s)
    step, meta = assert_newest_restores(tmp_path / "w", cfg)
    per_epoch = 7
    assert step == s
    assert meta["eval_pending"] == (s % per_epoch == 0 and meta["last_eval"].get("step") != s)
    assert meta["data_position"] == {"epoch": s // per_epoch, "index": s % per_epoch, "seed": 0}
    resume_and_compare(args, env, tmp_path / "w", reference, cfg)


def test_sigusr1_stops_as_sigterm_does_T7(tmp_path, env):
    """SIGUSR1, the preemption notice of SLURM and other schedulers: the same stop as SIGTERM,
    exit 75, the current step committed and restorable."""
    cfg = base_config()
    args = [write_config(tmp_path / "c.yaml", cfg), "--workdir", str(tmp_path / "w")]
    child = Child(args, env)
    child.wait_for("step  5/80")
    child.signal(signal.SIGUSR1)
    rc = child.finish()
    assert rc == EXIT_PREEMPTED, child.output()
    s = stopped_step(child.output(), "SIGUSR1")
    step, _ = assert_newest_restores(tmp_path / "w", cfg)
    assert step == s and s in committed_steps(tmp_path / "w")


@pytest.mark.parametrize("trial", range(SIGNAL_TRIALS))
def test_sigterm_during_evaluation_commits_and_redoes_it_T7(tmp_path, env, reference, trial):
    """T7: SIGTERM during an evaluation (of 1,000 test examples one at a time, started right
    after the progress line of step 40). Evaluation stops at the next batch, checkpoint 40 is
    committed marked `eval_pending`, exit 75; the same command resumes, evaluates step 40 again
    (logged once), and ends bit for bit where the uninterrupted run does."""
    cfg = base_config(data={"num_test": 1000, "eval_batch_size": 1}, eval={"every": 40, "split": "test",
                                                                          "at_end": False},
                      checkpoint={"every": 20})
    args = [write_config(tmp_path / "c.yaml", cfg), "--workdir", str(tmp_path / "w")]
    child = Child(args, env)
    child.wait_for("step 40/80")
    child.signal(signal.SIGTERM)
    rc = child.finish()
    assert rc == EXIT_PREEMPTED, child.output()
    assert stopped_step(child.output()) == 40
    assert "step 40: test:" not in child.output()     # the evaluation was cut short
    assert committed_steps(tmp_path / "w") == [20, 40]
    step, meta = assert_newest_restores(tmp_path / "w", cfg)
    assert step == 40 and meta["eval_pending"] is True
    out = resume_and_compare(args, env, tmp_path / "w", reference, cfg)
    assert "step 40: test:" in out
    with open(tmp_path / "w" / "metrics.jsonl") as f:
        evals = [r["step"] for r in map(json.loads, f) if "eval/accuracy" in r]
    assert evals == [40, 80]


# ----- a second SIGINT; SIGINT while saving ----------------------------------------------------------

@pytest.mark.parametrize("trial", range(SIGNAL_TRIALS))
def test_second_sigint_exits_at_once_and_leaves_the_checkpoints_loadable_T7(tmp_path, env, trial):
    """T7: SIGINT, then a second SIGINT as soon as the checkpoint it asked for is being written
    (its tmp directory appears; or right after the first, if the save finished first). The
    process exits promptly with a non-zero code and no hang, and every committed checkpoint,
    the newest included, still restores; no half-written step is listed."""
    cfg = base_config()
    args = [write_config(tmp_path / "c.yaml", cfg), "--workdir", str(tmp_path / "w")]
    child = Child(args, env)
    child.wait_for("step  6/80")                     # checkpoint 4 is committed by now
    ckdir = tmp_path / "w" / "checkpoints"
    child.signal(signal.SIGINT)
    while child.proc.poll() is None and not any(".tmp-" in n for n in os.listdir(ckdir)):
        child.drain_for(0.0005)
    if child.proc.poll() is None:
        child.signal(signal.SIGINT)
    rc = child.finish()
    assert rc != 0, child.output()
    print(f"T7 second SIGINT: exit code {rc}, "
          + ("KeyboardInterrupt" if "second SIGINT: stopping at once" in child.output() else "no KeyboardInterrupt"))
    steps = committed_steps(tmp_path / "w")
    assert 4 in steps
    ckpt = Checkpointer(ckdir, keep=None)
    for step in steps:
        tree, meta = ckpt.restore(step, template(cfg))
        assert int(tree["step"]) == step
    assert_newest_restores(tmp_path / "w", cfg)


# ----- kill -9 at random instants (T2) -----------------------------------------------------------

def test_kill_9_at_random_instants_leaves_a_loadable_checkpoint_and_resumes_T2(tmp_path, env, reference):
    """T2: `train` checkpointing every step is killed with SIGKILL at random instants (a random
    step, then a random fraction of a step and its save), then run again with the same command,
    which is killed in turn; after every kill the newest committed checkpoint restores (no
    corrupt one skipped) and is at most one step behind the last progress line. The last run
    completes, bit for bit equal to the uninterrupted run."""
    trials = KILL_TRIALS
    total = 10 * trials + 10
    cfg = base_config(run={"steps": total}, checkpoint={"every": 1})
    args = [write_config(tmp_path / "c.yaml", cfg), "--workdir", str(tmp_path / "w")]
    rng = random.Random(1234)
    newest, inside_a_save = 0, 0
    width = len(str(total))
    for trial in range(trials):
        if newest + 2 > total - 1:
            break
        child = Child(args, env)
        k = rng.randint(newest + 2, min(newest + 10, total - 1))
        child.wait_for(f"step {k:>{width}}/{total}")
        child.drain_for(rng.uniform(0.0, 0.05))       # somewhere inside a step, its logging or its save
        child.signal(signal.SIGKILL)
        rc = child.finish()
        assert rc in (-signal.SIGKILL, 0), child.output()
        if rc == 0:                                   # only if the run ended within the random pause
            break
        # (looked at first: opening a Checkpointer deletes the tmp directories of interrupted saves)
        inside_a_save += any(".tmp-" in n for n in os.listdir(tmp_path / "w" / "checkpoints"))
        newest, _ = assert_newest_restores(tmp_path / "w", cfg)
        assert newest >= k - 1
    print(f"T2: {trials} kills, {inside_a_save} of them inside a save (a tmp directory left behind)")
    rc, out = run_to_end(args, env)
    assert rc == 0, out
    assert f"Done: {total} steps" in out
    if total in committed_steps(reference[0]):       # 3 trials: 40 steps (20 trials: no such reference)
        assert_same_bits(arrays(tmp_path / "w", total), arrays(reference[0], total))


# ----- the logs after kill -9 (T6) ----------------------------------------------------------------

def scalar_steps_on_disk(tbdir, tag="train/loss"):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(tbdir), size_guidance={"scalars": 0})
    acc.Reload()
    return acc, ([e.step for e in acc.Scalars(tag)] if tag in acc.Tags()["scalars"] else [])


def test_logs_hold_each_step_once_after_kill_9_fresh_start_and_resume_T6(tmp_path, env, reference):
    """T6 (the logs): a 150-step run checkpointing every 50 steps is killed with SIGKILL after
    step 45 (no checkpoint yet) and after step 95 (checkpoint 50), each time having left events
    past its checkpoint on disk; the same command starts fresh, then resumes at 50 and completes.
    TensorBoard's own reader then finds every tag at each step once, with the values in
    metrics.jsonl (the last run's, past step 50: steps_per_second differs between runs), and
    the losses of the uninterrupted run."""
    cfg = base_config(run={"steps": 150}, checkpoint={"every": 50})
    args = [write_config(tmp_path / "c.yaml", cfg), "--workdir", str(tmp_path / "w")]
    tbdir = tmp_path / "w" / "tensorboard"
    for last_line, committed in (("step  45/150", []), ("step  95/150", [50])):
        child = Child(args, env)
        child.wait_for(last_line)
        child.signal(signal.SIGKILL)
        assert child.finish() == -signal.SIGKILL
        assert committed_steps(tmp_path / "w") == committed
        _, steps = scalar_steps_on_disk(tbdir)
        # the precondition: events past the checkpoint reached the disk (8 KB buffers overflowed)
        assert max(steps) > (committed or [0])[-1] + 5, steps
    rc, out = run_to_end(args, env)
    assert rc == 0 and "resuming at step 50" in out, out
    with open(tmp_path / "w" / "metrics.jsonl") as f:
        records = [json.loads(line) for line in f]
    acc, _ = scalar_steps_on_disk(tbdir)
    tags = ("train/loss", "train/accuracy", "learning_rate", "grad_norm", "eval/loss", "eval/accuracy",
            "steps_per_second", "examples_per_second", "compile_seconds", "test/accuracy")
    for tag in tags:
        events = [(e.step, e.value) for e in acc.Scalars(tag)]
        expected = [(r["step"], pytest.approx(r[tag], rel=1e-6)) for r in records if tag in r]
        assert events == expected, tag
    assert [r["step"] for r in records if "train/loss" in r] == list(range(1, 151))
    assert [e.step for e in acc.Scalars("compile_seconds")] == [1, 51]
    with open(os.path.join(reference[0], "metrics.jsonl")) as f:
        uninterrupted = {r["step"]: r["train/loss"] for r in map(json.loads, f) if "train/loss" in r}
    assert {r["step"]: r["train/loss"] for r in records if r.get("step", 0) <= 80 and "train/loss" in r} == \
        uninterrupted


# ----- in-process: the end of a run, --eval-only -------------------------------------------------------

@pytest.fixture
def cached(env, monkeypatch):
    """In-process runs share the module's compilation cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])


def small(workdir, run=None, **sections):
    """14 steps (two epochs), evaluated every 5; no progress lines."""
    return base_config(run={"steps": 14, "progress": "off", "workdir": str(workdir), **(run or {})},
                       eval={"every": 5}, **sections)


def sigterm_in_evaluation_of(monkeypatch, split_name):
    """A real SIGTERM to this process as `split_name`'s evaluation starts (fit's handler is
    installed; the handler runs before the first batch)."""
    original = loop_lib._Run.evaluate

    def evaluate(self, state, name):
        if name == split_name:
            os.kill(os.getpid(), signal.SIGTERM)
        return original(self, state, name)
    monkeypatch.setattr(loop_lib._Run, "evaluate", evaluate)


def test_sigterm_during_the_final_test_evaluation_stops_with_75_T7(tmp_path, monkeypatch, cached):
    """T7: a signal during the test evaluation at the end used to be swallowed: the run exited 0
    with no test metrics. Now it commits the final step and stops (exit 75), and the rerun
    evaluates and reports exactly what an uninterrupted run does."""
    full = train.fit(small(tmp_path / "full"))
    with monkeypatch.context() as m:
        sigterm_in_evaluation_of(m, "test")
        with pytest.raises(loop_lib.Preempted) as info:
            train.fit(small(tmp_path / "cut"))
    assert info.value.step == 14 and info.value.signame == "SIGTERM"
    assert committed_steps(tmp_path / "cut")[-1] == 14
    resumed = train.fit(small(tmp_path / "cut"))
    assert resumed.metrics == full.metrics
    assert "test/accuracy" in resumed.metrics
    with open(tmp_path / "cut" / "metrics.jsonl") as f:
        assert [r["step"] for r in map(json.loads, f) if "test/accuracy" in r] == [14]


def test_signal_at_the_last_step_resumes_to_the_same_result_T6(tmp_path, monkeypatch, cached):
    """T6: stopped by a signal right after the last step, the rerun has no step left to train;
    it still reports the uninterrupted run's final metrics (the train metrics of the last
    logging interval come from the checkpoint)."""
    full = train.fit(small(tmp_path / "full"))
    original = loop_lib._Loop._after_step

    def after_step(self):
        if self.step == 14:
            os.kill(os.getpid(), signal.SIGTERM)
        original(self)
    with monkeypatch.context() as m:
        m.setattr(loop_lib._Loop, "_after_step", after_step)
        with pytest.raises(loop_lib.Preempted):
            train.fit(small(tmp_path / "cut"))
    resumed = train.fit(small(tmp_path / "cut"))
    assert resumed.metrics == full.metrics
    assert resumed.steps == 14


def test_sigterm_during_eval_only_is_not_reported_as_done_T7(tmp_path, monkeypatch, cached):
    """T7: `--eval-only` stopped by a signal used to print the metrics it had not computed as
    done (exit 0); now it raises Preempted (exit 75) naming the checkpoint, which is untouched."""
    train.fit(small(tmp_path, run={"steps": 4}))
    before = arrays(tmp_path, 4)
    with monkeypatch.context() as m:
        sigterm_in_evaluation_of(m, "validation")
        with pytest.raises(loop_lib.Preempted) as info:
            train.fit(small(tmp_path, run={"steps": 4}),
                      eval_only=True)
    assert info.value.step == 4
    assert info.value.path == os.path.join(str(tmp_path), "checkpoints", "4")
    assert committed_steps(tmp_path) == [4]
    assert_same_bits(arrays(tmp_path, 4), before)
    done = train.fit(small(tmp_path, run={"steps": 4}),
                     eval_only=True)
    assert {"validation/accuracy", "test/accuracy"} <= set(done.metrics)


def test_resume_from_an_older_checkpoint_of_the_workdir_is_refused_up_front_T6(tmp_path, cached):
    """`--resume PATH` naming an older step of the same workdir used to train until its first
    checkpoint met an existing later step, then fail (exit 1, a traceback) after minutes of
    work. It is refused before training, naming the later steps, and nothing is changed."""
    train.fit(small(tmp_path))
    before = committed_steps(tmp_path)
    with pytest.raises(config_lib.ConfigError, match=r"restores step 4.*later checkpoints \[8, 12, 14\]"):
        train.fit(small(tmp_path), resume=str(tmp_path / "checkpoints" / "4"))
    assert committed_steps(tmp_path) == before
    # the newest step of the workdir, or any step of another workdir, is fine
    result = train.fit(small(tmp_path / "other"), resume=str(tmp_path / "checkpoints" / "8"))
    assert result.steps == 14 and committed_steps(tmp_path / "other") == [12, 14]


def test_rerun_after_the_final_checkpoint_got_corrupted_saves_it_again_T6(tmp_path, cached):
    """T6: a finished run's final checkpoint 14 got corrupted; the same command falls back to
    checkpoint 12 (and warns), trains steps 13 and 14 again, and used to skip the final save
    because step 14 was still listed, reporting the corrupt checkpoint as its result. The
    corrupt step is now set aside (kept for inspection) and step 14 committed again, bit for bit
    the uninterrupted run's."""
    full = train.fit(small(tmp_path / "full"))
    train.fit(small(tmp_path / "cut"))
    npz = tmp_path / "cut" / "checkpoints" / "14" / "arrays.npz"
    data = bytearray(npz.read_bytes())
    data[len(data) // 2] ^= 1
    npz.write_bytes(bytes(data))
    with pytest.warns(CheckpointWarning) as caught:
        resumed = train.fit(small(tmp_path / "cut"))
    assert resumed.checkpoint == str(tmp_path / "cut" / "checkpoints" / "14")
    assert_newest_restores(tmp_path / "cut", small(tmp_path / "cut"))
    assert_same_bits(arrays(tmp_path / "cut", 14), arrays(tmp_path / "full", 14))
    assert resumed.metrics == full.metrics
    assert committed_steps(tmp_path / "cut") == [4, 8, 12, 14]
    assert [n for n in os.listdir(tmp_path / "cut" / "checkpoints") if n.startswith("14.corrupt-")]
    messages = [str(w.message) for w in caught]
    assert any("skipping checkpoint step 14" in m for m in messages), messages
    assert any("moved the corrupt checkpoint step 14" in m for m in messages), messages

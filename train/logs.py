"""What a run reports: TensorBoard scalars (tensorboardX), `metrics.jsonl` with the same numbers,
and progress on the terminal: a tqdm bar with rate and ETA on a terminal, one plain line every
`log_every` steps otherwise (CI logs, files).

A resumed run reopens both outputs at its checkpoint's step: TensorBoard gets
`purge_step = step + 1`, so events written after the checkpoint by the interrupted run are hidden,
and `metrics.jsonl` is rewritten without its records past that step. A fresh start gets
`purge_step = 0` and a new `metrics.jsonl`, hiding whatever a run killed before its first
checkpoint had written. The curves then hold every step once.

    >>> import tempfile
    >>> with RunLogger(tempfile.mkdtemp(), total_steps=10, progress="off") as log:
    ...     log.scalars(5, {"train/loss": 0.5})
"""
import json
import math
import os
import sys
import time

__all__ = ["RunLogger", "format_metrics", "seconds_since_process_start"]

_IMPORTED = time.perf_counter()   # the fallback origin where /proc is missing


_SHORT = {"train/loss": "loss", "train/accuracy": "acc", "learning_rate": "lr", "eval/loss": "val_loss",
          "eval/accuracy": "val_acc", "dp/epsilon": "eps"}


def _number(v):
    return f"{v:.3g}" if v and abs(v) < 1e-3 else f"{v:.4f}"


def format_metrics(metrics):
    """`"train: loss 0.1234, accuracy 0.9800 | test: accuracy 0.9700"`: the metrics (a dict of
    `prefix/name` -> float), grouped by prefix in the order they come.

    >>> format_metrics({"train/loss": 0.5, "test/accuracy": 0.25})
    'train: loss 0.5000 | test: accuracy 0.2500'
    """
    groups = {}
    for key, value in metrics.items():
        prefix, _, name = key.rpartition("/")
        groups.setdefault(prefix, []).append(f"{name} {_number(value)}")
    return " | ".join((f"{p}: " if p else "") + ", ".join(items) for p, items in groups.items())


def seconds_since_process_start():
    """Seconds since this process started: from /proc on Linux (to 1/100 s: the kernel's clock
    ticks), else since this module was imported. The loop logs it at the end of the first step as
    `time_to_first_step` (import, data, tracing and compiling: what a user waits for).

    >>> 0 <= seconds_since_process_start() < 3600
    True
    """
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            # field 22 is the start time in clock ticks after boot; the fields after the
            # parenthesized command name start at field 3
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        return max(uptime - start_ticks / os.sysconf("SC_CLK_TCK"), 0.0)
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - _IMPORTED


def _summary_writer_class():
    """tensorboardX's `SummaryWriter`, imported without importing PyTorch.

    tensorboardX imports `torch` when it is installed, only so that its functions accept torch
    tensors: where PyTorch is installed that added ~460 MB of resident memory (and seconds of
    start-up) to a `train` process that never uses it (seen on a machine with PyTorch 2.11:
    peak memory 2.9x the hand loop's). While tensorboardX is imported, `sys.modules["torch"]` is
    None, so its guarded `import torch` fails and it keeps to NumPy; a process that has already
    imported torch is left as it is."""
    if "torch" in sys.modules or "tensorboardX.writer" in sys.modules:
        from tensorboardX import SummaryWriter
        return SummaryWriter
    sys.modules["torch"] = None
    try:
        from tensorboardX import SummaryWriter
    finally:
        if "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]
    return SummaryWriter


class RunLogger:
    """TensorBoard, `metrics.jsonl` and progress for one run in `workdir`.

    `start_step`: the step a resumed run continues from (0 for a fresh run); `progress`: "auto"
    (a bar on a terminal, lines otherwise), "bar", "lines" or "off"; `stream`: where lines go.
    """

    def __init__(self, workdir, *, total_steps, start_step=0, progress="auto", stream=None):
        SummaryWriter = _summary_writer_class()   # imported here: `train --help` should not pay for it
        os.makedirs(workdir, mode=0o750, exist_ok=True)
        self.workdir = workdir
        self.tb_dir = os.path.join(workdir, "tensorboard")
        os.makedirs(self.tb_dir, mode=0o750, exist_ok=True)   # before tensorboardX, which uses the umask
        self.jsonl_path = os.path.join(workdir, "metrics.jsonl")
        self.total_steps, self.start_step = total_steps, start_step
        self.stream = stream or sys.stdout
        # Events past the checkpoint we resume from were written by the interrupted run: hide
        # them. A fresh start hides every earlier event: a run killed before its first checkpoint
        # leaves event files behind (metrics.jsonl is removed below). tensorboardX names event
        # files by the second and the host only, so a writer opened in the same second as the
        # previous run's (a quick resume) would truncate its file; the suffix makes each writer's
        # file its own and keeps the names in time order, the order TensorBoard reads them in.
        self.writer = SummaryWriter(self.tb_dir, purge_step=start_step + 1 if start_step else 0, flush_secs=30,
                                    filename_suffix=f".{time.time_ns():020d}.{os.getpid()}")
        self._rewrite_jsonl(start_step)
        self._jsonl = open(self.jsonl_path, "a", encoding="utf-8")
        if progress == "auto":
            progress = "bar" if _is_terminal(self.stream) else "lines"
        self.mode = progress
        self._bar = None
        if progress == "bar":
            from tqdm import tqdm
            self._bar = tqdm(total=total_steps, initial=start_step, unit="step", dynamic_ncols=True,
                             file=self.stream)
        self._t0, self._s0 = time.perf_counter(), start_step

    # ----- records ------------------------------------------------------------------------------
    def _rewrite_jsonl(self, start_step):
        if not start_step or not os.path.exists(self.jsonl_path):
            if not start_step and os.path.exists(self.jsonl_path):
                os.remove(self.jsonl_path)
            return
        with open(self.jsonl_path, encoding="utf-8") as f:
            kept = []
            for line in f:
                try:
                    if json.loads(line).get("step", 0) <= start_step:
                        kept.append(line)
                except json.JSONDecodeError:
                    break  # a line cut by a crash: everything after it is gone too
        tmp = self.jsonl_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(kept)
        os.replace(tmp, self.jsonl_path)

    def scalars(self, step, metrics):
        """Write `metrics` (name -> float, names like `train/loss`) at `step` to both outputs.

        The scalars of one call go to TensorBoard as one event holding a value per name (as
        `add_scalar` would write them one by one): tensorboardX hands each event to its writer
        thread through a multiprocessing queue (a pickle, a pipe and two thread wake-ups), which
        per scalar cost the digits MLP a few percent of its steps."""
        if metrics:
            from tensorboardX.proto.summary_pb2 import Summary
            from tensorboardX.summary import scalar
            values = [v for name, value in metrics.items() for v in scalar(name, value).value]
            self.writer._get_file_writer().add_summary(Summary(value=values), step)
        record = {"step": step, **{k: (v if math.isfinite(v) else str(v)) for k, v in metrics.items()}}
        self._jsonl.write(json.dumps(record) + "\n")

    def text(self, tag, text, step=0):
        self.writer.add_text(tag, text, step)

    def histograms(self, step, named_arrays):
        for name, array in named_arrays:
            self.writer.add_histogram(name, array, step)

    # ----- progress -------------------------------------------------------------------------------
    def start_clock(self, step):
        """Measure rates from here (after the first step, so compiling does not count)."""
        self._t0, self._s0 = time.perf_counter(), step

    def rates(self, step):
        """Steps per second since the clock started, and the estimated seconds left."""
        elapsed = time.perf_counter() - self._t0
        rate = (step - self._s0) / elapsed if elapsed > 0 and step > self._s0 else 0.0
        eta = (self.total_steps - step) / rate if rate else float("nan")
        return rate, eta

    def progress(self, step, metrics):
        """Advance the bar to `step`, or print one plain line (mode "lines")."""
        shown = " | ".join(f"{short} {_number(metrics[k])}" for k, short in _SHORT.items() if k in metrics)
        if self._bar is not None:
            self._bar.update(step - self._bar.n)
            self._bar.set_postfix_str(shown, refresh=False)
        elif self.mode == "lines":
            rate, eta = self.rates(step)
            eta_text = time.strftime("%H:%M:%S", time.gmtime(eta)) if math.isfinite(eta) else "?"
            width = len(str(self.total_steps))
            self.say(f"step {step:>{width}}/{self.total_steps} | {shown} | {rate:.1f} steps/s | ETA {eta_text}")

    def say(self, line, always=False):
        """A line for the user, printed above the bar when there is one; with progress "off" only
        lines said `always` (the summary) are printed."""
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        elif self.mode != "off" or always:
            print(line, file=self.stream, flush=True)

    def flush(self, sync=True):
        """Hand the records written so far to the OS; with `sync`, also make them durable
        (`sync()`)."""
        self._jsonl.flush()
        if sync:
            self.sync()

    def sync(self):
        """Make the records the OS has durable: TensorBoard's event file and `metrics.jsonl`,
        fsynced. Safe on another thread than the one writing records (the checkpoint's commit
        thread calls it); an OSError names the file."""
        self.writer.flush()
        try:
            os.fsync(self._jsonl.fileno())
        except OSError as e:
            e.filename = e.filename or self.jsonl_path
            raise

    def close(self):
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self.writer.close()
        if not self._jsonl.closed:
            self._jsonl.flush()
            self._jsonl.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class PipeSafeStream:
    """`stream` (stdout, say) for a run's lines, which must not end the run when the reader goes
    away: `train ... | head` closes the pipe after ten lines, and the next write would raise
    BrokenPipeError in the middle of training. From then on the lines are dropped (TensorBoard
    and metrics.jsonl still get everything) and, when the stream is the process's stdout, its file
    descriptor is pointed at /dev/null so that the interpreter's last flush at exit is quiet too.

        >>> import io
        >>> out = PipeSafeStream(io.StringIO()); print("kept", file=out); out.closed_by_reader
        False
    """

    def __init__(self, stream):
        self.stream = stream
        self.closed_by_reader = False

    def write(self, text):
        if self.closed_by_reader:
            return len(text)
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self._reader_gone()
            return len(text)

    def flush(self):
        if not self.closed_by_reader:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self._reader_gone()

    def _reader_gone(self):
        self.closed_by_reader = True
        try:
            if self.stream is sys.stdout or self.stream is sys.__stdout__:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, self.stream.fileno())
                os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def isatty(self):
        return _is_terminal(self.stream)

    def __getattr__(self, name):   # encoding, fileno, ... of the wrapped stream (tqdm asks)
        return getattr(self.stream, name)


def _is_terminal(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False

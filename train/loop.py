"""`fit(config) -> Result`: the training run the `train` command performs, as a library call.

It reads top-down as a run goes: build (data, model, steps) -> restore or initialize the train
state -> the loop (train steps; logging, evaluation and checkpoints at their cadence; the signal
flag polled after every step and during evaluation) -> the final evaluation and the summary.
The design, with the resume contract and the exit codes, is in docs/design.md ("The trainer").

    >>> result = fit({"run": {"steps": 3, "progress": "off", "workdir": _tmp()},
    ...               "data": {"name": "synthetic_classification", "num_train": 64, "num_test": 32}},
    ...              resume="never")                                         # doctest: +SKIP
"""
import json
import os
import signal
import sys
import threading
import time
import warnings
from typing import NamedTuple

import numpy as np

import core
import core.numpy as jnp
import nn
from core.tree_util import tree_flatten_with_path, tree_map, keystr

from . import config as config_lib
from . import data as data_lib
from . import dp as dp_lib
from . import registry
from .checkpoint import (Checkpointer, CheckpointCorruptError, CheckpointError, CheckpointMismatchError,
                         CheckpointWarning, restore_path)
from .logs import PipeSafeStream, RunLogger, format_metrics, seconds_since_process_start
from .step import make_steps

__all__ = ["fit", "Result", "NonFiniteLossError", "Preempted", "EXIT_PREEMPTED"]

EXIT_PREEMPTED = 75   # EX_TEMPFAIL: stopped by a signal after committing a checkpoint; run again to resume


class NonFiniteLossError(RuntimeError):
    """The loss or the gradient became NaN or infinite (`run.on_nonfinite: stop`), or stayed so
    for `run.max_consecutive_nonfinite` steps in a row (`skip`). The train state was never
    updated with a non-finite step; the newest checkpoint is the last good one."""

    def __init__(self, step, metric, value, last_committed_step, reason=""):
        where = (f"the newest committed checkpoint is step {last_committed_step}" if last_committed_step is not None
                 else "no checkpoint was committed")
        super().__init__(f"{metric} became non-finite ({value}) at step {step}{reason}; {where}. Lower the "
                         "learning rate, clip gradients (optimizer.grad_clip_norm), or set run.on_nonfinite: skip.")
        self.step, self.metric, self.value, self.last_committed_step = step, metric, value, last_committed_step


class Preempted(Exception):
    """SIGTERM or SIGINT arrived; a checkpoint was committed at `step` (exit code 75). With
    `evaluating`, the signal cut an `--eval-only` evaluation of the checkpoint `path` short."""

    def __init__(self, signame, step, path, evaluating=False):
        if evaluating:
            text = (f"{signame} received while evaluating the checkpoint {path} (step {step}); nothing was "
                    "reported or changed. Run the same command again to evaluate it.")
        else:
            text = (f"{signame} received: stopped at step {step} after committing the checkpoint {path}. "
                    "Run the same command again to resume.")
        super().__init__(text)
        self.signame, self.step, self.path = signame, step, path


class Result(NamedTuple):
    """What `fit` returns: the final `metrics` (name -> float), the final train `state` (host
    arrays), the `workdir`, the number of `steps` done and the newest `checkpoint` path."""
    metrics: dict
    state: object
    workdir: str
    steps: int
    checkpoint: object


# ----- entry point --------------------------------------------------------------------------------

def fit(config, *, resume="auto", dry_run=False, eval_only=False, stream=None):
    """Train as `config` says (a `train.config.Config`, a dict in the config's schema, or a path
    to a YAML file) and return a `Result`. `resume`: "auto" continues from the newest valid
    checkpoint in the workdir, "never" starts fresh (and refuses a workdir that has
    checkpoints), or a checkpoint directory's path. `dry_run` builds everything, prints the
    model summary and one batch's shapes, and returns before training; `eval_only` evaluates the
    newest checkpoint."""
    cfg = _as_config(config)
    stream = PipeSafeStream(stream or sys.stdout)
    settings = _ConfigRestorer(cfg)
    with settings, _SignalFlag() as flag:
        run = _Run(cfg, stream, flag)
        if dry_run:
            return run.dry_run()
        return run.evaluate_only(resume) if eval_only else run.train(resume)


def _as_config(config):
    if isinstance(config, config_lib.Config):
        return config
    if isinstance(config, dict):
        return config_lib.config_from_dict(config)
    if isinstance(config, (str, os.PathLike)):
        return config_lib.load_config([os.fspath(config)])
    raise TypeError(f"fit: config must be a train.config.Config, a dict or a YAML path, got {type(config).__name__}")


class _ConfigRestorer:
    """Turns on the persistent compilation cache for the run (`run.compilation_cache`) and puts
    core's global config back afterwards: `fit` is a library call and leaves no setting behind."""

    def __init__(self, cfg):
        self.cfg = cfg

    def __enter__(self):
        self.before = core.config.compilation_cache_dir
        if self.cfg.run.compilation_cache and self.before is None:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            core.config.update("compilation_cache_dir", os.path.join(base, "purenn", "compilation"))

    def __exit__(self, *exc):
        if core.config.compilation_cache_dir != self.before:
            core.config.update("compilation_cache_dir", self.before)


class _SignalFlag:
    """SIGTERM, SIGINT and SIGUSR1 (SLURM's and other schedulers' "about to be preempted" notice)
    set a flag the loop polls; a second one raises
    KeyboardInterrupt at once. Checkpoints are only renamed into place when complete, so stopping
    anywhere leaves the last committed one intact. Installed only in the main thread (Python
    delivers signals there); the previous handlers come back on exit."""

    def __init__(self):
        self.signame = None
        self._previous = {}

    def __bool__(self):
        return self.signame is not None

    def _handle(self, signum, frame):
        if self.signame is not None:
            raise KeyboardInterrupt(f"second {signal.Signals(signum).name}: stopping at once")
        self.signame = signal.Signals(signum).name

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


# ----- one run --------------------------------------------------------------------------------------

class _Run:
    """The pieces of one run, built from the config in `__init__`; `train`, `dry_run` and
    `evaluate_only` use them."""

    def __init__(self, cfg, stream, flag):
        self.cfg, self.stream, self.flag = cfg, stream, flag
        run, d = cfg.run, cfg.data
        self.devices = run.devices
        if core.local_device_count() < self.devices:
            raise cfg.error("run.devices", f"asks for {self.devices} devices but {core.local_device_count()} are "
                                           "available (on CPU, set PURENN_NUM_CPU_DEVICES before starting)")
        self.workdir = run.workdir or os.path.join("runs", run.name)
        try:
            # seed 0: the dataset itself (its splits, the synthetic sets) is the same for every run;
            # run.seed decides the initialization, the batch order and the augmentation
            self.data = data_lib.load_data(
                d.name, d.path, seed=0, validation_fraction=d.validation_fraction,
                test_fraction=d.test_fraction, normalize=d.normalize, num_train=d.num_train, num_test=d.num_test,
                num_classes=d.num_classes, seq_len=d.seq_len, vocab_size=d.vocab_size, input_dim=d.input_dim)
            self.batch_size, self.eval_batch_size = d.batch_size, d.eval_batch_size or d.batch_size
            data_lib.check_batch_size(self.data, self.batch_size, self.eval_batch_size)
        except data_lib.DataError as e:
            raise cfg.error(e.key, e.message) from None
        self.batches_per_epoch = data_lib.num_batches(len(self.data.train.y), self.batch_size)
        self.total_steps = run.steps or run.epochs * self.batches_per_epoch
        try:
            axis = "batch" if self.devices > 1 else None
            self.model = registry.build_model(cfg.model.to_dict(), self.data.num_classes, axis_name=axis)
            loss = registry.per_example_loss(cfg.loss.to_dict())
            metrics = registry.metric_fns(list(cfg.metrics))
            optimizer, self.schedule = registry.build_optimizer(cfg.optimizer.to_dict(), self.total_steps)
        except registry.RegistryError as e:
            raise cfg.error(e.key, e.message) from None
        self.input_shape = tuple(self.data.input_shape)
        try:
            out_shape = nn.output_shape(self.model, (-1,) + self.input_shape)
        except (TypeError, ValueError) as e:
            raise cfg.error("model", f"does not fit the data's examples of shape {self.input_shape}: {e}") from None
        if tuple(out_shape) != (-1, self.data.num_classes):
            raise cfg.error("model", f"outputs shape {tuple(out_shape)} for inputs {(-1,) + self.input_shape}, but the "
                                     f"data has {self.data.num_classes} classes: the model must end in "
                                     f"Dense({self.data.num_classes})")
        # DP-SGD (issue 15): None unless dp.enabled; all of its logic is in train/dp.py
        self.dp = (dp_lib.DpRun(cfg, self.data, self.model, loss, input_shape=self.input_shape,
                                total_steps=self.total_steps, batch_size=self.batch_size)
                   if cfg.dp.enabled else None)
        o = cfg.optimizer
        self.steps = make_steps(self.model, loss, metrics, optimizer, input_shape=self.input_shape,
                                schedule=self.schedule, grad_clip_norm=o.grad_clip_norm, weight_decay=o.weight_decay,
                                ema_decay=o.ema_decay, devices=self.devices, dp=self.dp and self.dp.settings,
                                skip_nonfinite=run.on_nonfinite == "skip")
        self.metric_names = ["loss"] + list(metrics)

    # ----- batches ---------------------------------------------------------------------------------
    def _train_batches(self, epoch, start):
        """`(epoch, index, batch)` from batch `start` of `epoch` on, epoch after epoch for as long
        as the loop takes them, built on one prefetch thread for the whole run (a thread per epoch
        cost ~3 ms to start and fill: a tenth of the digits MLP's 38-step epochs)."""
        d = self.cfg.data

        def one_epoch(e, s):
            if self.dp:
                return self.dp.batches(self.data.train, seed=self.cfg.run.seed, epoch=e, start=s,
                                       batches_per_epoch=self.batches_per_epoch, shuffle=d.shuffle, augment=d.augment)
            return data_lib.batches(self.data.train, self.batch_size, seed=self.cfg.run.seed, epoch=e, start=s,
                                    shuffle=d.shuffle, augment=d.augment)

        def every_epoch(first):
            e, batches = epoch, first
            while True:
                for index, batch in batches:
                    yield e, index, batch
                e += 1
                batches = one_epoch(e, 0)

        it = every_epoch(one_epoch(epoch, start))   # the arguments are checked here, in this thread
        if self.devices == 1:   # on several devices the step splits the host batch across them
            it = data_lib.on_device(it)
        return data_lib.Prefetcher(it, size=d.prefetch, group_bytes=data_lib.PREFETCH_GROUP_BYTES,
                                   group_items=data_lib.PREFETCH_GROUP_ITEMS)

    def _on_devices(self, batch):
        """A host batch for the step: as it is on one device, split along a leading device axis
        on several."""
        if self.devices == 1:
            return batch
        n = self.devices
        return {k: v.reshape((n, v.shape[0] // n) + v.shape[1:]) for k, v in batch.items()}

    def _state_on_devices(self, state):
        if self.devices > 1:
            return core.replicate(state, devices=core.local_devices()[:self.devices])
        return tree_map(core.device_put, state)

    def _host_state(self, state):
        return core.device_get(core.unreplicate(state) if self.devices > 1 else state)

    # ----- evaluation ------------------------------------------------------------------------------
    def evaluate(self, state, split_name):
        """Means of the loss and metrics over `split_name`'s examples, or None when interrupted by
        a signal (the caller then checkpoints and stops)."""
        split = getattr(self.data, split_name)
        if split is None:
            return None
        params, layer_state = self.steps.params(state), state["layer_state"]
        totals = {}
        for _, batch in data_lib.batches(split, self.eval_batch_size, seed=0, epoch=0, shuffle=False):
            if self.flag:
                return None
            sums = core.device_get(self.steps.eval_step(params, layer_state, self._on_devices(batch)))
            if self.devices > 1:
                sums = {k: v[0] for k, v in sums.items()}
            for k, v in sums.items():
                totals[k] = totals.get(k, 0.0) + float(v)
        count = max(totals.pop("count"), 1.0)
        return {k: v / count for k, v in totals.items()}

    # ----- the modes -------------------------------------------------------------------------------
    def dry_run(self):
        say = self._say
        say(f"data: {self.data.description}")
        say(nn.summary(self.model, (-1,) + self.input_shape, print_fn=None))
        state = self.steps.init_state(self.cfg.run.seed)
        count = sum(int(np.prod(leaf.shape)) for leaf in core.tree_util.tree_leaves(self.steps.params(state))
                    if hasattr(leaf, "shape"))
        _, batch = next(iter(data_lib.batches(self.data.train, self.batch_size, seed=0, epoch=0)))
        say(f"parameters: {count:,}")
        say("one batch: " + ", ".join(f"{k} {v.dtype}{list(v.shape)}" for k, v in batch.items()))
        say(f"steps: {self.total_steps} ({self.batches_per_epoch} per epoch), devices: {self.devices}")
        if self.dp:
            say(self.dp.describe())
            say(str(self.dp.plan))
        say("dry run: nothing trained")
        return Result({}, None, self.workdir, 0, None)

    def evaluate_only(self, resume):
        restored = self._restore(resume if resume != "never" else "auto", self._checkpointer())
        if restored is None:
            raise self.cfg.error("run.workdir", f"--eval-only needs a checkpoint, and {self.workdir} has none")
        step, state, _ = restored
        state = self._state_on_devices(state)
        metrics = {}
        for split in ("validation", "test"):
            values = self.evaluate(state, split)
            if self.flag:   # cut short: the metrics are incomplete, so do not report them as done
                path = resume if resume not in ("auto", "never") else os.path.join(self.workdir, "checkpoints",
                                                                                   str(step))
                raise Preempted(self.flag.signame, step, path, evaluating=True)
            if values:
                metrics.update({f"{split}/{k}": v for k, v in values.items()})
        self._say(f"evaluated step {step}: {format_metrics(metrics)}")
        return Result(metrics, self._host_state(state), self.workdir, step, None)

    def train(self, resume):
        cfg, run = self.cfg, self.cfg.run
        ckpt = self._checkpointer()
        restored = self._restore(resume, ckpt)
        if restored is None:
            step, state, meta = 0, self.steps.init_state(run.seed), {}
            epoch, index = 0, 0
        else:
            step, state, meta = restored
            epoch, index = meta["data_position"]["epoch"], meta["data_position"]["index"]
            self._clear_the_way(resume, ckpt, step)
        os.makedirs(self.workdir, mode=0o750, exist_ok=True)
        with open(os.path.join(self.workdir, "config.yaml"), "w", encoding="utf-8") as f:
            f.write(config_lib.dump_yaml(cfg))
        state = self._state_on_devices(state)
        log = RunLogger(self.workdir, total_steps=self.total_steps, start_step=step, progress=run.progress,
                        stream=self.stream)
        with log:
            if step == 0:
                log.text("config", "```yaml\n" + config_lib.dump_yaml(cfg) + "\n```")
            if step >= self.total_steps:
                log.say(f"the run in {self.workdir} already finished at step {step}: nothing to train (its results "
                        "follow). To train again use another workdir (--workdir DIR, or --resume never in an "
                        "empty one); to continue this run raise run.steps or run.epochs.", always=True)
            else:
                log.say(f"{'resuming at step ' + str(step) if step else 'training'}: {self.data.description}; "
                        f"{self.total_steps} steps on {self.devices} device(s); workdir {self.workdir}")
            if self.dp:
                self.dp.restore(meta, step)
                log.say(self.dp.describe())
                if step == 0:
                    log.text("dp", self.dp.describe() + "\n\n```\n" + str(self.dp.plan) + "\n```")
            loop = _Loop(self, ckpt, log, state, step, epoch, index, meta)
            return loop.run()

    # ----- checkpoints -----------------------------------------------------------------------------
    def _checkpointer(self):
        c = self.cfg.checkpoint
        keep_best = (c.keep_best_metric, c.keep_best_mode) if c.keep_best_metric else None
        # committed on a thread of its own while training goes on; the loop waits for it before
        # the next log record, checkpoint or stop (docs/design.md, "Checkpoints")
        return Checkpointer(os.path.join(self.workdir, "checkpoints"), keep=c.keep, keep_best=keep_best,
                            background=True)

    def _restore(self, resume, ckpt):
        template = self.steps.init_state(self.cfg.run.seed)
        if resume == "never":
            if ckpt.steps():
                raise self.cfg.error("run.workdir", f"{self.workdir} already holds checkpoints {ckpt.steps()}; "
                                                    "resume with --resume auto, or choose another --workdir")
            return None
        try:
            if resume == "auto":
                found = ckpt.restore_latest(template)
                if found is None:
                    return None
                step, tree, meta = found
            else:
                tree, meta = restore_path(resume, template)
                step = meta["step"]
        except CheckpointMismatchError as e:
            # the arrays do not fit this config's model: say which config keys changed
            meta = self._meta_of(resume, ckpt)
            self._check_same_model(meta)
            dp_lib.check_resume(self.cfg, meta)
            raise self.cfg.error("model", f"the checkpoint does not fit this model: {e}") from None
        self._check_same_model(meta)
        dp_lib.check_resume(self.cfg, meta)
        saved_on = meta.get("devices")
        if saved_on is not None and saved_on != self.devices:
            # the same training, but the reductions run in another order: not bit for bit
            warnings.warn(CheckpointWarning(
                f"resuming step {step}, saved by a run on {saved_on} device(s), on {self.devices}: the run "
                "continues with the same batches and model, but sums over the batch are split differently, "
                "so the results equal an uninterrupted run's within float rounding, not bit for bit"),
                stacklevel=2)
        return step, tree, meta

    def _clear_the_way(self, resume, ckpt, step):
        """The steps after `step` that the workdir holds: a run from `step` would reach them, and a
        checkpoint is never overwritten. With --resume auto they are the corrupt ones
        restore_latest skipped (it warned): renamed to `<step>.corrupt-<nonce>`, kept for
        inspection but out of the listing. With --resume PATH (an older step): refused."""
        later = [s for s in ckpt.steps() if s > step]
        if not later:
            return
        if resume != "auto":
            raise self.cfg.error("run.workdir", f"--resume {resume} restores step {step}, but {self.workdir} "
                                                f"already holds the later checkpoints {later}; a run from step "
                                                f"{step} would reach their steps and cannot overwrite them. "
                                                "Continue the newest with --resume auto, or give another --workdir")
        template = self.steps.init_state(self.cfg.run.seed)
        for s in later:
            try:
                ckpt.restore(s, template)
            except CheckpointCorruptError:
                src = os.path.join(ckpt.directory, str(s))
                dst = f"{src}.corrupt-{os.urandom(4).hex()}"
                os.rename(src, dst)
                warnings.warn(CheckpointWarning(f"moved the corrupt checkpoint step {s} to {dst} (kept for "
                                                f"inspection); this run continues from step {step} and writes "
                                                f"step {s} again"), stacklevel=2)
            else:   # valid after all: it appeared while we restored (another run in this workdir?)
                raise self.cfg.error("run.workdir", f"checkpoint step {s} appeared in {ckpt.directory} while "
                                                    f"this run restored step {step}; is another run using "
                                                    f"{self.workdir}?")

    @staticmethod
    def _meta_of(resume, ckpt):
        if resume != "auto":
            with open(os.path.join(resume, "meta.json"), encoding="utf-8") as f:
                return json.load(f)
        return ckpt.read_meta(ckpt.latest_step())

    def _check_same_model(self, meta):
        if meta.get("model_hash") == config_lib.model_hash(self.cfg):
            return
        keys = config_lib.model_key_diff(meta.get("config", {}), self.cfg)
        raise self.cfg.error(keys[0] if keys else "model",
                             f"the checkpoint in {self.workdir} was trained with a different model or data "
                             f"(differing keys: {', '.join(keys) or 'unknown'}); use another --workdir, or "
                             "--resume never in a fresh one")

    def _say(self, line):
        print(line, file=self.stream, flush=True)


# ----- the loop ---------------------------------------------------------------------------------------

class _Loop:
    """The training loop's moving parts: the device state, the step count and data position,
    the running sums of the current logging interval, the latest evaluation."""

    def __init__(self, run, ckpt, log, state, step, epoch, index, meta):
        self.r, self.ckpt, self.log = run, ckpt, log
        self.cfg = run.cfg
        self.state, self.step, self.epoch, self.index = state, step, epoch, index
        partial = meta.get("log_partial") or {"count": 0, "sums": {}}
        self.interval_count, self.interval_sums = partial["count"], dict(partial["sums"])
        self.pending = []           # this interval's metrics, still on the device
        self.inflight = None        # the last ended interval, on its way to the host (`_Interval`)
        self.last_eval = meta.get("last_eval") or {}
        # the last logged interval's means: the summary of a run resumed at its last step has them
        self.train_metrics = dict(meta.get("train_metrics") or {})
        self.eval_pending = bool(meta.get("eval_pending"))
        self.last_saved = ckpt.latest_step()
        self.compile_seconds = None
        self._intervals = (self.cfg.run.log_every, self.cfg.eval.every, self.cfg.checkpoint.every)
        self.start_step = step

    def run(self):
        cfg, r, total = self.cfg, self.r, self.r.total_steps
        t_start = time.perf_counter()
        if self.eval_pending:               # a signal interrupted this evaluation: redo it first
            self._evaluate()
        self._poll()                         # a signal during data loading and set-up
        if self.step < total:
            with r._train_batches(self.epoch, self.index) as batches:
                for epoch, index, batch in batches:
                    self._train_step(batch, epoch, index)
                    self._after_step()
                    if self.step >= total:
                        break
        self._flush_metrics()
        self._check_nonfinite()
        if not self.last_eval or self.last_eval.get("step") != self.step:
            self._evaluate()
        test = r.evaluate(self.state, "test") if cfg.eval.at_end else None
        if test is None and cfg.eval.at_end:
            self._poll()    # cut short by a signal: commit the last step, and the rerun evaluates again
        if test:
            self.log.scalars(self.step, {f"test/{k}": v for k, v in test.items()})
        path = self._save() if self.last_saved != self.step else self.ckpt_path(self.step)
        self._committed()
        wall = time.perf_counter() - t_start
        final = {f"train/{k}": v for k, v in self.train_metrics.items()}
        split = self.cfg.eval.split
        final.update({f"{split}/{k[5:]}": v for k, v in self.last_eval.items() if k.startswith("eval/")})
        final.update({f"test/{k}": v for k, v in (test or {}).items()})
        if r.dp:
            self.log.scalars(self.step, r.dp.log_scalars(self.step, pld=True))
            final.update(r.dp.final())
        self.log.flush()
        self._summary(final, wall, path)
        return Result(final, r._host_state(self.state), r.workdir, self.step, path)

    # ----- one step --------------------------------------------------------------------------------
    def _train_step(self, batch, epoch, index):
        r = self.r
        first = self.compile_seconds is None
        if first:
            self.log.say("compiling the train step ...")
            t = time.perf_counter()
        self.state, metrics = r.steps.train_step(self.state, r._on_devices(batch))
        if first:
            core.block_until_ready(metrics)
            self.compile_seconds = time.perf_counter() - t
            self.log.start_clock(self.step + 1)
            self.log.scalars(self.step + 1, {"compile_seconds": self.compile_seconds,
                                             "time_to_first_step": seconds_since_process_start()})
        self.pending.append(metrics)
        self.step += 1
        if r.dp:
            r.dp.record_step()
        self.epoch, self.index = epoch, index + 1
        if self.index == r.batches_per_epoch:
            self.epoch, self.index = self.epoch + 1, 0

    def _after_step(self):
        # runs after every step: the intervals are read from the config once (`_intervals`), a
        # config lookup costing about a microsecond against a step of ~0.3 ms
        step, total = self.step, self.r.total_steps
        log_every, eval_every, ckpt_every = self._intervals
        if step % log_every == 0 or step == total:
            self._end_interval()
        elif self.inflight is not None and self.inflight.ready():
            self._complete_interval()
        # evaluations come before the checkpoint of the same step, so a run resumed from that
        # checkpoint does not miss them; the end of the last epoch is evaluated after the loop
        if (eval_every and step % eval_every == 0) or (not eval_every and self.index == 0 and step < total):
            self._evaluate()
        if ckpt_every and step % ckpt_every == 0 and step != self.last_saved:
            self._save()
        if self.r.flag:
            self._poll()

    def _poll(self, eval_pending=False):
        """Stop here if a signal arrived: commit a checkpoint at this step, flush, raise."""
        if not self.r.flag:
            return
        self._complete_interval()
        path = self._save(eval_pending=eval_pending) if self.last_saved != self.step else self.ckpt_path(self.step)
        self._committed()
        self.log.flush()
        self.log.say(f"Stopped by {self.r.flag.signame} at step {self.step}; checkpoint {path}", always=True)
        raise Preempted(self.r.flag.signame, self.step, path)

    # ----- metrics ---------------------------------------------------------------------------------
    # A logging interval ends with its metrics still on the device. Fetching them at once would
    # wait for every queued step and leave the device idle while the line is written (about a
    # tenth of the digits MLP's time), so `_end_interval` only starts their copy (one stacking
    # program, with a snapshot of the non-finite counters, since the next step donates the
    # state) and the line is written once it has arrived: when it is ready, at the next
    # interval's end, or before anything that must see it (an evaluation, a checkpoint, a stop),
    # so the logs and a checkpoint's `log_partial` are the same as with an immediate fetch.
    def _end_interval(self):
        self._complete_interval()
        counters = self.state["nonfinite"] if self.r.devices == 1 else None
        self.inflight = _Interval.start(self, counters)
        self.pending, self.interval_count, self.interval_sums = [], 0, {}
        if self.cfg.run.histograms or counters is None:    # they read the state of this very step
            self._complete_interval()
            if counters is None:
                self._check_nonfinite()

    def _complete_interval(self):
        interval, self.inflight = self.inflight, None
        if interval is None:
            return
        self._committed()
        count, sums = interval.fold()
        counters = interval.counters()
        if counters is not None:
            self._check_nonfinite(counters, interval.step)
        if not count:
            return
        means = {k: v / count for k, v in sums.items()}
        self.train_metrics = {k: v for k, v in means.items() if k not in ("learning_rate", "grad_norm")}
        scalars = {(k if k in ("learning_rate", "grad_norm") else f"train/{k}"): v for k, v in means.items()}
        rate, _ = self.log.rates(interval.step)
        scalars["steps_per_second"] = rate
        scalars["examples_per_second"] = rate * self.r.batch_size
        scalars.update(interval.dp_scalars)
        self.log.scalars(interval.step, scalars)
        if self.cfg.run.histograms:
            params = self.r._host_state(self.state)["opt_state"]
            self.log.histograms(interval.step, [("params" + keystr(p), np.asarray(v))
                                                for p, v in tree_flatten_with_path(params)[0]])
        self.log.progress(interval.step, {**scalars, **self.last_eval, **interval.dp_progress})

    def _accumulate(self):
        """Log the interval in flight, then fold the pending device metrics into this interval's
        float64 sums, in step order (the same order whether or not the run was interrupted, so
        resumed sums are bitwise equal): a checkpoint's `log_partial`."""
        self._complete_interval()
        if not self.pending:
            return
        interval = _Interval.start(self, None, logged=False)
        self.pending = []
        self.interval_count, self.interval_sums = interval.fold()

    def _flush_metrics(self):
        self._end_interval()
        self._complete_interval()

    def _check_nonfinite(self, counters=None, step=None):
        """Raise as `run.on_nonfinite` says if the non-finite counters (the state's, or a snapshot
        taken at an interval's end) count a bad step."""
        nf = self.r._host_state(self.state["nonfinite"]) if counters is None else counters
        step = self.step if step is None else step
        total = int(nf["total"])
        if total:
            self.log.scalars(step, {"train/nonfinite_steps": float(total)})
        run = self.cfg.run
        if run.on_nonfinite == "stop" and total:
            first = int(nf["first_step"]) + 1
            raise NonFiniteLossError(first, "loss or gradient", "nan or inf", self.ckpt.latest_step())
        if run.on_nonfinite == "skip" and int(nf["longest"]) >= run.max_consecutive_nonfinite:
            raise NonFiniteLossError(step, "loss or gradient", "nan or inf", self.ckpt.latest_step(),
                                     f" in {int(nf['longest'])} consecutive steps (run.max_consecutive_nonfinite: "
                                     f"{run.max_consecutive_nonfinite})")

    def _evaluate(self):
        self._complete_interval()
        self._committed()
        if self.cfg.run.on_nonfinite == "stop":
            self._check_nonfinite()
        split = self.cfg.eval.split
        values = self.r.evaluate(self.state, split)
        if values is None and self.r.flag:
            self._poll(eval_pending=True)
        if not values:
            return
        self.eval_pending = False
        prefix = "eval"
        scalars = {f"{prefix}/{k}": v for k, v in values.items()}
        self.log.scalars(self.step, {**scalars, **(self.r.dp.log_scalars(self.step, pld=True) if self.r.dp else {})})
        self.last_eval = {**scalars, "step": self.step}
        self.log.say(f"step {self.step}: {format_metrics({f'{split}/{k}': v for k, v in values.items()})}")

    # ----- checkpoints -----------------------------------------------------------------------------
    def ckpt_path(self, step):
        return os.path.join(self.ckpt.directory, str(step))

    def _save(self, eval_pending=False):
        self._complete_interval()
        if self.cfg.run.on_nonfinite == "stop":   # the unguarded step: never commit a non-finite state
            self._check_nonfinite()
        self._accumulate()
        r = self.r
        meta = {"data_position": {"epoch": self.epoch, "index": self.index, "seed": self.cfg.run.seed},
                "config": self.cfg.to_dict(), "model_hash": config_lib.model_hash(self.cfg),
                "log_partial": {"count": self.interval_count, "sums": self.interval_sums},
                "last_eval": self.last_eval, "eval_pending": eval_pending, "train_metrics": self.train_metrics,
                "devices": r.devices}
        if r.dp:
            meta["dp"] = r.dp.meta()
        metric_name = self.cfg.checkpoint.keep_best_metric
        metric = self.last_eval.get(metric_name) if metric_name else None
        # the records so far go to the OS now and are synced by the commit, before the step is
        # renamed into place (the main thread does not wait for the disk)
        self.log.flush(sync=False)
        try:
            path = self.ckpt.save(self.step, r._host_state(self.state), meta, metric=metric,
                                  before_commit=self.log.sync)
        except CheckpointError:
            self.log.flush()
            raise
        self.last_saved = self.step
        return path

    def _committed(self):
        """Wait for the checkpoint being committed in the background, if any; a failed commit
        stops the run as a failed synchronous save does."""
        try:
            self.ckpt.wait()
        except CheckpointError:
            self.log.flush()
            raise

    def _summary(self, final, wall, path):
        since = "" if not self.start_step else f"; resumed at step {self.start_step}" \
            if self.step > self.start_step else "; it had already finished, nothing was trained"
        lines = [f"Done: {self.step} steps in {wall:.1f} s"
                 + (f" (compile {self.compile_seconds:.1f} s)" if self.compile_seconds else "") + since]
        if final:
            lines.append("  " + format_metrics(final).replace(" | ", "\n  "))
        lines.append(f"  checkpoint: {_shown(path)}")
        lines.append(f"  logs: {_shown(self.log.tb_dir)} (tensorboard --logdir {_shown(self.r.workdir)}), "
                     f"{_shown(self.log.jsonl_path)}")
        for line in lines:
            self.log.say(line, always=True)


def _shown(path):
    """`path` as the summary prints it: relative to the working directory when it is below it (as
    the default workdir `runs/NAME` is given), else absolute; the same form for every path."""
    path = os.path.abspath(path)
    rel = os.path.relpath(path)
    return path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


# ----- fetching metrics ------------------------------------------------------------------------------

_STACK_STEPS = 64   # the most steps of metrics one stacking program takes


def _fetch_metrics(pending, width):
    """The pending per-step metric vectors (device float32[k]) on the host, as one (steps, k)
    array, in few device-to-host copies (`_start_fetch`, then waiting for them)."""
    return _finish_fetch(_start_fetch(pending, width))


def _start_fetch(pending, width):
    """Start copying the pending per-step metric vectors to the host; returns what
    `_finish_fetch` turns into the host values, without waiting for the steps.

    Fetching them one by one costs a transfer each, tens of microseconds on a loaded CPU machine:
    for the digits MLP, copying 50 steps' metrics took about as long as the 50 steps
    (bench/RESULTS.md, "Trainer (issue 14)"). So they are stacked on the device first, in chunks
    of `min(width, 64)` steps (`width`: the logging interval), the last chunk padded by repeating
    its last vector, so that one program of a bounded size serves every interval of a run (a
    program stacking a whole interval of `log_every: 20000` would take minutes to compile). The
    values are the float32 values the step returned, unchanged. Anything else (the (devices, k)
    metrics of a pmapped step) is fetched as it is."""
    # the step's outputs share one aval object (jit's fast path), so the common case is one set
    avals = {id(getattr(v, "aval", None)): getattr(v, "aval", None) for v in pending}
    shapes = {(getattr(a, "shape", None), getattr(a, "dtype", None)) for a in avals.values()}
    if len(shapes) != 1 or len(next(iter(shapes))[0] or ()) != 1 or next(iter(shapes))[1] != np.float32:
        return list(pending), None
    chunk = min(max(width, 1), _STACK_STEPS)
    stacked = []
    for start in range(0, len(pending), chunk):
        part = pending[start:start + chunk]
        stacked.append(_stack_rows(part + part[-1:] * (chunk - len(part))))
    return stacked, len(pending)


def _finish_fetch(started):
    parts, count = started
    if count is None:    # not all float32 vectors of one length: fetched as they are
        return [np.asarray(v) for v in core.device_get(parts)]
    return np.concatenate([np.asarray(p) for p in parts])[:count] if parts else np.zeros((0, 0), np.float32)


_STACKERS = {}   # chunk length -> its jitted stacking program


def _stack_rows(vectors):
    """`vectors` stacked on the device by a program of their count's own: a run uses one count,
    and a process that runs configs with several logging intervals (a notebook, the tests) never
    retraces one function across counts (jit warns when a function keeps retracing)."""
    stack = _STACKERS.get(len(vectors))
    if stack is None:
        stack = _STACKERS.setdefault(len(vectors), core.jit(jnp.stack))
    return stack(vectors)


@core.jit
def _copy_tree(tree):
    return tree_map(jnp.copy, tree)


class _Interval:
    """An ended logging interval whose metrics are being copied to the host: the step it ended
    at, the sums carried in from before a checkpoint in its middle, its started fetch, a copy of
    the non-finite counters at its end (taken before the next step donates the state), and the
    privacy figures at that step."""

    def __init__(self, step, names, count, sums, fetch, counters, dp_scalars, dp_progress):
        self.step, self.names, self.count, self.sums = step, names, count, sums
        self._fetch, self._counters = fetch, counters
        self.dp_scalars, self.dp_progress = dp_scalars, dp_progress

    @classmethod
    def start(cls, loop, counters, logged=True):
        """The loop's current interval (its pending metrics and running sums), fetch started; with
        the privacy figures at this step if it is to be `logged`."""
        if loop.r.devices == 1:
            fetch = _start_fetch(loop.pending, loop.cfg.run.log_every)
        else:     # replicated over devices: fetched as they are
            fetch = (list(loop.pending), None)
        dp = loop.r.dp if logged else None
        return cls(loop.step, loop.r.steps.metric_names, loop.interval_count, dict(loop.interval_sums), fetch,
                   None if counters is None else _copy_tree(counters),
                   dp.log_scalars(loop.step, pld=False) if dp else {}, dp.progress() if dp else {})

    def ready(self):
        parts, count = self._fetch
        return count is not None and all(p.is_ready() for p in parts)

    def fold(self):
        """(count, sums): the carried sums plus this interval's fetched metrics, in step order."""
        sums, names = dict(self.sums), self.names
        rows = _finish_fetch(self._fetch)
        if not len(rows):
            return self.count, sums
        if isinstance(rows, list):     # pmapped: one row per device, all equal
            rows = np.stack([r.reshape(-1, len(names))[0] for r in rows])
        # float64 sums added one step at a time, in step order (cumsum adds sequentially, as a
        # Python loop would): a resumed run's sums are bitwise those of the uninterrupted run
        table = np.empty((len(rows) + 1, len(names)), np.float64)
        table[0] = [sums.get(k, 0.0) for k in names]
        table[1:] = rows
        sums.update(zip(names, np.cumsum(table, axis=0)[-1].tolist()))
        return self.count + len(rows), sums

    def counters(self):
        """The non-finite counters at the interval's end on the host, or None if not copied."""
        return None if self._counters is None else {k: np.asarray(v) for k, v in self._counters.items()}


def _tmp():  # for the docstring example
    import tempfile
    return tempfile.mkdtemp()

"""The training loop end to end (`train.fit`): exact resume (docs/reliability.md T6, T9), one
trace per step function (S1), non-finite policies (T8), several devices, the logs read back with
TensorBoard's own reader, and the model/data checks a user meets first.

Runs are tiny (synthetic data, a few dozen steps) so each test takes a second or two.
"""
import json
import os

import numpy as np
import pytest

import train
from train_helpers import jsonl, leaves  # tests/ is on sys.path
from train import config as config_lib
from train import data as data_lib
from train import loop as loop_lib


def small_config(workdir, **sections):
    """A fast run: 80 synthetic training examples (100 less a 20 % validation split) in batches of
    12, so 7 per epoch with a ragged last batch of 8; an MLP, Adam with a constant step size,
    logging every step."""
    cfg = {
        "run": {"workdir": str(workdir), "steps": 14, "log_every": 1, "progress": "off",
                "compilation_cache": False},
        "data": {"name": "synthetic_classification", "num_train": 100, "num_test": 40, "input_dim": 6,
                 "num_classes": 3, "batch_size": 12, "validation_fraction": 0.2, "prefetch": 1},
        "model": {"preset": "mlp", "args": {"hidden": [16]}},
        "optimizer": {"name": "adam", "learning_rate": 0.01},
        "eval": {"every": 5},
        "checkpoint": {"every": 4, "keep": 10},
    }
    for name, values in sections.items():
        cfg.setdefault(name, {}).update(values)
    return cfg


def losses(workdir):
    return [(r["step"], r["train/loss"]) for r in jsonl(workdir) if "train/loss" in r]


def assert_trees_equal(a, b):
    la, lb = leaves(a), leaves(b)
    assert la.keys() == lb.keys()
    for k in la:
        np.testing.assert_array_equal(la[k], lb[k], err_msg=k)
        assert la[k].dtype == lb[k].dtype, k


def test_fit_trains_and_returns_a_result(tmp_path):
    result = train.fit(small_config(tmp_path, run={"steps": 60}, eval={"every": 0}))
    assert result.steps == 60
    assert result.metrics["test/accuracy"] > 0.8       # the blobs are separable
    assert os.path.isdir(result.checkpoint)
    assert os.path.exists(tmp_path / "config.yaml")
    # the config written to the workdir loads back to the same resolved config
    again = config_lib.load_config([str(tmp_path / "config.yaml")])
    assert again.to_dict() == config_lib.config_from_dict(small_config(tmp_path, run={"steps": 60},
                                                                       eval={"every": 0})).to_dict()


def interrupt_at(monkeypatch, step):
    """Simulate SIGTERM arriving during step `step`: the flag the handler would set."""
    original = loop_lib._Loop._after_step

    def after_step(self):
        if self.step == step:
            self.r.flag.signame = "SIGTERM"
        original(self)
    monkeypatch.setattr(loop_lib._Loop, "_after_step", after_step)


# the first step; the last of epoch 1 (7 batches); the first of epoch 2; mid-epoch; a checkpoint step
@pytest.mark.parametrize("k", [1, 7, 8, 10, 4])
def test_resume_is_bitwise_identical_T6(tmp_path, monkeypatch, k):
    """T6/T9: a run interrupted at step k and resumed equals the uninterrupted run bit for bit: the
    per-step losses, the logged eval metrics, the final parameters and optimizer state."""
    full = train.fit(small_config(tmp_path / "full"))
    with monkeypatch.context() as m:
        interrupt_at(m, k)
        with pytest.raises(loop_lib.Preempted) as info:
            train.fit(small_config(tmp_path / "cut"))
    assert info.value.step == k
    resumed = train.fit(small_config(tmp_path / "cut"))
    assert losses(tmp_path / "cut") == losses(tmp_path / "full")
    evals = [{k2: v for k2, v in r.items() if k2.startswith(("eval/", "test/"))} | {"step": r["step"]}
             for r in jsonl(tmp_path / "full") if any(x.startswith(("eval/", "test/")) for x in r)]
    evals_cut = [{k2: v for k2, v in r.items() if k2.startswith(("eval/", "test/"))} | {"step": r["step"]}
                 for r in jsonl(tmp_path / "cut") if any(x.startswith(("eval/", "test/")) for x in r)]
    assert evals_cut == evals
    assert_trees_equal(resumed.state, full.state)
    assert resumed.metrics == full.metrics


def test_one_trace_per_step_function_S1(tmp_path, monkeypatch):
    """S1: a whole run (three epochs, the last batch of each ragged and padded) traces the train
    step once and the eval step once."""
    seen = []
    original = loop_lib.make_steps

    def spy(*args, **kwargs):
        fns = original(*args, **kwargs)
        seen.append(fns)
        return fns
    monkeypatch.setattr(loop_lib, "make_steps", spy)
    train.fit(small_config(tmp_path, run={"steps": 21}))
    assert seen[0].trace_counts == {"train": 1, "eval": 1}
    assert len(seen[0].train_step._cache) == 1


def nan_at(monkeypatch, bad_steps):
    """Make the batches of the given global steps (1-based) carry a NaN input."""
    original = data_lib.batches
    per_epoch = data_lib.num_batches(80, 12)

    def batches(split, batch_size, *, epoch=0, **kw):
        for index, batch in original(split, batch_size, epoch=epoch, **kw):
            if kw.get("shuffle", True) and epoch * per_epoch + index + 1 in bad_steps:
                batch = dict(batch, x=batch["x"].copy())
                batch["x"][0, 0] = np.nan
            yield index, batch
    monkeypatch.setattr(data_lib, "batches", batches)


def test_nonfinite_stop_names_the_step_T8(tmp_path, monkeypatch):
    nan_at(monkeypatch, {6})
    with pytest.raises(loop_lib.NonFiniteLossError, match=r"at step 6.*newest committed checkpoint is step 4"):
        train.fit(small_config(tmp_path))


def test_nonfinite_stop_never_commits_the_bad_state_T8(tmp_path, monkeypatch):
    """stop: the step is unguarded, so the state after step 6 holds NaN; logging every 100 steps
    the loop first looks at the counters when it would checkpoint step 8 (or evaluate at 10), and
    stops there: no checkpoint after step 4 exists, and every committed one is finite."""
    nan_at(monkeypatch, {6})
    with pytest.raises(loop_lib.NonFiniteLossError, match=r"at step 6.*newest committed checkpoint is step 4"):
        train.fit(small_config(tmp_path, run={"log_every": 100}))
    directory = os.path.join(tmp_path, "checkpoints")
    assert sorted(int(d) for d in os.listdir(directory) if d.isdigit()) == [4]
    arrays = [np.load(os.path.join(directory, "4", f)) for f in os.listdir(os.path.join(directory, "4"))
              if f.endswith(".npz")]
    assert arrays and all(np.isfinite(a[k]).all() for a in arrays for k in a.files if a[k].dtype.kind == "f")


def test_nonfinite_skip_keeps_state_bitwise_T8(tmp_path, monkeypatch):
    """skip: the non-finite steps change nothing; the run equals one whose bad batches left the
    parameters alone, and the count is logged."""
    nan_at(monkeypatch, {3, 8})
    result = train.fit(small_config(tmp_path, run={"on_nonfinite": "skip"}))
    nf = result.state["nonfinite"]
    assert int(nf["total"]) == 2 and int(nf["first_step"]) == 2 and int(nf["longest"]) == 1
    assert jsonl(tmp_path)[-1].get("train/nonfinite_steps", None) == 2.0 or \
        any(r.get("train/nonfinite_steps") == 2.0 for r in jsonl(tmp_path))
    assert all(np.isfinite(v).all() for v in leaves(result.state).values() if v.dtype.kind == "f")


def test_a_skipped_step_leaves_the_state_bit_for_bit_T8(tmp_path, monkeypatch):
    """skip, checkpointing every step: the state a bad step (3, 8) commits holds the optimizer
    state, layer state and EMA of the step before it bit for bit (only the step number and the
    counters move on), while a good step changes them."""
    nan_at(monkeypatch, {3, 8})
    train.fit(small_config(tmp_path, run={"on_nonfinite": "skip", "steps": 9},
                           checkpoint={"every": 1, "keep": 20}, optimizer={"name": "adam", "learning_rate": 0.01,
                                                                           "ema_decay": 0.9}))

    def kept(step):
        with np.load(os.path.join(tmp_path, "checkpoints", str(step), "arrays.npz")) as z:
            return {k: z[k] for k in z.files if k.split("/")[0] in ("opt_state", "layer_state", "ema")}
    for bad in (3, 8):
        before, after, next_ = kept(bad - 1), kept(bad), kept(bad + 1)
        assert before.keys() == after.keys() and any(k.startswith("ema") for k in before)
        for k in before:
            assert before[k].tobytes() == after[k].tobytes(), (bad, k)
        assert any(after[k].tobytes() != next_[k].tobytes() for k in after), bad


def test_nonfinite_skip_aborts_after_k_in_a_row_T8(tmp_path, monkeypatch):
    nan_at(monkeypatch, {3, 4, 5})
    with pytest.raises(loop_lib.NonFiniteLossError, match="3 consecutive steps"):
        train.fit(small_config(tmp_path, run={"on_nonfinite": "skip", "max_consecutive_nonfinite": 3}))


def test_two_devices_equal_one(tmp_path):
    """The pmapped step on 2 CPU devices equals one device on the same global batch (float32
    rounding), BatchNorm statistics included. SGD, not Adam: the Dense bias before BatchNorm has
    a true gradient of zero, and Adam's m / sqrt(v) would blow its rounding noise up to steps
    of the full learning rate."""
    layers = [{"Dense": 16}, {"BatchNorm": {"axis": [0]}}, "Relu", {"Dense": 3}]
    common = dict(model={"preset": None, "layers": layers}, optimizer={"name": "sgd", "learning_rate": 0.1})
    one = train.fit(small_config(tmp_path / "one", run={"steps": 8}, **common))
    two = train.fit(small_config(tmp_path / "two", run={"steps": 8, "devices": 2}, **common))
    la, lb = leaves(one.state), leaves(two.state)
    for k in la:
        np.testing.assert_allclose(la[k], lb[k], rtol=2e-5, atol=2e-6, err_msg=k)
    np.testing.assert_allclose([v for _, v in losses(tmp_path / "one")], [v for _, v in losses(tmp_path / "two")],
                               rtol=1e-5)
    # T6: resuming a checkpoint of one device count on another warns (equal within rounding only),
    # and continues the same training: the 1-device run resumed on 2 devices follows the 2-device
    # run resumed on 2 devices
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train.fit(small_config(tmp_path / "one", run={"steps": 12, "devices": 2}, **common))
        train.fit(small_config(tmp_path / "two", run={"steps": 12, "devices": 2}, **common))
    said = [str(w.message) for w in caught if issubclass(w.category, loop_lib.CheckpointWarning)]
    assert len(said) == 1 and "saved by a run on 1 device(s), on 2" in said[0] and "not bit for bit" in said[0]
    np.testing.assert_allclose([v for k, v in losses(tmp_path / "one") if k > 8],
                               [v for k, v in losses(tmp_path / "two") if k > 8], rtol=1e-5)


def test_event_files_hold_every_logged_scalar(tmp_path):
    """What metrics.jsonl records is in TensorBoard's event files, read with TensorBoard's own
    EventAccumulator; a resumed run leaves no duplicated steps (purge_step)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    train.fit(small_config(tmp_path, run={"steps": 6}))
    train.fit(small_config(tmp_path, run={"steps": 10}))       # more steps: a safe change, resumes at 6
    acc = EventAccumulator(str(tmp_path / "tensorboard"), size_guidance={"scalars": 0})
    acc.Reload()
    records = jsonl(tmp_path)
    for tag in ("train/loss", "train/accuracy", "learning_rate", "grad_norm", "eval/accuracy", "test/accuracy",
                "steps_per_second", "examples_per_second"):
        events = acc.Scalars(tag)
        steps = [e.step for e in events]
        assert steps == sorted(set(steps)), tag
        expected = [(r["step"], r[tag]) for r in records if tag in r]
        assert [(e.step, pytest.approx(e.value, rel=1e-6)) for e in events] == expected, tag
    assert [s for s, _ in losses(tmp_path)] == list(range(1, 11))


def test_log_directories_are_0o750_or_stricter_S0c(tmp_path):
    """The workdir and its tensorboard/ directory get 0o750 from our code (checked under umask 0:
    tensorboardX alone would make tensorboard/ with the process's umask)."""
    from train.logs import RunLogger
    old = os.umask(0)
    try:
        with RunLogger(str(tmp_path / "w"), total_steps=1, progress="off") as log:
            log.scalars(1, {"train/loss": 1.0})
    finally:
        os.umask(old)
    for d in (tmp_path / "w", tmp_path / "w" / "tensorboard"):
        assert os.stat(d).st_mode & 0o777 & ~0o750 == 0, (d, oct(os.stat(d).st_mode))


def test_resume_with_a_different_model_is_refused(tmp_path):
    train.fit(small_config(tmp_path, run={"steps": 4}))
    with pytest.raises(config_lib.ConfigError, match=r"model\.args\.hidden"):
        train.fit(small_config(tmp_path, run={"steps": 8}, model={"args": {"hidden": [8]}}))


def test_model_that_does_not_fit_the_classes(tmp_path):
    with pytest.raises(config_lib.ConfigError, match=r"3 classes.*Dense\(3\)"):
        train.fit(small_config(tmp_path, model={"preset": None, "layers": [{"Dense": 5}]}))


def test_unknown_layer_is_a_config_error(tmp_path):
    with pytest.raises(config_lib.ConfigError, match=r"model\.layers\[1\].*did you mean 'Relu'"):
        train.fit(small_config(tmp_path, model={"preset": None, "layers": [{"Dense": 3}, "Relux"]}))


# ----- the modes and options of a run --------------------------------------------------------------

def initial_params(cfg):
    """The parameters a run of `cfg` starts from (what the loop builds, before any step)."""
    run = loop_lib._Run(config_lib.config_from_dict(cfg), None, loop_lib._SignalFlag())
    state = run.steps.init_state(0)
    return leaves(run.steps.params(state)), run


def sgd_params(result):
    return {k.replace("['opt_state'][0]", ""): v for k, v in leaves(result.state).items()
            if k.startswith("['opt_state'][0]")}


def one_step(tmp_path, name, **optimizer):
    cfg = small_config(tmp_path / name, run={"steps": 1}, eval={"every": 0, "at_end": False},
                       optimizer={"name": "sgd", "learning_rate": 0.5, **optimizer})
    return train.fit(cfg), cfg


def test_weight_decay_adds_wd_times_params_to_the_gradient(tmp_path):
    plain, cfg = one_step(tmp_path, "plain")
    decayed, _ = one_step(tmp_path, "decayed", weight_decay=0.1)
    p0, _ = initial_params(cfg)
    a, b = sgd_params(plain), sgd_params(decayed)
    for (k, v0), k1 in zip(sorted(p0.items()), sorted(a)):
        # sgd: p1 = p0 - lr (g + wd p0), so the two runs differ by lr * wd * p0
        np.testing.assert_allclose(a[k1] - b[k1], 0.5 * 0.1 * v0, rtol=1e-4, atol=1e-6)


def test_gradient_clipping_bounds_the_update(tmp_path):
    clipped, cfg = one_step(tmp_path, "clipped", grad_clip_norm=1e-3)
    p0, _ = initial_params(cfg)
    update = np.sqrt(sum(np.sum((v - p0_v) ** 2) for v, p0_v in zip(
        [sgd_params(clipped)[k] for k in sorted(sgd_params(clipped))], [p0[k] for k in sorted(p0)])))
    np.testing.assert_allclose(update, 0.5 * 1e-3, rtol=1e-3)


def test_ema_of_parameters(tmp_path):
    result, cfg = one_step(tmp_path, "ema", ema_decay=0.9)
    p0, _ = initial_params(cfg)
    p1 = sgd_params(result)
    ema = {k.replace("['ema']", ""): v for k, v in leaves(result.state).items() if k.startswith("['ema']")}
    for k0, k1, ke in zip(sorted(p0), sorted(p1), sorted(ema)):
        np.testing.assert_allclose(ema[ke], 0.9 * p0[k0] + 0.1 * p1[k1], rtol=1e-5, atol=1e-7)


def test_gradient_accumulation_updates_every_k_steps(tmp_path):
    cfg = small_config(tmp_path, run={"steps": 1}, eval={"every": 0, "at_end": False},
                       optimizer={"name": "sgd", "learning_rate": 0.5, "accumulate_steps": 2})
    result = train.fit(cfg)
    p0, run = initial_params(cfg)
    # the parameters have not moved after the first of two accumulated steps
    after_one = leaves(run.steps.params(result.state))
    assert all(np.array_equal(after_one[k], p0[k]) for k in p0)
    cfg2 = small_config(tmp_path / "two", run={"steps": 2}, eval={"every": 0, "at_end": False},
                        optimizer={"name": "sgd", "learning_rate": 0.5, "accumulate_steps": 2})
    result2 = train.fit(cfg2)
    assert not all(np.array_equal(a, b) for a, b in zip(leaves(result.state).values(), leaves(result2.state).values())
                   if a.dtype == np.float32)


def test_dry_run_prints_the_model_and_a_batch(tmp_path, capsys):
    result = train.fit(small_config(tmp_path), dry_run=True)
    out = capsys.readouterr().out
    assert "Dense(16)" in out and "parameters: 163" in out          # 6*16+16 + 16*3+3
    assert "x float32[12, 6]" in out and "mask float32[12]" in out
    assert result.steps == 0 and not os.path.exists(tmp_path / "checkpoints")


def test_eval_only_evaluates_the_newest_checkpoint(tmp_path):
    trained = train.fit(small_config(tmp_path, run={"steps": 8}))
    evaluated = train.fit(small_config(tmp_path, run={"steps": 8}), eval_only=True)
    assert evaluated.steps == 8
    assert evaluated.metrics["test/accuracy"] == trained.metrics["test/accuracy"]
    with pytest.raises(config_lib.ConfigError, match="needs a checkpoint"):
        train.fit(small_config(tmp_path / "empty"), eval_only=True)


def test_resume_from_a_path_and_never(tmp_path):
    train.fit(small_config(tmp_path / "a", run={"steps": 8}))
    path = str(tmp_path / "a" / "checkpoints" / "4")
    result = train.fit(small_config(tmp_path / "b", run={"steps": 8}), resume=path)
    full = train.fit(small_config(tmp_path / "c", run={"steps": 8}))
    assert_trees_equal(result.state, full.state)
    with pytest.raises(config_lib.ConfigError, match="already holds checkpoints"):
        train.fit(small_config(tmp_path / "a", run={"steps": 8}), resume="never")


def test_keep_best_checkpoint(tmp_path):
    """keep 1 plus the best by a metric: the loss falls as training goes, so "max" of eval/loss
    picks an early step, which must survive beside the newest."""
    train.fit(small_config(tmp_path, run={"steps": 14}, eval={"every": 2},
                           checkpoint={"every": 2, "keep": 1, "keep_best_metric": "eval/loss",
                                       "keep_best_mode": "max"}))
    steps = sorted(int(d) for d in os.listdir(tmp_path / "checkpoints") if d.isdigit())
    evals = {r["step"]: r["eval/loss"] for r in jsonl(tmp_path) if "eval/loss" in r}
    best = max((v, s) for s, v in evals.items() if s % 2 == 0)[1]
    assert best < 14 and steps == [best, 14]


def test_histograms_are_written(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    train.fit(small_config(tmp_path, run={"steps": 2, "histograms": True}))
    acc = EventAccumulator(str(tmp_path / "tensorboard"), size_guidance={"histograms": 0})
    acc.Reload()
    assert any(tag.startswith("params") for tag in acc.Tags()["histograms"])


# ----- the metrics fetch and the first-step time (issue 14 figures) ------------------------------------

@pytest.mark.parametrize("count, width", [(1, 4), (3, 3), (5, 3), (150, 20000)])
def test_fetch_metrics_in_one_copy_equals_fetching_each(count, width, monkeypatch):
    """The stacked fetch returns exactly the float32 vectors `device_get` returns one by one,
    whether the interval is shorter than, as long as or longer than the padding width; a long
    logging interval (`log_every: 20000`) is stacked in bounded chunks (once, one program of
    20,000 steps' scalars took the process 45 minutes and 1.8 GB)."""
    import core
    import core.numpy as jnp
    sizes = []
    stack = loop_lib._stack_rows
    monkeypatch.setattr(loop_lib, "_stack_rows", lambda rows: sizes.append(len(rows)) or stack(rows))
    rng = np.random.default_rng(0)
    pending = [jnp.asarray(rng.normal(size=3).astype(np.float32)) for _ in range(count)]
    fetched = loop_lib._fetch_metrics(pending, width)
    assert len(set(sizes)) == 1 and sizes[0] == min(width, loop_lib._STACK_STEPS)
    expected = np.stack(core.device_get(pending))
    assert fetched.dtype == np.float32 and fetched.tobytes() == expected.tobytes()


def test_logs_do_not_depend_on_when_an_intervals_metrics_arrive(tmp_path, monkeypatch):
    """An interval's metrics are logged when their copy has arrived, which may be several steps
    later (`_Interval.ready`); whether that is at once or only at the next sync point (the next
    interval's end, an evaluation, a checkpoint), metrics.jsonl holds the same records, and a
    checkpoint in the middle of an interval (every 4 steps, logging every 3) carries the same
    partial sums."""
    def run(workdir, ready):
        monkeypatch.setattr(loop_lib._Interval, "ready", lambda self: ready)
        result = train.fit(small_config(workdir, run={"log_every": 3}))
        timing = ("steps_per_second", "examples_per_second", "compile_seconds", "time_to_first_step")
        return [{k: v for k, v in r.items() if k not in timing} for r in jsonl(workdir)], result
    late, _ = run(tmp_path / "a", False)
    first, _ = run(tmp_path / "b", True)
    assert late == first
    assert [r["step"] for r in late if "train/loss" in r] == [3, 6, 9, 12, 14]

    def partials(workdir):
        out = {}
        for step in (4, 8, 12):
            with open(os.path.join(workdir, "checkpoints", str(step), "meta.json")) as f:
                out[step] = json.load(f)["log_partial"]
        return out
    assert partials(tmp_path / "a") == partials(tmp_path / "b")
    assert {k: v["count"] for k, v in partials(tmp_path / "a").items()} == {4: 1, 8: 2, 12: 0}


def test_nonfinite_stop_from_a_late_interval_names_the_step_T8(tmp_path, monkeypatch):
    """The counters copied at an interval's end (before the next step donates the state) are what
    a late-arriving interval checks: the error names the first bad step, and nothing after the
    last good checkpoint is committed."""
    monkeypatch.setattr(loop_lib._Interval, "ready", lambda self: False)
    nan_at(monkeypatch, {6})
    with pytest.raises(loop_lib.NonFiniteLossError, match=r"at step 6.*newest committed checkpoint is step 4"):
        train.fit(small_config(tmp_path, run={"log_every": 2, "on_nonfinite": "stop"}))
    directory = os.path.join(tmp_path, "checkpoints")
    assert sorted(int(d) for d in os.listdir(directory) if d.isdigit()) == [4]


def test_fetch_metrics_falls_back_for_other_shapes():
    """What is not a float32 vector per step (a pmapped step's (devices, k) metrics) is fetched
    as it is."""
    import core.numpy as jnp
    pending = [jnp.ones((2, 3), jnp.float32), jnp.zeros((2, 3), jnp.float32)]
    fetched = loop_lib._fetch_metrics(pending, 4)
    np.testing.assert_array_equal(np.stack(fetched), np.stack([np.ones((2, 3)), np.zeros((2, 3))]))


def test_time_to_first_step_is_logged_with_compile_seconds(tmp_path):
    """The first record holds `time_to_first_step`: seconds since the process started, so it
    includes the first step's compile and precedes a reading taken after the run."""
    from train.logs import seconds_since_process_start
    train.fit(small_config(tmp_path, run={"steps": 2}))
    after = seconds_since_process_start()
    first = jsonl(tmp_path)[0]
    assert first["step"] == 1
    assert 0 < first["compile_seconds"] <= first["time_to_first_step"] <= after


def test_two_runs_in_the_same_second_keep_both_event_files(tmp_path, monkeypatch):
    """tensorboardX names an event file by the second and the host: a resumed run whose writer
    opened within the same second as the first run's truncated the first run's events (seen as a
    flaky test_event_files_hold_every_logged_scalar once runs got fast). The clock is frozen here
    so the two writers always share the second."""
    import tensorboardX.event_file_writer as efw
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from train.logs import RunLogger
    monkeypatch.setattr(efw.time, "time", lambda: 1_700_000_000.25)
    with RunLogger(str(tmp_path), total_steps=4, progress="off") as log:
        log.scalars(1, {"train/loss": 1.0})
        log.scalars(2, {"train/loss": 0.5})
    with RunLogger(str(tmp_path), total_steps=4, start_step=2, progress="off") as log:
        log.scalars(3, {"train/loss": 0.25})
    acc = EventAccumulator(str(tmp_path / "tensorboard"), size_guidance={"scalars": 0})
    acc.Reload()
    assert [(e.step, e.value) for e in acc.Scalars("train/loss")] == [(1, 1.0), (2, 0.5), (3, 0.25)]


def test_rerunning_a_finished_run_says_nothing_was_trained(tmp_path):
    """`make train` twice: the second run resumes a finished run; it says so and how to train again,
    and the summary's paths are all in one form (relative to the working directory here)."""
    import io
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        result = train.fit(small_config("w_rel", run={"steps": 7}), stream=io.StringIO())
        train.fit(small_config("w_rel", run={"steps": 7}), stream=out)
    finally:
        os.chdir(cwd)
    text = out.getvalue()
    assert "already finished at step 7: nothing to train" in text and "--resume never" in text
    assert "Done: 7 steps" in text and "nothing was trained" in text
    summary = text[text.index("Done:"):]
    assert "checkpoint: w_rel/checkpoints/7" in summary and str(tmp_path) not in summary
    assert result.steps == 7

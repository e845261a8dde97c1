"""DP-SGD in the trainer (issue 15, item 7): the `dp:` config section, one private step against a
hand computation (a Python loop of single-example gradients, clipped in float64, plus noise from
the same key over the expected batch size), the logged epsilons against an independently built
accountant, Poisson batches at one compiled shape, bit-for-bit resume with the same epsilon,
BatchNorm refused, and target_epsilon calibration.

Runs are tiny (the synthetic blobs of tests/test_train_loop.py); each takes a few seconds.
"""
import json
import os

import numpy as np
import pytest

import core
import core.numpy as jnp
import nn
import optim
import train
from train_helpers import jsonl, leaves  # tests/ is on sys.path
from core import random
from core.tree_util import tree_flatten
from train import config as config_lib
from train import dp as dp_lib
from train import loop as loop_lib
from train import registry
from train.step import make_steps

NUM_TRAIN = 80          # 100 synthetic examples less a 20 % validation split
BATCH = 12              # the expected batch size: q = 12 / 80


def dp_config(workdir, **sections):
    """A fast DP run on 80 separable blobs (7 batches per epoch): Poisson sampling at q = 12/80,
    sigma 1, C 1, SGD."""
    cfg = {
        "run": {"workdir": str(workdir), "steps": 14, "log_every": 1, "progress": "off",
                "compilation_cache": False},
        "data": {"name": "synthetic_classification", "num_train": 100, "num_test": 40, "input_dim": 6,
                 "num_classes": 3, "batch_size": BATCH, "validation_fraction": 0.2, "prefetch": 1},
        "model": {"preset": "mlp", "args": {"hidden": [16]}},
        "optimizer": {"name": "sgd", "learning_rate": 0.5},
        "eval": {"every": 5},
        "checkpoint": {"every": 4, "keep": 10},
        "dp": {"enabled": True, "noise_multiplier": 1.0, "l2_norm_clip": 1.0},
    }
    for name, values in sections.items():
        cfg.setdefault(name, {}).update(values)
    return cfg


def error_of(cfg):
    with pytest.raises(config_lib.ConfigError) as info:
        train.fit(cfg, resume="never")
    return info.value


# ----- the config section -----------------------------------------------------------------------------

@pytest.mark.parametrize("dp,key,fragment", [
    ({"noise_multiplier": 1.0, "target_epsilon": 3.0}, "dp.noise_multiplier", "both set"),
    ({"noise_multiplier": None}, "dp.enabled", "neither dp.noise_multiplier nor dp.target_epsilon"),
    ({"l2_norm_clip": 0.0}, "dp.l2_norm_clip", "must be > 0, got 0.0"),
    ({"noise_multiplier": -0.5}, "dp.noise_multiplier", "must be >= 0, got -0.5"),
    ({"noise_multiplier": None, "target_epsilon": 0.0}, "dp.target_epsilon", "must be > 0, got 0.0"),
    ({"delta": 1.0}, "dp.delta", "must be in (0, 1), got 1.0"),
    ({"physical_batch_size": 0}, "dp.physical_batch_size", "must be >= 1, got 0"),
    ({"sampling": "uniform"}, "dp.sampling", "expected one of 'poisson', 'shuffle'"),
    ({"method": "ghosts"}, "dp.method", "did you mean 'ghost'?"),
    ({"accountant": "gdp"}, "dp.accountant", "expected one of 'rdp', 'pld'"),
])
def test_dp_section_errors_name_the_key(tmp_path, dp, key, fragment):
    with pytest.raises(config_lib.ConfigError) as info:
        config_lib.config_from_dict(dp_config(tmp_path, dp=dp))
    assert info.value.key == key and fragment in str(info.value), str(info.value)


def test_dp_rules_between_keys_apply_only_when_enabled(tmp_path):
    both = {"enabled": False, "noise_multiplier": 1.0, "target_epsilon": 3.0}
    assert config_lib.config_from_dict(dp_config(tmp_path, dp=both)).dp.enabled is False
    with pytest.raises(config_lib.ConfigError, match=r"dp\.enabled: DP-SGD trains on one device, but run\.devices "
                                                     r"is 2"):
        config_lib.config_from_dict(dp_config(tmp_path, run={"devices": 2}))


def test_delta_must_be_below_one_over_the_training_examples(tmp_path):
    e = error_of(dp_config(tmp_path, dp={"delta": 0.02}))          # 1 / 80 = 0.0125
    assert e.key == "dp.delta" and "not below 1 / 80 = 0.0125" in str(e) and "e.g. 0.001" in str(e)
    loop_lib._Run(config_lib.config_from_dict(dp_config(tmp_path, dp={"delta": 0.012})), None,
                  loop_lib._SignalFlag())                             # just below: accepted


def test_batchnorm_is_refused_with_a_config_error_naming_the_model(tmp_path):
    layers = [{"Dense": 16}, {"BatchNorm": {"axis": [0]}}, "Relu", {"Dense": 3}]
    e = error_of(dp_config(tmp_path, model={"preset": None, "layers": layers}))
    assert e.key == "model" and "BatchNorm" in str(e), str(e)
    assert "GroupNorm" in str(e) and "LayerNorm" in str(e)
    # LayerNorm is per example: the same model with it is accepted (built, not trained)
    layers[1] = "LayerNorm"
    run = loop_lib._Run(config_lib.config_from_dict(dp_config(tmp_path, model={"preset": None, "layers": layers})),
                        None, loop_lib._SignalFlag())
    assert run.dp.step_batch_size == optim.max_batch_size_for(NUM_TRAIN, BATCH / NUM_TRAIN)


# ----- one step against a hand computation ------------------------------------------------------------

@pytest.mark.parametrize("method,chunk", [("auto", None), ("vmap", 3), ("ghost", 4)])
def test_one_dp_step_equals_a_manual_computation(method, chunk):
    """The train step's update with SGD is p0 - lr * (S + sigma C noise) / B_expected, S the clipped
    sum from a Python loop over single-example core.grad (masked examples left out), noise leaf i
    from split(fold_in(noise_key, step), leaves)[i]. With physical chunks of 3 or 4 (the batch of 8
    padded to 9 for 3) the numbers are the same."""
    clip, sigma, expected, lr = 2.0, 1.3, 5.0, 0.1   # expected != the 6 real or 8 padded examples
    model = nn.serial(nn.Flatten, nn.Dense(5), nn.Relu, nn.Dense(3))
    loss_fn = registry.per_example_loss({"name": "softmax_cross_entropy", "label_smoothing": 0.0})
    settings = dp_lib.DpSettings(l2_norm_clip=clip, noise_multiplier=sigma, expected_batch_size=expected,
                                 method=method, physical_batch_size=chunk)
    fns = make_steps(model, loss_fn, registry.metric_fns(["accuracy"]), optim.sgd(lr), input_shape=(2, 2),
                     dp=settings)
    state = fns.init_state(3)
    p0 = core.device_get(fns.params(state))
    noise_key = np.asarray(state["dp"]["noise_key"])
    rng = np.random.default_rng(0)
    scale = np.array([0.05, 0.2, 1.0, 3.0, 10.0, 30.0, 1.0, 1.0], np.float32)[:, None, None]  # norms spread over C
    x = (rng.standard_normal((8, 2, 2)) * scale).astype(np.float32)
    y = rng.integers(0, 3, 8).astype(np.int32)
    mask = np.array([1, 1, 1, 1, 1, 1, 0, 0], np.float32)
    x[6:] = x[0]                                                       # padding repeats a real example
    new_state, vector = fns.train_step(state, {"x": x, "y": y, "mask": mask})
    metrics = dict(zip(fns.metric_names, np.asarray(vector)))

    def one_loss(p, xi, yi):
        return loss_fn(model.apply_fun(p, xi[None]), yi[None])[0]
    flat0 = tree_flatten(p0)[0]
    clipped_sum = [np.zeros(np.shape(leaf), np.float64) for leaf in flat0]
    norms, losses = [], []
    for i in range(6):
        g = [np.asarray(v, np.float64) for v in tree_flatten(core.grad(one_loss)(p0, x[i], y[i]))[0]]
        norm = np.sqrt(sum(np.sum(v * v) for v in g))
        norms.append(norm)
        losses.append(float(one_loss(p0, x[i], y[i])))
        clipped_sum = [s + v * min(1.0, clip / norm) for s, v in zip(clipped_sum, g)]
    norms = np.array(norms)
    assert 0 < np.sum(norms > clip) < 6                                 # the test clips some, not all
    keys = random.split(random.fold_in(noise_key, 0), len(flat0))
    noise = [np.asarray(random.normal(keys[i], np.shape(leaf), jnp.float32), np.float64)
             for i, leaf in enumerate(flat0)]
    expected_params = [np.asarray(p, np.float64) - lr * (s + sigma * clip * n) / expected
                       for p, s, n in zip(flat0, clipped_sum, noise)]
    got = tree_flatten(core.device_get(fns.params(new_state)))[0]
    for g, e in zip(got, expected_params):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(metrics["loss"]), np.mean(losses), rtol=1e-5)
    assert float(metrics["batch_size"]) == 6.0
    np.testing.assert_allclose(float(metrics["clipped_fraction"]), np.mean(norms > clip), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(new_state["dp"]["noise_key"]), noise_key)   # the key is kept
    assert int(new_state["step"]) == 1


def test_a_run_without_dp_has_no_dp_state(tmp_path):
    run = loop_lib._Run(config_lib.config_from_dict(dp_config(tmp_path, dp={"enabled": False})), None,
                        loop_lib._SignalFlag())
    assert run.dp is None and "dp" not in run.steps.init_state(0)


# ----- a whole run --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dp_run(tmp_path_factory):
    """One Poisson-sampled DP run of 14 steps (2 epochs), evaluated at 7 and 14, with the step
    functions it built."""
    workdir = tmp_path_factory.mktemp("dp_run")
    seen = []
    original = loop_lib.make_steps

    def spy(*args, **kwargs):
        fns = original(*args, **kwargs)
        seen.append(fns)
        return fns
    with pytest.MonkeyPatch.context() as m:
        m.setattr(loop_lib, "make_steps", spy)
        result = train.fit(dp_config(workdir, eval={"every": 7}), resume="never")
    return result, workdir, seen[0]


def test_a_dp_run_trains(dp_run):
    result, workdir, _ = dp_run
    assert result.steps == 14
    assert result.metrics["test/accuracy"] > 0.8          # 3 separable blobs; chance is 1/3
    records = [r for r in jsonl(workdir) if "train/loss" in r]
    assert records[-1]["train/loss"] < records[0]["train/loss"]


def test_logged_epsilons_equal_an_independent_accountant(dp_run):
    """dp/epsilon_rdp at every logged step and dp/epsilon_pld at every evaluation (and the end) equal
    dp-accounting's values for t Poisson-subsampled Gaussian steps at (q, sigma), composed here
    independently; TensorBoard's event files hold the same numbers."""
    import dp_accounting as dpa
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    result, workdir, _ = dp_run
    q, sigma, delta = BATCH / NUM_TRAIN, 1.0, 1e-5

    def reference(t, accountant):
        accountant.compose(dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), t))
        return accountant.get_epsilon(delta)

    records = jsonl(workdir)
    rdp = {r["step"]: r["dp/epsilon_rdp"] for r in records if "dp/epsilon_rdp" in r}
    pld = {r["step"]: r["dp/epsilon_pld"] for r in records if "dp/epsilon_pld" in r}
    assert sorted(rdp) == list(range(1, 15))
    assert sorted(pld) == [7, 14]                                    # at the evaluations (the last is the end)
    for t in (1, 6, 14):
        np.testing.assert_allclose(rdp[t], reference(t, dpa.rdp.RdpAccountant()), rtol=1e-12)
    for t in (7, 14):
        pld_accountant = dpa.pld.PLDAccountant(value_discretization_interval=1e-4)
        np.testing.assert_allclose(pld[t], reference(t, pld_accountant), rtol=1e-12)
    assert result.metrics["dp/epsilon_rdp"] == rdp[14] and result.metrics["dp/epsilon_pld"] == pld[14]
    assert np.all(np.diff([rdp[t] for t in sorted(rdp)]) > 0)
    acc = EventAccumulator(str(workdir / "tensorboard"), size_guidance={"scalars": 0})
    acc.Reload()
    for tag, values in (("dp/epsilon_rdp", rdp), ("dp/epsilon_pld", pld)):
        events = acc.Scalars(tag)
        assert [e.step for e in events] == sorted(values), tag
        np.testing.assert_allclose([e.value for e in events], [values[s] for s in sorted(values)], rtol=1e-6)


def test_poisson_batches_vary_and_the_step_traces_once(dp_run):
    """Poisson batches vary in size but are padded to one shape: the step compiles once."""
    _, workdir, fns = dp_run
    assert fns.trace_counts == {"train": 1, "eval": 1}
    assert len(fns.train_step._cache) == 1
    sizes = [r["train/batch_size"] for r in jsonl(workdir) if "train/batch_size" in r]
    assert len(sizes) == 14 and len(set(sizes)) > 3
    expected = [float(optim.poisson_batch(0, t, NUM_TRAIN, BATCH / NUM_TRAIN)[1].sum()) for t in range(14)]
    assert sizes == expected                        # the batch of step t is poisson_batch(seed, t)


def test_resume_is_bitwise_identical_with_the_same_epsilon(tmp_path, monkeypatch):
    """Interrupted at step 6 (mid-epoch, after a checkpoint at 4) and resumed: the same per-step
    losses, epsilons and evaluations, and the same final parameters, optimizer state and noise
    key, bit for bit. The checkpoint's meta holds the accountant; switching DP off to resume it is
    refused."""
    sections = {"run": {"log_every": 2}, "eval": {"every": 7}}   # fewer epsilons to compute: a faster test
    full = train.fit(dp_config(tmp_path / "full", **sections))
    original = loop_lib._Loop._after_step

    def after_step(self):
        if self.step == 6:
            self.r.flag.signame = "SIGTERM"
        original(self)
    with monkeypatch.context() as m:
        m.setattr(loop_lib._Loop, "_after_step", after_step)
        with pytest.raises(loop_lib.Preempted) as info:
            train.fit(dp_config(tmp_path / "cut", **sections))
    assert info.value.step == 6
    with open(tmp_path / "cut" / "checkpoints" / "6" / "meta.json") as f:
        saved = json.load(f)["dp"]
    assert saved["accountant"]["events"] == [{"kind": "poisson_gaussian", "sampling_rate": BATCH / NUM_TRAIN,
                                             "noise_multiplier": 1.0, "steps": 6}]
    resumed = train.fit(dp_config(tmp_path / "cut", **sections))

    def logged(workdir):   # every record, less the timings (and the records that held only a timing)
        strip = ("steps_per_second", "examples_per_second", "compile_seconds", "time_to_first_step")
        records = [{k: v for k, v in r.items() if k not in strip} for r in jsonl(workdir)]
        return [r for r in records if len(r) > 1]
    assert logged(tmp_path / "cut") == logged(tmp_path / "full")
    assert sum("dp/epsilon_rdp" in r for r in logged(tmp_path / "cut")) == 8    # every 2 steps, and at 7
    la, lb = leaves(resumed.state), leaves(full.state)
    assert la.keys() == lb.keys() and "['dp']['noise_key']" in la
    for k in la:
        np.testing.assert_array_equal(la[k], lb[k], err_msg=k)
    assert resumed.metrics == full.metrics
    with pytest.raises(config_lib.ConfigError, match=r"dp\.enabled: is false but the checkpoint at step 14 was "
                                                     r"trained with DP-SGD"):
        train.fit(dp_config(tmp_path / "cut", run={"steps": 20}, dp={"enabled": False}))


# ----- calibration -------------------------------------------------------------------------------------

def test_target_epsilon_calibrates_sigma_and_is_met_at_the_end(tmp_path, capsys):
    """With target_epsilon the trainer picks sigma for the run's steps and rate (here with shuffled
    batches, accounted as Poisson at q = B / N) and prints it; the epsilon at the end is at most
    the target, and tight (the smallest such sigma)."""
    cfg = dp_config(tmp_path, run={"steps": 10, "progress": "lines"}, eval={"every": 0},
                    dp={"noise_multiplier": None, "target_epsilon": 2.0, "sampling": "shuffle"})
    result = train.fit(cfg, resume="never")
    sigma = result.metrics["dp/noise_multiplier"]
    assert sigma == optim.noise_multiplier_for(2.0, 1e-5, BATCH / NUM_TRAIN, 10)
    assert 0.99 * 2.0 < result.metrics["dp/epsilon_rdp"] <= 2.0
    out = capsys.readouterr().out
    assert f"noise multiplier {sigma:.4g} (calibrated for epsilon 2 over 10 steps by rdp)" in out
    assert "shuffled batches of 12" in out and "| eps " in out
    with open(tmp_path / "checkpoints" / "10" / "meta.json") as f:
        assert json.load(f)["dp"]["accountant"]["sampling"] == "shuffle"


def test_the_bundled_dp_config_reaches_its_documented_figure(tmp_path, capsys):
    """configs/digits_dp.yaml in full (228 steps): epsilon 3.01 by RDP and test accuracy about 0.90
    (bench/RESULTS.md); evaluated only at the end here, which changes no number."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cfg = config_lib.load_config([os.path.join(root, "configs", "digits_dp.yaml")],
                                 [f"run.workdir={tmp_path}", "run.progress=lines", "run.compilation_cache=false",
                                  "eval.every=1000"])
    result = train.fit(cfg, resume="never")
    assert result.steps == 228
    np.testing.assert_allclose(result.metrics["dp/epsilon_rdp"],
                               optim.epsilon_for(32 / 1212, 1.0, 228, 1e-5), rtol=1e-12)
    assert 3.0 < result.metrics["dp/epsilon_rdp"] < 3.02
    assert result.metrics["test/accuracy"] >= 0.85
    assert "epsilon after 228 steps: 3.012 (rdp)" in capsys.readouterr().out

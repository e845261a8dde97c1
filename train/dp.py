"""DP-SGD in the trainer (issue 15): what the `dp:` config section switches on.

Two pieces, each called from one place, so a run without DP never touches this module:

* `make_private_gradient` (called by train/step.py, inside the compiled train step): the SUM over
  the batch of each example's gradient clipped to L2 norm C (`core.clipped_grad` on the one-example
  loss, in physical chunks with `optim.accumulate_chunks` when `dp.physical_batch_size` is set),
  plus Gaussian noise of std sigma * C from the step's noise key, divided by the EXPECTED batch
  size (`optim.dp_aggregate`); and the batch's loss and metrics.
* `DpRun` (built by train/loop.py's `_Run`): the host side. It checks the model (no BatchNorm),
  fixes the sampling rate q = data.batch_size / N and the noise multiplier (calibrated from
  `dp.target_epsilon` for the whole run when asked), draws the Poisson batches at a fixed padded
  shape, and keeps the privacy accountant: one event per step, its epsilons (RDP and PLD, cached
  per step count) for the logs, and its state for checkpoint meta.

The guarantee covers the parameters (and anything computed from them, such as evaluations on the
held-out splits). The train metrics logged every step (loss, accuracy, fraction clipped) are
computed from the private batches without noise and are not covered.

    >>> settings = DpSettings(l2_norm_clip=1.0, noise_multiplier=1.1, expected_batch_size=64.0,
    ...                       method="auto", physical_batch_size=None)
    >>> settings.noise_multiplier * settings.l2_norm_clip / settings.expected_batch_size  # noise std on the mean
    0.0171875
"""
import math
from typing import NamedTuple, Optional

import numpy as np

import core
import core.numpy as jnp
import nn
import optim
from core import random
from core.tree_util import tree_map

from . import data as data_lib

__all__ = ["DpSettings", "DpRun", "example_loss_fn", "make_private_gradient", "initial_noise_key",
           "step_noise_key", "check_resume"]

_NOISE_STREAM = 0x44505347   # "DPSG": the noise key's stream, apart from the init and dropout keys
_AUGMENT_STREAM = 0x44504147  # "DPAG": augmentation of Poisson batches, apart from the batch draw


class DpSettings(NamedTuple):
    """What the compiled train step needs to privatize its gradient (all static)."""
    l2_norm_clip: float
    noise_multiplier: float
    expected_batch_size: float
    method: str
    physical_batch_size: Optional[int]


# ----- inside the train step -------------------------------------------------------------------------

def initial_noise_key(seed):
    """The run's noise key (uint32[2]), kept in the train state as `state["dp"]["noise_key"]`: a
    stream of `run.seed` of its own. The noise is only as secret as the seed: keep a DP run's
    config as private as its data."""
    return random.fold_in(random.PRNGKey(seed), _NOISE_STREAM)


def step_noise_key(noise_key, step):
    """The key of the noise added at `step` (0-based), a pure function of the state: resumed runs
    draw the same noise."""
    return random.fold_in(noise_key, step)


def example_loss_fn(model, loss_fn, input_shape):
    """The loss of ONE example, `f(params, x, y, key) -> scalar`, as core's per-example
    transformations take it: the model applied in train mode to `x[None]` with dropout key `key`.
    A stateful model is applied with its initial state, so that BatchNorm shows up in the traced
    program (and is refused by core) instead of failing for want of a state."""
    state = nn.init_state(model, (-1,) + tuple(input_shape))

    def example_loss(params, x, y, key):
        out, _ = nn.apply_with_state(model, params, x[None], state, rng=key, mode="train")
        return loss_fn(out, y[None])[0]

    def example_outputs(params, x, key):
        out, _ = nn.apply_with_state(model, params, x[None], state, rng=key, mode="train")
        return out[0]

    example_loss.outputs = example_outputs
    return example_loss


def make_private_gradient(model, loss_fn, metric_fns, settings, input_shape):
    """`private_gradient(params, batch, dropout_key, noise_key) -> (loss, grads, metrics, extras)`
    for the train step: `grads` is `dp_aggregate(clipped sum, noise_key) = (S + N(0, (sigma C)^2)) /
    expected batch size`; `loss` and `metrics` (name -> value) are means over the batch's real
    examples, of the same per-example outputs the gradient was taken of (each example with its own
    dropout key); `extras` are `clipped_fraction` (of the real examples) and `batch_size` (real
    examples in the batch, which Poisson sampling varies)."""
    example_loss = example_loss_fn(model, loss_fn, input_shape)
    clipped = core.clipped_grad(example_loss, settings.l2_norm_clip, method=settings.method)
    outputs = core.vmap(example_loss.outputs, in_axes=(None, 0, 0))
    chunk = settings.physical_batch_size

    def chunk_sums(params, examples, mask):
        g, info = clipped(params, examples["x"], examples["y"], examples["key"], mask=mask)
        out = outputs(params, examples["x"], examples["key"])
        y = examples["y"]
        sums = {"loss": jnp.sum(loss_fn(out, y) * mask),
                "clipped": jnp.sum((info.norms > settings.l2_norm_clip).astype(mask.dtype) * mask)}
        for name, fn in metric_fns.items():
            sums[name] = jnp.sum(fn(out, y) * mask)
        return g, sums

    def private_gradient(params, batch, dropout_key, noise_key):
        x, y, mask = batch["x"], batch["y"], batch["mask"]
        size = x.shape[0]
        examples = {"x": x, "y": y, "key": random.split(dropout_key, size)}
        if chunk is None or chunk >= size:
            total, sums = chunk_sums(params, examples, mask)
        else:
            pad = -size % chunk   # shapes are static: padding decided once, when the step is traced
            if pad:
                examples = tree_map(lambda a: jnp.concatenate([a, jnp.zeros((pad,) + a.shape[1:], a.dtype)]),
                                    examples)
                mask = jnp.concatenate([mask, jnp.zeros((pad,), mask.dtype)])
            total, sums = optim.accumulate_chunks(lambda ex, m: chunk_sums(params, ex, m), examples, mask=mask,
                                                  chunk_size=chunk)
        grads = optim.dp_aggregate(total, noise_key, l2_norm_clip=settings.l2_norm_clip,
                                   noise_multiplier=settings.noise_multiplier,
                                   expected_batch_size=settings.expected_batch_size)
        real = jnp.sum(mask)
        count = jnp.maximum(real, 1.0)
        loss = sums.pop("loss") / count
        extras = {"clipped_fraction": sums.pop("clipped") / count, "batch_size": real}
        return loss, grads, {name: s / count for name, s in sums.items()}, extras

    return private_gradient


# ----- the host side ---------------------------------------------------------------------------------

def check_resume(cfg, meta):
    """Refuse to resume a checkpoint whose privacy state does not fit `cfg`: a non-DP checkpoint
    under dp.enabled (its steps were never accounted) or the reverse, or another dp.sampling."""
    saved = meta.get("dp")
    enabled = cfg.dp.enabled
    if saved is None and not enabled:
        return
    if saved is None or not enabled:
        was = "without" if saved is None else "with"
        raise cfg.error("dp.enabled", f"is {str(enabled).lower()} but the checkpoint at step {meta.get('step')} was "
                                      f"trained {was} DP-SGD; a run cannot switch DP on or off midway (its privacy "
                                      "could not be accounted): use another --workdir, or --resume never in a "
                                      "fresh one")
    if saved.get("sampling") != cfg.dp.sampling:
        raise cfg.error("dp.sampling", f"is {cfg.dp.sampling!r} but the checkpoint at step {meta.get('step')} was "
                                       f"trained with {saved.get('sampling')!r}; keep the sampling of the run")


class DpRun:
    """The host side of a DP-SGD run: settings, batches, the accountant and its epsilons.

    Built once per run from the config, the loaded data and the model (`cfg.dp.enabled` must be
    true). Raises `ConfigError` for what the config can fix: delta not below 1 / N, dp-accounting
    not installed, a model with BatchNorm, `dp.method: ghost` on a parameter no ghost rule covers.
    """

    def __init__(self, cfg, dataset, model, loss_fn, *, input_shape, total_steps, batch_size):
        d = cfg.dp
        self.cfg = cfg
        self.num_examples = n = len(dataset.train.y)
        self.delta = d.delta
        if d.delta >= 1.0 / n:
            raise cfg.error("dp.delta", f"is {d.delta:g}, not below 1 / {n:,} = {1.0 / n:.3g} (one over the "
                                        "training examples): a mechanism that publishes one random example outright "
                                        f"is (0, 1/N)-DP, so such a delta promises nothing; use e.g. {_suggest(n):g}")
        try:
            import dp_accounting  # noqa: F401  (optim.privacy imports it on first use; fail here, before training)
        except ImportError as e:
            raise cfg.error("dp.enabled", "privacy accounting needs Google's dp-accounting library, which is not "
                                          f"installed: pip install 'purenn[dp]' ({e})") from None
        self.sampling = d.sampling
        self.sampling_rate = batch_size / n
        self.total_steps = total_steps
        self.accountant_method = d.accountant
        self.target_epsilon = d.target_epsilon
        if d.target_epsilon is not None:
            self.noise_multiplier = optim.noise_multiplier_for(d.target_epsilon, d.delta, self.sampling_rate,
                                                               total_steps, method=d.accountant)
        else:
            self.noise_multiplier = d.noise_multiplier
        chunk = d.physical_batch_size
        if d.sampling == "poisson":
            self.step_batch_size = optim.max_batch_size_for(n, self.sampling_rate, multiple_of=chunk or 1)
        else:
            self.step_batch_size = batch_size
        self.settings = DpSettings(l2_norm_clip=d.l2_norm_clip, noise_multiplier=self.noise_multiplier,
                                   expected_batch_size=float(batch_size), method=d.method,
                                   physical_batch_size=chunk)
        self.plan = _check_model(cfg, model, loss_fn, tuple(input_shape), dataset.train, d.method)
        self.accountant = optim.PrivacyAccountant(sampling=d.sampling)
        self._epsilons = {}   # (steps, method) -> epsilon
        self._logged = {}     # method -> last step whose epsilon was logged
        self._resumed_sigma = None   # the checkpoint's sigma, when it differs from this run's

    # ----- what the run says at the start ----------------------------------------------------------
    def describe(self):
        """One line: sigma (and how it was chosen), C, q, the batch shape, delta, and the epsilon
        the whole run will have spent (by `dp.accountant`, the steps done so far included)."""
        d = self.cfg.dp
        how = (f"calibrated for epsilon {self.target_epsilon:g} over {self.total_steps} steps by {d.accountant}"
               if self.target_epsilon is not None else "dp.noise_multiplier")
        if self._resumed_sigma is not None:
            how += (f"; the checkpoint's {self.accountant.steps} steps used {self._resumed_sigma:.4g}, and the "
                    "accountant composes both")
        batch = (f"Poisson sampling, q = {self.settings.expected_batch_size:g} / {self.num_examples:,} = "
                 f"{self.sampling_rate:.4g}, padded to {self.step_batch_size}" if self.sampling == "poisson"
                 else f"shuffled batches of {self.step_batch_size} (accounted as Poisson at q = "
                      f"{self.sampling_rate:.4g})")
        chunks = f", physical chunks of {d.physical_batch_size}" if d.physical_batch_size else ""
        planned = optim.PrivacyAccountant.from_dict(self.accountant.to_dict())
        if self.total_steps > planned.steps:
            planned.step(self.sampling_rate, self.noise_multiplier, count=self.total_steps - planned.steps)
        spent = planned.epsilon(self.delta, d.accountant)
        return (f"DP-SGD: noise multiplier {self.noise_multiplier:.4g} ({how}), l2_norm_clip {d.l2_norm_clip:g}, "
                f"{batch}{chunks}, delta {self.delta:g}, per-example norms by {d.method}; epsilon after "
                f"{max(self.total_steps, planned.steps)} steps: {spent:.4g} ({d.accountant})")

    # ----- batches ---------------------------------------------------------------------------------
    def batches(self, split, *, seed, epoch, start, batches_per_epoch, shuffle, augment):
        """The train batches from position (epoch, start): `data.batches` for shuffle sampling;
        for Poisson, batch `i` of epoch `e` is `poisson_batch(seed, e * batches_per_epoch + i)`, a
        pure function of the step, at the fixed shape `step_batch_size` (padding masked)."""
        if self.sampling == "shuffle":
            return data_lib.batches(split, self.step_batch_size, seed=seed, epoch=epoch, start=start,
                                    shuffle=shuffle, augment=augment)
        x = split.x
        if augment == "shift" and x.ndim != 4:
            raise data_lib.DataError("data.augment", "'shift' moves images of shape (H, W, C), but one example "
                                                     f"here has shape {tuple(x.shape[1:])}; use augment: none")
        return self._poisson_batches(split, seed, epoch, start, batches_per_epoch, augment)

    def _poisson_batches(self, split, seed, epoch, start, batches_per_epoch, augment):
        x, y = split
        for i in range(start, batches_per_epoch):
            step = epoch * batches_per_epoch + i
            idx, mask = optim.poisson_batch(seed, step, self.num_examples, self.sampling_rate, self.step_batch_size)
            bx = x[idx]
            if augment == "shift":
                bx = data_lib._random_shifts(np.random.default_rng([seed, _AUGMENT_STREAM, step]), bx)
            yield i, {"x": bx, "y": y[idx], "mask": mask}

    # ----- the accountant --------------------------------------------------------------------------
    def restore(self, meta, step):
        """Continue the accountant of a checkpoint's meta (nothing for a fresh run)."""
        if not step:
            return
        accountant = optim.PrivacyAccountant.from_dict(meta["dp"]["accountant"])
        if accountant.steps != step:
            raise self.cfg.error("dp", f"the checkpoint at step {step} records {accountant.steps} accounted steps; "
                                       "its meta.json does not belong to its arrays")
        self.accountant = accountant
        sigma = meta["dp"].get("noise_multiplier")
        if sigma is not None and sigma != self.noise_multiplier:
            self._resumed_sigma = sigma

    def record_step(self):
        """Account one step at this run's sampling rate and noise multiplier."""
        self.accountant.step(self.sampling_rate, self.noise_multiplier)

    def epsilon(self, method):
        """Epsilon after the steps accounted so far, for `dp.delta`, by "rdp" or "pld" (cached per
        step count: PLD takes about a second)."""
        key = (self.accountant.steps, method)
        if key not in self._epsilons:
            self._epsilons = {k: v for k, v in self._epsilons.items() if k[0] == key[0]}
            self._epsilons[key] = self.accountant.epsilon(self.delta, method)
        return self._epsilons[key]

    def scalars(self, step, pld):
        """`dp/epsilon_rdp` (and `dp/epsilon_pld` when `pld`) at `step`, each logged once per step."""
        out = {}
        for method in ("rdp", "pld") if pld else ("rdp",):
            if self._logged.get(method) != step:
                out[f"dp/epsilon_{method}"] = self.epsilon(method)
                self._logged[method] = step
        return out

    def log_scalars(self, step, pld):
        """As `scalars`, with PLD also whenever it is the progress line's accountant: the cadence of
        log flushes (RDP, milliseconds) and evaluations (both)."""
        return self.scalars(step, pld or self.accountant_method == "pld")

    def progress(self):
        """The epsilon the progress line shows (`eps`), by `dp.accountant`."""
        return {"dp/epsilon": self.epsilon(self.accountant_method)}

    def final(self):
        return {"dp/epsilon_rdp": self.epsilon("rdp"), "dp/epsilon_pld": self.epsilon("pld"),
                "dp/noise_multiplier": float(self.noise_multiplier)}

    def meta(self):
        """The privacy state for a checkpoint's meta.json (plain JSON)."""
        return {"accountant": self.accountant.to_dict(), "sampling": self.sampling,
                "noise_multiplier": float(self.noise_multiplier), "sampling_rate": self.sampling_rate,
                "delta": self.delta}


def _suggest(n):
    """A delta well below 1 / n: the power of ten at or below 1 / (10 n)."""
    return 10.0 ** math.floor(math.log10(1.0 / (10 * n)))


def _check_model(cfg, model, loss_fn, input_shape, split, method):
    """Trace the one-example loss through core's ghost-norm planner (no compile, no numbers):
    BatchNorm (a batch-coupled layer) becomes a config error at `model`, and `dp.method: ghost`
    on a parameter no rule covers one at `dp.method`. Returns the plan (printable)."""
    example_loss = example_loss_fn(model, loss_fn, input_shape)
    shapes = core.eval_shape(lambda: model.init_fun(random.PRNGKey(0), (-1,) + input_shape)[1])
    params = tree_map(lambda s: jnp.zeros(s.shape, s.dtype), shapes)
    x = jnp.asarray(split.x[:2])
    y = jnp.asarray(split.y[:2])
    keys = random.split(random.PRNGKey(0), x.shape[0])
    try:
        plan = core.ghost_plan(example_loss, method="auto")(params, x, y, keys)
    except (TypeError, ValueError) as e:
        if nn.is_stateful(model):
            raise cfg.error("model", "uses BatchNorm, which DP-SGD cannot train (dp.enabled): per-example "
                                     "gradients see one example at a time, so batch statistics would be each "
                                     "example's own, and with true batch statistics one example's gradient would "
                                     "depend on the others, breaking the clipping bound the noise is sized for. "
                                     "Replace BatchNorm with GroupNorm or LayerNorm (layers: {GroupNorm: ...} or "
                                     f"LayerNorm). ({e})") from None
        raise cfg.error("model", f"cannot be trained with DP-SGD (dp.enabled): {e}") from None
    if nn.is_stateful(model):
        raise cfg.error("model", "has layer state, which DP-SGD in the trainer does not update; use stateless "
                                 "layers (GroupNorm or LayerNorm instead of BatchNorm)")
    if method == "ghost":
        try:
            plan = core.ghost_plan(example_loss, method="ghost")(params, x, y, keys)
        except (TypeError, ValueError) as e:
            raise cfg.error("dp.method", f"'ghost' does not cover this model: {e}; use dp.method: auto, which "
                                         "materializes the per-example gradient of such parameters alone") from None
    return plan

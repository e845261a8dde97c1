"""The train step and the eval step: pure functions of the train state and one batch, each
compiled once for a run (jitted on one device, pmapped over several).

The train state is one pytree (docs/design.md, "The trainer"):

    {"step": int32, "opt_state": optimizer state (holds the parameters), "layer_state": tree or None,
     "rng": uint32[2] (the run's key; step s draws from fold_in(rng, s)), "ema": params or None,
     "nonfinite": {"consecutive", "total", "first_step", "longest"}: int32 counters,
     "dp": {"noise_key": uint32[2]}, only in a DP-SGD run}

A batch is `{"x", "y", "mask"}` of a fixed size; `mask` is 1.0 for real examples and 0.0 for the
padding of a ragged last batch, so the loss and every metric are means over real examples only
and the step never sees a second shape. A step whose loss or gradient is not finite changes
nothing but the counters, the step number and the key: parameters, optimizer, layer state and EMA
stay bitwise as they were (optax's `apply_if_finite` semantics) when the loop skips such steps;
when it stops at them instead, the step applies the update unguarded and only counts.

On several devices the batch has a leading device axis, gradients and metric sums are summed over
the pmap axis `"batch"`, and the loss is normalized by the global count of real examples, so the
update equals one device's on the same global batch up to float32 summation order.

With `dp` (DP-SGD, train/dp.py) the gradient is the private one instead: the clipped sum of
per-example gradients plus noise from `fold_in(state["dp"]["noise_key"], step)`, divided by the
expected batch size; everything after it (weight decay, clipping, the update, EMA, the guard) is
the same code. Without `dp` the step is exactly the non-private one.

    >>> import nn, optim
    >>> fns = make_steps(nn.serial(nn.Dense(2)), lambda out, y: jnp.sum(out, axis=-1) * 0, {},
    ...                  optim.sgd(0.1), input_shape=(3,))
    >>> sorted(fns.init_state(0))
    ['ema', 'layer_state', 'nonfinite', 'opt_state', 'rng', 'step']
"""
from typing import Callable, NamedTuple

import core
import core.numpy as jnp
import nn
import optim
from core import lax, random
from core.tree_util import tree_map

from . import dp as dp_lib

__all__ = ["AXIS", "StepFns", "make_steps"]

AXIS = "batch"   # the pmap axis name; BatchNorm layers built for several devices average over it


class StepFns(NamedTuple):
    """What `make_steps` returns. `init_state(seed)` is the initial train state; `train_step` and
    `eval_step` are the compiled functions; `params(state)` the parameters to evaluate with (the
    EMA when enabled); `trace_counts` counts how often each step function was traced;
    `metric_names` names the entries of the metrics vector `train_step` returns."""
    init_state: Callable
    train_step: Callable
    eval_step: Callable
    params: Callable
    trace_counts: dict
    metric_names: tuple


def make_steps(model, loss_fn, metric_fns, optimizer, *, input_shape, schedule=None, grad_clip_norm=None,
               weight_decay=0.0, ema_decay=None, devices=1, dp=None, skip_nonfinite=True):
    """The step functions for `model` (an `nn` layer), `loss_fn(outputs, labels) -> float[batch]`,
    `metric_fns` (`{name: f(outputs, labels) -> float[batch]}`) and an `optim` optimizer.

    `weight_decay` adds `wd * param` to each gradient (coupled L2; use `adamw` for decoupled
    decay), `grad_clip_norm` clips the global gradient norm, `ema_decay` keeps an exponential
    moving average of the parameters, which evaluation then uses. `devices > 1` pmaps both steps.
    `dp` (a `train.dp.DpSettings`, one device) makes the train step DP-SGD's: its metrics add
    `clipped_fraction` and `batch_size` (real examples). The train step returns `(state,
    metrics)`, `metrics` a float32 vector named by `StepFns.metric_names`. `skip_nonfinite=False` (the trainer's
    `on_nonfinite: stop`) leaves out the guard's per-leaf selects (one per state leaf, in every
    step; their cost on the digits MLP was within this machine's noise, so it is not quoted): the counters still record the first non-finite step, and the loop stops
    before it would evaluate or checkpoint the state that step made.
    """
    opt_init, opt_update, get_params = optimizer
    axis = AXIS if devices > 1 else None
    batch_shape = (-1,) + tuple(input_shape)
    trace_counts = {"train": 0, "eval": 0}

    def initial_state(seed):
        init_key, rng = random.split(random.PRNGKey(seed))
        _, params = model.init_fun(init_key, batch_shape)
        zero = jnp.zeros((), jnp.int32)
        return {"step": zero, "opt_state": opt_init(params), "layer_state": nn.init_state(model, batch_shape),
                "rng": rng, "ema": params if ema_decay else None,
                "nonfinite": {"consecutive": zero, "total": zero, "first_step": zero - 1, "longest": zero},
                **({"dp": {"noise_key": dp_lib.initial_noise_key(seed)}} if dp else {})}

    # Compiled, so that every leaf is a buffer of its own: the state is donated to the step, and
    # eagerly built leaves may share one buffer (equal constants, EMA = params).
    init_state = core.jit(initial_state, static_argnums=0)

    metric_names = ("loss", "grad_norm") + (("learning_rate",) if schedule is not None else ()) \
        + tuple(metric_fns) + (("clipped_fraction", "batch_size") if dp else ())

    def global_sum(x):
        return lax.psum(x, axis) if axis else x

    if dp:
        if axis:
            raise ValueError(f"make_steps: DP-SGD (dp=...) runs on one device; got devices={devices}")
        private_gradient = dp_lib.make_private_gradient(model, loss_fn, metric_fns, dp, input_shape)

    def train_step(state, batch):
        trace_counts["train"] += 1  # runs once per trace, not per call
        x, y, mask = batch["x"], batch["y"], batch["mask"]
        # the step's key is a pure function of the run's key and the step number: the state's key
        # never changes, and a model that draws nothing (no dropout) computes no key at all, as
        # XLA drops the unused hash (a split per step is a threefry hash in every step program)
        rng = state["rng"]
        dropout_key = random.fold_in(rng, state["step"])
        if axis:
            dropout_key = random.fold_in(dropout_key, lax.axis_index(axis))
        count = jnp.maximum(global_sum(jnp.sum(mask)), 1.0)
        params = get_params(state["opt_state"])

        if dp:
            noise_key = dp_lib.step_noise_key(state["dp"]["noise_key"], state["step"])
            loss, grads, dp_metrics, dp_extras = private_gradient(params, batch, dropout_key, noise_key)
            layer_state = state["layer_state"]
        else:
            def objective(p):
                out, layer_state = nn.apply_with_state(model, p, x, state["layer_state"], rng=dropout_key,
                                                       mode="train")
                return jnp.sum(loss_fn(out, y) * mask) / count, (out, layer_state)

            (loss, (out, layer_state)), grads = core.value_and_grad(objective, has_aux=True)(params)
            loss, grads = global_sum(loss), global_sum(grads)
        if weight_decay:
            grads = tree_map(lambda g, p: g + weight_decay * p, grads, params)
        grad_norm = optim.l2_norm(grads)
        if grad_clip_norm:
            grads = optim.clip_grads(grads, grad_clip_norm)
        opt_state = opt_update(state["step"], grads, state["opt_state"])
        ema = state["ema"]
        if ema_decay:
            ema = tree_map(lambda e, p: ema_decay * e + (1.0 - ema_decay) * p, ema, get_params(opt_state))

        finite = jnp.isfinite(loss) & jnp.isfinite(grad_norm)
        keep = (opt_state, layer_state, ema)
        kept = _select(finite, keep, (state["opt_state"], state["layer_state"], state["ema"])) \
            if skip_nonfinite else keep
        nf = state["nonfinite"]
        bad = jnp.logical_not(finite).astype(jnp.int32)
        consecutive = (nf["consecutive"] + 1) * bad
        nonfinite = {"consecutive": consecutive, "total": nf["total"] + bad,
                     "first_step": jnp.where((nf["first_step"] < 0) & (bad > 0), state["step"], nf["first_step"]),
                     "longest": jnp.maximum(nf["longest"], consecutive)}
        new_state = {"step": state["step"] + 1, "opt_state": kept[0], "layer_state": kept[1], "rng": rng,
                     "ema": kept[2], "nonfinite": nonfinite}
        if dp:
            new_state["dp"] = state["dp"]
        metrics = {"loss": loss, "grad_norm": grad_norm}
        if schedule is not None:
            metrics["learning_rate"] = jnp.asarray(schedule(state["step"]), jnp.float32)
        for name, fn in metric_fns.items():
            metrics[name] = dp_metrics[name] if dp else global_sum(jnp.sum(fn(out, y) * mask)) / count
        if dp:
            metrics.update(dp_extras)
        # one float32 vector in the order of `metric_names`: an output buffer per metric cost the
        # digits MLP's step call ~4 us each, and the loop's copy of an interval a buffer per value
        assert tuple(metrics) == metric_names, (tuple(metrics), metric_names)
        return new_state, jnp.stack([lax.convert_element_type(v, jnp.float32) for v in metrics.values()])

    def eval_step(params, layer_state, batch):
        trace_counts["eval"] += 1
        x, y, mask = batch["x"], batch["y"], batch["mask"]
        if nn.is_stateful(model):
            out, _ = model.apply_fun(params, x, state=layer_state, mode="eval")
        else:
            out = model.apply_fun(params, x, mode="eval")
        sums = {"loss": jnp.sum(loss_fn(out, y) * mask), "count": jnp.sum(mask)}
        for name, fn in metric_fns.items():
            sums[name] = jnp.sum(fn(out, y) * mask)
        return tree_map(global_sum, sums)

    def params_of(state):
        return state["ema"] if ema_decay else get_params(state["opt_state"])

    if axis:
        train = core.pmap(train_step, axis_name=AXIS, donate_argnums=(0,))
        evaluate = core.pmap(eval_step, axis_name=AXIS)
    else:
        train = core.jit(train_step, donate_argnums=(0,))
        evaluate = core.jit(eval_step)
    return StepFns(init_state, train, evaluate, params_of, trace_counts, metric_names)


def _select(pred, on_true, on_false):
    """`on_true` where `pred` else `on_false`, leaf by leaf (the state trees have one structure)."""
    return tree_map(lambda t, f: jnp.where(pred, t, f), on_true, on_false)

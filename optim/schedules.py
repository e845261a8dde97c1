"""Step-size schedules: a schedule is a function `step -> step size`.

`step` is the optimizer's integer step count (0 for the first update), either a Python int or a
traced int32 scalar inside `jit`; the step size is a scalar (a Python number or a 0-d array).
Every optimizer in `optim` accepts a number or a schedule wherever it takes a step size (see
`make_schedule`). The first five schedules follow `jax.example_libraries.optimizers` formula for
formula; the cosine, warmup and joining schedules follow optax's documented behaviour (for
example `warmup_cosine_decay`'s `decay_steps` counts the warmup too).

    >>> sched = exponential_decay(0.1, decay_steps=10, decay_rate=0.5)
    >>> float(sched(10))
    0.05
"""
import math

import numpy as np

import core.numpy as jnp

__all__ = ["constant", "exponential_decay", "inverse_time_decay", "polynomial_decay",
           "piecewise_constant", "cosine_decay", "linear_schedule", "linear_warmup",
           "warmup_cosine_decay", "join_schedules", "make_schedule"]


def _check_positive(fn_name, arg_name, value):
    if not value > 0:
        raise ValueError(f"{fn_name} requires a positive {arg_name}, got {arg_name}={value!r}.")


def constant(step_size):
    """The schedule that always returns `step_size`.

    Example: `constant(0.1)(1000)` is `0.1`.
    """
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    """Continuous exponential decay: `step_size * decay_rate ** (i / decay_steps)`.

    The step size is multiplied by `decay_rate` every `decay_steps` steps, smoothly in between.
    Example: `exponential_decay(0.1, 10, 0.5)(20)` is `0.025`.
    """
    _check_positive("exponential_decay", "decay_steps", decay_steps)

    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """Inverse time decay: `step_size / (1 + decay_rate * i / decay_steps)`.

    With `staircase=True` the ratio `i / decay_steps` is floored, so the step size only changes
    every `decay_steps` steps. Example: `inverse_time_decay(1.0, 10, 1.0, staircase=True)(19)` is
    `0.5`.
    """
    _check_positive("inverse_time_decay", "decay_steps", decay_steps)
    if staircase:
        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """Polynomial decay from `step_size` to `final_step_size` over `decay_steps` steps, then flat:
    `(step_size - final_step_size) * (1 - min(i, decay_steps) / decay_steps) ** power +
    final_step_size`.

    Example: `polynomial_decay(1.0, 10, 0.0, power=2.0)(5)` is `0.25`.
    """
    _check_positive("polynomial_decay", "decay_steps", decay_steps)

    def schedule(i):
        i = jnp.minimum(i, decay_steps)
        step_mult = (1 - i / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """`values[k]` where `k` counts the boundaries strictly below the step.

    So the step size is `values[0]` for `i <= boundaries[0]`, `values[1]` for `boundaries[0] < i <=
    boundaries[1]`, ..., `values[-1]` after the last boundary; `values` has one more entry than
    `boundaries`. Example: `piecewise_constant([10, 20], [1.0, 0.5, 0.1])` gives `1.0` at step 10
    and `0.5` at step 11.
    """
    b, v = np.asarray(boundaries), np.asarray(values)
    if not b.ndim == v.ndim == 1:
        raise ValueError(f"piecewise_constant: boundaries and values must be 1-d sequences, got "
                         f"shapes {b.shape} and {v.shape}.")
    if b.shape[0] != v.shape[0] - 1:
        raise ValueError(f"piecewise_constant: values must have one more entry than boundaries, got "
                         f"{v.shape[0]} values for {b.shape[0]} boundaries.")

    def schedule(i):
        index = jnp.sum(jnp.asarray(i) > jnp.asarray(b))
        return jnp.asarray(v)[index]
    return schedule


def cosine_decay(step_size, decay_steps, alpha=0.0):
    """Cosine decay from `step_size` to `alpha * step_size` over `decay_steps` steps, then flat:
    `step_size * ((1 - alpha) * (1 + cos(pi * min(i, decay_steps) / decay_steps)) / 2 + alpha)`.

    Loshchilov & Hutter (2017), "SGDR: Stochastic Gradient Descent with Warm Restarts", ICLR,
    arXiv:1608.03983 (as optax's `cosine_decay_schedule`). Example: `cosine_decay(1.0, 10)(5)` is
    `0.5`.
    """
    _check_positive("cosine_decay", "decay_steps", decay_steps)

    def schedule(i):
        i = jnp.minimum(i, decay_steps)
        cosine = 0.5 * (1 + jnp.cos(math.pi * i / decay_steps))
        return step_size * ((1 - alpha) * cosine + alpha)
    return schedule


def linear_schedule(init_value, end_value, transition_steps, transition_begin=0):
    """Linear interpolation from `init_value` to `end_value` over `transition_steps` steps starting
    at `transition_begin` (flat before and after), as optax's `linear_schedule`.

    A non-positive `transition_steps` gives the constant `init_value`. Example:
    `linear_schedule(0.0, 1.0, 10)(3)` is `0.3`, and `1.0` from step 10 on.
    """
    if transition_steps <= 0:
        return constant(init_value)
    if transition_begin < 0:
        raise ValueError(f"linear_schedule requires a non-negative transition_begin, got "
                         f"transition_begin={transition_begin!r}.")

    def schedule(i):
        i = jnp.clip(i - transition_begin, 0, transition_steps)
        frac = 1 - i / transition_steps
        return (init_value - end_value) * frac + end_value
    return schedule


linear_warmup = linear_schedule  # the same schedule, under the name used for warmups


def join_schedules(schedules, boundaries):
    """Run `schedules[0]` until `boundaries[0]`, then `schedules[1]` with the step counted from
    `boundaries[0]`, and so on (as optax's `join_schedules`).

    At step `i >= boundaries[k]` (the last such `k`) the value is `schedules[k + 1](i -
    boundaries[k])`. Example: `join_schedules([constant(1.0), constant(2.0)], [5])` gives `1.0` at
    step 4 and `2.0` at step 5.
    """
    schedules, boundaries = list(schedules), list(boundaries)
    if len(boundaries) != len(schedules) - 1:
        raise ValueError(f"join_schedules needs one boundary fewer than schedules, got "
                         f"{len(schedules)} schedules and {len(boundaries)} boundaries.")

    def schedule(i):
        out = schedules[0](i)
        for boundary, sched in zip(boundaries, schedules[1:], strict=True):
            out = jnp.where(i < boundary, out, sched(i - boundary))
        return out
    return schedule


def warmup_cosine_decay(peak, warmup_steps, decay_steps, end_value=0.0, init_value=0.0):
    """Linear warmup from `init_value` to `peak` over `warmup_steps`, then cosine decay from `peak`
    to `end_value`, reached at step `decay_steps` (which counts the warmup, as in optax's
    `warmup_cosine_decay_schedule`), then flat.

    Goyal et al. (2017), "Accurate, Large Minibatch SGD", arXiv:1706.02677 (warmup); Loshchilov &
    Hutter (2017), arXiv:1608.03983 (cosine). Example: `warmup_cosine_decay(1.0, 10, 30)` is `0.5`
    at step 5, `1.0` at step 10, `0.5` at step 20 and `0.0` from step 30 on.
    """
    if not decay_steps > warmup_steps:
        raise ValueError(f"warmup_cosine_decay requires decay_steps > warmup_steps (decay_steps "
                         f"counts the warmup), got decay_steps={decay_steps!r} and "
                         f"warmup_steps={warmup_steps!r}.")
    alpha = 0.0 if peak == 0 else end_value / peak
    return join_schedules([linear_schedule(init_value, peak, warmup_steps),
                           cosine_decay(peak, decay_steps - warmup_steps, alpha=alpha)],
                          [warmup_steps])


def make_schedule(scalar_or_schedule):
    """A callable is returned as it is; a number (or 0-d array) becomes `constant(number)`.

    Optimizers call this on their step-size argument. Example: `make_schedule(0.1)(7)` is `0.1`.
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if isinstance(scalar_or_schedule, (bool, str)) or not _is_number(scalar_or_schedule):
        raise TypeError(f"A step size must be a number or a schedule (a callable step -> step size), "
                        f"got {_describe(scalar_or_schedule)}.")
    return constant(scalar_or_schedule)


def _is_number(x):
    if isinstance(x, (int, float, np.number)):
        return True
    dtype = getattr(x, "dtype", None)
    return (getattr(x, "shape", None) == () and dtype is not None and np.dtype(dtype).kind in "iufc")


def _describe(x):
    shape = getattr(x, "shape", None)
    if shape is not None:
        return f"{type(x).__name__} of shape {tuple(shape)} and dtype {x.dtype}"
    return f"{type(x).__name__} {x!r}"

"""optim/schedules.py against float64 NumPy formulas written here from the published definitions
(jax.example_libraries.optimizers for the first five, optax's documentation for the rest), at
chosen steps including every boundary, eagerly with a Python int and under jit with a traced
int32 step."""
import doctest
import math

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu
from optim import schedules
from optim.schedules import (constant, cosine_decay, exponential_decay, inverse_time_decay,
                             join_schedules, linear_schedule, linear_warmup, make_schedule,
                             piecewise_constant, polynomial_decay, warmup_cosine_decay)


def _np_cosine(i, init, decay_steps, alpha):
    t = min(i, decay_steps)
    return init * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * t / decay_steps)) + alpha)


def _np_warmup_cosine(i, peak, warmup, decay_steps, end, init):
    # Written as optax documents it: linear from init to peak over `warmup` steps, then a cosine
    # from peak to end over the remaining decay_steps - warmup steps, then end.
    if i < warmup:
        return init + (peak - init) * i / warmup
    t = min(i - warmup, decay_steps - warmup)
    return end + (peak - end) * 0.5 * (1 + math.cos(math.pi * t / (decay_steps - warmup)))


def _np_join(i):
    # constant 1.0 until step 5, then 1.0 -> 0.0 linearly over 10 steps counted from 5, then 0.05
    # from step 15 on.
    if i < 5:
        return 1.0
    if i < 15:
        return 1.0 - min(i - 5, 10) / 10
    return 0.05


# (name, schedule, float64 reference, steps): steps straddle each boundary of the schedule.
CASES = [
    ("constant", constant(0.3), lambda i: 0.3, [0, 7, 1000]),
    ("exponential_decay", exponential_decay(0.1, 10, 0.5), lambda i: 0.1 * 0.5 ** (i / 10),
     [0, 1, 10, 25, 100]),
    ("inverse_time_decay", inverse_time_decay(0.2, 10, 0.5), lambda i: 0.2 / (1 + 0.5 * i / 10),
     [0, 9, 10, 25]),
    ("inverse_time_decay_staircase", inverse_time_decay(0.2, 10, 0.5, staircase=True),
     lambda i: 0.2 / (1 + 0.5 * (i // 10)), [0, 9, 10, 19, 20, 25]),
    ("polynomial_decay", polynomial_decay(1.0, 10, 0.01, power=2.0),
     lambda i: (1.0 - 0.01) * (1 - min(i, 10) / 10) ** 2 + 0.01, [0, 3, 9, 10, 11, 50]),
    ("polynomial_decay_linear", polynomial_decay(0.5, 4, 0.1),
     lambda i: 0.5 - 0.1 * min(i, 4), [0, 1, 4, 8]),
    ("piecewise_constant", piecewise_constant([10, 20], [1.0, 0.5, 0.1]),
     lambda i: 1.0 if i <= 10 else (0.5 if i <= 20 else 0.1), [0, 10, 11, 20, 21, 100]),
    ("cosine_decay", cosine_decay(2.0, 10, alpha=0.1), lambda i: _np_cosine(i, 2.0, 10, 0.1),
     [0, 3, 5, 10, 20]),
    ("cosine_decay_alpha0", cosine_decay(1.0, 8), lambda i: 0.5 * (1 + math.cos(math.pi * min(i, 8) / 8)),
     [0, 4, 8, 9]),
    ("linear_schedule", linear_schedule(0.1, 1.0, 10, transition_begin=5),
     lambda i: 0.1 + 0.9 * min(max(i - 5, 0), 10) / 10, [0, 5, 6, 10, 15, 20]),
    ("linear_warmup", linear_warmup(0.0, 3e-3, 4), lambda i: 3e-3 * min(i, 4) / 4, [0, 1, 4, 9]),
    ("warmup_cosine_decay", warmup_cosine_decay(1.0, 10, 30, end_value=0.1, init_value=0.2),
     lambda i: _np_warmup_cosine(i, 1.0, 10, 30, 0.1, 0.2), [0, 5, 9, 10, 11, 20, 29, 30, 40]),
    ("join_schedules", join_schedules([constant(1.0), linear_schedule(1.0, 0.0, 10), constant(0.05)],
                                      [5, 15]), _np_join, [0, 4, 5, 10, 14, 15, 20]),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("name,schedule,reference,steps", CASES, ids=IDS)
def test_schedule_values_eager(name, schedule, reference, steps):
    for i in steps:
        tu.assert_allclose(schedule(i), reference(i), np.float32, err_msg=f"{name} at step {i}")


@pytest.mark.parametrize("name,schedule,reference,steps", CASES, ids=IDS)
def test_schedule_values_jit_traced_step(name, schedule, reference, steps):
    traced = []

    def f(i):
        traced.append(i)
        return jnp.asarray(schedule(i), jnp.float32)

    fast = core.jit(f)
    for i in steps:
        out = fast(np.int32(i))
        assert out.shape == () and out.dtype == np.float32
        tu.assert_allclose(out, reference(i), np.float32, err_msg=f"{name} at step {i}")
    assert len(traced) == 1, "the step must be a traced argument, not a constant of the trace"
    assert isinstance(traced[0], core.trace.Tracer) and traced[0].dtype == np.int32


def test_schedules_feed_an_update_under_jit():
    # A step size taken from a schedule inside a jitted update depends on the traced step.
    sched = make_schedule(piecewise_constant([1], [0.5, 0.25]))
    step = core.jit(lambda i, x, g: x - sched(i) * g)
    x = jnp.array([1.0, 2.0])
    for i in range(3):
        x = step(np.int32(i), x, jnp.array([1.0, -1.0]))
    tu.assert_allclose(x, np.array([1.0, 2.0]) + np.array([-1.0, 1.0]) * (0.5 + 0.5 + 0.25), np.float32)


def test_make_schedule():
    def sched(i):
        return 0.5 / (i + 1)
    assert make_schedule(sched) is sched
    assert make_schedule(0.1)(12) == 0.1
    assert make_schedule(3)(0) == 3
    tu.assert_allclose(make_schedule(jnp.asarray(0.25))(5), 0.25, np.float32)
    assert make_schedule(np.float32(0.5))(1) == np.float32(0.5)


@pytest.mark.parametrize("bad,fragment", [
    (jnp.ones(3), r"shape \(3,\)"),
    (np.ones((2, 2)), r"shape \(2, 2\)"),
    ("0.1", r"str '0.1'"),
    (None, r"NoneType None"),
])
def test_make_schedule_rejects_non_numbers(bad, fragment):
    with pytest.raises(TypeError, match=r"step size must be a number or a schedule .*" + fragment):
        make_schedule(bad)


@pytest.mark.parametrize("make,fragment", [
    (lambda: exponential_decay(0.1, 0, 0.5), r"exponential_decay requires a positive decay_steps, got decay_steps=0"),
    (lambda: inverse_time_decay(0.1, -1, 0.5), r"inverse_time_decay requires a positive decay_steps"),
    (lambda: polynomial_decay(0.1, 0, 0.0), r"polynomial_decay requires a positive decay_steps"),
    (lambda: cosine_decay(0.1, 0), r"cosine_decay requires a positive decay_steps"),
    (lambda: piecewise_constant([1, 2], [1.0, 0.5]),
     r"values must have one more entry than boundaries, got 2 values for 2 boundaries"),
    (lambda: piecewise_constant([[1]], [[1.0, 0.5]]), r"must be 1-d sequences, got shapes \(1, 1\) and \(1, 2\)"),
    (lambda: join_schedules([constant(1.0)], [3]), r"one boundary fewer than schedules, got 1 schedules and 1"),
    (lambda: warmup_cosine_decay(1.0, 10, 10), r"decay_steps > warmup_steps .*decay_steps=10 .*warmup_steps=10"),
    (lambda: linear_schedule(0.0, 1.0, 5, transition_begin=-1), r"non-negative transition_begin"),
])
def test_schedule_argument_errors(make, fragment):
    with pytest.raises(ValueError, match=fragment):
        make()


def test_linear_schedule_without_transition_is_constant():
    # optax: transition_steps <= 0 holds init_value forever.
    assert linear_schedule(0.7, 0.0, 0)(100) == 0.7


def test_warmup_cosine_decay_with_zero_peak():
    # alpha = end / peak is undefined for peak 0; optax then decays to 0 (alpha = 0).
    sched = warmup_cosine_decay(0.0, 2, 6, end_value=0.0, init_value=1.0)
    for i, want in [(0, 1.0), (1, 0.5), (2, 0.0), (6, 0.0)]:
        tu.assert_allclose(sched(i), want, np.float32)


def test_module_docstrings_run():
    result = doctest.testmod(schedules)
    assert result.attempted > 0 and result.failed == 0

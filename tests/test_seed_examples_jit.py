"""The seeds' examples for tracing, jit and control flow (issue 3), with the values they printed."""
import numpy as np

import core
import core.numpy as jnp
from core import lax, random


def test_make_jaxpr_of_log2_shows_log_log_div():
    def log2(x):
        ln_x = jnp.log(x)
        ln_2 = jnp.log(2.0)
        return ln_x / ln_2

    closed = core.make_jaxpr(log2)(3.0)
    assert [e.primitive.name for e in closed.eqns] == ["log", "log", "div"]
    assert str(closed) == ("{ lambda ; a:f32[]. let\n    b:f32[] = log a\n    c:f32[] = log 2.0:f32[]\n"
                           "    d:f32[] = div b c\n  in (d,) }")
    np.testing.assert_allclose(float(core.jit(log2)(8.0)), 3.0, rtol=1e-6)


def test_500_step_iteration_jitted_over_38_starting_values():
    # x <- (x**2 + 21) / 10 has fixed points 3 (attracting) and 7 (repelling)
    @core.jit
    def iterate(x0):
        return lax.fori_loop(0, 500, lambda i, x: (x ** 2 + 21) / 10, x0)

    starts = np.linspace(-6.5, 12.0, 38).astype(np.float32)
    out = np.asarray(iterate(jnp.asarray(starts)))
    expected = starts.astype(np.float64)
    with np.errstate(over="ignore"):
        for _ in range(500):
            expected = (expected ** 2 + 21) / 10
    inside = np.abs(starts) < 7
    np.testing.assert_allclose(out[inside], 3.0, rtol=1e-5)
    assert np.all(np.isinf(out[np.abs(starts) > 7])) and np.all(np.isinf(expected[np.abs(starts) > 7]))


def test_fori_loop_sum_is_55():
    assert int(lax.fori_loop(1, 11, lambda i, acc: acc + i, 0)) == 55
    assert int(core.jit(lambda n: lax.fori_loop(1, n + 1, lambda i, acc: acc + i, 0))(10)) == 55


def test_while_loop_sum():
    def sum_below(n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + c[0]), (0, 0))[1]
    assert int(sum_below(10)) == 45 and int(core.jit(sum_below)(100)) == 4950


def test_scan_samples_a_markov_chain():
    transition = jnp.asarray(np.array([[0.9, 0.1], [0.5, 0.5]], np.float32))

    def step(state, key):
        nxt = random.categorical(key, jnp.log(transition[state]))
        return nxt, nxt

    keys = random.split(random.PRNGKey(0), 4000)
    _, states = core.jit(lambda k: lax.scan(step, jnp.int32(0), k))(keys)
    # the same chain, one eager step at a time (an independent driver of the same sampler)
    state, loop_states = jnp.int32(0), []
    for k in keys[:50]:
        state, _ = step(state, k)
        loop_states.append(int(state))
    np.testing.assert_array_equal(np.asarray(states[:50]), loop_states)
    # stationary distribution of [[.9, .1], [.5, .5]] is (5/6, 1/6)
    assert abs(float(np.mean(np.asarray(states) == 0)) - 5 / 6) < 0.03

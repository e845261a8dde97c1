"""Control flow (cond, switch, while_loop, fori_loop, scan, map, associative_scan, select) against
Python loops over NumPy, eagerly and under jit, plus the jaxprs they stage and their errors."""
import re

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax, test_util as tu
from core.ir import check_jaxpr
from core.lax import control_flow as cf


def _np(x):
    return np.asarray(x)


# ----- cond / switch --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dtype", tu.sample_cases(
    tu.product([(), (3,), (2, 3), (0, 2)], [np.float32, np.int32, np.float16, np.bool_]), "cond_dtypes"))
def test_cond_picks_the_branch_eagerly_and_under_jit(rng, shape, dtype):
    x = tu.rand(rng, shape, dtype)
    f = lambda p, x: cf.cond(p, lambda x: x, lambda x: lax.bitwise_not(x) if x.dtype == np.bool_ else x - x, x)
    for pred in (True, False):
        expected = x if pred else (~x if x.dtype == np.bool_ else x - x)
        for g in (f, core.jit(f)):
            out = g(pred, jnp.asarray(x))
            assert out.dtype == np.dtype(dtype) and out.shape == shape
            tu.assert_allclose(out, expected, dtype)


def test_cond_pytrees_closures_and_integer_predicates():
    w = jnp.asarray(np.array([1.0, 2.0, 3.0], np.float32))
    ops = {"a": jnp.ones(3), "b": (jnp.arange(3.0), 2.0)}

    def true_fun(d):
        return {"sum": d["a"] * w + d["b"][0], "n": d["b"][1] * 2}

    def false_fun(d):
        return {"sum": d["a"] - w, "n": d["b"][1] + 1}

    for pred, expected_sum, expected_n in ((1, np.array([1, 3, 5]), 4.0), (0, np.array([0, -1, -2]), 3.0)):
        for g in (lambda p: cf.cond(p, true_fun, false_fun, ops), core.jit(lambda p: cf.cond(p, true_fun, false_fun, ops))):
            out = g(jnp.asarray(np.int32(pred)))
            np.testing.assert_allclose(_np(out["sum"]), expected_sum)
            assert float(out["n"]) == expected_n


def test_cond_with_several_operands_and_no_operands():
    x, y = jnp.asarray(np.float32(2.0)), jnp.asarray(np.float32(5.0))
    assert float(cf.cond(True, lambda a, b: a * b, lambda a, b: a + b, x, y)) == 10.0
    assert float(core.jit(lambda p: cf.cond(p, lambda: x, lambda: y))(False)) == 5.0
    assert cf.cond(True, lambda: None, lambda: None) is None


def test_cond_old_operand_form():
    out = cf.cond(True, jnp.asarray(np.float32(3.0)), lambda a: a * 2, jnp.ones(2), lambda b: b.sum())
    assert float(out) == 6.0
    out = cf.cond(False, jnp.asarray(np.float32(3.0)), lambda a: a * 2, jnp.ones(2), lambda b: b.sum())
    assert float(out) == 2.0


def test_cond_closes_over_outer_tracers_in_jit():
    @core.jit
    def f(x, y):
        return cf.cond(x.sum() > 0, lambda: x * y, lambda: y - x)

    x, y = jnp.arange(3.0), jnp.full((3,), 2.0)
    np.testing.assert_allclose(_np(f(x, y)), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(_np(f(-x, y)), [2.0, 3.0, 4.0])


def test_cond_result_weak_only_when_both_branches_are_weak():
    x = jnp.ones(())
    assert not cf.cond(True, lambda: 1.0, lambda: x).weak_type
    assert cf.cond(True, lambda: 1.0, lambda: 2.0).weak_type


def test_eager_cond_compiles_once_per_signature():
    x = jnp.arange(3.0)
    pred = jnp.asarray(True)
    cf.cond(pred, lambda x: x + 1, lambda x: x - 1, x)
    core.clear_caches()
    for _ in range(4):
        out = cf.cond(pred, lambda x: x + 1, lambda x: x - 1, x)  # a fresh lambda each time
    np.testing.assert_allclose(_np(out), [1.0, 2.0, 3.0])
    info = core.cache_info()["eager"]
    assert info["misses"] <= 2 and info["hits"] >= 3  # the cond (and the pred conversion) compile once


def test_cond_under_disable_jit_runs_only_the_chosen_branch():
    calls = []

    def t(x):
        calls.append("t")
        return x

    def f(x):
        calls.append("f")
        return -x

    with core.disable_jit():
        out = cf.cond(jnp.asarray(True), t, f, jnp.ones(2))
    assert calls == ["t"]
    np.testing.assert_allclose(_np(out), [1.0, 1.0])


@pytest.mark.parametrize("index", [-3, 0, 1, 2, 7])
def test_switch_clamps_the_index(index):
    branches = [lambda x: x + 1.0, lambda x: x * 10.0, lambda x: -x]
    x = np.array([1.0, 2.0], np.float32)
    expected = [x + 1, x * 10, -x][min(max(index, 0), 2)]
    np.testing.assert_allclose(_np(cf.switch(index, branches, jnp.asarray(x))), expected)
    np.testing.assert_allclose(_np(core.jit(lambda i, x: cf.switch(i, branches, x))(index, jnp.asarray(x))), expected)


def test_switch_with_one_branch_and_uint_index():
    assert float(cf.switch(jnp.asarray(np.uint8(4)), [lambda: 7.0])) == 7.0
    assert float(cf.switch(jnp.asarray(np.uint8(1)), [lambda: 7.0, lambda: 8.0])) == 8.0


# ----- while_loop / fori_loop -----------------------------------------------------------------------

def test_while_loop_newton_sqrt_matches_numpy():
    a = np.array([2.0, 9.0, 0.5, 100.0], np.float32)

    def newton(a):
        def body(c):
            x, _ = c
            nxt = 0.5 * (x + a / x)
            return nxt, jnp.max(jnp.abs(nxt - x))

        return cf.while_loop(lambda c: c[1] > 1e-6, body, (a, jnp.asarray(np.float32(1.0))))[0]

    for g in (newton, core.jit(newton)):
        tu.assert_allclose(g(jnp.asarray(a)), np.sqrt(a.astype(np.float64)), np.float32, rtol=1e-6)


def _collatz_steps(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@pytest.mark.parametrize("n", [1, 6, 27])
def test_while_loop_collatz_counts(n):
    def collatz(n):
        def body(c):
            k, steps = c
            return jnp.where(k % 2 == 0, k // 2, 3 * k + 1), steps + 1

        return cf.while_loop(lambda c: c[0] != 1, body, (n, 0))[1]

    expected = _collatz_steps(n)
    assert int(collatz(jnp.asarray(np.int32(n)))) == expected
    assert int(core.jit(collatz)(n)) == expected


def test_while_loop_promotes_a_weak_initial_carry_and_refuses_a_dtype_changing_output():
    out = cf.while_loop(lambda x: x < 3.5, lambda x: x + jnp.asarray(np.float16(1.5)), 0)
    assert out.dtype == np.float16 and float(out) == 4.5
    # a Python-scalar body output (weak f32) does not silently become the strong f16 carry (as JAX)
    with pytest.raises(TypeError, match=r"the input carry x has type f16\[\] but the corresponding output carry "
                                        r"component has type f32\[\]\{weak\}, so the dtypes do not match"):
        cf.while_loop(lambda x: x < 1, lambda x: 2.5, jnp.asarray(np.float16(0.0)))
    # a weak output of the carry's own dtype is fine, and the result keeps the carry's strong type
    out = cf.while_loop(lambda x: x < 1, lambda x: 2.5, jnp.asarray(np.float32(0.0)))
    assert out.dtype == np.float32 and float(out) == 2.5 and not out.weak_type


def test_while_loop_zero_iterations_and_disable_jit():
    x = jnp.arange(3.0)
    np.testing.assert_allclose(_np(cf.while_loop(lambda c: False, lambda c: c + 1, x)), [0.0, 1.0, 2.0])
    with core.disable_jit():
        assert int(cf.while_loop(lambda c: c < 5, lambda c: c + 2, 0)) == 6


@pytest.mark.parametrize("lower,upper", [(0, 5), (3, 7), (4, 2), (-2, 3)])
def test_fori_loop_static_and_traced_bounds(lower, upper):
    def body(i, c):
        s, prod = c
        return s + i * i, prod * 2.0

    expected_s = sum(i * i for i in range(lower, upper))
    expected_p = 2.0 ** max(upper - lower, 0)
    for g in (lambda lo, hi: cf.fori_loop(lo, hi, body, (0, 1.0)),
              core.jit(lambda lo, hi: cf.fori_loop(lo, hi, body, (0, 1.0)))):
        s, p = g(lower, upper)
        assert int(s) == expected_s and float(p) == expected_p


def test_fori_loop_uses_scan_for_static_bounds_and_while_otherwise():
    body = lambda i, x: x + i
    static = core.make_jaxpr(lambda x: cf.fori_loop(0, 4, body, x))(0)
    traced = core.make_jaxpr(lambda n, x: cf.fori_loop(0, n, body, x))(4, 0)
    assert [e.primitive.name for e in static.eqns] == ["scan"]
    assert [e.primitive.name for e in traced.eqns][-1] == "while"
    assert int(cf.fori_loop(0, 4, body, 0, unroll=3)) == 6
    with pytest.raises(ValueError, match=r"Can only use `unroll` in `fori_loop` if the loop bounds are statically known"):
        core.jit(lambda n: cf.fori_loop(0, n, body, 0, unroll=2))(4)


# ----- scan / map ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dtype", tu.sample_cases(
    tu.product([(5,), (4, 3), (0,), (0, 2), (1, 2, 2)], [np.float32, np.int32, np.float16]), "scan_cumsum"))
def test_scan_cumulative_sum_matches_numpy(rng, shape, dtype):
    xs = tu.rand(rng, shape, dtype)
    f = lambda xs: cf.scan(lambda c, x: (c + x, c + x), jnp.zeros(shape[1:], dtype), xs)
    expected = np.cumsum(tu.wide(xs), axis=0)
    for g in (f, core.jit(f)):
        carry, ys = g(jnp.asarray(xs))
        assert ys.dtype == np.dtype(dtype) and ys.shape == shape
        tu.assert_allclose(ys, expected.astype(np.float64) if expected.size else expected.reshape(shape), dtype,
                           atol=1e-2 if dtype == np.float16 else None)
        tu.assert_allclose(carry, expected[-1] if shape[0] else np.zeros(shape[1:]), dtype,
                           atol=1e-2 if dtype == np.float16 else None)


@pytest.mark.parametrize("unroll", [1, 2, 3, True])
def test_scan_reverse_and_unroll(unroll):
    xs = np.arange(1.0, 8.0, dtype=np.float32)
    f = lambda xs: cf.scan(lambda c, x: (c * 0.5 + x, c), 0.0, xs, reverse=True, unroll=unroll)
    c, expected_ys = 0.0, np.zeros(7)
    for i in reversed(range(7)):
        expected_ys[i] = c
        c = c * 0.5 + xs[i]
    for g in (f, core.jit(f)):
        carry, ys = g(jnp.asarray(xs))
        tu.assert_allclose(ys, expected_ys, np.float32)
        tu.assert_allclose(carry, c, np.float32)


def test_scan_without_xs_uses_length():
    carry, ys = cf.scan(lambda c, _: (c * 2, c), 1, None, length=5)
    assert int(carry) == 32
    np.testing.assert_array_equal(_np(ys), [1, 2, 4, 8, 16])


def test_scan_pytree_carry_and_xs():
    xs = {"u": jnp.asarray(np.arange(4.0, dtype=np.float32)), "v": (jnp.asarray(np.arange(8).reshape(4, 2)),)}

    def step(c, x):
        total, count = c
        total = total + x["u"] * x["v"][0].sum()
        return (total, count + 1), {"t": total, "pair": (x["u"], count)}

    (total, count), ys = core.jit(lambda xs: cf.scan(step, (0.0, 0), xs))(xs)
    u, v = np.arange(4.0), np.arange(8).reshape(4, 2).sum(1)
    np.testing.assert_allclose(_np(ys["t"]), np.cumsum(u * v))
    np.testing.assert_array_equal(_np(ys["pair"][1]), [0, 1, 2, 3])
    assert float(total) == float(np.sum(u * v)) and int(count) == 4


def test_scan_rnn_step_matches_a_python_loop(rng):
    wx, wh = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(4, 4)).astype(np.float32) * 0.5
    xs = rng.normal(size=(6, 2, 3)).astype(np.float32)

    def rnn(params, xs):
        def step(h, x):
            h = jnp.tanh(x @ params[0] + h @ params[1])
            return h, h.sum(-1)
        return cf.scan(step, jnp.zeros((2, 4)), xs)

    h, expected = np.zeros((2, 4)), []
    for x in xs.astype(np.float64):
        h = np.tanh(x @ wx + h @ wh)
        expected.append(h.sum(-1))
    for g in (rnn, core.jit(rnn)):
        hT, ys = g((jnp.asarray(wx), jnp.asarray(wh)), jnp.asarray(xs))
        tu.assert_allclose(hT, h, np.float32, atol=1e-5, rtol=1e-5)  # accumulated float32 rounding
        tu.assert_allclose(ys, np.stack(expected), np.float32, atol=1e-5, rtol=1e-5)


def test_scan_under_disable_jit_is_a_python_loop():
    with core.disable_jit():
        carry, ys = cf.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(4.0), reverse=True)
    assert float(carry) == 6.0
    np.testing.assert_allclose(_np(ys), [6.0, 5.0, 3.0, 0.0])


def test_map_matches_a_loop(rng):
    xs = rng.normal(size=(5, 3)).astype(np.float32)
    out = cf.map(lambda x: {"n": (x * x).sum(), "m": x.max()}, jnp.asarray(xs))
    tu.assert_allclose(out["n"], (xs.astype(np.float64) ** 2).sum(1), np.float32, atol=1e-5)
    tu.assert_allclose(out["m"], xs.max(1), np.float32)


# ----- associative_scan / select --------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
def test_associative_scan_add_and_max(rng, n):
    x = rng.normal(size=(n, 2)).astype(np.float32)
    tu.assert_allclose(cf.associative_scan(lax.add, jnp.asarray(x)), np.cumsum(x.astype(np.float64), 0),
                       np.float32, atol=1e-5)
    tu.assert_allclose(cf.associative_scan(lax.max, jnp.asarray(x)), np.maximum.accumulate(x, 0), np.float32)
    tu.assert_allclose(cf.associative_scan(lax.add, jnp.asarray(x), reverse=True),
                       np.cumsum(x[::-1].astype(np.float64), 0)[::-1], np.float32, atol=1e-5)
    tu.assert_allclose(core.jit(lambda x: cf.associative_scan(lax.max, x, axis=1))(jnp.asarray(x)),
                       np.maximum.accumulate(x, 1), np.float32)


def test_associative_scan_of_a_linear_recurrence_pytree(rng):
    # h_t = a_t * h_{t-1} + b_t composes as (a1, b1) o (a2, b2) = (a1 a2, a2 b1 + b2)
    a, b = rng.uniform(0.5, 1.0, 9).astype(np.float32), rng.normal(size=9).astype(np.float32)
    fn = lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1])
    _, h = cf.associative_scan(fn, (jnp.asarray(a), jnp.asarray(b)))
    expected, state = [], 0.0
    for at, bt in zip(a.astype(np.float64), b.astype(np.float64)):
        state = at * state + bt
        expected.append(state)
    tu.assert_allclose(h, expected, np.float32, atol=1e-5, rtol=1e-5)


def test_select():
    pred = jnp.asarray(np.array([True, False, True]))
    np.testing.assert_array_equal(_np(cf.select(pred, jnp.ones(3), jnp.zeros(3))), [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(_np(cf.select(jnp.asarray(False), jnp.ones(2), jnp.zeros(2))), [0.0, 0.0])


# ----- nesting, jaxprs, composition ------------------------------------------------------------------

def test_scan_inside_cond_inside_jit_and_while_inside_scan():
    @core.jit
    def f(p, xs):
        return cf.cond(p, lambda xs: cf.scan(lambda c, x: (c + x, c * x), 0.0, xs)[1],
                       lambda xs: cf.while_loop(lambda c: c.sum() < 50.0, lambda c: c * 2.0 + 1.0, xs), xs)

    xs = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(_np(f(True, jnp.asarray(xs))), [0.0, 2.0, 9.0])
    w = xs.copy()
    while w.sum() < 50:
        w = w * 2 + 1
    np.testing.assert_allclose(_np(f(False, jnp.asarray(xs))), w)

    def collatz_all(ns):
        def count(c, n):
            k = cf.while_loop(lambda s: s[0] != 1, lambda s: (jnp.where(s[0] % 2 == 0, s[0] // 2, 3 * s[0] + 1),
                                                              s[1] + 1), (n, 0))[1]
            return c + k, k
        return cf.scan(count, 0, ns)

    ns = np.arange(1, 9, dtype=np.int32)
    expected = [_collatz_steps(int(n)) for n in ns]
    for g in (collatz_all, core.jit(collatz_all)):
        total, ks = g(jnp.asarray(ns))
        np.testing.assert_array_equal(_np(ks), expected)
        assert int(total) == sum(expected)


def test_cond_inside_while_and_scan_inside_scan():
    def f(x):
        def body(c):
            i, v = c
            v = cf.cond(i % 2 == 0, lambda v: v + 1.0, lambda v: v * 3.0, v)
            return i + 1, v
        return cf.while_loop(lambda c: c[0] < 4, body, (0, x))[1]

    def g(m):
        return cf.scan(lambda c, row: (c + cf.scan(lambda a, x: (a + x, a), 0.0, row)[0], c), 0.0, m)

    for h in (f, core.jit(f)):
        assert float(h(jnp.asarray(np.float32(1.0)))) == ((1 + 1) * 3 + 1) * 3
    m = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    total, partial = core.jit(g)(jnp.asarray(m))
    assert float(total) == m.sum()
    np.testing.assert_allclose(_np(partial), [0.0, 6.0, 28.0])


def test_make_jaxpr_shows_control_flow_equations():
    x = jnp.arange(4.0)
    j = core.make_jaxpr(lambda x: cf.cond(x.sum() > 0, lambda x: x * 2.0, lambda x: -x, x))(x)
    text = str(j)
    assert "cond[branches=(" in text and "mul" in text and "neg" in text
    j2 = core.make_jaxpr(lambda x: cf.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, x)))(x)
    assert re.search(r"= while\[cond_jaxpr=\{ lambda ; .*body_jaxpr=\{ lambda ; .*body_nconsts=1\]", str(j2), re.S)
    j3 = core.make_jaxpr(lambda x: cf.scan(lambda c, x: (c + x, c), 0.0, x))(x)
    assert re.search(r"scan\[jaxpr=\{ lambda .* num_consts=0 num_carry=1 length=4 reverse=False unroll=1", str(j3), re.S)
    for jj in (j, j2, j3):
        check_jaxpr(jj.jaxpr)


CONTROL_FLOW_FUNCTIONS = {
    "cond": lambda x: cf.cond(x[0] > 0.5, lambda x: jnp.sin(x), lambda x: x * x, x),
    "switch": lambda x: cf.switch((x[1] * 3).astype(jnp.int32), [jnp.sin, jnp.cos, jnp.exp], x),
    "while": lambda x: cf.while_loop(lambda c: c.sum() < 20.0, lambda c: c * 1.5 + 0.1, x),
    "fori": lambda x: cf.fori_loop(0, 3, lambda i, c: c * x + i, x),
    "scan": lambda x: cf.scan(lambda c, v: (c * 0.9 + v, jnp.tanh(c)), 0.0, x)[1],
    "assoc": lambda x: cf.associative_scan(lax.add, x),
}


@pytest.mark.parametrize("name", sorted(CONTROL_FLOW_FUNCTIONS))
def test_composition_eager_jit_and_jit_of_jit_agree(rng, name):
    f = CONTROL_FLOW_FUNCTIONS[name]
    x = jnp.asarray(rng.uniform(0.1, 1.0, (5,)).astype(np.float32))
    expected = _np(f(x))
    np.testing.assert_allclose(_np(core.jit(f)(x)), expected, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(_np(core.jit(core.jit(f))(x)), expected, rtol=2e-6, atol=2e-6)


# ----- errors -------------------------------------------------------------------------------------

def test_branch_mismatch_errors_show_both_outputs():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"true_fun and false_fun output must have identical types, got "
                                        r"f32\[3\] and f32\[2\]"):
        cf.cond(True, lambda x: x, lambda x: x[:2], x)
    with pytest.raises(TypeError, match=r"true_fun and false_fun output must have identical types, got "
                                        r"\(f32\[3\], f32\[3\]\) and \(f32\[3\], i32\[3\]\)"):
        cf.cond(True, lambda x: (x, x), lambda x: (x, x.astype(jnp.int32)), x)
    with pytest.raises(TypeError, match=r"true_fun and false_fun output must have same type structure, got "
                                        r"\{'a': f32\[3\]\} and \(f32\[3\],\)"):
        cf.cond(True, lambda x: {"a": x}, lambda x: (x,), x)
    with pytest.raises(TypeError, match=r"branch 0 and 2 outputs must have identical types, got f32\[3\] and f32\[\]"):
        cf.switch(1, [lambda x: x, lambda x: x, lambda x: x.sum()], x)


def test_cond_and_switch_argument_errors():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"Pred must be a scalar, got a value of type bool\[3\]"):
        cf.cond(x > 0, lambda x: x, lambda x: x, x)
    with pytest.raises(TypeError, match=r"Pred type must be either boolean or number, got f32"):
        cf.cond(jnp.asarray(np.float32(1.0)), lambda x: x, lambda x: x, x)
    with pytest.raises(TypeError, match=r"Index type must be an integer, got f32\[\]"):
        cf.switch(1.0, [lambda: 1.0, lambda: 2.0])
    with pytest.raises(TypeError, match=r"Branch index must be scalar, got a value of type i32\[2\]"):
        cf.switch(jnp.asarray(np.array([0, 1], np.int32)), [lambda: 1.0, lambda: 2.0])
    with pytest.raises(ValueError, match=r"Empty branch sequence"):
        cf.switch(0, [])


def test_carry_mismatch_errors_show_both_carries():
    with pytest.raises(TypeError, match=r"while_loop body function carry input and carry output must have equal "
                                        r"types .* carry input is \(i32\[\], f32\[3\]\) and the carry output is "
                                        r"\(i32\[\], f32\[1,3\]\)"):
        cf.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1][None]), (jnp.asarray(np.int32(0)), jnp.ones(3)))
    with pytest.raises(TypeError, match=r"scan body function carry input and carry output must have the same pytree "
                                        r"structure.* carry input is \(f32\[\], f32\[\]\) and the carry output is "
                                        r"\[f32\[\], f32\[\]\]"):
        cf.scan(lambda c, x: ([c[0], c[1]], x), (jnp.zeros(()), jnp.zeros(())), jnp.ones(3))
    with pytest.raises(TypeError, match=r"scan body function carry input and carry output must have equal types.*"
                                        r"carry input is i32\[\] and the carry output is f32\[\]"):
        cf.scan(lambda c, x: (c + x, x), jnp.asarray(np.int32(0)), jnp.ones(3))
    with pytest.raises(TypeError, match=r"cond_fun must return a boolean scalar, but got output type\(s\) f32\[\]"):
        cf.while_loop(lambda c: c * 1.0, lambda c: c, 1.0)


def test_scan_length_errors_name_the_leaves():
    with pytest.raises(ValueError, match=re.escape("scan got values with different leading axis sizes: "
                                                   "xs['a'].shape[0]=3, xs['b'].shape[0]=4.")):
        cf.scan(lambda c, x: (c, x), 0.0, {"a": jnp.ones(3), "b": jnp.ones((4, 2))})
    with pytest.raises(ValueError, match=r"scan got `length` argument of 5 which disagrees with leading axis "
                                         r"sizes xs\[0\]\.shape\[0\]=3"):
        cf.scan(lambda c, x: (c, x), 0.0, [jnp.ones(3)], length=5)
    with pytest.raises(ValueError, match=r"scan got no values to scan over and `length` not provided"):
        cf.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(ValueError, match=r"scan got value with no leading axis to scan over: xs of type f32\[\]"):
        cf.scan(lambda c, x: (c, x), 0.0, jnp.ones(()))
    with pytest.raises(TypeError, match=r"scan body output must be a pair \(carry, y\), got tuple of length 3"):
        cf.scan(lambda c, x: (c, x, x), 0.0, jnp.ones(3))
    with pytest.raises(ValueError, match=r"`unroll` must be a `bool` or a positive `int`, got 0"):
        cf.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), unroll=0)


def test_primitive_abstract_eval_checks_operands_against_the_jaxprs():
    closed = core.make_jaxpr(lambda x: cf.cond(True, lambda x: x + 1.0, lambda x: x, x))(jnp.ones(3))
    eqn = closed.eqns[-1]
    assert eqn.primitive is cf.cond_p
    from core.avals import ShapedArray
    with pytest.raises(TypeError, match=r"cond branch 0 expects operands of types \[f32\[3\]\], got \[f32\[4\]\]"):
        cf.cond_p.abstract_eval(ShapedArray((), np.int32), ShapedArray((4,), np.float32), **eqn.params)
    with pytest.raises(TypeError, match=r"cond: the branch index must be an i32\[\] scalar, got bool\[\]"):
        cf.cond_p.abstract_eval(ShapedArray((), np.bool_), ShapedArray((3,), np.float32), **eqn.params)
    while_eqn = core.make_jaxpr(lambda x: cf.while_loop(lambda c: c.sum() < 3.0, lambda c: c + 1.0, x))(jnp.ones(2)).eqns[-1]
    assert while_eqn.primitive is cf.while_p
    with pytest.raises(TypeError, match=r"while cond_jaxpr expects operands of types \[f32\[2\]\], got \[i32\[2\]\]"):
        cf.while_p.abstract_eval(ShapedArray((2,), np.int32), **while_eqn.params)
    scan_eqn = core.make_jaxpr(lambda x: cf.scan(lambda c, x: (c + x, c), 0.0, x))(jnp.ones(3)).eqns[-1]
    with pytest.raises(TypeError, match=r"scan: scanned operands must have leading dimension 3, got f32\[4\]"):
        cf.scan_p.abstract_eval(ShapedArray((), np.float32), ShapedArray((4,), np.float32), **scan_eqn.params)

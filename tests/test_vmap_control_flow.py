"""vmap of the control-flow primitives (cond_p, while_p, scan_p) and of what is built on them
(switch, fori_loop, map, associative_scan), against Python loops of the unbatched call.

Each case runs with the predicate / index, carries, consts and xs batched or not, for batch sizes
10 and 0; the logistic-map seed example checks a long chaotic loop, the data-dependent while loop
checks that finished examples stop while others go on."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax, test_util as tu
from core.lax import control_flow as cf
from core.tree_util import tree_flatten

F32 = np.float32


def _loop(fun, args, in_axes):
    """`fun` per example (axis 0 of the batched args; the unbatched ones whole), outputs stacked.
    Jitted: one executable for every example instead of one eager dispatch per operation."""
    fun = core.jit(fun)
    size = next(np.shape(a)[0] for a, ax in zip(args, in_axes) if ax is not None)
    lanes = [tree_flatten(fun(*[a if ax is None else a[k] for a, ax in zip(args, in_axes)]))[0]
             for k in range(size)]
    return [np.stack([np.asarray(lane[j]) for lane in lanes]) for j in range(len(lanes[0]))]


def check_against_loop(fun, args, in_axes, sizes=(10, 0), atol=None, rtol=None, jit=False):
    """vmap(fun, in_axes) (under jit if `jit`) equals the loop of `fun`, for each batch size (size 0:
    the loop's output types with a leading 0). Batched `args` hold 10 examples on axis 0, moved to
    `in_axes` for vmap."""
    batched = core.vmap(fun, in_axes=in_axes)
    batched = core.jit(batched) if jit else batched
    for size in sizes:
        cut = [a if ax is None else a[:size] for a, ax in zip(args, in_axes)]
        moved = [a if ax is None else np.moveaxis(a, 0, ax) for a, ax in zip(cut, in_axes)]
        got = tree_flatten(batched(*moved))[0]
        if size:
            expected = _loop(fun, cut, in_axes)
        else:
            shapes = tree_flatten(core.eval_shape(fun, *[a if ax is None else a[0]
                                                         for a, ax in zip(args, in_axes)]))[0]
            expected = [np.zeros((0,) + tuple(s.shape), s.dtype) for s in shapes]
        assert len(got) == len(expected)
        for j, (g, e) in enumerate(zip(got, expected)):
            g = np.asarray(g)
            assert g.dtype == e.dtype, (j, g.dtype, e.dtype)
            tu.assert_allclose(g, e, e.dtype, atol=atol, rtol=rtol, err_msg=f"size {size}, output {j}")


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype(F32)


# ----- cond_p (and switch) ---------------------------------------------------------------------------

def _two_way(p, x, y):
    return lax.cond(p, lambda a, b: (a * b + 1.0, a - b), lambda a, b: (jnp.sin(a), b * 2.0), x, y)


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (0, None, None), (None, 0, None), (None, None, 0), (0, 0, None)])
def test_cond_batched_or_unbatched_predicate_and_operands(rng, in_axes):
    p = rng.random(10) < 0.5
    p[:2] = (True, False)  # both branches taken in the batch
    x, y = _rand(rng, 10, 3), _rand(rng, 10, 3)
    args = [a if ax is not None else a[0] for a, ax in zip((p, x, y), in_axes)]
    check_against_loop(_two_way, args, in_axes)


def test_cond_output_batched_in_one_branch_only(rng):
    # the true branch returns the batched operand, the false one a constant and the unbatched one:
    # with an unbatched predicate every branch must still produce the batched type
    x, y = _rand(rng, 10, 2), _rand(rng, 2)
    f = lambda p, x, y: lax.cond(p, lambda a, b: (a, b), lambda a, b: (jnp.ones(2), b + 1.0), x, y)
    for p in (True, False):
        check_against_loop(f, [np.bool_(p), x, y], (None, 0, None))
    # out_axes None for the second output: it stayed unbatched (vmap would refuse otherwise)
    out = core.vmap(f, in_axes=(None, 0, None), out_axes=(0, None))(False, x, y)
    np.testing.assert_array_equal(np.asarray(out[0]), np.ones((10, 2), F32))
    np.testing.assert_allclose(np.asarray(out[1]), y + 1.0, rtol=1e-6)


def test_cond_batched_predicate_picks_per_example(rng):
    x = _rand(rng, 10)
    f = lambda x: lax.cond(x > 0, lambda v: v * 2.0, lambda v: -v, x)
    np.testing.assert_allclose(np.asarray(core.vmap(f)(x)), np.where(x > 0, 2 * x, -x), rtol=1e-6)
    tu.check_vmap(f, [x])
    # predicate batched, operands not: the selected values are broadcast
    g = lambda p, v: lax.cond(p, lambda v: v + 1.0, lambda v: v * 0.0, v)
    check_against_loop(g, [x > 0, _rand(rng, 4)], (0, None))


def test_cond_closing_over_batched_values(rng):
    # values the branches close over are operands of cond_p: batched consts
    x, c = _rand(rng, 10, 3), _rand(rng, 10, 3)

    def f(p, x, c):
        return lax.cond(p, lambda v: v * c, lambda v: v - jnp.sum(c), x)

    check_against_loop(f, [np.bool_(True), x, c], (None, 0, 0))
    check_against_loop(f, [x[:, 0] > 0, x, c], (0, 0, 0))
    check_against_loop(f, [np.bool_(False), x[0], c], (None, None, 0))


def test_switch_batched_index_is_clamped(rng):
    branches = [lambda v: v, lambda v: v * 2.0, lambda v: jnp.cos(v)]
    f = lambda i, x: lax.switch(i, branches, x)
    i = np.array([-3, 0, 1, 2, 5, 1, 0, 2, 7, -1], np.int32)
    x = _rand(rng, 10, 2)
    check_against_loop(f, [i, x], (0, 0))
    check_against_loop(f, [i, x[0]], (0, None))
    check_against_loop(f, [np.int32(2), x], (None, 0))
    # tu.check_vmap moves the batch axis of x to each position
    tu.check_vmap(f, [i, x])


def test_cond_primitive_batched_index_out_of_range(rng):
    # cond_p itself (switch clamps before binding): an out-of-range index runs the last branch
    branches = [lambda v: v, lambda v: v * 2.0, lambda v: jnp.cos(v)]
    f = lambda i, x: cf._bind_cond(i, branches, (x,), [])
    i = np.array([-3, 0, 1, 2, 5, 1, 0, 2, 7, -1], np.int32)
    x = _rand(rng, 10, 2)
    expected = np.stack([x[k] if i[k] == 0 else x[k] * 2 if i[k] == 1 else np.cos(x[k]) for k in range(10)])
    tu.assert_allclose(core.vmap(f)(i, x), expected, F32)
    check_against_loop(f, [i, x], (0, 0))


def test_cond_placement_of_batch_axes(rng):
    tu.check_vmap(_two_way, [rng.random(10) < 0.5, _rand(rng, 10, 3), _rand(rng, 10, 3)])


def test_cond_with_0d_and_size_0_examples(rng):
    f = lambda p, x: lax.cond(p, lambda v: v + 1.0, lambda v: v * 3.0, x)
    check_against_loop(f, [rng.random(10) < 0.5, _rand(rng, 10)], (0, 0))
    check_against_loop(f, [rng.random(10) < 0.5, np.zeros((10, 0, 2), F32)], (0, 0))


def test_jit_of_vmap_of_cond_and_nested_vmap(rng):
    x = _rand(rng, 10, 3)
    f = lambda x: lax.cond(jnp.sum(x) > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
    expected = np.stack([np.asarray(f(r)) for r in x])
    tu.assert_allclose(core.jit(core.vmap(f))(x), expected, F32)
    tu.assert_allclose(core.vmap(core.jit(f))(x), expected, F32)
    g = lambda x: lax.cond(x > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)  # scalar per example
    tu.assert_allclose(core.vmap(core.vmap(g))(x), np.where(x > 0, 2 * x, x - 1), F32)


def test_cond_unbatched_inside_vmap_is_bound_unchanged(rng):
    # no batched operand and no collective: the rule binds cond_p as is
    x, w = _rand(rng, 10), _rand(rng, 3)
    f = lambda x, w: x + jnp.sum(lax.cond(True, lambda v: v * 2.0, lambda v: v, w))
    jaxpr = core.make_jaxpr(core.vmap(f, in_axes=(0, None)))(x, w).jaxpr
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "cond"]
    assert [v.aval.shape for v in eqn.outvars] == [(3,)]  # no batch axis was added
    tu.assert_allclose(core.vmap(f, in_axes=(0, None))(x, w), x + 2 * w.sum(), F32)


def test_programs_using_the_axis_name_are_batched_without_batched_operands():
    # nothing is batched, but the held programs use the vmapped axis: the rules must batch them
    x, w = np.arange(10, dtype=F32), np.ones(3, F32)
    f = lambda x: x + jnp.sum(lax.cond(True, lambda v: v * lax.axis_index("i"), lambda v: v, w))
    tu.assert_allclose(core.vmap(f, axis_name="i")(x), 4 * x, F32)  # x + 3 * index
    g = lambda x: x + lax.scan(lambda c, y: (c + lax.psum(y, "i"), c), 0.0, jnp.ones(3))[0]
    tu.assert_allclose(core.vmap(g, axis_name="i")(x), x + 30, F32)
    h = lambda x: x + lax.while_loop(lambda c: c < lax.psum(1.0, "i"), lambda c: c + 1.0, 0.0)
    tu.assert_allclose(core.vmap(h, axis_name="i")(x), x + 10, F32)


# ----- while_p (and fori_loop with traced bounds) ------------------------------------------------------

def _count_until(x, threshold):
    """Steps of x <- 1.5 x + 0.1 until x > threshold: a data-dependent trip count."""
    return lax.while_loop(lambda s: s[0] <= threshold, lambda s: (s[0] * 1.5 + 0.1, s[1] + 1), (x, 0))


def _count_until_np(x, threshold):
    x, n = F32(x), 0
    while x <= threshold:
        x, n = F32(x * F32(1.5) + F32(0.1)), n + 1
    return x, n


def test_while_batched_data_dependent_trip_count(rng):
    x = rng.uniform(0.0, 5.0, 10).astype(F32)
    x[0] = 20.0  # already done: zero iterations while the others go on
    xs, ns = core.vmap(_count_until, in_axes=(0, None))(x, F32(10.0))
    exp = [_count_until_np(v, F32(10.0)) for v in x]
    np.testing.assert_array_equal(np.asarray(ns), [n for _, n in exp])
    assert len(set(int(n) for n in np.asarray(ns))) > 2  # the trip counts really differ
    tu.assert_allclose(xs, np.array([v for v, _ in exp]), F32)
    check_against_loop(_count_until, [x, F32(10.0)], (0, None))
    # the threshold (a const of the cond program) batched too, or alone
    thr = rng.uniform(1.0, 30.0, 10).astype(F32)
    check_against_loop(_count_until, [x, thr], (0, 0))
    check_against_loop(_count_until, [x[3], thr], (None, 0))
    # one loop for the batch: it runs while any example goes on, finished examples are held
    body = core.make_jaxpr(core.vmap(_count_until, in_axes=(0, None)))(x, F32(10.0)).jaxpr.eqns[-1].params
    assert "reduce_or" in str(body["cond_jaxpr"]) and "select_n" in str(body["body_jaxpr"])


def test_while_unbatched_predicate_batched_carry(rng):
    x = _rand(rng, 10, 3)
    f = lambda x: lax.while_loop(lambda s: s[0] < 5, lambda s: (s[0] + 1, s[1] * 1.1 + 0.5), (0, x))[1]
    check_against_loop(f, [x], (0,))
    tu.check_vmap(f, [x])


def test_while_carry_becomes_batched_through_body_const(rng):
    # acc starts unbatched; the body adds a batched const, so the fixpoint batches acc; the
    # counter stays unbatched (the predicate too)
    c = _rand(rng, 10, 2)

    def f(c):
        return lax.while_loop(lambda s: s[0] < 4, lambda s: (s[0] + 1, s[1] + c, s[2] * 2.0),
                              (0, jnp.zeros(2), 1.0))

    check_against_loop(f, [c], (0,))
    i, acc, y = core.vmap(f, out_axes=(None, 0, None))(c)  # unbatched carries stay unbatched
    tu.assert_allclose(acc, 4 * c, F32)


def test_while_fori_loop_with_batched_bounds(rng):
    # traced bounds make fori_loop a while loop; batched upper bound: a batched predicate
    n = np.array([0, 1, 2, 3, 5, 8, 0, 4, 6, 7], np.int32)
    x = _rand(rng, 10)
    f = lambda lo, hi, x: lax.fori_loop(lo, hi, lambda i, v: v * 0.5 + i, x)
    check_against_loop(f, [np.int32(1), n, x], (None, 0, 0))
    check_against_loop(f, [np.int32(1), n, x[0]], (None, 0, None))
    check_against_loop(f, [n // 2, np.int32(6), x], (0, None, None))


def test_while_placement_of_batch_axes(rng):
    f = lambda x, t: lax.while_loop(lambda v: jnp.max(v) < t, lambda v: v * 2.0 + 0.1, x)
    tu.check_vmap(f, [rng.uniform(0.1, 1.0, (10, 3)).astype(F32), rng.uniform(1.0, 50.0, 10).astype(F32)])


def test_jit_of_vmap_of_while(rng):
    x = rng.uniform(0.0, 5.0, 10).astype(F32)
    got = core.jit(core.vmap(lambda x: _count_until(x, 10.0)[1]))(x)
    np.testing.assert_array_equal(np.asarray(got), [_count_until_np(v, F32(10.0))[1] for v in x])


# ----- scan_p (and fori_loop with static bounds, map, associative_scan) -------------------------------

def _scan_fun(c, init, xs, reverse=False, unroll=1):
    def body(carry, x):
        h, k = carry
        h = jnp.tanh(h * c + x)
        return (h, k + 1.0), (h * 2.0, k)
    return lax.scan(body, init, xs, reverse=reverse, unroll=unroll)


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0), (0, 0, 0), (None, None, 2),
                                     (1, None, 1)])
def test_scan_batched_consts_carry_xs(rng, in_axes):
    # xs batched at 0 must move behind the scanned axis; at 1 or 2 it stays where it is
    c, h0, xs = _rand(rng, 10, 3), _rand(rng, 10, 3), _rand(rng, 10, 4, 3)
    args = [a if ax is not None else a[0] for a, ax in zip((c, h0, xs), in_axes)]
    check_against_loop(lambda c, h, xs: _scan_fun(c, (h, F32(0.0)), xs), args, in_axes)


def test_scan_reverse_unroll_and_placements(rng):
    f = lambda c, h, xs: _scan_fun(c, (h, F32(0.0)), xs, reverse=True, unroll=2)
    args = [_rand(rng, 10, 2), _rand(rng, 10, 2), _rand(rng, 10, 5, 2)]
    for in_axes in [(1, 1, None), (0, 1, 2)]:
        check_against_loop(f, [a if ax is not None else a[0] for a, ax in zip(args, in_axes)], in_axes)


def test_scan_0d_examples_length_0_and_no_xs(rng):
    x = _rand(rng, 10)
    f = lambda x: lax.scan(lambda c, _: (c * 0.5 + 1.0, c), x, None, length=6)
    check_against_loop(f, [x], (0,))
    g = lambda x, xs: lax.scan(lambda c, y: (c + y, c * y), x, xs)
    check_against_loop(g, [x, np.zeros((10, 0), F32)], (0, 0))  # a zero-length scan
    check_against_loop(g, [x, _rand(rng, 10, 3)], (None, 0))


def test_scan_ys_unbatched_while_carry_batched(rng):
    x = _rand(rng, 10, 2)
    f = lambda x: lax.scan(lambda c, y: (c + y, y * 2.0), x, jnp.arange(3.0))
    carry, ys = core.vmap(f, out_axes=(0, None))(x)  # None: refused if ys came out batched
    tu.assert_allclose(ys, 2 * np.arange(3.0), F32)
    check_against_loop(f, [x], (0,))


def test_logistic_map_seed_example():
    """The issue's example: x <- a x (1 - x), 100 steps of fori_loop, vmapped over 600 values of a."""
    a = np.linspace(2.5, 4.0, 600).astype(F32)

    def orbit(a):
        return lax.fori_loop(0, 100, lambda i, x: a * x * (1.0 - x), F32(0.5))

    got = np.asarray(core.vmap(orbit)(a))
    assert got.shape == (600,) and got.dtype == F32
    x = np.full(600, 0.5)
    for _ in range(100):
        x = a.astype(np.float64) * x * (1 - x)
    stable = a <= 3.5  # a fixed point or a short cycle: float32 and float64 orbits agree
    np.testing.assert_allclose(got[stable], x[stable], atol=2e-3)
    assert np.all((got >= 0) & (got <= 1))  # chaotic a: only the orbit's interval is comparable
    # the same float32 computation one example at a time, exactly (jit: one executable for all)
    single = core.jit(orbit)
    idx = np.arange(0, 600, 37)
    np.testing.assert_array_equal(got[idx], [np.asarray(single(v)) for v in a[idx]])
    tu.assert_allclose(core.jit(core.vmap(orbit))(a), got, F32)


def test_fori_loop_static_bounds_map_and_associative_scan_under_vmap(rng):
    x = _rand(rng, 10, 3)
    check_against_loop(lambda x: lax.fori_loop(0, 4, lambda i, v: v * 0.5 + i, x), [x], (0,))
    check_against_loop(lambda x: lax.map(lambda r: r * jnp.sum(r), x), [_rand(rng, 10, 4, 3)], (0,))
    # these two are many small operations: batched under jit (eager, each would compile alone)
    check_against_loop(lambda x: lax.map(lambda r: r + 1.0, x, batch_size=2), [_rand(rng, 10, 5)], (1,), jit=True)
    check_against_loop(lambda x: lax.associative_scan(lax.mul, x, reverse=True, axis=1),
                       [_rand(rng, 10, 2, 5)], (2,), jit=True)


def test_grad_of_vmap_of_scan_and_vmap_of_grad(rng):
    xs, c = _rand(rng, 10, 4), _rand(rng, 10)

    def f(c, xs):
        carry, ys = lax.scan(lambda h, x: (jnp.tanh(h * c + x), h * x), 0.3, xs)
        return carry + jnp.sum(ys)

    # vmap of grad, batched in both arguments or in one
    g = core.grad(f, argnums=(0, 1))
    check_against_loop(g, [c, xs], (0, 0), atol=1e-5)
    check_against_loop(g, [F32(0.7), xs], (None, 0), atol=1e-5)
    # grad of vmap: the gradient of the sum of per-example values is the per-example gradient
    total = lambda c, xs: jnp.sum(core.vmap(f)(c, xs))
    gc, gxs = core.grad(total, argnums=(0, 1))(c, xs)
    loop = _loop(g, [c, xs], (0, 0))
    tu.assert_allclose(gc, loop[0], F32, atol=1e-5)
    tu.assert_allclose(gxs, loop[1], F32, atol=1e-5)
    # and a finite difference of the batched program in float64-free form: perturb one example
    eps = 1e-2
    d = np.zeros_like(c)
    d[3] = eps
    fd = (float(total(c + d, xs)) - float(total(c - d, xs))) / (2 * eps)
    assert abs(fd - float(np.asarray(gc)[3])) < 2e-2


def test_vmap_of_grad_of_cond_and_while_jvp(rng):
    x = _rand(rng, 10)
    h = core.grad(lambda x: lax.cond(x > 0, lambda v: v ** 3, lambda v: jnp.sin(v), x))
    tu.assert_allclose(core.vmap(h)(x), np.where(x > 0, 3 * x.astype(np.float64) ** 2, np.cos(x)), F32)
    # forward mode through a batched-predicate while loop
    w = lambda x: lax.while_loop(lambda v: v < 10.0, lambda v: v * 1.7, x)
    xp = rng.uniform(0.5, 4.0, 10).astype(F32)
    _, tangents = core.vmap(lambda x: core.jvp(w, (x,), (F32(1.0),)))(xp)
    _, expected = _loop(lambda x: core.jvp(w, (x,), (F32(1.0),)), [xp], (0,))
    tu.assert_allclose(tangents, expected, F32)

"""vmap of the primitives that hold programs or call back into Python, against loops over examples.

Primitives covered (named for the registry test): jit_p, remat_p, name_p, custom_jvp_call_p,
custom_vjp_call_p, custom_lin_p, debug_callback_p. The custom rules below deliberately differ from
the true derivative (a jvp of 2 * t for sin, a bwd scaling by 3 and 5), so a gradient that equals
the rule's value proves the rule was used, in both orders of vmap and differentiation.
"""
from functools import partial

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import grad, jit, vmap
from core import test_util as tu

F32 = np.dtype(np.float32)


def _f32(rng, shape):
    return rng.standard_normal(shape).astype(F32)


def _top_level_prims(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


# ----- jit ----------------------------------------------------------------------------------------

def _body(x, y):
    return jnp.sin(x) * y + jnp.sum(x)


def test_vmap_of_jit_matches_loop(rng):
    # jit_p: every placement of the batch axis on each operand, batch sizes 10 and 0
    tu.check_vmap(jit(_body), [_f32(rng, (10, 3)), _f32(rng, (10, 3))])


def test_vmap_of_jit_is_one_compiled_call(rng):
    xs = _f32(rng, (4, 3))
    closed = core.make_jaxpr(vmap(jit(_body), in_axes=(1, None)))(xs, xs[:, 0])
    prims = _top_level_prims(closed)
    assert prims.count("jit") == 1, closed
    assert "sin" not in prims  # the work is inside the batched program, not next to it
    inner = next(e for e in closed.jaxpr.eqns if e.primitive.name == "jit").params["jaxpr"]
    assert "sin" in _top_level_prims(inner)


def test_jit_of_vmap_matches_loop(rng):
    xs, ys = _f32(rng, (5, 3)), _f32(rng, (5, 3))
    got = jit(vmap(_body))(xs, ys)
    tu.assert_allclose(got, np.stack([np.asarray(_body(x, y)) for x, y in zip(xs, ys)]), F32)


def test_vmap_of_nested_jit_and_vmap_of_vmap(rng):
    xs = _f32(rng, (2, 3, 2, 5))
    f = jit(jit(lambda x: jnp.cos(x) @ x.T))
    got = vmap(vmap(f, in_axes=2))(xs)  # example (i, j) is xs[i, :, :, j]
    expected = np.stack([np.stack([np.cos(xs[i, :, :, j]) @ xs[i, :, :, j].T for j in range(5)])
                         for i in range(2)])
    tu.assert_allclose(got, expected, F32, atol=1e-5)
    closed = core.make_jaxpr(vmap(f))(xs[0, :, :, :2].transpose(2, 0, 1))
    assert _top_level_prims(closed) == ["jit"]


def test_grad_of_vmap_of_jit(rng):
    xs, w = _f32(rng, (6, 3)), _f32(rng, (3,))
    got = grad(lambda w: jnp.sum(vmap(jit(lambda x, w: jnp.tanh(x * w)), in_axes=(0, None))(xs, w)))(w)
    tu.assert_allclose(got, np.sum(xs / np.cosh(xs * w) ** 2, axis=0), F32, atol=1e-5)


def test_axis_name_with_jit_inside_and_no_collective(rng):
    xs = _f32(rng, (4, 3))
    got = vmap(lambda x: jit(lambda y: y * 2.0)(x), axis_name="i")(xs)
    tu.assert_allclose(got, xs * 2.0, F32)
    # no operand of the inner jit is batched here: it is applied once, unbatched, and broadcast
    got = vmap(lambda x: x + jit(jnp.sin)(xs[0]), axis_name="i")(xs)
    tu.assert_allclose(got, xs + np.sin(xs[0]), F32)


# ----- remat and name ---------------------------------------------------------------------------------

def _two_sines(x):
    return jnp.sin(jnp.sin(x))


def test_vmap_of_checkpoint_matches_loop(rng):
    # remat_p
    f = core.checkpoint(lambda x, y: _two_sines(x) * y)
    tu.check_vmap(f, [_f32(rng, (10, 3)), _f32(rng, (10, 3))])


def test_grad_and_vmap_of_checkpoint(rng):
    xs = _f32(rng, (5, 3))
    f = core.checkpoint(_two_sines)
    expected = np.cos(np.sin(xs)) * np.cos(xs)
    tu.assert_allclose(grad(lambda x: jnp.sum(vmap(f)(x)))(xs), expected, F32)
    tu.assert_allclose(vmap(grad(lambda x: jnp.sum(f(x))))(xs), expected, F32)
    closed = core.make_jaxpr(grad(lambda x: jnp.sum(vmap(f)(x))))(xs)
    assert "remat" in _top_level_prims(closed)  # still checkpointed after batching


def test_checkpoint_name_under_vmap(rng):
    # name_p: vectorized, the name kept on the batched value
    xs = _f32(rng, (10, 3))
    tu.check_vmap(lambda x: core.checkpoint_name(jnp.sin(x), "h"), [xs])
    closed = core.make_jaxpr(vmap(lambda x: core.checkpoint_name(x * 2.0, "h")))(xs)
    eqn = next(e for e in closed.jaxpr.eqns if e.primitive.name == "name")
    assert eqn.params["name"] == "h" and eqn.outvars[0].aval.shape == (10, 3)
    policy = core.checkpoint_policies.save_only_these_names("h")
    f = core.checkpoint(lambda x: jnp.sin(core.checkpoint_name(jnp.sin(x), "h")), policy=policy)
    got = grad(lambda x: jnp.sum(vmap(f)(x)))(xs)
    tu.assert_allclose(got, np.cos(np.sin(xs)) * np.cos(xs), F32)


# ----- custom_jvp ---------------------------------------------------------------------------------

@core.custom_jvp
def sin2(x):
    return jnp.sin(x)


@sin2.defjvp
def _sin2_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return sin2(x), 2.0 * t  # not cos(x) * t: tells the rule was used


@core.custom_jvp
def times_int(x, n):
    return x * n


@times_int.defjvp
def _times_int_jvp(primals, tangents):
    x, n = primals
    return times_int(x, n), 7.0 * tangents[0]


@partial(core.custom_jvp, nondiff_argnums=(0,))
def apply_fn(fn, x):
    return fn(x)


@apply_fn.defjvp
def _apply_fn_jvp(fn, primals, tangents):
    return apply_fn(fn, primals[0]), 3.0 * tangents[0]


def test_custom_jvp_forward_values_match_loop(rng):
    # custom_jvp_call_p
    tu.check_vmap(lambda x, y: sin2(x) * y, [_f32(rng, (10, 3)), _f32(rng, (10, 3))])


def test_custom_jvp_rule_used_both_orders(rng):
    xs = _f32(rng, (5, 3))
    twos = np.full_like(xs, 2.0)
    tu.assert_allclose(grad(lambda x: jnp.sum(vmap(sin2)(x)))(xs), twos, F32)
    tu.assert_allclose(vmap(grad(lambda x: jnp.sum(sin2(x))))(xs), twos, F32)
    tu.assert_allclose(jit(grad(lambda x: jnp.sum(vmap(sin2)(x))))(xs), twos, F32)
    tu.assert_allclose(grad(lambda x: jnp.sum(vmap(jit(sin2))(x)))(xs), twos, F32)
    tu.assert_allclose(grad(lambda x: jnp.sum(vmap(vmap(sin2))(x)))(xs), twos, F32)
    out, t = core.jvp(vmap(sin2, in_axes=1), (xs,), (np.ones_like(xs),))
    tu.assert_allclose(out, np.sin(xs).T, F32)
    tu.assert_allclose(t, twos.T, F32)


def test_custom_jvp_integer_and_unbatched_inputs(rng):
    xs, ns = _f32(rng, (4,)), np.arange(4, dtype=np.int32)
    tu.assert_allclose(vmap(times_int)(xs, ns), xs * ns, F32)
    tu.assert_allclose(grad(lambda x: jnp.sum(vmap(times_int)(x, ns)))(xs), np.full(4, 7.0, F32), F32)
    # the float input unbatched: its gradient sums the rule's tangent over the examples
    got = grad(lambda x: jnp.sum(vmap(times_int, in_axes=(None, 0))(x, ns)))(xs[0])
    tu.assert_allclose(got, np.float32(28.0), F32)


def test_custom_jvp_nondiff_argnums(rng):
    xs = _f32(rng, (2, 3))
    f = partial(apply_fn, jnp.sin)
    tu.assert_allclose(vmap(f)(xs), np.sin(xs), F32)
    threes = np.full_like(xs, 3.0)
    tu.assert_allclose(grad(lambda x: jnp.sum(vmap(vmap(f))(x)))(xs), threes, F32)
    tu.assert_allclose(vmap(vmap(grad(f)))(xs), threes, F32)


def test_library_custom_jvp_under_vmap(rng):
    # jnp.logaddexp is a custom_jvp whose rule calls the function again
    xs, ys = _f32(rng, (10, 3)), _f32(rng, (10, 3))
    # eagerly the batched body runs op by op (as an eager custom_jvp call does): two placements suffice
    tu.check_vmap(jnp.logaddexp, [xs, ys], cases=[((0, 0), 10), ((1, None), 10)])
    got = grad(lambda x: jnp.sum(vmap(jnp.logaddexp)(x, ys)))(xs)
    tu.assert_allclose(got, 1.0 / (1.0 + np.exp(ys - xs)), F32, atol=1e-5)


# ----- custom_vjp ---------------------------------------------------------------------------------

@core.custom_vjp
def scaled_mul(x, w):
    return x * w


def _scaled_mul_fwd(x, w):
    return x * w, (x, w)


def _scaled_mul_bwd(res, ct):
    x, w = res
    return 3.0 * ct * w, 5.0 * ct * x  # true: ct * w, ct * x


scaled_mul.defvjp(_scaled_mul_fwd, _scaled_mul_bwd)


@partial(core.custom_vjp, nondiff_argnums=(1,))
def clip_grad(x, bound):
    return x


clip_grad.defvjp(lambda x, bound: (x, None), lambda bound, _, ct: (jnp.clip(ct, -bound, bound),))


def test_custom_vjp_forward_values_match_loop(rng):
    tu.check_vmap(scaled_mul, [_f32(rng, (10, 3)), _f32(rng, (10, 3))])


def test_custom_vjp_bwd_used_both_orders(rng):
    xs, ws = _f32(rng, (5, 3)), _f32(rng, (5, 3))
    both = (0, 1)
    loss = lambda x, w: jnp.sum(vmap(scaled_mul)(x, w))  # noqa: E731
    for gx, gw in [grad(loss, argnums=both)(xs, ws), jit(grad(loss, argnums=both))(xs, ws),
                   vmap(grad(lambda x, w: jnp.sum(scaled_mul(x, w)), argnums=both))(xs, ws)]:
        tu.assert_allclose(gx, 3.0 * ws, F32)
        tu.assert_allclose(gw, 5.0 * xs, F32)


def test_custom_vjp_unbatched_input_gets_summed_cotangent(rng):
    xs, w = _f32(rng, (5, 3)), _f32(rng, (3,))
    gx, gw = grad(lambda x, w: jnp.sum(vmap(scaled_mul, in_axes=(0, None))(x, w)), argnums=(0, 1))(xs, w)
    tu.assert_allclose(gx, 3.0 * np.broadcast_to(w, xs.shape), F32)
    tu.assert_allclose(gw, 5.0 * xs.sum(0), F32, atol=1e-5)
    # in_axes 1 on x: the cotangent comes back with the batch axis where x had it
    gx = grad(lambda x: jnp.sum(vmap(scaled_mul, in_axes=(1, None))(x, w[:1])))(xs[:, :1].T.copy())
    tu.assert_allclose(gx, np.full((1, 5), 3.0 * w[0], F32), F32)


def test_custom_vjp_nondiff_argnums_and_nested_vmap(rng):
    xs = 10.0 * _f32(rng, (2, 3))
    loss = lambda x: jnp.sum(x * clip_grad(x, 0.5))  # noqa: E731
    # d/dx (x * x) = x (direct) + clip(x, -0.5, 0.5) (through the custom bwd)
    expected = xs + np.clip(xs, -0.5, 0.5)
    tu.assert_allclose(grad(lambda x: jnp.sum(vmap(vmap(loss))(x)))(xs), expected, F32)
    tu.assert_allclose(vmap(vmap(grad(loss)))(xs), expected, F32)


def test_custom_lin_batched_then_transposed():
    # custom_lin_p: vmap of a linearized custom_vjp function, transposed afterwards, calls the bwd
    # (4 * cos) per example
    @core.custom_vjp
    def s(x):
        return jnp.sin(x)
    s.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, ct: (4.0 * ct * c,))
    x0 = np.float32(0.7)
    _, f_lin = core.linearize(s, x0)
    ts = np.arange(4, dtype=F32)
    closed = core.make_jaxpr(vmap(f_lin))(ts)
    assert "custom_lin" in _top_level_prims(closed)
    (ct,) = core.linear_transpose(vmap(f_lin), ts)(np.arange(1.0, 5.0, dtype=F32))
    tu.assert_allclose(ct, 4.0 * np.cos(x0) * np.arange(1.0, 5.0, dtype=F32), F32)


# ----- closures ----------------------------------------------------------------------------------

@partial(core.custom_vjp, nondiff_argnums=(0,))
def _call_converted(fn, x, *consts):
    return fn(x, *consts)


def _call_converted_fwd(fn, x, *consts):
    return fn(x, *consts), (x, consts)


def _call_converted_bwd(fn, res, ct):
    x, consts = res
    _, pullback = core.vjp(fn, x, *consts)
    cts = pullback(ct)
    return (2.0 * cts[0], *cts[1:])  # the x cotangent doubled: tells the rule was used


_call_converted.defvjp(_call_converted_fwd, _call_converted_bwd)


def _closes_over_w(x, w):
    fn = lambda y: jnp.sin(y * w)  # noqa: E731
    converted, consts = core.closure_convert(fn, x)
    return _call_converted(converted, x, *consts)


def test_closure_convert_under_vmap(rng):
    xs, ws = _f32(rng, (4,)), _f32(rng, (4,))
    tu.assert_allclose(vmap(_closes_over_w)(xs, ws), np.sin(xs * ws), F32)
    dx, dw = 2.0 * np.cos(xs * ws) * ws, np.cos(xs * ws) * xs
    for gx, gw in [vmap(grad(_closes_over_w, argnums=(0, 1)))(xs, ws),
                   grad(lambda x, w: jnp.sum(vmap(_closes_over_w)(x, w)), argnums=(0, 1))(xs, ws)]:
        tu.assert_allclose(gx, dx, F32)
        tu.assert_allclose(gw, dw, F32)
    gw = grad(lambda w: jnp.sum(vmap(_closes_over_w, in_axes=(0, None))(xs, w)))(ws[0])
    tu.assert_allclose(gw, np.sum(np.cos(xs * ws[0]) * xs), F32, atol=1e-5)


def test_batched_closure_in_custom_rule_is_a_clear_error(rng):
    xs, ws = _f32(rng, (4,)), _f32(rng, (4,))

    def closes(x, w):
        @core.custom_jvp
        def q(y):
            return y * w
        q.defjvp(lambda p, t: (q(p[0]), t[0] * w))
        return q(x)

    tu.assert_allclose(vmap(closes)(xs, ws), xs * ws, F32)
    tu.assert_allclose(vmap(grad(closes))(xs, ws), ws, F32)  # the closure is outside grad: fine
    with pytest.raises(TypeError, match=r"custom_jvp function q closes over a value that vmap batches.*"
                                        r"closure_convert"):
        grad(lambda x: jnp.sum(vmap(closes)(x, ws)))(xs)


# ----- debug callbacks ------------------------------------------------------------------------------

def test_debug_print_once_per_example(capsys):
    # debug_callback_p
    def f(x):
        core.debug.print("x={}", x)
        return x * 2.0

    xs = np.arange(6, dtype=F32).reshape(3, 2)
    for g in (vmap(f), jit(vmap(f)), vmap(jit(f))):
        capsys.readouterr()
        g(xs)
        assert capsys.readouterr().out.splitlines() == ["x=[0. 1.]", "x=[2. 3.]", "x=[4. 5.]"]


def test_debug_callback_nested_vmap_and_unbatched_args():
    seen = []
    w = np.float32(7.0)

    def f(x):
        core.debug.callback(lambda a, b: seen.append((float(a), float(b))), x, w)
        return x

    xs = np.arange(6, dtype=F32).reshape(2, 3)
    vmap(vmap(f), in_axes=1)(xs)  # outer examples: the columns; inner: their entries
    assert seen == [(0.0, 7.0), (3.0, 7.0), (1.0, 7.0), (4.0, 7.0), (2.0, 7.0), (5.0, 7.0)]
    seen.clear()
    jit(vmap(vmap(f)))(xs)
    assert [a for a, _ in seen] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    seen.clear()
    vmap(f)(np.zeros((0, 3), F32))
    assert seen == []

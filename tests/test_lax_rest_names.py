"""The last of jax.lax's public names (issue 16, item 3): tokens (`create_token`, `after_all`) through
jit, vmap, grad and pytrees; the collectives `pbroadcast`, `pcast` and `ragged_all_to_all` under
vmap and pmap against NumPy loops over the examples; `psend`/`precv` refusing with the fix;
`stage`, `dce_sink`, `shape_as_value`; the block-scaled `scaled_dot` against NumPy in float64;
`bessel_i0e` as one primitive with SciPy's derivative; and one JAX-style program using them."""
import numpy as np
import pytest
import scipy.special as sp

import core
import core.numpy as jnp
from core import lax
from core.tokens import Token, abstract_token

N_DEVICES = core.local_device_count()
needs2 = pytest.mark.skipif(N_DEVICES < 2, reason="needs 2 CPU devices")


# ----- tokens ---------------------------------------------------------------------------------------

def test_tokens_eagerly_and_their_errors():
    t = lax.create_token()
    assert type(t) is Token and t.aval == abstract_token
    assert type(lax.after_all(t, lax.create_token())) is Token
    assert type(lax.after_all()) is Token and type(lax.create_token(3.0)) is Token  # argument ignored, as JAX
    with pytest.raises(TypeError, match=r"after_all: every argument must be a token .* argument 1 is f32\[2\]"):
        lax.after_all(t, jnp.ones(2))
    assert core.tree_util.tree_leaves((t, [1.0])) == [t, 1.0]  # a pytree leaf


def test_tokens_through_jit_are_made_inside_the_program():
    t = lax.create_token()
    assert str(core.make_jaxpr(lambda x: (lax.after_all(lax.create_token(), x), 1.0))(t)) == (
        "{ lambda ; a:Tok. let\n    b:Tok = create_token\n    c:Tok = after_all b a\n  in (c, 1.0:f32[]) }")
    f = core.jit(lambda tok, x: (lax.after_all(tok, tok), x * 2.0))
    for x in (1.5, 2.5):  # the second call takes the cached program
        tok, y = f(t, x)
        assert type(tok) is Token and float(y) == 2 * x
    text = f.lower(t, 1.0).as_text()
    assert "!stablehlo.token" in text and '"stablehlo.after_all"' in text
    tok, y = f.lower(t, 1.0).compile()(t, 4.0)
    assert type(tok) is Token and float(y) == 8.0
    # a closed-over token, and a token as the only result
    g = core.jit(lambda x: {"y": x + 1, "t": lax.after_all(t)})
    out = g(jnp.arange(3.0))
    assert type(out["t"]) is Token
    np.testing.assert_array_equal(out["y"], [1.0, 2.0, 3.0])
    assert type(core.jit(lambda: lax.create_token())()) is Token


def test_tokens_are_refused_by_loops_and_conditionals_with_a_clear_error():
    """The loops and conditionals do not carry tokens: a token as an operand, a carry or a result
    is a TypeError that says what to do, eagerly and under jit; a token made and used inside a
    body is fine (the scan still sums 0 + 1 + 2)."""
    xs = jnp.arange(3.0)
    carried = lambda c, x: ((lax.after_all(c[0]), c[1] + x), x)
    cases = [lambda: lax.scan(carried, (lax.create_token(), 0.0), xs),
             lambda: core.jit(lambda v: lax.scan(carried, (lax.create_token(), 0.0), v))(xs),
             lambda: lax.fori_loop(0, 3, lambda i, c: (lax.after_all(c[0]), c[1] + i), (lax.create_token(), 0)),
             lambda: lax.cond(True, lambda t: lax.after_all(t), lambda t: t, lax.create_token()),
             lambda: lax.scan(lambda c, x: (c, lax.create_token()), 0.0, xs)]
    for case in cases:
        with pytest.raises(TypeError, match="a token .* cannot be an operand, carry or result of lax.cond"):
            case()

    def inside(c, x):
        lax.after_all(lax.create_token())
        return c + x, x
    assert float(lax.scan(inside, 0.0, xs)[0]) == 3.0
    assert float(core.jit(lambda v: lax.scan(inside, 0.0, v)[0])(xs)) == 3.0


def test_tokens_under_grad_and_vmap():
    t = lax.create_token()
    f = core.jit(lambda x, tok: (x ** 2, lax.after_all(tok)))
    assert float(core.grad(lambda x: f(x, t)[0])(3.0)) == 6.0
    y, tok = core.vmap(f, in_axes=(0, None))(jnp.array([1.0, 2.0]), t)
    assert type(tok) is Token
    np.testing.assert_array_equal(y, [1.0, 4.0])
    _, tok = core.vmap(lambda x: (x, lax.create_token()))(jnp.ones(2))
    assert type(tok) is Token
    with pytest.raises(ValueError, match="map its argument tok along axis 0, but it is a token"):
        core.vmap(lambda x, tok: x)(jnp.ones(2), t)


# ----- collectives ----------------------------------------------------------------------------------

def _ragged_oracle(operand, output, input_offsets, send_sizes, output_offsets):
    """jax.lax.ragged_all_to_all's documented semantics, as a loop over senders and slices."""
    n, k = input_offsets.shape
    per = k // n
    result = output.copy()
    for s in range(n):
        for i in range(k):
            dst, off, size, at = i // per, input_offsets[s, i], send_sizes[s, i], output_offsets[s, i]
            result[dst, at:at + size] = operand[s, off:off + size]
    return result


def _ragged_case(rng, n, rows, out_rows, per):
    """Random slices that fit: every sender cuts its rows into n*per pieces; each receiver lays the
    pieces it gets from senders 0..n-1 one after the other."""
    k = n * per
    sizes = rng.integers(0, 3, (n, k)).astype(np.int32)
    offsets = np.zeros((n, k), np.int32)
    for s in range(n):
        offsets[s] = np.concatenate([[0], np.cumsum(sizes[s])[:-1]])
    assert offsets[:, -1].max() + sizes[:, -1].max() <= rows
    out_off = np.zeros((n, k), np.int32)
    for dst in range(n):
        pos = 0
        for s in range(n):
            for i in range(dst * per, dst * per + per):
                out_off[s, i] = pos
                pos += sizes[s, i]
        assert pos <= out_rows
    recv = np.stack([np.concatenate([sizes[s, d * per:(d + 1) * per] for s in range(n)]) for d in range(n)])
    operand = rng.standard_normal((n, rows, 2)).astype(np.float32)
    output = rng.standard_normal((n, out_rows, 2)).astype(np.float32)
    return operand, output, offsets, sizes, out_off, recv


def _ragged(*args):
    return lax.ragged_all_to_all(*args, axis_name="i")


def test_ragged_all_to_all_matches_the_documented_example_and_a_loop(rng):
    f = core.jit(core.vmap(_ragged, axis_name="i"))  # one compile per shape (eagerly, one per operation)
    doc = f(
        jnp.array([[1., 2, 2], [3, 4, 0]]), jnp.zeros((2, 4)), jnp.array([[0, 1], [0, 1]]),
        jnp.array([[1, 2], [1, 1]]), jnp.array([[0, 0], [1, 2]]), jnp.array([[1, 1], [2, 1]]))
    np.testing.assert_array_equal(doc, [[1, 3, 0, 0], [2, 2, 4, 0]])
    args = _ragged_case(rng, 3, 12, 14, 2)
    y = f(*args)
    np.testing.assert_array_equal(y, _ragged_oracle(*args[:5]))
    # linear in (operand, output): <ct, f(op, out)> = <vjp_op, op> + <vjp_out, out>, exactly up to rounding
    ct = rng.standard_normal(y.shape).astype(np.float32)
    g_op, g_out = core.jit(lambda a, b, c: core.vjp(lambda a, b: f(a, b, *args[2:]), a, b)[1](c))(
        args[0], args[1], ct)
    lhs = float(np.sum(ct.astype(np.float64) * np.asarray(y)))
    rhs = float(np.sum(np.asarray(g_op, np.float64) * args[0]) + np.sum(np.asarray(g_out, np.float64) * args[1]))
    assert abs(lhs - rhs) < 1e-4 * (1 + abs(lhs))


@needs2
def test_collectives_under_pmap_match_numpy_loops(rng):
    args = _ragged_case(rng, 2, 6, 8, 1)
    np.testing.assert_array_equal(core.pmap(_ragged, axis_name="i")(*args), _ragged_oracle(*args[:5]))
    x = rng.standard_normal((2, 3)).astype(np.float32)
    out = core.pmap(lambda v: (lax.pbroadcast(v, "i", 1), lax.pcast(v, "i", to="varying"),
                               lax.pbroadcast(v > 0, "i", 0)), axis_name="i")(x)
    np.testing.assert_array_equal(out[0], np.stack([x[1], x[1]]))
    np.testing.assert_array_equal(out[1], x)
    np.testing.assert_array_equal(out[2], np.stack([x[0] > 0, x[0] > 0]))


def test_pbroadcast_and_pcast_under_vmap_with_gradient(rng):
    x = rng.standard_normal((4, 3)).astype(np.float32)
    out = core.vmap(lambda v: lax.pbroadcast({"a": v, "b": v[0]}, "i", 2), axis_name="i")(x)
    np.testing.assert_array_equal(out["a"], np.broadcast_to(x[2], (4, 3)))
    np.testing.assert_array_equal(out["b"], np.full(4, x[2, 0]))
    # d/dx sum(w * pbroadcast(x)) puts sum over examples of w on the source row only
    w = rng.standard_normal((4, 3)).astype(np.float32)
    g = core.grad(lambda v: jnp.sum(w * core.vmap(lambda r: lax.pbroadcast(r, "i", 2), axis_name="i")(v)))(x)
    expected = np.zeros((4, 3), np.float32)
    expected[2] = w.sum(0)
    np.testing.assert_allclose(g, expected, rtol=1e-6)
    assert core.vmap(lambda v: lax.pcast(v, ("i",), to="reduced"), axis_name="i")(x) is not None
    with pytest.raises(NotImplementedError, match="shard_map's unreduced"):
        core.vmap(lambda v: lax.pcast(v, "i", to="unreduced"), axis_name="i")(x)
    with pytest.raises(ValueError, match="pcast: to must be one of"):
        core.vmap(lambda v: lax.pcast(v, "i", to="invariant"), axis_name="i")(x)
    with pytest.raises(ValueError, match=r"pbroadcast: source must be an int in range\(0, 4\)"):
        core.vmap(lambda v: lax.pbroadcast(v, "i", 4), axis_name="i")(x)
    with pytest.raises(NameError, match="unbound axis name: 'j'"):
        core.vmap(lambda v: lax.pbroadcast(v, "j", 0), axis_name="i")(x)


def test_ragged_all_to_all_argument_errors():
    f = core.vmap(_ragged, axis_name="i")
    z, zi = jnp.zeros((2, 4)), jnp.zeros((2, 3), jnp.int32)
    with pytest.raises(ValueError, match=r"number of slices \(3\) must be a multiple of the size of axis 'i' \(2\)"):
        f(z, z, zi, zi, zi, zi)
    with pytest.raises(TypeError, match="1-D integer arrays of one length"):
        f(z, z, zi, zi, zi, jnp.zeros((2, 2), jnp.int32))


def test_psend_and_precv_name_the_missing_backend_and_the_fix():
    for call in (lambda: lax.psend(jnp.ones(2), "i", [(0, 1)]),
                 lambda: lax.precv(lax.create_token(), core.ShapeDtypeStruct((2,), jnp.float32), "i", [(0, 1)])):
        with pytest.raises(NotImplementedError, match=r"only on GPU.*lax.ppermute"):
            call()


# ----- stage, dce_sink, shape_as_value ------------------------------------------------------------------

def test_stage_lifts_into_the_trace():
    x = lax.stage(np.arange(3, dtype=np.float32))
    assert isinstance(x, core.Array)
    np.testing.assert_array_equal(x, [0, 1, 2])
    assert "stage" in str(core.make_jaxpr(lambda: lax.stage(np.float32(3)))())
    assert float(core.grad(lambda v: lax.stage(v) * 3.0)(2.0)) == 3.0
    assert float(core.jit(lambda v: lax.stage(v) + 1)(1.0)) == 2.0


def test_dce_sink_records_a_use_and_changes_nothing():
    assert lax.dce_sink(jnp.ones(2)) is None
    jaxpr = core.make_jaxpr(lambda v: (lax.dce_sink({"a": v, "b": v * 2}), v)[1])(1.0)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["mul", "dce_sink", "dce_sink"]
    assert float(core.jit(lambda v: (lax.dce_sink(v), v + 1)[1])(1.0)) == 2.0
    assert float(core.grad(lambda v: (lax.dce_sink(v), v * 5)[1])(1.0)) == 5.0


def test_shape_as_value():
    v = lax.shape_as_value((2, 3))
    assert v.dtype == np.int32 and v.tolist() == [2, 3]
    assert lax.shape_as_value((2 ** 33,)).dtype == np.int64
    empty = lax.shape_as_value(())
    assert empty.shape == (0,) and empty.dtype == np.int32


# ----- scaled_dot ----------------------------------------------------------------------------------------

def _scaled_oracle(lhs, rhs, ls, rs, lc, rc):
    """(lhs * expand(ls)) . (rhs * expand(rs)) in float64, each scale repeated over its block."""
    L = np.repeat(ls.astype(np.float64), lhs.shape[lc] // ls.shape[lc], axis=lc) * lhs
    R = np.repeat(rs.astype(np.float64), rhs.shape[rc] // rs.shape[rc], axis=rc) * rhs
    return L, R


def test_scaled_dot_matches_numpy(rng):
    lhs, rhs = rng.standard_normal((3, 8)).astype(np.float32), rng.standard_normal((8, 2)).astype(np.float32)
    ls, rs = rng.uniform(1, 2, (3, 2)).astype(np.float32), rng.uniform(1, 2, (2, 2)).astype(np.float32)
    L, R = _scaled_oracle(lhs, rhs, ls, rs, 1, 0)
    out = lax.scaled_dot(lhs, rhs, lhs_scale=ls, rhs_scale=rs, preferred_element_type=jnp.float32)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, L @ R, rtol=1e-5, atol=1e-5)
    default = lax.scaled_dot(lhs, rhs, lhs_scale=ls, rhs_scale=rs)  # bfloat16, rounded once
    assert default.dtype == core.dtypes.bfloat16
    np.testing.assert_allclose(np.asarray(default, np.float64), L @ R, rtol=2 ** -8, atol=1e-2)
    # rank 3: batched by default (contract lhs's last with rhs's second-to-last), one scale missing
    a, b = rng.standard_normal((2, 3, 4)).astype(np.float32), rng.standard_normal((2, 4, 5)).astype(np.float32)
    sa = rng.uniform(1, 2, (2, 3, 1)).astype(np.float32)
    out3 = lax.scaled_dot(a, b, lhs_scale=sa, preferred_element_type=jnp.float32)
    np.testing.assert_allclose(out3, np.einsum("bmk,bkn->bmn", a * sa, b), rtol=1e-5, atol=1e-5)
    # differentiable (JAX's is not): d/dlhs sum(out) = expand(ls) * (1 @ R^T)
    g = core.grad(lambda x: jnp.sum(lax.scaled_dot(x, rhs, lhs_scale=ls, rhs_scale=rs,
                                                   preferred_element_type=jnp.float32)))(lhs)
    expected = np.repeat(ls.astype(np.float64), 4, axis=1) * (np.ones((3, 2)) @ R.T)
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-5)


def test_scaled_dot_errors():
    with pytest.raises(TypeError, match=r"dimension 1 of lhs \(8\) must be a whole multiple of that of lhs_scale \(3\)"):
        lax.scaled_dot(jnp.ones((2, 8)), jnp.ones((8, 2)), lhs_scale=jnp.ones((2, 3)))
    with pytest.raises(TypeError, match="rank-0 and rank-1"):
        lax.scaled_dot(jnp.ones(8), jnp.ones(8))
    with pytest.raises(TypeError, match="preferred_element_type must be bfloat16 or float32"):
        lax.scaled_dot(jnp.ones((2, 8)), jnp.ones((8, 2)), preferred_element_type=jnp.float16)


# ----- bessel_i0e_p ---------------------------------------------------------------------------------------

def test_bessel_i0e_is_one_primitive_with_scipys_derivative():
    jaxpr = core.make_jaxpr(lax.bessel_i0e)(1.0)
    assert [e.primitive for e in jaxpr.jaxpr.eqns] == [lax.bessel_i0e_p]
    x = np.array([-30.0, -2.5, -0.3, 0.0, 0.7, 9.0, 15.0, 40.0], np.float32)
    x64 = x.astype(np.float64)
    # d/dx exp(-|x|) I0(x) = exp(-|x|) I1(x) - sign(x) exp(-|x|) I0(x)
    expected = sp.i1e(x64) - np.sign(x64) * sp.i0e(x64)
    got = core.vmap(core.grad(lax.bessel_i0e))(jnp.asarray(x))
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=1e-7)
    np.testing.assert_allclose(core.jit(lax.bessel_i0e)(x), sp.i0e(x64), rtol=2e-6)


# ----- one JAX-style program ------------------------------------------------------------------------------

def test_jax_style_program_with_tokens_stage_and_scaled_dot(rng):
    """A quantized-layer step written as JAX code would be: block-scaled weights, a token threading
    the step's order through jit, a staged constant and a broadcast of example 0's statistics."""
    w = rng.standard_normal((8, 4)).astype(np.float32)
    scale = np.abs(w).reshape(2, 4, 4).max(axis=1) / 7.0      # one scale per block of 4 input rows
    q = np.round(w / np.repeat(scale, 4, axis=0)).astype(np.float32)  # "int4-like" codes
    xs = rng.standard_normal((3, 2, 8)).astype(np.float32)

    @core.jit
    def step(tok, x, q, scale):
        tok = lax.after_all(tok, lax.create_token())
        y = lax.scaled_dot(x, q, rhs_scale=scale, preferred_element_type=jnp.float32)
        bias = lax.stage(np.float32(0.5))
        y = core.vmap(lambda r: r - lax.pbroadcast(jnp.mean(r), "ex", 0), axis_name="ex")(y) + bias
        return tok, y

    tok = lax.create_token()
    for x in xs:
        tok, y = step(tok, x, q, scale)
        deq = q.astype(np.float64) * np.repeat(scale, 4, axis=0)
        ref = x.astype(np.float64) @ deq
        ref = ref - ref[0].mean() + 0.5
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)
    assert type(tok) is Token

"""The differentiation API (issue 4): jvp, linearize, vjp, grad, value_and_grad, Jacobians, Hessians,
linear_transpose, custom rules, checkpointing, their errors, and the seeds' examples."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core import test_util as tu
from core.interpreters import ad


# ----- the seeds' examples ------------------------------------------------------------------------

def test_grad_tanh_at_one():
    np.testing.assert_allclose(float(core.grad(jnp.tanh)(1.0)), 0.41997434, rtol=1e-6)


def test_derivatives_of_a_cubic_to_fourth_order():
    f = lambda x: x ** 3 + 2 * x ** 2 - 3 * x + 1  # noqa: E731
    d1 = core.grad(f)
    d2 = core.grad(d1)
    d3 = core.grad(d2)
    d4 = core.grad(d3)
    assert [float(d(1.0)) for d in (d1, d2, d3, d4)] == [4.0, 10.0, 6.0, 0.0]


def test_jvp_of_sin():
    y, t = core.jvp(jnp.sin, (0.1,), (0.2,))
    np.testing.assert_allclose([float(y), float(t)], [0.09983342, 0.19900084], rtol=1e-6)


def test_hessian_of_polynomial():
    f = lambda x: x[0] ** 3 - 2 * x[0] * x[1] - x[1] ** 6  # noqa: E731
    h = core.hessian(f)(jnp.array([1.0, 2.0]))
    np.testing.assert_allclose(np.asarray(h), [[6.0, -2.0], [-2.0, -480.0]], rtol=1e-6)


def test_value_and_grad_with_aux():
    def loss(w):
        pred = jnp.tanh(w)
        return jnp.sum(pred ** 2), {"pred": pred}

    (value, aux), g = core.value_and_grad(loss, has_aux=True)(jnp.array([0.5, -1.0]))
    w = np.array([0.5, -1.0])
    np.testing.assert_allclose(float(value), np.sum(np.tanh(w) ** 2), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(aux["pred"]), np.tanh(w), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(g), 2 * np.tanh(w) * (1 - np.tanh(w) ** 2), rtol=1e-5)


def test_vjp_of_sin_and_cos():
    (s, c), f_vjp = core.vjp(lambda x, y: (jnp.sin(x), jnp.cos(y)), 0.5, 1.0)
    gx, gy = f_vjp((1.0, 1.0))
    np.testing.assert_allclose([float(s), float(c)], [np.sin(0.5), np.cos(1.0)], rtol=1e-6)
    np.testing.assert_allclose([float(gx), float(gy)], [np.cos(0.5), -np.sin(1.0)], rtol=1e-6)


def test_td0_update_with_stop_gradient():
    value_fn = lambda theta, state: jnp.dot(theta, state)  # noqa: E731
    theta = jnp.array([0.1, -0.1, 0.0])
    s_tm1, r_t, s_t = jnp.array([1.0, 2.0, -1.0]), jnp.array(1.0), jnp.array([2.0, 1.0, 0.0])

    def td_loss(theta, s_tm1, r_t, s_t):
        v_tm1 = value_fn(theta, s_tm1)
        target = r_t + value_fn(theta, s_t)
        return -0.5 * ((lax.stop_gradient(target) - v_tm1) ** 2)

    delta = core.grad(td_loss)(theta, s_tm1, r_t, s_t)
    np.testing.assert_allclose(np.asarray(delta), [1.2, 2.4, -1.2], rtol=1e-5)


def test_straight_through_estimator():
    f = jnp.round

    def straight_through_f(x):
        zero = x - lax.stop_gradient(x)
        return zero + lax.stop_gradient(f(x))

    assert float(f(3.2)) == 3.0 and float(straight_through_f(3.2)) == 3.0
    assert float(core.grad(f)(3.2)) == 0.0
    assert float(core.grad(straight_through_f)(3.2)) == 1.0


_TARGET = np.array([3.0, 7.0])


def _quadratic(x):
    d = x - jnp.asarray(_TARGET, dtype=x.dtype)
    return d[0] ** 2 + 2.0 * d[1] ** 2 + d[0] * d[1]


def test_newton_step_with_jacfwd_of_jacrev_under_jit():
    @core.jit
    def newton_step(x):
        g = core.grad(_quadratic)(x)
        h = core.jacfwd(core.jacrev(_quadratic))(x)
        return x - jnp.linalg.solve(h, g)

    np.testing.assert_allclose(np.asarray(newton_step(jnp.zeros(2))), _TARGET, rtol=1e-5)


def test_newton_conjugate_gradient_with_hessian_vector_products_under_jit():
    def hvp(x, v):
        return core.jvp(core.grad(_quadratic), (x,), (v,))[1]

    @core.jit
    def newton_cg_step(x):
        g = core.grad(_quadratic)(x)
        # conjugate gradient on H d = g: exact in 2 iterations for a 2x2 system
        d = jnp.zeros_like(x)
        r = g
        p = r
        for _ in range(2):
            hp = hvp(x, p)
            alpha = jnp.dot(r, r) / jnp.dot(p, hp)
            d = d + alpha * p
            r_new = r - alpha * hp
            p = r_new + jnp.dot(r_new, r_new) / jnp.dot(r, r) * p
            r = r_new
        return x - d

    np.testing.assert_allclose(np.asarray(newton_cg_step(jnp.zeros(2))), _TARGET, rtol=1e-5)


# ----- grad: argnums, pytrees, has_aux, allow_int, holomorphic --------------------------------------

def test_grad_argnums_and_pytrees():
    def f(params, x, scale):
        return scale * jnp.sum(jnp.sin(params["w"] * x) + params["b"])

    params = {"w": jnp.array([1.0, 2.0]), "b": jnp.array(0.5)}
    x = jnp.array([0.3, -0.2])
    g = core.grad(f)(params, x, 2.0)
    assert set(g) == {"w", "b"}
    np.testing.assert_allclose(np.asarray(g["w"]), 2 * np.cos(np.array([1.0, 2.0]) * [0.3, -0.2]) * [0.3, -0.2],
                               rtol=1e-5)
    np.testing.assert_allclose(float(g["b"]), 4.0, rtol=1e-6)
    gp, gx, gs = core.grad(f, argnums=(0, 1, 2))(params, x, 2.0)
    np.testing.assert_allclose(np.asarray(gx), 2 * np.cos(np.array([1.0, 2.0]) * [0.3, -0.2]) * [1.0, 2.0],
                               rtol=1e-5)
    np.testing.assert_allclose(float(gs), float(f(params, x, 1.0)), rtol=1e-6)
    gneg = core.grad(f, argnums=-1)(params, x, 2.0)
    np.testing.assert_allclose(float(gneg), float(gs), rtol=1e-6)


def test_grad_keyword_arguments_are_not_differentiated():
    f = lambda x, *, k: k * x ** 2  # noqa: E731
    assert float(core.grad(f)(3.0, k=2.0)) == 12.0


def test_grad_errors_name_the_problem():
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. Output had shape: \(3,\)"):
        core.grad(lambda x: x * 2)(jnp.ones(3))
    with pytest.raises(TypeError, match=r"grad requires real- or complex-valued inputs .*but got int32.*allow_int"):
        core.grad(lambda x: x * 2.0)(jnp.int32(3))
    with pytest.raises(ValueError, match=r"argnums=3 but the function was called with 1"):
        core.grad(lambda x: x, argnums=3)(1.0)
    with pytest.raises(TypeError, match=r"real-valued outputs.*complex64.*holomorphic=True"):
        core.grad(lambda x: x * 1j)(1.0)
    with pytest.raises(TypeError, match=r"must return a pair"):
        core.grad(lambda x: x, has_aux=True)(1.0)


def test_grad_allow_int_gives_float0_zeros():
    g = core.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(g[0]) == 3.0
    assert isinstance(g[1], np.ndarray) and g[1].dtype == core.dtypes.float0 and g[1].shape == ()


def test_holomorphic_grad():
    z = jnp.complex64(1.0 + 2.0j)
    g = core.grad(lambda z: z * z, holomorphic=True)(z)
    np.testing.assert_allclose(complex(g), 2 * (1 + 2j), rtol=1e-6)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype"):
        core.grad(lambda z: z * z, holomorphic=True)(1.0)


def test_python_control_flow_on_concrete_values_under_grad():
    def f(x):
        return x ** 2 if x > 0 else -x
    assert float(core.grad(f)(3.0)) == 6.0 and float(core.grad(f)(-3.0)) == -1.0


def test_unused_input_has_zero_gradient_and_integer_outputs_are_fine():
    g = core.grad(lambda x, y: jnp.sum(x * 2.0), argnums=(0, 1))(jnp.ones(2), jnp.ones(3))
    np.testing.assert_array_equal(np.asarray(g[1]), np.zeros(3))
    y, t = core.jvp(lambda x: (x * 2.0, jnp.argmax(x)), (jnp.array([1.0, 3.0]),), (jnp.ones(2),))
    assert int(y[1]) == 1 and t[1].dtype == core.dtypes.float0


# ----- jvp / linearize / vjp ---------------------------------------------------------------------------

def test_jvp_checks_tangent_types():
    with pytest.raises(TypeError, match=r"equal types; primal 0 is f32\[3\] but its tangent is f32\[2\]"):
        core.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(2),))
    with pytest.raises(TypeError, match="same tree structure"):
        core.jvp(lambda a, b: a, (1.0, 2.0), (1.0,))
    with pytest.raises(TypeError, match="float0"):
        core.jvp(lambda n: n, (jnp.int32(1),), (jnp.int32(1),))
    y, t = core.jvp(lambda n: n * 2, (jnp.int32(1),), (np.zeros((), core.dtypes.float0),))
    assert int(y) == 2 and t.dtype == core.dtypes.float0


def test_linearize_matches_jvp_and_reuses_residuals():
    f = lambda x: jnp.sin(x) * jnp.exp(x)  # noqa: E731
    x = jnp.array([0.1, 0.7, -1.2])
    y, f_jvp = core.linearize(f, x)
    for v in (jnp.ones(3), jnp.array([1.0, -2.0, 0.5])):
        np.testing.assert_allclose(np.asarray(f_jvp(v)), np.asarray(core.jvp(f, (x,), (v,))[1]), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(y), np.asarray(f(x)), rtol=1e-6)


def test_vjp_cotangent_errors():
    _, f_vjp = core.vjp(lambda x: x * 2.0, jnp.ones(3))
    with pytest.raises(ValueError, match=r"cotangent 0 has type f32\[2\] but the output it pulls back has type f32\[3\]"):
        f_vjp(jnp.ones(2))
    with pytest.raises(TypeError, match="structure"):
        f_vjp((jnp.ones(3), jnp.ones(3)))


def test_vjp_has_aux():
    y, f_vjp, aux = core.vjp(lambda x: (x * 3.0, "aux"), 2.0, has_aux=True)
    assert aux == "aux" and float(f_vjp(1.0)[0]) == 3.0


def test_linear_transpose():
    f_t = core.linear_transpose(lambda x: 2.0 * x, 1.0)
    assert float(f_t(3.0)[0]) == 6.0
    m = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    f_t = core.linear_transpose(lambda v: jnp.dot(jnp.asarray(m), v), jnp.zeros(3))
    np.testing.assert_allclose(np.asarray(f_t(jnp.array([1.0, -1.0]))[0]), m.T @ [1.0, -1.0], rtol=1e-6)
    with pytest.raises(TypeError, match="float or complex"):
        core.linear_transpose(lambda n: n, jnp.int32(1))


# ----- Jacobians: structure as JAX documents -----------------------------------------------------------

def test_jacobian_shapes_and_structure():
    def f(x):
        return {"a": jnp.sin(x["u"]) * x["v"][0], "b": jnp.sum(x["u"])}

    x = {"u": jnp.array([0.1, 0.2, 0.3]), "v": jnp.array([2.0, 1.0])}
    for jac in (core.jacfwd(f), core.jacrev(f)):
        j = jac(x)
        assert j["a"]["u"].shape == (3, 3) and j["a"]["v"].shape == (3, 2)
        assert j["b"]["u"].shape == (3,) and j["b"]["v"].shape == (2,)
        np.testing.assert_allclose(np.asarray(j["a"]["u"]), np.diag(2 * np.cos([0.1, 0.2, 0.3])), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(j["a"]["v"])[:, 0], np.sin([0.1, 0.2, 0.3]), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(j["b"]["u"]), np.ones(3))


def test_jacobians_against_finite_differences_and_each_other(rng):
    w = rng.standard_normal((4, 3)).astype(np.float32)
    f = lambda x: jnp.tanh(jnp.asarray(w) @ x)  # noqa: E731
    x = jnp.asarray(rng.standard_normal(3).astype(np.float32))
    jf, jr = np.asarray(core.jacfwd(f)(x)), np.asarray(core.jacrev(f)(x))
    expected = (1 - np.tanh(w @ np.asarray(x, np.float64)) ** 2)[:, None] * w
    np.testing.assert_allclose(jf, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jr, expected, rtol=1e-5, atol=1e-6)
    j2 = core.jacrev(lambda a, b: a * b, argnums=(0, 1))(jnp.ones(2), jnp.array([2.0, 3.0]))
    assert isinstance(j2, tuple) and j2[0].shape == (2, 2)
    np.testing.assert_allclose(np.asarray(j2[0]), np.diag([2.0, 3.0]))


def test_hessian_of_a_vector_function_matches_a_loop_of_second_differences(x64):
    f = lambda x: jnp.sum(jnp.sin(x) * x[0])  # noqa: E731
    x = np.array([0.3, -0.5, 1.1])
    h = np.asarray(core.hessian(f)(x))
    eps = 1e-4
    num = np.zeros((3, 3))
    g = lambda x: np.asarray(core.grad(f)(x))  # noqa: E731
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        num[:, i] = (g(x + e) - g(x - e)) / (2 * eps)
    np.testing.assert_allclose(h, num, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, h.T, rtol=1e-12)


# ----- composition with jit and higher order ----------------------------------------------------------

def _mlp_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"]
    return jnp.mean((out - y) ** 2)


def _mlp_params(rng):
    f32 = np.float32
    return {"w1": jnp.asarray(rng.standard_normal((3, 5)).astype(f32)), "b1": jnp.zeros(5),
            "w2": jnp.asarray(rng.standard_normal((5, 2)).astype(f32))}


def test_grad_composes_with_jit_both_ways(rng):
    params = _mlp_params(rng)
    x = jnp.asarray(rng.standard_normal((4, 3)).astype(np.float32))
    y = jnp.asarray(rng.standard_normal((4, 2)).astype(np.float32))
    eager = core.grad(_mlp_loss)(params, x, y)
    for g in (core.grad(core.jit(_mlp_loss))(params, x, y), core.jit(core.grad(_mlp_loss))(params, x, y),
              core.jit(core.grad(core.jit(_mlp_loss)))(params, x, y)):
        for k in params:
            np.testing.assert_allclose(np.asarray(g[k]), np.asarray(eager[k]), rtol=2e-5, atol=1e-6)


def test_grad_of_jit_compiles_once_per_signature(rng):
    f = core.jit(lambda x: jnp.sum(jnp.sin(x) ** 2))
    g = core.jit(core.grad(f))
    x = jnp.ones(3)
    g(x)
    misses = core.cache_info()["eager"]["misses"]
    for _ in range(3):
        g(x)
    assert core.cache_info()["eager"]["misses"] == misses


def test_mlp_gradient_check_float64(x64, rng):
    params = {k: np.asarray(v, np.float64) for k, v in _mlp_params(rng).items()}
    x = rng.standard_normal((4, 3))
    y = rng.standard_normal((4, 2))
    tu.check_grads(lambda p: _mlp_loss(p, x, y), (params,), order=2)


def test_perturbation_confusion_is_avoided():
    # d/dx [x * d/dy (x + y)] = 1 (the inner derivative must not see the outer x's tangent)
    f = lambda x: x * core.grad(lambda y: x + y)(1.0)  # noqa: E731
    assert float(core.grad(f)(2.0)) == 1.0
    g = lambda x: core.jvp(lambda y: x * y, (1.0,), (1.0,))[1]  # noqa: E731
    assert float(core.jvp(g, (3.0,), (1.0,))[1]) == 1.0


def test_leaked_jvp_tracer_is_reported():
    leaked = []

    def f(x):
        leaked.append(x)
        return x * 2.0
    core.grad(f)(1.0)
    with pytest.raises(core.errors.UnexpectedTracerError):
        core.jvp(lambda y: y * leaked[0], (1.0,), (1.0,))


# ----- custom_jvp / custom_vjp / closure_convert --------------------------------------------------------

@core.custom_jvp
def _log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@_log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return _log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


def test_custom_jvp_replaces_the_derivative():
    assert float(core.grad(_log1pexp)(100.0)) == 1.0  # differentiating the body gives nan
    assert np.isnan(float(core.grad(lambda x: jnp.log(1.0 + jnp.exp(x)))(100.0)))
    for g in (core.grad(core.jit(_log1pexp)), core.jit(core.grad(_log1pexp))):
        np.testing.assert_allclose(float(g(2.0)), 1 - 1 / (1 + np.exp(2.0)), rtol=1e-6)
    y, t = core.jvp(_log1pexp, (2.0,), (3.0,))
    np.testing.assert_allclose(float(t), 3 * (1 - 1 / (1 + np.exp(2.0))), rtol=1e-6)
    # second order differentiates the rule itself
    np.testing.assert_allclose(float(core.grad(core.grad(_log1pexp))(0.0)), 0.25, rtol=1e-6)


def test_custom_rules_are_staged_as_one_equation_under_jit():
    names = [e.primitive.name for e in core.make_jaxpr(_log1pexp)(1.0).eqns]
    assert names == ["custom_jvp_call"]
    names = [e.primitive.name for e in core.make_jaxpr(_clip_gradient)(1.0).eqns]
    assert names == ["custom_vjp_call"]
    assert float(core.jit(_log1pexp)(0.0)) == np.float32(np.log(2.0))


def test_custom_jvp_defjvps_and_nondiff_argnums():
    @core.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y
    f.defjvps(lambda t, ans, x, y: jnp.cos(x) * t * y, lambda t, ans, x, y: jnp.sin(x) * t)
    np.testing.assert_allclose(float(core.grad(f, argnums=1)(0.5, 2.0)), np.sin(0.5), rtol=1e-6)

    from functools import partial

    @partial(core.custom_jvp, nondiff_argnums=(0,))
    def app(fn, x):
        return fn(x)

    @app.defjvp
    def app_jvp(fn, primals, tangents):
        x, = primals
        t, = tangents
        return app(fn, x), 2.0 * t  # a deliberately different derivative, to see the rule is used
    assert float(core.grad(lambda x: app(jnp.sin, x))(1.0)) == 2.0


def test_custom_jvp_errors():
    @core.custom_jvp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No JVP defined"):
        core.grad(f)(1.0)

    @f.defjvp
    def f_jvp(primals, tangents):
        return primals[0], (tangents[0], tangents[0])
    with pytest.raises(TypeError, match="equal container"):
        core.grad(f)(1.0)

    @core.custom_jvp
    def g(x):
        return x

    @g.defjvp
    def g_jvp(primals, tangents):
        return primals[0], jnp.ones(3)
    with pytest.raises(TypeError, match=r"corresponding shapes and dtypes; output 0 has primal f32\[\]"):
        core.grad(g)(1.0)


@core.custom_vjp
def _clip_gradient(x):
    return x


_clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))


def test_custom_vjp_replaces_the_gradient():
    assert float(core.grad(lambda x: 3.0 * _clip_gradient(x))(2.0)) == 1.0
    assert float(core.grad(core.jit(lambda x: 3.0 * _clip_gradient(x)))(2.0)) == 1.0
    assert float(core.jit(core.grad(lambda x: 0.5 * _clip_gradient(x)))(2.0)) == 0.5
    assert float(_clip_gradient(4.0)) == 4.0
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        core.jvp(_clip_gradient, (1.0,), (1.0,))


def test_custom_vjp_with_residuals_and_pytrees():
    @core.custom_vjp
    def f(x, y):
        return {"p": x * y, "s": jnp.sin(x)}

    def fwd(x, y):
        return f(x, y), (x, y)

    def bwd(res, ct):
        x, y = res
        return (ct["p"] * y + ct["s"] * jnp.cos(x), ct["p"] * x)
    f.defvjp(fwd, bwd)
    loss = lambda x, y: f(x, y)["p"] + f(x, y)["s"]  # noqa: E731
    gx, gy = core.grad(loss, argnums=(0, 1))(0.3, 2.0)
    np.testing.assert_allclose([float(gx), float(gy)], [2.0 + np.cos(0.3), 0.3], rtol=1e-6)


def test_custom_vjp_bwd_structure_error():
    @core.custom_vjp
    def f(x, y):
        return x * y
    f.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g,))
    with pytest.raises(TypeError, match=r"bwd rule of f must produce .*tuple of length equal to the number of "
                                        r"arguments to the primal function \(2\)"):
        core.grad(f)(1.0, 2.0)


def test_custom_vjp_closing_over_a_differentiated_value_suggests_closure_convert():
    def outer(w):
        @core.custom_vjp
        def f(x):
            return x * w
        f.defvjp(lambda x: (x * w, x), lambda x, g: (g * w,))
        return f(1.0)
    with pytest.raises(TypeError, match="closure_convert"):
        core.grad(outer)(2.0)


def test_closure_convert_hoists_float_constants():
    w = jnp.array([1.0, 2.0])
    f, consts = core.closure_convert(lambda x: x * w, jnp.ones(2))
    assert len(consts) == 1 and consts[0] is w
    np.testing.assert_allclose(np.asarray(f(jnp.array([3.0, 4.0]), w * 2)), [6.0, 16.0])
    g = core.grad(lambda c: jnp.sum(f(jnp.ones(2), c)))(w)
    np.testing.assert_allclose(np.asarray(g), [1.0, 1.0])


# ----- checkpoint / remat ---------------------------------------------------------------------------------

def _chain(x, depth=6):
    for _ in range(depth):
        x = jnp.sin(x) * 1.1
    return x


@pytest.mark.parametrize("policy", [None, "everything", "dots"])
def test_checkpoint_gives_the_same_gradient(policy, rng):
    policies = {None: None, "everything": core.checkpoint_policies.everything_saveable,
                "dots": core.checkpoint_policies.dots_saveable}
    w = jnp.asarray(rng.standard_normal((4, 4)).astype(np.float32))
    block = lambda x: jnp.tanh(_chain(x @ w))  # noqa: E731
    remat_block = core.checkpoint(block, policy=policies[policy])
    x = jnp.asarray(rng.standard_normal((2, 4)).astype(np.float32))
    plain = core.grad(lambda x: jnp.sum(block(block(x))))(x)
    for g in (core.grad(lambda x: jnp.sum(remat_block(remat_block(x))))(x),
              core.jit(core.grad(lambda x: jnp.sum(remat_block(remat_block(x)))))(x)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(plain), rtol=1e-5, atol=1e-6)


def test_checkpoint_recomputes_in_the_backward_program():
    f = core.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    text = str(core.make_jaxpr(core.grad(f))(1.0))
    # the backward remat recomputes sin from the input: two sin equations appear in total
    assert text.count("sin") == 3 and "prevent_cse=True" in text
    np.testing.assert_allclose(float(core.grad(core.grad(f))(1.0)),
                               -np.sin(np.sin(1.0)) * np.cos(1.0) ** 2 - np.cos(np.sin(1.0)) * np.sin(1.0), rtol=1e-5)


def test_checkpoint_names_policy_saves_only_named_values():
    def block(x):
        h = core.checkpoint_name(jnp.sin(x), "h")
        return jnp.sin(h)
    saved = core.checkpoint(block, policy=core.checkpoint_policies.save_only_these_names("h"))
    text = str(core.make_jaxpr(core.grad(lambda x: saved(x)))(1.0))
    # the inner sin is saved, so the backward program does not recompute it: sin appears twice
    assert text.count("sin") == 2
    np.testing.assert_allclose(float(core.grad(saved)(1.0)), np.cos(np.sin(1.0)) * np.cos(1.0), rtol=1e-6)


def test_checkpoint_reduces_compiled_memory_of_a_deep_chain(rng):
    # 8 blocks of 6 matmul+sin layers: without checkpointing every layer's activation is kept for
    # the backward pass; with it only block inputs are, and each block is recomputed in turn.
    w = jnp.asarray(rng.standard_normal((128, 128)).astype(np.float32) / 12)

    def block(x):
        for _ in range(6):
            x = jnp.sin(x @ w)
        return x

    def make(step):
        def loss(x):
            for _ in range(8):
                x = step(x)
            return jnp.sum(x)
        return core.jit(core.grad(loss))

    x = jnp.ones((128, 128))
    stats = {name: make(step).lower(x).compile().memory_stats().temp_size_in_bytes
             for name, step in [("plain", block), ("remat", core.checkpoint(block)),
                                ("no_cse_guard", core.checkpoint(block, prevent_cse=False))]}
    np.testing.assert_allclose(np.asarray(make(core.checkpoint(block))(x)), np.asarray(make(block)(x)),
                               rtol=1e-5, atol=1e-6)
    # measured: 48 -> 13 buffers of 64 KiB; without the guard XLA merges the recomputation away
    assert stats["remat"] < stats["plain"] / 2, stats
    assert stats["no_cse_guard"] == stats["plain"], stats


# ----- the rule tables --------------------------------------------------------------------------------------

def test_while_loop_reverse_mode_names_the_fix():
    f = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)  # noqa: E731
    np.testing.assert_allclose(float(core.jvp(f, (1.5,), (1.0,))[1]), 8.0)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for lax.while_loop"):
        core.grad(f)(1.5)


def test_missing_rule_error_names_the_primitive():
    from core.trace import Primitive
    from core.lax._base import standard_primitive
    p = standard_primitive("no_rule_op", lambda x: x.shape, lambda x: x.dtype)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'no_rule_op' not implemented"):
        core.jvp(lambda x: p.bind(x), (1.0,), (1.0,))
    assert isinstance(p, Primitive) and p not in ad.jvp_rules


def test_checking_leaks_reports_a_tracer_leaked_from_grad():
    leaked = []

    def f(x):
        y = x * 2.0
        leaked.append(y)
        return jnp.sin(y)
    with core.checking_leaks():
        with pytest.raises(core.errors.LeakedTracerError, match=r"(?s)Leaked trace of f \(traced for grad\).*JVPTracer f32\[\].*a list"):
            core.grad(f)(1.0)
        with pytest.raises(core.errors.LeakedTracerError, match="JVPTracer"):
            core.jvp(f, (1.0,), (1.0,))
        # no false positive for a function that keeps nothing
        assert float(core.grad(lambda x: jnp.sin(x * 2.0))(0.0)) == 2.0
        assert float(core.jvp(lambda x: x * 3.0, (1.0,), (1.0,))[1]) == 3.0
        assert core.jvp(lambda x: (), (1.0,), (1.0,)) == ((), ())  # no outputs at all


def test_transposing_a_debug_callback_raises():
    def f(x):
        core.debug.callback(lambda v: None, x)
        return 2.0 * x
    with pytest.raises(ValueError, match="Transpose doesn't support debugging callbacks"):
        core.linear_transpose(f, 1.0)(1.0)

"""Derivatives of the reduction, cumulative, window, sorting, PRNG and debug-callback primitives:
check_grads (forward mode against central differences, reverse mode by the inner-product
identity, to order 2) in float64, hand-derived values at ties and zeros, non-differentiable
primitives giving zero tangents, a float32 smoke check and jit compositions."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import dtypes, lax, test_util as tu
from core.lax.prng import mul_add
from core.scipy import special

SHAPE_AXES = [((), ()), ((4,), (0,)), ((2, 3), (1,)), ((2, 3), (0, 1)), ((2, 1, 3), (0, 2)),
              ((0, 3), (0,))]


def _distinct(rng, shape, low=-3.0, high=3.0):
    """Float64 values spaced apart (no ties, no kinks within a central-difference step)."""
    n = int(np.prod(shape))
    grid = np.linspace(low, high, max(n, 1)) + rng.uniform(-0.1, 0.1, max(n, 1)) * (high - low) / max(n, 4)
    return rng.permutation(grid)[:n].reshape(shape)


def _check(f, *args, order=2, **kw):
    tu.check_grads(f, args, order=order, modes=("fwd", "rev"), **kw)


def _jvp(f, x, t):
    return core.jvp(f, (x,), (t,))


# ----- reduce_sum / reduce_max / reduce_min / reduce_prod --------------------------------------

@pytest.mark.parametrize("name", ["reduce_sum", "reduce_max", "reduce_min", "reduce_prod"])
@pytest.mark.parametrize("shape,axes", tu.sample_cases(SHAPE_AXES, "grad_reduce_shapes"))
def test_monoid_reduction_grads(x64, rng, name, shape, axes):
    x = _distinct(rng, shape, 0.5, 2.0) if name == "reduce_prod" else _distinct(rng, shape)
    f = lambda x: getattr(lax, name)(x, axes)  # noqa: E731
    if name in ("reduce_max", "reduce_min") and 0 in shape:
        # an empty max is -inf (central differences give inf - inf); its tangent is 0
        _, t = _jvp(f, x, np.ones_like(x))
        np.testing.assert_array_equal(np.asarray(t), np.zeros(np.shape(t)))
        return
    _check(f, x)


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
def test_reduce_chooser_ties_share_the_tangent(x64, name):
    # JAX's rule: the mean of the tangents at the positions equal to the result.
    x = np.array([[1., 3., 3.], [-1., -1., 2.]])
    x = x if name == "reduce_max" else -x
    t = np.array([[1., 2., 4.], [8., 16., 32.]])
    _, t_out = _jvp(lambda x: getattr(lax, name)(x, (1,)), x, t)
    np.testing.assert_allclose(np.asarray(t_out), [3., 32.])
    g = core.grad(lambda x: getattr(lax, name)(x, (0,)))(np.array([2., 5., 5., 5.]) * (1 if name == "reduce_max" else -1))
    np.testing.assert_allclose(np.asarray(g), [0., 1 / 3, 1 / 3, 1 / 3])


def test_reduce_prod_with_zeros(x64):
    # d prod / d x_i = product of the others: no 0/0 at a zero, zero everywhere with two zeros.
    g = core.grad(lambda x: lax.reduce_prod(x, (0,)))
    np.testing.assert_allclose(np.asarray(g(np.array([2., 0., 3.]))), [0., 6., 0.])
    np.testing.assert_allclose(np.asarray(g(np.array([0., 5., 0., 3.]))), [0., 0., 0., 0.])
    x = np.array([[2., 0., 3.], [1.5, -2., 0.5]])
    _, t = _jvp(lambda x: lax.reduce_prod(x, (1,)), x, np.ones_like(x))
    np.testing.assert_allclose(np.asarray(t), [6., 0.75 - 1.0 - 3.0])
    # second order too: d2 prod / dx0 dx1 at x = [2, 0, 3] is 3
    _check(lambda x: lax.reduce_prod(x, (1,)), x)
    h = core.hessian(lambda x: lax.reduce_prod(x, (0,)))(np.array([2., 0., 3.]))
    np.testing.assert_allclose(np.asarray(h), [[0., 3., 0.], [3., 0., 2.], [0., 2., 0.]])


# ----- non-differentiable reductions -----------------------------------------------------------

def test_nondifferentiable_reductions_give_zero_tangents(x64):
    x = np.array([[1., 5., 2.], [7., 0., 3.]])

    def f(x):
        bits = lax.convert_element_type(x, np.int32)
        return (lax.argmax(x, 1, np.int32), lax.argmin(x, 0, np.int32), lax.reduce_and(bits, (1,)),
                lax.reduce_or(lax.gt(x, 1.), (0,)), lax.reduce_xor(bits, (0, 1)))

    outs, touts = _jvp(f, x, np.ones_like(x))
    np.testing.assert_array_equal(np.asarray(outs[0]), [1, 0])
    for t, o in zip(touts, outs):
        assert np.asarray(t).dtype == dtypes.float0 and np.shape(t) == np.shape(o)
    # a float path through an argmax index is differentiable in the value only
    g = core.grad(lambda x: jnp.sum(x * lax.convert_element_type(lax.argmax(x, 1, np.int32), x.dtype)[:, None]))(x)
    np.testing.assert_allclose(np.asarray(g), [[1., 1., 1.], [0., 0., 0.]])


# ----- cumulative ops --------------------------------------------------------------------------

CUM_CASES = [((4,), 0, False), ((4,), 0, True), ((2, 3), 1, False), ((2, 3), 0, True), ((2, 1, 3), 2, True),
             ((5,), 0, False), ((0, 3), 0, False)]


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("shape,axis,reverse", tu.sample_cases(CUM_CASES, "grad_cum_cases", 3))
def test_cumulative_grads(x64, rng, name, shape, axis, reverse):
    x = _distinct(rng, shape, 0.5, 2.0) if name == "cumprod" else _distinct(rng, shape)
    _check(lambda x: getattr(lax, name)(x, axis, reverse), x)


@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_hand_values(x64, reverse):
    def r(v):
        return np.asarray(v)[::-1] if reverse else np.asarray(v)

    t = r([1., 10., 100., 1000.])
    # cumprod with a zero: y = [2, 0, 0, 0]; dy_i = sum_j t_j prod_{k<=i, k!=j} x_k
    x = r([2., 0., 3., 4.])
    _, dy = _jvp(lambda x: lax.cumprod(x, 0, reverse), x, t)
    np.testing.assert_allclose(r(dy), [1., 20., 60., 240.])
    # cummax follows the running argmax: x = [1, 3, 2, 5]
    _, dy = _jvp(lambda x: lax.cummax(x, 0, reverse), r([1., 3., 2., 5.]), t)
    np.testing.assert_allclose(r(dy), [1., 10., 10., 1000.])
    _, dy = _jvp(lambda x: lax.cummin(x, 0, reverse), r([4., 1., 2., 0.]), t)
    np.testing.assert_allclose(r(dy), [1., 10., 10., 1000.])
    # cumlogsumexp: dy_i = sum_{j<=i} softmax(x[:i+1])_j t_j; stable for widely spread inputs
    x = np.array([-800., 0., 1., 700.])
    _, dy = _jvp(lambda x: lax.cumlogsumexp(x, 0, reverse), r(x), t)
    expected = [1., 10., (10. + 100. * np.e) / (1 + np.e), 1000.]
    np.testing.assert_allclose(r(dy), expected, rtol=1e-12)
    # cumsum's transpose is the reversed running sum
    g = core.grad(lambda x: jnp.sum(lax.cumsum(x, 0, reverse) * r([1., 2., 3., 4.])))(np.zeros(4))
    np.testing.assert_allclose(r(g), [10., 9., 7., 4.])


# ----- reduce_window ---------------------------------------------------------------------------

WINDOW_CASES = [
    ((5,), (2,), (1,), "VALID", None, None),
    ((6,), (3,), (2,), "SAME", None, None),
    ((2, 5), (1, 2), (1, 2), ((0, 0), (1, 2)), None, None),
    ((4, 5), (2, 2), (2, 1), "VALID", None, (1, 2)),
    ((3, 4), (2, 2), (1, 1), ((1, 0), (0, 1)), (2, 1), None),
    ((7,), (2,), (3,), ((-1, 2),), None, (2,)),
    ((0, 3), (1, 2), (1, 1), "VALID", None, None),
]


@pytest.mark.parametrize("name", ["reduce_window_sum", "reduce_window_max", "reduce_window_min"])
@pytest.mark.parametrize("case", tu.sample_cases(WINDOW_CASES, "grad_window_cases", 4))
def test_reduce_window_grads(x64, rng, name, case):
    shape, window, strides, padding, base_dilation, window_dilation = case
    x = _distinct(rng, shape)
    _check(lambda x: getattr(lax, name)(x, window, strides, padding, base_dilation, window_dilation), x)


@pytest.mark.parametrize("case", WINDOW_CASES)
def test_reduce_window_sum_transpose_matches_matrix(x64, case):
    # The window sum as an explicit 0/1 matrix (built by applying it to basis vectors): its vjp
    # must be the transposed matrix, for every stride / padding / dilation combination.
    shape, window, strides, padding, base_dilation, window_dilation = case

    def f(x):
        return lax.reduce_window_sum(x, window, strides, padding, base_dilation, window_dilation)

    n = int(np.prod(shape))
    out_shape = core.eval_shape(f, np.zeros(shape)).shape
    m = int(np.prod(out_shape))
    mat = np.zeros((m, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = 1.
        mat[:, i] = np.asarray(f(e.reshape(shape))).ravel()
    ct = np.arange(1., m + 1).reshape(out_shape)
    _, pullback = core.vjp(f, np.zeros(shape))
    np.testing.assert_allclose(np.asarray(pullback(ct)[0]).ravel(), mat.T @ ct.ravel())


def test_reduce_window_max_takes_first_winner(x64):
    # ties inside a window: the tangent of the first maximal position (window order)
    x = np.array([1., 4., 4., 2., 2.])
    t = np.array([1., 10., 100., 1000., 10000.])
    _, dy = _jvp(lambda x: lax.reduce_window_max(x, (2,), (1,), "VALID"), x, t)
    np.testing.assert_allclose(np.asarray(dy), [10., 10., 100., 1000.])
    # a window of padding only gets a zero tangent; padding never wins over a real element
    _, dy = _jvp(lambda x: lax.reduce_window_max(x, (2,), (2,), ((3, 0),)), -x, t)
    np.testing.assert_allclose(np.asarray(dy), [0., 1., 10., 1000.])


# ----- sort / top_k ----------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dimension", [((5,), 0), ((2, 3), 1), ((3, 2), 0), ((2, 1, 3), 2), ((0, 3), 1)])
def test_sort_grads(x64, rng, shape, dimension):
    x = _distinct(rng, shape)
    _check(lambda x: lax.sort(x, dimension), x)


def test_sort_multiple_operands(x64, rng):
    keys = np.array([[2., 1., 2., 0.], [1., 1., 0., 3.]])
    second = np.array([[0., 5., -1., 2.], [4., 3., 9., 1.]])
    vals = rng.standard_normal((2, 4))

    def f(k, s, v):
        return lax.sort((k, s, v), 1, num_keys=2)

    # the keys tie in their first component, so only the carried values are perturbed here
    _check(lambda v: f(keys, second, v), vals)
    _check(f, _distinct(rng, (2, 4)), second, vals, order=1)
    outs, touts = core.jvp(f, (keys, second, vals), (np.zeros_like(keys), np.zeros_like(second), np.eye(2, 4)))
    order = np.lexsort((second, keys), axis=1)
    np.testing.assert_allclose(np.asarray(outs[2]), np.take_along_axis(vals, order, 1))
    np.testing.assert_allclose(np.asarray(touts[2]), np.take_along_axis(np.eye(2, 4), order, 1))
    assert type(touts[0]) is not tuple
    np.testing.assert_array_equal(np.asarray(touts[0]), np.zeros((2, 4)))
    # an integer key operand: sorting float values by it
    ik = np.array([3, 1, 2], np.int32)
    v = np.array([1., 2., 3.])
    g = core.grad(lambda v: jnp.sum(lax.sort_key_val(ik, v)[1] * np.array([1., 10., 100.])))(v)
    np.testing.assert_allclose(np.asarray(g), [100., 1., 10.])


def test_top_k_grads(x64, rng):
    x = _distinct(rng, (2, 5))
    _check(lambda x: lax.top_k(x, 3)[0], x)
    (vals, idxs), (tv, ti) = _jvp(lambda x: lax.top_k(x, 2), np.array([1., 4., 2., 4.]),
                                  np.array([1., 10., 100., 1000.]))
    np.testing.assert_allclose(np.asarray(tv), [10., 1000.])
    assert np.asarray(ti).dtype == dtypes.float0
    _, (tv, _) = _jvp(lambda x: lax.top_k(x, 0), np.ones(3), np.ones(3))
    assert np.shape(tv) == (0,)


# ----- prng ------------------------------------------------------------------------------------

def test_threefry_is_nondifferentiable(x64):
    k = np.array([1, 2, 3], np.uint32)
    outs, touts = core.jvp(lambda k: lax.threefry2x32(k, k, k, k), (k,), (np.zeros(3, dtypes.float0),))
    assert all(np.asarray(t).dtype == dtypes.float0 for t in touts)
    # random bits scaling a float: only the float gets a derivative
    g = core.grad(lambda x: jnp.sum(x * lax.convert_element_type(lax.threefry2x32(k, k, k, k)[0] % 7, x.dtype)))(
        np.ones(3))
    np.testing.assert_allclose(np.asarray(g), np.asarray(lax.threefry2x32(k, k, k, k)[0]) % 7)


@pytest.mark.parametrize("shapes", [((), (), ()), ((4,), (4,), (4,)), ((2, 3), (), (1, 3)), ((2, 1), (2, 3), ())])
def test_mul_add_grads(x64, rng, shapes):
    args = tuple(rng.standard_normal(s) for s in shapes)
    _check(mul_add, *args, eps=1e-3)
    # its transpose in each linear position, against the matrix of the linear map
    a, b, c = args
    ct = rng.standard_normal(np.broadcast_shapes(*shapes))
    (tz,) = core.linear_transpose(lambda z: mul_add(a, b, z), c)(ct)
    (tx,) = core.linear_transpose(lambda x: mul_add(x, b, np.zeros_like(c)), a)(ct)
    (ty,) = core.linear_transpose(lambda y: mul_add(a, y, np.zeros_like(c)), b)(ct)
    np.testing.assert_allclose(np.asarray(tz), np.broadcast_to(ct, ct.shape).sum(
        axis=tuple(i for i in range(ct.ndim) if c.ndim == 0 or c.shape[i] == 1)).reshape(c.shape), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(tx), (ct * b).sum(
        axis=tuple(i for i in range(ct.ndim) if a.ndim == 0 or a.shape[i] == 1)).reshape(a.shape), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ty), (ct * a).sum(
        axis=tuple(i for i in range(ct.ndim) if b.ndim == 0 or b.shape[i] == 1)).reshape(b.shape), rtol=1e-12)


def test_mul_add_transpose_in_both_factors_raises(x64):
    from core.interpreters import ad
    from core.lax.prng import mul_add_p
    x = ad.UndefinedPrimal(core.ShapeDtypeStruct((2,), np.float64)) if hasattr(core, "ShapeDtypeStruct") else None
    aval = mul_add(np.ones(2), np.ones(2), np.ones(2)).aval
    with pytest.raises(ValueError, match="mul_add is bilinear"):
        ad.transpose_rules[mul_add_p](np.ones(2), ad.UndefinedPrimal(aval), ad.UndefinedPrimal(aval), np.ones(2))
    del x


# ----- debug_callback --------------------------------------------------------------------------

def test_debug_callback_under_differentiation(x64):
    seen = []

    def f(x):
        core.debug.callback(lambda v: seen.append(np.array(v)), x)
        return jnp.sum(x * x)

    x = np.array([1., 2.])
    np.testing.assert_allclose(np.asarray(core.grad(f)(x)), [2., 4.])
    np.testing.assert_allclose(seen[-1], x)  # the callback saw the primal
    seen.clear()
    _, t = core.jvp(core.jit(f), (x,), (np.ones(2),))
    np.testing.assert_allclose(np.asarray(t), 6.)
    np.testing.assert_allclose(seen[-1], x)
    seen.clear()
    np.testing.assert_allclose(np.asarray(core.jit(core.grad(f))(x)), [2., 4.])
    np.testing.assert_allclose(seen[-1], x)


def test_debug_callback_transpose_raises():
    from core.debugging import _HostCallback, debug_callback_p
    from core.interpreters import ad
    aval = jnp.ones(2).aval
    with pytest.raises(ValueError, match="Transpose doesn't support debugging callbacks."):
        ad.transpose_rules[debug_callback_p]([], ad.UndefinedPrimal(aval), callback=_HostCallback(print, None))


# ----- core.numpy functions built on these -----------------------------------------------------

NUMPY_FUNS = {
    "sum": lambda x: jnp.sum(x, axis=1),
    "prod": lambda x: jnp.prod(x, axis=0),
    "max": lambda x: jnp.max(x, axis=1),
    "min": lambda x: jnp.min(x),
    "mean": lambda x: jnp.mean(x, axis=0),
    "var": lambda x: jnp.var(x, axis=1),
    "std": lambda x: jnp.std(x),
    "cumsum": lambda x: jnp.cumsum(x, axis=1),
    "cumprod": lambda x: jnp.cumprod(x),
    "sort": lambda x: jnp.sort(x, axis=0),
    "logsumexp": lambda x: special.logsumexp(x, axis=1),
}


@pytest.mark.parametrize("name", list(NUMPY_FUNS))
def test_numpy_functions_differentiate(x64, rng, name):
    x = _distinct(rng, (3, 4), 0.5, 2.0) * rng.choice([-1., 1.], (3, 4))
    _check(NUMPY_FUNS[name], x, order=2 if name in ("prod", "var", "logsumexp") else 1)


def test_numpy_argmax_has_zero_tangent(x64):
    x = np.array([[1., 3., 2.], [0., -1., 5.]])
    out, t = _jvp(lambda x: jnp.argmax(x, axis=1), x, np.ones_like(x))
    np.testing.assert_array_equal(np.asarray(out), [1, 2])
    assert np.asarray(t).dtype == dtypes.float0


# ----- float32 smoke checks and jit compositions -----------------------------------------------

F32_FUNS = [
    lambda x: lax.reduce_max(x, (1,)),
    lambda x: lax.reduce_prod(x, (0, 1)),
    lambda x: lax.cumlogsumexp(x, 1),
    lambda x: lax.cumprod(x, 0, True),
    lambda x: lax.reduce_window_max(x, (2, 2), (1, 1), "SAME"),
    lambda x: lax.reduce_window_sum(x, (1, 2), (1, 2), "VALID"),
    lambda x: lax.sort(x, 1),
    lambda x: lax.top_k(x, 2)[0],
    lambda x: mul_add(x, x, x),
]


@pytest.mark.parametrize("i", range(len(F32_FUNS)))
def test_float32_smoke(rng, i):
    x = _distinct(rng, (2, 4), 0.5, 2.0).astype(np.float32)
    tu.check_grads(F32_FUNS[i], (x,), order=1)


@pytest.mark.parametrize("i", [0, 1, 2, 4, 6])
def test_grad_under_jit_matches_eager(x64, rng, i):
    x = _distinct(rng, (2, 4), 0.5, 2.0)

    def f(x):
        return jnp.sum(jnp.sin(F32_FUNS[i](x)))

    eager = np.asarray(core.grad(f)(x))
    np.testing.assert_allclose(np.asarray(core.grad(core.jit(f))(x)), eager, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(core.jit(core.grad(f))(x)), eager, rtol=1e-12)

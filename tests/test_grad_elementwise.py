"""Derivatives of the elementwise primitives (core/lax/elementwise.py).

Every differentiable primitive is checked to second order in both modes with `check_grads` in
float64: forward mode against central differences, reverse mode by the inner-product identity
(which also exercises the transpose rules of the linear primitives the jvp rules stage). Kinked
functions are sampled away from their kinks; the conventions at the kinks (JAX's) are checked
with hand-derived values. Non-differentiable primitives must give zero tangents without error.
"""
import numpy as np
import pytest
import scipy.special

import core
import core.numpy as jnp
from core import lax, test_util as tu
from core.test_util import check_grads

SHAPES = [(), (4,), (2, 3), (2, 1, 3)]


def _uniform(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, size=shape)


def _away_from_zero(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)


# name -> (function, input sampler); the samplers keep inputs inside the domain and off the kinks
UNARY = {
    "neg": (lax.neg, _uniform(-2, 2)),
    "sin": (lax.sin, _uniform(-2, 2)),
    "cos": (lax.cos, _uniform(-2, 2)),
    "square": (lax.square, _uniform(-2, 2)),
    "abs": (lax.abs, _away_from_zero(0.3, 2)),
    "exp": (lax.exp, _uniform(-2, 2)),
    "exp2": (lax.exp2, _uniform(-2, 2)),
    "log": (lax.log, _uniform(0.5, 3)),
    "log1p": (lax.log1p, _uniform(-0.5, 2)),
    "expm1": (lax.expm1, _uniform(-2, 2)),
    "tanh": (lax.tanh, _uniform(-2, 2)),
    "logistic": (lax.logistic, _uniform(-3, 3)),
    "tan": (lax.tan, _uniform(-1, 1)),
    "asin": (lax.asin, _uniform(-0.8, 0.8)),
    "acos": (lax.acos, _uniform(-0.8, 0.8)),
    "atan": (lax.atan, _uniform(-2, 2)),
    "sinh": (lax.sinh, _uniform(-2, 2)),
    "cosh": (lax.cosh, _uniform(-2, 2)),
    "asinh": (lax.asinh, _uniform(-2, 2)),
    "acosh": (lax.acosh, _uniform(1.3, 3)),
    "atanh": (lax.atanh, _uniform(-0.8, 0.8)),
    "sqrt": (lax.sqrt, _uniform(0.5, 3)),
    "rsqrt": (lax.rsqrt, _uniform(0.5, 3)),
    "cbrt": (lax.cbrt, _away_from_zero(0.5, 3)),
    "erf": (lax.erf, _uniform(-2, 2)),
    "erfc": (lax.erfc, _uniform(-2, 2)),
    "erf_inv": (lax.erf_inv, _uniform(-0.8, 0.8)),
    "lgamma": (lax.lgamma, _uniform(0.5, 4)),
    "digamma": (lax.digamma, _uniform(0.5, 4)),
    "integer_pow_3": (lambda x: lax.integer_pow(x, 3), _uniform(-2, 2)),
    "integer_pow_1": (lambda x: lax.integer_pow(x, 1), _uniform(-2, 2)),
    "integer_pow_-2": (lambda x: lax.integer_pow(x, -2), _away_from_zero(0.5, 2)),
    "reciprocal": (lax.reciprocal, _away_from_zero(0.5, 2)),
}

# one shape per primitive (a rotating sample), plus one size-0 case for a few
UNARY_CASES = [(name, shape) for name in UNARY for shape in tu.sample_cases(SHAPES, f"grad_{name}", n=1)]
UNARY_CASES += [(name, (0, 4)) for name in ("exp", "log", "abs", "digamma")]


@pytest.mark.parametrize("name,shape", UNARY_CASES)
def test_unary_grads(x64, rng, name, shape):
    fun, sample = UNARY[name]
    check_grads(fun, (sample(rng, shape),), order=2, modes=("fwd", "rev"))


# special values: negative arguments of lgamma/digamma (between poles), log near 0, integer_pow 0
def test_log_near_zero_grads(x64):
    x = np.array([1e-3, 3e-3, 1e-2])
    # central differences need eps well below x here; the rules themselves are exact
    check_grads(lax.log, (x,), order=2, eps=1e-7, atol=1e-5, rtol=1e-5)
    np.testing.assert_allclose(core.grad(lambda v: lax.log(v).sum())(x), 1 / x, rtol=1e-14)


def test_lgamma_digamma_negative_arguments(x64):
    x = np.array([-2.6, -1.3, -0.5, 0.25])
    check_grads(lax.lgamma, (x,), order=2)
    check_grads(lax.digamma, (x,), order=2)


def test_trigamma_accuracy_against_scipy(x64):
    # the jvp of digamma is polygamma(1, x), built from primitives: accurate to ~1e-12 in float64
    x = np.array([1e-3, 0.1, 0.5, 1.0, 2.5, 7.9, 8.0, 13.7, 100.0, 1e4, -0.5, -1.3, -2.7, -10.4])
    _, t = core.jvp(lax.digamma, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(np.asarray(t), scipy.special.polygamma(1, x), rtol=1e-12)
    # and its own derivative (polygamma(2, x)) by differentiating the construction
    g2 = core.grad(lambda v: core.grad(lambda w: lax.digamma(w).sum())(v).sum())(x[:10])
    np.testing.assert_allclose(np.asarray(g2), scipy.special.polygamma(2, x[:10]), rtol=1e-10)


def test_integer_pow_zero_exponent_has_zero_derivative(x64):
    x = np.array([0.0, 1.5, -2.0])
    np.testing.assert_array_equal(core.grad(lambda v: lax.integer_pow(v, 0).sum())(x), np.zeros(3))
    check_grads(lambda v: lax.integer_pow(v, 0), (x,), order=2)


# ----- complex: holomorphic rules ---------------------------------------------------------------

HOLOMORPHIC = {
    "exp": lax.exp, "log": lax.log, "sin": lax.sin, "cos": lax.cos, "tan": lax.tan, "tanh": lax.tanh,
    "sqrt": lax.sqrt, "rsqrt": lax.rsqrt, "asin": lax.asin, "acos": lax.acos, "atan": lax.atan,
    "sinh": lax.sinh, "cosh": lax.cosh, "asinh": lax.asinh, "acosh": lax.acosh, "atanh": lax.atanh,
    "log1p": lax.log1p, "expm1": lax.expm1, "logistic": lax.logistic, "exp2": lax.exp2,
    "square": lax.square, "integer_pow_3": lambda z: lax.integer_pow(z, 3),
}


@pytest.mark.parametrize("name", tu.sample_cases(list(HOLOMORPHIC), "grad_holomorphic", n=8))
def test_holomorphic_grads_complex128(x64, rng, name):
    # inputs off the branch cuts of log/sqrt/asin/acosh...: real part in (0.3, 0.7), imag > 0
    z = rng.uniform(0.3, 0.7, (3,)) + 1j * rng.uniform(0.2, 0.6, (3,))
    check_grads(HOLOMORPHIC[name], (z,), order=2)


def test_pow_and_div_complex128(x64, rng):
    z = rng.uniform(0.5, 1.5, (3,)) + 1j * rng.uniform(0.2, 0.6, (3,))
    w = rng.uniform(0.5, 1.5, (3,)) + 1j * rng.uniform(-0.5, 0.5, (3,))
    check_grads(lax.pow, (z, w), order=2)
    check_grads(lax.div, (z, w), order=2)


# ----- complex: non-holomorphic and linear (real, imag, conj, complex, abs) -----------------------
# The inner-product check is exact for real -> real functions, so these primitives are checked
# inside real -> real compositions (with complex constants, so a transpose with the wrong
# convention gives a wrong real gradient).

def _complex_mix(x, y):
    z = lax.complex(x, y)
    c = np.complex128(0.7 - 1.3j)
    w = lax.mul(z, lax.complex(y, lax.square(x)))
    return lax.add(lax.add(lax.real(lax.mul(lax.conj(z), c)), lax.imag(lax.mul(w, c))),
                   lax.abs(lax.mul(z, c)))


def test_complex_parts_and_abs_in_real_functions(x64, rng):
    x, y = rng.uniform(0.3, 2, (2, 3)), rng.uniform(-2, -0.3, (2, 3))
    check_grads(_complex_mix, (x, y), order=2)
    # broadcasting complex(x, y): the cotangent of the rank-0 operand is summed
    check_grads(lambda a, b: lax.abs(lax.mul(lax.complex(a, b), np.complex128(1 + 2j))),
                (x, np.float64(0.4)), order=2)
    # conj of a real operand gives a complex value: its cotangent is the real part
    check_grads(lambda a: lax.imag(lax.mul(lax.conj(a), np.complex128(2 + 3j))), (x,), order=2)


def test_complex_grad_conventions_hand_values(x64):
    # JAX's convention: gradients of real-valued functions of z are conj(df/dx + i df/dy)
    np.testing.assert_allclose(core.grad(lax.abs)(np.complex128(3 + 4j)), (3 - 4j) / 5, rtol=1e-15)
    np.testing.assert_allclose(core.grad(lax.real)(np.complex128(3 + 4j)), 1 + 0j)
    np.testing.assert_allclose(core.grad(lax.imag)(np.complex128(3 + 4j)), -1j)
    np.testing.assert_allclose(core.grad(lambda x: lax.imag(lax.mul(lax.conj(x), np.complex128(2 + 3j))))(1.5), 3.0)
    assert core.grad(lax.abs)(np.complex128(0j)) == 0  # no nan at the kink


# ----- binary primitives ---------------------------------------------------------------------

PAIR_SHAPES = [((), (4,)), ((4,), ()), ((2, 3), (2, 3)), ((2, 1, 3), (2, 4, 3)), ((0,), (0,))]

BINARY = {
    "add": (lax.add, _uniform(-2, 2), _uniform(-2, 2)),
    "sub": (lax.sub, _uniform(-2, 2), _uniform(-2, 2)),
    "mul": (lax.mul, _uniform(-2, 2), _uniform(-2, 2)),
    "div": (lax.div, _uniform(-2, 2), _away_from_zero(0.5, 2)),
    "pow": (lax.pow, _uniform(0.5, 2), _uniform(-2, 2)),
    "atan2": (lax.atan2, _uniform(-2, 2), _away_from_zero(0.5, 2)),
    "max": (lax.max, _uniform(-2, 2), _uniform(-2, 2)),
    "min": (lax.min, _uniform(-2, 2), _uniform(-2, 2)),
}


@pytest.mark.parametrize("name,shapes", [(n, s) for n in BINARY
                                         for s in tu.sample_cases(PAIR_SHAPES, f"grad_{n}", n=2)])
def test_binary_grads(x64, rng, name, shapes):
    fun, sample_x, sample_y = BINARY[name]
    x, y = sample_x(rng, shapes[0]), sample_y(rng, shapes[1])
    check_grads(fun, (x, y), order=2)


@pytest.mark.parametrize("shapes", tu.sample_cases(PAIR_SHAPES, "grad_rem", n=2))
def test_rem_grads(x64, rng, shapes):
    # x / y kept away from integers, where trunc(x / y) jumps: q = x / y has fraction in (0.2, 0.8)
    out = np.broadcast_shapes(*shapes)
    q = (rng.integers(-3, 3, size=out) + rng.uniform(0.2, 0.8, size=out)) * rng.choice([-1.0, 1.0], size=out)
    if shapes[1] == out:
        x = rng.uniform(0.5, 2.0, size=shapes[0])
        y = np.broadcast_to(x, out) / q
    else:  # a rank-0 divisor
        y = np.float64(0.7)
        x = q * y
    check_grads(lax.rem, (x, y), order=2)


def test_rem_derivatives_hand_values(x64):
    # rem(x, y) = x - y * trunc(x / y): d/dx = 1, d/dy = -trunc(x / y)
    gx, gy = core.grad(lax.rem, argnums=(0, 1))(4.0, 1.5)
    assert (float(gx), float(gy)) == (1.0, -2.0)
    assert float(core.grad(lax.rem, argnums=1)(-4.0, 1.5)) == 2.0


def test_pow_negative_base_integer_exponent(x64):
    x, y = np.array([-2.0, -0.5, 1.5, -1.2]), np.array([3, 2, -1, 0], np.int32)
    check_grads(lambda v: lax.pow(v, y), (x,), order=2)
    np.testing.assert_allclose(core.grad(lambda v: lax.pow(v, y).sum())(x), y * x ** (y - 1.0), rtol=1e-14)


def test_pow_at_zero_base(x64):
    # JAX's conventions: y == 0 (integer) gives derivative 0 in x; float y == 0 gives nan; the
    # derivative in y at x == 0 is taken as 0
    assert float(core.grad(lambda v: lax.pow(v, np.int32(0)))(0.0)) == 0.0
    assert np.isnan(float(core.grad(lambda v: lax.pow(v, 0.0))(0.0)))
    assert float(core.grad(lambda v: lax.pow(v, 1.0))(0.0)) == 1.0
    assert float(core.grad(lambda w: lax.pow(0.0, w))(2.0)) == 0.0
    assert float(core.grad(lambda w: lax.pow(0.0, w))(0.0)) == 0.0


def test_max_min_split_ties(x64):
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 5.0])
    gx, gy = core.grad(lambda a, b: lax.max(a, b).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(gy, [0.5, 0.0, 1.0])
    gx, gy = core.grad(lambda a, b: lax.min(a, b).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(gy, [0.5, 1.0, 0.0])
    # a rank-0 operand collects the gradient from every position it wins (half at a tie)
    g = core.grad(lambda b: lax.max(jnp.asarray(x), b).sum())(2.0)
    assert float(g) == 1.5


def test_abs_at_zero(x64):
    g = core.grad(lambda v: lax.abs(v).sum())(np.array([0.0, -1.0, 2.0]))
    np.testing.assert_array_equal(g, [1.0, -1.0, 1.0])


# ----- clamp and select_n -------------------------------------------------------------------------

@pytest.mark.parametrize("bound_shape", ["scalar", "full"])
def test_clamp_grads(x64, rng, bound_shape):
    x = rng.choice([-1.0, 1.0], (2, 3)) * rng.uniform(0.2, 1.8, (2, 3))
    shape = () if bound_shape == "scalar" else (2, 3)
    lo, hi = np.full(shape, -1.0) + rng.uniform(-0.1, 0.1, shape), np.full(shape, 1.0)
    check_grads(lax.clamp, (lo, x, hi), order=2)


def test_clamp_derivatives_follow_jax_at_ties(x64):
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    _, t = core.jvp(lambda v: lax.clamp(0.0, v, 1.0), (x,), (np.ones(5),))
    np.testing.assert_array_equal(t, [0.0, 0.0, 1.0, 0.0, 0.0])  # ties pass nothing, as JAX
    glo, ghi = core.grad(lambda lo, hi: lax.clamp(lo, jnp.asarray(x), hi).sum(), argnums=(0, 1))(0.0, 1.0)
    assert (float(glo), float(ghi)) == (1.0, 1.0)  # each bound is selected once (strictly)


def test_select_n_grads(x64, rng):
    a, b, c = (rng.standard_normal((2, 3)) for _ in range(3))
    which = np.array([[0, 1, 2], [2, 1, 0]], np.int32)
    check_grads(lambda *cs: lax.select_n(which, *cs), (a, b, c), order=2)
    pred = np.array([[True, False, True], [False, False, True]])
    check_grads(lambda u, v: lax.select_n(pred, u, v), (a, b), order=2)
    check_grads(lambda u, v: lax.select_n(np.bool_(True), u, v), (a, b), order=2)
    ga, gb, gc = core.grad(lambda *cs: lax.select_n(which, *cs).sum(), argnums=(0, 1, 2))(a, b, c)
    for i, g in enumerate((ga, gb, gc)):
        np.testing.assert_array_equal(g, (which == i).astype(float))


def test_select_n_with_one_constant_case(x64, rng):
    a = rng.standard_normal(4)
    pred = np.array([True, False, False, True])
    g = core.grad(lambda u: lax.select_n(pred, u, jnp.zeros(4, jnp.float64)).sum())(a)
    np.testing.assert_array_equal(g, (~pred).astype(float))


# ----- non-differentiable primitives -------------------------------------------------------------

def test_zero_derivative_float_primitives(x64):
    x = np.array([-1.7, 0.3, 2.5])
    for fun in (lax.sign, lax.floor, lax.ceil, lax.round,
                lambda v: lax.round(v, lax.RoundingMethod.TO_NEAREST_EVEN)):
        out, t = core.jvp(fun, (x,), (np.ones(3),))
        assert t.dtype == np.float64
        np.testing.assert_array_equal(t, np.zeros(3))
        np.testing.assert_array_equal(core.grad(lambda v: fun(v).sum())(x), np.zeros(3))
    _, t = core.jvp(lax.sign, (np.complex128([1 + 1j]),), (np.complex128([1j]),))
    np.testing.assert_array_equal(t, [0j])


def test_nondifferentiable_primitives_give_float0_tangents(x64):
    x, y = np.array([1.0, 2.0, 3.0]), np.array([2.0, 2.0, 2.0])
    for fun in (lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge):
        out, t = core.jvp(fun, (x, y), (np.ones(3), np.ones(3)))
        assert out.dtype == np.bool_ and t.dtype == core.dtypes.float0 and t.shape == (3,)
    out, t = core.jvp(lax.is_finite, (x,), (np.ones(3),))
    assert t.dtype == core.dtypes.float0
    # integer and boolean ops inside a differentiated function: no error, no derivative
    i = np.array([3, 5, 7], np.int32)

    def f(v):
        n = lax.convert_element_type(v, jnp.int32)
        bits = lax.add(lax.population_count(n), lax.clz(lax.shift_left(n, i)))
        bits = lax.xor(lax.or_(lax.and_(bits, i), lax.shift_right_logical(i, n)),
                       lax.shift_right_arithmetic(lax.not_(n), 1))
        mask = lax.bitwise_not(lax.lt(v, 2.0))
        return lax.add(lax.mul(v, lax.convert_element_type(bits, v.dtype)),
                       lax.convert_element_type(mask, v.dtype))

    g = core.grad(lambda v: f(v).sum())(x)
    np.testing.assert_array_equal(g, np.asarray(f(jnp.asarray(x)) - (x >= 2.0)) / x)


def test_nextafter_is_declared_non_differentiable(x64):
    # JAX raises here; we declare it non-differentiable (see its block): zero tangents, no error
    out, t = core.jvp(lax.nextafter, (np.array([1.0, 2.0]), np.array([2.0, 0.0])), (np.ones(2), np.ones(2)))
    np.testing.assert_array_equal(out, np.nextafter([1.0, 2.0], [2.0, 0.0]))
    np.testing.assert_array_equal(t, np.zeros(2))
    g = core.grad(lambda v: lax.nextafter(v, 2.0) + v)(1.0)
    assert float(g) == 1.0


# ----- float32 smoke checks (default tolerances, first order) -------------------------------------

def test_float32_smoke(rng):
    x = rng.uniform(0.5, 1.5, (3,)).astype(np.float32)
    y = rng.uniform(0.5, 1.5, (3,)).astype(np.float32)
    check_grads(lambda v: lax.tanh(lax.exp(v)), (x,), order=1)          # exponentials
    check_grads(lambda v: lax.atan(lax.asinh(lax.cosh(v))), (x,), order=1)  # trigonometric
    check_grads(lambda v: lax.lgamma(lax.erf_inv(lax.mul(v, 0.5))), (x,), order=1)  # special
    check_grads(lambda u, v: lax.max(lax.pow(u, v), lax.div(v, u)), (x, y), order=1)  # binary
    check_grads(lambda u, v: lax.abs(lax.complex(u, v)), (x, y), order=1)  # complex parts
    check_grads(lambda u: lax.select_n(np.array([True, False, True]), u, lax.sqrt(u)), (x,), order=1)


# ----- composition with jit --------------------------------------------------------------------

def _mixed(x, y):
    return lax.add(lax.mul(lax.pow(x, y), lax.digamma(x)),
                   lax.sub(lax.max(lax.atan2(x, y), lax.rem(x, y)),
                           lax.clamp(0.2, lax.logistic(lax.div(x, y)), 0.9))).sum()


def test_grad_under_jit_matches_eager(x64, rng):
    x, y = rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.7, 1.6, (2, 3))
    eager = core.grad(_mixed, argnums=(0, 1))(x, y)
    for g in (core.grad(core.jit(_mixed), argnums=(0, 1)), core.jit(core.grad(_mixed, argnums=(0, 1)))):
        for a, e in zip(g(x, y), eager, strict=True):
            np.testing.assert_allclose(a, e, rtol=1e-13, atol=1e-13)
    h_eager = core.hessian(lambda v: lax.sqrt(lax.tanh(v)).sum())(x[0])
    h_jit = core.jit(core.hessian(lambda v: lax.sqrt(lax.tanh(v)).sum()))(x[0])
    np.testing.assert_allclose(h_jit, h_eager, rtol=1e-13, atol=1e-13)

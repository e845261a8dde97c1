"""Differentiation through control flow: cond/switch, scan (and map, fori_loop with static bounds),
while_loop (forward mode only). Derivatives are checked against central differences and the
inner-product identity (`check_grads`, float64, order 2) and, where easy, against the same function
written as a Python loop, whose derivative goes through no control-flow rule (an independent oracle).
"""
import re

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax, test_util as tu

pytestmark = pytest.mark.usefixtures("x64")

_FWD_REV = ("fwd", "rev")


def _allclose(actual, expected, atol=1e-10, rtol=1e-10):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), atol=atol, rtol=rtol)


# ----- cond / switch --------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,pred", [((), True), ((3,), False), ((2, 1, 3), True), ((0,), False)])
def test_cond_grads(rng, shape, pred):
    x, y = rng.normal(size=shape), rng.normal(size=shape)

    def f(x, y):
        return lax.cond(pred, lambda a, b: jnp.sin(a) * b, lambda a, b: jnp.cos(b) + a * a, x, y)

    tu.check_grads(f, (x, y), order=2, modes=_FWD_REV)
    expected = (np.cos(x) * y, np.sin(x)) if pred else (2 * x, -np.sin(y))
    dx, dy = core.grad(lambda x, y: f(x, y).sum(), argnums=(0, 1))(x, y)
    _allclose(dx, expected[0])
    _allclose(dy, expected[1])


@pytest.mark.parametrize("pred", [True, False])
def test_cond_closure_and_partial_dependence(rng, pred):
    """A branch closes over an outer array (it becomes a const operand); the outputs depend on only
    some inputs, differently per branch (so tangents/residuals differ per branch); an integer
    operand rides along with a zero (float0) tangent."""
    w = rng.normal(size=(3,))
    x, y = rng.normal(size=(3,)), rng.normal(size=(3,))

    def f(x, y, w):
        def true_fun(ops):
            a, b, k = ops
            return jnp.sin(a * w), b * 2.0 + k.astype(a.dtype), w
        def false_fun(ops):
            a, b, k = ops
            return a * 3.0, jnp.cos(a) * w, a * b
        return lax.cond(pred, true_fun, false_fun, (x, y, jnp.int32(2)))

    tu.check_grads(f, (x, y, w), order=2, modes=_FWD_REV)
    # partial dependence: d out[1] / d x is zero in the true branch, d out[0] / d y always zero
    _, (t0, t1, _) = core.jvp(f, (x, y, w), (np.ones(3), np.zeros(3), np.zeros(3)))
    _allclose(t0, np.cos(x * w) * w if pred else 3.0 * np.ones(3))
    _allclose(t1, np.zeros(3) if pred else -np.sin(x) * w)


@pytest.mark.parametrize("index", [-1, 1, 5])  # both clamped ends and the middle
def test_switch_three_branches(rng, index):
    x = rng.normal(size=(4,))
    branches = [lambda x: jnp.sin(x), lambda x: x * x * x, lambda x: jnp.cos(x) * x]
    f = lambda x: lax.switch(index, branches, x)  # noqa: E731
    tu.check_grads(f, (x,), order=2, modes=_FWD_REV)
    expected = [np.cos(x), 3 * x * x, np.cos(x) - x * np.sin(x)][min(max(index, 0), 2)]
    _allclose(core.grad(lambda x: f(x).sum())(x), expected)


@pytest.mark.parametrize("p,q", [(True, False), (False, True)])
def test_nested_cond(rng, p, q):
    x, y = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))

    def f(x, y):
        def outer_true(x, y):
            return lax.cond(q, lambda a: jnp.sin(a) * y, lambda a: a * x, x * y)
        return lax.cond(p, outer_true, lambda x, y: jnp.cos(x) - y, x, y)

    tu.check_grads(f, (x, y), order=2, modes=_FWD_REV)


def test_cond_with_traced_predicate_under_grad(rng):
    """The predicate is computed from a non-differentiated argument inside the traced function."""
    x = rng.normal(size=(3,))

    def f(x, s):
        return lax.cond(s > 0, lambda x: jnp.sin(x) * x, lambda x: x * 2.0, x).sum()

    for s, expected in ((1.0, np.cos(x) * x + np.sin(x)), (-1.0, 2.0 * np.ones(3))):
        for g in (core.grad(f), core.jit(core.grad(f)), core.grad(core.jit(f))):
            _allclose(g(x, s), expected)


def test_float32_smoke(rng):
    x = rng.normal(size=(3,)).astype(np.float32)
    xs = rng.normal(size=(4, 3)).astype(np.float32)
    tu.check_grads(lambda x: lax.cond(True, jnp.sin, jnp.cos, x), (x,), order=1, modes=_FWD_REV)
    tu.check_grads(lambda x, xs: _rnn(x, xs, x, 0.5), (x, xs), order=1, modes=_FWD_REV)


# ----- scan / map / fori_loop -------------------------------------------------------------------------

def _cumprod(xs):
    return lax.scan(lambda c, x: (c * x, c * x), jnp.ones(xs.shape[1:], xs.dtype), xs)


@pytest.mark.parametrize("shape", [(4,), (1, 3), (0, 2)])
def test_scan_cumprod(rng, shape):
    xs = rng.uniform(0.5, 1.5, size=shape)
    carry, ys = _cumprod(xs)
    _allclose(ys, np.cumprod(xs, axis=0))
    tu.check_grads(_cumprod, (xs,), order=2, modes=_FWD_REV)
    # d prod / d x_i = prod / x_i (no zeros in xs)
    _allclose(core.grad(lambda xs: _cumprod(xs)[0].sum())(xs), np.prod(xs, axis=0) / xs)


def _rnn(h0, xs, w, u, reverse=False):
    def step(h, x):
        h = jnp.sin(h * w + x * u)
        return h, h * h
    return lax.scan(step, h0, xs, reverse=reverse)


def _rnn_loop_loss(h0, xs, w, u, reverse=False):
    """`_rnn`'s final carry plus all its ys, summed, as a Python loop of eager operations (no scan
    rule involved). `xs` is a NumPy array (not differentiated)."""
    h, total = h0, 0.0
    order = range(xs.shape[0] - 1, -1, -1) if reverse else range(xs.shape[0])
    for i in order:
        h = jnp.sin(h * w + xs[i] * u)
        total = total + (h * h).sum()
    return h.sum() + total


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_rnn_grads(rng, reverse):
    # moderate weights keep the order-2 central differences accurate
    h0, xs = rng.normal(size=(3,)), 0.5 * rng.normal(size=(4, 3))
    w, u = 0.5 * rng.normal(size=(3,)), rng.uniform(0.5, 1.0)
    f = lambda h0, xs, w, u: _rnn(h0, xs, w, u, reverse)  # noqa: E731
    tu.check_grads(f, (h0, xs, w, u), order=2, modes=_FWD_REV)
    def loss(h0, w, u):
        carry, ys = f(h0, xs, w, u)
        return carry.sum() + ys.sum()
    expected = core.grad(lambda h0, w, u: _rnn_loop_loss(h0, xs, w, u, reverse), argnums=(0, 1, 2))(h0, w, u)
    actual = core.grad(loss, argnums=(0, 1, 2))(h0, w, u)
    for a, e in zip(actual, expected, strict=True):
        _allclose(a, e)


@pytest.mark.parametrize("length", [0, 1])
def test_scan_short(rng, length):
    h0, xs, w = rng.normal(size=(2,)), rng.normal(size=(length, 2)), rng.normal(size=(2,))
    f = lambda h0, xs, w: _rnn(h0, xs, w, 0.5)  # noqa: E731
    tu.check_grads(f, (h0, xs, w), order=2, modes=_FWD_REV)
    g_h0, g_w = core.grad(lambda h0, w: f(h0, xs, w)[0].sum(), argnums=(0, 1))(h0, w)
    if length == 0:
        _allclose(g_h0, np.ones(2))
        _allclose(g_w, np.zeros(2))
    else:
        _allclose(g_h0, np.cos(h0 * w + xs[0] * 0.5) * w)


def test_scan_inside_scan(rng):
    c0, xs, w = rng.normal(size=(2,)), rng.normal(size=(3, 2, 2)), rng.normal(size=(2,))

    def f(c0, xs, w):
        def outer(c, row):
            inner_c, inner_ys = lax.scan(lambda d, x: (jnp.sin(d * w) + x, d * x), c, row)
            return inner_c * 0.9, inner_ys.sum(0)
        return lax.scan(outer, c0, xs)

    def loss_loop(c0, w):
        c, total = c0, 0.0
        for i in range(xs.shape[0]):
            d, y = c, 0.0
            for j in range(xs.shape[1]):
                y = y + d * xs[i, j]
                d = jnp.sin(d * w) + xs[i, j]
            c = d * 0.9
            total = total + (y * y).sum()
        return c.sum() + total

    def loss(c0, w):
        c, ys = f(c0, xs, w)
        return c.sum() + (ys * ys).sum()

    # under jit: each derivative program compiles once instead of op by op (the rules run the same)
    tu.check_grads(core.jit(f), (c0, xs, w), order=2, modes=_FWD_REV)
    for a, e in zip(core.grad(loss, argnums=(0, 1))(c0, w), core.grad(loss_loop, argnums=(0, 1))(c0, w),
                    strict=True):
        _allclose(a, e)


def test_scan_with_cond_inside(rng):
    xs, w = rng.normal(size=(4, 3)), rng.normal(size=(3,))

    def f(xs, w):
        def body(c, x):
            i, h = c
            h = lax.cond(i % 2 == 0, lambda h: jnp.sin(h * w) + x, lambda h: h * x, h)
            return (i + 1, h), h
        return lax.scan(body, (0, jnp.zeros(3)), xs)[1]

    # under jit: each derivative program compiles once instead of op by op (the rules run the same)
    tu.check_grads(core.jit(f), (xs, w), order=2, modes=_FWD_REV)


def test_map_grad(rng):
    xs = rng.normal(size=(5, 3))
    f = lambda xs: lax.map(lambda x: jnp.sin(x) * x.sum(), xs)  # noqa: E731
    tu.check_grads(f, (xs,), order=2, modes=_FWD_REV)
    g = core.grad(lambda xs: f(xs).sum())(xs)
    expected = np.cos(xs) * xs.sum(1, keepdims=True) + np.sin(xs).sum(1, keepdims=True)
    _allclose(g, expected)


def test_fori_loop_static_bounds_reverse_mode(rng):
    x, w = rng.normal(size=(3,)), rng.normal(size=(3,))

    def f(x, w):
        return lax.fori_loop(1, 4, lambda i, c: jnp.sin(c * w) * i, x)

    def f_loop(x, w):
        for i in range(1, 4):
            x = jnp.sin(x * w) * float(i)
        return x

    tu.check_grads(f, (x, w), order=2, modes=_FWD_REV)
    for a, e in zip(core.grad(lambda *a: f(*a).sum(), argnums=(0, 1))(x, w),
                    core.grad(lambda *a: f_loop(*a).sum(), argnums=(0, 1))(x, w), strict=True):
        _allclose(a, e)


def _fixed_point(x0, n):
    """The seed example's iteration x -> (x**2 + 21) / 10 (fixed points 3 and 7)."""
    return lax.fori_loop(0, n, lambda i, x: (x ** 2 + 21) / 10, x0)


def test_seed_fori_loop_derivatives():
    # 5 steps from 4.0: the derivative is the product of g'(x_k) = x_k / 5 along the orbit
    xs, x = [], 4.0
    for _ in range(5):
        xs.append(x)
        x = (x * x + 21.0) * 0.1
    expected = np.prod(np.array(xs) / 5.0)
    for g in (core.grad(lambda x: _fixed_point(x, 5)), core.jit(core.grad(lambda x: _fixed_point(x, 5))),
              core.grad(core.jit(lambda x: _fixed_point(x, 5)))):
        _allclose(g(4.0), expected)
    _allclose(core.jvp(lambda x: _fixed_point(x, 5), (4.0,), (1.0,))[1], expected)
    # 500 steps converge to the attracting fixed point 3, where the derivative is 0.6 ** k -> 0
    _allclose(_fixed_point(4.0, 500), 3.0)
    _allclose(core.grad(lambda x: _fixed_point(x, 500))(4.0), 0.0, atol=1e-12)
    # second derivative through the loop, against the Python loop
    _allclose(core.grad(core.grad(lambda x: _fixed_point(x, 3)))(4.0), _second_derivative_loop(4.0, 3))


def test_readme_fori_loop_step_gradient(rng):
    """The README's jitted step `fori_loop(0, 10, lambda i, w: w - 0.1 * x.T @ tanh(x @ w), w)`,
    differentiated in both modes, against the same step as a Python loop."""
    w0, x = 0.5 * rng.normal(size=(4, 4)), rng.normal(size=(2, 4))

    def step(w, x, n=10):
        return lax.fori_loop(0, n, lambda i, w: w - 0.1 * x.T @ jnp.tanh(x @ w), w)

    def step_loop(w, x, n=10):
        for _ in range(n):
            w = w - 0.1 * x.T @ jnp.tanh(x @ w)
        return w

    loss = lambda f: lambda w, x: (f(w, x) ** 2).sum()  # noqa: E731
    expected = core.grad(loss(step_loop), argnums=(0, 1))(w0, x)
    for g in (core.grad(loss(step), argnums=(0, 1)), core.jit(core.grad(loss(step), argnums=(0, 1)))):
        for a, e in zip(g(w0, x), expected, strict=True):
            _allclose(a, e)
    _allclose(core.jacfwd(step)(w0, x), core.jacrev(step)(w0, x))
    tu.check_grads(core.jit(lambda w, x: step(w, x, 3)), (w0, x), order=2, modes=_FWD_REV)


def _second_derivative_loop(x, n):
    """d^2/dx^2 of n steps of g(x) = (x^2 + 21) / 10 by forward accumulation of (x, x', x'')."""
    d1, d2 = 1.0, 0.0
    for _ in range(n):
        x, d1, d2 = (x * x + 21.0) * 0.1, 0.2 * x * d1, 0.2 * (d1 * d1 + x * d2)
    return d2


# ----- while_loop: forward mode only ------------------------------------------------------------------

def _while_fn(x, w):
    def body(c):
        i, h = c
        return i + 1, jnp.sin(h * w) + h
    return lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]


def test_while_loop_forward_mode(rng):
    x, w = rng.normal(size=(3,)), rng.normal(size=(3,))
    tu.check_grads(_while_fn, (x, w), order=2, modes=("fwd",))

    def loop(x, w):
        for _ in range(3):
            x = jnp.sin(x * w) + x
        return x

    for a, e in ((core.jacfwd(_while_fn)(x, w), core.jacfwd(loop)(x, w)),
                 (core.jacfwd(_while_fn, argnums=1)(x, w), core.jacfwd(loop, argnums=1)(x, w)),
                 (core.jvp(_while_fn, (x, w), (w, x))[1], core.jvp(loop, (x, w), (w, x))[1]),
                 (core.jit(core.jacfwd(_while_fn))(x, w), core.jacfwd(loop)(x, w))):
        _allclose(a, e)


def test_while_loop_tangent_enters_through_body_const(rng):
    """Only a closed-over const has a tangent: the carry tangent starts at zero and becomes nonzero."""
    x, w = rng.normal(size=(3,)), rng.normal(size=(3,))
    t = core.jvp(lambda w: _while_fn(x, w), (w,), (np.ones(3),))[1]
    eps = 1e-6
    numeric = (np.asarray(_while_fn(x, w + eps)) - np.asarray(_while_fn(x, w - eps))) / (2 * eps)
    _allclose(t, numeric, atol=1e-7, rtol=1e-7)


_WHILE_GRAD_ERROR = re.escape("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
                              "dynamic start/stop values. Try using lax.scan, or lax.fori_loop with constant "
                              "start/stop.")


def test_while_loop_reverse_mode_error(rng):
    x, w = rng.normal(size=(3,)), rng.normal(size=(3,))
    with pytest.raises(ValueError, match=_WHILE_GRAD_ERROR):
        core.grad(lambda x: _while_fn(x, w).sum())(x)
    with pytest.raises(ValueError, match=_WHILE_GRAD_ERROR):
        core.jit(core.grad(lambda x: _while_fn(x, w).sum()))(x)
    # fori_loop with a traced bound is a while loop: forward mode works, reverse mode raises
    f = core.jit(lambda x, n: lax.fori_loop(0, n, lambda i, c: jnp.sin(c) * 1.5, x))
    _, t = core.jvp(lambda x: f(x, 3), (x,), (np.ones(3),))
    expected = np.ones(3)
    c = x
    for _ in range(3):
        expected, c = expected * np.cos(c) * 1.5, np.sin(c) * 1.5
    _allclose(t, expected)
    with pytest.raises(ValueError, match=_WHILE_GRAD_ERROR):
        core.grad(lambda x: f(x, 3).sum())(x)


def test_while_with_non_differentiated_carry_only_in_grad(rng):
    """A while loop whose carries do not depend on the differentiated input stays known: grad works."""
    x = rng.normal(size=(3,))

    def f(x):
        n = lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, 1.0)
        return (jnp.sin(x) * n).sum()

    _allclose(core.grad(f)(x), np.cos(x) * 16.0)


# ----- composition with jit -------------------------------------------------------------------------

def test_grad_jit_composition(rng):
    h0, xs, w = rng.normal(size=(3,)), rng.normal(size=(4, 3)), rng.normal(size=(3,))

    def f(h0, xs, w):
        c, ys = _rnn(h0, xs, w, 0.7)
        return lax.cond(True, lambda a: (a * a).sum(), lambda a: a.sum(), c) + ys.sum()

    eager = core.grad(f, argnums=(0, 1, 2))(h0, xs, w)
    for g in (core.jit(core.grad(f, argnums=(0, 1, 2))), core.grad(core.jit(f), argnums=(0, 1, 2))):
        for a, e in zip(g(h0, xs, w), eager, strict=True):
            _allclose(a, e, atol=1e-12, rtol=1e-12)
    # the oracle: the same loss as Python loops (final carry squared instead of summed)
    def loss_loop(h0, w):
        h, total = h0, 0.0
        for i in range(xs.shape[0]):
            h = jnp.sin(h * w + xs[i] * 0.7)
            total = total + (h * h).sum()
        return (h * h).sum() + total

    for a, e in zip(eager[::2], core.grad(loss_loop, argnums=(0, 1))(h0, w), strict=True):
        _allclose(a, e)

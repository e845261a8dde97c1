"""lax.reduce with any associative computation (`reduce_p`): values against NumPy loops, eagerly
and under jit, the variadic argmax, derivatives against finite differences, and the errors."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import lax
from core import test_util as tu


def _add(a, b):
    return a + b


def _argmax_pairs(a, b):
    # (value, index) pairs: the larger value wins, the lower index on ties
    (av, ai), (bv, bi) = a, b
    pick = (av > bv) | ((av == bv) & (ai < bi))
    return lax.select(pick, av, bv), lax.select(pick, ai, bi)


def _logaddexp_loop(x, axis):
    # float64 oracle: fold np.logaddexp along `axis` one element at a time
    x = np.moveaxis(np.asarray(x, np.float64), axis, 0)
    acc = np.full(x.shape[1:], -np.inf)
    for row in x:
        acc = np.logaddexp(acc, row)
    return acc


@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
def test_lambda_add_logaddexp_maxabs_and_argmax(rng, use_jit):
    x = tu.rand(rng, (3, 5), np.float32)
    wrap = core.jit if use_jit else (lambda f: f)
    a = jnp.asarray(x)
    # a lambda is not a lax monoid: it goes through reduce_p (the jaxpr shows it)
    assert "reduce[" in str(core.make_jaxpr(lambda v: lax.reduce(v, 0.0, _add, (1,)))(a))
    tu.assert_allclose(wrap(lambda v: lax.reduce(v, 0.0, _add, (0, 1)))(a), np.float64(x).sum(), np.float32,
                       atol=1e-5)
    tu.assert_allclose(wrap(lambda v: lax.reduce(v, -np.inf, jnp.logaddexp, (1,)))(a), _logaddexp_loop(x, 1),
                       np.float32)
    maxabs = wrap(lambda v: lax.reduce(v, 0.0, lambda p, q: lax.max(lax.abs(p), lax.abs(q)), (0,)))(a)
    tu.assert_allclose(maxabs, np.abs(x).max(0), np.float32)
    # variadic: argmax with ties broken towards the lower index, as np.argmax does
    x[1, 3] = x[1, 1] = x[1].max() + 1
    idx = np.broadcast_to(np.arange(5, dtype=np.int32), (3, 5))
    vals, where = wrap(lambda v, i: lax.reduce((v, i), (-np.inf, np.int32(0)), _argmax_pairs, (1,)))(
        jnp.asarray(x), jnp.asarray(idx))
    np.testing.assert_array_equal(np.asarray(where), np.argmax(x, 1))
    np.testing.assert_array_equal(np.asarray(vals), x.max(1))
    assert vals.dtype == np.float32 and where.dtype == np.int32


def test_grads_against_finite_differences(rng):
    x = tu.rand(rng, (3, 4), np.float32)
    tu.check_grads(lambda v: lax.reduce(v, 0.0, _add, (1,)), (x,), order=1, rng=rng)
    # odd and even lengths: the pairwise tree pads the odd one with the init value
    tu.check_grads(lambda v: lax.reduce(v, -np.inf, jnp.logaddexp, (0, 1)), (x,), order=1, rng=rng, rtol=2e-2)
    g = core.grad(lambda v: lax.reduce(v, -np.inf, jnp.logaddexp, (0, 1)))(x)
    e = np.exp(np.float64(x))
    tu.assert_allclose(g, e / e.sum(), np.float32)  # d logsumexp = softmax
    # a lambda product over an odd axis: d/dx_j of prod(x)**2 is 2 prod(x)**2 / x_j
    y = np.float32([[1.0, 2.0, 3.0], [-1.5, 0.5, 2.5]])
    g = core.grad(lambda v: (lax.reduce(v, 1.0, lambda p, q: p * q, (1,)) ** 2).sum())(y)
    p = np.float64(y).prod(1, keepdims=True)
    tu.assert_allclose(g, 2 * p * p / np.float64(y), np.float32)


def test_errors_name_the_problem():
    a = jnp.ones((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"reduce: got 2 operands but 1 init values"):
        lax.reduce((a, a), (0.0,), lambda p, q: p, (0,))
    with pytest.raises(TypeError, match=r"operands must have the same shape, got \(float32\[2,3\], float32\[3\]\)"):
        lax.reduce((a, a[0]), (0.0, 0.0), lambda p, q: p, (0,))
    with pytest.raises(TypeError, match=r"computation must return 2 value\(s\), one per operand, got 1"):
        lax.reduce((a, a), (0.0, 0.0), lambda p, q: p[0], (0,))
    with pytest.raises(ValueError, match=r"dimensions \(2,\) are out of range"):
        lax.reduce(a, 0.0, _add, (2,))

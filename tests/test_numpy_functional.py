"""apply_along_axis, apply_over_axes, piecewise, isscalar and iterable against NumPy in float64 (and
float32), derivatives against finite differences, and jitted runs."""
import numpy as np
import pytest

import core
import core.numpy as jnp
from core import test_util as tu

ALONG = [
    (lambda m: (lambda v: m.sum(v * v)), 0, (3, 4)),
    (lambda m: (lambda v: m.sum(v * v)), -1, (2, 3, 4)),
    (lambda m: (lambda v: m.cumsum(v)[::-1]), 1, (2, 3, 4)),
    (lambda m: (lambda v: m.outer(v, v)), 1, (2, 3)),
    (lambda m: (lambda v: v[0] - v[-1]), 0, (4,)),
]


@pytest.mark.parametrize("case", range(len(ALONG)))
def test_apply_along_axis_matches_numpy(rng, x64, case):
    make, axis, shape = ALONG[case]
    a = rng.standard_normal(shape)
    out = jnp.apply_along_axis(make(jnp), axis, a)
    tu.assert_allclose(out, np.apply_along_axis(make(np), axis, a), np.float64, atol=1e-12, rtol=1e-12)
    tu.check_grads(lambda x: jnp.apply_along_axis(make(jnp), axis, x), (a,), order=1)
    a32 = a.astype(np.float32)
    tu.assert_allclose(jnp.apply_along_axis(make(jnp), axis, a32),
                       np.apply_along_axis(make(np), axis, a32.astype(np.float64)), np.float64, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name,axes", [("sum", [0, 2]), ("mean", [1]), ("max", (0, 1, 2)), ("cumsum", [1])])
def test_apply_over_axes_matches_numpy(rng, name, axes):
    a = rng.standard_normal((2, 3, 4)).astype(np.float32)
    out = jnp.apply_over_axes(getattr(jnp, name), a, axes)
    tu.assert_allclose(out, np.apply_over_axes(getattr(np, name), a.astype(np.float64), axes), np.float32,
                       atol=1e-5, rtol=1e-5)


X = np.array([-2.5, -1.0, -0.2, 0.3, 1.5, 2.0, 3.7])
PIECES = [
    (lambda x: [x < 0, x >= 0], lambda m: [lambda v: -v, lambda v: v ** 2]),
    (lambda x: [x < 0], lambda m: [lambda v: m.sin(v), lambda v: v * 3.0]),
    (lambda x: [x < 0, x > 1], lambda m: [lambda v: v - 1, 7.0]),
    (lambda x: [x < 1, x < 0], lambda m: [1.0, 2.0, lambda v: v / 2]),   # the later condition wins
    (lambda x: np.array([x > 2, x < -2]), lambda m: [lambda v, k: v * k, lambda v, k: v + k]),
]


@pytest.mark.parametrize("case", range(len(PIECES)))
def test_piecewise_matches_numpy(x64, case):
    conds, funcs = PIECES[case]
    extra = (3.0,) if case == 4 else ()
    out = jnp.piecewise(X, conds(X), funcs(jnp), *extra)
    assert out.dtype == np.float64
    tu.assert_allclose(out, np.piecewise(X, conds(X), funcs(np), *extra), np.float64, atol=1e-15, rtol=1e-15)
    # derivative in x with the conditions fixed: that of the selected piece
    tu.check_grads(lambda v: jnp.piecewise(v, conds(X), funcs(jnp), *extra), (X,), order=1)


def test_piecewise_and_apply_under_jit():
    f = core.jit(lambda x: (jnp.piecewise(x, [x < 0], [lambda v: -v, lambda v: v * 2]),
                            jnp.apply_along_axis(jnp.sum, 0, x[:6].reshape(2, 3))))
    x = X.astype(np.float32)
    p, s = f(x)
    tu.assert_allclose(p, np.piecewise(x, [x < 0], [lambda v: -v, lambda v: v * 2]), np.float32)
    tu.assert_allclose(s, x[:6].reshape(2, 3).sum(0), np.float32, atol=1e-6, rtol=1e-6)
    with pytest.raises(ValueError, match="funclist must have 2 or 3 entries, got 1"):
        jnp.piecewise(x, [x < 0, x > 1], [1.0])


def test_isscalar_and_iterable():
    for value in (3, 2.5, 1j, True, np.float32(1.0), np.int8(3), "s", [1], np.ones(2), jnp.ones(2), (1, 2)):
        assert jnp.isscalar(value) == np.isscalar(value), value
        assert jnp.iterable(value) == np.iterable(value), value
    # JAX's rule (NumPy says False): 0-d arrays are scalars
    assert jnp.isscalar(jnp.float32(2.0)) and jnp.isscalar(np.array(2.0))
    assert not jnp.iterable(jnp.float32(2.0)) and not np.iterable(np.array(2.0))

"""nn.functions (activations, softmax family, one_hot, standardize) and nn.losses against NumPy
float64 formulas written here, hand-derived values, and check_grads in float64."""
import numpy as np
import pytest
import scipy.special as sp

import core
import core.numpy as jnp
from core import test_util as tu
from core.test_util import check_grads
from nn import functions as F
from nn import losses as L

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# ----- NumPy float64 oracles ------------------------------------------------------------------

def _np_elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _np_log_softmax(x, axis=-1):
    return x - sp.logsumexp(x, axis=axis, keepdims=True)


ORACLES = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "relu6": (F.relu6, lambda x: np.clip(x, 0, 6)),
    "gelu_tanh": (F.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "gelu_exact": (lambda x: F.gelu(x, approximate=False), lambda x: x * sp.ndtr(x)),
    "silu": (F.silu, lambda x: x * sp.expit(x)),
    "elu": (lambda x: F.elu(x, 0.7), lambda x: _np_elu(x, 0.7)),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x >= 0, x, 0.2 * x)),
    "selu": (F.selu, lambda x: _SELU_SCALE * _np_elu(x, _SELU_ALPHA)),
    "softplus": (F.softplus, lambda x: np.logaddexp(x, 0)),
    "sigmoid": (F.sigmoid, sp.expit),
    "log_sigmoid": (F.log_sigmoid, lambda x: -np.logaddexp(0, -x)),
    "softmax": (F.softmax, _np_softmax),
    "log_softmax": (F.log_softmax, _np_log_softmax),
    "logsumexp": (lambda x: F.logsumexp(x, axis=-1), lambda x: sp.logsumexp(x, axis=-1)),
}

# low-precision transcendental functions round several times: a few ulps of their dtype
_LOW_TOL = {np.dtype(jnp.float16): 5e-3, np.dtype(jnp.bfloat16): 4e-2}


# each function gets its own deterministic sample of (shape, dtype) cases
_CASES = [(name, shape, dtype) for name in sorted(ORACLES) for shape, dtype in tu.sample_cases(
    tu.product([(), (5,), (2, 3), (0, 3)], tu.FLOAT_DTYPES), f"nn_functions_{name}", n=3)]


@pytest.mark.parametrize("name,shape,dtype", _CASES)
def test_function_matches_numpy(rng, name, shape, dtype):
    if name in ("softmax", "log_softmax", "logsumexp") and shape == ():
        shape = (4,)  # they reduce over the last axis
    fn, oracle = ORACLES[name]
    x = tu.rand(rng, shape, dtype, low=-8.0, high=8.0)
    out = fn(jnp.asarray(x))
    expected = tu.numpy_oracle(oracle, x)
    assert out.shape == expected.shape and out.dtype == np.dtype(dtype)
    tol = _LOW_TOL.get(np.dtype(dtype), 2e-6)
    tu.assert_allclose(out, expected, dtype, atol=tol, rtol=tol)


# values far in both tails: overflow or cancellation in a naive formula shows here
_EXTREME = np.array([-1e4, -200.0, -90.0, -30.0, -1.0, -1e-3, 0.0, 1e-3, 1.0, 30.0, 90.0, 200.0, 1e4])


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_function_large_arguments_float32(name):
    fn, oracle = ORACLES[name]
    x = _EXTREME.astype(np.float32)
    out = np.asarray(fn(jnp.asarray(x)))
    expected = tu.numpy_oracle(oracle, x)
    assert np.all(np.isfinite(out)), f"{name} gave non-finite values: {out}"
    # relative to float32 (the exact gelu's erfc carries a few ulps more)
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-30)


def test_integer_inputs_become_float():
    out = F.relu(jnp.array([-1, 2]))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0])
    assert F.softmax(np.array([1, 1])).dtype == np.float32
    np.testing.assert_allclose(np.asarray(F.sigmoid(0)), 0.5)


def test_softmax_axis_and_tuple_axes(rng):
    x = rng.uniform(-5, 5, (2, 3, 4)).astype(np.float32)
    tu.assert_allclose(F.softmax(x, axis=1), _np_softmax(x.astype(np.float64), axis=1), np.float32)
    tu.assert_allclose(F.log_softmax(x, axis=(0, 2)), _np_log_softmax(x.astype(np.float64), axis=(0, 2)),
                       np.float32, atol=1e-5)


def test_softmax_where_masks_entries():
    x = np.array([[1.0, 2.0, 3.0, 50.0], [0.0, 0.0, 0.0, 0.0]], np.float32)
    mask = np.array([True, False, True, False])
    expected = np.zeros((2, 4))
    for i in range(2):
        e = np.exp(x[i, mask].astype(np.float64))
        expected[i, mask] = e / e.sum()
    tu.assert_allclose(F.softmax(x, where=mask), expected, np.float32)
    log_expected = np.where(mask, np.log(np.where(mask, expected, 1.0)), -np.inf)
    tu.assert_allclose(F.log_softmax(x, where=mask), log_expected, np.float32)


@pytest.mark.parametrize("name,fn,x", [
    ("relu", F.relu, [0.0, -1.0, 1.0]),
    ("relu6", F.relu6, [0.0, 6.0, 3.0, 7.0]),
    ("leaky_relu", F.leaky_relu, [0.0, -1.0]),
])
def test_derivatives_at_kinks_are_jax_s(name, fn, x):
    # JAX's convention: relu'(0) = 0, relu6'(0) = relu6'(6) = 0, leaky_relu'(0) = 1 (the x >= 0 side)
    expected = {"relu": [0.0, 0.0, 1.0], "relu6": [0.0, 0.0, 1.0, 0.0], "leaky_relu": [1.0, 0.01]}[name]
    g = core.grad(lambda v: jnp.sum(fn(v)))(jnp.array(x))
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-6)


def test_gradients_finite_in_the_tails():
    x = jnp.array([-1e4, -100.0, 100.0, 1e4])
    for fn in (F.softplus, F.log_sigmoid, F.sigmoid, F.elu, F.selu, F.silu, lambda v: F.gelu(v, False)):
        g = np.asarray(core.grad(lambda v: jnp.sum(fn(v)))(x))
        assert np.all(np.isfinite(g)), (fn, g)
    g = np.asarray(core.grad(lambda v: jnp.sum(F.log_sigmoid(v)))(x))
    np.testing.assert_allclose(g, [1.0, 1.0, np.exp(-100.0), 0.0], rtol=1e-5, atol=1e-40)


_SMOOTH = [F.gelu, lambda x: F.gelu(x, approximate=False), F.silu, lambda x: F.elu(x, 0.5), F.selu,
           F.softplus, F.sigmoid, F.log_sigmoid, F.softmax, F.log_softmax, lambda x: F.logsumexp(x, axis=-1),
           lambda x: F.standardize(x, axis=-1), F.relu, F.relu6, F.leaky_relu]


@pytest.mark.parametrize("i", range(len(_SMOOTH)))
def test_check_grads_float64(x64, i):
    # points away from every kink (0 and 6) so central differences see a smooth function
    x = np.array([[-2.3, -0.7, 0.4, 1.9], [3.1, -4.2, 0.9, 7.5]])
    check_grads(_SMOOTH[i], (x,), order=1, modes=("fwd", "rev"))


# ----- one_hot, standardize -------------------------------------------------------------------

def test_one_hot_matches_eye_rows():
    ids = np.array([[0, 3], [2, 1]])
    out = F.one_hot(ids, 4)
    assert out.shape == (2, 2, 4) and out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), np.eye(4)[ids])
    out0 = F.one_hot(ids, 4, axis=0, dtype=jnp.int32)
    assert out0.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out0), np.moveaxis(np.eye(4, dtype=np.int32)[ids], -1, 0))
    # out of range ids (negative too) give all-zero rows, as JAX
    np.testing.assert_array_equal(np.asarray(F.one_hot(np.array([-1, 4, 1]), 4)),
                                  [[0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0]])
    with pytest.raises(ValueError, match=r"one_hot: axis 3 is out of bounds for an output of rank 3"):
        F.one_hot(ids, 4, axis=3)


def test_one_hot_default_dtype_follows_x64(x64):
    assert F.one_hot(np.array([1]), 2).dtype == np.float64


def test_standardize_matches_numpy(rng):
    x = rng.normal(3.0, 2.0, (3, 5)).astype(np.float32)
    xd = x.astype(np.float64)
    for axis in (-1, 0, (0, 1)):
        mean = xd.mean(axis=axis, keepdims=True)
        var = xd.var(axis=axis, keepdims=True)
        tu.assert_allclose(F.standardize(x, axis=axis), (xd - mean) / np.sqrt(var + 1e-5), np.float32,
                           atol=1e-5, rtol=1e-5)
    # `where` restricts the statistics to the selected entries (all entries are still transformed)
    mask = np.array([True, True, False, True, False])
    sel = xd[:, mask]
    mean, var = sel.mean(-1, keepdims=True), sel.var(-1, keepdims=True)
    tu.assert_allclose(F.standardize(x, where=mask), (xd - mean) / np.sqrt(var + 1e-5), np.float32,
                       atol=1e-5, rtol=1e-5)
    # given statistics are used as they are
    out = F.standardize(x, mean=1.0, variance=4.0, epsilon=0.0)
    tu.assert_allclose(out, (xd - 1.0) / 2.0, np.float32)


# ----- losses ----------------------------------------------------------------------------------

def _np_ce(logits, targets):
    return -(targets * _np_log_softmax(logits)).sum(-1)


@pytest.mark.parametrize("batch", [(4,), (2, 3), ()])
def test_softmax_cross_entropy_int_and_one_hot_labels(rng, batch):
    logits = rng.normal(0, 3, batch + (5,)).astype(np.float32)
    ids = rng.integers(0, 5, batch).astype(np.int32)
    onehot = np.eye(5)[ids]
    per_example = _np_ce(logits.astype(np.float64), onehot)
    for reduction, expected in (("mean", per_example.mean()), ("sum", per_example.sum()), ("none", per_example)):
        a = L.softmax_cross_entropy(logits, ids, reduction=reduction)
        b = L.softmax_cross_entropy(logits, onehot.astype(np.float32), reduction=reduction)
        tu.assert_allclose(a, expected, np.float32, atol=1e-5, rtol=1e-5)
        tu.assert_allclose(b, expected, np.float32, atol=1e-5, rtol=1e-5)


def test_softmax_cross_entropy_probability_labels_and_large_logits():
    logits = np.array([[1000.0, 0.0, -1000.0], [0.5, 0.25, 0.0]], np.float32)
    probs = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]], np.float32)
    expected = _np_ce(logits.astype(np.float64), probs.astype(np.float64))
    tu.assert_allclose(L.softmax_cross_entropy(logits, probs, reduction="none"), expected, np.float32)


def test_softmax_cross_entropy_label_smoothing_hand_formula():
    # smoothed target (1 - e) onehot + e / K gives -(1 - e) log p_y - (e / K) sum_k log p_k
    logits = np.array([[2.0, 0.0, -1.0, 0.5], [0.0, 0.0, 0.0, 0.0]])
    y, e, K = np.array([0, 3]), 0.1, 4
    logp = _np_log_softmax(logits)
    expected = -(1 - e) * logp[np.arange(2), y] - (e / K) * logp.sum(-1)
    out = L.softmax_cross_entropy(logits.astype(np.float32), y, label_smoothing=e, reduction="none")
    tu.assert_allclose(out, expected, np.float32, atol=1e-6, rtol=1e-6)
    # uniform logits: the loss is log K whatever the smoothing
    tu.assert_allclose(out[1], np.log(4.0), np.float32)
    one_hot_out = L.softmax_cross_entropy(logits.astype(np.float32), np.eye(4)[y].astype(np.float32),
                                          label_smoothing=e, reduction="none")
    tu.assert_allclose(one_hot_out, expected, np.float32, atol=1e-6, rtol=1e-6)


def test_softmax_cross_entropy_errors():
    logits = jnp.zeros((4, 3))
    with pytest.raises(ValueError, match=r"labels of shape \(4, 2\) do not fit logits of shape \(4, 3\).*"
                                         r"class ids of shape \(4,\).*shape \(4, 3\)"):
        L.softmax_cross_entropy(logits, jnp.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"labels of shape \(4,\) do not fit logits of shape \(4, 3\)"):
        L.softmax_cross_entropy(logits, jnp.zeros((4,)))  # float labels of the batch shape: not ids
    with pytest.raises(ValueError, match=r"reduction must be one of \('mean', 'sum', 'none'\), got 'avg'"):
        L.softmax_cross_entropy(logits, jnp.zeros((4,), jnp.int32), reduction="avg")


def test_sigmoid_binary_cross_entropy_matches_numpy():
    x = np.array([[-1e4, -50.0, -2.0, 0.0], [0.5, 3.0, 50.0, 1e4]], np.float32)
    z = np.array([[0.0, 1.0, 0.3, 1.0], [0.0, 1.0, 0.0, 1.0]], np.float32)
    xd, zd = x.astype(np.float64), z.astype(np.float64)
    # the textbook form with log sigmoid via logaddexp in float64
    expected = zd * np.logaddexp(0, -xd) + (1 - zd) * np.logaddexp(0, xd)
    tu.assert_allclose(L.sigmoid_binary_cross_entropy(x, z, reduction="none"), expected, np.float32)
    tu.assert_allclose(L.sigmoid_binary_cross_entropy(x, z), expected.mean(), np.float32)
    tu.assert_allclose(L.sigmoid_binary_cross_entropy(x, z, reduction="sum"), expected.sum(), np.float32)
    with pytest.raises(ValueError, match=r"labels of shape \(4, 1\) do not match logits of shape \(4,\)"):
        L.sigmoid_binary_cross_entropy(jnp.zeros(4), jnp.zeros((4, 1)))


def test_mean_squared_error_matches_numpy(rng):
    p, t = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(3, 4)).astype(np.float32)
    sq = (p.astype(np.float64) - t) ** 2
    tu.assert_allclose(L.mean_squared_error(p, t), sq.mean(), np.float32)
    tu.assert_allclose(L.mean_squared_error(p, t, reduction="sum"), sq.sum(), np.float32, rtol=1e-5)
    tu.assert_allclose(L.mean_squared_error(p, t, reduction="none"), sq, np.float32)
    with pytest.raises(ValueError, match=r"predictions of shape \(3, 1\) and targets of shape \(3,\) must"):
        L.mean_squared_error(jnp.zeros((3, 1)), jnp.zeros(3))


def test_l2_penalty_is_half_the_sum_of_squares():
    params = {"dense": (np.array([[1.0, -2.0], [0.5, 0.0]], np.float32), np.array([3.0], np.float32)),
              "step": np.array(7, np.int32)}  # an integer leaf is not a parameter
    np.testing.assert_allclose(np.asarray(L.l2_penalty(params)), 0.5 * (1 + 4 + 0.25 + 9), rtol=1e-6)
    assert float(L.l2_penalty({})) == 0.0
    g = core.grad(L.l2_penalty)({"w": jnp.array([1.5, -2.0])})
    np.testing.assert_allclose(np.asarray(g["w"]), [1.5, -2.0])  # the 0.5 makes the gradient the weights


def test_accuracy_int_one_hot_and_predicted_ids():
    logits = np.array([[0.1, 0.9, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 5.0], [1.0, 3.0, 2.0]], np.float32)
    ids = np.array([1, 0, 0, 2])  # argmax is [1, 0, 2, 1]: two right
    assert float(L.accuracy(logits, ids)) == 0.5
    assert float(L.accuracy(logits, np.eye(3, dtype=np.float32)[ids])) == 0.5
    assert float(L.accuracy(np.array([1, 0, 2, 1]), ids)) == 0.5
    assert float(L.accuracy(np.array([1, 0, 2, 1]), np.eye(3)[ids])) == 0.5
    batched = L.accuracy(logits.reshape(2, 2, 3), ids.reshape(2, 2))
    assert batched.dtype == np.float32 and float(batched) == 0.5
    with pytest.raises(ValueError, match=r"labels of shape \(4, 4\) do not fit logits of shape \(4, 3\)"):
        L.accuracy(logits, np.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"labels of shape \(3,\) do not fit predicted class ids of shape \(4,\)"):
        L.accuracy(np.array([1, 0, 2, 1]), np.zeros(3, np.int32))


def test_losses_jit_like_eager(rng):
    logits = rng.normal(size=(4, 3)).astype(np.float32)
    ids = np.array([0, 2, 1, 1], np.int32)
    f = lambda lg, y: L.softmax_cross_entropy(lg, y, label_smoothing=0.2)  # noqa: E731
    tu.assert_allclose(core.jit(f)(logits, ids), f(logits, ids), np.float32)


_LOSSES = [
    lambda lg: L.softmax_cross_entropy(lg, np.array([0, 3, 1])),
    lambda lg: L.softmax_cross_entropy(lg, np.array([[0.1, 0.2, 0.3, 0.4]] * 3), label_smoothing=0.1),
    lambda lg: L.sigmoid_binary_cross_entropy(lg, np.full((3, 4), 0.3), reduction="sum"),
    lambda lg: L.mean_squared_error(lg, np.ones((3, 4))),
    lambda lg: L.l2_penalty({"a": lg, "b": (lg * 2,)}),
]


@pytest.mark.parametrize("i", range(len(_LOSSES)))
def test_loss_check_grads_float64(x64, i):
    logits = np.array([[0.3, -1.2, 2.0, 0.1], [1.5, 0.0, -0.4, 0.8], [-2.0, 1.1, 0.6, -0.3]])
    check_grads(_LOSSES[i], (logits,), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16, jnp.float32])
def test_functions_keep_the_input_dtype(dtype):
    # abstract evaluation only: no compiles, every function and loss at once
    spec = core.ShapeDtypeStruct((2, 4), np.dtype(dtype))
    for name, (fn, _) in ORACLES.items():
        assert core.eval_shape(fn, spec).dtype == np.dtype(dtype), name
    assert core.eval_shape(F.standardize, spec).dtype == np.dtype(dtype)
    ids = core.ShapeDtypeStruct((2,), np.dtype(np.int32))
    assert core.eval_shape(lambda lg, y: L.softmax_cross_entropy(lg, y, 0.1), spec, ids).dtype == np.dtype(dtype)
    assert core.eval_shape(L.sigmoid_binary_cross_entropy, spec, spec).dtype == np.dtype(dtype)
    assert core.eval_shape(L.mean_squared_error, spec, spec).dtype == np.dtype(dtype)


def test_vmap_agrees_with_the_batched_call(rng):
    # no batch coupling: per-example application equals the batched call
    logits = rng.normal(size=(3, 4)).astype(np.float32)
    ids = np.array([0, 3, 2], np.int32)
    tu.assert_allclose(core.vmap(F.log_softmax)(logits), F.log_softmax(logits), np.float32)
    tu.assert_allclose(core.vmap(core.grad(lambda v: jnp.sum(F.relu(v))))(logits),
                       (logits > 0).astype(np.float64), np.float32)
    per_example = core.vmap(lambda lg, y: L.softmax_cross_entropy(lg, y))(logits, ids)
    tu.assert_allclose(per_example, L.softmax_cross_entropy(logits, ids, reduction="none"), np.float32)

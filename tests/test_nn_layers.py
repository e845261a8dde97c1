"""nn.layers, nn.combinators and nn.summary: predicted shapes equal actual shapes, values against
NumPy float64 references written here, state threading through combinators, and gradients."""
import math

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import random, test_util as tu
from nn.base import Layer, is_stateful
from nn.combinators import (FanInConcat, FanInSum, FanOut, abstract_init, output_shape, parallel, serial,
                            shape_dependent)
from nn.layers import (AvgPool, Conv, Conv1D, Conv1DTranspose, ConvTranspose, Dense, Dropout, Elu, Exp, Flatten,
                       Gelu, GeneralConv, GeneralConvTranspose, Identity, LeakyRelu, LogSoftmax, MaxPool, Relu, Selu,
                       Sigmoid, Silu, Softmax, Softplus, SumPool, Tanh, elementwise)
from nn.summary import summary

KEY = random.PRNGKey(0)


def _init(lyr, input_shape, key=KEY):
    """`lyr.init_fun(key, input_shape)` with the params made by one jitted computation: eager
    initializers would compile every random op separately."""
    out_shape, _ = abstract_init(lyr, input_shape)
    return out_shape, core.jit(lambda k: lyr.init_fun(k, input_shape)[1])(key)


def _rand_params(lyr, input_shape, rng):
    """The output shape `init_fun` predicts and random NumPy-made params of the shapes it would
    make: value tests need numbers, not the initializers (those run in the network tests)."""
    out_shape, structs = abstract_init(lyr, input_shape)
    params = core.tree_map(lambda s: jnp.asarray(rng.normal(size=s.shape).astype(s.dtype)), structs)
    return out_shape, params


def _resolve(shape, batch):
    if isinstance(shape, list):
        return [_resolve(s, batch) for s in shape]
    return tuple(batch if d == -1 else d for d in shape)


def _structs(shape):
    if isinstance(shape, list):
        return [_structs(s) for s in shape]
    return core.ShapeDtypeStruct(shape, np.float32)


def _shapes_of(tree):
    if isinstance(tree, (list, tuple)) and not isinstance(tree, core.ShapeDtypeStruct):
        return [_shapes_of(t) for t in tree]
    return tuple(tree.shape)


# ----- predicted shape == actual shape, on two input shapes each -----------------------------------

SHAPE_CASES = [
    ("Dense", lambda: Dense(3), [(-1, 5), (-1, 2, 7)]),
    ("GeneralConv", lambda: GeneralConv(("NCHW", "OIHW", "NCHW"), 4, (3, 2), (2, 1), "SAME"),
     [(-1, 3, 7, 6), (-1, 1, 4, 9)]),
    ("Conv", lambda: Conv(4, (3, 3)), [(-1, 8, 8, 2), (-1, 5, 9, 3)]),
    ("Conv_same_strided", lambda: Conv(4, (3, 2), strides=(2, 3), padding="SAME"), [(-1, 8, 7, 2), (-1, 5, 9, 1)]),
    ("Conv_dilated_grouped", lambda: Conv(6, (2, 2), padding=((1, 0), (2, 1)), rhs_dilation=(2, 1),
                                          feature_group_count=2), [(-1, 6, 6, 4), (-1, 5, 3, 2)]),
    ("Conv1D", lambda: Conv1D(4, (3,), (2,)), [(-1, 10, 2), (-1, 7, 3)]),
    ("GeneralConvTranspose", lambda: GeneralConvTranspose(("NCHW", "OIHW", "NCHW"), 3, (3, 3), (2, 2), "SAME"),
     [(-1, 2, 4, 5), (-1, 1, 3, 3)]),
    ("ConvTranspose_valid", lambda: ConvTranspose(3, (3, 2), (2, 3)), [(-1, 4, 5, 2), (-1, 2, 2, 1)]),
    ("ConvTranspose_explicit", lambda: ConvTranspose(2, (3, 3), (2, 2), ((1, 1), (2, 0))),
     [(-1, 4, 5, 2), (-1, 3, 3, 1)]),
    ("Conv1DTranspose", lambda: Conv1DTranspose(2, (4,), (2,), "SAME"), [(-1, 5, 3), (-1, 8, 1)]),
    ("MaxPool", lambda: MaxPool((2, 2)), [(-1, 5, 5, 3), (-1, 4, 6, 1)]),
    ("MaxPool_same", lambda: MaxPool((3, 3), (2, 2), "SAME"), [(-1, 5, 5, 3), (-1, 4, 7, 1)]),
    ("AvgPool", lambda: AvgPool((2, 3), (2, 1), "SAME", spec="NCHW"), [(-1, 3, 5, 5), (-1, 1, 4, 7)]),
    ("SumPool", lambda: SumPool((2,), (2,), ((1, 0),)), [(-1, 5, 3), (-1, 8, 2)]),
    ("Flatten", lambda: Flatten, [(-1, 3, 4), (-1, 2, 2, 5)]),
    ("Identity", lambda: Identity, [(-1, 3), (-1, 2, 5)]),
    ("Dropout", lambda: Dropout(0.5, mode="eval"), [(-1, 3), (-1, 2, 5)]),
    *[(name, (lambda lyr=lyr: lyr), [(-1, 3), (-1, 2, 5)])
      for name, lyr in [("Relu", Relu), ("Gelu", Gelu), ("Elu", Elu), ("LeakyRelu", LeakyRelu), ("Selu", Selu),
                        ("Sigmoid", Sigmoid), ("Tanh", Tanh), ("Softplus", Softplus), ("Silu", Silu),
                        ("LogSoftmax", LogSoftmax), ("Softmax", Softmax), ("Exp", Exp)]],
    ("serial", lambda: serial(Conv(2, (3, 3)), Relu, Flatten, Dense(3)), [(-1, 5, 5, 1), (-1, 4, 6, 2)]),
    ("parallel", lambda: parallel(Dense(2), Flatten), [[(-1, 3), (-1, 2, 2)], [(-1, 1), (-1, 3, 1)]]),
    ("FanOut", lambda: FanOut(3), [(-1, 3), (-1, 2, 5)]),
    ("FanInSum", lambda: FanInSum, [[(-1, 3), (-1, 3)], [(-1, 2, 5)] * 3]),
    ("FanInConcat", lambda: FanInConcat(), [[(-1, 3), (-1, 4)], [(-1, 2, 5), (-1, 2, 1)]]),
    ("FanInConcat_axis", lambda: FanInConcat(1), [[(-1, 3, 2), (-1, 4, 2)], [(-1, 2), (-1, 1)]]),
    ("shape_dependent", lambda: shape_dependent(lambda s: Dense(s[-1] + 1)), [(-1, 3), (-1, 2, 5)]),
]


@pytest.mark.parametrize("name,make,input_shapes", SHAPE_CASES, ids=[c[0] for c in SHAPE_CASES])
def test_predicted_output_shape_equals_actual(name, make, input_shapes):
    lyr = make()
    assert isinstance(lyr, Layer)
    for input_shape, batch in zip(input_shapes, (2, 3), strict=True):
        predicted, params = abstract_init(lyr, input_shape)
        out = core.eval_shape(lambda p, x: lyr.apply_fun(p, x, rng=KEY), params, _structs(_resolve(input_shape, batch)))
        assert _shapes_of(out) == _resolve(_shapes_of_predicted(predicted), batch), (name, input_shape)


def _shapes_of_predicted(shape):
    if isinstance(shape, (list, tuple)) and shape and isinstance(shape[0], (list, tuple)):
        return [tuple(s) for s in shape]
    return tuple(shape)


# ----- NumPy references ------------------------------------------------------------------------------

def _same_pads(n, k, s):
    out = -(-n // s)
    total = max(0, (out - 1) * s + k - n)
    return total // 2, total - total // 2


def np_conv_nhwc(x, w, strides, padding, dilation, groups):
    """Cross-correlation of NH..C inputs with H..IO kernels by explicit loops over output positions."""
    nsp = x.ndim - 2
    k_sp = [(w.shape[i] - 1) * dilation[i] + 1 for i in range(nsp)]
    if padding == "VALID":
        pads = [(0, 0)] * nsp
    elif padding == "SAME":
        pads = [_same_pads(x.shape[1 + i], k_sp[i], strides[i]) for i in range(nsp)]
    else:
        pads = list(padding)
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)])
    out_sp = [(xp.shape[1 + i] - k_sp[i]) // strides[i] + 1 for i in range(nsp)]
    cin_g, cout = w.shape[-2], w.shape[-1]
    cout_g = cout // groups
    out = np.zeros((x.shape[0], *out_sp, cout))
    for pos in np.ndindex(*out_sp):
        for kpos in np.ndindex(*w.shape[:nsp]):
            idx = tuple(pos[i] * strides[i] + kpos[i] * dilation[i] for i in range(nsp))
            patch = xp[(slice(None),) + idx]                      # (N, Cin)
            for g in range(groups):
                out[(slice(None),) + pos + (slice(g * cout_g, (g + 1) * cout_g),)] += \
                    patch[:, g * cin_g:(g + 1) * cin_g] @ w[kpos][:, g * cout_g:(g + 1) * cout_g]
    return out


def _np(a):
    return np.asarray(a, np.float64)


def test_dense_matches_numpy(rng):
    out_shape, (W, b) = _rand_params(Dense(4), (-1, 3), rng)
    x = tu.rand(rng, (5, 3), np.float32)
    tu.assert_allclose(Dense(4).apply_fun((W, b), jnp.asarray(x)), x @ _np(W) + _np(b), np.float32)
    assert out_shape == (-1, 4) and W.dtype == np.float32


CONV_CASES = [
    ("strided_same", dict(out_chan=4, filter_shape=(3, 3), strides=(2, 1), padding="SAME"), (2, 7, 6, 3)),
    ("dilated_explicit", dict(out_chan=3, filter_shape=(2, 3), padding=((1, 2), (0, 1)), rhs_dilation=(2, 1)),
     (2, 6, 5, 2)),
    ("grouped", dict(out_chan=6, filter_shape=(3, 3), strides=(1, 2), feature_group_count=2), (1, 6, 7, 4)),
]


@pytest.mark.parametrize("name,kw,shape", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_conv_matches_numpy(rng, name, kw, shape):
    lyr = Conv(**kw)
    out_shape, (W, b) = _rand_params(lyr, (-1,) + shape[1:], rng)
    x = tu.rand(rng, shape, np.float32)
    out = lyr.apply_fun((W, b), jnp.asarray(x))
    nsp = 2
    expected = np_conv_nhwc(_np(x), _np(W), kw.get("strides", (1,) * nsp), kw.get("padding", "VALID"),
                            kw.get("rhs_dilation", (1,) * nsp), kw.get("feature_group_count", 1)) + _np(b)
    tu.assert_allclose(out, expected, np.float32, atol=1e-5)
    assert out_shape == (-1,) + expected.shape[1:]


def test_conv1d_and_general_conv_layouts_match_numpy(rng):
    x = tu.rand(rng, (2, 9, 3), np.float32)
    lyr = Conv1D(2, (3,), (2,), "SAME")
    _, (W, b) = _rand_params(lyr, x.shape, rng)
    expected = np_conv_nhwc(_np(x), _np(W), (2,), "SAME", (1,), 1) + _np(b)
    tu.assert_allclose(lyr.apply_fun((W, b), jnp.asarray(x)), expected, np.float32, atol=1e-5)
    # NCHW inputs with OIHW kernels: same numbers as NHWC/HWIO after transposing
    xc = tu.rand(rng, (2, 3, 5, 4), np.float32)
    lyr = GeneralConv(("NCHW", "OIHW", "NCHW"), 2, (2, 3))
    _, (W, b) = _rand_params(lyr, xc.shape, rng)
    assert W.shape == (2, 3, 2, 3) and b.shape == (1, 2, 1, 1)
    expected = np_conv_nhwc(_np(xc).transpose(0, 2, 3, 1), _np(W).transpose(2, 3, 1, 0), (1, 1), "VALID", (1, 1), 1)
    tu.assert_allclose(lyr.apply_fun((W, b), jnp.asarray(xc)), expected.transpose(0, 3, 1, 2) + _np(b),
                       np.float32, atol=1e-5)


def np_conv_transpose(x, w, strides, padding):
    """The textbook transposed convolution (scatter-add of each input element times the kernel),
    with the kernel flipped spatially: stax's ConvTranspose does not flip it (lax.conv_transpose
    with transpose_kernel=False). Then cropped as JAX defines 'SAME' (output = in * stride) and
    'VALID' (in * stride + max(k - stride, 0)): the full output starts at (k - 1) - low pad."""
    nsp = x.ndim - 2
    ks = w.shape[:nsp]
    wf = w[tuple(slice(None, None, -1) for _ in range(nsp))]
    full = np.zeros((x.shape[0], *[(n - 1) * s + k for n, s, k in zip(x.shape[1:-1], strides, ks)], w.shape[-1]))
    for pos in np.ndindex(*x.shape[1:-1]):
        for kpos in np.ndindex(*ks):
            idx = tuple(p * s + q for p, s, q in zip(pos, strides, kpos))
            full[(slice(None),) + idx] += x[(slice(None),) + pos] @ wf[kpos]
    out_sp, starts = [], []
    for n, s, k in zip(x.shape[1:-1], strides, ks):
        if padding == "SAME":
            low = k - 1 if s > k - 1 else -(-(k + s - 2) // 2)
            out_sp.append(n * s)
        else:
            low = k - 1
            out_sp.append(n * s + max(k - s, 0))
        starts.append(k - 1 - low)
    out = np.zeros((x.shape[0], *out_sp, w.shape[-1]))
    for pos in np.ndindex(*out_sp):
        src = tuple(p + st for p, st in zip(pos, starts))
        if all(0 <= i < n for i, n in zip(src, full.shape[1:-1])):
            out[(slice(None),) + pos] = full[(slice(None),) + src]
    return out


TRANSPOSE_CASES = [   # (name, constructor, out_chan, filter_shape, strides, padding, input shape)
    ("2d_k3_s2_same", ConvTranspose, 3, (3, 3), (2, 2), "SAME", (2, 3, 4, 2)),
    ("2d_k4_s2_same", ConvTranspose, 2, (4, 3), (2, 1), "SAME", (1, 3, 3, 2)),
    ("2d_k3_s2_valid", ConvTranspose, 2, (3, 2), (2, 3), "VALID", (2, 3, 2, 1)),
    ("1d_k2_s3_valid", Conv1DTranspose, 2, (2,), (3,), "VALID", (2, 4, 3)),
]


@pytest.mark.parametrize("name,ctor,out_chan,filter_shape,strides,padding,shape", TRANSPOSE_CASES,
                         ids=[c[0] for c in TRANSPOSE_CASES])
def test_conv_transpose_matches_numpy_scatter_add(rng, name, ctor, out_chan, filter_shape, strides, padding, shape):
    lyr = ctor(out_chan, filter_shape, strides, padding)
    out_shape, (W, b) = _rand_params(lyr, (-1,) + shape[1:], rng)
    x = tu.rand(rng, shape, np.float32)
    expected = np_conv_transpose(_np(x), _np(W), strides, padding) + _np(b)
    tu.assert_allclose(lyr.apply_fun((W, b), jnp.asarray(x)), expected, np.float32, atol=1e-5)
    assert out_shape == (-1,) + expected.shape[1:]


def np_pool(x, window, strides, padding, kind):
    """Pooling over the spatial axes of NH..C inputs by loops; 'avg' divides by the count of real
    (non-padding) elements in the window (stax's AvgPool)."""
    nsp = x.ndim - 2
    if padding == "VALID":
        pads = [(0, 0)] * nsp
    elif padding == "SAME":
        pads = [_same_pads(x.shape[1 + i], window[i], strides[i]) for i in range(nsp)]
    else:
        pads = list(padding)
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, [(0, 0)] + pads + [(0, 0)], constant_values=fill)
    real = np.pad(np.ones(x.shape[1:-1]), pads)
    out_sp = [(xp.shape[1 + i] - window[i]) // strides[i] + 1 for i in range(nsp)]
    out = np.zeros((x.shape[0], *out_sp, x.shape[-1]))
    for pos in np.ndindex(*out_sp):
        sl = tuple(slice(p * s, p * s + w) for p, s, w in zip(pos, strides, window))
        patch = xp[(slice(None),) + sl]
        axes = tuple(range(1, 1 + nsp))
        if kind == "max":
            out[(slice(None),) + pos] = patch.max(axes)
        elif kind == "sum":
            out[(slice(None),) + pos] = patch.sum(axes)
        else:
            out[(slice(None),) + pos] = patch.sum(axes) / real[sl].sum()
    return out


POOL_CASES = tu.product([("max", MaxPool), ("sum", SumPool), ("avg", AvgPool)],
                        [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"), ((2, 3), (1, 2), ((1, 0), (1, 1)))])


@pytest.mark.parametrize("kind_ctor,geometry", POOL_CASES, ids=[f"{k[0]}-{g[2]}" for k, g in POOL_CASES])
def test_pooling_matches_numpy(rng, kind_ctor, geometry):
    (kind, ctor), (window, strides, padding) = kind_ctor, geometry
    lyr = ctor(window, strides, padding)
    x = tu.rand(rng, (2, 5, 6, 3), np.float32)
    out_shape, params = _rand_params(lyr, (-1, 5, 6, 3), rng)
    expected = np_pool(_np(x), window, strides, padding, kind)
    tu.assert_allclose(lyr.apply_fun(params, jnp.asarray(x)), expected, np.float32, atol=1e-5)
    assert out_shape == (-1,) + expected.shape[1:]


def test_pooling_spec_nchw_pools_the_spatial_axes(rng):
    x = tu.rand(rng, (2, 3, 5, 4), np.float32)
    out = AvgPool((2, 2), (1, 2), "SAME", spec="NCHW").apply_fun((), jnp.asarray(x))
    expected = np_pool(_np(x).transpose(0, 2, 3, 1), (2, 2), (1, 2), "SAME", "avg").transpose(0, 3, 1, 2)
    tu.assert_allclose(out, expected, np.float32, atol=1e-6)


def test_avg_pool_excludes_padding_from_the_count():
    # hand-derived: [1, 2, 3] with window 2, stride 2, SAME pads (0, 1): means [1.5, 3] (not 1.5)
    out = AvgPool((2,), (2,), "SAME").apply_fun((), jnp.asarray(np.array([[[1.0], [2.0], [3.0]]], np.float32)))
    np.testing.assert_allclose(np.asarray(out)[0, :, 0], [1.5, 3.0])


def test_pooling_errors():
    with pytest.raises(ValueError, match=r"MaxPool: a window of 2 spatial dimensions \(2, 2\) needs inputs of "
                                         r"rank 4.*got rank 3"):
        MaxPool((2, 2)).init_fun(KEY, (-1, 4, 3))
    with pytest.raises(ValueError, match=r"SumPool: strides \(1,\) must have one entry per window dimension"):
        SumPool((2, 2), (1,)).init_fun(KEY, (-1, 4, 4, 3))


# ----- Dropout ---------------------------------------------------------------------------------------

def test_dropout_rate_is_the_keep_probability():
    x = jnp.full((100, 200), 3.0)
    out = np.asarray(core.jit(lambda x, k: Dropout(0.8).apply_fun((), x, rng=k))(x, KEY))
    kept = out != 0
    # 20000 Bernoulli(0.8) draws: the kept fraction is within 5 standard deviations (0.0028 each)
    assert abs(kept.mean() - 0.8) < 0.015
    np.testing.assert_allclose(out[kept], 3.0 / 0.8, rtol=1e-6)


def test_dropout_modes_and_determinism():
    x = jnp.asarray(np.arange(1.0, 41.0, dtype=np.float32).reshape(4, 10))
    _, apply_fun = Dropout(0.5)
    np.testing.assert_array_equal(apply_fun((), x, mode="eval"), x)                 # no rng needed in eval
    np.testing.assert_array_equal(Dropout(0.5, mode="eval").apply_fun((), x, rng=KEY), x)
    a = np.asarray(apply_fun((), x, rng=KEY))
    np.testing.assert_array_equal(apply_fun((), x, rng=KEY), a)                     # same key, same mask
    assert not np.array_equal(np.asarray(apply_fun((), x, rng=random.PRNGKey(1))), a)
    assert 0 < (a == 0).sum() < a.size
    # the apply-time mode overrides the constructor's
    np.testing.assert_array_equal(Dropout(0.5, mode="eval").apply_fun((), x, rng=KEY, mode="train"), a)


def test_dropout_errors():
    with pytest.raises(ValueError, match=r"KEEP probability|keep probability.*\(0, 1\].*got 0.*Dropout\(1 - p\)"):
        Dropout(0.0)
    with pytest.raises(ValueError, match=r"Dropout mode must be 'train' or 'eval', got 'test'"):
        Dropout(0.5, mode="test")
    np.testing.assert_array_equal(Dropout(1).apply_fun((), jnp.ones(3), rng=KEY), np.ones(3))
    with pytest.raises(ValueError, match=r"Dropout in train mode needs a PRNG key.*rng=key"):
        Dropout(0.5).apply_fun((), jnp.ones(3))


# ----- elementwise layers ----------------------------------------------------------------------------

def test_elementwise_layers_apply_their_functions(rng):
    x = tu.rand(rng, (3, 4), np.float32)
    w = _np(x)
    sp = np.log1p(np.exp(w))
    sig = 1 / (1 + np.exp(-w))
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    lse = np.log(np.exp(w).sum(-1, keepdims=True))
    refs = [(Relu, np.maximum(w, 0)), (Tanh, np.tanh(w)), (Sigmoid, sig), (Softplus, sp), (Silu, w * sig),
            (Elu, np.where(w > 0, w, np.expm1(w))), (LeakyRelu, np.where(w >= 0, w, 0.01 * w)),
            (Selu, scale * np.where(w > 0, w, alpha * np.expm1(w))), (Exp, np.exp(w)),
            (Gelu, 0.5 * w * (1 + np.tanh(np.sqrt(2 / np.pi) * (w + 0.044715 * w ** 3)))),
            (LogSoftmax, w - lse), (Softmax, np.exp(w - lse))]
    for lyr, expected in refs:
        tu.assert_allclose(lyr.apply_fun((), jnp.asarray(x)), expected, np.float32, atol=1e-5, err_msg=lyr.name)
    custom = elementwise(lambda v, negative_slope: jnp.where(v > 0, v, negative_slope * v), negative_slope=0.5)
    tu.assert_allclose(custom.apply_fun((), jnp.asarray(x)), np.where(w > 0, w, 0.5 * w), np.float32)


# ----- vmap over stacks of batches agrees with one big batch -----------------------------------------

@pytest.mark.parametrize("make,example", [(lambda: Dense(3), (4,)),
                                          (lambda: Conv(2, (3, 3), (2, 1), "SAME"), (5, 4, 2))],
                         ids=["Dense", "Conv"])
def test_vmap_apply_agrees_with_the_batched_call(rng, make, example):
    lyr = make()
    _, params = _rand_params(lyr, (-1,) + example, rng)
    xs = jnp.asarray(tu.rand(rng, (3, 2) + example, np.float32))     # 3 stacked batches of 2
    vmapped = core.vmap(lyr.apply_fun, in_axes=(None, 0))(params, xs)
    batched = lyr.apply_fun(params, jnp.reshape(xs, (6,) + example))
    tu.assert_allclose(jnp.reshape(vmapped, batched.shape), np.asarray(batched), np.float32, atol=1e-6)
    if len(example) == 1:   # Dense also works on single unbatched examples
        per_example = core.vmap(lyr.apply_fun, in_axes=(None, 0))(params, xs[0])
        tu.assert_allclose(per_example, np.asarray(lyr.apply_fun(params, xs[0])), np.float32, atol=1e-6)


# ----- the seed network ------------------------------------------------------------------------------

def seed_net():
    return serial(Conv(32, (3, 3), padding="SAME"), Relu, Conv(64, (3, 3), padding="SAME"), Relu, MaxPool((2, 2)),
                  Flatten, Dense(128), Relu, Dense(10), LogSoftmax)


def test_seed_stax_network_runs_under_jit(rng):
    net = seed_net()
    apply_fun = net.apply_fun
    out_shape, params = _init(net, (-1, 28, 28, 1))
    assert out_shape == (-1, 10) == output_shape(net, (-1, 28, 28, 1))
    assert [tuple(a.shape) for p in params for a in p] == [(3, 3, 1, 32), (1, 1, 1, 32), (3, 3, 32, 64),
                                                          (1, 1, 1, 64), (27 * 27 * 64, 128), (128,), (128, 10), (10,)]
    # Glorot normal: std sqrt(2 / (fan_in + fan_out)); stax's conv bias N(0, 1e-12), Dense bias N(0, 1e-4)
    np.testing.assert_allclose(np.std(np.asarray(params[6][0])), math.sqrt(2 / (27 * 27 * 64 + 128)), rtol=0.02)
    assert np.abs(np.asarray(params[0][1])).max() < 1e-5 and 1e-3 < np.std(np.asarray(params[6][1])) < 0.05
    x = jnp.asarray(tu.rand(rng, (2, 28, 28, 1), np.float32, 0.0, 1.0))
    out = core.jit(apply_fun)(params, x)
    assert out.shape == (2, 10)
    np.testing.assert_allclose(np.exp(np.asarray(out, np.float64)).sum(-1), 1.0, rtol=1e-5)


# ----- gradients in float64 --------------------------------------------------------------------------

def _nll(apply_fun, params, x, y):
    return -jnp.mean(jnp.sum(apply_fun(params, x) * y, axis=-1))


def test_check_grads_mlp_loss(x64, rng):
    net = serial(Dense(5), Tanh, Dense(4), Gelu, Dense(3), LogSoftmax)
    apply_fun = net.apply_fun
    _, params = _init(net, (-1, 3))
    assert params[0][0].dtype == np.float64
    x = jnp.asarray(rng.normal(size=(4, 3)))
    y = jnp.asarray(np.eye(3)[[0, 2, 1, 2]])
    tu.check_grads(core.jit(lambda p: _nll(apply_fun, p, x, y)), (params,), order=1, atol=1e-6, rtol=1e-6)


def test_check_grads_convnet_loss(x64, rng):
    net = serial(Conv(3, (2, 2), padding="SAME"), Tanh, AvgPool((2, 2), (2, 2)), Conv(2, (2, 2), padding="SAME"),
                 Softplus, MaxPool((2, 2), (1, 1)), Flatten, Dense(3), LogSoftmax)
    apply_fun = net.apply_fun
    _, params = _init(net, (-1, 4, 4, 1))
    x = jnp.asarray(rng.normal(size=(2, 4, 4, 1)))
    y = jnp.asarray(np.eye(3)[[1, 2]])
    tu.check_grads(core.jit(lambda p, x: _nll(apply_fun, p, x, y)), (params, x), order=1, atol=1e-6, rtol=1e-6)


# ----- combinators and state -------------------------------------------------------------------------

def RunningMean(momentum=0.5):
    """A tiny stateful test layer: outputs inputs minus a running mean of the batch means, which
    "train" mode updates (mean <- m * mean + (1 - m) * batch mean, count += 1) and "eval" only uses."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def init_state(input_shape):
        return {"mean": jnp.zeros(input_shape[-1:]), "count": jnp.zeros((), np.int32)}

    def apply_fun(params, inputs, state=None, mode="train", **kwargs):
        batch_mean = jnp.mean(inputs, axis=0)
        if state is None:
            if mode == "eval":
                raise ValueError("RunningMean in eval mode needs state=")
            return inputs - batch_mean
        if mode == "eval":
            return inputs - state["mean"], state
        mean = momentum * state["mean"] + (1 - momentum) * batch_mean
        return inputs - mean, {"mean": mean, "count": state["count"] + 1}

    return Layer(init_fun, apply_fun, init_state)


def test_state_threads_through_serial_under_jit(rng):
    net = serial(Dense(3), RunningMean(), Relu, RunningMean(0.25))
    assert is_stateful(net) and not is_stateful(serial(Dense(3), Relu))
    _, params = _rand_params(net, (-1, 2), rng)
    state = net.init_state((-1, 2))
    assert state[0] is None and state[2] is None and state[1]["mean"].shape == (3,)
    step = core.jit(lambda p, x, s: net.apply_fun(p, x, state=s, mode="train"))
    (W, b) = params[0]
    xs = [tu.rand(rng, (4, 2), np.float32) for _ in range(2)]
    m1, m3 = np.zeros(3), np.zeros(3)
    for x in xs:
        out, state = step(params, jnp.asarray(x), state)
        h = x @ _np(W) + _np(b)
        m1 = 0.5 * m1 + 0.5 * h.mean(0)
        h = np.maximum(h - m1, 0)
        m3 = 0.25 * m3 + 0.75 * h.mean(0)
        tu.assert_allclose(out, h - m3, np.float32, atol=1e-5)
    assert int(state[3]["count"]) == 2
    tu.assert_allclose(state[1]["mean"], m1, np.float32, atol=1e-5)
    # eval: state used, returned unchanged; without state=: the stax signature, batch statistics
    out, same = core.jit(lambda p, x, s: net.apply_fun(p, x, state=s, mode="eval"))(params, jnp.asarray(xs[0]), state)
    np.testing.assert_array_equal(same[1]["mean"], state[1]["mean"])
    h = np.maximum(xs[0] @ _np(W) + _np(b) - m1, 0)
    tu.assert_allclose(out, h - m3, np.float32, atol=1e-5)
    plain = net.apply_fun(params, jnp.asarray(xs[0]))
    h = xs[0] @ _np(W) + _np(b)
    h = np.maximum(h - h.mean(0), 0)
    tu.assert_allclose(plain, h - h.mean(0), np.float32, atol=1e-5)


def test_state_threads_through_parallel_and_nested_serial():
    stax_pair = (Identity.init_fun, Identity.apply_fun)      # a plain stax tuple works as a sublayer
    net = serial(FanOut(2), parallel(RunningMean(), stax_pair), FanInSum)
    state = net.init_state((-1, 2))
    assert state[0] is None and state[2] is None and state[1][1] is None
    x = jnp.asarray(np.array([[1.0, 2.0], [3.0, 6.0]], np.float32))
    out, state = core.jit(lambda x, s: net.apply_fun([(), ((), ()), ()], x, state=s))(x, state)
    # running mean 0.5 * [2, 4] = [1, 2]; out = (x - [1, 2]) + x
    np.testing.assert_allclose(np.asarray(out), [[1.0, 2.0], [5.0, 10.0]])
    np.testing.assert_allclose(np.asarray(state[1][0]["mean"]), [1.0, 2.0])
    par = parallel(Dense(2), Identity)
    outs = par.apply_fun(((jnp.ones((2, 2)), jnp.ones(2)), ()), [x, x])
    assert isinstance(outs, list) and len(outs) == 2


def test_combinators_split_rng_per_layer_as_stax():
    x = jnp.ones((4, 50))
    k = random.PRNGKey(7)
    out = serial(Identity, Dropout(0.5)).apply_fun([(), ()], x, rng=k)
    expected = Dropout(0.5).apply_fun((), x, rng=random.split(k, 2)[1])
    np.testing.assert_array_equal(out, expected)
    outs = parallel(Dropout(0.5), Dropout(0.5)).apply_fun(((), ()), [x, x], rng=k)
    keys = random.split(k, 2)
    np.testing.assert_array_equal(outs[0], Dropout(0.5).apply_fun((), x, rng=keys[0]))
    np.testing.assert_array_equal(outs[1], Dropout(0.5).apply_fun((), x, rng=keys[1]))
    assert not np.array_equal(np.asarray(outs[0]), np.asarray(outs[1]))
    # mode reaches every sublayer
    np.testing.assert_array_equal(serial(Dropout(0.5), Dropout(0.5)).apply_fun([(), ()], x, mode="eval"), x)


def test_serial_params_are_a_list_and_init_splits_keys_as_stax():
    def both(key):
        params = serial(Dense(2), Dense(2)).init_fun(key, (-1, 2))[1]
        return params, Dense(2).init_fun(random.split(key)[1], (-1, 2))[1]

    params, p0 = core.jit(both)(KEY)
    assert isinstance(params, list)
    np.testing.assert_array_equal(params[0][0], p0[0])


def test_fan_in_values_and_shape_dependent():
    a, b = jnp.ones((2, 3)), jnp.full((2, 1), 2.0)
    np.testing.assert_array_equal(FanInConcat().apply_fun((), [a, b]), np.concatenate([np.ones((2, 3)),
                                                                                       np.full((2, 1), 2.0)], -1))
    np.testing.assert_array_equal(FanInSum.apply_fun((), [a, a, a]), np.full((2, 3), 3.0))
    with pytest.raises(ValueError, match=r"shape_dependent: make_layer returned a stateful layer"):
        shape_dependent(lambda s: RunningMean()).init_fun(KEY, (-1, 2))
    with pytest.raises(ValueError, match=r"parallel of 2 layers needs 2 input shapes, got 3"):
        parallel(Identity, Identity).init_fun(KEY, [(1,), (1,), (1,)])


def test_conv_group_errors():
    with pytest.raises(ValueError, match=r"Conv: the input's 3 channels .*not divisible by feature_group_count \(2\)"):
        Conv(4, (3, 3), feature_group_count=2).init_fun(KEY, (-1, 5, 5, 3))
    with pytest.raises(ValueError, match=r"Conv: out_chan \(3\) must be divisible by feature_group_count \(2\)"):
        Conv(3, (3, 3), feature_group_count=2)


# ----- summary ---------------------------------------------------------------------------------------

def test_summary_table():
    lines = []
    net = serial(Conv(2, (3, 3), padding="SAME"), Relu, Flatten, Dense(4))
    table = summary(net, (-1, 5, 5, 1), print_fn=lines.append)
    assert lines == [table]
    rows = table.splitlines()
    assert rows[0].split() == ["Layer", "Output", "shape", "Params"]
    assert rows[1].split()[0] == "serial" and rows[1].endswith(str(20 + 204))
    assert rows[2].startswith("  Conv(2, (3, 3), padding='SAME')") and "(-1, 5, 5, 2)" in rows[2]
    assert rows[2].endswith(" 20")                      # 3 * 3 * 1 * 2 + 2
    assert "(-1, 50)" in rows[4] and rows[4].endswith(" 0")
    assert rows[5].startswith("  Dense(4)") and rows[5].endswith(" 204")
    assert rows[-1] == "Total params: 224"


def test_summary_returns_the_table_and_prints_only_when_asked(capsys):
    net = serial(Dense(3), Relu)
    table = summary(net, (-1, 2))
    assert capsys.readouterr().out == ""            # returned, not printed
    assert summary(net, (-1, 2), print_fn=print) == table
    assert capsys.readouterr().out == table + "\n"  # printed once, when asked


def test_summary_nests_parallel():
    net = serial(FanOut(2), parallel(Dense(3), Identity), FanInConcat())
    table = summary(net, (-1, 2), print_fn=None)
    rows = table.splitlines()
    assert [r.split()[0] for r in rows[1:-1]] == ["serial", "FanOut(2)", "parallel", "Dense(3)", "Identity",
                                                  "FanInConcat()"]
    assert rows[4].startswith("    Dense(3)") and "((-1, 3), (-1, 2))" in rows[3]
    assert rows[-1] == "Total params: 9"

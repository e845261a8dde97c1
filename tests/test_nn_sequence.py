"""nn.attention and nn.recurrent (and Embedding): shapes predicted by init_fun, values against
NumPy float64 implementations (a softmax attention, loops over time), vmap over examples, gradients."""
import numpy as np
import pytest

import core
from core import random
from core import test_util as tu
from nn.attention import MultiHeadAttention, dot_product_attention
from nn.normalization import Embedding
from nn.recurrent import GRU, LSTM, SimpleRNN

KEY = random.key(0)


def _concrete(shape, batch):
    return tuple(batch if d == -1 else d for d in shape)


def _wide_tree(tree):
    return core.tree_map(lambda a: tu.wide(np.asarray(a)), tree)


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


# ----- NumPy references (float64) ----------------------------------------------------------------

def _np_attention(q, k, v, mask=None):
    """Per batch element and head, softmax(q k^T / sqrt(d)) v with masked logits removed."""
    out = np.zeros(q.shape[:-1] + (v.shape[-1],))
    batch, q_len, heads, depth = q.shape
    for b in range(batch):
        for h in range(heads):
            logits = q[b, :, h] @ k[b, :, h].T / np.sqrt(depth)
            if mask is not None:
                m = np.broadcast_to(mask, (batch, heads, q_len, k.shape[1]))[b, h]
                logits = np.where(m, logits, -np.inf)
            w = np.exp(logits - logits.max(axis=-1, keepdims=True))
            out[b, :, h] = (w / w.sum(axis=-1, keepdims=True)) @ v[b, :, h]
    return out


def _np_mha(params, xq, xkv, heads, mask=None):
    p = _wide_tree(params)

    def proj(x, name):
        W, b = p[name]
        return x @ W + b

    split = lambda y: y.reshape(y.shape[:-1] + (heads, y.shape[-1] // heads))   # noqa: E731
    o = _np_attention(split(proj(xq, "query")), split(proj(xkv, "key")), split(proj(xkv, "value")), mask)
    return proj(o.reshape(o.shape[:-2] + (-1,)), "out")


def _np_lstm(p, x):
    W, U, b = p["W"], p["U"], p["b"]
    H = U.shape[0]
    h, c = np.zeros((x.shape[0], H)), np.zeros((x.shape[0], H))
    outs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ W + h @ U + b
        i, f, g, o = _sigmoid(z[:, :H]), _sigmoid(z[:, H:2 * H]), np.tanh(z[:, 2 * H:3 * H]), _sigmoid(z[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        outs.append(h)
    return np.stack(outs, axis=1)


def _np_gru(p, x):
    W, U, b = p["W"], p["U"], p["b"]
    H = U.shape[0]
    h = np.zeros((x.shape[0], H))
    outs = []
    for t in range(x.shape[1]):
        xw = x[:, t] @ W + b
        r = _sigmoid(xw[:, :H] + h @ U[:, :H])
        z = _sigmoid(xw[:, H:2 * H] + h @ U[:, H:2 * H])
        n = np.tanh(xw[:, 2 * H:] + (r * h) @ U[:, 2 * H:])
        h = z * h + (1 - z) * n
        outs.append(h)
    return np.stack(outs, axis=1)


def _np_rnn(p, x):
    h = np.zeros((x.shape[0], p["U"].shape[0]))
    outs = []
    for t in range(x.shape[1]):
        h = np.tanh(x[:, t] @ p["W"] + h @ p["U"] + p["b"])
        outs.append(h)
    return np.stack(outs, axis=1)


def _init(layer, input_shape, rng, dtype=np.float32):
    """`(output_shape, params)` as `init_fun` predicts them, with random params of the predicted
    shapes (nonzero biases everywhere, so that they are tested too). init_fun runs under
    eval_shape: its random draws would compile ~0.5 s per shape, and its values are checked in
    test_default_init."""
    box = {}

    def params_of(key):
        box["out_shape"], params = layer.init_fun(key, input_shape)
        return params

    shapes = core.eval_shape(params_of, KEY)
    return box["out_shape"], core.tree_map(lambda s: (0.6 * rng.normal(size=s.shape)).astype(dtype), shapes)


# ----- shapes -------------------------------------------------------------------------------------

SHAPE_CASES = [   # (name, constructor, input_shape, batch size replacing -1)
    ("mha_self", lambda: MultiHeadAttention(num_heads=2, qkv_features=8), (-1, 3, 4), 3),
    ("mha_cross", lambda: MultiHeadAttention(num_heads=3, head_dim=2, out_features=5), ((-1, 3, 4), (-1, 6, 7)), 1),
    ("rnn", lambda: SimpleRNN(5), (-1, 4, 3), 1),
    ("rnn", lambda: SimpleRNN(2), (-1, 2, 7, 3), 3),
    ("lstm", lambda: LSTM(5), (-1, 4, 3), 3),
    ("lstm", lambda: LSTM(2), (1, 1, 6), 1),
    ("gru", lambda: GRU(5), (-1, 4, 3), 1),
    ("gru", lambda: GRU(3), (-1, 1, 2), 3),
    ("embedding", lambda: Embedding(7, 4), (-1, 3), 3),
    ("embedding", lambda: Embedding(7, 2), (-1,), 1),
]


@pytest.mark.parametrize("name,make,input_shape,batch", SHAPE_CASES)
def test_init_predicts_apply_shape(name, make, input_shape, batch, rng):
    layer = make()
    out_shape, params = _init(layer, input_shape, rng)
    if name == "embedding":
        x = rng.integers(0, 7, size=_concrete(input_shape, batch)).astype(np.int32)
    elif name == "mha_cross":
        x = tuple(rng.normal(size=_concrete(s, batch)).astype(np.float32) for s in input_shape)
    else:
        x = rng.normal(size=_concrete(input_shape, batch)).astype(np.float32)
    y = core.jit(layer.apply_fun)(params, x)
    assert y.shape == _concrete(out_shape, batch)


def test_mha_params_layout(rng):
    _, params = _init(MultiHeadAttention(num_heads=3, head_dim=2, out_features=5), ((-1, 3, 4), (-1, 6, 7)), rng)
    shapes = {k: tuple(np.shape(a) for a in v) for k, v in params.items()}
    assert shapes == {"query": ((4, 6), (6,)), "key": ((7, 6), (6,)), "value": ((7, 6), (6,)),
                      "out": ((6, 5), (5,))}


# ----- attention ----------------------------------------------------------------------------------

@pytest.mark.parametrize("masked", [False, True])
def test_dot_product_attention_values(masked, rng):
    q = rng.normal(size=(2, 3, 2, 4)).astype(np.float32)
    k = rng.normal(size=(2, 5, 2, 4)).astype(np.float32)
    v = rng.normal(size=(2, 5, 2, 3)).astype(np.float32)
    # per-example, per-head mask with at least one key per query
    mask = rng.random((2, 2, 3, 5)) < 0.5 if masked else None
    if masked:
        mask[..., 0] = True
    got = core.jit(dot_product_attention)(q, k, v, mask)
    tu.assert_allclose(got, _np_attention(tu.wide(q), tu.wide(k), tu.wide(v), mask), np.float32, atol=1e-5, rtol=1e-5)


def test_dot_product_attention_fully_masked_query_averages_values(rng):
    q = rng.normal(size=(1, 2, 1, 3)).astype(np.float32)
    k = rng.normal(size=(1, 4, 1, 3)).astype(np.float32)
    v = rng.normal(size=(1, 4, 1, 2)).astype(np.float32)
    mask = np.array([[True, False, True, False], [False] * 4])   # (q_len, k_len), broadcast
    got = np.asarray(core.jit(dot_product_attention)(q, k, v, mask))
    tu.assert_allclose(got[:, :1], _np_attention(tu.wide(q[:, :1]), tu.wide(k), tu.wide(v), mask[:1]), np.float32,
                       atol=1e-5, rtol=1e-5)
    tu.assert_allclose(got[0, 1, 0], tu.wide(v)[0, :, 0].mean(axis=0), np.float32, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("masked", [False, True])
def test_mha_self_attention_values_and_vmap(masked, rng):
    mha = MultiHeadAttention(num_heads=2, qkv_features=6, out_features=3)
    _, params = _init(mha, (-1, 4, 5), rng)
    x = rng.normal(size=(3, 4, 5)).astype(np.float32)
    mask = np.tril(np.ones((4, 4), bool)) if masked else None   # causal, broadcast over batch and heads
    apply = core.jit(lambda p, x, m: mha.apply_fun(p, x, mask=m))
    expected = _np_mha(params, tu.wide(x), tu.wide(x), 2, mask)
    tu.assert_allclose(apply(params, x, mask), expected, np.float32, atol=1e-5, rtol=1e-5)
    # no batch coupling: vmap over single examples agrees
    per_example = core.vmap(lambda x: mha.apply_fun(params, x, mask=mask))(x)
    tu.assert_allclose(per_example, expected, np.float32, atol=1e-5, rtol=1e-5)


def test_mha_cross_attention_values(rng):
    mha = MultiHeadAttention(num_heads=3, head_dim=2)
    _, params = _init(mha, ((-1, 2, 4), (-1, 5, 3)), rng)
    xq = rng.normal(size=(2, 2, 4)).astype(np.float32)
    xkv = rng.normal(size=(2, 5, 3)).astype(np.float32)
    mask = rng.random((2, 1, 2, 5)) < 0.6
    mask[..., 1] = True
    got = core.jit(lambda p, xs, m: mha.apply_fun(p, xs, mask=m))(params, (xq, xkv), mask)
    tu.assert_allclose(got, _np_mha(params, tu.wide(xq), tu.wide(xkv), 3, mask), np.float32, atol=1e-5, rtol=1e-5)


def test_mha_without_bias(rng):
    mha = MultiHeadAttention(num_heads=2, use_bias=False)
    _, params = _init(mha, (-1, 3, 4), rng)
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    no_bias = {k: (W, np.zeros_like(b)) for k, (W, b) in params.items()}
    tu.assert_allclose(core.jit(mha.apply_fun)(params, x), _np_mha(no_bias, tu.wide(x), tu.wide(x), 2), np.float32,
                       atol=1e-5, rtol=1e-5)


def test_layer_names():
    # nn.summary shows these
    from nn.normalization import BatchNorm, GroupNorm, LayerNorm
    layers = [BatchNorm(), LayerNorm(), GroupNorm(4), Embedding(10, 3), MultiHeadAttention(2), SimpleRNN(3),
              LSTM(4), GRU(5)]
    assert [lyr.name for lyr in layers] == ["BatchNorm", "LayerNorm", "GroupNorm(4)", "Embedding(10, 3)",
                                           "MultiHeadAttention(2)", "SimpleRNN(3)", "LSTM(4)", "GRU(5)"]


def test_attention_errors():
    q = np.ones((1, 2, 2, 4), np.float32)
    with pytest.raises(TypeError, match=r"mask must be boolean .* got dtype int32"):
        dot_product_attention(q, q, q, mask=np.ones((2, 2), np.int32))
    with pytest.raises(TypeError, match=r"query and key must have the same heads and depth, got shapes "
                                        r"\(1, 2, 2, 4\) and \(1, 2, 2, 3\)"):
        dot_product_attention(q, q[..., :3], q)
    with pytest.raises(TypeError, match=r"query must be \(\.\.\., length, heads, depth\), got shape \(2, 4\)"):
        dot_product_attention(q[0, 0], q, q)
    with pytest.raises(ValueError, match=r"qkv_features \(7\) must be a multiple of num_heads \(2\)"):
        MultiHeadAttention(num_heads=2, qkv_features=7).init_fun(KEY, (-1, 3, 4))
    with pytest.raises(ValueError, match=r"qkv_features \(8\) must equal num_heads \* head_dim \(2 \* 3\)"):
        MultiHeadAttention(num_heads=2, qkv_features=8, head_dim=3).init_fun(KEY, (-1, 3, 4))


# ----- recurrent ----------------------------------------------------------------------------------

RECURRENT = {"rnn": (SimpleRNN, _np_rnn), "lstm": (LSTM, _np_lstm), "gru": (GRU, _np_gru)}


@pytest.mark.parametrize("name", sorted(RECURRENT))
def test_recurrent_values_and_vmap(name, rng):
    make, reference = RECURRENT[name]
    layer = make(4)
    _, params = _init(layer, (-1, 5, 3), rng)
    x = rng.normal(size=(2, 5, 3)).astype(np.float32)
    expected = reference(_wide_tree(params), tu.wide(x))
    tu.assert_allclose(core.jit(layer.apply_fun)(params, x), expected, np.float32, atol=1e-5, rtol=1e-5)
    if name == "lstm":   # no batch coupling: vmap over single sequences agrees
        tu.assert_allclose(core.vmap(layer.apply_fun, in_axes=(None, 0))(params, x), expected, np.float32,
                           atol=1e-5, rtol=1e-5)


def test_default_init():
    _, params = LSTM(3).init_fun(KEY, (-1, 2, 5))
    assert {k: np.shape(v) for k, v in params.items()} == {"W": (5, 12), "U": (3, 12), "b": (12,)}
    U = np.asarray(params["U"], np.float64)
    for g in range(4):   # one orthogonal block per gate
        block = U[:, 3 * g:3 * (g + 1)]
        np.testing.assert_allclose(block.T @ block, np.eye(3), atol=1e-5)
    np.testing.assert_array_equal(np.asarray(params["b"]), np.zeros(12))


def test_lstm_check_grads(x64, rng):
    lstm = LSTM(2)
    _, params = _init(lstm, (-1, 3, 2), rng, np.float64)
    x = rng.normal(size=(1, 3, 2))
    tu.check_grads(lstm.apply_fun, (params, x), order=1)


def test_recurrent_errors():
    with pytest.raises(ValueError, match=r"GRU: inputs must be \(batch, time, features\) with known features"):
        GRU(2).init_fun(KEY, (-1, 3, -1))
    _, params = _init(SimpleRNN(2), (-1, 3, 2), np.random.default_rng(0))
    with pytest.raises(TypeError, match=r"SimpleRNN: inputs must be \(\.\.\., time, features\), got shape \(2,\)"):
        SimpleRNN(2).apply_fun(params, np.ones(2, np.float32))


# ----- Embedding ----------------------------------------------------------------------------------

def test_embedding_values(rng):
    emb = Embedding(6, 3)
    out_shape, table = emb.init_fun(KEY, (-1, 4))
    assert out_shape == (-1, 4, 3) and table.shape == (6, 3)
    ids = rng.integers(0, 6, size=(2, 4)).astype(np.int32)
    got = core.jit(emb.apply_fun)(table, ids)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(table)[ids])
    with pytest.raises(TypeError, match=r"Embedding: ids must be integers, got dtype float32"):
        emb.apply_fun(table, ids.astype(np.float32))

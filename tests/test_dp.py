"""optim/dp.py: the DP-SGD aggregate against NumPy with the same key, the noise's standard deviation,
the dp_sgd wrapper, Poisson batches (rate, purity in (seed, step), shape, mask, overflow) and their
size bound against SciPy's binomial tail, a jitted Poisson-sampled run that compiles once and equals
a NumPy replica built from a Python loop of single-example gradients, and virtual batches."""
import doctest
import json
import warnings

import numpy as np
import pytest

import core
import core.numpy as jnp
from core import random
from core.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten
from optim import dp, sgd
from optim.dp import (DpSgdState, accumulate_chunks, dp_aggregate, dp_sgd, max_batch_size_for,
                      poisson_batch)
from optim.utils import optimizer_state_to_arrays, optimizer_state_from_arrays

C = 0.5        # l2_norm_clip
SIGMA = 1.3    # noise_multiplier


# ----- a small model and its clipped gradient sums ---------------------------------------------------

def init_params(rng):
    return {"w1": jnp.asarray(rng.normal(size=(5, 4)).astype(np.float32)),
            "b1": jnp.asarray(rng.normal(size=(4,)).astype(np.float32)),
            "w2": jnp.asarray(rng.normal(size=(4,)).astype(np.float32))}


def loss(params, x, y):
    """The loss of ONE example (x: float32[5], y: float32[])."""
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return (h @ params["w2"] - y) ** 2


_single_grad = core.jit(core.grad(loss))


def clipped_sum_reference(params, x, y, mask):
    """NumPy float64: a Python loop over single-example gradients, each clipped to norm C, weighted
    by the mask."""
    leaves, treedef = tree_flatten(params)
    total = [np.zeros(np.shape(leaf)) for leaf in leaves]
    for i in range(len(x)):
        if mask[i] == 0:
            continue
        g = [np.asarray(leaf, np.float64) for leaf in tree_leaves(_single_grad(params, x[i], y[i]))]
        norm = np.sqrt(sum(np.sum(leaf ** 2) for leaf in g))
        factor = mask[i] * min(1.0, C / norm)
        total = [t + factor * leaf for t, leaf in zip(total, g)]
    return tree_unflatten(treedef, total)


def clipped_sum_vmap(params, x, y, mask):
    """The same with vmap, traceable under jit (a stand-in for core's clipped-gradient functions)."""
    grads = core.vmap(core.grad(loss), in_axes=(None, 0, 0))(params, x, y)
    sq = sum(jnp.sum(leaf.reshape(leaf.shape[0], -1) ** 2, axis=1) for leaf in tree_leaves(grads))
    factor = jnp.minimum(1.0, C / jnp.maximum(jnp.sqrt(sq), 1e-12)) * mask
    return tree_map(lambda leaf: jnp.tensordot(factor, leaf, axes=1), grads)


def make_data(rng, n):
    return (rng.normal(size=(n, 5)).astype(np.float32), rng.normal(size=(n,)).astype(np.float32))


def noise_like(tree, key):
    """The noise dp_aggregate adds for `key`, drawn leaf by leaf from split(key, num_leaves)."""
    leaves, treedef = tree_flatten(tree)
    keys = random.split(key, len(leaves))
    return tree_unflatten(treedef, [np.asarray(random.normal(keys[i], np.shape(leaf), jnp.float32), np.float64)
                                    for i, leaf in enumerate(leaves)])


def assert_trees_close(got, expected, rtol=1e-5, atol=1e-6):
    got_leaves, got_def = tree_flatten(got)
    exp_leaves, exp_def = tree_flatten(expected)
    assert got_def == exp_def
    for g, e in zip(got_leaves, exp_leaves, strict=True):
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64), rtol=rtol, atol=atol)


# ----- dp_aggregate ---------------------------------------------------------------------------------

def test_reference_clipped_sum_matches_vmap_version(rng):
    params = init_params(rng)
    x, y = make_data(rng, 9)
    mask = np.array([1, 1, 0, 1, 1, 1, 0, 1, 1], np.float32)
    assert_trees_close(clipped_sum_vmap(params, jnp.asarray(x), jnp.asarray(y), jnp.asarray(mask)),
                       clipped_sum_reference(params, x, y, mask))


def test_one_dp_step_equals_numpy_with_the_same_key(rng):
    params = init_params(rng)
    x, y = make_data(rng, 12)
    mask = np.ones(12, np.float32)
    reference = clipped_sum_reference(params, x, y, mask)
    clipped = tree_map(lambda a: jnp.asarray(a.astype(np.float32)), reference)
    key = random.PRNGKey(7)
    batch = 10.0  # the expected batch size, not the realized 12
    noise = noise_like(reference, key)
    expected = tree_map(lambda s, z: (s + SIGMA * C * z) / batch, reference, noise)
    kwargs = dict(l2_norm_clip=C, noise_multiplier=SIGMA, expected_batch_size=batch)
    assert_trees_close(dp_aggregate(clipped, key, **kwargs), expected)
    assert_trees_close(core.jit(lambda s, k: dp_aggregate(s, k, **kwargs))(clipped, key), expected)
    # a different key, different noise
    other = dp_aggregate(clipped, random.PRNGKey(8), **kwargs)
    assert not np.allclose(np.asarray(other["w1"]), expected["w1"])


def test_noise_std_is_noise_multiplier_times_clip_over_expected_batch():
    # Noise sized for the sum, divided by B with the sum: std sigma * C / B on the result (noise
    # added to the mean instead would give B times less, the bug class this guards).
    batch = 32
    zeros = {"a": jnp.zeros((300, 300)), "b": jnp.zeros((100, 300))}
    out = dp_aggregate(zeros, random.PRNGKey(0), l2_norm_clip=C, noise_multiplier=SIGMA,
                       expected_batch_size=batch)
    a, b = np.asarray(out["a"], np.float64).ravel(), np.asarray(out["b"], np.float64).ravel()
    values = np.concatenate([a, b])
    target = SIGMA * C / batch
    assert abs(values.std() / target - 1) < 0.01          # n = 120000: 0.2% standard error
    assert abs(values.mean()) < 4 * target / np.sqrt(values.size)
    r = np.corrcoef(a[:b.size], b)[0, 1]                   # the leaves' noise is independent
    assert abs(r) < 5 / np.sqrt(b.size)
    # on a nonzero sum the noise is the same draw, added before the division
    ones = tree_map(jnp.ones_like, zeros)
    shifted = dp_aggregate(ones, random.PRNGKey(0), l2_norm_clip=C, noise_multiplier=SIGMA,
                           expected_batch_size=batch)
    np.testing.assert_allclose(np.asarray(shifted["a"]) - 1 / batch, np.asarray(out["a"]), atol=1e-6)


def test_16_bit_leaves_get_float32_noise_and_keep_their_dtype():
    g = jnp.asarray(np.linspace(-1, 1, 64).astype(np.float16))
    key = random.PRNGKey(1)
    out = dp_aggregate([g], key, l2_norm_clip=2.0, noise_multiplier=0.7, expected_batch_size=4)
    assert out[0].dtype == jnp.float16
    z = np.asarray(random.normal(random.split(key, 1)[0], (64,), jnp.float32))
    expected = ((np.asarray(g, np.float32) + np.float32(1.4) * z) / np.float32(4)).astype(np.float16)
    np.testing.assert_allclose(np.asarray(out[0], np.float32), expected.astype(np.float32), rtol=1e-3)


def test_dp_aggregate_bad_inputs():
    with pytest.raises(TypeError, match=r"leaf 1 is int32\[3\]"):
        dp_aggregate([jnp.zeros(2), jnp.zeros(3, jnp.int32)], random.PRNGKey(0), l2_norm_clip=1.0,
                     noise_multiplier=1.0, expected_batch_size=2)
    with pytest.raises(ValueError, match="l2_norm_clip must be a finite number > 0"):
        dp_aggregate([jnp.zeros(2)], random.PRNGKey(0), l2_norm_clip=0.0, noise_multiplier=1.0,
                     expected_batch_size=2)
    with pytest.raises(ValueError, match="noise_multiplier must be a finite number >= 0"):
        dp_aggregate([jnp.zeros(2)], random.PRNGKey(0), l2_norm_clip=1.0, noise_multiplier=-1.0,
                     expected_batch_size=2)
    with pytest.raises(TypeError, match=r"key must be a PRNG key, uint32\[2\]"):
        dp_sgd(sgd(0.1), key=jnp.zeros(3), l2_norm_clip=1.0, noise_multiplier=1.0, expected_batch_size=2)


# ----- the dp_sgd wrapper ---------------------------------------------------------------------------

def test_dp_sgd_updates_with_a_fresh_key_per_step_and_resumes(rng):
    params = init_params(rng)
    key = random.PRNGKey(3)
    kwargs = dict(l2_norm_clip=C, noise_multiplier=SIGMA, expected_batch_size=8)
    init, update, get_params = dp_sgd(sgd(0.1), key=key, **kwargs)
    update = core.jit(update)
    sums = [tree_map(lambda p: jnp.asarray(rng.normal(size=p.shape).astype(np.float32)), params)
            for _ in range(3)]
    state = init(params)
    expected = tree_map(lambda p: np.asarray(p, np.float64), params)
    for t in range(2):
        state = update(t, sums[t], state)
        noise = noise_like(params, random.fold_in(key, t))
        expected = tree_map(lambda p, s, z: p - 0.1 * (np.asarray(s, np.float64) + SIGMA * C * z) / 8,
                            expected, sums[t], noise)
    assert isinstance(state, DpSgdState) and int(state.num_updates) == 2
    assert_trees_close(get_params(state), expected)
    # the state survives pack / json / unpack, and the resumed run draws the same noise
    arrays, structure = optimizer_state_to_arrays(state)
    restored = optimizer_state_from_arrays(arrays, json.loads(json.dumps(structure)))
    a, b = update(2, sums[2], state), update(2, sums[2], restored)
    for x, y in zip(tree_leaves(get_params(a)), tree_leaves(get_params(b)), strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# ----- Poisson batches ------------------------------------------------------------------------------

def test_poisson_batch_shape_mask_and_purity():
    indices, mask = poisson_batch(5, 17, 1000, 0.02, max_batch_size=48)
    assert indices.shape == mask.shape == (48,)
    assert indices.dtype == np.int32 and mask.dtype == np.float32
    k = int(mask.sum())
    assert np.all(mask[:k] == 1) and np.all(mask[k:] == 0)
    real = indices[:k]
    assert np.all(np.diff(real) > 0) and real.min() >= 0 and real.max() < 1000  # sorted, distinct
    assert np.all(indices[k:] == 0)
    again = poisson_batch(5, 17, 1000, 0.02, max_batch_size=48)
    np.testing.assert_array_equal(again[0], indices)
    np.testing.assert_array_equal(again[1], mask)
    others = [poisson_batch(5, 18, 1000, 0.02, 48)[0], poisson_batch(6, 17, 1000, 0.02, 48)[0]]
    assert all(not np.array_equal(o, indices) for o in others)
    default_indices, _ = poisson_batch(5, 17, 1000, 0.02)
    assert default_indices.shape == (max_batch_size_for(1000, 0.02),)


def test_poisson_batch_inclusion_is_independent_with_rate_q():
    n, q, steps = 200, 0.05, 3000
    counts = np.zeros(n)
    sizes = []
    for step in range(steps):
        indices, mask = poisson_batch(11, step, n, q, max_batch_size=40)
        counts[indices[mask == 1]] += 1
        sizes.append(mask.sum())
    sizes = np.array(sizes)
    # overall rate: binomial with n * steps trials
    assert abs(counts.sum() / (n * steps) - q) < 5 * np.sqrt(q * (1 - q) / (n * steps))
    # each example: binomial(steps, q); a chi-square over examples with n - 1 degrees of freedom
    chi2 = np.sum((counts - steps * q) ** 2 / (steps * q * (1 - q)))
    assert abs(chi2 - n) < 6 * np.sqrt(2 * n)
    # batch sizes vary as a binomial(n, q) (a fixed-size sampler would have variance 0)
    assert abs(sizes.var() / (n * q * (1 - q)) - 1) < 0.1
    assert abs(sizes.mean() - n * q) < 5 * np.sqrt(n * q * (1 - q) / steps)


def test_poisson_batch_overflow_truncates_with_a_warning():
    with pytest.warns(RuntimeWarning, match="step 4 sampled .* more than max_batch_size=5"):
        indices, mask = poisson_batch(0, 4, 100, 0.5, max_batch_size=5)
    assert np.all(mask == 1) and len(set(indices.tolist())) == 5
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        poisson_batch(0, 4, 100, 0.5)  # the default size does not overflow here


@pytest.mark.parametrize("n, q, p", [(60000, 256 / 60000, 1e-9), (60000, 256 / 60000, 1e-6), (100, 0.05, 1e-9),
                                     (10 ** 7, 0.3, 1e-12), (1000, 0.001, 1e-6), (50, 0.999, 1e-6)])
def test_max_batch_size_for_is_the_binomial_quantile(n, q, p):
    binom = pytest.importorskip("scipy.stats").binom
    m = max_batch_size_for(n, q, overflow_probability=p)
    assert binom.sf(m, n, q) < p <= binom.sf(m - 1, n, q)
    m8 = max_batch_size_for(n, q, overflow_probability=p, multiple_of=8)
    assert m8 % 8 == 0 and m <= m8 < m + 8


def test_poisson_batch_bad_arguments():
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        poisson_batch(-1, 0, 10, 0.1)
    with pytest.raises(ValueError, match="sampling_rate must be a number in"):
        poisson_batch(0, 0, 10, 1.5, max_batch_size=4)
    with pytest.raises(ValueError, match="overflow_probability must be a number in"):
        max_batch_size_for(10, 0.1, overflow_probability=0.0)


# ----- virtual batches ------------------------------------------------------------------------------

def test_virtual_batches_equal_one_shot(rng):
    params = init_params(rng)
    x, y = make_data(rng, 24)
    mask = np.ones(24, np.float32)
    mask[[3, 10]] = 0.0       # padding inside chunks
    mask[16:] = 0.0           # and a whole chunk of padding at the end (skipped by chunks of 8)
    x_nan = x.copy()
    x_nan[16:] = np.nan       # ... so even NaN data there contributes nothing

    def chunk_fn(batch, m):
        sums = clipped_sum_vmap(params, batch["x"], batch["y"], m)
        return sums, jnp.sum(m)   # sums only: they add up over chunks

    reference = clipped_sum_reference(params, x, y, mask)
    for chunk_size, data in ((8, x_nan), (8, x), (24, x)):
        total, count = core.jit(lambda b, m: accumulate_chunks(chunk_fn, b, mask=m, chunk_size=chunk_size))(
            {"x": jnp.asarray(data), "y": jnp.asarray(y)}, jnp.asarray(mask))
        assert float(count) == mask.sum()
        assert_trees_close(total, reference)
    # without a mask: every chunk runs (on finite data)
    x_ok = x[:16]
    total = accumulate_chunks(lambda b: clipped_sum_vmap(params, b[0], b[1], jnp.ones(4)),
                              (jnp.asarray(x_ok), jnp.asarray(y[:16])), chunk_size=4)
    assert_trees_close(total, clipped_sum_reference(params, x_ok, y[:16], np.ones(16)))


def test_accumulate_chunks_bad_batches():
    with pytest.raises(ValueError, match="batch size 10 is not a multiple of chunk_size=4"):
        accumulate_chunks(jnp.sum, jnp.zeros(10), chunk_size=4)
    with pytest.raises(ValueError, match=r"same leading \(batch\) axis; got float32\[8\], float32\[6\]"):
        accumulate_chunks(lambda b: b[0], (jnp.zeros(8), jnp.zeros(6)), chunk_size=2)


# ----- a Poisson-sampled DP run: compiles once, equals a NumPy replica --------------------------------

def test_poisson_sampled_jitted_run_compiles_once_and_matches_numpy(rng):
    n, q, lr, steps, seed = 64, 0.2, 0.5, 10, 123
    max_batch = max_batch_size_for(n, q, multiple_of=8)
    x, y = make_data(rng, n)
    params = init_params(rng)
    key = random.PRNGKey(99)
    expected_batch = q * n
    opt = dp_sgd(sgd(lr), key=key, l2_norm_clip=C, noise_multiplier=SIGMA, expected_batch_size=expected_batch)
    traces = []

    @core.jit
    def train_step(step, opt_state, xb, yb, mask):
        traces.append(1)  # runs only while tracing
        p = opt.params_fn(opt_state)
        clipped = accumulate_chunks(lambda b, m: clipped_sum_vmap(p, b[0], b[1], m), (xb, yb), mask=mask,
                                    chunk_size=8)
        return opt.update_fn(step, clipped, opt_state)

    state = opt.init_fn(params)
    replica = tree_map(lambda a: np.asarray(a, np.float64), params)
    sizes = set()
    for t in range(steps):
        indices, mask = poisson_batch(seed, t, n, q, max_batch)
        sizes.add(int(mask.sum()))
        state = train_step(t, state, x[indices], y[indices], mask)
        # the replica: only the sampled examples, a Python loop of single-example gradients
        real = indices[mask == 1]
        current = tree_map(lambda a: jnp.asarray(a.astype(np.float32)), replica)
        clipped = clipped_sum_reference(current, x[real], y[real], np.ones(len(real)))
        noise = noise_like(replica, random.fold_in(key, t))
        replica = tree_map(lambda p, s, z: p - lr * (s + SIGMA * C * z) / expected_batch,
                           replica, clipped, noise)
    assert len(traces) == 1
    assert len(sizes) > 2  # the realized batch size changed, the compiled shape did not
    assert_trees_close(opt.params_fn(state), replica, rtol=1e-4, atol=1e-5)


def test_doctests():
    result = doctest.testmod(dp, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0

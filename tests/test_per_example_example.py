"""examples/per_example_gradients.py (issue 5): its per-example gradients, its seed example and its DP-SGD step
are checked against a hand-written float64 NumPy backward pass and against NumPy's own clipping."""
import os
import runpy

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIGMA, CLIP = 1.1, 4.0  # C between the smallest and largest per-example norm (about 2.3 and 6.5)


@pytest.fixture(scope="module")
def example():
    return runpy.run_path(os.path.join(ROOT, "examples", "per_example_gradients.py"))


@pytest.fixture(scope="module")
def noisy(example):
    return example["main"](clip_norm=CLIP, noise_multiplier=SIGMA)


@pytest.fixture(scope="module")
def noiseless(example):
    return example["main"](clip_norm=CLIP, noise_multiplier=0.0)


def numpy_per_example_grads(params, xs, ys):
    """Backpropagation through relu(x W1 + b1) W2 + b2 and softmax cross-entropy, one example at a time."""
    (w1, b1), (w2, b2) = [(np.asarray(p["w"], np.float64), np.asarray(p["b"], np.float64)) for p in params]
    out = {"w1": [], "b1": [], "w2": [], "b2": []}
    for x, y in zip(np.asarray(xs, np.float64), np.asarray(ys)):
        z1 = x @ w1 + b1
        h = np.maximum(z1, 0.0)
        logits = h @ w2 + b2
        p = np.exp(logits - logits.max())
        p /= p.sum()
        dlogits = p - np.eye(len(b2))[y]
        dz1 = (w2 @ dlogits) * (z1 > 0)
        for name, g in (("w1", np.outer(x, dz1)), ("b1", dz1), ("w2", np.outer(h, dlogits)), ("b2", dlogits)):
            out[name].append(g)
    return {k: np.stack(v) for k, v in out.items()}


def as_named(grads):
    return {"w1": grads[0]["w"], "b1": grads[0]["b"], "w2": grads[1]["w"], "b2": grads[1]["b"]}


def test_seed_example_and_printout(example, capsys):
    result = example["main"](batch=4)
    np.testing.assert_array_equal(np.asarray(result["seed_grads"]), [[1, 2, 3], [2, 4, 6]])
    text = capsys.readouterr().out
    assert "[[1. 2. 3.]\n [2. 4. 6.]]" in text
    assert "largest difference from a loop of core.grad" in text


def test_vmap_grads_equal_the_loop_and_a_numpy_backward_pass(noisy):
    grads, loop = as_named(noisy["grads"]), as_named(noisy["loop_grads"])
    expected = numpy_per_example_grads(noisy["params"], noisy["xs"], noisy["ys"])
    assert len(set(np.asarray(noisy["ys"]).tolist())) > 1  # labels that differ, so the one-hot matters
    for name, want in expected.items():
        assert want.shape[0] == 16 and np.abs(want).max() > 0  # one nonzero gradient per example
        np.testing.assert_allclose(np.asarray(grads[name]), want, rtol=1e-4, atol=1e-5, err_msg=name)
        np.testing.assert_allclose(np.asarray(grads[name]), np.asarray(loop[name]), rtol=1e-5, atol=1e-6,
                                   err_msg=name)


def test_clipping_and_noiseless_average(noiseless):
    grads = {k: np.asarray(v, np.float64) for k, v in as_named(noiseless["grads"]).items()}
    norms = np.sqrt(sum((g.reshape(16, -1) ** 2).sum(axis=1) for g in grads.values()))
    np.testing.assert_allclose(np.asarray(noiseless["norms"]), norms, rtol=1e-5)
    assert norms.min() < CLIP < norms.max()  # some examples get clipped, some are left alone
    factor = np.minimum(1.0, CLIP / norms)
    clipped = as_named(noiseless["clipped"])
    mean = as_named(noiseless["noisy_grad"])
    for name, g in grads.items():
        want = g * factor.reshape((16,) + (1,) * (g.ndim - 1))
        np.testing.assert_allclose(np.asarray(clipped[name]), want, rtol=1e-5, atol=1e-7, err_msg=name)
        np.testing.assert_allclose(np.asarray(mean[name]), want.mean(axis=0), rtol=1e-5, atol=1e-7, err_msg=name)
    np.testing.assert_allclose(np.asarray(noiseless["clipped_norms"]), np.minimum(norms, CLIP), rtol=1e-5)


def test_noise_has_the_dp_sgd_scale(noisy, noiseless):
    # Same seed, same data: the difference is the noise alone, N(0, (sigma * C / batch)^2) per entry.
    noisy_g, clean_g = as_named(noisy["noisy_grad"]), as_named(noiseless["noisy_grad"])
    noise = np.concatenate([np.ravel(np.asarray(noisy_g[k]) - np.asarray(clean_g[k])) for k in noisy_g])
    assert noise.size == 20 * 32 + 32 + 32 * 4 + 4
    # 804 draws: the sample std is within 10% of the true one with overwhelming probability.
    assert abs(noise.std() / (SIGMA * CLIP / 16) - 1.0) < 0.1
    assert abs(noise.mean()) < 4 * SIGMA * CLIP / 16 / np.sqrt(noise.size)

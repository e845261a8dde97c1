"""A small convnet classifier on the bundled 8x8 handwritten digits, built from `nn` and `optim`.

It shows a stax/minmax program end to end on real data: the network is an `nn.serial` of `Conv`,
`Relu`, `MaxPool`, `Flatten` and `Dense` layers, the loss `nn.softmax_cross_entropy`, the
optimizer `optim.adam` with a `cosine_decay` step size, and one training step,
`step(i, opt_state, batch)`, is compiled whole with `core.jit` in the JAX README's minmax style
(`opt_init, opt_update, get_params`). The data is scikit-learn's digits set, bundled as
`examples/data/digits.csv.gz` (1,797 images of 64 integer pixels 0..16, then the label; see
examples/data/README.md), so nothing is downloaded. A seeded NumPy permutation splits it into
1,347 training and 450 test images; pixels are scaled to [0, 1] and training images are moved by
up to one pixel at random. The defaults (20 epochs of minibatches of 32: 840 steps, about 6 s of
training plus a few seconds of compiling on two CPU cores) reach 98-99% test accuracy (97.8% to
99.3% over seeds 0-11).

    PYTHONPATH=. .venv/bin/python examples/digits_convnet.py [--epochs N] [--seed S]
"""
import argparse
import gzip
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import core  # noqa: E402
import core.numpy as jnp  # noqa: E402
import nn  # noqa: E402
import optim  # noqa: E402
from core import random  # noqa: E402

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "digits.csv.gz")
NUM_TRAIN = 1347


def load_digits(path=DATA):
    """All 1,797 digits: images (N, 8, 8, 1) float32 in [0, 1] and integer labels (N,)."""
    with gzip.open(path, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.int64)
    images = (table[:, :64] / 16.0).astype(np.float32).reshape(-1, 8, 8, 1)
    return images, table[:, 64].astype(np.int32)


def split(images, labels, seed, num_train=NUM_TRAIN):
    """A seeded shuffle, then the first `num_train` examples train and the rest test."""
    order = np.random.default_rng(seed).permutation(len(labels))
    train, test = order[:num_train], order[num_train:]
    return (images[train], labels[train]), (images[test], labels[test])


def convnet(num_classes=10):
    """8x8x1 -> 8x8x16 -> 8x8x32 -> 4x4x32 -> 64 -> 10 logits."""
    return nn.serial(
        nn.Conv(16, (3, 3), padding="SAME"), nn.Relu,
        nn.Conv(32, (3, 3), padding="SAME"), nn.Relu,
        nn.MaxPool((2, 2), strides=(2, 2)),
        nn.Flatten,
        nn.Dense(64), nn.Relu,
        nn.Dense(num_classes))


def random_shifts(rng, images):
    """Each image moved by up to one pixel in each direction (zeros fill the vacated edge): the
    classic augmentation for digits, which keeps the small training set from being memorised."""
    n, h, w, _ = images.shape
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1), (0, 0)))
    dy, dx = rng.integers(0, 3, n), rng.integers(0, 3, n)
    rows = dy[:, None] + np.arange(h)[None, :]
    cols = dx[:, None] + np.arange(w)[None, :]
    return padded[np.arange(n)[:, None, None], rows[:, :, None], cols[:, None, :]]


def minibatches(rng, images, labels, batch_size, augment=True):
    """One epoch of shuffled minibatches, all of `batch_size` (the remainder is dropped, so the
    jitted step sees a single input shape and compiles once)."""
    order = rng.permutation(len(labels))
    for start in range(0, len(labels) - batch_size + 1, batch_size):
        idx = order[start:start + batch_size]
        batch = random_shifts(rng, images[idx]) if augment else images[idx]
        yield jnp.asarray(batch), jnp.asarray(labels[idx])


def main(epochs=20, seed=0, batch_size=32, step_size=2e-3, augment=True, verbose=True):
    """Train for `epochs` epochs and return the final test accuracy (a float in [0, 1])."""
    (train_x, train_y), (test_x, test_y) = split(*load_digits(), seed)
    init_fun, predict = convnet()
    _, init_params = init_fun(random.PRNGKey(seed), (-1, 8, 8, 1))

    def loss(params, batch):
        inputs, targets = batch
        return nn.softmax_cross_entropy(predict(params, inputs), targets)

    # cosine decay to zero over the run: large early steps, then a settled final model
    steps_per_epoch = len(train_y) // batch_size
    opt_init, opt_update, get_params = optim.adam(optim.cosine_decay(step_size, epochs * steps_per_epoch))

    @core.jit
    def step(i, opt_state, batch):
        params = get_params(opt_state)
        value, g = core.value_and_grad(loss)(params, batch)
        return opt_update(i, g, opt_state), value

    @core.jit
    def test_accuracy(params, inputs, targets):
        return nn.accuracy(predict(params, inputs), targets)

    test_x, test_y = jnp.asarray(test_x), jnp.asarray(test_y)
    opt_state = opt_init(init_params)
    batch_rng = np.random.default_rng(seed + 1)
    i = 0
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        for batch in minibatches(batch_rng, train_x, train_y, batch_size, augment):
            opt_state, value = step(i, opt_state, batch)
            i += 1
        if verbose:
            acc = float(test_accuracy(get_params(opt_state), test_x, test_y))
            print(f"epoch {epoch:3d}  loss {float(value):.4f}  test accuracy {acc:.4f}")
    acc = float(test_accuracy(get_params(opt_state), test_x, test_y))
    if verbose:
        print(f"{i} steps in {time.perf_counter() - start:.1f}s; test accuracy {acc:.4f} "
              f"on {len(test_y)} held-out digits")
    return acc


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(epochs=args.epochs, seed=args.seed)

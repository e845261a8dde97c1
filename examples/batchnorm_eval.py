"""Train a network with `nn.BatchNorm` carrying its running statistics as explicit state, then
evaluate it in eval mode, where one example's prediction no longer depends on its batch.

BatchNorm normalizes with the statistics of the current batch while training ("train" mode) and
keeps exponential moving averages of them, the running mean and variance, to use at test time
("eval" mode). stax's BatchNorm has only the first half. Here the running statistics are state,
separate from the trained parameters: `state = net.init_state(input_shape)` builds it, and the
jitted training step threads it,

    logits, state = apply(params, x, state=state, mode="train")    # batch statistics; state updated

returning the new network state alongside the new optimizer state. Evaluation uses the running
statistics and leaves the state unchanged:

    logits, _ = apply(params, x, state=state, mode="eval")

The script trains a small convnet with two BatchNorm layers on the bundled 8x8 digits (the split
of `examples/digits_convnet.py`), reports its eval-mode test accuracy, and shows the point of
eval mode: an example's logits computed alone equal its logits inside the test batch (up to
rounding), whereas in train mode they change with the company the example keeps (alone, the
batch statistics are those of one example).

    PYTHONPATH=. .venv/bin/python examples/batchnorm_eval.py [--epochs N] [--seed S]
"""
import argparse
import os
import sys

import numpy as np

EXAMPLES = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(EXAMPLES))
sys.path.insert(0, EXAMPLES)

import core  # noqa: E402
import core.numpy as jnp  # noqa: E402
import nn  # noqa: E402
import optim  # noqa: E402
from core import random  # noqa: E402
from digits_convnet import load_digits, minibatches, split  # noqa: E402

# The default 0.99 averages over ~100 steps; this short run (a few hundred steps) wants the
# running statistics to follow the last ~10 batches, by which time the parameters have settled.
MOMENTUM = 0.9


def bn_convnet(num_classes=10):
    """Conv -> BatchNorm over (batch, height, width) per channel -> ... -> Dense -> BatchNorm over
    the batch per feature -> Dense logits."""
    return nn.serial(
        nn.Conv(16, (3, 3), padding="SAME"), nn.BatchNorm(axis=(0, 1, 2), momentum=MOMENTUM), nn.Relu,
        nn.MaxPool((2, 2), strides=(2, 2)),
        nn.Flatten,
        nn.Dense(64), nn.BatchNorm(axis=(0,), momentum=MOMENTUM), nn.Relu,
        nn.Dense(num_classes))


def main(epochs=10, seed=0, batch_size=32, step_size=2e-3, verbose=True):
    """Train, then evaluate. Returns a dict: `test_accuracy` (eval mode), the final `params` and
    `state`, the `initial_state`, the split's `test_x`/`test_y`, and the logits of test example 0
    computed `eval_alone` / `eval_in_batch` (inside the whole test set) / `train_alone` /
    `train_in_batch`, as NumPy arrays."""
    (train_x, train_y), (test_x, test_y) = split(*load_digits(), seed)
    net = bn_convnet()
    in_shape = (-1, 8, 8, 1)
    _, init_params = net.init_fun(random.PRNGKey(seed), in_shape)
    initial_state = net.init_state(in_shape)
    apply = net.apply_fun

    def loss(params, state, batch):
        inputs, targets = batch
        logits, new_state = apply(params, inputs, state=state, mode="train")
        return nn.softmax_cross_entropy(logits, targets), new_state

    steps_per_epoch = len(train_y) // batch_size
    opt_init, opt_update, get_params = optim.adam(optim.cosine_decay(step_size, epochs * steps_per_epoch))

    @core.jit
    def step(i, opt_state, state, batch):
        # the gradient flows to the parameters only; the new running statistics ride along as aux
        (value, state), g = core.value_and_grad(loss, has_aux=True)(get_params(opt_state), state, batch)
        return opt_update(i, g, opt_state), state, value

    @core.jit
    def predict(params, state, inputs):
        return apply(params, inputs, state=state, mode="eval")[0]

    @core.jit
    def predict_with_batch_stats(params, inputs):
        return apply(params, inputs, mode="train")   # stax's only behaviour: no state at all

    opt_state, state = opt_init(init_params), initial_state
    batch_rng = np.random.default_rng(seed + 1)
    i = 0
    for epoch in range(1, epochs + 1):
        for batch in minibatches(batch_rng, train_x, train_y, batch_size, augment=False):
            opt_state, state, value = step(i, opt_state, state, batch)
            i += 1
        if verbose:
            print(f"epoch {epoch:3d}  loss {float(value):.4f}")

    params = get_params(opt_state)
    xs, ys = jnp.asarray(test_x), jnp.asarray(test_y)
    test_accuracy = float(nn.accuracy(predict(params, state, xs), ys))
    out = dict(
        test_accuracy=test_accuracy,
        params=params, state=state, initial_state=initial_state, test_x=test_x, test_y=test_y,
        eval_alone=np.asarray(predict(params, state, xs[:1]))[0],
        eval_in_batch=np.asarray(predict(params, state, xs))[0],
        train_alone=np.asarray(predict_with_batch_stats(params, xs[:1]))[0],
        train_in_batch=np.asarray(predict_with_batch_stats(params, xs))[0])
    if verbose:
        print(f"eval-mode test accuracy {test_accuracy:.4f} on {len(test_y)} held-out digits")
        print("test example 0's logits, alone vs inside the test batch (largest difference):")
        print(f"  eval mode  {np.abs(out['eval_alone'] - out['eval_in_batch']).max():.2e}   (running statistics)")
        print(f"  train mode {np.abs(out['train_alone'] - out['train_in_batch']).max():.2e}   (batch statistics)")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    main(epochs=args.epochs, seed=args.seed)

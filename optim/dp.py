"""DP-SGD as an optimizer-side gradient transformation (issue 15), Poisson batches at a fixed shape,
and virtual batches.

DP-SGD (Abadi et al. 2016, "Deep Learning with Differential Privacy", arXiv:1607.00133, Algorithm
1) replaces the minibatch gradient by a noisy average of clipped per-example gradients:

    g_i      = grad of the loss of example i                    (per-example gradient)
    S        = sum_{i in batch} g_i * min(1, C / ||g_i||_2)      (the clipped SUM; computed in core)
    g_priv   = (S + N(0, (sigma * C)^2 I)) / B_expected          (`dp_aggregate`, this module)
    params   <- any optimizer's update with g_priv                (`dp_sgd` wraps any `optim` optimizer)

Sensitivity. Under the add-or-remove-one relation (the one the accountant in optim/privacy.py
uses), adding or removing one example changes S by that example's clipped gradient, whose L2 norm
is at most C. So the noise on the SUM has standard deviation `sigma * C` (sigma = the noise
multiplier), and the division by B_expected (the EXPECTED batch size, q * N, never the realized
batch size, which depends on the data and would leak it) is post-processing. A known bug class
adds noise sized for the sum to the mean (std sigma * C on S / B instead of on S): B times too
little noise and a privacy claim that is false. Here the noise is always added to the sum.

Batches. The accountant's guarantee assumes Poisson sampling: each example is in a step's batch
independently with probability q. `poisson_batch(seed, step, ...)` draws such a batch on the host
and pads it to a fixed `max_batch_size` with a mask, so a jitted step sees one shape and compiles
once; the clipped sum must weight example i by mask_i (core's clipped-gradient functions take
`mask=`), so padded slots contribute nothing. `accumulate_chunks` computes the clipped sum of a
large logical batch in physical chunks (a `lax.scan`, one chunk's memory at a time); the noise is
then added once, to the total (virtual batches).

    indices, mask = poisson_batch(seed, step, num_examples, q, max_batch_size)
    clipped_sum = accumulate_chunks(lambda b, m: clipped_sum_fn(params, b, m),
                                    {"x": x[indices], "y": y[indices]}, mask=mask, chunk_size=64)
    opt_state = opt_update(step, clipped_sum, opt_state)   # opt = dp_sgd(adam(1e-3), ...)
"""
import functools
import math
import numbers
import warnings
from typing import NamedTuple

import numpy as np

import core.numpy as jnp
from core import dtypes, lax, random
from core.api import eval_shape
from core.tree_util import tree_flatten, tree_map, tree_unflatten

from .base import Optimizer

__all__ = ["dp_aggregate", "dp_sgd", "DpSgdState", "poisson_batch", "max_batch_size_for",
           "accumulate_chunks"]


# ----- checks -------------------------------------------------------------------------------------

def _positive(fn, name, value, allow_zero=False):
    """Check a hyperparameter given as a Python number; arrays (e.g. traced) pass unchecked."""
    if isinstance(value, bool):
        raise TypeError(f"{fn}: {name} must be a number, got {value!r}.")
    if isinstance(value, numbers.Real):
        ok = math.isfinite(value) and (value >= 0 if allow_zero else value > 0)
        if not ok:
            raise ValueError(f"{fn}: {name} must be a finite number {'>=' if allow_zero else '>'} 0, "
                             f"got {value!r}.")
    return value


def _check_rate(fn, q):
    if isinstance(q, bool) or not isinstance(q, numbers.Real) or not 0 <= q <= 1:
        raise ValueError(f"{fn}: sampling_rate must be a number in [0, 1] (the probability that an "
                         f"example is in a batch), got {q!r}.")
    return float(q)


def _check_int(fn, name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{fn}: {name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


# ----- the noisy aggregate ------------------------------------------------------------------------

def dp_aggregate(clipped_sum, key, *, l2_norm_clip, noise_multiplier, expected_batch_size):
    """The DP-SGD gradient: `(clipped_sum + N(0, (noise_multiplier * l2_norm_clip)^2 I)) /
    expected_batch_size`, leaf by leaf (Abadi et al. 2016, arXiv:1607.00133, Algorithm 1).

    `clipped_sum` is the SUM over the batch of per-example gradients each clipped to L2 norm at most
    `l2_norm_clip` = C (a pytree of float arrays; padded examples weighted 0). Adding or removing one
    example moves that sum by at most C in L2 norm, so Gaussian noise of std `noise_multiplier * C`
    on the sum makes the step the Gaussian mechanism the accountant (optim/privacy.py) assumes. The
    division by `expected_batch_size` (q * N for Poisson sampling, not the realized batch size) is
    post-processing and keeps the sensitivity fixed. Leaf i's noise is
    `random.normal(random.split(key, num_leaves)[i], leaf.shape)`, in the leaf's dtype (float32 for
    16-bit leaves, cast back after); pass a fresh key every step.

    Example:
        >>> from core import random
        >>> g = dp_aggregate({"w": jnp.array([4.0, 8.0])}, random.PRNGKey(0), l2_norm_clip=1.0,
        ...                  noise_multiplier=0.0, expected_batch_size=4)
        >>> print(g["w"])
        [1. 2.]
    """
    fn = "dp_aggregate"
    _positive(fn, "l2_norm_clip", l2_norm_clip)
    _positive(fn, "noise_multiplier", noise_multiplier, allow_zero=True)
    _positive(fn, "expected_batch_size", expected_batch_size)
    leaves, treedef = tree_flatten(clipped_sum)
    if not leaves:
        return clipped_sum
    keys = random.split(key, len(leaves))
    std = noise_multiplier * l2_norm_clip
    out = []
    for i, leaf in enumerate(leaves):
        leaf = jnp.asarray(leaf)
        if not dtypes.is_float(leaf.dtype):
            raise TypeError(f"{fn}: every leaf of clipped_sum must be a float array (a gradient), but "
                            f"leaf {i} is {leaf.dtype.name}{list(leaf.shape)}. Pass only the gradients "
                            "of the trained parameters.")
        noise_dtype = leaf.dtype if leaf.dtype.itemsize >= 4 else jnp.float32
        noise = random.normal(keys[i], leaf.shape, noise_dtype)
        noisy = (leaf.astype(noise_dtype) + std * noise) / expected_batch_size
        out.append(noisy.astype(leaf.dtype))
    return tree_unflatten(treedef, out)


class DpSgdState(NamedTuple):
    """The state of `dp_sgd`: the wrapped optimizer's state, the base noise key (uint32[2], fixed)
    and the number of updates applied so far (int32; step t's noise key is
    `random.fold_in(noise_key, t)`)."""
    inner_state: object
    noise_key: object
    num_updates: object


def dp_sgd(opt, *, key, l2_norm_clip, noise_multiplier, expected_batch_size):
    """Make any `optim` optimizer differentially private: its update receives the CLIPPED SUM of
    per-example gradients (not a mean gradient) and applies the inner optimizer to
    `dp_aggregate(clipped_sum, fold_in(key, t), ...)`, with t the number of updates so far.

    The result follows the minmax contract (optim/base.py): `init(params)`, `update(step,
    clipped_sum, state)`, `get_params(state)`; its state `DpSgdState(inner_state, noise_key,
    num_updates)` holds arrays only, so it goes through `jit` and checkpoints, and a resumed run
    draws the same noise. `dp_sgd(sgd(lr), ...)` is DP-SGD (Abadi et al. 2016, arXiv:1607.00133);
    `dp_sgd(adam(lr), ...)` is DP-Adam (post-processing of the same noisy gradient, so the same
    privacy). The caller computes the clipped sum (core's clipped-gradient functions, with the
    batch's mask) and feeds the accountant (optim/privacy.py) one step per update.

    Example:
        >>> from core import random
        >>> from optim import sgd
        >>> init, update, get_params = dp_sgd(sgd(1.0), key=random.PRNGKey(0), l2_norm_clip=1.0,
        ...                                   noise_multiplier=0.0, expected_batch_size=2)
        >>> state = update(0, {"w": jnp.array([2.0])}, init({"w": jnp.array([0.0])}))
        >>> print(get_params(state)["w"], int(state.num_updates))
        [-1.] 1
    """
    fn = "dp_sgd"
    _positive(fn, "l2_norm_clip", l2_norm_clip)
    _positive(fn, "noise_multiplier", noise_multiplier, allow_zero=True)
    _positive(fn, "expected_batch_size", expected_batch_size)
    key = jnp.asarray(key)
    if key.shape != (2,) or key.dtype != jnp.uint32:
        raise TypeError(f"{fn}: key must be a PRNG key, uint32[2] (core.random.PRNGKey(seed)), got "
                        f"{key.dtype.name}{list(key.shape)}.")
    init_fn, update_fn, params_fn = opt

    def init(params):
        return DpSgdState(init_fn(params), key, jnp.zeros((), jnp.int32))

    def update(step, clipped_sum, state):
        inner, noise_key, num_updates = state
        grads = dp_aggregate(clipped_sum, random.fold_in(noise_key, num_updates),
                             l2_norm_clip=l2_norm_clip, noise_multiplier=noise_multiplier,
                             expected_batch_size=expected_batch_size)
        return DpSgdState(update_fn(step, grads, inner), noise_key,
                          (num_updates + 1).astype(jnp.int32))

    def get_params(state):
        return params_fn(state.inner_state)

    return Optimizer(init, update, get_params)


# ----- Poisson sampling at a fixed shape ----------------------------------------------------------

_POISSON_STREAM = 0x504F4953  # "POIS": apart from the data order's default_rng([seed, epoch])
_DEFAULT_OVERFLOW = 1e-9


@functools.lru_cache(maxsize=64)
def _max_batch_size(n, q, p):
    if q == 0:
        return 0
    if q == 1:
        return n
    mean, std = n * q, math.sqrt(n * q * (1 - q))
    lo = max(0, math.floor(mean - 12 * std - 1))
    hi = min(n, math.ceil(mean + 80 * std + 80))
    k = np.arange(lo, hi + 1, dtype=np.float64)
    # log pmf(k0) by lgamma, the rest by the ratio pmf(k+1)/pmf(k) = (n-k)/(k+1) * q/(1-q)
    log_first = (math.lgamma(n + 1) - math.lgamma(lo + 1) - math.lgamma(n - lo + 1)
                 + lo * math.log(q) + (n - lo) * math.log1p(-q))
    log_ratio = np.log(n - k[:-1]) - np.log(k[:-1] + 1) + (math.log(q) - math.log1p(-q))
    pmf = np.exp(log_first + np.concatenate([[0.0], np.cumsum(log_ratio)]))
    # sf[j] = P(K > k[j]), summed from the far tail inward (small terms first)
    sf = np.concatenate([np.cumsum(pmf[::-1])[::-1][1:], [0.0]])
    below = np.nonzero(sf < p)[0]
    return int(k[below[0]]) if below.size else n


def max_batch_size_for(num_examples, sampling_rate, overflow_probability=_DEFAULT_OVERFLOW,
                       multiple_of=1):
    """The smallest batch size m such that a Poisson batch (each of `num_examples` examples in it
    independently with probability `sampling_rate`) has more than m examples with probability
    below `overflow_probability` (the exact binomial tail), rounded up to a multiple of
    `multiple_of` (e.g. the physical chunk size of `accumulate_chunks`), and at least 1.

    The default 1e-9 costs about 6 standard deviations of batch size above the mean; over T steps
    the chance that any step overflows is at most T times it. See `poisson_batch` for overflow.

    Example (MNIST at expected batch 256: sqrt(256) = 16 examples of standard deviation):
        >>> max_batch_size_for(60000, 256 / 60000)
        357
    """
    fn = "max_batch_size_for"
    n = _check_int(fn, "num_examples", num_examples, 1)
    sampling_rate = _check_rate(fn, sampling_rate)
    if isinstance(overflow_probability, bool) or not isinstance(overflow_probability, numbers.Real) \
            or not 0 < overflow_probability < 1:
        raise ValueError(f"{fn}: overflow_probability must be a number in (0, 1), got "
                         f"{overflow_probability!r}.")
    multiple_of = _check_int(fn, "multiple_of", multiple_of, 1)
    m = max(1, _max_batch_size(n, sampling_rate, float(overflow_probability)))
    return -(-m // multiple_of) * multiple_of


def poisson_batch(seed, step, num_examples, sampling_rate, max_batch_size=None):
    """A Poisson-sampled batch at a fixed shape: `(indices int32[max_batch_size], mask
    float32[max_batch_size])`. Each of the `num_examples` examples is in the batch independently
    with probability `sampling_rate`; the sampled indices come first, in increasing order, with
    mask 1, then padding slots with index 0 and mask 0.

    A pure function of `(seed, step)` (NumPy's `default_rng([seed, tag, step])`, on the host), so a
    resumed run draws the same batches with no sampler state to save. `max_batch_size` defaults
    to `max_batch_size_for(num_examples, sampling_rate)` (overflow probability 1e-9 per step).

    Overflow: if more than `max_batch_size` examples are drawn, a uniformly random subset of
    `max_batch_size` of them is kept and a RuntimeWarning names the step. We truncate rather than
    raise because the draw is a pure function of the step: a run that raised would fail again at
    the same step after every resume. Truncation keeps each step's sensitivity at C, but the
    Poisson accounting no longer covers the step exactly: by a coupling argument, T steps with
    per-step overflow probability p are (epsilon, delta + T * p * (1 + e^epsilon))-DP where the
    untruncated ones are (epsilon, delta)-DP. Choose `max_batch_size` with
    `max_batch_size_for(..., overflow_probability=p)` small enough for that term to be negligible
    (each factor 10 costs about half a standard deviation of batch size).

    Example:
        >>> indices, mask = poisson_batch(seed=0, step=3, num_examples=100, sampling_rate=0.05,
        ...                               max_batch_size=16)
        >>> indices.shape, mask.shape, indices.dtype.name, mask.dtype.name
        ((16,), (16,), 'int32', 'float32')
        >>> bool(np.all(indices[mask == 0] == 0)) and bool(np.all(np.diff(indices[mask == 1]) > 0))
        True
    """
    fn = "poisson_batch"
    seed = _check_int(fn, "seed", seed, 0)
    step = _check_int(fn, "step", step, 0)
    n = _check_int(fn, "num_examples", num_examples, 1)
    if n > np.iinfo(np.int32).max:
        raise ValueError(f"{fn}: num_examples={n} does not fit the int32 indices.")
    q = _check_rate(fn, sampling_rate)
    if max_batch_size is None:
        max_batch_size = max_batch_size_for(n, q)
    m = _check_int(fn, "max_batch_size", max_batch_size, 1)
    rng = np.random.default_rng([seed, _POISSON_STREAM, step])
    count = int(rng.binomial(n, q))
    # Given its size, a Poisson sample is a uniform subset: the same law as n independent coins.
    chosen = rng.choice(n, size=count, replace=False)  # in random order
    if count > m:
        warnings.warn(f"{fn}: step {step} sampled {count} examples, more than max_batch_size={m}; "
                      f"kept a random {m} of them. Raise max_batch_size (see max_batch_size_for) so "
                      "that this is rare; see poisson_batch's docstring for the privacy cost.",
                      RuntimeWarning, stacklevel=2)
        chosen = chosen[:m]
    indices = np.zeros(m, np.int32)
    mask = np.zeros(m, np.float32)
    indices[:len(chosen)] = np.sort(chosen)
    mask[:len(chosen)] = 1.0
    return indices, mask


# ----- virtual batches ----------------------------------------------------------------------------

def accumulate_chunks(fun, batch, *, chunk_size, mask=None):
    """The sum over physical chunks of `fun`: split every leaf of `batch` along axis 0 into chunks of
    `chunk_size` rows, call `fun(chunk)` (or `fun(chunk, chunk_mask)` when `mask` is given) on each
    and add the results (any pytree of arrays) leaf by leaf.

    This is a virtual batch: `fun` returns the clipped gradient SUM of a chunk (and other sums,
    e.g. the number of clipped examples), so the total equals the logical batch's clipped sum
    while memory holds one chunk's per-example work at a time; add noise once, to the total
    (`dp_aggregate`), never per chunk. The loop is a `lax.scan`, so `fun` is traced once. With a
    mask, chunks whose mask is all zero (the padding at the end of a `poisson_batch`) are skipped
    under `lax.cond` and contribute zeros. `fun` must return sums, not means.

    Example:
        >>> total = accumulate_chunks(lambda b: jnp.sum(b), jnp.arange(8.0), chunk_size=2)
        >>> float(total)
        28.0
    """
    fn = "accumulate_chunks"
    chunk_size = _check_int(fn, "chunk_size", chunk_size, 1)
    leaves, treedef = tree_flatten(batch)
    if mask is not None:
        leaves = leaves + [mask]
    if not leaves:
        raise ValueError(f"{fn}: batch has no arrays to split into chunks.")
    leaves = [jnp.asarray(x) for x in leaves]
    sizes = [x.shape[0] if x.ndim else None for x in leaves]
    if None in sizes or len(set(sizes)) != 1:
        shapes = ", ".join(f"{x.dtype.name}{list(x.shape)}" for x in leaves)
        raise ValueError(f"{fn}: every leaf of batch{' and the mask' if mask is not None else ''} needs "
                         f"the same leading (batch) axis; got {shapes}.")
    size = sizes[0]
    if size % chunk_size:
        raise ValueError(f"{fn}: the batch size {size} is not a multiple of chunk_size={chunk_size}. Pad "
                         "the batch (e.g. max_batch_size_for(..., multiple_of=chunk_size)) or change "
                         "chunk_size.")
    num_chunks = size // chunk_size
    chunked = [x.reshape((num_chunks, chunk_size) + x.shape[1:]) for x in leaves]

    def call(chunk_leaves):
        if mask is None:
            return fun(tree_unflatten(treedef, chunk_leaves))
        return fun(tree_unflatten(treedef, chunk_leaves[:-1]), chunk_leaves[-1])

    first = [x[0] for x in chunked]
    out_shapes = eval_shape(call, first)
    zeros = tree_map(lambda s: jnp.zeros(s.shape, s.dtype), out_shapes)
    if num_chunks == 1:
        return call(first)

    def body(total, chunk_leaves):
        if mask is None:
            out = call(chunk_leaves)
        else:
            out = lax.cond(jnp.any(chunk_leaves[-1] != 0), call, lambda _: zeros, chunk_leaves)
        return tree_map(jnp.add, total, out), None

    total, _ = lax.scan(body, zeros, chunked)
    return total

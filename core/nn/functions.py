"""Activation functions and array utilities for networks: `core.nn`, as `jax.nn` (re-exported by `nn`).

Every function is elementwise or works along one axis, takes arrays (Python scalars and NumPy arrays
too), promotes integer inputs to the default float dtype, and is built from `core.numpy` and
`core.lax` only, so it composes with jit, grad and vmap. The formulas are the numerically stable
ones: `softplus` through `logaddexp`, `log_sigmoid` as `-softplus(-x)`, softmax after subtracting
the maximum. Where a function has a kink, the derivative there is JAX's: `relu'(0) = 0`,
`relu6'(0) = relu6'(6) = 0`.

Example:
    >>> from core.nn import functions as F
    >>> F.relu(jnp.array([-1.0, 2.0]))
    Array([0., 2.], dtype=float32)
    >>> F.softmax(jnp.array([1.0, 1.0]))
    Array([0.5, 0.5], dtype=float32)
"""
import math

import core
import core.numpy as jnp
from core import lax
from core.scipy.special import logsumexp as _logsumexp

__all__ = ["relu", "relu6", "gelu", "silu", "swish", "elu", "leaky_relu", "selu", "softplus", "sigmoid",
           "log_sigmoid", "softmax", "log_softmax", "logsumexp", "one_hot", "standardize",
           "celu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "mish", "soft_sign",
           "squareplus", "sparse_plus", "tanh", "identity"]

# SELU's fixed point constants (Klambauer et al., 2017, arXiv:1706.02515, eq. 14)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _inexact(x):
    """`x` as an array of an inexact dtype (ints and bools become the default float dtype)."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = x.astype(core.dtypes.default_float_dtype())
    return x


# ----- rectifiers ---------------------------------------------------------------------------

def relu(x):
    """The rectified linear unit max(x, 0). Its derivative at 0 is 0 (as JAX's, so a dead unit
    stays dead rather than receiving half a gradient). Example: `relu(jnp.array([-1., 0., 2.]))` is
    `[0., 0., 2.]`."""
    return _relu(_inexact(x))


@core.custom_jvp
def _relu(x):
    return jnp.maximum(x, 0)


_relu.defjvps(lambda t, ans, x: jnp.where(x > 0, t, jnp.zeros_like(t)))


def relu6(x):
    """min(max(x, 0), 6), the rectifier capped at 6 (Krizhevsky, 2010); its derivative is 0 at both
    kinks, as JAX's. Example: `relu6(jnp.array([-1., 3., 9.]))` is `[0., 3., 6.]`."""
    return _relu6(_inexact(x))


@core.custom_jvp
def _relu6(x):
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


_relu6.defjvps(lambda t, ans, x: jnp.where((x > 0) & (x < 6), t, jnp.zeros_like(t)))


def leaky_relu(x, negative_slope=1e-2):
    """x for x >= 0, `negative_slope * x` below (Maas et al., 2013). Example:
    `leaky_relu(jnp.array([-2., 3.]), 0.1)` is `[-0.2, 3.]`."""
    x = _inexact(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def elu(x, alpha=1.0):
    """x for x > 0, `alpha * (exp(x) - 1)` below (Clevert et al., 2015, arXiv:1511.07289). Example:
    `elu(jnp.array([-1., 2.]))` is `[-0.632, 2.]`."""
    x = _inexact(x)
    # expm1 only sees non-positive values: a large positive x would overflow to inf, and
    # inf * 0 in the unused branch's gradient would give nan
    safe = jnp.where(x > 0, jnp.zeros_like(x), x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(safe))


def selu(x):
    """The scaled ELU `scale * elu(x, alpha)` with the self-normalizing constants alpha ~ 1.6733 and
    scale ~ 1.0507 (Klambauer et al., 2017, arXiv:1706.02515). Example: `selu(jnp.array([1.]))` is
    `[1.0507]`."""
    return _SELU_SCALE * elu(x, _SELU_ALPHA)


# ----- smooth activations -------------------------------------------------------------------

def gelu(x, approximate=True):
    """The Gaussian error linear unit x * Phi(x) (Hendrycks and Gimpel, 2016, arXiv:1606.08415).
    `approximate=True` (JAX's default) uses the tanh form
    `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`; `approximate=False` the exact
    `x * erfc(-x / sqrt(2)) / 2`. Example: `gelu(jnp.array([1.]), approximate=False)` is `[0.8413]`."""
    x = _inexact(x)
    if approximate:
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1.0 + jnp.tanh(inner))
    # erfc(-z) rather than 1 + erf(z): no cancellation in the far negative tail
    return x * core.scipy.special.erfc(-x * math.sqrt(0.5)) / 2


def sigmoid(x):
    """The logistic function 1 / (1 + exp(-x)). Example: `sigmoid(jnp.array([0.]))` is `[0.5]`."""
    return lax.logistic(_inexact(x))


def silu(x):
    """x * sigmoid(x), also called swish (Ramachandran et al., 2017, arXiv:1710.05941; Elfwing et al.,
    2017, arXiv:1702.03118). Example: `silu(jnp.array([0.]))` is `[0.]`."""
    x = _inexact(x)
    return x * sigmoid(x)


swish = silu


def softplus(x):
    """log(1 + exp(x)), as `logaddexp(x, 0)` so neither tail overflows. Example:
    `softplus(jnp.array([0.]))` is `[0.6931]`."""
    return jnp.logaddexp(_inexact(x), 0)


def log_sigmoid(x):
    """log(sigmoid(x)) = -softplus(-x), finite for large negative x where log(sigmoid(x)) would be
    log(0). Example: `log_sigmoid(jnp.array([-100.]))` is `[-100.]`."""
    return -softplus(-_inexact(x))


# ----- the rest of jax.nn's activations -------------------------------------------------------

def celu(x, alpha=1.0):
    """The continuously differentiable ELU `max(x, 0) + alpha * expm1(min(x, 0) / alpha)` (Barron,
    2017, arXiv:1704.07483). Example: `celu(jnp.array([-1., 2.]))` is `[-0.632, 2.]`."""
    x = _inexact(x)
    return jnp.maximum(x, 0) + alpha * jnp.expm1(jnp.minimum(x, 0) / alpha)


def glu(x, axis=-1):
    """The gated linear unit: `x` split in two halves `a, b` along `axis`, then `a * sigmoid(b)`
    (Dauphin et al., 2016, arXiv:1612.08083). Example: `glu(jnp.array([2., 0.]))` is `[1.]`."""
    x = _inexact(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: axis {axis} of x ({x.dtype}{list(x.shape)}) must have an even size, to split into "
                         f"the value and gate halves; it has {size}.")
    a, b = jnp.split(x, 2, axis=axis)
    return a * sigmoid(b)


def hard_tanh(x):
    """-1 below -1, 1 above 1, x between. Example: `hard_tanh(jnp.array([-3., 0.5]))` is `[-1., 0.5]`."""
    x = _inexact(x)
    return jnp.where(x > 1, 1.0, jnp.where(x < -1, -1.0, x)).astype(x.dtype)


def hard_sigmoid(x):
    """The piecewise-linear sigmoid `relu6(x + 3) / 6` (Howard et al., 2019, arXiv:1905.02244).
    Example: `hard_sigmoid(jnp.array([0.]))` is `[0.5]`."""
    return relu6(_inexact(x) + 3.0) / 6.0


def hard_silu(x):
    """`x * hard_sigmoid(x)`, also called hard swish. Example: `hard_silu(jnp.array([3.]))` is `[3.]`."""
    x = _inexact(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def mish(x):
    """`x * tanh(softplus(x))` (Misra, 2019, arXiv:1908.08681). Example: `mish(jnp.array([0.]))` is `[0.]`."""
    x = _inexact(x)
    return x * jnp.tanh(softplus(x))


def soft_sign(x):
    """`x / (|x| + 1)`. Example: `soft_sign(jnp.array([-3.]))` is `[-0.75]`."""
    x = _inexact(x)
    return x / (jnp.abs(x) + 1)


def squareplus(x, b=4):
    """`(x + sqrt(x^2 + b)) / 2`, a smooth rectifier with no exponential (Barron, 2021,
    arXiv:2112.11687). Example: `squareplus(jnp.array([0.]))` is `[1.]`."""
    x = _inexact(x)
    return (x + jnp.sqrt(x * x + b)) / 2


def sparse_plus(x):
    """0 for x <= -1, `(x + 1)^2 / 4` for -1 < x < 1, x for x >= 1: a rectifier with a continuous
    derivative and exact zeros (as `jax.nn.sparse_plus`). Example: `sparse_plus(jnp.array([0.]))` is
    `[0.25]`."""
    x = _inexact(x)
    return jnp.where(x <= -1, 0.0, jnp.where(x >= 1, x, (x + 1) ** 2 / 4)).astype(x.dtype)


def tanh(x):
    """`jnp.tanh`, under its `jax.nn` name. Example: `tanh(jnp.array([0.]))` is `[0.]`."""
    return jnp.tanh(_inexact(x))


def identity(x):
    """`x` itself, as an array (the activation of a linear layer). Example: `identity(2.0)` is
    `Array(2.)`."""
    return jnp.asarray(x)


# ----- along an axis ------------------------------------------------------------------------

def _masked_max(x, axis, where):
    if where is None:
        return jnp.max(x, axis=axis, keepdims=True)
    return jnp.max(x, axis=axis, keepdims=True, where=where, initial=-jnp.inf)


def softmax(x, axis=-1, where=None):
    """exp(x) / sum(exp(x)) along `axis` (an int or tuple), computed after subtracting the maximum
    so no exp overflows. With a boolean `where` (broadcastable to x) only the selected entries take
    part; the others get 0. Example: `softmax(jnp.array([0., jnp.log(3.)]))` is `[0.25, 0.75]`."""
    x = _inexact(x)
    # the shift cancels in the ratio, so its gradient is exactly zero: stop it
    shift = lax.stop_gradient(_masked_max(x, axis, where))
    e = jnp.exp(x - shift)
    if where is not None:
        e = jnp.where(where, e, jnp.zeros_like(e))
    return e / jnp.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1, where=None):
    """x - logsumexp(x) along `axis` (an int or tuple), stable for large |x|. With a boolean `where`
    only the selected entries take part; the others get -inf. Example:
    `log_softmax(jnp.array([0., 0.]))` is `[-0.6931, -0.6931]`."""
    x = _inexact(x)
    shifted = x - lax.stop_gradient(_masked_max(x, axis, where))
    e = jnp.exp(shifted)
    if where is not None:
        e = jnp.where(where, e, jnp.zeros_like(e))
    out = shifted - jnp.log(jnp.sum(e, axis=axis, keepdims=True))
    if where is not None:
        out = jnp.where(where, out, jnp.full_like(out, -jnp.inf))
    return out


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """log(sum(b * exp(a))) over `axis`, stably; the same function as `core.scipy.special.logsumexp`
    (JAX's `jax.nn.logsumexp` is `jax.scipy.special.logsumexp` too). Example:
    `logsumexp(jnp.array([0., 0.]))` is `0.6931`."""
    return _logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encode integer class ids: a new axis of length `num_classes` (at `axis`, default
    last) holds 1 at index `x` and 0 elsewhere. Ids outside [0, num_classes) give an all-zero row
    (as JAX; no error is raised, also under jit). `dtype` defaults to the default float dtype
    (float32; float64 with x64 on). Example: `one_hot(jnp.array([0, 2]), 3)` is
    `[[1., 0., 0.], [0., 0., 1.]]`."""
    x = jnp.asarray(x)
    num_classes = int(num_classes)
    dtype = core.dtypes.default_float_dtype() if dtype is None else dtype
    out_ndim = x.ndim + 1
    if not -out_ndim <= axis < out_ndim:
        raise ValueError(f"one_hot: axis {axis} is out of bounds for an output of rank {out_ndim} "
                         f"(input shape {x.shape} plus the class axis).")
    axis = axis % out_ndim
    ids = jnp.arange(num_classes, dtype=x.dtype).reshape((num_classes,) + (1,) * (out_ndim - 1 - axis))
    return (jnp.expand_dims(x, axis) == ids).astype(dtype)


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None):
    """(x - mean) / sqrt(variance + epsilon) along `axis`, with the mean and (biased) variance
    computed from x unless given (then they must broadcast against x, e.g. keepdims shapes); a
    boolean `where` limits those statistics to the selected entries.
    The variance is the two-pass mean((x - mean)^2), which never goes negative (JAX computes
    mean(x^2) - mean^2; the two differ by rounding only). Example:
    `standardize(jnp.array([1., 3.]))` is `[-1., 1.]` (up to epsilon)."""
    x = _inexact(x)
    if mean is None:
        mean = jnp.mean(x, axis=axis, keepdims=True, where=where)
    if variance is None:
        variance = jnp.mean(jnp.square(x - mean), axis=axis, keepdims=True, where=where)
    return (x - mean) / jnp.sqrt(variance + epsilon)

"""Losses and metrics for training with `nn` and `optim`.

The contract. Each loss takes predictions first and targets second, checks their shapes exactly
(no silent broadcasting: a (N, 1) prediction against (N,) targets would otherwise average an N x N
matrix) and reduces with `reduction`: "mean" (the default: the mean over all examples, so the
step size does not depend on the batch size), "sum", or "none" (the per-example losses). Losses
are built from `core.numpy`, so they compose with jit, grad and vmap. Labels for classification
are either integer class ids of shape `logits.shape[:-1]` or one-hot rows / probability vectors
of shape `logits.shape`.

Example:
    >>> logits = jnp.array([[2.0, 0.0, -1.0]])
    >>> softmax_cross_entropy(logits, jnp.array([0]))
    Array(0.16984604, dtype=float32)
    >>> accuracy(logits, jnp.array([0]))
    Array(1., dtype=float32)
"""
import core
import core.numpy as jnp

from .functions import log_sigmoid, log_softmax, one_hot

__all__ = ["softmax_cross_entropy", "sigmoid_binary_cross_entropy", "mean_squared_error", "l2_penalty",
           "accuracy"]

_REDUCTIONS = ("mean", "sum", "none")


def _reduce(name, losses, reduction):
    if reduction == "mean":
        return jnp.mean(losses)
    if reduction == "sum":
        return jnp.sum(losses)
    if reduction == "none":
        return losses
    raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}.")


def _check_reduction(name, reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{name}: reduction must be one of {_REDUCTIONS}, got {reduction!r}.")


def _is_int(x):
    return jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_


def _class_targets(name, logits, labels):
    """Labels as probability rows of logits' shape (integer ids one-hot encoded)."""
    if logits.ndim < 1:
        raise ValueError(f"{name}: logits need a class axis (the last one), got a scalar of shape {logits.shape}.")
    if labels.shape == logits.shape[:-1] and _is_int(labels):
        return one_hot(labels, logits.shape[-1], dtype=logits.dtype)
    if labels.shape == logits.shape:
        return labels.astype(logits.dtype)
    raise ValueError(f"{name}: labels of shape {labels.shape} do not fit logits of shape {logits.shape}; "
                     f"expected integer class ids of shape {logits.shape[:-1]} or one-hot/probability "
                     f"labels of shape {logits.shape}.")


def _float(x):
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.inexact):
        x = x.astype(core.dtypes.default_float_dtype())
    return x


def softmax_cross_entropy(logits, labels, label_smoothing=0.0, reduction="mean"):
    """The cross-entropy -sum_k q_k log softmax(logits)_k between the class distribution q given
    by `labels` and the softmax of `logits` (last axis = classes), computed through `log_softmax`
    so large logits do not overflow. `labels`: integer class ids of shape `logits.shape[:-1]`
    (ids outside [0, K) give a zero target row, hence loss 0 without smoothing; no error is raised)
    or one-hot / probability rows of shape `logits.shape`. With `label_smoothing` = e, the target
    is (1 - e) q + e / K (Szegedy et al., 2016, arXiv:1512.00567, section 7). `reduction` as in the
    module docstring: the mean over all leading (batch) axes by default. Example:
    `softmax_cross_entropy(jnp.zeros((2, 4)), jnp.array([1, 3]))` is `log(4) = 1.386`."""
    name = "softmax_cross_entropy"
    _check_reduction(name, reduction)
    logits, labels = _float(logits), jnp.asarray(labels)
    targets = _class_targets(name, logits, labels)
    if label_smoothing:
        num_classes = logits.shape[-1]
        targets = (1.0 - label_smoothing) * targets + label_smoothing / num_classes
    losses = -jnp.sum(targets * log_softmax(logits, axis=-1), axis=-1)
    return _reduce(name, losses, reduction)


def sigmoid_binary_cross_entropy(logits, labels, reduction="mean"):
    """The binary cross-entropy -z log sigmoid(x) - (1 - z) log(1 - sigmoid(x)) of labels z in
    [0, 1] against logits x, elementwise, in the stable form -z log_sigmoid(x) - (1 - z)
    log_sigmoid(-x), which stays finite for any |x|. `logits` and `labels` must have the same shape;
    `reduction` ("mean" over all elements by default, "sum" or "none"). Example:
    `sigmoid_binary_cross_entropy(jnp.array([0.]), jnp.array([1.]))` is `log(2) = 0.693`."""
    name = "sigmoid_binary_cross_entropy"
    _check_reduction(name, reduction)
    logits, labels = _float(logits), jnp.asarray(labels)
    if labels.shape != logits.shape:
        raise ValueError(f"{name}: labels of shape {labels.shape} do not match logits of shape {logits.shape}; "
                         "they must be equal (one label in [0, 1] per logit).")
    labels = labels.astype(logits.dtype)
    losses = -labels * log_sigmoid(logits) - (1.0 - labels) * log_sigmoid(-logits)
    return _reduce(name, losses, reduction)


def mean_squared_error(predictions, targets, reduction="mean"):
    """(predictions - targets)^2, averaged over all elements by default (`reduction` "sum" or
    "none" otherwise). The shapes must be equal. Example:
    `mean_squared_error(jnp.array([1., 3.]), jnp.array([0., 1.]))` is `2.5`."""
    name = "mean_squared_error"
    _check_reduction(name, reduction)
    predictions, targets = _float(predictions), jnp.asarray(targets)
    if targets.shape != predictions.shape:
        raise ValueError(f"{name}: predictions of shape {predictions.shape} and targets of shape "
                         f"{targets.shape} must have the same shape (reshape one of them; broadcasting "
                         "here is almost always a bug).")
    return _reduce(name, jnp.square(predictions - targets.astype(predictions.dtype)), reduction)


def l2_penalty(params):
    """0.5 * sum of squares of every array in the pytree `params` (the 0.5 makes its gradient
    exactly `params`, so `loss + wd * l2_penalty(params)` decays each weight by wd). Integer
    leaves are not parameters and are skipped. Example:
    `l2_penalty({"w": jnp.array([3., 4.])})` is `12.5`."""
    leaves = [jnp.asarray(x) for x in core.tree_util.tree_leaves(params)]
    total = jnp.zeros((), core.dtypes.default_float_dtype())
    for x in leaves:
        if jnp.issubdtype(x.dtype, jnp.inexact):
            total = total + jnp.sum(jnp.square(x))
    return 0.5 * total


def accuracy(logits_or_predictions, labels):
    """The fraction of examples whose predicted class equals the label. The first argument is
    either scores (logits or probabilities, float, classes on the last axis; the prediction is
    their argmax) or integer predicted class ids; `labels` are integer class ids of the batch
    shape or one-hot rows (their argmax is the class). Returns a float scalar. Example:
    `accuracy(jnp.array([[1., 0.], [1., 0.]]), jnp.array([0, 1]))` is `0.5`."""
    name = "accuracy"
    scores, labels = jnp.asarray(logits_or_predictions), jnp.asarray(labels)
    if _is_int(scores):
        predicted = scores
    else:
        if scores.ndim < 1:
            raise ValueError(f"{name}: logits need a class axis (the last one), got a scalar.")
        predicted = jnp.argmax(scores, axis=-1)
    one_hot_rows = (labels.ndim == predicted.ndim + 1 and labels.shape[:-1] == predicted.shape
                    and (_is_int(scores) or labels.shape == scores.shape))
    if one_hot_rows:
        labels = jnp.argmax(labels, axis=-1)
    elif labels.shape != predicted.shape:
        what = "predicted class ids" if _is_int(scores) else "logits"
        one_hot_shape = "+".join([str(predicted.shape), "(num_classes,)"]) if _is_int(scores) else str(scores.shape)
        raise ValueError(f"{name}: labels of shape {labels.shape} do not fit {what} of shape {scores.shape}; "
                         f"expected integer class ids of shape {predicted.shape} or one-hot labels of "
                         f"shape {one_hot_shape}.")
    correct = (predicted == labels.astype(predicted.dtype))
    return jnp.mean(correct.astype(core.dtypes.default_float_dtype()))

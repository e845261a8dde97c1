"""Per-example gradients: `per_example_grads`, `per_example_grad_norms` (ghost norms, without
materializing per-example gradients), `clipped_grad` (the sum of per-example clipped gradients, as
DP-SGD needs) and `ghost_plan`.

All take `fun(params, *example_args)`, the loss of ONE example (a scalar), as in JAX's
`vmap(grad(loss_one), in_axes=(None, 0))`: `argnums` picks the differentiated (shared) arguments,
`batch_axes` the axis that carries the batch in each other argument (an int or None, or a tuple
with one entry per positional argument, like vmap's in_axes). The returned functions take the
whole batch, plus an optional keyword `mask=` (one bool or 0/1 per example): masked examples (the
padding of a fixed-shape batch) get a zero gradient, a zero norm and no weight in sums. Padded
examples must still hold finite values, since they are computed with the others.

A function whose program computes statistics across the batch (BatchNorm in train mode, marked
with `batch_coupled`) is refused: under these transformations it would see one example at a time.
See docs/design.md, "Per-example gradients (issue 15)", for the design and the norm rules.
"""
import math
from collections import namedtuple

import numpy as np

from .. import numpy as jnp
from .. import lax
from ..autodiff import grad
from ..batching_api import vmap
from ..traceback_util import api_boundary
from ..tree_util import tree_flatten, tree_map, tree_unflatten
from . import ghost
from .ghost import GhostPlan
from .program import batch_coupled, batch_coupled_p, prepare

__all__ = ["per_example_grads", "per_example_grad_norms", "clipped_grad", "ghost_plan", "ClipInfo",
           "GhostPlan", "batch_coupled", "batch_coupled_p"]


class ClipInfo(namedtuple("ClipInfo", ["norms", "clip_factors", "fraction_clipped"])):
    """What `clipped_grad` reports beside the clipped sum: each example's gradient norm before
    clipping and the factor its gradient was scaled by, both shape (B,) (with per-layer clipping,
    pytrees of the parameters' structure with one (B,) vector per leaf), and the fraction of the
    (unmasked) examples whose gradient was clipped (any leaf, with per-layer clipping)."""


def _check_chunk(chunk_size, where):
    if chunk_size is None:
        return None
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size <= 0:
        raise ValueError(f"{where}: chunk_size must be a positive int or None, got {chunk_size!r}.")
    return int(chunk_size)


def _map_in_chunks(f, leaves, axes, size, chunk_size, totals=None):
    """`f(leaves, axes)`, a batched function whose outputs carry the batch on axis 0, computed over
    chunks of `chunk_size` examples (a scan over whole chunks, then the remainder), so the
    memory of one call bounds the memory of the whole. With `totals` (a pytree of zeros), `f`
    returns `(batched, total)` and the totals of the chunks are added up (the scan's carry)."""
    if chunk_size is None or chunk_size >= size:
        return f(leaves, axes)
    moved = [x if ax is None else jnp.moveaxis(x, ax, 0) for x, ax in zip(leaves, axes)]
    axes0 = [None if ax is None else 0 for ax in axes]
    batched = [i for i, ax in enumerate(axes) if ax is not None]
    n, rem = divmod(size, chunk_size)
    full = n * chunk_size

    def with_batch(xs):
        out = list(moved)
        for i, x in zip(batched, xs):
            out[i] = x
        return out

    def add(a, b):
        return tree_map(lambda u, v: u + v, a, b)

    def body(carry, xs):
        if totals is None:
            return carry, f(with_batch(xs), axes0)
        ys, total = f(with_batch(xs), axes0)
        return add(carry, total), ys

    chunks = [jnp.reshape(lax.slice_in_dim(moved[i], 0, full), (n, chunk_size) + moved[i].shape[1:])
              for i in batched]
    acc, ys = lax.scan(body, () if totals is None else totals, chunks)
    ys = tree_map(lambda y: jnp.reshape(y, (full,) + y.shape[2:]), ys)
    if rem:
        tail = f(with_batch([lax.slice_in_dim(moved[i], full, size) for i in batched]), axes0)
        if totals is not None:
            tail, total = tail
            acc = add(acc, total)
        ys = tree_map(lambda a, b: jnp.concatenate([a, b], axis=0), ys, tail)
    return ys if totals is None else (ys, acc)


def _over_chunks(prog, chunk_size, f, totals=None):
    """`f(sub)` for `sub` the program over chunks of `chunk_size` examples of `prog`'s batch (its
    mask split alike); per-example outputs concatenated, `totals` (as in `_map_in_chunks`) added."""
    if chunk_size is None or chunk_size >= prog.size:
        return f(prog)
    leaves, axes = list(prog.ex_leaves), list(prog.ex_axes)
    n_ex = len(leaves)
    if prog.mask is not None:
        leaves.append(prog.mask)
        axes.append(0)

    def on_chunk(ls, axs):
        size = next(x.shape[0] for x, ax in zip(ls, axs) if ax is not None)
        return f(prog.with_examples(ls[:n_ex], size, ls[n_ex] if prog.mask is not None else None))
    return _map_in_chunks(on_chunk, leaves, axes, prog.size, chunk_size, totals)


def _vmapped_grads(prog, chunk_size=None):
    """Per leaf, the (B, ...) per-example gradients, and the per-example aux leaves: vmap of grad
    of the traced per-example program."""
    diff = list(prog.diff_leaves)

    def one(ex):
        def loss(d):
            outs = prog.eval_one(d, ex)
            return outs[0], outs[1:]
        return grad(loss, has_aux=True)(diff)

    def batched(leaves, axes):
        return vmap(one, in_axes=(list(axes),))(leaves)
    return _map_in_chunks(batched, prog.ex_leaves, prog.ex_axes, prog.size, chunk_size)


def _mask_bool(prog):
    m = prog.mask
    if m is None:
        return None
    return m if m.dtype == np.dtype(bool) else m != 0


def _zero_masked(m, x):
    """`x` (leading batch axis) with the masked examples' entries set to zero (NaN-safe)."""
    if m is None:
        return x
    return jnp.where(jnp.reshape(m, (-1,) + (1,) * (x.ndim - 1)), x, jnp.zeros_like(x))


def _loss_cotangent(prog, m):
    dt = prog.closed.out_avals[0].dtype
    return jnp.ones((prog.size,), dt) if m is None else m.astype(dt)


def per_example_grads(fun, argnums=0, batch_axes=0, has_aux=False, chunk_size=None):
    """The gradient of the one-example loss `fun` for every example of a batch, as the pytree of
    the differentiated argument(s) with a leading batch axis on each leaf: what
    `vmap(grad(fun), in_axes=(None, 0, ...))` computes, with checks that name the argument at
    fault, `chunk_size` (map over chunks of that many examples, a scan over chunks of a vmap: the
    same numbers with the memory of one chunk) and `mask=` at call time (masked examples' gradients
    are zero). With `has_aux=True`, `fun` returns `(loss, aux)` and the result is `(grads, aux)`
    with aux stacked over examples.

    Example:
        >>> def loss(w, x, y):
        ...     return (jnp.dot(x, w) - y) ** 2
        >>> g = per_example_grads(loss)(jnp.ones(3), jnp.ones((5, 3)), jnp.zeros(5))
        >>> g.shape
        (5, 3)
    """
    what = "per_example_grads"

    @api_boundary
    def grads_fun(*args, mask=None):
        chunk = _check_chunk(chunk_size, f"{what} of {getattr(fun, '__name__', 'fun')}")
        prog = prepare(fun, argnums, batch_axes, args, what, has_aux=has_aux, mask=mask)
        g, aux = _vmapped_grads(prog, chunk)
        m = _mask_bool(prog)
        out = prog.unflatten_diff([_zero_masked(m, x) for x in g])
        if has_aux:
            return out, tree_unflatten(prog.aux_tree, list(aux))
        return out

    return grads_fun


def _unflatten_aux(prog, aux):
    return tree_unflatten(prog.aux_tree, list(aux))


def per_example_grad_norms(fun, argnums=0, batch_axes=0, method="auto", per_parameter=False, has_aux=False,
                           chunk_size=None):
    """The L2 norm of each example's gradient of the one-example loss `fun`, shape (B,), computed
    without materializing per-example gradients where a ghost-norm rule applies.

    `method`: 'ghost' uses the Gram form for every weight operation (dot_general, convolution,
    gather) and fails, naming the operation and the parameter, for a parameter no rule covers;
    'auto' picks per operation the cheaper of the Gram form and the materialized per-layer
    gradient, and materializes the per-example gradient of uncovered parameters alone;
    'materialize' materializes every operation's per-layer gradient. Biases and scales
    (parameters used only by add/sub/mul) are materialized in every method (they are as small as
    the activations they touch). `ghost_plan` prints the plan. With `per_parameter=True` the result
    is `(norms, per_leaf)`, `per_leaf` a pytree of the parameters' structure with a (B,) norm per
    leaf. `mask=` at call time: masked examples get norm 0. `chunk_size` computes the norms over
    chunks of that many examples (a scan; the same numbers, the memory of one chunk). With
    `has_aux=True`, `fun` returns `(loss, aux)` and the result is `(norms, aux)`, aux stacked
    over the examples (as `grad(..., has_aux=True)` pairs its result with aux).

    Example:
        >>> def loss(w, x, y):
        ...     return (jnp.dot(x, w) - y) ** 2
        >>> per_example_grad_norms(loss)(jnp.ones(3), jnp.ones((5, 3)), jnp.zeros(5)).shape
        (5,)
        >>> def loss_aux(w, x, y):
        ...     r = jnp.dot(x, w) - y
        ...     return r ** 2, r
        >>> n, r = per_example_grad_norms(loss_aux, has_aux=True, chunk_size=2)(
        ...     jnp.ones(3), jnp.ones((5, 3)), jnp.zeros(5))
        >>> n.shape, r.shape
        ((5,), (5,))
    """
    what = "per_example_grad_norms"

    @api_boundary
    def norms_fun(*args, mask=None):
        chunk = _check_chunk(chunk_size, f"{what} of {getattr(fun, '__name__', 'fun')}")
        prog = prepare(fun, argnums, batch_axes, args, what, has_aux=has_aux, mask=mask)
        plan = ghost.analyze(prog, method)

        def on_chunk(sub):
            m = _mask_bool(sub)
            acts, gs, dgs, _, aux = ghost.run(sub, plan, sub.diff_leaves, _loss_cotangent(sub, m))
            sq = ghost.leaf_sq_norms(sub, plan, sub.diff_leaves, acts, gs, dgs)
            return [_zero_masked(m, s) for s in sq], list(aux)

        sq, aux = _over_chunks(prog, chunk, on_chunk)
        total = jnp.sqrt(sum(sq[1:], sq[0]))
        out = (total, prog.unflatten_diff([jnp.sqrt(s) for s in sq])) if per_parameter else total
        return (out, _unflatten_aux(prog, aux)) if has_aux else out

    return norms_fun


def ghost_plan(fun, argnums=0, batch_axes=0, method="auto"):
    """A function of the same arguments as `fun` that returns the `GhostPlan` of
    `per_example_grad_norms` / `clipped_grad`: one row per parameter leaf with the operation that
    uses it, the rule (dense, gram, materialize, elementwise, unused) and its estimated cost per
    example. `print(plan)` shows the table. Only traces `fun`; nothing is computed.

    Example:
        >>> def loss(w, x):
        ...     return jnp.sum(jnp.tanh(jnp.dot(x, w)))
        >>> plan = ghost_plan(loss)(jnp.ones((3, 4)), jnp.ones((5, 3)))
        >>> plan.rows[0][2]   # ||x_i||^2 ||g_i||^2: 3 + 4 multiply-adds, not 3 * 4
        'dense'
    """
    @api_boundary
    def plan_fun(*args, mask=None):
        return ghost.analyze(prepare(fun, argnums, batch_axes, args, "ghost_plan", mask=mask), method)

    return plan_fun


_CLIP_METHODS = ghost.METHODS + ("vmap",)


def _factors(norms, clip, normalize, m):
    """The per-example scale of each gradient: min(1, C / n), or C / n with `normalize`."""
    safe = jnp.where(norms > 0, norms, jnp.ones_like(norms))
    if normalize:
        c = jnp.where(norms > 0, clip / safe, jnp.zeros_like(norms))
    else:
        c = jnp.where(norms > clip, clip / safe, jnp.ones_like(norms))
    return c if m is None else jnp.where(m, c, jnp.zeros_like(c))


def clipped_grad(fun, l2_norm_clip, argnums=0, batch_axes=0, method="auto", normalize=False, per_layer=False,
                 bookkeeping=True, has_aux=False, chunk_size=None):
    """The SUM over the examples of each example's gradient of the one-example loss `fun`, scaled
    to L2 norm at most `l2_norm_clip` (C): sum_i g_i min(1, C / ||g_i||), or, with
    `normalize=True`, sum_i g_i C / ||g_i|| (every example's gradient rescaled to norm exactly C).
    Returns `(clipped_sum, ClipInfo(norms, clip_factors, fraction_clipped))`. Adding or removing
    one example changes the sum by a vector of norm at most C (its L2 sensitivity), which is what
    DP-SGD's noise is calibrated to.

    `method` decides how the norms are found: 'auto', 'ghost', 'materialize' as in
    `per_example_grad_norms` (no per-example gradient materialized where ghost norms apply), or
    'vmap' (per-example gradients by vmap(grad), clipped and summed). The clipped sum is then
    formed from the first pass's activations and output cotangents (book-keeping, the default:
    for a dense layer X^T diag(c) G; no second backward pass), or with `bookkeeping=False` by a
    second backward pass through the same linearization with each example's loss weighted by its
    clip factor (sum_i c_i loss_i, c_i a constant). `per_layer=True` clips each parameter leaf
    separately to C / sqrt(L) (L leaves), or to its own budget when `l2_norm_clip` is a pytree of
    the parameters' structure; it implies book-keeping. `mask=` at call time: masked examples
    contribute nothing. `chunk_size` works through chunks of that many examples (a scan whose
    carry adds up the clipped sums): the same numbers up to rounding, the memory of one chunk.
    With `has_aux=True`, `fun` returns `(loss, aux)` and the result is
    `((clipped_sum, info), aux)`, aux stacked over the examples.

    Example:
        >>> def loss(w, x, y):
        ...     return (jnp.dot(x, w) - y) ** 2
        >>> g, info = clipped_grad(loss, 1.0)(jnp.ones(3), jnp.ones((5, 3)), jnp.zeros(5))
        >>> g.shape, info.norms.shape
        ((3,), (5,))
        >>> (g2, _), aux = clipped_grad(lambda w, x, y: (loss(w, x, y), x), 1.0, has_aux=True, chunk_size=2)(
        ...     jnp.ones(3), jnp.ones((5, 3)), jnp.zeros(5))
        >>> bool(jnp.allclose(g2, g)), aux.shape
        (True, (5, 3))
    """
    what = "clipped_grad"
    if method not in _CLIP_METHODS:
        raise ValueError(f"clipped_grad: method must be one of {_CLIP_METHODS}, got {method!r}.")

    @api_boundary
    def clipped_fun(*args, mask=None):
        chunk = _check_chunk(chunk_size, f"{what} of {getattr(fun, '__name__', 'fun')}")
        prog = prepare(fun, argnums, batch_axes, args, what, has_aux=has_aux, mask=mask)
        L = prog.n_diff
        if per_layer:
            budgets = tree_flatten(l2_norm_clip)[0]
            if len(budgets) == 1 and not isinstance(l2_norm_clip, (tuple, list, dict)):
                budgets = [budgets[0] / math.sqrt(L)] * L
            elif len(budgets) != L:
                raise ValueError(f"{prog.where}: with per_layer=True, l2_norm_clip must be one number (split as "
                                 f"C / sqrt({L}) over the {L} parameter leaves) or a pytree with one budget per "
                                 f"leaf; got {len(budgets)} values.")
        elif len(tree_flatten(l2_norm_clip)[0]) != 1:
            raise ValueError(f"{prog.where}: l2_norm_clip must be one number; per-leaf budgets need "
                             "per_layer=True.")
        plan = None if method == "vmap" else ghost.analyze(prog, method)

        def on_chunk(sub):
            """Per example (norms, factors, clipped or not, aux) and the chunk's clipped sums."""
            m = _mask_bool(sub)
            second_pass = None
            if method == "vmap":
                per, aux = _vmapped_grads(sub)
                per = [_zero_masked(m, g) for g in per]
                sq = [jnp.sum(jnp.reshape(g * g, (sub.size, -1)), axis=1) for g in per]
            else:
                need_pass = not (bookkeeping or per_layer)
                acts, gs, dgs, second_pass, aux = ghost.run(sub, plan, sub.diff_leaves, _loss_cotangent(sub, m),
                                                            with_params=need_pass)
                kept = {} if (bookkeeping or per_layer) else None
                sq = [_zero_masked(m, s)
                      for s in ghost.leaf_sq_norms(sub, plan, sub.diff_leaves, acts, gs, dgs, keep=kept)]
            if per_layer:
                norms = [jnp.sqrt(s) for s in sq]
                factors = [_factors(n, b, normalize, m) for n, b in zip(norms, budgets)]
                clipped_any = sum((n > b).astype(np.int32) for n, b in zip(norms, budgets)) > 0
            else:
                norms = jnp.sqrt(sum(sq[1:], sq[0]))
                factors = [_factors(norms, l2_norm_clip, normalize, m)] * L
                clipped_any = norms > l2_norm_clip
            if m is not None:
                clipped_any = clipped_any & m
            if method == "vmap":
                sums = [jnp.tensordot(c.astype(g.dtype), g, axes=1) for c, g in zip(factors, per)]
            elif second_pass is not None:
                sums = list(second_pass(factors[0].astype(sub.closed.out_avals[0].dtype))[0])
            else:
                sums = ghost.clipped_sum_bookkeeping(sub, plan, sub.diff_leaves, acts, gs, dgs, factors, kept)
            return (norms, factors if per_layer else factors[0], clipped_any, list(aux)), sums

        totals = [jnp.zeros_like(x) for x in prog.diff_leaves]
        (norms, factors, clipped_any, aux), sums = _over_chunks(prog, chunk, on_chunk, totals)
        m = _mask_bool(prog)
        count = prog.size if m is None else jnp.maximum(jnp.sum(m.astype(np.int32)), 1)
        fraction = jnp.sum(clipped_any.astype(sums[0].dtype)) / count
        if per_layer:
            info = ClipInfo(prog.unflatten_diff(norms), prog.unflatten_diff(factors), fraction)
        else:
            info = ClipInfo(norms, factors, fraction)
        out = (prog.unflatten_diff(sums), info)
        return (out, _unflatten_aux(prog, aux)) if has_aux else out

    return clipped_fun

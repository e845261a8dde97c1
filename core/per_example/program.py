"""The per-example loss traced once: argument handling, the checks every per-example
transformation makes, and the jaxpr they all evaluate.

Convention (JAX's `vmap(grad(loss_one), in_axes=(None, 0, ...))`): `fun(params, *example_args)` is
the loss of ONE example, a scalar. The arguments at `argnums` are differentiated and shared by all
examples; `batch_axes` says, for the other arguments, which axis carries the batch (an int or None,
or a tuple with one entry per positional argument, each a pytree prefix of it, like vmap's
in_axes). The function is traced once, on one example's shapes, into a jaxpr whose invars are the
differentiated leaves followed by the example leaves; the transformations evaluate that jaxpr
(batched by vmap, differentiated, or with taps for ghost norms), so the user's Python runs once.
"""
import inspect

import numpy as np

from .. import dtypes
from ..api import jit_p
from ..array import Array, to_array
from ..avals import ShapedArray
from ..batching_api import _broadcast_prefix, _check_axes_spec, _leaf_description
from ..interpreters import ad, batching, lowering
from ..interpreters.staging import trace_to_jaxpr
from ..ir import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from ..trace import EvalTrace, Primitive, Tracer, current_trace
from ..tree_util import (is_typed_leaf, keystr, physical_flatten, tree_flatten, tree_flatten_with_path, tree_leaves,
                         tree_unflatten)

__all__ = ["batch_coupled", "batch_coupled_p", "Program", "prepare", "inline_calls"]


# ----- the batch-coupled marker ------------------------------------------------------------------

class _MarkerPrimitive(Primitive):
    """An identity that exists only in staged programs: eagerly it returns its operand (no
    one-op executable is compiled for it), under any other trace it is recorded or transformed."""

    def bind(self, x, **params):
        if current_trace().__class__ is EvalTrace:
            return x
        return super().bind(x, **params)


batch_coupled_p = _MarkerPrimitive("batch_coupled")
batch_coupled_p.def_abstract_eval(lambda x, *, layer: x)
lowering.register(batch_coupled_p, lambda ctx, x, *, layer: x)
ad.jvp_rules[batch_coupled_p] = lambda primals, tangents, *, layer: (
    batch_coupled_p.bind(primals[0], layer=layer), tangents[0])
ad.transpose_rules[batch_coupled_p] = lambda ct, x, *, layer: [ct]
batching.batching_rules[batch_coupled_p] = lambda vals, dims, *, layer: (
    batch_coupled_p.bind(vals[0], layer=layer), dims[0])


def batch_coupled(x, layer):
    """`x` unchanged, marked as a statistic of the whole batch (computed across examples), e.g.
    BatchNorm's batch mean in train mode. The per-example transformations refuse a function whose
    program holds the mark: under them a function sees one example, so its "batch" statistic would
    silently be that example's own. `layer` names the layer in the error.

    Example:
        >>> batch_coupled(jnp.ones(3), "BatchNorm").shape
        (3,)
    """
    return batch_coupled_p.bind(x, layer=str(layer))


def _find_batch_coupled(jaxpr):
    """The `layer` of the first batch-coupled mark in `jaxpr` or a program it holds, or None."""
    for eqn in jaxpr.eqns:
        if eqn.primitive is batch_coupled_p:
            return eqn
        for value in eqn.params.values():
            for sub in (value if isinstance(value, (tuple, list)) else (value,)):
                inner = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub if isinstance(sub, Jaxpr) else None
                if inner is not None:
                    found = _find_batch_coupled(inner)
                    if found is not None:
                        return found
    return None


# ----- the traced per-example function ------------------------------------------------------------

class Program:
    """The per-example loss as a closed jaxpr, with how its flat inputs map to the arguments.

    `closed.jaxpr.invars` are the `n_diff` differentiated leaves, then the example leaves; its
    outputs are the loss, then the aux leaves. `ex_leaves` are the example leaves as given (whole
    batch), `ex_axes` their batch axes (None: shared by all examples), `size` the batch size.
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def with_examples(self, ex_leaves, size, mask):
        """The same program over another set of examples (a chunk of the batch): `ex_leaves` with
        the batch on axis 0 (shared leaves as they were), `size` examples, their `mask`."""
        axes = [None if ax is None else 0 for ax in self.ex_axes]
        return Program(**dict(self.__dict__, ex_leaves=list(ex_leaves), ex_axes=axes, size=int(size), mask=mask))

    def unflatten_diff(self, leaves):
        """Leaves of the differentiated arguments (in order) back into the user's structure."""
        return tree_unflatten(self.diff_tree, list(leaves))

    def eval_one(self, diff_leaves, ex_leaves):
        """The outputs (loss, aux leaves) of the per-example program for one example's leaves."""
        from ..interpreters.evaluation import eval_jaxpr
        return eval_jaxpr(self.closed.jaxpr, self.closed.consts, *diff_leaves, *ex_leaves)


def _fun_name(fun):
    return getattr(fun, "__name__", None) or type(fun).__name__


def _as_operand(x, what):
    if isinstance(x, (Array, Tracer)):
        return x
    if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)):
        return to_array(x)
    raise TypeError(f"{what}: expected arrays, scalars or pytrees of them, got a value of type "
                    f"{type(x).__name__}.")


def _argnums(argnums, n_args, fname, what):
    nums = (argnums,) if isinstance(argnums, (int, np.integer)) else tuple(argnums)
    if not nums:
        raise ValueError(f"{what} of {fname}: argnums must not be empty.")
    for a in nums:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"{what} of {fname}: argnums must be an int or a tuple of ints, got {argnums!r}.")
        if not -n_args <= a < n_args:
            raise ValueError(f"{what} of {fname}: argnums={argnums!r} but the function was called with "
                             f"{n_args} positional argument(s).")
    return tuple(int(a) % n_args for a in nums)


def _arg_name(fun, i):
    try:
        params = [p for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return params[i].name
    except (TypeError, ValueError, IndexError):
        return f"args[{i}]"


def prepare(fun, argnums, batch_axes, args, what, has_aux=False, mask=None):
    """Check the arguments of a per-example transformation and trace `fun` on one example.

    `what` names the transformation in errors. Returns a `Program`; raises when an argument is
    malformed, the batch sizes disagree, the output is not one scalar per example, or the program
    holds a batch-coupled computation (BatchNorm in train mode)."""
    fname = _fun_name(fun)
    where = f"{what} of {fname}"
    nums = _argnums(argnums, len(args), fname, what)
    if isinstance(batch_axes, list):
        batch_axes = tuple(batch_axes)
    _check_axes_spec(batch_axes, "batch_axes", what)
    if isinstance(batch_axes, tuple):
        if len(batch_axes) != len(args):
            raise ValueError(f"{where}: batch_axes must be an int, None, or a tuple with one entry per positional "
                             f"argument ({len(args)}), like vmap's in_axes; got {len(batch_axes)} entries.")
        for i in nums:
            if tree_flatten(batch_axes[i], is_leaf=lambda x: x is None)[0] != [None]:
                raise ValueError(f"{where}: the differentiated argument {_arg_name(fun, i)} (argnums) is shared "
                                 f"by all examples, so its batch_axes entry must be None, got {batch_axes[i]!r}.")
        per_arg = batch_axes
    else:
        per_arg = tuple(None if i in nums else batch_axes for i in range(len(args)))

    # a typed key (one leaf of shape S) is traced as its data, S + (2,) (core/tree_util.py): batch
    # axes are checked on the leaves the user sees and made non-negative, the same axes of the data
    all_leaves, in_tree = physical_flatten((tuple(args), {}))
    ranks = [x.ndim if is_typed_leaf(x) else np.ndim(x) for x in tree_leaves((tuple(args), {}))]
    all_axes = _broadcast_prefix(per_arg, tuple(args), "batch_axes", fname, what)
    # global leaf index ranges of each positional argument
    starts = np.cumsum([0] + [len(tree_flatten(a)[0]) for a in args])
    diff_idx = [k for i in nums for k in range(starts[i], starts[i + 1])]
    diff_set = set(diff_idx)
    ex_idx = [k for k in range(len(all_leaves)) if k not in diff_set]
    all_leaves = [_as_operand(x, where) for x in all_leaves]

    # differentiated leaves: floating point, named by their path for errors and plans
    diff_paths = []
    for i in nums:
        name = _arg_name(fun, i)
        for path, _ in tree_flatten_with_path(args[i])[0]:
            diff_paths.append(name + keystr(path))
    for k, name in zip(diff_idx, diff_paths):
        dt = all_leaves[k].aval.dtype
        if not dtypes.is_float(dt):
            raise TypeError(f"{where}: the differentiated argument {name} has dtype {dtypes.short_name(dt)}; "
                            "per-example gradients need floating-point parameters (pass integer values in a "
                            "non-differentiated argument, or close over them).")

    # example leaves: batch axes normalized, one batch size
    ex_leaves = [all_leaves[k] for k in ex_idx]
    ex_axes = []
    sizes = []
    for k, x in zip(ex_idx, ex_leaves):
        ax = all_axes[k]
        if ax is not None:
            if not -ranks[k] <= ax < ranks[k]:
                raise ValueError(f"{where}: batch_axes maps the {_leaf_description(k, in_tree, fun)} along axis {ax}, "
                                 f"but it has shape {tuple(x.shape)[:ranks[k]]} (rank {ranks[k]}).")
            ax = int(ax) % ranks[k]
            sizes.append((k, x, ax))
        ex_axes.append(ax)
    if not sizes:
        raise ValueError(f"{where}: no argument carries the batch: batch_axes={batch_axes!r} maps none of the "
                         "non-differentiated arguments. Pass the examples' inputs with a batch axis (batch_axes=0).")
    size = sizes[0][1].shape[sizes[0][2]]
    if any(x.shape[ax] != size for _, x, ax in sizes):
        lines = "\n".join(f"  {_leaf_description(k, in_tree, fun)}: {x.shape[ax]} examples (axis {ax} of "
                          f"{x.aval.str_short()})" for k, x, ax in sizes)
        raise ValueError(f"{where}: the arguments that carry the batch disagree on its size:\n{lines}\n"
                         "Every batched argument must hold the same number of examples along its batch axis.")
    if mask is not None:
        mask = _as_operand(mask, where)
        if mask.shape != (size,):
            raise ValueError(f"{where}: mask must have one entry per example, shape ({size},), got "
                             f"{mask.aval.str_short()}.")

    # trace one example
    in_avals = [all_leaves[k].aval.strip_weak_type() for k in diff_idx]
    for x, ax in zip(ex_leaves, ex_axes):
        a = x.aval
        in_avals.append(a if ax is None else ShapedArray(a.shape[:ax] + a.shape[ax + 1:], a.dtype, a.weak_type))
    n_diff = len(diff_idx)
    store = {}

    def flat_fun(*flat):
        leaves = list(all_leaves)
        for k, v in zip(diff_idx + ex_idx, flat):
            leaves[k] = v
        full_args, _ = tree_unflatten(in_tree, leaves)
        out = fun(*full_args)
        aux = None
        if has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise TypeError(f"{where} with has_aux=True: the function must return a pair (loss, aux), it "
                                f"returned {type(out).__name__}.")
            out, aux = out
        if not isinstance(out, (Array, Tracer, int, float, np.ndarray, np.generic)):
            raise TypeError(f"{where}: the function must return the loss of one example as a scalar, it "
                            f"returned a value of type {type(out).__name__}.")
        aux_leaves, store["aux_tree"] = physical_flatten(aux)
        return [_as_operand(out, where)] + [_as_operand(a, where) for a in aux_leaves]

    names = [f"{p} (differentiated)" for p in diff_paths] + [
        f"{_leaf_description(k, in_tree, fun)[len('argument '):]} (one example)" for k in ex_idx]
    closed = trace_to_jaxpr(flat_fun, in_avals, fun_name=fname, purpose=what, arg_names=names)
    loss_aval = closed.out_avals[0]
    if loss_aval.shape != () or not dtypes.is_float(loss_aval.dtype):
        shapes = ", ".join(f"{n.split(' ')[0]}: {a.str_short()}" for n, a in zip(names[n_diff:], in_avals[n_diff:]))
        raise TypeError(
            f"{where}: the function must return the loss of ONE example as a real scalar, but for one example "
            f"({shapes}) it returned {loss_aval.str_short()}. Write the loss of a single example (the "
            "transformation adds the batch axis); a function that returns a vector of per-example losses "
            "for a whole batch is the vmapped form, not the per-example one.")
    coupled = _find_batch_coupled(closed.jaxpr)
    if coupled is not None:
        at = f" (at {coupled.source_info})" if coupled.source_info else ""
        raise ValueError(
            f"{where}: the function uses {coupled.params['layer']}, which computes statistics across the "
            f"batch{at}. Per-example "
            f"gradients see one example at a time, so a statistic over the batch would silently be each "
            f"example's own, and its gradient would not be the gradient of the batch loss. Use a "
            f"per-example normalization (nn.GroupNorm or nn.LayerNorm), or apply the layer in eval mode "
            f"with its running statistics (apply_fun(..., state=state, mode='eval')), which is per-example.")
    diff_tree = tree_flatten(args[nums[0]] if isinstance(argnums, (int, np.integer))
                             else tuple(args[i] for i in nums))[1]
    return Program(fun=fun, fname=fname, where=where, closed=closed, n_diff=n_diff,
                   diff_leaves=[all_leaves[k] for k in diff_idx], diff_paths=diff_paths, diff_tree=diff_tree,
                   ex_leaves=ex_leaves, ex_axes=ex_axes, size=int(size), mask=mask,
                   aux_tree=store["aux_tree"])


# ----- inlining nested jit calls ------------------------------------------------------------------

def inline_calls(closed):
    """`(jaxpr, consts)`: `closed` with every nested `jit` call replaced by its equations (fresh
    variables for each inlined copy), so that layers run under `jit` are visible to the ghost-norm
    analysis. Other programs held by equations (scan, cond, custom_jvp, remat) stay opaque."""
    constvars = list(closed.jaxpr.constvars)
    consts = list(closed.consts)
    eqns = []

    def emit(jaxpr, env):
        def atom(a):
            return a if isinstance(a, Literal) else env[a]
        for eqn in jaxpr.eqns:
            ins = [atom(a) for a in eqn.invars]
            if eqn.primitive is jit_p:
                inner = eqn.params["jaxpr"]
                sub = {}
                for v, c in zip(inner.jaxpr.constvars, inner.consts, strict=True):
                    nv = Var(v.aval)
                    constvars.append(nv)
                    consts.append(c)
                    sub[v] = nv
                for v, a in zip(inner.jaxpr.invars, ins, strict=True):
                    sub[v] = a
                outs = emit(inner.jaxpr, sub)
                for v, a in zip(eqn.outvars, outs, strict=True):
                    env[v] = a
                continue
            outs = [Var(v.aval) for v in eqn.outvars]
            for v, nv in zip(eqn.outvars, outs, strict=True):
                env[v] = nv
            eqns.append(JaxprEqn(eqn.primitive, ins, outs, eqn.params, eqn.source_info))
        return [atom(a) for a in jaxpr.outvars]

    top = closed.jaxpr
    env = {v: v for v in top.constvars + top.invars}
    outvars = emit(top, env)
    return Jaxpr(constvars, top.invars, outvars, eqns), consts

"""Structured control flow: `cond`/`switch`, `while_loop`/`fori_loop`, `scan`/`map`, and the
loop-free `associative_scan` and `select`.

The contract, written once: a control-flow wrapper flattens its pytree operands, traces each
user function to a jaxpr on the operands' abstract values (`trace_to_jaxpr`), and binds ONE
primitive whose params hold those jaxprs. Values a traced function closes over (concrete arrays,
or tracers of an enclosing trace) are not baked in: they become leading operands of the
primitive, so every param jaxpr is closed with no constants and takes its inputs in the order

    cond:   index, *consts, *operands          branches[i]: (*consts, *operands) -> outs
    while:  *cond_consts, *body_consts, *carry  cond_jaxpr: (*cond_consts, *carry) -> bool[]
                                                body_jaxpr: (*body_consts, *carry) -> carry
    scan:   *consts, *init, *xs                jaxpr: (*consts, *carry, *x) -> (*carry, *y)

Structurally equal jaxprs are interned (one object per structure), so an eager `lax.cond` with a
fresh lambda each call still hits the eager executable cache. Eagerly the primitive compiles once
per signature like any other; under `jit` it lowers to `stablehlo.case` / `stablehlo.while`, whose
regions read enclosing values directly (implicit capture), so nesting needs nothing special.
"""
import builtins
import inspect
import operator

import numpy as np

from .. import dtypes
from ..array import Array, to_array
from ..avals import ShapedArray
from ..config import config
from ..errors import ConcretizationTypeError
from ..interpreters import ad, batching, lowering, partial_eval
from ..interpreters.evaluation import eval_jaxpr
from ..interpreters.lowering import i64_array
from ..interpreters.staging import trace_to_jaxpr
from ..ir import ClosedJaxpr, Jaxpr, Var
from ..ir import intern as intern_jaxpr
from ..tokens import AbstractToken, is_token
from ..trace import Primitive, Tracer, set_current_trace
from ..tree_util import (FlattenedIndexKey, is_typed_leaf, keystr, physical_flatten, physical_flatten_with_path,
                         physical_map, tree_flatten, tree_flatten_with_path, tree_unflatten, treedef_children)
from ._base import aval_of
from .elementwise import add, clamp, eq, lt, ne, select_n
from .reductions import reduce_or
from .structural import (broadcast_in_dim, concatenate, convert_element_type, expand_dims, full, index_in_dim,
                         reshape, slice_in_dim)

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "map", "associative_scan", "select"]

_I32 = np.dtype(np.int32)


# ----- shared helpers: operands, tracing, constants, type checks ------------------------------------

_TOKEN_REFUSED = ("a token (lax.create_token / after_all) cannot be an operand, carry or result of lax.cond, "
                  "switch, while_loop, fori_loop, scan or map here: make it inside the body with "
                  "lax.create_token(), or order the effects outside the loop (programs on one device run in "
                  "the order they are dispatched)")


def _operand(x):
    """A pytree leaf as a primitive operand: tracers and Arrays as they are, the rest as Arrays.
    A token (`lax.create_token`) is refused: the loops and conditionals do not carry tokens."""
    if is_token(x):
        raise TypeError(_TOKEN_REFUSED)
    if isinstance(x, (Array, Tracer)):
        return x
    return to_array(x)


def _trace(fun, in_tree, in_avals, name, split_out=None):
    """Trace `fun(*tree_unflatten(in_tree, args))` into a ClosedJaxpr on `in_avals`.

    Returns `(closed, out_info)`: `out_info` is the output treedef, or whatever `split_out(out)`
    returns when given (it flattens the output itself and returns `(flat_leaves, info)`).
    """
    store = {}

    def flat_fun(*args):
        out = fun(*tree_unflatten(in_tree, list(args)))
        if split_out is None:
            leaves, store["info"] = physical_flatten(out)
        else:
            leaves, store["info"] = split_out(out)
        return leaves

    closed = trace_to_jaxpr(flat_fun, list(in_avals), getattr(fun, "__name__", None) or type(fun).__name__, name)
    if any(type(a) is AbstractToken for a in closed.jaxpr.out_avals):
        raise TypeError(_TOKEN_REFUSED)
    return closed, store["info"]


def _join_consts(closeds):
    """Each traced function's constants become leading inputs; functions traced together (cond
    branches) share one constant list, each ignoring the others' constants."""
    consts, seen = [], set()
    for c in closeds:
        for x in c.consts:
            if id(x) not in seen:
                seen.add(id(x))
                consts.append(x)
    out = []
    for c in closeds:
        mine = {id(x): v for x, v in zip(c.consts, c.jaxpr.constvars, strict=True)}
        binders = [mine[id(x)] if id(x) in mine else Var(x.aval) for x in consts]
        j = c.jaxpr
        out.append(intern_jaxpr(ClosedJaxpr(Jaxpr([], binders + j.invars, j.outvars, j.eqns), [])))
    return out, consts


class _Shown:
    """A leaf that prints as its type, so a pytree of them shows structure and types together."""
    __slots__ = ("text",)

    def __init__(self, aval):
        self.text = "" if aval is None else aval.str_short() + ("{weak}" if aval.weak_type else "")

    def __repr__(self):
        return self.text


def _show(tree, avals):
    try:
        return repr(tree_unflatten(tree, [_Shown(a) for a in avals]))
    except Exception:  # a custom node whose constructor rejects the stand-in leaves
        return f"{tree} with leaf types {[_Shown(a) for a in avals]}"


def _leaf_paths(tree):
    """The key path of each leaf of treedef `tree` (for errors); flat positions if it cannot be rebuilt."""
    try:
        paths = [p for p, _ in tree_flatten_with_path(tree_unflatten(tree, [_Shown(None)] * tree.num_leaves))[0]]
        if len(paths) == tree.num_leaves:
            return paths
    except Exception:  # a custom node whose constructor rejects the stand-in leaves
        pass
    return [(FlattenedIndexKey(i),) for i in range(tree.num_leaves)]


def _mismatch(a, b):
    """What differs between two avals of different types, in words."""
    if a.shape != b.shape and a.dtype != b.dtype:
        return "the shapes and dtypes do not match"
    return "the shapes do not match" if a.shape != b.shape else "the dtypes do not match"


def _same_types(avals_a, avals_b):
    return len(avals_a) == len(avals_b) and all(
        a.shape == b.shape and a.dtype == b.dtype for a, b in zip(avals_a, avals_b, strict=True))


def _check_operands(name, expected, got):
    """Abstract-eval check: a param jaxpr's input types against the primitive's operand types."""
    if not _same_types(expected, got):
        raise TypeError(f"{name} expects operands of types [{', '.join(a.str_short() for a in expected)}], "
                        f"got [{', '.join(a.str_short() for a in got)}].")


def _concrete(x):
    return not isinstance(x, Tracer)


# ----- cond / switch --------------------------------------------------------------------------------

_NO_OPERAND = object()


def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
    """`true_fun(*operands)` if `pred` else `false_fun(*operands)`, as one staged conditional.

    `pred` is a scalar bool (or integer: nonzero is true); `operands` are pytrees. Both branches are
    traced and must return the same pytree of the same shapes and dtypes; only one runs. Two older
    forms are accepted as in JAX: the keyword `cond(pred, true_fun, false_fun, operand=x)` (one
    operand; not together with positional operands), and `cond(pred, true_operand, true_fun,
    false_operand, false_fun)` (callables in positions 2 and 4, each branch gets its own operand).
    Under `disable_jit()` a concrete `pred` simply calls the chosen branch.

    Example: `lax.cond(x > 0, lambda x: x * 2.0, lambda x: -x, x)`.
    """
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("lax.cond: if the 'operand' keyword is passed then no operands can be passed "
                            "positionally.")
        operands = (operand,)
    elif len(operands) == 2 and not callable(true_fun) and callable(false_fun) and callable(operands[1]):
        true_operand, true_f, false_operand, false_f = true_fun, false_fun, operands[0], operands[1]
        return cond(pred, lambda ops: true_f(ops[0]), lambda ops: false_f(ops[1]), (true_operand, false_operand))
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    pred = _operand(pred)
    if pred.aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got a value of type {pred.aval.str_short()}.")
    kind = pred.aval.dtype.kind
    if kind in "iu":
        pred = ne(pred, 0)
    elif kind != "b":
        raise TypeError(f"Pred type must be either boolean or number, got {dtypes.short_name(pred.aval.dtype)}.")
    if config.disable_jit and _concrete(pred):
        return true_fun(*operands) if bool(pred) else false_fun(*operands)
    index = convert_element_type(pred, _I32)
    return _bind_cond(index, (false_fun, true_fun), operands, [(1, 0, "true_fun and false_fun output")],
                      ("false_fun", "true_fun"))


def switch(index, branches, *operands):
    """`branches[index](*operands)`, with `index` clamped into `[0, len(branches) - 1]` (as JAX).

    `index` is a scalar integer; all branches take `operands` and return the same pytree of the
    same shapes and dtypes. Example: `lax.switch(2, [jnp.sin, jnp.cos, jnp.tanh], x)` is `tanh(x)`.
    """
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    if not all(callable(b) for b in branches):
        raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    index = _operand(index)
    if index.aval.shape != ():
        raise TypeError(f"Branch index must be scalar, got a value of type {index.aval.str_short()}.")
    if index.aval.dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index.aval.str_short()}.")
    if len(branches) == 1:
        return branches[0](*operands)
    index = clamp(0, convert_element_type(index, _I32), len(branches) - 1)
    if config.disable_jit and _concrete(index):
        return branches[int(index)](*operands)
    return _bind_cond(index, branches, operands,
                      [(0, i, f"branch 0 and {i} outputs") for i in range(1, len(branches))],
                      [f"branch {i}" for i in range(len(branches))])


def _bind_cond(index, branches, operands, comparisons, branch_names=None):
    """Trace every branch on the operands and bind `cond`. `comparisons` lists `(i, j, what)`:
    branch i's and branch j's outputs must agree in structure, shapes and dtypes (weak types may
    differ), else an error that names them `what` and each differing output by its path."""
    leaves, ops_tree = physical_flatten(operands)
    ops = [_operand(x) for x in leaves]
    avals = [x.aval for x in ops]
    traced = [_trace(br, ops_tree, avals, "cond") for br in branches]
    for i, j, what in comparisons:
        (ci, ti), (cj, tj) = traced[i], traced[j]
        if ti != tj:
            raise TypeError(f"{what} must have same type structure, got {_show(ti, ci.out_avals)} and "
                            f"{_show(tj, cj.out_avals)}.")
        if not _same_types(ci.out_avals, cj.out_avals):
            ni, nj = (branch_names[i], branch_names[j]) if branch_names else (f"branch {i}", f"branch {j}")
            diffs = [f"{'output ' + keystr(path) if path else 'the output'} is {_Shown(a)} in {ni} but {_Shown(b)} "
                     f"in {nj}, so {_mismatch(a, b)}"
                     for path, a, b in zip(_leaf_paths(ti), ci.out_avals, cj.out_avals, strict=True)
                     if a.shape != b.shape or a.dtype != b.dtype]
            raise TypeError(f"{what} must have identical types, got {_show(ti, ci.out_avals)} and "
                            f"{_show(tj, cj.out_avals)}: {'; '.join(diffs)}. Make every branch return the same "
                            "shapes and dtypes (convert with `.astype(...)` where they differ).")
    tree0 = traced[0][1]
    jaxprs, consts = _join_consts([c for c, _ in traced])
    outs = cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs))
    return tree_unflatten(tree0, outs)


def _cond_abstract_eval(index, *args, branches):
    if index.shape != () or index.dtype != _I32:
        raise TypeError(f"cond: the branch index must be an i32[] scalar, got {index.str_short()}.")
    for i, br in enumerate(branches):
        _check_operands(f"cond branch {i}", br.in_avals, args)
    out = branches[0].out_avals
    for i, br in enumerate(branches[1:], 1):
        if not _same_types(out, br.out_avals):
            raise TypeError(f"cond branches 0 and {i} have different output types: "
                            f"[{', '.join(a.str_short() for a in out)}] and "
                            f"[{', '.join(a.str_short() for a in br.out_avals)}].")
    # the result is weak only where every branch's is (a strong branch decides the dtype)
    return [a.update(weak_type=builtins.all(br.out_avals[k].weak_type for br in branches))
            for k, a in enumerate(out)]


def _cond_lowering(ctx, index, *args, branches):
    b = ctx.b

    def region(closed):
        return b.region([], lambda rb: lowering.lower_jaxpr_into(rb, closed.jaxpr, list(args)))

    outs = b.op("stablehlo.case", [index], ctx.avals_out, regions=[region(br) for br in branches])
    return [outs] if isinstance(outs, str) else outs


cond_p = Primitive("cond", multiple_results=True)
cond_p.def_abstract_eval(_cond_abstract_eval)
lowering.register(cond_p, _cond_lowering)


# ----- differentiation rules: shared helpers, then cond's rules --------------------------------------
# A primitive that holds programs is differentiated by transforming its programs (`ad.jvp_jaxpr`,
# `partial_eval.partial_eval_jaxpr`, `ad.transpose_jaxpr`) and binding itself again. The operand
# layout changes on the way (tangents next to primals, residuals as extra operands), so each rule
# rearranges the transformed program by re-tracing a small wrapper around `eval_jaxpr`. A
# transformed program may close over constants: `_join_consts` turns them into leading operands,
# exactly as the wrappers do for user functions, so every param jaxpr stays constant-free and
# interned. The `linear` param of scan is not used by these rules (always all False).

def _call(closed, args):
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _retrace(fun, in_avals, name):
    """The program `fun(*args) -> list of outputs` on `in_avals` (it may close over constants)."""
    return trace_to_jaxpr(fun, list(in_avals), name, "differentiation")


def _permuted(closed, in_perm, out_perm, name):
    """`closed` with its inputs reordered (new input j is old input `in_perm[j]`) and its outputs
    `[outs[k] for k in out_perm]`."""
    avals = closed.in_avals
    position = {old: new for new, old in enumerate(in_perm)}

    def fun(*args):
        outs = _call(closed, [args[position[i]] for i in range(len(avals))])
        return [outs[k] for k in out_perm]

    return _retrace(fun, [avals[i] for i in in_perm], name)


def _param_jaxpr(closed):
    """A constant-free interned program and the constants to pass as its leading operands."""
    (jaxpr,), consts = _join_consts([closed])
    return jaxpr, consts


def _any(a, b):
    return [x or y for x, y in zip(a, b, strict=True)]


def _fixpoint(nonzero, step):
    """The smallest superset of `nonzero` (one bool per carry) that `step` maps into itself."""
    for _ in range(len(nonzero) + 1):
        new = _any(nonzero, step(nonzero))
        if new == nonzero:
            return nonzero
        nonzero = new
    return nonzero


def _nonzero(t):
    return type(t) is not ad.Zero


def _zeros(aval):
    return full(aval.shape, 0, aval.dtype)


def _tangents_out(values, nonzeros, avals):
    """A tangent per output: the next of `values` where nonzero, a symbolic zero elsewhere."""
    values = iter(values)
    return [next(values) if nz else ad.Zero(ad.tangent_aval(a)) for nz, a in zip(nonzeros, avals, strict=True)]


def _merge(unknowns, known, unknown):
    known, unknown = iter(known), iter(unknown)
    return [next(unknown) if u else next(known) for u in unknowns]


def _cond_jvp(primals, tangents, *, branches):
    """Every branch is jvp'ed with the same operand tangents; an output tangent that is nonzero in
    some branch is materialized in all of them, so the branches keep one output type."""
    index, ops = primals[0], primals[1:]
    nonzeros = [_nonzero(t) for t in tangents[1:]]
    out_avals = branches[0].out_avals
    out_nz = [False] * len(out_avals)
    for br in branches:
        out_nz = _any(out_nz, ad.jvp_jaxpr(br, nonzeros, instantiate=False)[1])
    out_nz = [nz and dtypes.is_inexact(a.dtype) for nz, a in zip(out_nz, out_avals, strict=True)]
    jaxprs, consts = _join_consts([ad.jvp_jaxpr(br, nonzeros, instantiate=out_nz)[0] for br in branches])
    outs = cond_p.bind(index, *consts, *ops, *[t for t in tangents[1:] if _nonzero(t)], branches=tuple(jaxprs))
    n = len(out_avals)
    return outs[:n], _tangents_out(outs[n:], out_nz, out_avals)


def _cond_partial_eval(trace, args, params):
    """Split every branch with the same unknown operands (and the union of their unknown outputs).
    Branches need different residuals, so each known branch returns the residuals of ALL branches,
    zeros for the others' (JAX's scheme); the unknown cond picks its own by the same index."""
    branches = params["branches"]
    index, ops = args[0], args[1:]
    if trace.is_unknown(index):
        return trace.stage(cond_p, args, params)
    unknowns = [trace.is_unknown(x) for x in ops]
    n_out = len(branches[0].out_avals)
    out_uk = [False] * n_out
    for br in branches:
        out_uk = _any(out_uk, partial_eval.partial_eval_jaxpr(br, unknowns)[2])
    splits = [partial_eval.partial_eval_jaxpr(br, unknowns, instantiate=out_uk) for br in branches]
    n_known = n_out - sum(out_uk)
    res_avals = [known.out_avals[n_known:] for known, _, _, _ in splits]
    in_avals = branches[0].in_avals

    def known_branch(i):
        def fun(*known_ops):
            outs = _call(splits[i][0], known_ops)
            res = []
            for j, avals in enumerate(res_avals):
                res += outs[n_known:] if j == i else [_zeros(a) for a in avals]
            return outs[:n_known] + res
        return _retrace(fun, [a for a, u in zip(in_avals, unknowns) if not u], "cond_known")

    jaxprs, consts = _join_consts([known_branch(i) for i in range(len(branches))])
    with set_current_trace(trace.parent):
        known_outs = cond_p.bind(index, *consts, *[x for x, u in zip(ops, unknowns) if not u],
                                 branches=tuple(jaxprs))
    residuals = known_outs[n_known:]
    if not any(out_uk):
        return known_outs[:n_known]
    all_res = [a for avals in res_avals for a in avals]
    starts = np.cumsum([0] + [len(r) for r in res_avals]).tolist()

    def unknown_branch(i):
        def fun(*xs):
            return _call(splits[i][1], list(xs[starts[i]:starts[i + 1]]) + list(xs[len(all_res):]))
        return _retrace(fun, all_res + [a for a, u in zip(in_avals, unknowns) if u], "cond_unknown")

    jaxprs, consts = _join_consts([unknown_branch(i) for i in range(len(branches))])
    unknown_outs = trace.stage(cond_p, [index, *consts, *residuals, *[x for x, u in zip(ops, unknowns) if u]],
                               {"branches": tuple(jaxprs)})
    return _merge(out_uk, known_outs[:n_known], unknown_outs)


def _cond_transpose(cts, index, *ops, branches):
    """The index and the residual operands are non-linear; each branch is transposed on its own."""
    linear = [ad.is_undefined(x) for x in ops]
    cts = [ad.instantiate_zeros(ct) for ct in cts]
    jaxprs, consts = _join_consts([ad.transpose_jaxpr(br, linear) for br in branches])
    outs = iter(cond_p.bind(index, *consts, *[x for x, lin in zip(ops, linear) if not lin], *cts,
                            branches=tuple(jaxprs)))
    return [None] + [next(outs) if lin else None for lin in linear]


ad.jvp_rules[cond_p] = _cond_jvp
partial_eval.partial_eval_rules[cond_p] = _cond_partial_eval
ad.transpose_rules[cond_p] = _cond_transpose


# Batching. A held program may use the vmapped axis name (a collective), so these rules sit in
# `axis_batching_rules` and run even when no operand is batched; then, unless a program uses the
# name, the primitive is bound unchanged.

def _unbatched(axis, dims, closeds):
    return (builtins.all(d is None for d in dims)
            and not builtins.any(batching.jaxpr_uses_axis(c, axis.name) for c in closeds))


def _batched_at_front(flags):
    """Batch dims for values batched (True: at axis 0) or not (False: None)."""
    return [0 if b else None for b in flags]


def _cond_batch_rule(axis, vals, dims, *, branches):
    """An unbatched index keeps the cond: every branch batched alike, an output batched (at 0) if
    some branch batches it. A batched index picks a different branch per example: every branch
    runs on the whole batch and `select_n` picks per example (an index out of range picks the last
    branch, as `stablehlo.case` does)."""
    n_out = len(branches[0].out_avals)
    if _unbatched(axis, dims, branches):
        return cond_p.bind(*vals, branches=branches), [None] * n_out
    index, ops = vals[0], list(vals[1:])
    op_dims = list(dims[1:])
    if dims[0] is not None:
        return _cond_as_select(axis, index, ops, op_dims, branches)
    out_batched = [False] * n_out
    for br in branches:
        chosen = batching.batch_jaxpr(br, axis, op_dims, [None] * n_out)[1]
        out_batched = _any(out_batched, [d is not None for d in chosen])
    out_dims = _batched_at_front(out_batched)
    jaxprs, consts = _join_consts([batching.batch_jaxpr(br, axis, op_dims, out_dims)[0] for br in branches])
    return cond_p.bind(index, *consts, *ops, branches=tuple(jaxprs)), out_dims


def _cond_as_select(axis, index, ops, op_dims, branches):
    n_out, last = len(branches[0].out_avals), len(branches) - 1
    in_range = eq(clamp(0, index, last), index)  # a batch of i32 scalars: shape (size,)
    index = select_n(in_range, full(aval_of(index).shape, last, _I32), index)
    results = [_call(batching.batch_jaxpr(br, axis, op_dims, [0] * n_out)[0], ops) for br in branches]
    outs = []
    for cases in zip(*results):
        which = broadcast_in_dim(index, aval_of(cases[0]).shape, (0,))
        outs.append(select_n(which, *cases))
    return outs, [0] * n_out


batching.axis_batching_rules[cond_p] = _cond_batch_rule


# ----- loop bodies: weak types and carry checks (shared by while_loop and scan) ----------------------

def _promote_weak_carry(carry_avals, out_avals):
    """JAX's rule: a weakly typed initial carry whose dtype differs from the body's output is
    promoted with it (`0` + a float32 body becomes float32). None if nothing changes."""
    changed, new = False, []
    for c, o in zip(carry_avals, out_avals):
        if c.weak_type and (c.dtype != o.dtype) and c.shape == o.shape:
            new.append(ShapedArray(c.shape, _promote(c, o), False))
            changed = True
        else:
            new.append(c)
    return new if changed else None


def _promote(c, o):
    return dtypes.promote_dtypes_weak((c.dtype, c.weak_type), (o.dtype, o.weak_type))[0]


class _CarryNames:
    """How carry type errors name things: the function (`what`, e.g. "scan body"), the carry
    parameter (`name`, e.g. "c"), and whether the user's carry is the last element of the loop's
    carry tuple (`nested`: fori_loop's index rides along, and is not shown)."""
    __slots__ = ("what", "name", "nested")

    def __init__(self, what, name, nested=False):
        self.what, self.name, self.nested = what, name, nested


def _param_name(fun, index, default):
    """The name of `fun`'s positional parameter `index` (for errors), else `default`."""
    try:
        params = [p for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return params[index].name
    except (TypeError, ValueError, IndexError):
        return default


def _user_view(tree, avals, nested):
    """The part of a loop carry the user wrote: all of it, or the last element of the carry tuple."""
    if not nested:
        return tree, list(avals)
    child = treedef_children(tree)[-1]
    n = child.num_leaves
    return child, list(avals[len(avals) - n:])


def _check_carry(names, carry_tree, carry_avals, out_tree, out_avals):
    """The body's carry output must have the carry input's structure, shapes and dtypes (weak-type
    differences are allowed); else a TypeError naming each differing component by its path."""
    what = names.what
    in_tree, in_avals = _user_view(carry_tree, carry_avals, names.nested)
    if out_tree != carry_tree:
        if names.nested and treedef_children(out_tree)[:-1] == treedef_children(carry_tree)[:-1]:
            out_tree, out_avals = _user_view(out_tree, out_avals, True)
        raise TypeError(f"{what} function carry input and carry output must have the same pytree structure, "
                        f"but they differ: the carry input is {_show(in_tree, in_avals)} and the carry "
                        f"output is {_show(out_tree, out_avals)}.")
    out_tree, out_avals = _user_view(out_tree, out_avals, names.nested)
    if _same_types(in_avals, out_avals):
        return
    diffs = []
    for path, a, b in zip(_leaf_paths(in_tree), in_avals, out_avals, strict=True):
        if a.shape == b.shape and a.dtype == b.dtype:
            continue
        component = f"component {names.name}{keystr(path)}" if path else names.name
        diffs.append(f"the input carry {component} has type {_Shown(a)} but the corresponding output carry "
                     f"component has type {_Shown(b)}, so {_mismatch(a, b)}")
    hint = ""
    if any(a.dtype != b.dtype for a, b in zip(in_avals, out_avals, strict=True)):
        hint = (" A loop cannot change a carry's dtype: convert the output (e.g. `.astype(...)`), or start the "
                "loop from an initial value of the output's dtype.")
    raise TypeError(f"{what} function carry input and carry output must have equal types (shapes and "
                    f"dtypes), but they differ: {'; '.join(diffs)}. The carry input is {_show(in_tree, in_avals)} "
                    f"and the carry output is {_show(out_tree, out_avals)}. Revise the function so that all "
                    f"output types match the corresponding input types.{hint}")


def _trace_loop_body(fun, names, args_tree, carry_tree, carry_avals, rest_avals, split_out):
    """Trace a loop body whose flat inputs are (*carry, *rest) and whose outputs start with the
    carry, reconciling weak types as JAX does: a weakly typed initial carry (a Python scalar) whose
    dtype differs from the body's output is promoted and the body traced again; any other
    difference in shape or dtype is a TypeError (`_check_carry`), never a silent conversion.
    `split_out(out)` returns `(carry_leaves, carry_out_tree, extra_leaves, extra_info)`. Returns
    `(closed, carry_avals, extra_info)`; `carry_avals` may have been promoted (the caller converts
    its initial values to them)."""
    carry_avals = list(carry_avals)
    for _ in range(len(carry_avals) + 1):  # each retrace makes at least one weak carry strong
        def flatten_out(out):
            carry_leaves, out_tree, extra_leaves, extra_info = split_out(out)
            return list(carry_leaves) + list(extra_leaves), (out_tree, len(carry_leaves), extra_info)

        closed, (out_tree, n_carry, extra_info) = _trace(fun, args_tree, carry_avals + list(rest_avals),
                                                         names.what, flatten_out)
        out_avals = closed.out_avals[:n_carry]
        promoted = _promote_weak_carry(carry_avals, out_avals) if out_tree == carry_tree else None
        if promoted is None:
            break
        carry_avals = promoted
    _check_carry(names, carry_tree, carry_avals, out_tree, out_avals)
    return closed, carry_avals, extra_info


def _convert_to(values, avals):
    return [convert_element_type(v, a.dtype) if aval_of(v).dtype != a.dtype else v
            for v, a in zip(values, avals, strict=True)]


# ----- while_loop / fori_loop -----------------------------------------------------------------------

def while_loop(cond_fun, body_fun, init_val):
    """`val = init_val; while cond_fun(val): val = body_fun(val); return val`, as one staged loop.

    `init_val` is a pytree; `body_fun` must return the same pytree with the same shapes and dtypes
    (a weakly typed initial value, e.g. a Python `0`, is promoted to the body's dtype as in JAX).
    `cond_fun` returns a boolean scalar. Not reverse-differentiable (use `scan` / `fori_loop` with
    static bounds). Example: `lax.while_loop(lambda x: x < 10, lambda x: x * 2, 1)` is `16`.
    """
    if not (callable(cond_fun) and callable(body_fun)):
        raise TypeError("lax.while_loop: cond_fun and body_fun arguments should be callable.")
    return _while_loop(cond_fun, body_fun, init_val, _CarryNames("while_loop body", _param_name(body_fun, 0, "val")))


def _while_loop(cond_fun, body_fun, init_val, names):
    if config.disable_jit:
        try:
            val = physical_map(_operand, init_val)
            while cond_fun(val):
                val = body_fun(val)
            return val
        except ConcretizationTypeError:
            pass  # a traced value reached `while`: stage the loop after all
    leaves, carry_tree = physical_flatten(init_val)
    init = [_operand(x) for x in leaves]
    carry_avals = [x.aval for x in init]
    args_tree = physical_flatten((init_val,))[1]

    def split_body(out):
        out_leaves, out_tree = physical_flatten(out)
        return out_leaves, out_tree, [], None

    body_closed, carry_avals, _ = _trace_loop_body(body_fun, names, args_tree, carry_tree,
                                                   carry_avals, [], split_body)
    init = _convert_to(init, carry_avals)
    cond_closed, cond_tree = _trace(cond_fun, args_tree, carry_avals, "while_loop cond")
    cond_out = cond_closed.out_avals
    if len(cond_out) != 1 or cond_out[0].shape != () or cond_out[0].dtype != dtypes.bool_:
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) "
                        f"{_show(cond_tree, cond_out)}.")
    (cond_jaxpr,), cond_consts = _join_consts([cond_closed])
    (body_jaxpr,), body_consts = _join_consts([body_closed])
    outs = while_p.bind(*cond_consts, *body_consts, *init, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                        cond_nconsts=len(cond_consts), body_nconsts=len(body_consts))
    return tree_unflatten(carry_tree, outs)


def _while_abstract_eval(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = args[cond_nconsts + body_nconsts:]
    _check_operands("while cond_jaxpr", cond_jaxpr.in_avals, list(cond_consts) + list(carry))
    _check_operands("while body_jaxpr", body_jaxpr.in_avals, list(body_consts) + list(carry))
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != dtypes.bool_:
        raise TypeError(f"while cond_jaxpr must return a bool[] scalar, got "
                        f"[{', '.join(a.str_short() for a in pred)}].")
    out = body_jaxpr.out_avals
    if not _same_types(carry, out):
        raise TypeError(f"while body_jaxpr must return the carry types [{', '.join(a.str_short() for a in carry)}]"
                        f", got [{', '.join(a.str_short() for a in out)}].")
    # zero iterations return the initial carry: weak only where both are
    return [o.update(weak_type=o.weak_type and c.weak_type) for o, c in zip(out, carry, strict=True)]


def _while_lowering(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    b = ctx.b
    cond_consts = list(args[:cond_nconsts])
    body_consts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    init = list(args[cond_nconsts + body_nconsts:])
    carry_avals = ctx.avals_in[cond_nconsts + body_nconsts:]

    def cond_region(rb, *carry):
        return lowering.lower_jaxpr_into(rb, cond_jaxpr.jaxpr, cond_consts + list(carry))

    def body_region(rb, *carry):
        return lowering.lower_jaxpr_into(rb, body_jaxpr.jaxpr, body_consts + list(carry))

    outs = b.op("stablehlo.while", init, carry_avals,
                regions=[b.region(carry_avals, cond_region), b.region(carry_avals, body_region)])
    return [outs] if isinstance(outs, str) else outs


while_p = Primitive("while", multiple_results=True)
while_p.def_abstract_eval(_while_abstract_eval)
lowering.register(while_p, _while_lowering)


# ----- while: differentiation rules -------------------------------------------------------------------
# Forward mode only: the loop carries (primal, tangent) pairs. Reverse mode would need the
# iterates of a loop whose trip count is unknown when it is staged, so transposition is refused.

def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    ncc, nbc = cond_nconsts, body_nconsts
    cconsts, bconsts, init = primals[:ncc], primals[ncc:ncc + nbc], primals[ncc + nbc:]
    bconst_t, init_t = tangents[ncc:ncc + nbc], tangents[ncc + nbc:]
    bc_nz = [_nonzero(t) for t in bconst_t]
    nk = len(init)
    carry_nz = _fixpoint([_nonzero(t) for t in init_t],
                         lambda nz: ad.jvp_jaxpr(body_jaxpr, bc_nz + nz, instantiate=nz)[1])
    body_jvp, _ = ad.jvp_jaxpr(body_jaxpr, bc_nz + carry_nz, instantiate=carry_nz)
    # body_jvp: (bconsts, carry, bconsts_t, carry_t) -> (carry, carry_t); the loop wants the
    # tangent consts among the consts and the tangent carries among the carries
    nbt, nkt = sum(bc_nz), sum(carry_nz)
    perm = [*range(nbc), *range(nbc + nk, nbc + nk + nbt), *range(nbc, nbc + nk),
            *range(nbc + nk + nbt, nbc + nk + nbt + nkt)]
    body, bh = _param_jaxpr(_permuted(body_jvp, perm, range(nk + nkt), "while_body_jvp"))
    carry_avals = body_jaxpr.out_avals
    carry_t_avals = [ad.tangent_aval(a) for nz, a in zip(carry_nz, carry_avals, strict=True) if nz]
    cond, ch = _param_jaxpr(_retrace(lambda *a: _call(cond_jaxpr, a[:ncc + nk]),
                                     list(cond_jaxpr.in_avals) + carry_t_avals, "while_cond_jvp"))
    outs = while_p.bind(*ch, *cconsts, *bh, *bconsts, *[t for t in bconst_t if _nonzero(t)], *init,
                        *[ad.instantiate_zeros(t) for t, nz in zip(init_t, carry_nz, strict=True) if nz],
                        cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=len(ch) + ncc,
                        body_nconsts=len(bh) + nbc + nbt)
    return outs[:nk], _tangents_out(outs[nk:], carry_nz, carry_avals)


def _while_partial_eval(trace, args, params):
    """The carries that stay known form a known loop, run now. If any carry is unknown the whole
    loop is staged too (its known operands become residuals) and gives the unknown carries: the
    unknown carries of a while loop cannot be computed without re-running the loop."""
    cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
    ncc, nbc = params["cond_nconsts"], params["body_nconsts"]
    uk = [trace.is_unknown(x) for x in args]
    cc_uk, bc_uk, init_uk = uk[:ncc], uk[ncc:ncc + nbc], uk[ncc + nbc:]
    carry_uk = _fixpoint(init_uk, lambda u: partial_eval.partial_eval_jaxpr(body_jaxpr, bc_uk + u,
                                                                            instantiate=u)[2])
    cond_known, _, cond_uk, _ = partial_eval.partial_eval_jaxpr(cond_jaxpr, cc_uk + carry_uk)
    if cond_uk[0] or all(carry_uk):
        return trace.stage(while_p, args, params)
    body_known = partial_eval.partial_eval_jaxpr(body_jaxpr, bc_uk + carry_uk, instantiate=carry_uk)[0]
    n_kk = len(carry_uk) - sum(carry_uk)
    # the known programs also return residuals, which a loop has no use for
    body, bh = _param_jaxpr(_retrace(lambda *a: _call(body_known, a)[:n_kk], body_known.in_avals,
                                     "while_body_known"))
    cond, ch = _param_jaxpr(_retrace(lambda *a: _call(cond_known, a)[:1], cond_known.in_avals,
                                     "while_cond_known"))

    def known(xs, unknowns):
        return [x for x, u in zip(xs, unknowns, strict=True) if not u]

    with set_current_trace(trace.parent):
        known_outs = while_p.bind(*ch, *known(args[:ncc], cc_uk), *bh, *known(args[ncc:ncc + nbc], bc_uk),
                                  *known(args[ncc + nbc:], carry_uk), cond_jaxpr=cond, body_jaxpr=body,
                                  cond_nconsts=len(ch) + ncc - sum(cc_uk), body_nconsts=len(bh) + nbc - sum(bc_uk))
    if not any(carry_uk):
        return known_outs
    all_outs = trace.stage(while_p, args, params)
    return _merge(carry_uk, known_outs, [o for o, u in zip(all_outs, carry_uk, strict=True) if u])


def _while_transpose(cts, *args, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
                     "dynamic start/stop values. Try using lax.scan, or lax.fori_loop with constant start/stop.")


ad.jvp_rules[while_p] = _while_jvp
partial_eval.partial_eval_rules[while_p] = _while_partial_eval
ad.transpose_rules[while_p] = _while_transpose


def _while_batch_rule(axis, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """Batched carries (axis 0) are those the body batches, given the batched consts (a fixpoint).
    An unbatched predicate keeps one loop for the batch. A batched one runs the loop while any
    example's predicate holds, and an example whose predicate is false keeps its carry unchanged
    (a select in the body); every carry is batched then."""
    ncc, nbc = cond_nconsts, body_nconsts
    nk = len(vals) - ncc - nbc
    params = dict(cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr, cond_nconsts=ncc, body_nconsts=nbc)
    if _unbatched(axis, dims, (cond_jaxpr, body_jaxpr)):
        return while_p.bind(*vals, **params), [None] * nk
    cconsts, bconsts, init = vals[:ncc], vals[ncc:ncc + nbc], vals[ncc + nbc:]
    cc_dims, bc_dims, init_dims = list(dims[:ncc]), list(dims[ncc:ncc + nbc]), list(dims[ncc + nbc:])

    def body_batches(carry_b):
        chosen = batching.batch_jaxpr(body_jaxpr, axis, bc_dims + _batched_at_front(carry_b), [None] * nk)[1]
        return [d is not None for d in chosen]

    carry_b = _fixpoint([d is not None for d in init_dims], body_batches)
    pred_dim = batching.batch_jaxpr(cond_jaxpr, axis, cc_dims + _batched_at_front(carry_b), [None])[1][0]
    pred_batched = pred_dim is not None
    if pred_batched:
        carry_b = [True] * nk
    k_dims = _batched_at_front(carry_b)
    init = [batching.move_bdim(x, d, 0, axis.size) if b else x
            for x, d, b in zip(init, init_dims, carry_b, strict=True)]
    body_b = batching.batch_jaxpr(body_jaxpr, axis, bc_dims + k_dims, k_dims)[0]
    cond_b = batching.batch_jaxpr(cond_jaxpr, axis, cc_dims + k_dims, [0 if pred_batched else None])[0]
    if not pred_batched:
        body, bh = _param_jaxpr(body_b)
        cond, ch = _param_jaxpr(cond_b)
        outs = while_p.bind(*ch, *cconsts, *bh, *bconsts, *init, cond_jaxpr=cond, body_jaxpr=body,
                            cond_nconsts=len(ch) + ncc, body_nconsts=len(bh) + nbc)
        return outs, k_dims

    def any_pred(*args):
        return [reduce_or(_call(cond_b, args)[0], (0,))]

    def guarded_body(*args):
        cc, bc, carry = args[:ncc], args[ncc:ncc + nbc], args[ncc + nbc:]
        pred = _call(cond_b, [*cc, *carry])[0]
        new = _call(body_b, [*bc, *carry])
        return [select_n(broadcast_in_dim(pred, aval_of(old).shape, (0,)), old, nw)
                for old, nw in zip(carry, new, strict=True)]

    cond, ch = _param_jaxpr(_retrace(any_pred, cond_b.in_avals, "while_cond_batched"))
    body, bh = _param_jaxpr(_retrace(guarded_body, list(cond_b.in_avals[:ncc]) + list(body_b.in_avals),
                                     "while_body_batched"))
    outs = while_p.bind(*ch, *cconsts, *bh, *cconsts, *bconsts, *init, cond_jaxpr=cond, body_jaxpr=body,
                        cond_nconsts=len(ch) + ncc, body_nconsts=len(bh) + ncc + nbc)
    return outs, [0] * nk


batching.axis_batching_rules[while_p] = _while_batch_rule


def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
    """`val = init_val; for i in range(lower, upper): val = body_fun(i, val); return val`.

    With concrete bounds (Python ints or concrete arrays) this is a `scan` of `upper - lower` steps
    (reverse-differentiable; `unroll` steps per loop iteration); with traced bounds a `while_loop`
    (then `unroll` is not allowed). Example: `lax.fori_loop(0, 5, lambda i, s: s + i, 0)` is `10`.
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    # carry errors name body_fun's value parameter; the loop index that rides along is not shown
    names = _CarryNames("fori_loop body", _param_name(body_fun, 1, "val"), nested=True)
    lower_op, upper_op = _operand(lower), _operand(upper)
    for name, v in (("lower", lower_op), ("upper", upper_op)):
        if v.aval.shape != () or v.aval.dtype.kind not in "iu":
            raise TypeError(f"fori_loop {name} bound must be a scalar integer, got {v.aval.str_short()}.")
    dt, weak = dtypes.result_type(lower_op, upper_op, return_weak_type_flag=True)
    lower_op = convert_element_type(lower_op, dt, weak_type=weak)
    upper_op = convert_element_type(upper_op, dt, weak_type=weak)
    if _concrete(lower) and _concrete(upper):
        length = builtins.max(int(upper_op) - int(lower_op), 0)

        def scan_body(carry, _):
            i, x = carry
            return (add(i, 1), body_fun(i, x)), None

        (_, result), _ = _scan(scan_body, (lower_op, init_val), None, length, False,
                               1 if unroll is None else unroll, names)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")

    def while_body(carry):
        i, hi, x = carry
        return add(i, 1), hi, body_fun(i, x)

    _, _, result = _while_loop(lambda c: lt(c[0], c[1]), while_body, (lower_op, upper_op, init_val), names)
    return result


# ----- scan / map ---------------------------------------------------------------------------------

def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    """Loop `f(carry, x) -> (carry, y)` over the leading axis of `xs`, stacking the `y`s.

    In Python terms: `for x in xs: carry, y = f(carry, x); ys.append(y)`; returns
    `(carry, stack(ys))`. `xs` and the `y`s are pytrees (`xs=None` with `length` loops without
    inputs); `reverse=True` walks from the end (ys keep their positions); `unroll` steps run per
    loop iteration (`True`: all). The carry output must match `init` in structure, shapes and
    dtypes. Example: `lax.scan(lambda c, x: (c + x, c + x), 0., jnp.arange(4.))` gives
    `(6., [0., 1., 3., 6.])`.
    """
    if not callable(f):
        raise TypeError("scan: f argument should be a callable.")
    return _scan(f, init, xs, length, reverse, unroll, _CarryNames("scan body", _param_name(f, 0, "carry")))


def _scan(f, init, xs, length, reverse, unroll, carry_names):
    xs_paths, xs_tree = physical_flatten_with_path(xs)
    xs_ops = [_operand(x) for _, x in xs_paths]
    names = ["xs" + keystr(p) for p, _ in xs_paths]
    for name, x in zip(names, xs_ops, strict=True):
        if x.aval.ndim == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: {name} of type "
                             f"{x.aval.str_short()}.")
    sizes = [x.aval.shape[0] for x in xs_ops]
    if length is not None:
        length = operator.index(length)
        if any(s != length for s in sizes):
            raise ValueError(f"scan got `length` argument of {length} which disagrees with leading axis sizes "
                             f"{', '.join(f'{n}.shape[0]={s}' for n, s in zip(names, sizes))}.")
    elif not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    elif len(set(sizes)) > 1:
        raise ValueError("scan got values with different leading axis sizes: "
                         f"{', '.join(f'{n}.shape[0]={s}' for n, s in zip(names, sizes))}.")
    else:
        length = sizes[0]
    if unroll is True:
        unroll = builtins.max(length, 1)
    elif unroll is False:
        unroll = 1
    if not isinstance(unroll, (int, np.integer)) or unroll < 1:
        raise ValueError(f"`unroll` must be a `bool` or a positive `int`, got {unroll!r}.")
    if config.disable_jit and length > 0 and builtins.all(_concrete(v) for v in physical_flatten((init, xs_ops))[0]):
        return _scan_python(f, init, xs_ops, xs_tree, length, reverse)

    init_leaves, carry_tree = physical_flatten(init)
    init_ops = [_operand(x) for x in init_leaves]
    x_avals = [ShapedArray(x.aval.shape[1:], x.aval.dtype, x.aval.weak_type) for x in xs_ops]
    args_tree = physical_flatten((init, xs))[1]

    def split_body(out):
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"scan body output must be a pair (carry, y), got {type(out).__name__}"
                            f"{' of length ' + str(len(out)) if isinstance(out, (tuple, list)) else ''}.")
        carry_leaves, out_tree = physical_flatten(out[0])
        y_leaves, y_tree = physical_flatten(out[1])
        return carry_leaves, out_tree, y_leaves, y_tree

    closed, carry_avals, y_tree = _trace_loop_body(f, carry_names, args_tree, carry_tree,
                                                   [x.aval for x in init_ops], x_avals, split_body)
    init_ops = _convert_to(init_ops, carry_avals)
    (jaxpr,), consts = _join_consts([closed])
    n_in = len(consts) + len(init_ops) + len(xs_ops)
    outs = scan_p.bind(*consts, *init_ops, *xs_ops, jaxpr=jaxpr, num_consts=len(consts),
                       num_carry=len(init_ops), length=int(length), reverse=bool(reverse), unroll=int(unroll),
                       linear=(False,) * n_in)
    carry_out, ys = outs[:len(init_ops)], outs[len(init_ops):]
    return tree_unflatten(carry_tree, carry_out), tree_unflatten(y_tree, ys)


def _scan_python(f, init, xs_ops, xs_tree, length, reverse):
    """`scan` under `disable_jit()`: a Python loop, one eager operation at a time."""
    carry, ys = init, []
    steps = range(length - 1, -1, -1) if reverse else range(length)
    for i in steps:
        carry, y = f(carry, tree_unflatten(xs_tree, [index_in_dim(x, i, 0, keepdims=False) for x in xs_ops]))
        ys.append(y)
    if reverse:
        ys.reverse()
    stacked = physical_map(lambda *leaves: concatenate([expand_dims(_operand(v), (0,)) for v in leaves], 0), *ys)
    return carry, stacked


def _scan_abstract_eval(*args, jaxpr, num_consts, num_carry, length, reverse, unroll, linear):
    consts, init = args[:num_consts], args[num_consts:num_consts + num_carry]
    xs = args[num_consts + num_carry:]
    for x in xs:
        if x.ndim == 0 or x.shape[0] != length:
            raise TypeError(f"scan: scanned operands must have leading dimension {length}, got {x.str_short()}.")
    x_avals = [ShapedArray(x.shape[1:], x.dtype, x.weak_type) for x in xs]
    _check_operands("scan jaxpr", jaxpr.in_avals, list(consts) + list(init) + x_avals)
    out = jaxpr.out_avals
    carry_out, ys = out[:num_carry], out[num_carry:]
    if not _same_types(init, carry_out):
        raise TypeError(f"scan jaxpr must return the carry types [{', '.join(a.str_short() for a in init)}], "
                        f"got [{', '.join(a.str_short() for a in carry_out)}].")
    carry = [o.update(weak_type=o.weak_type and c.weak_type) for o, c in zip(carry_out, init, strict=True)]
    return carry + [ShapedArray((length,) + y.shape, y.dtype, y.weak_type) for y in ys]


def _scan_lowering(ctx, *args, jaxpr, num_consts, num_carry, length, reverse, unroll, linear):
    """A `stablehlo.while` over blocks of `unroll` steps (the remainder steps after it). Each step
    slices x out of the stacked xs and writes y into preallocated ys buffers; consts and xs are
    read from the enclosing scope."""
    b = ctx.b
    consts, init = list(args[:num_consts]), list(args[num_consts:num_consts + num_carry])
    xs, x_avals = list(args[num_consts + num_carry:]), ctx.avals_in[num_consts + num_carry:]
    carry_avals = ctx.avals_in[num_consts:num_consts + num_carry]
    ys_avals = ctx.avals_out[num_carry:]
    ys = [lowering.full_like(b, 0, a) for a in ys_avals]
    if length == 0:
        return init + ys
    scalar = ShapedArray((), _I32)

    def step(sb, i, carry, ys):
        idx = sb.op("stablehlo.subtract", [sb.constant(length - 1, _I32), i], [scalar]) if reverse else i
        zero = sb.constant(0, _I32)
        x_vals = []
        for x, a in zip(xs, x_avals, strict=True):
            one = a.update(shape=(1,) + a.shape[1:])
            sl = sb.op("stablehlo.dynamic_slice", [x, idx] + [zero] * (a.ndim - 1), [one],
                       {"slice_sizes": i64_array(one.shape)})
            x_vals.append(sb.op("stablehlo.reshape", [sl], [a.update(shape=a.shape[1:])]))
        outs = lowering.lower_jaxpr_into(sb, jaxpr.jaxpr, consts + list(carry) + x_vals)
        new_ys = []
        for buf, y, a in zip(ys, outs[num_carry:], ys_avals, strict=True):
            y1 = sb.op("stablehlo.reshape", [y], [a.update(shape=(1,) + a.shape[1:])])
            new_ys.append(sb.op("stablehlo.dynamic_update_slice", [buf, y1, idx] + [zero] * (a.ndim - 1), [a]))
        return outs[:num_carry], new_ys

    def steps(sb, start, carry, ys, count):
        """`count` consecutive steps from iteration `start` (an i32 value)."""
        for j in range(count):
            i = start if j == 0 else sb.op("stablehlo.add", [start, sb.constant(j, _I32)], [scalar])
            carry, ys = step(sb, i, carry, ys)
        return list(carry), list(ys)

    n_blocks, rem = divmod(length, unroll)
    carry = init
    if n_blocks == 1:
        carry, ys = steps(b, b.constant(0, _I32), carry, ys, unroll)
    elif n_blocks > 1:
        loop_avals = [scalar] + list(carry_avals) + list(ys_avals)

        def cond_region(rb, i, *_):
            return lowering.compare(rb, i, rb.constant(n_blocks * unroll, _I32), "LT", scalar)

        def body_region(rb, i, *state):
            c, y = steps(rb, i, state[:num_carry], state[num_carry:], unroll)
            return [rb.op("stablehlo.add", [i, rb.constant(unroll, _I32)], [scalar])] + c + y

        outs = b.op("stablehlo.while", [b.constant(0, _I32)] + carry + ys, loop_avals,
                    regions=[b.region(loop_avals, cond_region), b.region(loop_avals, body_region)])
        outs = [outs] if isinstance(outs, str) else outs
        carry, ys = outs[1:1 + num_carry], outs[1 + num_carry:]
    if rem:
        carry, ys = steps(b, b.constant(n_blocks * unroll, _I32), carry, ys, rem)
    return list(carry) + list(ys)


scan_p = Primitive("scan", multiple_results=True)
scan_p.def_abstract_eval(_scan_abstract_eval)
lowering.register(scan_p, _scan_lowering)


# ----- scan: differentiation rules --------------------------------------------------------------------
# jvp: one scan over (primal, tangent) pairs. Partial evaluation: a known scan that also emits the
# residuals of every iteration as extra ys (stacked), and an unknown scan that reads them back as
# xs. Transposition: a scan in the opposite direction whose carry holds the cotangents of the
# carry and the running sums of the linear consts' cotangents, and whose ys are the cotangents of
# the linear xs.

def _scan_split(seq, num_consts, num_carry):
    return seq[:num_consts], seq[num_consts:num_consts + num_carry], seq[num_consts + num_carry:]


def _scan_jvp(primals, tangents, *, jaxpr, num_consts, num_carry, length, reverse, unroll, linear):
    nc, nk = num_consts, num_carry
    ny = len(jaxpr.out_avals) - nk
    consts_t, init_t, xs_t = _scan_split(tangents, nc, nk)
    c_nz, x_nz = [_nonzero(t) for t in consts_t], [_nonzero(t) for t in xs_t]
    carry_nz = _fixpoint([_nonzero(t) for t in init_t],
                         lambda nz: ad.jvp_jaxpr(jaxpr, c_nz + nz + x_nz, instantiate=nz + [False] * ny)[1][:nk])
    jvp_closed, out_nz = ad.jvp_jaxpr(jaxpr, c_nz + carry_nz + x_nz, instantiate=carry_nz + [False] * ny)
    y_nz = list(out_nz[nk:])
    # jvp_closed: (consts, carry, xs, consts_t, carry_t, xs_t) -> (carry, ys, carry_t, ys_t);
    # scan wants (consts, consts_t, carry, carry_t, xs, xs_t) -> (carry, carry_t, ys, ys_t)
    n_in, nct, nkt, nxt, nyt = len(primals), sum(c_nz), sum(carry_nz), sum(x_nz), sum(y_nz)
    t0 = n_in
    perm = [*range(nc), *range(t0, t0 + nct), *range(nc, nc + nk), *range(t0 + nct, t0 + nct + nkt),
            *range(nc + nk, n_in), *range(t0 + nct + nkt, t0 + nct + nkt + nxt)]
    out_perm = [*range(nk), *range(nk + ny, nk + ny + nkt), *range(nk, nk + ny),
                *range(nk + ny + nkt, nk + ny + nkt + nyt)]
    body, hoisted = _param_jaxpr(_permuted(jvp_closed, perm, out_perm, "scan_jvp"))
    consts, init, xs = _scan_split(primals, nc, nk)
    operands = [*hoisted, *consts, *[t for t in consts_t if _nonzero(t)], *init,
                *[ad.instantiate_zeros(t) for t, nz in zip(init_t, carry_nz, strict=True) if nz],
                *xs, *[t for t in xs_t if _nonzero(t)]]
    outs = scan_p.bind(*operands, jaxpr=body, num_consts=len(hoisted) + nc + nct, num_carry=nk + nkt,
                       length=length, reverse=reverse, unroll=unroll, linear=(False,) * len(operands))
    out_avals = _scan_abstract_eval(*[aval_of(x) for x in primals], jaxpr=jaxpr, num_consts=nc, num_carry=nk,
                                    length=length, reverse=reverse, unroll=unroll, linear=linear)
    carry, carry_t, ys, ys_t = outs[:nk], outs[nk:nk + nkt], outs[nk + nkt:nk + nkt + ny], outs[nk + nkt + ny:]
    return carry + ys, (_tangents_out(carry_t, carry_nz, out_avals[:nk])
                        + _tangents_out(ys_t, y_nz, out_avals[nk:]))


def _scan_partial_eval(trace, args, params):
    jaxpr, nc, nk = params["jaxpr"], params["num_consts"], params["num_carry"]
    ny = len(jaxpr.out_avals) - nk
    c_uk, init_uk, x_uk = _scan_split([trace.is_unknown(x) for x in args], nc, nk)
    carry_uk = _fixpoint(init_uk, lambda u: partial_eval.partial_eval_jaxpr(
        jaxpr, c_uk + u + x_uk, instantiate=u + [False] * ny)[2][:nk])
    unknowns = c_uk + carry_uk + x_uk
    known, unknown, out_uk, num_res = partial_eval.partial_eval_jaxpr(jaxpr, unknowns,
                                                                      instantiate=carry_uk + [False] * ny)
    # known: (known consts, carry, xs) -> (known carry, known ys, residuals): residuals are extra ys
    body, hoisted = _param_jaxpr(known)
    known_args = [x for x, u in zip(args, unknowns, strict=True) if not u]
    n_kk = nk - sum(carry_uk)
    with set_current_trace(trace.parent):
        known_outs = scan_p.bind(*hoisted, *known_args, jaxpr=body, num_consts=len(hoisted) + nc - sum(c_uk),
                                 num_carry=n_kk, length=params["length"], reverse=params["reverse"],
                                 unroll=params["unroll"], linear=(False,) * (len(hoisted) + len(known_args)))
    n_known = len(known_outs) - num_res
    residuals = known_outs[n_known:]
    if not any(out_uk):
        return known_outs[:n_known]
    # unknown: (residuals, unknown consts, carry, xs) -> unknown outs; residuals are read as xs
    n_uc, n_uk = sum(c_uk), sum(carry_uk)
    n_ux = len(unknown.in_avals) - num_res - n_uc - n_uk
    perm = [*range(num_res, num_res + n_uc + n_uk), *range(num_res), *range(num_res + n_uc + n_uk,
                                                                             num_res + n_uc + n_uk + n_ux)]
    body, hoisted = _param_jaxpr(_permuted(unknown, perm, range(len(unknown.out_avals)), "scan_unknown"))
    consts, init, xs = _scan_split(args, nc, nk)
    operands = [*hoisted, *[x for x, u in zip(consts, c_uk, strict=True) if u],
                *[x for x, u in zip(init, carry_uk, strict=True) if u], *residuals,
                *[x for x, u in zip(xs, x_uk, strict=True) if u]]
    unknown_outs = trace.stage(scan_p, operands, {**params, "jaxpr": body, "num_consts": len(hoisted) + n_uc,
                                                  "num_carry": n_uk, "linear": (False,) * len(operands)})
    return _merge(out_uk, known_outs[:n_known], unknown_outs)


def _scan_transpose(cts, *args, jaxpr, num_consts, num_carry, length, reverse, unroll, linear):
    """Consts and xs split into non-linear residuals and linear operands; every carry is linear
    (a carry whose initial value is known, e.g. a materialized zero tangent, gets no cotangent)."""
    nc, nk = num_consts, num_carry
    consts, init, xs = _scan_split(args, nc, nk)
    c_lin, x_lin = [ad.is_undefined(x) for x in consts], [ad.is_undefined(x) for x in xs]
    cts = [ad.instantiate_zeros(ct) for ct in cts]
    ct_carry, ct_ys = cts[:nk], cts[nk:]
    # transposed: (res consts, res xs, ct carry out, ct y) -> (ct lin consts, ct carry in, ct lin xs)
    transposed = ad.transpose_jaxpr(jaxpr, c_lin + [True] * nk + x_lin)
    in_c, in_k, in_x = _scan_split(jaxpr.in_avals, nc, nk)
    res_c_avals = [a for a, lin in zip(in_c, c_lin, strict=True) if not lin]
    lin_c_avals = [x.aval for x in consts if ad.is_undefined(x)]
    res_x_avals = [a for a, lin in zip(in_x, x_lin, strict=True) if not lin]
    ct_y_avals = [a.strip_weak_type() for a in jaxpr.out_avals[nk:]]
    n_rc, n_lc, n_rx = len(res_c_avals), len(lin_c_avals), len(res_x_avals)

    def body_fun(*a):
        res_c, acc, ct_k = a[:n_rc], a[n_rc:n_rc + n_lc], a[n_rc + n_lc:n_rc + n_lc + nk]
        res_x, ct_y = a[n_rc + n_lc + nk:n_rc + n_lc + nk + n_rx], a[n_rc + n_lc + nk + n_rx:]
        outs = _call(transposed, [*res_c, *res_x, *ct_k, *ct_y])
        ct_c = [ad.add_tangents(s, c) for s, c in zip(acc, outs[:n_lc], strict=True)]
        return ct_c + outs[n_lc:]

    body_avals = (res_c_avals + [a.strip_weak_type() for a in lin_c_avals] + [a.strip_weak_type() for a in in_k]
                  + res_x_avals + ct_y_avals)
    body, hoisted = _param_jaxpr(_retrace(body_fun, body_avals, "scan_transpose"))
    operands = [*hoisted, *[x for x in consts if not ad.is_undefined(x)], *[_zeros(a) for a in lin_c_avals],
                *ct_carry, *[x for x in xs if not ad.is_undefined(x)], *ct_ys]
    outs = scan_p.bind(*operands, jaxpr=body, num_consts=len(hoisted) + n_rc, num_carry=n_lc + nk, length=length,
                       reverse=not reverse, unroll=unroll, linear=(False,) * len(operands))
    ct_consts, ct_init, ct_xs = iter(outs[:n_lc]), outs[n_lc:n_lc + nk], iter(outs[n_lc + nk:])
    return ([next(ct_consts) if lin else None for lin in c_lin]
            + [ct if ad.is_undefined(x) else None for x, ct in zip(init, ct_init, strict=True)]
            + [next(ct_xs) if lin else None for lin in x_lin])


ad.jvp_rules[scan_p] = _scan_jvp
partial_eval.partial_eval_rules[scan_p] = _scan_partial_eval
ad.transpose_rules[scan_p] = _scan_transpose


def _scan_batch_rule(axis, vals, dims, *, jaxpr, num_consts, num_carry, length, reverse, unroll, linear):
    """Batched carries (axis 0) are those the body batches (a fixpoint). The scanned axis of the
    xs stays first: a batch axis at 0 moves to 1, one further in stays, so the body sees it one
    place earlier; a stacked y has its batch axis one place after the body's."""
    nc, nk = num_consts, num_carry
    ny = len(jaxpr.out_avals) - nk
    params = dict(jaxpr=jaxpr, num_consts=nc, num_carry=nk, length=length, reverse=reverse, unroll=unroll,
                  linear=linear)
    if _unbatched(axis, dims, (jaxpr,)):
        return scan_p.bind(*vals, **params), [None] * (nk + ny)
    consts, init, xs = _scan_split(list(vals), nc, nk)
    c_dims, init_dims, xs_dims = _scan_split(list(dims), nc, nk)
    xs = [batching.moveaxis(x, 0, 1) if d == 0 else x for x, d in zip(xs, xs_dims, strict=True)]
    x_dims = [None if d is None else builtins.max(d, 1) - 1 for d in xs_dims]

    def body_batches(carry_b):
        chosen = batching.batch_jaxpr(jaxpr, axis, c_dims + _batched_at_front(carry_b) + x_dims,
                                      [None] * (nk + ny))[1]
        return [d is not None for d in chosen[:nk]]

    k_dims = _batched_at_front(_fixpoint([d is not None for d in init_dims], body_batches))
    init = [batching.move_bdim(x, d, 0, axis.size) if kd is not None else x
            for x, d, kd in zip(init, init_dims, k_dims, strict=True)]
    body_b, chosen = batching.batch_jaxpr(jaxpr, axis, c_dims + k_dims + x_dims, k_dims + [None] * ny)
    body, hoisted = _param_jaxpr(body_b)
    outs = scan_p.bind(*hoisted, *consts, *init, *xs, jaxpr=body, num_consts=len(hoisted) + nc, num_carry=nk,
                       length=length, reverse=reverse, unroll=unroll,
                       linear=(False,) * len(hoisted) + tuple(linear))
    return outs, k_dims + [None if d is None else d + 1 for d in chosen[nk:]]


batching.axis_batching_rules[scan_p] = _scan_batch_rule


def map(f, xs, *, batch_size=None):  # noqa: A001 (JAX's name)
    """`f` applied to each slice of the pytree `xs` along its leading axis, results stacked (a `scan`
    with no carry).

    With `batch_size=b`, the loop runs over `length // b` batches of `b` slices, and the last
    `length % b` slices are mapped separately and concatenated (JAX's scheme). Each batch is, for
    now, a Python loop of `f` over its `b` slices inside the scan body (unrolled in the program);
    it becomes `vmap(f)` once vmap exists, so `f` should not rely on seeing one slice at a time.
    Example: `lax.map(lambda x: x @ x, jnp.ones((5, 3)), batch_size=2)` has shape (5,).
    """
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    batch_size = operator.index(batch_size)
    if batch_size <= 0:
        raise ValueError(f"lax.map: batch_size must be a positive integer, got {batch_size}.")
    leaves, xs_tree = physical_flatten(xs)
    leaves = [_operand(x) for x in leaves]
    if not leaves:
        raise ValueError("lax.map got no values to map over (xs has no array leaves).")
    for x in leaves:
        if x.aval.ndim == 0:
            raise ValueError(f"lax.map got value with no leading axis to map over: {x.aval.str_short()}.")
    sizes = {x.aval.shape[0] for x in leaves}
    if len(sizes) > 1:
        raise ValueError(f"lax.map got values with different leading axis sizes: {sorted(sizes)}.")
    length = sizes.pop()
    n_batches, rem = divmod(length, batch_size)
    full = n_batches * batch_size

    def map_batch(batch, n):
        ys = [f(tree_unflatten(xs_tree, [index_in_dim(x, i, 0, keepdims=False) for x in batch]))
              for i in range(n)]
        return physical_map(lambda *y: concatenate([expand_dims(_operand(v), (0,)) for v in y], 0), *ys)

    parts = []
    if n_batches or not rem:  # a zero-length scan still gives the outputs' types for empty xs
        batched = [reshape(slice_in_dim(x, 0, full, 1, 0), (n_batches, batch_size) + x.aval.shape[1:])
                   for x in leaves]
        _, ys = scan(lambda _, b: ((), map_batch(b, batch_size)), (), batched)
        parts.append(physical_map(lambda y: reshape(y, (full,) + aval_of(y).shape[2:]), ys))
    if rem:
        parts.append(map_batch([slice_in_dim(x, full, length, 1, 0) for x in leaves], rem))
    if len(parts) == 1:
        return parts[0]
    return physical_map(lambda a, b: concatenate([a, b], 0), *parts)


# ----- associative_scan ---------------------------------------------------------------------------

def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive prefix scan of `elems` along `axis` with an associative `fn`, in O(log n) depth.

    `fn(a, b)` combines two pytrees like `elems` elementwise along `axis` (it is called on strided
    slices, so it must be vectorized); e.g. `associative_scan(lax.add, x)` is `cumsum(x)`. With
    `reverse=True` the scan runs from the end. Built from slices and concatenations only
    (the odd/even recursion of Blelloch's parallel prefix), no loop primitive. Typed PRNG keys
    are refused (TypeError), as JAX refuses them: `random.key_data` gives their words.
    """
    leaves, tree = tree_flatten(elems)
    for x in leaves:
        if is_typed_leaf(x):
            raise TypeError(f"associative_scan does not accept PRNG key arrays (got {x.dtype}{list(x.shape)} in "
                            "elems), as JAX's does not. Scan the raw words random.key_data(keys) instead (and "
                            "random.wrap_key_data the result).")
    leaves = [_operand(x) for x in leaves]
    if not leaves:
        return elems
    ndim = leaves[0].aval.ndim
    if ndim == 0 or not -ndim <= axis < ndim:
        raise ValueError(f"associative_scan: axis {axis} is out of bounds for elements of rank {ndim}.")
    axis = axis % ndim
    sizes = [x.aval.shape[axis] if x.aval.ndim > axis else None for x in leaves]
    if len(set(sizes)) != 1:
        raise ValueError(f"Array inputs to associative_scan must have the same size along axis {axis} "
                         f"(saw: {[x.aval.shape for x in leaves]}).")
    if reverse:
        leaves = [_rev(x, axis) for x in leaves]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise TypeError(f"associative_scan: fn must return a pytree with the structure of elems {tree}, "
                            f"got {out_tree}.")
        out_leaves = [_operand(x) for x in out_leaves]
        _check_combined(tree, a, out_leaves)
        return out_leaves

    def prefix(xs):
        n = xs[0].aval.shape[axis]
        if n < 2:
            return xs
        # combine neighbours pairwise, scan the half-size sequence, then fill in the even positions
        odd = prefix(combine([slice_in_dim(x, 0, n - 1, 2, axis) for x in xs],
                             [slice_in_dim(x, 1, n, 2, axis) for x in xs]))
        if n % 2 == 0:
            even = combine([slice_in_dim(x, 0, -1, 1, axis) for x in odd], [slice_in_dim(x, 2, n, 2, axis) for x in xs])
        else:
            even = combine(odd, [slice_in_dim(x, 2, n, 2, axis) for x in xs])
        even = [concatenate([slice_in_dim(x, 0, 1, 1, axis), e], axis) for x, e in zip(xs, even, strict=True)]
        return [_interleave(e, o, axis) for e, o in zip(even, odd, strict=True)]

    out = prefix(leaves)
    if reverse:
        out = [_rev(x, axis) for x in out]
    return tree_unflatten(tree, out)


def _check_combined(tree, inputs, outputs):
    """associative_scan's `fn` must keep each element's shape and dtype (weak types may differ): its
    results are stitched together with its inputs, so a changed type cannot be carried on."""
    in_avals, out_avals = [aval_of(x) for x in inputs], [aval_of(x) for x in outputs]
    if _same_types(in_avals, out_avals):
        return
    diffs = [f"fn was given elems{keystr(path)} as {_Shown(a)} and returned {_Shown(b)} for it, so "
             f"{_mismatch(a, b)}"
             for path, a, b in zip(_leaf_paths(tree), in_avals, out_avals, strict=True)
             if a.shape != b.shape or a.dtype != b.dtype]
    raise TypeError(f"associative_scan: fn must return values of the types of its inputs (shapes and dtypes), but "
                    f"they differ: {'; '.join(diffs)}. Convert fn's result (e.g. `.astype(...)`), or pass elems of "
                    "the result's dtype.")


def _rev(x, axis):
    from .structural import rev
    return rev(x, (axis,))


def _interleave(a, b, axis):
    """[a0, b0, a1, b1, ...] along `axis`; `a` has as many elements as `b`, or one more."""
    na, nb = aval_of(a).shape[axis], aval_of(b).shape[axis]
    head = slice_in_dim(a, 0, nb, 1, axis) if na > nb else a
    pairs = concatenate([expand_dims(head, (axis + 1,)), expand_dims(b, (axis + 1,))], axis + 1)
    shape = list(aval_of(b).shape)
    shape[axis] = 2 * nb
    out = reshape(pairs, tuple(shape))
    if na > nb:
        out = concatenate([out, slice_in_dim(a, nb, na, 1, axis)], axis)
    return out


# ----- select ---------------------------------------------------------------------------------------

def select(pred, on_true, on_false):
    """Elementwise `on_true if pred else on_false` (`pred` bool, scalar or of the cases' shape):
    JAX's `lax.select`, i.e. `select_n(pred, on_false, on_true)`.

    Example: `lax.select(jnp.array([True, False]), jnp.ones(2), jnp.zeros(2))` is `[1., 0.]`.
    """
    return select_n(pred, on_false, on_true)

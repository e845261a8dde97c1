"""Gradient checkpointing (`checkpoint`, alias `remat`): trade compute for memory in reverse mode.

`checkpoint(f)` computes the same values and derivatives as `f`, but when it is linearized the
intermediate values of `f` are not saved as residuals for the backward pass: only `f`'s inputs are
(plus what a `policy` allows), and the backward pass recomputes the rest. It is one primitive,
`remat`, holding `f`'s program. Its partial-evaluation rule does the work: the known (primal)
program runs now and returns the known outputs and the values the policy saves; the unknown
program takes the inputs and saved values and recomputes every other intermediate before the
tangent operations. `prevent_cse` keeps XLA from merging that recomputation back into the forward
pass (which would undo the saving): the program runs under a conditional XLA cannot resolve.

Policies decide per equation: `policy(prim, *in_avals, **params) -> bool` (True: save its
outputs). `checkpoint_policies` has the usual ones; `checkpoint_name(x, name)` names a value for
`save_only_these_names`.
"""
import functools
import types
import weakref

import numpy as np

from . import traceback_util
from .array import Array, to_array
from .avals import ShapedArray
from .interpreters import ad, batching, lowering, partial_eval
from .interpreters.staging import trace_to_jaxpr
from .ir import ClosedJaxpr, Jaxpr, Literal, consts_as_args
from .ir import intern as intern_jaxpr
from .trace import EvalTrace, Primitive, Tracer, current_trace, set_current_trace
from .tree_util import physical_flatten, tree_unflatten

__all__ = ["checkpoint", "remat", "checkpoint_policies", "checkpoint_name"]


def checkpoint(fun=None, *, prevent_cse=True, policy=None, static_argnums=()):
    """`fun`, with its intermediates recomputed in the backward pass instead of stored.

    `policy(prim, *avals, **params) -> bool` may allow saving some intermediates (see
    `checkpoint_policies`); `static_argnums` marks arguments that are not arrays.

    Example:
        >>> w, x = jnp.full((3, 3), 0.1), jnp.ones((2, 3))
        >>> layer = checkpoint(lambda w, x: jnp.tanh(jnp.tanh(x @ w) @ w))
        >>> plain = lambda w, x: jnp.tanh(jnp.tanh(x @ w) @ w)
        >>> bool(np.allclose(core.grad(lambda w: layer(w, x).sum())(w),
        ...                  core.grad(lambda w: plain(w, x).sum())(w)))   # the unchecked gradient
        True
    """
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums)
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    name = getattr(fun, "__name__", None) or type(fun).__name__

    @traceback_util.api_boundary
    @functools.wraps(fun)
    def remat_fun(*args, **kwargs):
        if type(current_trace()) is EvalTrace:
            return fun(*args, **kwargs)
        dyn = [a for i, a in enumerate(args) if i not in static]
        flat, in_tree = physical_flatten((dyn, kwargs))  # a typed key's data (core/tree_util.py)
        flat = [x if isinstance(x, (Array, Tracer)) else to_array(x) for x in flat]
        store = {}

        def flat_fun(*leaves):
            dyn_args, kw = tree_unflatten(in_tree, leaves)
            it = iter(dyn_args)
            full = [args[i] if i in static else next(it) for i in range(len(args))]
            out, store["tree"] = physical_flatten(fun(*full, **kw))
            return out

        closed = trace_to_jaxpr(flat_fun, [x.aval for x in flat], fun_name=name, purpose="checkpoint")
        program, consts = consts_as_args(closed)
        outs = remat_p.bind(*consts, *flat, jaxpr=program, prevent_cse=bool(prevent_cse), policy=policy)
        return tree_unflatten(store["tree"], outs)
    return remat_fun


remat = checkpoint


# ----- the remat primitive ------------------------------------------------------------------------

def _remat_abstract_eval(*avals, jaxpr, prevent_cse, policy):
    return jaxpr.out_avals


def _remat_lowering(ctx, *args, jaxpr, prevent_cse, policy):
    if not prevent_cse:
        return lowering.lower_jaxpr_into(ctx.b, jaxpr.jaxpr, args)
    # XLA on CPU drops optimization barriers before common-subexpression elimination, which would
    # merge the recomputation back into the forward pass. Instead the program runs inside a
    # conditional whose predicate XLA cannot evaluate at compile time (a random number in [0, 1)
    # is < 2), as JAX does on CPU.
    b = ctx.b
    f32 = np.dtype(np.float32)
    scalar = ShapedArray((), f32)
    r = b.op("stablehlo.rng", [b.constant(0.0, f32, ()), b.constant(1.0, f32, ()),
                               b.constant(np.zeros(0, np.int64), np.int64, (0,))], [scalar],
             {"rng_distribution": "#stablehlo<rng_distribution UNIFORM>"})
    pred = lowering.compare(b, r, b.constant(2.0, f32, ()), "LT", scalar)
    index = b.op("stablehlo.select", [pred, b.constant(0, np.int32, ()), b.constant(1, np.int32, ())],
                 [ShapedArray((), np.int32)])
    run = b.region([], lambda rb: lowering.lower_jaxpr_into(rb, jaxpr.jaxpr, list(args)))
    skip = b.region([], lambda rb: [lowering.full_like(rb, 0, a) for a in ctx.avals_out])
    outs = b.op("stablehlo.case", [index], list(ctx.avals_out), regions=[run, skip])
    return [outs] if isinstance(outs, str) else outs


def _remat_jvp(primals, tangents, *, jaxpr, prevent_cse, policy):
    nonzeros = [type(t) is not ad.Zero for t in tangents]
    jvp_closed, out_nonzeros = ad.jvp_jaxpr(jaxpr, nonzeros, instantiate=False)
    program, consts = consts_as_args(jvp_closed)
    outs = remat_p.bind(*consts, *primals, *[t for t in tangents if type(t) is not ad.Zero], jaxpr=program,
                        prevent_cse=prevent_cse, policy=policy)
    n = len(jaxpr.out_avals)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else ad.Zero(ad.tangent_aval(a))
                      for nz, a in zip(out_nonzeros, jaxpr.out_avals, strict=True)]


_split_cache = weakref.WeakKeyDictionary()


def _split_for_remat(closed, unknowns, policy):
    """The known program (known inputs -> known outputs + saved values) and the unknown one
    ((known inputs, saved values, unknown inputs) -> unknown outputs, recomputing what was not
    saved). Built by partitioning the equations; cached per program, unknowns and policy."""
    key = (tuple(unknowns), policy)
    per = _split_cache.setdefault(closed, {})
    if key in per:
        return per[key]
    j = closed.jaxpr
    known_vars = {v for v, u in zip(j.invars, unknowns) if not u}
    known_eqns, saved = [], []
    for eqn in j.eqns:
        if all(type(a) is Literal or a in known_vars for a in eqn.invars):
            known_eqns.append(eqn)
            known_vars.update(eqn.outvars)
            if policy is not None and policy(eqn.primitive, *[a.aval for a in eqn.invars], **eqn.params):
                saved.extend(eqn.outvars)
    out_unknowns = tuple(not (type(v) is Literal or v in known_vars) for v in j.outvars)
    known_ins = [v for v, u in zip(j.invars, unknowns) if not u]
    unknown_ins = [v for v, u in zip(j.invars, unknowns) if u]
    known_outs = [v for v, u in zip(j.outvars, out_unknowns) if not u]
    known = Jaxpr([], known_ins, known_outs + saved, _live(known_eqns, known_outs + saved))
    saved_set = set(saved)
    recompute = [e for e in j.eqns if not (e.outvars and all(o in saved_set for o in e.outvars))]
    unknown_outs = [v for v, u in zip(j.outvars, out_unknowns) if u]
    unknown = Jaxpr([], known_ins + saved + unknown_ins, unknown_outs, _live(recompute, unknown_outs))
    result = (intern_jaxpr(ClosedJaxpr(known, [])), intern_jaxpr(ClosedJaxpr(unknown, [])), out_unknowns,
              len(saved))
    per[key] = result
    return result


def _live(eqns, outvars):
    """The equations that the outputs depend on (dead-code elimination; effects have none here)."""
    needed = {v for v in outvars if type(v) is not Literal}
    kept = []
    for eqn in reversed(eqns):
        if any(o in needed for o in eqn.outvars) or not eqn.outvars:
            kept.append(eqn)
            needed.update(a for a in eqn.invars if type(a) is not Literal)
    return kept[::-1]


def _remat_partial_eval(trace, args, params):
    unknowns = [trace.is_unknown(a) for a in args]
    known, unknown, out_unknowns, n_saved = _split_for_remat(params["jaxpr"], unknowns, params["policy"])
    known_args = [a for a, u in zip(args, unknowns) if not u]
    with set_current_trace(trace.parent):
        known_outs = remat_p.bind(*known_args, jaxpr=known, prevent_cse=False, policy=params["policy"])
    n_known = len(known_outs) - n_saved
    saved = known_outs[n_known:]
    unknown_outs = trace.stage(remat_p, [*known_args, *saved, *[a for a, u in zip(args, unknowns) if u]],
                               {**params, "jaxpr": unknown})
    k_it, u_it = iter(known_outs[:n_known]), iter(unknown_outs)
    return [next(u_it) if u else next(k_it) for u in out_unknowns]


def _remat_transpose(cts, *args, jaxpr, prevent_cse, policy):
    linear = [ad.is_undefined(a) for a in args]
    program, consts = consts_as_args(ad.transpose_jaxpr(jaxpr, linear))
    cts = [ad.instantiate_zeros(ct) for ct in cts]
    outs = iter(remat_p.bind(*consts, *[a for a in args if not ad.is_undefined(a)], *cts, jaxpr=program,
                             prevent_cse=prevent_cse, policy=policy))
    return [next(outs) if lin else None for lin in linear]


def _remat_batch(axis, vals, dims, *, jaxpr, prevent_cse, policy):
    # the batched program is checkpointed again, so grad(vmap(checkpoint(f))) still recomputes
    n_out = len(jaxpr.out_avals)
    if all(d is None for d in dims) and not batching.jaxpr_uses_axis(jaxpr, axis.name):
        return remat_p.bind(*vals, jaxpr=jaxpr, prevent_cse=prevent_cse, policy=policy), [None] * n_out
    batched, out_dims = batching.batch_jaxpr(jaxpr, axis, dims, [None] * n_out)
    program, consts = consts_as_args(batched)
    outs = remat_p.bind(*consts, *vals, jaxpr=program, prevent_cse=prevent_cse, policy=policy)
    return outs, list(out_dims)


remat_p = Primitive("remat", multiple_results=True)
remat_p.def_abstract_eval(_remat_abstract_eval)
lowering.register(remat_p, _remat_lowering)
ad.jvp_rules[remat_p] = _remat_jvp
ad.transpose_rules[remat_p] = _remat_transpose
partial_eval.partial_eval_rules[remat_p] = _remat_partial_eval
batching.axis_batching_rules[remat_p] = _remat_batch


# ----- names and policies ----------------------------------------------------------------------------

def checkpoint_name(x, name):
    """`x`, tagged with `name` so that `checkpoint_policies.save_only_these_names(name)` saves it.

    Example: `h = checkpoint_name(jnp.tanh(x @ w), "hidden")`.
    """
    from .tree_util import physical_map
    return physical_map(lambda leaf: name_p.bind(leaf, name=str(name)), x)


def _name_transpose(ct, x, *, name):
    return [ct]


def _name_batch(vals, dims, *, name):
    return name_p.bind(vals[0], name=name), dims[0]


name_p = Primitive("name")
name_p.def_abstract_eval(lambda x, *, name: x)
lowering.register(name_p, lambda ctx, x, *, name: x)
ad.jvp_rules[name_p] = lambda primals, tangents, *, name: (name_p.bind(primals[0], name=name), tangents[0])
ad.transpose_rules[name_p] = _name_transpose
batching.batching_rules[name_p] = _name_batch


def _everything_saveable(prim, *avals, **params):
    return True


def _nothing_saveable(prim, *avals, **params):
    return False


def _dots_saveable(prim, *avals, **params):
    return prim.name in ("dot_general", "conv_general_dilated")


def _dots_with_no_batch_dims_saveable(prim, *avals, **params):
    if prim.name != "dot_general":
        return False
    (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
    return not lhs_batch and not rhs_batch


@functools.lru_cache(maxsize=None)
def _save_only_these_names(names):
    def policy(prim, *avals, **params):
        return prim is name_p and params["name"] in names
    return policy


@functools.lru_cache(maxsize=None)
def _save_anything_except_these_names(names):
    def policy(prim, *avals, **params):
        return not (prim is name_p and params["name"] in names)
    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=_everything_saveable,
    nothing_saveable=_nothing_saveable,
    dots_saveable=_dots_saveable,
    checkpoint_dots=_dots_saveable,
    dots_with_no_batch_dims_saveable=_dots_with_no_batch_dims_saveable,
    save_only_these_names=lambda *names: _save_only_these_names(frozenset(names)),
    save_anything_except_these_names=lambda *names: _save_anything_except_these_names(frozenset(names)),
)

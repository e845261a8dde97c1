"""Partial evaluation: run a function on a mix of known values and unknown tracers; compute what
depends only on known values at once (on the enclosing trace) and stage the rest into a jaxpr.

`linearize` runs the jvp interpreter on a `PartialEvalTrace` with primals known and tangents
unknown, so the staged jaxpr is the linear map of the tangents, and the known values it reads are
its residuals (its constants). Known values are simply values of the enclosing trace; only unknown
values are tracers of this trace, so there is nothing to unwrap.

A primitive that holds a program (jit, cond, scan, remat) cannot be half staged as one equation:
its rule in `partial_eval_rules` splits the program with `partial_eval_jaxpr` into a known program
(which also returns the residuals) and an unknown one (which takes them).
"""
import weakref

from ..ir import ClosedJaxpr, Jaxpr, consts_as_args
from ..ir import intern as intern_jaxpr
from ..trace import current_trace, set_current_trace
from .evaluation import eval_jaxpr
from .staging import JaxprTracer, StagingTrace, trace_to_jaxpr

__all__ = ["PartialEvalTrace", "partial_eval_rules", "partial_eval_jaxpr", "partial_eval_call"]

partial_eval_rules = {}  # prim -> rule(trace, args, params) -> outputs (known values or tracers)


class PartialEvalTrace(StagingTrace):
    """Stages the primitives that touch one of its (unknown) tracers; evaluates the others on the
    enclosing trace `parent`."""

    def __init__(self, parent, fun_name="<fun>", purpose="linearize"):
        super().__init__(fun_name, purpose)
        self.parent = parent

    def is_unknown(self, x):
        return isinstance(x, JaxprTracer) and x._trace is self

    def process_primitive(self, prim, args, params):
        if not any(isinstance(a, JaxprTracer) and a._trace is self for a in args):
            with set_current_trace(self.parent):
                return prim.bind(*args, **params)
        rule = partial_eval_rules.get(prim)
        if rule is not None:
            return rule(self, args, params)
        return self.stage(prim, args, params)

    def stage(self, prim, args, params):
        """Record `prim(*args)` as an equation of the unknown program."""
        return StagingTrace.process_primitive(self, prim, args, params)


_pe_cache = weakref.WeakKeyDictionary()


def partial_eval_jaxpr(closed, unknowns, instantiate=False):
    """Split `closed` given which inputs are unknown.

    Returns `(known, unknown, out_unknowns, num_res)`: `known` takes the known inputs and returns
    the known outputs followed by `num_res` residuals; `unknown` takes `(*residuals, *unknown
    inputs)` and returns the unknown outputs. `instantiate` (bool or one per output) makes an
    output unknown even when it could be computed from known inputs alone.
    """
    n_out = len(closed.out_avals)
    inst = tuple([instantiate] * n_out) if isinstance(instantiate, bool) else tuple(instantiate)
    key = (tuple(unknowns), inst)
    per_jaxpr = _pe_cache.setdefault(closed, {})
    if key in per_jaxpr:
        return per_jaxpr[key]
    in_avals = closed.in_avals
    captured = {}

    def known_fun(*known_args):
        pe = PartialEvalTrace(current_trace(), "partial_eval", "partial evaluation")
        it = iter(known_args)
        args = [pe.new_arg(a) if u else next(it) for a, u in zip(in_avals, unknowns, strict=True)]
        try:
            with set_current_trace(pe):
                outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
            out_unknowns = [pe.is_unknown(o) or i for o, i in zip(outs, inst, strict=True)]
            captured["unknown"] = pe.to_jaxpr([o for o, u in zip(outs, out_unknowns) if u])
        finally:
            pe.alive = False
        captured["out_unknowns"] = out_unknowns
        return [o for o, u in zip(outs, out_unknowns) if not u] + list(captured["unknown"].consts)

    known_avals = [a for a, u in zip(in_avals, unknowns) if not u]
    known = trace_to_jaxpr(known_fun, known_avals, fun_name="known", purpose="partial evaluation")
    unk = captured["unknown"]
    j = unk.jaxpr
    unknown = ClosedJaxpr(Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns), [])
    result = (intern_jaxpr(known), intern_jaxpr(unknown), tuple(captured["out_unknowns"]), len(j.constvars))
    per_jaxpr[key] = result
    return result


def partial_eval_call(trace, prim, args, params, jaxpr_param="jaxpr", **overrides):
    """The partial-evaluation rule of a primitive that calls one program (`jit`, `remat`): the known
    part is applied now on the enclosing trace, the unknown part is staged, residuals between."""
    unknowns = [trace.is_unknown(a) for a in args]
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(params[jaxpr_param], unknowns)
    params = {**params, **overrides}
    known, consts = consts_as_args(known)
    with set_current_trace(trace.parent):
        known_outs = prim.bind(*consts, *[a for a, u in zip(args, unknowns) if not u],
                               **{**params, jaxpr_param: known})
    n_known = len(known_outs) - num_res
    residuals = known_outs[n_known:]
    unknown_outs = trace.stage(prim, [*residuals, *[a for a, u in zip(args, unknowns) if u]],
                               {**params, jaxpr_param: unknown})
    known_iter, unknown_iter = iter(known_outs[:n_known]), iter(unknown_outs)
    return [next(unknown_iter) if u else next(known_iter) for u in out_unknowns]

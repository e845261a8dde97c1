"""Automatic differentiation: forward mode as an interpreter, reverse mode as linearize + transpose.

Forward mode. `JVPTrace` carries a (primal, tangent) pair per value. Applying a primitive looks up
its jvp rule (`jvp_rules`), which computes the primal and tangent outputs with ordinary primitives,
bound on the enclosing trace. Tangents may be the symbolic `Zero`, so an input that is not being
differentiated costs nothing; a primitive whose inputs all have zero tangents is applied to the
primals only.

Reverse mode (docs/design.md, Automatic differentiation). `linearize` runs the jvp interpreter on top of a partial
evaluator (`partial_eval.PartialEvalTrace`) in which primals are *known* and tangents *unknown*:
every operation on known values is computed at once, every operation touching a tangent is staged.
What is staged is a jaxpr that is linear in the tangents, whose constants (residuals) are known
values. `vjp` transposes that jaxpr (`backward_pass`) with each linear primitive's transpose rule.
So a primitive needs a jvp rule, and a transpose rule only if it is linear.

Rules live with their primitives (`core/lax/*`); the verbs that declare them (`defjvp`,
`deflinear`, `defbilinear`, ...) are in `core/lax/_base.py`. Nothing here imports `core.lax`: the
two lax operations the interpreters need (adding tangents, making zeros) are registered by
`core.lax` at import time (`set_lax_ops`).
"""
import weakref

import numpy as np

from .. import dtypes, errors
from ..avals import ShapedArray
from ..config import config
from ..trace import Trace, Tracer, current_trace, escaped_tracer_error, set_current_trace
from ..traceback_util import user_source_info
from ..ir import Literal
from ..ir import intern as intern_jaxpr
from .evaluation import eval_jaxpr, read_literal
from .staging import check_leaks

__all__ = ["Zero", "UndefinedPrimal", "JVPTrace", "JVPTracer", "jvp_rules", "transpose_rules",
           "nondifferentiable", "tangent_aval", "instantiate_zeros", "add_tangents", "jvp_flat",
           "jvp_jaxpr", "backward_pass", "transpose_jaxpr", "set_lax_ops"]

jvp_rules = {}          # prim -> rule(primals, tangents, **params) -> (primal_out, tangent_out)
transpose_rules = {}    # prim -> rule(ct, *args, **params) -> a cotangent (or None) per argument
nondifferentiable = set()  # primitives whose outputs have zero derivative (comparisons, integer ops)

_lax = {}  # "add": lax.add_any-like, "zeros": aval -> zeros array, set by `set_lax_ops`


def set_lax_ops(add, zeros):
    """Register the lax operations the interpreters use (called once by `core.lax`)."""
    _lax["add"] = add
    _lax["zeros"] = zeros


# ----- tangent values ----------------------------------------------------------------------------

def tangent_aval(aval):
    """The type of a tangent of a value of type `aval`: the same for inexact dtypes, float0
    (an empty record: no information) for integers and booleans."""
    if dtypes.is_inexact(aval.dtype):
        return ShapedArray(aval.shape, aval.dtype, False)
    return ShapedArray(aval.shape, dtypes.float0, False)


class Zero:
    """A symbolic zero tangent or cotangent of type `aval`: it is never materialized unless a rule
    needs an array (`instantiate_zeros`)."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval.str_short()})"


def instantiate_zeros(t):
    """`t`, with a symbolic zero replaced by an array of zeros (float0 zeros stay on the host)."""
    if type(t) is not Zero:
        return t
    if t.aval.dtype == dtypes.float0:
        return np.zeros(t.aval.shape, dtypes.float0)
    return _lax["zeros"](t.aval)


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return _lax["add"](a, b)


def is_float0(x):
    return isinstance(x, np.ndarray) and x.dtype == dtypes.float0


# ----- forward mode --------------------------------------------------------------------------------

class JVPTracer(Tracer):
    """A value under forward-mode differentiation: its primal and its tangent (maybe `Zero`)."""
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return _aval(self.primal)

    # Python control flow on a concrete primal is allowed, as in JAX (`if x > 0:` under grad).
    def __bool__(self):
        return bool(self.primal)

    def __int__(self):
        return int(self.primal)

    def __float__(self):
        return float(self.primal)

    def __complex__(self):
        return complex(self.primal)

    def __index__(self):
        return self.primal.__index__()

    def concretization_context(self):
        context = getattr(self.primal, "concretization_context", None)  # the primal may be traced too
        return context() if context is not None else ""

    def __array__(self, dtype=None, copy=None):
        raise errors.TracerArrayConversionError(
            f"The numpy.ndarray conversion method __array__() was called on a value being differentiated "
            f"(shape {self.aval.str_short()}). Use core.numpy functions inside differentiated functions, or "
            "lax.stop_gradient(x) if no derivative should flow through the NumPy computation.")

    def __hash__(self):
        raise TypeError(f"unhashable type: traced array {self.aval.str_short()}")

    def __repr__(self):
        return f"JVPTracer(primal={self.primal!r}, tangent={self.tangent!r})"


def _aval(x):
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    from ..array import to_array
    return to_array(x).aval


class JVPTrace(Trace):
    """Forward-mode differentiation. Rules run with the enclosing trace (`parent`) current, so the
    primal and tangent computations are themselves evaluated, staged or differentiated again."""

    def __init__(self, parent, name="<fun>", purpose="jvp"):
        self.parent = parent
        self.name = self.fun_name = name
        self.purpose = purpose
        self.alive = True
        # weak references to this trace's tracers, kept only under checking_leaks (no cost when off)
        self._leak_refs = [] if config.check_tracer_leaks else None

    def lift(self, x):
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        if isinstance(x, Tracer) and not getattr(x._trace, "alive", True):
            raise escaped_tracer_error(x)
        return x, Zero(tangent_aval(_aval(x)))

    def process_primitive(self, prim, args, params):
        primals, tangents = [], []
        for a in args:
            p, t = self.lift(a)
            primals.append(p)
            tangents.append(t)
        with set_current_trace(self.parent):
            if all(type(t) is Zero for t in tangents):
                return prim.bind(*primals, **params)
            rule = jvp_rules.get(prim)
            if rule is None:
                if prim in nondifferentiable:
                    return prim.bind(*primals, **params)
                raise NotImplementedError(
                    f"Differentiation rule for '{prim.name}' not implemented. If it should have no "
                    f"derivative, wrap its inputs in lax.stop_gradient.")
            primal_out, tangent_out = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [self.new(p, t) for p, t in zip(primal_out, tangent_out, strict=True)]
        return self.new(primal_out, tangent_out)

    def new(self, primal, tangent):
        if type(tangent) is Zero and not dtypes.is_inexact(_aval(primal).dtype):
            return primal  # no derivative can reach an integer output; skip the wrapper
        t = JVPTracer(self, primal, tangent)
        t.created_at = user_source_info()
        if self._leak_refs is not None:
            self._leak_refs.append(weakref.ref(t))
        return t

    def __repr__(self):
        return f"JVPTrace({self.name})"


def jvp_flat(fun, primals, tangents, instantiate=True):
    """Run `fun(*flat inputs) -> list of outputs` forward-differentiated at `primals` along
    `tangents` (arrays or `Zero`s). Returns `(primal_outs, tangent_outs)`; with `instantiate`,
    zero output tangents are materialized (True for all, or a bool per output)."""
    trace = JVPTrace(current_trace(), getattr(fun, "__name__", "<fun>"))
    ins = [trace.new(p, t) for p, t in zip(primals, tangents, strict=True)]
    try:
        with set_current_trace(trace):
            outs = fun(*ins)
        primal_outs, tangent_outs = [], []
        inst = [instantiate] * len(outs) if isinstance(instantiate, bool) else instantiate
        for o, i in zip(outs, inst, strict=True):
            p, t = trace.lift(o)
            primal_outs.append(p)
            tangent_outs.append(instantiate_zeros(t) if i and dtypes.is_inexact(t.aval.dtype) else t)
    finally:
        trace.alive = False
    if trace._leak_refs is not None:
        ins = outs = o = None  # our own references are not leaks
        check_leaks(trace, trace._leak_refs)
    return primal_outs, tangent_outs


# ----- jvp of a jaxpr (for primitives that hold programs: jit, control flow, remat) ---------------

_jvp_jaxpr_cache = weakref.WeakKeyDictionary()


def jvp_jaxpr(closed, nonzeros, instantiate):
    """The jaxpr of the jvp of `closed`: inputs `(*primals, *tangents of the nonzero inputs)`,
    outputs `(*primal outs, *tangent outs that are nonzero)`. Returns `(jvp_closed, out_nonzeros)`.
    `instantiate` (bool or a bool per output) forces output tangents to be present."""
    from .staging import trace_to_jaxpr
    inst = tuple([instantiate] * len(closed.out_avals)) if isinstance(instantiate, bool) else tuple(instantiate)
    key = (tuple(nonzeros), inst)
    per_jaxpr = _jvp_jaxpr_cache.setdefault(closed, {})
    if key in per_jaxpr:
        return per_jaxpr[key]
    n = len(closed.in_avals)
    out_nonzeros = []

    def jvp_fun(*args):
        primals, nz_tangents = args[:n], iter(args[n:])
        tangents = [next(nz_tangents) if nz else Zero(tangent_aval(a))
                    for nz, a in zip(nonzeros, closed.in_avals, strict=True)]
        p_outs, t_outs = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), primals, tangents,
                                  instantiate=list(inst))
        out_nonzeros[:] = [type(t) is not Zero for t in t_outs]
        return p_outs + [t for t in t_outs if type(t) is not Zero]

    in_avals = list(closed.in_avals) + [tangent_aval(a) for nz, a in zip(nonzeros, closed.in_avals) if nz]
    jvp_closed = trace_to_jaxpr(jvp_fun, in_avals, fun_name="jvp", purpose="jvp")
    result = (intern_jaxpr(jvp_closed), tuple(out_nonzeros))
    per_jaxpr[key] = result
    return result


# ----- transposition ---------------------------------------------------------------------------------

class UndefinedPrimal:
    """A linear input of an equation being transposed: only its type is known."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined(x):
    return type(x) is UndefinedPrimal


def backward_pass(jaxpr, args, cts_out):
    """Transpose `jaxpr` with respect to its linear inputs.

    `args` has one entry per constvar then invar: a value for a non-linear input, or an
    `UndefinedPrimal` for a linear one. `cts_out` has a cotangent (array or `Zero`) per output.
    Equations with no linear input are evaluated first (they compute non-linear values, e.g. a
    recomputed primal inside `remat`); the rest are transposed in reverse order, each through its
    primitive's transpose rule. Returns a cotangent (array or `Zero`) per linear input, in order.
    """
    primal_env = {}
    linear = set()
    for v, a in zip(jaxpr.constvars + jaxpr.invars, args, strict=True):
        if is_undefined(a):
            linear.add(v)
        else:
            primal_env[v] = a

    def read_primal(atom):
        if type(atom) is Literal:
            return read_literal(atom)
        if atom in linear:
            return UndefinedPrimal(atom.aval)
        return primal_env[atom]

    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(a) is not Literal and a in linear for a in eqn.invars):
            linear_eqns.append(eqn)
            linear.update(eqn.outvars)
        else:
            outs = eqn.primitive.bind(*[read_primal(a) for a in eqn.invars], **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
            for v, x in zip(eqn.outvars, outs, strict=True):
                primal_env[v] = x

    ct_env = {}

    def write_ct(v, ct):
        if ct is None or type(ct) is Zero or type(v) is Literal or v not in linear:
            return
        ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

    for v, ct in zip(jaxpr.outvars, cts_out, strict=True):
        write_ct(v, ct)

    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        if eqn.outvars and all(ct is None for ct in cts):
            continue  # (an equation with no outputs, a debug callback, is transposed to raise its error)
        cts = [instantiate_zeros(Zero(v.aval)) if ct is None else ct for v, ct in zip(eqn.outvars, cts)]
        rule = transpose_rules.get(eqn.primitive)
        if rule is None:
            raise NotImplementedError(
                f"Transpose rule (for reverse-mode differentiation) for '{eqn.primitive.name}' not implemented.")
        invals = [read_primal(a) for a in eqn.invars]
        cts_in = rule(cts if eqn.primitive.multiple_results else cts[0], *invals, **eqn.params)
        for a, ct in zip(eqn.invars, cts_in, strict=True):
            if type(a) is not Literal and a in linear:
                write_ct(a, ct)

    results = []
    for v, a in zip(jaxpr.constvars + jaxpr.invars, args):
        if is_undefined(a):
            ct = ct_env.get(v)
            results.append(Zero(a.aval) if ct is None else ct)
    return results


_transpose_jaxpr_cache = weakref.WeakKeyDictionary()


def transpose_jaxpr(closed, linear):
    """The jaxpr of the transpose of `closed` in its inputs marked `linear`: it takes
    `(*non-linear inputs, *cotangents of the outputs)` and returns the cotangents of the linear
    inputs (zeros materialized)."""
    from .staging import trace_to_jaxpr
    key = tuple(linear)
    per_jaxpr = _transpose_jaxpr_cache.setdefault(closed, {})
    if key in per_jaxpr:
        return per_jaxpr[key]
    in_avals = closed.in_avals
    nonlinear_avals = [a for a, lin in zip(in_avals, linear) if not lin]
    n_nl = len(nonlinear_avals)

    def transposed(*args):
        nl, cts = iter(args[:n_nl]), args[n_nl:]
        full = [UndefinedPrimal(a) if lin else next(nl) for a, lin in zip(in_avals, linear)]
        out = backward_pass(closed.jaxpr, list(closed.consts) + full,
                            list(cts))
        return [instantiate_zeros(ct) for ct in out]

    ct_avals = [a.strip_weak_type() for a in closed.out_avals]
    result = intern_jaxpr(trace_to_jaxpr(transposed, nonlinear_avals + ct_avals, fun_name="transpose",
                                         purpose="transpose"))
    per_jaxpr[key] = result
    return result

"""Vectorization: the batching interpreter behind `vmap`.

A `BatchTracer` stands for a whole batch of values: one array `val` holding every lane, and
`batch_dim`, the axis of `val` along which the lanes are stacked (None when every lane holds the
same value: it was closed over, or computed from unbatched values only). The function being
vmapped sees only the per-lane type (`aval`, with the batch axis removed).

Applying a primitive to batch tracers looks up its batching rule, which computes the whole batch
at once with ordinary primitives bound on the enclosing trace: `rule(vals, dims, **params)`
returns the output value(s) and the output batch dim(s). Rules live with their primitives
(`core/lax/*`); the helpers that move batch axes (`moveaxis`, `bdim_at_front`, ...) are here and
the verbs for common families (`defvectorized`, `defbroadcasting`) in `core/lax/_base.py`. A
primitive whose operands are all unbatched is applied to them directly.

Named axes. `vmap(..., axis_name="i")` binds a name that collectives (`psum`, `axis_index`, ...)
refer to. Their rules need the axis (name and size) and must run even when no operand is batched
(`axis_index` has no operand at all), so they are registered in `axis_batching_rules`, with the
signature `rule(axis, vals, dims, **params)`; so are the primitives holding programs (jit,
control flow, custom derivatives), whose programs may use the name. The names bound at a point of
tracing are kept on a stack (`bound_axis_names`), for errors that list them.
"""
import collections
import threading
import weakref

from .. import errors
from ..config import config
from ..trace import Trace, Tracer, current_trace, escaped_tracer_error, set_current_trace
from ..traceback_util import user_source_info
from ..ir import intern as intern_jaxpr
from ..tokens import is_token
from .evaluation import eval_jaxpr
from .staging import check_leaks

__all__ = ["BatchTrace", "BatchTracer", "AxisData", "batching_rules", "axis_batching_rules", "not_mapped",
           "moveaxis", "bdim_at_front", "move_bdim", "broadcast_batch", "vmap_flat", "batch_fun", "batch_jaxpr",
           "bound_axis_names", "bound_axis", "binding_axis", "axis_env_key", "jaxpr_uses_axis"]

not_mapped = None

batching_rules = {}       # prim -> rule(vals, dims, **params) -> (out, out_dim) / (outs, out_dims)
axis_batching_rules = {}  # prim -> rule(axis: AxisData, vals, dims, **params), same result

AxisData = collections.namedtuple("AxisData", ["name", "size"])


def _lax():
    from .. import lax  # the interpreters are imported by core.lax; look it up when first needed
    return lax


# ----- moving batch axes -------------------------------------------------------------------------

def moveaxis(x, src, dst):
    """`x` with axis `src` moved to position `dst` (a transpose; nothing when they are equal)."""
    ndim = _ndim(x)
    src, dst = src % ndim, dst % ndim
    if src == dst:
        return x
    perm = [d for d in range(ndim) if d != src]
    perm.insert(dst, src)
    return _lax().transpose(x, tuple(perm))


def broadcast_batch(x, size, dim):
    """An unbatched `x` given a batch axis of `size` at position `dim` (every lane equal)."""
    lax = _lax()
    shape = list(_shape(x))
    dims = tuple(d if d < dim else d + 1 for d in range(len(shape)))
    shape.insert(dim, size)
    return lax.broadcast_in_dim(x, tuple(shape), dims)


def move_bdim(x, bdim, dst, size):
    """`x`, batched along `bdim` (or unbatched: None), with its batch axis at `dst` (negative:
    counted from the end of the batched shape)."""
    ndim_out = _ndim(x) + (bdim is None)
    if not -ndim_out <= dst < ndim_out:
        raise ValueError(f"vmap: out_axes={dst} is out of range for an output of rank {ndim_out - 1} per "
                         f"example (the mapped axis makes it {ndim_out}).")
    dst %= ndim_out
    if bdim is None:
        return broadcast_batch(x, size, dst)
    return moveaxis(x, bdim, dst)


def bdim_at_front(x, bdim, size):
    """`x` with its batch axis first (broadcast to `size` lanes when unbatched)."""
    return move_bdim(x, bdim, 0, size)


def batch_size(vals, dims):
    """The batch size, read off the first batched operand."""
    for x, d in zip(vals, dims):
        if d is not None:
            return _shape(x)[d]
    raise ValueError("no batched operand")


def _shape(x):
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.shape
    import numpy as np
    return np.shape(x)


def _ndim(x):
    return len(_shape(x))


# ----- the tracer and the trace ----------------------------------------------------------------------

class BatchTracer(Tracer):
    """A batch of values: `val` holds every lane, stacked along `batch_dim` (None: unbatched)."""
    __slots__ = ("val", "batch_dim", "_aval")

    def __init__(self, trace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self._aval = None

    @property
    def aval(self):
        aval = self._aval
        if aval is None:
            aval = _aval_of(self.val)
            if self.batch_dim is not None:
                shape = aval.shape[:self.batch_dim] + aval.shape[self.batch_dim + 1:]
                aval = aval.update(shape=shape)
            self._aval = aval
        return aval

    def _concrete(self, what, error=errors.ConcretizationTypeError):
        if not self._trace.alive:
            raise escaped_tracer_error(self)
        if self.batch_dim is None:
            return self.val  # every lane holds the same value: Python may look at it
        raise error(
            f"{what} was called on a batched value (shape {self.aval.str_short()} per example, "
            f"{self._trace.axis.size} examples) while vmapping {self._trace.fun_name}: each example may give a "
            "different answer. Use lax.cond, lax.select or jnp.where for a value-dependent choice.")

    def concretization_context(self):
        return (f"\nThe error occurred while vmapping the function {self._trace.fun_name}: the value is batched "
                f"({self._trace.axis.size} examples), and each example may have a different one.")

    def __bool__(self):
        return bool(self._concrete("bool()", errors.TracerBoolConversionError))

    def __int__(self):
        return int(self._concrete("int()"))

    def __float__(self):
        return float(self._concrete("float()"))

    def __complex__(self):
        return complex(self._concrete("complex()"))

    def __index__(self):
        return self._concrete("__index__()", errors.TracerIntegerConversionError).__index__()

    def __array__(self, dtype=None, copy=None):
        if not self._trace.alive:
            raise escaped_tracer_error(self)
        raise errors.TracerArrayConversionError(
            f"The numpy.ndarray conversion method __array__() was called on a batched value (shape "
            f"{self.aval.str_short()} per example) while vmapping {self._trace.fun_name}. Use core.numpy "
            "(jnp) functions inside vmapped functions instead of numpy functions.")

    def __hash__(self):
        raise TypeError(f"unhashable type: traced array {self.aval.str_short()}")

    def __repr__(self):
        return f"BatchTracer(val={self.val!r}, batch_dim={self.batch_dim})"


def _aval_of(x):
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    from ..array import to_array
    return to_array(x).aval


class BatchTrace(Trace):
    """Vectorized evaluation along one axis. Rules run with the enclosing trace (`parent`)
    current, so the batched computation is itself evaluated, staged or transformed again."""
    purpose = "vmap"

    def __init__(self, parent, axis, fun_name="<fun>"):
        self.parent = parent
        self.axis = axis
        self.fun_name = fun_name
        self.alive = True
        self._leak_refs = [] if config.check_tracer_leaks else None

    def lift(self, x):
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.batch_dim
        if isinstance(x, Tracer) and not getattr(x._trace, "alive", True):
            raise escaped_tracer_error(x)
        return x, None

    def process_primitive(self, prim, args, params):
        vals, dims = [], []
        for a in args:
            v, d = self.lift(a)
            vals.append(v)
            dims.append(d)
        with set_current_trace(self.parent):
            axis_rule = axis_batching_rules.get(prim)
            if axis_rule is not None:
                out, out_dims = axis_rule(self.axis, vals, dims, **params)
            elif all(d is None for d in dims):
                return prim.bind(*vals, **params)
            else:
                rule = batching_rules.get(prim)
                if rule is None:
                    raise NotImplementedError(f"Batching rule for '{prim.name}' not implemented.")
                out, out_dims = rule(vals, dims, **params)
        if prim.multiple_results:
            return [self.new(v, d) for v, d in zip(out, out_dims, strict=True)]
        return self.new(out, out_dims)

    def new(self, val, batch_dim):
        if batch_dim is None:
            return val  # the same in every lane: no wrapper needed
        t = BatchTracer(self, val, batch_dim)
        t.created_at = user_source_info()
        if self._leak_refs is not None:
            self._leak_refs.append(weakref.ref(t))
        return t

    def __repr__(self):
        return f"BatchTrace({self.fun_name}, axis={self.axis})"


# ----- named axes --------------------------------------------------------------------------------

class _AxisStack(threading.local):
    def __init__(self):
        self.axes = []  # AxisData of the named axes being traced, innermost last


_axes = _AxisStack()


def bound_axis_names():
    """The axis names bound by the vmaps (and pmaps) being traced here, innermost last."""
    return [a.name for a in _axes.axes]


def axis_env_key():
    """The bound named axes as a hashable value: a program traced under them (it may read an axis
    size, `lax.axis_size`) is cached per axis environment."""
    return tuple(_axes.axes)


def bound_axis(name):
    """The AxisData bound to `name` (innermost binding), or None."""
    for a in reversed(_axes.axes):
        if a.name == name:
            return a
    return None


class binding_axis:
    """Context manager: `axis` (an AxisData; unnamed ones are skipped) is bound in the block."""

    def __init__(self, axis):
        self.axis = axis if axis.name is not None else None

    def __enter__(self):
        if self.axis is not None:
            _axes.axes.append(self.axis)

    def __exit__(self, *exc):
        if self.axis is not None:
            _axes.axes.pop()


_uses_axis_cache = weakref.WeakKeyDictionary()


def jaxpr_uses_axis(closed, name):
    """Whether a collective over `name` occurs in `closed` (or in a program nested in it)."""
    if name is None:
        return False
    per = _uses_axis_cache.setdefault(closed, {})
    if name not in per:
        per[name] = _uses_axis(closed.jaxpr, name)
    return per[name]


def _uses_axis(jaxpr, name):
    for eqn in jaxpr.eqns:
        names = eqn.params.get("axis_name")
        if names is not None and name in (names if isinstance(names, tuple) else (names,)):
            return True
        for p in eqn.params.values():
            for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                inner = getattr(sub, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns") and _uses_axis(inner, name):
                    return True
    return False


# ----- running a function batched ------------------------------------------------------------------

def vmap_flat(fun, vals, in_dims, out_dims, axis_size, axis_name=None, fun_name=None):
    """Run `fun(*flat inputs) -> list of outputs` over a batch: input i is batched along
    `in_dims[i]` (None: shared by every lane). Output j is returned with its batch axis at
    `out_dims[j]` (a list, or a callable given the number of outputs; None: the output must be
    unbatched and is returned as one value)."""
    name = fun_name or getattr(fun, "__name__", "<fun>")
    trace = BatchTrace(current_trace(), AxisData(axis_name, axis_size), name)
    ins = [trace.new(v, d) for v, d in zip(vals, in_dims, strict=True)]
    try:
        with set_current_trace(trace), binding_axis(trace.axis):
            outs = fun(*ins)
        if callable(out_dims):
            out_dims = out_dims(len(outs))
        results = []
        for i, (o, dst) in enumerate(zip(outs, out_dims, strict=True)):
            v, d = trace.lift(o)
            if dst is None or (d is None and is_token(v)):  # a token has no lanes: returned as it is
                if d is not None:
                    raise ValueError(
                        f"vmap of {name}: output {i} has out_axes None, but it depends on the mapped inputs "
                        f"(it differs between examples). Give it an out_axes, or make it independent of the "
                        "mapped inputs.")
                results.append(v)
            else:
                results.append(move_bdim(v, d, dst, axis_size))
    finally:
        trace.alive = False
    if trace._leak_refs is not None:
        ins = outs = o = v = None
        check_leaks(trace, trace._leak_refs)
    return results


def batch_fun(fun, vals, in_dims, axis, out_dims, fun_name="<fun>"):
    """Run `fun(*flat values) -> flat outputs` batched along `axis` on the current trace, inputs
    batched along `in_dims`. `out_dims` (a list, or a callable given the number of outputs) places
    each output's batch axis (None: where it comes out, None if unbatched). Returns
    `(outputs, their batch dims)`. Shared by `batch_jaxpr` and the batched custom-derivative rules."""
    trace = BatchTrace(current_trace(), axis, fun_name)
    ins = [trace.new(v, d) for v, d in zip(vals, in_dims, strict=True)]
    try:
        with set_current_trace(trace), binding_axis(axis):
            outs = fun(*ins)
        if callable(out_dims):
            out_dims = out_dims(len(outs))
        results, dims = [], []
        for o, dst in zip(outs, out_dims, strict=True):
            v, d = trace.lift(o)
            if dst is not None and not (d is None and is_token(v)):  # a token stays unbatched
                v, d = move_bdim(v, d, dst, axis.size), dst
            results.append(v)
            dims.append(d)
    finally:
        trace.alive = False
    return results, dims


_batch_jaxpr_cache = weakref.WeakKeyDictionary()


def batch_jaxpr(closed, axis, in_dims, out_dims):
    """The jaxpr of `closed` batched: input i carries a batch axis at `in_dims[i]` (None:
    unbatched); output j has its batch axis at `out_dims[j]` (None: whichever the computation gives,
    None if unbatched). Returns `(batched_closed, out_dims)` with the output dims it chose."""
    from .staging import trace_to_jaxpr
    key = (axis, tuple(in_dims), tuple(out_dims))
    per_jaxpr = _batch_jaxpr_cache.setdefault(closed, {})
    if key in per_jaxpr:
        return per_jaxpr[key]
    chosen = []

    def batched(*args):
        outs, dims = batch_fun(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), args, in_dims, axis,
                               out_dims, "batched program")
        chosen[:] = dims
        return outs

    in_avals = []
    for a, d in zip(closed.in_avals, in_dims, strict=True):
        if d is not None:
            shape = list(a.shape)
            shape.insert(d, axis.size)
            a = a.update(shape=tuple(shape))
        in_avals.append(a)
    result = (intern_jaxpr(trace_to_jaxpr(batched, in_avals, fun_name="vmap", purpose="vmap")), tuple(chosen))
    per_jaxpr[key] = result
    return result

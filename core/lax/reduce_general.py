"""`reduce_p`: `lax.reduce` with any (associative) computation, as `jax.lax.reduce` has it.

The monoid reductions (`reduce_sum`, `reduce_max`, ...) keep their own primitives; `lax.reduce`
comes here when the computation is not one of the lax monoid functions. The computation is traced
once on scalars of the operands' dtypes into a closed jaxpr `(*accs, *xs) -> accs`, which becomes
the body region of one `stablehlo.reduce`. Its jvp reduces (primal, tangent) pairs by a pairwise
tree of slices, pads and the computation's jvp applied elementwise, so the tangent map is made of
transposable primitives and reverse mode works (XLA assumes the computation is associative and the
init values its identities; so does this rule).
"""
import math

import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..interpreters import ad, batching, lowering
from ..interpreters.evaluation import eval_jaxpr
from ..interpreters.lowering import i64_array
from ..interpreters.staging import trace_to_jaxpr
from ..ir import intern as intern_jaxpr
from ..trace import Primitive
from ..tree_util import tree_flatten
from ._base import aval_of

__all__ = ["reduce_p"]


def _describe(avals):
    """`(float32[2,3], int32[])`: the types of a list of avals, as errors name them."""
    return "(" + ", ".join(f"{np.dtype(a.dtype).name}[{','.join(map(str, a.shape))}]" for a in avals) + ")"


def reduce_general(ops, inits, computation, dimensions):
    """Bind `reduce_p` for operands `ops` and init values `inits` (flat tuples of equal length);
    `computation(accs, xs)` takes and returns one scalar per operand (plain scalars when there is
    a single operand, tuples otherwise)."""
    from .structural import convert_element_type
    single = len(ops) == 1
    op_avals = [aval_of(x) for x in ops]
    inits = [convert_element_type(i, a.dtype) for i, a in zip(inits, op_avals, strict=True)]
    scalars = [ShapedArray((), a.dtype) for a in op_avals]
    n = len(ops)

    def flat_computation(*args):
        accs, xs = args[:n], args[n:]
        out = computation(accs[0], xs[0]) if single else computation(tuple(accs), tuple(xs))
        leaves, _ = tree_flatten(out)
        if len(leaves) != n:
            raise TypeError(f"reduce: computation must return {n} value(s), one per operand, got {len(leaves)}.")
        return list(leaves)

    closed = trace_to_jaxpr(flat_computation, scalars + scalars,
                            getattr(computation, "__name__", None) or type(computation).__name__, "reduce")
    if closed.consts:
        raise NotImplementedError(
            "reduce: the computation closes over arrays "
            f"{_describe([aval_of(c) for c in closed.consts])}; lax.reduce's computation must be a function "
            "of its two arguments only (write the constants as Python scalars).")
    outs = [a for a in closed.jaxpr.out_avals]
    if any(o.shape != () or o.dtype != s.dtype for o, s in zip(outs, scalars, strict=True)):
        raise TypeError(f"reduce: computation must map scalars {_describe(scalars)} to scalars of the same dtypes,"
                        f" got {_describe(outs)}.")
    dims = tuple(int(d) for d in dimensions)
    return reduce_p.bind(*ops, *inits, computation=intern_jaxpr(closed), dimensions=dims)


def _abstract_eval(*args, computation, dimensions):
    n = len(args) // 2
    ops, inits = args[:n], args[n:]
    shape = ops[0].shape
    if any(o.shape != shape for o in ops):
        raise TypeError(f"reduce: operands must have the same shape, got {_describe(ops)}.")
    for o, i in zip(ops, inits, strict=True):
        if i.shape != () or i.dtype != o.dtype:
            raise TypeError(f"reduce: init values must be scalars of the operands' dtypes {_describe(ops)}, "
                            f"got {_describe(inits)}.")
    if any(not 0 <= d < len(shape) for d in dimensions) or len(set(dimensions)) != len(dimensions):
        raise ValueError(f"reduce: dimensions {dimensions} are out of range or repeated for operands of shape "
                         f"{shape}.")
    out_shape = tuple(s for k, s in enumerate(shape) if k not in dimensions)
    return [ShapedArray(out_shape, o.dtype) for o in ops]


def _lowering(ctx, *args, computation, dimensions):
    scalars = [a.update(shape=(), weak_type=False) for a in ctx.avals_in[len(args) // 2:]]

    def body(rb, *vals):
        return lowering.lower_jaxpr_into(rb, computation.jaxpr, list(vals))

    region = ctx.b.region(scalars + scalars, body)
    outs = ctx.b.op("stablehlo.reduce", list(args), list(ctx.avals_out), {"dimensions": i64_array(dimensions)},
                    regions=[region])
    return [outs] if isinstance(outs, str) else outs


reduce_p = Primitive("reduce", multiple_results=True)
reduce_p.def_abstract_eval(_abstract_eval)
lowering.register(reduce_p, _lowering)


def _batch_rule(vals, dims, *, computation, dimensions):
    n = len(vals) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("reduce: vmap over the init values is not supported (stablehlo.reduce takes "
                                  "scalar init values); map over the operands only (in_axes=None for the inits).")
    size = batching.batch_size(vals, dims)
    ops = [batching.bdim_at_front(x, d, size) for x, d in zip(vals[:n], dims[:n], strict=True)]
    outs = reduce_p.bind(*ops, *vals[n:], computation=computation, dimensions=tuple(d + 1 for d in dimensions))
    return outs, [0] * len(outs)


batching.batching_rules[reduce_p] = _batch_rule


def _jvp(primals, tangents, *, computation, dimensions):
    from .structural import pad, reshape, slice_in_dim, squeeze
    n = len(primals) // 2
    xs, inits = list(primals[:n]), list(primals[n:])
    if any(type(t) is not ad.Zero for t in tangents[n:]):
        raise NotImplementedError("reduce: differentiating with respect to the init values is not supported; "
                                  "they are the computation's identities (pass them as constants).")
    outs = reduce_p.bind(*primals, computation=computation, dimensions=dimensions)
    inexact = [dtypes.is_inexact(aval_of(x).dtype) for x in xs]
    t_in = [t for t, f in zip(tangents[:n], inexact, strict=True) if f]
    if not any(type(t) is not ad.Zero for t in t_in):
        return outs, [ad.Zero(ad.tangent_aval(aval_of(o))) for o in outs]
    shape = aval_of(xs[0]).shape
    kept = tuple(k for k in range(len(shape)) if k not in dimensions)
    # the reduced axes, flattened, become axis 0
    new_shape = (math.prod(shape[k] for k in dimensions),) + tuple(shape[k] for k in kept)
    perm = tuple(dimensions) + kept
    ps = [reshape(x, new_shape, perm) for x in xs]
    ts = [reshape(ad.instantiate_zeros(t), new_shape, perm) for t in t_in]
    jvp_closed, _ = ad.jvp_jaxpr(computation, inexact + inexact, instantiate=inexact)
    from ..batching_api import vmap
    step = lambda *a: eval_jaxpr(jvp_closed.jaxpr, jvp_closed.consts, *a)  # noqa: E731
    for _ in range(len(new_shape)):
        step = vmap(step)
    m = len(ts)
    t_inits = [np.zeros((), aval_of(t).dtype) for t in ts]
    while aval_of(ps[0]).shape[0] > 1:
        size = aval_of(ps[0]).shape[0]
        half = (size + 1) // 2
        lo = [slice_in_dim(v, 0, half) for v in ps + ts]
        hi = [slice_in_dim(v, half, size) for v in ps + ts]
        if size - half != half:
            config = [(0, 1, 0)] + [(0, 0, 0)] * (len(new_shape) - 1)
            hi = [pad(v, i, config) for v, i in zip(hi, inits + t_inits, strict=True)]
        res = step(*lo[:n], *hi[:n], *lo[n:], *hi[n:])
        ps, ts = list(res[:n]), list(res[n:n + m])
    if aval_of(ps[0]).shape[0] == 0:
        return outs, [ad.Zero(ad.tangent_aval(aval_of(o))) for o in outs]
    ts = iter([squeeze(t, (0,)) for t in ts])
    return outs, [next(ts) if f else ad.Zero(ad.tangent_aval(aval_of(o))) for o, f in zip(outs, inexact, strict=True)]


ad.jvp_rules[reduce_p] = _jvp

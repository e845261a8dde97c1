"""Verbs for declaring primitives: the shape/dtype rule helpers and the elementwise family.

Each primitive is declared in one block in its family module: the user-facing wrapper, the shape
and dtype rule, the lowering (and, with later issues, jvp/transpose/batching rules). These verbs
keep the blocks short.
"""
import functools

import numpy as np

from .. import dtypes
from ..avals import ShapedArray
from ..array import Array, scalar_array, to_array
from ..trace import Primitive, Tracer
from ..interpreters import ad, batching, lowering

# dtype groups for `accepted` arguments
BOOL = ("b",)
INT = ("i", "u")
SIGNED = ("i",)
UNSIGNED = ("u",)
FLOAT = ("f",)
COMPLEX = ("c",)
NUMBER = INT + FLOAT + COMPLEX
ANY = BOOL + NUMBER
INT_OR_BOOL = INT + BOOL
FLOAT_OR_COMPLEX = FLOAT + COMPLEX
REAL = INT + FLOAT

_KIND_NAMES = {"b": "bool", "i": "signedinteger", "u": "unsignedinteger", "f": "floating",
               "c": "complexfloating"}


def dtype_kind(dtype):
    return "f" if dtype == dtypes.bfloat16 else np.dtype(dtype).kind


def check_dtype_accepted(name, dtype, accepted, position=None):
    if dtype_kind(dtype) not in accepted:
        names = ", ".join(dict.fromkeys(_KIND_NAMES[k] for k in accepted))
        where = f" (operand {position})" if position is not None else ""
        raise TypeError(f"{name} does not accept dtype {dtypes.short_name(dtype)}{where}. "
                        f"Accepted dtypes are subtypes of {names}.")


# Typed PRNG key arrays (core/prng_keys.py, which imports lax and registers its class here): the
# lax functions that take them (select_n, dynamic_slice) hand them to prng_keys.on_key_data.
_key_array_types = frozenset()


def register_key_array_type(cls):
    global _key_array_types
    _key_array_types = frozenset([cls])


def is_key_array(x):
    """Whether `x` is a typed PRNG key array (core/prng_keys.py)."""
    return type(x) in _key_array_types


def any_key_array(values):
    """Whether any of `values` is a typed PRNG key array (one C-level pass: cheap on hot paths)."""
    return not _key_array_types.isdisjoint(map(type, values))


def aval_of(x):
    """The abstract value of an operand (Array, tracer, NumPy value or Python scalar)."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    return to_array(x).aval


def standard_primitive(name, shape_rule, dtype_rule, weak_type_rule=None, multiple_results=False):
    """A primitive whose abstract value is computed by separate shape and dtype rules."""
    prim = Primitive(name, multiple_results)

    def abstract_eval(*avals, **params):
        shape = shape_rule(*avals, **params)
        dt = dtype_rule(*avals, **params)
        weak = weak_type_rule(*avals, **params) if weak_type_rule else False
        if multiple_results:
            weak = weak if isinstance(weak, (list, tuple)) else [weak] * len(shape)
            return [ShapedArray(s, d, w) for s, d, w in zip(shape, dt, weak, strict=True)]
        return ShapedArray(shape, dt, weak)

    prim.def_abstract_eval(abstract_eval)
    return prim


# ----- elementwise ------------------------------------------------------------------------------

def broadcasting_shape_rule(name, *avals):
    """Operands of an elementwise primitive have equal ranks; each dimension is equal or 1.
    Rank-0 operands (scalars) broadcast against anything, as in JAX's lax."""
    shapes = [a.shape for a in avals if a.shape]
    if len({len(s) for s in shapes}) > 1:
        raise TypeError(f"{name}: arrays must have same number of dimensions, got "
                        f"{', '.join(map(str, shapes))}.")
    if not shapes:
        return ()
    out = []
    for dims in zip(*shapes):
        non_one = {d for d in dims if d != 1}
        if len(non_one) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(map(str, shapes))}.")
        out.append(non_one.pop() if non_one else 1)
    return tuple(out)


def same_dtypes_rule(name, accepted, *avals):
    first = avals[0].dtype
    for i, a in enumerate(avals):
        check_dtype_accepted(name, a.dtype, accepted, i if len(avals) > 1 else None)
        if a.dtype != first:
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                            f"{', '.join(dtypes.short_name(x.dtype) for x in avals)}. "
                            "(Tip: jnp.{0} is a similar function that does automatic type promotion "
                            "on inputs.)".format(_NUMPY_NAMES.get(name, name)))
    return first


# lax name -> the core.numpy function that promotes its inputs (for error tips)
_NUMPY_NAMES = {"sub": "subtract", "mul": "multiply", "div": "divide", "rem": "remainder", "pow": "power",
                "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "max": "maximum",
                "min": "minimum", "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                "gt": "greater", "ge": "greater_equal", "atan2": "arctan2", "shift_left": "left_shift",
                "shift_right_arithmetic": "right_shift", "nextafter": "nextafter", "complex": "complex"}


def all_weak(*avals, **_):
    return all(a.weak_type for a in avals)


def naryop(name, accepted, result_dtype=None, hlo_op=None):
    """An elementwise primitive over operands of one dtype, broadcasting size-1 dimensions.

    `accepted`: dtype kinds (e.g. FLOAT_OR_COMPLEX); `result_dtype(dtype) -> dtype` when the result
    differs from the operand dtype (comparisons, `imag`); `hlo_op`: the StableHLO op to lower to.
    """
    def shape_rule(*avals, **params):
        return broadcasting_shape_rule(name, *avals)

    def dtype_rule(*avals, **params):
        dt = same_dtypes_rule(name, accepted, *avals)
        return dt if result_dtype is None else result_dtype(dt)

    weak = all_weak if result_dtype is None else None
    prim = standard_primitive(name, shape_rule, dtype_rule, weak)
    defbroadcasting(prim)
    if hlo_op is not None:
        lowering.register(prim, elementwise_lowering(hlo_op))
    return prim


def elementwise_lowering(hlo_op, attrs=None):
    """Lower to one StableHLO elementwise op, broadcasting size-1 operand dimensions first."""
    def rule(ctx, *args, **params):
        out = ctx.avals_out[0]
        args = [lowering.broadcast_to(ctx.b, x, a, out.update(dtype=a.dtype))
                for x, a in zip(args, ctx.avals_in, strict=True)]
        return ctx.b.op(hlo_op, args, [out], attrs)
    return rule


def elementwise_args(*args):
    """Operands of a lax elementwise wrapper: Python scalars take the dtype of the first array
    operand (weakly), so `lax.add(x_f16, 1.0)` stays float16 as in JAX."""
    for a in args:
        if type(a) is not Array and not isinstance(a, Tracer):
            break
    else:
        return args  # the common case: nothing to convert
    ref = None
    for a in args:
        if not isinstance(a, (bool, int, float, complex)) or isinstance(a, np.generic):
            ref = aval_of(a)
            break
    if ref is None:
        return args
    out = []
    for a in args:
        if isinstance(a, (bool, int, float, complex)) and not isinstance(a, np.generic):
            a = scalar_array(a, ref.dtype, weak_type=True)
        out.append(a)
    return out


# ----- differentiation verbs (rules sit in each primitive's block) ------------------------------
# The interpreters are in core/interpreters/ad.py; these helpers build rules for the common shapes
# of primitive. They import lax operations lazily because the family modules import this one.

def unbroadcast(ct, aval):
    """The cotangent of an operand of type `aval` that was broadcast (rank 0, or size-1 dimensions)
    to the shape of `ct`: sum over the broadcast dimensions."""
    from .reductions import reduce_sum
    from .structural import reshape
    ct_aval = aval_of(ct)
    if ct_aval.shape == aval.shape:
        return ct
    if aval.ndim == 0:
        return reduce_sum(ct, tuple(range(ct_aval.ndim)))
    axes = tuple(i for i, (a, c) in enumerate(zip(aval.shape, ct_aval.shape)) if a == 1 and c != 1)
    return reshape(reduce_sum(ct, axes), aval.shape)


def broadcast_like(x, aval):
    """`x` broadcast to `aval`'s shape (the inverse of `unbroadcast`)."""
    from .structural import broadcast_in_dim
    x_aval = aval_of(x)
    if x_aval.shape == aval.shape:
        return x
    dims = () if x_aval.ndim == 0 else tuple(range(x_aval.ndim))
    return broadcast_in_dim(x, aval.shape, dims)


def defjvp(prim, *rules):
    """Declare the jvp of `prim` one operand at a time: `rules[i](t_i, *primals, **params)` is the
    tangent contribution of operand i (None: not differentiable in it). Contributions of operands
    with zero tangents are skipped; the rest are broadcast to the output and summed."""
    _defjvp(prim, rules, with_answer=False)


def defjvp2(prim, *rules):
    """Like `defjvp`, but each rule also receives the primal output: `rule(t_i, ans, *primals)`."""
    _defjvp(prim, rules, with_answer=True)


def _defjvp(prim, rules, with_answer):
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        out_aval = aval_of(ans)
        total = ad.Zero(ad.tangent_aval(out_aval))
        for rule, t in zip(rules, tangents):
            if rule is None or type(t) is ad.Zero:
                continue
            c = rule(t, ans, *primals, **params) if with_answer else rule(t, *primals, **params)
            total = ad.add_tangents(total, broadcast_like(c, out_aval))
        return ans, total
    ad.jvp_rules[prim] = jvp


def deflinear(prim, transpose_rule):
    """`prim` is linear in all its operands: its jvp applies it to the tangents, and
    `transpose_rule(ct, *args, **params)` gives a cotangent per operand (args that are
    `ad.UndefinedPrimal` are the linear inputs being transposed)."""
    def jvp(primals, tangents, **params):
        ans = prim.bind(*primals, **params)
        tangents = [ad.instantiate_zeros(t) for t in tangents]
        return ans, prim.bind(*tangents, **params)
    ad.jvp_rules[prim] = jvp
    ad.transpose_rules[prim] = transpose_rule


def defbilinear(prim, lhs_rule, rhs_rule):
    """`prim(x, y)` is linear in each operand separately (mul, dot_general, conv): its jvp is
    `prim(tx, y) + prim(x, ty)`; `lhs_rule(ct, x, y, **params)` is the cotangent of x when x is the
    linear input, `rhs_rule(ct, x, y, **params)` that of y."""
    def jvp(primals, tangents, **params):
        x, y = primals
        tx, ty = tangents
        ans = prim.bind(x, y, **params)
        out = ad.Zero(ad.tangent_aval(aval_of(ans)))
        if type(tx) is not ad.Zero:
            out = ad.add_tangents(out, broadcast_like(prim.bind(tx, y, **params), aval_of(ans)))
        if type(ty) is not ad.Zero:
            out = ad.add_tangents(out, broadcast_like(prim.bind(x, ty, **params), aval_of(ans)))
        return ans, out

    def transpose(ct, x, y, **params):
        if ad.is_undefined(x) and ad.is_undefined(y):
            raise ValueError(f"{prim.name} is bilinear: it cannot be transposed in both operands at once "
                             "(the function is not linear).")
        if ad.is_undefined(x):
            return [lhs_rule(ct, x, y, **params), None]
        return [None, rhs_rule(ct, x, y, **params)]
    ad.jvp_rules[prim] = jvp
    ad.transpose_rules[prim] = transpose


def defnondiff(*prims):
    """Declare primitives whose outputs carry no derivative (comparisons, integer and bit ops,
    argmax, sort indices, random bits): differentiating through them gives zero tangents."""
    ad.nondifferentiable.update(prims)


def defjvp_zero(*prims):
    """Primitives with float outputs whose derivative is zero almost everywhere (floor, round,
    sign): same as `defnondiff`, named for what it means."""
    ad.nondifferentiable.update(prims)


# ----- batching verbs (the interpreter is core/interpreters/batching.py) ---------------------------

def defbroadcasting(prim):
    """`prim` is elementwise over operands of equal rank (or rank 0) that broadcast their size-1
    dimensions: batch it by giving every operand the batch axis at one position, unbatched ones a
    size-1 axis there (rank-0 ones stay scalars)."""
    batching.batching_rules[prim] = functools.partial(_broadcasting_batch_rule, prim)


def _broadcasting_batch_rule(prim, vals, dims, **params):
    from .structural import reshape
    ranks = [aval_of(x).ndim - (d is not None) for x, d in zip(vals, dims)]
    rank = max(ranks)
    # keep the batch axis where a full-rank batched operand has it: no transpose for the common case
    out_dim = next((d for d, r in zip(dims, ranks) if d is not None and r == rank), None)
    if out_dim is None:
        out_dim = 0
    size = batching.batch_size(vals, dims)
    args = []
    for x, d, r in zip(vals, dims, ranks):
        if d is None:
            if r:
                shape = list(aval_of(x).shape)
                shape.insert(out_dim, 1)
                x = reshape(x, tuple(shape))
        elif r < rank:  # a batched scalar among higher-rank operands: (size, 1, ..., 1)
            shape = [1] * rank
            shape.insert(out_dim, size)
            x = reshape(x, tuple(shape))
        else:
            x = batching.moveaxis(x, d, out_dim)
        args.append(x)
    return prim.bind(*args, **params), out_dim


def defvectorized(prim):
    """`prim` acts on each element (or each position) of its single operand independently of the
    others: its batched form is itself, with the batch axis kept where it is."""
    def rule(vals, dims, **params):
        (x,), (d,) = vals, dims
        return prim.bind(x, **params), d
    batching.batching_rules[prim] = rule


def defscalar_or_same_shape(prim, scalar_ok):
    """`prim` is elementwise over operands that each are rank 0 or of the output's shape (no size-1
    broadcasting: select_n, clamp). `scalar_ok[i]`: whether operand i may stay a scalar when it is
    unbatched; every other operand is given the full batched shape."""
    batching.batching_rules[prim] = functools.partial(_scalar_or_same_shape_batch_rule, prim, scalar_ok)


def _scalar_or_same_shape_batch_rule(prim, scalar_ok, vals, dims, **params):
    from .structural import broadcast_in_dim
    ok = scalar_ok(len(vals)) if callable(scalar_ok) else scalar_ok
    ranks = [aval_of(x).ndim - (d is not None) for x, d in zip(vals, dims)]
    rank = max(ranks)
    out_dim = next((d for d, r in zip(dims, ranks) if d is not None and r == rank), 0)
    size = batching.batch_size(vals, dims)
    x, d = next((x, d) for x, d, r in zip(vals, dims, ranks) if r == rank)  # one of the output's shape
    lane_shape = list(aval_of(x).shape)
    if d is not None:
        del lane_shape[d]
    full = list(lane_shape)
    full.insert(out_dim, size)
    full = tuple(full)
    args = []
    for x, d, r, scalar in zip(vals, dims, ranks, ok):
        if d is None:
            if not (scalar and r == 0):
                x = batching.broadcast_batch(x, size, out_dim) if r else broadcast_in_dim(x, full, ())
        elif r < rank:
            x = broadcast_in_dim(x, full, (out_dim,))
        else:
            x = batching.moveaxis(x, d, out_dim)
        args.append(x)
    return prim.bind(*args, **params), out_dim


# ----- lowering by composition --------------------------------------------------------------------

def lower_fun(fun, multiple_results=False):
    """A lowering rule that emits `fun(*operands, **params)`, a composition of other lax
    operations, traced on the operands' avals and inlined (for primitives such as `mulhi`, which
    have no StableHLO op of their own but should be one equation in a jaxpr)."""
    def rule(ctx, *args, **params):
        from ..interpreters.staging import trace_to_jaxpr

        def flat(*xs):
            out = fun(*xs, **params)
            return list(out) if multiple_results else [out]
        closed = trace_to_jaxpr(flat, list(ctx.avals_in), fun_name=getattr(fun, "__name__", None))
        consts = [ctx.b.constant(np.asarray(c), aval_of(c).dtype, aval_of(c).shape) for c in closed.consts]
        outs = lowering.lower_jaxpr_into(ctx.b, closed.jaxpr, consts + list(args))
        return outs if multiple_results else outs[0]
    return rule

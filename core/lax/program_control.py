"""Operations that steer the compiler rather than compute: `optimization_barrier` (values XLA may
not move computations across), `platform_dependent` (a different implementation per platform),
`reduce_precision` (round to a narrower floating format without changing the dtype),
`with_sharding_constraint` (a placement hint: the identity here), `composite` (a function
recorded as one named call), `stage` (lift a value into the current trace) and `dce_sink` (a use
that keeps a value alive).
"""
import functools

from ..avals import ShapedArray
from ..interpreters import ad, batching, lowering
from ..tree_util import physical_flatten, tree_unflatten
from ._base import FLOAT, check_dtype_accepted, deflinear, defvectorized, standard_primitive

__all__ = ["optimization_barrier", "platform_dependent", "reduce_precision", "with_sharding_constraint", "composite",
           "stage", "dce_sink"]


# ----- optimization_barrier ----------------------------------------------------------------------

def optimization_barrier(operand, /):
    """The pytree `operand` unchanged, as a set of values that XLA computes together and no
    computation moves across (e.g. to keep a rematerialized value from being merged with the
    forward pass, or to order work). Differentiation puts the tangents behind a barrier too.

    >>> lax.optimization_barrier((jnp.ones(2), 3))
    (Array([1., 1.], dtype=float32), Array(3, dtype=int32, weak_type=True))
    """
    leaves, tree = physical_flatten(operand)  # a typed key's data (core/tree_util.py)
    if not leaves:
        return operand
    return tree_unflatten(tree, optimization_barrier_p.bind(*leaves))


def _barrier_abstract_eval(*avals):
    return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in avals]


def _barrier_lowering(ctx, *xs):
    outs = ctx.b.op("stablehlo.optimization_barrier", list(xs), list(ctx.avals_out))
    return [outs] if isinstance(outs, str) else outs


optimization_barrier_p = standard_primitive("optimization_barrier", None, None, multiple_results=True)
optimization_barrier_p.def_abstract_eval(_barrier_abstract_eval)
lowering.register(optimization_barrier_p, _barrier_lowering)


def _barrier_jvp(primals, tangents):
    # the primals behind one barrier, the (nonzero) tangents behind another, as JAX does
    outs = optimization_barrier_p.bind(*primals)
    live = [i for i, t in enumerate(tangents) if type(t) is not ad.Zero]
    t_outs = list(tangents)
    if live:
        for i, t in zip(live, optimization_barrier_p.bind(*(tangents[i] for i in live)), strict=True):
            t_outs[i] = t
    return outs, t_outs


def _barrier_transpose(cts, *args):
    live = [i for i, a in enumerate(args) if ad.is_undefined(a)]
    out = [None] * len(args)
    for i, ct in zip(live, optimization_barrier_p.bind(*(cts[i] for i in live)), strict=True):
        out[i] = ct
    return out


def _barrier_batch_rule(vals, dims):
    return optimization_barrier_p.bind(*vals), list(dims)


ad.jvp_rules[optimization_barrier_p] = _barrier_jvp
ad.transpose_rules[optimization_barrier_p] = _barrier_transpose
batching.batching_rules[optimization_barrier_p] = _barrier_batch_rule


# ----- platform_dependent ------------------------------------------------------------------------

_PLATFORM_ALIASES = {"gpu": ("cuda", "rocm", "gpu"), "cuda": ("cuda", "gpu"), "rocm": ("rocm", "gpu")}


def platform_dependent(*args, default=None, **per_platform):
    """`per_platform[p](*args)` for the platform `p` programs run on ('cpu', 'cuda', 'rocm',
    'tpu'), else `default(*args)`. JAX lowers every branch and picks one when compiling; here the
    program is built for the default backend, so the choice is made when it is traced.

    >>> lax.platform_dependent(2.0, cpu=lambda x: x * 10, default=lambda x: x)
    20.0
    """
    from ..runtime.client import backend
    platform = backend().platform
    unknown = sorted(set(per_platform) - {"cpu", "cuda", "rocm", "tpu", "gpu"})
    if unknown:
        raise ValueError(f"platform_dependent: unknown platform name(s) {unknown}; use 'cpu', 'cuda', 'rocm' or "
                         "'tpu' (and default=).")
    for name in _PLATFORM_ALIASES.get(platform, (platform,)):
        if name in per_platform:
            return per_platform[name](*args)
    if default is None:
        raise NotImplementedError(f"platform_dependent: no implementation for platform {platform!r} and no "
                                  f"default; given: {sorted(per_platform)}.")
    return default(*args)


# ----- reduce_precision --------------------------------------------------------------------------

def reduce_precision(operand, exponent_bits, mantissa_bits):
    """`operand` rounded (to nearest even) to a floating format with `exponent_bits` and
    `mantissa_bits`, keeping its dtype: e.g. (8, 7) gives bfloat16's values in float32, with
    overflow to inf and underflow to zero as in that format.

    >>> lax.reduce_precision(jnp.array([1.0009765625, 70000.0]), 5, 10)  # float16's format
    Array([1.0009766,       inf], dtype=float32)
    """
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got {exponent_bits} "
                         f"and {mantissa_bits}.")
    return reduce_precision_p.bind(operand, exponent_bits=exponent_bits, mantissa_bits=mantissa_bits)


def _reduce_precision_dtype_rule(x, **_):
    check_dtype_accepted("reduce_precision", x.dtype, FLOAT)
    return x.dtype


def _reduce_precision_lowering(ctx, x, *, exponent_bits, mantissa_bits):
    return ctx.b.op("stablehlo.reduce_precision", [x], list(ctx.avals_out),
                    {"exponent_bits": f"{exponent_bits} : i32", "mantissa_bits": f"{mantissa_bits} : i32"})


reduce_precision_p = standard_primitive("reduce_precision", lambda x, **_: x.shape, _reduce_precision_dtype_rule,
                                        lambda x, **_: x.weak_type)
lowering.register(reduce_precision_p, _reduce_precision_lowering)
# As in JAX: the rounding is treated as linear, its tangent and cotangent rounded the same way.
deflinear(reduce_precision_p, lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)])
defvectorized(reduce_precision_p)


# ----- with_sharding_constraint ------------------------------------------------------------------

def with_sharding_constraint(x, shardings):
    """`x` (a pytree of arrays) unchanged. In JAX it asks the SPMD partitioner to lay each value
    out as `shardings` says; purenn's `jit` compiles for one device (several devices are `pmap`'s),
    where every layout is the whole array, so the constraint is recorded (one
    `sharding_constraint` equation per leaf, naming the sharding) and lowered to nothing.

    >>> lax.with_sharding_constraint(jnp.arange(3), "replicated")
    Array([0, 1, 2], dtype=int32)
    """
    leaves, tree = physical_flatten(x)
    try:
        hash(shardings)
        param = shardings
    except TypeError:  # a list or another unhashable spec: its text stands for it
        param = repr(shardings)
    return tree_unflatten(tree, [sharding_constraint_p.bind(leaf, sharding=param) for leaf in leaves])


sharding_constraint_p = standard_primitive("sharding_constraint", lambda x, **_: x.shape, lambda x, **_: x.dtype,
                                           lambda x, **_: x.weak_type)
lowering.register(sharding_constraint_p, lambda ctx, x, **_: x)
deflinear(sharding_constraint_p, lambda ct, x, **params: [sharding_constraint_p.bind(ct, **params)])
defvectorized(sharding_constraint_p)


# ----- composite -----------------------------------------------------------------------------------

def composite(decomposition, name, version=0):
    """`decomposition` as one named operation, as `jax.lax.composite`: the returned function runs
    `decomposition(*args, **kwargs)`, where the keyword arguments are static attributes; under
    `jit` or `make_jaxpr` the call is one `jit[name=NAME]` equation holding its program (JAX emits
    `stablehlo.composite`, which XLA inlines the same way). Unlike JAX's, it can be differentiated
    and vmapped (through its decomposition).

    >>> hard_tanh = lax.composite(lambda x, *, limit=1.0: jnp.clip(x, -limit, limit), name="my.hard_tanh")
    >>> hard_tanh(jnp.array([-3.0, 0.5, 2.0]), limit=1.5)
    Array([-1.5,  0.5,  1.5], dtype=float32)
    """
    from ..api import named_call
    if not callable(decomposition):
        raise TypeError(f"composite: decomposition must be callable, got {decomposition!r}.")
    name = str(name)
    calls = {}  # attributes -> the named call, so repeated calls trace once

    @functools.wraps(decomposition)
    def call(*args, **attributes):
        key = tuple(sorted(attributes.items()))
        try:
            named = calls.get(key)
        except TypeError:  # unhashable attributes (arrays): a fresh call
            key, named = None, None
        if named is None:
            named = named_call(functools.partial(decomposition, **attributes), name=name)
            if key is not None:
                calls[key] = named
        return named(*args)
    call.composite_name, call.composite_version = name, int(version)
    return call


# ----- stage -------------------------------------------------------------------------------------

def stage(x, /):
    """`x` lifted into the current trace, as `jax.lax.stage`: the identity, which turns a Python
    scalar or a NumPy array into a value of the trace (an equation `stage` under jit or
    make_jaxpr); outside any transformation it returns an Array (`x` itself if it is one).

    >>> lax.stage(np.float32(2.5))
    Array(2.5, dtype=float32)
    """
    from ..trace import EvalTrace, current_trace
    from ..array import to_array
    if current_trace().__class__ is EvalTrace:  # nothing to stage into: no program to compile for it
        return to_array(x)
    return stage_p.bind(x)


stage_p = standard_primitive("stage", lambda x, **_: x.shape, lambda x, **_: x.dtype, lambda x, **_: x.weak_type)
lowering.register(stage_p, lambda ctx, x: x)
deflinear(stage_p, lambda ct, x: [ct])
defvectorized(stage_p)


# ----- dce_sink ----------------------------------------------------------------------------------

def dce_sink(val, *, prevent_mlir_dce=False):
    """Consume every leaf of the pytree `val`, producing nothing, as `jax.lax.dce_sink`: a use
    that keeps a value alive for passes that remove unused equations. Returns None. (purenn's
    jaxprs are not pruned, so the equation only records the use; eagerly nothing happens.)

    >>> core.make_jaxpr(lambda x: lax.dce_sink(x * 2))(1.0)
    { lambda ; a:f32[]. let
        b:f32[] = mul a 2.0:f32[]
        dce_sink[prevent_mlir_dce=False] b
      in () }
    """
    from ..trace import EvalTrace, current_trace
    leaves, _ = physical_flatten(val)
    if current_trace().__class__ is EvalTrace:
        return None
    for leaf in leaves:
        dce_sink_p.bind(leaf, prevent_mlir_dce=bool(prevent_mlir_dce))
    return None


dce_sink_p = standard_primitive("dce_sink", None, None, multiple_results=True)
dce_sink_p.def_abstract_eval(lambda x, **_: [])
lowering.register(dce_sink_p, lambda ctx, x, **_: [])


def _dce_sink_jvp(primals, tangents, **params):
    dce_sink_p.bind(*primals, **params)
    return [], []


ad.jvp_rules[dce_sink_p] = _dce_sink_jvp
batching.batching_rules[dce_sink_p] = lambda vals, dims, **params: (dce_sink_p.bind(*vals, **params), [])
